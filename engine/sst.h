/*
 * sst.h: immutable sorted store files (format: docs/sst_format.md).
 *
 * A store file holds the cells of one family of one region in ikey order:
 * data blocks with key prefix compression and restart points, each
 * optionally snappy- or zstd-compressed and always checksummed; a bloom filter over
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
	int encoding;		/* enum cf_encoding, of data blocks */
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

/* Creates path; a file already there (left by a build that crashed
 * before its catalog commit) is replaced.  block_size 0 means 64 KiB,
 * bloom_bits 0 means 10.  CF_EINVAL (unknown compression or bloom kind,
 * bloom_bits outside 0..64), CF_EIO, CF_ENOSPC, CF_ENOMEM. */
int sst_builder_open(const char *path, const struct sst_build_opts *o,
		     struct sst_builder **out);
/* Adds one entry; keys must be well-formed ikeys in strictly increasing
 * ikey order (CF_EINVAL otherwise: the entry is refused and the builder
 * stays usable), values at most 1 GiB (CF_ETOOBIG, likewise).  CF_EIO,
 * CF_ENOSPC, CF_ENOMEM: the file is lost; finish or abort removes it. */
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

/* The row of the key that ends the file's middle data block, an
 * estimate of the row that halves the file by size: from the index
 * alone in a file of version 1, else (the index holds separators) from
 * that one block, read without the cache.  CF_ENOTFOUND for a file of
 * fewer than two blocks; CF_EIO, CF_ECORRUPT, CF_ENOMEM. */
int sst_mid_row(const struct sst *s, struct buf *out);

/* Reads every block and checks every checksum (for fsck), and also the
 * layout: blocks contiguous, keys well formed and strictly ascending,
 * index keys equal to their blocks' last keys (version 1) or between
 * them and the next blocks' first (version 2), the meta block equal to
 * what the data says.  CF_ECORRUPT with the offset of the bad block (or
 * of the footer) in *bad_off; CF_EIO, CF_ENOTFOUND. */
int sst_verify(const char *path, uint64_t *bad_off);

/* The length of the row prefix that the index's tags skip (for tests:
 * a short prefix means index searches compare whole keys). */
size_t sst_index_prefix(const struct sst *s);

/* Counters since start: blocks read from disk, bloom negatives (calls of
 * sst_may_have_row/rowcol that answered 0). */
uint64_t sst_blocks_read(void);
uint64_t sst_bloom_negatives(void);

#endif
