/*
 * test-cache.c: the block cache (engine/cache.h): LRU order, capacity,
 * the two priorities, handles keeping entries alive, replacement,
 * erase_file, counters, the table against a model, and lookups/inserts
 * from 4 threads (also run this one under -fsanitize=thread).
 *
 * Caches under 1 MiB have one shard, so small tests see one exact LRU.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cache.h"
#include "tests/tap.h"
#include "util/err.h"

/* Values are small ints boxed in malloc'd memory; the deleter logs them
 * so tests can see exactly which entries were freed and in what order. */
static int deleted[1024];
static int ndeleted;

static void del(void *v)
{
	if (ndeleted < 1024)
		deleted[ndeleted++] = *(int *)v;
	free(v);
}

static int *box(int v)
{
	int *p = malloc(sizeof *p);
	if (!p)
		bail("out of memory");
	*p = v;
	return p;
}

static void put(struct cache *c, uint64_t file, uint64_t off, int v,
		size_t charge, int high)
{
	struct cache_handle *h = cache_insert(c, file, off, box(v), charge,
					      high, del);
	if (!h)
		bail("insert failed");
	cache_release(c, h);
}

/* The value at (file, off), or -1 on a miss. */
static int get(struct cache *c, uint64_t file, uint64_t off)
{
	struct cache_handle *h = cache_lookup(c, file, off);
	int v;

	if (!h)
		return -1;
	v = *(int *)cache_value(h);
	cache_release(c, h);
	return v;
}

static struct cache *fresh(size_t capacity)
{
	struct cache *c;

	ndeleted = 0;
	if (cache_new(capacity, &c))
		bail("cache_new failed");
	return c;
}

static void test_basic(void)
{
	struct cache *c = fresh(1000);

	is_int(get(c, 1, 0), -1, "empty cache misses");
	put(c, 1, 0, 10, 100, 0);
	put(c, 1, 4096, 11, 100, 0);
	put(c, 2, 0, 20, 100, 0);
	is_int(get(c, 1, 0), 10, "(1,0) found");
	is_int(get(c, 1, 4096), 11, "(1,4096) found");
	is_int(get(c, 2, 0), 20, "(2,0) found: file is part of the key");
	is_int(get(c, 2, 4096), -1, "(2,4096) misses");
	is_int(cache_hits(c), 3, "3 hits counted");
	is_int(cache_misses(c), 2, "2 misses counted");
	is_int(cache_usage(c), 300, "usage is the sum of charges");
	is_int(ndeleted, 0, "nothing freed yet");
	cache_free(c);
	is_int(ndeleted, 3, "cache_free frees every entry");
}

static void test_lru(void)
{
	struct cache *c = fresh(100);
	int missing = 0;

	for (int i = 0; i < 10; i++)
		put(c, 1, (uint64_t)i, i, 10, 0);
	is_int(cache_usage(c), 100, "full at capacity, nothing evicted");
	is_int(ndeleted, 0, "no deletions at capacity");
	is_int(get(c, 1, 0), 0, "touch entry 0");
	put(c, 1, 10, 10, 10, 0);
	is_int(ndeleted, 1, "one entry evicted by the 11th insert");
	is_int(deleted[0], 1, "the least recently used one (1, not 0)");
	put(c, 1, 11, 11, 10, 0);
	is_int(deleted[1], 2, "then entry 2");
	is_int(get(c, 1, 0), 0, "entry 0 survived");
	for (int i = 1; i < 3; i++)
		missing += get(c, 1, (uint64_t)i) == -1;
	is_int(missing, 2, "entries 1 and 2 are gone");
	put(c, 1, 12, 12, 35, 0);
	is_int(ndeleted, 6, "a charge of 35 evicts four entries of 10");
	is_int(deleted[2] * 1000 + deleted[3] * 100 + deleted[4] * 10 +
	       deleted[5], 3456, "in LRU order 3, 4, 5, 6");
	is_int(cache_usage(c), 95, "usage after the big insert");
	cache_free(c);
}

