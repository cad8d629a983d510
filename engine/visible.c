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
 */
#include <stdint.h>
#include <stdlib.h>

#include "engine/internal.h"

#define NEVER UINT64_MAX

/* Does delete d cover put p (ignoring sequence)? */
static int covers(const struct ikey *d, const struct ikey *p)
{
	switch (d->type) {
	case KT_DELETE:
		return d->ts == p->ts;
	case KT_DELETE_COLUMN:
	case KT_DELETE_FAMILY:
		return d->ts >= p->ts;
	}
	return 0;
}

static int ignored(const struct vis_ctx *c, const struct ikey *d)
{
	/* KEEP_DELETED_CELLS: a read whose time range ends at or before
	 * a delete's timestamp does not see that delete (HBase). */
	return c->f && c->f->keep_deleted && c->read_max_ts != INT64_MAX &&
	       d->ts >= c->read_max_ts;
}

/*
 * The first moment >= from at which at least need puts of ps[0..n) with a
 * ts above ts were alive, or NEVER.  ps are in ts-descending order and
 * death[] is known for them.
 */
static uint64_t first_crowded(struct rcell **ps, const uint64_t *death,
			      size_t n, int64_t ts, uint64_t from,
			      uint64_t snap, int need)
{
	uint64_t best = NEVER;

	if (need <= 0)
		return from;
	/* Candidate moments: from, and each later birth of a put above. */
	for (size_t c = 0; c <= n; c++) {
		uint64_t t;
		int alive = 0;

		if (c == n)
			t = from;
		else if (ps[c]->k.ts > ts && ps[c]->k.seq > from &&
			 ps[c]->k.seq <= snap)
			t = ps[c]->k.seq;
		else
			continue;
		if (t >= best)
			continue;
		for (size_t i = 0; i < n && ps[i]->k.ts > ts; i++)
			if (ps[i]->k.seq <= t && death[i] > t)
				alive++;
		if (alive >= need)
			best = t;
	}
	return best;
}

static void classify_column(const struct vis_ctx *c, struct rcell *cells,
			    size_t n, struct rcell **fdel, size_t nfdel,
			    struct rcell **ps, uint64_t *death,
			    struct rcell **dels)
{
	size_t np = 0, nd = 0;
	int versions = c->f ? c->f->versions : 1;
	int minv = c->f ? c->f->min_versions : 0;
	int64_t ttl = c->f ? c->f->ttl : CF_TTL_FOREVER;

	for (size_t i = 0; i < n; i++) {
		struct rcell *x = &cells[i];
		if (x->k.seq > c->snapshot)
			x->state = VIS_FUTURE;
		else if (x->k.type == KT_PUT)
			ps[np++] = x;
		else {
			x->state = VIS_MARKER;
			if (!ignored(c, &x->k))
				dels[nd++] = x;
		}
	}
	for (size_t i = 0; i < nfdel; i++)
		if (!ignored(c, &fdel[i]->k))
			dels[nd++] = fdel[i];

	for (size_t i = 0; i < np; i++) {
		struct ikey *p = &ps[i]->k;
		uint64_t mask = NEVER, over = NEVER, crowd;
		size_t above = 0, distinct = 0;

		for (size_t j = 0; j < nd; j++)
			if (dels[j]->k.seq > p->seq && covers(&dels[j]->k, p) &&
			    dels[j]->k.seq < mask)
				mask = dels[j]->k.seq;
		/* same ts, newer write: ps is ts desc, seq desc */
		for (size_t j = i; j-- > 0 && ps[j]->k.ts == p->ts;)
			if (ps[j]->k.seq > p->seq && ps[j]->k.seq < over)
				over = ps[j]->k.seq;
		while (above < i && ps[above]->k.ts > p->ts)
			above++;
		if (nd == 0) {
			/* No deletes: the newest versions never die, so
			 * p is crowded out iff VERSIONS newer timestamps
			 * exist. */
			for (size_t j = 0; j < above; j++)
				if (j == 0 || ps[j]->k.ts != ps[j - 1]->k.ts)
					distinct++;
			crowd = distinct >= (size_t)versions ? p->seq : NEVER;
		} else {
			crowd = first_crowded(ps, death, above, p->ts, p->seq,
					      c->snapshot, versions);
		}
		death[i] = mask < over ? mask : over;
		if (crowd < death[i])
			death[i] = crowd;
		if (death[i] <= c->snapshot) {
			ps[i]->state = death[i] == mask ? VIS_MASKED : VIS_DEAD;
			continue;
		}
		ps[i]->state = VIS_LIVE;
		if (ttl == CF_TTL_FOREVER)
			continue;
		if (c->now_ms - p->ts > ttl * 1000) {
			if (minv == 0 ||
			    first_crowded(ps, death, above, p->ts, p->seq,
					  c->snapshot, minv) != NEVER)
				ps[i]->state = VIS_DEAD;
		} else if (c->expiring && minv > 0 && nd > 0 &&
			   first_crowded(ps, death, above, p->ts, p->seq,
					 c->snapshot, minv) != NEVER) {
			/* (with no deletes, the newer puts that crowded p
			 * once, or those that crowded them out, are all
			 * still live, so they stay the evidence) */
			ps[i]->expiring = 1;
		}
	}
}

