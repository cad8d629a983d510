/*
 * escape_fast.c: the paths behind util/escape_fast.h for names with a
 * byte that must be escaped (or a leading dot): the byte loop, and with
 * SSE2 a vector way that writes the same bytes sixteen source bytes at a
 * time.
 */
#include "util/escape_fast.h"

/* The bytes that stand for themselves (util/escape.c's plain(); a
 * leading '.' is the caller's), one bit each. */
static const uint64_t plain_map[4] = {
	0x23ff780000000000u,	/* + , - . 0-9 = */
	0x47fffffe87fffffeu,	/* A-Z _ a-z ~ */
	0, 0
};

unsigned char *cf_escape_put_slow(unsigned char *d, const unsigned char *k,
				  size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;
	unsigned char c;

	for (i = 0; i < len; i++) {
		c = k[i];
		if ((plain_map[c >> 6] >> (c & 63) & 1) && (c != '.' || i)) {
			*d++ = c;
		} else {
			d[0] = '%';
			d[1] = (unsigned char)hex[c >> 4];
			d[2] = (unsigned char)hex[c & 15];
			d += 3;
		}
	}
	return d;
}

#if defined(__SSE2__)
/* The upper-case hex digit of each byte of v (0-15). */
static inline __m128i hex_digits(__m128i v)
{
	__m128i nine = _mm_set1_epi8(9);

	return _mm_add_epi8(_mm_add_epi8(v, _mm_set1_epi8('0')),
			    _mm_and_si128(_mm_cmpgt_epi8(v, nine),
					  _mm_set1_epi8('A' - '0' - 10)));
}

/* A bit for each of the n bytes of v (at its start) that is escaped;
 * dot: the first is a name's first. */
static inline unsigned esc_mask(__m128i v, unsigned n, int dot)
{
	unsigned esc = ~cf_escape_plain16(v) & ((1u << n) - 1);

	if (dot && (_mm_cvtsi128_si32(v) & 0xff) == '.')
		esc |= 1;
	return esc;
}

/*
 * Escapes the n bytes (1-16) at src, which has 32 bytes readable, at d.
 * A run of bytes that stand for themselves goes as one 16-byte store
 * from src (which the next %XX or run writes over), an escaped byte as
 * its three; so d needs 16 bytes of room past the escaped form.  dot:
 * src[0] is a name's first.
 */
static unsigned char *esc_block_sse2(unsigned char *d,
				     const unsigned char *src, unsigned n,
				     int dot)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)src);
	unsigned char hi[16], lo[16];
	unsigned esc = esc_mask(v, n, dot), j, pos = 0;

	if (esc) {
		_mm_storeu_si128((__m128i *)(void *)hi, hex_digits(
			_mm_and_si128(_mm_srli_epi16(v, 4),
				      _mm_set1_epi8(0x0f))));
		_mm_storeu_si128((__m128i *)(void *)lo, hex_digits(
			_mm_and_si128(v, _mm_set1_epi8(0x0f))));
	}
	while (esc) {
		j = (unsigned)__builtin_ctz(esc);
		_mm_storeu_si128((__m128i *)(void *)d,
				 _mm_loadu_si128((const __m128i *)(const void *)
						 (src + pos)));
		d += j - pos;
		d[0] = '%';
		d[1] = hi[j];
		d[2] = lo[j];
		d += 3;
		pos = j + 1;
		esc &= esc - 1;
	}
	_mm_storeu_si128((__m128i *)(void *)d,
			 _mm_loadu_si128((const __m128i *)(const void *)
					 (src + pos)));
	return d + (n - pos);
}

#if defined(__x86_64__) || defined(__i386__)
#include <tmmintrin.h>
#define ESCF_SSSE3 1

/*
 * With SSSE3 (pshufb), no loop over the escaped bytes: each group of 4
 * source bytes is one shuffle of a vector holding the 4 bytes, their
 * high and low hex digits and '%' (bytes 0-3, 4-7, 8-11, 12), by the
 * control of its 4-bit escape mask, which writes each byte or its %XX
 * in order (4 to 12 bytes).  Made once at start (escf_init).
 */
static unsigned char escf_ctl[16][16];
static unsigned char escf_pc[16];	/* bits set in a 4-bit mask */
static int escf_ssse3;			/* the CPU has it */

__attribute__((constructor)) static void escf_init(void)
{
	for (unsigned m = 0; m < 16; m++) {
		unsigned o = 0;
		memset(escf_ctl[m], 0x80, 16);
		for (unsigned i = 0; i < 4; i++) {
			if (m >> i & 1) {
				escf_ctl[m][o++] = 12;
				escf_ctl[m][o++] = (unsigned char)(4 + i);
				escf_ctl[m][o++] = (unsigned char)(8 + i);
				escf_pc[m]++;
			} else {
				escf_ctl[m][o++] = (unsigned char)i;
			}
		}
	}
	__builtin_cpu_init();
	escf_ssse3 = __builtin_cpu_supports("ssse3");
}

