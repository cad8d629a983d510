/*
 * test-iter.c: the merging iterator (engine/iter.h iter_merge) over
 * memstore iterators with overlapping keys, against a reference merge:
 * 0, 1, 2, 5 and 8 children, seeks, the tie-break between equal keys, and
 * a child that fails part way (no entry past the failure comes out, and
 * the failure stays).  Throughput is printed as diag lines, never
 * asserted.
 *
 * The random seed is fixed and printed; set CF_SEED to try another.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/iter.h"
#include "engine/key.h"
#include "engine/memstore.h"
#include "tests/tap.h"
#include "util/err.h"

static uint64_t seed;

static uint64_t rnd(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* One entry of a child, and of the reference merge. */
struct ent {
	unsigned char key[64];
	size_t klen;
	unsigned char val[16];
	size_t vlen;
	int child;
};

/* Key number i of a shared pool: rows "r%03u", a family, qualifiers
 * "" or "q", a few timestamps, seq = i / 7 + 1 so that neighbouring pool
 * keys share a sequence number and differ in the column. */
static size_t pool_key(unsigned i, unsigned char *out)
{
	char row[8];
	struct ikey k;

	snprintf(row, sizeof row, "r%03u", i % 500);
	k.row = (const unsigned char *)row;
	k.rowlen = strlen(row);
	k.fam = (const unsigned char *)"f";
	k.famlen = 1;
	k.qual = (const unsigned char *)"q";
	k.qlen = (i / 500) % 2;
	k.ts = (int64_t)((i / 1000) % 3) - 1;
	k.seq = i / 7 + 1;
	k.type = KT_PUT;
	return ikey_encode(out, &k);
}

static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	int c = ikey_cmp(x->key, x->klen, y->key, y->klen);

	return c ? c : (x->child > y->child) - (x->child < y->child);
}

/* The value of an entry names its child and the key's pool number. */
static void make_ent(struct ent *e, unsigned i, int child)
{
	e->klen = pool_key(i, e->key);
	e->vlen = (size_t)snprintf((char *)e->val, sizeof e->val, "c%d:%u",
				   child, i);
	e->child = child;
}

/*
 * n children, each with a random subset of a pool of 3000 keys (so the
 * sets overlap and equal keys meet); entries of all of them into *ref,
 * sorted by (key, child): the merge the iterator must produce.
 */
struct fixture {
	struct memstore *ms[8];
	int n;
	struct ent *ref;
	size_t nref;
};

/* With runs, the pool is cut into runs of 1 to 40 keys, each owned by
 * one child (and every 8th key also by the next child, for ties): a
 * merge then takes many entries in a row from one child, as a scan does
 * from the newest store file (iter.c's rival shortcut). */
static void fixture_make_mode(struct fixture *fx, int n, uint64_t *s,
			      int runs)
{
	enum { POOL = 3000 };
	uint64_t seed_runs = rnd(s);

	memset(fx, 0, sizeof *fx);
	fx->n = n;
	fx->ref = malloc((size_t)n * POOL * sizeof *fx->ref + 1);
	if (!fx->ref)
		bail("out of memory");
	for (int c = 0; c < n; c++) {
		if (memstore_new(&fx->ms[c]))
			bail("memstore_new");
		uint64_t rs = seed_runs;	/* the same runs for each */
		int owner = 0, left = 0;
		for (unsigned i = 0; i < POOL; i++) {
			struct ent *e = &fx->ref[fx->nref];
			struct ikey k;
			if (runs) {
				if (!left) {
					owner = (int)(rnd(&rs) % (uint64_t)n);
					left = 1 + (int)(rnd(&rs) % 40);
				}
				left--;
				if (c != owner &&
				    (i % 8 || c != (owner + 1) % n))
					continue;
			} else if (rnd(s) % (uint64_t)(c + 2)) {
				/* child c takes about 1 key in (c + 2) */
				continue;
			}
			make_ent(e, i, c);
			ikey_decode(e->key, e->klen, &k);
			if (memstore_add(fx->ms[c], &k, e->val, e->vlen))
				bail("memstore_add");
			fx->nref++;
		}
	}
	qsort(fx->ref, fx->nref, sizeof *fx->ref, cmp_ent);
}

