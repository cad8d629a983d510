/*
 * test-tsd.c: the time-series layer on a real engine: the bytes OpenTSDB
 * would store (the seed's example point, UID rows, millisecond points,
 * floats), row compaction and reading both forms, all-or-nothing writes
 * with line numbers, lines split across writes, metric dumps through the
 * cursor, queries end to end with exact output, name listings, UID
 * exhaustion, concurrent writers racing for the same new names, a model
 * of writes giving a time twice (the later line wins), and a
 * PNG graph from gnuplot.
 */
#include <ctype.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cellfs.h"
#include "tests/tap.h"
#include "tsd/internal.h"
#include "tsd/tree.h"
#include "tsd/tsd.h"
#include "util/env.h"
#include "util/err.h"

static cf_db *db;
static const char *dir;

/* 2013-01-01 00:00:00 UTC */
#define T0 1356998400LL

static void hex(const unsigned char *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = '\0';
}

static tsd *open_tsd(int compact_on_read)
{
	struct tsd_options o;
	tsd *t;
	tsd_options_default(&o);
	o.compact_interval_ms = 0;
	o.compact_on_read = compact_on_read;
	if (tsd_open(db, &o, &t))
		bail("tsd_open failed");
	return t;
}

static int put(tsd *t, const char *text, struct tsd_error *e)
{
	struct tsd_error local;
	return tsd_put_text(t, text, strlen(text), e ? e : &local);
}

/* The cells of row key (hex) in table tab, family fam, as
 * "qual=value qual=value" in hex. */
static const char *cells_of(const char *tab, const unsigned char *key,
			    size_t klen, const char *fam)
{
	static char out[4096];
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	struct cf_column col = { fam, strlen(fam), NULL, 0 };
	cf_table *tb;
	cf_row *row;
	size_t off = 0;

	out[0] = '\0';
	o.columns = &col;
	o.ncolumns = 1;
	if (cf_table_open(db, tab, &tb))
		return "(no table)";
	if (cf_table_get(tb, key, klen, &o, &row)) {
		cf_table_close(tb);
		return "(get failed)";
	}
	for (size_t i = 0; i < cf_row_count(row) && off < sizeof out - 200;
	     i++) {
		const struct cf_cell *c = cf_row_cell(row, i);
		if (i)
			out[off++] = ' ';
		hex(c->qual, c->qlen, out + off);
		off += 2 * c->qlen;
		out[off++] = '=';
		if (c->vlen > 80) {
			off += (size_t)sprintf(out + off, "(%zu bytes)", c->vlen);
			continue;
		}
		hex(c->val, c->vlen, out + off);
		off += 2 * c->vlen;
	}
	out[off] = '\0';
	cf_row_free(row);
	cf_table_close(tb);
	return out;
}

/* Reads a cursor whole, in chunks of step bytes. */
static char *slurp(tsd_cursor *c, size_t step, size_t *len)
{
	struct buf b = BUF_INIT;
	char *tmp = malloc(step);
	size_t got;
	uint64_t off = 0;
	for (;;) {
		if (tsd_cursor_pread(c, tmp, step, off, &got) || got == 0)
			break;
		buf_append(&b, tmp, got);
		off += got;
	}
	free(tmp);
	buf_putc(&b, 0);
	*len = b.len - 1;
	return (char *)b.p;
}

static char *dump(tsd *t, const char *metric)
{
	tsd_cursor *c;
	size_t n;
	if (tsd_metric_open(t, metric, &c))
		return strdup("(no such metric)");
	char *s = slurp(c, 7, &n);
	tsd_cursor_close(c);
	return s;
}

/* The answer of query q in format fmt (malloc'd; "" on failure). */
static char *query_fmt(tsd *t, const char *q, enum tsd_format fmt, int *rc,
		       struct tsd_error *e)
{
	tsd_cursor *c;
	size_t n;
	struct tsd_error local;
	*rc = tsd_query_open(t, q, strlen(q), fmt, &c, e ? e : &local);
	if (*rc)
		return strdup("");
	char *s = slurp(c, 4096, &n);
	tsd_cursor_close(c);
	return s;
}

static char *query(tsd *t, const char *q, int *rc, struct tsd_error *e)
{
	return query_fmt(t, q, TSD_FMT_TEXT, rc, e);
}

static void check_query(tsd *t, const char *q, const char *want)
{
	int rc;
	struct tsd_error e;
	char *got = query(t, q, &rc, &e);
	if (!ok(rc == 0 && !strcmp(got, want), "query %s", q))
		diag("  rc %d (%s)\n  got:\n%s  want:\n%s", rc, e.reason, got,
		     want);
	free(got);
}

static void test_seed_example(void)
{
	tsd *t = open_tsd(0);
	struct tsd_error e;
	char *s;

	/* make the UIDs of the book's figure: metric 1, host 2, ubuntu 3 */
	is_int(put(t, "mysql.bytes_sent 1292144400 1 dc=x\n"
		   "other 1292144400 1 dc=y\n", &e), 0, "first points");
	is_int(put(t, "put mysql.bytes_sent 1292148123 476 host=ubuntu\n", &e),
	       0, "the seed's example point");
	static const unsigned char key[] = { 0, 0, 1, 0x4d, 0x04, 0x9d, 0x20,
					     0, 0, 2, 0, 0, 3 };
	is_str(cells_of("tsdb", key, sizeof key, "t"), "07b1=01dc",
	       "row 000001 4d049d20 000002 000003: t:07b1 = 01dc");
	is_str(cells_of("tsdb-uid", (const unsigned char *)"mysql.bytes_sent",
			16, "id"), "6d657472696373=000001",
	       "forward row: id:metrics = 000001");
	is_str(cells_of("tsdb-uid", (const unsigned char *)"\0\0\1", 3, "name"),
	       "6d657472696373=6d7973716c2e62797465735f73656e74"
	       " 7461676b=6463 74616776=78",
	       "reverse row 000001: name:metrics, name:tagk, name:tagv");
	is_str(cells_of("tsdb-uid", (const unsigned char *)"ubuntu", 6, "id"),
	       "74616776=000003", "forward row of a tag value");
	is_str(cells_of("tsdb-uid", (const unsigned char *)"\0", 1, "id"),
	       "6d657472696373=0000000000000002 7461676b=0000000000000002"
	       " 74616776=0000000000000003",
	       "counter row \\0: 8-byte big-endian counters per kind");

	s = dump(t, "mysql.bytes_sent");
	is_str(s, "mysql.bytes_sent 1292144400 1 dc=x\n"
	       "mysql.bytes_sent 1292148123 476 host=ubuntu\n",
	       "metric dump, read 7 bytes at a time");
	free(s);

	/* milliseconds, floats, the widths of integers */
	is_int(put(t, "m.ms 1292148123456 7 h=a\n"
		   "m.ms 1292148123 -2 h=a\n"
		   "m.f 1292148123 1.5 h=a\n"
		   "m.f 1292148124 0.1 h=a\n"
		   "m.f 1292148125 70000 h=a\n"
		   "m.f 1292148126 -9000000000 h=a\n", &e), 0,
	       "ms, float and wide points");
	uint32_t mms, mf, ha, hv;
	ok(tsd_name_lookup(t, TSD_METRICS, "m.ms", &mms) == 0 &&
	   tsd_name_lookup(t, TSD_METRICS, "m.f", &mf) == 0 &&
	   tsd_name_lookup(t, TSD_TAGK, "h", &ha) == 0 &&
	   tsd_name_lookup(t, TSD_TAGV, "a", &hv) == 0 && mms == 3 &&
	   mf == 4 && ha == 3 && hv == 4, "UIDs of the new names");
	unsigned char k2[] = { 0, 0, 3, 0x4d, 0x04, 0x9d, 0x20, 0, 0, 3, 0,
			       0, 4 };
	is_str(cells_of("tsdb", k2, sizeof k2, "t"),
	       "07b0=fe f0789000=07",
	       "seconds qualifier 07b0 and ms qualifier f0789000 "
	       "(0xF0000000 | 123456 << 6)");
	k2[2] = 4;
	is_str(cells_of("tsdb", k2, sizeof k2, "t"),
	       "07bb=3fc00000 07cf=3fb999999999999a 07d3=00011170 "
	       "07e7=fffffffde78ee600",
	       "4-byte float, 8-byte double, 4- and 8-byte integers");
	s = dump(t, "m.ms");
	is_str(s, "m.ms 1292148123 -2 h=a\nm.ms 1292148123456 7 h=a\n",
	       "ms points dump in ms");
	free(s);
	s = dump(t, "m.f");
	is_str(s, "m.f 1292148123 1.5 h=a\nm.f 1292148124 0.1 h=a\n"
	       "m.f 1292148125 70000 h=a\nm.f 1292148126 -9000000000 h=a\n",
	       "floats print as OpenTSDB prints them");
	free(s);

	tsd_cursor *c;
	is_int(tsd_metric_open(t, "nope", &c), CF_ENOTFOUND,
	       "dump of an unknown metric");
	tsd_close(t);
}

static void test_compaction(void)
{
	tsd *t = open_tsd(0);
	struct tsd_error e;
	char *s;

	is_int(put(t, "cmp 1356998400 1 h=a\ncmp 1356998401 2 h=a\n"
		   "cmp 1356998402500 3 h=a\n", &e), 0, "three points");
	uint32_t m, k, v;
	tsd_name_lookup(t, TSD_METRICS, "cmp", &m);
	tsd_name_lookup(t, TSD_TAGK, "h", &k);
	tsd_name_lookup(t, TSD_TAGV, "a", &v);
	unsigned char key[] = { 0, 0, (unsigned char)m, 0x50, 0xe2, 0x27, 0x00,
				0, 0, (unsigned char)k, 0, 0, (unsigned char)v };
	is_str(cells_of("tsdb", key, sizeof key, "t"),
	       "0000=01 0010=02 f0027100=03", "three cells before compaction");
	struct tsd_stats st;
	tsd_stats(t, &st);
	is_int(st.compact_pending, 1, "one row queued for compaction");
	is_int(tsd_compact(t, 0), 0, "compaction pass");
	is_str(cells_of("tsdb", key, sizeof key, "t"),
	       "00000010f0027100=01020301",
	       "one compacted cell: qualifiers, values, meta byte 01 "
	       "(seconds and ms mixed)");
	s = dump(t, "cmp");
	is_str(s, "cmp 1356998400 1 h=a\ncmp 1356998401 2 h=a\n"
	       "cmp 1356998402500 3 h=a\n", "compacted row reads back");
	free(s);

	/* a late point: both forms in one row, read merged */
	is_int(put(t, "cmp 1356998401500 9 h=a\ncmp 1356998401 5 h=a\n", &e),
	       0, "late points, one overwriting a compacted one");
	s = dump(t, "cmp");
	is_str(s, "cmp 1356998400 1 h=a\ncmp 1356998401 5 h=a\n"
	       "cmp 1356998401500 9 h=a\ncmp 1356998402500 3 h=a\n",
	       "compacted and single cells merge; the newer duplicate wins");
	free(s);
	is_int(tsd_compact(t, 1), 0, "compaction of everything queued");
	is_str(cells_of("tsdb", key, sizeof key, "t"),
	       "00000010f0017700f0027100=0105090301",
	       "recompacted row");
	tsd_close(t);

	/* one write, out of key order, a point twice: the later line wins
	 * (the batch is put in key order, stably) */
	t = open_tsd(0);
	is_int(put(t, "dup 1356998405 1 h=a\ndup 1356998400 7 h=b\n"
		   "dup 1356998405 2 h=a\ndup 1356998401 3 h=a\n"
		   "dup 1356998405 4 h=a\n", &e), 0, "a point three times in a write");
	s = dump(t, "dup");
	is_str(s, "dup 1356998401 3 h=a\ndup 1356998405 4 h=a\n"
	       "dup 1356998400 7 h=b\n", "the last of the three is kept");
	free(s);
	tsd_close(t);

	/* an OpenTSDB-written compacted cell of seconds only: meta 00 */
	t = open_tsd(1);
	is_int(put(t, "cmp2 1356998400 1 h=a\ncmp2 1356998460 300 h=a\n", &e),
	       0, "points for compaction at read");
	s = dump(t, "cmp2");
	is_str(s, "cmp2 1356998400 1 h=a\ncmp2 1356998460 300 h=a\n",
	       "dump (compacting on the way)");
	free(s);
	tsd_name_lookup(t, TSD_METRICS, "cmp2", &m);
	key[2] = (unsigned char)m;
	is_str(cells_of("tsdb", key, sizeof key, "t"), "000003c1=01012c00",
	       "compacted at read: 0000 03c1 = 01 012c 00");
	tsd_close(t);
}

static int wwrite(tsd_writer *w, const char *s, struct tsd_error *e)
{
	return tsd_writer_write(w, s, strlen(s), e);
}

/* A tsd_reject_fn collecting "N:reason:text;" */
static void collect(void *ctx, const struct tsd_error *e, const char *line,
		    size_t len)
{
	char *acc = ctx;
	size_t n = strlen(acc);
	snprintf(acc + n, 1024 - n, "%llu:%s:%.*s;", (unsigned long long)e->line,
		 e->reason, (int)len, line);
}

