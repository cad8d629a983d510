/*
 * erow.c: empty rows, the daemon's memory of rows: a row directory kept
 * with no cell in it (mkdir, rm), and the columns written into a row the
 * engine found empty, so that cp -r, rsync and tar, which make a row and
 * then its cells, ask the engine nothing per cell (the long comment
 * below says when an erow may be believed).  Owns etab, the counters
 * egen, ebuckets and erow_wseq, and the bounds EUNSURE_MAX (rows kept
 * without asking) and ECOLS_ROWS (rows remembering columns): a few MiB.
 *
 * Promises: an erow is believed only while its gen equals its row's
 * erow_gen, which every write of this daemon that may add a cell
 * otherwise moves on (cells_added, erow_written).  Kept in memory only.
 *
 * Locks: etab and every erow under fs_mu ("With fs_mu held"); the
 * counters are atomics, read without it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"
#include "util/env.h"

#define ECOLS_MAX 32		/* columns an erow remembers */
/* A cols entry's flag: a version of the column was written with a
 * timestamp past the clock, which a DeleteColumn at now leaves. */
#define ECOL_FUTURE 1
static struct erow **etab;	/* empty rows, hashed by (table, row) */
static size_t ecap, ecount;
/* Empty rows with gen EROW_UNSURE, at most EUNSURE_MAX: past it, rm asks
 * the engine at once (each costs a row's name in memory). */
size_t erow_unsure;
/* Rows whose erow remembers columns, at most ECOLS_ROWS (a few MiB): past
 * it a cell written drops its row's erow, as an untracked row. */
static size_t ecolrows;
#define ECOLS_ROWS 16384
/* Bumped (atomically, after the engine write) by every write of this
 * daemon that may add a cell to a row other than through erow_written:
 * .batch, rename, retime, schema changes.  With the row's stripe of
 * ebuckets (bumped by a cell written in a row it did not track), it makes
 * erow_gen: an erow whose gen is still its row's erow_gen has had no cell
 * added since the engine found it empty but those in its cols, so a
 * lookup of another cell and rmdir need not ask the engine (see "empty
 * rows"). */
static uint64_t egen;
#define EBUCKETS 1024
static uint64_t ebuckets[EBUCKETS];
/* Bumped by every column an erow takes (erow_written): an rm that read
 * it before its Delete and finds it unchanged after knows no Put of its
 * column was remembered in between, so the column may go (op_unlink). */
uint64_t erow_wseq;

void cells_added(void)
{
	__atomic_add_fetch(&egen, 1, __ATOMIC_SEQ_CST);
}

/* --- empty rows ----------------------------------------------------------
 *
 * An erow is what the daemon knows of a row without asking the engine:
 *  - kept: the row's directory stays while it has no cell (mkdir made
 *    it, or rm removed a cell of it); rmdir removes it.  The row exists.
 *  - gen: the row's erow_gen when the engine last found the row with no
 *    cell (mkdir, an rm past EUNSURE_MAX), or EROW_UNSURE.  While it is
 *    unchanged no cell came into the row but through erow_written, which
 *    records the column in cols (at most ECOLS_MAX of them): the row's
 *    cells are among cols.  A lookup of a cell of any other column is a
 *    miss, and rmdir of a row whose cols rm emptied removes an empty
 *    row, neither reading the engine.
 * A cell written in a row with no valid erow drops its erow and moves its
 * stripe's gen on; .batch, mv, touch and schema changes move every row's.
 * Kept in memory only: a remount starts with none (SPEC: rows are their
 * cells).
 */

/* With fs_mu held: the empty row, or the slot to add it (NULL: no table
 * yet, and ENOMEM to make one). */
struct erow **erow_find(const char *table, const struct buf *row)
{
	static struct erow *none;
	struct erow **pp, **nt, *e;
	size_t i, ncap, sl;

	if (ecount >= ecap) {
		ncap = ecap ? 2 * ecap : 256;
		nt = calloc(ncap, sizeof *nt);
		if (!nt) {
			none = NULL;
			return ecap ? &etab[node_rslot(table, row->p, row->len,
						  ecap)] : &none;
		}
		for (i = 0; i < ecap; i++)
			while ((e = etab[i])) {
				etab[i] = e->next;
				sl = node_rslot(e->table, e->row.p,
						e->row.len, ncap);
				e->next = nt[sl];
				nt[sl] = e;
			}
		free(etab);
		etab = nt;
		ecap = ncap;
	}
	for (pp = &etab[node_rslot(table, row->p, row->len, ecap)]; *pp;
	     pp = &(*pp)->next)
		if (!strcmp((*pp)->table, table) && (*pp)->row.len == row->len
		    && (!row->len || !memcmp((*pp)->row.p, row->p, row->len)))
			return pp;
	return pp;
}

