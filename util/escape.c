/*
 * escape.c: key <-> path component escaping (SPEC section 2).
 */
#include "util/escape.h"
#include "util/err.h"

/* 1 if byte c may stand for itself at position pos of a name. */
static int plain(unsigned char c, size_t pos)
{
	if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9'))
		return 1;
	switch (c) {
	case '.':
		return pos != 0;	/* a leading dot would hide the name */
	case '-': case '_': case ',': case '=': case '+': case '~':
		return 1;
	}
	return 0;
}

int cf_escape(const void *key, size_t len, struct buf *out)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *k = key;
	size_t i;
	int rc;

	rc = buf_reserve(out, len * 3);
	if (rc)
		return rc;
	for (i = 0; i < len; i++) {
		if (plain(k[i], i)) {
			out->p[out->len++] = k[i];
		} else {
			out->p[out->len++] = '%';
			out->p[out->len++] = hex[k[i] >> 4];
			out->p[out->len++] = hex[k[i] & 15];
		}
	}
	return CF_OK;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;		/* lower case is rejected: one name per key */
}

int cf_unescape(const char *name, size_t len, struct buf *out)
{
	size_t i, pos = 0;
	int rc, hi, lo;
	unsigned char c;

	rc = buf_reserve(out, len);
	if (rc)
		return rc;
	for (i = 0; i < len; pos++) {
		c = (unsigned char)name[i];
		if (c == '%') {
			if (len - i < 3)
				return CF_EINVAL;
			hi = hexval(name[i + 1]);
			lo = hexval(name[i + 2]);
			if (hi < 0 || lo < 0)
				return CF_EINVAL;
			c = (unsigned char)(hi << 4 | lo);
			if (plain(c, pos))
				return CF_EINVAL;
			i += 3;
		} else {
			if (!plain(c, pos))
				return CF_EINVAL;
			i++;
		}
		out->p[out->len++] = c;
	}
	return CF_OK;
}
