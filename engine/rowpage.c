/*
 * rowpage.c: a Get read in pages (cf_row_cursor, engine/cellfs.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"

/*
 * A row read page by page (cf_row_cursor_open): one view, one snapshot
 * and one iterator for the whole read, kept between pages, so a page
 * costs its own cells and the read as a whole one pass over the row.
 *
 * A column is classified as it streams while it can be: while every
 * cell of it the snapshot sees is a put, its family has no TTL and no
 * DeleteFamily marker, a put is live iff no newer write of its
 * timestamp came before it and fewer than VERSIONS newer timestamps did
 * (vis_classify's answer for such cells: a cell's fate depends only on
 * the cells sorting before it, see visible.c).  Once the column shows a
 * delete marker (or its family has a TTL or markers), it is read again
 * from its first cell, whole, with its family's markers, and classified
 * by vis_classify; the cells it gives that were not given yet follow.
 * Such a column is held whole until given: the one exception to the
 * page bound (docs/engine.md, "Reading a row in pages").
 */
struct cf_row_cursor {
	struct cf_table *t;
	struct cf_read_opts ro;
	struct view *v;
	struct iter *it;
	uint64_t snap;
	struct buf row;
	cf_row *page;		/* the page handed out */
	int done;
	/* the family under the iterator */
	struct buf fam;
	struct cf_family f;	/* a copy: the schema may change */
	int has_f;		/* 0: dropped from the schema, skipped */
	int in_fam;
	int fmarks;		/* it has a DeleteFamily marker seen */
	/* the column under the iterator, while streamed */
	struct buf qual;
	int in_col;
	size_t distinct;	/* puts of distinct timestamps seen */
	int64_t last_ts;
	uint64_t last_seq;
	int last_type;
	int shown;		/* cells given of it (max_versions) */
	size_t skipped;		/* dead cells stepped over in a row */
	/* a column classified whole: its cells to give, from wnext */
	cf_row *wcol;
	size_t wnext;
	int borrowed;		/* it and v are a scanner's (row_cursor_at) */
};

/* Seeks c->it to the first cell of column fam:qual of c's row. */
static int cursor_seek(struct cf_row_cursor *c, const unsigned char *fam,
		       size_t famlen, const unsigned char *qual, size_t qlen)
{
	struct ikey k;
	unsigned char stack[512], *p = stack;
	size_t n;

	memset(&k, 0, sizeof k);
	k.row = c->row.p;
	k.rowlen = c->row.len;
	k.fam = fam;
	k.famlen = famlen;
	k.qual = qual;
	k.qlen = qlen;
	k.ts = INT64_MAX;
	k.seq = SEQ_MAX;
	k.type = 0xff;
	n = ikey_size(&k);
	if (n > sizeof stack && !(p = malloc(n)))
		return CF_ENOMEM;
	iter_seek(c->it, p, ikey_encode(p, &k));
	if (p != stack)
		free(p);
	return CF_OK;
}

/* 1 if x lies in column fam:qual of c's row. */
static int in_column(const struct cf_row_cursor *c, const struct ikey *x,
		     const unsigned char *fam, size_t famlen,
		     const unsigned char *qual, size_t qlen)
{
	return !bytes_cmp(x->row, x->rowlen, c->row.p, c->row.len) &&
	       !bytes_cmp(x->fam, x->famlen, fam, famlen) &&
	       !bytes_cmp(x->qual, x->qlen, qual, qlen);
}

/* Gathers fam:qual's cells (after markers of its family that are not
 * in it, when want_marks) into w from their start, and leaves c->it
 * after the column. */
