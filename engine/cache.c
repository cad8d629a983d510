/*
 * cache.c: the block cache (contract in engine/cache.h).
 *
 * The key space is split into 2^bits shards by the top bits of a hash of
 * (file, off); each shard is an independent LRU behind its own mutex, so
 * lookups from different threads rarely meet.  Small caches get fewer
 * shards (each keeps at least SHARD_MIN bytes), so a few big blocks do
 * not thrash a tiny shard while the others sit empty.
 *
 * Invariants of a shard, all under its mutex:
 *   - an entry is in the hash table iff in_cache; its charge counts in
 *     usage (and in high_usage when high) iff in_cache;
 *   - refs counts the cache's own reference (while in_cache) plus one
 *     per handle given out;
 *   - an entry sits on lru[high] iff in_cache && refs == 1, that is when
 *     only the cache holds it and it may be evicted.  Lists run from
 *     least recently used (head->next) to most recently used;
 *   - when refs reaches 0 the entry is out of the cache and is freed,
 *     with its deleter called after the mutex is dropped.
 *
 * Eviction (whenever usage > capacity) takes the least recently used
 * evictable entry of: the high list while high_usage exceeds half the
 * capacity, else the low list, else the high list.  Referenced entries
 * are never evicted; they may push usage past capacity until released.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cache.h"
#include "util/err.h"

#define SHARD_BITS_MAX 4
#define SHARD_MIN ((size_t)512 << 10)

struct cache_handle {
	struct cache_handle *next_dead;	/* the chain of entries to free */
	struct cache_handle *prev, *next;	/* lru links */
	uint64_t file, off;
	uint32_t hash;
	int high;
	int in_cache;
	uint32_t refs;
	size_t charge;
	void *value;
	void (*deleter)(void *value);
};

typedef struct cache_handle entry;

/*
 * The table is open addressing with linear probing, each slot holding the
 * entry's hash beside its pointer: a probe compares hashes in the table
 * and dereferences an entry only when they match, so a miss costs the
 * table's cache line and no entry's.  At most half the slots are full;
 * deletion shifts the following run back (no tombstones).
 */
struct slot {
	uint32_t hash;
	entry *e;		/* NULL: empty */
};

struct shard {
	pthread_mutex_t mu;
	struct slot *tab;
	size_t nslots;		/* a power of two */
	size_t count;
	entry lru[2];		/* list heads: [0] normal, [1] high priority */
	size_t usage, high_usage, capacity;
	atomic_uint_fast64_t hits, misses;
	char pad[64];		/* keeps shards' mutexes on separate lines */
};

struct cache {
	struct shard *shards;
	int bits;
	size_t capacity;
};

static uint32_t hash_key(uint64_t file, uint64_t off)
{
	uint64_t h = file * UINT64_C(0x9e3779b97f4a7c15) ^ off;

	h ^= h >> 31;
	h *= UINT64_C(0xd6e8feb86659fd93);
	h ^= h >> 32;
	return (uint32_t)h;
}

static struct shard *shard_of(const struct cache *c, uint32_t hash)
{
	return &c->shards[c->bits ? hash >> (32 - c->bits) : 0];
}

static void list_remove(entry *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	e->prev = e->next = NULL;
}

static void list_append(entry *head, entry *e)
{
	e->next = head;
	e->prev = head->prev;
	e->prev->next = e;
	head->prev = e;
}

/* The slot holding (file, off), or the empty slot where it would go.
 * The shard's bits pick the shard, so the table uses the low ones. */
static size_t find_slot(const struct shard *s, uint64_t file, uint64_t off,
			uint32_t hash)
{
	size_t mask = s->nslots - 1, i = hash & mask;

	for (;; i = (i + 1) & mask) {
		const struct slot *t = &s->tab[i];
		if (!t->e || (t->hash == hash && t->e->file == file &&
			      t->e->off == off))
			return i;
	}
}

/* The slot holding e itself. */
static size_t slot_of(const struct shard *s, const entry *e)
{
	size_t mask = s->nslots - 1, i = e->hash & mask;

	while (s->tab[i].e != e)
		i = (i + 1) & mask;
	return i;
}

/* Empties slot i, moving back each later entry of the run whose home
 * slot is not between the hole and itself, so every entry stays
 * reachable from its home slot. */
