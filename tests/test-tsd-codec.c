/*
 * test-tsd-codec.c: the pure parts of tsd/ that need no engine: OpenTSDB's
 * qualifier, value, row key and compacted-cell bytes (vectors from
 * OpenTSDB's TestInternal and TestCompactionQueue), Java number syntax and
 * Double.toString, name validation and put-line parsing.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/tap.h"
#include "tsd/codec.h"
#include "tsd/line.h"
#include "tsd/number.h"
#include "tsd/unicode.h"
#include "util/buf.h"
#include "util/err.h"

static void hex(const unsigned char *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = '\0';
}

static void check_qual(int64_t ts, unsigned flags, const char *want)
{
	unsigned char q[4];
	char h[16];
	size_t n = tsd_qualifier_build(q, ts, flags);
	hex(q, n, h);
	is_str(h, want, "qualifier ts=%lld flags=%x", (long long)ts, flags);
}

static void test_qualifiers(void)
{
	/* OpenTSDB TestInternal.buildQualifier* */
	check_qual(1356998403, 7, "0037");
	check_qual(1357001999, 7, "e0f7");
	check_qual(1356998403, 5, "0035");
	check_qual(1357001999, 3, "e0f3");
	check_qual(1356998403, 1, "0031");
	check_qual(1356998403, 0, "0030");
	check_qual(1357001999, 0, "e0f0");
	check_qual(1356998403, 7 | TSD_FLAG_FLOAT, "003f");
	check_qual(1357001999, 7 | TSD_FLAG_FLOAT, "e0ff");
	check_qual(1356998403, 3 | TSD_FLAG_FLOAT, "003b");
	check_qual(1357001999, 3 | TSD_FLAG_FLOAT, "e0fb");
	check_qual(INT64_C(1356998400008), 7, "f0000207");
	check_qual(INT64_C(1357001999999), 7, "fdbb9fc7");
	check_qual(INT64_C(1356998400008), 5, "f0000205");
	check_qual(INT64_C(1357001999999), 0, "fdbb9fc0");
	check_qual(INT64_C(1356998400008), 7 | TSD_FLAG_FLOAT, "f000020f");
	check_qual(INT64_C(1357001999999), 3 | TSD_FLAG_FLOAT, "fdbb9fcb");
	/* the seed's example: 476 at 1292148123 -> delta 123, 2 bytes */
	check_qual(1292148123, 1, "07b1");
	is_int(tsd_base_time(1292148123), 1292148000, "base hour, seconds");
	is_int(tsd_base_time(INT64_C(1292148123456)), 1292148000,
	       "base hour, milliseconds");
	ok(!tsd_ts_is_ms(4294967295LL) && tsd_ts_is_ms(4294967296LL),
	   "milliseconds start past 32 bits");
}

static void check_int(int64_t x, const char *want, unsigned wflags)
{
	unsigned char v[8];
	unsigned flags;
	char h[20];
	struct tsd_value dv;
	size_t n = tsd_value_encode_int(v, x, &flags);
	hex(v, n, h);
	ok(!strcmp(h, want) && flags == wflags, "int %lld -> %s flags %u",
	   (long long)x, h, flags);
	ok(tsd_value_decode(flags, v, n, &dv) == 0 && !dv.is_float &&
	   dv.i == x, "int %lld decodes back", (long long)x);
}

