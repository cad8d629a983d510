/*
 * inval.c: keeping the kernel's caches, and the daemon's own memory of
 * attributes, true after every change made through this daemon (the
 * design is the long comment below).  Owns the invalidator thread and its
 * queue, the negative-lookup pins (negs) and the per-table generation
 * counters a streaming listing checks (rows_gen).
 *
 * Promises: when a request that changed a cell or row replies, every
 * cached attribute of the row's nodes is already invalid in the kernel
 * (inval_attrs, before the reply) and in the node (attr_forget); names
 * that may have vanished are dropped soon after the reply, by the
 * invalidator.  The queue is bounded (2^20 names; past it the timeout
 * fs_cache_s does the work).
 *
 * Locks: fs_mu, then imu (the queue); the invalidator sends with neither
 * held, and a name's parent node stays pinned until it is sent.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"

static struct fuse_session *session;
/* Bumped (atomically, after the engine write, before the reply) by every
 * change of a table's rows this daemon makes, one counter per hash of the
 * table's name: a streaming listing asks the engine again about rows it
 * pulled from its scan before a change (see struct dirh). */
#define LGENS 64
static uint64_t lgens[LGENS];

static uint64_t *lgen_of(const char *table)
{
	uint64_t h = 0xCBF29CE484222325ull;

	for (; *table; table++)
		h = (h ^ (unsigned char)*table) * 0x100000001B3ull;
	return &lgens[(h ^ h >> 32) % LGENS];
}

static void rows_changed(const char *table)
{
	__atomic_add_fetch(lgen_of(table), 1, __ATOMIC_SEQ_CST);
}

uint64_t rows_gen(const char *table)
{
	return __atomic_load_n(lgen_of(table), __ATOMIC_SEQ_CST);
}

/* --- keeping the kernel's caches true ----------------------------------
 *
 * The kernel caches names and attributes of tables, regions, rows and
 * cells for fs_cache_s seconds, so that `ls -l` and `find` after a
 * readdirplus ask nothing more.  Every change made through this daemon
 * (it owns the data directory) invalidates what it may have changed:
 *  - the attributes of every cached node of the changed row (or table),
 *    before the reply: fuse_lowlevel_notify_inval_inode with a negative
 *    offset takes no lock the kernel may hold for the request, so a stat
 *    after the write returned asks us again;
 *  - names that may have vanished (a version crowded out or deleted, a
 *    row deleted through .batch), by the invalidator thread:
 *    notify_inval_entry takes the parent directory's lock, which the
 *    request being served may hold (unlink, rename), so it runs after the
 *    reply.  A stale name is harmless meanwhile: its attributes are
 *    invalid, so stat and open ask us, and we answer from the engine.
 * Tables with a TTL family are not cached at all (timeout 0): their cells
 * vanish with time, not with a request.
 *
 * The daemon's attribute cache: a cell node remembers what the engine
 * last said of its cell (absent, or present with a length and version),
 * so that a stat after a create or a repeated miss asks the engine
 * nothing.  It is kept true by the same invalidations as the kernel's
 * caches (attr_forget in cells_changed_locked and fs_table_changed, for
 * every node, whether the kernel knows it or not), and filled only
 *  - by node_stat from an engine read, when the table has no TTL family
 *    and no invalidation of the node came between the read and the fill
 *    (agen unchanged: a write that committed after the read has not
 *    invalidated yet, and will);
 *  - by cell_put of a latest-version name with what it wrote, when the
 *    node knew the cell before the Put (absent, or a version no newer
 *    than the Put's) and no invalidation came in between: every other
 *    version is then older or dead for good (docs/engine.md, "Versions
 *    and deletes"), so the Put is the latest.
 * A row node keeps its row's time (its newest cell's version) the same
 * way: filled by node_stat's read, mkdir, or a listing that read the
 * row whole with no change of the table since it began (row_seen),
 * raised by a Put through the mount, forgotten by anything else,
 * rmdir included; while kept, the row exists.
 * A version name (@TS) is filled only from reads: a Put at an old
 * timestamp may be crowded out at once.  The time-series tables are never
 * filled: the tsd layer writes them without passing through here.  So
 * that a create's negative lookup is still known when its close puts the
 * value, the last NEG_KEEP cell nodes found absent stay pinned.
 */
#define NEG_KEEP 64

static struct node *negs[NEG_KEEP];	/* pinned, under fs_mu */
static size_t negi;

/* With fs_mu held: keeps n's pin (from lookup_node) in negs[], dropping the
 * oldest. */
void neg_keep(struct node *n)
{
	struct node *old = negs[negi];

	negs[negi] = n;
	negi = (negi + 1) % NEG_KEEP;
	if (old) {
		old->nopen--;
		node_unref(old);
	}
}

/* Forgets the pins of negs[] without dropping them (fs_teardown: the
 * nodes are freed with the table). */
