/*
 * memstore.c: a skiplist over an arena (as LevelDB's memtable).
 *
 * One writer at a time (the engine's write leader, or recovery); readers
 * never lock.  Invariants:
 *
 *   - A node is fully written (height, lengths, key, value, and its own
 *     next pointers) before it is linked.  The writer links it with a
 *     release store into the predecessor's next pointer and readers load
 *     next pointers with acquire, so a reader that reaches a node sees all
 *     of it.  Level 0 is linked first: a node reachable at any level is
 *     already in the level-0 list, which is what iteration walks.
 *   - Nodes are never removed, and a linked node's height, key and value
 *     never change (only its links and the writer's prefixes do); the
 *     arena frees everything at once when the last reference goes.
 *   - count is incremented after the node is linked and after min_seq and
 *     max_seq are updated, so whoever sees count = c sees those c entries
 *     and seqs that cover them.
 *
 * Node layout in the arena: struct node, then `height` levels (each a
 * next pointer and a lookahead prefix), the encoded key, the value.
 *
 * Lookahead prefixes are the writer's alone (readers never touch them, so
 * they need no atomics): lv[i].pfx holds row_prefix() of the node that
 * lv[i].next points to.  A random insert spends nearly all its time
 * waiting for nodes to come from memory; with the prefix beside the
 * pointer the writer decides most comparisons against a successor
 * without loading it, so only the nodes it moves to cost a miss (a
 * million random 16-byte rows: 1.15 s down to 0.9 s here, with the
 * branching below).  A level's link and prefix sit at a fixed offset
 * from the node's start, side by side: moving to a node costs one fetch,
 * not one for its height and another for its prefixes.
 *
 * The row filter: a Get asks the memstore first, and a seek costs a
 * cache miss a level (~40 at a few hundred thousand entries) even for a
 * row the memstore does not hold, which under a steady write load is
 * most rows.  Once a memstore told its expected size (memstore_expect)
 * holds FILTER_START entries and a Get has asked it about a row, the
 * writer builds a blocked bloom filter of the rows it holds, sized for
 * the whole memstore, and from then on sets each added row's bits
 * before the add returns; readers ask it before seeking
 * (memstore_may_have_row).  Only once a Get asked: setting the bits
 * costs a write about 0.1 us (a cache miss in the filter), which a load
 * nobody reads should not pay (db_bench fillseq 1.37 -> 1.48 us p50).
 * A Get that comes late makes the writer walk the entries already in
 * the memstore once (a few ms per 100k entries).  Bits are set with relaxed
 * atomic stores by the one writer and only ever set: a reader that loaded its snapshot
 * (acquire) after the write leader published the entries' seqs (release)
 * sees their bits, and the filter pointer is published with release
 * after the bits of every entry already in the list are set.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/arena.h"
#include "engine/bloom.h"
#include "engine/memstore.h"
#include "util/err.h"

/* 2^24 entries before the top level fills; more still work, slower */
#define MAX_HEIGHT 24

struct pfx {
	uint64_t hi, lo;	/* row bytes 0-7 and 8-15, big-endian */
};

/* One level of a node: its link and the writer's lookahead prefix of the
 * node linked, side by side (one cache line fetch, usually). */
struct level {
	_Atomic(struct node *) next;
	struct pfx pfx;
};

struct node {
	uint32_t klen;
	uint32_t vlen;
	int height;
	struct level lv[];	/* height entries, then key and value */
};

/* A blocked bloom filter: each row sets FILTER_K bits of one 512-bit
 * block (one cache line). */
#define FILTER_START 4096
#define FILTER_K 6
#define FILTER_BITS_PER_ROW 10

struct rowfilter {
	size_t nblocks;
	atomic_uint_least64_t w[];	/* nblocks * 8 words */
};