static void test_bad_lines(void)
{
	tsd *t = open_tsd(0);
	struct tsd_put_result r;
	struct tsd_stats st0, st;
	struct tsd_error e;
	char seen[1024] = "";
	tsd_writer *w;
	char *s;

	tsd_stats(t, &st0);
	is_int(put(t, "bad.ok 1356998400 1 h=a\nbad.ok 1356998401 2\n"
		   "bad.ok 1356998402 3 h=a\n", &e), CF_EINVAL,
	       "a write with a bad line fails");
	ok(e.line == 2 && !strcmp(e.reason, "need at least one tag"),
	   "line 2: need at least one tag (%llu: %s)",
	   (unsigned long long)e.line, e.reason);
	s = dump(t, "bad.ok");
	is_str(s, "bad.ok 1356998400 1 h=a\nbad.ok 1356998402 3 h=a\n",
	       "the valid lines are stored (OpenTSDB's put rule)");
	free(s);
	tsd_stats(t, &st);
	ok(st.lines_rejected == st0.lines_rejected + 1 &&
	   st.writes_rejected == st0.writes_rejected + 1 &&
	   st.points == st0.points + 2, "stats: 1 line, 1 write refused, "
	   "2 points");

	is_int(tsd_writer_open(t, NULL, &w), 0, "writer");
	tsd_writer_on_reject(w, collect, seen);
	is_int(wwrite(w, "split.m 13569", &e), 0, "half a line");
	is_int(wwrite(w, "98400 5 h=", &e), 0, "more of it");
	is_int(wwrite(w, "a\nsplit.m 1356998401 6 h=a\nsplit.m 13", &e), 0,
	       "its end, a line, a start");
	const char *two = "56998402 7 h=a h=b\nx 1 1\nsplit.m 13";
	is_int(tsd_writer_put(w, two, strlen(two), 0, &r, &e), CF_EINVAL, "two bad lines");
	ok(e.line == 3 && !strcmp(e.reason, "duplicate tag: h=b"),
	   "counted from the open: line 3 (%llu: %s)",
	   (unsigned long long)e.line, e.reason);
	ok(r.lines == 2 && r.stored == 0 && r.refused == 2,
	   "counts: %llu lines, %llu stored, %llu refused",
	   (unsigned long long)r.lines, (unsigned long long)r.stored,
	   (unsigned long long)r.refused);
	is_str(seen, "3:duplicate tag: h=b:split.m 1356998402 7 h=a h=b;"
	       "4:need at least one tag:x 1 1;",
	       "each refused line reported, with its text");
	is_int(wwrite(w, "56998403 8 h=a\nsplit.m 1356998404 9 h=a", &e), 0,
	       "the unfinished line of a write with bad lines continues");
	is_int(tsd_writer_finish(w, &e), 0, "a last line without newline");
	/* an engine-level failure drops the unfinished line; only line
	 * length can be forced here: a line over 64 KiB */
	char *big = malloc(70000);
	memset(big, 'a', 70000);
	memcpy(big, "split.m 1356998405 1 h=a\nsplit.m ", 33);
	seen[0] = '\0';
	is_int(tsd_writer_put(w, big, 70000, 0, &r, &e), CF_EINVAL,
	       "a line over 64 KiB");
	ok(r.stored == 1 && r.refused == 1 && e.line == 8,
	   "the line before it stored; line %llu refused: %s",
	   (unsigned long long)e.line, e.reason);
	is_int(wwrite(w, "aaa 1 h=a\nsplit.m 1356998406 2 h=a\n", &e), 0,
	       "its rest skipped");
	/* a name longer than a tsdb-uid row key may be */
	memset(big, 'a', 70000);
	memcpy(big, "split.m 1356998407 1 h=", 23);
	big[40000] = '\n';
	is_int(tsd_writer_write(w, big, 40001, &e), CF_EINVAL,
	       "a tag value over 32767 bytes");
	ok(e.line == 10 && !strncmp(e.reason, "name too long (over 32767 "
				    "bytes): h=aaa", 38), "%s", e.reason);
	free(big);
	tsd_writer_close(w);
	s = dump(t, "split.m");
	is_str(s, "split.m 1356998400 5 h=a\nsplit.m 1356998401 6 h=a\n"
	       "split.m 1356998403 8 h=a\nsplit.m 1356998404 9 h=a\n"
	       "split.m 1356998405 1 h=a\nsplit.m 1356998406 2 h=a\n",
	       "what was stored");
	free(s);

	/* metric files */
	is_int(tsd_writer_open(t, "bad name", &w), CF_EINVAL,
	       "metric file of an invalid name");
	is_int(tsd_writer_open(t, "file.m", &w), 0, "metric file writer");
	is_int(wwrite(w, "1356998400 1 h=a\n1356998401 2.5 h=a\n", &e), 0,
	       "appended lines");
	is_int(wwrite(w, "file.m 1356998402 3 h=a\n", &e), CF_EINVAL,
	       "a put line is not a metric-file line");
	tsd_writer_close(w);
	s = dump(t, "file.m");
	is_str(s, "file.m 1356998400 1 h=a\nfile.m 1356998401 2.5 h=a\n",
	       "metric file appends");
	free(s);
	tsd_close(t);
}

static void test_queries(void)
{
	tsd *t = open_tsd(1);
	struct tsd_error e;
	char q[512];
	int rc;

	is_int(put(t,
		   "sys.cpu 1356998400 10 host=a dc=x\n"
		   "sys.cpu 1356998410 20 host=a dc=x\n"
		   "sys.cpu 1356998420 30 host=a dc=x\n"
		   "sys.cpu 1356998405 100 host=b dc=x\n"
		   "sys.cpu 1356998415 200 host=b dc=x\n"
		   "sys.cpu 1356998400 1000 host=c dc=y\n"
		   "net.bytes 1356998400 100 host=a\n"
		   "net.bytes 1356998410 200 host=a\n"
		   "net.bytes 1356998420 150 host=a\n"
		   "net.bytes 1356998430 250 host=a\n"
		   "lat 1356998400000 1 host=a\n"
		   "lat 1356998400250 2 host=a\n"
		   "lat 1356998400500 4.5 host=a\n", &e), 0, "query data");

	check_query(t, "start=1356998400&end=1356998430&m=sum:sys.cpu{dc=x}",
		    "sys.cpu 1356998400 10 dc=x\n"
		    "sys.cpu 1356998405 115 dc=x\n"
		    "sys.cpu 1356998410 170 dc=x\n"
		    "sys.cpu 1356998415 225 dc=x\n"
		    "sys.cpu 1356998420 30 dc=x\n");
	check_query(t, "start=1356998400&end=1356998430&m=sum:sys.cpu",
		    "sys.cpu 1356998400 1010\n"
		    "sys.cpu 1356998405 115\n"
		    "sys.cpu 1356998410 170\n"
		    "sys.cpu 1356998415 225\n"
		    "sys.cpu 1356998420 30\n");
	check_query(t, "start=1356998400&end=1356998430&m=avg:sys.cpu{dc=*}",
		    "sys.cpu 1356998400 10 dc=x\n"
		    "sys.cpu 1356998405 57 dc=x\n"
		    "sys.cpu 1356998410 85 dc=x\n"
		    "sys.cpu 1356998415 112 dc=x\n"
		    "sys.cpu 1356998420 30 dc=x\n"
		    "sys.cpu 1356998400 1000 dc=y host=c\n");
	check_query(t, "start=1356998400&end=1356998430&m=max:sys.cpu"
		    "{host=a|c}",
		    "sys.cpu 1356998400 10 dc=x host=a\n"
		    "sys.cpu 1356998410 20 dc=x host=a\n"
		    "sys.cpu 1356998420 30 dc=x host=a\n"
		    "sys.cpu 1356998400 1000 dc=y host=c\n");
	check_query(t, "start=1356998400&end=1356998430&m=zimsum:sys.cpu"
		    "{}{host=wildcard(*b),dc=x}",
		    "sys.cpu 1356998405 100 dc=x host=b\n"
		    "sys.cpu 1356998415 200 dc=x host=b\n");
	check_query(t, "start=1356998400&end=1356998430&m=count:sys.cpu"
		    "{}{host=not_literal_or(b)}",
		    "sys.cpu 1356998400 2\n"
		    "sys.cpu 1356998410 1\n"
		    "sys.cpu 1356998420 1\n");
	check_query(t, "start=1356998400&end=1356998430&m=sum:10s-avg:"
		    "sys.cpu{host=a}",
		    "sys.cpu 1356998400 10.0 dc=x host=a\n"
		    "sys.cpu 1356998410 20.0 dc=x host=a\n"
		    "sys.cpu 1356998420 30.0 dc=x host=a\n");
	check_query(t, "start=1356998400&end=1356998440&m=sum:10s-sum-zero:"
		    "sys.cpu{host=b}",
		    "sys.cpu 1356998400 100.0 dc=x host=b\n"
		    "sys.cpu 1356998410 200.0 dc=x host=b\n"
		    "sys.cpu 1356998420 0.0 dc=x host=b\n"
		    "sys.cpu 1356998430 0.0 dc=x host=b\n"
		    "sys.cpu 1356998440 0.0 dc=x host=b\n");
	check_query(t, "start=1356998400&end=1356998430&m=sum:10s-sum-nan:"
		    "sys.cpu{host=b}",
		    "sys.cpu 1356998400 100.0 dc=x host=b\n"
		    "sys.cpu 1356998410 200.0 dc=x host=b\n"
		    "sys.cpu 1356998420 NaN dc=x host=b\n"
		    "sys.cpu 1356998430 NaN dc=x host=b\n");
	check_query(t, "start=1356998400&end=1356998430&m=sum:10s-sum-null:"
		    "sys.cpu{host=b}",
		    "sys.cpu 1356998400 100.0 dc=x host=b\n"
		    "sys.cpu 1356998410 200.0 dc=x host=b\n");
	check_query(t, "start=1356998400&end=1356998440&m=sum:rate:net.bytes",
		    "net.bytes 1356998410 10.0 host=a\n"
		    "net.bytes 1356998420 -5.0 host=a\n"
		    "net.bytes 1356998430 10.0 host=a\n");
	check_query(t, "start=1356998400&end=1356998440&m=sum:"
		    "rate{counter,300}:net.bytes",
		    "net.bytes 1356998410 10.0 host=a\n"
		    "net.bytes 1356998420 25.0 host=a\n"
		    "net.bytes 1356998430 10.0 host=a\n");
	check_query(t, "start=1356998400&end=1356998440&m=sum:"
		    "rate{dropcounter}:net.bytes",
		    "net.bytes 1356998410 10.0 host=a\n"
		    "net.bytes 1356998430 10.0 host=a\n");
	/* a float next point already makes a step a double */
	/* milliseconds points print in seconds without "ms", as
	 * OpenTSDB's HttpJsonSerializer does */
	check_query(t, "start=1356998400&end=1356998401&m=sum:lat",
		    "lat 1356998400 1 host=a\n"
		    "lat 1356998400 2.0 host=a\n"
		    "lat 1356998400 4.5 host=a\n");
	check_query(t, "start=1356998400&end=1356998401&m=sum:lat&ms",
		    "lat 1356998400000 1 host=a\n"
		    "lat 1356998400250 2.0 host=a\n"
		    "lat 1356998400500 4.5 host=a\n");
	/* TestTagVLiteralOrFilter: matchPipeNoValueAfter/Before */
	check_query(t, "start=1356998400&end=1356998430&m=sum:sys.cpu"
		    "{host=literal_or(c|)}",
		    "sys.cpu 1356998400 1000 dc=y host=c\n");
	check_query(t, "start=1356998400&end=1356998430&m=sum:sys.cpu"
		    "{host=literal_or(|c)}",
		    "sys.cpu 1356998400 1000 dc=y host=c\n");
	check_query(t, "start=1356998400&end=1356998430&m=sum:sys.cpu"
		    "{}{host=c|}",
		    "sys.cpu 1356998400 1000 dc=y host=c\n");
	check_query(t, "start=1356998400&end=1356998420&m=sum:sys.cpu{host=a}"
		    "&ms",
		    "sys.cpu 1356998400000 10 dc=x host=a\n"
		    "sys.cpu 1356998410000 20 dc=x host=a\n"
		    "sys.cpu 1356998420000 30 dc=x host=a\n");
	check_query(t, "start=1356998400&end=1356998430&m=none:sys.cpu{dc=x}",
		    "sys.cpu 1356998400 10 dc=x host=a\n"
		    "sys.cpu 1356998410 20 dc=x host=a\n"
		    "sys.cpu 1356998420 30 dc=x host=a\n"
		    "sys.cpu 1356998405 100 dc=x host=b\n"
		    "sys.cpu 1356998415 200 dc=x host=b\n");
	check_query(t, "start=1356998400&end=1356998430&m=sum:explicit_tags:"
		    "sys.cpu{host=a}", "");
	check_query(t, "start=1356998400&end=1356998430&m=sum:explicit_tags:"
		    "sys.cpu{host=*,dc=y}",
		    "sys.cpu 1356998400 1000 dc=y host=c\n");
	check_query(t, "start=1356998410&end=1356998415&m=sum:sys.cpu{dc=x}"
		    "&m=sum:net.bytes",
		    "sys.cpu 1356998410 170 dc=x\n"
		    "sys.cpu 1356998415 225 dc=x\n"
		    "net.bytes 1356998410 200 host=a\n");
	check_query(t, "start=2013/01/01-00:00:15&end=2013/01/01-00:00:20"
		    "&m=sum:0all-sum:sys.cpu",
		    "sys.cpu 1356998415 200.0\n");

	/* errors name their cause */
	char *r = query(t, "start=1356998400&m=sum:nope", &rc, &e);
	ok(rc == CF_ENOTFOUND && !strcmp(e.reason, "no such metric: nope"),
	   "unknown metric: %s", e.reason);
	free(r);
	r = query(t, "start=1356998400&m=sum:sys.cpu{zz=a}", &rc, &e);
	ok(rc == CF_ENOTFOUND && !strcmp(e.reason, "no such tag key: zz"),
	   "unknown tag key: %s", e.reason);
	/* TestTsdbQuery.setTimeSeriesNosuchTagv: NoSuchUniqueName */
	snprintf(q, sizeof q, "start=1356998400&m=sum:sys.cpu{host=a|web03}");
	free(r);
	r = query(t, q, &rc, &e);
	ok(rc == CF_ENOTFOUND && !strcmp(e.reason, "no such tag value: web03"),
	   "unknown tag value: %s", e.reason);
	ok(tsd_query_check(t, q, strlen(q), &e) == CF_ENOTFOUND &&
	   !strcmp(e.reason, "no such tag value: web03"), "checked: %s",
	   e.reason);
	snprintf(q, sizeof q, "start=1356998400&m=sum:sys.cpu{host=|}");
	ok(tsd_query_check(t, q, strlen(q), &e) == CF_EINVAL &&
	   !strcmp(e.reason, "When parsing tag 'host=|': Filter must "
		   "contain more than just a pipe"), "%s", e.reason);
	free(r);
	r = query(t, "start=1356998400&m=bogus:sys.cpu", &rc, &e);
	ok(rc == CF_EINVAL &&
	   !strcmp(e.reason, "No such aggregation function: bogus"),
	   "bad aggregator: %s", e.reason);
	free(r);
	snprintf(q, sizeof q, "start=1356998400&m=sum:sys.cpu{host=a}");
	is_int(tsd_query_check(t, q, strlen(q), &e), 0, "query check ok");
	snprintf(q, sizeof q, "start=1356998400&m=sum:nope");
	ok(tsd_query_check(t, q, strlen(q), &e) == CF_ENOTFOUND &&
	   !strcmp(e.reason, "no such metric: nope"), "query check: %s",
	   e.reason);

	/* a result read at offsets, as the kernel reads a file */
	tsd_cursor *c;
	char buf[64];
	size_t got;
	uint64_t size;
	snprintf(q, sizeof q, "start=1356998400&end=1356998430&"
		 "m=sum:sys.cpu{dc=x}");
	is_int(tsd_query_open(t, q, strlen(q), TSD_FMT_TEXT, &c, &e), 0,
	       "query cursor");
	ok(tsd_cursor_size(c, &size) == 0 && size == 138,
	   "size %llu", (unsigned long long)size);
	ok(tsd_cursor_pread(c, buf, 10, 27, &got) == 0 && got == 10 &&
	   !memcmp(buf, "sys.cpu 13", 10), "read inside");
	ok(tsd_cursor_pread(c, buf, 64, size - 5, &got) == 0 && got == 5 &&
	   !memcmp(buf, "dc=x\n", 5), "short read at the end");
	ok(tsd_cursor_pread(c, buf, 64, size, &got) == 0 && got == 0,
	   "nothing past the end");
	tsd_cursor_close(c);

	/* names for completion */
	char **names;
	size_t n;
	ok(tsd_names(t, TSD_METRICS, "sys", 0, &names, &n) == 0 && n == 1 &&
	   !strcmp(names[0], "sys.cpu"), "metrics beginning with sys");
	free(names);
	ok(tsd_names(t, TSD_TAGK, "", 0, &names, &n) == 0 && n == 3 &&
	   !strcmp(names[0], "dc") && !strcmp(names[1], "h") &&
	   !strcmp(names[2], "host"), "every tag key, sorted");
	free(names);
	ok(tsd_names(t, TSD_METRICS, "", 2, &names, &n) == 0 && n == 2 &&
	   !strcmp(names[0], "bad.ok") && !strcmp(names[1], "cmp"),
	   "a limit");
	free(names);
	ok(tsd_names(t, TSD_TAGV, "zz", 0, &names, &n) == 0 && n == 0,
	   "no match");
	free(names);

	/* a graph */
	snprintf(q, sizeof q, "start=1356998400&end=1356998430&"
		 "m=sum:sys.cpu{host=*}&title=cpu&ylabel=load");
	rc = tsd_query_open(t, q, strlen(q), TSD_FMT_PNG, &c, &e);
	if (ok(rc == 0, "PNG query: %s", rc ? e.reason : "ok")) {
		size = 0;
		tsd_cursor_size(c, &size);
		ok(size > 1000 && tsd_cursor_pread(c, buf, 8, 0, &got) == 0 &&
		   got == 8 && !memcmp(buf, "\x89PNG\r\n\x1a\n", 8),
		   "a PNG of %llu bytes", (unsigned long long)size);
		const char *png = getenv("TSD_TEST_PNG");
		if (png) {
			FILE *f = fopen(png, "wb");
			char *all = malloc(size);
			tsd_cursor_pread(c, all, size, 0, &got);
			if (f) {
				fwrite(all, 1, got, f);
				fclose(f);
			}
			free(all);
		}
		tsd_cursor_close(c);
	}
	snprintf(q, sizeof q, "start=1356998400&end=1356998430&m=sum:lat"
		 "{host=b}");
	rc = tsd_query_open(t, q, strlen(q), TSD_FMT_PNG, &c, &e);
	ok(rc == 0, "PNG of an empty result: %s", rc ? e.reason : "ok");
	if (rc == 0)
		tsd_cursor_close(c);
	tsd_close(t);
}

