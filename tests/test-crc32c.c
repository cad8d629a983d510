/*
 * test-crc32c.c: CRC-32C (util/crc32c.h): the check values of RFC 3720
 * (iSCSI, B.4) and the usual "123456789"; the CPU's instruction, in one
 * chain and in three lanes joined (buffers of 768 bytes and more), gives
 * what the table gives for every length up to 5000 at every alignment
 * of 8, and for random buffers up to 64 KiB; extending in pieces gives
 * the CRC of the whole.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tap.h"
#include "util/crc32c.h"

static uint64_t seed;

static uint64_t next_rand(void)
{
	uint64_t z = (seed += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static void test_vectors(void)
{
	unsigned char b[32];

	is_int(crc32c("123456789", 9), 0xe3069283u, "\"123456789\"");
	is_int(crc32c_extend_portable(0, "123456789", 9), 0xe3069283u,
	       "\"123456789\", table");
	memset(b, 0, sizeof b);
	is_int(crc32c(b, 32), 0x8a9136aau, "32 zero bytes (RFC 3720)");
	memset(b, 0xff, sizeof b);
	is_int(crc32c(b, 32), 0x62a8ab43u, "32 bytes 0xff (RFC 3720)");
	for (int i = 0; i < 32; i++)
		b[i] = (unsigned char)i;
	is_int(crc32c(b, 32), 0x46dd794eu, "0, 1, ..., 31 (RFC 3720)");
	for (int i = 0; i < 32; i++)
		b[i] = (unsigned char)(31 - i);
	is_int(crc32c(b, 32), 0x113fdb5cu, "31, 30, ..., 0 (RFC 3720)");
	is_int(crc32c(b, 0), 0, "no bytes");
}

static void test_lengths(void)
{
	enum { MAX = 5000 };
	unsigned char *buf = malloc(MAX + 8);
	size_t bad = 0, badx = 0;

	if (!buf)
		bail("out of memory");
	for (size_t i = 0; i < MAX + 8; i++)
		buf[i] = (unsigned char)next_rand();
	for (size_t n = 0; n <= MAX; n++) {
		size_t off = n % 8;
		uint32_t c0 = (uint32_t)next_rand();
		bad += crc32c(buf + off, n) !=
		       crc32c_extend_portable(0, buf + off, n);
		badx += crc32c_extend(c0, buf + off, n) !=
			crc32c_extend_portable(c0, buf + off, n);
	}
	is_int(bad, 0, "lengths 0..%d: the instruction gives the table's CRC",
	       MAX);
	is_int(badx, 0, "and extending a CRC, too");
	free(buf);
}

static void test_random(void)
{
	enum { MAX = 65536 };
	unsigned char *buf = malloc(MAX);
	size_t bad = 0, pieces = 0;

	if (!buf)
		bail("out of memory");
	for (int round = 0; round < 200; round++) {
		size_t n = (size_t)(next_rand() % MAX), cut;
		uint32_t whole, part;
		for (size_t i = 0; i < n; i++)
			buf[i] = (unsigned char)next_rand();
		/* runs of zeros and of one byte, which the lanes shift */
		if (round % 3 == 0 && n)
			memset(buf + next_rand() % (n - n / 4),
			       round % 2 ? 0 : 0xff, n / 4);
		whole = crc32c(buf, n);
		bad += whole != crc32c_extend_portable(0, buf, n);
		cut = n ? (size_t)(next_rand() % (n + 1)) : 0;
		part = crc32c_extend(crc32c(buf, cut), buf + cut, n - cut);
		pieces += part != whole;
	}
	is_int(bad, 0, "200 random buffers up to 64 KiB: instruction = table");
	is_int(pieces, 0, "a CRC extended piece by piece is the whole's");
	free(buf);
}

int main(void)
{
	const char *s = getenv("CELLFS_SEED");

	seed = s ? strtoull(s, NULL, 0) : 20261129;
	diag("seed %llu (set CELLFS_SEED to change)",
	     (unsigned long long)seed);
	test_vectors();
	test_lengths();
	test_random();
	return done_testing();
}
