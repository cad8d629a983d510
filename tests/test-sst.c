/*
 * test-sst.c: store files (engine/sst.h, docs/sst_format.md): builder and
 * reader round trips (0, 1, 20k and 200k entries, values up to 1 MiB,
 * every compression, every bloom kind), seeks to and between every key,
 * exact meta, bloom false negatives (none) and false positives (< 2%),
 * block cache use, corruption anywhere detected (never wrong data),
 * sst_verify offsets, refused keys, injected write errors, obsolete
 * files.  Timings are printed as comments, never asserted.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "engine/block.h"
#include "engine/cache.h"
#include "engine/cellfs.h"
#include "engine/key.h"
#include "engine/sst.h"
#include "tests/tap.h"
#include "util/buf.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/env.h"
#include "util/err.h"

/* Sanitized builds run 3x (ASan) to 15x (TSan) slower: they do less of
 * the repetitive work so each stays within a few seconds.  The TSan build
 * is there for the threaded readers, so its big files are smaller. */
#if defined(__SANITIZE_THREAD__)
#define SANITIZED 2
#elif defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif
#define BIG_N (SANITIZED > 1 ? 60000 : 200000)

static const char *dir;
static uint64_t seed;
static unsigned char *vbuf;	/* scratch for expected values */
#define VBUF_SIZE (((size_t)1 << 20) + 64)

