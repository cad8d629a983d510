/*
 * majorrow.c: a major compaction's work on one row of one family
 * (engine/majorrow.h): classify it (visible.c) and write what survives,
 * whole in the window or streamed column by column.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/majorrow.h"
#include "engine/sst.h"
#include "engine/iter.h"
#include "util/coding.h"

int group_add(struct group *g, const unsigned char *k, size_t kl,
	      const unsigned char *v, size_t vl)
{
	int rc;

	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		size_t *n = realloc(g->offs, cap * sizeof *n);
		if (!n)
			return CF_ENOMEM;
		g->offs = n;
		g->cap = cap;
	}
	g->offs[g->n++] = g->data.len;
	rc = buf_put_varint(&g->data, kl);
	if (!rc)
		rc = buf_append(&g->data, k, kl);
	if (!rc)
		rc = buf_put_varint(&g->data, vl);
	if (!rc)
		rc = buf_append(&g->data, v, vl);
	return rc;
}

/* Room for want cells in g->cells and, with keep, want bytes in
 * g->keep (KEEP_DELETED_CELLS). */
static int group_room(struct group *g, size_t want, int keep)
{
	if (want > g->ccap) {
		struct rcell *c = realloc(g->cells, want * sizeof *c);
		if (!c)
			return CF_ENOMEM;
		g->cells = c;
		g->ccap = want;
	}
	if (keep && want > g->kcap) {
		unsigned char *k = realloc(g->keep, want);
		if (!k)
			return CF_ENOMEM;
		g->keep = k;
		g->kcap = want;
	}
	return CF_OK;
}

/* Classifies the gathered group and writes what survives. */
int group_flush(struct group *g, const struct cf_family *f, uint64_t snap,
		int64_t now, struct sst_builder *b)
{
	struct vis_ctx vc = { f, snap, now, INT64_MAX, 1 };
	int rc = CF_OK, fam_markers = 0, kdc = 0;

	if (!g->n)
		return CF_OK;
	if (group_room(g, g->n, f->keep_deleted))
		return CF_ENOMEM;
	for (size_t i = 0; i < g->n; i++) {
		const unsigned char *p = g->data.p + g->offs[i];
		uint64_t kl = 0, vl = 0;
		size_t u = dec_varint(p, p + 10, &kl);
		ikey_decode(p + u, kl, &g->cells[i].k);
		p += u + kl;
		u = dec_varint(p, p + 10, &vl);
		g->cells[i].val = p + u;
		g->cells[i].vlen = vl;
	}
	vis_classify(&vc, g->cells, g->n);
	/*
	 * KEEP_DELETED_CELLS: only what some read of some time range can
	 * still need (visible.c, vis_kdc_row); every cell past its bound or
	 * when its check fails (keeping the masked puts and markers but
	 * dropping the dead puts, as compactions once did, is not safe: a
	 * put dead in every evaluation may be the only record that a kept
	 * one was crowded out in one).
	 */
	if (f->keep_deleted &&
	    !(kdc = vis_kdc_row(&vc, &g->kdc, g->cells, g->n, g->keep))) {
		memset(g->keep, 1, g->n);
		kdc = 1;
	}
	/*
	 * Rule 4 (docs/engine.md): in a family with a TTL and MIN_VERSIONS,
	 * a put dies once its TTL passes if at some moment MIN_VERSIONS
	 * newer puts were alive, even if those are masked or dead now.  A
	 * put that is live only until its TTL passes (rcell.expiring) needs
	 * that evidence after this compaction: dropped, a later read could
	 * not tell and would show the put again.  So its column is written
	 * whole, with the group's DeleteFamily markers (they cover every
	 * column), exactly as reads saw it; a major compaction after the
	 * TTL passed drops the put, and the rest unless another put of the
	 * column still needs them.
	 */
	for (size_t i = 0, j; i < g->n; i = j) {
		int whole = 0;
		for (j = i; j < g->n &&
			    bytes_cmp(g->cells[j].k.qual, g->cells[j].k.qlen,
				      g->cells[i].k.qual,
				      g->cells[i].k.qlen) == 0; j++)
			whole |= g->cells[j].expiring;
		for (size_t x = i; whole && x < j; x++)
			g->cells[x].expiring = 1;
		fam_markers |= whole;
	}
	for (size_t i = 0; i < g->n && rc == CF_OK; i++) {
		struct rcell *c = &g->cells[i];
		int keep = kdc ? g->keep[i] :
			   c->state == VIS_LIVE || c->expiring ||
			   (fam_markers && c->k.type == KT_DELETE_FAMILY);
		if (!keep)
			continue;
		{
			const unsigned char *p = g->data.p + g->offs[i];
			uint64_t kl = 0;
			size_t u = dec_varint(p, p + 10, &kl);
			rc = sst_builder_add(b, p + u, kl, c->val, c->vlen);
		}
	}
	g->n = 0;
	buf_reset(&g->data);
	return rc;
}