static void test_priorities(void)
{
	struct cache *c = fresh(100);
	int lost = 0;

	/* 4 high (40) + 6 low (60): more low inserts evict only low */
	for (int i = 0; i < 4; i++)
		put(c, 1, (uint64_t)i, i, 10, 1);
	for (int i = 0; i < 6; i++)
		put(c, 2, (uint64_t)i, 100 + i, 10, 0);
	for (int i = 6; i < 30; i++)
		put(c, 2, (uint64_t)i, 100 + i, 10, 0);
	for (int i = 0; i < 4; i++)
		lost += get(c, 1, (uint64_t)i) == -1;
	is_int(lost, 0, "high-priority entries outlive newer normal ones");
	is_int(ndeleted, 24, "24 normal entries evicted");
	is_int(deleted[0], 100, "oldest normal first");

	/* high grows to 60 of 100: past its half, its oldest goes first */
	put(c, 1, 4, 4, 10, 1);
	put(c, 1, 5, 5, 10, 1);
	is_int(ndeleted, 26, "two more evictions");
	is_int(deleted[24], 124, "while high <= half: a normal entry");
	is_int(deleted[25], 0, "high over half: the oldest high entry");
	is_int(get(c, 1, 0), -1, "high entry 0 is gone");
	is_int(get(c, 1, 1), 1, "high entry 1 is kept");
	cache_free(c);

	/* alone, high-priority entries may fill the whole cache */
	c = fresh(100);
	for (int i = 0; i < 10; i++)
		put(c, 1, (uint64_t)i, i, 10, 1);
	is_int(ndeleted, 0, "ten high entries fill the cache");
	is_int(cache_usage(c), 100, "usage 100");
	put(c, 1, 10, 10, 10, 1);
	is_int(ndeleted, 1, "the eleventh evicts one");
	is_int(deleted[0], 0, "the oldest high entry");
	/* with high over its half, even a normal insert pushes out the
	 * oldest high entry */
	put(c, 2, 0, 200, 10, 0);
	is_int(deleted[1], 1, "high over half yields its oldest to normal");
	is_int(get(c, 2, 0), 200, "the normal entry is in");
	cache_free(c);
}

static void test_refs(void)
{
	struct cache *c = fresh(100);
	struct cache_handle *h, *h2;

	h = cache_insert(c, 1, 0, box(7), 10, 0, del);
	for (int i = 1; i <= 20; i++)
		put(c, 1, (uint64_t)i, i, 10, 0);
	is_int(*(int *)cache_value(h), 7, "held entry still readable");
	h2 = cache_lookup(c, 1, 0);
	ok(h2 == h, "held entry still findable after 20 inserts");
	cache_release(c, h2);
	is_int(cache_usage(c), 100, "usage counts the held entry");
	cache_release(c, h);
	is_int(get(c, 1, 0), 7, "released entry stays while it fits");
	put(c, 1, 21, 21, 10, 0);
	put(c, 1, 22, 22, 10, 0);
	is_int(get(c, 1, 0), 7, "recently used: survives two inserts");

	/* replacement while held: old value lives until released */
	ndeleted = 0;
	h = cache_lookup(c, 1, 0);
	put(c, 1, 0, 8, 10, 0);
	is_int(*(int *)cache_value(h), 7, "old value readable after replace");
	is_int(get(c, 1, 0), 8, "lookups see the new value");
	is_int(ndeleted, 0, "old value not freed while held");
	cache_release(c, h);
	is_int(ndeleted, 1, "old value freed at release");
	is_int(deleted[0], 7, "it was the old one");
	is_int(cache_usage(c), 100, "replaced entry's charge not counted");

	/* over capacity while held: released entry goes at once */
	ndeleted = 0;
	h = cache_insert(c, 9, 0, box(900), 60, 0, del);
	is_int(ndeleted, 6, "a held 60 evicts six unheld 10s");
	h2 = cache_insert(c, 9, 1, box(901), 60, 0, del);
	is_int(cache_usage(c), 120, "two held entries exceed capacity");
	cache_release(c, h);
	is_int(get(c, 9, 0), -1, "over capacity: released entry evicted");
	cache_release(c, h2);
	is_int(cache_usage(c), 60, "back under capacity");
	cache_free(c);

	/* capacity 0: nothing stays */
	c = fresh(0);
	h = cache_insert(c, 1, 0, box(1), 10, 0, del);
	ok(h != NULL, "capacity 0 still returns a handle");
	is_int(*(int *)cache_value(h), 1, "and its value");
	cache_release(c, h);
	is_int(ndeleted, 1, "freed at release");
	is_int(get(c, 1, 0), -1, "and not cached");
	cache_free(c);
}