struct memstore {
	atomic_int refs;
	struct arena *arena;
	size_t base;		/* arena bytes of the head: not data */
	struct node *head;
	/* the height in use; read relaxed: a reader that sees a new height
	 * before the head links it finds NULL there and drops a level */
	atomic_int height;
	atomic_uint_least64_t count;
	atomic_uint_least64_t min_seq, max_seq;
	uint32_t rnd;		/* the writer's */
	/* The writer's finger: the predecessors at each level of the last
	 * key it inserted, that node itself at the levels it has
	 * (splice_h levels are set; 0: none yet). */
	struct node *splice[MAX_HEIGHT];
	int splice_h;
	size_t expect;			/* memstore_expect(); 0: no filter */
	_Atomic(struct rowfilter *) filter;	/* set once, by the writer */
	atomic_int filter_wanted;	/* 1: a Get asked (readers set it
					   once); 2: no memory for one */
};

static const unsigned char *node_key(const struct node *x)
{
	return (const unsigned char *)&x->lv[x->height];
}

static size_t node_size(int height)
{
	return sizeof(struct node) + (size_t)height * sizeof(struct level);
}

static uint64_t be_bytes(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < 8; i++)
		v = v << 8 | (i < n ? p[i] : 0);
	return v;
}

/*
 * The first 16 row bytes as two big-endian numbers, zero-padded.
 * Internal keys order by row first, and a strictly smaller prefix means a
 * smaller row: at the first differing byte either both rows have a byte,
 * or the padded one is a proper prefix of the other, which sorts first.
 * Equal prefixes decide nothing.  Sixteen bytes, not eight: row keys
 * often share their first eight (a salt, a metric id, zero-padded
 * numbers like db_bench's).
 */
static struct pfx row_prefix(const unsigned char *row, size_t n)
{
	struct pfx p;

	p.hi = be_bytes(row, n);
	p.lo = n > 8 ? be_bytes(row + 8, n - 8) : 0;
	return p;
}

/* <0, 0, >0 as prefix a sorts before, with, after b */
static int pfx_cmp(const struct pfx *a, const struct pfx *b)
{
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return 0;
}

static struct node *next_acq(struct node *x, int level)
{
	return atomic_load_explicit(&x->lv[level].next, memory_order_acquire);
}

int memstore_new(struct memstore **out)
{
	struct memstore *m = calloc(1, sizeof *m);

	if (!m)
		return CF_ENOMEM;
	m->arena = arena_new();
	if (m->arena)
		m->head = arena_alloc(m->arena, node_size(MAX_HEIGHT));
	if (!m->head) {
		arena_free(m->arena);
		free(m);
		return CF_ENOMEM;
	}
	m->base = arena_used(m->arena);
	m->head->height = MAX_HEIGHT;
	m->head->klen = m->head->vlen = 0;
	for (int i = 0; i < MAX_HEIGHT; i++) {
		atomic_init(&m->head->lv[i].next, NULL);
		m->head->lv[i].pfx = (struct pfx){ 0, 0 };
	}
	atomic_init(&m->refs, 1);
	atomic_init(&m->height, 1);
	atomic_init(&m->count, 0);
	atomic_init(&m->min_seq, 0);
	atomic_init(&m->max_seq, 0);
	atomic_init(&m->filter_wanted, 0);
	m->rnd = 0xdeadbeef;
	*out = m;
	return CF_OK;
}

void memstore_ref(struct memstore *m)
{
	atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
}

void memstore_unref(struct memstore *m)
{
	/* release/acquire: every use of m by other holders happens before
	 * the free */
	if (!m || atomic_fetch_sub_explicit(&m->refs, 1,
					    memory_order_acq_rel) != 1)
		return;
	free(atomic_load_explicit(&m->filter, memory_order_relaxed));
	arena_free(m->arena);
	free(m);
}

static int random_height(struct memstore *m)
{
	uint32_t r;
	int h = 1;

	/*
	 * xorshift32; each level half as full as the one below.  LevelDB
	 * uses a quarter, which visits ~3 nodes per level; with lookahead
	 * prefixes only the nodes the walk moves to cost a cache miss, and
	 * a half moves ~1 per level over twice the levels: ~20 misses
	 * instead of ~30 at a million entries.
	 */
	r = m->rnd;
	r ^= r << 13;
	r ^= r >> 17;
	r ^= r << 5;
	m->rnd = r;
	while (h < MAX_HEIGHT && (r & 1) == 0) {
		r >>= 1;
		h++;
	}
	return h;
}

/* --- the row filter --------------------------------------------------- */

void memstore_expect(struct memstore *m, size_t bytes)
{
	m->expect = bytes;
}