void group_release(struct group *g)
{
	buf_release(&g->data);
	free(g->offs);
	free(g->cells);
	free(g->keep);
	vis_kdc_release(&g->kdc);
}

/* --- a row larger than the window, streamed -------------------------- */

void cstream_release(struct cstream *s)
{
	group_release(&s->g);
	vis_family_release(&s->vf);
	vis_scratch_release(&s->vs);
	buf_release(&s->row);
	buf_release(&s->col);
	buf_release(&s->last);
	free(s->dfm);
}

/* The iterator's cell (identical keys are one cell: those after the
 * one taken are skipped): 1, and k, kl, v, vl, x set; 0 at the end of
 * the row or of the input; an error as -rc. */
static int cs_cell(struct cstream *s, const unsigned char **k, size_t *kl,
		   const unsigned char **v, size_t *vl, struct ikey *x)
{
	if (s->err)
		return -s->err;
	for (; iter_valid(s->it); iter_next(s->it)) {
		*k = iter_key(s->it, kl);
		if (ikey_decode(*k, *kl, x))
			return -CF_ECORRUPT;
		if (bytes_cmp(x->row, x->rowlen, s->row.p, s->row.len))
			return 0;
		if (s->last.len == *kl && !memcmp(s->last.p, *k, *kl))
			continue;
		*v = iter_value(s->it, vl);
		return 1;
	}
	return iter_status(s->it) ? -iter_status(s->it) : 0;
}

/* Takes the iterator's cell (cs_cell gave it) and moves on. */
static void cs_advance(struct cstream *s)
{
	size_t kl;
	const unsigned char *k = iter_key(s->it, &kl);

	buf_reset(&s->last);
	if (buf_append(&s->last, k, kl))
		s->err = CF_ENOMEM;
	iter_next(s->it);
}

static int vcells_reserve(struct vis_scratch *vs, size_t want)
{
	size_t cap = vs->vcap ? vs->vcap : 64;
	struct vcell *n;

	if (want <= vs->vcap)
		return CF_OK;
	while (cap < want)
		cap *= 2;
	if (!(n = realloc(vs->v, cap * sizeof *n)))
		return CF_ENOMEM;
	vs->v = n;
	vs->vcap = cap;
	return CF_OK;
}

static int cs_seek(struct cstream *s, const unsigned char *k, size_t kl)
{
	buf_reset(&s->last);
	iter_seek(s->it, k, kl);
	return CF_OK;
}

static int cs_seek_row(struct cstream *s)
{
	unsigned char stack[512], *p = stack;
	size_t n = s->row.len + KEY_OVERHEAD;

	if (n > sizeof stack && !(p = malloc(n)))
		return CF_ENOMEM;
	cs_seek(s, p, row_start_key(p, s->row.p, s->row.len));
	if (p != stack)
		free(p);
	return CF_OK;
}

