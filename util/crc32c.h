/*
 * crc32c.h: CRC-32C (Castagnoli), the checksum of every on-disk record.
 * Stored checksums are masked (as LevelDB does) so that a CRC computed
 * over data that itself holds CRCs stays well distributed.
 */
#ifndef CF_CRC32C_H
#define CF_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Extends crc with n bytes at p; start with crc = 0. */
uint32_t crc32c_extend(uint32_t crc, const void *p, size_t n);
/* The same with the table alone, never the CPU's instruction: for
 * tests, which compare the two. */
uint32_t crc32c_extend_portable(uint32_t crc, const void *p, size_t n);

static inline uint32_t crc32c(const void *p, size_t n)
{
	return crc32c_extend(0, p, n);
}

static inline uint32_t crc32c_mask(uint32_t crc)
{
	return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

static inline uint32_t crc32c_unmask(uint32_t m)
{
	uint32_t r = m - 0xa282ead8u;
	return (r >> 17) | (r << 15);
}

#endif
