/*
 * write.c: batches and the write path.
 *
 * A writer locks the row stripes of its rows (sorted, so two writers never
 * wait on each other in a cycle), joins the queue, and waits.  The writer
 * at the head of the queue is the leader: it takes the whole queue as one
 * group, numbers every cell, writes one WAL record for the group (with
 * fsync under sync=always), inserts the cells into the memstores while
 * holding db->mem_mu, publishes db->last_seq, and wakes the group.  This
 * is LevelDB's group commit.  Read-modify-write operations (append,
 * increment, check-and-put, delete of the latest version) read under the
 * same row stripe, so they are atomic against every other write of the
 * row.
 *
 * The WAL record's payload is walrec.c's (docs/wal_format.md,
 * "Payload").
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/wal.h"
#include "engine/walrec.h"
#include "util/coding.h"
#include "util/env.h"
#include "util/log.h"

#define GROUP_MAX (4u << 20)	/* bytes of WAL a leader groups at most */

/* --- batches ---------------------------------------------------------- */

int cf_batch_new(cf_batch **out)
{
	*out = calloc(1, sizeof **out);
	return *out ? CF_OK : CF_ENOMEM;
}

void cf_batch_free(cf_batch *b)
{
	if (!b)
		return;
	free(b->ops);
	buf_release(&b->data);
	free(b);
}

void cf_batch_clear(cf_batch *b)
{
	b->n = 0;
	buf_reset(&b->data);
}

size_t cf_batch_count(const cf_batch *b)
{
	return b->n;
}

void cf_batch_keep_stamp(cf_batch *b)
{
	b->keep_stamp = 1;
}

uint64_t cf_table_stamp(cf_table *t)
{
	return atomic_load(&t->stamp);
}

static int add_op(cf_batch *b, int kind, const void *row, size_t rowlen,
		  const char *fam, size_t famlen, const void *qual, size_t qlen,
		  int64_t ts, const void *val, size_t vlen, int ref)
{
	struct bop *op;
	size_t mark = b->data.len;
	int rc;

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 8;
		struct bop *n = realloc(b->ops, cap * sizeof *n);
		if (!n)
			return CF_ENOMEM;
		b->ops = n;
		b->cap = cap;
	}
	op = &b->ops[b->n];
	op->kind = kind;
	op->ts = ts;
	op->row = b->data.len;
	op->rowlen = rowlen;
	rc = buf_append(&b->data, row, rowlen);
	op->fam = b->data.len;
	op->famlen = fam ? famlen : 0;
	if (rc == CF_OK && fam)
		rc = buf_append(&b->data, fam, famlen);
	op->qual = b->data.len;
	op->qlen = qual ? qlen : 0;
	if (rc == CF_OK && qual)
		rc = buf_append(&b->data, qual, qlen);
	op->val = b->data.len;
	op->vlen = val ? vlen : 0;
	op->ext = NULL;
	if (rc == CF_OK && val && ref)
		op->ext = val;
	else if (rc == CF_OK && val)
		rc = buf_append(&b->data, val, vlen);
	if (rc) {
		b->data.len = mark;
		return rc;
	}
	b->n++;
	return CF_OK;
}

int cf_batch_put(cf_batch *b, const void *row, size_t rowlen,
		 const char *fam, size_t famlen, const void *qual, size_t qlen,
		 int64_t ts, const void *val, size_t vlen)
{
	return add_op(b, BOP_PUT, row, rowlen, fam, famlen, qual, qlen, ts,
		      val, vlen, 0);
}

int cf_batch_put_ref(cf_batch *b, const void *row, size_t rowlen,
		     const char *fam, size_t famlen, const void *qual,
		     size_t qlen, int64_t ts, const void *val, size_t vlen)
{
	return add_op(b, BOP_PUT, row, rowlen, fam, famlen, qual, qlen, ts,
		      val, vlen, 1);
}

int cf_batch_delete(cf_batch *b, enum cf_delete_kind kind, const void *row,
		    size_t rowlen, const char *fam, size_t famlen,
		    const void *qual, size_t qlen, int64_t ts)
{
	int k;

	switch (kind) {
	case CF_DEL_VERSION: k = BOP_DEL_VERSION; break;
	case CF_DEL_COLUMN: k = BOP_DEL_COLUMN; break;
	case CF_DEL_FAMILY: k = BOP_DEL_FAMILY; qual = NULL; break;
	case CF_DEL_ROW: k = BOP_DEL_ROW; fam = NULL; qual = NULL; break;
	default: return CF_EINVAL;
	}
	return add_op(b, k, row, rowlen, fam, famlen, qual, qlen, ts, NULL, 0,
		      0);
}

/* --- validation and expansion ----------------------------------------- */

/* A cell to be written: resolved ts, type, and pointers into a batch. */
struct wcell {
	const unsigned char *row, *fam, *qual, *val;
	size_t rowlen, famlen, qlen, vlen;
	int64_t ts;
	int type;
};

/* The cells of one batch: most batches are a cell or two (a file's close,
 * an rm), kept in the list itself without an allocation. */
#define WL_INLINE 2
struct wlist {
	struct wcell *c;	/* in or one[] */
	size_t n, cap;
	struct wcell one[WL_INLINE];
};

static int wl_add(struct wlist *l, const struct wcell *c)
{
	if (!l->c) {
		l->c = l->one;
		l->cap = WL_INLINE;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap < 16 ? 16 : l->cap * 2;
		struct wcell *n;

		if (l->c == l->one) {
			if ((n = malloc(cap * sizeof *n)))
				memcpy(n, l->one, sizeof l->one);
		} else
			n = realloc(l->c, cap * sizeof *n);
		if (!n)
			return CF_ENOMEM;
		l->c = n;
		l->cap = cap;
	}
	l->c[l->n++] = *c;
	return CF_OK;
}

static void wl_free(struct wlist *l)
{
	if (l->c != l->one)
		free(l->c);
}