void neg_teardown(void)
{
	memset(negs, 0, sizeof negs);
	negi = 0;
}

/* A name to invalidate.  Its parent node stays pinned (nopen) until the
 * notification is sent: were it freed in between (the kernel forgetting
 * it, drop_caches), its address, the inode number, could be given to a
 * new node, a cell, and the kernel would refuse an entry invalidation
 * under a file with ENOTDIR (or drop a name of another directory). */
struct inval {
	struct inval *next;
	struct node *parent;
	char name[];
};

static pthread_mutex_t imu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t icv = PTHREAD_COND_INITIALIZER;
static struct inval *ihead, **itail = &ihead;
static size_t iqueued;
static int istop;
static pthread_t ithread;
static int ithread_started;

/* Counts what the kernel refused of a notification's result: ENOENT
 * only says it holds nothing of the name or inode any more. */
static void notified(int res)
{
	if (res < 0 && res != -ENOENT)
		count(&fs_counts.notify_refused);
}

static void *invalidator(void *arg)
{
	struct inval *e;
	struct node *dead = NULL;

	(void)arg;
	pthread_mutex_lock(&imu);
	for (;;) {
		while (!ihead && !istop)
			pthread_cond_wait(&icv, &imu);
		if (!ihead)
			break;
		e = ihead;
		ihead = e->next;
		if (!ihead)
			itail = &ihead;
		iqueued--;
		pthread_mutex_unlock(&imu);
		notified(fuse_lowlevel_notify_inval_entry(session,
			 ino_of(e->parent), e->name, strlen(e->name)));
		pthread_mutex_lock(&fs_mu);
		e->parent->nopen--;
		node_unref_defer(e->parent, &dead);
		pthread_mutex_unlock(&fs_mu);
		node_free_list(dead);
		dead = NULL;
		free(e);
		pthread_mutex_lock(&imu);
	}
	pthread_mutex_unlock(&imu);
	return NULL;
}

/* With fs_mu held: queues the name of n for the invalidator. */
static void inval_name(struct node *n)
{
	struct inval *e;
	size_t len = strlen(n->name);

	if (!session || n->nlookup == 0 || !(e = malloc(sizeof *e + len + 1)))
		return;
	e->next = NULL;
	e->parent = n->parent;
	memcpy(e->name, n->name, len + 1);
	pthread_mutex_lock(&imu);
	if (iqueued < (1u << 20)) {
		e->parent->nopen++;	/* until sent (struct inval) */
		*itail = e;
		itail = &e->next;
		iqueued++;
		pthread_cond_signal(&icv);
		e = NULL;
	}
	pthread_mutex_unlock(&imu);
	free(e);	/* over the bound: the timeout will do */
}

/* With fs_mu held: remembers n's inode for inval_attrs(). */
static void inos_add(struct inos *a, struct node *n)
{
	fuse_ino_t *nv;

	if (n->nlookup == 0)
		return;
	if (a->n == a->cap) {
		size_t nc = a->cap ? 2 * a->cap : 16;
		if (!(nv = realloc(a->v, nc * sizeof *nv)))
			return;
		a->v = nv;
		a->cap = nc;
	}
	a->v[a->n++] = (fuse_ino_t)(uintptr_t)n;
}

/* Without fs_mu: invalidates the attributes of a's inodes and frees a. */
void inval_attrs(struct inos *a)
{
	size_t i;

	for (i = 0; session && i < a->n; i++)
		notified(fuse_lowlevel_notify_inval_inode(session, a->v[i],
							  -1, 0));
	free(a->v);
}

/* Row key of table changed: its cells' attributes are invalid, and the
 * names of its versions (all its cells with deleted) may be gone.  With
 * col, only the cells of col's column changed (the node col itself and
 * the same cell under other names: other directories, @TS versions):
 * a Put or Delete of one cell leaves its row's other cells as they were,
 * so their kernel caches stay.  Nothing is sent for skip, a name whose
 * unlink the kernel is finishing (it drops the name and the attributes
 * itself). */
/* With fs_mu held: n, a node of row key of table (a row node or a cell,
 * of col's column when col is given), changed (cells_changed_locked). */