/* The block of hash h and the FILTER_K bits in it (9 bits of h2 each). */
static atomic_uint_least64_t *filter_block(const struct rowfilter *f,
					   uint64_t h)
{
	uint64_t b = (uint64_t)(uint32_t)h * f->nblocks >> 32;

	return (atomic_uint_least64_t *)&f->w[b * 8];
}

/* The writer's alone: a plain load and store of each word (one writer,
 * so no OR is lost) rather than a locked read-modify-write per bit. */
static void filter_add(struct rowfilter *f, uint64_t h)
{
	atomic_uint_least64_t *blk = filter_block(f, h);
	uint64_t h2 = h >> 32 | h << 32, w[8];

	for (int i = 0; i < 8; i++)
		w[i] = atomic_load_explicit(&blk[i], memory_order_relaxed);
	for (int i = 0; i < FILTER_K; i++, h2 >>= 9)
		w[(h2 >> 6) & 7] |= UINT64_C(1) << (h2 & 63);
	for (int i = 0; i < 8; i++)
		atomic_store_explicit(&blk[i], w[i], memory_order_relaxed);
}

static int filter_test(const struct rowfilter *f, uint64_t h)
{
	atomic_uint_least64_t *blk = filter_block(f, h);
	uint64_t h2 = h >> 32 | h << 32;

	for (int i = 0; i < FILTER_K; i++, h2 >>= 9)
		if (!(atomic_load_explicit(&blk[(h2 >> 6) & 7],
					   memory_order_relaxed) &
		      UINT64_C(1) << (h2 & 63)))
			return 0;
	return 1;
}

/* The filter for the rows in m now, sized for m->expect bytes at the
 * bytes per entry seen so far; published once every row's bits are
 * set.  Without memory nothing happens: reads then seek, as before. */
static void filter_build(struct memstore *m, uint64_t count)
{
	size_t per = memstore_bytes(m) / count + 1;
	size_t rows = m->expect / per, nblocks;
	const unsigned char *prev = NULL;
	size_t prevlen = 0;
	struct rowfilter *f;

	if (rows < count * 2)
		rows = count * 2;
	nblocks = rows * FILTER_BITS_PER_ROW / 512 + 1;
	if (nblocks > ((size_t)1 << 26))
		nblocks = (size_t)1 << 26;	/* 4 GiB of memstore */
	f = calloc(1, sizeof *f + nblocks * 8 * sizeof f->w[0]);
	if (!f) {
		/* reads seek, as without a filter; no second try */
		atomic_store_explicit(&m->filter_wanted, 2,
				      memory_order_relaxed);
		return;
	}
	f->nblocks = nblocks;
	for (struct node *x = next_acq(m->head, 0); x; x = next_acq(x, 0)) {
		size_t rl;
		const unsigned char *r = ikey_row(node_key(x), &rl);
		if (prev && rl == prevlen && memcmp(r, prev, rl) == 0)
			continue;	/* the same row's next cell */
		filter_add(f, bloom_hash_row(r, rl));
		prev = r;
		prevlen = rl;
	}
	atomic_store_explicit(&m->filter, f, memory_order_release);
}

int memstore_may_have_row(const struct memstore *m, const void *row,
			  size_t rowlen)
{
	struct memstore *w = (struct memstore *)m;
	const struct rowfilter *f = atomic_load_explicit(&w->filter,
							 memory_order_acquire);

	if (f)
		return filter_test(f, bloom_hash_row(row, rowlen));
	/* ask the writer for one (a store only the first time: readers
	 * should not keep writing the line the writer reads) */
	if (w->expect &&
	    !atomic_load_explicit(&w->filter_wanted, memory_order_relaxed))
		atomic_store_explicit(&w->filter_wanted, 1,
				      memory_order_relaxed);
	return 1;
}

/*
 * One walk down the levels for readers: returns the last node < key at
 * level 0 (m->head when there is none) and sets *ge to its successor,
 * the first node >= key.  key NULL stands past every key (the last node).
 */