static int validate(struct cf_table *t, const cf_batch *b)
{
	const struct cf_options *o = &t->db->o;

	for (size_t i = 0; i < b->n; i++) {
		const struct bop *op = &b->ops[i];
		const char *fam;

		if (op->rowlen == 0) {
			cf_log(CF_LOG_WARN, "%s: empty row key refused",
			       t->name);
			return CF_EINVAL;
		}
		/* only now: a batch of empty keys may have no data at all */
		fam = (const char *)b->data.p + op->fam;
		if (op->rowlen > CF_ROW_MAX || op->qlen > 65535) {
			cf_log(CF_LOG_WARN, "%s: row key of %zu or qualifier "
			       "of %zu bytes is too long", t->name,
			       op->rowlen, op->qlen);
			return CF_ETOOBIG;
		}
		if (op->vlen > o->max_value) {
			cf_log(CF_LOG_WARN, "%s: value of %zu bytes is over "
			       "max_value (%llu)", t->name, op->vlen,
			       (unsigned long long)o->max_value);
			return CF_ETOOBIG;
		}
		if (op->ts != CF_TS_NOW && op->ts < 0) {
			cf_log(CF_LOG_WARN, "%s: negative timestamp refused",
			       t->name);
			return CF_EINVAL;
		}
		/* a batch's ops mostly name the family of the one before */
		if (op->kind != BOP_DEL_ROW && i > 0 &&
		    b->ops[i - 1].kind != BOP_DEL_ROW &&
		    b->ops[i - 1].famlen == op->famlen &&
		    !memcmp(b->data.p + b->ops[i - 1].fam, fam, op->famlen))
			continue;
		if (op->kind != BOP_DEL_ROW &&
		    !table_family(t, fam, op->famlen)) {
			cf_log(CF_LOG_WARN, "%s: no family '%.*s'", t->name,
			       (int)op->famlen, fam);
			return CF_ENOTFOUND;
		}
	}
	return CF_OK;
}

/* A Delete of a column's latest version in a batch, for latest_ranks. */
struct lrank {
	const cf_batch *b;
	size_t i;		/* its op */
};

static int is_latest_delete(const struct bop *o)
{
	return o->kind == BOP_DEL_VERSION && o->ts == CF_TS_NOW;
}

/* ops x and y of b by row, family, qualifier */
static int cmp_op_column(const cf_batch *b, const struct bop *x,
			 const struct bop *y)
{
	const unsigned char *d = b->data.p;
	int c = bytes_cmp(d + x->row, x->rowlen, d + y->row, y->rowlen);

	if (!c)
		c = bytes_cmp(d + x->fam, x->famlen, d + y->fam, y->famlen);
	if (!c)
		c = bytes_cmp(d + x->qual, x->qlen, d + y->qual, y->qlen);
	return c;
}

/* By column, then place in the batch. */
static int cmp_lrank(const void *pa, const void *pb)
{
	const struct lrank *a = pa, *b = pb;
	int c = cmp_op_column(a->b, &a->b->ops[a->i], &b->b->ops[b->i]);

	return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* Which Delete of the latest version of its column each such op of b
 * is (1 the first, 2 the second ...), in (*ranks)[op]; *ranks NULL when
 * there are fewer than two (each is 1).  Sorted, not a scan of the batch
 * for each: a batch of many Deletes stays O(d log d).  CF_ENOMEM. */
static int latest_ranks(const cf_batch *b, int **ranks)
{
	struct lrank *v;
	size_t d = 0, k = 0;

	*ranks = NULL;
	for (size_t i = 0; i < b->n; i++)
		d += is_latest_delete(&b->ops[i]);
	if (d < 2)
		return CF_OK;
	v = malloc(d * sizeof *v);
	*ranks = calloc(b->n, sizeof **ranks);
	if (!v || !*ranks) {
		free(v);
		free(*ranks);
		*ranks = NULL;
		return CF_ENOMEM;
	}
	for (size_t i = 0; i < b->n; i++)
		if (is_latest_delete(&b->ops[i]))
			v[k++] = (struct lrank){ b, i };
	qsort(v, d, sizeof *v, cmp_lrank);
	for (k = 0; k < d; k++)
		(*ranks)[v[k].i] = k && cmp_op_column(b, &b->ops[v[k - 1].i],
						      &b->ops[v[k].i]) == 0
				   ? (*ranks)[v[k - 1].i] + 1 : 1;
	free(v);
	return CF_OK;
}

/* last[i] (cols->n bytes) = 1 when op i of cols is the last one of its
 * column, found with a sort as latest_ranks does.  CF_ENOMEM. */
static int last_of_columns(const cf_batch *cols, unsigned char *last)
{
	struct lrank *v = malloc(cols->n * sizeof *v);

	if (!v)
		return CF_ENOMEM;
	for (size_t i = 0; i < cols->n; i++)
		v[i] = (struct lrank){ cols, i };
	qsort(v, cols->n, sizeof *v, cmp_lrank);
	for (size_t k = 0; k < cols->n; k++)
		last[v[k].i] = k + 1 == cols->n ||
			       cmp_op_column(cols, &cols->ops[v[k].i],
					     &cols->ops[v[k + 1].i]) != 0;
	free(v);
	return CF_OK;
}

/* The timestamp of the n-th newest visible version of c's column into
 * *ts; CF_ENOTFOUND when it has fewer. */
static int nth_latest(struct cf_table *t, const struct wcell *c, int n,
		      struct buf *scratch, int64_t *ts)
{
	struct cf_column col = { (const char *)c->fam, c->famlen,
				 c->qlen ? c->qual : (const void *)"",
				 c->qlen };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	cf_row *r;
	int rc;

	if (n == 1)
		return table_get_latest(t, c->row, c->rowlen,
					(const char *)c->fam, c->famlen,
					c->qual, c->qlen, scratch, ts);
	o.columns = &col;
	o.ncolumns = 1;
	o.max_versions = n;
	o.keys_only = 1;
	rc = cf_table_get(t, c->row, c->rowlen, &o, &r);
	if (rc)
		return rc;
	if (cf_row_count(r) < (size_t)n)
		rc = CF_ENOTFOUND;
	else
		*ts = cf_row_cell(r, (size_t)n - 1)->ts;
	cf_row_free(r);
	return rc;
}

/* Turns the batch's ops into cells with resolved timestamps.  Caller
 * holds the rows' stripes (CF_DEL_VERSION at "now" reads the latest).
 * As HBase's HRegion.prepareDeleteTimestamps, the second Delete of the
 * latest version of one column in a batch takes the second newest
 * version, and so on: all are resolved against the column as it was
 * before the batch, which they would otherwise all name the newest of. */
static int expand(struct cf_table *t, const cf_batch *b, int64_t now,
		  struct wlist *out, struct buf *scratch)
{
	const struct famset *fs;
	int *ranks;
	int rc = latest_ranks(b, &ranks);

	for (size_t i = 0; i < b->n && rc == CF_OK; i++) {
		const struct bop *op = &b->ops[i];
		struct wcell c = {
			.row = b->data.p + op->row, .rowlen = op->rowlen,
			.fam = b->data.p + op->fam, .famlen = op->famlen,
			.qual = b->data.p + op->qual, .qlen = op->qlen,
			.val = op->ext ? (const unsigned char *)op->ext
				       : b->data.p + op->val,
			.vlen = op->vlen,
			.ts = op->ts == CF_TS_NOW ? now : op->ts,
		};
		switch (op->kind) {
		case BOP_PUT:
			c.type = KT_PUT;
			rc = wl_add(out, &c);
			break;
		case BOP_DEL_VERSION:
			c.type = KT_DELETE;
			c.vlen = 0;
			if (op->ts == CF_TS_NOW) {
				int64_t ts;
				rc = nth_latest(t, &c, ranks ? ranks[i] : 1,
						scratch, &ts);
				if (rc == CF_ENOTFOUND) {
					rc = CF_OK;
					break;
				}
				if (rc)
					break;
				c.ts = ts;
			}
			rc = wl_add(out, &c);
			break;
		case BOP_DEL_COLUMN:
			c.type = KT_DELETE_COLUMN;
			c.vlen = 0;
			rc = wl_add(out, &c);
			break;
		case BOP_DEL_FAMILY:
			c.type = KT_DELETE_FAMILY;
			c.qlen = c.vlen = 0;
			rc = wl_add(out, &c);
			break;
		case BOP_DEL_ROW:
			c.type = KT_DELETE_FAMILY;
			c.qlen = c.vlen = 0;
			fs = table_fams(t);
			for (size_t f = 0; fs && f < fs->n && rc == CF_OK;
			     f++) {
				c.fam = (const unsigned char *)fs->f[f].name;
				c.famlen = strlen(fs->f[f].name);
				rc = wl_add(out, &c);
			}
			break;
		}
	}
	free(ranks);
	return rc;
}

/* --- row stripes ------------------------------------------------------ */

static unsigned stripe_of(const unsigned char *row, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ row[i]) * 16777619u;
	return h % ROW_STRIPES;
}

