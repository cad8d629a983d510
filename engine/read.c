/*
 * read.c: Get and Scan.
 *
 * A read takes a reference on the region's current view, then loads the
 * published sequence number as its snapshot (in that order, so every
 * compaction reflected in the view ran at a snapshot no newer than the
 * read's).  It merges the view's memstores and the store files that may
 * hold the row or range (key range, bloom filter and time range skip the
 * others), gathers one family of one row at a time, classifies the cells
 * (visible.c) and returns the live ones that match the request.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "util/env.h"

/* --- results ---------------------------------------------------------- */

struct cellref {
	size_t fam, famlen, qual, qlen, val, vlen;
	const unsigned char *vp;	/* a pinned value (not in scratch) */
	int64_t ts;
	int has_val;
	int kind;		/* cf_cell.kind */
};

/* Where a gathered cell's key and value lie in a row's scratch. */
struct gcell {
	size_t koff, kl;
	size_t voff;		/* NO_VAL: the value was not kept */
	const unsigned char *vp;	/* else NULL, or the value itself
					 * where a pin keeps it */
};

/* Values this large are kept where the iterator found them (iter_pin:
 * a reference on the store file's block, which holds little more than
 * the value) instead of being copied into the row: a 10 MiB cell read
 * through the mount was copied once more here, into a buffer whose every
 * page faulted.  Values read from a memstore are copied (memstore.c). */
#define PIN_MIN ((size_t)64 << 10)

#define NO_VAL SIZE_MAX

/*
 * A row's cells point into scratch, which holds every cell read_row
 * gathered for it (live or not) as read from the iterator: a cell is
 * copied once, not into scratch and then again into the row.  Gathered
 * cell i is raw[i], decoded once as it is gathered; its pointers into
 * scratch are set by emit_family (scratch may move while the row grows),
 * from gc[i].
 */
struct cf_row {
	struct buf key;
	struct cellref *refs;	/* offsets into scratch, while it grows */
	struct cf_cell *cells;
	size_t n, cap;
	size_t nref;		/* cells [0, nref) are held in refs until
				 * row_finish; the rest were written to
				 * cells directly (a row's last family) */
	struct buf scratch;	/* raw cells of the row being read */
	struct rcell *raw;	/* the gathered cells, decoded */
	struct gcell *gc;	/* and where they lie in scratch */
	size_t gcap;
	struct iter_pin *pins;	/* what keeps the pinned values */
	size_t npins, pincap;
};

/*
 * Each thread keeps the last small row it freed, buffers and all, for its
 * next Get: a point read then allocates nothing for its result.  The
 * spare is a thread-local variable (a Get takes and gives it back with a
 * load and a store; pthread_getspecific and setspecific cost a tenth of
 * a Get that finds nothing); a pthread key, set once per thread, only
 * has its destructor free the spare when the thread exits.
 */
#define SPARE_MAX ((size_t)64 << 10)	/* bytes of buffers a spare keeps */

static pthread_key_t spare_key;
static pthread_once_t spare_once = PTHREAD_ONCE_INIT;
static int spare_ok;
static __thread cf_row *spare;
static __thread int spare_keyed;	/* spare_key set for this thread */

/* Lets go of the values the row kept where they were read. */
static void release_pins(cf_row *r)
{
	for (size_t i = 0; i < r->npins; i++)
		r->pins[i].release(r->pins[i].arg);
	r->npins = 0;
}

static void row_destroy(cf_row *r)
{
	release_pins(r);
	free(r->pins);
	buf_release(&r->key);
	buf_release(&r->scratch);
	free(r->refs);
	free(r->cells);
	free(r->raw);
	free(r->gc);
	free(r);
}

/* At thread exit (thread-local variables outlive key destructors). */
static void spare_free(void *p)
{
	(void)p;
	if (spare)
		row_destroy(spare);
	spare = NULL;
	spare_keyed = 0;	/* a row freed after this sets it again */
}

static void spare_init(void)
{
	spare_ok = pthread_key_create(&spare_key, spare_free) == 0;
}

cf_row *row_new(void)
{
	cf_row *r = spare;

	if (r) {
		spare = NULL;
		row_reset(r);
		return r;
	}
	return calloc(1, sizeof(struct cf_row));
}

void row_reset(cf_row *r)
{
	release_pins(r);
	buf_reset(&r->key);
	buf_reset(&r->scratch);
	r->n = 0;
	r->nref = 0;
}

int row_set_key(cf_row *r, const void *row, size_t rowlen)
{
	buf_reset(&r->key);
	return buf_append(&r->key, row, rowlen);
}

