/*
 * test-memstore.c: the memstore (engine/memstore.h): 200k random internal
 * keys against a qsort reference, seeks to every 100th key and between
 * keys, values from 0 bytes to 1 MiB, counters, memory accounting,
 * references, one writer with three lock-free readers, and the arena
 * under it (engine/arena.h).  Throughput is printed as diag lines, never
 * asserted.
 *
 * The random seed is fixed and printed; set CF_SEED to try another.
 */
#include <pthread.h>
#include <sched.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/arena.h"
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

/* An encoded internal key, owned. */
struct ekey {
	unsigned char *p;
	size_t n;
};

static const int types[] = {
	KT_PUT, KT_DELETE, KT_DELETE_COLUMN, KT_DELETE_FAMILY
};

/*
 * A random key with sequence number seq.  Rows, families and qualifiers
 * come from small alphabets (0x00, 'a', 0xff ...) so that many keys share
 * a row or a whole column and the ts and seqtype parts of the order get
 * exercised; some rows are long (over 255 bytes, so the u16 length's high
 * byte is used) with a common prefix.
 */
static void random_ikey(uint64_t *s, uint64_t seq, struct ikey *k,
			unsigned char *row, unsigned char *fam,
			unsigned char *qual)
{
	static const unsigned char ra[] = { 0x00, 'a', 'b', 0xff };
	static const unsigned char fa[] = { 'f', 'g' };
	static const unsigned char qa[] = { 0x00, 'q', 0xff };
	static const int64_t tss[] = {
		INT64_MIN, -1, 0, 1, 2, 1000, INT64_MAX
	};
	uint64_t r = rnd(s);

	k->rowlen = r % 16 == 0 ? 256 + rnd(s) % 60 : r % 5;
	for (size_t i = 0; i < k->rowlen; i++)
		row[i] = i < 250 ? 'L' : ra[rnd(s) % 4];
	if (k->rowlen < 256)
		for (size_t i = 0; i < k->rowlen; i++)
			row[i] = ra[rnd(s) % 4];
	k->famlen = rnd(s) % 3;
	for (size_t i = 0; i < k->famlen; i++)
		fam[i] = fa[rnd(s) % 2];
	k->qlen = rnd(s) % 4;
	for (size_t i = 0; i < k->qlen; i++)
		qual[i] = qa[rnd(s) % 3];
	k->row = row;
	k->fam = fam;
	k->qual = qual;
	r = rnd(s);
	k->ts = r % 3 == 0 ? tss[rnd(s) % 7] : (int64_t)(rnd(s) % 5) - 2;
	k->seq = seq;
	k->type = types[rnd(s) % 4];
}

static struct ekey encode(const struct ikey *k)
{
	struct ekey e;

	e.n = ikey_size(k);
	e.p = malloc(e.n);
	if (!e.p)
		bail("out of memory");
	if (ikey_encode(e.p, k) != e.n)
		bail("ikey_encode size");
	return e;
}

static int cmp_ekey(const void *a, const void *b)
{
	const struct ekey *x = a, *y = b;

	return ikey_cmp(x->p, x->n, y->p, y->n);
}

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

/* The value stored under a key: 0..39 bytes that depend on the key. */
static size_t value_of(const unsigned char *k, size_t kn, unsigned char *v)
{
	uint64_t h = fnv(k, kn), s = h;
	size_t n = h % 40;

	for (size_t i = 0; i < n; i++)
		v[i] = (unsigned char)rnd(&s);
	return n;
}

static int value_ok(const unsigned char *k, size_t kn,
		    const unsigned char *v, size_t vn)
{
	unsigned char want[64];
	size_t n = value_of(k, kn, want);

	return n == vn && (n == 0 || memcmp(want, v, n) == 0);
}

/* Adds e (decoded again) with its value to m. */
static int add_ekey(struct memstore *m, const struct ekey *e)
{
	struct ikey k;
	unsigned char v[64];
	size_t vn = value_of(e->p, e->n, v);

	if (ikey_decode(e->p, e->n, &k))
		bail("ikey_decode of our own key");
	return memstore_add(m, &k, v, vn);
}

/*
 * Does a sort strictly before b by key.h's rules, checked on the decoded
 * fields rather than with ikey_cmp: row, family, qualifier bytewise with
 * the shorter first, then ts descending, then seqtype descending.
 */
static int field_order_ok(const struct ekey *a, const struct ekey *b)
{
	struct ikey x, y;
	int c;

	if (ikey_decode(a->p, a->n, &x) || ikey_decode(b->p, b->n, &y))
		return 0;
	if ((c = bytes_cmp(x.row, x.rowlen, y.row, y.rowlen)))
		return c < 0;
	if ((c = bytes_cmp(x.fam, x.famlen, y.fam, y.famlen)))
		return c < 0;
	if ((c = bytes_cmp(x.qual, x.qlen, y.qual, y.qlen)))
		return c < 0;
	if (x.ts != y.ts)
		return x.ts > y.ts;
	if (x.seq != y.seq)
		return x.seq > y.seq;
	return x.type > y.type;
}

/* The first index of sorted[0..n) with key >= (p, pn). */
static size_t lower_bound(const struct ekey *sorted, size_t n,
			  const unsigned char *p, size_t pn)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ikey_cmp(sorted[mid].p, sorted[mid].n, p, pn) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Is the iterator at exactly e (key bytes, and the value of e)? */