/* A batch touching more stripes than this takes the table's batch lock
 * exclusively instead (bulk loads), so no thread holds many mutexes. */
#define MAX_STRIPES 16

/* Locks the stripes of b's rows in ascending order; the list goes into
 * s (sorted, unique; room for MAX_STRIPES) for unlock_stripes.  *ns = 0:
 * the batch holds the batch lock exclusively.  A row that repeats the
 * row of the op before it is not hashed again (a batch's cells of one
 * row are usually together). */
static int lock_stripes(struct cf_table *t, const cf_batch *b, unsigned *s,
			size_t *ns)
{
	uint64_t seen[ROW_STRIPES / 64] = { 0 };
	size_t n = 0;

	for (size_t i = 0; i < b->n; i++) {
		const struct bop *op = &b->ops[i];
		if (i > 0 && op->rowlen == b->ops[i - 1].rowlen &&
		    !memcmp(b->data.p + op->row, b->data.p + b->ops[i - 1].row,
			    op->rowlen))
			continue;
		unsigned h = stripe_of(b->data.p + op->row, op->rowlen);
		if (!(seen[h / 64] & (UINT64_C(1) << (h % 64)))) {
			seen[h / 64] |= UINT64_C(1) << (h % 64);
			n++;
		}
	}
	*ns = 0;
	if (n > MAX_STRIPES) {
		pthread_rwlock_wrlock(&t->batch_lock);
		return CF_OK;
	}
	for (unsigned h = 0; h < ROW_STRIPES; h++)
		if (seen[h / 64] & (UINT64_C(1) << (h % 64)))
			s[(*ns)++] = h;
	pthread_rwlock_rdlock(&t->batch_lock);
	for (size_t i = 0; i < *ns; i++)
		pthread_mutex_lock(&t->stripes[s[i]]);
	return CF_OK;
}

static void unlock_stripes(struct cf_table *t, const unsigned *s, size_t ns)
{
	for (size_t i = ns; i-- > 0;)
		pthread_mutex_unlock(&t->stripes[s[i]]);
	pthread_rwlock_unlock(&t->batch_lock);
}

/* --- the leader ------------------------------------------------------- */

/* A writer in the queue.  Its cells are either cells (expanded) or, for
 * a batch of puts only, the batch's ops themselves (b set, now their
 * time): a large batch then costs no list. */
struct gwriter {
	struct cf_table *t;
	struct wlist cells;
	const cf_batch *b;
	int64_t now;
	size_t n;		/* cells */
	int rc, done;
	pthread_cond_t cv;
	struct gwriter *next;
};

/* Cell i of w. */
static inline void gw_cell(const struct gwriter *w, size_t i,
			   struct wcell *c)
{
	const cf_batch *b = w->b;
	const struct bop *op;

	if (!b) {
		*c = w->cells.c[i];
		return;
	}
	op = &b->ops[i];
	c->row = b->data.p + op->row;
	c->rowlen = op->rowlen;
	c->fam = b->data.p + op->fam;
	c->famlen = op->famlen;
	c->qual = b->data.p + op->qual;
	c->qlen = op->qlen;
	c->val = op->ext ? (const unsigned char *)op->ext : b->data.p + op->val;
	c->vlen = op->vlen;
	c->ts = op->ts == CF_TS_NOW ? w->now : op->ts;
	c->type = KT_PUT;
}