void cf_row_free(cf_row *r)
{
	if (!r)
		return;
	release_pins(r);	/* a spare keeps no store file's block */
	if (!spare && r->key.cap + r->scratch.cap +
	    r->cap * (sizeof *r->refs + sizeof *r->cells) +
	    r->gcap * (sizeof *r->raw + sizeof *r->gc) <= SPARE_MAX) {
		if (!spare_keyed) {
			/* the destructor runs for a key whose value is set */
			pthread_once(&spare_once, spare_init);
			spare_keyed = spare_ok &&
				      pthread_setspecific(spare_key, r) == 0;
		}
		if (spare_keyed) {
			spare = r;
			return;
		}
	}
	row_destroy(r);
}

const unsigned char *cf_row_key(const cf_row *r, size_t *len)
{
	*len = r->key.len;
	return r->key.p;
}

size_t cf_row_count(const cf_row *r)
{
	return r->n;
}

const struct cf_cell *cf_row_cell(const cf_row *r, size_t i)
{
	return i < r->n ? &r->cells[i] : NULL;
}

/* Doubles *cap (16 at first) for two parallel arrays *a and *b of
 * elements asz and bsz bytes.  CF_ENOMEM leaves *cap as it was; each
 * array grown so far is kept (realloc moved it or it stayed). */
static int grow_pair(void **a, size_t asz, void **b, size_t bsz,
		     size_t *cap)
{
	size_t n = *cap ? *cap * 2 : 16;
	void *na = realloc(*a, n * asz), *nb;

	if (!na)
		return CF_ENOMEM;
	*a = na;
	if (!(nb = realloc(*b, n * bsz)))
		return CF_ENOMEM;
	*b = nb;
	*cap = n;
	return CF_OK;
}

/* Room for one more cell in r's parallel arrays. */
static int row_room(cf_row *r)
{
	void *a = r->refs, *b = r->cells;
	int rc;

	if (r->n < r->cap)
		return CF_OK;
	rc = grow_pair(&a, sizeof *r->refs, &b, sizeof *r->cells, &r->cap);
	r->refs = a;
	r->cells = b;
	return rc;
}

static int cell_kind(int type)
{
	return type == KT_PUT ? 0 :
	       type == KT_DELETE ? CF_DEL_VERSION :
	       type == KT_DELETE_COLUMN ? CF_DEL_COLUMN : CF_DEL_FAMILY;
}

/* Adds gathered cell c (pointing into r->scratch, but for a pinned
 * value: x->vp) to the row.  final: scratch holds all it will (the
 * row's last family), so the public cell is written at once; else
 * where it lies in scratch, for row_finish. */
static int row_add(cf_row *r, const struct rcell *c, const struct gcell *x,
		   int with_val, int final)
{
	const unsigned char *base = r->scratch.p;
	struct cellref *ref;
	int rc;

	if ((rc = row_room(r)))
		return rc;
	if (final) {
		struct cf_cell *o = &r->cells[r->n++];
		o->fam = (const char *)c->k.fam;
		o->famlen = c->k.famlen;
		o->qual = c->k.qual;
		o->qlen = c->k.qlen;
		o->ts = c->k.ts;
		o->val = with_val ? c->val : NULL;
		o->vlen = c->vlen;
		o->kind = cell_kind(c->k.type);
		return CF_OK;
	}
	ref = &r->refs[r->n];
	ref->fam = (size_t)(c->k.fam - base);
	ref->famlen = c->k.famlen;
	ref->qual = (size_t)(c->k.qual - base);
	ref->qlen = c->k.qlen;
	ref->has_val = with_val && c->val;
	ref->vp = ref->has_val ? x->vp : NULL;
	ref->val = ref->has_val && !ref->vp ? (size_t)(c->val - base) : 0;
	ref->vlen = c->vlen;
	ref->ts = c->k.ts;
	ref->kind = cell_kind(c->k.type);
	r->nref = ++r->n;
	return CF_OK;
}

/* Points the public cells held in refs into scratch, now that it is
 * final. */
void row_finish(cf_row *r)
{
	const unsigned char *base = r->scratch.p;

	for (size_t i = 0; i < r->nref; i++) {
		struct cellref *f = &r->refs[i];
		struct cf_cell *c = &r->cells[i];
		c->fam = (const char *)base + f->fam;
		c->famlen = f->famlen;
		c->qual = base + f->qual;
		c->qlen = f->qlen;
		c->ts = f->ts;
		c->val = !f->has_val ? NULL : f->vp ? f->vp : base + f->val;
		c->vlen = f->vlen;
		c->kind = f->kind;
	}
}

/* --- reading one row -------------------------------------------------- */

static int col_wanted(const struct cf_read_opts *o, const struct ikey *k)
{
	if (!o || !o->columns)
		return 1;
	for (size_t i = 0; i < o->ncolumns; i++) {
		const struct cf_column *c = &o->columns[i];
		if (bytes_cmp(c->fam, c->famlen, k->fam, k->famlen) != 0)
			continue;
		if (!c->qual ||
		    bytes_cmp(c->qual, c->qlen, k->qual, k->qlen) == 0)
			return 1;
	}
	return 0;
}