/* Is x in the column whose first key is s->col? */
static int cs_same_col(const struct cstream *s, const unsigned char *k,
		       size_t kl)
{
	return ikey_cmp_column(s->col.p, s->col.len, k, kl) == 0;
}

/* Does cell x (of state st, expiring/whole ex) survive? (group_flush) */
static int cs_keep(const struct cstream *s, int type, int st, int ex)
{
	/* KEEP_DELETED_CELLS (but in cs_column_kdc): every cell, as
	 * group_flush keeps a row past vis_kdc_row's bound */
	if (s->f->keep_deleted)
		return 1;
	if (type == KT_DELETE_FAMILY)
		return ex || s->fam_whole;
	return st == VIS_LIVE || ex;
}

/* Classifies the column's m cells in s->vs.v (vis_column): 1 if one of
 * them makes the column be kept whole (rule 4). */
static int cs_classify(struct cstream *s, size_t m)
{
	int whole = 0;

	vis_column(&s->vc, &s->vf, &s->vs, s->vs.v, m);
	for (size_t i = 0; i < m; i++)
		whole |= s->vs.v[i].expiring;
	return whole;
}

/* KEEP_DELETED_CELLS: the column gathered whole in s->g, decided with
 * the row's DeleteFamily markers (s->dfm, all kept) by vis_kdc_row;
 * every cell past its bound. */
static int cs_column_kdc(struct cstream *s)
{
	struct group *g = &s->g;
	size_t n = s->ndfm, j = s->ndfm;
	int all, rc = CF_OK;

	if (group_room(g, s->ndfm + g->n, 1))
		return CF_ENOMEM;
	memset(g->cells, 0, s->ndfm * sizeof *g->cells);
	for (size_t i = 0; i < s->ndfm; i++) {
		g->cells[i].k.type = KT_DELETE_FAMILY;
		g->cells[i].k.ts = s->dfm[i].ts;
		g->cells[i].k.seq = s->dfm[i].seq;
	}
	for (size_t i = 0; i < g->n; i++) {
		const unsigned char *p = g->data.p + g->offs[i];
		uint64_t kl = 0;
		size_t u = dec_varint(p, p + 10, &kl);
		ikey_decode(p + u, kl, &g->cells[n].k);
		n += g->cells[n].k.type != KT_DELETE_FAMILY;
	}
	all = !vis_kdc_row(&s->vc, &g->kdc, g->cells, n, g->keep);
	for (size_t i = 0; i < g->n && rc == CF_OK; i++) {
		const unsigned char *p = g->data.p + g->offs[i];
		uint64_t kl = 0, vl = 0;
		size_t u = dec_varint(p, p + 10, &kl);
		const unsigned char *k = p + u;
		struct ikey x;
		ikey_decode(k, kl, &x);
		p = k + kl;
		u = dec_varint(p, p + 10, &vl);
		if (x.type == KT_DELETE_FAMILY || all || g->keep[j++])
			rc = sst_builder_add(s->b, k, kl, p + u, vl);
	}
	return rc;
}

