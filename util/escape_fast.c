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

/*
 * Escapes the n bytes buf[o..o + n) (o + n == 16; buf has 48 bytes, the
 * source in its first 16) at d.  A run of bytes that stand for
 * themselves goes as one 16-byte store from buf (which the next %XX or
 * run writes over), an escaped byte as its three; so d needs 16 bytes
 * of room past the escaped form.  dot: byte o is a name's first.
 */
static unsigned char *esc_block(unsigned char *d, const unsigned char *buf,
				unsigned o, unsigned n, int dot)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)buf);
	unsigned char hi[16], lo[16];
	unsigned esc, j, pos = o;

	esc = ~cf_escape_plain16(v) & (0xffffu << o) & 0xffffu;
	if (dot && buf[o] == '.')
		esc |= 1u << o;
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
						 (buf + pos)));
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
					 (buf + pos)));
	return d + (o + n - pos);
}

unsigned char *cf_escape_put_vec(unsigned char *d, const unsigned char *k,
				 size_t len)
{
	unsigned char buf[48];
	size_t i = 0;

	if (!len)
		return d;
	if (len < 16) {
		/* gathered without reading past the name: first and last
		 * words overlap, ending at buf[16] */
		unsigned char *e = buf + 16;
		uint64_t a, b;
		uint32_t x, y;
		if (len >= 8) {
			memcpy(&a, k, 8);
			memcpy(&b, k + len - 8, 8);
			memcpy(e - len, &a, 8);
			memcpy(e - 8, &b, 8);
		} else if (len >= 4) {
			memcpy(&x, k, 4);
			memcpy(&y, k + len - 4, 4);
			memcpy(e - len, &x, 4);
			memcpy(e - 4, &y, 4);
		} else {
			e[-(ptrdiff_t)len] = k[0];
			e[-(ptrdiff_t)len + (ptrdiff_t)len / 2] = k[len / 2];
			e[-1] = k[len - 1];
		}
		return esc_block(d, buf, (unsigned)(16 - len), (unsigned)len,
				 1);
	}
	for (; i + 16 <= len; i += 16) {
		memcpy(buf, k + i, 16);
		d = esc_block(d, buf, 0, 16, i == 0);
	}
	if (i < len) {
		/* the last 16 bytes, of which the ones not yet written */
		memcpy(buf, k + len - 16, 16);
		d = esc_block(d, buf, (unsigned)(16 - (len - i)),
			      (unsigned)(len - i), 0);
	}
	return d;
}
#endif
