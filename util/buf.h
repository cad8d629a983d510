/*
 * buf.h: a growable byte buffer.  A plain value type: the owner of a
 * struct buf owns b->p and frees it with buf_release().
 */
#ifndef CF_BUF_H
#define CF_BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	unsigned char *p;
	size_t len;
	size_t cap;
};

#define BUF_INIT { NULL, 0, 0 }

/* buf_reserve when the room is not there yet. */
int buf_grow(struct buf *b, size_t n);
/* Makes room for n more bytes; CF_ENOMEM on failure (b unchanged).
 * Inline: most calls find the room there (0 is CF_OK). */
static inline int buf_reserve(struct buf *b, size_t n)
{
	return n <= b->cap - b->len ? 0 : buf_grow(b, n);
}
/* Appends n bytes; CF_ENOMEM on failure. */
int buf_append(struct buf *b, const void *p, size_t n);
int buf_putc(struct buf *b, int c);
int buf_put_varint(struct buf *b, uint64_t v);
int buf_put_u32le(struct buf *b, uint32_t v);
int buf_put_u64le(struct buf *b, uint64_t v);
/* printf-style append; CF_ENOMEM on failure. */
int buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void buf_reset(struct buf *b) { b->len = 0; }
/* Frees the memory; b is empty and reusable afterwards. */
void buf_release(struct buf *b);

#endif
