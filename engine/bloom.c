/*
 * bloom.c: bloom filters (layout in docs/sst_format.md, "Filter block").
 *
 * The hash is ours and part of the format: 8-byte little-endian words
 * folded in with a multiply and rotate, then a final avalanche so that
 * both 32-bit halves are usable as independent hashes.
 *
 * Two layouts.  The one written (blocked, as RocksDB's format_version 5
 * filters and the memstore's row filter): the low half of the hash picks
 * one 512-bit line, fastrange(h1, nlines), and all k probes fall in it,
 * each the top 9 bits of h2 multiplied on by a 32-bit odd constant; so a
 * probe costs one cache line, not k.  At 10 bits a key that takes the
 * false positives from about 0.8% to about 1%.  The classic one (files
 * written before): probe i is bit fastrange(h1 + i * h2) of the whole
 * filter (32-bit arithmetic); still read.  fastrange maps a 32-bit value
 * to [0, n) by a multiply instead of a division.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/bloom.h"
#include "util/coding.h"
#include "util/err.h"

#define K1 UINT64_C(0x9e3779b97f4a7c15)
#define K2 UINT64_C(0xc2b2ae3d27d4eb4f)
#define K3 UINT64_C(0xd6e8feb86659fd93)
#define SEED_ROW UINT64_C(0x726f77)
#define SEED_ROWCOL UINT64_C(0x726f77636f6c)
/* Filters are addressed by 32-bit bit numbers. */
#define BLOOM_MAX_BITS (UINT32_MAX - 7u)
/* The trailer byte of a blocked filter: this bit, then k. */
#define BLOCKED 0x80
#define LINE_BITS 512
/* The odd multiplier that moves a blocked filter's probe on (the
 * golden ratio's 32 bits). */
#define PROBE_MUL 0x9e3779b9u

static inline uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t avalanche(uint64_t h)
{
	h ^= h >> 32;
	h *= K3;
	h ^= h >> 29;
	h *= K3;
	h ^= h >> 32;
	return h;
}

uint64_t bloom_hash(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = seed ^ ((uint64_t)n * K1);
	uint64_t w;

	for (; n >= 8; s += 8, n -= 8)
		h = rotl(h ^ (dec_u64le(s) * K2), 29) * K1;
	if (n) {
		w = 0;
		for (size_t i = 0; i < n; i++)
			w |= (uint64_t)s[i] << (8 * i);
		h = rotl(h ^ (w * K2), 29) * K1;
	}
	return avalanche(h);
}

uint64_t bloom_hash_row(const void *row, size_t rowlen)
{
	return bloom_hash(row, rowlen, SEED_ROW);
}

uint64_t bloom_hash_rowcol(const void *row, size_t rowlen, const void *qual,
			   size_t qlen)
{
	return bloom_hash(qual, qlen, bloom_hash(row, rowlen, SEED_ROWCOL));
}

void bloom_builder_init(struct bloom_builder *b, int bits_per_key)
{
	memset(b, 0, sizeof *b);
	b->bits_per_key = bits_per_key > 0 ? bits_per_key : 10;
}

void bloom_builder_release(struct bloom_builder *b)
{
	free(b->h);
	b->h = NULL;
	b->n = b->cap = 0;
}

int bloom_builder_add(struct bloom_builder *b, uint64_t h)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		uint64_t *p = realloc(b->h, cap * sizeof *p);
		if (!p)
			return CF_ENOMEM;
		b->h = p;
		b->cap = cap;
	}
	b->h[b->n++] = h;
	return CF_OK;
}

static inline uint32_t fastrange(uint32_t x, uint32_t n)
{
	return (uint32_t)(((uint64_t)x * n) >> 32);
}

/* k = bits_per_key * ln 2 minimises false positives */
static int probes_for(int bits_per_key)
{
	int k = bits_per_key * 69 / 100;

	return k < 1 ? 1 : k > 30 ? 30 : k;
}

/* The line of a blocked filter that h falls in, and its probes. */
static inline const unsigned char *line_of(const unsigned char *bits,
					   uint32_t nlines, uint64_t h)
{
	return bits + (size_t)fastrange((uint32_t)h, nlines) * (LINE_BITS / 8);
}

int bloom_builder_finish(struct bloom_builder *b, struct buf *out)
{
	uint64_t bits = (uint64_t)b->n * (uint64_t)b->bits_per_key;
	uint64_t nlines = (bits + LINE_BITS - 1) / LINE_BITS;
	size_t nbytes;
	unsigned char *f;
	int k = probes_for(b->bits_per_key), rc;

	if (nlines < 1)
		nlines = 1;
	if (nlines > BLOOM_MAX_BITS / LINE_BITS)
		nlines = BLOOM_MAX_BITS / LINE_BITS;
	nbytes = (size_t)nlines * (LINE_BITS / 8);
	rc = buf_reserve(out, nbytes + 1);
	if (rc)
		return rc;
	f = out->p + out->len;
	memset(f, 0, nbytes);
	for (size_t i = 0; i < b->n; i++) {
		unsigned char *line = (unsigned char *)line_of(
			f, (uint32_t)nlines, b->h[i]);
		uint32_t h2 = (uint32_t)(b->h[i] >> 32);
		for (int j = 0; j < k; j++, h2 *= PROBE_MUL) {
			uint32_t bit = h2 >> 23;
			line[bit >> 3] |= (unsigned char)(1u << (bit & 7));
		}
	}
	f[nbytes] = (unsigned char)(BLOCKED | k);
	out->len += nbytes + 1;
	return CF_OK;
}

int bloom_init(struct bloom *f, const unsigned char *p, size_t n)
{
	int k;

	if (n < 2 || (uint64_t)(n - 1) * 8 > BLOOM_MAX_BITS)
		return CF_ECORRUPT;
	k = p[n - 1] & ~BLOCKED;
	if (k < 1 || k > 30)
		return CF_ECORRUPT;
	f->blocked = (p[n - 1] & BLOCKED) != 0;
	if (f->blocked && (n - 1) % (LINE_BITS / 8))
		return CF_ECORRUPT;	/* not whole lines */
	f->bits = p;
	f->nbits = (uint32_t)((n - 1) * 8);
	f->nlines = f->nbits / LINE_BITS;
	f->k = k;
	return CF_OK;
}

int bloom_may_contain(const struct bloom *f, uint64_t h)
{
	uint32_t h1 = (uint32_t)h, h2 = (uint32_t)(h >> 32);

	if (f->blocked) {
		const unsigned char *line = line_of(f->bits, f->nlines, h);
		for (int j = 0; j < f->k; j++, h2 *= PROBE_MUL) {
			uint32_t bit = h2 >> 23;
			if (!(line[bit >> 3] & (1u << (bit & 7))))
				return 0;
		}
		return 1;
	}
	for (int j = 0; j < f->k; j++, h1 += h2) {
		uint32_t bit = fastrange(h1, f->nbits);
		if (!(f->bits[bit >> 3] & (1u << (bit & 7))))
			return 0;
	}
	return 1;
}
