/*
 * xorshift.h: the random numbers of the randomized tests (header only,
 * like tap.h): a xorshift64 generator whose state each test seeds (and
 * prints, so that a failure replays).
 *
 *   rng = seed | 1;          seeds it (the state must not be zero)
 *   rnd(n)                   the next number below n (0 when n is 0)
 */
#ifndef CF_TEST_XORSHIFT_H
#define CF_TEST_XORSHIFT_H

#include <stdint.h>

static uint64_t rng;

static inline uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? rng % n : 0;
}

#endif
