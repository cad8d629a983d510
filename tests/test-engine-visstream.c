/*
 * test-engine-visstream: vis_stream (engine/visible.c), which classifies
 * a column cell by cell in key order holding a bounded state, gives
 * every cell the state and expiring flag vis_column gives it, or says
 * the column needs more than its cap (and then at the same cell in every
 * pass).  Random columns of puts, Deletes, DeleteColumns under random
 * DeleteFamily markers, sequence numbers shared by a put and a marker,
 * under random VERSIONS, MIN_VERSIONS, TTL, KEEP_DELETED_CELLS,
 * snapshots and time ranges, with caps of 8 and 16 entries and one no
 * column reaches; then columns of 200,000 cells written in timestamp
 * order (and in its reverse, and mostly to one version) with markers
 * among them, which a cap of 64 entries must classify whole.  CELLFS_SEED replays a run.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/internal.h"
#include "tests/tap.h"
#include "tests/xorshift.h"

#define NOW INT64_C(1700000000000)

static int cmp_vcell(const void *pa, const void *pb)
{
	const struct vcell *a = pa, *b = pb;
	uint64_t sa = a->seq << 8 | a->type, sb = b->seq << 8 | b->type;

	if (a->ts != b->ts)
		return a->ts > b->ts ? -1 : 1;
	return sa > sb ? -1 : sa < sb;
}

/* sorted, no two keys equal: the count */
static size_t sort_column(struct vcell *v, size_t n)
{
	size_t m = 0;

	qsort(v, n, sizeof *v, cmp_vcell);
	for (size_t i = 0; i < n; i++)
		if (!m || cmp_vcell(&v[m - 1], &v[i]))
			v[m++] = v[i];
	return m;
}

/*
 * Classifies v[0..n) with vis_stream at cap, two passes, and compares
 * with ref (vis_column's states).  1: equal; 0: different (told); 2:
 * over the cap (at the same cell in both passes, cells before it
 * equal).
 */
static int stream_check(const struct vis_ctx *c, const struct vis_family *vf,
			const struct vcell *ref, struct vcell *v, size_t n,
			size_t cap, int loose, const char *what)
{
	struct vis_stream st;
	size_t stop[2] = { n, n };
	int res = 1;

	if (vis_stream_init(&st, c, vf, cap, loose))
		bail("no memory");
	for (size_t i = 0; i < n; i++)
		vis_stream_sum(&st, v[i].ts, v[i].seq, v[i].type);
	vis_stream_sum_done(&st);
	for (int p = 0; p < 2 && res == 1; p++) {
		vis_stream_rewind(&st);
		for (size_t i = 0; i < n; i++) {
			v[i].state = 99;
			if (vis_stream_next(&st, &v[i])) {
				stop[p] = i;
				break;
			}
			if ((v[i].state != ref[i].state &&
			     !(loose && v[i].state == VIS_DEAD &&
			       ref[i].state == VIS_MASKED)) ||
			    (c->expiring && v[i].expiring != ref[i].expiring)) {
				diag("%s: cell %zu (@%" PRId64 " seq %" PRIu64
				     " type %d): %d/%d, vis_column %d/%d", what,
				     i, (NOW - v[i].ts) / 1000, v[i].seq,
				     v[i].type, v[i].state, v[i].expiring,
				     ref[i].state, ref[i].expiring);
				res = 0;
				break;
			}
		}
	}
	if (res == 1 && stop[0] != stop[1]) {
		diag("%s: over the cap at %zu, then at %zu", what, stop[0],
		     stop[1]);
		res = 0;
	}
	if (res == 1 && stop[0] < n)
		res = 2;
	vis_stream_release(&st);
	return res;
}

static int random_rounds(int rounds, size_t *over)
{
	static struct vcell a[300], b[300];
	static const size_t caps[] = { 8, 16, 1u << 20 };	/* each also
								 * loose */

	for (int r = 0; r < rounds; r++) {
		struct cf_family f;
		struct vis_ctx c;
		struct vis_family vf;
		struct vis_scratch s;
		size_t n = 1 + rnd(sizeof a / sizeof *a), ndf = rnd(4) ? 0 :
			   rnd(6);
		int nts = 1 + (int)rnd(40), dels = (int)rnd(50);
		int both = (int)rnd(4) == 0;	/* shared seqs */

		memset(&f, 0, sizeof f);
		f.versions = 1 + (int)rnd(4);
		f.min_versions = (int)rnd((uint64_t)f.versions + 1);
		f.ttl = rnd(2) ? CF_TTL_FOREVER : (int64_t)(1 + rnd(30));
		f.keep_deleted = (int)rnd(2);
		for (size_t i = 0; i < n; i++) {
			int k = (int)rnd(100);
			a[i].ts = NOW - (int64_t)rnd((uint64_t)nts) * 1000;
			a[i].seq = 1 + rnd(both ? n : 4 * n);
			a[i].type = k >= dels ? KT_PUT : k % 3 ? KT_DELETE :
				    KT_DELETE_COLUMN;
		}
		n = sort_column(a, n);
		c.f = &f;
		c.snapshot = rnd(4) ? SEQ_MAX : rnd(4 * n + 2);
		c.now_ms = NOW;
		c.read_max_ts = rnd(4) ? INT64_MAX :
				NOW - (int64_t)rnd((uint64_t)nts) * 1000;
		c.expiring = (int)rnd(2);
		memset(&vf, 0, sizeof vf);
		for (size_t i = 0; i < ndf; i++)
			vis_family_add(&c, &vf, NOW - (int64_t)rnd((uint64_t)
				       nts) * 1000, 1 + rnd(4 * n));
		vis_family_done(&vf);
		memset(&s, 0, sizeof s);
		memcpy(b, a, n * sizeof *a);
		vis_column(&c, ndf ? &vf : NULL, &s, b, n);
		for (size_t k = 0; k < 2 * sizeof caps / sizeof *caps; k++) {
			char what[112];
			int res, loose = (int)(k & 1);
			size_t cap = caps[k / 2];
			snprintf(what, sizeof what, "round %d (VERSIONS %d "
				 "MIN_VERSIONS %d TTL %" PRId64 " KEEP %d), "
				 "cap %zu%s", r, f.versions, f.min_versions,
				 f.ttl, f.keep_deleted, cap, loose ? ", loose" :
				 "");
			res = stream_check(&c, ndf ? &vf : NULL, b, a, n,
					   cap, loose, what);
			if (res == 0 || (res == 2 && cap > 300)) {
				if (res == 2)
					diag("%s: over the cap", what);
				vis_scratch_release(&s);
				vis_family_release(&vf);
				return 0;
			}
			if (res == 2)
				over[k]++;
		}
		vis_scratch_release(&s);
		vis_family_release(&vf);
	}
	return 1;
}

