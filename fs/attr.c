/*
 * attr.c: attributes: what stat(2) shows of a node (node_stat: asked of
 * the engine, or of the node's cached answer; a cell being written shows
 * what its writer holds), how long the kernel may keep it (cache_s), and
 * the LOOKUP and GETATTR requests that carry it.
 *
 * Promises: the attribute cache of a node is filled only from an engine
 * read with no invalidation of the node between the read and the fill
 * (agen), and never for a table with a TTL family or the time-series
 * tables.  Locks: engine calls without fs_mu; fs_mu around the node's
 * cache fields and its writer's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"
#include "tsd/tsd.h"
#include "util/env.h"

/* What the special name n stands for (pointers into n). */
void hq_target(const struct node *n, struct fs_hq_target *tg)
{
	const char *at = n->hk == FQ_SCAN ? NULL : strchr(n->name, '@');

	memset(tg, 0, sizeof *tg);
	tg->table = n->table;
	tg->row = n->key.p ? (const void *)n->key.p : "";
	tg->rowlen = n->key.len;
	tg->fam = n->fam;
	tg->famlen = n->famlen;
	tg->qual = n->qual.p ? (const void *)n->qual.p : "";
	tg->qlen = n->qual.len;
	/* a cell's qualifier never holds a raw '@': the spec follows it */
	tg->arg = n->hk == FQ_SCAN ? n->name : at ? at + 1 : "";
}

/* 1 if a family of t has a TTL (its cells vanish with time); 1 also when
 * the schema cannot be read. */
static int table_ttl(cf_table *t)
{
	struct cf_family *f = NULL;
	size_t n = 0, i;
	int ttl = 1;

	if (!cf_table_schema(t, &f, &n))
		for (ttl = 0, i = 0; i < n; i++)
			ttl |= f[i].ttl != CF_TTL_FOREVER;
	free(f);
	return ttl;
}

/* 1 if a family of t has KEEP_DELETED_CELLS (0 also when the schema
 * cannot be read). */
static int table_keeps_deleted(cf_table *t)
{
	struct cf_family *f = NULL;
	size_t n = 0, i;
	int kdc = 0;

	if (!cf_table_schema(t, &f, &n))
		for (i = 0; i < n; i++)
			kdc |= f[i].keep_deleted != CF_KDC_FALSE;
	free(f);
	return kdc;
}

/* 1 if every write to table passes through this daemon's files, so
 * what they remember of the table's cells and rows (attributes, absent
 * rows, empty rows) stays true: the time-series layer writes its tables
 * without telling them. */
int attr_cacheable(const char *table)
{
	return strcmp(table, TSD_TABLE_DATA) && strcmp(table, TSD_TABLE_UID);
}

/* The size and time of cell n into st, from what the engine said (found,
 * ts, len): CF_OK or CF_ENOTFOUND. */
static int cell_attrs(struct node *n, struct stat *st, int found, int64_t ts,
		      size_t len)
{
	if (!found) {
		/* a cell created and not yet closed (cp, tar fstat it):
		 * what has been written so far */
		pthread_mutex_lock(&fs_mu);
		if (n->writer && !__atomic_load_n(&n->writer->orphan,
						  __ATOMIC_RELAXED)) {
			found = 1;
			ts = env_now_ms();
			len = __atomic_load_n(&n->writer->data.len,
					      __ATOMIC_RELAXED);
		}
		pthread_mutex_unlock(&fs_mu);
	}
	if (!found)
		return CF_ENOTFOUND;
	st->st_size = (off_t)len;
	set_time(st, ts);
	return CF_OK;
}

int rows_fillable(cf_table *t, const char *table)
{
	return attr_cacheable(table) && !table_ttl(t);
}

void row_seen(struct node *n, int64_t ts, uint64_t gen)
{
	pthread_mutex_lock(&fs_mu);
	if (n->kind == K_ROW && rows_gen(n->table) == gen) {
		n->astate = A_PRESENT;
		n->ats = ts;
		n->rabsent = 0;
	}
	pthread_mutex_unlock(&fs_mu);
}

/* 1 if a family of table has a TTL (table_ttl). */
int table_has_ttl(const char *table)
{
	cf_table *t;
	int ttl;

	if (topen(table, &t))
		return 1;
	ttl = table_ttl(t);
	cf_table_close(t);
	return ttl;
}

/* Fills st for n after asking the engine whether it exists (or, for a
 * cell or a row, its cached answer): 0 or errno. */
