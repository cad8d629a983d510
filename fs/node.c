/*
 * node.c: the node table: every node the kernel holds an inode of, or a
 * child or open file points to, hashed by (parent, name) in node_htab,
 * the cells and rows of a row together in node_rtab (fs/inval.c walks a
 * row's nodes when it changes) and the cells of a column in node_ctab
 * (and walks those when one cell changes).  Owns fs_mu, the lock of all the state
 * beside the engine, the root node and the request counters of .stats.
 *
 * Promises: a node is interned once per (parent, name); it is freed only
 * once its lookups, children and opens are all gone (node_unref), and its
 * parent outlives it.  A node's address is its inode number, so a freed
 * node's number may come back for another: nothing that may outlive the
 * node keeps its number without a pin (nopen).
 *
 * Every table's work per node is O(1) (with chains of a few nodes): a
 * row of a million cells listed is a million nodes in one node_rtab
 * chain, which the kernel forgets one by one, and rm removes cell by
 * cell; a node leaves its chains through their back pointers.
 *
 * Locks: every node_htab/node_rtab/node_ctab access and every nlookup, nchild and
 * nopen change is under fs_mu; node_free_list frees without it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"

pthread_mutex_t fs_mu = PTHREAD_MUTEX_INITIALIZER;
struct node fs_root = { .kind = K_ROOT, .nlookup = 1, .table = "" };
struct node **node_htab;
size_t node_hcap;
static size_t node_count;
struct node **node_rtab;	/* K_CELL and K_ROW nodes by (table, row) */
struct node **node_ctab;	/* K_CELL by (table, row, column), K_ROW
				 * by (table, row) */
struct fs_counters fs_counts;	/* atomics */

/* --- the node table ------------------------------------------------------ */

/* The hash of (parent, name), kept in the node: rehashing and walking a
 * chain then touch no name but the one that matches. */
uint64_t node_hname(const struct node *parent, const char *name)
{
	uint64_t h = (uintptr_t)parent * 0x9E3779B97F4A7C15ull;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001B3ull;
	return h ^ h >> 29;
}

size_t node_hslot(uint64_t h, size_t cap)
{
	return (size_t)h & (cap - 1);	/* cap: a power of 2 */
}

/* The node_rtab slot of row key in table. */
size_t node_rslot(const char *table, const void *key, size_t len,
		  size_t cap)
{
	const unsigned char *k = key;
	uint64_t h = 0xCBF29CE484222325ull;
	size_t i;

	for (; *table; table++)
		h = (h ^ (unsigned char)*table) * 0x100000001B3ull;
	h = (h ^ 0xFF) * 0x100000001B3ull;
	for (i = 0; i < len; i++)
		h = (h ^ k[i]) * 0x100000001B3ull;
	return (size_t)(h ^ h >> 29) & (cap - 1);	/* cap: a power of 2 */
}

/* Cells and rows: node_rtab serves cells_changed(), which also keeps a row's
 * time (its newest cell's version) true.  A listing of a region interns
 * a row node per entry, so each costs a node_rtab slot too (one cache miss;
 * rows were kept out of node_rtab before rows had times). */
static int in_rtab(const struct node *n)
{
	return n->kind == K_CELL || n->kind == K_ROW;
}

size_t node_rslot_of(const struct node *n, size_t cap)
{
	return node_rslot(n->table, n->key.p, n->key.len, cap);
}

size_t node_cslot(const char *table, const void *key, size_t len,
		  const char *fam, size_t famlen, const void *qual,
		  size_t qlen, size_t cap)
{
	const unsigned char *k = key, *q = qual;
	uint64_t h = 0x84222325CBF29CE4ull;
	size_t i;

	for (; *table; table++)
		h = (h ^ (unsigned char)*table) * 0x100000001B3ull;
	h = (h ^ 0xFF) * 0x100000001B3ull;
	for (i = 0; i < len; i++)
		h = (h ^ k[i]) * 0x100000001B3ull;
	h = (h ^ 0xFF) * 0x100000001B3ull;
	for (i = 0; i < famlen; i++)
		h = (h ^ (unsigned char)fam[i]) * 0x100000001B3ull;
	h = (h ^ ':') * 0x100000001B3ull;
	for (i = 0; i < qlen; i++)
		h = (h ^ q[i]) * 0x100000001B3ull;
	return (size_t)(h ^ h >> 29) & (cap - 1);	/* cap: a power of 2 */
}

/* The node_ctab slot of n (in_rtab). */
static size_t node_cslot_of(const struct node *n, size_t cap)
{
	if (n->kind == K_ROW)
		return node_rslot_of(n, cap);
	return node_cslot(n->table, n->key.p, n->key.len, n->fam, n->famlen,
			  n->qual.p, n->qual.len, cap);
}

/* With fs_mu held: n into / out of the chain whose link sits at offset
 * off in a node (RCHAIN: node_rtab's, CCHAIN: node_ctab's; slot: the
 * chain's head). */