static void test_erase_file(void)
{
	struct cache *c = fresh(1000);
	struct cache_handle *h;
	int found = 0;

	for (int i = 0; i < 5; i++) {
		put(c, 1, (uint64_t)i * 4096, i, 10, 0);
		put(c, 2, (uint64_t)i * 4096, 100 + i, 10, 1);
	}
	h = cache_lookup(c, 1, 0);
	cache_erase_file(c, 1);
	is_int(ndeleted, 4, "four unheld entries of file 1 freed");
	is_int(cache_usage(c), 50, "only file 2 is charged");
	for (int i = 0; i < 5; i++) {
		found += get(c, 1, (uint64_t)i * 4096) != -1;
		found += (get(c, 2, (uint64_t)i * 4096) == 100 + i) * 10;
	}
	is_int(found, 50, "file 1 gone, file 2 intact");
	is_int(*(int *)cache_value(h), 0, "held entry of file 1 readable");
	cache_release(c, h);
	is_int(ndeleted, 5, "and freed at its release");
	cache_erase_file(c, 3);
	is_int(cache_usage(c), 50, "erasing an unknown file is harmless");
	cache_free(c);
}

static void test_shards(void)
{
	struct cache *c = fresh((size_t)256 << 20);
	int hits = 0;

	/* 3000 of the 4096 blocks that fit: no shard overflows */
	for (int i = 0; i < 3000; i++)
		put(c, (uint64_t)i % 7, (uint64_t)i * 65536, i, 65536, i & 1);
	for (int i = 0; i < 3000; i++)
		hits += get(c, (uint64_t)i % 7, (uint64_t)i * 65536) == i;
	is_int(hits, 3000, "16 shards: 3000 blocks of 64 KiB all found");
	is_int(ndeleted, 0, "no evictions");
	is_int(cache_usage(c), (size_t)3000 * 65536, "usage exact");
	cache_erase_file(c, 3);
	is_int(cache_usage(c), (size_t)(3000 - 429) * 65536,
	       "erase_file across shards");
	is_int(ndeleted, 429, "429 entries of file 3 freed");
	cache_free(c);
}

/* --- threads ---------------------------------------------------------- */

#define NTHREADS 4
#define NKEYS 3000
#define OPS 100000

struct tval {
	uint64_t file, off;
};

static atomic_int tfreed;
static atomic_int tbad;

static void tdel(void *v)
{
	atomic_fetch_add(&tfreed, 1);
	free(v);
}

