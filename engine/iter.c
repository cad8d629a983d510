/*
 * iter.c: the merging iterator.  A binary min-heap of the valid children
 * ordered by (key, child index); the top is the current entry.  For the
 * usual handful of children a heap step is a few comparisons.  A child
 * that fails ends the merge: valid() turns 0 and status() reports the
 * error, so no reader sees entries past a failure.
 */
#include <stdlib.h>

#include "engine/iter.h"
#include "engine/key.h"
#include "util/err.h"

struct merge {
	struct iter it;
	struct iter **kids;
	size_t n;
	size_t *heap;		/* child indexes */
	size_t nheap;
	int rc;
};

static int less(const struct merge *m, size_t a, size_t b)
{
	size_t al, bl;
	const unsigned char *ak = iter_key(m->kids[a], &al);
	const unsigned char *bk = iter_key(m->kids[b], &bl);
	int c = ikey_cmp(ak, al, bk, bl);

	return c < 0 || (c == 0 && a < b);
}

static void sift_down(struct merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, s = i, t;
		if (l < m->nheap && less(m, m->heap[l], m->heap[s]))
			s = l;
		if (r < m->nheap && less(m, m->heap[r], m->heap[s]))
			s = r;
		if (s == i)
			return;
		t = m->heap[i];
		m->heap[i] = m->heap[s];
		m->heap[s] = t;
		i = s;
	}
}

/* Rebuilds the heap from the children's positions. */
static void rebuild(struct merge *m)
{
	m->nheap = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (iter_valid(m->kids[i]))
			m->heap[m->nheap++] = i;
		else if (!m->rc && iter_status(m->kids[i]))
			m->rc = iter_status(m->kids[i]);
	}
	for (size_t i = m->nheap / 2; i-- > 0;)
		sift_down(m, i);
}

static void mg_seek_first(struct iter *it)
{
	struct merge *m = (struct merge *)it;
	for (size_t i = 0; i < m->n; i++)
		iter_seek_first(m->kids[i]);
	rebuild(m);
}

static void mg_seek(struct iter *it, const unsigned char *k, size_t n)
{
	struct merge *m = (struct merge *)it;
	for (size_t i = 0; i < m->n; i++)
		iter_seek(m->kids[i], k, n);
	rebuild(m);
}

static void mg_next(struct iter *it)
{
	struct merge *m = (struct merge *)it;
	struct iter *top;

	if (!m->nheap || m->rc)
		return;
	top = m->kids[m->heap[0]];
	iter_next(top);
	if (!iter_valid(top)) {
		if (iter_status(top)) {
			m->rc = iter_status(top);
			return;
		}
		m->heap[0] = m->heap[--m->nheap];
	}
	if (m->nheap)
		sift_down(m, 0);
}

static int mg_valid(const struct iter *it)
{
	const struct merge *m = (const struct merge *)it;
	return m->nheap > 0 && !m->rc;
}

static const unsigned char *mg_key(const struct iter *it, size_t *n)
{
	const struct merge *m = (const struct merge *)it;
	return iter_key(m->kids[m->heap[0]], n);
}

static const unsigned char *mg_value(const struct iter *it, size_t *n)
{
	const struct merge *m = (const struct merge *)it;
	return iter_value(m->kids[m->heap[0]], n);
}

static int mg_status(const struct iter *it)
{
	return ((const struct merge *)it)->rc;
}

static void mg_destroy(struct iter *it)
{
	struct merge *m = (struct merge *)it;
	for (size_t i = 0; i < m->n; i++)
		iter_destroy(m->kids[i]);
	free(m->kids);
	free(m->heap);
	free(m);
}

static const struct iter_ops merge_ops = {
	mg_seek_first, mg_seek, mg_next, mg_valid, mg_key, mg_value,
	mg_status, mg_destroy,
};

struct iter *iter_merge(struct iter **children, size_t n)
{
	struct merge *m = calloc(1, sizeof *m);

	if (m) {
		m->kids = malloc((n ? n : 1) * sizeof *m->kids);
		m->heap = malloc((n ? n : 1) * sizeof *m->heap);
	}
	if (!m || !m->kids || !m->heap) {
		for (size_t i = 0; i < n; i++)
			iter_destroy(children[i]);
		if (m) {
			free(m->kids);
			free(m->heap);
		}
		free(m);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		m->kids[i] = children[i];
	m->n = n;
	m->it.ops = &merge_ops;
	return &m->it;
}