static void test_values(void)
{
	unsigned char v[8];
	unsigned flags;
	char h[20];
	struct tsd_value dv;
	size_t n;

	check_int(0, "00", 0);
	check_int(127, "7f", 0);
	check_int(-128, "80", 0);
	check_int(128, "0080", 1);
	check_int(476, "01dc", 1);
	check_int(-32768, "8000", 1);
	check_int(32768, "00008000", 3);
	check_int(INT32_MIN, "80000000", 3);
	check_int(INT64_C(2147483648), "0000000080000000", 7);
	check_int(INT64_MIN, "8000000000000000", 7);
	check_int(-1, "ff", 0);

	n = tsd_value_encode_float(v, 1.5, &flags);
	hex(v, n, h);
	ok(!strcmp(h, "3fc00000") && flags == 0xB, "1.5 is a 4-byte float");
	n = tsd_value_encode_float(v, 0.1, &flags);
	hex(v, n, h);
	ok(!strcmp(h, "3fb999999999999a") && flags == 0xF,
	   "0.1 needs 8 bytes");
	ok(tsd_value_decode(flags, v, n, &dv) == 0 && dv.is_float &&
	   dv.d == 0.1, "0.1 decodes back");
	ok(tsd_value_decode(0xB, (const unsigned char *)"\x3f\xc0\0\0", 4,
			    &dv) == 0 && dv.d == 1.5, "float decodes");
	is_int(tsd_value_decode(0x8, v, 3, &dv), CF_ECORRUPT,
	       "3-byte float is corrupt");
	is_int(tsd_value_decode(0x2, v, 3, &dv), CF_ECORRUPT,
	       "3-byte integer is corrupt");
}

static void test_cells(void)
{
	struct tsd_cellpt pts[8];
	size_t n;
	char h[40];

	/* TestInternal.extractDataPointsFixQualifierFlags: 0x0043 with an
	 * 8-byte value is fixed to 0x0047 */
	static const unsigned char v8[8] = { 0, 0, 0, 0, 0, 0, 0, 6 };
	static const unsigned char q3[2] = { 0x00, 0x43 };
	ok(tsd_cell_split(q3, 2, v8, 8, pts, &n) == 0 && n == 1 &&
	   pts[0].q[1] == 0x47 && pts[0].vlen == 8 &&
	   pts[0].offset_ms == 4000, "length bits fixed from the value");
	/* extractDataPointsFixFloatingPointValue */
	static const unsigned char q2b[2] = { 0x00, 0x2B };
	static const unsigned char vf[8] = { 0, 0, 0, 0, 0, 0, 0, 1 };
	ok(tsd_cell_split(q2b, 2, vf, 8, pts, &n) == 0 && n == 1 &&
	   pts[0].vlen == 4 && pts[0].v == vf + 4 && pts[0].q[1] == 0x2B,
	   "old 8-byte float flagged as 4 bytes keeps its last 4");
	static const unsigned char vbad[8] = { 0, 0, 1, 0, 0, 0, 0, 1 };
	is_int(tsd_cell_split(q2b, 2, vbad, 8, pts, &n), CF_ECORRUPT,
	       "non-zero high bytes are corrupt");
	/* annotations (odd qualifiers) hold no point */
	ok(tsd_cell_split((const unsigned char *)"\x01\0\0", 3, vf, 8, pts,
			  &n) == 0 && n == 0, "odd qualifier: no points");

	/* TestCompactionQueue.twoCellRow */
	static const unsigned char q1[2] = { 0x00, 0x07 }, q2[2] = { 0x00, 0x17 };
	static const unsigned char v4[8] = { 0, 0, 0, 0, 0, 0, 0, 4 };
	static const unsigned char v5[8] = { 0, 0, 0, 0, 0, 0, 0, 5 };
	struct tsd_rawcell cells[3] = {
		{ q2, 2, v5, 8, 10 }, { q1, 2, v4, 8, 10 },
	};
	struct buf qb = BUF_INIT, vb = BUF_INIT;
	size_t np;
	ok(tsd_compact_cells(cells, 2, &qb, &vb, &np) == 0 && np == 2,
	   "two cells compact");
	hex(qb.p, qb.len, h);
	is_str(h, "00070017", "compacted qualifier in time order");
	hex(vb.p, vb.len, h);
	is_str(h, "0000000000000004000000000000000500",
	       "compacted value with a 0x00 meta byte");
	ok(tsd_cell_split(qb.p, qb.len, vb.p, vb.len, pts, &n) == 0 &&
	   n == 2 && pts[0].offset_ms == 0 && pts[1].offset_ms == 1000 &&
	   pts[1].v[7] == 5, "compacted cell splits back");
	is_int(tsd_cell_split(qb.p, qb.len, vb.p, vb.len - 1, pts, &n),
	       CF_ECORRUPT, "compacted cell without its meta byte");

	/* TestCompactionQueue.secondAndMs: meta byte 0x01 */
	static const unsigned char qms[4] = { 0xF0, 0x00, 0x01, 0x07 };
	buf_reset(&qb);
	buf_reset(&vb);
	cells[0] = (struct tsd_rawcell){ q1, 2, v4, 8, 10 };
	cells[1] = (struct tsd_rawcell){ qms, 4, v5, 8, 10 };
	ok(tsd_compact_cells(cells, 2, &qb, &vb, &np) == 0 && np == 2,
	   "seconds and ms compact");
	hex(qb.p, qb.len, h);
	is_str(h, "0007f0000107", "mixed qualifier: the ms point is 4 bytes");
	ok(vb.len == 17 && vb.p[16] == 1, "mixed meta byte is 0x01");

	/* duplicates: the newest cell wins; one point left: no meta byte */
	static const unsigned char q1b[2] = { 0x00, 0x00 };
	static const unsigned char one[1] = { 9 };
	buf_reset(&qb);
	buf_reset(&vb);
	cells[0] = (struct tsd_rawcell){ q1, 2, v4, 8, 10 };
	cells[1] = (struct tsd_rawcell){ q1b, 2, one, 1, 20 };
	ok(tsd_compact_cells(cells, 2, &qb, &vb, &np) == 0 && np == 1 &&
	   qb.len == 2 && qb.p[1] == 0x00 && vb.len == 1 && vb.p[0] == 9,
	   "duplicate timestamp: newest version kept, single point");
	buf_release(&qb);
	buf_release(&vb);
}