/* The TSUID of the one series lookup m finds, into out. */
static void tsuid_of(tsd *t, const char *m, char *out)
{
	struct tsd_lookup_query q;
	struct tsd_lookup_result res = { 0 };
	struct tsd_error e;

	out[0] = '\0';
	tsd_lookup_query_init(&q);
	if (tsd_lookup_parse_qs(&q, m, strlen(m), &e) == 0 &&
	    tsd_lookup(t, &q, &res, &e) == 0 && res.n == 1)
		memcpy(out, res.s[0].tsuid, sizeof res.s[0].tsuid);
	tsd_lookup_result_release(&res);
	tsd_lookup_query_release(&q);
}

/* Sub queries by TSUID (OpenTSDB's tsuid= and "tsuids"), the shapes of
 * TestTsdbQueryQueries.runTSUIDQuery, runTSUIDsAggSum,
 * runTSUIDQueryNoDataForTSUID, and show_tsuids. */
static void test_tsuid_queries(void)
{
	tsd *t = open_tsd(1);
	struct tsd_error e;
	struct buf b = BUF_INIT;
	char t1[sizeof ((struct tsd_series *)0)->tsuid];
	char t2[sizeof t1], tx[sizeof t1], q[512], line[512];
	char *r;
	int rc;

	/* storeLongTimeSeriesSeconds: 300 points a series, 30 s apart,
	 * web01 counting up from 1 and web02 down from 300 */
	for (int i = 0; i < 300; i++) {
		snprintf(line, sizeof line, "tsuid.cpu %d %d host=web01\n"
			 "tsuid.cpu %d %d host=web02\n", 1356998430 + 30 * i,
			 i + 1, 1356998430 + 30 * i, 300 - i);
		buf_append(&b, line, strlen(line));
	}
	buf_putc(&b, 0);
	is_int(put(t, (char *)b.p, &e), 0, "tsuid data");
	buf_release(&b);
	tsuid_of(t, "tsuid.cpu{host=web01}", t1);
	tsuid_of(t, "tsuid.cpu{host=web02}", t2);
	ok(strlen(t1) == 18 && strlen(t2) == 18 && strncmp(t1, t2, 6) == 0,
	   "two TSUIDs of one metric: %s %s", t1, t2);

	/* runTSUIDQuery: the one series, named from its row */
	snprintf(q, sizeof q, "start=1356998400&end=1357041600&tsuid=sum:%s",
		 t1);
	r = query(t, q, &rc, &e);
	ok(rc == 0 && !strncmp(r, "tsuid.cpu 1356998430 1 host=web01\n"
			       "tsuid.cpu 1356998460 2 host=web01\n", 68) &&
	   strstr(r, "tsuid.cpu 1357007400 300 host=web01\n") &&
	   !strstr(r, "web02"), "one TSUID, named from its row");
	free(r);
	/* runTSUIDsAggSum: both, summed, host aggregated away */
	snprintf(q, sizeof q, "start=1356998400&end=1357041600&tsuid=sum:%s,%s",
		 t1, t2);
	r = query(t, q, &rc, &e);
	size_t lines = 0, sums = 0;
	for (char *p = r; (p = strchr(p, '\n')); p++)
		lines++;
	for (char *p = r; (p = strstr(p, " 301\n")); p++)
		sums++;
	ok(rc == 0 && lines == 300 && sums == 300 &&
	   !strncmp(r, "tsuid.cpu 1356998430 301\n", 25),
	   "two TSUIDs summed: %zu lines, %zu of 301", lines, sums);
	free(r);
	/* the hex may be lower case; downsampling and rate parts apply */
	for (char *p = t2; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	snprintf(q, sizeof q, "start=1356998400&end=1356998520"
		 "&tsuid=sum:1m-max:rate:%s", t2);
	check_query(t, q, "tsuid.cpu 1356998460 -0.016666666666666666 "
		    "host=web02\n"
		    "tsuid.cpu 1356998520 -0.03333333333333333 host=web02\n");
	for (char *p = t2; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	/* runTSUIDQueryNoDataForTSUID: a series never written (an unknown
	 * tag value UID, then an unknown metric UID): no result, no error */
	snprintf(tx, sizeof tx, "%.12sFFFFFF", t1);
	snprintf(q, sizeof q, "start=1356998400&tsuid=sum:%s", tx);
	check_query(t, q, "");
	snprintf(q, sizeof q, "start=1356998400&tsuid=sum:FFFFFF%s", t1 + 6);
	check_query(t, q, "");
	is_int(tsd_query_check(t, q, strlen(q), &e), 0,
	       "a TSUID query needs no names to be checked");

	/* sub queries keep the order written (m= first here) */
	snprintf(q, sizeof q, "start=1356998430&end=1356998440"
		 "&m=sum:tsuid.cpu{host=web02}&tsuid=sum:%s", t1);
	check_query(t, q, "tsuid.cpu 1356998430 300 host=web02\n"
		    "tsuid.cpu 1356998430 1 host=web01\n");

	/* show_tsuids and show_query in JSON (HttpJsonSerializer: "query"
	 * then "tsuids"; a tsuid sub query's metric is null) */
	snprintf(q, sizeof q, "start=1356998430&end=1356998460&show_tsuids"
		 "&show_query&tsuid=sum:%s,%s", t2, t1);
	r = query_fmt(t, q, TSD_FMT_JSON, &rc, &e);
	snprintf(line, sizeof line, "\"tsuids\":[\"%s\",\"%s\"],\"dps\":{",
		 t1, t2);
	ok(rc == 0 && strstr(r, "\"aggregateTags\":[\"host\"],\"query\":{"
			     "\"aggregator\":\"sum\",\"metric\":null,"
			     "\"tsuids\":[\"") && strstr(r, line) &&
	   strstr(r, "\"dps\":{\"1356998430\":301,\"1356998460\":301}}]"),
	   "show_tsuids lists the group's series, sorted: %s", r);
	free(r);
	snprintf(q, sizeof q, "start=1356998430&end=1356998460&show_tsuids"
		 "&m=none:tsuid.cpu");
	r = query_fmt(t, q, TSD_FMT_JSON, &rc, &e);
	snprintf(line, sizeof line, "\"host\":\"web01\"},\"aggregateTags\":[],"
		 "\"tsuids\":[\"%s\"]", t1);
	ok(rc == 0 && strstr(r, line), "one TSUID a series with none: %s", r);
	free(r);

	snprintf(q, sizeof q, "start=1356998400&tsuid=sum:%s,FFFFFF%s", t1,
		 t1 + 6);
	ok(tsd_query_check(t, q, strlen(q), &e) == CF_EINVAL &&
	   !strncmp(e.reason, "One or more TSUIDs did not share the same "
		    "metric [", 41), "checked: %s", e.reason);

	/* refusals: QueryRpc's and TsdbQuery's */
	static const struct { const char *q, *why; } bad[] = {
		{ "tsuid=sum:", "invalid TSUID: " },
		{ "tsuid=sum:00000100000", "invalid TSUID: 00000100000" },
		{ "tsuid=sum:000001000001000001,", "invalid TSUID: " },
		{ "tsuid=sum:00000100000100000G",
		  "invalid TSUID: 00000100000100000G" },
		{ "tsuid=sum:000001000001000001,000002000001000001",
		  "One or more TSUIDs did not share the same metric [000001] "
		  "[000002]" },
		{ "tsuid=sum:000001000001000001,00000a000001000001",
		  "One or more TSUIDs did not share the same metric [000001] "
		  "[00000a]" },
		{ "tsuid=000001000001000001",
		  "Invalid parameter tsuid=000001000001000001 (not enough "
		  ":-separated parts)" },
		{ "tsuid=", "The tsuid query string was empty" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(q, sizeof q, "start=1356998400&%s", bad[i].q);
		r = query(t, q, &rc, &e);
		ok(rc == CF_EINVAL && !strcmp(e.reason, bad[i].why),
		   "%s: %s", bad[i].q, e.reason);
		free(r);
	}
	tsd_close(t);
}

/* The value of cell FAM:QUAL of row key in table tab, as a string
 * (static), "(none)" or "(no table)". */
static const char *cell_text(const char *tab, const char *fam,
			     const void *key, size_t klen,
			     const void *q, size_t qlen)
{
	static char out[1024];
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	struct cf_column col = { fam, strlen(fam), q, qlen };
	cf_table *tb;
	cf_row *row = NULL;

	snprintf(out, sizeof out, "(none)");
	o.columns = &col;
	o.ncolumns = 1;
	if (cf_table_open(db, tab, &tb))
		return "(no table)";
	if (cf_table_get(tb, key, klen, &o, &row) == 0 && cf_row_count(row)) {
		const struct cf_cell *c = cf_row_cell(row, 0);
		snprintf(out, sizeof out, "%.*s", (int)c->vlen,
			 (const char *)c->val);
	}
	cf_row_free(row);
	cf_table_close(tb);
	return out;
}

/* A note's cell: t:QUAL of row key in tsdb-annotation. */
static const char *note_cell(const unsigned char *key, size_t klen,
			     const unsigned char *q, size_t qlen)
{
	return cell_text(TSD_TABLE_NOTE, "t", key, klen, q, qlen);
}

/* Annotations: the cells OpenTSDB's Annotation writes (row, qualifier,
 * getStorageJSON, byte for byte as TestAnnotationRpc stores them), and
 * what get, range and delete find. */
static void test_annotations(void)
{
	tsd *t = open_tsd(1);
	struct tsd_error e;
	struct buf out = BUF_INIT;
	uint64_t n;
	static const unsigned char key[] = { 0, 0, 1, 0x52, 0xC2, 0x09, 0x00,
					     0, 0, 1, 0, 0, 1 };
	static const unsigned char gkey[] = { 0, 0, 0, 0x4F, 0x29, 0xD2, 0x00 };
	const char *local = "{\"tsuid\":\"000001000001000001\",\"startTime\":"
		"1388450562,\"endTime\":1419984000,\"description\":\"Hello!\","
		"\"notes\":\"My Notes\",\"custom\":{\"owner\":\"ops\"}}";

	is_int(tsd_note_sync(t, local, strlen(local), 0, 0, &out, &e), 0,
	       "a series note");
	ok(!strcmp(note_cell(key, sizeof key, (const unsigned char *)
			     "\x01\x0A\x02", 3), local),
	   "stored at the data row's key, qualifier 01 0A 02, as OpenTSDB's "
	   "JSON: %s", note_cell(key, sizeof key, (const unsigned char *)
				 "\x01\x0A\x02", 3));
	buf_reset(&out);
	const char *g = "{\"startTime\":1328140800,\"endTime\":1328140801,"
		"\"description\":\"Description\",\"notes\":\"Notes\"}";
	is_int(tsd_note_sync(t, g, strlen(g), 0, 0, &out, &e), 0,
	       "a global note");
	ok(!strcmp(note_cell(gkey, sizeof gkey, (const unsigned char *)
			     "\x01\x00\x00", 3),
		   "{\"startTime\":1328140800,\"endTime\":1328140801,"
		   "\"description\":\"Description\",\"notes\":\"Notes\","
		   "\"custom\":null}"), "a global note: no tsuid, custom null");
	buf_reset(&out);
	const char *ms = "{\"tsuid\":\"000001000001000001\",\"startTime\":"
		"1388450562500,\"description\":\"ms\"}";
	is_int(tsd_note_sync(t, ms, strlen(ms), 0, 0, &out, &e), 0,
	       "a note in milliseconds");
	ok(strstr(note_cell(key, sizeof key, (const unsigned char *)
			    "\x01\x00\x27\x19\xC4", 5), "\"ms\"") != NULL,
	   "qualifier 01 and a 4-byte offset in ms");
	buf_reset(&out);
	const char *whole = "{\"startTime\":1328140801000,\"description\":"
		"\"on a second\"}";
	is_int(tsd_note_sync(t, whole, strlen(whole), 0, 0, &out, &e), 0,
	       "a note in ms on a whole second");
	ok(strstr(note_cell(gkey, sizeof gkey, (const unsigned char *)
			    "\x01\x00\x01", 3), "on a second") != NULL,
	   "... stored as seconds");

	/* get, the range, delete */
	buf_reset(&out);
	ok(tsd_note_get(t, "000001000001000001", 1388450562, &out, &e) == 0 &&
	   out.len && !memcmp(out.p, "{\"tsuid\":\"000001000001000001\","
			      "\"startTime\":1388450562,", 50), "get");
	is_int(tsd_note_get(t, "000001000001000001", 1388450563, &out, &e),
	       CF_ENOTFOUND, "get of nothing: %s", e.reason);
	buf_reset(&out);
	ok(tsd_note_range(t, "", 1328140800000, 1328140801000, 0, &out, &n,
			  &e) == 0 && n == 2, "two global notes in the range");
	ok(tsd_note_range(t, "000001000001000001", 1388450562000,
			  1388450562499, 0, NULL, &n, &e) == 0 && n == 1,
	   "the range's ends are milliseconds, both included");
	ok(tsd_note_range(t, "000001000001000001", 1388448000000,
			  1388451599999, 1, NULL, &n, &e) == 0 && n == 2,
	   "a range deleted: %llu", (unsigned long long)n);
	ok(!strcmp(note_cell(key, sizeof key, (const unsigned char *)
			     "\x01\x0A\x02", 3), "(none)"), "gone");
	is_int(tsd_note_delete(t, "", 1328140800, &e), 0, "delete one");
	ok(tsd_note_range(t, NULL, 0, INT64_MAX / 2, 0, NULL, &n, &e) == 0 &&
	   n == 1, "one global note left");
	is_int(tsd_note_qs(t, "start_time=2012/02/02-00:00&end_time="
			   "1328140802", 48, 0, NULL, &n, &e), 0,
	       "a range by query string: %s", e.reason);
	ok(n == 1, "... finds it");
	is_int(tsd_note_qs(t, "end_time=1", 10, 0, NULL, &n, &e), CF_EINVAL,
	       "no start: %s", e.reason);
	is_int(tsd_note_sync(t, "[1]", 3, 1, 0, &out, &e), CF_EINVAL,
	       "a bulk element that is not a note: %s", e.reason);
	is_int(tsd_note_sync(t, "{\"startTime\":5}", 15, 0, 0, &out, &e),
	       CF_EEXIST, "nothing to change");
	is_int(tsd_note_sync(t, "{\"startTime\":5,\"tsuid\":\"0001\","
			     "\"notes\":\"x\"}", 42, 0, 0, &out, &e),
	       CF_EINVAL, "a bad TSUID: %s", e.reason);
	buf_release(&out);
	tsd_close(t);
}

/* Writers racing for the same new names: two tsd handles (two UID caches,
 * so the CheckAndPut race is real) with two threads each. */
#define NTHREADS 4
#define NWRITES 30
#define NNAMES 8

static tsd *race_tsd[2];

static void *racer(void *arg)
{
	long id = (long)arg;
	tsd *t = race_tsd[id % 2];
	struct tsd_error e;
	char line[128];
	struct buf b = BUF_INIT;
	long fails = 0;

	for (int i = 0; i < NWRITES; i++) {
		buf_reset(&b);
		for (int k = 0; k < NNAMES; k++) {
			snprintf(line, sizeof line, "race.m%d %lld %d host=h%d "
				 "thread=t%ld\n", k, T0 + i, k, k, id);
			buf_append(&b, line, strlen(line));
		}
		if (tsd_put_text(t, (char *)b.p, b.len, &e))
			fails++;
	}
	buf_release(&b);
	return (void *)fails;
}

/* A scan of table dbt's rows whose key starts with metric m's UID. */
static int metric_scan(tsd *t, cf_table *dbt, const char *m, cf_scanner **s)
{
	struct cf_scan_opts so;
	unsigned char pre[TSD_UID_WIDTH];
	uint32_t uid;

	if (tsd_name_lookup(t, TSD_METRICS, m, &uid))
		return -1;
	tsd_uid_put(pre, uid);
	memset(&so, 0, sizeof so);
	so.read.max_ts = INT64_MAX;
	so.read.max_versions = 1;
	so.prefix = pre;
	so.prefixlen = sizeof pre;
	return cf_scan_open(dbt, &so, s) ? -1 : 0;
}

/* The number of those rows. */
static int rows_of(tsd *t, cf_table *dbt, const char *m)
{
	cf_scanner *s;
	const cf_row *row;
	int n = 0;

	if (metric_scan(t, dbt, m, &s))
		return -1;
	while (!cf_scan_next(s, &row) && row)
		n++;
	cf_scan_close(s);
	return n;
}

/* OpenTSDB's delete query (DELETE /api/query): the rows a query reads
 * are deleted whole, in the hours that hold [start, end]. */
static void test_query_delete(void)
{
	tsd *t = open_tsd(0);
	struct tsd_error e;
	struct buf b = BUF_INIT;
	cf_table *uidt, *dbt;
	char ts[sizeof ((struct tsd_series *)0)->tsuid], q[512];
	uint64_t n;

	/* three hours of two series, another metric, a note */
	for (int h = 0; h < 3; h++) {
		char line[256];
		snprintf(line, sizeof line,
			 "del.m %lld 1 host=a\ndel.m %lld 2 host=a\n"
			 "del.m %lld 10 host=b\ndel.o %lld 5 host=a\n",
			 T0 + 3600 * h, T0 + 3600 * h + 1800, T0 + 3600 * h,
			 T0 + 3600 * h);
		buf_append(&b, line, strlen(line));
	}
	buf_putc(&b, 0);
	is_int(put(t, (char *)b.p, &e), 0, "delete: data");
	buf_release(&b);
	tsuid_of(t, "del.m{host=a}", ts);
	snprintf(q, sizeof q, "{\"tsuid\":\"%s\",\"startTime\":%lld,"
		 "\"description\":\"kept\"}", ts, T0 + 3600 + 60);
	is_int(tsd_note_sync(t, q, strlen(q), 0, 0, &b, &e), 0,
	       "delete: a note in the hour to delete");
	buf_release(&b);

	/* a range inside hour 1: that hour's row of host=a, whole */
	snprintf(q, sizeof q, "start=%lld&end=%lld&m=sum:del.m{host=a}",
		 T0 + 3600 + 1700, T0 + 3600 + 1750);
	is_int(tsd_query_delete(t, q, strlen(q), &n, &e), 0,
	       "delete: hour 1 of host=a");
	is_int((int)n, 1, "delete: one row");
	snprintf(q, sizeof q, "start=%lld&end=%lld&m=none:del.m{host=*}",
		 T0, T0 + 3 * 3600);
	check_query(t, q,
		    "del.m 1356998400 1 host=a\n"
		    "del.m 1357000200 2 host=a\n"
		    "del.m 1357005600 1 host=a\n"
		    "del.m 1357007400 2 host=a\n"
		    "del.m 1356998400 10 host=b\n"
		    "del.m 1357002000 10 host=b\n"
		    "del.m 1357005600 10 host=b\n");
	snprintf(q, sizeof q, "start=%lld&end=%lld&m=sum:del.o", T0,
		 T0 + 3 * 3600);
	check_query(t, q,
		    "del.o 1356998400 5 host=a\n"
		    "del.o 1357002000 5 host=a\n"
		    "del.o 1357005600 5 host=a\n");
	is_int(tsd_note_get(t, ts, T0 + 3600 + 60, &b, &e), 0,
	       "delete: the note of the deleted row is kept");
	buf_release(&b);

	/* by TSUID: every hour of host=b; the end's hour is the last */
	tsuid_of(t, "del.m{host=b}", ts);
	snprintf(q, sizeof q, "start=%lld&end=%lld&tsuid=sum:%s", T0,
		 T0 + 3600, ts);
	is_int(tsd_query_delete(t, q, strlen(q), &n, &e), 0,
	       "delete: by TSUID");
	is_int((int)n, 2, "delete: the rows of hours 0 and 1 (end 01:00)");
	snprintf(q, sizeof q, "start=%lld&end=%lld&m=none:del.m{host=b}",
		 T0, T0 + 3 * 3600);
	check_query(t, q, "del.m 1357005600 10 host=b\n");

	/* refusals: nothing deleted */
	snprintf(q, sizeof q, "start=yesterday&m=sum:del.m");
	is_int(tsd_query_delete(t, q, strlen(q), &n, &e), CF_EINVAL,
	       "delete: a bad query is EINVAL");
	ok(e.reason[0] != '\0', "delete: with a reason: %s", e.reason);
	snprintf(q, sizeof q, "start=%lld&m=sum:del.none", T0);
	is_int(tsd_query_delete(t, q, strlen(q), &n, &e), CF_ENOTFOUND,
	       "delete: an unknown metric is ENOTFOUND");
	is_str(e.reason, "no such metric: del.none", "delete: named");
	snprintf(q, sizeof q, "start=%lld&m=sum:del.m{host=zz}", T0);
	is_int(tsd_query_delete(t, q, strlen(q), &n, &e), CF_ENOTFOUND,
	       "delete: an unknown tag value is ENOTFOUND");
	snprintf(q, sizeof q, "start=%lld&end=%lld&m=none:del.m{host=*}",
		 T0, T0 + 3 * 3600);
	check_query(t, q,
		    "del.m 1356998400 1 host=a\n"
		    "del.m 1357000200 2 host=a\n"
		    "del.m 1357005600 1 host=a\n"
		    "del.m 1357007400 2 host=a\n"
		    "del.m 1357005600 10 host=b\n");

	/* a compaction of a row read before a delete writes nothing back */
	is_int(put(t, "del.c 1356998400 1 host=a\n"
		   "del.c 1356998410 2 host=a\n", &e), 0,
	       "delete: two single-point cells");
	if (tsd_tables(t, &uidt, &dbt))
		bail("tsd_tables failed");
	is_int(rows_of(t, dbt, "del.c"), 1, "delete: the row is there");
	{
		const unsigned char *key;
		cf_scanner *s;
		const cf_row *row;
		uint64_t gen;
		size_t klen;
		int done = 1;

		gen = tsd_del_gen(t);
		if (metric_scan(t, dbt, "del.c", &s) || cf_scan_next(s, &row) ||
		    !row)
			bail("scan of del.c failed");
		key = cf_row_key(row, &klen);
		is_int((int)cf_row_count(row), 2, "delete: read, two cells");
		snprintf(q, sizeof q, "start=%lld&m=sum:del.c", T0);
		is_int(tsd_query_delete(t, q, strlen(q), &n, &e), 0,
		       "delete: del.c while its row is held");
		is_int(tsd_compact_row(t, dbt, key, klen, row, gen, &done), 0,
		       "delete: the compaction of the row read before");
		is_int(done, 0, "delete: it wrote nothing");
		cf_scan_close(s);
	}
	is_int(rows_of(t, dbt, "del.c"), 0, "delete: the row stays deleted");
	snprintf(q, sizeof q, "start=%lld&end=%lld&m=sum:del.c", T0,
		 T0 + 3600);
	check_query(t, q, "");
	cf_table_close(uidt);
	cf_table_close(dbt);
	tsd_close(t);
}

/* OpenTSDB's TSDB.renameUid (UniqueId.rename; TestUniqueId's rename
 * cases): the UID keeps its number and its points. */
static void test_rename(void)
{
	tsd *t = open_tsd(1);
	struct tsd_error e;
	uint32_t uid, uid2;
	char q[256], want[256];
	cf_table *uidt;
	cf_batch *b;

	is_int(put(t, "ren.a 1356998400 1 rhost=rh1\n"
		   "ren.a 1356998460 2 rhost=rh2\n"
		   "ren.b 1356998400 7 rhost=rh1\n", &e), 0, "rename: data");
	is_int(tsd_name_lookup(t, TSD_METRICS, "ren.a", &uid), 0,
	       "rename: ren.a has a UID");
	is_int(tsd_name_rename(t, TSD_METRICS, "ren.a", "ren.c", &e), 0,
	       "rename: metric ren.a to ren.c");
	is_int(tsd_name_lookup(t, TSD_METRICS, "ren.c", &uid2), 0,
	       "rename: ren.c found");
	ok(uid == uid2, "rename: the same UID");
	is_int(tsd_name_lookup(t, TSD_METRICS, "ren.a", &uid2), CF_ENOTFOUND,
	       "rename: ren.a is gone");
	snprintf(want, sizeof want, "%02x%02x%02x", (uid >> 16) & 0xff,
		 (uid >> 8) & 0xff, uid & 0xff);
	is_str(cells_of("tsdb-uid", (const unsigned char *)"ren.c", 5, "id"),
	       strcat(strcpy(q, "6d657472696373="), want),
	       "rename: the forward row of ren.c (id:metrics)");
	is_str(cells_of("tsdb-uid", (const unsigned char *)"ren.a", 5, "id"),
	       "", "rename: no forward row of ren.a");
	{
		unsigned char id[3] = { (unsigned char)(uid >> 16),
					(unsigned char)(uid >> 8),
					(unsigned char)uid };
		is_str(cells_of("tsdb-uid", id, 3, "name"),
		       "6d657472696373=72656e2e63",
		       "rename: the reverse row names ren.c");
	}
	check_query(t, "start=1356998400&end=1356998460&m=sum:ren.c{rhost=*}",
		    "ren.c 1356998400 1 rhost=rh1\n"
		    "ren.c 1356998460 2 rhost=rh2\n");

	/* tag keys and values */
	is_int(tsd_name_rename(t, TSD_TAGK, "rhost", "node", &e), 0,
	       "rename: tagk rhost to node");
	is_int(tsd_name_rename(t, TSD_TAGV, "rh1", "rweb", &e), 0,
	       "rename: tagv rh1 to rweb");
	check_query(t, "start=1356998400&end=1356998460&m=sum:ren.c{node=*}",
		    "ren.c 1356998460 2 node=rh2\n"
		    "ren.c 1356998400 1 node=rweb\n");
	check_query(t, "start=1356998400&end=1356998460&m=sum:ren.b",
		    "ren.b 1356998400 7 node=rweb\n");

	/* the old name written again: a new UID */
	is_int(put(t, "ren.a 1356998400 3 node=rweb\n", &e), 0,
	       "rename: a put of the old name");
	is_int(tsd_name_lookup(t, TSD_METRICS, "ren.a", &uid2), 0,
	       "rename: ren.a has a UID again");
	ok(uid2 != uid, "rename: another UID");
	check_query(t, "start=1356998400&end=1356998460&m=sum:ren.a",
		    "ren.a 1356998400 3 node=rweb\n");

	/* refusals, OpenTSDB's messages; nothing changes */
	is_int(tsd_name_rename(t, TSD_METRICS, "ren.a", "ren.c", &e),
	       CF_EEXIST, "rename: onto a name with a UID is EEXIST");
	snprintf(want, sizeof want, "When trying rename(\"ren.a\", \"ren.c\") "
		 "on UniqueId(tsdb-uid, metrics): new name already assigned "
		 "ID=[%d, %d, %d]", (signed char)(uid >> 16),
		 (signed char)(uid >> 8), (signed char)uid);
	is_str(e.reason, want, "rename: UniqueId's message");
	is_int(tsd_name_rename(t, TSD_METRICS, "ren.c", "ren.c", &e),
	       CF_EEXIST, "rename: onto itself is EEXIST");
	is_int(tsd_name_lookup(t, TSD_METRICS, "ren.c", &uid2), 0,
	       "rename: ren.c still there");
	is_int(tsd_name_rename(t, TSD_METRICS, "ren.none", "ren.d", &e),
	       CF_ENOTFOUND, "rename: an unknown name is ENOTFOUND");
	is_str(e.reason, "Name(\"ren.none\") does not exist",
	       "rename: TSDB.renameUid's message");
	is_int(tsd_name_rename(t, TSD_TAGK, "node", "no de", &e), CF_EINVAL,
	       "rename: an invalid new name is EINVAL");
	is_str(e.reason, "Invalid tagk (\"no de\"): illegal character:  ",
	       "rename: Tags.validateString's message");
	is_int(tsd_name_rename(t, TSD_TAGV, "", "x", &e), CF_EINVAL,
	       "rename: an empty name is EINVAL");
	is_str(e.reason, "Invalid tagv: empty string", "rename: empty");
	check_query(t, "start=1356998400&end=1356998460&m=sum:ren.c{node=*}",
		    "ren.c 1356998460 2 node=rh2\n"
		    "ren.c 1356998400 1 node=rweb\n");

	/* a rename a crash stopped after the new forward row: both names
	 * on the UID; the same rename made again finishes it */
	if (cf_table_open(db, "tsdb-uid", &uidt) || cf_batch_new(&b))
		bail("tsdb-uid");
	{
		unsigned char id[3] = { (unsigned char)(uid >> 16),
					(unsigned char)(uid >> 8),
					(unsigned char)uid };
		cf_batch_put(b, "ren.e", 5, "id", 2, "metrics", 7, CF_TS_NOW,
			     id, 3);
		is_int(cf_table_apply(uidt, b), 0,
		       "rename: ren.e's forward row written alone");
	}
	cf_batch_free(b);
	cf_table_close(uidt);
	is_int(tsd_name_rename(t, TSD_METRICS, "ren.c", "ren.e", &e), 0,
	       "rename: finishing the stopped rename");
	is_int(tsd_name_lookup(t, TSD_METRICS, "ren.c", &uid2), CF_ENOTFOUND,
	       "rename: ren.c gone");
	check_query(t, "start=1356998400&end=1356998460&m=sum:ren.e{node=*}",
		    "ren.e 1356998460 2 node=rh2\n"
		    "ren.e 1356998400 1 node=rweb\n");
	tsd_close(t);

	/* a new handle (a restart) reads the same names from the table */
	t = open_tsd(1);
	check_query(t, "start=1356998400&end=1356998460&m=sum:ren.e{node=*}",
		    "ren.e 1356998460 2 node=rh2\n"
		    "ren.e 1356998400 1 node=rweb\n");
	is_int(tsd_name_lookup(t, TSD_TAGK, "rhost", &uid2), CF_ENOTFOUND,
	       "rename: tagk host gone after a reopen");
	tsd_close(t);
}

/* Renames racing with puts, queries and name reads of the same names
 * (run under ThreadSanitizer by make check-thread): each read sees one
 * of the two names; at the end one name holds the UID and its points. */
static tsd *rr_tsd;
static atomic_int rr_stop;

static void *rr_reader(void *arg)
{
	long bad = 0;
	(void)arg;
	while (!atomic_load(&rr_stop)) {
		struct tsd_error e;
		uint32_t a, b;
		int ra = tsd_name_lookup(rr_tsd, TSD_METRICS, "rr.x", &a);
		int rb = tsd_name_lookup(rr_tsd, TSD_METRICS, "rr.y", &b);
		bad += (ra && ra != CF_ENOTFOUND) || (rb && rb != CF_ENOTFOUND);
		bad += put(rr_tsd, "rr.z 1356998400 1 rrhost=a\n", &e) != 0;
		int rc;
		char *r = query(rr_tsd, "start=1356998400&end=1356998460&"
				"m=sum:rr.z{rrhost=*}", &rc, &e);
		bad += rc != 0 || strstr(r, "rr.z 1356998400 1 rrhost=") != r;
		free(r);
	}
	return (void *)bad;
}

static void test_rename_race(void)
{
	pthread_t th[2];
	struct tsd_error e;
	uint32_t uid, got;
	long bad = 0;
	int renames = 0;

	rr_tsd = open_tsd(0);
	is_int(put(rr_tsd, "rr.x 1356998400 5 rrhost=rrv1\n", &e), 0,
	       "rename race: data");
	tsd_name_lookup(rr_tsd, TSD_METRICS, "rr.x", &uid);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, rr_reader, NULL);
	for (int i = 0; i < 200; i++) {
		renames += tsd_name_rename(rr_tsd, TSD_METRICS,
					   i % 2 ? "rr.y" : "rr.x",
					   i % 2 ? "rr.x" : "rr.y", &e) == 0;
		renames += tsd_name_rename(rr_tsd, TSD_TAGV, i % 2 ? "rrv2" : "rrv1",
					   i % 2 ? "rrv1" : "rrv2", &e) == 0;
	}
	atomic_store(&rr_stop, 1);
	for (int i = 0; i < 2; i++) {
		void *r;
		pthread_join(th[i], &r);
		bad += (long)r;
	}
	is_int(renames, 400, "rename race: every rename made");
	is_int((int)bad, 0, "rename race: every read saw a name");
	is_int(tsd_name_lookup(rr_tsd, TSD_METRICS, "rr.x", &got), 0,
	       "rename race: rr.x at the end");
	ok(got == uid, "rename race: with its UID");
	check_query(rr_tsd, "start=1356998400&end=1356998460&m=sum:rr.x",
		    "rr.x 1356998400 5 rrhost=rrv1\n");
	tsd_close(rr_tsd);
}

/* UIDMeta (tsd/uidmeta.c): the bytes OpenTSDB stores, POST merging and
 * PUT replacing, the earliest creation time kept. */
static void test_uidmeta(void)
{
	tsd *t = open_tsd(0);
	struct tsd_error e;
	struct buf out = BUF_INIT;
	uint32_t uid;
	char body[256], hexuid[8], row[3];

	is_int(put(t, "um.m 1356998400 1 umk=umv\n", &e), 0, "uidmeta: data");
	tsd_name_lookup(t, TSD_METRICS, "um.m", &uid);
	snprintf(hexuid, sizeof hexuid, "%06X", uid);
	is_int(tsd_uidmeta_get(t, "metric", hexuid, &out, &e), 0,
	       "uidmeta: the default");
	snprintf(body, sizeof body, "{\"uid\":\"%s\",\"type\":\"METRIC\","
		 "\"name\":\"um.m\",\"description\":\"\",\"notes\":\"\","
		 "\"created\":0,\"custom\":null,\"displayName\":\"\"}", hexuid);
	is_str((char *)(buf_putc(&out, 0), out.p), body, "uidmeta: %s", body);
	buf_reset(&out);
	snprintf(body, sizeof body, "{\"uid\":\"%s\",\"type\":\"metric\","
		 "\"created\":1500,\"custom\":{\"z\":\"1\",\"a\":\"2\"},"
		 "\"description\":\"d\"}", hexuid);
	is_int(tsd_uidmeta_sync(t, body, strlen(body), 0, &out, &e), 0,
	       "uidmeta: POST");
	row[0] = (char)(uid >> 16);
	row[1] = (char)(uid >> 8);
	row[2] = (char)uid;
	is_str(cell_text("tsdb-uid", "name", row, 3, "metric_meta", 11),
	       "{\"type\":\"METRIC\",\"displayName\":\"\",\"description\":"
	       "\"d\",\"notes\":\"\",\"created\":1500,\"custom\":{\"a\":"
	       "\"2\",\"z\":\"1\"}}",
	       "uidmeta: stored as getStorageJSON at name:metric_meta");
	/* a later creation time does not replace an earlier one; POST keeps
	 * what it does not name */
	buf_reset(&out);
	snprintf(body, sizeof body, "{\"uid\":\"%s\",\"type\":\"metric\","
		 "\"created\":2000,\"notes\":\"n\"}", hexuid);
	is_int(tsd_uidmeta_sync(t, body, strlen(body), 0, &out, &e), 0,
	       "uidmeta: POST again");
	buf_putc(&out, 0);
	ok(strstr((char *)out.p, "\"description\":\"d\",\"notes\":\"n\","
		  "\"created\":1500,\"custom\":{\"a\":\"2\",\"z\":\"1\"}") != NULL,
	   "uidmeta: merged, the earliest creation: %s", (char *)out.p);
	/* PUT replaces every field it does not name */
	buf_reset(&out);
	snprintf(body, sizeof body, "{\"uid\":\"%s\",\"type\":\"metric\","
		 "\"displayName\":\"x\"}", hexuid);
	is_int(tsd_uidmeta_sync(t, body, strlen(body), 1, &out, &e), 0,
	       "uidmeta: PUT");
	buf_putc(&out, 0);
	ok(strstr((char *)out.p, "\"description\":\"\",\"notes\":\"\","
		  "\"created\":1500,\"custom\":null,\"displayName\":\"x\"") !=
	   NULL, "uidmeta: replaced: %s", (char *)out.p);
	/* refusals */
	is_int(tsd_uidmeta_sync(t, body, strlen(body), 1, &out, &e), 0,
	       "uidmeta: the same PUT again is a change to the same values");
	snprintf(body, sizeof body, "{\"uid\":\"%s\",\"type\":\"metric\"}",
		 hexuid);
	is_int(tsd_uidmeta_sync(t, body, strlen(body), 0, &out, &e),
	       CF_EEXIST, "uidmeta: nothing given is EEXIST (304)");
	is_int(tsd_uidmeta_get(t, "tagz", hexuid, &out, &e), CF_EINVAL,
	       "uidmeta: a bad type");
	is_str(e.reason, "Invalid type requested: tagz", "uidmeta: named");
	is_int(tsd_uidmeta_get(t, "metric", "FFFFFF", &out, &e), CF_ENOTFOUND,
	       "uidmeta: a UID with no name");
	is_int(tsd_uidmeta_delete(t, "metric", hexuid, &e), 0,
	       "uidmeta: delete");
	buf_reset(&out);
	is_int(tsd_uidmeta_get(t, "metric", hexuid, &out, &e), 0,
	       "uidmeta: the default again");
	buf_putc(&out, 0);
	ok(strstr((char *)out.p, "\"created\":0,\"custom\":null,"
		  "\"displayName\":\"\"}") != NULL, "uidmeta: %s",
	   (char *)out.p);
	buf_release(&out);
	tsd_close(t);
}

/* Series meta kept by writes (tsd.core.meta): writers of the same series
 * at once count every point in the counter and make one meta; the set
 * of series known to have a meta grows past its first table. */
static tsd *tm_tsd;

static void *tm_writer(void *arg)
{
	long id = (long)arg, fails = 0;
	char line[96];

	for (int w = 0; w < 20; w++) {
		struct buf text = BUF_INIT;
		for (int h = 0; h < 50; h++) {
			snprintf(line, sizeof line, "tm.m %lld %ld host=h%d\n",
				 1356998400LL + w * 4 + id, id, h);
			buf_append(&text, line, strlen(line));
		}
		struct tsd_error e;
		fails += tsd_put_text(tm_tsd, (char *)text.p, text.len, &e) != 0;
		buf_release(&text);
	}
	return (void *)fails;
}

static void test_tsmeta_tracking(void)
{
	struct tsd_options o;
	struct tsd_error e;
	struct buf out = BUF_INIT, text = BUF_INIT, m = BUF_INIT;
	pthread_t th[4];
	long fails = 0;
	int counted = 1, made = 1;
	char line[96];

	tsd_options_default(&o);
	o.compact_interval_ms = 0;
	o.tsuid_tracking = o.realtime_ts = o.tsuid_incrementing = 1;
	if (tsd_open(db, &o, &tm_tsd))
		bail("tsd_open failed");
	for (long i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, tm_writer, (void *)i);
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(th[i], &r);
		fails += (long)r;
	}
	is_int(fails, 0, "tsmeta: every racing write stored");
	is_int(tsd_tsmeta_list(tm_tsd, "tm.m", 4, &out, &e), 0,
	       "tsmeta: the list of the metric");
	buf_putc(&out, 0);
	for (int h = 0; h < 50; h++) {
		char *p;
		snprintf(line, sizeof line, "\"name\":\"h%d\"", h);
		p = strstr((char *)out.p, line);
		if (!p || !(p = strstr(p, "\"totalDatapoints\":")) ||
		    strncmp(p, "\"totalDatapoints\":80}", 21))
			counted = 0;
	}
	ok(counted, "tsmeta: 4 writers of 20 points a series: 80 counted");
	tsd_close(tm_tsd);

	/* storeIfNecessary: 5000 new series, one write */
	o.tsuid_incrementing = 0;
	if (tsd_open(db, &o, &tm_tsd))
		bail("tsd_open failed");
	for (int h = 0; h < 5000; h++) {
		snprintf(line, sizeof line, "tm.n 1356998400 1 host=n%d\n", h);
		buf_append(&text, line, strlen(line));
	}
	is_int(tsd_put_text(tm_tsd, (char *)text.p, text.len, &e), 0,
	       "tsmeta: 5000 series written");
	for (int h = 0; h < 5000 && made; h += 7) {
		buf_reset(&m);
		snprintf(line, sizeof line, "tm.n{host=n%d}", h);
		buf_reset(&out);
		made = tsd_tsmeta_list(tm_tsd, line, strlen(line), &out, &e) ==
			       0 && out.len > 2;
	}
	ok(made, "tsmeta: each new series has its meta");
	is_int(tsd_put_text(tm_tsd, (char *)text.p, text.len, &e), 0,
	       "tsmeta: the same series again (known: no meta read)");
	tsd_close(tm_tsd);
	buf_release(&out);
	buf_release(&text);
	buf_release(&m);
}

static void test_race(void)
{
	pthread_t th[NTHREADS];
	long fails = 0;
	tsd *t;

	race_tsd[0] = open_tsd(0);
	race_tsd[1] = open_tsd(0);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, racer, (void *)i);
	for (int i = 0; i < NTHREADS; i++) {
		void *r;
		pthread_join(th[i], &r);
		fails += (long)r;
	}
	is_int(fails, 0, "every racing write stored");
	tsd_close(race_tsd[0]);
	tsd_close(race_tsd[1]);

	/* a fresh handle reads the table, not a cache */
	t = open_tsd(0);
	int consistent = 1;
	uint32_t seen[NNAMES];
	for (int k = 0; k < NNAMES; k++) {
		char name[32];
		uint32_t uid;
		struct buf nm = BUF_INIT;
		snprintf(name, sizeof name, "race.m%d", k);
		if (tsd_name_lookup(t, TSD_METRICS, name, &uid)) {
			consistent = 0;
			continue;
		}
		seen[k] = uid;
		for (int j = 0; j < k; j++)
			if (seen[j] == uid)
				consistent = 0;
		/* the reverse row of the winning UID names it */
		unsigned char id[3] = { (unsigned char)(uid >> 16),
					(unsigned char)(uid >> 8),
					(unsigned char)uid };
		char want[80], h[40];
		hex((const unsigned char *)name, strlen(name), h);
		snprintf(want, sizeof want, "6d657472696373=%s", h);
		if (strncmp(cells_of("tsdb-uid", id, 3, "name"), want,
			    strlen(want)))
			consistent = 0;
		buf_release(&nm);
	}
	ok(consistent, "one UID per name, forward and reverse agree");

	int rc;
	char *r = query(t, "start=1356998400&end=1356998500&m=count:race.m3",
			&rc, NULL);
	/* 4 threads write the same timestamps: 4 series of 30 points */
	char want[4096];
	size_t o = 0;
	for (int i = 0; i < NWRITES; i++)
		o += (size_t)snprintf(want + o, sizeof want - o,
				      "race.m3 %lld 4 host=h3\n", T0 + i);
	ok(rc == 0 && !strcmp(r, want), "every point of every writer");
	free(r);
	tsd_close(t);
}

