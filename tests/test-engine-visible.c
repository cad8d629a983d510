/*
 * test-engine-visible: vis_classify (engine/visible.c, O(n log n)) gives
 * the state of every cell exactly as the quadratic classifier it
 * replaced (kept below as the reference), on random rows of puts,
 * Deletes, DeleteColumns and DeleteFamily markers under random VERSIONS,
 * MIN_VERSIONS, TTL, KEEP_DELETED_CELLS, snapshots and time ranges; and
 * a column of many versions and delete markers is classified in time
 * n log n (the old one took 15 s for 2,000 versions).  CELLFS_SEED
 * replays a run; CELLFS_VIS_N sets the long column's length.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/internal.h"
#include "tests/tap.h"
#include "tests/xorshift.h"

/* --- the reference: visible.c before it became n log n --------------- */

#define OLD_NEVER UINT64_MAX

/* Does delete d cover put p (ignoring sequence)? */
static int old_covers(const struct ikey *d, const struct ikey *p)
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

static int old_ignored(const struct vis_ctx *c, const struct ikey *d)
{
	/* KEEP_DELETED_CELLS: a read whose time range ends at or before
	 * a delete's timestamp does not see that delete (HBase). */
	return c->f && c->f->keep_deleted && c->read_max_ts != INT64_MAX &&
	       d->ts >= c->read_max_ts;
}

/*
 * The first moment >= from at which at least need puts of ps[0..n) with a
 * ts above ts were alive, or OLD_NEVER.  ps are in ts-descending order and
 * death[] is known for them.
 */
static uint64_t old_first_crowded(struct rcell **ps, const uint64_t *death,
			      size_t n, int64_t ts, uint64_t from,
			      uint64_t snap, int need)
{
	uint64_t best = OLD_NEVER;

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

static void old_classify_column(const struct vis_ctx *c, struct rcell *cells,
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
			if (!old_ignored(c, &x->k))
				dels[nd++] = x;
		}
	}
	for (size_t i = 0; i < nfdel; i++)
		if (!old_ignored(c, &fdel[i]->k))
			dels[nd++] = fdel[i];

	for (size_t i = 0; i < np; i++) {
		struct ikey *p = &ps[i]->k;
		uint64_t mask = OLD_NEVER, over = OLD_NEVER, crowd;
		size_t above = 0, distinct = 0;

		for (size_t j = 0; j < nd; j++)
			if (dels[j]->k.seq > p->seq && old_covers(&dels[j]->k, p) &&
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
			crowd = distinct >= (size_t)versions ? p->seq : OLD_NEVER;
		} else {
			crowd = old_first_crowded(ps, death, above, p->ts, p->seq,
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
			    old_first_crowded(ps, death, above, p->ts, p->seq,
					  c->snapshot, minv) != OLD_NEVER)
				ps[i]->state = VIS_DEAD;
		} else if (c->expiring && minv > 0 && nd > 0 &&
			   old_first_crowded(ps, death, above, p->ts, p->seq,
					 c->snapshot, minv) != OLD_NEVER) {
			/* (with no deletes, the newer puts that crowded p
			 * once, or those that crowded them out, are all
			 * still live, so they stay the evidence) */
			ps[i]->expiring = 1;
		}
	}
}

