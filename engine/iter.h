/*
 * iter.h: an iterator over (internal key, value) entries in ikey order,
 * implemented by memstores, store files, and the merging iterator.
 *
 * Keys and values returned stay valid until the next call that moves the
 * iterator.  Errors (I/O, checksum) make the iterator invalid and are
 * reported by status(); a reader must check status() when valid() turns 0.
 */
#ifndef CF_ITER_H
#define CF_ITER_H

#include <stddef.h>

struct iter;

/* What keeps an entry's value in memory after the iterator moves on:
 * release(arg) lets it go (iter_pin). */
struct iter_pin {
	void (*release)(void *arg);
	void *arg;
};

struct iter_ops {
	void (*seek_first)(struct iter *it);
	/* Positions at the first entry >= key (an encoded ikey). */
	void (*seek)(struct iter *it, const unsigned char *key, size_t n);
	void (*next)(struct iter *it);
	int (*valid)(const struct iter *it);
	const unsigned char *(*key)(const struct iter *it, size_t *n);
	const unsigned char *(*value)(const struct iter *it, size_t *n);
	int (*status)(const struct iter *it);	/* CF_OK or CF_E* */
	void (*destroy)(struct iter *it);
	/* NULL, or as iter_pin */
	int (*pin)(struct iter *it, struct iter_pin *p);
	/* as iter_seek_lt (NULL only in a test iterator that never steps
	 * back) */
	void (*seek_lt)(struct iter *it, const unsigned char *key, size_t n);
};

struct iter {
	const struct iter_ops *ops;
};

static inline void iter_seek_first(struct iter *it) { it->ops->seek_first(it); }
static inline void iter_seek(struct iter *it, const unsigned char *k, size_t n)
{
	it->ops->seek(it, k, n);
}
static inline void iter_next(struct iter *it) { it->ops->next(it); }
static inline int iter_valid(const struct iter *it) { return it->ops->valid(it); }
static inline const unsigned char *iter_key(const struct iter *it, size_t *n)
{
	return it->ops->key(it, n);
}
static inline const unsigned char *iter_value(const struct iter *it, size_t *n)
{
	return it->ops->value(it, n);
}
static inline int iter_status(const struct iter *it) { return it->ops->status(it); }
static inline void iter_destroy(struct iter *it)
{
	if (it)
		it->ops->destroy(it);
}
/* 1: the current entry's value stays where iter_value() said, through
 * every later move and the iterator's destruction, until
 * p->release(p->arg) (a reader keeps a large value instead of copying
 * it); 0: the iterator cannot (copy the value).  The iterator must be
 * valid. */
static inline int iter_pin(struct iter *it, struct iter_pin *p)
{
	return it->ops->pin ? it->ops->pin(it, p) : 0;
}

/* Positions at the last entry < key (an encoded ikey); key NULL: the
 * last entry.  Invalid when there is none.  next() then goes on forward
 * from there, as after a seek.  A reversed scan steps from row to row
 * down with it (engine/read.c).  Every engine iterator has the op. */
static inline void iter_seek_lt(struct iter *it, const unsigned char *k,
				size_t n)
{
	it->ops->seek_lt(it, k, n);
}

/* A merging iterator over children[0..n) (ownership of the children
 * passes to it).  Among equal keys, the lower child index comes first.
 * A child's error ends the merge: it turns invalid, and status() reports
 * the first error met, also after later seeks.  Returns NULL on
 * allocation failure (children destroyed). */
struct iter *iter_merge(struct iter **children, size_t n);

#endif
