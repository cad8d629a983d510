/*
 * rename.c: RENAME (mv): a cell onto another cell of its row (Put at the
 * new qualifier with the old timestamp and DeleteColumn of the old, one
 * row mutation, replacing the target as rename(2) does), a staged file
 * onto a cell or .schema (rsync's temporary file lands), and a staged
 * file onto another name.  Anything else is EXDEV (another row) or
 * EINVAL.  RENAME_NOREPLACE (renameat2, which mv tries first) is kept
 * for a cell onto a cell name of its row: EEXIST if that has a cell;
 * other flags and cases are EINVAL (mv then renames plainly).  A file of
 * tsd/metrics/, tagk/ or tagv/ onto another name of its directory
 * renames the name's UID (fs_tsd_rename; EEXIST when the new name has
 * one, never replacing it).
 *
 * Promises, as rename(2) for inodes: a file open on the source follows
 * it to the new name (node_swap); one open for writing on the replaced
 * target writes to no name any more (orphan).  Locks: engine calls
 * without fs_mu; the node swap and the writers under it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"

static int same_row(const struct node *a, const struct node *b)
{
	return !strcmp(a->table, b->table) && a->key.len == b->key.len &&
	       (!a->key.len || !memcmp(a->key.p, b->key.p, a->key.len));
}

/* 1 if cells a and b of one row are of one column. */
static int cell_same_column(const struct node *a, const struct node *b)
{
	return a->famlen == b->famlen && !memcmp(a->fam, b->fam, a->famlen) &&
	       a->qual.len == b->qual.len &&
	       (!a->qual.len || !memcmp(a->qual.p, b->qual.p, a->qual.len));
}

/*
 * mv ROW/F:Q ROW/F:Q2: Put at Q2 with Q's timestamp, DeleteColumn at Q.
 * Onto a plain name the move replaces the target as rename(2) does: a
 * DeleteColumn of every version of Q2 goes first in the batch, so a
 * newer Q2 cannot hide the moved value, and the Put after it (a later
 * write, which no earlier delete masks) keeps Q's timestamp, the file's
 * mtime.  With noreplace (RENAME_NOREPLACE, what mv tries first) the
 * batch applies only if Q2 has no cell, checked atomically with it (a
 * CheckAndMutate): CF_EEXIST if it has one.
 */
static int cell_move(struct node *s, struct node *d, int noreplace)
{
	struct buf v = BUF_INIT;
	cf_batch *b = NULL;
	cf_table *t;
	int64_t ts;
	size_t len;
	int rc, found, applied = 0;
	const void *row = s->key.p ? (const void *)s->key.p : "";
	const void *dq = d->qual.p ? (const void *)d->qual.p : "";

	rc = topen(s->table, &t);
	if (rc)
		return rc;
	if (!cf_table_has_family(t, d->fam, d->famlen))
		rc = CF_ENOTFOUND;
	if (!rc)
		rc = cell_get(t, s, &found, &v, &ts, &len);
	if (!rc && !found)
		rc = CF_ENOTFOUND;
	if (!rc)
		rc = cf_batch_new(&b);
	if (!rc)
		rc = cf_batch_delete(b, CF_DEL_COLUMN, row, s->key.len,
				     s->fam, s->famlen,
				     s->qual.p ? (const void *)s->qual.p : "",
				     s->qual.len, CF_TS_NOW);
	if (!rc && d->ts == CF_TS_NOW && !noreplace)
		rc = cf_batch_delete(b, CF_DEL_COLUMN, row, s->key.len,
				     d->fam, d->famlen, dq, d->qual.len,
				     INT64_MAX - 1);
	if (!rc)
		rc = cf_batch_put(b, row, s->key.len, d->fam, d->famlen,
				  dq, d->qual.len,
				  d->ts == CF_TS_NOW ? ts : d->ts,
				  v.p ? (const void *)v.p : "", v.len);
	if (!rc && !noreplace)
		rc = cf_table_apply(t, b);
	if (!rc && noreplace) {
		rc = cf_table_check_and_apply(t, row, s->key.len, d->fam,
					      d->famlen, dq, d->qual.len,
					      NULL, 0, b, &applied);
		if (!rc && !applied)
			rc = CF_EEXIST;
	}
	cf_batch_free(b);
	cf_table_close(t);
	buf_release(&v);
	if (!rc) {
		/* the two columns, not the row (a row of a million cells
		 * listed has a million nodes) */
		cells_added();
		cell_changed(s, NULL, 1);
		if (!cell_same_column(s, d))
			cell_changed(d, NULL, 1);
	}
	return rc;
}

