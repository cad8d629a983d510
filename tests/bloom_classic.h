/*
 * bloom_classic.h: sets one key's bits in a classic bloom filter (the
 * layout of store files written before the blocked one), from
 * docs/sst_format.md's words and not from engine/bloom.c, so that the
 * reader's answer for old files is checked against the format, not
 * against itself.  For tests/test-bloom.c and tests/bench/filter_bench.c.
 * Header-only: each program is one translation unit.
 */
#ifndef CELLFS_TESTS_BLOOM_CLASSIC_H
#define CELLFS_TESTS_BLOOM_CLASSIC_H

#include <stddef.h>
#include <stdint.h>

/* Probe j (0 <= j < k) of hash h sets bit ((h1 + j h2) mod 2^32) *
 * nbits >> 32 of the nbytes bytes at bits. */
static inline void bloom_classic_add(unsigned char *bits, size_t nbytes,
				     int k, uint64_t h)
{
	uint32_t h1 = (uint32_t)h, h2 = (uint32_t)(h >> 32);

	for (int j = 0; j < k; j++, h1 += h2) {
		uint32_t bit = (uint32_t)(((uint64_t)h1 * (nbytes * 8)) >> 32);
		bits[bit / 8] |= (unsigned char)(1u << (bit % 8));
	}
}

#endif