static void old_vis_classify(const struct vis_ctx *c, struct rcell *cells, size_t n)
{
	struct rcell **fdel = NULL, **ps = NULL, **dels = NULL;
	struct rcell *stack_p[64], *stack_d[64], *stack_f[16];
	uint64_t *death = NULL, stack_death[64];
	size_t nfdel = 0, i, j;

	if (c->expiring)
		for (i = 0; i < n; i++)
			cells[i].expiring = 0;

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
			old_classify_column(c, col, m, fdel, nfdel, ps, death,
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
			old_classify_column(c, tmp, m, fdel, nfdel, ps, death,
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

/* --- random rows --------------------------------------------------------- */

static const char *quals[] = { "", "a", "b", "c" };

static int cmp_rcell(const void *pa, const void *pb)
{
	const struct rcell *a = pa, *b = pb;
	int c = bytes_cmp(a->k.qual, a->k.qlen, b->k.qual, b->k.qlen);
	uint64_t sa = a->k.seq << 8 | (uint64_t)a->k.type;
	uint64_t sb = b->k.seq << 8 | (uint64_t)b->k.type;

	if (c)
		return c;
	if (a->k.ts != b->k.ts)
		return a->k.ts > b->k.ts ? -1 : 1;
	return sa > sb ? -1 : sa < sb;
}

/* n random cells of one family into cells (sorted, no two keys equal);
 * returns how many */
static size_t make_row(struct rcell *cells, size_t n, int64_t now,
		       int nquals, int nts, int dels)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		struct rcell *x = &cells[m];
		int r = (int)rnd(100);
		memset(x, 0, sizeof *x);
		x->k.qual = (const unsigned char *)quals[rnd((uint64_t)nquals)];
		x->k.qlen = strlen((const char *)x->k.qual);
		x->k.ts = now - (int64_t)rnd((uint64_t)nts) * 1000;
		x->k.seq = 1 + rnd(3 * n);
		x->k.type = KT_PUT;
		if (r < dels) {
			int k = (int)rnd(3);
			x->k.type = k == 0 ? KT_DELETE : k == 1 ?
				    KT_DELETE_COLUMN : KT_DELETE_FAMILY;
			if (x->k.type == KT_DELETE_FAMILY) {
				x->k.qual = (const unsigned char *)"";
				x->k.qlen = 0;
			}
		}
		m++;
	}
	qsort(cells, m, sizeof *cells, cmp_rcell);
	n = m;
	m = 0;
	for (size_t i = 0; i < n; i++)
		if (!m || cmp_rcell(&cells[m - 1], &cells[i]))
			cells[m++] = cells[i];
	return m;
}

static int random_rounds(int rounds)
{
	static struct rcell a[200], b[200];
	int bad = 0;

	for (int r = 0; r < rounds && !bad; r++) {
		struct cf_family f;
		struct vis_ctx c;
		int64_t now = 1700000000000;
		size_t n;

		memset(&f, 0, sizeof f);
		f.versions = 1 + (int)rnd(4);
		f.min_versions = (int)rnd(3);
		f.ttl = rnd(2) ? CF_TTL_FOREVER : (int64_t)(1 + rnd(8));
		f.keep_deleted = (int)rnd(2);
		n = make_row(a, 1 + rnd(sizeof a / sizeof *a), now,
			     1 + (int)rnd(4), 1 + (int)rnd(12),
			     (int)rnd(60));
		c.f = rnd(10) ? &f : NULL;
		c.snapshot = rnd(4) ? SEQ_MAX : rnd(3 * n + 2);
		c.now_ms = now;
		c.read_max_ts = rnd(3) ? INT64_MAX :
				now - (int64_t)rnd(12) * 1000;
		c.expiring = (int)rnd(2);
		memcpy(b, a, n * sizeof *a);
		vis_classify(&c, a, n);
		old_vis_classify(&c, b, n);
		for (size_t i = 0; i < n && !bad; i++)
			if (a[i].state != b[i].state ||
			    (c.expiring && a[i].expiring != b[i].expiring)) {
				bad = 1;
				diag("round %d cell %zu (%s@%" PRId64 " seq %"
				     PRIu64 " type %d): state %d expiring %d,"
				     " reference %d %d", r, i,
				     (const char *)a[i].k.qual, a[i].k.ts,
				     a[i].k.seq, a[i].k.type, a[i].state,
				     a[i].expiring, b[i].state,
				     b[i].expiring);
				if (getenv("VIS_DUMP")) {
					diag("f %p versions %d minv %d ttl %" PRId64 " keep %d snap %" PRIu64 " rmax %" PRId64 " exp %d", (void *)c.f, f.versions, f.min_versions, f.ttl, f.keep_deleted, c.snapshot, c.read_max_ts, c.expiring);
					for (size_t j = 0; j < n; j++)
						diag("  %zu %s@%" PRId64 " seq %" PRIu64 " type %d: %d/%d ref %d/%d", j, (const char *)a[j].k.qual, (now - a[j].k.ts) / 1000, a[j].k.seq, a[j].k.type, a[j].state, a[j].expiring, b[j].state, b[j].expiring);
				}
			}
	}
	return !bad;
}

static void too_slow(int sig)
{
	static const char m[] = "not ok 2 - the long column was not "
				"classified in 60 s\n";
	(void)sig;
	if (write(1, m, sizeof m - 1) < 0)
		_exit(2);
	_exit(1);
}

static double secs(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void)
{
	const char *s = getenv("CELLFS_SEED");
	const char *ns = getenv("CELLFS_VIS_N");
	size_t n = ns ? (size_t)strtoul(ns, NULL, 10) : 200000, live = 0;
	struct rcell *cells;
	struct cf_family f;
	struct vis_ctx c;
	double t0, t;

	rng = s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
	if (!rng)
		rng = 1;
	plan(4);
	diag("seed %" PRIu64 " (CELLFS_SEED=%" PRIu64 " replays)", rng, rng);
	ok(random_rounds(20000), "20,000 random rows: the states of the "
	   "quadratic classifier");

	/* a column of n versions: a put at each ts, a Delete of every
	 * third version and a DeleteColumn every 1000th, VERSIONS 3 and
	 * MIN_VERSIONS 2 with a TTL (the slowest paths) */
	cells = calloc(n, sizeof *cells);
	if (!cells)
		return 1;
	memset(&f, 0, sizeof f);
	f.versions = 3;
	f.min_versions = 2;
	f.ttl = 3600;
	for (size_t i = 0; i < n; i++) {
		cells[i].k.qual = (const unsigned char *)"q";
		cells[i].k.qlen = 1;
		cells[i].k.ts = (int64_t)(n - i);
		cells[i].k.seq = n - i + (i % 7) * 3;
		cells[i].k.type = i % 3 == 2 ? KT_DELETE : KT_PUT;
		if (i % 1000 == 999)
			cells[i].k.type = KT_DELETE_COLUMN;
		if (cells[i].k.type == KT_DELETE)
			cells[i].k.ts = cells[i - 1].k.ts;
	}
	qsort(cells, n, sizeof *cells, cmp_rcell);
	c = (struct vis_ctx){ &f, SEQ_MAX, (int64_t)n + 1000, INT64_MAX,
			      1 };
	signal(SIGALRM, too_slow);
	alarm(60);
	t0 = secs();
	vis_classify(&c, cells, n);
	t = secs() - t0;
	alarm(0);
	for (size_t i = 0; i < n; i++)
		live += cells[i].state == VIS_LIVE;
	diag("a column of %zu cells with delete markers: %.3f s, %zu live",
	     n, t, live);
	ok(t < 60, "classified in %.3f s (n log n; quadratic would not end)",
	   t);
	ok(live >= 3, "the newest versions are live (%zu)", live);
	/* the same column with the reference on its first 1,000 cells */
	{
		size_t m = n < 1000 ? n : 1000;
		struct rcell *d = malloc(m * sizeof *d);
		int same = d != NULL;
		if (d) {
			memcpy(d, cells, m * sizeof *d);
			vis_classify(&c, cells, m);
			old_vis_classify(&c, d, m);
			for (size_t i = 0; i < m; i++)
				same &= cells[i].state == d[i].state &&
					cells[i].expiring == d[i].expiring;
		}
		ok(same, "its first %zu cells: as the reference", m);
		free(d);
	}
	free(cells);
	return done_testing();
}