static int at(struct iter *it, const struct ekey *e)
{
	size_t kn, vn;
	const unsigned char *k, *v;

	if (!iter_valid(it))
		return 0;
	k = iter_key(it, &kn);
	v = iter_value(it, &vn);
	return kn == e->n && !memcmp(k, e->p, kn) && value_ok(k, kn, v, vn);
}

/* --- 200k keys against the reference ---------------------------------- */

/* The single-threaded order test gains nothing from ThreadSanitizer,
 * which makes it several times slower: a quarter of the keys there. */
#if defined(__SANITIZE_THREAD__)
#define NKEYS 50000
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NKEYS 50000
#endif
#endif
#ifndef NKEYS
#define NKEYS 200000
#endif

/* Walks it from the first entry, comparing with sorted[0..n): how many
 * entries it yielded, and in *bad how many differ from the reference. */
static size_t walk_all(struct iter *it, const struct ekey *sorted, size_t n,
		       size_t *bad)
{
	size_t i = 0;

	*bad = 0;
	for (iter_seek_first(it); iter_valid(it); iter_next(it)) {
		if (i >= n || !at(it, &sorted[i])) {
			if (!(*bad)++)
				diag("first difference at entry %zu", i);
		}
		i++;
	}
	return i;
}

/* bytes_equal (key.h) against memcmp: every length to 40 at every
 * offset of a word, equal and with each byte changed. */
static void test_bytes_equal(void)
{
	unsigned char a[64], b[64];
	uint64_t st = seed ^ 0xbe;
	int bad = 0, checked = 0;

	for (size_t n = 0; n <= 40; n++)
		for (size_t off = 0; off < 8; off++) {
			for (size_t i = 0; i < sizeof a; i++)
				a[i] = b[i] = (unsigned char)rnd(&st);
			bad += !bytes_equal(a + off, b + off, n);
			checked++;
			for (size_t i = 0; i < n; i++) {
				unsigned char keep = b[off + i];
				b[off + i] ^= (unsigned char)(1 + rnd(&st) % 255);
				bad += bytes_equal(a + off, b + off, n) !=
				       (memcmp(a + off, b + off, n) == 0);
				b[off + i] = keep;
				checked++;
			}
			/* the bytes around the n compared do not count */
			b[off + n] ^= 1;
			if (off)
				b[off - 1] ^= 1;
			bad += !bytes_equal(a + off, b + off, n);
			checked++;
		}
	ok(bad == 0, "bytes_equal agrees with memcmp (%d cases, %d wrong)",
	   checked, bad);
}

