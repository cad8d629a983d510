/*
 * viewiter.c: iterators over a region's view, shared by reads and
 * compactions.
 *
 * view_iter() merges the view's memstores and the store files a read may
 * need: a file is left out when its key range, time range or bloom
 * filter rules it out, and a split daughter's reference to a parent's
 * file is clamped to the daughter's rows.  The reads that had to consult
 * two or more files of one store are counted here, and past the store's
 * budget the compactor is asked to compact it whole (read-driven
 * compaction, docs/engine.md).
 *
 * Below read.c and compact.c, above region.c: it calls neither of them.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"

/* The smallest internal key of row: empty family, newest everything. */
size_t row_start_key(unsigned char *dst, const void *row,
			    size_t rowlen)
{
	struct ikey k = { .row = row, .rowlen = rowlen, .fam = NULL,
			  .famlen = 0, .qual = NULL, .qlen = 0,
			  .ts = INT64_MAX, .seq = SEQ_MAX, .type = 0xff };
	return ikey_encode(dst, &k);
}

/* Clamps a child iterator to rows [lo, hi) (a split daughter reading a
 * parent's file). */
struct bounded {
	struct iter it;
	struct iter *in;
	const struct buf *lo, *hi;
	int lo_set, hi_set;
	int below;		/* a seek_lt went below lo: invalid */
};

static int b_in_range(const struct bounded *b)
{
	size_t kl, rl;
	const unsigned char *k, *row;

	if (b->below || !iter_valid(b->in))
		return 0;
	if (!b->hi_set)
		return 1;
	k = iter_key(b->in, &kl);
	row = ikey_row(k, &rl);
	return bytes_cmp(row, rl, b->hi->p, b->hi->len) < 0;
}

/* Positions the child on the first cell of the lower bound's row. */
static void b_seek_lo(struct bounded *b)
{
	unsigned char *tmp = malloc(b->lo->len + KEY_OVERHEAD);

	if (!tmp)
		abort();	/* out of memory on the read path */
	iter_seek(b->in, tmp, row_start_key(tmp, b->lo->p, b->lo->len));
	free(tmp);
}

static void b_seek(struct iter *it, const unsigned char *key, size_t n)
{
	struct bounded *b = (struct bounded *)it;
	size_t rl;
	const unsigned char *row = ikey_row(key, &rl);

	b->below = 0;
	if (b->lo_set && bytes_cmp(row, rl, b->lo->p, b->lo->len) < 0)
		b_seek_lo(b);
	else
		iter_seek(b->in, key, n);
}

static void b_seek_first(struct iter *it)
{
	struct bounded *b = (struct bounded *)it;

	b->below = 0;
	if (b->lo_set)
		b_seek_lo(b);
	else
		iter_seek_first(b->in);
}

/* Below hi's first cell at most; nothing below lo. */
static void b_seek_lt(struct iter *it, const unsigned char *key, size_t n)
{
	struct bounded *b = (struct bounded *)it;
	size_t rl, kl;
	const unsigned char *row, *k;

	b->below = 0;
	if (b->hi_set && (!key || (row = ikey_row(key, &rl),
				   bytes_cmp(row, rl, b->hi->p,
					     b->hi->len) >= 0))) {
		unsigned char *tmp = malloc(b->hi->len + KEY_OVERHEAD);
		if (!tmp)
			abort();	/* out of memory on the read path */
		iter_seek_lt(b->in, tmp, row_start_key(tmp, b->hi->p,
							  b->hi->len));
		free(tmp);
	} else {
		iter_seek_lt(b->in, key, n);
	}
	if (b->lo_set && iter_valid(b->in)) {
		k = iter_key(b->in, &kl);
		row = ikey_row(k, &rl);
		b->below = bytes_cmp(row, rl, b->lo->p, b->lo->len) < 0;
	}
}

static void b_next(struct iter *it)
{
	struct bounded *b = (struct bounded *)it;

	if (!b->below)
		iter_next(b->in);
}

static int b_valid(const struct iter *it)
{
	return b_in_range((const struct bounded *)it);
}

static const unsigned char *b_key(const struct iter *it, size_t *n)
{
	return iter_key(((const struct bounded *)it)->in, n);
}

static const unsigned char *b_value(const struct iter *it, size_t *n)
{
	return iter_value(((const struct bounded *)it)->in, n);
}

static int b_status(const struct iter *it)
{
	return iter_status(((const struct bounded *)it)->in);
}

static void b_destroy(struct iter *it)
{
	struct bounded *b = (struct bounded *)it;
	iter_destroy(b->in);
	free(b);
}