/*
 * A column of n cells written in timestamp order (rev: newest timestamp
 * first), seq i for the i-th write: puts, a Delete of a version after
 * every 7th, a DeleteColumn now and then, a put rewritten, a put and a
 * marker sharing a seq; plus DeleteFamily markers.
 */
static size_t long_column(struct vcell *v, size_t n, int rev,
			  struct vis_ctx *c, struct vis_family *vf)
{
	size_t m = 0;
	uint64_t seq = 1;
	int64_t ts;

	for (size_t i = 0; m + 4 < n; i++) {
		ts = rev == 1 ? NOW - (int64_t)i : NOW - (int64_t)n + (int64_t)i;
		if (rev == 2)	/* one version rewritten, now and then
				 * another */
			ts = i % 100 ? NOW - 1000 : NOW - (int64_t)n + (int64_t)i;
		v[m++] = (struct vcell){ ts, seq++, KT_PUT, 0, 0 };
		if (i % 7 == 3)
			v[m++] = (struct vcell){ ts, seq++, KT_DELETE, 0, 0 };
		if (i % 11 == 5)	/* rewritten */
			v[m++] = (struct vcell){ ts, seq++, KT_PUT, 0, 0 };
		if (i % 13 == 0) {	/* a put and a marker of one seq */
			v[m++] = (struct vcell){ ts - 1, seq, KT_PUT, 0, 0 };
			v[m++] = (struct vcell){ ts, seq++, KT_DELETE, 0, 0 };
		}
		if (i % 1009 == 500)
			v[m++] = (struct vcell){ ts - 3, seq++,
						 KT_DELETE_COLUMN, 0, 0 };
		if (i % 4001 == 2000)
			vis_family_add(c, vf, ts - 2, seq++);
	}
	vis_family_done(vf);
	return sort_column(v, m);
}

int main(void)
{
	const char *s = getenv("CELLFS_SEED");
	size_t over[6] = { 0 }, n = 200000;
	int good;
	struct vcell *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);

	rng = s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
	if (!rng)
		rng = 1;
	if (!a || !b)
		bail("no memory");
	plan(2 + 3 * 3 * 2);
	diag("seed %" PRIu64 " (CELLFS_SEED=%" PRIu64 " replays)", rng, rng);
	good = random_rounds(20000, over);
	ok(good, "random columns: vis_stream's states are vis_column's, "
	   "but for dead or masked when loose (caps of 8 and 16: %zu and "
	   "%zu of 20,000 over, %zu and %zu loose)", over[0], over[2],
	   over[1], over[3]);
	ok(over[0] > 0, "some random columns pass a cap of 8 entries");
	for (int rev = 0; rev < 3; rev++)
		for (int versions = 1; versions <= 5; versions += 2)
			for (int ttl = 0; ttl < 2; ttl++) {
				struct cf_family f;
				struct vis_ctx c = { &f, SEQ_MAX, NOW,
						     INT64_MAX, 1 };
				struct vis_family vf;
				struct vis_scratch sc;
				size_t m, live = 0;
				int res;

				memset(&f, 0, sizeof f);
				f.versions = versions;
				f.min_versions = versions > 1 ? 2 : 0;
				f.ttl = ttl ? 50 : CF_TTL_FOREVER;
				memset(&vf, 0, sizeof vf);
				memset(&sc, 0, sizeof sc);
				m = long_column(a, n, rev, &c, &vf);
				memcpy(b, a, m * sizeof *a);
				vis_column(&c, &vf, &sc, b, m);
				for (size_t i = 0; i < m; i++)
					live += b[i].state == VIS_LIVE;
				/* one version rewritten with Deletes among
				 * the rewrites and older versions written
				 * all along: what a put's life counts on
				 * has a gap per Delete, so only VERSIONS 1
				 * loose (no counts) is sure to stream */
				res = stream_check(&c, &vf, b, a, m, 64,
						   rev == 2, "long column");
				ok(res == 1 || (res == 2 && rev == 2 &&
						versions > 1),
				   "%zu cells written %s, VERSIONS %d, "
				   "MIN_VERSIONS %d, TTL %s: %s, the states "
				   "of vis_column (%zu live)", m, rev == 2 ?
				   "mostly to one version" : rev ?
				   "newest first" : "oldest first", versions,
				   f.min_versions, ttl ? "50 s" : "forever",
				   res == 1 ? "streamed in 64 entries" :
				   "over 64 entries", live);
				vis_scratch_release(&sc);
				vis_family_release(&vf);
			}
	free(a);
	free(b);
	return done_testing();
}
