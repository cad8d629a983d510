/* buf.c: growable byte buffers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/coding.h"
#include "util/err.h"

int buf_grow(struct buf *b, size_t n)
{
	size_t need = b->len + n, cap;
	unsigned char *p;

	if (need < b->len)
		return CF_ENOMEM;
	if (need <= b->cap)
		return CF_OK;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap * 2 > cap ? cap * 2 : need;
	p = realloc(b->p, cap);
	if (!p)
		return CF_ENOMEM;
	b->p = p;
	b->cap = cap;
	return CF_OK;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
	int rc;

	if (n == 0)
		return CF_OK;
	rc = buf_reserve(b, n);
	if (rc)
		return rc;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return CF_OK;
}

int buf_putc(struct buf *b, int c)
{
	unsigned char ch = (unsigned char)c;
	return buf_append(b, &ch, 1);
}

int buf_put_varint(struct buf *b, uint64_t v)
{
	unsigned char tmp[10];
	return buf_append(b, tmp, enc_varint(tmp, v));
}

int buf_put_u32le(struct buf *b, uint32_t v)
{
	unsigned char tmp[4];
	enc_u32le(tmp, v);
	return buf_append(b, tmp, 4);
}

int buf_put_u64le(struct buf *b, uint64_t v)
{
	unsigned char tmp[8];
	enc_u64le(tmp, v);
	return buf_append(b, tmp, 8);
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return CF_EINVAL;
	rc = buf_reserve(b, (size_t)n + 1);
	if (rc)
		return rc;
	va_start(ap, fmt);
	vsnprintf((char *)b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return CF_OK;
}

void buf_release(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}