static int gather_column(struct cf_row_cursor *c, cf_row *w, size_t *n,
			 const unsigned char *fam, size_t famlen,
			 const unsigned char *qual, size_t qlen,
			 int want_marks)
{
	int rc = CF_OK, pass;

	for (pass = want_marks ? 0 : 1; rc == CF_OK && pass < 2; pass++) {
		const unsigned char *q = pass ? qual : (const unsigned char *)"";
		size_t ql = pass ? qlen : 0;
		if ((rc = cursor_seek(c, fam, famlen, q, ql)))
			break;
		for (; iter_valid(c->it); iter_next(c->it)) {
			const unsigned char *k, *v;
			size_t kl, vl;
			struct ikey x;
			k = iter_key(c->it, &kl);
			if (ikey_decode(k, kl, &x)) {
				rc = CF_ECORRUPT;
				break;
			}
			if (!in_column(c, &x, fam, famlen, q, ql))
				break;
			if (!pass && x.type != KT_DELETE_FAMILY)
				continue;
			if (row_same_as_last(w, *n, k, kl, &x))
				continue;
			if (x.type == KT_DELETE_FAMILY && x.seq <= c->snap)
				c->fmarks = 1;
			v = iter_value(c->it, &vl);
			rc = row_gather(w, n, c->it, k, kl, &x, v, vl,
				    !c->ro.keys_only);
			if (rc)
				break;
		}
		if (rc == CF_OK)
			rc = iter_status(c->it);
	}
	return rc;
}

/* The column of x (its first cell met not streamable): read whole and
 * classified into c->wcol, from the cell after the c->shown given. */
static int column_whole(struct cf_row_cursor *c, const struct ikey *x)
{
	struct buf fam = BUF_INIT, qual = BUF_INIT;
	size_t n = 0;
	int rc;

	if ((rc = buf_append(&fam, x->fam, x->famlen)) ||
	    (rc = buf_append(&qual, x->qual, x->qlen)))
		goto out;
	if (!(c->wcol = row_new())) {
		rc = CF_ENOMEM;
		goto out;
	}
	if ((rc = row_set_key(c->wcol, c->row.p, c->row.len)))
		goto out;
	rc = gather_column(c, c->wcol, &n, (const unsigned char *)fam.p,
			   fam.len, qual.p, qual.len,
			   c->fmarks && qual.len > 0);
	if (rc == CF_OK)
		rc = row_emit_family(&c->f, c->wcol, &c->ro, c->snap, n);
	if (rc == CF_OK)
		c->wnext = (size_t)c->shown;
out:
	buf_release(&fam);
	buf_release(&qual);
	c->in_col = 0;
	return rc;
}

int cf_row_cursor_open(cf_table *t, const void *row, size_t rowlen,
		       const struct cf_read_opts *o, cf_row_cursor **out)
{
	struct cf_row_cursor *c;
	unsigned char stack[512], *key = stack;
	struct region *r;
	size_t kl;
	int rc;

	*out = NULL;
	if (atomic_load(&t->dropped))
		return CF_ECLOSED;
	if (rowlen == 0 || rowlen > CF_ROW_MAX)
		return rowlen ? CF_ETOOBIG : CF_EINVAL;
	if (o && (o->columns || o->raw))
		return CF_EINVAL;
	if (!(c = calloc(1, sizeof *c)))
		return CF_ENOMEM;
	table_ref(t);
	c->t = t;
	if (o)
		c->ro = *o;
	else {
		struct cf_read_opts d = CF_READ_OPTS_INIT;
		c->ro = d;
	}
	if ((rc = buf_append(&c->row, row, rowlen)))
		goto fail;
	if (!(c->page = row_new())) {
		rc = CF_ENOMEM;
		goto fail;
	}
	pthread_rwlock_rdlock(&t->lock);
	r = table_region_for(t, row, rowlen);
	c->v = region_view(r);
	pthread_rwlock_unlock(&t->lock);
	c->snap = atomic_load(&t->db->last_seq);
	c->it = view_iter(t->db, r, c->v, &c->ro, row, rowlen, 1);
	if (!c->it) {
		rc = CF_ENOMEM;
		goto fail;
	}
	if (rowlen + KEY_OVERHEAD > sizeof stack &&
	    !(key = malloc(rowlen + KEY_OVERHEAD))) {
		rc = CF_ENOMEM;
		goto fail;
	}
	kl = row_start_key(key, row, rowlen);
	iter_seek(c->it, key, kl);
	if (key != stack)
		free(key);
	atomic_fetch_add(&t->st.gets, 1);
	atomic_fetch_add(&t->db->st.gets, 1);
	*out = c;
	return CF_OK;
fail:
	cf_row_cursor_close(c);
	return rc;
}

