/*
 * test-bloom.c: bloom filters (engine/bloom.h): no false negatives ever,
 * false positives near the theory (about 1% at 10 bits per key, k = 6,
 * for the blocked filters written; 0.8% for the classic ones of older
 * files), the sizes and layouts of docs/sst_format.md, a stable hash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/bloom.h"
#include "tests/bloom_classic.h"
#include "tests/tap.h"
#include "util/buf.h"
#include "util/err.h"

static uint64_t seed;

static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Key i of a test set: "key-<i>" plus some varying tail, so that lengths
 * vary like real rows do. */
static size_t make_key(char *dst, uint64_t i, int set)
{
	return (size_t)sprintf(dst, "%c-%llu-%.*s", set ? 'b' : 'a',
			       (unsigned long long)i, (int)(i % 13),
			       "abcdefghijklm");
}

static void check_rate(size_t n, int bits_per_key, double max_fp)
{
	struct bloom_builder bb;
	struct bloom f;
	struct buf out = BUF_INIT;
	char key[64];
	size_t misses = 0, fp = 0, probes = 100000;
	size_t want_bytes;

	bloom_builder_init(&bb, bits_per_key);
	for (size_t i = 0; i < n; i++) {
		size_t len = make_key(key, i, 0);
		if (bloom_builder_add(&bb, bloom_hash_row(key, len)))
			bail("out of memory");
	}
	if (bloom_builder_finish(&bb, &out))
		bail("out of memory");
	/* whole 512-bit lines, at least one */
	want_bytes = n * (size_t)bits_per_key <= 512 ? 64 :
		     (n * (size_t)bits_per_key + 511) / 512 * 64;
	is_int(out.len, want_bytes + 1, "n=%zu bits=%d: filter size", n,
	       bits_per_key);
	is_int(bloom_init(&f, out.p, out.len), CF_OK, "n=%zu: filter parses",
	       n);
	for (size_t i = 0; i < n; i++) {
		size_t len = make_key(key, i, 0);
		if (!bloom_may_contain(&f, bloom_hash_row(key, len)))
			misses++;
	}
	is_int(misses, 0, "n=%zu bits=%d: no false negatives", n,
	       bits_per_key);
	for (size_t i = 0; i < probes; i++) {
		size_t len = make_key(key, i, 1);
		fp += (size_t)bloom_may_contain(&f, bloom_hash_row(key, len));
	}
	diag("n=%zu bits/key=%d k=%d: false positives %.3f%%", n,
	     bits_per_key, f.k, 100.0 * (double)fp / (double)probes);
	ok((double)fp / (double)probes < max_fp,
	   "n=%zu bits=%d: false positive rate %.4f below %.4f", n,
	   bits_per_key, (double)fp / (double)probes, max_fp);
	bloom_builder_release(&bb);
	buf_release(&out);
}

static void test_empty(void)
{
	struct bloom_builder bb;
	struct bloom f;
	struct buf out = BUF_INIT;
	size_t hits = 0;

	bloom_builder_init(&bb, 10);
	is_int(bloom_builder_finish(&bb, &out), CF_OK, "empty filter built");
	is_int(out.len, 65, "empty filter: one 512-bit line and k");
	is_int(out.p[64], 0x80 | 6,
	       "blocked (0x80), k = 10 * 0.69 rounded down");
	is_int(bloom_init(&f, out.p, out.len), CF_OK, "empty filter parses");
	for (uint64_t i = 0; i < 1000; i++)
		hits += (size_t)bloom_may_contain(&f, next_rand(&seed));
	is_int(hits, 0, "empty filter answers no to everything");
	bloom_builder_release(&bb);
	buf_release(&out);
}

static void test_parse_errors(void)
{
	unsigned char p[65] = { 0 };
	struct bloom f;

	is_int(bloom_init(&f, p, 1), CF_ECORRUPT, "1-byte filter refused");
	is_int(bloom_init(&f, p, 0), CF_ECORRUPT, "empty block refused");
	p[8] = 0;
	is_int(bloom_init(&f, p, 9), CF_ECORRUPT, "k = 0 refused");
	p[8] = 31;
	is_int(bloom_init(&f, p, 9), CF_ECORRUPT, "k = 31 refused");
	p[8] = 30;
	is_int(bloom_init(&f, p, 9), CF_OK, "k = 30 accepted");
	is_int(f.nbits, 64, "8 bytes make 64 bits");
	is_int(f.blocked, 0, "a trailer of k alone: the classic layout");
	p[8] = 0x80 | 6;
	is_int(bloom_init(&f, p, 9), CF_ECORRUPT,
	       "blocked filter of 8 bytes (not a whole line) refused");
	p[64] = 0x80;
	is_int(bloom_init(&f, p, 65), CF_ECORRUPT, "blocked, k = 0 refused");
	p[64] = 0x80 | 31;
	is_int(bloom_init(&f, p, 65), CF_ECORRUPT, "blocked, k = 31 refused");
	p[64] = 0xc0 | 6;
	is_int(bloom_init(&f, p, 65), CF_ECORRUPT,
	       "an unknown trailer bit refused");
	p[64] = 0x80 | 6;
	is_int(bloom_init(&f, p, 65), CF_OK, "blocked, one line, accepted");
	ok(f.blocked && f.nlines == 1 && f.k == 6, "one line, k = 6");
}

/* A classic filter (the layout of files written before the blocked
 * one), built from docs/sst_format.md's words, not from bloom.c: the
 * reader must still answer for it exactly as the old writer meant. */
