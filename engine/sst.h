/*
 * sst.h: immutable sorted store files (format: docs/sst_format.md).
 *
 * A store file holds the cells of one family of one region in ikey order:
 * data blocks with key prefix compression and restart points, each
 * optionally snappy-compressed and always checksummed; a bloom filter over
 * rows (or rows+qualifiers); a meta block (key range, time range, sequence
 * range, cell count); an index block; a fixed footer.
 *
 * An open sst is reference counted and shared by readers of any thread;
 * blocks are read with pread and kept in the block cache.
 */
#ifndef CF_SST_H
#define CF_SST_H

#include <stddef.h>
#include <stdint.h>

#include "engine/iter.h"
#include "util/buf.h"

struct cache;

struct sst_build_opts {
	uint32_t block_size;	/* target uncompressed bytes per block */
	int compression;	/* enum cf_compression */
	int bloom;		/* enum cf_bloom */
	int bloom_bits;		/* bits per key (default 10) */
};

/* Facts about a file, written into its meta block. */
struct sst_meta {
	struct buf first_key;	/* encoded ikeys; owned by the struct */
	struct buf last_key;
	int64_t min_ts, max_ts;
	uint64_t min_seq, max_seq;
	uint64_t cells;
	uint64_t deletes;	/* delete markers among the cells */
	uint64_t file_size;
	int bloom;		/* enum cf_bloom used by the file */
};

void sst_meta_release(struct sst_meta *m);

struct sst_builder;

/* Creates path (must not exist).  CF_EIO, CF_ENOSPC. */
int sst_builder_open(const char *path, const struct sst_build_opts *o,
		     struct sst_builder **out);
/* Adds one entry; keys must come in strictly increasing ikey order
 * (CF_EINVAL otherwise).  CF_EIO, CF_ENOSPC. */
int sst_builder_add(struct sst_builder *b, const unsigned char *key,
		    size_t klen, const void *val, size_t vlen);
/* Writes the remaining blocks and footer, fsyncs, closes, fills *meta
 * (may be NULL) and frees b.  On error the partial file is removed. */
int sst_builder_finish(struct sst_builder *b, struct sst_meta *meta);
/* Stops, removes the partial file, frees b. */
void sst_builder_abort(struct sst_builder *b);
uint64_t sst_builder_cells(const struct sst_builder *b);
/* Bytes written so far (estimate of the final size). */
uint64_t sst_builder_size(const struct sst_builder *b);

struct sst;

/* Opens path, reading footer, index, meta and bloom (checksums verified:
 * CF_ECORRUPT).  file_id keys the block cache (c may be NULL: no cache).
 * high_priority: IN_MEMORY family.  *out has one reference. */
int sst_open(const char *path, uint64_t file_id, struct cache *c,
	     int high_priority, struct sst **out);
void sst_ref(struct sst *s);
/* Drops a reference; at zero closes the file, and deletes it if
 * sst_set_obsolete() was called. */
void sst_unref(struct sst *s);
void sst_set_obsolete(struct sst *s);
const struct sst_meta *sst_get_meta(const struct sst *s);
uint64_t sst_file_id(const struct sst *s);

/* Bloom checks: 0 when the file surely lacks the row (or row+qualifier
 * for ROWCOL files), 1 when it may hold it.  A file without a filter
 * of that kind answers 1. */
int sst_may_have_row(const struct sst *s, const void *row, size_t rowlen);
int sst_may_have_rowcol(const struct sst *s, const void *row, size_t rowlen,
			const void *qual, size_t qlen);

/* An iterator over the file (holds a reference).  fill_cache 0: blocks
 * read are not inserted into the cache (long scans, compactions).  NULL on
 * allocation failure. */
struct iter *sst_iter(struct sst *s, int fill_cache);

/* Reads every block and checks every checksum (for fsck).  CF_ECORRUPT
 * with the offset in *bad_off. */
int sst_verify(const char *path, uint64_t *bad_off);

/* Counters since start: blocks read from disk, bloom negatives. */
uint64_t sst_blocks_read(void);

#endif
