/*
 * test-engine-reverse: reversed scans (cf_scan_opts.reversed, HBase
 * REVERSED => true, as in HBase's TestReversibleScanners and the
 * reversed tests of TestFromClientSide): rows come in descending order,
 * the cells of a row in the same order as a forward scan; start is the
 * greatest row (inclusive), stop the lower bound (exclusive); limit and
 * prefix as forward.  Checked on the memstore, store files, several of
 * them, after a major compaction and across region splits, then by a
 * model test: after random puts, deletes, flushes, compactions and
 * splits, every reversed scan (random bounds, prefix, limit, versions)
 * equals the reverse of the forward scan's rows with those bounds
 * applied.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cellfs.h"
#include "util/buf.h"
#include "util/env.h"
#include "tests/engine-ops.h"
#include "tests/tap.h"

static cf_db *db;

/* One row of a result as text: "ROW{fam:qual@ts=val ...}"; rows of a
 * result are joined by ' '. */
static void row_text(const cf_row *r, struct buf *out)
{
	size_t kl, i;
	const unsigned char *k = cf_row_key(r, &kl);
	char tmp[64];

	if (out->len)
		buf_putc(out, ' ');
	buf_append(out, k, kl);
	buf_putc(out, '{');
	for (i = 0; i < cf_row_count(r); i++) {
		const struct cf_cell *c = cf_row_cell(r, i);
		if (i)
			buf_putc(out, ',');
		buf_append(out, c->fam, c->famlen);
		buf_putc(out, ':');
		buf_append(out, c->qual, c->qlen);
		snprintf(tmp, sizeof tmp, "@%" PRId64 "=", c->ts);
		buf_append(out, tmp, strlen(tmp));
		if (c->kind) {
			snprintf(tmp, sizeof tmp, "D%d", c->kind);
			buf_append(out, tmp, strlen(tmp));
		} else {
			buf_append(out, c->val, c->vlen);
		}
	}
	buf_putc(out, '}');
}

struct bounds {
	const char *start, *stop, *prefix;
	uint64_t limit;
	int versions, raw;
};

/* The rows of a scan of t as text, in out (reset first). */
static int scan_text(cf_table *t, const struct bounds *b, int reversed,
		     struct buf *out)
{
	struct cf_scan_opts so;
	const cf_row *r;
	cf_scanner *s;
	int rc;

	memset(&so, 0, sizeof so);
	so.read.max_ts = INT64_MAX;
	so.read.max_versions = b && b->versions ? b->versions : 1;
	so.read.raw = b ? b->raw : 0;
	if (b && b->start) {
		so.start = b->start;
		so.startlen = strlen(b->start);
	}
	if (b && b->stop) {
		so.stop = b->stop;
		so.stoplen = strlen(b->stop);
	}
	if (b && b->prefix) {
		so.prefix = b->prefix;
		so.prefixlen = strlen(b->prefix);
	}
	so.limit = b ? b->limit : 0;
	so.reversed = reversed;
	buf_reset(out);
	if ((rc = cf_scan_open(t, &so, &s)))
		return rc;
	while (!(rc = cf_scan_next(s, &r)) && r)
		row_text(r, out);
	cf_scan_close(s);
	buf_putc(out, 0);
	out->len--;
	return rc;
}

static const char *rscan(cf_table *t, const struct bounds *b)
{
	static struct buf out;

	if (scan_text(t, b, 1, &out))
		return "error";
	return (const char *)out.p;
}

static cf_table *make(const char *name, int versions, uint32_t blocksize)
{
	struct cf_family f[2];
	cf_table *t;

	cf_family_default(&f[0], "a");
	cf_family_default(&f[1], "b");
	f[0].versions = f[1].versions = versions;
	f[0].blocksize = f[1].blocksize = blocksize;
	if (cf_table_create(db, name, f, 2) || cf_table_open(db, name, &t))
		bail("create %s", name);
	return t;
}