/* Classifies and emits one gathered family group: cells [g, g + n);
 * final: the row's last (struct cf_row's nref). */
static int emit_family(const struct cf_family *f, cf_row *out,
		       const struct cf_read_opts *o, uint64_t snapshot,
		       size_t g, size_t n, int final)
{
	struct vis_ctx vc;
	int64_t min_ts = o ? o->min_ts : 0, max_ts = o ? o->max_ts : INT64_MAX;
	int maxv = o && o->max_versions > 0 ? o->max_versions : 1;
	int keys_only = o && o->keys_only;
	int rc = CF_OK;
	struct rcell *raw;

	if (n == 0 || !f)
		return CF_OK;	/* !f: a family dropped from the schema */
	raw = out->raw + g;
	/* the cells' pointers into scratch, now that it stays put until
	 * the next gather */
	for (size_t i = 0; i < n; i++) {
		const struct gcell *x = &out->gc[g + i];
		struct ikey *k = &raw[i].k;
		k->row = out->scratch.p + x->koff + 2;
		k->fam = k->row + k->rowlen + 1;
		k->qual = k->fam + k->famlen;
		raw[i].val = x->voff == NO_VAL ? NULL
			   : x->vp ? x->vp : out->scratch.p + x->voff;
	}
	if (!(o && o->raw) && vis_lone_put(f, snapshot, raw, n)) {
		/* a scan's usual row: one live put */
		if (raw->k.ts < min_ts || raw->k.ts >= max_ts ||
		    (o && o->columns && !col_wanted(o, &raw->k)))
			return CF_OK;
		return row_add(out, raw, &out->gc[g], !keys_only, final);
	}
	vc.f = f;
	vc.snapshot = snapshot;
	/* the clock matters only to TTL (a syscall's worth per row) */
	vc.now_ms = f->ttl != CF_TTL_FOREVER ? env_now_ms() : 0;
	vc.read_max_ts = max_ts;
	vc.expiring = 0;
	vis_classify(&vc, raw, n);
	for (size_t i = 0; o && o->raw && i < n && rc == CF_OK; i++) {
		/* everything held, but what this read's snapshot cannot see */
		struct rcell *c = &raw[i];
		if (c->state == VIS_FUTURE || c->k.ts < min_ts ||
		    c->k.ts >= max_ts || !col_wanted(o, &c->k))
			continue;
		rc = row_add(out, c, &out->gc[g + i],
			     !keys_only && c->k.type == KT_PUT, final);
	}
	for (size_t i = 0, shown = 0; !(o && o->raw) && i < n &&
	     rc == CF_OK; i++) {
		struct rcell *c = &raw[i];
		if (i > 0 && bytes_cmp(c->k.qual, c->k.qlen, raw[i - 1].k.qual,
				       raw[i - 1].k.qlen) != 0)
			shown = 0;
		if (c->state != VIS_LIVE || c->k.ts < min_ts ||
		    c->k.ts >= max_ts || (o && o->columns &&
					  !col_wanted(o, &c->k)))
			continue;
		if ((int)shown >= maxv)
			continue;
		shown++;
		rc = row_add(out, c, &out->gc[g + i], !keys_only, final);
	}
	return rc;
}

/* Keeps the value of its current entry where it is, for the row (a
 * pin that will not fit is no error: the value is copied then). */
static int keep_value(cf_row *out, struct iter *it)
{
	if (out->npins == out->pincap) {
		size_t cap = out->pincap ? out->pincap * 2 : 4;
		struct iter_pin *p = realloc(out->pins, cap * sizeof *p);
		if (!p)
			return 0;
		out->pins = p;
		out->pincap = cap;
	}
	if (!iter_pin(it, &out->pins[out->npins]))
		return 0;
	out->npins++;
	return 1;
}

/* Appends cell (k, x decoded) with value v, its current entry, to the
 * row's gathered cells (struct cf_row). */