static void test_classic(void)
{
	const size_t n = 20000, nbytes = n * 10 / 8;
	unsigned char *p = calloc(nbytes + 1, 1);
	struct bloom f;
	char key[64];
	size_t misses = 0, fp = 0, hits = 0;

	if (!p)
		bail("out of memory");
	for (size_t i = 0; i < n; i++) {
		size_t len = make_key(key, i, 0);
		bloom_classic_add(p, nbytes, 6, bloom_hash_row(key, len));
	}
	p[nbytes] = 6;
	is_int(bloom_init(&f, p, nbytes + 1), CF_OK, "classic filter parses");
	is_int(f.blocked, 0, "classic: not blocked");
	for (size_t i = 0; i < n; i++) {
		size_t len = make_key(key, i, 0);
		if (!bloom_may_contain(&f, bloom_hash_row(key, len)))
			misses++;
	}
	is_int(misses, 0, "classic: every key added is found");
	for (size_t i = 0; i < 100000; i++) {
		size_t len = make_key(key, i, 1);
		fp += (size_t)bloom_may_contain(&f, bloom_hash_row(key, len));
	}
	diag("classic, 10 bits/key, k=6: false positives %.3f%%",
	     100.0 * (double)fp / 100000);
	ok(fp < 1200, "classic: false positives %zu of 100000 (< 1.2%%)", fp);
	/* a filter with one bit cleared must say no to some key it held:
	 * the probes reach the bits the words say */
	for (size_t i = 0; i < nbytes && !hits; i++)
		if (p[i]) {
			p[i] = 0;
			for (size_t j = 0; j < n; j++) {
				size_t len = make_key(key, j, 0);
				hits += !bloom_may_contain(
					&f, bloom_hash_row(key, len));
			}
		}
	ok(hits > 0, "classic: clearing a byte loses keys (%zu)", hits);
	free(p);
}

/* The blocked layout, built from the words too: each key's k probes lie
 * in the line fastrange(h1, nlines), at the top 9 bits of h2, h2 *
 * 0x9e3779b9, ... */
static void test_blocked_layout(void)
{
	struct bloom_builder bb;
	struct buf out = BUF_INIT;
	const size_t n = 5000;
	char key[64];
	unsigned char *mine;
	size_t nbytes, nlines;

	bloom_builder_init(&bb, 10);
	for (size_t i = 0; i < n; i++) {
		size_t len = make_key(key, i, 0);
		if (bloom_builder_add(&bb, bloom_hash_row(key, len)))
			bail("out of memory");
	}
	if (bloom_builder_finish(&bb, &out))
		bail("out of memory");
	nlines = (n * 10 + 511) / 512;
	nbytes = nlines * 64;
	is_int(out.len, nbytes + 1, "blocked: %zu lines of 64 bytes, then k",
	       nlines);
	if (!(mine = calloc(nbytes, 1)))
		bail("out of memory");
	for (size_t i = 0; i < n; i++) {
		size_t len = make_key(key, i, 0);
		uint64_t h = bloom_hash_row(key, len);
		size_t line = (size_t)(((uint64_t)(uint32_t)h * nlines) >> 32);
		uint32_t h2 = (uint32_t)(h >> 32);
		for (int j = 0; j < 6; j++, h2 *= 0x9e3779b9u) {
			uint32_t bit = h2 >> 23;
			mine[line * 64 + bit / 8] |=
				(unsigned char)(1u << (bit % 8));
		}
	}
	ok(memcmp(mine, out.p, nbytes) == 0,
	   "blocked: the bits are those docs/sst_format.md gives");
	is_int(out.p[nbytes], 0x80 | 6, "blocked: trailer 0x80 | k");
	free(mine);
	bloom_builder_release(&bb);
	buf_release(&out);
}

static void test_hash(void)
{
	/* the hash is part of the file format: these values must never
	 * change, or old files would answer wrongly */
	ok(bloom_hash_row("", 0) != bloom_hash_row("\0", 1),
	   "empty row differs from a NUL row");
	ok(bloom_hash("row1", 4, 0) != bloom_hash("row1", 4, 1),
	   "seed changes the hash");
	ok(bloom_hash("a\0", 2, 0) != bloom_hash("a", 1, 0),
	   "length is mixed in");
	ok(bloom_hash_rowcol("ab", 2, "c", 1) !=
	   bloom_hash_rowcol("a", 1, "bc", 2),
	   "row/qualifier boundary matters");
	ok(bloom_hash_row("r", 1) != bloom_hash_rowcol("r", 1, "", 0),
	   "row and rowcol hashes differ");
	diag("bloom_hash(\"row1\", 4, 0) = %#llx",
	     (unsigned long long)bloom_hash("row1", 4, 0));
	is_int(bloom_hash("row1", 4, 0) == UINT64_C(0xd911008aa30769fa), 1,
	       "hash of \"row1\" is stable");
	is_int(bloom_hash("0123456789abcdefXYZ", 19, 7) ==
	       UINT64_C(0xb8ad5800e3d2268a), 1,
	       "hash of a 19-byte key is stable");
}

int main(void)
{
	const char *s = getenv("CELLFS_SEED");

	seed = s ? strtoull(s, NULL, 0) : 20240601;
	diag("seed %llu (set CELLFS_SEED to change)",
	     (unsigned long long)seed);
	test_hash();
	test_empty();
	test_parse_errors();
	test_classic();
	test_blocked_layout();
	check_rate(1, 10, 0.02);
	check_rate(100, 10, 0.03);
	check_rate(10000, 10, 0.02);
	check_rate(200000, 10, 0.02);
	check_rate(50000, 20, 0.001);
	check_rate(50000, 5, 0.15);
	check_rate(10000, 1, 0.75);
	return done_testing();
}