#define RCHAIN offsetof(struct node, rchain)
#define CCHAIN offsetof(struct node, cchain)

static struct nchain *chain_of(struct node *n, size_t off)
{
	return (struct nchain *)(void *)((char *)n + off);
}

static void chain_link(struct node **slot, struct node *n, size_t off)
{
	struct nchain *c = chain_of(n, off);

	c->next = *slot;
	c->prev = slot;
	if (*slot)
		chain_of(*slot, off)->prev = &c->next;
	*slot = n;
}

static void chain_unlink(struct node *n, size_t off)
{
	struct nchain *c = chain_of(n, off);

	*c->prev = c->next;
	if (c->next)
		chain_of(c->next, off)->prev = c->prev;
}

struct node *node_of(fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? &fs_root : (struct node *)(uintptr_t)ino;
}

fuse_ino_t ino_of(struct node *n)
{
	return n == &fs_root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
}

static void node_free(struct node *n)
{
	buf_release(&n->key);
	buf_release(&n->qual);
	free(n->name);
	free(n);
}

/* With fs_mu held: takes n out of the tables once nothing refers to it,
 * then its parent, and chains them on *dead (through hnext; nothing
 * finds them any more) for node_free_list, which needs no lock. */
void node_unref_defer(struct node *n, struct node **dead)
{
	struct node **pp, *p;

	while (n != &fs_root && n->nlookup == 0 && n->nchild == 0 &&
	       n->nopen == 0) {
		for (pp = &node_htab[node_hslot(n->hash, node_hcap)]; *pp != n;
		     pp = &(*pp)->hnext)
			;
		*pp = n->hnext;
		if (in_rtab(n)) {
			chain_unlink(n, RCHAIN);
			chain_unlink(n, CCHAIN);
		}
		node_count--;
		p = n->parent;
		p->nchild--;
		n->hnext = *dead;
		*dead = n;
		n = p;
	}
}

void node_free_list(struct node *n)
{
	while (n) {
		struct node *next = n->hnext;
		node_free(n);
		n = next;
	}
}

/* With fs_mu held: frees n once nothing refers to it, then its parent. */
void node_unref(struct node *n)
{
	struct node *dead = NULL;

	node_unref_defer(n, &dead);
	node_free_list(dead);
}

/* With fs_mu held: the node for tmp's meaning under parent, interned (tmp's
 * buffers move into it or are freed).  NULL on ENOMEM. */
struct node *node_intern(struct node *tmp)
{
	struct node *n, **nt;
	size_t i, s;

	if (node_count >= node_hcap / 2) {
		size_t ncap = node_hcap ? node_hcap * 2 : 1024;
		struct node **nr, **nc;
		nt = calloc(ncap, sizeof *nt);
		nr = calloc(ncap, sizeof *nr);
		nc = calloc(ncap, sizeof *nc);
		if (!nt || !nr || !nc) {
			free(nt);
			free(nr);
			free(nc);
			goto nomem;
		}
		for (i = 0; i < node_hcap; i++) {
			while ((n = node_htab[i])) {
				node_htab[i] = n->hnext;
				s = node_hslot(n->hash, ncap);
				n->hnext = nt[s];
				nt[s] = n;
				if (in_rtab(n)) {
					chain_link(&nr[node_rslot_of(n, ncap)],
						   n, RCHAIN);
					chain_link(&nc[node_cslot_of(n, ncap)],
						   n, CCHAIN);
				}
			}
		}
		free(node_htab);
		free(node_rtab);
		free(node_ctab);
		node_htab = nt;
		node_rtab = nr;
		node_ctab = nc;
		node_hcap = ncap;
	}
	tmp->hash = node_hname(tmp->parent, tmp->name);
	s = node_hslot(tmp->hash, node_hcap);
	for (n = node_htab[s]; n; n = n->hnext)
		if (n->hash == tmp->hash && n->parent == tmp->parent &&
		    !strcmp(n->name, tmp->name)) {
			buf_release(&tmp->key);
			buf_release(&tmp->qual);
			free(tmp->name);
			return n;
		}
	n = malloc(sizeof *n);
	if (!n)
		goto nomem;
	*n = *tmp;
	n->nlookup = n->nchild = n->nopen = 0;
	n->fvc = NULL;
	n->fvloading = 0;
	n->hnext = node_htab[s];
	node_htab[s] = n;
	if (in_rtab(n)) {
		chain_link(&node_rtab[node_rslot_of(n, node_hcap)], n, RCHAIN);
		chain_link(&node_ctab[node_cslot_of(n, node_hcap)], n, CCHAIN);
	}
	node_count++;
	n->parent->nchild++;
	return n;
nomem:
	buf_release(&tmp->key);
	buf_release(&tmp->qual);
	free(tmp->name);
	return NULL;
}

/* With fs_mu held: n's cached attributes are no longer true. */
void attr_forget(struct node *n)
{
	n->astate = A_UNKNOWN;
	n->agen++;
}