static void fixed(void)
{
	cf_table *t = make("fixed", 3, 65536);
	const char *all = "r5{a:x@5=5} r4{a:x@4=4} r3{a:x@3=3,b:y@3=3} "
			  "r2{a:x@2=2} r1{a:x@1=1}";
	struct bounds b;
	int pass;

	put(t, "r1", "a", "x", 1, "1");
	put(t, "r3", "b", "y", 3, "3");
	put(t, "r2", "a", "x", 2, "2");
	put(t, "r5", "a", "x", 5, "5");
	put(t, "r4", "a", "x", 4, "4");
	put(t, "r3", "a", "x", 3, "3");
	put(t, "gone", "a", "x", 9, "9");
	del(t, CF_DEL_ROW, "gone", NULL, NULL, CF_TS_NOW);
	for (pass = 0; pass < 4; pass++) {
		const char *when = pass == 0 ? "memstore" : pass == 1 ?
			"one store file" : pass == 2 ?
			"two files and the memstore" : "after major compaction";
		memset(&b, 0, sizeof b);
		is_str(rscan(t, NULL), all, "%s: rows down, a row's cells in "
		       "forward order, a deleted row skipped", when);
		b.start = "r4";
		b.stop = "r1";
		is_str(rscan(t, &b), "r4{a:x@4=4} r3{a:x@3=3,b:y@3=3} "
		       "r2{a:x@2=2}", "%s: start inclusive, stop exclusive",
		       when);
		b.start = "r35";
		b.stop = NULL;
		b.limit = 2;
		is_str(rscan(t, &b), "r3{a:x@3=3,b:y@3=3} r2{a:x@2=2}",
		       "%s: a start between rows; limit", when);
		memset(&b, 0, sizeof b);
		b.start = "r9";
		b.stop = "r4";
		is_str(rscan(t, &b), "r5{a:x@5=5}",
		       "%s: start after every row", when);
		b.start = "r0";
		b.stop = NULL;
		is_str(rscan(t, &b), "", "%s: start before every row", when);
		memset(&b, 0, sizeof b);
		b.prefix = "r";
		b.limit = 1;
		is_str(rscan(t, &b), "r5{a:x@5=5}", "%s: prefix", when);
		if (pass == 0)
			cf_table_flush(t);
		else if (pass == 1) {
			put(t, "r0", "a", "x", 7, "0");
			put(t, "r6", "a", "x", 7, "6");
			cf_table_flush(t);
			del(t, CF_DEL_ROW, "r0", NULL, NULL, CF_TS_NOW);
			del(t, CF_DEL_ROW, "r6", NULL, NULL, CF_TS_NOW);
		} else if (pass == 2)
			is_int(cf_table_compact(t, 1), CF_OK,
			       "major compaction");
	}
	is_int(cf_table_split(t, "r3", 2), CF_OK, "split at r3");
	is_int(cf_table_split(t, "r5", 2), CF_OK, "split at r5");
	is_str(rscan(t, NULL), all, "three regions: the same rows");
	memset(&b, 0, sizeof b);
	b.start = "r5";
	b.stop = "r2";
	is_str(rscan(t, &b), "r5{a:x@5=5} r4{a:x@4=4} r3{a:x@3=3,b:y@3=3}",
	       "three regions: bounds across them");
	b.start = "r4";
	b.stop = NULL;
	b.limit = 3;
	is_str(rscan(t, &b), "r4{a:x@4=4} r3{a:x@3=3,b:y@3=3} r2{a:x@2=2}",
	       "three regions: limit across a region's start");
	put(t, "r2", "a", "x", 8, "8");
	memset(&b, 0, sizeof b);
	b.versions = 2;
	b.start = "r2";
	is_str(rscan(t, &b), "r2{a:x@8=8,a:x@2=2} r1{a:x@1=1}",
	       "versions newest first within a column");
	memset(&b, 0, sizeof b);
	b.raw = 1;
	b.start = "r0";
	is_str(rscan(t, &b), "r0{a:@1700000000000=D3,a:x@7=0,"
	       "b:@1700000000000=D3}",
	       "raw: a deleted row and its marker");
	cf_table_close(t);
}

/* Keys with shared prefixes, an empty-ish tail and high bytes; the last
 * two (made by main) are longer than a block walk keeps a copy of. */
static char long1[320], long2[320];
static const char *ROWS[] = {
	"a", "a0", "a00", "a01", "a1", "ab", "abc", "abd", "b", "b\x7f",
	"ba", "bb", "c", "c\xff", "c\xff\xff", "ca", "d", "da", "db", "dba",
	"e", "f", "fa", "fb", "g", "\xff", "\xff\x01", "\xff\xff", long1, long2,
};
#define NROWS (sizeof ROWS / sizeof ROWS[0])

static unsigned long rnd_state = 12345;

static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((rnd_state >> 33) % n);
}

static int keycmp(const char *k, size_t kl, const char *s)
{
	size_t sl = strlen(s);
	int c = memcmp(k, s, kl < sl ? kl : sl);

	return c ? c : (kl > sl) - (kl < sl);
}

/* The forward scan's rows, filtered by b (the reference), reversed. */
static void expect_reversed(cf_table *t, const struct bounds *b,
			    struct buf *want)
{
	struct bounds all = *b;
	struct buf fwd = BUF_INIT;
	const char *p, *end;
	size_t n = 0;