static void test_order(void)
{
	struct ekey *keys = malloc(NKEYS * sizeof *keys);
	struct ekey *sorted = malloc(NKEYS * sizeof *sorted);
	unsigned char row[400], fam[4], qual[4];
	uint64_t *seqs = malloc(NKEYS * sizeof *seqs);
	uint64_t s = seed, minseq = UINT64_MAX, maxseq = 0;
	size_t bytes0, payload = 0, bad = 0, badfield = 0, n;
	struct memstore *m;
	struct iter *it;
	int rc = 0;

	if (!keys || !sorted || !seqs)
		bail("out of memory");
	/* distinct sequence numbers in random order make the keys unique */
	for (size_t i = 0; i < NKEYS; i++)
		seqs[i] = 1000 + i * 3 + rnd(&s) % 3;
	for (size_t i = NKEYS - 1; i > 0; i--) {
		size_t j = rnd(&s) % (i + 1);
		uint64_t t = seqs[i];
		seqs[i] = seqs[j];
		seqs[j] = t;
	}
	for (size_t i = 0; i < NKEYS; i++) {
		struct ikey k;
		random_ikey(&s, seqs[i], &k, row, fam, qual);
		keys[i] = encode(&k);
		if (k.seq < minseq)
			minseq = k.seq;
		if (k.seq > maxseq)
			maxseq = k.seq;
	}
	free(seqs);

	is_int(memstore_new(&m), CF_OK, "memstore_new");
	is_int(memstore_count(m), 0, "a new memstore is empty");
	ok(memstore_min_seq(m) == 0 && memstore_max_seq(m) == 0,
	   "min and max seq are 0 when empty");
	bytes0 = memstore_bytes(m);
	is_int(bytes0, 0, "memstore_bytes of a new memstore is 0");
	it = memstore_iter(m);
	iter_seek_first(it);
	ok(!iter_valid(it) && iter_status(it) == CF_OK,
	   "an empty memstore iterates nothing, status OK");
	iter_seek(it, keys[0].p, keys[0].n);
	ok(!iter_valid(it), "and seeks to nothing");
	iter_destroy(it);

	{
		size_t prev = bytes0, shrank = 0;
		for (size_t i = 0; i < NKEYS && !rc; i++) {
			unsigned char v[64];
			payload += keys[i].n + value_of(keys[i].p, keys[i].n, v);
			rc = add_ekey(m, &keys[i]);
			if (memstore_bytes(m) < prev)
				shrank++;
			prev = memstore_bytes(m);
		}
		is_int(rc, CF_OK, "%d random keys added", NKEYS);
		is_int(shrank, 0, "memstore_bytes never shrinks while adding");
	}
	is_int(memstore_count(m), NKEYS, "memstore_count");
	is_int(memstore_min_seq(m), minseq, "memstore_min_seq");
	is_int(memstore_max_seq(m), maxseq, "memstore_max_seq");
	ok(memstore_bytes(m) >= payload && memstore_bytes(m) < payload * 4,
	   "memstore_bytes %zu covers the %zu key and value bytes, not much "
	   "more", memstore_bytes(m), payload);

	memcpy(sorted, keys, NKEYS * sizeof *keys);
	qsort(sorted, NKEYS, sizeof *sorted, cmp_ekey);
	for (size_t i = 1; i < NKEYS; i++)
		if (!field_order_ok(&sorted[i - 1], &sorted[i]))
			badfield++;
	is_int(badfield, 0, "the reference order is key.h's field order");

	it = memstore_iter(m);
	if (!it)
		bail("memstore_iter");
	n = walk_all(it, sorted, NKEYS, &bad);
	is_int(n, NKEYS, "iteration yields every entry once");
	is_int(bad, 0, "in ikey_cmp order, each with its own value");
	is_int(iter_status(it), CF_OK, "status OK at the end");

	/* seek to every 100th key, then step a little */
	bad = 0;
	for (size_t i = 0; i < NKEYS; i += 100) {
		iter_seek(it, sorted[i].p, sorted[i].n);
		for (size_t j = i; j < i + 3 && j < NKEYS; j++) {
			if (!at(it, &sorted[j]))
				bad++;
			iter_next(it);
		}
	}
	is_int(bad, 0, "seek to each 100th key lands on it, next follows");

	/* a key just after sorted[i]: same column and ts, seqtype one less
	 * (types are even or 14, so type - 1 names no key of the set) */
	bad = 0;
	for (size_t i = 0; i < NKEYS; i += 100) {
		unsigned char probe[512];
		size_t pn = sorted[i].n;
		memcpy(probe, sorted[i].p, pn);
		probe[pn - 1]--;
		iter_seek(it, probe, pn);
		if (i + 1 < NKEYS ? !at(it, &sorted[i + 1]) : iter_valid(it))
			bad++;
		/* and one just before: seqtype one more */
		probe[pn - 1] += 2;
		iter_seek(it, probe, pn);
		if (!at(it, &sorted[i]))
			bad++;
	}
	is_int(bad, 0, "seek between two keys lands on the next one");

	/* random probes, most not in the set */
	bad = 0;
	for (int i = 0; i < 20000; i++) {
		struct ikey k;
		struct ekey e;
		size_t lb;
		random_ikey(&s, rnd(&s) % (maxseq + 10), &k, row, fam, qual);
		e = encode(&k);
		lb = lower_bound(sorted, NKEYS, e.p, e.n);
		iter_seek(it, e.p, e.n);
		if (lb == NKEYS ? iter_valid(it) : !at(it, &sorted[lb]))
			bad++;
		free(e.p);
	}
	is_int(bad, 0, "20000 random seeks agree with a binary search");

	/* past the end and before the start */
	{
		unsigned char hirow[8], buf[8 + KEY_OVERHEAD];
		struct ikey k = { 0 };
		size_t bn;
		memset(hirow, 0xff, sizeof hirow);
		k.row = hirow;
		k.rowlen = sizeof hirow;
		k.ts = INT64_MIN;
		bn = ikey_encode(buf, &k);
		iter_seek(it, buf, bn);
		ok(!iter_valid(it) && iter_status(it) == CF_OK,
		   "seek past the last key: invalid, status OK");
		k.row = NULL;
		k.rowlen = 0;
		k.ts = INT64_MAX;
		k.seq = SEQ_MAX;
		k.type = 0xff;
		bn = ikey_encode(buf, &k);
		iter_seek(it, buf, bn);
		ok(at(it, &sorted[0]), "seek before the first key: the first");
	}
	iter_destroy(it);
	memstore_unref(m);

	for (size_t i = 0; i < NKEYS; i++)
		free(keys[i].p);
	free(keys);
	free(sorted);
}

/* --- values of every size ---------------------------------------------- */

/*
 * The writer's finger (memstore_add inserts a key that falls right after
 * the last one without a search): keys inserted in runs that ascend,
 * descend, skip ahead and jump back, interleaved, must still iterate in
 * order, each once.
 */
