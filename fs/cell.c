/*
 * cell.c: cells and rows in the engine: the Get of the cell a node
 * names, a read-only open's value shared by reference (struct fval), the
 * cells of a row, and the Put and re-timing of a cell, each followed by
 * what keeps the caches true (fs/inval.c) and the empty rows right
 * (fs/erow.c).  Owns fs_db, the engine the daemon serves, and
 * fs_max_value, both set once by fs_setup before the session starts.
 *
 * Promises: cell_put fills the node's attribute cache only when the Put
 * is known to be the latest version (the rule in fs/inval.c).  Locks:
 * engine calls are made without fs_mu; fs_mu is taken around the node's
 * cache fields.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"
#include "util/env.h"

cf_db *fs_db;
uint64_t fs_max_value;

/* The cell n names: the row of the Get into *rp (to cf_row_free), the
 * cell in it into *cp (NULL: none). */
static int cell_find(cf_table *t, const struct node *n, int keys_only,
		     cf_row **rp, const struct cf_cell **cp)
{
	struct cf_column col = { n->fam, n->famlen,
				 n->qual.p ? (const void *)n->qual.p : "",
				 n->qual.len };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	const struct cf_cell *c;
	size_t i;
	int rc;

	*rp = NULL;
	*cp = NULL;
	o.columns = &col;
	o.ncolumns = 1;
	o.keys_only = keys_only;
	if (n->ts != CF_TS_NOW) {
		o.min_ts = n->ts;
		o.max_ts = n->ts + 1;
	}
	rc = cf_table_get(t, n->key.p ? (const void *)n->key.p : "",
			  n->key.len, &o, rp);
	if (rc)
		return rc;
	for (i = 0; i < cf_row_count(*rp); i++) {
		c = cf_row_cell(*rp, i);
		if (c->qlen != n->qual.len ||
		    (c->qlen && memcmp(c->qual, n->qual.p, c->qlen)))
			continue;
		*cp = c;
		break;
	}
	return CF_OK;
}

/* The cell n names: *found, its value into val (if non-NULL), ts, len. */
int cell_get(cf_table *t, const struct node *n, int *found,
	     struct buf *val, int64_t *ts, size_t *len)
{
	const struct cf_cell *c;
	cf_row *r;
	int rc;

	*found = 0;
	rc = cell_find(t, n, val == NULL, &r, &c);
	if (!rc && c) {
		*found = 1;
		*ts = c->ts;
		*len = c->vlen;
		if (val)
			rc = buf_append(val, c->val, c->vlen);
	}
	cf_row_free(r);
	return rc;
}

/* fval_get's waiters for a Get another open of the node is making. */
static pthread_cond_t fval_cv = PTHREAD_COND_INITIALIZER;

