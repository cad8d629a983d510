/*
 * arena.h: a bump allocator for memstores.  Memory is carved from 1 MiB
 * blocks and is freed only all at once, with the arena: a skiplist never
 * removes nodes, so per-node free() would be pure overhead.
 *
 * Concurrency: one thread at a time calls arena_alloc (the memstore's
 * writer); arena_used may be called from any thread at any time.
 */
#ifndef CF_ARENA_H
#define CF_ARENA_H

#include <stddef.h>

struct arena;

/* A new empty arena (no block is reserved until the first allocation).
 * NULL on allocation failure. */
struct arena *arena_new(void);

/* Frees the arena and every allocation made from it.  NULL is a no-op. */
void arena_free(struct arena *a);

/* n bytes aligned to 8 (n = 0 gives a distinct pointer too), valid until
 * arena_free.  A request over a quarter
 * of a block gets a block of its own, so a large value neither wastes the
 * tail of the current block nor forces a fresh one for the small
 * allocations that follow.  NULL on allocation failure (the arena stays
 * usable). */
void *arena_alloc(struct arena *a, size_t n);

/* Bytes handed out so far (rounded up to the alignment), not counting the
 * unused tails of blocks: what the data costs, so that an empty arena is
 * 0 and a flush decision is not distorted by block granularity. */
size_t arena_used(const struct arena *a);

/* Bytes of blocks reserved from malloc. */
size_t arena_reserved(const struct arena *a);

/* Bytes of freed arenas' blocks kept for the next arenas (arena.c, "the
 * block pool": at most 64 MiB; always 0 under AddressSanitizer).  Any
 * thread. */
size_t arena_pool_bytes(void);

#endif