static void test_rowkey(void)
{
	unsigned char key[TSD_ROWKEY_MAX];
	unsigned char tags[2][6] = { { 0, 0, 5, 0, 0, 9 }, { 0, 0, 2, 0, 0, 3 } };
	static const unsigned char metric[3] = { 0, 0, 1 };
	char h[80];
	size_t n = tsd_rowkey_build(key, metric, 1292148000, tags, 2);
	hex(key, n, h);
	is_str(h, "0000014d049d20000002000003000005000009",
	       "row key: metric, base hour, tags sorted by tagk UID");
	ok(tsd_rowkey_valid(key, n), "row key shape ok");
	ok(!tsd_rowkey_valid(key, 7) && !tsd_rowkey_valid(key, n - 1),
	   "short keys rejected");
}

static void check_fmt(double d, const char *want)
{
	char b[TSD_DOUBLE_MAX];
	tsd_format_double(b, d);
	is_str(b, want, "Double.toString(%.17g)", d);
}

static void test_numbers(void)
{
	int64_t v;
	double d;

	check_fmt(476.0, "476.0");
	check_fmt(0.1, "0.1");
	check_fmt(-1.5, "-1.5");
	check_fmt(1e7, "1.0E7");
	check_fmt(9999999.0, "9999999.0");
	check_fmt(0.001, "0.001");
	check_fmt(0.0001, "1.0E-4");
	check_fmt(123456789.0, "1.23456789E8");
	check_fmt(1.0 / 3, "0.3333333333333333");
	check_fmt(2.0 / 3, "0.6666666666666666");
	check_fmt(100.0, "100.0");
	check_fmt(1e21, "1.0E21");
	check_fmt(4.9e-324, "4.9E-324");
	check_fmt(1.7976931348623157e308, "1.7976931348623157E308");
	check_fmt((double)0.1f, "0.10000000149011612");
	check_fmt(0.0, "0.0");
	check_fmt(-0.0, "-0.0");
	check_fmt(NAN, "NaN");
	check_fmt(12.25, "12.25");
	check_fmt(1234567.125, "1234567.125");

	ok(tsd_parse_long("9223372036854775807", 19, &v) == 0 &&
	   v == INT64_MAX, "parse max long");
	ok(tsd_parse_long("-9223372036854775808", 20, &v) == 0 &&
	   v == INT64_MIN, "parse min long");
	is_int(tsd_parse_long("9223372036854775808", 19, &v), CF_EINVAL,
	       "overflow rejected");
	is_int(tsd_parse_long("+", 1, &v), CF_EINVAL, "lone sign rejected");
	is_int(tsd_parse_long("12a", 3, &v), CF_EINVAL, "junk rejected");
	ok(tsd_parse_long("+42", 3, &v) == 0 && v == 42, "plus sign ok");
	ok(tsd_parse_double("1e3", 3, &d) == 0 && d == 1000, "1e3");
	ok(tsd_parse_double(".5", 2, &d) == 0 && d == 0.5, ".5");
	ok(tsd_parse_double("5.", 2, &d) == 0 && d == 5, "5.");
	is_int(tsd_parse_double("1e400", 5, &d), CF_EINVAL,
	       "overflow to infinity rejected");
	is_int(tsd_parse_double("0x1p3", 5, &d), CF_EINVAL, "hex rejected");
	is_int(tsd_parse_double("1.2.3", 5, &d), CF_EINVAL, "two dots");
	is_int(tsd_parse_double("e5", 2, &d), CF_EINVAL, "no mantissa");
	ok(tsd_fits_in_float(1.5) && !tsd_fits_in_float(0.1),
	   "fitsInFloat");

	struct buf b = BUF_INIT;
	static const int64_t longs[] = { 0, 7, -7, 10, 476, -1000000,
					 INT64_MAX, INT64_MIN };
	for (size_t i = 0; i < sizeof longs / sizeof *longs; i++) {
		char want[32];
		snprintf(want, sizeof want, "%lld", (long long)longs[i]);
		buf_reset(&b);
		is_int(tsd_buf_long(&b, longs[i]), 0, "tsd_buf_long %s", want);
		is_int((long long)b.len, (long long)strlen(want), "its length");
		ok(!memcmp(b.p, want, b.len), "its digits");
	}
	buf_reset(&b);
	ok(tsd_buf_point(&b, "m.x", 1292148123, 0, -476, 0, " h=u", 4) == 0 &&
	   tsd_buf_point(&b, "m.x", 1292148123500, 1, 0, 476.0, "", 0) == 0 &&
	   b.len == 48 && !memcmp(b.p, "m.x 1292148123 -476 h=u\n"
				 "m.x 1292148123500 476.0\n", 48),
	   "tsd_buf_point lines");
	buf_release(&b);
}