static void test_exhaustion(void)
{
	tsd *t = open_tsd(0);
	struct tsd_error e;
	cf_table *uidt;
	int64_t v;
	uint32_t uid;

	if (cf_table_open(db, "tsdb-uid", &uidt))
		bail("no tsdb-uid");
	is_int(cf_table_increment(uidt, "\0", 1, "id", 2, "tagv", 4, 0, &v), 0,
	       "read the tagv counter");
	is_int(cf_table_increment(uidt, "\0", 1, "id", 2, "tagv", 4,
				  0xFFFFFE - v, &v), 0,
	       "move it to 0xFFFFFE");
	is_int(put(t, "ex.m 1356998400 1 host=last\n", &e), 0,
	       "the last tag value UID");
	ok(tsd_name_lookup(t, TSD_TAGV, "last", &uid) == 0 && uid == 0xFFFFFF,
	   "is 0xFFFFFF");
	is_int(put(t, "ex.m 1356998401 1 host=past\n", &e), CF_ERANGE,
	       "one more is CF_ERANGE");
	ok(strstr(e.reason, "exhausted") != NULL, "reason: %s", e.reason);
	is_int(tsd_name_lookup(t, TSD_TAGV, "past", &uid), CF_ENOTFOUND,
	       "no mapping for it");
	char *s = dump(t, "ex.m");
	is_str(s, "ex.m 1356998400 1 host=last\n", "its point not stored");
	free(s);
	is_int(put(t, "ex.m 1356998402 2 host=last\n", &e), 0,
	       "known names still work");
	cf_table_close(uidt);
	tsd_close(t);
}

