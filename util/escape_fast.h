/*
 * escape_fast.h: the escaping of util/escape.h written straight into a
 * caller's memory, for text made of many short names (the scan file's
 * lines, fs/scan.c).  A name whose bytes all stand for themselves (most
 * are) is checked and copied whole, sixteen bytes at a time (SSE2, or
 * eight with plain integer words elsewhere); any other falls back to
 * the byte loop of escape_fast.c.  The bytes written are exactly those
 * cf_escape() appends.
 */
#ifndef CF_ESCAPE_FAST_H
#define CF_ESCAPE_FAST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The most bytes the escaped form of len bytes takes. */
#define CF_ESCAPE_MAX(len) ((len) * 3)
/* The room cf_escape_put() needs at d: the escaped form and 16 bytes
 * past it that it may write over. */
#define CF_ESCAPE_ROOM(len) ((len) * 3 + 16)

/* Writes key[0..len) escaped at d (CF_ESCAPE_MAX(len) bytes room) one
 * byte at a time; returns the end of what it wrote. */
unsigned char *cf_escape_put_slow(unsigned char *d, const unsigned char *k,
				  size_t len);
#if defined(__SSE2__)
/* The same bytes, sixteen source bytes at a time (any name; it reads
 * nothing past the name and may write 16 bytes past what it returns:
 * CF_ESCAPE_ROOM(len) bytes room). */
unsigned char *cf_escape_put_vec(unsigned char *d, const unsigned char *k,
				 size_t len);
/* Its two ways, which it picks by the CPU (for tests): the escaped
 * bytes by a loop over them (SSE2), and by shuffles (SSSE3, x86 only;
 * only where __builtin_cpu_supports("ssse3")). */
unsigned char *cf_escape_put_vec_sse2(unsigned char *d,
				      const unsigned char *k, size_t len);
#if defined(__x86_64__) || defined(__i386__)
unsigned char *cf_escape_put_vec_ssse3(unsigned char *d,
				       const unsigned char *k, size_t len);
#endif
#endif

/* Copies n bytes (0 to 16) from k to d with overlapping words: no call,
 * nothing read or written outside the two ranges. */
static inline void cf_copy_short(unsigned char *d, const unsigned char *k,
				 size_t n)
{
	uint64_t a, b;
	uint32_t x, y;

	if (n >= 8) {
		memcpy(&a, k, 8);
		memcpy(&b, k + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		memcpy(&x, k, 4);
		memcpy(&y, k + n - 4, 4);
		memcpy(d, &x, 4);
		memcpy(d + n - 4, &y, 4);
	} else if (n) {
		d[0] = k[0];
		d[n / 2] = k[n / 2];
		d[n - 1] = k[n - 1];
	}
}

/* --- plain integer words (any machine) --------------------------------- */

#define ESCF_ONES 0x0101010101010101u
#define ESCF_HIGH 0x8080808080808080u

/* The high bit of each byte of x (all below 0x80) in [lo, hi]. */
static inline uint64_t escf_in(uint64_t x, unsigned lo, unsigned hi)
{
	return (x + ESCF_ONES * (0x80 - lo)) & ~(x + ESCF_ONES * (0x7f - hi)) &
	       ESCF_HIGH;
}

/* The high bit of each byte of x (all below 0x80) equal to c. */
static inline uint64_t escf_eq(uint64_t x, unsigned c)
{
	return ~((x ^ ESCF_ONES * c) + ESCF_ONES * 0x7f) & ESCF_HIGH;
}

/* 1 if the 8 bytes of x stand for themselves anywhere but first
 * (util/escape.c's plain(): A-Z a-z 0-9 - _ . , = + ~): the letters
 * (| 0x20 brings both cases to a-z, and no other byte below 0x80),
 * 0x2B-0x39 ("+,-./0-9") but '/', and '=' '_' '~'. */
static inline int cf_escape_plain8(uint64_t x)
{
	if (x & ESCF_HIGH)
		return 0;
	return (escf_in(x | ESCF_ONES * 0x20, 'a', 'z') |
		(escf_in(x, 0x2b, 0x39) & ~escf_eq(x, '/')) |
		escf_eq(x, '=') | escf_eq(x, '_') | escf_eq(x, '~')) ==
	       ESCF_HIGH;
}

/* As cf_escape_put(), eight bytes at a time (the last word overlapping
 * the one before). */
static inline unsigned char *cf_escape_put_words(unsigned char *d,
						 const unsigned char *k,
						 size_t len)
{
	uint64_t a, b;
	uint32_t x, y;
	size_t i;

	if (!len)
		return d;
	if (k[0] == '.')
		return cf_escape_put_slow(d, k, len);
	if (len >= 8) {
		for (i = 0; i + 8 < len; i += 8) {
			memcpy(&a, k + i, 8);
			if (!cf_escape_plain8(a))
				return cf_escape_put_slow(d, k, len);
		}
		memcpy(&b, k + len - 8, 8);
		if (!cf_escape_plain8(b))
			return cf_escape_put_slow(d, k, len);
		memcpy(d, k, len);
		return d + len;
	}
	if (len >= 4) {
		memcpy(&x, k, 4);
		memcpy(&y, k + len - 4, 4);
		a = (uint64_t)x | (uint64_t)y << 32;
	} else {
		/* first, middle and last cover 1 to 3 bytes; the rest
		 * of the word is letters */
		a = k[0] | (uint64_t)k[len / 2] << 8 |
		    (uint64_t)k[len - 1] << 16 | 0x6161616161000000u;
		x = (uint32_t)a;
	}
	if (!cf_escape_plain8(a))
		return cf_escape_put_slow(d, k, len);
	if (len >= 4) {
		memcpy(d, &x, 4);
		memcpy(d + len - 4, &y, 4);
	} else {
		d[0] = k[0];
		d[len / 2] = k[len / 2];
		d[len - 1] = k[len - 1];
	}
	return d + len;
}

/* --- SSE2 ---------------------------------------------------------------- */

#if defined(__SSE2__)
/* A bit for each of the 16 bytes of v that is a letter or a digit: the
 * common case, and cheaper than cf_escape_plain16 (an add moves each
 * range to the bottom of the signed bytes, so that one compare tests
 * it; a byte from 0x80, | 0x20 or not, lands in neither). */
static inline unsigned cf_escape_alnum16(__m128i v)
{
	__m128i l = _mm_add_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)),
				 _mm_set1_epi8((char)(0x80 - 'a'))),
		n = _mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - '0')));

	return (unsigned)_mm_movemask_epi8(_mm_or_si128(
		_mm_cmplt_epi8(l, _mm_set1_epi8((char)(0x80 + 26))),
		_mm_cmplt_epi8(n, _mm_set1_epi8((char)(0x80 + 10)))));
}