static int b_pin(struct iter *it, struct iter_pin *p)
{
	return iter_pin(((struct bounded *)it)->in, p);
}

static const struct iter_ops bounded_ops = {
	b_seek_first, b_seek, b_next, b_valid, b_key, b_value, b_status,
	b_destroy, b_pin, b_seek_lt,
};

/* An iterator that is only an error: a read that needs an unreadable
 * store file fails instead of returning partial data. */
struct erriter {
	struct iter it;
	int rc;
};

static void e_seek_first(struct iter *it) { (void)it; }
static void e_seek(struct iter *it, const unsigned char *k, size_t n)
{
	(void)it;
	(void)k;
	(void)n;
}
static void e_next(struct iter *it) { (void)it; }
static void e_seek_lt(struct iter *it, const unsigned char *k, size_t n)
{
	e_seek(it, k, n);
}
static int e_valid(const struct iter *it) { (void)it; return 0; }
static const unsigned char *e_kv(const struct iter *it, size_t *n)
{
	(void)it;
	*n = 0;
	return NULL;
}
static int e_status(const struct iter *it)
{
	return ((const struct erriter *)it)->rc;
}
static void e_destroy(struct iter *it) { free(it); }

static const struct iter_ops err_ops = {
	e_seek_first, e_seek, e_next, e_valid, e_kv, e_kv, e_status,
	e_destroy, NULL, e_seek_lt,
};

struct iter *sfile_iter(struct sfile *f, int fill_cache)
{
	struct iter *in;
	struct bounded *b;

	if (!f->sst) {
		struct erriter *e = malloc(sizeof *e);
		if (!e)
			return NULL;
		e->it.ops = &err_ops;
		e->rc = CF_ECORRUPT;
		return &e->it;
	}
	in = sst_iter(f->sst, fill_cache);

	if (!in || (!f->lo_set && !f->hi_set))
		return in;
	b = malloc(sizeof *b);
	if (!b) {
		iter_destroy(in);
		return NULL;
	}
	b->it.ops = &bounded_ops;
	b->in = in;
	b->lo = &f->lo;
	b->hi = &f->hi;
	b->lo_set = f->lo_set;
	b->hi_set = f->hi_set;
	b->below = 0;
	return &b->it;
}

int read_wants_family(const struct cf_read_opts *o, const char *fam,
			size_t famlen)
{
	if (!o || !o->columns)
		return 1;
	for (size_t i = 0; i < o->ncolumns; i++)
		if (bytes_cmp(o->columns[i].fam, o->columns[i].famlen, fam,
			      famlen) == 0)
			return 1;
	return 0;
}

int sfile_may_match(struct cf_db *db, struct sfile *f,
			  const struct cf_read_opts *o, const void *row,
			  size_t rowlen)
{
	const struct sst_meta *m;
	int64_t min_ts = o ? o->min_ts : 0;

	if (!f->sst)
		return 1;	/* unknown content: the read must fail */
	m = sst_get_meta(f->sst);
	if (m->cells == 0)
		return 0;
	/* A delete marker may carry any ts, so only files without
	 * markers can be skipped by time; and only files wholly older
	 * than the range: a newer put, out of the range, still crowds
	 * older ones in it out (VERSIONS, docs/engine.md rule 3). */
	if (m->deletes == 0 && m->max_ts < min_ts) {
		atomic_fetch_add(&db->st.files_skipped, 1);
		return FM_SKIP;
	}
	if (!row)
		return FM_MAYBE;
	{
		size_t fl, ll;
		const unsigned char *fr = ikey_row(m->first_key.p, &fl);
		const unsigned char *lr = ikey_row(m->last_key.p, &ll);
		if (bytes_cmp(row, rowlen, fr, fl) < 0 ||
		    bytes_cmp(row, rowlen, lr, ll) > 0)
			return FM_SKIP;
	}
	if (!sst_may_have_row(f->sst, row, rowlen)) {
		atomic_fetch_add(&db->st.bloom_skips, 1);
		return FM_BLOOM_NO;
	}
	return FM_MAYBE;
}

/* The range of a scan, for children_iter. */
struct scan_range {
	const void *from;
	size_t fromlen;
	const struct buf *stop;	/* NULL: no stop row */
};

/*
 * The iterators over view v's memstores and the store files o wants
 * (bloom-checked against row when row is set), merged.  With sr (a
 * scan), also left out are the children a scan from sr->from (to
 * sr->stop) cannot need, and one child left is returned unmerged:
 *   - an empty memstore: an entry with seq <= the snapshot was counted
 *     before the snapshot was published, and the caller loaded the
 *     snapshot before calling;
 *   - a store file whose last row sorts before `from` or whose first row
 *     is at or past `stop` (a seek would leave it invalid; it costs an
 *     index search and a block load per seek).
 */
