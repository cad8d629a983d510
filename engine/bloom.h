/*
 * bloom.h: the bloom filter of a store file (docs/sst_format.md, "Filter
 * block").  One filter covers the whole file.  A key is reduced to one
 * 64-bit hash, so the key bytes are hashed only once: its low half picks
 * a 512-bit line of the filter and its high half the k probes inside it
 * (blocked filters, written since 2026-11-29: one cache line a lookup
 * when the filter is 64-byte aligned); filters written before spread
 * the probes over the whole filter by double hashing (h1 + i * h2), and
 * are still read.
 *
 * False negatives never happen; false positives come at about 1% with
 * the default 10 bits per key.
 */
#ifndef CF_BLOOM_H
#define CF_BLOOM_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* A 64-bit hash of p[0..n) under seed (the length is mixed in, so
 * chained calls separate their inputs).  Stable: it is part of the file
 * format. */
uint64_t bloom_hash(const void *p, size_t n, uint64_t seed);
/* The hash of a row (CF_BLOOM_ROW files). */
uint64_t bloom_hash_row(const void *row, size_t rowlen);
/* The hash of a row and qualifier (CF_BLOOM_ROWCOL files). */
uint64_t bloom_hash_rowcol(const void *row, size_t rowlen, const void *qual,
			   size_t qlen);

/* Collects hashes, then sizes and writes the filter.  A plain value. */
struct bloom_builder {
	uint64_t *h;
	size_t n, cap;
	int bits_per_key;
};

void bloom_builder_init(struct bloom_builder *b, int bits_per_key);
void bloom_builder_release(struct bloom_builder *b);
/* Adds one key's hash (the caller adds each distinct key once).
 * CF_ENOMEM. */
int bloom_builder_add(struct bloom_builder *b, uint64_t h);
/* Appends the filter for every hash added so far to out.  CF_ENOMEM. */
int bloom_builder_finish(struct bloom_builder *b, struct buf *out);

/* A filter over bytes owned by someone else. */
struct bloom {
	const unsigned char *bits;
	uint32_t nbits;
	uint32_t nlines;	/* blocked: nbits / 512 */
	int k;
	int blocked;		/* 1: probes in one 512-bit line */
};

/* Parses a filter made by bloom_builder_finish; f points into p, which
 * must outlive it.  CF_ECORRUPT. */
int bloom_init(struct bloom *f, const unsigned char *p, size_t n);
/* 0: no key with hash h was added; 1: maybe. */
int bloom_may_contain(const struct bloom *f, uint64_t h);

#endif