int row_gather(cf_row *out, size_t *n, struct iter *it,
	       const unsigned char *k, size_t kl, const struct ikey *x,
	       const unsigned char *v, size_t vl, int with_val)
{
	struct gcell *gc;
	struct rcell *c;
	int rc, kept = with_val && vl >= PIN_MIN && keep_value(out, it);

	if (*n == out->gcap) {
		void *a = out->gc, *b = out->raw;
		rc = grow_pair(&a, sizeof *out->gc, &b, sizeof *out->raw,
			       &out->gcap);
		out->gc = a;
		out->raw = b;
		if (rc)
			return rc;
	}
	rc = buf_reserve(&out->scratch, kl + (with_val && !kept ? vl : 0));
	if (rc)
		return rc;	/* a pin taken is let go with the row */
	gc = &out->gc[*n];
	c = &out->raw[*n];
	(*n)++;
	gc->koff = out->scratch.len;
	gc->kl = kl;
	memcpy(out->scratch.p + out->scratch.len, k, kl);
	out->scratch.len += kl;
	gc->voff = NO_VAL;
	gc->vp = NULL;
	if (kept) {
		gc->voff = out->scratch.len;
		gc->vp = v;
	} else if (with_val) {
		gc->voff = out->scratch.len;
		if (vl)
			memcpy(out->scratch.p + out->scratch.len, v, vl);
		out->scratch.len += vl;
	}
	c->k = *x;
	c->k.row = c->k.fam = c->k.qual = NULL;	/* set by emit_family */
	c->val = NULL;
	c->vlen = vl;
	return CF_OK;
}

/* The same cell can reach a read twice (a store file rebuilt by fsck next
 * to the WAL edits it holds): identical keys are one cell. */
int row_same_as_last(const cf_row *out, size_t n, const unsigned char *k,
		     size_t kl, const struct ikey *x)
{
	const struct rcell *c;

	if (!n)
		return 0;
	c = &out->raw[n - 1];
	if (c->k.seq != x->seq || c->k.ts != x->ts || out->gc[n - 1].kl != kl)
		return 0;
	return memcmp(out->scratch.p + out->gc[n - 1].koff, k, kl) == 0;
}

/*
 * Versions past VERSIONS are dead, and a delete can only cover cells that
 * sort after it (an equal or lower timestamp).  So once a column has shown
 * VERSIONS distinct timestamps with no delete before them, everything else
 * in the column is dead: the read skips it, seeking past the column when
 * there is much to skip (a counter incremented many times).  In the empty
 * qualifier's column only its puts are skipped, one by one: DeleteFamily
 * markers live there, sorted by timestamp among its puts, and they cover
 * every column, so every marker is still gathered (and the first one
 * ends the skipping, being a delete).  A skipped put cannot change how
 * the cells gathered are classified: a put's fate depends on the deletes
 * and on the puts sorting before it, never on the puts after it.
 */
struct colskip {
	size_t col;		/* the column being counted: the index of a
				 * gathered cell of it, in out->gc */
	int has_col;
	int versions;		/* the family's VERSIONS */
	int puts;		/* distinct timestamps seen */
	int64_t last_ts;
	int deletes;		/* a delete seen in the column or family */
	int fam_deletes;
	int skipping;
	int skipped;
};

/* Compares the column of gathered cell i with that of key k. */
static int col_cmp(const cf_row *out, size_t i, const unsigned char *k,
		   size_t kl)
{
	return ikey_cmp_column(out->scratch.p + out->gc[i].koff, out->gc[i].kl,
			       k, kl);
}

/* Seeks it past the column of key k. */
void row_seek_past_column(struct iter *it, const struct ikey *k)
{
	struct ikey end = *k;
	unsigned char stack[512], *p = stack;
	size_t n = ikey_size(&end);

	end.ts = INT64_MIN;
	end.seq = 0;
	end.type = 0;
	if (n > sizeof stack && !(p = malloc(n))) {
		iter_next(it);
		return;
	}
	iter_seek(it, p, ikey_encode(p, &end));
	if (p != stack)
		free(p);
}

/* <0, 0, >0 as x's column (family, then qualifier) sorts before, is,
 * or sorts after column last. */
static int column_vs(const struct ikey *x, const struct cf_column *last)
{
	int c = bytes_cmp(x->fam, x->famlen, last->fam, last->famlen);

	return c ? c : bytes_cmp(x->qual, x->qlen, last->qual, last->qlen);
}

/*
 * A Get of named columns of one family (last: the greatest of them)
 * reads only what can change them: the family's empty-qualifier column
 * (where its DeleteFamily markers are) and the named columns, seeking
 * from one to the next, so its cost does not grow with the columns in
 * between (a row of a million columns: one seek each).  A column's fate
 * depends on its own cells and its family's markers only (visible.c).
 * What to do at cell x: 0 gather it, 1 the iterator was moved to the
 * next column wanted, -1 nothing after x is wanted.
 */