static void fixture_make(struct fixture *fx, int n, uint64_t *s)
{
	fixture_make_mode(fx, n, s, 0);
}

static void fixture_free(struct fixture *fx)
{
	for (int c = 0; c < fx->n; c++)
		memstore_unref(fx->ms[c]);
	free(fx->ref);
}

/* A merge over fresh iterators of the fixture's memstores. */
static struct iter *fixture_merge(struct fixture *fx)
{
	struct iter *kids[8];
	struct iter *m;

	for (int c = 0; c < fx->n; c++)
		if (!(kids[c] = memstore_iter(fx->ms[c])))
			bail("memstore_iter");
	m = iter_merge(kids, (size_t)fx->n);
	if (!m)
		bail("iter_merge");
	return m;
}

static int at(struct iter *it, const struct ent *e)
{
	size_t kn, vn;
	const unsigned char *k, *v;

	if (!iter_valid(it))
		return 0;
	k = iter_key(it, &kn);
	v = iter_value(it, &vn);
	return kn == e->klen && !memcmp(k, e->key, kn) && vn == e->vlen &&
	       !memcmp(v, e->val, vn);
}

/* Reads it from its current position to the end, comparing with
 * ref[from..nref); returns the number of mismatches, or of missing or
 * extra entries. */
static size_t compare_rest(struct iter *it, const struct ent *ref,
			   size_t from, size_t nref)
{
	size_t bad = 0, i = from;

	for (; iter_valid(it); iter_next(it), i++)
		if (i >= nref || !at(it, &ref[i]))
			bad++;
	if (i < nref)
		bad += nref - i;
	return bad;
}