static struct node *find_bracket(struct memstore *m, const unsigned char *key,
				 size_t klen, struct node **ge)
{
	struct node *x = m->head, *last = NULL;
	int level = atomic_load_explicit(&m->height, memory_order_relaxed) - 1;

	for (;;) {
		struct node *n = next_acq(x, level);
		/* n == last was compared one level up and found >= key */
		if (n && n != last &&
		    (!key || ikey_cmp(node_key(n), n->klen, key, klen) < 0)) {
			x = n;
			continue;
		}
		if (level == 0) {
			*ge = n;
			return x;
		}
		last = n;
		level--;
	}
}

/* The first node >= key at level 0, or NULL. */
static struct node *find_ge(struct memstore *m, const unsigned char *key,
			    size_t klen)
{
	struct node *ge;

	find_bracket(m, key, klen, &ge);
	return ge;
}

/* The last node < key (key NULL: the last node) at level 0, or NULL
 * (a reversed scan). */
static struct node *find_lt(struct memstore *m, const unsigned char *key,
			    size_t klen)
{
	struct node *ge, *x = find_bracket(m, key, klen, &ge);

	return x == m->head ? NULL : x;
}

/*
 * Does the key (kp, klen; row prefix kpfx) fall between the finger's
 * level-0 node and that node's successor?  The finger's node is the last
 * one inserted, still in the cache; its successor's prefix sits beside
 * the link, so a key past the end of the list or before a node with a
 * larger prefix costs one comparison.
 */
static int splice_brackets(struct memstore *m, const unsigned char *kp,
			   size_t klen, const struct pfx *kpfx)
{
	struct node *p, *n;
	int pc;

	if (m->splice_h != atomic_load_explicit(&m->height,
						memory_order_relaxed))
		return 0;
	p = m->splice[0];
	if (p != m->head && ikey_cmp(node_key(p), p->klen, kp, klen) >= 0)
		return 0;
	n = atomic_load_explicit(&p->lv[0].next, memory_order_relaxed);
	if (!n)
		return 1;
	pc = pfx_cmp(&p->lv[0].pfx, kpfx);
	if (pc)
		return pc > 0;
	return ikey_cmp(node_key(n), n->klen, kp, klen) > 0;
}