static void test_runs(void)
{
	enum { N = 60000 };
	struct ekey *sorted = malloc(N * sizeof *sorted);
	size_t *order = malloc(N * sizeof *order);
	unsigned char row[400], fam[4], qual[4];
	uint64_t s = seed ^ 0x5eed;
	size_t n = 0, bad = 0, done = 0;
	struct memstore *m;
	struct iter *it;
	int rc = 0;

	if (!sorted || !order)
		bail("out of memory");
	for (size_t i = 0; i < N; i++) {
		struct ikey k;
		random_ikey(&s, 100 + i, &k, row, fam, qual);
		sorted[i] = encode(&k);
	}
	qsort(sorted, N, sizeof *sorted, cmp_ekey);
	/* blocks of the sorted keys, each inserted ascending, descending,
	 * every other key then the rest, or shuffled; blocks in random
	 * order */
	{
		size_t nb = 0, starts[N / 8 + 2];
		for (size_t i = 0; i < N; i += 1 + rnd(&s) % 15)
			starts[nb++] = i;
		starts[nb] = N;
		for (size_t b = 0; b < nb; b++)
			order[b] = b;
		for (size_t b = nb - 1; b > 0; b--) {
			size_t j = rnd(&s) % (b + 1), t = order[b];
			order[b] = order[j];
			order[j] = t;
		}
		is_int(memstore_new(&m), CF_OK, "memstore_new");
		for (size_t bi = 0; bi < nb && !rc; bi++) {
			size_t b = order[bi], lo = starts[b], hi = starts[b + 1];
			int how = (int)(rnd(&s) % 4);
			size_t cnt = hi - lo, idx[16];
			for (size_t i = 0; i < cnt; i++)
				idx[i] = how == 0 ? lo + i
				       : how == 1 ? hi - 1 - i
				       : 2 * i < cnt ? lo + 2 * i
				       : lo + 2 * (i - (cnt + 1) / 2) + 1;
			for (size_t i = cnt; how == 3 && i > 1; i--) {
				size_t j = rnd(&s) % i, t = idx[i - 1];
				idx[i - 1] = idx[j];
				idx[j] = t;
			}
			for (size_t i = 0; i < cnt && !rc; i++) {
				rc = add_ekey(m, &sorted[idx[i]]);
				done++;
			}
		}
	}
	is_int(rc, CF_OK, "%zu keys added in runs", done);
	is_int(memstore_count(m), N, "memstore_count");
	it = memstore_iter(m);
	n = walk_all(it, sorted, N, &bad);
	is_int(n, N, "iteration yields every entry once");
	is_int(bad, 0, "in order, each with its own value");
	iter_destroy(it);
	memstore_unref(m);
	for (size_t i = 0; i < N; i++)
		free(sorted[i].p);
	free(sorted);
	free(order);
}

static void test_values(void)
{
	static const size_t sizes[] = {
		0, 1, 7, 100, 4095, 4096, 65536, (256u << 10) + 1, 1u << 20,
		(1u << 20) - 1, 3, 0
	};
	enum { N = sizeof sizes / sizeof *sizes };
	unsigned char *vals[N];
	struct memstore *m;
	struct iter *it;
	size_t total = 0, n = 0, bad = 0;

	if (memstore_new(&m))
		bail("memstore_new");
	for (size_t i = 0; i < N; i++) {
		uint64_t s = seed + i;
		unsigned char row[4] = { 'r', (unsigned char)('a' + i), 0, 0 };
		struct ikey k = { row, 2, (const unsigned char *)"f", 1,
				  (const unsigned char *)"q", 1, 0,
				  (uint64_t)i + 1, KT_PUT };
		vals[i] = malloc(sizes[i] ? sizes[i] : 1);
		for (size_t j = 0; j < sizes[i]; j++)
			vals[i][j] = (unsigned char)rnd(&s);
		if (memstore_add(m, &k, sizes[i] ? vals[i] : NULL, sizes[i]))
			bail("memstore_add of %zu bytes", sizes[i]);
		total += sizes[i];
	}
	ok(memstore_bytes(m) >= total, "memstore_bytes %zu >= %zu value bytes",
	   memstore_bytes(m), total);
	it = memstore_iter(m);
	for (iter_seek_first(it); iter_valid(it); iter_next(it), n++) {
		size_t vn;
		const unsigned char *v = iter_value(it, &vn);
		if (n >= N || vn != sizes[n] || (vn && memcmp(v, vals[n], vn)))
			bad++;
	}
	is_int(n, N, "every value back");
	is_int(bad, 0, "values of 0 bytes to 1 MiB round-trip exactly");
	iter_destroy(it);
	memstore_unref(m);
	for (size_t i = 0; i < N; i++)
		free(vals[i]);
}

/* --- references ------------------------------------------------------- */

static void test_refs(void)
{
	struct memstore *m;
	struct iter *it, *it2;
	size_t n = 0;

	if (memstore_new(&m))
		bail("memstore_new");
	for (int i = 0; i < 1000; i++) {
		unsigned char row[4];
		struct ikey k = { row, 4, (const unsigned char *)"f", 1,
				  NULL, 0, i, (uint64_t)i + 1, KT_PUT };
		row[0] = (unsigned char)(i >> 8);
		row[1] = (unsigned char)i;
		row[2] = row[3] = 'x';
		memstore_add(m, &k, row, 4);
	}
	it = memstore_iter(m);
	it2 = memstore_iter(m);
	memstore_ref(m);
	memstore_unref(m);
	memstore_unref(m);	/* the creator's reference: the iterators keep it */
	for (iter_seek_first(it); iter_valid(it); iter_next(it)) {
		size_t kn, vn;
		const unsigned char *k = iter_key(it, &kn);
		const unsigned char *v = iter_value(it, &vn);
		if (vn == 4 && k[2] == v[0] && k[3] == v[1])
			n++;
	}
	is_int(n, 1000, "an iterator keeps its memstore alive after the "
	       "creator's unref");
	iter_destroy(it);
	iter_seek_first(it2);
	ok(iter_valid(it2), "so does a second one after the first is gone");
	iter_destroy(it2);	/* the last reference: ASan sees any leak */
	memstore_unref(NULL);
	ok(1, "memstore_unref(NULL) is a no-op");
}