/* First index of ref with key >= (p, n); equal keys keep their order. */
static size_t lower_bound(const struct ent *ref, size_t nref,
			  const unsigned char *p, size_t n)
{
	size_t lo = 0, hi = nref;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ikey_cmp(ref[mid].key, ref[mid].klen, p, n) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* --- merging ---------------------------------------------------------- */

static void test_zero(void)
{
	struct iter *m = iter_merge(NULL, 0);
	unsigned char k[64];
	size_t kn = pool_key(1, k);

	ok(m != NULL, "a merge of no children");
	iter_seek_first(m);
	ok(!iter_valid(m) && iter_status(m) == CF_OK, "is empty, status OK");
	iter_seek(m, k, kn);
	ok(!iter_valid(m) && iter_status(m) == CF_OK, "and seeks to nothing");
	iter_destroy(m);
}

static void test_merge_mode(int n, uint64_t *s, int runs)
{
	struct fixture fx;
	struct iter *m;
	size_t bad = 0;

	fixture_make_mode(&fx, n, s, runs);
	m = fixture_merge(&fx);
	iter_seek_first(m);
	is_int(compare_rest(m, fx.ref, 0, fx.nref), 0,
	       "%d children%s, %zu entries: the reference merge", n,
	       runs ? " owning runs of keys" : "", fx.nref);
	is_int(iter_status(m), CF_OK, "status OK at the end");
	iter_next(m);
	ok(!iter_valid(m), "next at the end stays at the end");

	/* seeks: to every key of the pool (present or not), then a few
	 * steps each; the whole rest from a few of them */
	for (unsigned i = 0; i < 3000; i++) {
		unsigned char k[64];
		size_t kn = pool_key(i, k), lb = lower_bound(fx.ref, fx.nref, k,
							      kn);
		iter_seek(m, k, kn);
		for (size_t j = lb; j < lb + 4; j++) {
			if (j < fx.nref ? !at(m, &fx.ref[j]) : iter_valid(m))
				bad++;
			iter_next(m);
		}
		if (i % 500 == 0)
			bad += compare_rest(m, fx.ref, lb + 4 < fx.nref ?
					    lb + 4 : fx.nref, fx.nref);
	}
	is_int(bad, 0, "seek to each of 3000 pool keys lands on the first "
	       "entry >= it, and goes on in order");
	{
		/* a key after every other: row "s" */
		unsigned char k[64];
		struct ikey ik = { (const unsigned char *)"s", 1, NULL, 0,
				   NULL, 0, 0, 1, KT_PUT };
		size_t kn = ikey_encode(k, &ik);
		iter_seek(m, k, kn);
		ok(!iter_valid(m) && iter_status(m) == CF_OK,
		   "seek past the end: invalid, status OK");
		iter_seek_first(m);
		ok(at(m, &fx.ref[0]), "seek_first after that starts over");
	}
	iter_destroy(m);
	fixture_free(&fx);
}

static void test_merge(int n, uint64_t *s)
{
	test_merge_mode(n, s, 0);
}

static void test_ties(void)
{
	struct memstore *ms[4];
	struct iter *kids[4], *m;
	struct ikey k = { (const unsigned char *)"row", 3,
			  (const unsigned char *)"f", 1,
			  (const unsigned char *)"q", 1, 5, 9, KT_PUT };
	char want[64] = "", got[64] = "";

	/* the same key in every child (child 3 also has an earlier one),
	 * added to the children in reverse so creation order cannot help */
	for (int c = 3; c >= 0; c--) {
		char v[4] = { (char)('0' + c), 0 };
		if (memstore_new(&ms[c]) || memstore_add(ms[c], &k, v, 1))
			bail("setup");
	}
	{
		struct ikey k2 = k;
		k2.seq = 10;	/* newer: sorts first */
		memstore_add(ms[3], &k2, "N", 1);
	}
	for (int c = 0; c < 4; c++) {
		kids[c] = memstore_iter(ms[c]);
		memstore_unref(ms[c]);	/* the iterators keep them */
	}
	m = iter_merge(kids, 4);
	for (iter_seek_first(m); iter_valid(m); iter_next(m)) {
		size_t vn;
		const unsigned char *v = iter_value(m, &vn);
		strncat(got, (const char *)v, vn);
	}
	strcpy(want, "N0123");
	is_str(got, want, "equal keys come lower child index first");
	{
		unsigned char kb[64];
		size_t kn = ikey_encode(kb, &k);
		got[0] = 0;
		for (iter_seek(m, kb, kn); iter_valid(m); iter_next(m)) {
			size_t vn;
			const unsigned char *v = iter_value(m, &vn);
			strncat(got, (const char *)v, vn);
		}
		is_str(got, "0123", "also after a seek to that key");
	}
	iter_destroy(m);
}

/* --- a child that fails ------------------------------------------------ */

/*
 * A child over a sorted array of entries whose status is CF_EIO once it
 * has been moved to position k or past it: it yields entries 0..k-1, then
 * turns invalid with the error (k = 0: it fails at once).
 */
struct failiter {
	struct iter it;
	const struct ent *e;
	size_t n, k, pos;
	int rc;			/* the error it fails with */
	int *destroyed;
};

static void fi_seek_first(struct iter *it)
{
	((struct failiter *)it)->pos = 0;
}

static void fi_seek(struct iter *it, const unsigned char *key, size_t n)
{
	struct failiter *f = (struct failiter *)it;

	f->pos = lower_bound(f->e, f->n, key, n);
}

static void fi_next(struct iter *it)
{
	struct failiter *f = (struct failiter *)it;

	if (f->pos < f->n && f->pos < f->k)
		f->pos++;
	else
		bail("next on an invalid child iterator");
}

static int fi_valid(const struct iter *it)
{
	const struct failiter *f = (const struct failiter *)it;

	return f->pos < f->n && f->pos < f->k;
}

static const unsigned char *fi_key(const struct iter *it, size_t *n)
{
	const struct failiter *f = (const struct failiter *)it;

	if (!fi_valid(it))
		bail("key of an invalid child iterator");
	*n = f->e[f->pos].klen;
	return f->e[f->pos].key;
}

static const unsigned char *fi_value(const struct iter *it, size_t *n)
{
	const struct failiter *f = (const struct failiter *)it;

	if (!fi_valid(it))
		bail("value of an invalid child iterator");
	*n = f->e[f->pos].vlen;
	return f->e[f->pos].val;
}

static int fi_status(const struct iter *it)
{
	const struct failiter *f = (const struct failiter *)it;

	return f->pos >= f->k ? f->rc : CF_OK;
}

static void fi_destroy(struct iter *it)
{
	struct failiter *f = (struct failiter *)it;

	(*f->destroyed)++;
	free(f);
}

static const struct iter_ops fail_ops = {
	fi_seek_first, fi_seek, fi_next, fi_valid, fi_key, fi_value,
	fi_status, fi_destroy, NULL, NULL,
};

static struct iter *failiter_new_rc(const struct ent *e, size_t n, size_t k,
				    int rc, int *destroyed)
{
	struct failiter *f = calloc(1, sizeof *f);

	if (!f)
		bail("out of memory");
	f->it.ops = &fail_ops;
	f->e = e;
	f->n = n;
	f->k = k;
	f->rc = rc;
	f->destroyed = destroyed;
	return &f->it;
}

static struct iter *failiter_new(const struct ent *e, size_t n, size_t k,
				 int *destroyed)
{
	return failiter_new_rc(e, n, k, CF_EIO, destroyed);
}

/*
 * A merge of the fixture's memstores with a failing child at index fidx
 * whose entries are fe[0..fn) and which fails after k of them.  Expected:
 * exactly the reference merge (fixture plus fe) up to and including the
 * failing child's entry k-1, then invalid with CF_EIO.
 */
static int run_fail(struct fixture *fx, const struct ent *fe, size_t fn,
		    int fidx, size_t k, const char *what)
{
	struct ent *ref = malloc((fx->nref + fn) * sizeof *ref);
	struct iter *kids[9], *m;
	size_t nref = 0, stop = 0, i = 0, bad = 0, last_ok = 0;
	int destroyed = 0, c, r;

	/* children: the fixture's memstores with the failing one inserted
	 * at fidx; child indexes shift accordingly */
	for (c = 0; c < fx->n + 1; c++) {
		if (c == fidx) {
			kids[c] = failiter_new(fe, fn, k, &destroyed);
			for (size_t j = 0; j < fn; j++) {
				ref[nref] = fe[j];
				ref[nref++].child = c;
			}
		} else {
			int mc = c < fidx ? c : c - 1;
			kids[c] = memstore_iter(fx->ms[mc]);
			for (size_t j = 0; j < fx->nref; j++)
				if (fx->ref[j].child == mc) {
					ref[nref] = fx->ref[j];
					ref[nref++].child = c;
				}
		}
	}
	qsort(ref, nref, sizeof *ref, cmp_ent);
	/* where the output must end: after the failing child's entry k-1 */
	if (k > 0) {
		size_t seen = 0;
		for (stop = 0; stop < nref; stop++)
			if (ref[stop].child == fidx && ++seen == k)
				break;
		stop++;
	}
	m = iter_merge(kids, (size_t)fx->n + 1);
	for (iter_seek_first(m); iter_valid(m); iter_next(m), i++)
		if (i >= stop || !at(m, &ref[i]))
			bad++;
		else
			last_ok = i + 1;
	r = ok(bad == 0 && i == stop && last_ok == stop &&
	       iter_status(m) == CF_EIO,
	       "%s: %zu of %zu entries, the reference prefix up to the "
	       "failure, then invalid with CF_EIO", what, i, nref);
	if (!r)
		diag("  got %zu entries (%zu wrong), want %zu; status %d", i,
		     bad, stop, iter_status(m));
	iter_next(m);
	iter_next(m);
	ok(!iter_valid(m) && iter_status(m) == CF_EIO,
	   "%s: stays failed on next", what);
	/* the failing child would yield entries again from its start; the
	 * merge must not: a scan that met an error is not to be trusted */
	iter_seek_first(m);
	ok(!iter_valid(m) && iter_status(m) == CF_EIO,
	   "%s: and on seek_first", what);
	iter_destroy(m);
	is_int(destroyed, 1, "%s: the merge destroys its children", what);
	free(ref);
	return r;
}

static void test_failing(uint64_t *s)
{
	struct fixture fx;
	struct ent fe[200];
	size_t fn = sizeof fe / sizeof *fe, n_seen;
	char what[80];

	fixture_make(&fx, 4, s);
	/* the failing child's keys: every 15th pool key, in order (some
	 * equal to keys of the other children) */
	for (size_t j = 0; j < fn; j++)
		make_ent(&fe[j], (unsigned)(j * 15), 9);
	qsort(fe, fn, sizeof *fe, cmp_ent);

	run_fail(&fx, fe, fn, 0, 0, "a child failing at once");
	run_fail(&fx, fe, fn, 0, 1, "failing after 1 entry, child 0");
	run_fail(&fx, fe, fn, 2, 57, "after 57 entries, child 2");
	run_fail(&fx, fe, fn, 4, 133, "after 133 entries, the last child");
	run_fail(&fx, fe, fn, 1, fn, "failing at its end instead of ending");
	snprintf(what, sizeof what, "a lone child failing after 10");
	{
		struct fixture none = { .n = 0 };
		run_fail(&none, fe, fn, 0, 10, what);
	}

	/* a seek that lands the child past its failure point */
	{
		int destroyed = 0;
		struct iter *kids[2];
		struct iter *m;
		kids[0] = memstore_iter(fx.ms[0]);
		kids[1] = failiter_new(fe, fn, 50, &destroyed);
		m = iter_merge(kids, 2);
		iter_seek(m, fe[120].key, fe[120].klen);
		ok(!iter_valid(m) && iter_status(m) == CF_EIO,
		   "a seek into the failed part: invalid with CF_EIO");
		iter_destroy(m);
		is_int(destroyed, 1, "destroyed with the merge");
	}
	{
		/* seek before the failure point: entries up to it */
		int destroyed = 0;
		struct iter *kids[1];
		struct iter *m;
		size_t n = 0;
		int good = 1;
		kids[0] = failiter_new(fe, fn, 50, &destroyed);
		m = iter_merge(kids, 1);
		for (iter_seek(m, fe[40].key, fe[40].klen); iter_valid(m);
		     iter_next(m), n++)
			good &= at(m, &fe[40 + n]);
		ok(good && n == 10 && iter_status(m) == CF_EIO,
		   "a seek before it: the 10 entries up to it, then CF_EIO "
		   "(%zu)", n);
		iter_destroy(m);
	}
	{
		/* two failing children: the status is the first error met,
		 * by child index when they fail on the same seek */
		int destroyed = 0;
		struct iter *kids[3];
		struct iter *m;
		kids[0] = memstore_iter(fx.ms[0]);
		kids[1] = failiter_new_rc(fe, fn, 0, CF_ECORRUPT, &destroyed);
		kids[2] = failiter_new_rc(fe, fn, 0, CF_EIO, &destroyed);
		m = iter_merge(kids, 3);
		iter_seek_first(m);
		is_int(iter_status(m), CF_ECORRUPT,
		       "two children failing at once: the lower one's error");
		ok(!iter_valid(m), "and the merge is invalid");
		iter_destroy(m);
		is_int(destroyed, 2, "both destroyed with the merge");

		destroyed = 0;
		kids[0] = failiter_new_rc(fe, fn, 30, CF_ECORRUPT, &destroyed);
		kids[1] = failiter_new_rc(fe, fn, 20, CF_EIO, &destroyed);
		m = iter_merge(kids, 2);
		iter_seek_first(m);
		n_seen = 0;
		for (; iter_valid(m); iter_next(m))
			n_seen++;
		/* child 0 gives fe[0..29], child 1 fe[0..19], interleaved
		 * by key: child 1 fails after both gave 20 entries each */
		is_int(n_seen, 40, "the later child failing first ends the "
		       "merge there");
		is_int(iter_status(m), CF_EIO, "with its error");
		iter_seek_first(m);
		is_int(iter_status(m), CF_EIO,
		       "the first error stays after a seek meets another");
		iter_destroy(m);
	}
	fixture_free(&fx);
}

/* --- throughput (diag only) -------------------------------------------- */

/* sanitizers slow everything down; the numbers are only diag */
#if defined(__SANITIZE_THREAD__)
#define BENCH_ENTRIES 20000
#elif defined(__SANITIZE_ADDRESS__)
#define BENCH_ENTRIES 100000
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BENCH_ENTRIES 20000
#elif __has_feature(address_sanitizer)
#define BENCH_ENTRIES 100000
#endif
#endif
#ifndef BENCH_ENTRIES
#define BENCH_ENTRIES 1000000
#endif

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Row i of the benchmark: 16 bytes, ascending with i. */
static size_t bench_key(size_t i, unsigned char *out)
{
	char row[17];
	struct ikey k;

	snprintf(row, sizeof row, "row%013zu", i);
	k.row = (const unsigned char *)row;
	k.rowlen = 16;
	k.fam = (const unsigned char *)"f";
	k.famlen = 1;
	k.qual = (const unsigned char *)"q";
	k.qlen = 1;
	k.ts = 1700000000000;
	k.seq = i + 1;
	k.type = KT_PUT;
	return ikey_encode(out, &k);
}

/* BENCH_ENTRIES spread round robin over n memstores, merged: a full scan
 * and random seeks, checked for count and order only. */
static void bench_merge(int n, uint64_t *s)
{
	struct memstore *ms[8];
	struct iter *kids[8], *m;
	unsigned char kb[64], prev[64], val[100];
	size_t count = 0, disorder = 0, found = 0, pn = 0;
	double t0, t1, t2;

	memset(val, 'v', sizeof val);
	for (int c = 0; c < n; c++)
		if (memstore_new(&ms[c]))
			bail("memstore_new");
	for (size_t i = 0; i < BENCH_ENTRIES; i++) {
		struct ikey k;
		size_t kn = bench_key(i, kb);
		ikey_decode(kb, kn, &k);
		if (memstore_add(ms[i % (size_t)n], &k, val, sizeof val))
			bail("memstore_add");
	}
	for (int c = 0; c < n; c++) {
		kids[c] = memstore_iter(ms[c]);
		memstore_unref(ms[c]);
	}
	m = iter_merge(kids, (size_t)n);
	t0 = now_s();
	for (iter_seek_first(m); iter_valid(m); iter_next(m)) {
		size_t kn;
		const unsigned char *k = iter_key(m, &kn);
		if (pn && ikey_cmp(prev, pn, k, kn) >= 0)
			disorder++;
		memcpy(prev, k, kn);
		pn = kn;
		count++;
	}
	t1 = now_s();
	for (size_t i = 0; i < BENCH_ENTRIES / 10; i++) {
		size_t j = rnd(s) % BENCH_ENTRIES, kn = bench_key(j, kb), gn;
		const unsigned char *g;
		iter_seek(m, kb, kn);
		g = iter_valid(m) ? iter_key(m, &gn) : NULL;
		found += g && gn == kn && !memcmp(g, kb, kn);
	}
	t2 = now_s();
	diag("merge of %d: scan %.0f entries/s, %.0f seeks/s", n,
	     count / (t1 - t0), BENCH_ENTRIES / 10 / (t2 - t1));
	ok(count == BENCH_ENTRIES && !disorder &&
	   found == BENCH_ENTRIES / 10,
	   "merge of %d: %zu entries in order, every seek found its key", n,
	   count);
	iter_destroy(m);
}

int main(void)
{
	const char *sv = getenv("CF_SEED");
	uint64_t s;

	seed = sv ? strtoull(sv, NULL, 0) : 20261122;
	diag("seed %llu (set CF_SEED to change)", (unsigned long long)seed);
	s = seed;
	test_zero();
	test_merge(1, &s);
	test_merge(2, &s);
	test_merge(5, &s);
	test_merge(8, &s);
	test_merge_mode(2, &s, 1);
	test_merge_mode(3, &s, 1);
	test_merge_mode(5, &s, 1);
	test_ties();
	test_failing(&s);
	bench_merge(1, &s);
	bench_merge(2, &s);
	bench_merge(4, &s);
	bench_merge(8, &s);
	return done_testing();
}