/* A value this big is not copied into the record buffer: the WAL writes
 * it from the batch (wal_appendv), one copy into the page cache. */
#define REC_REF_MIN ((size_t)64 << 10)
#define REC_REFS ((WAL_IOV_MAX - 1) / 2)

/* The values of a record left in their batches: refs[i] goes after the
 * first at[i] bytes of the record buffer. */
struct rec_refs {
	size_t n;
	size_t at[REC_REFS];
	const void *p[REC_REFS];
	size_t len[REC_REFS];
};

static int encode_cell(struct walrec_enc *e, struct rec_refs *x,
		       const struct cf_table *t, const struct wcell *c,
		       uint64_t seq)
{
	struct ikey k = {
		.row = c->row, .rowlen = c->rowlen, .fam = c->fam,
		.famlen = c->famlen, .qual = c->qual, .qlen = c->qlen,
		.ts = c->ts, .seq = seq, .type = c->type,
	};
	int ref = c->vlen >= REC_REF_MIN && x->n < REC_REFS;
	int rc = walrec_put(e, t->id, &k, c->val, c->vlen, ref);

	if (rc == CF_OK && ref) {
		x->at[x->n] = e->rec->len;
		x->p[x->n] = c->val;
		x->len[x->n++] = c->vlen;
	}
	return rc;
}

/* The memstore the leader inserts into, kept from one cell to the next
 * while they fall in one region (db->mem_mu held: no flush swaps it). */
struct ins {
	struct region *r;
	struct memstore *m;
	size_t before;
};

/* Accounts the bytes added to the current memstore and asks for its
 * flush when it is full. */
static void ins_done(struct cf_db *db, struct ins *in)
{
	size_t after;

	if (!in->r)
		return;
	after = memstore_bytes(in->m);
	atomic_fetch_add(&db->mem_total, after - in->before);
	if (after >= db->o.flush_size && !atomic_load(&in->r->flush_wanted)) {
		atomic_store(&in->r->flush_wanted, 1);
		db_wake_background(db);
	}
	in->r = NULL;
}

/* Inserts one cell into the memstore of its region.  Caller holds
 * db->mem_mu and t->lock (read); in->r NULL or the region of the cell
 * before (then ins_done() before the locks go). */
static void insert_cell(struct cf_db *db, struct cf_table *t, struct ins *in,
			const struct ikey *k, const void *val, size_t vlen)
{
	struct region *r = table_region_for(t, k->row, k->rowlen);

	if (r != in->r) {
		ins_done(db, in);
		in->r = r;
		pthread_mutex_lock(&r->mu);
		in->m = r->view->mem;
		pthread_mutex_unlock(&r->mu);
		in->before = memstore_bytes(in->m);
	}
	if (memstore_add(in->m, k, val, vlen) != CF_OK)
		abort();	/* already in the WAL: cannot fail softly */
}

static int lead(struct cf_db *db, struct gwriter *g, struct gwriter *last)
{
	struct buf *rec = &db->wbuf;
	struct rec_refs x = { 0 };
	struct iovec v[WAL_IOV_MAX];
	struct walrec_enc e;
	const void *pay;
	uint64_t seq = db->next_seq, first = seq;
	size_t count = 0, at = 0, bytes;
	int rc = CF_OK, nv = 0;

	/* the group is g..last; writers queued behind last are not ours,
	 * and last->next may change under us (it belongs to qmu) */
	for (struct gwriter *w = g; w; w = w == last ? NULL : w->next)
		count += w->n;
	rc = walrec_begin(&e, rec, seq, count, db->o.wal_compression);
	for (struct gwriter *w = g; w && rc == CF_OK;
	     w = w == last ? NULL : w->next)
		for (size_t i = 0; i < w->n && rc == CF_OK; i++) {
			struct wcell c;
			gw_cell(w, i, &c);
			rc = encode_cell(&e, &x, w->t, &c, seq++);
		}
	if (!rc)
		rc = walrec_finish(&e, &db->wzbuf, &pay, &bytes);
	if (rc)
		return rc;
	if (pay != rec->p) {	/* compressed: no references */
		v[nv].iov_base = (void *)pay;
		v[nv++].iov_len = bytes;
		at = rec->len;
	}
	for (size_t i = 0; i < x.n; i++) {
		v[nv].iov_base = rec->p + at;
		v[nv++].iov_len = x.at[i] - at;
		v[nv].iov_base = (void *)x.p[i];
		v[nv++].iov_len = x.len[i];
		at = x.at[i];
		bytes += x.len[i];
	}
	if (at < rec->len) {
		v[nv].iov_base = rec->p + at;
		v[nv++].iov_len = rec->len - at;
	}
	rc = wal_appendv(db->wal, v, nv, seq - 1);
	/* a group's buffers stay for the next; one huge batch's do not */
	if (rec->cap > 2 * GROUP_MAX)
		buf_release(rec);
	if (db->wzbuf.cap > 2 * GROUP_MAX)
		buf_release(&db->wzbuf);
	if (rc == CF_OK && db->o.sync_mode == CF_SYNC_ALWAYS)
		rc = wal_sync(db->wal);
	if (rc) {
		cf_log(CF_LOG_ERROR, "write-ahead log: %s; %zu writes refused",
		       cf_strerror(rc), count);
		return rc;
	}
	db->next_seq = seq;

	pthread_mutex_lock(&db->mem_mu);
	seq = first;
	for (struct gwriter *w = g; w; w = w == last ? NULL : w->next) {
		struct cf_table *t = w->t;
		struct ins in = { NULL, NULL, 0 };
		pthread_rwlock_rdlock(&t->lock);
		for (size_t i = 0; i < w->n; i++) {
			struct wcell c;
			gw_cell(w, i, &c);
			struct ikey k = {
				.row = c.row, .rowlen = c.rowlen,
				.fam = c.fam, .famlen = c.famlen,
				.qual = c.qual, .qlen = c.qlen, .ts = c.ts,
				.seq = seq++, .type = c.type,
			};
			insert_cell(db, t, &in, &k, c.val, c.vlen);
		}
		ins_done(db, &in);
		pthread_rwlock_unlock(&t->lock);
	}
	pthread_mutex_unlock(&db->mem_mu);
	atomic_store(&db->last_seq, seq - 1);
	atomic_fetch_add(&db->st.wal_bytes, bytes);
	return CF_OK;
}