static void test_names(void)
{
	ok(tsd_name_valid("mysql.bytes_sent", 16), "plain name");
	ok(tsd_name_valid("a-b_c.d/e", 9), "all ASCII specials");
	ok(tsd_name_valid("temp\xc3\xa9rature", 12), "Latin letter");
	ok(tsd_name_valid("\xe6\xb8\xa9\xe5\xba\xa6", 6), "CJK letters");
	ok(!tsd_name_valid("a b", 3), "space");
	ok(!tsd_name_valid("a:b", 3), "colon");
	ok(!tsd_name_valid("a=b", 3), "equals");
	ok(!tsd_name_valid("", 0), "empty");
	ok(!tsd_name_valid("\xc2\xb0", 2), "degree sign is no letter");
	ok(!tsd_name_valid("\xf0\x9f\x98\x80", 4), "emoji (beyond the BMP)");
	ok(!tsd_name_valid("\xf0\x90\x90\x80", 4),
	   "supplementary letter: Java sees surrogates");
	ok(!tsd_name_valid("\xc3", 1), "truncated UTF-8");
	ok(!tsd_name_valid("\xc0\xaf", 2), "overlong UTF-8");
	ok(tsd_is_letter(0x00E9) && !tsd_is_letter(0x00D7) &&
	   tsd_is_letter(0xFFDC) && !tsd_is_letter(0x10400),
	   "letter table edges");
}