static int get_hop(struct iter *it, const struct cf_read_opts *o,
		   const struct cf_column *last, const struct ikey *x)
{
	int c = bytes_cmp(x->fam, x->famlen, last->fam, last->famlen);
	const struct cf_column *nx = NULL;
	unsigned char stack[512], *p = stack;
	struct ikey k;
	size_t n;

	if (c > 0)
		return -1;
	if (c == 0 && x->qlen == 0)
		return 0;
	if (c == 0) {
		for (size_t i = 0; i < o->ncolumns; i++) {
			const struct cf_column *col = &o->columns[i];
			int d = bytes_cmp(col->qual, col->qlen, x->qual,
					  x->qlen);
			if (d == 0)
				return 0;
			if (d > 0 && (!nx || bytes_cmp(col->qual, col->qlen,
						       nx->qual,
						       nx->qlen) < 0))
				nx = col;
		}
		if (!nx)
			return -1;
	}
	memset(&k, 0, sizeof k);
	k.row = x->row;
	k.rowlen = x->rowlen;
	k.fam = (const unsigned char *)last->fam;
	k.famlen = last->famlen;
	k.qual = nx ? nx->qual : NULL;	/* before the family: its start */
	k.qlen = nx ? nx->qlen : 0;
	k.ts = INT64_MAX;
	k.seq = SEQ_MAX;
	k.type = 0xff;
	n = ikey_size(&k);
	if (n > sizeof stack && !(p = malloc(n))) {
		iter_next(it);	/* no memory: step instead */
		return 1;
	}
	iter_seek(it, p, ikey_encode(p, &k));
	if (p != stack)
		free(p);
	return 1;
}

/* The family bytes of gathered cell i, in scratch (struct ikey's
 * layout: two bytes of row length, the row, a byte of family length). */
static const unsigned char *group_family(const cf_row *out, size_t i)
{
	return out->scratch.p + out->gc[i].koff + 2 + out->raw[i].k.rowlen +
	       1;
}

int read_row(struct cf_db *db, struct cf_table *t, struct iter *it,
	     const struct cf_read_opts *o, uint64_t snapshot,
	     const struct cf_column *last, cf_row *out)
{
	const struct cf_family *f = NULL;	/* the group's, NULL: dropped */
	size_t n = 0;
	int rc = CF_OK, keys_only = o && o->keys_only, have_key = 0;
	struct colskip cs = { 0, 0, 1, 0, 0, 0, 0, 0, 0 };
	size_t g = 0;		/* the family group's first cell */

	row_reset(out);
	while (rc == CF_OK && iter_valid(it)) {
		const unsigned char *k, *v;
		size_t kl, vl;
		struct ikey x;

		k = iter_key(it, &kl);
		/* the next row's first cell ends the row: found from the
		 * row's bytes alone, not decoded here and again by the next
		 * read_row; a key too short for its row is left to
		 * ikey_decode, which finds it corrupt */
		if (have_key && kl >= 2) {
			size_t rl;
			const unsigned char *rk = ikey_row(k, &rl);
			if (rl + KEY_OVERHEAD <= kl &&
			    (rl != out->key.len ||
			     !bytes_equal(rk, out->key.p, rl)))
				break;
		}
		if (ikey_decode(k, kl, &x)) {
			rc = CF_ECORRUPT;
			break;
		}
		if (cs.skipping && (x.qlen > 0 || x.type == KT_PUT) &&
		    col_cmp(out, cs.col, k, kl) == 0) {
			if (x.qlen == 0) {
				iter_next(it);	/* a put: see struct colskip */
			} else if (++cs.skipped > 8) {
				cs.skipping = 0;
				row_seek_past_column(it, &x);
			} else {
				iter_next(it);
			}
			continue;
		}
		cs.skipping = 0;
		if (!have_key) {
			rc = row_set_key(out, x.row, x.rowlen);
			if (rc)
				break;
			have_key = 1;
		} else if (last && column_vs(&x, last) > 0) {
			/* past the Get's columns: the rest are not shown */
			break;
		}
		if (last) {
			int hop = get_hop(it, o, last, &x);
			if (hop < 0)
				break;
			if (hop > 0)
				continue;
		}
		/* the group's family is that of its first cell gathered,
		 * in scratch (x's bytes change with the iterator) */
		if (n > g && (x.famlen != out->raw[g].k.famlen ||
			      !bytes_equal(x.fam, group_family(out, g),
					   x.famlen))) {
			rc = emit_family(f, out, o, snapshot, g, n - g, 0);
			g = n;
			if (rc)
				break;
		}
		if (n == g) {
			f = table_family(t, (const char *)x.fam, x.famlen);
			cs.versions = f ? f->versions : 1;
			cs.fam_deletes = 0;
			cs.has_col = 0;
		}
		if (x.seq <= snapshot && (!o || !o->columns ||
		    read_wants_family(o, (const char *)x.fam, x.famlen)) &&
		    !row_same_as_last(out, n, k, kl, &x)) {
			v = iter_value(it, &vl);
			rc = row_gather(out, &n, it, k, kl, &x, v, vl,
				    !keys_only);
			/* count the column's versions (struct colskip) */
			if (!rc && (!cs.has_col ||
				    col_cmp(out, cs.col, k, kl))) {
				cs.col = n - 1;
				cs.has_col = 1;
				cs.puts = 0;
				cs.deletes = cs.fam_deletes;
			}
			if (x.type == KT_DELETE_FAMILY)
				cs.fam_deletes = cs.deletes = 1;
			else if (x.type != KT_PUT)
				cs.deletes = 1;
			else if (!cs.puts || x.ts != cs.last_ts) {
				cs.puts++;
				cs.last_ts = x.ts;
			}
			if (!cs.deletes && cs.puts >= cs.versions &&
			    !(o && o->raw)) {
				cs.skipping = 1;
				cs.skipped = 0;
				/* the Get's last column has all the cells
				 * it can show: no need to step on (into the
				 * next block, maybe, a 10 MiB one) */
				if (last && column_vs(&x, last) == 0)
					break;
			}
		}
		iter_next(it);
	}
	if (rc == CF_OK)
		rc = iter_status(it);
	if (rc == CF_OK)
		rc = emit_family(f, out, o, snapshot, g, n - g, 1);
	if (rc == CF_OK)
		row_finish(out);
	return rc;
}