/* Queues w and returns once its cells are written (or failed). */
static int commit(struct cf_db *db, struct gwriter *w)
{
	struct gwriter *g, *last;
	size_t bytes = 0;
	int rc;

	pthread_cond_init(&w->cv, NULL);
	w->done = 0;
	w->next = NULL;
	pthread_mutex_lock(&db->qmu);
	if (db->qtail)
		((struct gwriter *)db->qtail)->next = w;
	else
		db->qhead = (struct writer *)w;
	db->qtail = (struct writer *)w;
	while (!w->done && (struct gwriter *)db->qhead != w)
		pthread_cond_wait(&w->cv, &db->qmu);
	if (w->done) {
		pthread_mutex_unlock(&db->qmu);
		pthread_cond_destroy(&w->cv);
		return w->rc;
	}
	/* Leader: take a group from the head, bounded in bytes. */
	g = w;
	last = w;
	for (struct gwriter *x = w; x; x = x->next) {
		if (x->b)	/* the batch's bytes: its keys and values */
			bytes += x->b->data.len + 32 * x->n;
		else
			for (size_t i = 0; i < x->n; i++)
				bytes += x->cells.c[i].vlen +
					 x->cells.c[i].rowlen +
					 x->cells.c[i].qlen + 32;
		last = x;
		if (bytes > GROUP_MAX)
			break;
	}
	pthread_mutex_unlock(&db->qmu);
	rc = lead(db, g, last);
	pthread_mutex_lock(&db->qmu);
	for (struct gwriter *x = g; ; x = x->next) {
		x->rc = rc;
		x->done = 1;
		if (x != w)
			pthread_cond_signal(&x->cv);
		if (x == last)
			break;
	}
	db->qhead = (struct writer *)last->next;
	if (!db->qhead)
		db->qtail = NULL;
	else
		pthread_cond_signal(&((struct gwriter *)db->qhead)->cv);
	pthread_mutex_unlock(&db->qmu);
	pthread_cond_destroy(&w->cv);
	return rc;
}

/* 1 when every op of b is a put: the leader then takes the cells from
 * the batch itself. */
static int all_puts(const cf_batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->ops[i].kind != BOP_PUT)
			return 0;
	return 1;
}

/* Writes b for t; caller holds the stripes. */
static int apply_locked(struct cf_table *t, const cf_batch *b)
{
	struct cf_db *db = t->db;
	struct gwriter w = { .t = t };
	struct buf scratch = BUF_INIT;
	uint64_t puts = 0, dels = 0, bytes = 0;
	int rc = CF_OK;

	w.now = env_now_ms();
	if (all_puts(b)) {
		w.b = b;
		w.n = b->n;
	} else {
		rc = expand(t, b, w.now, &w.cells, &scratch);
		w.n = w.cells.n;
	}
	if (rc == CF_OK && w.n)
		rc = commit(db, &w);
	/* after commit: what changed the stamp is visible */
	if (rc == CF_OK && w.n && !b->keep_stamp)
		table_new_stamp(t);
	if (rc == CF_OK && w.n) {
		for (size_t i = 0; i < w.n; i++) {
			struct wcell c;
			gw_cell(&w, i, &c);
			if (c.type == KT_PUT)
				puts++;
			else
				dels++;
			bytes += c.vlen;
		}
		atomic_fetch_add(&t->st.puts, puts);
		atomic_fetch_add(&db->st.puts, puts);
		atomic_fetch_add(&t->st.deletes, dels);
		atomic_fetch_add(&db->st.deletes, dels);
		atomic_fetch_add(&t->st.bytes_written, bytes);
		atomic_fetch_add(&db->st.bytes_written, bytes);
	}
	wl_free(&w.cells);
	buf_release(&scratch);
	return rc;
}

static int begin_write(struct cf_table *t, const cf_batch *b)
{
	int rc;

	if (atomic_load(&t->dropped))
		return CF_ECLOSED;
	rc = validate(t, b);
	if (rc == CF_OK)
		write_throttle(t->db, t);
	return rc;
}

static void count_error(struct cf_table *t, int rc)
{
	if (rc != CF_OK) {
		atomic_fetch_add(&t->st.errors, 1);
		atomic_fetch_add(&t->db->st.errors, 1);
	}
}

int cf_table_apply(cf_table *t, const cf_batch *b)
{
	unsigned s[MAX_STRIPES];
	size_t ns;
	int rc;

	if (b->n == 0)
		return CF_OK;
	rc = begin_write(t, b);
	if (rc)
		goto out;
	lock_stripes(t, b, s, &ns);
	rc = apply_locked(t, b);
	unlock_stripes(t, s, ns);
out:
	count_error(t, rc);
	return rc;
}

/* Shared frame of the read-modify-write operations: fam (unless NULL)
 * must be a family of t. */
static int rmw_begin(struct cf_table *t, const void *row, size_t rowlen,
		     const char *fam, size_t famlen, unsigned *stripe)
{
	if (atomic_load(&t->dropped))
		return CF_ECLOSED;
	if (rowlen == 0 || rowlen > CF_ROW_MAX)
		return rowlen ? CF_ETOOBIG : CF_EINVAL;
	if (fam && !table_family(t, fam, famlen)) {
		cf_log(CF_LOG_WARN, "%s: no family '%.*s'", t->name,
		       (int)famlen, fam);
		return CF_ENOTFOUND;
	}
	*stripe = stripe_of(row, rowlen);
	pthread_rwlock_rdlock(&t->batch_lock);
	pthread_mutex_lock(&t->stripes[*stripe]);
	return CF_OK;
}

static void rmw_end(struct cf_table *t, unsigned stripe)
{
	pthread_mutex_unlock(&t->stripes[stripe]);
	pthread_rwlock_unlock(&t->batch_lock);
}

/* Ends a read-modify-write: writes b (its new values) when rc is CF_OK,
 * then releases the row.  The write's result, or rc. */