void fval_put(struct fval *v)
{
	if (!v || __atomic_sub_fetch(&v->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	/* none left: fval_get takes no reference from 0 (fval_take) */
	pthread_mutex_lock(&fs_mu);
	if (v->n->fvc == v)
		v->n->fvc = NULL;
	v->n->nopen--;
	node_unref(v->n);
	pthread_mutex_unlock(&fs_mu);
	cf_row_free(v->row);
	free(v);
}

/* With fs_mu held: a reference on n's shared value, if it still holds
 * the cell's value (read after the last invalidation, not being freed). */
static struct fval *fval_take(struct node *n)
{
	struct fval *v = n->fvc;
	int refs;

	if (!v || v->gen != n->agen)
		return NULL;
	refs = __atomic_load_n(&v->refs, __ATOMIC_ACQUIRE);
	while (refs > 0)
		if (__atomic_compare_exchange_n(&v->refs, &refs, refs + 1, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return v;
	return NULL;	/* its last reference is going */
}

int fval_get(cf_table *t, struct node *n, int share, struct fval **out)
{
	const struct cf_cell *c;
	struct fval *v;
	cf_row *r;
	uint64_t gen;
	int rc;

	*out = NULL;
	pthread_mutex_lock(&fs_mu);
	while (share && !(v = fval_take(n)) && n->fvloading)
		pthread_cond_wait(&fval_cv, &fs_mu);
	if (share && v) {
		pthread_mutex_unlock(&fs_mu);
		*out = v;
		return CF_OK;
	}
	if (share)
		n->fvloading = 1;
	gen = n->agen;
	pthread_mutex_unlock(&fs_mu);
	rc = cell_find(t, n, 0, &r, &c);
	v = NULL;
	if (!rc && !c)
		rc = CF_ENOTFOUND;
	if (!rc && !(v = malloc(sizeof *v)))
		rc = CF_ENOMEM;
	if (v) {
		v->refs = 1;
		v->row = r;
		v->p = c->val;
		v->len = c->val ? c->vlen : 0;
		v->n = n;
		v->gen = gen;
	} else
		cf_row_free(r);
	pthread_mutex_lock(&fs_mu);
	if (v) {
		n->nopen++;
		/* a write since the Get: the next open reads again */
		if (share && n->agen == gen)
			n->fvc = v;
	}
	if (share) {
		n->fvloading = 0;
		pthread_cond_broadcast(&fval_cv);
	}
	pthread_mutex_unlock(&fs_mu);
	*out = v;
	return rc;
}

/* The newest version among the cells of r (0: none): a row's time. */
int64_t row_newest(const cf_row *r)
{
	int64_t ts = 0;
	size_t i;

	for (i = 0; i < cf_row_count(r); i++)
		if (cf_row_cell(r, i)->ts > ts)
			ts = cf_row_cell(r, i)->ts;
	return ts;
}

/* Number of visible cells of row (capped at 1 is enough for callers);
 * with newest, the newest version among them too. */
int row_cells_at(cf_table *t, const struct buf *row, size_t *n,
		 int64_t *newest)
{
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	cf_row_cursor *c;
	const cf_row *r;
	int rc;

	/* page by page: a row of a million columns costs a page (the
	 * count of the first page is enough without the time) */
	*n = 0;
	if (newest)
		*newest = 0;
	o.keys_only = 1;
	rc = cf_row_cursor_open(t, row->p ? (const void *)row->p : "",
				row->len, &o, &c);
	while (!rc && !(rc = cf_row_cursor_next(c, 1024, &r)) &&
	       cf_row_count(r)) {
		*n += cf_row_count(r);
		if (!newest)
			break;
		if (row_newest(r) > *newest)
			*newest = row_newest(r);
	}
	cf_row_cursor_close(c);
	return rc;
}

/* row_cells_at without the time. */
int row_cells(cf_table *t, const struct buf *row, size_t *n)
{
	return row_cells_at(t, row, n, NULL);
}

/* Puts data at the cell n names (ts: CF_TS_NOW or a version). */
int cell_put(struct node *n, const struct buf *data, int64_t ts)
{
	struct inos a = { NULL, 0, 0 };
	cf_batch *b = NULL;
	cf_table *t;
	uint64_t gen;
	int rc, fill;

	if (!cf_family_name_valid(n->fam, n->famlen))
		return CF_EINVAL;
	/* the version is chosen here, as the engine would (its clock at
	 * the Put), so that the attribute cache knows it */
	if (ts == CF_TS_NOW)
		ts = env_now_ms();
	pthread_mutex_lock(&fs_mu);
	gen = n->agen;
	fill = n->ts == CF_TS_NOW && (n->astate == A_ABSENT ||
				      (n->astate == A_PRESENT && n->ats <= ts));
	pthread_mutex_unlock(&fs_mu);
	rc = topen(n->table, &t);
	if (rc)
		return rc;
	rc = cf_batch_new(&b);
	/* the value is not copied into the batch: data outlives it */
	if (!rc)
		rc = cf_batch_put_ref(b, n->key.p ? (const void *)n->key.p : "",
				      n->key.len, n->fam, n->famlen,
				      n->qual.p ? (const void *)n->qual.p
						: "", n->qual.len, ts,
				      data->p ? (const void *)data->p : "",
				      data->len);
	if (!rc)
		rc = cf_table_apply(t, b);
	cf_batch_free(b);
	cf_table_close(t);
	if (rc)
		return rc;
	erow_written(n, ts);
	pthread_mutex_lock(&fs_mu);
	fill = fill && n->agen == gen;
	/* n's own attributes need no notification when the kernel holds
	 * none (attrs_stale): one write(2) to /dev/fuse less a close */
	cells_changed_locked(n->table, n->key.p, n->key.len, n,
			     __atomic_load_n(&n->attrs_stale, __ATOMIC_SEQ_CST)
			     ? n : NULL, 0, ts, &a);
	if (fill) {
		n->astate = A_PRESENT;
		n->asize = data->len;
		n->ats = ts;
	}
	pthread_mutex_unlock(&fs_mu);
	inval_attrs(&a);
	return rc;
}

/* Moves a cell to timestamp ts: Put at ts and Delete of the old version,
 * one row mutation. */
int cell_retime(struct node *n, int64_t ts)
{
	struct buf v = BUF_INIT;
	cf_batch *b = NULL;
	cf_table *t;
	int64_t old;
	size_t len;
	int rc, found;
	const void *row = n->key.p ? (const void *)n->key.p : "";
	const void *q = n->qual.p ? (const void *)n->qual.p : "";

	rc = topen(n->table, &t);
	if (rc)
		return rc;
	rc = cell_get(t, n, &found, &v, &old, &len);
	if (!rc && !found)
		rc = CF_ENOTFOUND;
	if (!rc && old != ts) {
		rc = cf_batch_new(&b);
		if (!rc)
			rc = cf_batch_delete(b, CF_DEL_VERSION, row,
					     n->key.len, n->fam, n->famlen,
					     q, n->qual.len, old);
		if (!rc)
			rc = cf_batch_put(b, row, n->key.len, n->fam,
					  n->famlen, q, n->qual.len, ts,
					  v.p ? (const void *)v.p : "",
					  v.len);
		if (!rc)
			rc = cf_table_apply(t, b);
		cf_batch_free(b);
	}
	buf_release(&v);
	cf_table_close(t);
	if (!rc) {
		cells_added();
		cell_changed(n, NULL, 0);
	}
	return rc;
}
