/*
 * test-sst-compat.c: store files written by older code still open and
 * read.  tests/data/ holds two files written by the code of a7f2fe7 from
 * tests/tsfixture.h's cells: sst-v1-snappy.sst (COMPRESSION=SNAPPY, 24
 * points a row) and sst-v1-tsdb-zstd.sst (COMPRESSION=ZSTD ENCODING=TSDB,
 * 360 points a row: blocks in the TSDB encoding's version 1), both of
 * store file version 1 (whole last keys in the index); and one written
 * by the code of 2860493, sst-v2-tsdb-zstd.sst (the same cells and
 * settings: store file version 2, the TSDB encoding's version 2).  For
 * each, and for the same cells written by today's builder: sst_verify
 * passes; every cell reads back as the fixture makes it; a seek to every
 * key finds it, a seek just past every key finds the next one and a
 * reverse seek the one before (keys that fall between the index's
 * separators); the middle row is a row of the file; the filter (classic
 * in the old files, blocked in today's) has every row.  Today's files
 * are smaller than the version 1 files, their filters aside (against the
 * version 2 file the sizes are printed: version 3 encodes these cells
 * smaller, and zstd, after, takes less of them, docs/timeseries_performance.md).
 * And ikey_separator, which makes the index's keys, on random keys.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/cellfs.h"
#include "engine/key.h"
#include "engine/sst.h"
#include "tests/tap.h"
#include "tests/tsfixture.h"
#include "util/coding.h"
#include "util/err.h"

struct cell {
	unsigned char *k, *v;
	size_t kl, vl;
};

struct cells {
	struct cell *c;
	size_t n, cap;
};

static void collect(const unsigned char *k, size_t kl, const unsigned char *v,
		    size_t vl, void *arg)
{
	struct cells *cs = arg;
	struct cell *c;

	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? 2 * cs->cap : 64;
		cs->c = realloc(cs->c, cs->cap * sizeof *cs->c);
		if (!cs->c)
			bail("out of memory");
	}
	c = &cs->c[cs->n++];
	c->k = malloc(kl);
	c->v = malloc(vl ? vl : 1);
	if (!c->k || !c->v)
		bail("out of memory");
	memcpy(c->k, k, kl);
	if (vl)
		memcpy(c->v, v, vl);
	c->kl = kl;
	c->vl = vl;
}

static void release(struct cells *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		free(cs->c[i].k);
		free(cs->c[i].v);
	}
	free(cs->c);
}

static int key_is(struct iter *it, const struct cell *c)
{
	size_t kl;
	const unsigned char *k;

	if (!c)
		return !iter_valid(it) && iter_status(it) == CF_OK;
	if (!iter_valid(it))
		return 0;
	k = iter_key(it, &kl);
	return kl == c->kl && memcmp(k, c->k, kl) == 0;
}

/* The checks of the header comment on one file. */
static void check_file(const char *path, const char *what,
		       const struct cells *cs)
{
	struct sst *s;
	struct iter *it;
	struct buf mid = BUF_INIT;
	uint64_t bad = 0;
	size_t i = 0, wrong = 0, unseen = 0, past = 0, before = 0;
	int rc;

	is_int(sst_verify(path, &bad), CF_OK, "%s: sst_verify passes", what);
	if (sst_open(path, 1, NULL, 0, &s) != CF_OK) {
		ok(0, "%s: opens", what);
		return;
	}
	it = sst_iter(s, 0);
	for (iter_seek_first(it); iter_valid(it); iter_next(it), i++) {
		size_t kl, vl;
		const unsigned char *k = iter_key(it, &kl);
		const unsigned char *v = iter_value(it, &vl);
		if (i >= cs->n || kl != cs->c[i].kl || vl != cs->c[i].vl ||
		    memcmp(k, cs->c[i].k, kl) ||
		    (vl && memcmp(v, cs->c[i].v, vl)))
			wrong++;
	}
	is_int(iter_status(it), CF_OK, "%s: the scan ends cleanly", what);
	is_int(i, cs->n, "%s: %zu cells", what, cs->n);
	is_int(wrong, 0, "%s: every cell as written, byte for byte", what);
	for (i = 0; i < cs->n; i++) {
		unsigned char key[4096];
		const struct cell *c = &cs->c[i];
		uint64_t st;
		iter_seek(it, c->k, c->kl);
		unseen += !key_is(it, c);
		/* just past the key: the same column, seqtype one less */
		memcpy(key, c->k, c->kl);
		st = dec_u64be(key + c->kl - 8) - 1;
		enc_u64be(key + c->kl - 8, st);
		iter_seek(it, key, c->kl);
		past += !key_is(it, i + 1 < cs->n ? &cs->c[i + 1] : NULL);
		iter_seek_lt(it, c->k, c->kl);
		before += !key_is(it, i ? &cs->c[i - 1] : NULL);
	}
	is_int(unseen, 0, "%s: a seek to each key finds it", what);
	{
		/* the old (classic) filter still answers for every row */
		size_t no = 0, absent = 0;
		int kind = sst_get_meta(s)->bloom;
		for (i = 0; i < cs->n; i++) {
			struct ikey k;
			if (ikey_decode(cs->c[i].k, cs->c[i].kl, &k)) {
				no++;
				continue;
			}
			no += kind == CF_BLOOM_ROWCOL ?
			      !sst_may_have_rowcol(s, k.row, k.rowlen, k.qual,
						   k.qlen) :
			      !sst_may_have_row(s, k.row, k.rowlen);
		}
		for (i = 0; i < 1000; i++) {
			char r[32];
			int n = snprintf(r, sizeof r, "absent-%zu", i);
			absent += kind == CF_BLOOM_ROWCOL ?
				  !sst_may_have_rowcol(s, r, (size_t)n, "q", 1) :
				  !sst_may_have_row(s, r, (size_t)n);
		}
		is_int(no, 0, "%s: the filter (bloom kind %d) has every key",
		       what, kind);
		ok(kind == CF_BLOOM_NONE ? absent == 0 : absent > 950,
		   "%s: and rules out %zu of 1000 absent rows", what, absent);
	}
	is_int(past, 0, "%s: a seek just past each key finds the next", what);
	is_int(before, 0, "%s: a reverse seek finds the key before", what);
	iter_destroy(it);
	rc = sst_mid_row(s, &mid);
	if (rc == CF_OK) {
		size_t found = 0;
		for (i = 0; i < cs->n; i++) {
			size_t rl;
			const unsigned char *r = ikey_row(cs->c[i].k, &rl);
			found += rl == mid.len && memcmp(r, mid.p, rl) == 0;
		}
		ok(found > 0, "%s: the middle row is a row of the file", what);
	} else {
		is_int(rc, CF_ENOTFOUND, "%s: one block, no middle row", what);
	}
	buf_release(&mid);
	sst_unref(s);
}