/* A dump much larger than the cursor's window: read whole, then in odd
 * chunks with a jump back to the start (which restarts the scan). */
static void test_big_dump(void)
{
	tsd *t = open_tsd(0);
	struct buf b = BUF_INIT;
	struct tsd_error e;
	char line[128];
	size_t n1, n2;
	int rows = 0;

	for (int h = 0; h < 24; h++)
		for (int s = 0; s < 20; s++) {
			for (int p = 0; p < 60; p++) {
				snprintf(line, sizeof line, "big.m %lld %d "
					 "host=h%02d\n", T0 + h * 3600 + p * 60,
					 h * 1000 + p, s);
				buf_append(&b, line, strlen(line));
			}
			rows++;
		}
	is_int(tsd_put_text(t, (char *)b.p, b.len, &e), 0,
	       "28800 points in one write");
	buf_release(&b);
	is_int(tsd_compact(t, 1), 0, "compact the 480 rows");

	tsd_cursor *c;
	is_int(tsd_metric_open(t, "big.m", &c), 0, "dump cursor");
	char *whole = slurp(c, 1 << 20, &n1);
	ok(n1 > 800000, "dump of %zu bytes", n1);
	/* in 4093-byte reads, then back to 0 and on to the end */
	struct buf again = BUF_INIT;
	char *tmp = malloc(4093);
	size_t got;
	uint64_t off = 0;
	int err = 0;
	while (off < n1 / 2 && !err) {
		err = tsd_cursor_pread(c, tmp, 4093, off, &got) || got == 0;
		off += got;
	}
	while (!err) {
		if (tsd_cursor_pread(c, tmp, 4093, again.len, &got))
			err = 1;
		if (got == 0)
			break;
		buf_append(&again, tmp, got);
	}
	n2 = again.len;
	ok(!err && n2 == n1 && !memcmp(again.p, whole, n1),
	   "rereading from the start gives the same bytes");
	uint64_t size;
	ok(tsd_cursor_size(c, &size) == 0 && size == n1, "cursor size");
	int lines = 0;
	for (size_t i = 0; i < n1; i++)
		lines += whole[i] == '\n';
	is_int(lines, 28800, "every point once");
	ok(!strncmp(whole, "big.m 1356998400 0 host=h00\nbig.m 1356998460 1 "
		    "host=h00\n", 56), "starts in storage order");
	free(tmp);
	free(whole);
	buf_release(&again);
	tsd_cursor_close(c);
	(void)rows;
	tsd_close(t);
}