int memstore_add(struct memstore *m, const struct ikey *k, const void *val,
		 size_t vlen)
{
	size_t klen = ikey_size(k);
	struct node *prev[MAX_HEIGHT], *x, *p, *last = NULL;
	int h, cur, level, c = 1;
	unsigned char *kp;
	uint64_t count;
	struct pfx kpfx;

	if (klen > UINT32_MAX || vlen > UINT32_MAX)
		return CF_ETOOBIG;
	h = random_height(m);
	x = arena_alloc(m->arena, node_size(h) + klen + vlen);
	if (!x)
		return CF_ENOMEM;
	x->height = h;
	x->klen = (uint32_t)klen;
	x->vlen = (uint32_t)vlen;
	kp = (unsigned char *)node_key(x);
	ikey_encode(kp, k);
	if (vlen)
		memcpy(kp + klen, val, vlen);

	/* the predecessors at each level; only this thread changes links,
	 * so its own loads need no ordering */
	kpfx = row_prefix(k->row, k->rowlen);
	cur = atomic_load_explicit(&m->height, memory_order_relaxed);
	if (splice_brackets(m, kp, klen, &kpfx)) {
		/* the finger's predecessors hold at every level: a key that
		 * falls between splice[0] and its successor falls between
		 * splice[l] <= splice[0] and splice[l]'s successor, which is
		 * at or after splice[0]'s (a run of keys in order inserts
		 * without a search) */
		memcpy(prev, m->splice, (size_t)cur * sizeof *prev);
		level = -1;
	} else {
		level = cur - 1;
	}
	p = m->head;
	for (; level >= 0; level--) {
		for (;;) {
			struct node *n = atomic_load_explicit(
				&p->lv[level].next, memory_order_relaxed);
			int pc = pfx_cmp(&p->lv[level].pfx, &kpfx);
			if (!n)
				break;
			/* last was compared one level up: >= key, or
			 * the walk would have moved past it */
			if (n == last || pc > 0)
				break;
			if (pc < 0) {
				p = n;
				continue;
			}
			c = ikey_cmp(node_key(n), n->klen, kp, klen);
			last = n;
			if (c >= 0)
				break;
			p = n;
		}
		prev[level] = p;
	}
	/* c is 0 only if the last full comparison met an equal key, which
	 * is then prev[0]'s successor.  seq makes keys unique: a duplicate
	 * (only a damaged log replayed can bring one) would hide one of the
	 * two, so it is refused; its arena bytes stay until the memstore
	 * goes, nothing is linked yet */
	if (c == 0)
		return CF_EEXIST;
	if (h > cur) {
		for (level = cur; level < h; level++)
			prev[level] = m->head;
		atomic_store_explicit(&m->height, h, memory_order_relaxed);
	}
	/* the finger for the next insert */
	for (level = 0; level < h; level++)
		m->splice[level] = x;
	for (; level < (h > cur ? h : cur); level++)
		m->splice[level] = prev[level];
	m->splice_h = h > cur ? h : cur;
	for (level = 0; level < h; level++) {
		atomic_init(&x->lv[level].next,
			    atomic_load_explicit(&prev[level]->lv[level].next,
						 memory_order_relaxed));
		x->lv[level].pfx = prev[level]->lv[level].pfx;
		prev[level]->lv[level].pfx = kpfx;
		atomic_store_explicit(&prev[level]->lv[level].next, x,
				      memory_order_release);
	}

	{
		struct rowfilter *f = atomic_load_explicit(
			&m->filter, memory_order_relaxed);
		if (f)
			filter_add(f, bloom_hash_row(k->row, k->rowlen));
	}
	count = atomic_load_explicit(&m->count, memory_order_relaxed);
	if (count == 0 || k->seq < atomic_load_explicit(&m->min_seq,
							memory_order_relaxed))
		atomic_store_explicit(&m->min_seq, k->seq,
				      memory_order_relaxed);
	if (count == 0 || k->seq > atomic_load_explicit(&m->max_seq,
							memory_order_relaxed))
		atomic_store_explicit(&m->max_seq, k->seq,
				      memory_order_relaxed);
	atomic_store_explicit(&m->count, count + 1, memory_order_release);
	if (count + 1 >= FILTER_START && m->expect &&
	    !atomic_load_explicit(&m->filter, memory_order_relaxed) &&
	    atomic_load_explicit(&m->filter_wanted, memory_order_relaxed) == 1)
		filter_build(m, count + 1);
	return CF_OK;
}

size_t memstore_bytes(const struct memstore *m)
{
	return arena_used(m->arena) - m->base;
}

uint64_t memstore_count(const struct memstore *m)
{
	return atomic_load_explicit(&((struct memstore *)m)->count,
				    memory_order_acquire);
}

uint64_t memstore_min_seq(const struct memstore *m)
{
	return atomic_load_explicit(&((struct memstore *)m)->min_seq,
				    memory_order_relaxed);
}

uint64_t memstore_max_seq(const struct memstore *m)
{
	return atomic_load_explicit(&((struct memstore *)m)->max_seq,
				    memory_order_relaxed);
}

/* --- iterator --------------------------------------------------------- */

struct miter {
	struct iter it;
	struct memstore *m;
	struct node *cur;	/* NULL: not valid */
};

static void mi_seek_first(struct iter *it)
{
	struct miter *mi = (struct miter *)it;

	mi->cur = next_acq(mi->m->head, 0);
}

static void mi_seek(struct iter *it, const unsigned char *key, size_t n)
{
	struct miter *mi = (struct miter *)it;

	mi->cur = find_ge(mi->m, key, n);
}

static void mi_seek_lt(struct iter *it, const unsigned char *key, size_t n)
{
	struct miter *mi = (struct miter *)it;

	mi->cur = find_lt(mi->m, key, n);
}

static void mi_next(struct iter *it)
{
	struct miter *mi = (struct miter *)it;

	if (mi->cur)
		mi->cur = next_acq(mi->cur, 0);
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

/* No pin (iter_pin): a reference would keep the whole memstore, up to
 * the flush size, for one value of a row a reader holds (an open file,
 * for as long as it is open). */
static const struct iter_ops miter_ops = {
	mi_seek_first, mi_seek, mi_next, mi_valid, mi_key, mi_value,
	mi_status, mi_destroy, NULL, mi_seek_lt,
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