static int parse(const char *s, struct tsd_line *l, char *why)
{
	return tsd_line_parse(s, strlen(s), NULL, 0, l, why, 128);
}

static void test_lines(void)
{
	struct tsd_line l;
	char why[128];

	ok(parse("put mysql.bytes_sent 1292148123 476 host=ubuntu", &l,
		 why) == 0 && l.mlen == 16 && l.ts == 1292148123 &&
	   !l.value.is_float && l.value.i == 476 && l.ntags == 1 &&
	   !memcmp(l.tags[0].v, "ubuntu", 6), "the seed's example line");
	ok(parse("sys.cpu 1292148123 1.5 host=a cpu=0\r", &l, why) == 0 &&
	   l.value.is_float && l.value.d == 1.5 && l.ntags == 2 &&
	   l.tags[1].vlen == 1, "no put prefix, float, CRLF");
	ok(parse("  m\t1292148123456  -3  a=b ", &l, why) == 0 &&
	   l.ts == INT64_C(1292148123456) && l.value.i == -3,
	   "milliseconds, tabs, extra spaces");
	ok(parse("m 1292148123.456 1 a=b", &l, why) == 0 &&
	   l.ts == INT64_C(1292148123456), "SECONDS.mmm");
	ok(parse("m 1 1 a=b a=b", &l, why) == 0 && l.ntags == 1,
	   "identical duplicate tag counts once");
	ok(parse("m 1 1e3 a=b", &l, why) == 0 && l.value.is_float &&
	   l.value.d == 1000, "exponent is a float");
	is_int(parse("", &l, why), TSD_LINE_BLANK, "empty line");
	is_int(parse("   \r", &l, why), TSD_LINE_BLANK, "blank line");

	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "m 1292148123 1", "need at least one tag" },
		{ "m 1292148123", "not enough arguments (need 4, got 2)" },
		{ "put", "not enough arguments (need 4, got 0)" },
		{ "m 1292148123 1 a=b a=c", "duplicate tag: a=c" },
		{ "m 1292148123 1 a", "invalid tag: a" },
		{ "m 1292148123 1 a=", "invalid tag: a=" },
		{ "m 1292148123 1 =b", "invalid tag: =b" },
		{ "m 1292148123 1 a=b=c", "invalid tag: a=b=c" },
		{ "m 1292148123 1 a=b c=d e=f g=h i=j k=l m=n o=p q=r",
		  "too many tags: more than 8" },
		{ "m!x 1292148123 1 a=b", "invalid metric name: m!x" },
		{ "m 1292148123 1 a:x=b", "invalid tag name: a:x" },
		{ "m 1292148123 1 a=b%", "invalid tag value: b%" },
		{ "m 0 1 a=b", "invalid timestamp: 0" },
		{ "m -5 1 a=b", "invalid timestamp: -5" },
		{ "m 12345678901234 1 a=b", "bad timestamp: 12345678901234" },
		{ "m 1292148123.5 1 a=b", "invalid timestamp: 1292148123.5" },
		{ "m 1292148123 NaN a=b", "invalid value: NaN" },
		{ "m 1292148123 Infinity a=b", "invalid value: Infinity" },
		{ "m 1292148123 1e400 a=b", "invalid value: 1e400" },
		{ "m 1292148123 1.2.3 a=b", "invalid value: 1.2.3" },
		{ "m 1292148123 99999999999999999999 a=b",
		  "invalid value: 99999999999999999999" },
		{ "m 1292148123 0x10 a=b", "invalid value: 0x10" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = parse(bad[i].line, &l, why);
		ok(rc == CF_EINVAL && !strcmp(why, bad[i].why),
		   "rejects '%s': %s", bad[i].line, why);
	}

	/* metric files: "TS VALUE TAGS", the metric is the file's */
	ok(tsd_line_parse("1292148123 7 host=a", 19, "cpu", 3, &l, why,
			  sizeof why) == 0 && l.mlen == 3 && l.value.i == 7,
	   "metric-file line");
	ok(tsd_line_parse("put 1292148123 7 host=a", 23, "cpu", 3, &l, why,
			  sizeof why) == CF_EINVAL,
	   "metric-file line takes no put word");
}

