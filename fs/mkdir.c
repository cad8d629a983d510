/*
 * mkdir.c: MKDIR and RMDIR: a table (created with one family "cf", or
 * dropped), a region (a split at the name's key, or merged into the
 * region before it) and a row (kept as an empty row until a cell is
 * written in it, or removed when it has no cell).  Nothing else can be
 * made or removed as a directory (EPERM).
 *
 * Locks: engine calls without fs_mu; the empty rows and the pin under it.
 */
#include <errno.h>
#include <string.h>

#include "fs/control.h"
#include "fs/internal.h"

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
	      mode_t mode)
{
	struct node *n;
	struct cf_family f;
	struct stat st;
	cf_table *t;
	const char *why;
	uint64_t agen = 0;	/* a row's agen before it was found absent */
	int err, rc = 0;

	err = lookup_node(parent, name, &n, &why);
	if (err == ENOENT && node_of(parent)->kind == K_TSD) {
		/* a name tsd/ does not know: nothing can be made there,
		 * not "no such file" (a name a lookup probes for) */
		err = EPERM;
		why = "no directory can be made here";
	} else if (err == ENOENT && node_of(parent)->kind == K_ROOT) {
		err = EINVAL;	/* a name starting with '.' */
		why = "not a valid table name";
	}
	if (err) {
		fs_fail(req, err, "mkdir %s: %s", name, why);
		return;
	}
	switch (n->kind) {
	case K_TABLE:
		cf_family_default(&f, "cf");
		rc = cf_table_create(fs_db, name, &f, 1);
		if (!rc)
			fs_perm_forget(name);	/* the engine's defaults */
		break;
	case K_REGION:
		rc = topen(n->table, &t);
		if (rc)
			break;
		if (n->key.len)
			rc = cf_table_split(t, n->key.p, n->key.len);
		else
			rc = CF_EEXIST;
		if (!rc)	/* the region split is a new one: its time */
			fs_table_changed(n->table, 0);
		if (rc == CF_EEXIST)
			rc = 0;	/* already a region start: nothing to do */
		cf_table_close(t);
		break;
	case K_ROW: {
		/* a row exists when it has cells or was made empty; under a
		 * region directory any name resolves, so ask the table */
		size_t cells = 0;
		int empty_row, absent;
		uint64_t gen = erow_gen(n->table, &n->key);
		/* the LOOKUP the kernel sent first found the row absent and
		 * no write of this daemon has changed the table's rows
		 * since: no engine read (the tsd tables are written by
		 * tsd/ without telling us) */
		pthread_mutex_lock(&fs_mu);
		absent = n->rabsent && n->rgen == rows_gen(n->table) &&
			 attr_cacheable(n->table);
		if (absent)
			gen = n->regen;
		agen = n->agen;
		pthread_mutex_unlock(&fs_mu);
		if (!absent) {
			rc = topen(n->table, &t);
			if (rc)
				break;
			rc = row_cells(t, &n->key, &cells);
			cf_table_close(t);
		}
		pthread_mutex_lock(&fs_mu);
		empty_row = erow_kept(n->table, &n->key);
		pthread_mutex_unlock(&fs_mu);
		if (!rc && (cells || empty_row))
			rc = CF_EEXIST;
		else if (!rc)
			rc = erow_add(n->table, &n->key, gen);
		break;
	}
	default:
		err = EPERM;
		why = "no directory can be made here";
		break;
	}
	if (!err && rc) {
		err = fs_errno(rc);
		why = cf_strerror(rc);
	}
	if (!err && n->kind == K_ROW) {
		/* just made: no need to ask the engine again; it has no
		 * cell, so no time (0), which the daemon keeps for it unless
		 * a change to the row came in between */
		if (attr_cacheable(n->table) && !table_has_ttl(n->table)) {
			pthread_mutex_lock(&fs_mu);
			if (n->agen == agen) {
				n->astate = A_PRESENT;
				n->ats = 0;
			}
			pthread_mutex_unlock(&fs_mu);
		}
		memset(&st, 0, sizeof st);
		st.st_ino = ino_of(n);
		st.st_nlink = 2;
		node_perm(n, &st);
	} else if (!err)
		err = node_stat(n, &st);
	if (err) {
		node_release(n);
		fs_fail(req, err, "mkdir %s: %s", name, why);
		return;
	}
	reply_entry(req, n, &st);
	node_release(n);
}

void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct inos a = { NULL, 0, 0 };
	struct node *n;
	cf_table *t;
	const char *why;
	size_t cnt;
	int err, rc = 0, empty = 0;

	err = lookup_node(parent, name, &n, &why);
	if (err) {
		fs_fail(req, err, "rmdir %s: %s", name, why);
		return;
	}
	switch (n->kind) {
	case K_TABLE:
		rc = cf_table_drop(fs_db, name, 1);
		if (!rc)
			fs_table_changed(name, 1);
		break;
	case K_ROW: {
		/* An empty row the engine found empty (mkdir) with no
		 * cell added since (egen unchanged: a Put through a cell
		 * drops the empty row itself) is empty: no engine read.
		 * One left by rm (EROW_UNSURE) may have cells: asked.
		 * The tsd tables are written by tsd/ without telling us:
		 * always asked. */
		struct erow **pp;
		if (attr_cacheable(n->table)) {
			pthread_mutex_lock(&fs_mu);
			pp = erow_find(n->table, &n->key);
			if (erow_valid(*pp) && !(*pp)->ncols) {
				erow_drop_locked(n->table, &n->key);
				cells_changed_locked(n->table, n->key.p,
						     n->key.len, NULL, NULL, 1,
						     -1, &a);
				n->nopen--;
				node_unref(n);
				pthread_mutex_unlock(&fs_mu);
				inval_attrs(&a);
				fuse_reply_err(req, 0);
				return;
			}
			pthread_mutex_unlock(&fs_mu);
		}
		rc = topen(n->table, &t);
		if (rc)
			break;
		rc = row_cells(t, &n->key, &cnt);
		cf_table_close(t);
		if (!rc && cnt)
			rc = CF_ENOTEMPTY;
		empty = !rc;
		break;
	}
	case K_REGION:
		/* the inverse of mkdir T/@KEY: the region merges into the
		 * one before it (HBase's merge_region) */
		rc = topen(n->table, &t);
		if (rc)
			break;
		why = NULL;
		rc = fs_merge_region(t, n->table, &n->key, &why);
		cf_table_close(t);
		if (rc) {
			err = fs_errno(rc);
			why = why ? why : cf_strerror(rc);
			rc = 0;
		}
		break;
	default:
		err = EPERM;
		why = "this directory cannot be removed";
		break;
	}
	/* the empty row goes, and what its row nodes knew (that it
	 * exists: node_stat), and the pin with it: fs_mu once */
	pthread_mutex_lock(&fs_mu);
	if (empty) {
		erow_drop_locked(n->table, &n->key);
		cells_changed_locked(n->table, n->key.p, n->key.len, NULL,
				     NULL, 1, -1, &a);
	}
	n->nopen--;
	node_unref(n);
	pthread_mutex_unlock(&fs_mu);
	inval_attrs(&a);
	if (!err && rc) {
		err = fs_errno(rc);
		why = cf_strerror(rc);
	}
	if (err)
		fs_fail(req, err, "rmdir %s: %s", name, why);
	else
		fuse_reply_err(req, 0);
}