/* The bytes of group i (4 bytes from its first, src[4 * i]) that are
 * among the n of the name, 0 to 4. */
static inline unsigned group_bytes(unsigned n, unsigned i)
{
	unsigned r = n > 4 * i ? n - 4 * i : 0;

	return r < 4 ? r : 4;
}

/* Writes group g (escape mask m, nv of its bytes in the name) at d:
 * one shuffle, one store; returns the end of its escaped form. */
__attribute__((target("ssse3")))
static inline unsigned char *put_group(unsigned char *d, __m128i g,
				       unsigned m, unsigned nv)
{
	_mm_storeu_si128((__m128i *)(void *)d, _mm_shuffle_epi8(
		g, _mm_loadu_si128((const __m128i *)(const void *)
				   escf_ctl[m])));
	return d + nv + 2 * escf_pc[m];
}

__attribute__((target("ssse3")))
static unsigned char *esc_block_ssse3(unsigned char *d,
				      const unsigned char *src, unsigned n,
				      int dot)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)src);
	__m128i h, l, p, t1, t2, t3, t4;
	unsigned esc = esc_mask(v, n, dot);

	if (!esc) {
		_mm_storeu_si128((__m128i *)(void *)d, v);
		return d + n;
	}
	h = hex_digits(_mm_and_si128(_mm_srli_epi16(v, 4),
				     _mm_set1_epi8(0x0f)));
	l = hex_digits(_mm_and_si128(v, _mm_set1_epi8(0x0f)));
	p = _mm_set1_epi8('%');
	t1 = _mm_unpacklo_epi32(v, h);	/* v0-3 h0-3 v4-7 h4-7 */
	t2 = _mm_unpacklo_epi32(l, p);	/* l0-3 %    l4-7 %    */
	t3 = _mm_unpackhi_epi32(v, h);
	t4 = _mm_unpackhi_epi32(l, p);
	/* every group written: one past the name writes 16 bytes of
	 * garbage at the end and moves d by nothing */
	d = put_group(d, _mm_unpacklo_epi64(t1, t2), esc & 15,
		      group_bytes(n, 0));
	d = put_group(d, _mm_unpackhi_epi64(t1, t2), esc >> 4 & 15,
		      group_bytes(n, 1));
	d = put_group(d, _mm_unpacklo_epi64(t3, t4), esc >> 8 & 15,
		      group_bytes(n, 2));
	return put_group(d, _mm_unpackhi_epi64(t3, t4), esc >> 12,
			 group_bytes(n, 3));
}
#endif

/* Escapes a block with SSSE3's way (ssse3) or SSE2's. */
static inline unsigned char *esc_block(unsigned char *d,
				       const unsigned char *src, unsigned n,
				       int dot, int ssse3)
{
#ifdef ESCF_SSSE3
	if (ssse3)
		return esc_block_ssse3(d, src, n, dot);
#endif
	return esc_block_sse2(d, src, n, dot);
}

static inline unsigned char *put_vec(unsigned char *d, const unsigned char *k,
				     size_t len, int ssse3)
{
	unsigned char buf[48] = { 0 };
	size_t i = 0;

	if (!len)
		return d;
	if (len < 16) {
		/* gathered without reading past the name */
		cf_copy_short(buf, k, len);
		return esc_block(d, buf, (unsigned)len, 1, ssse3);
	}
	for (; i + 16 <= len; i += 16) {
		memcpy(buf, k + i, 16);
		d = esc_block(d, buf, 16, i == 0, ssse3);
	}
	if (i < len) {
		/* the last 16 bytes, of which those not yet written come
		 * to the start of what esc_block reads */
		memcpy(buf, k + len - 16, 16);
		d = esc_block(d, buf + 16 - (len - i), (unsigned)(len - i), 0,
			      ssse3);
	}
	return d;
}

unsigned char *cf_escape_put_vec(unsigned char *d, const unsigned char *k,
				 size_t len)
{
#ifdef ESCF_SSSE3
	if (escf_ssse3)
		return put_vec(d, k, len, 1);
#endif
	return put_vec(d, k, len, 0);
}

unsigned char *cf_escape_put_vec_sse2(unsigned char *d,
				      const unsigned char *k, size_t len)
{
	return put_vec(d, k, len, 0);
}

#ifdef ESCF_SSSE3
unsigned char *cf_escape_put_vec_ssse3(unsigned char *d,
				       const unsigned char *k, size_t len)
{
	return put_vec(d, k, len, 1);
}
#endif
#endif