static struct sst_builder *builder;

static void add(const unsigned char *k, size_t kl, const unsigned char *v,
		size_t vl, void *arg)
{
	(void)arg;
	if (sst_builder_add(builder, k, kl, v, vl) != CF_OK)
		bail("sst_builder_add");
}

/* The file's size without its filter block (footer bytes 40-47: the
 * filter's size; a block's 5-byte trailer besides): the filters' layouts
 * differ (blocked filters since 2026-11-29 are whole 64-byte lines). */
static long long size_of(const char *path)
{
	unsigned char f[64];
	struct stat st;
	uint64_t filter;
	FILE *fp;

	if (stat(path, &st) || st.st_size < 64 || !(fp = fopen(path, "rb")))
		return -1;
	if (fseek(fp, (long)st.st_size - 64, SEEK_SET) ||
	    fread(f, 1, 64, fp) != 64) {
		fclose(fp);
		return -1;
	}
	fclose(fp);
	filter = dec_u64le(f + 40);
	return (long long)st.st_size - (long long)filter -
	       (filter ? 5 : 0);
}

static void one(const char *name, int points, int comp, int enc,
		int smaller, const char *dir, const char *top)
{
	struct sst_build_opts o = { 0, comp, CF_BLOOM_ROW, 0, enc };
	struct cells cs = { NULL, 0, 0 };
	char old[4096], now[4096], what[128];

	snprintf(old, sizeof old, "%s/tests/data/%s", top, name);
	snprintf(now, sizeof now, "%s/%s", dir, name);
	tsfixture_cells(points, collect, &cs);
	snprintf(what, sizeof what, "%s (older code)", name);
	check_file(old, what, &cs);
	if (sst_builder_open(now, &o, &builder) != CF_OK)
		bail("sst_builder_open");
	tsfixture_cells(points, add, NULL);
	if (sst_builder_finish(builder, NULL) != CF_OK)
		bail("sst_builder_finish");
	snprintf(what, sizeof what, "%s (today's code)", name);
	check_file(now, what, &cs);
	if (smaller)
		ok(size_of(now) < size_of(old), "%s: today's file is smaller, "
		   "its filter aside (%lld bytes, was %lld)", name,
		   size_of(now), size_of(old));
	else
		diag("%s: today's file %lld bytes, its filter aside, was %lld",
		     name, size_of(now), size_of(old));
	release(&cs);
}