int node_stat(struct node *n, struct stat *st)
{
	cf_table *t = NULL;
	struct cf_region_info *r = NULL;
	struct buf b = BUF_INIT;
	struct stage **sp;
	size_t nr = 0, i, cnt;
	int rc = 0, found = 0, known = 0;
	uint64_t gen = 0;
	int64_t ts = 0;
	size_t len = 0;

	memset(st, 0, sizeof *st);
	st->st_ino = ino_of(n);
	st->st_nlink = node_is_dir(n) ? 2 : 1;
	node_perm(n, st);
	switch (n->kind) {
	case K_ROOT: case K_ROOT_CTL: case K_ROOT_STATS: case K_ROOT_LOG:
		return 0;
	case K_TSD: {
		char why[320];
		/* produced when read, like /proc files: the time is now */
		set_time(st, now_ms());
		rc = fs_tsd_stat(n->tk, &n->key, st, why, sizeof why);
		pthread_mutex_lock(&fs_mu);
		if (rc == ENOENT && n->twriters)
			rc = 0;
		pthread_mutex_unlock(&fs_mu);
		return rc;
	}
	case K_HQ: {
		char why[160];
		struct fs_hq_target tg;
		hq_target(n, &tg);
		rc = fs_hq_stat(fs_db, n->hk, &tg, st, why, sizeof why);
		pthread_mutex_lock(&fs_mu);
		if (rc == ENOENT && n->writer)
			rc = 0;	/* a counter being created */
		pthread_mutex_unlock(&fs_mu);
		return rc;
	}
	case K_STAGE:
		pthread_mutex_lock(&fs_mu);
		sp = stage_find(n);
		if (*sp) {
			st->st_size = (off_t)(*sp)->data.len;
			if ((*sp)->mtime != CF_TS_NOW)
				set_time(st, (*sp)->mtime);
		} else
			rc = ENOENT;
		pthread_mutex_unlock(&fs_mu);
		return rc;
	case K_CELL: {
		int empty = 0;
		pthread_mutex_lock(&fs_mu);
		gen = n->agen;
		if (n->astate != A_UNKNOWN) {
			known = 1;
			found = n->astate == A_PRESENT;
			ts = n->ats;
			len = n->asize;
		} else if (attr_cacheable(n->table)) {
			/* a row made empty by mkdir (found empty, and no
			 * cell added since but through erow_written) has
			 * only the cells its erow remembers: the cells cp
			 * or rsync creates in it need no engine read */
			struct erow **pp = erow_find(n->table, &n->key);
			struct erow *e = *pp;
			empty = known = erow_valid(e) && !erow_has_col(e, n);
			if (e && !e->kept && !erow_valid(e)) {
				/* it knows nothing any more: it goes */
				*pp = e->next;
				erow_free(e);
			}
		}
		pthread_mutex_unlock(&fs_mu);
		if (empty && !table_has_ttl(n->table)) {
			pthread_mutex_lock(&fs_mu);
			if (n->agen == gen)
				n->astate = A_ABSENT;
			pthread_mutex_unlock(&fs_mu);
		}
		if (known)
			return fs_errno(cell_attrs(n, st, found, ts, len));
		break;
	}
	case K_ROW:
		/* a row whose existence and time the engine or a listing
		 * told (astate A_PRESENT, ats its newest cell's version),
		 * kept true by every change made through this daemon: a Put
		 * raises ats, anything else that may lower it or empty the
		 * row forgets it (cells_changed_locked, fs_table_changed,
		 * rmdir), as for a cell.  Not filled for tables with a TTL
		 * or written by tsd/.  So a stat of the row after its
		 * attribute timeout reads nothing, however many cells it
		 * has (the read below is page by page through the row) */
		pthread_mutex_lock(&fs_mu);
		gen = n->agen;
		known = n->astate == A_PRESENT;
		if (known) {
			n->rabsent = 0;
			ts = n->ats;
		}
		pthread_mutex_unlock(&fs_mu);
		if (known) {
			set_time(st, ts);
			return 0;
		}
		break;
	default:
		break;
	}
	rc = topen(n->table, &t);
	if (rc)
		return fs_errno(rc);
	switch (n->kind) {
	case K_TABLE: {
		/* a table: its creation; .schema: its last change */
		int64_t made, changed;
		rc = cf_table_times(t, &made, &changed);
		if (!rc)
			set_time(st, made);
		break;
	}
	case K_SCHEMA: {
		int64_t made, changed;
		rc = schema_text(t, &b);
		st->st_size = (off_t)b.len;
		if (!rc)
			rc = cf_table_times(t, &made, &changed);
		if (!rc)
			set_time(st, changed);
		break;
	}
	case K_REGION:
		rc = cf_table_regions(t, &r, &nr);
		for (i = 0; !rc && i < nr; i++)
			if (r[i].startlen == n->key.len && (!n->key.len ||
			    !memcmp(r[i].start, n->key.p, n->key.len)))
				break;
		if (!rc && i == nr)
			rc = CF_ENOTFOUND;
		if (!rc)
			set_time(st, r[i].created_ms);
		cf_regions_free(r, nr);
		break;
	case K_ROW: {
		/* under the table and under any region directory alike, a
		 * row exists when it has cells or was made empty (tools
		 * such as cp -a take a resolving name for an existing one);
		 * with KEEP_DELETED_CELLS also when it has none a read
		 * without a range sees but puts one with a range may show,
		 * as an empty row (its cells' names with a range read them) */
		uint64_t rg = rows_gen(n->table);
		uint64_t eg = erow_gen(n->table, &n->key);
		int64_t newest = 0;
		int fill = attr_cacheable(n->table) && !table_ttl(t);
		int kept = 0;
		rc = row_cells_at(t, &n->key, &cnt, &newest);
		if (!rc && !cnt && n->key.len && table_keeps_deleted(t)) {
			rc = cf_table_row_stored(t, n->key.p, n->key.len, &kept);
			fill = 0;	/* a major compaction may drop them */
		}
		if (!rc) {
			/* its time: its newest cell's version (an empty row
			 * kept for mkdir has none: 0) */
			set_time(st, newest);
			pthread_mutex_lock(&fs_mu);
			n->rabsent = cnt == 0 && !kept &&
				     !erow_kept(n->table, &n->key);
			n->rgen = rg;
			n->regen = eg;
			if (n->rabsent)
				rc = CF_ENOTFOUND;
			else if (fill && n->agen == gen) {
				n->astate = A_PRESENT;
				n->ats = newest;
			}
			pthread_mutex_unlock(&fs_mu);
		}
		break;
	}
	case K_CELL:
		known = !table_ttl(t) && attr_cacheable(n->table);
		if (cf_table_has_family(t, n->fam, n->famlen))
			rc = cell_get(t, n, &found, NULL, &ts, &len);
		if (!rc && known) {
			pthread_mutex_lock(&fs_mu);
			if (n->agen == gen) {
				n->astate = found ? A_PRESENT : A_ABSENT;
				n->asize = len;
				n->ats = ts;
			}
			pthread_mutex_unlock(&fs_mu);
		}
		if (!rc)
			rc = cell_attrs(n, st, found, ts, len);
		break;
	default:
		break;
	}
	buf_release(&b);
	cf_table_close(t);
	return fs_errno(rc);
}