/* With fs_mu held: 1 if a writer of cell n holds a value its close will
 * put (what makes a cell created and not yet closed exist). */
static int writer_pending_locked(const struct node *n)
{
	const struct fileh *h = n->writer;

	return h && __atomic_load_n(&h->dirty, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&h->failed, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&h->orphan, __ATOMIC_RELAXED);
}

/* mv of a cell created and not yet closed, s onto d: no value to move
 * yet, only the name, whose writer puts at close (op_rename makes it
 * follow).  d is replaced as cell_move replaces it: a DeleteColumn of
 * every version, which the writer's later Put is not masked by. */
static int cell_move_pending(struct node *s, struct node *d)
{
	cf_batch *b = NULL;
	cf_table *t;
	int rc;

	rc = topen(d->table, &t);
	if (rc)
		return rc;
	if (!cf_table_has_family(t, d->fam, d->famlen))
		rc = CF_ENOTFOUND;
	if (!rc)
		rc = cf_batch_new(&b);
	if (!rc)
		rc = cf_batch_delete(b, CF_DEL_COLUMN,
				     d->key.p ? (const void *)d->key.p : "",
				     d->key.len, d->fam, d->famlen,
				     d->qual.p ? (const void *)d->qual.p : "",
				     d->qual.len, INT64_MAX - 1);
	if (!rc)
		rc = cf_table_apply(t, b);
	cf_batch_free(b);
	cf_table_close(t);
	if (!rc) {
		cell_changed(s, NULL, 1);
		if (!cell_same_column(s, d))
			cell_changed(d, NULL, 1);
	}
	return rc;
}

