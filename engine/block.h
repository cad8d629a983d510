/*
 * block.h: the blocks of a store file (docs/sst_format.md, "Blocks").
 *
 * A block holds entries in key order, LevelDB style: each entry keeps
 * only the bytes of its key that differ from the previous key, and every
 * restart_interval entries a restart point stores a whole key, so a
 * reader can binary-search the restart array and then scan forward.  On
 * disk a block is followed by a 5-byte trailer (compression type, masked
 * CRC-32C), written by block_seal() and checked by block_read().
 *
 * Nothing here knows about files beyond one pread; sst.c decides where
 * blocks go.  Keys are compared with ikey_cmp (engine/key.h).
 */
#ifndef CF_BLOCK_H
#define CF_BLOCK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

struct env_file;

#define BLOCK_TRAILER 5		/* u8 compression type, u32le masked crc */
#define BLOCK_RESTART_INTERVAL 16

/* The trailer's type byte: the compression in the low 4 bits (the same
 * numbers as enum cf_compression), the encoding in the high 4 (enum
 * block_encoding; 0 in every file written before encodings existed). */
enum block_type { BLOCK_RAW = 0, BLOCK_SNAPPY = 1, BLOCK_ZSTD = 2 };
/* Block encodings, the same numbers as enum cf_encoding.  Each is a
 * reversible transform of the raw block with its encoder and decoder in
 * the table of engine/block.c; TSDB's is util/tsblock.c. */
enum block_encoding { BLOCK_ENC_NONE = 0, BLOCK_ENC_TSDB = 1 };
#define BLOCK_ENC_SHIFT 4
/* The zstd level data blocks are written at (docs/timeseries_performance.md,
 * "Block codecs", has the measurements that chose it). */
#define BLOCK_ZSTD_LEVEL 1

/* --- building --------------------------------------------------------- */

/* Accumulates the entries of one block.  A plain value: init, add...,
 * finish, reset, ..., release. */
struct block_builder {
	struct buf data;	/* entries, then the restart array at finish */
	struct buf restarts;	/* u32 offsets (host order until finish) */
	struct buf last;	/* the previous key */
	int interval;
	int counter;		/* entries since the last restart */
	size_t entries;
	int finished;
};

void block_builder_init(struct block_builder *b, int restart_interval);
void block_builder_release(struct block_builder *b);
/* Empties b for the next block, keeping its memory. */
void block_builder_reset(struct block_builder *b);
/* Appends one entry; the caller guarantees key order.  CF_ENOMEM. */
int block_builder_add(struct block_builder *b, const unsigned char *key,
		      size_t klen, const void *val, size_t vlen);
/* Bytes the finished block would take (before compression). */
size_t block_builder_size(const struct block_builder *b);
static inline int block_builder_empty(const struct block_builder *b)
{
	return b->entries == 0;
}
/* Appends the restart array and returns the raw block (valid until the
 * next reset or release).  CF_ENOMEM. */
int block_builder_finish(struct block_builder *b, const unsigned char **p,
			 size_t *n);

/*
 * Appends the stored form of the raw block [raw, raw+n) to out: the
 * bytes, first encoded with encoding (enum block_encoding) when it
 * applies to the block and makes it smaller, then compressed with snappy
 * (BLOCK_SNAPPY) or zstd (BLOCK_ZSTD) when that is the compression asked
 * for and it saves at least 1/8, then the trailer.  *stored gets the size
 * without the trailer (what a block handle records).  CF_ENOMEM.
 */
int block_seal(const unsigned char *raw, size_t n, int compression,
	       int encoding, struct buf *out, size_t *stored);

/* --- reading ---------------------------------------------------------- */

/* A parsed, uncompressed block.  Immutable once made, so a cached block
 * is read by any number of threads.  Reference counted: made with one
 * reference (the cache's or the reader's), block_ref adds one (a reader
 * keeping a value in it, iter_pin), block_free drops one and frees the
 * block with the last. */
struct block {
	unsigned char *data;	/* owned */
	size_t size;		/* entries + restart array + count */
	size_t cap;		/* bytes usable at data, >= size */
	size_t restarts;	/* offset of the restart array */
	uint32_t nrestarts;
	atomic_int refs;
};

/*
 * Reads the block stored at [off, off+size) plus its trailer from f,
 * checks the checksum, decompresses, decodes, and checks the restart
 * array.  *out is owned by the caller (block_free).  CF_EIO, CF_ENOMEM,
 * CF_ECORRUPT (checksum, unknown type or encoding, bad snappy, zstd or
 * encoded data, bad restart array, or the file ends early).
 */
int block_read(struct env_file *f, uint64_t off, uint64_t size,
	       struct block **out);
/* The same for a block already in memory: p holds the size stored
 * bytes and the trailer (p stays the caller's).  Same errors, but for
 * CF_EIO. */
int block_decode(const unsigned char *p, uint64_t size, struct block **out);
/* The same for blocks without entries (filter, meta): *out (malloc'd,
 * caller frees) gets the n checked, uncompressed bytes. */
int block_read_raw(struct env_file *f, uint64_t off, uint64_t size,
		   unsigned char **out, size_t *n);
/* Takes ownership of data[0..n) (malloc'd) and checks its layout.
 * CF_ECORRUPT (data is freed then), CF_ENOMEM. */
int block_from_raw(unsigned char *data, size_t n, struct block **out);
void block_ref(struct block *b);
/* Drops a reference (NULL is a no-op); the last frees the block. */
void block_free(struct block *b);
/* The same, with the signature a cache deleter needs. */
void block_free_void(void *b);
/* Memory a block takes, headroom of its buffer included, for cache
 * charges. */
size_t block_charge(const struct block *b);

/*
 * A cursor over one block.  key/val stay valid until the cursor moves;
 * the key lives in the cursor's own buffer, the value in the block.  A
 * malformed entry makes the cursor invalid with status CF_ECORRUPT.
 */
struct seek_run;

struct block_iter {
	const struct block *b;
	size_t cur;		/* offset of the current entry */
	size_t next;		/* offset of the entry after it */
	struct buf key;
	const unsigned char *val;
	size_t vlen;
	int valid;
	int status;
	struct seek_run *run;	/* seek_lt's last walk, decoded (block.c);
				 * made on the first seek_lt */
};

/* Prepares it (no block yet); block_iter_release frees its buffers. */
void block_iter_init(struct block_iter *it);
void block_iter_release(struct block_iter *it);
/* Frees what seek_lt keeps of its last walk (block_iter_release does
 * too). */
void block_iter_drop_run(struct block_iter *it);
/* Points it at b (unpositioned: invalid until a seek).  A block other
 * than the one it points at forgets seek_lt's last walk: the caller
 * points it elsewhere (or at NULL) before freeing a block. */
void block_iter_set(struct block_iter *it, const struct block *b);
void block_iter_seek_first(struct block_iter *it);
/* The first entry with key >= target (by ikey_cmp), or invalid. */
void block_iter_seek(struct block_iter *it, const unsigned char *target,
		     size_t n);
void block_iter_next(struct block_iter *it);
/* The last entry with key < target (target NULL: the last entry), or
 * invalid (status CF_OK when the block has none).  A seek to a target
 * below the last one, in the entries its walk decoded (a reversed scan
 * steps down so), is answered from them. */
void block_iter_seek_lt(struct block_iter *it, const unsigned char *target,
			size_t n);

#endif