/* 1 if how long n is cached depends on its table (cache_s). */
int cache_by_table(const struct node *n)
{
	switch (n->kind) {
	case K_TABLE: case K_REGION: case K_PREFIXES: case K_PREFIX:
	case K_ROW: case K_VERSIONS: case K_CELL:
		return 1;
	default:
		return 0;
	}
}

double fs_cache_s = 10.0;

void fs_set_cache_timeout(unsigned seconds)
{
	fs_cache_s = seconds;
}

/* How long the kernel may keep n's name and attributes (see "keeping the
 * kernel's caches true"). */
double cache_s(const struct node *n)
{
	int known;

	if (n->kind == K_CELL) {
		/* a cell whose attributes the daemon knows is of a table
		 * without TTL (or an invalidation is on its way) */
		pthread_mutex_lock(&fs_mu);
		known = n->astate != A_UNKNOWN;
		pthread_mutex_unlock(&fs_mu);
		if (known)
			return fs_cache_s;
	}
	if (cache_by_table(n))
		return table_has_ttl(n->table) ? 0 : fs_cache_s;
	switch (n->kind) {
	case K_TSD:
		return fs_tsd_is_dir(n->tk) ? fs_cache_s : 0;
	default:
		return 0;
	}
}

/* Before any reply that gives the kernel n's attributes. */
void attrs_sent(struct node *n)
{
	__atomic_store_n(&n->attrs_stale, 0, __ATOMIC_SEQ_CST);
}