/* With fs_mu held: e forgets its columns. */
static void erow_cols_clear(struct erow *e)
{
	if (e->ncols)
		ecolrows--;
	e->ncols = 0;
	buf_release(&e->cols);
}

/* With fs_mu held (and unlinked from etab): frees e. */
void erow_free(struct erow *e)
{
	ecount--;
	if (e->gen == EROW_UNSURE)
		__atomic_store_n(&erow_unsure, erow_unsure - 1,
				 __ATOMIC_RELAXED);
	erow_cols_clear(e);
	buf_release(&e->row);
	free(e);
}

/* With fs_mu held: row is no empty row any more. */
void erow_drop_locked(const char *table, const struct buf *row)
{
	struct erow **pp, *e;

	pp = erow_find(table, row);
	if ((e = *pp)) {
		*pp = e->next;
		erow_free(e);
	}
}

static uint64_t *ebucket_of(const char *table, const struct buf *row)
{
	return &ebuckets[node_rslot(table, row->p, row->len, EBUCKETS)];
}

/* For erow_new: read before asking the engine whether row is empty.  The
 * sum of two counters that only grow is unchanged only while neither
 * has changed. */
uint64_t erow_gen(const char *table, const struct buf *row)
{
	return __atomic_load_n(&egen, __ATOMIC_SEQ_CST) +
	       __atomic_load_n(ebucket_of(table, row), __ATOMIC_SEQ_CST);
}

/* With fs_mu held: 1 if e still knows every cell of its row (none written
 * but through erow_written since the engine found it empty). */
int erow_valid(const struct erow *e)
{
	return e && e->gen != EROW_UNSURE &&
	       e->gen == erow_gen(e->table, &e->row);
}

/* The length of the cols entry at p (u8 famlen, u16le quallen, u8
 * flags, fam, qual). */
static size_t ecol_len(const unsigned char *p)
{
	return 4 + (size_t)p[0] + ((size_t)p[1] | (size_t)p[2] << 8);
}

/* With fs_mu held: e's entry for n's column, or NULL. */
static unsigned char *erow_col(const struct erow *e, const struct node *n)
{
	unsigned char *p = e->cols.p, *end = p + e->cols.len;

	for (; p < end; p += ecol_len(p))
		if (ecol_len(p) == 4 + n->famlen + n->qual.len &&
		    p[0] == n->famlen && !memcmp(p + 4, n->fam, n->famlen) &&
		    (!n->qual.len || !memcmp(p + 4 + n->famlen, n->qual.p,
					     n->qual.len)))
			return p;
	return NULL;
}

/* With fs_mu held: 1 if e has a cell of n's column written since. */
int erow_has_col(const struct erow *e, const struct node *n)
{
	return erow_col(e, n) != NULL;
}

/* With fs_mu held: e forgets n's column after a DeleteColumn at now, unless
 * a version of it was written with a timestamp past the clock (the
 * Delete leaves that one: HBase's TimestampTestBase.doTestDelete). */
void erow_col_del(struct erow *e, const struct node *n)
{
	unsigned char *p = erow_col(e, n);
	size_t l;

	if (!p || (p[3] & ECOL_FUTURE))
		return;
	l = ecol_len(p);
	memmove(p, p + l, (size_t)(e->cols.p + e->cols.len - p) - l);
	e->cols.len -= l;
	if (--e->ncols == 0) {
		ecolrows--;
		buf_release(&e->cols);
	}
}

/* With fs_mu held: 1 if row is kept as a directory with no cell in it. */
int erow_kept(const char *table, const struct buf *row)
{
	struct erow *e = *erow_find(table, row);

	return e && e->kept;
}

/* A cell of n's column was written in n's row (after the engine write),
 * at version ts (CF_TS_NOW: at the clock, as appends are).
 * A row whose cells the daemon knows (found empty, and written since only
 * through here) remembers the column, so that a lookup of another cell
 * of it still asks the engine nothing (cp -r, rsync and tar make a row,
 * then its cells); any other row's erow goes, and its stripe's gen moves
 * on, so that an erow a mkdir is making now (its engine read done before
 * this write) is not believed. */