int row_cursor_at(struct cf_table *t, struct view *v, struct iter *it,
		  uint64_t snap, const struct cf_read_opts *o,
		  const void *row, size_t rowlen, struct cf_row_cursor **cp)
{
	struct cf_row_cursor *c = *cp;
	int rc;

	if (!c) {
		if (!(c = calloc(1, sizeof *c)))
			return CF_ENOMEM;
		table_ref(t);
		c->t = t;
		c->borrowed = 1;
		if (!(c->page = row_new())) {
			cf_row_cursor_close(c);
			return CF_ENOMEM;
		}
		*cp = c;
	}
	c->ro = *o;
	c->v = v;
	c->it = it;
	c->snap = snap;
	c->done = 0;
	c->in_fam = 0;
	c->in_col = 0;
	c->fmarks = 0;
	cf_row_free(c->wcol);
	c->wcol = NULL;
	buf_reset(&c->row);
	if ((rc = buf_append(&c->row, row, rowlen)))
		return rc;
	return CF_OK;
}

/* Steps over a dead cell of a streamed column; after a few, seeks past
 * the column when nothing more of it can be given (struct colskip). */
static int step_dead(struct cf_row_cursor *c, const struct ikey *x,
		     int rest_dead)
{
	if (rest_dead && ++c->skipped > 8) {
		c->skipped = 0;
		c->in_col = 0;
		row_seek_past_column(c->it, x);
	} else {
		iter_next(c->it);
	}
	return CF_OK;
}