void reply_entry(fuse_req_t req, struct node *n, const struct stat *st)
{
	struct fuse_entry_param e;

	memset(&e, 0, sizeof e);
	e.ino = ino_of(n);
	e.attr = *st;
	e.attr_timeout = e.entry_timeout = cache_s(n);
	pthread_mutex_lock(&fs_mu);
	n->nlookup++;
	pthread_mutex_unlock(&fs_mu);
	attrs_sent(n);
	if (fuse_reply_entry(req, &e) != 0) {
		pthread_mutex_lock(&fs_mu);
		n->nlookup--;
		node_unref(n);
		pthread_mutex_unlock(&fs_mu);
	}
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct node *n;
	struct stat st;
	const char *why;
	int err;

	count(&fs_counts.lookups);
	err = lookup_node(parent, name, &n, &why);
	if (err) {
		if (err == ENOENT)
			fuse_reply_err(req, err);
		else
			fs_fail(req, err, "lookup %s: %s", name, why);
		return;
	}
	err = node_stat(n, &st);
	if (err) {
		/* a cell known absent: kept for the create that may follow,
		 * whose Put then knows it is the latest version */
		pthread_mutex_lock(&fs_mu);
		if ((n->kind == K_CELL && n->astate == A_ABSENT) ||
		    (n->kind == K_ROW && n->rabsent))
			neg_keep(n);
		else {
			n->nopen--;
			node_unref(n);
		}
		pthread_mutex_unlock(&fs_mu);
		fuse_reply_err(req, err);	/* a miss is not a refusal */
		return;
	}
	reply_entry(req, n, &st);
	node_release(n);
}


/* The attributes of cell n while a write(2) to it is pending, as a
 * local file shows what was written through any fd, not the value
 * committed before: for a writer that replaces the value, what it holds;
 * for an O_APPEND writer, the value with its bytes after it.  The writer
 * is fi's handle when the kernel names it, else n's last open for
 * writing (fstat(2) reaches FUSE without its file).  0 when no writer's
 * value is pending (nothing written, a refused write, committed at
 * close), st untouched; else 0 or an errno in *err.  The handle's fields
 * are read under fs_mu, which its free takes (fileh_free), as cell_attrs
 * does. */
static int pending_attrs(struct node *n, struct fuse_file_info *fi,
			 struct stat *st, int *err)
{
	struct fileh *h = fi ? (struct fileh *)(uintptr_t)fi->fh : NULL;
	cf_table *t;
	int64_t ts, cts;
	size_t len, clen = 0;
	int orphan, append, found = 0, rc = 0;

	if (n->kind != K_CELL)
		return 0;
	pthread_mutex_lock(&fs_mu);
	if (!h || h->n != n || !h->writable)
		h = n->writer;
	if (!h || !__atomic_load_n(&h->dirty, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&h->failed, __ATOMIC_RELAXED)) {
		pthread_mutex_unlock(&fs_mu);
		return 0;
	}
	len = __atomic_load_n(&h->data.len, __ATOMIC_RELAXED);
	ts = __atomic_load_n(&h->ts, __ATOMIC_RELAXED);
	orphan = __atomic_load_n(&h->orphan, __ATOMIC_RELAXED);
	append = __atomic_load_n(&h->append, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&fs_mu);
	if (append && !orphan) {
		/* the bytes go after whatever the cell holds at close */
		rc = topen(n->table, &t);
		if (!rc) {
			if (cf_table_has_family(t, n->fam, n->famlen))
				rc = cell_get(t, n, &found, NULL, &cts,
					      &clen);
			cf_table_close(t);
		}
		if (!found)
			clen = 0;
	}
	*err = fs_errno(rc);
	memset(st, 0, sizeof *st);
	st->st_ino = ino_of(n);
	/* a writer whose cell mv replaced writes to no name (op_rename) */
	st->st_nlink = orphan ? 0 : 1;
	node_perm(n, st);
	st->st_size = (off_t)(clen + len);
	set_time(st, ts != CF_TS_NOW ? ts : now_ms());
	return 1;
}

void op_getattr(fuse_req_t req, fuse_ino_t ino,
		struct fuse_file_info *fi)
{
	struct node *n = node_of(ino);
	struct stat st;
	int err;

	count(&fs_counts.getattrs);
	if (pending_attrs(n, fi, &st, &err)) {
		/* Not cached (timeout 0), and attrs_stale left as it is:
		 * the kernel holds nothing of the pending value, so a stat
		 * after the close, whose Put invalidates n only when the
		 * kernel may hold attributes (cell_put), asks again and
		 * sees the committed value. */
		if (err)
			fuse_reply_err(req, err);
		else
			fuse_reply_attr(req, &st, 0);
		return;
	}
	err = node_stat(n, &st);
	if (err) {
		fuse_reply_err(req, err);
	} else {
		attrs_sent(n);
		fuse_reply_attr(req, &st, cache_s(n));
	}
}
