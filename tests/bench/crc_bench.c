/*
 * crc_bench.c: CRC-32C (util/crc32c.c) of buffers of the sizes the
 * engine checks: a WAL record of a db_bench put (about 100 bytes), a
 * snappy block of db_bench's (about 2,200), a raw 4 KiB block, a 64 KiB
 * one.  The CPU's instruction in three lanes (crc32c) and the table
 * alone (crc32c_extend_portable), ns a buffer, best of ROUNDS.
 *
 *   crc_bench [-r ROUNDS]
 *
 * A measurement, not a test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "util/crc32c.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static unsigned char b[65536];
	static const size_t sizes[] = { 100, 700, 2200, 4096, 65536 };
	int rounds = 5, opt;
	uint32_t sink = 0;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt != 'r') {
			fprintf(stderr, "usage: crc_bench [-r ROUNDS]\n");
			return 2;
		}
		rounds = atoi(optarg);
	}
	srand(1);
	for (size_t i = 0; i < sizeof b; i++)
		b[i] = (unsigned char)rand();
	printf("%8s %14s %14s\n", "bytes", "crc32c ns", "table ns");
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		size_t n = sizes[s], reps = 20000000 / (n + 64);
		double best[2] = { 1e30, 1e30 };
		for (int r = 0; r < rounds; r++)
			for (int w = 0; w < 2; w++) {
				double t = now();
				for (size_t i = 0; i < reps; i++)
					sink += w ? crc32c_extend_portable(
							    0, b, n)
						  : crc32c(b, n);
				t = (now() - t) * 1e9 / (double)reps;
				if (t < best[w])
					best[w] = t;
			}
		printf("%8zu %14.1f %14.1f\n", n, best[0], best[1]);
	}
	return sink == 1;	/* keeps the loops */
}