	all.start = all.stop = all.prefix = NULL;
	all.limit = 0;
	if (scan_text(t, &all, 0, &fwd))
		bail("forward scan");
	buf_reset(want);
	end = (const char *)fwd.p + fwd.len;
	/* rows are "KEY{...}" separated by ' ' (no key, qualifier or value
	 * holds a ' ' or a '{') */
	while (end > (const char *)fwd.p) {
		const char *q = end, *brace;
		size_t kl;
		while (q > (const char *)fwd.p && q[-1] != ' ')
			q--;
		p = q;
		brace = memchr(p, '{', (size_t)(end - p));
		kl = (size_t)(brace - p);
		if ((b->start && keycmp(p, kl, b->start) > 0) ||
		    (b->stop && keycmp(p, kl, b->stop) <= 0) ||
		    (b->prefix && (kl < strlen(b->prefix) ||
				   memcmp(p, b->prefix, strlen(b->prefix)))))
			goto skip;
		if (b->limit && n == b->limit)
			break;
		if (want->len)
			buf_putc(want, ' ');
		buf_append(want, p, (size_t)(end - p));
		n++;
skip:
		end = q > (const char *)fwd.p ? q - 1 : q;
	}
	buf_putc(want, 0);
	want->len--;
	buf_release(&fwd);
}

static void model(void)
{
	cf_table *t = make("model", 2, 1024);	/* the smallest blocks: many */
	struct buf want = BUF_INIT, got = BUF_INIT;
	int checks = 0, bad = 0, splits = 0;
	char val[16];

	for (int step = 0; step < 3000; step++) {
		const char *row = ROWS[rnd(NROWS)];
		const char *fam = rnd(2) ? "a" : "b";
		const char quals[][2] = { "p", "q", "r" };
		const char *qual = quals[rnd(3)];
		unsigned op = rnd(100);

		snprintf(val, sizeof val, "%d", step);
		if (op < 60)
			put(t, row, fam, qual, 1000 + rnd(50), val);
		else if (op < 68)
			del(t, CF_DEL_VERSION, row, fam, qual, 1000 + rnd(50));
		else if (op < 74)
			del(t, CF_DEL_COLUMN, row, fam, qual, 1000 + rnd(50));
		else if (op < 78)
			del(t, CF_DEL_FAMILY, row, fam, NULL, 1000 + rnd(50));
		else if (op < 82)
			del(t, CF_DEL_ROW, row, NULL, NULL, CF_TS_NOW);
		else if (op < 86)
			cf_table_flush(t);
		else if (op < 87)
			cf_table_compact(t, rnd(2));
		else if (op < 88 && splits < 4) {
			if (cf_table_split(t, row, strlen(row)) == CF_OK)
				splits++;
		}
		if (step % 25 != 24)
			continue;
		for (int k = 0; k < 6; k++) {
			struct bounds b;
			memset(&b, 0, sizeof b);
			if (rnd(2))
				b.start = ROWS[rnd(NROWS)];
			if (rnd(3) == 0)
				b.stop = ROWS[rnd(NROWS)];
			if (rnd(4) == 0)
				b.prefix = rnd(2) ? "a" : rnd(2) ? "c\xff" :
					   "\xff";
			if (rnd(3) == 0)
				b.limit = 1 + rnd(4);
			b.versions = 1 + (int)rnd(2);
			b.raw = rnd(8) == 0;
			expect_reversed(t, &b, &want);
			if (scan_text(t, &b, 1, &got))
				bail("reversed scan");
			checks++;
			if (got.len != want.len ||
			    memcmp(got.p, want.p, got.len)) {
				if (bad++ < 3)
					diag("step %d start %s stop %s prefix "
					     "%s limit %" PRIu64 "\n got  %s\n"
					     " want %s", step,
					     b.start ? b.start : "-",
					     b.stop ? b.stop : "-",
					     b.prefix ? b.prefix : "-",
					     b.limit, (const char *)got.p,
					     (const char *)want.p);
			}
		}
	}
	ok(bad == 0 && checks > 500, "model: %d reversed scans equal the "
	   "forward scan reversed (%d differ; %d splits)", checks, bad,
	   splits);
	ok(splits > 0, "model: the table split on the way");
	buf_release(&want);
	buf_release(&got);
	cf_table_close(t);
}

int main(void)
{
	struct cf_options o;
	const char *dir;

	no_plan();
	memset(long1, 'x', 300);
	long1[0] = 'c';
	memcpy(long2, long1, 300);
	long2[300] = 'y';
	dir = tap_tmpdir("engine-reverse");
	env_clock_set(1700000000000LL);
	cf_options_default(&o);
	o.background = 0;
	o.compact_threshold = 1000;
	if (cf_db_open(dir, &o, &db))
		bail("open");
	fixed();
	model();
	cf_db_close(db);
	return done_testing();
}
