/*
 * filter_bench.c: a store file's bloom filter lookups, the blocked layout
 * written today (engine/bloom.c) against the classic layout of older
 * files (tests/bloom_classic.h, from docs/sst_format.md's words), in one
 * process,
 * taking turns.
 *
 *   filter_bench [-n KEYS] [-q LOOKUPS] [-r ROUNDS]
 *
 * KEYS (default 1M) 8-byte keys at 10 bits a key; LOOKUPS (default 10M)
 * of keys half of which were added, in random order.  Prints ns a lookup
 * and the share answered "maybe" for each layout and round.  A filter
 * of 1M keys (1.2 MB) stays in the CPU's caches; one of 30M (37 MB) does
 * not, which is where one cache line a lookup instead of up to six
 * shows.  A measurement, not a test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/bloom.h"
#include "tests/bloom_classic.h"
#include "util/buf.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static uint64_t mix(uint64_t z)
{
	z += UINT64_C(0x9e3779b97f4a7c15);
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
	size_t n = 1000000, q = 10000000, nbytes;
	int rounds = 3, opt;
	struct bloom_builder bb;
	struct buf out = BUF_INIT;
	struct bloom blocked, classic;
	unsigned char *a, *c;

	while ((opt = getopt(argc, argv, "n:q:r:")) != -1) {
		if (opt == 'n')
			n = strtoull(optarg, NULL, 10);
		else if (opt == 'q')
			q = strtoull(optarg, NULL, 10);
		else if (opt == 'r')
			rounds = atoi(optarg);
		else {
			fprintf(stderr, "usage: filter_bench [-n KEYS] "
				"[-q LOOKUPS] [-r ROUNDS]\n");
			return 2;
		}
	}
	if (n < 1 || n > 200000000)
		n = 1000000;
	bloom_builder_init(&bb, 10);
	for (uint64_t i = 0; i < n; i++)
		if (bloom_builder_add(&bb, bloom_hash_row(&i, 8)))
			return 1;
	if (bloom_builder_finish(&bb, &out))
		return 1;
	/* as a store file's reader keeps it: 64-byte aligned */
	if (!(a = aligned_alloc(64, (out.len + 63) & ~(size_t)63)))
		return 1;
	memcpy(a, out.p, out.len);
	if (bloom_init(&blocked, a, out.len))
		return 1;
	nbytes = n * 10 / 8;
	if (!(c = calloc(nbytes + 1, 1)))
		return 1;
	for (uint64_t i = 0; i < n; i++)
		bloom_classic_add(c, nbytes, 6, bloom_hash_row(&i, 8));
	c[nbytes] = 6;
	if (bloom_init(&classic, c, nbytes + 1))
		return 1;
	printf("%zu keys (filters of %zu and %zu bytes), %zu lookups, half "
	       "of added keys\n", n, out.len, nbytes + 1, q);
	for (int r = 0; r < rounds; r++)
		for (int w = 0; w < 2; w++) {
			const struct bloom *f = w ? &blocked : &classic;
			size_t yes = 0;
			double t = now();
			for (size_t i = 0; i < q; i++) {
				uint64_t k = mix(i + (size_t)r * q) % n +
					     (i & 1 ? 0 : n + 1);
				yes += (size_t)bloom_may_contain(
					f, bloom_hash_row(&k, 8));
			}
			t = now() - t;
			printf("round %d %-8s %6.1f ns a lookup, %.3f%% maybe\n",
			       r + 1, w ? "blocked" : "classic", t * 1e9 /
			       (double)q, 100.0 * (double)yes / (double)q);
		}
	bloom_builder_release(&bb);
	buf_release(&out);
	free(a);
	free(c);
	return 0;
}