static void slot_clear(struct shard *s, size_t i)
{
	size_t mask = s->nslots - 1, j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!s->tab[j].e)
			break;
		home = s->tab[j].hash & mask;
		/* leave j where it is when home lies cyclically in (i, j] */
		if (i <= j ? (i < home && home <= j)
			   : (i < home || home <= j))
			continue;
		s->tab[i] = s->tab[j];
		i = j;
	}
	s->tab[i].e = NULL;
	s->tab[i].hash = 0;
}

/* Doubles the table; on allocation failure keeps the old one, which then
 * runs fuller than half (slower; cache_insert keeps one slot empty). */
static void grow(struct shard *s)
{
	size_t n = s->nslots * 2, mask = n - 1;
	struct slot *t = calloc(n, sizeof *t);

	if (!t)
		return;
	for (size_t i = 0; i < s->nslots; i++) {
		size_t j;
		if (!s->tab[i].e)
			continue;
		for (j = s->tab[i].hash & mask; t[j].e; j = (j + 1) & mask)
			;
		t[j] = s->tab[i];
	}
	free(s->tab);
	s->tab = t;
	s->nslots = n;
}

/* Drops one reference; an entry nobody holds goes onto *dead, to be
 * freed once the mutex is released. */
static void unref(struct shard *s, entry *e, entry **dead)
{
	e->refs--;
	if (e->refs == 0) {
		e->next_dead = *dead;
		*dead = e;
	} else if (e->in_cache && e->refs == 1) {
		list_append(&s->lru[e->high], e);
	}
}

/* Takes e, already out of the table, out of the cache. */
static void detach(struct shard *s, entry *e, entry **dead)
{
	e->in_cache = 0;
	s->count--;
	s->usage -= e->charge;
	if (e->high)
		s->high_usage -= e->charge;
	if (e->refs == 1)
		list_remove(e);
	unref(s, e, dead);
}

static void evict(struct shard *s, entry **dead)
{
	while (s->usage > s->capacity) {
		entry *high = &s->lru[1], *low = &s->lru[0], *v;

		if (s->high_usage > s->capacity / 2 && high->next != high)
			v = high->next;
		else if (low->next != low)
			v = low->next;
		else if (high->next != high)
			v = high->next;
		else
			break;
		slot_clear(s, slot_of(s, v));
		detach(s, v, dead);
	}
}

/* Frees the entries on a dead chain in the order they died (the chain
 * is built by prepending), so deleters see eviction order. */
static void free_dead(entry *dead)
{
	entry *rev = NULL;

	while (dead) {
		entry *next = dead->next_dead;
		dead->next_dead = rev;
		rev = dead;
		dead = next;
	}
	dead = rev;
	while (dead) {
		entry *next = dead->next_dead;
		if (dead->deleter)
			dead->deleter(dead->value);
		free(dead);
		dead = next;
	}
}

int cache_new(size_t capacity, struct cache **out)
{
	struct cache *c;
	int bits = 0, n, i;

	*out = NULL;
	while (bits < SHARD_BITS_MAX && (capacity >> (bits + 1)) >= SHARD_MIN)
		bits++;
	n = 1 << bits;
	c = calloc(1, sizeof *c);
	if (!c)
		return CF_ENOMEM;
	c->shards = calloc((size_t)n, sizeof *c->shards);
	if (!c->shards) {
		free(c);
		return CF_ENOMEM;
	}
	c->bits = bits;
	c->capacity = capacity;
	for (i = 0; i < n; i++) {
		struct shard *s = &c->shards[i];
		s->nslots = 32;
		s->tab = calloc(s->nslots, sizeof *s->tab);
		if (!s->tab || pthread_mutex_init(&s->mu, NULL) != 0) {
			free(s->tab);
			goto fail;
		}
		for (int h = 0; h < 2; h++)
			s->lru[h].next = s->lru[h].prev = &s->lru[h];
		s->capacity = capacity >> bits;
		atomic_init(&s->hits, 0);
		atomic_init(&s->misses, 0);
	}
	*out = c;
	return CF_OK;
fail:
	while (i-- > 0) {
		pthread_mutex_destroy(&c->shards[i].mu);
		free(c->shards[i].tab);
	}
	free(c->shards);
	free(c);
	return CF_ENOMEM;
}

void cache_free(struct cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < (1 << c->bits); i++) {
		struct shard *s = &c->shards[i];
		entry *dead = NULL;
		for (size_t i = 0; i < s->nslots; i++)
			if (s->tab[i].e)
				detach(s, s->tab[i].e, &dead);
		free_dead(dead);
		free(s->tab);
		pthread_mutex_destroy(&s->mu);
	}
	free(c->shards);
	free(c);
}