/* Writers, readers and compaction on one handle at once. */
static tsd *mix_tsd;
static atomic_int mix_stop;

static void *mix_writer(void *arg)
{
	long id = (long)arg, fails = 0;
	struct tsd_error e;
	char line[160];
	for (int i = 0; i < 40; i++) {
		snprintf(line, sizeof line, "mix.m%ld %lld %d host=w%ld\n"
			 "mix.all %lld %d host=w%ld k=n%d\n", id, T0 + i * 97,
			 i, id, T0 + i * 97, i, id, i % 5);
		if (tsd_put_text(mix_tsd, line, strlen(line), &e))
			fails++;
	}
	return (void *)fails;
}

static void *mix_reader(void *arg)
{
	long fails = 0;
	(void)arg;
	while (!mix_stop) {
		int rc;
		char *r = query(mix_tsd, "start=1356998400&end=1357002400&"
				"m=sum:mix.all{host=*}", &rc, NULL);
		if (rc && rc != CF_ENOTFOUND)
			fails++;
		free(r);
		if (tsd_compact(mix_tsd, 1))
			fails++;
		char **names;
		size_t n;
		if (tsd_names(mix_tsd, TSD_TAGV, "n", 0, &names, &n))
			fails++;
		else
			free(names);
	}
	return (void *)fails;
}