/* --- one writer, three readers ---------------------------------------- */

/* Under TSan the writer alone takes seconds for 200k keys, and races
 * show up as well with half as many. */
#if defined(__SANITIZE_THREAD__)
#define CONC_KEYS 100000
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CONC_KEYS 100000
#endif
#endif
#ifndef CONC_KEYS
#define CONC_KEYS 200000
#endif
#define READERS 3

struct shared {
	struct memstore *m;
	struct ekey *keys;
	atomic_int done;
};

struct reader {
	struct shared *sh;
	uint64_t seed;
	long passes, seeks, bad_order, bad_value, short_pass, final_n;
};

static void *writer_main(void *arg)
{
	struct shared *sh = arg;

	for (size_t i = 0; i < CONC_KEYS; i++)
		if (add_ekey(sh->m, &sh->keys[i]))
			bail("memstore_add in the writer");
	atomic_store(&sh->done, 1);
	return NULL;
}

/* A pass over at most max entries from the first key, or from key
 * `from` (which must be found): checks order and values; returns the
 * entries seen. */
static long reader_pass(struct reader *rd, struct iter *it,
			const struct ekey *from, long max)
{
	unsigned char prev[600];
	size_t pn = 0;
	long n = 0;

	if (from) {
		iter_seek(it, from->p, from->n);
		if (!at(it, from))
			rd->bad_value++;
	} else {
		iter_seek_first(it);
	}
	for (; n < max && iter_valid(it); iter_next(it)) {
		size_t kn, vn;
		const unsigned char *k = iter_key(it, &kn);
		const unsigned char *v = iter_value(it, &vn);
		if (n && ikey_cmp(prev, pn, k, kn) >= 0)
			rd->bad_order++;
		if (!value_ok(k, kn, v, vn))
			rd->bad_value++;
		if (kn <= sizeof prev) {
			memcpy(prev, k, kn);
			pn = kn;
		}
		n++;
	}
	return n;
}

static void *reader_main(void *arg)
{
	struct reader *rd = arg;
	struct shared *sh = rd->sh;
	struct iter *it = memstore_iter(sh->m);
	uint64_t s = rd->seed;

	if (!it)
		bail("memstore_iter");
	while (!atomic_load(&sh->done)) {
		uint64_t before = memstore_count(sh->m);
		long n;
		/* every 8th pass whole, the others a window of 1000 entries
		 * from a random key, so the writer is not starved of CPU */
		if (rd->passes % 8 == 0) {
			n = reader_pass(rd, it, NULL, LONG_MAX);
			/* an entry is visible once memstore_add returns, and
			 * the count goes up only after that */
			if ((uint64_t)n < before)
				rd->short_pass++;
		} else if (before) {
			n = reader_pass(rd, it, &sh->keys[rnd(&s) % before],
					1000);
		} else {
			n = 0;
		}
		rd->passes++;
		if (n == 0)
			sched_yield();	/* the writer has not begun */
		/* seeks to keys already added must find them */
		for (int j = 0; j < 50; j++) {
			uint64_t c = memstore_count(sh->m);
			size_t i;
			if (!c)
				break;
			i = rnd(&s) % c;
			iter_seek(it, sh->keys[i].p, sh->keys[i].n);
			if (!at(it, &sh->keys[i]))
				rd->bad_value++;
			rd->seeks++;
		}
	}
	rd->final_n = reader_pass(rd, it, NULL, LONG_MAX);
	iter_destroy(it);
	return NULL;
}

static void test_concurrent(void)
{
	struct shared sh;
	struct reader rd[READERS];
	pthread_t wt, rt[READERS];
	unsigned char row[400], fam[4], qual[4];
	uint64_t s = seed ^ 0x5555;
	long passes = 0, seeks = 0, bad_order = 0, bad_value = 0, shorts = 0;
	int finals = 0;

	sh.keys = malloc(CONC_KEYS * sizeof *sh.keys);
	if (!sh.keys || memstore_new(&sh.m))
		bail("setup");
	atomic_init(&sh.done, 0);
	/* ascending seqs, random columns: the writer adds them in order, so
	 * the first c keys are exactly those a count of c has seen */
	for (size_t i = 0; i < CONC_KEYS; i++) {
		struct ikey k;
		random_ikey(&s, i + 1, &k, row, fam, qual);
		sh.keys[i] = encode(&k);
	}
	for (int i = 0; i < READERS; i++) {
		memset(&rd[i], 0, sizeof rd[i]);
		rd[i].sh = &sh;
		rd[i].seed = seed + 17 * (uint64_t)i;
		pthread_create(&rt[i], NULL, reader_main, &rd[i]);
	}
	pthread_create(&wt, NULL, writer_main, &sh);
	pthread_join(wt, NULL);
	for (int i = 0; i < READERS; i++) {
		pthread_join(rt[i], NULL);
		passes += rd[i].passes;
		seeks += rd[i].seeks;
		bad_order += rd[i].bad_order;
		bad_value += rd[i].bad_value;
		shorts += rd[i].short_pass;
		finals += rd[i].final_n == CONC_KEYS;
	}
	diag("%ld reader passes, %ld seeks during %d inserts", passes, seeks,
	     CONC_KEYS);
	is_int(memstore_count(sh.m), CONC_KEYS, "the writer added %d keys",
	       CONC_KEYS);
	ok(passes > 0, "readers iterated while it wrote (%ld passes)", passes);
	is_int(bad_order, 0, "readers always saw strictly increasing keys");
	is_int(bad_value, 0, "every value matched its key, every seek found "
	       "its key");
	is_int(shorts, 0, "no pass missed an entry counted before it began");
	is_int(finals, READERS, "after the writer, each reader sees all %d",
	       CONC_KEYS);
	memstore_unref(sh.m);
	for (size_t i = 0; i < CONC_KEYS; i++)
		free(sh.keys[i].p);
	free(sh.keys);
}