struct targ {
	struct cache *c;
	uint64_t seed;
	int inserts, lookups;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *worker(void *arg)
{
	struct targ *a = arg;

	for (int i = 0; i < OPS; i++) {
		uint64_t k = rnd(&a->seed) % NKEYS;
		uint64_t file = k % 5, off = k * 4096;
		struct cache_handle *h = cache_lookup(a->c, file, off);
		struct tval *v;

		a->lookups++;
		if (!h) {
			v = malloc(sizeof *v);
			if (!v)
				abort();
			v->file = file;
			v->off = off;
			h = cache_insert(a->c, file, off, v, 2000 + k % 1000,
					 (k % 10) == 0, tdel);
			a->inserts++;
			if (!h)
				continue;
		}
		v = cache_value(h);
		if (v->file != file || v->off != off)
			atomic_fetch_add(&tbad, 1);
		if (k % 997 == 0)
			cache_erase_file(a->c, file);
		cache_release(a->c, h);
	}
	return NULL;
}

static void test_threads(uint64_t seed)
{
	/* 4 MiB: 8 shards; the 3000 keys would need about 7.5 MiB */
	struct cache *c = fresh((size_t)4 << 20);
	pthread_t t[NTHREADS];
	struct targ a[NTHREADS];
	int inserts = 0, lookups = 0;

	for (int i = 0; i < NTHREADS; i++) {
		a[i].c = c;
		a[i].seed = seed * 2654435761u + (uint64_t)i + 1;
		a[i].inserts = a[i].lookups = 0;
		if (pthread_create(&t[i], NULL, worker, &a[i]))
			bail("pthread_create");
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		inserts += a[i].inserts;
		lookups += a[i].lookups;
	}
	is_int(atomic_load(&tbad), 0, "threads: every handle held its key");
	is_int(cache_hits(c) + cache_misses(c), lookups,
	       "threads: hits + misses = lookups");
	ok(cache_usage(c) <= ((size_t)4 << 20), "threads: usage %zu within capacity",
	   cache_usage(c));
	diag("threads: %d lookups, %llu hits, %d inserts", lookups,
	     (unsigned long long)cache_hits(c), inserts);
	cache_free(c);
	is_int(atomic_load(&tfreed), inserts,
	       "threads: every inserted value freed exactly once");
}

/* --- the table against a model ----------------------------------------- */

/*
 * Random inserts, replacements, lookups and erase_file on one shard big
 * enough never to evict, checked against an array of what should be
 * there: the open-addressed table's probing, growth and back-shifting
 * deletion (long runs, wraparound at the table's end) lose nothing and
 * keep nothing erased.
 */
#define MFILES 5
#define MOFFS 700

static void test_model(uint64_t seed)
{
	static int want[MFILES][MOFFS];	/* value + 1, 0: absent */
	struct cache *c = fresh((size_t)900 << 10);	/* one shard */
	uint64_t st = seed;
	int bad = 0, count = 0, erased = 0;

	memset(want, 0, sizeof want);
	for (int op = 0; op < 200000; op++) {
		uint64_t r = rnd(&st);
		int f = (int)(r % MFILES), o = (int)((r >> 8) % MOFFS);
		int kind = (int)((r >> 24) % 100);

		if (kind < 45) {
			put(c, (uint64_t)f, (uint64_t)o * 4096, op, 1, 0);
			count += !want[f][o];
			want[f][o] = op + 1;
		} else if (kind < 99) {
			if (get(c, (uint64_t)f, (uint64_t)o * 4096) !=
			    want[f][o] - 1)
				bad++;
		} else if (r % 7 == 0) {
			cache_erase_file(c, (uint64_t)f);
			for (int i = 0; i < MOFFS; i++) {
				count -= want[f][i] != 0;
				want[f][i] = 0;
			}
			erased++;
		}
	}
	for (int f = 0; f < MFILES; f++)
		for (int o = 0; o < MOFFS; o++)
			if (get(c, (uint64_t)f, (uint64_t)o * 4096) !=
			    want[f][o] - 1)
				bad++;
	is_int(bad, 0, "model: 200000 random operations, every lookup as "
	       "expected (%d erase_file)", erased);
	is_int(cache_usage(c), count, "model: usage counts the %d entries",
	       count);
	cache_free(c);
}

int main(void)
{
	const char *s = getenv("CELLFS_SEED");
	uint64_t seed = s ? strtoull(s, NULL, 0) : 12345;

	diag("seed %llu (set CELLFS_SEED to change)",
	     (unsigned long long)seed);
	test_basic();
	test_lru();
	test_priorities();
	test_refs();
	test_erase_file();
	test_shards();
	test_model(seed);
	test_threads(seed | 1);
	return done_testing();
}