static int rmw_commit(struct cf_table *t, const cf_batch *b, int rc,
		      unsigned stripe)
{
	if (rc == CF_OK)
		rc = begin_write(t, b);
	if (rc == CF_OK)
		rc = apply_locked(t, b);
	rmw_end(t, stripe);
	return rc;
}

/* Writes the computed new value of a read-modify-write (when rc is
 * CF_OK) at a timestamp never below the version it read, so it is the
 * latest; then releases the row.  Returns the result. */
static int rmw_finish(struct cf_table *t, unsigned stripe, int rc,
		      const void *row, size_t rowlen, const char *fam,
		      size_t famlen, const void *qual, size_t qlen,
		      int64_t old_ts, const void *val, size_t vlen)
{
	cf_batch b = { 0 };

	if (rc == CF_OK) {
		int64_t now = env_now_ms();
		rc = cf_batch_put(&b, row, rowlen, fam, famlen, qual, qlen,
				  now > old_ts ? now : old_ts, val, vlen);
	}
	rc = rmw_commit(t, &b, rc, stripe);
	free(b.ops);
	buf_release(&b.data);
	return rc;
}

int cf_table_append(cf_table *t, const void *row, size_t rowlen,
		    const char *fam, size_t famlen, const void *qual,
		    size_t qlen, const void *data, size_t dlen,
		    struct buf *out)
{
	struct buf cur = BUF_INIT;
	unsigned stripe;
	int64_t ts = 0;
	int rc;

	rc = rmw_begin(t, row, rowlen, fam, famlen, &stripe);
	if (rc)
		goto out;
	rc = table_get_latest(t, row, rowlen, fam, famlen, qual, qlen, &cur,
			      &ts);
	if (rc == CF_ENOTFOUND)
		rc = CF_OK;
	if (rc == CF_OK)
		rc = buf_append(&cur, data, dlen);
	rc = rmw_finish(t, stripe, rc, row, rowlen, fam, famlen, qual, qlen,
			ts, cur.p, cur.len);
	if (rc == CF_OK) {
		atomic_fetch_add(&t->st.appends, 1);
		atomic_fetch_add(&t->db->st.appends, 1);
		if (out) {
			buf_reset(out);
			rc = buf_append(out, cur.p, cur.len);
		}
	}
out:
	count_error(t, rc);
	buf_release(&cur);
	return rc;
}

/* The bytes of op's field at off (len) in batch b. */
static const unsigned char *bop_bytes(const cf_batch *b, size_t off)
{
	return b->data.p + off;
}

static const unsigned char *bop_val(const cf_batch *b, const struct bop *o)
{
	return o->ext ? o->ext : b->data.p + o->val;
}

/* The columns of an Append or Increment of one row: puts (of vlen bytes
 * each when vlen is not 0) of row, of families t has.  CF_EINVAL (none,
 * or not such a put), CF_EXDEV (another row), CF_ENOTFOUND. */
static int check_row_cols(struct cf_table *t, const void *row, size_t rowlen,
			  const cf_batch *cols, size_t vlen)
{
	if (cols->n == 0)
		return CF_EINVAL;
	for (size_t i = 0; i < cols->n; i++) {
		const struct bop *o = &cols->ops[i];
		if (o->kind != BOP_PUT || (vlen && o->vlen != vlen))
			return CF_EINVAL;
		if (bytes_cmp(bop_bytes(cols, o->row), o->rowlen, row,
			      rowlen) != 0)
			return CF_EXDEV;
		if (!table_family(t, (const char *)bop_bytes(cols, o->fam),
				  o->famlen)) {
			cf_log(CF_LOG_WARN, "%s: no family '%.*s'", t->name,
			       (int)o->famlen,
			       (const char *)bop_bytes(cols, o->fam));
			return CF_ENOTFOUND;
		}
	}
	return CF_OK;
}

/* The start of an Append or Increment of several columns: checks cols
 * (check_row_cols, vlen), marks in *last (the caller frees it) the last
 * op of each column, and takes the row's stripe. */
static int rmw_begin_cols(struct cf_table *t, const void *row, size_t rowlen,
			  const cf_batch *cols, size_t vlen,
			  unsigned char **last, unsigned *stripe)
{
	int rc;

	*last = NULL;
	if ((rc = check_row_cols(t, row, rowlen, cols, vlen)))
		return rc;
	if (!(*last = malloc(cols->n)))
		return CF_ENOMEM;
	if ((rc = last_of_columns(cols, *last)))
		return rc;
	return rmw_begin(t, row, rowlen,
			 (const char *)bop_bytes(cols, cols->ops[0].fam),
			 cols->ops[0].famlen, stripe);
}

int cf_table_increment(cf_table *t, const void *row, size_t rowlen,
		       const char *fam, size_t famlen, const void *qual,
		       size_t qlen, int64_t delta, int64_t *result)
{
	struct buf cur = BUF_INIT;
	unsigned char v[8];
	unsigned stripe;
	int64_t ts = 0, old = 0, nv = 0;
	int rc;

	rc = rmw_begin(t, row, rowlen, fam, famlen, &stripe);
	if (rc)
		goto out;
	rc = table_get_latest(t, row, rowlen, fam, famlen, qual, qlen, &cur,
			      &ts);
	if (rc == CF_ENOTFOUND) {
		rc = CF_OK;
	} else if (rc == CF_OK) {
		if (cur.len != 8) {
			cf_log(CF_LOG_WARN, "%s: increment of a %zu-byte "
			       "value (counters are 8 bytes)", t->name,
			       cur.len);
			rc = CF_EINVAL;
		} else {
			old = (int64_t)dec_u64be(cur.p);
		}
	}
	if (rc == CF_OK && __builtin_add_overflow(old, delta, &nv)) {
		cf_log(CF_LOG_WARN, "%s: counter overflow", t->name);
		rc = CF_ERANGE;
	}
	if (rc == CF_OK)
		enc_u64be(v, (uint64_t)nv);
	rc = rmw_finish(t, stripe, rc, row, rowlen, fam, famlen, qual, qlen,
			ts, v, 8);
	if (rc == CF_OK) {
		atomic_fetch_add(&t->st.increments, 1);
		atomic_fetch_add(&t->db->st.increments, 1);
		if (result)
			*result = nv;
	}
out:
	count_error(t, rc);
	buf_release(&cur);
	return rc;
}