/* --- Get -------------------------------------------------------------- */

/*
 * A Get of named columns (every requested column has a qualifier, all in
 * one family) reads its sources newest first and stops when the store
 * files left cannot change the answer (docs/engine.md, "Reading a
 * row").  A file f cannot change it when
 *   - every cell already read has a higher seq than any cell of f (each
 *     source read so far has min_seq > f's max_seq), so nothing in f
 *     was written after them: its deletes cannot mask them and its puts
 *     cannot overwrite them; and
 *   - every requested column already shows max_versions cells, all with
 *     a ts >= f's max_ts: f's puts cannot crowd them out (that needs a
 *     higher ts) and sort after them, so they cannot be shown.
 * A whole-row or whole-family Get reads every candidate file: an older
 * file may hold other columns.
 */
struct gsrc {
	struct memstore *mem;	/* or a store file: */
	struct sfile *f;
	size_t looked;		/* files of the store looked at (bloom or
				   read) up to this one */
};

/* The family when o asks for named columns of one family, else NULL. */
static const char *column_get_family(const struct cf_read_opts *o,
				     size_t *famlen)
{
	if (!o || !o->columns || !o->ncolumns)
		return NULL;
	for (size_t i = 0; i < o->ncolumns; i++) {
		const struct cf_column *c = &o->columns[i];
		if (!c->qual ||
		    (i > 0 && bytes_cmp(c->fam, c->famlen, o->columns[0].fam,
					o->columns[0].famlen) != 0))
			return NULL;
	}
	*famlen = o->columns[0].famlen;
	return o->columns[0].fam;
}

/* May the sources after the first k be left out (struct gsrc)? */
static int rest_unneeded(const struct cf_read_opts *o, const cf_row *out,
			 const struct gsrc *src, size_t k, size_t n)
{
	int maxv = o->max_versions > 0 ? o->max_versions : 1;
	uint64_t min_seq = UINT64_MAX;
	int64_t min_ts = INT64_MAX;

	for (size_t i = 0; i < o->ncolumns; i++) {
		const struct cf_column *c = &o->columns[i];
		int shown = 0;
		for (size_t j = 0; j < out->n; j++) {
			const struct cf_cell *x = &out->cells[j];
			if (bytes_cmp(x->fam, x->famlen, c->fam, c->famlen) ||
			    bytes_cmp(x->qual, x->qlen, c->qual, c->qlen))
				continue;
			shown++;
			if (x->ts < min_ts)
				min_ts = x->ts;
		}
		if (shown < maxv)
			return 0;
	}
	for (size_t i = 0; i < k; i++) {
		uint64_t s;
		if (src[i].mem) {
			if (memstore_count(src[i].mem) == 0)
				continue;
			s = memstore_min_seq(src[i].mem);
		} else {
			s = sst_get_meta(src[i].f->sst)->min_seq;
		}
		if (s < min_seq)
			min_seq = s;
	}
	for (size_t i = k; i < n; i++) {
		const struct sst_meta *m;
		if (!src[i].f->sst)
			return 0;	/* unreadable: the read must fail */
		m = sst_get_meta(src[i].f->sst);
		if (m->max_seq >= min_seq || m->max_ts > min_ts)
			return 0;
	}
	return 1;
}