void erow_written(const struct node *n, int64_t ts)
{
	struct erow **pp, *e;
	unsigned char h[4], *p;
	int track;
	/* read after the write: a later Delete at now has a time at least
	 * this, so covers every version not past it */
	int future = ts != CF_TS_NOW && ts > env_now_ms();

	pthread_mutex_lock(&fs_mu);
	pp = erow_find(n->table, &n->key);
	e = *pp;
	track = erow_valid(e) && e->ncols < ECOLS_MAX &&
		n->famlen <= 255 && n->qual.len <= 65535 &&
		(e->ncols || ecolrows < ECOLS_ROWS);
	if (track && (p = erow_col(e, n)) != NULL) {
		if (future)
			p[3] |= ECOL_FUTURE;
	} else if (track) {
		h[0] = (unsigned char)n->famlen;
		h[1] = (unsigned char)n->qual.len;
		h[2] = (unsigned char)(n->qual.len >> 8);
		h[3] = future ? ECOL_FUTURE : 0;
		if (buf_append(&e->cols, h, 4) ||
		    buf_append(&e->cols, n->fam, n->famlen) ||
		    (n->qual.len && buf_append(&e->cols, n->qual.p,
					       n->qual.len)))
			track = 0;
		else {
			if (e->ncols++ == 0)
				ecolrows++;
			__atomic_add_fetch(&erow_wseq, 1, __ATOMIC_SEQ_CST);
		}
	}
	if (track) {
		e->kept = 0;	/* the row has a cell now */
	} else {
		if (e) {
			*pp = e->next;
			erow_free(e);
		}
		__atomic_add_fetch(ebucket_of(n->table, &n->key), 1,
				   __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&fs_mu);
}

/* Keeps row as an empty row directory until a cell is written in it or
 * it is removed. */
struct erow *erow_new(const char *table, const struct buf *row,
		      uint64_t gen)
{
	struct erow *e = calloc(1, sizeof *e);

	if (!e || buf_append(&e->row, row->p, row->len)) {
		free(e);
		return NULL;
	}
	strcpy(e->table, table);
	e->gen = gen;
	e->kept = 1;
	return e;
}

/* With fs_mu held: adds e (made by erow_new) unless its row is kept
 * already; e is taken or freed either way.  An erow that only tracked
 * columns takes e's meaning: the row was found empty since. */
int erow_insert_locked(struct erow *e)
{
	struct erow **pp = erow_find(e->table, &e->row), *o = *pp;

	if (o && !o->kept) {
		*pp = o->next;
		erow_free(o);
		pp = erow_find(e->table, &e->row);
	}
	if (*pp || !ecap) {
		buf_release(&e->row);
		free(e);
		return *pp ? 0 : CF_ENOMEM;
	}
	e->next = *pp;
	*pp = e;
	ecount++;
	if (e->gen == EROW_UNSURE)
		__atomic_store_n(&erow_unsure, erow_unsure + 1,
				 __ATOMIC_RELAXED);
	return 0;
}

int erow_add(const char *table, const struct buf *row, uint64_t gen)
{
	struct erow *e = erow_new(table, row, gen);
	int rc;

	if (!e)
		return CF_ENOMEM;
	pthread_mutex_lock(&fs_mu);
	rc = erow_insert_locked(e);
	pthread_mutex_unlock(&fs_mu);
	return rc;
}

/* With fs_mu held: table is dropped; its empty rows go. */
void erow_forget_table(const char *table)
{
	size_t i;

	for (i = 0; i < ecap; i++) {
		struct erow **pp = &etab[i], *e;
		while ((e = *pp)) {
			if (strcmp(e->table, table)) {
				pp = &e->next;
				continue;
			}
			*pp = e->next;
			erow_free(e);
		}
	}
}

/* Frees every empty row (fs_teardown). */
void erow_teardown(void)
{
	struct erow *e;
	size_t i;

	for (i = 0; i < ecap; i++)
		while ((e = etab[i])) {
			etab[i] = e->next;
			erow_free(e);
		}
	free(etab);
	etab = NULL;
	ecap = ecount = erow_unsure = ecolrows = 0;
}