static void node_changed_locked(struct node *n, const char *table,
				const void *key, size_t len,
				const struct node *col,
				const struct node *skip, int deleted,
				int64_t put_ts, struct inos *a)
{
	if (n->kind == K_ROW && !strcmp(n->table, table) &&
	    n->key.len == len && (!len || !memcmp(n->key.p, key, len))) {
		/* its time is its newest cell's version: a Put at put_ts
		 * makes it at least that, anything else may have lowered
		 * it */
		inos_add(a, n);
		if (!deleted && put_ts >= 0 && n->astate == A_PRESENT) {
			if (put_ts > n->ats)
				n->ats = put_ts;
			n->agen++;	/* a fill read before it: stale */
		} else
			attr_forget(n);
		return;
	}
	if (n->kind != K_CELL || strcmp(n->table, table) ||
	    n->key.len != len || (len && memcmp(n->key.p, key, len)))
		return;
	if (col && (n->famlen != col->famlen ||
		    memcmp(n->fam, col->fam, col->famlen) ||
		    n->qual.len != col->qual.len ||
		    (col->qual.len && memcmp(n->qual.p, col->qual.p,
					     col->qual.len))))
		return;
	attr_forget(n);
	if (n == skip)
		return;
	inos_add(a, n);
	if (deleted || n->ts != CF_TS_NOW)
		inval_name(n);
}

void cells_changed_locked(const char *table, const void *key,
			  size_t len, const struct node *col,
			  const struct node *skip, int deleted,
			  int64_t put_ts, struct inos *a)
{
	struct node *n;

	rows_changed(table);
	if (!node_hcap)
		return;
	if (!col) {
		/* the whole row: every node of it */
		for (n = node_rtab[node_rslot(table, key, len, node_hcap)];
		     n; n = n->rchain.next)
			node_changed_locked(n, table, key, len, NULL, skip,
					    deleted, put_ts, a);
		return;
	}
	/* one column: its cells (every name of them), and the row nodes
	 * (their time); not the row's other cells, which may be a million
	 * nodes after a listing of the row */
	for (n = node_ctab[node_cslot(table, key, len, col->fam, col->famlen,
				      col->qual.p, col->qual.len,
				      node_hcap)]; n; n = n->cchain.next)
		if (n->kind == K_CELL)
			node_changed_locked(n, table, key, len, col, skip,
					    deleted, put_ts, a);
	for (n = node_ctab[node_rslot(table, key, len, node_hcap)]; n;
	     n = n->cchain.next)
		if (n->kind == K_ROW)
			node_changed_locked(n, table, key, len, col, skip,
					    deleted, put_ts, a);
}

static void cells_changed(const char *table, const void *key, size_t len,
			  const struct node *col, const struct node *skip,
			  int deleted)
{
	struct inos a = { NULL, 0, 0 };

	pthread_mutex_lock(&fs_mu);
	cells_changed_locked(table, key, len, col, skip, deleted, -1, &a);
	pthread_mutex_unlock(&fs_mu);
	inval_attrs(&a);
}

/* The cell n names changed (Put, Append, Delete of it). */
void cell_changed(const struct node *n, const struct node *skip,
		  int deleted)
{
	cells_changed(n->table, n->key.p, n->key.len, n, skip, deleted);
}

void fs_table_changed(const char *table, int dropped)
{
	struct inos a = { NULL, 0, 0 };
	struct node *n;
	size_t i;

	cells_added();
	rows_changed(table);
	pthread_mutex_lock(&fs_mu);
	for (i = 0; i < node_hcap; i++)
		for (n = node_htab[i]; n; n = n->hnext) {
			if (strcmp(n->table, table))
				continue;
			attr_forget(n);
			inos_add(&a, n);
			if (n->kind == K_CELL || n->kind == K_ROW ||
			    (dropped && n->kind == K_TABLE))
				inval_name(n);
		}
	if (dropped) {
		fs_perm_forget(table);
		/* a table made again under the name starts without the old
		 * one's empty rows */
		erow_forget_table(table);
	}
	pthread_mutex_unlock(&fs_mu);
	inval_attrs(&a);
}

void fs_rows_changed(const char *table, const struct buf *rows, size_t n)
{
	struct inos a = { NULL, 0, 0 };
	struct node *x;

	cells_added();
	rows_changed(table);
	pthread_mutex_lock(&fs_mu);
	for (size_t i = 0; i < n && node_hcap; i++)
		for (x = node_rtab[node_rslot(table, rows[i].p, rows[i].len,
					      node_hcap)];
		     x; x = x->rchain.next) {
			if (strcmp(x->table, table) ||
			    x->key.len != rows[i].len ||
			    (x->key.len &&
			     memcmp(x->key.p, rows[i].p, x->key.len)))
				continue;
			attr_forget(x);
			inos_add(&a, x);
			inval_name(x);
		}
	pthread_mutex_unlock(&fs_mu);
	inval_attrs(&a);
}

void fs_set_session(struct fuse_session *se)
{
	if (se && !ithread_started) {
		session = se;
		istop = 0;
		ithread_started = !pthread_create(&ithread, NULL, invalidator,
						  NULL);
		return;
	}
	if (!se && ithread_started) {
		pthread_mutex_lock(&imu);
		istop = 1;
		pthread_cond_signal(&icv);
		pthread_mutex_unlock(&imu);
		pthread_join(ithread, NULL);
		ithread_started = 0;
	}
	session = se;
}