struct cache_handle *cache_lookup(struct cache *c, uint64_t file,
				  uint64_t off)
{
	uint32_t hash = hash_key(file, off);
	struct shard *s = shard_of(c, hash);
	entry *e;

	pthread_mutex_lock(&s->mu);
	e = s->tab[find_slot(s, file, off, hash)].e;
	if (e) {
		if (e->refs == 1)
			list_remove(e);
		e->refs++;
	}
	pthread_mutex_unlock(&s->mu);
	atomic_fetch_add_explicit(e ? &s->hits : &s->misses, 1,
				  memory_order_relaxed);
	return e;
}

struct cache_handle *cache_insert(struct cache *c, uint64_t file,
				  uint64_t off, void *value, size_t charge,
				  int high_priority,
				  void (*deleter)(void *value))
{
	uint32_t hash = hash_key(file, off);
	struct shard *s = shard_of(c, hash);
	entry *e = malloc(sizeof *e), *dead = NULL;
	size_t i;

	if (!e) {
		if (deleter)
			deleter(value);
		return NULL;
	}
	e->prev = e->next = NULL;
	e->file = file;
	e->off = off;
	e->hash = hash;
	e->high = high_priority ? 1 : 0;
	e->in_cache = 1;
	e->refs = 2;		/* the cache's and the caller's */
	e->charge = charge;
	e->value = value;
	e->deleter = deleter;

	pthread_mutex_lock(&s->mu);
	if ((s->count + 1) * 2 > s->nslots)
		grow(s);
	i = find_slot(s, file, off, hash);
	if (s->tab[i].e) {
		entry *old = s->tab[i].e;
		slot_clear(s, i);
		detach(s, old, &dead);
		i = find_slot(s, file, off, hash);
	} else if (s->count + 1 >= s->nslots) {
		/* the table could not grow and has one empty slot left,
		 * which probes need as their stop */
		pthread_mutex_unlock(&s->mu);
		free(e);
		if (deleter)
			deleter(value);
		return NULL;
	}
	s->tab[i].hash = hash;
	s->tab[i].e = e;
	s->count++;
	s->usage += charge;
	if (e->high)
		s->high_usage += charge;
	evict(s, &dead);
	pthread_mutex_unlock(&s->mu);
	free_dead(dead);
	return e;
}

void *cache_value(const struct cache_handle *h)
{
	return h->value;
}

void cache_release(struct cache *c, struct cache_handle *h)
{
	struct shard *s = shard_of(c, h->hash);
	entry *dead = NULL;

	pthread_mutex_lock(&s->mu);
	unref(s, h, &dead);
	evict(s, &dead);
	pthread_mutex_unlock(&s->mu);
	free_dead(dead);
}

void cache_erase_file(struct cache *c, uint64_t file)
{
	for (int i = 0; i < (1 << c->bits); i++) {
		struct shard *s = &c->shards[i];
		entry *dead = NULL;
		size_t j = 0, scanned = 0;

		pthread_mutex_lock(&s->mu);
		/* Start after an empty slot, so no run wraps past the start;
		 * a clear then only moves later entries of the run down to
		 * slots not yet passed, and j is rechecked after each. */
		while (s->tab[j].e)
			j++;
		while (scanned < s->nslots) {
			entry *e = s->tab[j].e;
			if (e && e->file == file) {
				slot_clear(s, j);
				detach(s, e, &dead);
				continue;
			}
			j = (j + 1) & (s->nslots - 1);
			scanned++;
		}
		pthread_mutex_unlock(&s->mu);
		free_dead(dead);
	}
}

size_t cache_usage(const struct cache *c)
{
	size_t u = 0;

	for (int i = 0; i < (1 << c->bits); i++) {
		struct shard *s = &c->shards[i];
		pthread_mutex_lock(&s->mu);
		u += s->usage;
		pthread_mutex_unlock(&s->mu);
	}
	return u;
}

uint64_t cache_hits(const struct cache *c)
{
	uint64_t n = 0;

	for (int i = 0; i < (1 << c->bits); i++)
		n += atomic_load_explicit(&c->shards[i].hits,
					  memory_order_relaxed);
	return n;
}

uint64_t cache_misses(const struct cache *c)
{
	uint64_t n = 0;

	for (int i = 0; i < (1 << c->bits); i++)
		n += atomic_load_explicit(&c->shards[i].misses,
					  memory_order_relaxed);
	return n;
}