/* --- the arena ----------------------------------------------------------- */

static void test_arena(void)
{
	struct arena *a = arena_new();
	unsigned char *p[64], *big, *after;
	size_t used = 0, misaligned = 0, overlap = 0;

	if (!a)
		bail("arena_new");
	is_int(arena_used(a), 0, "a new arena has used nothing");
	is_int(arena_reserved(a), 0, "and reserved nothing");
	for (size_t i = 0; i < 64; i++) {
		p[i] = arena_alloc(a, i);
		if (!p[i])
			bail("arena_alloc");
		if ((uintptr_t)p[i] % 8)
			misaligned++;
		memset(p[i], (int)i, i);
		used += i ? (i + 7) / 8 * 8 : 8;
	}
	for (size_t i = 0; i < 64; i++)
		for (size_t j = 0; j < i; j++)
			if (p[i][j] != (unsigned char)i)
				overlap++;
	is_int(misaligned, 0, "allocations are 8-byte aligned");
	ok(p[0] != p[1], "a 0-byte allocation is a distinct pointer");
	is_int(overlap, 0, "and do not overlap");
	is_int(arena_used(a), used, "arena_used counts rounded sizes");
	ok(arena_reserved(a) >= (1u << 20) && arena_reserved(a) < (2u << 20),
	   "small allocations share one 1 MiB block (%zu reserved)",
	   arena_reserved(a));

	/* a large request gets its own block; the current one keeps filling */
	big = arena_alloc(a, 3u << 20);
	after = arena_alloc(a, 8);
	ok(big && after && after == p[63] + 64,
	   "a 3 MiB request has a block of its own, the next small one "
	   "follows the last small one");
	memset(big, 0xab, 3u << 20);
	is_int(arena_used(a), used + (3u << 20) + 8, "arena_used adds it");
	ok(arena_reserved(a) >= (4u << 20) && arena_reserved(a) < (5u << 20),
	   "reserved: the shared block plus 3 MiB (%zu)", arena_reserved(a));
	for (int i = 0; i < 200; i++)
		if (!arena_alloc(a, 100000))
			bail("arena_alloc");
	ok(arena_reserved(a) < arena_used(a) + (2u << 20),
	   "filling blocks wastes less than a block (%zu used, %zu "
	   "reserved)", arena_used(a), arena_reserved(a));
	ok(arena_alloc(a, SIZE_MAX - 3) == NULL,
	   "an impossible size is refused, not wrapped");
	arena_free(a);
	arena_free(NULL);
	ok(1, "arena_free(NULL) is a no-op");

	/* a large request first, with nothing to keep filling */
	a = arena_new();
	big = arena_alloc(a, 1u << 20);
	after = arena_alloc(a, 16);
	ok(big && after && (after < big || after >= big + (1u << 20)),
	   "a large first request, then a small one elsewhere");
	arena_free(a);

	/* the block pool: a freed arena's mapped blocks serve the next
	 * arena (engine/arena.c), which sees its own bytes only */
	{
		struct arena *a1 = arena_new(), *a2 = arena_new();
		unsigned char *first = NULL, *second = NULL, *q;
		size_t bad = 0;

		if (!a1 || !a2)
			bail("arena_new");
		/* the first block comes from malloc (or from the pool, when
		 * earlier tests left blocks there); the second is mapped */
		for (int i = 0; i < 40; i++) {
			q = arena_alloc(a1, 50000);
			if (!q)
				bail("arena_alloc");
			if (i == 0)
				first = q;
			if (i == 20)	/* 20 * 50000 bytes fill the first */
				second = q;
			memset(q, 0x5a, 50000);
		}
		size_t pooled = arena_pool_bytes();
		arena_free(a1);
		size_t after_free = arena_pool_bytes();
		q = arena_alloc(a2, 1000);
		if (!q)
			bail("arena_alloc");
#if defined(__SANITIZE_ADDRESS__)
		ok(1, "# SKIP AddressSanitizer builds keep no pool");
		ok(1, "# SKIP AddressSanitizer builds keep no pool");
		(void)first;
		(void)second;
		(void)pooled;
		(void)after_free;
#else
		ok(after_free >= pooled + (1u << 20), "a freed arena's mapped "
		   "blocks go to the pool (%zu -> %zu bytes)", pooled,
		   after_free);
		ok(arena_pool_bytes() < after_free &&
		   (q == first || q == second), "a new arena takes its first "
		   "block from it: the oldest of the freed arena's");
#endif
		unsigned char *r[60];
		memset(q, 0xee, 1000);
		for (int i = 0; i < 60; i++) {
			if (!(r[i] = arena_alloc(a2, 40000)))
				bail("arena_alloc");
			memset(r[i], i, 40000);
		}
		for (int i = 0; i < 60; i++)
			for (size_t j = 0; j < 40000; j++)
				bad += r[i][j] != (unsigned char)i;
		for (size_t i = 0; i < 1000; i++)
			bad += q[i] != 0xee;
		is_int(bad, 0, "pooled and fresh blocks (2.4 MB) do not "
		       "overlap");
		arena_free(a2);
	}
}