void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
	       fuse_ino_t newparent, const char *newname,
	       unsigned int flags)
{
	struct node *s = NULL, *d = NULL;
	struct stage **sp, *st = NULL, **dp;
	const char *why = "";
	char twhy[300];
	int err, rc = 0;

	err = lookup_node(parent, name, &s, &why);
	if (!err)
		err = lookup_node(newparent, newname, &d, &why);
	if (err)
		goto out;
	if (flags & ~(unsigned)RENAME_NOREPLACE) {
		err = EINVAL;
		why = "rename flags other than RENAME_NOREPLACE are not "
		      "supported";
	} else if (s->kind == K_TSD && d->kind == K_TSD && s->tk == d->tk &&
		   s->parent == d->parent) {
		/* a UID renamed: never replaces, so RENAME_NOREPLACE too */
		err = fs_tsd_rename(s->tk, &s->key, &d->key, twhy,
				    sizeof twhy);
		why = twhy;
		if (!err && s != d) {
			pthread_mutex_lock(&fs_mu);
			node_swap(s, d);
			pthread_mutex_unlock(&fs_mu);
		}
	} else if (flags && (s->kind != K_CELL || d->kind != K_CELL ||
			     d->ts != CF_TS_NOW || !same_row(s, d))) {
		/* mv tries RENAME_NOREPLACE first and on EINVAL renames */
		err = EINVAL;
		why = "RENAME_NOREPLACE moves only a cell onto a cell name "
		      "of its row";
	} else if (s->kind == K_STAGE && d->kind == K_CELL && s->in_row &&
		   same_row(s, d)) {
		pthread_mutex_lock(&fs_mu);
		sp = stage_find(s);
		if ((st = *sp))
			*sp = st->next;
		pthread_mutex_unlock(&fs_mu);
		if (!st) {
			err = ENOENT;
			why = "no such staged file";
		} else {
			cf_table *t;
			rc = topen(d->table, &t);
			if (!rc) {
				if (!cf_table_has_family(t, d->fam,
							 d->famlen))
					rc = CF_ENOTFOUND;
				cf_table_close(t);
			}
			if (!rc)
				rc = cell_put(d, &st->data,
					      d->ts != CF_TS_NOW ? d->ts :
					      st->mtime);
			why = cf_strerror(rc);
			/* a file open for writing on d (rsync's target
			 * being written by another) writes to no name any
			 * more: its close puts nothing over the value
			 * moved here.  d keeps its name, so the writer is
			 * no longer its: a stat of d shows the new value */
			if (!rc) {
				pthread_mutex_lock(&fs_mu);
				if (d->writer) {
					__atomic_store_n(&d->writer->orphan, 1,
							 __ATOMIC_RELAXED);
					d->writer = NULL;
				}
				pthread_mutex_unlock(&fs_mu);
			}
		}
	} else if (s->kind == K_STAGE && d->kind == K_SCHEMA && !s->in_row &&
		   !strcmp(s->table, d->table)) {
		pthread_mutex_lock(&fs_mu);
		sp = stage_find(s);
		if ((st = *sp))
			*sp = st->next;
		pthread_mutex_unlock(&fs_mu);
		if (!st) {
			err = ENOENT;
			why = "no such staged file";
		} else
			rc = apply_schema(d, &st->data, st->mtime, &why);
	} else if (s->kind == K_STAGE && d->kind == K_STAGE &&
		   s->in_row == d->in_row && same_row(s, d)) {
		pthread_mutex_lock(&fs_mu);
		sp = stage_find(s);
		if (!*sp) {
			err = ENOENT;
		} else {
			dp = stage_find(d);
			if (*dp && *dp != *sp) {
				st = *dp;
				*dp = st->next;
				stage_free(st);
				st = NULL;
				sp = stage_find(s);
			}
			free((*sp)->name);
			(*sp)->name = strdup(newname);
			if (!(*sp)->name) {
				st = *sp;
				*sp = st->next;
				stage_free(st);
				st = NULL;
				err = ENOMEM;
			}
		}
		pthread_mutex_unlock(&fs_mu);
		why = "no such staged file";
	} else if (s->kind == K_CELL && d->kind == K_CELL && same_row(s, d)) {
		int pending = 0;
		if (flags) {
			/* a cell created and not yet closed exists */
			pthread_mutex_lock(&fs_mu);
			pending = writer_pending_locked(d);
			pthread_mutex_unlock(&fs_mu);
			if (pending) {
				err = EEXIST;
				why = "the target is being written";
				goto out;
			}
		}
		rc = cell_move(s, d, flags != 0);
		if (rc == CF_ENOTFOUND && s != d && s->ts == CF_TS_NOW &&
		    d->ts == CF_TS_NOW) {
			pthread_mutex_lock(&fs_mu);
			pending = writer_pending_locked(s);
			pthread_mutex_unlock(&fs_mu);
			if (pending && flags) {
				/* no value to check and move atomically */
				err = EINVAL;
				rc = 0;
				why = "RENAME_NOREPLACE of a cell not yet "
				      "closed is not supported";
				goto out;
			}
			if (pending)
				rc = cell_move_pending(s, d);
		}
		why = cf_strerror(rc);
		/* As rename(2) does to inodes: a file open on s (being
		 * written: its close puts there) follows it to the new name,
		 * and one open for writing on d, which the move replaced,
		 * writes to no name any more: its close puts nothing, and
		 * does not bring back s's old name, now d's meaning.  (A
		 * stat of that name then finds no cell: cell_attrs passes
		 * over such a writer; fstat of its fd shows what it holds,
		 * with no link.) */
		if (!rc) {
			pthread_mutex_lock(&fs_mu);
			if (d->writer && d != s)
				__atomic_store_n(&d->writer->orphan, 1,
						 __ATOMIC_RELAXED);
			node_swap(s, d);
			pthread_mutex_unlock(&fs_mu);
		}
	} else if ((s->kind == K_CELL || s->kind == K_STAGE ||
		    s->kind == K_ROW) && !same_row(s, d)) {
		err = EXDEV;
		why = "a cell moves only within its row";
	} else {
		err = EINVAL;
		why = "cannot rename this onto that";
	}
	if (!err && rc)
		err = fs_errno(rc);
	if (st) {
		pthread_mutex_lock(&fs_mu);
		stage_bytes += 0;
		stage_free(st);
		pthread_mutex_unlock(&fs_mu);
	}
out:
	if (s)
		node_release(s);
	if (d)
		node_release(d);
	if (err)
		fs_fail(req, err, "mv %s %s: %s", name, newname, why);
	else
		fuse_reply_err(req, 0);
}
