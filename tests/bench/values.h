/*
 * values.h: the values the benchmarks write, as hard to compress as
 * LevelDB's and RocksDB's db_bench make theirs (compression ratio 0.5).
 *
 * A 1 MiB pool is filled once from a fixed-seed generator in pieces of
 * 100 bytes; each piece is 50 random printable bytes (95 symbols, about
 * 6.6 bits each) followed by those 50 bytes again, so a compressor can
 * halve it and no more.  bench_values_init_ratio(r) makes r * 100 bytes
 * of each piece random and repeats them (db_bench's CompressibleString):
 * 1.0 gives values no compressor can shrink.  bench_value(i) is the 100 bytes of piece i (a
 * value depends on its key only, so every store gets the same bytes);
 * bench_slice(i) is value i cut from the pool as db_bench cuts short
 * values; bench_fill() copies the pool over a larger buffer.
 *
 * Earlier values were 26 letters in a period-26 pattern, repeated: snappy
 * shrank them about ten times, which favoured every store that compresses
 * (docs/performance.md says what changed).  Header-only: each benchmark
 * program is one translation unit.
 */
#ifndef CELLFS_BENCH_VALUES_H
#define CELLFS_BENCH_VALUES_H

#include <stdint.h>
#include <string.h>

#define BENCH_PIECE 100
#define BENCH_POOL (1024 * 1024 / BENCH_PIECE * BENCH_PIECE)

static char bench_pool[BENCH_POOL];

/* splitmix64: a fixed seed gives the same pool in every run */
static inline uint64_t bench_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* ratio in (0, 1]: the part of each piece that is random */
static inline void bench_values_init_ratio(double ratio)
{
	uint64_t s = 301;
	size_t raw = (size_t)(ratio * BENCH_PIECE + 0.5);

	if (raw < 1)
		raw = 1;
	if (raw > BENCH_PIECE)
		raw = BENCH_PIECE;
	for (size_t p = 0; p < BENCH_POOL; p += BENCH_PIECE) {
		for (size_t j = 0; j < raw; j++)
			bench_pool[p + j] = (char)(' ' + bench_next(&s) % 95);
		for (size_t j = raw; j < BENCH_PIECE; j++)
			bench_pool[p + j] = bench_pool[p + j - raw];
	}
}

static inline void bench_values_init(void)
{
	bench_values_init_ratio(0.5);
}

/* Copies the len bytes of value i (len <= BENCH_PIECE) into v. */
static inline void bench_value(uint64_t i, char *v, size_t len)
{
	/* a multiplicative hash spreads neighbouring keys over the pool */
	uint64_t piece = (i * 0x9e3779b97f4a7c15ULL >> 20) %
			 (BENCH_POOL / BENCH_PIECE);
	memcpy(v, bench_pool + piece * BENCH_PIECE, len);
}

/* Copies value i of len bytes (len <= BENCH_PIECE) as db_bench's
 * RandomGenerator::Generate hands out values: consecutive slices of the
 * pool, so that values shorter than a piece are compressible only
 * together, as the pieces they cut are (value i is the i-th slice). */
static inline void bench_slice(uint64_t i, char *v, size_t len)
{
	uint64_t per = BENCH_POOL / len;

	memcpy(v, bench_pool + (size_t)(i % per) * len, len);
}

/* Fills dst[0..len) from the pool, starting at piece `from`. */
static inline void bench_fill(char *dst, size_t len, uint64_t from)
{
	size_t off = (size_t)(from % (BENCH_POOL / BENCH_PIECE)) * BENCH_PIECE;
	while (len) {
		size_t n = BENCH_POOL - off < len ? BENCH_POOL - off : len;
		memcpy(dst, bench_pool + off, n);
		dst += n;
		len -= n;
		off = 0;
	}
}

#endif