/* --- throughput (diag only) -------------------------------------------- */

/* Sanitizers slow everything down; keep the test under its time budget. */
#if defined(__SANITIZE_THREAD__)
#define BENCH_KEYS 50000
#elif defined(__SANITIZE_ADDRESS__)
#define BENCH_KEYS 200000
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BENCH_KEYS 50000
#elif __has_feature(address_sanitizer)
#define BENCH_KEYS 200000
#endif
#endif
#ifndef BENCH_KEYS
#define BENCH_KEYS 1000000
#endif

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Key i of the benchmark: a 16-byte row (random bytes, or db_bench's
 * zero-padded decimal of a random number below the key count, which
 * share their first 8 bytes, or i in big-endian hex), family "f",
 * qualifier "q". */
static void bench_key(unsigned char *rows, size_t i, struct ikey *k)
{
	k->row = rows + i * 16;
	k->rowlen = 16;
	k->fam = (const unsigned char *)"f";
	k->famlen = 1;
	k->qual = (const unsigned char *)"q";
	k->qlen = 1;
	k->ts = 1700000000000;
	k->seq = i + 1;
	k->type = KT_PUT;
}

enum { B_RANDOM, B_DECIMAL, B_SEQ };

static void bench_one(int shape)
{
	unsigned char *rows = malloc((size_t)BENCH_KEYS * 16);
	unsigned char val[100], kb[64];
	uint64_t s = seed ^ 0xbe7c4;
	struct memstore *m;
	struct iter *it;
	double t0, t1, t2, t3;
	size_t n = 0, found = 0;
	const char *what = shape == B_RANDOM ? "random"
			 : shape == B_DECIMAL ? "random decimal" : "sequential";

	if (!rows || memstore_new(&m))
		bail("setup");
	for (size_t i = 0; i < BENCH_KEYS; i++) {
		if (shape == B_RANDOM) {
			uint64_t a = rnd(&s), b = rnd(&s);
			memcpy(rows + i * 16, &a, 8);
			memcpy(rows + i * 16 + 8, &b, 8);
		} else if (shape == B_DECIMAL) {
			char dec[17];
			snprintf(dec, sizeof dec, "%016llu",
				 (unsigned long long)(rnd(&s) % BENCH_KEYS));
			memcpy(rows + i * 16, dec, 16);
		} else {
			char hex[17];
			snprintf(hex, sizeof hex, "%016zx", i);
			memcpy(rows + i * 16, hex, 16);
		}
	}
	memset(val, 'v', sizeof val);

	t0 = now_s();
	for (size_t i = 0; i < BENCH_KEYS; i++) {
		struct ikey k;
		bench_key(rows, i, &k);
		if (memstore_add(m, &k, val, sizeof val))
			bail("memstore_add");
	}
	t1 = now_s();

	it = memstore_iter(m);
	for (size_t i = 0; i < BENCH_KEYS; i++) {
		struct ikey k;
		size_t j = rnd(&s) % BENCH_KEYS, kn;
		bench_key(rows, j, &k);
		kn = ikey_encode(kb, &k);
		iter_seek(it, kb, kn);
		if (iter_valid(it)) {
			size_t gn;
			const unsigned char *g = iter_key(it, &gn);
			found += gn == kn && !memcmp(g, kb, kn);
		}
	}
	t2 = now_s();
	for (iter_seek_first(it); iter_valid(it); iter_next(it))
		n++;
	t3 = now_s();

	diag("%s: %d inserts of 16-byte rows, 100-byte values in %.3f s, "
	     "%.0f inserts/s; %.0f seeks/s; %.0f entries/s iterated; %zu "
	     "bytes", what, BENCH_KEYS, t1 - t0, BENCH_KEYS / (t1 - t0),
	     BENCH_KEYS / (t2 - t1), n / (t3 - t2), memstore_bytes(m));
	ok(n == BENCH_KEYS && found == BENCH_KEYS &&
	   memstore_count(m) == BENCH_KEYS,
	   "%s benchmark: all %d keys stored, every seek found its key",
	   what, BENCH_KEYS);
	iter_destroy(it);
	memstore_unref(m);
	free(rows);
}

static void test_bench(void)
{
	bench_one(B_RANDOM);
	bench_one(B_DECIMAL);
	bench_one(B_SEQ);
}

/* --- the row filter ------------------------------------------------- */

/* Adds one cell of row "row%08u" (seq) to m. */
static void add_row(struct memstore *m, uint32_t r, uint64_t seq)
{
	char row[16];
	struct ikey k = { NULL, 0, (const unsigned char *)"f", 1,
			  (const unsigned char *)"q", 1, 0, seq, KT_PUT };

	k.rowlen = (size_t)snprintf(row, sizeof row, "row%08u", r);
	k.row = (const unsigned char *)row;
	if (memstore_add(m, &k, "v", 1))
		bail("memstore_add");
}