/* The column gathered whole in s->g. */
static int cs_column_window(struct cstream *s, int emit)
{
	size_t m = 0, j = 0;
	int whole, rc = CF_OK;

	if (s->f->keep_deleted && emit)
		return cs_column_kdc(s);
	if ((rc = vcells_reserve(&s->vs, s->g.n)))
		return rc;
	for (size_t i = 0; i < s->g.n; i++) {
		const unsigned char *p = s->g.data.p + s->g.offs[i];
		uint64_t kl = 0;
		size_t u = dec_varint(p, p + 10, &kl);
		struct ikey x;
		ikey_decode(p + u, kl, &x);
		if (x.type == KT_DELETE_FAMILY)
			continue;
		s->vs.v[m].ts = x.ts;
		s->vs.v[m].seq = x.seq;
		s->vs.v[m++].type = (unsigned char)x.type;
	}
	whole = cs_classify(s, m);
	if (!emit) {
		s->fam_whole |= whole;
		return CF_OK;
	}
	for (size_t i = 0; i < s->g.n && rc == CF_OK; i++) {
		const unsigned char *p = s->g.data.p + s->g.offs[i];
		uint64_t kl = 0, vl = 0;
		size_t u = dec_varint(p, p + 10, &kl);
		const unsigned char *k = p + u;
		struct ikey x;
		int keep;
		ikey_decode(k, kl, &x);
		p = k + kl;
		u = dec_varint(p, p + 10, &vl);
		if (x.type == KT_DELETE_FAMILY) {
			keep = cs_keep(s, x.type, VIS_MARKER, whole);
		} else {
			keep = cs_keep(s, x.type, s->vs.v[j].state, whole);
			j++;
		}
		if (keep)
			rc = sst_builder_add(s->b, k, kl, p + u, vl);
	}
	return rc;
}

/*
 * The column of s->col classified whole in memory (about 100 bytes a
 * cell, never its values): when vis_stream needs more than its cap.
 * Its timestamps and sequence numbers are read from its first cell and
 * classified (vis_column); without emit, s->fam_whole is found; with,
 * the column is read again and the cells from the from-th on (counting
 * every cell of the column) that survive are written.  Leaves the
 * iterator after the column.
 */
static int cs_column_whole(struct cstream *s, int emit, size_t from)
{
	const unsigned char *k, *v;
	size_t kl, vl, m = 0, j = 0, idx = 0;
	struct ikey x;
	int r, whole, rc;

	if ((rc = cs_seek(s, s->col.p, s->col.len)))
		return rc;
	for (; (r = cs_cell(s, &k, &kl, &v, &vl, &x)) == 1 &&
	       cs_same_col(s, k, kl); cs_advance(s)) {
		if (x.type == KT_DELETE_FAMILY)
			continue;
		if ((rc = vcells_reserve(&s->vs, m + 1)))
			return rc;
		s->vs.v[m].ts = x.ts;
		s->vs.v[m].seq = x.seq;
		s->vs.v[m++].type = (unsigned char)x.type;
	}
	if (r < 0)
		return -r;
	whole = cs_classify(s, m);
	if (!emit) {
		s->fam_whole |= whole;
		return CF_OK;
	}
	if ((rc = cs_seek(s, s->col.p, s->col.len)))
		return rc;
	for (; rc == CF_OK && (r = cs_cell(s, &k, &kl, &v, &vl, &x)) == 1 &&
	       cs_same_col(s, k, kl); cs_advance(s), idx++) {
		int keep;
		if (x.type == KT_DELETE_FAMILY) {
			keep = cs_keep(s, x.type, VIS_MARKER, whole);
		} else {
			if (j >= m)
				return CF_ECORRUPT;	/* the input changed */
			keep = cs_keep(s, x.type, s->vs.v[j].state, whole);
			j++;
		}
		if (keep && idx >= from)
			rc = sst_builder_add(s->b, k, kl, v, vl);
	}
	return rc ? rc : r < 0 ? -r : CF_OK;
}

/* The entries of a column's vis_stream: the window's cells (and 8) */
static size_t cs_stream_cap(const struct cstream *s)
{
	return s->wcells + 8;
}

/*
 * A column larger than the window, its first cells in s->g and the
 * iterator on the first that did not fit: leaves the iterator after
 * the column.  All puts in a family without DeleteFamily markers: put
 * by put (vis_puts_next, nothing held).  Otherwise vis_stream, in
 * cs_stream_cap entries: a summary pass, then (when a put may be
 * expiring: rule 4) a pass that finds whether the column is kept
 * whole, then one that writes what survives as it classifies.  A column
 * vis_stream cannot hold goes to cs_column_whole, from the cell it
 * stopped at.
 */