/*
 * The usual case: every cell a put the snapshot sees, and no TTL.
 * Nothing can mask a put then, so (as classify_column finds with no
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

void vis_classify(const struct vis_ctx *c, struct rcell *cells, size_t n)
{
	struct rcell **fdel = NULL, **ps = NULL, **dels = NULL;
	struct rcell *stack_p[64], *stack_d[64], *stack_f[16];
	uint64_t *death = NULL, stack_death[64];
	size_t nfdel = 0, i, j;

	if (c->expiring)
		for (i = 0; i < n; i++)
			cells[i].expiring = 0;
	if (classify_puts(c, cells, n))
		return;

	/* DeleteFamily markers first: they cover every column. */
	for (i = 0; i < n; i++)
		if (cells[i].k.type == KT_DELETE_FAMILY)
			nfdel++;
	fdel = nfdel <= 16 ? stack_f : malloc(nfdel * sizeof *fdel);
	ps = n <= 64 ? stack_p : malloc(n * sizeof *ps);
	dels = n + nfdel <= 64 ? stack_d : malloc((n + nfdel) * sizeof *dels);
	death = n <= 64 ? stack_death : malloc(n * sizeof *death);
	if (!fdel || !ps || !dels || !death)
		abort();	/* out of memory on the read path */
	nfdel = 0;
	for (i = 0; i < n; i++) {
		if (cells[i].k.type != KT_DELETE_FAMILY)
			continue;
		if (cells[i].k.seq > c->snapshot) {
			cells[i].state = VIS_FUTURE;
			continue;
		}
		cells[i].state = VIS_MARKER;
		fdel[nfdel++] = &cells[i];
	}
	for (i = 0; i < n; i = j) {
		size_t m = 0;
		struct rcell *col;

		for (j = i; j < n && bytes_cmp(cells[j].k.qual, cells[j].k.qlen,
					       cells[i].k.qual,
					       cells[i].k.qlen) == 0; j++)
			;
		/* the column's cells without family markers, in order */
		col = &cells[i];
		for (size_t x = i; x < j; x++)
			if (cells[x].k.type != KT_DELETE_FAMILY)
				m++;
		if (m == j - i) {
			classify_column(c, col, m, fdel, nfdel, ps, death,
					dels);
		} else {
			/* rare: family markers share the empty qualifier */
			struct rcell *tmp = malloc(m * sizeof *tmp);
			size_t k = 0;
			if (!tmp && m)
				abort();
			for (size_t x = i; x < j; x++)
				if (cells[x].k.type != KT_DELETE_FAMILY)
					tmp[k++] = cells[x];
			classify_column(c, tmp, m, fdel, nfdel, ps, death,
					dels);
			k = 0;
			for (size_t x = i; x < j; x++)
				if (cells[x].k.type != KT_DELETE_FAMILY) {
					cells[x].state = tmp[k].state;
					if (c->expiring)
						cells[x].expiring =
							tmp[k].expiring;
					k++;
				}
			free(tmp);
		}
	}
	if (fdel != stack_f)
		free(fdel);
	if (ps != stack_p)
		free(ps);
	if (dels != stack_d)
		free(dels);
	if (death != stack_death)
		free(death);
}