/* Frees every node (fs_teardown: the session is over). */
void node_teardown(void)
{
	struct node *n;
	size_t i;

	for (i = 0; i < node_hcap; i++)
		while ((n = node_htab[i])) {
			node_htab[i] = n->hnext;
			node_free(n);
		}
	free(node_htab);
	free(node_rtab);
	free(node_ctab);
	node_htab = node_rtab = node_ctab = NULL;
	node_hcap = node_count = 0;
}

void fs_counters(struct fs_counters *c)
{
	c->lookups = __atomic_load_n(&fs_counts.lookups, __ATOMIC_RELAXED);
	c->getattrs = __atomic_load_n(&fs_counts.getattrs, __ATOMIC_RELAXED);
	c->readdirplus_entries = __atomic_load_n(
		&fs_counts.readdirplus_entries, __ATOMIC_RELAXED);
	c->names_too_long = __atomic_load_n(&fs_counts.names_too_long,
					    __ATOMIC_RELAXED);
	c->names_unlisted = __atomic_load_n(&fs_counts.names_unlisted,
					    __ATOMIC_RELAXED);
	c->notify_refused = __atomic_load_n(&fs_counts.notify_refused,
					    __ATOMIC_RELAXED);
	c->forgets = __atomic_load_n(&fs_counts.forgets, __ATOMIC_RELAXED);
	pthread_mutex_lock(&fs_mu);
	c->inodes = node_count;
	pthread_mutex_unlock(&fs_mu);
}

/* Forgets free the nodes after fs_mu is released: a batch of them (the
 * kernel dropping its dentries, after an ls -l of 100k rows) would
 * otherwise hold every other request behind free(3). */
void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct node *n = node_of(ino), *dead = NULL;

	count(&fs_counts.forgets);
	pthread_mutex_lock(&fs_mu);
	if (n != &fs_root) {
		n->nlookup -= nlookup < n->nlookup ? nlookup : n->nlookup;
		node_unref_defer(n, &dead);
	}
	pthread_mutex_unlock(&fs_mu);
	node_free_list(dead);
	fuse_reply_none(req);
}

void op_forget_multi(fuse_req_t req, size_t count,
		     struct fuse_forget_data *f)
{
	size_t i;
	struct node *n, *dead = NULL;

	__atomic_fetch_add(&fs_counts.forgets, (uint64_t)count,
			   __ATOMIC_RELAXED);
	pthread_mutex_lock(&fs_mu);
	for (i = 0; i < count; i++) {
		n = node_of(f[i].ino);
		if (n == &fs_root)
			continue;
		n->nlookup -= f[i].nlookup < n->nlookup ? f[i].nlookup
							 : n->nlookup;
		node_unref_defer(n, &dead);
	}
	pthread_mutex_unlock(&fs_mu);
	node_free_list(dead);
	fuse_reply_none(req);
}

/* With fs_mu held: takes n out of / puts n into its node_htab chain. */
static void hunlink(struct node *n)
{
	struct node **pp;

	for (pp = &node_htab[node_hslot(n->hash, node_hcap)]; *pp != n;
	     pp = &(*pp)->hnext)
		;
	*pp = n->hnext;
}

static void hlink(struct node *n)
{
	size_t s = node_hslot(n->hash, node_hcap);

	n->hnext = node_htab[s];
	node_htab[s] = n;
}

/* With fs_mu held, after cell s was moved onto d within their row (or a
 * tsd name file renamed, its key the name): the
 * kernel's inode of s now stands under d's name (and d's, if it has one,
 * is cut from it), so s takes d's meaning and d takes s's old one, the
 * name that went.  A stat or open of the new name through the moved
 * inode then asks for the new cell, and a file open on s writes there. */
void node_swap(struct node *s, struct node *d)
{
	struct node t;

	if (s == d)
		return;
	hunlink(s);
	hunlink(d);
	if (in_rtab(s))
		chain_unlink(s, CCHAIN);
	if (in_rtab(d))
		chain_unlink(d, CCHAIN);
	t = *s;
	s->parent = d->parent;
	s->name = d->name;
	s->fam = d->fam;
	s->famlen = d->famlen;
	s->qual = d->qual;
	s->ts = d->ts;
	d->parent = t.parent;
	d->name = t.name;
	d->fam = t.fam;
	d->famlen = t.famlen;
	d->qual = t.qual;
	d->ts = t.ts;
	if (s->kind == K_TSD && d->kind == K_TSD) {
		/* a tsd node's name is its key (a renamed UID) */
		s->key = d->key;
		d->key = t.key;
	}
	s->hash = node_hname(s->parent, s->name);
	d->hash = node_hname(d->parent, d->name);
	hlink(s);
	hlink(d);
	if (in_rtab(s))
		chain_link(&node_ctab[node_cslot_of(s, node_hcap)], s, CCHAIN);
	if (in_rtab(d))
		chain_link(&node_ctab[node_cslot_of(d, node_hcap)], d, CCHAIN);
	attr_forget(s);
	attr_forget(d);
}