static struct iter *children_iter(struct cf_db *db, struct view *v,
				  const struct cf_read_opts *o,
				  const void *row, size_t rowlen,
				  const struct scan_range *sr, int fill_cache)
{
	struct iter *stack[32], **kids = stack;
	size_t n = 0, cap = 1 + v->nimm;
	struct iter *m;

	for (size_t s = 0; s < v->nstores; s++)
		cap += v->stores[s].n;
	if (cap > 32 && !(kids = malloc(cap * sizeof *kids)))
		return NULL;
	for (size_t i = 0; i <= v->nimm; i++) {
		struct memstore *ms = i ? v->imm[i - 1] : v->mem;
		if (sr && memstore_count(ms) == 0)
			continue;
		/* a Get: the row filter knows most rows are not there */
		if (row && !memstore_may_have_row(ms, row, rowlen))
			continue;
		if (!(kids[n] = memstore_iter(ms)))
			goto fail;
		n++;
	}
	for (size_t s = 0; s < v->nstores; s++) {
		struct fstore *st = &v->stores[s];
		size_t consulted = 0;
		if (!read_wants_family(o, st->fam, strlen(st->fam)))
			continue;
		for (size_t i = 0; i < st->n; i++) {
			struct sfile *f = st->files[i];
			int fm = sfile_may_match(db, f, o, row, rowlen);
			if (fm == FM_BLOOM_NO)
				consulted++;
			if (fm != FM_MAYBE)
				continue;
			if (sr && f->sst) {
				const struct sst_meta *mt = sst_get_meta(f->sst);
				size_t fl, ll;
				const unsigned char *fr, *lr;
				fr = ikey_row(mt->first_key.p, &fl);
				lr = ikey_row(mt->last_key.p, &ll);
				if (bytes_cmp(lr, ll, sr->from, sr->fromlen) < 0)
					continue;
				if (sr->stop && bytes_cmp(fr, fl, sr->stop->p,
							  sr->stop->len) >= 0)
					continue;
			}
			if (!(kids[n] = sfile_iter(f, fill_cache)))
				goto fail;
			n++;
			consulted++;
		}
		if (consulted >= 2)
			store_note_multi_read(db, st);
	}
	m = sr && n == 1 ? kids[0] : iter_merge(kids, n);
	if (kids != stack)
		free(kids);
	return m;
fail:
	while (n--)
		iter_destroy(kids[n]);
	if (kids != stack)
		free(kids);
	return NULL;
}

struct iter *view_iter(struct cf_db *db, struct region *r, struct view *v,
		       const struct cf_read_opts *o, const void *row,
		       size_t rowlen, int fill_cache)
{
	(void)r;
	return children_iter(db, v, o, row, rowlen, NULL, fill_cache);
}

/* A scan's iterator over view v from row `from` (to `stop`, when
 * has_stop): children_iter's rules for a scan. */
struct iter *view_scan_iter(struct cf_db *db, struct view *v,
			      const struct cf_read_opts *o, const void *from,
			      size_t fromlen, const struct buf *stop,
			      int has_stop, int fill_cache)
{
	struct scan_range sr = { from, fromlen, has_stop ? stop : NULL };
	return children_iter(db, v, o, NULL, 0, &sr, fill_cache);
}

/* --- read-driven compaction ------------------------------------------ */

/* The multi-file reads a store may see before it is compacted whole:
 * LevelDB's allowed_seeks (a seek costs about as much as compacting 16
 * KiB; at least 100), over the bytes the compaction would rewrite. */
static uint64_t read_budget(const struct cf_db *db, const struct fstore *st)
{
	uint64_t bytes = 0;

	for (size_t i = 0; i < st->n; i++)
		bytes += st->files[i]->size;
	bytes /= db->o.seek_bytes;
	return bytes > 100 ? bytes : 100;
}

void store_note_multi_read(struct cf_db *db, struct fstore *st)
{
	uint64_t c;

	atomic_fetch_add(&db->st.multi_file_reads, 1);
	if (!db->o.seek_bytes)
		return;
	c = atomic_fetch_add_explicit(&st->multi_reads, 1,
				      memory_order_relaxed) + 1;
	if (c < 100 || c != read_budget(db, st))
		return;
	atomic_store(&st->read_compact, 1);
	if (db->o.background)
		db_wake_background(db);
}