static int has_row(const struct memstore *m, uint32_t r)
{
	char row[16];
	int n = snprintf(row, sizeof row, "row%08u", r);

	return memstore_may_have_row(m, row, (size_t)n);
}

/* Rows 2i are added, 2i + 1 never: no added row is ever said absent,
 * before the filter is built (at 4096 entries), across the build and
 * after; absent rows are mostly said absent once it exists; a memstore
 * told no size keeps none. */
static void test_filter(void)
{
	enum { N = 20000 };
	struct memstore *m, *plain;
	size_t missed = 0, fp = 0, early = 0;

	if (memstore_new(&m) || memstore_new(&plain))
		bail("memstore_new");
	memstore_expect(m, 4u << 20);
	for (uint32_t i = 0; i < N; i++) {
		add_row(m, 2 * i, i + 1);
		add_row(plain, 2 * i, i + 1);
		if (i == 100)
			early = has_row(m, 1) + has_row(m, 3) + has_row(m, 5);
		/* every row added so far, now and then */
		if (i % 997 == 0)
			for (uint32_t j = 0; j <= i; j++)
				missed += !has_row(m, 2 * j);
	}
	add_row(m, 0, N + 1);	/* a second cell of a row */
	for (uint32_t j = 0; j < N; j++)
		missed += !has_row(m, 2 * j);
	is_int(missed, 0, "no row added is ever said absent");
	is_int(early, 3, "under 4096 entries no filter: every row maybe");
	for (uint32_t j = 0; j < N; j++)
		fp += has_row(m, 2 * j + 1);
	ok(fp < N / 20, "absent rows said maybe: %zu of %d (under 5%%)", fp,
	   N);
	is_int(has_row(plain, 1) + has_row(plain, 3), 2,
	       "no memstore_expect: no filter");
	memstore_unref(m);
	memstore_unref(plain);

	/* no Get asked: no filter (writes pay nothing for it), until one
	 * asks; the writer then files every row already there */
	if (memstore_new(&m))
		bail("memstore_new");
	memstore_expect(m, 4u << 20);
	for (uint32_t i = 0; i < N; i++)
		add_row(m, 2 * i, i + 1);
	fp = 0;
	for (uint32_t j = 0; j < 100; j++)
		fp += has_row(m, 2 * j + 1);
	is_int(fp, 100, "20000 entries, no Get asked before: no filter yet");
	add_row(m, 2 * N, N + 1);
	missed = fp = 0;
	for (uint32_t j = 0; j <= N; j++)
		missed += !has_row(m, 2 * j);
	for (uint32_t j = 0; j < N; j++)
		fp += has_row(m, 2 * j + 1);
	ok(missed == 0 && fp < N / 20,
	   "the next add builds it over every row (%zu missed, %zu of %d "
	   "absent said maybe)", missed, fp, N);
	memstore_unref(m);
}

/* A writer adds rows in random order and publishes how many (release,
 * as the write leader publishes last_seq); readers ask for rows already
 * published (acquire): never absent.  Run under TSan by make
 * check-thread. */
static struct memstore *fm;
static uint32_t *forder;
static atomic_uint fdone;
static atomic_int fstop;
static atomic_size_t fmissed;

static void *filter_reader(void *arg)
{
	uint64_t s = (uint64_t)(uintptr_t)arg;

	while (!atomic_load_explicit(&fstop, memory_order_relaxed)) {
		unsigned n = atomic_load_explicit(&fdone, memory_order_acquire);
		if (!n)
			continue;
		if (!has_row(fm, forder[rnd(&s) % n]))
			atomic_fetch_add(&fmissed, 1);
	}
	return NULL;
}

static void test_filter_concurrent(void)
{
	enum { N = 30000 };
	pthread_t th[2];
	uint64_t s = seed;

	forder = malloc(N * sizeof *forder);
	if (!forder || memstore_new(&fm))
		bail("setup");
	memstore_expect(fm, 2u << 20);
	for (uint32_t i = 0; i < N; i++)
		forder[i] = i;
	for (uint32_t i = N - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(rnd(&s) % (i + 1)), t = forder[i];
		forder[i] = forder[j];
		forder[j] = t;
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, filter_reader,
			       (void *)(uintptr_t)(seed + 1 + (uint64_t)i));
	for (uint32_t i = 0; i < N; i++) {
		add_row(fm, forder[i], i + 1);
		atomic_store_explicit(&fdone, i + 1, memory_order_release);
	}
	atomic_store(&fstop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	is_int(atomic_load(&fmissed), 0,
	       "concurrent readers never miss a published row");
	memstore_unref(fm);
	free(forder);
}

int main(void)
{
	const char *s = getenv("CF_SEED");

	seed = s ? strtoull(s, NULL, 0) : 20261122;
	diag("seed %llu (set CF_SEED to change)", (unsigned long long)seed);
	test_bytes_equal();
	test_order();
	test_runs();
	test_values();
	test_refs();
	test_concurrent();
	test_filter();
	test_filter_concurrent();
	test_arena();
	test_bench();
	return done_testing();
}