static void test_mixed(void)
{
	pthread_t w[2], r;
	long fails = 0;
	void *v;

	mix_tsd = open_tsd(1);
	mix_stop = 0;
	pthread_create(&r, NULL, mix_reader, NULL);
	for (long i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, mix_writer, (void *)i);
	for (int i = 0; i < 2; i++) {
		pthread_join(w[i], &v);
		fails += (long)v;
	}
	mix_stop = 1;
	pthread_join(r, &v);
	fails += (long)v;
	is_int(fails, 0, "writers, a reader and compaction side by side");
	int rc;
	char *res = query(mix_tsd, "start=1356998400&end=1357002400&"
			  "m=count:mix.all", &rc, NULL);
	/* 10 series (2 writers x k=n0..n4), each counted from its first to
	 * its last point: series k has points at steps k, k+5, ..., k+35 */
	char want[4096];
	size_t o = 0;
	for (int i = 0; i < 40; i++) {
		int active = 0;
		for (int k = 0; k < 5; k++)
			active += k <= i && i <= 35 + k;
		o += (size_t)snprintf(want + o, sizeof want - o,
				      "mix.all %lld %d\n", T0 + i * 97,
				      2 * active);
	}
	if (!ok(rc == 0 && !strcmp(res, want),
		"every point of both writers, counted"))
		diag("rc %d:\n%s", rc, res);
	free(res);
	tsd_close(mix_tsd);
}

/* The background compaction thread does its work and stops. */
static void test_compactor_thread(void)
{
	struct tsd_options o;
	struct tsd_error e;
	tsd *t;

	tsd_options_default(&o);
	o.compact_interval_ms = 20;
	o.compact_on_read = 0;
	if (tsd_open(db, &o, &t))
		bail("tsd_open");
	is_int(put(t, "thr.m 1356998400 1 h=a\nthr.m 1356998401 2 h=a\n", &e),
	       0, "two points");
	struct tsd_stats st;
	for (int i = 0; i < 500; i++) {
		tsd_stats(t, &st);
		if (st.rows_compacted)
			break;
		usleep(10000);
	}
	ok(st.rows_compacted == 1 && st.compact_pending == 0,
	   "the thread compacted the row");
	tsd_close(t);
	ok(1, "and stopped");
}

/* A full disk refuses the write whole; writing resumes afterwards. */
static void test_disk_full(void)
{
	tsd *t = open_tsd(0);
	struct tsd_error e;
	char *s;

	is_int(put(t, "full.m 1356998400 1 host=a\n", &e), 0, "a point");
	env_fault_add(ENV_OP_WRITE | ENV_OP_SYNC, "wal", 0, -1, CF_ENOSPC, 0);
	int rc = put(t, "full.m 1356998401 2 host=a\nfull.m 1356998402 3 "
		     "host=b\n", &e);
	env_fault_clear();
	ok(rc == CF_ENOSPC && !strncmp(e.reason, "storing the points", 18),
	   "disk full: %s (%s)", cf_strerror(rc), e.reason);
	s = dump(t, "full.m");
	is_str(s, "full.m 1356998400 1 host=a\n", "none of its points stored");
	free(s);
	is_int(put(t, "full.m 1356998403 4 host=a\n", &e), 0,
	       "writes resume when space returns");
	s = dump(t, "full.m");
	is_str(s, "full.m 1356998400 1 host=a\nfull.m 1356998403 4 host=a\n",
	       "and are stored");
	free(s);
	tsd_close(t);
}

/* Results produced while read: a fill over 10^6 intervals is read in
 * part, to the end, and again from 0; caps on memory and graphs. */
static void test_query_stream(void)
{
	struct tsd_options o;
	struct tsd_stats st0, st;
	struct tsd_error e;
	tsd_cursor *c;
	char q[256], buf[4096];
	size_t got;
	tsd *t;

	tsd_options_default(&o);
	o.compact_interval_ms = 0;
	o.max_query_bytes = 40 * 32;	/* 40 points (struct tsd_dp) */
	o.max_graph_points = 1000;
	if (tsd_open(db, &o, &t))
		bail("tsd_open failed");
	is_int(put(t, "st.m 1356998400 1 h=a\nst.m 1356998401 2 h=a\n", &e), 0,
	       "stream data");
	snprintf(q, sizeof q, "start=1356998400&end=1357998400&"
		 "m=sum:1s-sum-zero:st.m");
	tsd_stats(t, &st0);
	is_int(tsd_query_open(t, q, strlen(q), TSD_FMT_TEXT, &c, &e), 0,
	       "a fill over 10^6 seconds opens");
	ok(tsd_cursor_pread(c, buf, 80, 0, &got) == 0 && got == 80 &&
	   !memcmp(buf, "st.m 1356998400 1.0 h=a\nst.m 1356998401 2.0 h=a\n"
		   "st.m 1356998402 0.0 h=a\n", 72), "its first lines");
	tsd_stats(t, &st);
	ok(st.query_bytes - st0.query_bytes <= 64 * 1024 + 64,
	   "only the first chunk made: %llu bytes",
	   (unsigned long long)(st.query_bytes - st0.query_bytes));
	uint64_t off = 0, lines = 0;
	for (;;) {
		if (tsd_cursor_pread(c, buf, sizeof buf, off, &got) || !got)
			break;
		for (size_t i = 0; i < got; i++)
			lines += buf[i] == '\n';
		off += got;
	}
	ok(lines == 1000001 && off == 1000001 * 24, "read to the end: %llu "
	   "lines, %llu bytes", (unsigned long long)lines,
	   (unsigned long long)off);
	ok(tsd_cursor_pread(c, buf, 48, 24, &got) == 0 && got == 48 &&
	   !memcmp(buf, "st.m 1356998401 2.0 h=a\nst.m 1356998402 0.0 h=a\n",
		   48), "read again from near the start (production restarts)");
	tsd_cursor_close(c);

	is_int(tsd_query_open(t, q + 0, strlen(q), TSD_FMT_PNG, &c, &e),
	       CF_ETOOBIG, "a graph of 10^6 points is over the graph cap");
	is_str(e.reason, "graph of more than 1000 points", "why");

	char many[64 * 32];
	size_t k = 0;
	for (int i = 0; i < 50; i++)
		k += (size_t)snprintf(many + k, sizeof many - k,
				      "st.m %d 1 h=b\n", 1356998400 + 10 + i);
	is_int(put(t, many, &e), 0, "50 more points");
	snprintf(q, sizeof q, "start=1356998400&end=1357000000&m=sum:st.m");
	is_int(tsd_query_open(t, q, strlen(q), TSD_FMT_TEXT, &c, &e),
	       CF_ETOOBIG, "52 points are over a cap of 40 points' memory");
	is_str(e.reason, "query needs more than 1280 bytes for its points "
	       "(52 loaded)", "why");
	tsd_close(t);
}

/* --- trees (tsd/tree.c's builder: TestTreeBuilder) ---------------------- */

/* A TreeRule's JSON. */
static json_t *trule(int level, int order, const char *type,
		     const char *field, const char *regex)
{
	return json_pack("{s:s,s:s,s:s,s:i,s:i,s:i}", "type", type, "field",
			 field, "regex", regex ? regex : "", "level", level,
			 "order", order, "treeId", 1);
}

/* Puts rule r (consumed) at its level and order of tree j. */
static void tset(json_t *j, json_t *r)
{
	json_t *rules = json_object_get(j, "rules"), *lv;
	char l[16], o[16];

	snprintf(l, sizeof l, "%d", (int)json_integer_value(
			 json_object_get(r, "level")));
	snprintf(o, sizeof o, "%d", (int)json_integer_value(
			 json_object_get(r, "order")));
	if (!(lv = json_object_get(rules, l))) {
		lv = json_object();
		json_object_set_new(rules, l, lv);
	}
	json_object_set_new(lv, o, r);
}

/* The rule at level:order of tree j (to change a field of it). */
static json_t *tget(json_t *j, const char *level, const char *order)
{
	return json_object_get(json_object_get(json_object_get(j, "rules"),
					       level), order);
}

/* TestTree.buildTestRuleSet. */
/* A TAGK_CUSTOM or TAGV_CUSTOM rule of custom field custom of tag
 * field, at level, order. */
static json_t *custom_rule(const char *type, const char *field,
			   const char *custom, int level, int order)
{
	return json_pack("{s:s,s:s,s:s,s:i,s:i}", "type", type, "field",
			 field, "customField", custom, "level", level,
			 "order", order);
}

static json_t *test_tree(void)
{
	static const char dc[] = "^.*\\.([a-zA-Z]{3,4})[0-9]{0,1}\\..*\\..*$";
	static const char svc[] = "^([a-zA-Z]+)(\\-|[0-9])*.*\\..*$";
	json_t *j = json_pack("{s:i,s:s,s:b,s:{}}", "treeId", 1, "name",
			      "Test Tree", "enabled", 1, "rules"), *r;

	tset(j, trule(0, 0, "TAGK", "fqdn", dc));
	tset(j, trule(0, 1, "TAGK", "host", dc));
	tset(j, trule(1, 0, "TAGK", "fqdn", svc));
	tset(j, trule(1, 1, "TAGK", "host", svc));
	tset(j, trule(2, 0, "TAGK", "fqdn", NULL));
	tset(j, trule(2, 1, "TAGK", "host", NULL));
	r = trule(3, 0, "METRIC", "", NULL);
	json_object_set_new(r, "separator", json_string("\\."));
	tset(j, r);
	tset(j, trule(4, 0, "TAGK", "type", NULL));
	tset(j, trule(4, 1, "TAGK", "method", NULL));
	r = trule(4, 2, "TAGK", "port", NULL);
	json_object_set_new(r, "displayFormat", json_string("Port: {value}"));
	tset(j, r);
	return j;
}

/* TestTreeBuilder's series 0102030405: sys.cpu.0{host=web-01.lga.mysite.
 * com,type=user}, as /api/uid/tsmeta prints its meta. */
static json_t *test_meta(void)
{
	return json_pack("{s:s,s:{s:s,s:s,s:n},s:[{s:s,s:s,s:n},{s:s,s:s,s:n},"
			 "{s:s,s:s,s:n},{s:s,s:s,s:n}]}", "tsuid", "0102030405",
			 "metric", "type", "METRIC", "name", "sys.cpu.0",
			 "custom", "tags", "type", "TAGK", "name", "host",
			 "custom", "type", "TAGV", "name",
			 "web-01.lga.mysite.com", "custom", "type", "TAGK",
			 "name", "type", "custom", "type", "TAGV", "name",
			 "user", "custom");
}

/* The branch ID of the first n names of JSON array text names (Branch.
 * compileBranchId of tree 1) into hex. */
static void path_hex(const char *names, size_t n, char *hex)
{
	json_t *a = json_loads(names, 0, NULL);

	strcpy(hex, "0001");
	for (size_t i = 0; i < n && i < json_array_size(a); i++) {
		const char *s = json_string_value(json_array_get(a, i));
		sprintf(hex + strlen(hex), "%08X",
			(unsigned)tsd_tree_hash(s, strlen(s)));
	}
	json_decref(a);
}

/* Runs meta through tree (both consumed): the names and the branch ID
 * of the leaf's branch are as OpenTSDB's test says. */
static void tree_case(json_t *tree, json_t *meta, const char *want,
		      const char *want_branch, int want_matched,
		      const char *what)
{
	char *ts = json_dumps(tree, JSON_COMPACT);
	char *ms = json_dumps(meta, JSON_COMPACT);
	char *names = NULL, hex[256] = "";
	int matched = -1, rc;
	json_t *a;

	rc = tsd_tree_build(ts, ms, &names, &matched);
	a = names ? json_loads(names, 0, NULL) : NULL;
	if (a && json_array_size(a))
		path_hex(names, json_array_size(a) - 1, hex);
	ok(rc == CF_OK && names && !strcmp(names, want) &&
	   (!want_branch || !strcmp(hex, want_branch)) &&
	   matched == want_matched, "tree builder: %s (%s %s %d)", what,
	   names ? names : "-", hex, matched);
	json_decref(a);
	free(names);
	free(ts);
	free(ms);
	json_decref(tree);
	json_decref(meta);
}