/* The new value of a column of an Append or Increment of several
 * columns from its value cur (found: the cell exists) and the op's data
 * d (dlen bytes); cur becomes the new value.  CF_* on error. */
typedef int (*rmw_fn)(struct cf_table *t, struct buf *cur, int found,
		      const unsigned char *d, size_t dlen);

/*
 * The frame of an Append or Increment of several columns of one row:
 * every column's new value is computed under the row's stripe (f, from
 * the latest version read), then all are written as one batch at a
 * timestamp never below the versions read: a reader sees all of them
 * or none.  A column named again takes the last op named: HBase's
 * reckonDeltas computes each from the same value read and writes them
 * at one timestamp, so the last wins (its
 * TestIncrementsFromClientSide.testIncrementOnSameColumn).  *st and
 * *dbst count the columns written.  Memory: the new values together,
 * plus one column's current value.
 */
static int rmw_cols(struct cf_table *t, const void *row, size_t rowlen,
		    const cf_batch *cols, size_t vlen, rmw_fn f,
		    atomic_uint_least64_t *st, atomic_uint_least64_t *dbst)
{
	cf_batch out = { 0 };
	struct buf cur = BUF_INIT;
	unsigned char *last = NULL;
	unsigned stripe;
	int64_t now, ts;
	int rc = CF_OK;

	if ((rc = rmw_begin_cols(t, row, rowlen, cols, vlen, &last, &stripe)))
		goto out;
	now = env_now_ms();
	for (size_t i = 0; !rc && i < cols->n; i++) {
		const struct bop *o = &cols->ops[i];
		const char *fam = (const char *)bop_bytes(cols, o->fam);
		int found;
		if (!last[i])	/* named again: the last one counts */
			continue;
		buf_reset(&cur);
		ts = 0;
		rc = table_get_latest(t, row, rowlen, fam, o->famlen,
				      bop_bytes(cols, o->qual), o->qlen, &cur,
				      &ts);
		found = rc == CF_OK;
		if (rc == CF_ENOTFOUND)
			rc = CF_OK;
		if (!rc)
			rc = f(t, &cur, found, bop_val(cols, o), o->vlen);
		if (!rc)
			rc = cf_batch_put(&out, row, rowlen, fam, o->famlen,
					  bop_bytes(cols, o->qual), o->qlen,
					  now > ts ? now : ts, cur.p, cur.len);
	}
	rc = rmw_commit(t, &out, rc, stripe);
	if (!rc) {
		atomic_fetch_add(st, out.n);
		atomic_fetch_add(dbst, out.n);
	}
out:
	count_error(t, rc);
	free(last);
	free(out.ops);
	buf_release(&out.data);
	buf_release(&cur);
	return rc;
}

static int append_value(struct cf_table *t, struct buf *cur, int found,
			const unsigned char *d, size_t dlen)
{
	(void)t;
	(void)found;
	return buf_append(cur, d, dlen);
}

int cf_table_append_row(cf_table *t, const void *row, size_t rowlen,
			const cf_batch *cols)
{
	return rmw_cols(t, row, rowlen, cols, 0, append_value,
			&t->st.appends, &t->db->st.appends);
}

/* A counter's 8 bytes plus the delta's (an absent cell counts from 0). */
static int increment_value(struct cf_table *t, struct buf *cur, int found,
			   const unsigned char *d, size_t dlen)
{
	int64_t old = 0, nv;
	unsigned char v[8];

	(void)dlen;		/* 8: rmw_begin_cols checked */
	if (found && cur->len != 8) {
		cf_log(CF_LOG_WARN, "%s: increment of a %zu-byte value "
		       "(counters are 8 bytes)", t->name, cur->len);
		return CF_EINVAL;
	}
	if (found)
		old = (int64_t)dec_u64be(cur->p);
	if (__builtin_add_overflow(old, (int64_t)dec_u64be(d), &nv)) {
		cf_log(CF_LOG_WARN, "%s: counter overflow", t->name);
		return CF_ERANGE;
	}
	enc_u64be(v, (uint64_t)nv);
	buf_reset(cur);
	return buf_append(cur, v, 8);
}

int cf_table_increment_row(cf_table *t, const void *row, size_t rowlen,
			   const cf_batch *cols)
{
	return rmw_cols(t, row, rowlen, cols, 8, increment_value,
			&t->st.increments, &t->db->st.increments);
}

/* What a check-and-apply's read must show for the write to go on: 1
 * yes, 0 no, below 0 an error code. */
typedef int (*holds_fn)(const void *arg, const cf_row *r);

/*
 * The frame of every check: under the row's stripe, reads the row as o
 * says (the cells a check looks at), asks holds, and applies b when it
 * says yes.  fam (famlen bytes) is checked to be the table's unless
 * NULL.  Memory: the cells read, plus b's own.
 */
static int check_then_apply(struct cf_table *t, const void *row,
			    size_t rowlen, const char *fam, size_t famlen,
			    const struct cf_read_opts *o, holds_fn holds,
			    const void *arg, const cf_batch *b, int *applied)
{
	cf_row *r = NULL;
	unsigned stripe;
	int rc, yes = 0;

	*applied = 0;
	/* (a batch of empty rows may hold no data: no NULL + 0) */
	for (size_t i = 0; i < b->n; i++)
		if (b->ops[i].rowlen != rowlen ||
		    (rowlen && memcmp(b->data.p + b->ops[i].row, row, rowlen)))
			return CF_EXDEV;
	rc = rmw_begin(t, row, rowlen, fam, famlen, &stripe);
	if (rc)
		goto out;
	rc = cf_table_get(t, row, rowlen, o, &r);
	if (rc == CF_OK) {
		yes = holds(arg, r);
		if (yes < 0)
			rc = yes;
	}
	if (rc == CF_OK && yes) {
		rc = rmw_commit(t, b, rc, stripe);
		*applied = rc == CF_OK;
	} else {
		rmw_end(t, stripe);
	}
out:
	count_error(t, rc);
	cf_row_free(r);
	return rc;
}

