/*
 * memstore.c: a skiplist over an arena (as LevelDB's memtable).
 *
 * One writer at a time (the engine's write leader, or recovery); readers
 * never lock.  A node is fully written before it is linked: the writer
 * publishes each next pointer with a release store, readers load them
 * with acquire, so a reader that reaches a node sees its whole key and
 * value.  Nodes are never removed; the arena frees everything at once
 * when the last reference goes.
 *
 * Node layout in the arena: the node struct with `height` next pointers,
 * then the encoded key, then the value.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/memstore.h"
#include "util/err.h"

#define MAX_HEIGHT 16
#define BLOCK (1u << 20)

struct node {
	uint32_t klen;
	uint32_t vlen;
	int height;
	_Atomic(struct node *) next[];	/* height entries */
};

struct ablock {
	struct ablock *prev;
	size_t used, size;
	unsigned char data[];
};

struct memstore {
	atomic_int refs;
	struct node *head;
	atomic_int height;
	struct ablock *blocks;
	atomic_size_t bytes;
	atomic_uint_least64_t count;
	atomic_uint_least64_t min_seq, max_seq;
	uint32_t rnd;
};

static void *arena_alloc(struct memstore *m, size_t n)
{
	struct ablock *b = m->blocks;
	void *p;

	n = (n + 7) & ~(size_t)7;
	if (!b || b->size - b->used < n) {
		size_t size = n > BLOCK / 4 ? n : BLOCK;
		struct ablock *nb = malloc(sizeof *nb + size);
		if (!nb)
			return NULL;
		nb->size = size;
		nb->used = 0;
		if (n > BLOCK / 4 && b) {
			/* a big value gets its own block, kept behind the
			 * current one so the current keeps filling */
			nb->prev = b->prev;
			b->prev = nb;
		} else {
			nb->prev = b;
			m->blocks = nb;
		}
		b = nb;
	}
	p = b->data + b->used;
	b->used += n;
	/* what is used, not what is reserved: flush decisions and the
	 * global limit count data, and a fresh memstore is near zero */
	atomic_fetch_add(&m->bytes, n);
	return p;
}

static const unsigned char *node_key(const struct node *x)
{
	return (const unsigned char *)&x->next[x->height];
}

int memstore_new(struct memstore **out)
{
	struct memstore *m = calloc(1, sizeof *m);

	if (!m)
		return CF_ENOMEM;
	atomic_init(&m->refs, 1);
	atomic_init(&m->height, 1);
	m->rnd = 0xdeadbeef;
	m->head = arena_alloc(m, sizeof(struct node) +
			      MAX_HEIGHT * sizeof(struct node *));
	if (!m->head) {
		free(m);
		return CF_ENOMEM;
	}
	/* the head is overhead, not data: the engine's global memstore
	 * count adds and subtracts only what inserts used */
	atomic_store(&m->bytes, 0);
	m->head->height = MAX_HEIGHT;
	m->head->klen = m->head->vlen = 0;
	for (int i = 0; i < MAX_HEIGHT; i++)
		atomic_init(&m->head->next[i], NULL);
	*out = m;
	return CF_OK;
}

void memstore_ref(struct memstore *m)
{
	atomic_fetch_add(&m->refs, 1);
}

void memstore_unref(struct memstore *m)
{
	struct ablock *b, *p;

	if (!m || atomic_fetch_sub(&m->refs, 1) != 1)
		return;
	for (b = m->blocks; b; b = p) {
		p = b->prev;
		free(b);
	}
	free(m);
}

static int random_height(struct memstore *m)
{
	int h = 1;

	/* branching 4, as LevelDB */
	while (h < MAX_HEIGHT) {
		m->rnd = m->rnd * 1103515245u + 12345u;
		if ((m->rnd >> 16) % 4)
			break;
		h++;
	}
	return h;
}

/* The first node >= key at level 0; prev[] gets the predecessors. */
static struct node *find_ge(struct memstore *m, const unsigned char *key,
			    size_t klen, struct node **prev)
{
	struct node *x = m->head;
	int level = atomic_load_explicit(&m->height, memory_order_relaxed) - 1;

	for (;;) {
		struct node *n = atomic_load_explicit(&x->next[level],
						      memory_order_acquire);
		if (n && ikey_cmp(node_key(n), n->klen, key, klen) < 0) {
			x = n;
			continue;
		}
		if (prev)
			prev[level] = x;
		if (level == 0)
			return n;
		level--;
	}
}

