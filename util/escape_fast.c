/*
 * escape_fast.c: the byte loop behind util/escape_fast.h, for names
 * with a byte that must be escaped (or a leading dot).
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