/* Reads row from the first k sources into out. */
static int read_sources(struct cf_table *t, const struct gsrc *src,
			size_t k, const unsigned char *key, size_t kl,
			const void *row, size_t rowlen,
			const struct cf_read_opts *o, uint64_t snap,
			const struct cf_column *last, cf_row *out)
{
	struct iter *stack[32], **kids = stack, *it;
	size_t n = 0;
	int rc;

	row_reset(out);
	rc = row_set_key(out, row, rowlen);
	if (rc)
		return rc;
	if (k > 32 && !(kids = malloc(k * sizeof *kids)))
		return CF_ENOMEM;
	for (size_t i = 0; i < k; i++) {
		/* an empty memstore holds nothing this read may see: an
		 * entry with seq <= the snapshot was counted before the
		 * snapshot was published */
		if (src[i].mem && (memstore_count(src[i].mem) == 0 ||
				   !memstore_may_have_row(src[i].mem, row,
							  rowlen)))
			continue;
		kids[n] = src[i].mem ? memstore_iter(src[i].mem)
				     : sfile_iter(src[i].f, 1);
		if (!kids[n]) {
			while (n--)
				iter_destroy(kids[n]);
			if (kids != stack)
				free(kids);
			return CF_ENOMEM;
		}
		n++;
	}
	/* no source (a missing row with an empty memstore): nothing to read;
	 * one source: no merge */
	it = n <= 1 ? (n ? kids[0] : NULL) : iter_merge(kids, n);
	if (kids != stack)
		free(kids);
	if (!n)
		return CF_OK;
	if (!it)
		return CF_ENOMEM;
	iter_seek(it, key, kl);
	if (iter_valid(it)) {
		size_t m, rl;
		const unsigned char *ik = iter_key(it, &m);
		const unsigned char *rk = ikey_row(ik, &rl);
		if (bytes_cmp(rk, rl, row, rowlen) == 0)
			rc = read_row(t->db, t, it, o, snap, last, out);
	}
	if (rc == CF_OK)
		rc = iter_status(it);
	iter_destroy(it);
	return rc;
}

/* A Get of named columns of family fam (see struct gsrc). */
static int get_columns(struct cf_table *t, struct view *v, const char *fam,
		       size_t famlen, const unsigned char *key, size_t kl,
		       const void *row, size_t rowlen,
		       const struct cf_read_opts *o, uint64_t snap,
		       cf_row *out)
{
	struct gsrc stack[32], *src = stack;
	struct fstore *st = NULL;
	const struct cf_column *last = &o->columns[0];
	size_t n = 0, cap = 1 + v->nimm, k, looked = 0, consulted;
	int rc;

	/* the greatest column asked for (all of family fam) */
	for (size_t i = 1; i < o->ncolumns; i++)
		if (bytes_cmp(o->columns[i].qual, o->columns[i].qlen,
			      last->qual, last->qlen) > 0)
			last = &o->columns[i];
	for (size_t s = 0; s < v->nstores; s++)
		if (bytes_cmp(v->stores[s].fam, strlen(v->stores[s].fam), fam,
			      famlen) == 0)
			st = &v->stores[s];
	if (st)
		cap += st->n;
	if (cap > 32 && !(src = malloc(cap * sizeof *src)))
		return CF_ENOMEM;
	src[n].mem = v->mem;
	src[n].looked = 0;
	src[n++].f = NULL;
	for (size_t i = 0; i < v->nimm; i++) {
		src[n].mem = v->imm[i];
		src[n].looked = 0;
		src[n++].f = NULL;
	}
	for (size_t i = 0; st && i < st->n; i++) {
		int fm = sfile_may_match(t->db, st->files[i], o, row, rowlen);
		if (fm == FM_SKIP)
			continue;
		looked++;	/* its bloom filter, at least */
		if (fm == FM_BLOOM_NO)
			continue;
		src[n].mem = NULL;
		src[n].looked = looked;
		src[n++].f = st->files[i];
	}
	/* the memstores, then one more file at a time while the rest may
	 * matter; after two files, everything at once */
	k = 1 + v->nimm;
	for (;;) {
		rc = read_sources(t, src, k, key, kl, row, rowlen, o, snap,
				  last, out);
		if (rc || k == n || rest_unneeded(o, out, src, k, n))
			break;
		k = k < 2 + v->nimm ? k + 1 : n;
	}
	/* the files looked at by a Get going from the newest file to the
	 * oldest until one answers: up to the last one read when the row
	 * was found (none when the memstores answered), else all */
	if (out->n)
		consulted = k > 1 + v->nimm ? src[k - 1].looked : 0;
	else
		consulted = looked;
	if (rc == CF_OK && consulted >= 2)
		store_note_multi_read(t->db, st);
	if (src != stack)
		free(src);
	return rc;
}