int memstore_add(struct memstore *m, const struct ikey *k, const void *val,
		 size_t vlen)
{
	size_t klen = ikey_size(k);
	struct node *prev[MAX_HEIGHT], *x;
	int h = random_height(m), cur;
	unsigned char *kp;

	x = arena_alloc(m, sizeof *x + (size_t)h * sizeof(struct node *) +
			klen + vlen);
	if (!x)
		return CF_ENOMEM;
	x->height = h;
	x->klen = (uint32_t)klen;
	x->vlen = (uint32_t)vlen;
	kp = (unsigned char *)&x->next[h];
	ikey_encode(kp, k);
	if (vlen)
		memcpy(kp + klen, val, vlen);
	find_ge(m, kp, klen, prev);
	cur = atomic_load_explicit(&m->height, memory_order_relaxed);
	if (h > cur) {
		for (int i = cur; i < h; i++)
			prev[i] = m->head;
		/* readers seeing the new height early find NULL from head at
		 * the new levels and drop down: harmless */
		atomic_store_explicit(&m->height, h, memory_order_relaxed);
	}
	for (int i = 0; i < h; i++) {
		atomic_init(&x->next[i],
			    atomic_load_explicit(&prev[i]->next[i],
						 memory_order_relaxed));
		atomic_store_explicit(&prev[i]->next[i], x,
				      memory_order_release);
	}
	if (atomic_fetch_add(&m->count, 1) == 0 ||
	    k->seq < atomic_load(&m->min_seq))
		atomic_store(&m->min_seq, k->seq);
	if (k->seq > atomic_load(&m->max_seq))
		atomic_store(&m->max_seq, k->seq);
	return CF_OK;
}

size_t memstore_bytes(const struct memstore *m)
{
	return atomic_load(&((struct memstore *)m)->bytes);
}

uint64_t memstore_count(const struct memstore *m)
{
	return atomic_load(&((struct memstore *)m)->count);
}

uint64_t memstore_min_seq(const struct memstore *m)
{
	return atomic_load(&((struct memstore *)m)->min_seq);
}

uint64_t memstore_max_seq(const struct memstore *m)
{
	return atomic_load(&((struct memstore *)m)->max_seq);
}

/* --- iterator --------------------------------------------------------- */

struct miter {
	struct iter it;
	struct memstore *m;
	struct node *cur;
};

static void mi_seek_first(struct iter *it)
{
	struct miter *mi = (struct miter *)it;
	mi->cur = atomic_load_explicit(&mi->m->head->next[0],
				       memory_order_acquire);
}

static void mi_seek(struct iter *it, const unsigned char *key, size_t n)
{
	struct miter *mi = (struct miter *)it;
	mi->cur = find_ge(mi->m, key, n, NULL);
}

static void mi_next(struct iter *it)
{
	struct miter *mi = (struct miter *)it;
	mi->cur = atomic_load_explicit(&mi->cur->next[0], memory_order_acquire);
}

static int mi_valid(const struct iter *it)
{
	return ((const struct miter *)it)->cur != NULL;
}

static const unsigned char *mi_key(const struct iter *it, size_t *n)
{
	const struct node *x = ((const struct miter *)it)->cur;
	*n = x->klen;
	return node_key(x);
}

static const unsigned char *mi_value(const struct iter *it, size_t *n)
{
	const struct node *x = ((const struct miter *)it)->cur;
	*n = x->vlen;
	return node_key(x) + x->klen;
}

static int mi_status(const struct iter *it)
{
	(void)it;
	return CF_OK;
}

static void mi_destroy(struct iter *it)
{
	struct miter *mi = (struct miter *)it;
	memstore_unref(mi->m);
	free(mi);
}

static const struct iter_ops miter_ops = {
	mi_seek_first, mi_seek, mi_next, mi_valid, mi_key, mi_value,
	mi_status, mi_destroy,
};

struct iter *memstore_iter(struct memstore *m)
{
	struct miter *mi = malloc(sizeof *mi);

	if (!mi)
		return NULL;
	mi->it.ops = &miter_ops;
	mi->m = m;
	mi->cur = NULL;
	memstore_ref(m);
	return &mi->it;
}
