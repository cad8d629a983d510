/*
 * coding.h: fixed-width and varint encodings used by every on-disk format.
 * Fixed little-endian for internal formats (docs/wal_format.md, docs/sst_format.md); big-endian
 * helpers for HBase/OpenTSDB-compatible values (counters, UIDs).
 */
#ifndef CF_CODING_H
#define CF_CODING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void enc_u16le(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static inline uint16_t dec_u16le(const unsigned char *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline void enc_u32le(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static inline uint32_t dec_u32le(const unsigned char *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) |
	       ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline void enc_u64le(unsigned char *p, uint64_t v)
{
	enc_u32le(p, (uint32_t)v);
	enc_u32le(p + 4, (uint32_t)(v >> 32));
}

static inline uint64_t dec_u64le(const unsigned char *p)
{
	return (uint64_t)dec_u32le(p) | ((uint64_t)dec_u32le(p + 4) << 32);
}

static inline void enc_u32be(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static inline uint32_t dec_u32be(const unsigned char *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	       ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static inline void enc_u64be(unsigned char *p, uint64_t v)
{
	enc_u32be(p, (uint32_t)(v >> 32));
	enc_u32be(p + 4, (uint32_t)v);
}

static inline uint64_t dec_u64be(const unsigned char *p)
{
	return ((uint64_t)dec_u32be(p) << 32) | dec_u32be(p + 4);
}

/* Writes v as a varint (7 bits a byte, low first) at p; returns bytes
 * written (1..10).  p must have room for 10 bytes. */
static inline size_t enc_varint(unsigned char *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* Reads a varint from [p, end); returns bytes consumed, or 0 when the
 * input is truncated or longer than 10 bytes. */
static inline size_t dec_varint(const unsigned char *p,
				const unsigned char *end, uint64_t *v)
{
	uint64_t r = 0;
	size_t n = 0;
	for (unsigned shift = 0; shift < 70 && p + n < end; shift += 7) {
		unsigned char b = p[n++];
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return n;
		}
	}
	return 0;
}

#endif