int cf_row_cursor_next(cf_row_cursor *c, size_t limit, const cf_row **page)
{
	cf_row *pg = c->page;
	int maxv = c->ro.max_versions > 0 ? c->ro.max_versions : 1;
	int with_val = !c->ro.keys_only;
	size_t n = 0;
	int rc;

	*page = NULL;
	row_reset(pg);
	if ((rc = row_set_key(pg, c->row.p, c->row.len)))
		return rc;
	if (limit == 0)
		limit = 1;
	while (rc == CF_OK && n < limit) {
		const unsigned char *k;
		size_t kl;
		struct ikey x;
		int live, rest_dead;

		if (c->wcol) {
			cf_row *w = c->wcol;
			for (; rc == CF_OK && n < limit && c->wnext < cf_row_count(w);
		     n++) {
				const struct cf_cell *e =
					cf_row_cell(w, c->wnext++);
				rc = row_push(pg, e->fam, e->famlen, e->qual,
					      e->qlen, e->ts, e->val, e->vlen,
					      with_val);
			}
			if (c->wnext < cf_row_count(w))
				break;
			cf_row_free(w);
			c->wcol = NULL;
			continue;
		}
		if (c->done)
			break;
		if (!iter_valid(c->it)) {
			rc = iter_status(c->it);
			c->done = 1;
			break;
		}
		k = iter_key(c->it, &kl);
		if (ikey_decode(k, kl, &x)) {
			rc = CF_ECORRUPT;
			break;
		}
		if (bytes_cmp(x.row, x.rowlen, c->row.p, c->row.len)) {
			c->done = 1;
			break;
		}
		if (!c->in_fam || bytes_cmp(x.fam, x.famlen, c->fam.p,
					    c->fam.len)) {
			const struct cf_family *f;
			buf_reset(&c->fam);
			if ((rc = buf_append(&c->fam, x.fam, x.famlen)))
				break;
			pthread_rwlock_rdlock(&c->t->lock);
			f = table_family(c->t, (const char *)x.fam, x.famlen);
			if (f)
				c->f = *f;
			pthread_rwlock_unlock(&c->t->lock);
			c->has_f = f != NULL;
			c->in_fam = 1;
			c->in_col = 0;
			c->fmarks = 0;
		}
		if (!c->has_f || !read_wants_family(&c->ro,
						    (const char *)x.fam,
						    x.famlen)) {
			iter_next(c->it);	/* a dropped family */
			continue;
		}
		if (!c->in_col || bytes_cmp(x.qual, x.qlen, c->qual.p,
					    c->qual.len)) {
			buf_reset(&c->qual);
			if ((rc = buf_append(&c->qual, x.qual, x.qlen)))
				break;
			c->in_col = 1;
			c->distinct = 0;
			c->shown = 0;
			c->skipped = 0;
			c->last_type = 0;
		}
		if (x.seq > c->snap) {
			iter_next(c->it);	/* after the snapshot */
			continue;
		}
		if (c->last_type && x.seq == c->last_seq &&
		    x.ts == c->last_ts && x.type == c->last_type) {
			iter_next(c->it);	/* the same cell twice */
			continue;
		}
		if (x.type != KT_PUT || c->fmarks ||
		    c->f.ttl != CF_TTL_FOREVER) {
			rc = column_whole(c, &x);
			continue;
		}
		if (c->distinct == 0) {
			live = 1;
			c->distinct = 1;
		} else if (x.ts == c->last_ts) {
			live = 0;	/* its version, rewritten */
		} else {
			live = c->distinct < (size_t)c->f.versions;
			c->distinct++;
		}
		c->last_ts = x.ts;
		c->last_seq = x.seq;
		c->last_type = x.type;
		/* once VERSIONS timestamps, or the versions asked for,
		 * were seen, nothing more of the column is given */
		rest_dead = (c->distinct >= (size_t)c->f.versions ||
			     c->shown >= maxv) &&
			    x.qlen > 0;	/* DeleteFamily markers may follow */
		if (!live || x.ts < c->ro.min_ts || x.ts >= c->ro.max_ts ||
		    c->shown >= maxv) {
			rc = step_dead(c, &x, rest_dead);
			continue;
		}
		{
			const unsigned char *v = NULL;
			size_t vl = 0;
			v = iter_value(c->it, &vl);
			rc = row_push(pg, (const char *)x.fam, x.famlen,
				      x.qual, x.qlen, x.ts, v, vl, with_val);
		}
		if (rc)
			break;
		c->shown++;
		n++;
		c->skipped = 0;
		iter_next(c->it);
	}
	if (rc)
		return rc;
	row_finish(pg);
	*page = pg;
	return CF_OK;
}

void cf_row_cursor_close(cf_row_cursor *c)
{
	if (!c)
		return;
	if (!c->borrowed) {
		iter_destroy(c->it);
		if (c->v)
			view_unref(c->v);
	}
	cf_row_free(c->wcol);
	cf_row_free(c->page);
	buf_release(&c->row);
	buf_release(&c->fam);
	buf_release(&c->qual);
	table_unref(c->t);
	free(c);
}

int cf_table_row_stored(cf_table *t, const void *row, size_t rowlen,
			int *has)
{
	cf_row_cursor *c;
	int rc;

	*has = 0;
	if ((rc = cf_row_cursor_open(t, row, rowlen, NULL, &c)))
		return rc;
	for (; !*has && iter_valid(c->it); iter_next(c->it)) {
		size_t kl;
		const unsigned char *k = iter_key(c->it, &kl);
		struct ikey x;
		if (ikey_decode(k, kl, &x)) {
			rc = CF_ECORRUPT;
			break;
		}
		if (bytes_cmp(x.row, x.rowlen, row, rowlen))
			break;
		if (x.type != KT_PUT || x.seq > c->snap)
			continue;
		pthread_rwlock_rdlock(&t->lock);
		*has = table_family(t, (const char *)x.fam, x.famlen) != NULL;
		pthread_rwlock_unlock(&t->lock);
	}
	if (rc == CF_OK && !*has)
		rc = iter_status(c->it);
	cf_row_cursor_close(c);
	return rc;
}