static int cs_column_big(struct cstream *s, int emit)
{
	const unsigned char *k, *v;
	size_t kl, vl, idx = 0;
	struct ikey x;
	struct vis_stream st;
	int r, simple = s->vf.n == 0, whole = 0, rc = CF_OK, over = 0;

	/* all puts the snapshot sees? */
	for (size_t i = 0; i < s->g.n && simple; i++) {
		const unsigned char *p = s->g.data.p + s->g.offs[i];
		uint64_t l = 0;
		size_t u = dec_varint(p, p + 10, &l);
		ikey_decode(p + u, l, &x);
		simple = x.type == KT_PUT && x.seq <= s->vc.snapshot;
	}
	s->g.n = 0;
	buf_reset(&s->g.data);
	if (simple) {
		for (; (r = cs_cell(s, &k, &kl, &v, &vl, &x)) == 1 &&
		       cs_same_col(s, k, kl); cs_advance(s))
			if (x.type != KT_PUT || x.seq > s->vc.snapshot) {
				simple = 0;
				break;
			}
		if (r < 0)
			return -r;
	}
	if ((rc = cs_seek(s, s->col.p, s->col.len)))
		return rc;
	if (simple) {
		struct vis_puts ps = { 0 };
		for (; (r = cs_cell(s, &k, &kl, &v, &vl, &x)) == 1 &&
		       cs_same_col(s, k, kl) && rc == CF_OK; cs_advance(s))
			if (vis_puts_next(&s->vc, &ps, x.ts) == VIS_LIVE &&
			    emit)
				rc = sst_builder_add(s->b, k, kl, v, vl);
		return rc ? rc : r < 0 ? -r : CF_OK;
	}
	if (vis_stream_init(&st, &s->vc, &s->vf, cs_stream_cap(s),
			    !s->f->keep_deleted))
		return CF_ENOMEM;
	/* pass 0: the summary */
	for (; (r = cs_cell(s, &k, &kl, &v, &vl, &x)) == 1 &&
	       cs_same_col(s, k, kl); cs_advance(s))
		if (x.type != KT_DELETE_FAMILY)
			vis_stream_sum(&st, x.ts, x.seq, x.type);
	if (r < 0) {
		rc = -r;
		goto out;
	}
	vis_stream_sum_done(&st);
	/* may a put be expiring (rule 4: the column is kept whole)? */
	if (s->f->ttl != CF_TTL_FOREVER && s->f->min_versions > 0 &&
	    st.nd > 0) {
		if ((rc = cs_seek(s, s->col.p, s->col.len)))
			goto out;
		vis_stream_rewind(&st);
		for (; !over && (r = cs_cell(s, &k, &kl, &v, &vl, &x)) == 1 &&
		       cs_same_col(s, k, kl); cs_advance(s)) {
			struct vcell c = { x.ts, x.seq, (unsigned char)x.type,
					   0, 0 };
			if (x.type == KT_DELETE_FAMILY)
				continue;
			if (vis_stream_next(&st, &c))
				over = 1;
			whole |= c.expiring;
		}
		if (r < 0) {
			rc = -r;
			goto out;
		}
		if (over) {
			vis_stream_release(&st);
			return cs_column_whole(s, emit, 0);
		}
	}
	if (!emit) {
		/* the iterator is after the column (the last pass) */
		s->fam_whole |= whole;
		goto out;
	}
	if ((rc = cs_seek(s, s->col.p, s->col.len)))
		goto out;
	vis_stream_rewind(&st);
	for (; rc == CF_OK && (r = cs_cell(s, &k, &kl, &v, &vl, &x)) == 1 &&
	       cs_same_col(s, k, kl); cs_advance(s), idx++) {
		struct vcell c = { x.ts, x.seq, (unsigned char)x.type, 0, 0 };
		int keep;
		if (x.type == KT_DELETE_FAMILY) {
			keep = cs_keep(s, x.type, VIS_MARKER, whole);
		} else if (whole) {
			keep = 1;	/* every cell of the column */
		} else if (vis_stream_next(&st, &c)) {
			vis_stream_release(&st);
			return cs_column_whole(s, emit, idx);
		} else {
			keep = cs_keep(s, x.type, c.state, 0);
		}
		if (keep)
			rc = sst_builder_add(s->b, k, kl, v, vl);
	}
	if (!rc && r < 0)
		rc = -r;
out:
	vis_stream_release(&st);
	return rc;
}