static void test_tree_builder(void)
{
	static const char all[] = "[\"lga\",\"web\",\"web-01.lga.mysite.com\","
		"\"sys\",\"cpu\",\"0\",\"user\"]";
	static const char dflt[] =
		"00010001A2460001CB54247F72020001BECD000181A800000030";
	json_t *t, *m, *r;
	char *names = NULL;
	int matched;

	ok(tsd_tree_hash("sys", 3) == 0x1BECD &&
	   tsd_tree_hash("cpu", 3) == 0x181A8 &&
	   tsd_tree_hash("0", 1) == 48 && tsd_tree_hash("", 0) == 0 &&
	   tsd_tree_hash("web-01.lga.mysite.com", 21) == 0x247F7202,
	   "tree hash: String.hashCode of ASCII names");
	/* U+00E9 is one UTF-16 unit, U+1F600 two (a surrogate pair) */
	ok(tsd_tree_hash("\xc3\xa9", 2) == 0xE9 &&
	   tsd_tree_hash("\xf0\x9f\x98\x80", 4) == (int32_t)(31 * 0xD83D +
							     0xDE00),
	   "tree hash: UTF-8 decoded to UTF-16 as Java holds it");
	tree_case(test_tree(), test_meta(), all, dflt, 1,
		  "processTimeseriesMetaDefaults: regex groups, a separator "
		  "and a tag, the last name the leaf");
	t = test_tree();
	json_object_set_new(t, "strictMatch", json_true());
	tree_case(t, test_meta(), all, dflt, 1,
		  "processTimeseriesMetaStrict");
	t = test_tree();
	tset(t, custom_rule("TAGV_CUSTOM", "host", "owner", 0, 0));
	tset(t, custom_rule("TAGV_CUSTOM", "host", "dept", 0, 1));
	tset(t, custom_rule("TAGK_CUSTOM", "host", "owner", 1, 0));
	tset(t, custom_rule("TAGK_CUSTOM", "host", "dept", 1, 1));
	tree_case(t, test_meta(), "[\"web-01.lga.mysite.com\",\"sys\",\"cpu\","
		  "\"0\",\"user\"]", "0001247F72020001BECD000181A800000030", 0,
		  "processTimeseriesMetaMiddleNonMatchedRules: levels giving "
		  "no name are skipped");
	t = test_tree();
	tset(t, custom_rule("TAGV_CUSTOM", "host", "owner", 5, 0));
	tset(t, custom_rule("TAGK_CUSTOM", "host", "owner", 6, 0));
	tree_case(t, test_meta(), all, dflt, 0,
		  "processTimeseriesMetaEndNonMatchedRules");
	m = test_meta();
	json_object_set_new(json_array_get(json_object_get(m, "tags"), 1),
			    "name", json_string("foobar"));
	tree_case(test_tree(), m, "[\"foobar\",\"sys\",\"cpu\",\"0\","
		  "\"user\"]", NULL, 0,
		  "processTimeseriesMetaStrictNoMatch: a level unmatched "
		  "(a strict tree stores nothing)");
	t = test_tree();
	json_object_set_new(tget(t, "3", "0"), "separator", json_string(""));
	tree_case(t, test_meta(), "[\"lga\",\"web\",\"web-01.lga.mysite.com\","
		  "\"sys.cpu.0\",\"user\"]",
		  "00010001A2460001CB54247F7202CBBF5B09", 1,
		  "processTimeseriesMetaNoSplit");
	t = test_tree();
	json_object_set_new(tget(t, "3", "0"), "separator", json_string("."));
	tree_case(t, test_meta(), "[\"lga\",\"web\",\"web-01.lga.mysite.com\","
		  "\"user\"]", "00010001A2460001CB54247F7202", 0,
		  "processTimeseriesMetBadSeparator: a separator matching "
		  "everything gives no part");
	t = test_tree();
	json_object_set_new(tget(t, "1", "1"), "regexGroupIdx",
			    json_integer(42));
	tree_case(t, test_meta(), "[\"lga\",\"web-01.lga.mysite.com\",\"sys\","
		  "\"cpu\",\"0\",\"user\"]",
		  "00010001A246247F72020001BECD000181A800000030", 0,
		  "processTimeseriesMetaInvalidRegexIdx");
	m = test_meta();
	json_object_set_new(json_object_get(m, "metric"), "custom", json_pack(
		"{s:s,s:s}", "owner", "John Doe", "dc", "lga"));
	t = test_tree();
	tset(t, json_pack("{s:s,s:s,s:i,s:i}", "type", "METRIC_CUSTOM",
			  "customField", "owner", "level", 0, "order", 0));
	tree_case(t, m, "[\"John Doe\",\"web\",\"web-01.lga.mysite.com\","
		  "\"sys\",\"cpu\",\"0\",\"user\"]",
		  "0001AE805CA50001CB54247F72020001BECD000181A800000030", 1,
		  "processTimeseriesMetaMetricCustom");
	m = test_meta();
	json_object_set_new(json_object_get(m, "metric"), "custom", json_pack(
		"{s:s,s:s}", "owner", "", "dc", "lga"));
	t = test_tree();
	tset(t, json_pack("{s:s,s:s,s:i,s:i}", "type", "METRIC_CUSTOM",
			  "customField", "owner", "level", 0, "order", 0));
	tree_case(t, m, all, dflt, 1,
		  "processTimeseriesMetaMetricCustomEmptyValue: the next "
		  "rule of the level");
	for (int i = 0; i < 4; i++) {
		/* TagkCustom, TagkCustomNoField, TagvCustom,
		 * TagvCustomNoField */
		int tagv = i >= 2, nofield = i & 1;
		char what[80];
		m = test_meta();
		json_object_set_new(json_array_get(json_object_get(m, "tags"),
						   tagv), "custom",
				    json_pack("{s:s,s:s}", "owner", "John Doe",
					      "dc", "lga"));
		t = test_tree();
		r = json_pack("{s:s,s:s,s:i,s:i}", "type", tagv ?
			      "TAGV_CUSTOM" : "TAGK_CUSTOM", "customField",
			      "owner", "level", 0, "order", 0);
		if (!nofield)
			json_object_set_new(r, "field", json_string(
				tagv ? "web-01.lga.mysite.com" : "host"));
		tset(t, r);
		snprintf(what, sizeof what, "processTimeseriesMeta%sCustom%s",
			 tagv ? "Tagv" : "Tagk", nofield ? "NoField" : "");
		tree_case(t, m, nofield ? all : "[\"John Doe\",\"web\","
			  "\"web-01.lga.mysite.com\",\"sys\",\"cpu\",\"0\","
			  "\"user\"]", nofield ? dflt : "0001AE805CA50001CB54"
			  "247F72020001BECD000181A800000030", 1, what);
	}
	{
		static const struct { const char *fmt, *name, *what; } f[] = {
			{ "V: {value}", "V: web",
			  "processTimeseriesMetaFormatValue" },
			{ "TSUID: {tsuid}", "TSUID: 0102030405",
			  "processTimeseriesMetaFormatTSUID" },
			{ "TAGNAME: {tag_name}", "TAGNAME: host",
			  "processTimeseriesMetaFormatTagName" },
			{ "{ovalue}:{value}:{tag_name}:{tsuid}",
			  "web-01.lga.mysite.com:web:host:0102030405",
			  "processTimeseriesMetaFormatMulti" },
		};
		for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
			char want[200];
			t = test_tree();
			json_object_set_new(tget(t, "1", "1"), "displayFormat",
					    json_string(f[i].fmt));
			snprintf(want, sizeof want, "[\"lga\",\"%s\",\"web-01."
				 "lga.mysite.com\",\"sys\",\"cpu\",\"0\","
				 "\"user\"]", f[i].name);
			tree_case(t, test_meta(), want, NULL, 1, f[i].what);
		}
	}
	t = test_tree();
	json_object_set_new(tget(t, "3", "0"), "displayFormat",
			    json_string("Wrong: {tag_name}"));
	tree_case(t, test_meta(), "[\"lga\",\"web\",\"web-01.lga.mysite.com\","
		  "\"Wrong: \",\"user\"]",
		  "00010001A2460001CB54247F7202C3165573", 1,
		  "processTimeseriesMetaFormatBadType: each part the same "
		  "name, kept once");
	t = test_tree();
	json_object_set_new(tget(t, "3", "0"), "displayFormat",
			    json_string("OVERRIDE"));
	tree_case(t, test_meta(), "[\"lga\",\"web\",\"web-01.lga.mysite.com\","
		  "\"OVERRIDE\",\"user\"]",
		  "00010001A2460001CB54247F72024E3D0BCC", 1,
		  "processTimeseriesMetaFormatOverride");
	t = test_tree();
	r = trule(4, 2, "TAGK", "type", "^(u)(s)(e)");
	json_object_set_new(r, "regexGroupIdx", json_integer(2));
	json_object_del(json_object_get(json_object_get(t, "rules"), "4"),
			"0");
	tset(t, r);
	tree_case(t, test_meta(), "[\"lga\",\"web\",\"web-01.lga.mysite.com\","
		  "\"sys\",\"cpu\",\"0\",\"e\"]", dflt, 1,
		  "a regex group index picks the group after it");
	t = json_pack("{s:i,s:s,s:{}}", "treeId", 1, "name", "empty",
		      "rules");
	tree_case(t, test_meta(), "[]", NULL, 1,
		  "a tree with no rule: no path");
	t = json_pack("{s:i,s:s,s:{}}", "treeId", 1, "name", "lookahead",
		      "rules");
	r = trule(0, 0, "METRIC", "", NULL);
	json_object_set_new(r, "separator", json_string("(?=c)"));
	tset(t, r);
	tree_case(t, test_meta(), "[\"sys.\",\"cpu.0\"]", NULL, 1,
		  "a separator matching empty text splits before the match "
		  "(String.split)");
	t = json_pack("{s:i,s:s,s:{}}", "treeId", 1, "name", "last level",
		      "rules");
	tset(t, trule(2147483647, 0, "METRIC", "", NULL));
	tree_case(t, test_meta(), "[\"sys.cpu.0\"]", NULL, 1,
		  "a rule at the greatest level");
	ok(tsd_tree_build("{\"rules\":{\"0\":{\"0\":{\"type\":\"METRIC\","
			  "\"regex\":\"(\"}}}}", "{}", &names, &matched) ==
	   CF_EINVAL && !names, "tree builder: a bad regex is refused");
	ok(tsd_tree_build("not json", "{}", &names, &matched) == CF_EINVAL &&
	   !names, "tree builder: bad JSON is refused");
}

/* qsort of C strings. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text, sorted, as one string (malloc'd). */
static char *sorted_lines(const char *text)
{
	char *copy = strdup(text), **v = NULL, *p, *save = NULL;
	size_t n = 0, len = 0, o = 0;

	for (p = strtok_r(copy, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		v = realloc(v, (n + 1) * sizeof *v);
		v[n++] = p;
		len += strlen(p) + 1;
	}
	qsort(v, n, sizeof *v, cmp_str);
	char *out = malloc(len + 1);
	for (size_t i = 0; i < n; i++)
		o += (size_t)sprintf(out + o, "%s\n", v[i]);
	out[o] = '\0';
	free(v);
	free(copy);
	return out;
}

/*
 * A model of one write giving a time of a series twice (tsd.c's
 * order_points): writes of random lines, each into an hour of its own,
 * of two series, at three seconds given as seconds or as milliseconds
 * (T and T000 are one time; T500 is another), with values of each width
 * and kind (1, 2 and 4-byte integers, floats).  The later line of a time
 * wins; the dump shows it as written, one point a time.
 */
static void test_repeats_model(void)
{
	static const char *const vals[] = { "7", "-3", "300", "70000", "2.5",
					     "-0.5" };
	tsd *t = open_tsd(0);
	struct buf text = BUF_INIT, want = BUF_INIT;
	uint32_t seed = 12345;
	int bad = 0, rounds = 300;

	for (int r = 0; r < rounds; r++) {
		/* the winning line of (series, time in ms): its ts text
		 * and value */
		static char win[2][3000][64];
		memset(win, 0, sizeof win);
		long long base = T0 + 3600LL * r;
		int n;
		buf_reset(&text);
		seed = seed * 1103515245u + 12345u;
		n = 1 + (int)((seed >> 16) % 24);
		for (int i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			uint32_t x = seed >> 8;
			int h = (int)(x % 2), sec = (int)(x / 2 % 3);
			int form = (int)(x / 6 % 3);	/* s, T000, T500 */
			const char *v = vals[x / 18 % 6];
			long long ms = (base + sec) * 1000 + (form == 2 ? 500 : 0);
			char ts[24];
			if (form == 0)
				snprintf(ts, sizeof ts, "%lld", base + sec);
			else
				snprintf(ts, sizeof ts, "%lld", ms);
			buf_printf(&text, "rep.m %s %s host=%c\n", ts, v, "ab"[h]);
			snprintf(win[h][ms - base * 1000], sizeof win[0][0],
				 "%s %s", ts, v);
		}
		if (put(t, (const char *)text.p, NULL)) {
			bad++;
			continue;
		}
		for (int h = 0; h < 2; h++)
			for (int k = 0; k < 3000; k++)
				if (win[h][k][0])
					buf_printf(&want, "rep.m %s host=%c\n",
						   win[h][k], "ab"[h]);
	}
	is_int(bad, 0, "every write of the model stored");
	buf_putc(&want, 0);
	char *got = dump(t, "rep.m");
	char *g = sorted_lines(got), *w = sorted_lines((const char *)want.p);
	if (!ok(!strcmp(g, w), "%d writes with times given twice: the later "
		"line of each time, one point a time", rounds))
		diag("got:\n%.2000s\nwant:\n%.2000s", g, w);
	free(g);
	free(w);
	free(got);
	buf_release(&text);
	buf_release(&want);
	tsd_close(t);
}

int main(void)
{
	struct cf_options o;

	/* a hang (a lost wakeup, a deadlock) fails the test instead of
	 * stalling the whole suite */
	alarm(60);
	dir = tap_tmpdir("tsd");
	cf_options_default(&o);
	o.background = 0;
	o.sync_mode = CF_SYNC_NONE;
	if (cf_db_open(dir, &o, &db))
		bail("cf_db_open %s", dir);
	test_seed_example();
	test_compaction();
	test_bad_lines();
	test_queries();
	test_tsuid_queries();
	test_annotations();
	test_query_delete();
	test_rename();
	test_rename_race();
	test_uidmeta();
	test_race();
	test_big_dump();
	test_mixed();
	test_repeats_model();
	test_compactor_thread();
	test_query_stream();
	test_tsmeta_tracking();
	test_disk_full();
	test_exhaustion();
	test_tree_builder();
	cf_db_close(db);
	tap_rmdir(dir);
	return done_testing();
}