/* A random key: rows of 1-6 bytes from a small alphabet with 0xFF
 * (prefixes, equal rows and bytes that cannot grow are common). */
static size_t random_key(unsigned char *k)
{
	static const unsigned char alpha[] = { 0x00, 0x01, 0x41, 0x42, 0xFE,
					       0xFF };
	unsigned char row[8], qual[4];
	struct ikey x = { row, 1 + tsfixture_rnd() % 6,
			  (const unsigned char *)"t", tsfixture_rnd() % 2,
			  qual, tsfixture_rnd() % 4,
			  (int64_t)(tsfixture_rnd() % 5) - 2,
			  tsfixture_rnd() % 4, KT_PUT };

	for (size_t i = 0; i < x.rowlen; i++)
		row[i] = alpha[tsfixture_rnd() % sizeof alpha];
	for (size_t i = 0; i < x.qlen; i++)
		qual[i] = alpha[tsfixture_rnd() % sizeof alpha];
	return ikey_encode(k, &x);
}

/* ikey_separator on random pairs a < b: a <= s < b and s shorter than
 * a, or 0; the successor of a (b NULL): s >= a. */
static void test_separators(void)
{
	int bad = 0, shorter = 0;

	tsfixture_rs = 12345;
	for (int i = 0; i < 20000; i++) {
		unsigned char a[64], b[64], sep[64];
		size_t an = random_key(a), bn = random_key(b), sn;
		int c = ikey_cmp(a, an, b, bn);
		if (c == 0)
			continue;
		if (c > 0) {
			unsigned char t[64];
			size_t tn = an;
			memcpy(t, a, an);
			memcpy(a, b, bn);
			an = bn;
			memcpy(b, t, tn);
			bn = tn;
		}
		sn = ikey_separator(a, an, b, bn, sep);
		if (sn) {
			shorter++;
			bad += sn >= an || !ikey_valid(sep, sn) ||
			       ikey_cmp(a, an, sep, sn) > 0 ||
			       ikey_cmp(sep, sn, b, bn) >= 0;
		}
		sn = ikey_separator(a, an, NULL, 0, sep);
		if (sn)
			bad += sn >= an || !ikey_valid(sep, sn) ||
			       ikey_cmp(a, an, sep, sn) > 0;
	}
	is_int(bad, 0, "ikey_separator: 20000 random pairs a < b give "
	       "a <= s < b, shorter than a (%d shortened)", shorter);
	ok(shorter > 1000, "and most are shortened");
}

int main(void)
{
	const char *top = getenv("CELLFS_TOP");
	const char *dir = tap_tmpdir("sst-compat");

	if (!top)
		top = ".";
	test_separators();
	one("sst-v1-snappy.sst", 24, CF_COMPRESS_SNAPPY, CF_ENCODING_NONE, 1,
	    dir, top);
	one("sst-v1-tsdb-zstd.sst", 360, CF_COMPRESS_ZSTD, CF_ENCODING_TSDB, 1,
	    dir, top);
	one("sst-v2-tsdb-zstd.sst", 360, CF_COMPRESS_ZSTD, CF_ENCODING_TSDB, 0,
	    dir, top);
	tap_rmdir(dir);
	return done_testing();
}
