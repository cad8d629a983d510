/*
 * cache.h: the block cache, an LRU over decompressed store-file blocks
 * keyed by (file id, block offset), with a protected segment for blocks
 * of IN_MEMORY families (evicted only after every normal block).
 * Sharded by key hash; each shard has its own mutex (leaf locks).
 *
 * Priorities: when a shard is over capacity it evicts, least recently
 * used first, among unreferenced entries: high-priority ones while they
 * use more than half of the shard's capacity, else normal ones, and
 * high-priority ones only when no normal one is left.  So IN_MEMORY
 * blocks are protected up to half the cache and cannot starve the rest,
 * yet may fill the whole cache when nothing else wants it.
 *
 * Capacity: up to 16 shards, fewer for small caches so that each shard
 * holds at least 512 KiB; each shard gets capacity / shards.  Entries
 * held through handles are never evicted, so usage may exceed capacity
 * until they are released.
 *
 * Thread safety: every function may be called from any thread, except
 * cache_free.
 */
#ifndef CF_CACHE_H
#define CF_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct cache;
struct cache_handle;

/* A cache holding up to capacity bytes of charge.  CF_ENOMEM. */
int cache_new(size_t capacity, struct cache **out);
/* Frees everything; no handle may be outstanding. */
void cache_free(struct cache *c);

/* The entry for (file, off) with a reference the caller must release,
 * or NULL (a miss).  Counts hits and misses. */
struct cache_handle *cache_lookup(struct cache *c, uint64_t file,
				  uint64_t off);
/* Inserts value (ownership passes to the cache; deleter(value) frees it
 * when evicted and unreferenced) with the given charge, replacing any
 * entry for the key; returns a referenced handle.  Never fails: on
 * allocation failure the value is freed (deleter) and NULL returned. */
struct cache_handle *cache_insert(struct cache *c, uint64_t file,
				  uint64_t off, void *value, size_t charge,
				  int high_priority,
				  void (*deleter)(void *value));
void *cache_value(const struct cache_handle *h);
void cache_release(struct cache *c, struct cache_handle *h);
/* Removes every entry of file (when the file is closed for good); an
 * entry still referenced is freed at its last release. */
void cache_erase_file(struct cache *c, uint64_t file);

size_t cache_usage(const struct cache *c);
uint64_t cache_hits(const struct cache *c);
uint64_t cache_misses(const struct cache *c);

#endif