static uint64_t mix(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *path_of(const char *name)
{
	static char p[8][4200];
	static int i;
	i = (i + 1) % 8;
	snprintf(p[i], sizeof p[i], "%s/%s", dir, name);
	return p[i];
}

/* --- data sets -------------------------------------------------------- */

/* Keys of a data set in order; values are a function of (seed, index). */
struct ds {
	struct buf keys;
	size_t *off;		/* n + 1 offsets into keys */
	size_t n;
	int big;		/* values up to 1 MiB */
	struct sst_meta want;
};

static const unsigned char *ds_key(const struct ds *d, size_t i, size_t *n)
{
	*n = d->off[i + 1] - d->off[i];
	return d->keys.p + d->off[i];
}

static size_t val_len(const struct ds *d, size_t i)
{
	uint64_t h = mix(seed ^ (i * 31));

	if (d->big && i % 50000 == 777)
		return ((size_t)1 << 20) - (size_t)(h % 3);	/* ~1 MiB */
	if (d->big && h % 1000 == 0)
		return (size_t)(h >> 20) % 70000;	/* over a block */
	return (size_t)(h >> 20) % 300;
}

/* Half the values are text (compressible), half noise. */
static void make_val(size_t i, unsigned char *dst, size_t len)
{
	uint64_t h = mix(seed + i);

	if (h & 1) {
		char pat[32];
		size_t pn = (size_t)snprintf(pat, sizeof pat, "value-%zu;", i);
		size_t have = len < pn ? len : pn;
		memcpy(dst, pat, have);
		while (have < len) {	/* the pattern, doubling */
			size_t c = have < len - have ? have : len - have;
			memcpy(dst + have, dst, c);
			have += c;
		}
	} else {
		for (size_t j = 0; j < len; j += 8) {
			unsigned char w[8];
			h = mix(h);
			enc_u64le(w, h);
			memcpy(dst + j, w, len - j < 8 ? len - j : 8);
		}
	}
}

static void ds_add(struct ds *d, const char *row, size_t rowlen,
		   const char *qual, size_t qlen, int64_t ts, uint64_t sq,
		   int type)
{
	unsigned char k[512];
	struct ikey ik = {
		.row = (const unsigned char *)row, .rowlen = rowlen,
		.fam = (const unsigned char *)"f", .famlen = 1,
		.qual = (const unsigned char *)qual, .qlen = qlen,
		.ts = ts, .seq = sq, .type = type,
	};
	size_t n = ikey_encode(k, &ik);
	struct sst_meta *m = &d->want;

	if (buf_append(&d->keys, k, n))
		bail("out of memory");
	d->off[++d->n] = d->keys.len;
	if (d->n == 1) {
		m->min_ts = m->max_ts = ts;
		m->min_seq = m->max_seq = sq;
		buf_append(&m->first_key, k, n);
	}
	if (ts < m->min_ts)
		m->min_ts = ts;
	if (ts > m->max_ts)
		m->max_ts = ts;
	if (sq < m->min_seq)
		m->min_seq = sq;
	if (sq > m->max_seq)
		m->max_seq = sq;
	m->cells++;
	if (type != KT_PUT)
		m->deletes++;
	m->last_key.len = 0;
	buf_append(&m->last_key, k, n);
}

/*
 * n cells over rows "%08zu" + a varying tail: every 50th row starts with
 * a family delete, rows have 1-4 qualifiers of 1-3 versions, timestamps
 * descend per column (some negative), some cells are deletes.
 */
static void ds_make(struct ds *d, size_t n, int big)
{
	memset(d, 0, sizeof *d);
	d->big = big;
	d->off = malloc((n + 1) * sizeof *d->off);
	if (!d->off)
		bail("out of memory");
	d->off[0] = 0;
	for (size_t r = 0; d->n < n; r++) {
		char row[64], qual[32];
		uint64_t h = mix(seed ^ (r << 8));
		int rowlen = snprintf(row, sizeof row, "%08zu%.*s", r,
				      (int)(h % 24), "abcdefghijklmnopqrstuvwx");
		int64_t base = r % 3 == 0 ? -(int64_t)r * 1000 :
			       INT64_C(1700000000000) + (int64_t)r;
		int nq = 1 + (int)(h >> 8) % 4;

		if (r % 50 == 0)
			ds_add(d, row, (size_t)rowlen, "", 0, base + 5,
			       1 + mix(d->n) % 1000000, KT_DELETE_FAMILY);
		for (int q = 0; q < nq && d->n < n; q++) {
			int ql = snprintf(qual, sizeof qual, "q%02d%.*s", q,
					  (int)((h >> (16 + q)) % 10),
					  "0123456789");
			int nv = 1 + (int)((h >> (24 + q)) % 3);
			for (int v = 0; v < nv && d->n < n; v++) {
				size_t i = d->n;
				int type = i % 13 == 5 ? KT_DELETE :
					   i % 101 == 3 ? KT_DELETE_COLUMN :
					   KT_PUT;
				ds_add(d, row, (size_t)rowlen, qual,
				       (size_t)ql, base - v * 10,
				       1 + mix(i) % 1000000, type);
			}
		}
	}
}

static void ds_free(struct ds *d)
{
	buf_release(&d->keys);
	free(d->off);
	sst_meta_release(&d->want);
}

static int build(const char *path, const struct ds *d, int compression,
		 int bloom, uint32_t block_size, struct sst_meta *m)
{
	struct sst_build_opts o = { block_size, compression, bloom, 0, 0 };
	struct sst_builder *b;
	int rc;

	rc = sst_builder_open(path, &o, &b);
	if (rc)
		return rc;
	for (size_t i = 0; i < d->n; i++) {
		size_t kn, vn = val_len(d, i);
		const unsigned char *k = ds_key(d, i, &kn);
		make_val(i, vbuf, vn);
		rc = sst_builder_add(b, k, kn, vbuf, vn);
		if (rc) {
			sst_builder_abort(b);
			return rc;
		}
	}
	if (sst_builder_cells(b) != d->n)
		diag("builder counts %llu cells, want %zu",
		     (unsigned long long)sst_builder_cells(b), d->n);
	return sst_builder_finish(b, m);
}

static int meta_equal(const struct sst_meta *a, const struct sst_meta *b)
{
	return a->cells == b->cells && a->deletes == b->deletes &&
	       a->min_ts == b->min_ts && a->max_ts == b->max_ts &&
	       a->min_seq == b->min_seq && a->max_seq == b->max_seq &&
	       a->first_key.len == b->first_key.len &&
	       (!a->first_key.len || memcmp(a->first_key.p, b->first_key.p,
					    a->first_key.len) == 0) &&
	       a->last_key.len == b->last_key.len &&
	       (!a->last_key.len || memcmp(a->last_key.p, b->last_key.p,
					   a->last_key.len) == 0);
}

/* 1 when the iterator sits on entry i of d with the right value. */
static int at_entry(struct iter *it, const struct ds *d, size_t i)
{
	size_t kn, gk, gv, vn = val_len(d, i);
	const unsigned char *k = ds_key(d, i, &kn);
	const unsigned char *key, *val;

	if (!iter_valid(it))
		return 0;
	key = iter_key(it, &gk);
	val = iter_value(it, &gv);
	if (gk != kn || memcmp(key, k, kn) != 0 || gv != vn)
		return 0;
	make_val(i, vbuf, vn);
	return vn == 0 || memcmp(val, vbuf, vn) == 0;
}

/* Scans the whole file: returns how many entries matched d in order
 * before the first mismatch or the end; *rc gets the final status. */
static size_t scan(struct sst *s, const struct ds *d, int fill, int *rc)
{
	struct iter *it = sst_iter(s, fill);
	size_t i = 0;

	if (!it)
		bail("out of memory");
	for (iter_seek_first(it); iter_valid(it); iter_next(it)) {
		if (i >= d->n || !at_entry(it, d, i))
			break;
		i++;
	}
	*rc = iter_valid(it) ? 1 : iter_status(it);
	iter_destroy(it);
	return i;
}

/* A key right after key i and before key i+1: the same column and
 * timestamp with seqtype one lower. */
static size_t key_after(const struct ds *d, size_t i, unsigned char *dst)
{
	size_t n;
	const unsigned char *k = ds_key(d, i, &n);

	memcpy(dst, k, n);
	enc_u64be(dst + n - 8, dec_u64be(dst + n - 8) - 1);
	return n;
}

static void check_seeks(struct sst *s, const struct ds *d, size_t step,
			const char *what, int fill)
{
	struct iter *it = sst_iter(s, fill);
	unsigned char k[512];
	size_t bad_at = 0, bad_between = 0, n;
	struct ikey first;

	for (size_t i = 0; i < d->n; i += step) {
		const unsigned char *key = ds_key(d, i, &n);
		iter_seek(it, key, n);
		bad_at += !at_entry(it, d, i);
		n = key_after(d, i, k);
		iter_seek(it, k, n);
		if (i + 1 < d->n)
			bad_between += !at_entry(it, d, i + 1);
		else
			bad_between += iter_valid(it) ||
				       iter_status(it) != CF_OK;
	}
	is_int(bad_at, 0, "%s: seek to every %zu. key lands on it%s", what,
	       step, fill ? "" : " (read-ahead)");
	is_int(bad_between, 0, "%s: seek between keys lands on the next%s",
	       what, fill ? "" : " (read-ahead)");
	memset(&first, 0, sizeof first);
	first.fam = (const unsigned char *)"f";
	first.famlen = 1;
	first.ts = INT64_MAX;
	first.seq = SEQ_MAX;
	first.type = KT_PUT;
	first.row = (const unsigned char *)"";
	n = ikey_encode(k, &first);
	iter_seek(it, k, n);
	ok(d->n ? at_entry(it, d, 0) : !iter_valid(it),
	   "%s: seek before everything finds the first key", what);
	first.row = (const unsigned char *)"~";
	first.rowlen = 1;
	n = ikey_encode(k, &first);
	iter_seek(it, k, n);
	ok(!iter_valid(it) && iter_status(it) == CF_OK,
	   "%s: seek past the end is invalid with status ok", what);
	iter_destroy(it);
}

static void check_bloom(struct sst *s, const struct ds *d, int kind,
			const char *what)
{
	size_t fn = 0, fp = 0, probes = 0, n;
	struct ikey k;
	char absent[64];

	for (size_t i = 0; i < d->n; i++) {
		const unsigned char *key = ds_key(d, i, &n);
		if (ikey_decode(key, n, &k))
			bail("bad key in data set");
		if (kind == CF_BLOOM_ROWCOL)
			fn += !sst_may_have_rowcol(s, k.row, k.rowlen, k.qual,
						   k.qlen);
		else
			fn += !sst_may_have_row(s, k.row, k.rowlen);
	}
	is_int(fn, 0, "%s: no bloom false negatives over %zu keys", what,
	       d->n);
	for (size_t i = 0; i < 50000; i++, probes++) {
		int an = snprintf(absent, sizeof absent, "x%07zu", i);
		if (kind == CF_BLOOM_ROWCOL) {
			const unsigned char *key = ds_key(d, i % d->n, &n);
			ikey_decode(key, n, &k);
			fp += (size_t)sst_may_have_rowcol(s, k.row, k.rowlen,
							  absent,
							  (size_t)an);
		} else {
			fp += (size_t)sst_may_have_row(s, absent, (size_t)an);
		}
	}
	if (kind == CF_BLOOM_NONE) {
		is_int(fp, probes, "%s: no filter: every row may be there",
		       what);
		return;
	}
	diag("%s: bloom false positives %.3f%%", what,
	     100.0 * (double)fp / (double)probes);
	ok((double)fp / (double)probes < 0.02,
	   "%s: false positive rate %.4f < 0.02", what,
	   (double)fp / (double)probes);
	if (kind == CF_BLOOM_ROWCOL)
		is_int(sst_may_have_row(s, "x", 1), 1,
		       "%s: a ROWCOL file answers 1 for rows", what);
	else
		is_int(sst_may_have_rowcol(s, "x", 1, "q", 1), 1,
		       "%s: a ROW file answers 1 for row+qualifier", what);
}

static uint64_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

/* The full round trip of one data set under one setting. */
static void round_trip(const char *name, size_t n, int big, int compression,
		       int bloom, uint32_t block_size, size_t seek_step)
{
	const char *path = path_of(name);
	struct ds d;
	struct sst_meta m;
	struct sst *s;
	struct cache *c;
	double t0, t1;
	int rc;
	uint64_t bad;

	ds_make(&d, n, big);
	t0 = now();
	rc = build(path, &d, compression, bloom, block_size, &m);
	t1 = now();
	if (!is_int(rc, CF_OK, "%s: %zu entries built", name, n))
		goto out_ds;
	diag("%s: built %zu entries, %llu bytes in %.3f s", name, n,
	     (unsigned long long)m.file_size, t1 - t0);
	ok(meta_equal(&m, &d.want), "%s: builder meta exact", name);
	is_int(m.file_size, file_size(path), "%s: file_size is the size",
	       name);
	is_int(m.bloom, bloom, "%s: bloom kind recorded", name);
	if (cache_new((size_t)64 << 20, &c))
		bail("cache_new");
	rc = sst_open(path, 42, c, 0, &s);
	if (!is_int(rc, CF_OK, "%s: opens", name))
		goto out_meta;
	ok(meta_equal(sst_get_meta(s), &d.want), "%s: stored meta exact",
	   name);
	is_int(sst_get_meta(s)->file_size, m.file_size, "%s: size", name);
	is_int(sst_get_meta(s)->bloom, bloom, "%s: stored bloom kind", name);
	is_int(sst_file_id(s), 42, "%s: file id", name);
	t0 = now();
	is_int(scan(s, &d, 1, &rc), n, "%s: scan returns every entry", name);
	diag("%s: full scan in %.3f s", name, now() - t0);
	is_int(rc, CF_OK, "%s: scan ends with status ok", name);
	is_int(scan(s, &d, 0, &rc), n, "%s: a scan through the read-ahead "
	       "returns every entry", name);
	is_int(rc, CF_OK, "%s: and ends with status ok", name);
	check_seeks(s, &d, seek_step, name, 1);
	check_seeks(s, &d, seek_step * 7, name, 0);
	check_bloom(s, &d, bloom, name);
	is_int(sst_verify(path, &bad), CF_OK, "%s: sst_verify passes", name);
	sst_unref(s);
	is_int(cache_usage(c), 0, "%s: last unref empties the cache", name);
	cache_free(c);
out_meta:
	sst_meta_release(&m);
out_ds:
	ds_free(&d);
}

/* --- small cases ------------------------------------------------------ */

/* Compression is kept only when it saves at least 1/8. */
static void test_seal(void)
{
	struct buf out = BUF_INIT;
	size_t stored;
	unsigned char *raw = malloc(4096);

	if (!raw)
		bail("out of memory");
	for (size_t i = 0; i < 4096; i += 8)
		enc_u64le(raw + i, mix(seed + i));
	is_int(block_seal(raw, 4096, BLOCK_SNAPPY, BLOCK_ENC_NONE, &out,
			  &stored), CF_OK, "seal noise");
	is_int(stored, 4096, "noise is stored raw");
	is_int(out.len, 4096 + BLOCK_TRAILER, "with a 5-byte trailer");
	is_int(out.p[4096], BLOCK_RAW, "type byte 0");
	/* 7/8 noise, 1/8 zeros: snappy saves a bit under 1/8 */
	memset(raw, 0, 4096 / 8 - 64);
	out.len = 0;
	block_seal(raw, 4096, BLOCK_SNAPPY, BLOCK_ENC_NONE, &out, &stored);
	is_int(out.p[stored], BLOCK_RAW, "saving under 1/8: still raw");
	memset(raw, 0, 4096 / 8 + 64);
	out.len = 0;
	block_seal(raw, 4096, BLOCK_SNAPPY, BLOCK_ENC_NONE, &out, &stored);
	is_int(out.p[stored], BLOCK_SNAPPY, "saving over 1/8: snappy");
	ok(stored <= 4096 - 4096 / 8, "stored %zu bytes", stored);
	memset(raw, 'x', 4096);
	out.len = 0;
	block_seal(raw, 4096, BLOCK_RAW, BLOCK_ENC_NONE, &out, &stored);
	is_int(stored, 4096, "compression off: stored raw");
	/* zstd: noise stays raw, a compressible block is a zstd frame */
	for (size_t i = 0; i < 4096; i += 8)
		enc_u64le(raw + i, mix(seed + i));
	out.len = 0;
	is_int(block_seal(raw, 4096, BLOCK_ZSTD, BLOCK_ENC_NONE, &out,
			  &stored), CF_OK, "zstd: seal noise");
	is_int(stored, 4096, "zstd: noise is stored raw");
	is_int(out.p[4096], BLOCK_RAW, "zstd: noise has type byte 0");
	memset(raw, 0, 4096 / 4);
	out.len = 0;
	block_seal(raw, 4096, BLOCK_ZSTD, BLOCK_ENC_NONE, &out, &stored);
	is_int(out.p[stored], BLOCK_ZSTD, "zstd: saving over 1/8: type 2");
	ok(stored <= 4096 - 4096 / 8, "zstd: stored %zu bytes", stored);
	is_int(dec_u32le(out.p), 0xFD2FB528u, "zstd: a zstd frame (magic)");
	free(raw);
	buf_release(&out);
}

static void test_empty(void)
{
	struct ds d;
	struct sst_meta m;
	struct sst *s;
	struct iter *it;
	unsigned char k[64];
	uint64_t bad = 1;
	int bl[3] = { CF_BLOOM_NONE, CF_BLOOM_ROW, CF_BLOOM_ROWCOL };

	ds_make(&d, 0, 0);
	for (int i = 0; i < 3; i++) {
		char name[32];
		const char *path;
		snprintf(name, sizeof name, "empty-%d.sst", i);
		path = path_of(name);
		is_int(build(path, &d, CF_COMPRESS_SNAPPY, bl[i], 0, &m),
		       CF_OK, "empty file (bloom %d) built", bl[i]);
		is_int(m.cells, 0, "empty: 0 cells");
		is_int(m.first_key.len + m.last_key.len, 0, "empty: no keys");
		is_int(m.min_ts == 0 && m.max_ts == 0 && m.min_seq == 0 &&
		       m.max_seq == 0, 1, "empty: ranges are 0");
		sst_meta_release(&m);
		if (!is_int(sst_open(path, 1, NULL, 0, &s), CF_OK,
			    "empty: opens"))
			continue;
		it = sst_iter(s, 1);
		iter_seek_first(it);
		ok(!iter_valid(it) && iter_status(it) == CF_OK,
		   "empty: seek_first is invalid, status ok");
		memset(k, 0, sizeof k);
		k[2] = 1;
		k[3] = 'f';
		iter_seek(it, k, KEY_OVERHEAD + 1);
		ok(!iter_valid(it) && iter_status(it) == CF_OK,
		   "empty: seek is invalid");
		iter_destroy(it);
		is_int(sst_may_have_row(s, "r", 1), bl[i] != CF_BLOOM_ROW,
		       "empty: a row filter knows nothing is there");
		is_int(sst_may_have_rowcol(s, "r", 1, "q", 1),
		       bl[i] != CF_BLOOM_ROWCOL,
		       "empty: a rowcol filter knows nothing is there");
		sst_unref(s);
		is_int(sst_verify(path, &bad), CF_OK, "empty: verifies");
		is_int(bad, 0, "empty: bad_off stays 0");
	}
	ds_free(&d);
}

static void test_refused_keys(void)
{
	struct sst_build_opts o = { 0, CF_COMPRESS_NONE, CF_BLOOM_ROW, 0, 0 };
	struct sst_builder *b;
	struct ds d;
	struct sst_meta m;
	struct sst *s;
	size_t n0, n1, n2;
	const unsigned char *k0, *k1, *k2;
	unsigned char bad[4] = { 0, 9, 'x', 0 };
	int rc;

	ds_make(&d, 3, 0);
	k0 = ds_key(&d, 0, &n0);
	k1 = ds_key(&d, 1, &n1);
	k2 = ds_key(&d, 2, &n2);
	is_int(sst_builder_open(path_of("order.sst"), &o, &b), CF_OK,
	       "builder opens");
	is_int(sst_builder_add(b, k1, n1, "b", 1), CF_OK, "key 1 added");
	is_int(sst_builder_add(b, k0, n0, "a", 1), CF_EINVAL,
	       "a smaller key is refused");
	is_int(sst_builder_add(b, k1, n1, "b", 1), CF_EINVAL,
	       "an equal key is refused");
	is_int(sst_builder_add(b, bad, sizeof bad, "z", 1), CF_EINVAL,
	       "a malformed key is refused");
	is_int(sst_builder_add(b, k2, n2, "c", 1), CF_OK,
	       "the builder goes on after refusals");
	is_int(sst_builder_cells(b), 2, "two cells counted");
	ok(sst_builder_size(b) > 0, "size estimate grows");
	is_int(sst_builder_finish(b, &m), CF_OK, "finish");
	is_int(m.cells, 2, "file holds the two accepted cells");
	sst_meta_release(&m);
	rc = sst_open(path_of("order.sst"), 2, NULL, 0, &s);
	if (is_int(rc, CF_OK, "opens")) {
		struct iter *it = sst_iter(s, 0);
		size_t kn;
		const unsigned char *kk;
		iter_seek_first(it);
		kk = iter_key(it, &kn);
		ok(iter_valid(it) && kn == n1 && !memcmp(kk, k1, n1),
		   "first entry is key 1");
		iter_next(it);
		kk = iter_key(it, &kn);
		ok(iter_valid(it) && kn == n2 && !memcmp(kk, k2, n2),
		   "second entry is key 2");
		iter_next(it);
		ok(!iter_valid(it) && iter_status(it) == CF_OK, "then the end");
		iter_destroy(it);
		sst_unref(s);
	}
	is_int(sst_builder_open(path_of("order.sst"), &o, &b), CF_OK,
	       "a builder over an existing file (a crash leftover)");
	is_int(sst_builder_finish(b, NULL), CF_OK, "replaces it");
	rc = sst_open(path_of("order.sst"), 2, NULL, 0, &s);
	if (is_int(rc, CF_OK, "the new, empty file opens"))
		is_int(sst_get_meta(s)->cells, 0, "with 0 cells");
	sst_unref(s);
	o.bloom = 7;
	is_int(sst_builder_open(path_of("opts.sst"), &o, &b), CF_EINVAL,
	       "unknown bloom kind refused");
	o.bloom = CF_BLOOM_ROW;
	o.compression = 3;
	is_int(sst_builder_open(path_of("opts.sst"), &o, &b), CF_EINVAL,
	       "unknown compression refused");
	o.compression = CF_COMPRESS_NONE;
	o.bloom_bits = -1;
	is_int(sst_builder_open(path_of("opts.sst"), &o, &b), CF_EINVAL,
	       "negative bloom bits refused");
	ok(!env_exists(path_of("opts.sst")), "refused builders leave no file");
	o.bloom_bits = 0;
	is_int(sst_builder_open(path_of("abort.sst"), &o, &b), CF_OK,
	       "builder for abort");
	sst_builder_add(b, k0, n0, "a", 1);
	sst_builder_abort(b);
	ok(!env_exists(path_of("abort.sst")), "abort removes the file");
	ds_free(&d);
}

/* The blocks of a file, read the way a reader would. */
struct layout {
	uint64_t size;
	uint64_t index_off, meta_off, filter_off, filter_size;
	uint64_t *data_off, *data_size;
	size_t ndata;
	struct buf keys;	/* index keys, block i's at key_off[i] */
	size_t *key_off;	/* ndata + 1 offsets */
};

static void read_layout(const char *path, struct layout *l)
{
	struct env_file *f;
	unsigned char foot[64];
	struct block *b;
	struct block_iter it;
	size_t cap = 0;

	memset(l, 0, sizeof *l);
	l->size = file_size(path);
	if (env_open(path, ENV_READ, &f) ||
	    env_pread(f, foot, 64, l->size - 64))
		bail("cannot read %s", path);
	l->index_off = dec_u64le(foot);
	l->meta_off = dec_u64le(foot + 16);
	l->filter_off = dec_u64le(foot + 32);
	l->filter_size = dec_u64le(foot + 40);
	if (block_read(f, l->index_off, dec_u64le(foot + 8), &b))
		bail("cannot read the index of %s", path);
	block_iter_init(&it);
	block_iter_set(&it, b);
	for (block_iter_seek_first(&it); it.valid; block_iter_next(&it)) {
		uint64_t off = 0, size = 0;
		size_t h = dec_varint(it.val, it.val + it.vlen, &off);
		dec_varint(it.val + h, it.val + it.vlen, &size);
		if (l->ndata + 1 >= cap) {
			cap = cap ? 2 * cap : 64;
			l->data_off = realloc(l->data_off, cap * 8);
			l->data_size = realloc(l->data_size, cap * 8);
			l->key_off = realloc(l->key_off, cap * sizeof(size_t));
			if (!l->data_off || !l->data_size || !l->key_off)
				bail("out of memory");
			l->key_off[0] = 0;
		}
		if (buf_append(&l->keys, it.key.p, it.key.len))
			bail("out of memory");
		l->data_off[l->ndata] = off;
		l->data_size[l->ndata++] = size;
		l->key_off[l->ndata] = l->keys.len;
	}
	block_iter_release(&it);
	block_free(b);
	env_close(f);
}

static void layout_free(struct layout *l)
{
	free(l->data_off);
	free(l->data_size);
	free(l->key_off);
	buf_release(&l->keys);
}

static void flip(const char *path, uint64_t off)
{
	FILE *f = fopen(path, "r+b");
	int c;

	if (!f || fseek(f, (long)off, SEEK_SET) != 0 || (c = fgetc(f)) == EOF ||
	    fseek(f, (long)off, SEEK_SET) != 0 || fputc(c ^ 0x40, f) == EOF)
		bail("cannot flip byte %llu of %s", (unsigned long long)off,
		     path);
	fclose(f);
}

/* Entries of d up to and including key k (d's keys are sorted). */
static size_t entries_upto(const struct ds *d, const unsigned char *k,
			   size_t kn)
{
	size_t lo = 0, hi = d->n, n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const unsigned char *mk = ds_key(d, mid, &n);
		if (ikey_cmp(mk, n, k, kn) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void test_corruption(void)
{
	const char *path = path_of("corrupt.sst");
	struct ds d;
	struct sst_meta m;
	struct layout l;
	struct sst *s;
	struct iter *it;
	uint64_t bad, target;
	size_t mid, got, before, kn;
	const unsigned char *k;
	int rc;

	ds_make(&d, 5000, 0);
	if (build(path, &d, CF_COMPRESS_SNAPPY, CF_BLOOM_ROW, 4096, &m))
		bail("cannot build %s", path);
	sst_meta_release(&m);
	read_layout(path, &l);
	ok(l.ndata > 10, "corruption file has %zu data blocks", l.ndata);

	/* a data block in the middle: open works, reads fail there */
	mid = l.ndata / 2;
	target = l.data_off[mid] + l.data_size[mid] / 2;
	flip(path, target);
	is_int(sst_open(path, 7, NULL, 0, &s), CF_OK,
	       "data block corruption: open still works");
	got = scan(s, &d, 1, &rc);
	is_int(rc, CF_ECORRUPT, "scan stops with CF_ECORRUPT");
	/* the entries before the bad block are exactly those up to the
	 * index key of the block before it */
	before = entries_upto(&d, l.keys.p + l.key_off[mid - 1],
			      l.key_off[mid] - l.key_off[mid - 1]);
	is_int(got, before, "scan returned %zu correct entries, no more",
	       got);
	ok(got > 0 && got < d.n, "the bad block is in the middle");
	it = sst_iter(s, 1);
	k = ds_key(&d, got, &kn);
	iter_seek(it, k, kn);
	ok(!iter_valid(it) && iter_status(it) == CF_ECORRUPT,
	   "seek into the bad block: invalid with CF_ECORRUPT");
	k = ds_key(&d, 0, &kn);
	iter_seek(it, k, kn);
	ok(at_entry(it, &d, 0), "a seek elsewhere clears the error");
	iter_destroy(it);
	sst_unref(s);
	is_int(sst_verify(path, &bad), CF_ECORRUPT, "verify: CF_ECORRUPT");
	is_int(bad, l.data_off[mid], "verify names the bad block's offset");
	flip(path, target);
	is_int(sst_verify(path, &bad), CF_OK, "flipped back: verifies");

	/* the trailer's type byte */
	flip(path, l.data_off[0] + l.data_size[0]);
	is_int(sst_verify(path, &bad), CF_ECORRUPT, "trailer type flipped");
	is_int(bad, 0, "verify names block 0");
	flip(path, l.data_off[0] + l.data_size[0]);

	/* footer, index, meta, filter: open refuses */
	{
		uint64_t foot = l.size - 64;
		uint64_t spots[] = { foot, foot + 9, foot + 20, foot + 40,
				     foot + 48, foot + 52, foot + 59,
				     foot + 63 };
		int refused = 0, named = 0;
		for (size_t i = 0; i < sizeof spots / sizeof *spots; i++) {
			flip(path, spots[i]);
			refused += sst_open(path, 7, NULL, 0, &s) ==
				   CF_ECORRUPT;
			named += sst_verify(path, &bad) == CF_ECORRUPT &&
				 bad == foot;
			flip(path, spots[i]);
		}
		is_int(refused, 8, "footer flips: open says CF_ECORRUPT");
		is_int(named, 8, "footer flips: verify names the footer");
	}
	flip(path, l.index_off + 3);
	is_int(sst_open(path, 7, NULL, 0, &s), CF_ECORRUPT,
	       "index flip: open says CF_ECORRUPT");
	is_int(sst_verify(path, &bad), CF_ECORRUPT, "index flip: verify");
	is_int(bad, l.index_off, "verify names the index");
	flip(path, l.index_off + 3);
	flip(path, l.meta_off + 1);
	is_int(sst_open(path, 7, NULL, 0, &s), CF_ECORRUPT,
	       "meta flip: open says CF_ECORRUPT");
	is_int(sst_verify(path, &bad), CF_ECORRUPT, "meta flip: verify");
	is_int(bad, l.meta_off, "verify names the meta block");
	flip(path, l.meta_off + 1);
	flip(path, l.filter_off + l.filter_size / 2);
	is_int(sst_open(path, 7, NULL, 0, &s), CF_ECORRUPT,
	       "filter flip: open says CF_ECORRUPT");
	is_int(sst_verify(path, &bad), CF_ECORRUPT, "filter flip: verify");
	is_int(bad, l.filter_off, "verify names the filter block");
	flip(path, l.filter_off + l.filter_size / 2);
	is_int(sst_verify(path, &bad), CF_OK, "all flipped back: verifies");

	/* short files */
	if (truncate(path, (off_t)l.size - 1) != 0)
		bail("truncate");
	is_int(sst_open(path, 7, NULL, 0, &s), CF_ECORRUPT,
	       "one byte short: CF_ECORRUPT");
	if (truncate(path, 10) != 0)
		bail("truncate");
	is_int(sst_open(path, 7, NULL, 0, &s), CF_ECORRUPT,
	       "10-byte file: CF_ECORRUPT");
	is_int(sst_verify(path, &bad), CF_ECORRUPT, "10-byte file: verify");
	is_int(sst_open(path_of("missing.sst"), 7, NULL, 0, &s),
	       CF_ENOTFOUND, "missing file: CF_ENOTFOUND");
	layout_free(&l);
	ds_free(&d);
}

/*
 * Every single-byte corruption of a small file is caught: open refuses,
 * or reads return correct entries and then CF_ECORRUPT; sst_verify
 * always refuses.
 */
static void test_every_byte(int compression)
{
	const char *path = path_of(compression == CF_COMPRESS_ZSTD ?
				   "every-zstd.sst" : "every.sst");
	struct ds d;
	struct sst_meta m;
	struct sst *s;
	uint64_t size, bad;
	size_t missed_open = 0, missed_verify = 0, wrong = 0;
	int rc;

	ds_make(&d, 60, 0);
	if (build(path, &d, compression, CF_BLOOM_ROWCOL, 512, &m))
		bail("cannot build %s", path);
	sst_meta_release(&m);
	size = file_size(path);
	for (uint64_t off = 0; off < size; off++) {
		flip(path, off);
		rc = sst_open(path, 9, NULL, 0, &s);
		if (rc == CF_OK) {
			size_t got = scan(s, &d, 0, &rc);
			if (rc != CF_ECORRUPT)
				missed_open++;
			else if (got > d.n)
				wrong++;
			sst_unref(s);
		} else if (rc != CF_ECORRUPT) {
			missed_open++;
		}
		if (sst_verify(path, &bad) != CF_ECORRUPT || bad > off)
			missed_verify++;
		flip(path, off);
	}
	is_int(missed_open, 0, "%s: each of %llu byte flips: open or read "
	       "says CF_ECORRUPT", compression == CF_COMPRESS_ZSTD ? "zstd" :
	       "snappy", (unsigned long long)size);
	is_int(wrong, 0, "no flip yields wrong data");
	is_int(missed_verify, 0, "sst_verify catches every flip at or "
	       "before its offset");
	ds_free(&d);
}

/* The trailer a block of n stored bytes of type t gets (block.c's). */
static void seal_as(unsigned char *p, size_t n, unsigned char t)
{
	p[n] = t;
	enc_u32le(p + n + 1,
		  crc32c_mask(crc32c_extend(crc32c(p, n), &t, 1)));
}

/*
 * A zstd block whose checksum is right but whose frame is not (a writer
 * bug, or a crafted file): block_decode says CF_ECORRUPT, never crashes,
 * never returns a block other than the one sealed.
 */
static void test_zstd_frames(void)
{
	struct block_builder bb;
	struct buf out = BUF_INIT, mod = BUF_INIT;
	const unsigned char *raw;
	size_t n, stored, bad = 0, same = 0, nflip = 0;
	struct block *b;
	char key[32], val[64];

	block_builder_init(&bb, BLOCK_RESTART_INTERVAL);
	for (int i = 0; i < 400; i++) {
		unsigned char k[64];
		struct ikey ik = { 0 };
		int kl = snprintf(key, sizeof key, "row%06d", i);
		int vl = snprintf(val, sizeof val, "value %d of many", i * 7);
		ik.row = (const unsigned char *)key;
		ik.rowlen = (size_t)kl;
		ik.fam = (const unsigned char *)"f";
		ik.famlen = 1;
		ik.ts = 1000;
		ik.type = KT_PUT;
		ik.seq = (uint64_t)i + 1;
		block_builder_add(&bb, k, ikey_encode(k, &ik), val,
				  (size_t)vl);
	}
	if (block_builder_finish(&bb, &raw, &n) ||
	    block_seal(raw, n, BLOCK_ZSTD, BLOCK_ENC_NONE, &out, &stored))
		bail("cannot build a zstd block");
	is_int(out.p[stored], BLOCK_ZSTD, "zstd frame block: %zu -> %zu "
	       "bytes", n, stored);
	is_int(block_decode(out.p, stored, &b), CF_OK, "zstd block decodes");
	if (b) {
		ok(b->size == n && memcmp(b->data, raw, n) == 0,
		   "to the raw block, byte for byte");
		block_free(b);
	}
	/* truncated frames, each with a right checksum */
	for (size_t cut = 0; cut < stored; cut += 1 + cut / 8) {
		buf_reset(&mod);
		buf_append(&mod, out.p, cut);
		buf_reserve(&mod, BLOCK_TRAILER);
		seal_as(mod.p, cut, BLOCK_ZSTD);
		if (block_decode(mod.p, cut, &b) != CF_ECORRUPT)
			bad++;
		block_free(b);
	}
	is_int(bad, 0, "every truncated frame: CF_ECORRUPT");
	/* bytes after the frame */
	buf_reset(&mod);
	buf_append(&mod, out.p, stored);
	buf_append(&mod, "junk", 4);
	buf_reserve(&mod, BLOCK_TRAILER);
	seal_as(mod.p, stored + 4, BLOCK_ZSTD);
	is_int(block_decode(mod.p, stored + 4, &b), CF_ECORRUPT,
	       "bytes after the frame: CF_ECORRUPT");
	block_free(b);
	/* a raw block labelled zstd, and snappy labelled zstd */
	buf_reset(&mod);
	buf_append(&mod, raw, n);
	buf_reserve(&mod, BLOCK_TRAILER);
	seal_as(mod.p, n, BLOCK_ZSTD);
	is_int(block_decode(mod.p, n, &b), CF_ECORRUPT,
	       "raw bytes with type zstd: CF_ECORRUPT");
	block_free(b);
	/* a valid frame of something that is not a block */
	buf_reset(&mod);
	if (block_seal((const unsigned char *)"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 64, BLOCK_ZSTD,
		       BLOCK_ENC_NONE, &mod, &n) || mod.p[n] != BLOCK_ZSTD)
		bail("cannot seal a string");
	is_int(block_decode(mod.p, n, &b), CF_ECORRUPT,
	       "a frame of a non-block: CF_ECORRUPT (restart array)");
	block_free(b);
	/* every bit flip of the frame, checksum fixed up: corrupt, or a
	 * block that block_from_raw accepted (zstd frames carry no checksum
	 * of their own here: the trailer is the check) */
	for (size_t off = 0; off < stored; off++) {
		for (int bit = 0; bit < 8; bit += 3) {
			int rc;
			buf_reset(&mod);
			buf_append(&mod, out.p, stored);
			buf_reserve(&mod, BLOCK_TRAILER);
			mod.p[off] ^= (unsigned char)(1u << bit);
			seal_as(mod.p, stored, BLOCK_ZSTD);
			rc = block_decode(mod.p, stored, &b);
			nflip++;
			if (rc == CF_OK) {
				struct block_iter it;
				same += b->size == n &&
					memcmp(b->data, raw, n) == 0;
				block_iter_init(&it);
				block_iter_set(&it, b);
				for (block_iter_seek_first(&it); it.valid;
				     block_iter_next(&it))
					;
				block_iter_release(&it);
				block_free(b);
			} else if (rc != CF_ECORRUPT) {
				bad++;
			}
		}
	}
	is_int(bad, 0, "%zu bit flips with a fixed-up checksum: CF_OK or "
	       "CF_ECORRUPT, no crash (%zu decoded to the same block)",
	       nflip, same);
	/* the real check: a flip without fixing the checksum */
	out.p[stored / 2] ^= 1;
	is_int(block_decode(out.p, stored, &b), CF_ECORRUPT,
	       "a flipped byte: the trailer's checksum says CF_ECORRUPT");
	block_free(b);
	buf_release(&mod);
	buf_release(&out);
	block_builder_release(&bb);
}

static void test_faults(void)
{
	const char *path = path_of("nospc.sst");
	struct ds d;
	struct sst_meta m;
	int rc;

	ds_make(&d, 20000, 0);
	env_fault_add(ENV_OP_WRITE, "nospc.sst", 3, -1, CF_ENOSPC, 0);
	rc = build(path, &d, CF_COMPRESS_NONE, CF_BLOOM_ROW, 4096, &m);
	env_fault_clear();
	is_int(rc, CF_ENOSPC, "ENOSPC on the 4th write fails the build");
	ok(!env_exists(path), "and the partial file is gone");

	env_fault_add(ENV_OP_WRITE, "nospc.sst", 1, 1, CF_ENOSPC, 1);
	rc = build(path, &d, CF_COMPRESS_SNAPPY, CF_BLOOM_ROW, 4096, &m);
	env_fault_clear();
	is_int(rc, CF_ENOSPC, "a short write with ENOSPC fails the build");
	ok(!env_exists(path), "and the partial file is gone");

	/* a small file is written only at finish */
	ds_free(&d);
	ds_make(&d, 10, 0);
	env_fault_add(ENV_OP_WRITE, "nospc.sst", 0, -1, CF_ENOSPC, 0);
	rc = build(path, &d, CF_COMPRESS_NONE, CF_BLOOM_NONE, 0, &m);
	env_fault_clear();
	is_int(rc, CF_ENOSPC, "ENOSPC at finish fails it");
	ok(!env_exists(path), "and removes the file");

	env_fault_add(ENV_OP_SYNC, "nospc.sst", 0, -1, CF_EIO, 0);
	rc = build(path, &d, CF_COMPRESS_NONE, CF_BLOOM_NONE, 0, &m);
	env_fault_clear();
	is_int(rc, CF_EIO, "a failed fsync fails finish");
	ok(!env_exists(path), "and removes the file");

	rc = build(path, &d, CF_COMPRESS_NONE, CF_BLOOM_NONE, 0, &m);
	is_int(rc, CF_OK, "without faults the same build works");
	if (rc == CF_OK)
		sst_meta_release(&m);
	ok(env_fault_hits() >= 4, "faults were hit");
	ds_free(&d);
}

/*
 * The index's tags (sst.c, "index"): rows after a common prefix made of
 * the bytes 0x00, 0x01 and 0xff, so that rows are prefixes of others and
 * differ from them only by trailing zero bytes (equal tags), in blocks of
 * about one cell; every probe row, with the prefix or not, seeks to the
 * first cell at or after the row's start, as a linear search finds it.
 */
static void test_index_tags(void)
{
	static const unsigned char alpha[] = { 0x00, 0x01, 0xff };
	static const unsigned char palpha[] = { 0x00, 0x01, 0x02, 0xff };
	enum { MAXK = 64 };
	struct sst_build_opts o = { 64, CF_COMPRESS_NONE, CF_BLOOM_NONE, 0, 0 };
	unsigned char (*keys)[MAXK] = malloc(400 * sizeof *keys);
	size_t klen[400], nk = 0, bad = 0, probes = 0;
	struct sst_builder *b;
	struct sst_meta m;
	struct sst *s = NULL;
	struct iter *it;

	if (!keys)
		bail("out of memory");
	/* rows "pfx" + up to 4 bytes of alpha, two cells each */
	for (size_t len = 0; len <= 4; len++) {
		size_t count = 1;
		for (size_t i = 0; i < len; i++)
			count *= 3;
		for (size_t c = 0; c < count; c++) {
			unsigned char row[8] = "pfx";
			size_t x = c;
			for (size_t i = 0; i < len; i++, x /= 3)
				row[3 + len - 1 - i] = alpha[x % 3];
			for (int v = 0; v < 2; v++) {
				struct ikey k = { row, 3 + len,
						  (const unsigned char *)"f", 1,
						  (const unsigned char *)"q",
						  (size_t)v, 5, 7, KT_PUT };
				klen[nk] = ikey_encode(keys[nk], &k);
				nk++;
			}
		}
	}
	/* in key order: a simple insertion sort */
	for (size_t i = 1; i < nk; i++)
		for (size_t j = i; j > 0 && ikey_cmp(keys[j - 1], klen[j - 1],
						     keys[j], klen[j]) > 0; j--) {
			unsigned char t[MAXK];
			size_t tl = klen[j];
			memcpy(t, keys[j], MAXK);
			memcpy(keys[j], keys[j - 1], MAXK);
			memcpy(keys[j - 1], t, MAXK);
			klen[j] = klen[j - 1];
			klen[j - 1] = tl;
		}
	is_int(sst_builder_open(path_of("tags.sst"), &o, &b), CF_OK,
	       "tags: a file of rows with a common prefix");
	for (size_t i = 0; i < nk; i++)
		if (sst_builder_add(b, keys[i], klen[i], "v", 1))
			bail("sst_builder_add");
	is_int(sst_builder_finish(b, &m), CF_OK, "tags: written");
	sst_meta_release(&m);
	is_int(sst_open(path_of("tags.sst"), 9, NULL, 0, &s), CF_OK,
	       "tags: opened");
	if (!s)
		goto out;
	/* the last index key, the successor "q" of the last row, does not
	 * end the common prefix */
	is_int(sst_index_prefix(s), 3, "tags: the prefix \"pfx\" is skipped");
	it = sst_iter(s, 0);
	/* probes: "pf", "pfw", "pfx", "pfy" + up to 5 bytes of palpha */
	for (int p = 0; p < 4; p++) {
		for (size_t len = 0; len <= 5; len++) {
			size_t count = 1;
			for (size_t i = 0; i < len; i++)
				count *= 4;
			for (size_t c = 0; c < count; c++) {
				unsigned char row[16], t[MAXK];
				size_t rl = p ? 3 : 2, x = c, tl, want;
				struct ikey k = { row, 0, NULL, 0, NULL, 0,
						  INT64_MAX, SEQ_MAX, 0xff };
				row[0] = 'p';
				row[1] = 'f';
				if (p)
					row[2] = (unsigned char)("wxy"[p - 1]);
				for (size_t i = 0; i < len; i++, x /= 4)
					row[rl + len - 1 - i] = palpha[x % 4];
				k.rowlen = rl + len;
				tl = ikey_encode(t, &k);
				for (want = 0; want < nk &&
				     ikey_cmp(keys[want], klen[want], t, tl) < 0;
				     want++)
					;
				iter_seek(it, t, tl);
				probes++;
				if (want == nk) {
					bad += iter_valid(it) ||
					       iter_status(it) != CF_OK;
				} else {
					size_t n;
					const unsigned char *got;
					if (!iter_valid(it)) {
						bad++;
						continue;
					}
					got = iter_key(it, &n);
					bad += n != klen[want] ||
					       memcmp(got, keys[want], n);
				}
			}
		}
	}
	is_int(bad, 0, "tags: %zu probe rows seek to the first cell at or "
	       "after them", probes);
	iter_destroy(it);
	sst_unref(s);
out:
	free(keys);
}

/* Steps down the file as a reversed scan does (engine/scan.c): for each
 * entry from the last, a seek to the one before it, then forward over
 * it and one more (reading a row forward to find its end), which at a
 * block's first entry crosses back into the block above.  Without the
 * block held before, each such step decoded the blocks on both sides
 * again; with it, a scan that fills no cache reads each block from disk
 * once (twice for those a seek of the next step lands in after the
 * crossing: at most 2 a block). */
static void test_reverse_steps(void)
{
	const char *path = path_of("reverse.sst");
	struct ds d;
	struct sst_meta m;
	struct layout l;
	struct sst *s;
	struct iter *it;
	uint64_t before, reads;
	size_t bad = 0;

	ds_make(&d, 3000, 0);
	if (build(path, &d, CF_COMPRESS_SNAPPY, CF_BLOOM_ROW, 2048, &m))
		bail("cannot build %s", path);
	sst_meta_release(&m);
	read_layout(path, &l);
	if (sst_open(path, 9, NULL, 0, &s) || !(it = sst_iter(s, 0)))
		bail("cannot open %s", path);
	before = sst_blocks_read();
	for (size_t i = d.n; i-- > 1;) {
		size_t n;
		const unsigned char *k = ds_key(&d, i, &n);
		iter_seek_lt(it, k, n);
		if (!at_entry(it, &d, i - 1)) {
			bad++;
			continue;
		}
		iter_next(it);
		bad += !at_entry(it, &d, i);
		iter_next(it);
		bad += i + 1 < d.n ? !at_entry(it, &d, i + 1) : iter_valid(it);
	}
	reads = sst_blocks_read() - before;
	is_int(bad, 0, "stepping down: every seek and step found its entry");
	ok(reads <= 2 * (uint64_t)l.ndata,
	   "stepping down %zu blocks read %" PRIu64 " from disk (at most "
	   "twice each)", l.ndata, reads);
	iter_destroy(it);
	sst_unref(s);
	layout_free(&l);
	ds_free(&d);
}

/* seek_lt against the model (the last entry below the target) for
 * targets in every order a reader makes: runs stepping down by 1 to 5
 * entries (answered from the block's last walk), jumps anywhere, keys
 * just after an entry, a key before the first, past the last, and NULL,
 * with filling and non-filling iterators. */
static void test_seek_lt_model(void)
{
	const char *path = path_of("seeklt.sst");
	unsigned char kbuf[512];
	uint64_t st = seed ^ 0x5eed;
	struct ds d;
	struct sst_meta m;
	struct sst *s;
	struct cache *c;
	size_t bad = 0, asked = 0;

	ds_make(&d, 4000, 0);
	if (build(path, &d, CF_COMPRESS_SNAPPY, CF_BLOOM_ROW, 1024, &m))
		bail("cannot build %s", path);
	sst_meta_release(&m);
	if (cache_new((size_t)1 << 20, &c) || sst_open(path, 11, c, 0, &s))
		bail("cannot open %s", path);
	for (int fill = 0; fill < 2; fill++) {
		struct iter *it = sst_iter(s, fill);
		size_t i = d.n;	/* the target: key i (or just after it) */
		if (!it)
			bail("out of memory");
		for (int step = 0; step < 6000; step++) {
			uint64_t r = mix(st += 0x9e3779b97f4a7c15ULL);
			const unsigned char *k;
			size_t n, want;	/* want: d.n when none */
			int after = (int)(r >> 40) % 4 == 0;
			if (r % 8 == 0 || i < 6)
				i = (size_t)(r >> 8) % d.n;	/* a jump */
			else
				i -= 1 + (size_t)(r >> 16) % 5;	/* a step */
			if (step % 1000 == 999) {
				iter_seek_lt(it, NULL, 0);
				bad += !at_entry(it, &d, d.n - 1);
				asked++;
				continue;
			}
			if (after) {
				n = key_after(&d, i, kbuf);
				k = kbuf;
				want = i;
			} else {
				k = ds_key(&d, i, &n);
				want = i ? i - 1 : d.n;
			}
			iter_seek_lt(it, k, n);
			bad += want == d.n ? iter_valid(it) ||
					     iter_status(it) != CF_OK
					   : !at_entry(it, &d, want);
			asked++;
			/* and on from there as a reversed scan reads */
			if (want != d.n && r % 3 == 0) {
				iter_next(it);
				bad += want + 1 < d.n ? !at_entry(it, &d, want + 1)
						      : iter_valid(it);
			}
		}
		iter_destroy(it);
	}
	is_int(bad, 0, "seek_lt agrees with the model (%zu seeks)", asked);
	sst_unref(s);
	cache_free(c);
	ds_free(&d);
}

static void test_cache_use(void)
{
	const char *path = path_of("cache.sst");
	struct ds d;
	struct sst_meta m;
	struct layout l;
	struct sst *s, *s2;
	struct cache *c;
	struct iter *it;
	uint64_t before;
	int rc;

	ds_make(&d, 3000, 0);
	if (build(path, &d, CF_COMPRESS_SNAPPY, CF_BLOOM_ROW, 2048, &m))
		bail("cannot build %s", path);
	sst_meta_release(&m);
	read_layout(path, &l);
	if (cache_new((size_t)64 << 20, &c) || sst_open(path, 5, c, 0, &s))
		bail("cannot open %s", path);

	before = sst_blocks_read();
	is_int(scan(s, &d, 0, &rc), d.n, "scan without filling the cache");
	is_int(sst_blocks_read() - before, l.ndata,
	       "it read every block from disk");
	is_int(cache_usage(c), 0, "and left the cache empty");
	before = sst_blocks_read();
	scan(s, &d, 1, &rc);
	is_int(sst_blocks_read() - before, l.ndata,
	       "a filling scan reads every block too");
	ok(cache_usage(c) > 0, "and fills the cache (%zu bytes)",
	   cache_usage(c));
	before = sst_blocks_read();
	is_int(scan(s, &d, 0, &rc), d.n, "a non-filling scan, warm");
	is_int(sst_blocks_read() - before, 0, "reads nothing from disk");
	ok(cache_hits(c) >= l.ndata, "cache hits counted");

	/* one cache, two files: the file id separates them */
	if (sst_open(path, 6, c, 1, &s2))
		bail("cannot open %s again", path);
	before = sst_blocks_read();
	is_int(scan(s2, &d, 1, &rc), d.n, "second handle, other file id");
	is_int(sst_blocks_read() - before, l.ndata, "its blocks are its own");

	/* obsolete: the file goes when the last reference does */
	it = sst_iter(s2, 1);
	iter_seek_first(it);
	sst_set_obsolete(s2);
	sst_unref(s2);
	ok(env_exists(path), "an iterator keeps an obsolete file");
	ok(at_entry(it, &d, 0), "and can still read it");
	iter_next(it);
	ok(at_entry(it, &d, 1), "and move on");
	sst_ref(s);
	sst_unref(s);
	iter_destroy(it);
	ok(!env_exists(path), "the last unref deletes an obsolete file");
	is_int(scan(s, &d, 1, &rc), d.n,
	       "the other open handle still reads (open fd)");
	sst_unref(s);
	is_int(cache_usage(c), 0, "both files' blocks left the cache");
	cache_free(c);
	layout_free(&l);
	ds_free(&d);
}

/* Readers in 4 threads share one sst and a small cache (evicting all
 * the time); each checks what it reads. */
struct reader {
	struct sst *s;
	const struct ds *d;
	uint64_t seed;
	size_t bad;
	unsigned char *vb;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct iter *it;
	size_t n, ops = SANITIZED ? 3000 : 20000;

	sst_ref(r->s);
	it = sst_iter(r->s, (int)(r->seed & 1));
	if (!it) {
		r->bad++;
		sst_unref(r->s);
		return NULL;
	}
	for (size_t op = 0; op < ops; op++) {
		size_t i = (size_t)(mix(r->seed + op) % r->d->n);
		const unsigned char *k = ds_key(r->d, i, &n);
		iter_seek(it, k, n);
		for (size_t j = i; j < i + 5 && j < r->d->n; j++) {
			size_t gk, gv, vn = val_len(r->d, j), kn;
			const unsigned char *key = ds_key(r->d, j, &kn);
			if (!iter_valid(it)) {
				r->bad++;
				break;
			}
			iter_key(it, &gk);
			iter_value(it, &gv);
			make_val(j, r->vb, vn);
			if (gk != kn || memcmp(iter_key(it, &gk), key, kn) ||
			    gv != vn || (vn && memcmp(iter_value(it, &gv),
						      r->vb, vn)))
				r->bad++;
			iter_next(it);
		}
	}
	iter_destroy(it);
	sst_unref(r->s);
	return NULL;
}

static void test_threads(void)
{
	const char *path = path_of("threads.sst");
	struct reader r[4];
	pthread_t t[4];
	struct ds d;
	struct sst_meta m;
	struct sst *s;
	struct cache *c;
	size_t bad = 0;

	ds_make(&d, 20000, 0);
	if (build(path, &d, CF_COMPRESS_SNAPPY, CF_BLOOM_ROW, 1024, &m))
		bail("cannot build %s", path);
	sst_meta_release(&m);
	if (cache_new((size_t)2 << 20, &c) || sst_open(path, 3, c, 0, &s))
		bail("cannot open %s", path);
	for (int i = 0; i < 4; i++) {
		r[i].s = s;
		r[i].d = &d;
		r[i].seed = seed * 1000 + (uint64_t)i;
		r[i].bad = 0;
		r[i].vb = malloc(VBUF_SIZE);
		if (!r[i].vb || pthread_create(&t[i], NULL, reader_main, &r[i]))
			bail("cannot start reader %d", i);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		bad += r[i].bad;
		free(r[i].vb);
	}
	is_int(bad, 0, "4 threads: every seek and next read the right cell");
	ok(cache_usage(c) <= ((size_t)2 << 20), "4 threads: cache within "
	   "capacity (%zu)", cache_usage(c));
	diag("4 threads: cache hits %llu, misses %llu",
	     (unsigned long long)cache_hits(c),
	     (unsigned long long)cache_misses(c));
	sst_unref(s);
	is_int(cache_usage(c), 0, "4 threads: last unref empties the cache");
	cache_free(c);
	ds_free(&d);
}

/* 1M cells of 16-byte rows and 100-byte values: timings only. */
static void test_speed(void)
{
	const char *path = path_of("speed.sst");
	size_t n = SANITIZED ? 200000 : 1000000, found = 0;
	size_t seeks = SANITIZED > 1 ? 50000 : 200000;
	struct sst_build_opts o = { 0, CF_COMPRESS_SNAPPY, CF_BLOOM_ROW, 0, 0 };
	struct sst_builder *b;
	struct sst_meta m;
	struct sst *s;
	struct cache *c;
	struct iter *it;
	unsigned char k[128], v[100];
	char row[17];
	struct ikey ik = { .fam = (const unsigned char *)"f", .famlen = 1,
			   .qual = (const unsigned char *)"c", .qlen = 1,
			   .ts = 1700000000000, .type = KT_PUT };
	size_t kn;
	double t0, t;
	int rc = 0;
	uint64_t r = seed;

	ik.row = (const unsigned char *)row;
	ik.rowlen = 16;
	if (sst_builder_open(path, &o, &b))
		bail("cannot create %s", path);
	t0 = now();
	for (size_t i = 0; i < n && !rc; i++) {
		snprintf(row, sizeof row, "%016zu", i * 7);
		ik.seq = i + 1;
		kn = ikey_encode(k, &ik);
		make_val(i, v, sizeof v);
		rc = sst_builder_add(b, k, kn, v, sizeof v);
	}
	rc = rc ? rc : sst_builder_finish(b, &m);
	t = now() - t0;
	if (!is_int(rc, CF_OK, "speed: %zu cells built", n))
		return;
	diag("speed: build %zu cells (16-byte rows, 100-byte values, snappy, "
	     "row bloom): %.3f s, %.0f cells/s, file %.1f MiB", n, t,
	     (double)n / t, (double)m.file_size / 1048576.0);
	sst_meta_release(&m);
	if (cache_new((size_t)256 << 20, &c) || sst_open(path, 1, c, 0, &s))
		bail("cannot open %s", path);
	it = sst_iter(s, 1);
	t0 = now();
	for (iter_seek_first(it); iter_valid(it); iter_next(it))
		found++;
	t = now() - t0;
	is_int(found, n, "speed: scan finds every cell");
	diag("speed: cold scan %.3f s (%.0f ns/cell)", t, t * 1e9 / n);
	found = 0;
	t0 = now();
	for (size_t i = 0; i < seeks; i++) {
		size_t j = (size_t)(mix(r++) % n);
		snprintf(row, sizeof row, "%016zu", j * 7);
		ik.seq = j + 1;
		kn = ikey_encode(k, &ik);
		iter_seek(it, k, kn);
		if (iter_valid(it)) {
			size_t gn;
			const unsigned char *g = iter_key(it, &gn);
			found += gn == kn && memcmp(g, k, kn) == 0;
		}
	}
	t = now() - t0;
	is_int(found, seeks, "speed: every random seek finds its cell");
	diag("speed: %zu random seeks, warm cache: %.2f us/seek", seeks,
	     t * 1e6 / (double)seeks);
	t0 = now();
	for (size_t i = 0; i < seeks; i++) {
		snprintf(row, sizeof row, "%016zu", (size_t)(mix(r++) % n) * 7 + 3);
		found += sst_may_have_row(s, row, 16);
	}
	t = now() - t0;
	diag("speed: %zu bloom probes of absent rows: %.3f us each", seeks,
	     t * 1e6 / (double)seeks);
	iter_destroy(it);
	sst_unref(s);
	cache_free(c);
	env_unlink(path);
}

int main(void)
{
	const char *sd = getenv("CELLFS_SEED");

	seed = sd ? strtoull(sd, NULL, 0) : 77;
	diag("seed %llu (set CELLFS_SEED to change)",
	     (unsigned long long)seed);
	dir = tap_tmpdir("sst");
	vbuf = malloc(VBUF_SIZE);
	if (!vbuf)
		bail("out of memory");

	test_seal();
	test_empty();
	round_trip("one.sst", 1, 0, CF_COMPRESS_NONE, CF_BLOOM_ROWCOL, 0, 1);
	round_trip("small-none.sst", 20000, 1, CF_COMPRESS_NONE,
		   CF_BLOOM_NONE, 1024, 1);
	round_trip("small-snappy.sst", 20000, 1, CF_COMPRESS_SNAPPY,
		   CF_BLOOM_NONE, 1024, 1);
	ok(file_size(path_of("small-snappy.sst")) <
	   file_size(path_of("small-none.sst")) * 9 / 10,
	   "snappy makes the file smaller (%llu vs %llu bytes)",
	   (unsigned long long)file_size(path_of("small-snappy.sst")),
	   (unsigned long long)file_size(path_of("small-none.sst")));
	round_trip("small-zstd.sst", 20000, 1, CF_COMPRESS_ZSTD,
		   CF_BLOOM_ROW, 1024, 1);
	ok(file_size(path_of("small-zstd.sst")) <
	   file_size(path_of("small-snappy.sst")),
	   "zstd makes the file smaller than snappy (%llu vs %llu bytes)",
	   (unsigned long long)file_size(path_of("small-zstd.sst")),
	   (unsigned long long)file_size(path_of("small-snappy.sst")));
	round_trip("big-zstd.sst", BIG_N / 4, 1, CF_COMPRESS_ZSTD,
		   CF_BLOOM_ROWCOL, 4096, SANITIZED ? 3 * SANITIZED : 1);
	round_trip("big-row.sst", BIG_N, 1, CF_COMPRESS_SNAPPY, CF_BLOOM_ROW,
		   4096, SANITIZED ? 3 * SANITIZED : 1);
	round_trip("big-rowcol.sst", BIG_N, 1, CF_COMPRESS_NONE,
		   CF_BLOOM_ROWCOL, 0, SANITIZED ? 5 * SANITIZED : 1);
	test_refused_keys();
	test_corruption();
	test_zstd_frames();
	test_every_byte(CF_COMPRESS_SNAPPY);
	test_every_byte(CF_COMPRESS_ZSTD);
	test_faults();
	test_index_tags();
	test_cache_use();
	test_reverse_steps();
	test_seek_lt_model();
	test_threads();
	test_speed();

	free(vbuf);
	tap_rmdir(dir);
	return done_testing();
}
