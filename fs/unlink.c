/*
 * unlink.c: UNLINK (rm): a cell (a DeleteColumn of a latest-version
 * name, or the Delete of one version @TS), a staged file, or the notes
 * of a tsd/annotations/ range.  The row
 * directory stays, kept as an empty row (fs/erow.c), until rmdir.
 *
 * Locks: the engine Delete without fs_mu; the caches, the empty row and
 * the pin after it under fs_mu, taken once.
 */
#include <errno.h>

#include "fs/internal.h"

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct node *n;
	struct stage **sp, *s;
	cf_batch *b = NULL;
	cf_table *t;
	const char *why;
	char twhy[320];
	size_t cnt;
	int err, rc = 0;

	err = lookup_node(parent, name, &n, &why);
	if (err) {
		fs_fail(req, err, "rm %s: %s", name, why);
		return;
	}
	if (n->kind == K_CELL) {
		struct inos a = { NULL, 0, 0 };
		struct erow *e = NULL;
		uint64_t gen = erow_gen(n->table, &n->key);
		uint64_t wseq = __atomic_load_n(&erow_wseq, __ATOMIC_SEQ_CST);
		int deleted = 0, ask = 0, keep = 0;

		rc = topen(n->table, &t);
		if (!rc) {
			rc = cf_batch_new(&b);
			if (!rc)
				rc = cf_batch_delete(b, n->ts == CF_TS_NOW ?
					CF_DEL_COLUMN : CF_DEL_VERSION,
					n->key.p ? (const void *)n->key.p : "",
					n->key.len, n->fam, n->famlen,
					n->qual.p ? (const void *)n->qual.p
						  : "", n->qual.len, n->ts);
			if (!rc)
				rc = cf_table_apply(t, b);
			cf_batch_free(b);
			deleted = !rc;
			/* The row directory stays until rmdir, as on any
			 * filesystem (`rm -r ROW` removes cells first): an
			 * empty row, kept whether or not other cells are left
			 * (a row with cells exists anyway), so no engine
			 * read here; rmdir asks.  Past EUNSURE_MAX such rows
			 * the engine is asked now, and only a row found
			 * empty is kept. */
			ask = __atomic_load_n(&erow_unsure,
					      __ATOMIC_RELAXED) >= EUNSURE_MAX;
			keep = !rc && (!ask || (!row_cells(t, &n->key, &cnt) &&
						cnt == 0));
			cf_table_close(t);
		}
		/* the caches, the empty row and the pin: fs_mu once; the empty
		 * row is made under it only when its row has none yet (the
		 * first rm of a row), not made and freed by every rm */
		pthread_mutex_lock(&fs_mu);
		if (deleted)
			cells_changed_locked(n->table, n->key.p, n->key.len,
					     n, n, 1, -1, &a);
		if (keep && (e = *erow_find(n->table, &n->key))) {
			/* its columns are still known, and the one deleted
			 * is gone unless a Put of it was remembered since
			 * the Delete began (then it may be there) */
			e->kept = 1;
			if (deleted && n->ts == CF_TS_NOW && erow_valid(e) &&
			    wseq == __atomic_load_n(&erow_wseq,
						    __ATOMIC_SEQ_CST))
				erow_col_del(e, n);
		} else if (keep)
			rc = (e = erow_new(n->table, &n->key,
					   ask ? gen : EROW_UNSURE)) ?
			     erow_insert_locked(e) : CF_ENOMEM;
		n->nopen--;
		node_unref(n);
		pthread_mutex_unlock(&fs_mu);
		inval_attrs(&a);
		if (rc)
			fs_fail(req, fs_errno(rc), "rm %s: %s", name,
			     cf_strerror(rc));
		else
			fuse_reply_err(req, 0);
		return;
	} else if (n->kind == K_STAGE) {
		pthread_mutex_lock(&fs_mu);
		sp = stage_find(n);
		if ((s = *sp)) {
			*sp = s->next;
			stage_free(s);
		} else
			err = ENOENT;
		pthread_mutex_unlock(&fs_mu);
		why = "no such staged file";
	} else if (n->kind == K_TSD) {
		/* rm tsd/annotations/RANGE deletes those notes */
		err = fs_tsd_unlink(n->tk, &n->key, twhy, sizeof twhy);
		why = twhy;
	} else {
		err = EPERM;
		why = "cannot be removed";
	}
	node_release(n);
	if (!err && rc)
		err = fs_errno(rc);
	if (err)
		fs_fail(req, err, "rm %s: %s", name, why);
	else
		fuse_reply_err(req, 0);
}