/* The words tsd_line_words finds are tsd_line_parse's: every line the
 * parser takes has its metric, timestamp and value words, and the tag
 * text parsed alone (after "m 1 1 ") gives the same tags; a line it
 * splits into fewer words is one tsd_line_words refuses. */
static void test_line_words(void)
{
	static const char *const lines[] = {
		"put m 1356998400 1 host=a",
		"m 1356998400 1 host=a dc=b",
		"  put\tm  1356998400\t\t1.5  host=a \t dc=b  \r",
		"m 1356998400 1 host=a host=a",
		"put put 1356998400 1 host=a",
		"m 1356998400 1",
		"m 1356998400 1    ",
		"put m 1356998400",
		"",
		"   \t ",
		"m 1356998400 1 host=a\r",
		"m 1356998400 1 a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8",
	};
	struct tsd_line l, t;
	struct tsd_line_words w;
	char why[128], tl[256];
	int good = 1;

	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		const char *s = lines[i];
		int rc = tsd_line_parse(s, strlen(s), NULL, 0, &l, why,
					sizeof why);
		int words = tsd_line_words(s, strlen(s), 0, &w);
		if (rc != CF_OK) {
			/* refused or blank: whatever the words, the parse
			 * of the same bytes refuses again */
			continue;
		}
		if (!words || w.mlen != l.mlen ||
		    memcmp(w.metric, l.metric, l.mlen)) {
			good = 0;
			diag("line %zu: the metric word", i);
			continue;
		}
		snprintf(tl, sizeof tl, "m 1 1 %.*s", (int)w.tagslen,
			 w.tags);
		if (tsd_line_parse(tl, strlen(tl), NULL, 0, &t, why,
				   sizeof why) != CF_OK ||
		    t.ntags != l.ntags) {
			good = 0;
			diag("line %zu: the tag text '%s'", i, tl);
			continue;
		}
		for (size_t j = 0; j < l.ntags; j++)
			if (t.tags[j].klen != l.tags[j].klen ||
			    memcmp(t.tags[j].k, l.tags[j].k, l.tags[j].klen) ||
			    t.tags[j].vlen != l.tags[j].vlen ||
			    memcmp(t.tags[j].v, l.tags[j].v, l.tags[j].vlen))
				good = 0;
		{
			int64_t ts;
			struct tsd_value v;
			if (tsd_line_point(&w, &ts, &v, why, sizeof why) ||
			    ts != l.ts || v.is_float != l.value.is_float ||
			    v.i != l.value.i || v.d != l.value.d)
				good = 0;
		}
	}
	ok(good, "tsd_line_words splits lines as tsd_line_parse does");
	ok(!tsd_line_words("m 1356998400 1", 14, 0, &w) &&
	   !tsd_line_words("m 1356998400 1 \t ", 17, 0, &w) &&
	   !tsd_line_words("put m 1", 7, 0, &w),
	   "no tag word: no words");
	ok(tsd_line_words("1356998400 7 host=a ", 20, 1, &w) &&
	   w.tagslen == 6 && !memcmp(w.tags, "host=a", 6) &&
	   w.tslen == 10 && w.vlen == 1,
	   "a metric file's line: timestamp, value, tags");
	ok(tsd_line_words("m 1356998400 x host=a", 21, 0, &w) &&
	   tsd_line_point(&w, &l.ts, &l.value, why, sizeof why) ==
	   CF_EINVAL && !strcmp(why, "invalid value: x"),
	   "tsd_line_point refuses as the parse does: %s", why);
}

int main(void)
{
	test_qualifiers();
	test_values();
	test_cells();
	test_rowkey();
	test_numbers();
	test_names();
	test_lines();
	test_line_words();
	return done_testing();
}
