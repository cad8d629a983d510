/*
 * memstore.h: the in-memory sorted buffer of one region (a skiplist over
 * an arena, as LevelDB's memtable).
 *
 * Concurrency: one writer at a time (the caller serializes memstore_add,
 * the engine's write leader does), any number of concurrent readers
 * without locks: an entry becomes visible to readers atomically once
 * memstore_add returns.  Reference counted: iterators hold a reference.
 */
#ifndef CF_MEMSTORE_H
#define CF_MEMSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/key.h"
#include "engine/iter.h"

struct memstore;

/* A new empty memstore with one reference.  CF_ENOMEM. */
int memstore_new(struct memstore **out);
void memstore_ref(struct memstore *m);
void memstore_unref(struct memstore *m);	/* frees at zero */

/* Inserts (key, value); the key must not already be present (seq makes
 * keys unique): CF_EEXIST if it is (nothing inserted).  Copies both.
 * CF_ENOMEM; CF_ETOOBIG for a key or value of 4 GiB or more. */
int memstore_add(struct memstore *m, const struct ikey *k, const void *val,
		 size_t vlen);

/* Bytes of arena memory the entries use (0 when empty; the unused tail
 * of the current 1 MiB block is not counted), for flush decisions.
 * Only grows. */
size_t memstore_bytes(const struct memstore *m);
uint64_t memstore_count(const struct memstore *m);
/* Smallest and largest seq added (0, 0 when empty). */
uint64_t memstore_min_seq(const struct memstore *m);
uint64_t memstore_max_seq(const struct memstore *m);

/* The memstore's expected size in bytes (the flush size): once it holds
 * 4096 entries and a memstore_may_have_row has been asked, it keeps a
 * row filter sized for that (memstore.c, "the row filter").  Before the
 * first add. */
void memstore_expect(struct memstore *m, size_t bytes);
/* 0: no entry of row is in m (at any seq a reader that loaded its
 * snapshot after the entries were published may see); 1: maybe.  No
 * false 0s; always 1 without a filter. */
int memstore_may_have_row(const struct memstore *m, const void *row,
			  size_t rowlen);

/* An iterator over the entries; holds a reference on m until destroyed.
 * NULL on allocation failure. */
struct iter *memstore_iter(struct memstore *m);

#endif
