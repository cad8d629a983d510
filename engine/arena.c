/*
 * arena.c: blocks on a singly linked list, newest first; allocation bumps
 * a pointer inside the current block.  Blocks made for one large request
 * are linked behind the current block so that it keeps filling.
 *
 * Only the counters are shared with other threads (arena_used,
 * arena_reserved); they are atomics written by the single allocating
 * thread, so relaxed order is enough: they are statistics, never used to
 * publish memory.
 *
 * The block pool: a freed arena's standard blocks (mapped, BLOCK_SIZE)
 * go to a process-wide free list, at most POOL_MAX bytes of them, and
 * new arenas take blocks from it before mapping fresh ones.  On this
 * kind of virtual machine the first touch of a page costs 15-30 us even
 * when it was mapped populated (the hypervisor fills its shadow page
 * tables then), about half a microsecond a memstore entry of ~90 bytes;
 * a block that already served a memstore costs nothing more.  Under a
 * steady write load the memstore being flushed frees its blocks while
 * its successor fills, so POOL_MAX of one flush size (64 MiB, the
 * default) recycles nearly every block.  Memory: the pool keeps at most
 * POOL_MAX bytes after the memstores that used them are gone (the peak
 * they reached, not more); pool_mu is a leaf lock.
 */
#include <stdatomic.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "engine/arena.h"

#define BLOCK_SIZE ((size_t)1 << 20)
#define ALIGN 8

struct block {
	struct block *next;
	size_t size;
	size_t mapped;		/* bytes of its mmap(); 0: from malloc */
	/* max_align_t keeps data[] aligned for any node layout */
	_Alignas(max_align_t) unsigned char data[];
};

/* AddressSanitizer builds keep no pool: a use of a freed memstore then
 * still faults on the unmapped block. */
#if defined(__SANITIZE_ADDRESS__)
#define POOL_MAX 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_MAX 0
#endif
#endif
#ifndef POOL_MAX
#define POOL_MAX ((size_t)64 << 20)
#endif

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static struct block *pool;	/* free standard blocks, under pool_mu */
static size_t pool_bytes;

/* The bytes mapped for a standard block. */
#define STD_MAPPED ((sizeof(struct block) + BLOCK_SIZE + 4095) & ~(size_t)4095)

struct arena {
	struct block *blocks;	/* the current block first */
	unsigned char *ptr;	/* free space in the current block */
	size_t left;
	atomic_size_t used, reserved;
};

struct arena *arena_new(void)
{
	struct arena *a = calloc(1, sizeof *a);

	if (!a)
		return NULL;
	atomic_init(&a->used, 0);
	atomic_init(&a->reserved, 0);
	return a;
}

void arena_free(struct arena *a)
{
	struct block *b, *next;

	if (!a)
		return;
	for (b = a->blocks; b; b = next) {
		next = b->next;
		if (b->mapped == STD_MAPPED) {
			pthread_mutex_lock(&pool_mu);
			if (pool_bytes + b->mapped <= POOL_MAX) {
				b->next = pool;
				pool = b;
				pool_bytes += b->mapped;
				b = NULL;
			}
			pthread_mutex_unlock(&pool_mu);
		}
		if (!b)
			continue;
		if (b->mapped)
			munmap(b, b->mapped);
		else
			free(b);
	}
	free(a);
}

/* A standard block from the pool, or NULL when it is empty. */
static struct block *pool_take(void)
{
	struct block *b;

	pthread_mutex_lock(&pool_mu);
	if ((b = pool)) {
		pool = b->next;
		pool_bytes -= b->mapped;
	}
	pthread_mutex_unlock(&pool_mu);
	return b;
}

/* A standard block comes from the pool when it has one.  Otherwise the
 * first block of an arena comes from malloc, its pages touched as it
 * fills: most memstores stay small.  Later blocks are mapped with their
 * pages already present (MAP_POPULATE): a memstore that has filled one
 * block fills the next, and one mmap() that populates 256 pages costs far
 * less than 256 page faults (on a virtual machine, a fault is a trap to
 * the hypervisor).  Either way the block's bytes are its cost. */
static struct block *block_new(struct arena *a, size_t size)
{
	struct block *b = NULL;
	size_t len = (sizeof *b + size + 4095) & ~(size_t)4095;

	if (size == BLOCK_SIZE)
		b = pool_take();
	if (!b && a->blocks) {
		b = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (b == MAP_FAILED)
			b = NULL;
		else
			b->mapped = len;
	}
	if (!b) {
		if (!(b = malloc(sizeof *b + size)))
			return NULL;
		b->mapped = 0;
	}
	b->size = size;
	atomic_fetch_add_explicit(&a->reserved, sizeof *b + size,
				  memory_order_relaxed);
	return b;
}

/* The slow path: the current block cannot hold n bytes. */
static void *alloc_fallback(struct arena *a, size_t n)
{
	struct block *b;

	if (n > BLOCK_SIZE / 4) {
		if (!(b = block_new(a, n)))
			return NULL;
		if (a->blocks) {
			b->next = a->blocks->next;
			a->blocks->next = b;
		} else {
			/* nothing to keep filling: it is full at once */
			b->next = NULL;
			a->blocks = b;
			a->ptr = b->data + n;
			a->left = 0;
		}
		return b->data;
	}
	/* the old block's tail (under a quarter block) is given up */
	if (!(b = block_new(a, BLOCK_SIZE)))
		return NULL;
	b->next = a->blocks;
	a->blocks = b;
	a->ptr = b->data + n;
	a->left = BLOCK_SIZE - n;
	return b->data;
}

void *arena_alloc(struct arena *a, size_t n)
{
	void *p;

	if (n > SIZE_MAX - BLOCK_SIZE)
		return NULL;
	/* 0 bytes get ALIGN: a distinct pointer, never NULL */
	n = n ? (n + ALIGN - 1) & ~(size_t)(ALIGN - 1) : ALIGN;
	if (n <= a->left) {
		p = a->ptr;
		a->ptr += n;
		a->left -= n;
	} else if (!(p = alloc_fallback(a, n))) {
		return NULL;
	}
	atomic_store_explicit(&a->used,
			      atomic_load_explicit(&a->used,
						   memory_order_relaxed) + n,
			      memory_order_relaxed);
	return p;
}

size_t arena_used(const struct arena *a)
{
	return atomic_load_explicit(&((struct arena *)a)->used,
				    memory_order_relaxed);
}

size_t arena_reserved(const struct arena *a)
{
	return atomic_load_explicit(&((struct arena *)a)->reserved,
				    memory_order_relaxed);
}

size_t arena_pool_bytes(void)
{
	size_t n;

	pthread_mutex_lock(&pool_mu);
	n = pool_bytes;
	pthread_mutex_unlock(&pool_mu);
	return n;
}
