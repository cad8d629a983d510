/*
 * visible.c: which cells of a row a read returns (docs/engine.md,
 * "Versions and deletes").
 *
 * Every put p gets a death sequence number: the first moment (in the
 * sequence of writes) at which it stopped being visible, or "never".
 * A put dies when
 *   - a delete written after it (higher seq) covers it: Delete of its
 *     exact ts, DeleteColumn or DeleteFamily with ts >= its ts (MASKED);
 *   - a put of the same column and the same ts is written after it
 *     (that is the same version, rewritten) (DEAD);
 *   - at some moment VERSIONS puts with a higher ts were alive (DEAD);
 *   - its TTL has passed and at some moment MIN_VERSIONS puts with a
 *     higher ts were alive (DEAD).  With vis_ctx.expiring, a put that
 *     is live only because its TTL has not passed yet but whose column
 *     already holds that evidence is flagged rcell.expiring: the
 *     evidence may be masked or dead puts, which compaction must keep
 *     until the put is gone (compact.c).
 * Once dead, always dead: a later delete of the newer versions does not
 * bring an older one back.  Because death depends only on what was
 * written, never on what is still stored, major compaction can drop
 * dead and masked cells (and the markers) without changing any read.
 *
 * Reads see only cells with seq <= their snapshot; moments are seqs.
 *
 * Cost: a column of n cells in a family with m DeleteFamily markers is
 * classified in O(n log n + n log m) time and O(n + m) words: puts are
 * taken in key order (timestamp descending, then newest write first),
 * so every delete that may cover a put and every put of a higher
 * timestamp sort before it.  Deletes are found through an index of
 * their sequence numbers (the first one above a put's whose timestamp
 * is at least the put's: a segment tree of the greatest timestamp); the
 * puts alive at each moment above a timestamp are counted in a segment
 * tree over the column's put sequence numbers (a put's life [birth,
 * death) adds one over its moments once every put of its timestamp is
 * classified), so "the first moment VERSIONS newer puts were alive" is
 * one descent of that tree.  Counting at the births only is enough: the
 * count rises only at births.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"

#define NEVER UINT64_MAX
#define NONE SIZE_MAX

/* Has the TTL of a cell of timestamp ts passed? */
static int expired(const struct vis_ctx *c, int64_t ts)
{
	int64_t ttl = c->f ? c->f->ttl : CF_TTL_FOREVER;
	return ttl != CF_TTL_FOREVER && c->now_ms - ts > ttl * 1000;
}

/* With KEEP_DELETED_CELLS, may a read not see a marker of timestamp
 * ts?  With TRUE always, with TTL only while the marker's own TTL has
 * not passed. */
static int kdc_ignorable(const struct vis_ctx *c, int64_t ts)
{
	return c->f->keep_deleted != CF_KDC_TTL || !expired(c, ts);
}

/* Is a marker of timestamp ts one this read does not see?  Only with
 * KEEP_DELETED_CELLS: a read whose time range ends at or before a
 * delete's timestamp does not see that delete (HBase's time travel). */
static int ignored_ts(const struct vis_ctx *c, int64_t ts)
{
	return c->f && c->f->keep_deleted && c->read_max_ts != INT64_MAX &&
	       ts >= c->read_max_ts && kdc_ignorable(c, ts);
}

static void *grow(void *p, size_t *cap, size_t want, size_t size)
{
	size_t cap2;
	void *n;

	if (want <= *cap)
		return p;
	cap2 = *cap ? *cap : 64;
	while (cap2 < want)
		cap2 *= 2;
	n = realloc(p, cap2 * size);
	if (!n)
		abort();	/* out of memory on the read path */
	*cap = cap2;
	return n;
}

/* --- an index of delete markers: the first seq above s with ts >= t -- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_mpair(const void *a, const void *b)
{
	const struct vis_mark *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorts m->p[0..m->n) by seq and builds the tree of greatest ts. */
static void midx_build(struct vis_midx *m)
{
	size_t P = 1;

	if (m->n)
		qsort(m->p, m->n, sizeof *m->p, cmp_mpair);
	while (P < m->n)
		P *= 2;
	m->P = P;
	m->mx = grow(m->mx, &m->mxcap, 2 * P, sizeof *m->mx);
	for (size_t i = 0; i < P; i++)
		m->mx[P + i] = i < m->n ? m->p[i].ts : INT64_MIN;
	for (size_t i = P; i-- > 1;)
		m->mx[i] = m->mx[2 * i] > m->mx[2 * i + 1] ? m->mx[2 * i]
							   : m->mx[2 * i + 1];
}

/* The smallest seq above `after` of a marker with ts >= tsmin, or
 * NEVER. */
static uint64_t midx_first(const struct vis_midx *m, uint64_t after,
			   int64_t tsmin)
{
	size_t lo = 0, hi = m->n, i;

	while (lo < hi) {	/* the first seq > after */
		size_t mid = lo + (hi - lo) / 2;
		if (m->p[mid].seq > after)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo >= m->n)
		return NEVER;
	i = lo + m->P;
	for (;;) {
		if (m->mx[i] >= tsmin) {
			while (i < m->P) {
				i *= 2;
				if (m->mx[i] < tsmin)
					i++;
			}
			return m->p[i - m->P].seq;
		}
		while (i & 1)
			i >>= 1;	/* a right child: up */
		if (!i)
			return NEVER;
		i++;
	}
}

static void midx_release(struct vis_midx *m)
{
	free(m->p);
	free(m->mx);
	memset(m, 0, sizeof *m);
}

/* --- the count of puts alive at each moment (lazy segment tree) ------- */

struct ctree {
	size_t P;
	int *mx, *lz;	/* mx: greatest value below, with lz */
};

/* +1 over leaves [l, r) */
static void ct_add(struct ctree *t, size_t node, size_t nl, size_t nr,
		   size_t l, size_t r)
{
	size_t mid;
	int a, b;

	if (r <= nl || nr <= l)
		return;
	if (l <= nl && nr <= r) {
		t->mx[node]++;
		t->lz[node]++;
		return;
	}
	mid = nl + (nr - nl) / 2;
	ct_add(t, 2 * node, nl, mid, l, r);
	ct_add(t, 2 * node + 1, mid, nr, l, r);
	a = t->mx[2 * node];
	b = t->mx[2 * node + 1];
	t->mx[node] = (a > b ? a : b) + t->lz[node];
}

/* The first leaf >= lo whose value is >= need, or NONE; acc: the sum of
 * the lz of node's ancestors. */