/* One pass over the columns of the row, from its start: with emit, the
 * cells that survive go to s->b; without, s->fam_whole is found.  The
 * iterator is left after the row. */
static int cs_pass(struct cstream *s, int emit)
{
	const unsigned char *k, *v;
	size_t kl, vl;
	struct ikey x;
	int r, rc;

	if ((rc = cs_seek_row(s)))
		return rc;
	r = cs_cell(s, &k, &kl, &v, &vl, &x);
	while (r == 1 && rc == CF_OK) {
		int over = 0;
		buf_reset(&s->col);
		if ((rc = buf_append(&s->col, k, kl)))
			break;
		s->g.n = 0;
		buf_reset(&s->g.data);
		while (r == 1 && cs_same_col(s, k, kl)) {
			if (s->g.n >= s->wcells ||
			    s->g.data.len >= WINDOW_BYTES) {
				over = 1;
				break;
			}
			if ((rc = group_add(&s->g, k, kl, v, vl)))
				return rc;
			cs_advance(s);
			r = cs_cell(s, &k, &kl, &v, &vl, &x);
		}
		if (r < 0)
			break;
		rc = over ? cs_column_big(s, emit) : cs_column_window(s, emit);
		if (rc == CF_OK && over)
			r = cs_cell(s, &k, &kl, &v, &vl, &x);
	}
	s->g.n = 0;
	buf_reset(&s->g.data);
	return rc ? rc : r < 0 ? -r : CF_OK;
}

/* Compacts the row of key k0 (its first cell), larger than the window;
 * leaves the iterator on the first cell after it. */
int cs_row(struct cstream *s, const unsigned char *k0, size_t kl0)
{
	const unsigned char *k, *v, *row;
	size_t kl, vl, rl;
	struct ikey x;
	int r, rc;

	row = ikey_row(k0, &rl);
	buf_reset(&s->row);
	if ((rc = buf_append(&s->row, row, rl)))
		return rc;
	/* the DeleteFamily markers, first in the row */
	s->vf.n = 0;
	s->vf.idx.n = 0;
	s->ndfm = 0;
	if ((rc = cs_seek_row(s)))
		return rc;
	for (; (r = cs_cell(s, &k, &kl, &v, &vl, &x)) == 1 && x.qlen == 0;
	     cs_advance(s)) {
		if (x.type != KT_DELETE_FAMILY)
			continue;
		vis_family_add(&s->vc, &s->vf, x.ts, x.seq);
		if (s->f->keep_deleted && s->ndfm == s->dfmcap) {
			size_t cap = s->dfmcap ? 2 * s->dfmcap : 16;
			struct vis_mark *d = realloc(s->dfm, cap * sizeof *d);
			if (!d)
				return CF_ENOMEM;
			s->dfm = d;
			s->dfmcap = cap;
		}
		if (s->f->keep_deleted) {
			s->dfm[s->ndfm].ts = x.ts;
			s->dfm[s->ndfm++].seq = x.seq;
		}
	}
	if (r < 0)
		return -r;
	vis_family_done(&s->vf);
	s->fam_whole = 0;
	if (s->f->ttl != CF_TTL_FOREVER && s->f->min_versions > 0 &&
	    s->vf.n && !s->f->keep_deleted && (rc = cs_pass(s, 0)))
		return rc;
	return cs_pass(s, 1);
}