struct expect {
	const void *p;		/* NULL: the cell must be absent */
	size_t len;
};

static int holds_exactly(const void *arg, const cf_row *r)
{
	const struct expect *e = arg;
	const struct cf_cell *c;

	if (cf_row_count(r) == 0)
		return e->p == NULL;
	c = cf_row_cell(r, 0);
	return e->p && bytes_cmp(c->val, c->vlen, e->p, e->len) == 0;
}

int cf_table_check_and_apply(cf_table *t, const void *row, size_t rowlen,
			     const char *fam, size_t famlen, const void *qual,
			     size_t qlen, const void *expect, size_t elen,
			     const cf_batch *b, int *applied)
{
	struct cf_column col = { fam, famlen, qual ? qual : "", qlen };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	struct expect e = { expect, elen };

	o.columns = &col;
	o.ncolumns = 1;
	return check_then_apply(t, row, rowlen, fam, famlen, &o,
				holds_exactly, &e, b, applied);
}

/* HBase's HRegion.checkAndMutateInternal, its column form (as HBase
 * 2.4.10 and 2.5 on: NOT_EQUAL of the null value asks for a nonempty
 * cell). */
static int holds_compare(const void *arg, const cf_row *r)
{
	const struct cf_check *k = arg;
	const struct cf_cell *c = cf_row_count(r) ? cf_row_cell(r, 0) : NULL;
	int d;

	if (k->value == NULL || k->vlen == 0)
		return (c == NULL || c->vlen == 0) ==
		       (k->op != CF_CMP_NOT_EQUAL);
	if (!c)
		return 0;
	d = bytes_cmp(k->value, k->vlen, c->val, c->vlen);
	switch (k->op) {
	case CF_CMP_EQUAL:
		return d == 0;
	case CF_CMP_NOT_EQUAL:
		return d != 0;
	case CF_CMP_LESS:
		return d < 0;
	case CF_CMP_LESS_OR_EQUAL:
		return d <= 0;
	case CF_CMP_GREATER:
		return d > 0;
	case CF_CMP_GREATER_OR_EQUAL:
		return d >= 0;
	}
	return CF_EINVAL;
}

/* The filter form: the row's versions in the time range read. */
static int holds_filter(const void *arg, const cf_row *r)
{
	const struct cf_check *k = arg;

	return k->filter(k->arg, r);
}

int cf_table_check_mutate(cf_table *t, const void *row, size_t rowlen,
			  const struct cf_check *c, const cf_batch *b,
			  int *applied)
{
	struct cf_column col = { c->fam, c->famlen, c->qual ? c->qual : "",
				 c->qlen };
	struct cf_read_opts o = CF_READ_OPTS_INIT;

	*applied = 0;
	if (c->min_ts >= c->max_ts || (unsigned)c->op > CF_CMP_GREATER_OR_EQUAL)
		return CF_EINVAL;
	o.min_ts = c->min_ts;
	o.max_ts = c->max_ts;
	if (c->filter) {
		/* HBase's filters see a column's versions before a Get's
		 * one version is counted: a filter that passes an older
		 * one makes the check hold */
		o.max_versions = INT32_MAX;
		return check_then_apply(t, row, rowlen, NULL, 0, &o,
					holds_filter, c, b, applied);
	}
	o.columns = &col;
	o.ncolumns = 1;
	return check_then_apply(t, row, rowlen, c->fam, c->famlen, &o,
				holds_compare, c, b, applied);
}

/* --- recovery --------------------------------------------------------- */

static struct cf_table *table_by_id(struct cf_db *db, int64_t id)
{
	for (size_t i = 0; i < db->ntables; i++)
		if (db->tables[i]->id == id)
			return db->tables[i];
	return NULL;
}

int wal_record_replay(struct cf_db *db, const void *rec, size_t n,
		      uint64_t *max_seq)
{
	struct walrec_dec d;
	int more = 1, rc = walrec_open(&d, rec, n);

	while (rc == CF_OK) {
		struct ikey k;
		const void *val;
		size_t vlen;
		int64_t tid;
		struct cf_table *t;
		struct region *r;

		rc = walrec_next(&d, &tid, &k, &val, &vlen, &more);
		if (rc || !more)
			break;
		if (k.seq > *max_seq)
			*max_seq = k.seq;
		t = table_by_id(db, tid);
		if (!t || !table_family(t, (const char *)k.fam, k.famlen))
			continue;	/* dropped since */
		r = table_region_for(t, k.row, k.rowlen);
		if (k.seq <= r->flushed_seq)
			continue;	/* in a store file */
		rc = memstore_add(r->view->mem, &k, val, vlen);
		if (rc == CF_EEXIST)	/* a key twice in the log is damage */
			rc = CF_ECORRUPT;
	}
	walrec_close(&d);
	return rc;
}

void write_throttle(struct cf_db *db, struct cf_table *t)
{
	/* Too many store files waiting for compaction, or memstores far
	 * over their bound while flushes catch up: slow down, never fail.
	 * The wait is bounded so a stuck background thread cannot hang
	 * writers forever. */
	int waited = 0;

	if (!db->bg_started)
		return;
	while (waited < 2000) {
		int over_mem = atomic_load(&db->mem_total) >
			       2 * db->o.memstore_limit;
		int over_files = 0;

		pthread_rwlock_rdlock(&t->lock);
		for (size_t i = 0; i < t->nregions && !over_files; i++) {
			struct view *v = region_view(t->regions[i]);
			for (size_t s = 0; s < v->nstores; s++)
				if (v->stores[s].n >= (size_t)db->o.stall_files)
					over_files = 1;
			view_unref(v);
		}
		pthread_rwlock_unlock(&t->lock);
		if (!over_mem && !over_files)
			break;
		if (waited == 0) {
			atomic_fetch_add(&t->st.stalls, 1);
			atomic_fetch_add(&db->st.stalls, 1);
		}
		db_wake_background(db);
		usleep(over_mem ? 5000 : 1000);
		waited++;
		if (over_files && waited >= 20)
			break;	/* a short pause per write is enough */
	}
}