static size_t ct_first(const struct ctree *t, size_t node, size_t nl,
		       size_t nr, size_t lo, int need, int acc)
{
	size_t mid, r;

	if (nr <= lo || t->mx[node] + acc < need)
		return NONE;
	if (nr - nl == 1)
		return nl;
	acc += t->lz[node];
	mid = nl + (nr - nl) / 2;
	r = ct_first(t, 2 * node, nl, mid, lo, need, acc);
	if (r == NONE)
		r = ct_first(t, 2 * node + 1, mid, nr, lo, need, acc);
	return r;
}

/* --- one column -------------------------------------------------------- */

static size_t lower_bound(const uint64_t *a, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first moment >= coords[from] at which need puts above were alive,
 * or NEVER. */
static uint64_t crowded(const struct vis_scratch *s, const struct ctree *t,
			size_t ncoord, size_t from, int need)
{
	size_t i;

	if (need <= 0)
		return s->coords[from];
	i = ct_first(t, 1, 0, t->P, from, need, 0);
	return i == NONE || i >= ncoord ? NEVER : s->coords[i];
}

void vis_column(const struct vis_ctx *c, const struct vis_family *vf,
		struct vis_scratch *s, struct vcell *cells, size_t n)
{
	int versions = c->f ? c->f->versions : 1;
	int minv = c->f ? c->f->min_versions : 0;
	int64_t ttl = c->f ? c->f->ttl : CF_TTL_FOREVER;
	size_t np = 0, nd = vf ? vf->n : 0, ncoord = 0, nstack = 0;
	size_t grp = 0, distinct = 0, P = 1;
	struct ctree t;
	int64_t stack_ts = 0;
	uint64_t over = NEVER;

	s->col.n = 0;
	for (size_t i = 0; i < n; i++) {
		struct vcell *x = &cells[i];
		x->expiring = 0;
		if (x->seq > c->snapshot) {
			x->state = VIS_FUTURE;
		} else if (x->type == KT_PUT) {
			s->coords = grow(s->coords, &s->ccap, np + 1,
					 sizeof *s->coords);
			s->coords[np++] = x->seq;
		} else {
			x->state = VIS_MARKER;
			if (ignored_ts(c, x->ts))
				continue;
			nd++;
			if (x->type == KT_DELETE)
				continue;
			/* a DeleteColumn (or a DeleteFamily given here) */
			s->col.p = grow(s->col.p, &s->col.cap, s->col.n + 1,
					sizeof *s->col.p);
			s->col.p[s->col.n].seq = x->seq;
			s->col.p[s->col.n++].ts = x->ts;
		}
	}
	if (!np)
		return;
	midx_build(&s->col);
	qsort(s->coords, np, sizeof *s->coords, cmp_u64);
	for (size_t i = 0; i < np; i++)
		if (!ncoord || s->coords[ncoord - 1] != s->coords[i])
			s->coords[ncoord++] = s->coords[i];
	while (P < ncoord)
		P *= 2;
	s->tree = grow(s->tree, &s->tcap, 4 * P, sizeof *s->tree);
	memset(s->tree, 0, 4 * P * sizeof *s->tree);
	t.P = P;
	t.mx = s->tree;
	t.lz = s->tree + 2 * P;
	s->put = grow(s->put, &s->pcap, np, sizeof *s->put);
	s->death = grow(s->death, &s->dcap, np, sizeof *s->death);
	s->stack = grow(s->stack, &s->scap, n, sizeof *s->stack);

	np = 0;
	for (size_t i = 0; i < n; i++) {
		struct vcell *x = &cells[i];
		uint64_t mask = NEVER, crowd, d;
		size_t from;

		if (x->seq > c->snapshot)
			continue;
		if (x->type != KT_PUT) {
			if (x->type != KT_DELETE || ignored_ts(c, x->ts))
				continue;
			if (!nstack || stack_ts != x->ts) {
				nstack = 0;
				stack_ts = x->ts;
			}
			s->stack[nstack++] = x->seq;
			continue;
		}
		if (np > grp && cells[s->put[grp]].ts != x->ts) {
			/* a new timestamp: the puts of the last one are
			 * above every later put now */
			for (size_t k = grp; k < np; k++) {
				size_t l = lower_bound(s->coords, ncoord,
						       cells[s->put[k]].seq);
				size_t r = s->death[k] == NEVER ? ncoord :
					lower_bound(s->coords, ncoord,
						    s->death[k]);
				if (l < r)
					ct_add(&t, 1, 0, P, l, r);
			}
			grp = np;
			distinct++;
			over = NEVER;
		} else if (np > grp &&
			   cells[s->put[np - 1]].seq > x->seq) {
			over = cells[s->put[np - 1]].seq;
		}
		s->put[np] = i;
		/* the Deletes of this timestamp written after x */
		if (nstack && stack_ts == x->ts) {
			/* (one of the same seq may be there, which does
			 * not cover x but covers the puts after it) */
			size_t top;
			while (nstack && s->stack[nstack - 1] < x->seq)
				nstack--;
			top = nstack;
			if (top && s->stack[top - 1] == x->seq)
				top--;
			if (top)
				mask = s->stack[top - 1];
		}
		d = midx_first(&s->col, x->seq, x->ts);
		if (d < mask)
			mask = d;
		if (vf) {
			d = midx_first(&vf->idx, x->seq, x->ts);
			if (d < mask)
				mask = d;
		}
		from = lower_bound(s->coords, ncoord, x->seq);
		if (nd == 0)
			/* No deletes: the newest versions never die, so
			 * x is crowded out iff VERSIONS newer timestamps
			 * exist. */
			crowd = distinct >= (size_t)versions ? x->seq : NEVER;
		else
			crowd = crowded(s, &t, ncoord, from, versions);
		d = mask < over ? mask : over;
		if (crowd < d)
			d = crowd;
		s->death[np++] = d;
		if (d <= c->snapshot) {
			x->state = d == mask ? VIS_MASKED : VIS_DEAD;
			continue;
		}
		x->state = VIS_LIVE;
		if (ttl == CF_TTL_FOREVER)
			continue;
		if (c->now_ms - x->ts > ttl * 1000) {
			if (minv == 0 ||
			    crowded(s, &t, ncoord, from, minv) != NEVER)
				x->state = VIS_DEAD;
		} else if (c->expiring && minv > 0 &&
			   (nd > 0 || c->expiring == 2) &&
			   crowded(s, &t, ncoord, from, minv) != NEVER) {
			/* (with no deletes, the newer puts that crowded x
			 * once, or those that crowded them out, are all
			 * still live, so they stay the evidence; the
			 * check of vis_kdc_row asks anyway) */
			x->expiring = 1;
		}
	}
}

void vis_family_add(const struct vis_ctx *c, struct vis_family *vf,
		    int64_t ts, uint64_t seq)
{
	if (seq > c->snapshot || ignored_ts(c, ts))
		return;
	vf->idx.p = grow(vf->idx.p, &vf->idx.cap, vf->idx.n + 1,
			 sizeof *vf->idx.p);
	vf->idx.p[vf->idx.n].seq = seq;
	vf->idx.p[vf->idx.n++].ts = ts;
	vf->n++;
}

void vis_family_done(struct vis_family *vf)
{
	midx_build(&vf->idx);
}

void vis_family_release(struct vis_family *vf)
{
	midx_release(&vf->idx);
	vf->n = 0;
}

void vis_scratch_release(struct vis_scratch *s)
{
	midx_release(&s->col);
	free(s->coords);
	free(s->tree);
	free(s->put);
	free(s->death);
	free(s->stack);
	free(s->v);
	memset(s, 0, sizeof *s);
}

int vis_puts_next(const struct vis_ctx *c, struct vis_puts *st, int64_t ts)
{
	int versions = c->f ? c->f->versions : 1;
	int minv = c->f ? c->f->min_versions : 0;
	int64_t ttl = c->f ? c->f->ttl : CF_TTL_FOREVER;

	if (st->any && ts == st->ts)
		return VIS_DEAD;	/* its version, rewritten */
	if (st->any)
		st->distinct++;
	st->any = 1;
	st->ts = ts;
	if (st->distinct >= (size_t)(versions > 0 ? versions : 0))
		return VIS_DEAD;	/* VERSIONS newer timestamps */
	/* with no deletes, the newest put of each of the first VERSIONS
	 * timestamps lives for ever and no more than one a timestamp is
	 * alive at once: MIN_VERSIONS newer puts were alive at some moment
	 * iff MIN_VERSIONS <= VERSIONS newer timestamps exist */
	if (ttl != CF_TTL_FOREVER && c->now_ms - ts > ttl * 1000 &&
	    (minv == 0 || (minv <= versions && st->distinct >= (size_t)minv)))
		return VIS_DEAD;
	return VIS_LIVE;
}

/*
 * The usual case: every cell a put the snapshot sees, and no TTL.
 * Nothing can mask a put then, so (as vis_column finds with no
 * deletes) a put is dead iff a newer write rewrote its version (an
 * earlier cell of its column with the same ts: a column runs ts
 * descending, then seq descending) or its column has VERSIONS distinct
 * newer timestamps.  One pass, no per-column arrays.  0 when the cells
 * are not of that shape (nothing set then).
 */
static int classify_puts(const struct vis_ctx *c, struct rcell *cells,
			 size_t n)
{
	int versions = c->f ? c->f->versions : 1;
	size_t distinct = 0;

	if ((c->f && c->f->ttl != CF_TTL_FOREVER) || versions < 1)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (cells[i].k.type != KT_PUT || cells[i].k.seq > c->snapshot)
			return 0;
	for (size_t i = 0; i < n; i++) {
		struct rcell *x = &cells[i], *prev = i ? x - 1 : NULL;
		if (!prev || bytes_cmp(x->k.qual, x->k.qlen, prev->k.qual,
				       prev->k.qlen) != 0) {
			x->state = VIS_LIVE;	/* the column's newest */
			distinct = 1;
		} else if (x->k.ts == prev->k.ts) {
			x->state = VIS_DEAD;	/* its version, rewritten */
		} else {
			x->state = distinct >= (size_t)versions ? VIS_DEAD
								: VIS_LIVE;
			distinct++;
		}
	}
	return 1;
}

static void vis_classify_with(const struct vis_ctx *c, struct vis_family *vf,
			      struct vis_scratch *s, struct rcell *cells,
			      size_t n);

/*
 * Each thread keeps its scratch arrays from one vis_classify to the
 * next (a read classifies every family of every row it reads), unless
 * they grew past SCRATCH_KEEP cells: then they go, so a huge column
 * leaves nothing behind.
 */
#define SCRATCH_KEEP 4096

struct vis_tls {
	struct vis_family vf;
	struct vis_scratch s;
};

static pthread_key_t vis_key;
static pthread_once_t vis_once = PTHREAD_ONCE_INIT;
static int vis_key_ok;

static void vis_tls_free(void *p)
{
	struct vis_tls *t = p;

	vis_family_release(&t->vf);
	vis_scratch_release(&t->s);
	free(t);
}

static void vis_key_init(void)
{
	vis_key_ok = pthread_key_create(&vis_key, vis_tls_free) == 0;
}

void vis_classify(const struct vis_ctx *c, struct rcell *cells, size_t n)
{
	struct vis_tls local, *tls = NULL;
	size_t i;

	if (c->expiring)
		for (i = 0; i < n; i++)
			cells[i].expiring = 0;
	if (classify_puts(c, cells, n))
		return;
	pthread_once(&vis_once, vis_key_init);
	if (vis_key_ok && !(tls = pthread_getspecific(vis_key)) &&
	    (tls = calloc(1, sizeof *tls)) &&
	    pthread_setspecific(vis_key, tls)) {
		free(tls);
		tls = NULL;
	}
	if (!tls) {
		memset(&local, 0, sizeof local);
		tls = &local;
	}
	vis_classify_with(c, &tls->vf, &tls->s, cells, n);
	if (tls == &local || tls->s.vcap > SCRATCH_KEEP ||
	    tls->s.ccap > SCRATCH_KEEP || tls->s.scap > SCRATCH_KEEP ||
	    tls->vf.idx.cap > SCRATCH_KEEP) {
		vis_family_release(&tls->vf);
		vis_scratch_release(&tls->s);
	}
}

static void vis_classify_with(const struct vis_ctx *c, struct vis_family *vf,
			      struct vis_scratch *s, struct rcell *cells,
			      size_t n)
{
	size_t i, j;

	vf->n = 0;
	vf->idx.n = 0;
	/* DeleteFamily markers first: they cover every column. */
	for (i = 0; i < n; i++) {
		if (cells[i].k.type != KT_DELETE_FAMILY)
			continue;
		cells[i].state = cells[i].k.seq > c->snapshot ? VIS_FUTURE
							      : VIS_MARKER;
		vis_family_add(c, vf, cells[i].k.ts, cells[i].k.seq);
	}
	vis_family_done(vf);
	for (i = 0; i < n; i = j) {
		size_t m = 0;

		for (j = i; j < n && bytes_cmp(cells[j].k.qual, cells[j].k.qlen,
					       cells[i].k.qual,
					       cells[i].k.qlen) == 0; j++)
			;
		/* the column's cells without family markers (they share
		 * the empty qualifier), in order */
		s->v = grow(s->v, &s->vcap, j - i, sizeof *s->v);
		for (size_t x = i; x < j; x++)
			if (cells[x].k.type != KT_DELETE_FAMILY) {
				s->v[m].ts = cells[x].k.ts;
				s->v[m].seq = cells[x].k.seq;
				s->v[m++].type = (unsigned char)cells[x].k.type;
			}
		vis_column(c, vf, s, s->v, m);
		m = 0;
		for (size_t x = i; x < j; x++)
			if (cells[x].k.type != KT_DELETE_FAMILY) {
				cells[x].state = s->v[m].state;
				if (c->expiring)
					cells[x].expiring = s->v[m].expiring;
				m++;
			}
	}
}

/* --- one column streamed in key order, in bounded memory ------------- */

/*
 * vis_stream gives every cell of a column, in key order, the state
 * vis_column gives it, holding only what later cells can still need
 * (internal.h: the passes; docs/engine.md, "Major compaction").
 *
 * What a put needs from the cells before it (every delete that may
 * cover it and every put of a higher timestamp sorts before it):
 *   - the Deletes of its own timestamp written after it: the last two
 *     seen (they come newest first, and one of the put's own sequence
 *     number does not cover it);
 *   - the DeleteColumns seen (all of a higher or equal timestamp): the
 *     first sequence number above the put's (dc[], sorted);
 *   - the put before it of its timestamp (the same version rewritten);
 *   - C(m), the number of puts of higher timestamps alive at moment m,
 *     as a step function (x[], v[]: C is v[i] from x[i] on, 0 before
 *     x[0]) that only counts up to vc, the most any query asks: VERSIONS
 *     (rule 3) or MIN_VERSIONS (rule 4), so a moment where vc were alive
 *     is "saturated" and stays so.  A put's life [birth, death) adds one
 *     over its moments once every put of its timestamp is classified
 *     (pend[]), as the segment tree of vis_column does.
 * A put born at s asks only about moments >= s, up to the first
 * saturated one.  So with A and B the least and the greatest birth of
 * the puts still to come (pass 0 keeps them per chunk of cells), C
 * below A and above the first saturated moment >= B can no longer
 * matter and is dropped, and so are the DeleteColumns at or below A and
 * all but the first above B.  For a column written in timestamp order
 * (or its reverse) that leaves a few entries, whatever its length;
 * every array is bounded by cap, and a column that needs more is
 * reported (1), for the caller to classify some other way.
 */

/* Makes room for want (<= max) elements of size in *pp (have of them
 * now), doubling up to max: 0, or -1 without memory. */
static int st_grow(void *pp, size_t *have, size_t want, size_t max,
		   size_t size)
{
	void **p = pp, *n;
	size_t c = *have ? *have : 16;

	if (want <= *have)
		return 0;
	while (c < want)
		c *= 2;
	if (c > max)
		c = max;
	if (!(n = realloc(*p, c * size)))
		return -1;
	*p = n;
	*have = c;
	return 0;
}

int vis_stream_init(struct vis_stream *st, const struct vis_ctx *c,
		    const struct vis_family *vf, size_t cap, int loose)
{
	memset(st, 0, sizeof *st);
	st->c = c;
	st->loose = loose;
	st->vf = vf;
	st->cap = (cap < 8 ? 8 : cap) & ~(size_t)1;
	st->nd = vf ? vf->n : 0;
	st->chunk = 1;
	return 0;
}

void vis_stream_release(struct vis_stream *st)
{
	free(st->x);
	free(st->v);
	free(st->dc);
	free(st->pend);
	free(st->lo);
	free(st->hi);
	free(st->slo);
	free(st->shi);
	free(st->rise);
	free(st->fall);
	memset(st, 0, sizeof *st);
}

void vis_stream_sum(struct vis_stream *st, int64_t ts, uint64_t seq,
		    int type)
{
	const struct vis_ctx *c = st->c;
	size_t k;

	if (st->pos / st->chunk >= st->cap) {
		/* twice the cells a chunk: the summary stays in cap */
		for (size_t i = 0; i < st->cap / 2; i++) {
			uint64_t l0 = st->lo[2 * i], l1 = st->lo[2 * i + 1];
			uint64_t h0 = st->hi[2 * i], h1 = st->hi[2 * i + 1];
			uint64_t r = st->rise[2 * i] > st->rise[2 * i + 1] ?
				     st->rise[2 * i] : st->rise[2 * i + 1];
			uint64_t f = st->fall[2 * i] > st->fall[2 * i + 1] ?
				     st->fall[2 * i] : st->fall[2 * i + 1];
			if (l0 != NEVER && l1 != NEVER) {
				if (h1 > l0 && h1 - l0 > r)
					r = h1 - l0;
				if (h0 > l1 && h0 - l1 > f)
					f = h0 - l1;
			}
			st->lo[i] = l0 < l1 ? l0 : l1;
			st->hi[i] = h0 > h1 ? h0 : h1;
			st->rise[i] = r;
			st->fall[i] = f;
		}
		st->nchunk = st->cap / 2;
		st->chunk *= 2;
	}
	k = st->pos++ / st->chunk;
	if (k >= st->scap) {
		size_t h = st->scap;
		if (st_grow(&st->lo, &h, k + 1, st->cap, sizeof *st->lo) ||
		    (h = st->scap, st_grow(&st->hi, &h, k + 1,
					   st->cap, sizeof *st->hi)) ||
		    (h = st->scap, st_grow(&st->rise, &h, k + 1,
					   st->cap, sizeof *st->rise)) ||
		    (h = st->scap, st_grow(&st->fall, &h, k + 1,
					   st->cap, sizeof *st->fall))) {
			st->nomem = 1;
			st->pos--;
			return;
		}
		st->scap = h;
	}
	while (st->nchunk <= k) {
		st->lo[st->nchunk] = NEVER;
		st->hi[st->nchunk] = 0;
		st->rise[st->nchunk] = 0;
		st->fall[st->nchunk++] = 0;
	}
	if (seq > c->snapshot)
		return;
	if (type != KT_PUT) {
		if (!ignored_ts(c, ts))
			st->nd++;
		return;
	}
	if (!st->sany || ts != st->sts)
		st->ndistinct++;
	/* how far a later put of the chunk rises above an earlier one,
	 * and falls below */
	if (st->lo[k] != NEVER && seq > st->lo[k] && seq - st->lo[k] >
						      st->rise[k])
		st->rise[k] = seq - st->lo[k];
	if (st->lo[k] != NEVER && seq < st->hi[k] && st->hi[k] - seq >
						     st->fall[k])
		st->fall[k] = st->hi[k] - seq;
	st->sany = 1;
	st->sts = ts;
	if (seq < st->lo[k])
		st->lo[k] = seq;
	if (seq > st->hi[k])
		st->hi[k] = seq;
}

void vis_stream_sum_done(struct vis_stream *st)
{
	size_t h = 0;
	const struct cf_family *f = st->c->f;
	int versions = f ? f->versions : 1;
	int minv = f ? f->min_versions : 0;
	int64_t ttl = f ? f->ttl : CF_TTL_FOREVER;

	if (st_grow(&st->slo, &h, st->nchunk + 1, st->nchunk + 1,
		    sizeof *st->slo) ||
	    (h = 0, st_grow(&st->shi, &h, st->nchunk + 1, st->nchunk + 1,
			    sizeof *st->shi))) {
		st->nomem = 1;
		return;
	}
	st->slo[st->nchunk] = NEVER;
	st->shi[st->nchunk] = 0;
	for (size_t i = st->nchunk; i-- > 0;) {
		st->slo[i] = st->lo[i] < st->slo[i + 1] ? st->lo[i] :
							  st->slo[i + 1];
		st->shi[i] = st->hi[i] > st->shi[i + 1] ? st->hi[i] :
							  st->shi[i + 1];
	}
	st->versions = versions;
	st->minv = ttl != CF_TTL_FOREVER && minv > 0 ? minv : 0;
	/* rule 3 is asked of C when the column has deletes (else by
	 * counting timestamps) and more than VERSIONS timestamps (else no
	 * moment can have VERSIONS puts of higher ones alive: one of a
	 * timestamp is alive at a time) */
	st->crowd = versions >= 1 && st->nd > 0 &&
		    st->ndistinct > (size_t)versions;
	/* VERSIONS 1, when only life counts: a put no moment crowded is
	 * one born at or after every life of a higher timestamp ended */
	st->one = st->crowd && versions == 1 && st->loose;
	st->vc = st->one ? 0 : st->crowd ? versions : st->minv;
}

void vis_stream_rewind(struct vis_stream *st)
{
	st->n = st->ndc = st->npend = 0;
	st->satok = 0;
	st->sup = st->gsup = 0;
	st->pos = 0;
	st->gany = st->dany = st->sany = 0;
	st->distinct = 0;
}

/* The index of the last breakpoint <= m, or -1. */
static ptrdiff_t c_at(const struct vis_stream *st, uint64_t m)
{
	size_t lo = 0, hi = st->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->x[mid] <= m)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

/* The first saturated moment (C >= vc), or NEVER (cached). */
static uint64_t c_sat(struct vis_stream *st)
{
	if (!st->satok) {
		st->sat = NEVER;
		for (size_t i = 0; i < st->n; i++)
			if (st->v[i] >= st->vc) {
				st->sat = st->x[i];
				break;
			}
		st->satok = 1;
	}
	return st->sat;
}

/* The first moment >= m at which C >= need (<= vc), or NEVER. */
static uint64_t c_first(struct vis_stream *st, uint64_t m, int need)
{
	ptrdiff_t i;

	if (need >= st->vc) {
		uint64_t f = c_sat(st);
		if (m <= f)
			return f;	/* nothing saturated before f */
	}
	i = c_at(st, m);
	if (i >= 0 && st->v[i] >= need)
		return m;
	for (size_t j = (size_t)(i + 1); j < st->n; j++)
		if (st->v[j] >= need)
			return st->x[j];
	return NEVER;
}

/* A breakpoint at m: its index, or -1 when C would pass cap. */
static ptrdiff_t c_split(struct vis_stream *st, uint64_t m)
{
	ptrdiff_t i = c_at(st, m);

	if (i >= 0 && st->x[i] == m)
		return i;
	if (st->n >= st->cap)
		return -1;
	if (st->n >= st->xcap) {
		size_t h = st->xcap;
		if (st_grow(&st->x, &h, st->n + 1, st->cap, sizeof *st->x) ||
		    st_grow(&st->v, &st->xcap, st->n + 1, st->cap,
			    sizeof *st->v))
			return -1;
	}
	i++;
	memmove(&st->x[i + 1], &st->x[i], (st->n - (size_t)i) * sizeof *st->x);
	memmove(&st->v[i + 1], &st->v[i], (st->n - (size_t)i) * sizeof *st->v);
	st->x[i] = m;
	st->v[i] = i > 0 ? st->v[i - 1] : 0;
	st->n++;
	return i;
}

/* Drops the breakpoints of [lo, hi) that do not change C (those
 * before lo are tidy, and so are those from hi on among themselves). */
static void c_tidy(struct vis_stream *st, size_t lo, size_t hi)
{
	size_t k = lo;

	for (size_t i = lo; i < hi; i++) {
		if (st->v[i] == (k ? st->v[k - 1] : 0))
			continue;
		st->x[k] = st->x[i];
		st->v[k++] = st->v[i];
	}
	memmove(&st->x[k], &st->x[hi], (st->n - hi) * sizeof *st->x);
	memmove(&st->v[k], &st->v[hi], (st->n - hi) * sizeof *st->v);
	st->n -= hi - k;
}

/* C += 1 over [l, r), at most vc: 0, or 1 past cap. */
static int c_add(struct vis_stream *st, uint64_t l, uint64_t r)
{
	ptrdiff_t il, ir;
	int vc = st->vc, found = 0;

	if ((il = c_split(st, l)) < 0)
		return 1;
	if (r == NEVER)
		ir = (ptrdiff_t)st->n;
	else if ((ir = c_split(st, r)) < 0)
		return 1;
	for (ptrdiff_t i = il; i < ir; i++) {
		if (st->v[i] < vc && ++st->v[i] == vc && !found) {
			found = 1;	/* the first newly saturated */
			if (st->satok && st->x[i] < st->sat)
				st->sat = st->x[i];
		}
	}
	c_tidy(st, (size_t)il, (size_t)ir + 1 < st->n ? (size_t)ir + 1 :
						      st->n);
	return 0;
}

/* Forgets what no put still to come can ask about. */
static void st_prune(struct vis_stream *st)
{
	size_t k = st->pos / st->chunk, i, j;
	uint64_t a, b, sat;
	ptrdiff_t at;

	if (k >= st->nchunk) {
		a = NEVER;	/* no put to come */
		b = 0;
	} else {
		/* the rest of chunk k (no more than its rise above the
		 * last put, nor its fall below), then the chunks after */
		uint64_t al = st->lo[k], bh = st->hi[k];
		if (st->sany && st->lpos / st->chunk == k) {
			if (st->lseq - al > st->fall[k])
				al = st->lseq - st->fall[k];
			if (bh - st->lseq > st->rise[k])
				bh = st->lseq + st->rise[k];
		}
		a = al < st->slo[k + 1] ? al : st->slo[k + 1];
		b = bh > st->shi[k + 1] ? bh : st->shi[k + 1];
	}
	if (a == NEVER) {
		st->n = st->ndc = 0;
		st->satok = 0;
		return;
	}
	/* C: below a, and past the first saturated moment >= b */
	at = c_at(st, a);
	if (at > 0) {
		if (st->satok && st->sat < st->x[at])
			st->satok = 0;
		memmove(st->x, st->x + at, (st->n - (size_t)at) * sizeof *st->x);
		memmove(st->v, st->v + at, (st->n - (size_t)at) * sizeof *st->v);
		st->n -= (size_t)at;
	}
	if (st->vc > 0 && (sat = c_first(st, b, st->vc)) != NEVER) {
		at = c_at(st, sat);
		st->n = (size_t)at + 1;	/* v[at] == vc from sat on */
	}
	/* DeleteColumns: above a (and in st->one, above the lives of
	 * higher timestamps: a put born below their end is dead anyway),
	 * and the first above b */
	if (st->one && st->sup > a)
		a = st->sup;
	for (i = 0; i < st->ndc && st->dc[i] <= a; i++)
		;
	for (j = i; j < st->ndc && st->dc[j] <= b; j++)
		;
	if (j < st->ndc)
		j++;
	if (i)
		memmove(st->dc, st->dc + i, (j - i) * sizeof *st->dc);
	st->ndc = j - i;
}

int vis_stream_next(struct vis_stream *st, struct vcell *x)
{
	const struct vis_ctx *c = st->c;
	int64_t ttl = c->f ? c->f->ttl : CF_TTL_FOREVER;
	uint64_t mask = NEVER, over = NEVER, crowd, d;
	size_t i;

	x->expiring = 0;
	if (st->nomem)
		return 1;
	st->pos++;
	if (x->seq > c->snapshot) {
		x->state = VIS_FUTURE;
		return 0;
	}
	if (x->type != KT_PUT) {
		x->state = VIS_MARKER;
		if (ignored_ts(c, x->ts))
			return 0;
		if (x->type == KT_DELETE) {
			if (!st->dany || st->dts != x->ts) {
				st->dany = 1;
				st->dts = x->ts;
				st->d1 = st->d2 = NEVER;
			}
			st->d2 = st->d1;
			st->d1 = x->seq;
			return 0;
		}
		/* a DeleteColumn: into dc[], in order (unless no put to
		 * come can ask for it) */
		if (st->one && x->seq <= st->sup)
			return 0;
		if (st->ndc >= st->cap)
			st_prune(st);
		for (i = st->ndc; i > 0 && st->dc[i - 1] > x->seq; i--)
			;
		if (i < st->ndc && st->dc[i] == x->seq)
			return 0;
		if (st->ndc >= st->cap ||
		    st_grow(&st->dc, &st->dccap, st->ndc + 1, st->cap,
			    sizeof *st->dc))
			return 1;
		memmove(&st->dc[i + 1], &st->dc[i],
			(st->ndc - i) * sizeof *st->dc);
		st->dc[i] = x->seq;
		st->ndc++;
		return 0;
	}
	if (st->gany && st->gts != x->ts) {
		/* a new timestamp: the lives of the last one count now */
		for (i = 0; i < st->npend; i++)
			if (c_add(st, st->pend[i].l, st->pend[i].r))
				return 1;
		st->npend = 0;
		if (st->gsup > st->sup)
			st->sup = st->gsup;
		st->distinct++;
		st->gany = 0;
	}
	if (st->gany)
		over = st->gprev;	/* its version, rewritten */
	st->gany = 1;
	st->gts = x->ts;
	st->gprev = x->seq;
	st->sany = 1;
	st->lpos = st->pos - 1;
	st->lseq = x->seq;
	/* the Deletes of this timestamp written after x (one of its own
	 * seq does not cover x) */
	if (st->dany && st->dts == x->ts)
		mask = st->d1 == x->seq ? st->d2 : st->d1;
	for (i = 0; i < st->ndc && st->dc[i] <= x->seq; i++)
		;
	if (i < st->ndc && st->dc[i] < mask)
		mask = st->dc[i];
	if (st->vf) {
		d = midx_first(&st->vf->idx, x->seq, x->ts);
		if (d < mask)
			mask = d;
	}
	if (st->versions < 1)
		crowd = x->seq;
	else if (st->nd == 0)
		crowd = st->distinct >= (size_t)st->versions ? x->seq : NEVER;
	else if (!st->crowd)
		crowd = NEVER;
	else if (st->one)	/* crowded, when is not known: dead */
		crowd = x->seq < st->sup ? x->seq : NEVER;
	else
		crowd = c_first(st, x->seq, st->versions);
	d = mask < over ? mask : over;
	if (crowd < d)
		d = crowd;
	if (d > x->seq && st->one && d > st->gsup)
		st->gsup = d;
	if (d > x->seq && st->vc > 0) {
		/* (a version rewritten dies as the next is born: one life
		 * then runs on into the next, and they count as one) */
		if (st->npend && st->pend[st->npend - 1].l == d) {
			st->pend[st->npend - 1].l = x->seq;
		} else {
			if (st->npend >= st->cap ||
			    st_grow(&st->pend, &st->pcap, st->npend + 1,
				    st->cap, sizeof *st->pend))
				return 1;
			st->pend[st->npend].l = x->seq;
			st->pend[st->npend++].r = d;
		}
	}
	if (d <= c->snapshot) {
		x->state = d == mask ? VIS_MASKED : VIS_DEAD;
	} else {
		x->state = VIS_LIVE;
		if (ttl != CF_TTL_FOREVER) {
			/* rule 4 asks C only of a put no moment crowded */
			int ev = st->minv > 0 && st->minv <= st->vc &&
				 c_first(st, x->seq, st->minv) != NEVER;
			if (c->now_ms - x->ts > ttl * 1000) {
				if (st->minv == 0 || ev)
					x->state = VIS_DEAD;
			} else if (c->expiring && ev && st->nd > 0) {
				x->expiring = 1;
			}
		}
	}
	st_prune(st);
	return 0;
}

/* --- KEEP_DELETED_CELLS: what a major compaction keeps ----------------- */

/*
 * A read of time range [x, T) at snapshot S returns the puts of
 * timestamp in [x, T) that are live at S in E_T: the history without
 * the markers the read ignores (with KEEP_DELETED_CELLS, those of
 * timestamp >= T; none without a range, T = inf).  Of a column, E_T
 * depends on T only through which of its markers and its row's
 * DeleteFamily markers it ignores.  With t_1 < ... < t_k their distinct
 * timestamps, T in (t_(i-1), t_i] ignores exactly those of timestamp
 * >= t_i, so E_T = E_(t_i); T > t_k ignores none: E_T = E_inf.  The
 * distinct evaluations are therefore E_(t_1) .. E_(t_k) and E_inf, and
 * each is vis_column with read_max_ts t_i (or INT64_MAX): k + 1
 * classifications.  (T = t_i is the largest T of its interval, the one
 * whose reads show the most of the column.)
 *
 * Kept: (a) every put live at S = snapshot in some E_(t_i), whatever
 * its own timestamp: one of timestamp >= t_i is shown by no read of
 * E_(t_i) but still crowds older ones out there (rule 3), so dropping
 * every put no read shows would change reads: VERSIONS 2, put p@10,
 * put q@20, Delete of q@20, put r@30: no read shows q (a range holding
 * 20 ends past 20 and honours the Delete), yet reads of [0, 20) ignore
 * the Delete, count q and r alive and so do not show p; without q they
 * would.  (b) a Delete or DeleteColumn that covers a kept put (written
 * before it, of its timestamp or <= it), a DeleteFamily that covers a
 * kept put of any column of the row.  Everything else goes: a dropped
 * put is live in no evaluation, a dropped marker masks nothing kept.
 *
 * Why no read changes.  Let H be the history, H' what is kept, and
 * suppose every kept put is live at S in H'_(t_i) iff it is in
 * H_(t_i), for every i (checked below).  H' has a subset of H's
 * markers, so its evaluations are constant on the same intervals of
 * T, and for every T the puts live at S in H_T and H'_T are the same
 * (no dropped put is live in any).  A write after S (any snapshot a
 * later read takes is above S: compact.c) kills a put only by
 * covering it (the same puts, present in both), by rewriting its
 * version (the same), or by being one more of the puts of a higher
 * timestamp alive at a moment after S (rule 3: the same puts alive at
 * S, then the same writes); TTL without MIN_VERSIONS kills by the
 * clock alone.  So at every moment after S the same puts are live in
 * H_T and H'_T, and every read returns the same cells.
 *
 * Rule 4 (TTL with MIN_VERSIONS) looks at every moment, before S too:
 * a put whose TTL has not passed dies when it passes iff at some moment
 * MIN_VERSIONS newer puts were alive, and those may be puts dropped
 * here.  So each evaluation also marks such puts (vcell.expiring,
 * asked in every column: vis_ctx.expiring 2), and the check below
 * wants the same marks from what is kept: then a kept put dies by
 * rule 4 in H_T iff it does in H'_T, the moments before S decided
 * alike and those after S the same puts alive.
 *
 * KEEP_DELETED_CELLS=TTL: a read ignores a marker of timestamp >= T
 * only while the marker's TTL has not passed, i.e. its timestamp is at
 * least a cutoff C that only grows with the clock.  Such a read sees
 * exactly what E_max(T, C) of KEEP_DELETED_CELLS=TRUE sees, which is
 * E_t for the least marker timestamp t >= max(T, C): so the
 * evaluations at S are those of the markers of timestamp >= C(S) (and
 * E_inf), the markers below C(S) honoured by all of them, and since C
 * only grows every later read is one of these.  A put masked by an
 * expired marker is dead in all of them and goes, with the marker.
 *
 * The check is needed: a dropped put, dead at S in every evaluation,
 * may have been alive at some moment before S in one, and there have
 * crowded a kept put out; without it that put would come back
 * (tests/test-engine-kdc.c, dead_crowder: a version rewritten later).
 * Such a row, and a row with a column of more than VIS_KDC_MAX_TS
 * marker timestamps (the cost is O(k n log n)), keep every cell
 * (compact.c): keeping every masked put and marker but dropping the
 * dead puts, as compactions did before, fails the same way.
 */

/* Is cells[a] in the column of cells[b]? */
static int same_col(const struct rcell *cells, size_t a, size_t b)
{
	return bytes_cmp(cells[a].k.qual, cells[a].k.qlen, cells[b].k.qual,
			 cells[b].k.qlen) == 0;
}

/* The evaluations of column v[0..m) (key order, no DeleteFamily
 * markers) in a row of DeleteFamily timestamps df[0..ndf) (ascending,
 * those a read may ignore): T[] the distinct timestamps of the markers
 * a read may ignore ascending, then INT64_MAX; their number, or 0 past
 * VIS_KDC_MAX_TS. */
static size_t kdc_tset(const struct vis_ctx *c, const struct vcell *v,
		       size_t m, const int64_t *df, size_t ndf, int64_t *T)
{
	int64_t col[VIS_KDC_MAX_TS];
	size_t nc = 0, n = 0, i = 0, j = 0;

	/* key order is timestamp descending: backwards, ascending */
	for (size_t x = m; x-- > 0;)
		if (v[x].type != KT_PUT && (!nc || col[nc - 1] != v[x].ts) &&
		    kdc_ignorable(c, v[x].ts)) {
			if (nc == VIS_KDC_MAX_TS)
				return 0;
			col[nc++] = v[x].ts;
		}
	while (i < nc || j < ndf) {
		int64_t t = j >= ndf || (i < nc && col[i] < df[j]) ? col[i]
								    : df[j];
		if (i < nc && col[i] == t)
			i++;
		if (j < ndf && df[j] == t)
			j++;
		if (n == VIS_KDC_MAX_TS)
			return 0;
		T[n++] = t;
	}
	T[n++] = INT64_MAX;
	return n;
}

/* Classifies v[0..m) in each evaluation T[0..nT), with the DeleteFamily
 * markers vfs[j] (j: how many of df[0..ndf) are below T): bit t of
 * live[i] set iff put v[i] is live in evaluation t. */
static void kdc_eval(const struct vis_ctx *c, struct vis_kdc *k,
		     const struct vis_family *vfs, const int64_t *df,
		     size_t ndf, struct vcell *v, size_t m, const int64_t *T,
		     size_t nT, uint64_t *live)
{
	memset(live, 0, m * sizeof *live);
	for (size_t t = 0; t < nT; t++) {
		struct vis_ctx e = *c;
		size_t j = 0;
		while (j < ndf && df[j] < T[t])
			j++;
		e.read_max_ts = T[t];
		e.expiring = 2;
		vis_column(&e, &vfs[j], &k->s, v, m);
		for (size_t i = 0; i < m; i++)
			if (v[i].type == KT_PUT && v[i].state == VIS_LIVE)
				live[i] |= (UINT64_C(1) << t) |
					   ((uint64_t)v[i].expiring << (32 + t));
	}
}

#define KDC_LIVE UINT64_C(0xffffffff)

/* The markers of column v[0..m) that cover a kept put (live[i] != 0):
 * keep[ri[i]]. */
static void kdc_markers(const struct vcell *v, const uint64_t *live,
			size_t m, const size_t *ri, unsigned char *keep)
{
	uint64_t suf = NEVER;	/* least seq of a kept put at or below */

	for (size_t h = m, g; h > 0; h = g) {
		uint64_t gmin = NEVER;	/* of this timestamp */
		for (g = h - 1; g > 0 && v[g - 1].ts == v[h - 1].ts; g--)
			;
		for (size_t x = g; x < h; x++)
			if (v[x].type == KT_PUT && (live[x] & KDC_LIVE) &&
			    v[x].seq < gmin)
				gmin = v[x].seq;
		if (gmin < suf)
			suf = gmin;
		for (size_t x = g; x < h; x++)
			if (v[x].type != KT_PUT)
				keep[ri[x]] = (v[x].type == KT_DELETE ? gmin
								      : suf) <
					      v[x].seq;
	}
}

static int cmp_mark_ts(const void *a, const void *b)
{
	const struct vis_mark *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* vfs[0..ndf] from the DeleteFamily markers of cells (those with
 * keep[i], when keep is given): vfs[j] those below df[j] and those no
 * read ignores (all: j = ndf). */
static void kdc_families(const struct vis_ctx *c, struct vis_family *vfs,
			 const int64_t *df, size_t ndf,
			 const struct rcell *cells, size_t n,
			 const unsigned char *keep)
{
	struct vis_ctx all = { NULL, UINT64_MAX, 0, INT64_MAX, 0 };

	for (size_t j = 0; j <= ndf; j++) {
		vfs[j].n = 0;
		vfs[j].idx.n = 0;
		for (size_t i = 0; i < n; i++)
			if (cells[i].k.type == KT_DELETE_FAMILY &&
			    (!keep || keep[i]) &&
			    (j == ndf || cells[i].k.ts < df[j] ||
			     !kdc_ignorable(c, cells[i].k.ts)))
				vis_family_add(&all, &vfs[j], cells[i].k.ts,
					       cells[i].k.seq);
		vis_family_done(&vfs[j]);
	}
}

int vis_kdc_row(const struct vis_ctx *c, struct vis_kdc *k,
		const struct rcell *cells, size_t n, unsigned char *keep)
{
	int64_t df[VIS_KDC_MAX_TS] = { 0 }, T[VIS_KDC_MAX_TS + 1];
	size_t ndf = 0, nv = 0, nkp = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		keep[i] = 0;
		/* (no marker is stored at INT64_MAX, CF_TS_NOW: a read
		 * could never ignore one) */
		if (cells[i].k.seq > c->snapshot ||
		    (cells[i].k.type != KT_PUT && cells[i].k.ts == INT64_MAX))
			return 0;
		if (cells[i].k.type != KT_DELETE_FAMILY ||
		    !kdc_ignorable(c, cells[i].k.ts))
			continue;
		while (j < ndf && df[j] != cells[i].k.ts)
			j++;
		if (j == ndf) {
			if (ndf == VIS_KDC_MAX_TS)
				return 0;
			df[ndf++] = cells[i].k.ts;
		}
	}
	for (size_t i = 1; i < ndf; i++)	/* at most 16 */
		for (size_t j = i; j > 0 && df[j - 1] > df[j]; j--) {
			int64_t x = df[j];
			df[j] = df[j - 1];
			df[j - 1] = x;
		}
	kdc_families(c, k->vf, df, ndf, cells, n, NULL);

	k->v = grow(k->v, &k->vcap, n, sizeof *k->v);
	k->ri = grow(k->ri, &k->ricap, n, sizeof *k->ri);
	k->live = grow(k->live, &k->lcap, n, sizeof *k->live);
	k->kp = grow(k->kp, &k->kpcap, n, sizeof *k->kp);
	for (size_t i = 0; i < n; i++)
		if (cells[i].k.type != KT_DELETE_FAMILY) {
			k->v[nv].ts = cells[i].k.ts;
			k->v[nv].seq = cells[i].k.seq;
			k->v[nv].type = (unsigned char)cells[i].k.type;
			k->ri[nv++] = i;
		}
	/* each column: its evaluations, its puts and markers kept */
	for (size_t a = 0, b; a < nv; a = b) {
		size_t nT;
		for (b = a + 1; b < nv && same_col(cells, k->ri[b], k->ri[a]);
		     b++)
			;
		if (!(nT = kdc_tset(c, k->v + a, b - a, df, ndf, T)))
			return 0;
		kdc_eval(c, k, k->vf, df, ndf, k->v + a, b - a, T, nT,
			 k->live + a);
		for (size_t x = a; x < b; x++)
			if (k->v[x].type == KT_PUT &&
			    (k->live[x] & KDC_LIVE)) {
				keep[k->ri[x]] = 1;
				k->kp[nkp].ts = k->v[x].ts;
				k->kp[nkp++].seq = k->v[x].seq;
			}
		kdc_markers(k->v + a, k->live + a, b - a, k->ri + a, keep);
	}
	/* DeleteFamily markers: kept iff one covers a kept put of any
	 * column, i.e. the least seq of the kept puts of timestamp <= its
	 * own is below its seq */
	if (ndf) {
		qsort(k->kp, nkp, sizeof *k->kp, cmp_mark_ts);
		for (size_t i = 1; i < nkp; i++)
			if (k->kp[i - 1].seq < k->kp[i].seq)
				k->kp[i].seq = k->kp[i - 1].seq;
		for (size_t i = 0; i < n; i++) {
			size_t lo = 0, hi = nkp;
			if (cells[i].k.type != KT_DELETE_FAMILY)
				continue;
			while (lo < hi) {	/* the first ts above */
				size_t mid = lo + (hi - lo) / 2;
				if (k->kp[mid].ts <= cells[i].k.ts)
					lo = mid + 1;
				else
					hi = mid;
			}
			keep[i] = lo > 0 && k->kp[lo - 1].seq < cells[i].k.seq;
		}
	}
	/* the check: what is kept classifies the kept puts as before */
	kdc_families(c, k->vk, df, ndf, cells, n, keep);
	for (size_t a = 0, b; a < nv; a = b) {
		size_t nT, m = 0;
		for (b = a + 1; b < nv && same_col(cells, k->ri[b], k->ri[a]);
		     b++)
			;
		nT = kdc_tset(c, k->v + a, b - a, df, ndf, T);
		k->w = grow(k->w, &k->wcap, b - a, sizeof *k->w);
		k->live2 = grow(k->live2, &k->l2cap, b - a,
				sizeof *k->live2);
		for (size_t x = a; x < b; x++)
			if (keep[k->ri[x]])
				k->w[m++] = k->v[x];
		kdc_eval(c, k, k->vk, df, ndf, k->w, m, T, nT, k->live2);
		m = 0;
		for (size_t x = a; x < b; x++) {
			if (!keep[k->ri[x]])
				continue;
			if (k->v[x].type == KT_PUT && k->live2[m] != k->live[x])
				return 0;
			m++;
		}
	}
	return 1;
}

void vis_kdc_release(struct vis_kdc *k)
{
	vis_scratch_release(&k->s);
	for (size_t j = 0; j <= VIS_KDC_MAX_TS; j++) {
		vis_family_release(&k->vf[j]);
		vis_family_release(&k->vk[j]);
	}
	free(k->v);
	free(k->w);
	free(k->ri);
	free(k->live);
	free(k->live2);
	free(k->kp);
	memset(k, 0, sizeof *k);
}