/* A bit for each of the 16 bytes of v that stands for itself (as
 * cf_escape_plain8: the letters, "+,-.0-9" and "=_~"). */
static inline unsigned cf_escape_plain16(__m128i v)
{
	__m128i l = _mm_add_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)),
				 _mm_set1_epi8((char)(0x80 - 'a'))),
		n = _mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - '+'))), p;

	p = _mm_or_si128(_mm_cmplt_epi8(l, _mm_set1_epi8((char)(0x80 + 26))),
			 _mm_cmplt_epi8(n, _mm_set1_epi8((char)(0x80 + 15))));
	p = _mm_andnot_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('/')), p);
	p = _mm_or_si128(p, _mm_cmpeq_epi8(v, _mm_set1_epi8('=')));
	p = _mm_or_si128(p, _mm_cmpeq_epi8(v, _mm_set1_epi8('_')));
	p = _mm_or_si128(p, _mm_cmpeq_epi8(v, _mm_set1_epi8('~')));
	return (unsigned)_mm_movemask_epi8(p);
}

/* 1 if the bytes of v under mask all stand for themselves. */
static inline int cf_escape_plain_v(__m128i v, unsigned mask)
{
	return (cf_escape_alnum16(v) & mask) == mask ||
	       (cf_escape_plain16(v) & mask) == mask;
}

/* As cf_escape_put(), sixteen bytes at a time: 1 to 16 bytes are
 * gathered into one vector without reading past them (two overlapping
 * words), more in whole vectors, the last overlapping.  A name with a
 * byte to escape goes to cf_escape_put_vec. */
__attribute__((always_inline))
static inline unsigned char *cf_escape_put_sse2(unsigned char *d,
						const unsigned char *k,
						size_t len)
{
	__m128i v;
	uint64_t a, b;
	uint32_t x, y;
	size_t i;

	if (!len)
		return d;
	if (k[0] == '.')
		return cf_escape_put_vec(d, k, len);
	if (len > 16) {
		/* each vector stored as checked (cf_escape_put_vec
		 * writes over them if one is not plain) */
		for (i = 0; i + 16 < len; i += 16) {
			v = _mm_loadu_si128((const __m128i *)(const void *)
					    (k + i));
			if (!cf_escape_plain_v(v, 0xffff))
				return cf_escape_put_vec(d, k, len);
			_mm_storeu_si128((__m128i *)(void *)(d + i), v);
		}
		v = _mm_loadu_si128((const __m128i *)(const void *)
				    (k + len - 16));
		if (!cf_escape_plain_v(v, 0xffff))
			return cf_escape_put_vec(d, k, len);
		_mm_storeu_si128((__m128i *)(void *)(d + len - 16), v);
		return d + len;
	}
	if (len >= 8) {
		memcpy(&a, k, 8);
		memcpy(&b, k + len - 8, 8);
		if (!cf_escape_plain_v(_mm_set_epi64x((long long)b,
						      (long long)a), 0xffff))
			return cf_escape_put_vec(d, k, len);
		memcpy(d, &a, 8);
		memcpy(d + len - 8, &b, 8);
		return d + len;
	}
	if (len >= 4) {
		memcpy(&x, k, 4);
		memcpy(&y, k + len - 4, 4);
		if (!cf_escape_plain_v(_mm_set_epi32(0, 0, (int)y, (int)x),
				       0xff))
			return cf_escape_put_vec(d, k, len);
		memcpy(d, &x, 4);
		memcpy(d + len - 4, &y, 4);
		return d + len;
	}
	/* first, middle and last cover 1 to 3 bytes */
	x = k[0] | (uint32_t)k[len / 2] << 8 | (uint32_t)k[len - 1] << 16;
	if (!cf_escape_plain_v(_mm_cvtsi32_si128((int)x), 7))
		return cf_escape_put_vec(d, k, len);
	d[0] = k[0];
	d[len / 2] = k[len / 2];
	d[len - 1] = k[len - 1];
	return d + len;
}
#endif

/* Writes key[0..len) escaped as cf_escape() does at d, which has room
 * for CF_ESCAPE_ROOM(len) bytes; returns the end of the escaped form (d
 * itself for len 0).  Bytes past that end, within the room, may have
 * been written. */
__attribute__((always_inline))
static inline unsigned char *cf_escape_put(unsigned char *d, const void *key,
					   size_t len)
{
#if defined(__SSE2__)
	return cf_escape_put_sse2(d, key, len);
#else
	return cf_escape_put_words(d, key, len);
#endif
}

#endif