/* Reads row into out from t's region holding it. */
static int get_row(struct cf_table *t, const void *row, size_t rowlen,
		   const struct cf_read_opts *o, cf_row *out)
{
	struct cf_db *db = t->db;
	unsigned char stack[512], *key = stack;
	struct region *r;
	struct view *v;
	struct iter *it = NULL;
	const char *fam;
	uint64_t snap;
	size_t kl, famlen = 0;
	int rc;

	if (rowlen == 0 || rowlen > CF_ROW_MAX)
		return rowlen ? CF_ETOOBIG : CF_EINVAL;
	pthread_rwlock_rdlock(&t->lock);
	r = table_region_for(t, row, rowlen);
	v = region_view(r);
	pthread_rwlock_unlock(&t->lock);
	snap = atomic_load(&db->last_seq);

	if (rowlen + KEY_OVERHEAD > sizeof stack &&
	    !(key = malloc(rowlen + KEY_OVERHEAD))) {
		rc = CF_ENOMEM;
		goto out;
	}
	kl = row_start_key(key, row, rowlen);
	if ((fam = column_get_family(o, &famlen))) {
		rc = get_columns(t, v, fam, famlen, key, kl, row, rowlen, o,
				 snap, out);
		goto out;
	}
	it = view_iter(db, r, v, o, row, rowlen, 1);
	if (!it) {
		rc = CF_ENOMEM;
		goto out;
	}
	iter_seek(it, key, kl);
	row_reset(out);
	rc = row_set_key(out, row, rowlen);
	if (rc == CF_OK && iter_valid(it)) {
		size_t n, rl;
		const unsigned char *k = iter_key(it, &n);
		const unsigned char *rk = ikey_row(k, &rl);
		if (bytes_cmp(rk, rl, row, rowlen) == 0)
			rc = read_row(db, t, it, o, snap, NULL, out);
	}
	if (rc == CF_OK)
		rc = iter_status(it);
out:
	if (key != stack)
		free(key);
	iter_destroy(it);
	view_unref(v);
	return rc;
}

int cf_table_get(cf_table *t, const void *row, size_t rowlen,
		 const struct cf_read_opts *o, cf_row **out)
{
	cf_row *r;
	int rc;

	*out = NULL;
	if (atomic_load(&t->dropped))
		return CF_ECLOSED;
	if (!(r = row_new()))
		return CF_ENOMEM;
	rc = get_row(t, row, rowlen, o, r);
	if (rc) {
		cf_row_free(r);
		atomic_fetch_add(&t->st.errors, 1);
		atomic_fetch_add(&t->db->st.errors, 1);
		return rc;
	}
	atomic_fetch_add(&t->st.gets, 1);
	atomic_fetch_add(&t->db->st.gets, 1);
	for (size_t i = 0; i < r->n; i++) {
		atomic_fetch_add(&t->st.bytes_read, r->cells[i].vlen);
		atomic_fetch_add(&t->db->st.bytes_read, r->cells[i].vlen);
	}
	*out = r;
	return CF_OK;
}

int table_get_latest(struct cf_table *t, const void *row, size_t rowlen,
		     const char *fam, size_t famlen, const void *qual,
		     size_t qlen, struct buf *out, int64_t *ts)
{
	struct cf_column col = { fam, famlen, qual ? qual : "", qlen };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	cf_row *r = row_new();
	int rc;

	if (!r)
		return CF_ENOMEM;
	o.columns = &col;
	o.ncolumns = 1;
	rc = get_row(t, row, rowlen, &o, r);
	if (rc == CF_OK && r->n == 0)
		rc = CF_ENOTFOUND;
	if (rc == CF_OK) {
		buf_reset(out);
		rc = buf_append(out, r->cells[0].val, r->cells[0].vlen);
		*ts = r->cells[0].ts;
	}
	cf_row_free(r);
	return rc;
}

/* Appends a cell to r, its bytes copied into r's scratch. */
int row_push(cf_row *r, const char *fam, size_t famlen,
		    const unsigned char *qual, size_t qlen, int64_t ts,
		    const unsigned char *val, size_t vlen, int with_val)
{
	struct cellref *ref;
	int rc;

	if ((rc = row_room(r)))
		return rc;
	rc = buf_reserve(&r->scratch, famlen + qlen + (with_val ? vlen : 0));
	if (rc)
		return rc;
	ref = &r->refs[r->n];
	ref->fam = r->scratch.len;
	ref->famlen = famlen;
	memcpy(r->scratch.p + r->scratch.len, fam, famlen);
	r->scratch.len += famlen;
	ref->qual = r->scratch.len;
	ref->qlen = qlen;
	if (qlen)
		memcpy(r->scratch.p + r->scratch.len, qual, qlen);
	r->scratch.len += qlen;
	ref->has_val = with_val;
	ref->vp = NULL;
	ref->val = r->scratch.len;
	if (with_val && vlen)
		memcpy(r->scratch.p + r->scratch.len, val, vlen);
	if (with_val)
		r->scratch.len += vlen;
	ref->vlen = vlen;
	ref->ts = ts;
	ref->kind = 0;
	r->nref = ++r->n;
	return CF_OK;
}

int row_emit_family(const struct cf_family *f, cf_row *out,
		    const struct cf_read_opts *o, uint64_t snapshot,
		    size_t n)
{
	int rc = emit_family(f, out, o, snapshot, 0, n, 1);

	if (rc == CF_OK)
		row_finish(out);
	return rc;
}
