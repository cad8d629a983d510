/*
 * cellfs.h: the public API of the cellfs engine, an HBase-style table
 * store on an LSM tree.  This is all fs/ and tsd/ may include from engine/.
 *
 * Data model (HBase): a table holds rows; a row holds cells addressed by
 * (family, qualifier, timestamp).  Rows and qualifiers are arbitrary bytes;
 * family names are [A-Za-z0-9_.-]+.  Timestamps are milliseconds since the
 * epoch.  Each table is a sorted set of regions, each owning a key range.
 *
 * Versions and deletes follow HBase with one fix: a delete masks only
 * cells written before it (by sequence), so a Put issued after a Delete
 * is visible even with an older timestamp, and compaction never changes
 * what a read returns.  docs/engine.md states the exact rules.
 *
 * Handles are opaque.  Every function returns CF_OK (0) or a negative
 * CF_E* code from util/err.h unless stated otherwise.  All functions are
 * thread safe; a cf_scanner is used by one thread at a time.
 */
#ifndef CF_CELLFS_H
#define CF_CELLFS_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"
#include "util/buf.h"

typedef struct cf_db cf_db;
typedef struct cf_table cf_table;
typedef struct cf_batch cf_batch;
typedef struct cf_row cf_row;
typedef struct cf_scanner cf_scanner;

/* "Now": a Put or Delete at CF_TS_NOW takes the current time. */
#define CF_TS_NOW INT64_MAX
#define CF_TTL_FOREVER INT64_MAX
#define CF_ROW_MAX 32767	/* longest row key (HBase's limit) */
#define CF_FAMILY_MAX 200	/* longest family name */
#define CF_TABLE_MAX 128	/* longest table name */

/* --- opening ---------------------------------------------------------- */

enum cf_sync_mode { CF_SYNC_BATCH = 0, CF_SYNC_ALWAYS = 1, CF_SYNC_NONE = 2 };

struct cf_options {
	uint64_t flush_size;	/* memstore bytes of a region that flush it */
	uint64_t split_size;	/* store bytes of a region that split it */
	uint64_t block_cache;	/* block cache capacity in bytes */
	uint64_t memstore_limit; /* all memstores together; 0: 4*flush_size */
	int sync_mode;		/* enum cf_sync_mode */
	unsigned sync_ms;	/* CF_SYNC_BATCH: longest wait for fsync */
	uint64_t max_value;	/* largest value accepted */
	int background;		/* 1: flush/compaction threads; 0: only on
				   explicit calls (tests) */
	int compact_threshold;	/* files in a store that start a minor
				   compaction (default 3; which files it
				   takes: docs/engine.md) */
	int stall_files;	/* files in a store at which writers slow
				   down (default 12) */
	uint32_t seek_bytes;	/* read-driven compaction: a store whose
				   reads consulted two or more of its files
				   once per seek_bytes of its size (at
				   least 100 times) is compacted whole
				   (LevelDB's seek compaction; default
				   16384; 0: never) */
	int wal_write;		/* 1: WAL records go out with write(2),
				   never through a mapping of the segment
				   (default 0: mapped where the file system
				   preallocates; docs/wal_format.md) */
	int wal_compression;	/* 1: a WAL record's body is compressed
				   with snappy when that saves an eighth
				   (default); 0: never (RocksDB's
				   wal_compression; docs/wal_format.md) */
	size_t compact_window;	/* cells of one row a major compaction
				   holds at once (and at most 8 MiB of
				   them); a larger row is streamed column
				   by column (docs/engine.md); 0: 4096 */
};

/* Fills o with the defaults of SPEC.md section 1. */
void cf_options_default(struct cf_options *o);

/* Opens (creating if missing) the data directory dir: replays the WAL,
 * removes files the catalog does not name, starts background threads.
 * *out is owned by the caller until cf_db_close().
 * Errors: CF_EBUSY (another process has it), CF_ECORRUPT, CF_EIO. */
int cf_db_open(const char *dir, const struct cf_options *o, cf_db **out);
/* Stops threads, flushes every memstore (a clean reopen replays nothing),
 * syncs the WAL, frees everything.  Every table handle must be closed
 * before. */
void cf_db_close(cf_db *db);
/* Makes every acknowledged write durable (fsync; one group commit serves
 * all callers waiting at once). */
int cf_db_sync(cf_db *db);
/* Flushes every region's memstore; with wait, returns once on disk. */
int cf_db_flush(cf_db *db);
/* Runs a minor (major = 0) or major compaction of every store, now. */
int cf_db_compact(cf_db *db, int major);

/* --- families and tables ---------------------------------------------- */

enum cf_compression {
	CF_COMPRESS_NONE = 0, CF_COMPRESS_SNAPPY = 1, CF_COMPRESS_ZSTD = 2
};
enum cf_bloom { CF_BLOOM_NONE = 0, CF_BLOOM_ROW = 1, CF_BLOOM_ROWCOL = 2 };
/* A reversible transform of data blocks, applied before compression
 * (HBase's DATA_BLOCK_ENCODING): TSDB stores OpenTSDB columns densely
 * (util/tsblock.h, docs/tsblock_format.md). */
enum cf_encoding { CF_ENCODING_NONE = 0, CF_ENCODING_TSDB = 1 };
/* KEEP_DELETED_CELLS (HBase's KeepDeletedCells): with TRUE a read whose
 * time range ends at or before a delete's timestamp does not see that
 * delete; with TTL only while the delete is younger than the family's
 * TTL (an older one is honoured by every read, as with FALSE). */
enum cf_kdc { CF_KDC_FALSE = 0, CF_KDC_TRUE = 1, CF_KDC_TTL = 2 };

struct cf_family {
	char name[CF_FAMILY_MAX + 1];
	int versions;		/* VERSIONS >= 1 (default 1) */
	int min_versions;	/* MIN_VERSIONS >= 0 (default 0) */
	int64_t ttl;		/* TTL in seconds, or CF_TTL_FOREVER */
	int keep_deleted;	/* enum cf_kdc (default FALSE) */
	int compression;	/* enum cf_compression (default SNAPPY) */
	int bloom;		/* enum cf_bloom (default ROW) */
	uint32_t blocksize;	/* BLOCKSIZE (default 65536) */
	int in_memory;		/* IN_MEMORY: block cache priority */
	int encoding;		/* enum cf_encoding (default NONE) */
};

/* Sets every setting of f to its default and its name to name. */
void cf_family_default(struct cf_family *f, const char *name);
/* Appends "NAME VERSIONS=1 MIN_VERSIONS=0 TTL=FOREVER ..." (no newline),
 * every setting spelled out. */
int cf_family_format(const struct cf_family *f, struct buf *out);
/* Parses one schema line "NAME [KEY=VALUE ...]" (len bytes, no newline);
 * unnamed settings take their defaults.  CF_EINVAL with a reason in
 * why (if non-NULL, static string) on a malformed line. */
int cf_family_parse(const char *line, size_t len, struct cf_family *f,
		    const char **why);
/* 1 if name is a valid table name (SPEC section 2) / family name. */
int cf_table_name_valid(const char *name);
int cf_family_name_valid(const char *name, size_t len);

/* Creates table name with families fams[0..n).  CF_EEXIST, CF_EINVAL. */
int cf_table_create(cf_db *db, const char *name, const struct cf_family *fams,
		    size_t n);
/* Drops a table with its data.  With only_if_empty, CF_ENOTEMPTY when it
 * holds any visible cell. */
int cf_table_drop(cf_db *db, const char *name, int only_if_empty);
/* The table names, sorted: *names is one malloc'd array of *n pointers
 * into the same block; free(*names) frees all. */
int cf_table_list(cf_db *db, char ***names, size_t *n);

/* Opens a handle on table name (CF_ENOTFOUND).  Handles are cheap and
 * reference counted; on a dropped table every call returns CF_ECLOSED. */
int cf_table_open(cf_db *db, const char *name, cf_table **out);
void cf_table_close(cf_table *t);
const char *cf_table_name(const cf_table *t);

/* The table's families: a malloc'd array (caller frees) of *n entries. */
int cf_table_schema(cf_table *t, struct cf_family **fams, size_t *n);
/* Makes the schema exactly fams[0..n): families added, changed, or
 * dropped with their data; atomic.  CF_EINVAL on a bad setting. */
int cf_table_alter(cf_table *t, const struct cf_family *fams, size_t n);
/* cf_table_alter, with the change recorded as made at ms (milliseconds
 * since the epoch; cf_table_alter says now): a copy of a table keeps the
 * time of its schema (`.schema` renamed from a file whose mtime was set,
 * as rsync -a does). */
int cf_table_alter_at(cf_table *t, const struct cf_family *fams, size_t n,
		      int64_t ms);
/* When the table was created and its schema last changed (milliseconds
 * since the epoch; 0: unknown, a catalog of an older cellfs or rebuilt
 * by cellfs-fsck).  CF_ECLOSED on a dropped table. */
int cf_table_times(cf_table *t, int64_t *created_ms, int64_t *schema_ms);
/* 1 if the table has family fam (famlen bytes). */
int cf_table_has_family(cf_table *t, const char *fam, size_t famlen);

/* --- writing ---------------------------------------------------------- */

/* A batch of mutations over any rows of one table.  Applying it is atomic
 * per row; the whole batch shares one WAL record.  Owned by the caller. */
int cf_batch_new(cf_batch **out);
void cf_batch_free(cf_batch *b);
void cf_batch_clear(cf_batch *b);
size_t cf_batch_count(const cf_batch *b);
/* Marks b as written by a layer that keeps its own copy of what it
 * writes (tsd's recent points): applying b leaves cf_table_stamp()
 * as it was.  Such a layer must mark only writes its copy follows. */
void cf_batch_keep_stamp(cf_batch *b);
/* A number that changes whenever t's visible content may have changed
 * other than by cf_batch_keep_stamp() batches: every other write (put,
 * delete, append, increment, check-and-put), every schema change; a
 * table made again after a drop has a stamp no table had.  It changes
 * once the write is visible to reads.  In memory only: a restart gives
 * new stamps. */
uint64_t cf_table_stamp(cf_table *t);

/* Put value at (row, fam:qual, ts); ts may be CF_TS_NOW. */
int cf_batch_put(cf_batch *b, const void *row, size_t rowlen,
		 const char *fam, size_t famlen, const void *qual, size_t qlen,
		 int64_t ts, const void *val, size_t vlen);
/* As cf_batch_put, but the value is not copied into the batch: val must
 * stay valid and unchanged until the batch is applied, cleared or freed.
 * For a large value written once (a file's close): one copy less. */
int cf_batch_put_ref(cf_batch *b, const void *row, size_t rowlen,
		     const char *fam, size_t famlen, const void *qual,
		     size_t qlen, int64_t ts, const void *val, size_t vlen);

enum cf_delete_kind {
	CF_DEL_VERSION = 1,	/* Delete: the version at exactly ts */
	CF_DEL_COLUMN = 2,	/* DeleteColumn: every version <= ts */
	CF_DEL_FAMILY = 3,	/* DeleteFamily: every column, versions <= ts */
	CF_DEL_ROW = 4		/* every family of the row, versions <= ts */
};
/* fam/qual are ignored where the kind does not use them.  ts may be
 * CF_TS_NOW (for CF_DEL_VERSION: the latest version's timestamp). */
int cf_batch_delete(cf_batch *b, enum cf_delete_kind kind, const void *row,
		    size_t rowlen, const char *fam, size_t famlen,
		    const void *qual, size_t qlen, int64_t ts);

/* Applies b.  Errors: CF_ENOTFOUND (unknown family), CF_ETOOBIG (value
 * over max_value, row over CF_ROW_MAX), CF_ENOSPC, CF_EIO.  When it
 * returns CF_OK the batch is in the WAL (durable per the sync mode).
 * On error nothing of b was applied. */
int cf_table_apply(cf_table *t, const cf_batch *b);

/* HBase Append: atomically appends data to the latest value of the cell
 * (absent = empty).  The new value is stored into *out if non-NULL. */
int cf_table_append(cf_table *t, const void *row, size_t rowlen,
		    const char *fam, size_t famlen, const void *qual,
		    size_t qlen, const void *data, size_t dlen,
		    struct buf *out);
/* HBase Append of several columns of one row: every put of cols (each
 * of row; its timestamp is ignored) appends its value to the latest
 * value of its cell (absent = empty); a column named again takes the
 * last value named (HBase appends each to the same value read); all new
 * values are written as one atomic mutation at a
 * timestamp never below the versions read.  cols stays the caller's.
 * CF_EINVAL (cols empty or holding a delete), CF_EXDEV (a put of
 * another row), CF_ENOTFOUND (a family the table lacks), CF_ETOOBIG (a
 * new value over max_value), and cf_table_apply's errors; on error
 * nothing is written. */
int cf_table_append_row(cf_table *t, const void *row, size_t rowlen,
			const cf_batch *cols);
/* HBase Increment: the cell holds an 8-byte big-endian signed counter
 * (absent = 0); adds delta atomically and returns the result.
 * CF_EINVAL if the current value is not 8 bytes; CF_ERANGE on overflow. */
int cf_table_increment(cf_table *t, const void *row, size_t rowlen,
		       const char *fam, size_t famlen, const void *qual,
		       size_t qlen, int64_t delta, int64_t *result);
/* HBase Increment of several columns of one row: every put of cols
 * (each of row, its value the delta as 8 bytes big-endian, its
 * timestamp ignored) adds its delta to its cell's counter (absent = 0);
 * a column named twice takes the last delta named (HBase's Increment
 * computes each from the same value read).  All new values are written
 * as one atomic mutation, each at a timestamp never below the version
 * read.  cols stays the caller's.  CF_EINVAL (cols empty, holding a
 * delete or a value not 8 bytes, or a cell named that is not 8 bytes),
 * CF_ERANGE (an overflow), CF_EXDEV (a put of another row), CF_ENOTFOUND
 * (a family the table lacks), and cf_table_apply's errors; on error
 * nothing is written. */
int cf_table_increment_row(cf_table *t, const void *row, size_t rowlen,
			   const cf_batch *cols);
/* Applies b (which must touch only row: else CF_EXDEV) iff the latest
 * value of fam:qual equals expect (elen bytes), or with expect == NULL
 * iff the cell is absent (an empty value is a value).  *applied says
 * which.  The daemon's own compare-and-set; HBase's CheckAndMutate, whose
 * empty value also means absent, is cf_table_check_mutate. */
int cf_table_check_and_apply(cf_table *t, const void *row, size_t rowlen,
			     const char *fam, size_t famlen, const void *qual,
			     size_t qlen, const void *expect, size_t elen,
			     const cf_batch *b, int *applied);

/* HBase's CompareOperator as a CheckAndMutate applies it: the check
 * holds when VALUE op CELL, the value given on the left (so CF_CMP_LESS
 * holds when the cell's value sorts after the one given). */
enum cf_cmp {
	CF_CMP_EQUAL,
	CF_CMP_NOT_EQUAL,
	CF_CMP_LESS,
	CF_CMP_LESS_OR_EQUAL,
	CF_CMP_GREATER,
	CF_CMP_GREATER_OR_EQUAL
};

/* The check of an HBase CheckAndMutate.  It reads the row's newest
 * version in [min_ts, max_ts) of the column fam:qual and compares it
 * with value: a value of 0 bytes (or NULL) is HBase's null, which holds
 * for an absent or empty cell (the opposite with CF_CMP_NOT_EQUAL); any
 * other value never holds for an absent cell.  With filter set instead,
 * every version in the time range of every column of the row is read
 * (fam and op are not used: HBase's filters see the versions before a
 * Get's one is counted) and the check is filter's answer: 1 holds, 0
 * not, below 0 an error returned as it is.  Memory: the versions read. */
struct cf_check {
	const char *fam;
	size_t famlen;
	const void *qual;
	size_t qlen;
	enum cf_cmp op;
	const void *value;
	size_t vlen;
	int64_t min_ts;		/* 0 and INT64_MAX: every version */
	int64_t max_ts;
	int (*filter)(void *arg, const cf_row *row);
	void *arg;
};

/* HBase CheckAndMutate: applies b (which must touch only row: else
 * CF_EXDEV; an empty b applies nothing) iff c holds, atomically against
 * every other write of row.  *applied says which.  CF_ENOTFOUND: c's
 * family is not the table's; CF_EINVAL: an empty time range or an
 * unknown op; the errors of cf_table_apply and of c->filter. */
int cf_table_check_mutate(cf_table *t, const void *row, size_t rowlen,
			  const struct cf_check *c, const cf_batch *b,
			  int *applied);

/* --- reading ---------------------------------------------------------- */

struct cf_column {
	const char *fam;	/* family name */
	size_t famlen;
	const void *qual;	/* NULL: the whole family */
	size_t qlen;
};

struct cf_read_opts {
	const struct cf_column *columns;	/* NULL: every family */
	size_t ncolumns;
	int64_t min_ts;		/* time range [min_ts, max_ts); default */
	int64_t max_ts;		/* 0 and INT64_MAX: everything */
	int max_versions;	/* per column; 0 means 1; INT32_MAX: all kept */
	int keys_only;		/* values not returned (vlen still set) */
	int raw;		/* scans (cf_scan_open) only: every cell the
				 * store still holds in the time range (HBase
				 * RAW => true): masked and crowded-out puts
				 * and the delete markers, whose kind is in
				 * cf_cell.kind; max_versions is ignored */
};

#define CF_READ_OPTS_INIT { NULL, 0, 0, INT64_MAX, 1, 0, 0 }

/* One cell of a result.  Pointers stay valid as long as the cf_row. */
struct cf_cell {
	const char *fam;
	size_t famlen;
	const unsigned char *qual;
	size_t qlen;
	int64_t ts;
	const unsigned char *val;	/* NULL with keys_only */
	size_t vlen;
	int kind;		/* 0: a Put; with raw, a delete marker's
				 * enum cf_delete_kind (no value) */
};

/* A row of a result: its cells in order (family, qualifier ascending,
 * timestamp descending), seen at one consistent point. */
const unsigned char *cf_row_key(const cf_row *r, size_t *len);
size_t cf_row_count(const cf_row *r);
const struct cf_cell *cf_row_cell(const cf_row *r, size_t i);
void cf_row_free(cf_row *r);

/* Get: the visible cells of row.  *out (caller frees with cf_row_free)
 * holds zero cells when nothing is visible. */
int cf_table_get(cf_table *t, const void *row, size_t rowlen,
		 const struct cf_read_opts *o, cf_row **out);

/* Does the store hold a put of row (of a family of t) that the current
 * snapshot sees, in any state: masked, crowded out or expired too?  What
 * a read with a time range may still show of a row with
 * KEEP_DELETED_CELLS when a read without one shows nothing.  *has 1 or
 * 0; errors of cf_row_cursor_open.  Memory: the iterator's blocks; time:
 * the row's cells up to its first such put. */
int cf_table_row_stored(cf_table *t, const void *row, size_t rowlen,
			int *has);

/*
 * A Get read in pages, for rows too large to hold at once (a listing of
 * a row with millions of columns or versions).  The cursor sees the row
 * at one consistent point, as cf_table_get does, and gives the same
 * cells in the same order, at most limit a call.  o as for cf_table_get
 * but without columns or raw (CF_EINVAL); NULL: the defaults.  t must
 * stay open until cf_row_cursor_close.  Memory: the page (limit cells)
 * and the iterator's blocks; a column holding delete markers among its
 * versions (or in a family with a TTL or DeleteFamily markers) is
 * classified whole, its cells held until given (docs/engine.md).
 * Errors of cf_table_get.
 */
typedef struct cf_row_cursor cf_row_cursor;
int cf_row_cursor_open(cf_table *t, const void *row, size_t rowlen,
		       const struct cf_read_opts *o, cf_row_cursor **out);
/* The next cells into *page (owned by the cursor, valid until the next
 * call or close): at least one, or none at the end of the row. */
int cf_row_cursor_next(cf_row_cursor *c, size_t limit, const cf_row **page);
void cf_row_cursor_close(cf_row_cursor *c);

struct cf_scan_opts {
	struct cf_read_opts read;
	const void *start;	/* first row (inclusive); NULL: table start */
	size_t startlen;
	const void *stop;	/* last row (exclusive); NULL: table end */
	size_t stoplen;
	const void *prefix;	/* only rows beginning with prefix */
	size_t prefixlen;
	uint64_t limit;		/* at most this many rows; 0: no limit */
	int reversed;		/* HBase REVERSED => true: rows in
				 * descending order (the cells of a row
				 * still in their order); start is then the
				 * greatest row (inclusive), stop the lower
				 * bound (exclusive); an empty start or stop
				 * is no bound */
	size_t batch;		/* HBase's Scan.setBatch: at most this many
				 * cells a result; a larger row comes as
				 * several results of the same key in a
				 * row, read page by page as
				 * cf_row_cursor reads (not with columns,
				 * raw or reversed: CF_EINVAL); 0: whole
				 * rows */
};

/* Opens a scan.  It sees each row at one consistent point; rows written
 * while it runs may or may not be seen.  Rows with no visible cell are
 * skipped.  Memory: one row and one seek key (a reversed scan too); with
 * batch, one page of batch cells instead of the row (but a column with
 * delete markers among its versions is held whole, as cf_row_cursor
 * holds it). */
int cf_scan_open(cf_table *t, const struct cf_scan_opts *o, cf_scanner **out);
/* The next row into *row (owned by the scanner, valid until the next call
 * or close), or *row = NULL at the end. */
int cf_scan_next(cf_scanner *s, const cf_row **row);
void cf_scan_close(cf_scanner *s);

/* --- regions and status ----------------------------------------------- */

struct cf_region_info {
	uint64_t id;
	unsigned char *start;	/* malloc'd copies, freed with the array */
	size_t startlen;
	unsigned char *end;	/* endlen 0: the table's end */
	size_t endlen;
	uint64_t files;		/* store files */
	uint64_t disk_bytes;
	uint64_t mem_bytes;	/* memstore */
	int64_t created_ms;	/* made by the table's creation or a split
				 * (ms since the epoch); 0: unknown */
};

/* The regions in key order; free with cf_regions_free(). */
int cf_table_regions(cf_table *t, struct cf_region_info **out, size_t *n);
void cf_regions_free(struct cf_region_info *r, size_t n);
/* Splits the region holding key at key (a no-op CF_EEXIST if key already
 * starts a region).  keylen 0: at the region's middle key. */
int cf_table_split(cf_table *t, const void *key, size_t keylen);
/* HBase's merge_region: the region starting at key and the region before
 * it become one (referencing both regions' files until its compactions
 * rewrite them), in one catalog transaction after both are flushed.
 * CF_ENOTFOUND: no region starts at key; CF_EINVAL: it is the first
 * region; CF_EBUSY: writes to the two kept coming through three
 * flushes; CF_ENOMEM, CF_EIO. */
int cf_table_merge(cf_table *t, const void *key, size_t keylen);
int cf_table_flush(cf_table *t);
int cf_table_compact(cf_table *t, int major);

struct cf_stats {
	uint64_t puts, deletes, appends, increments, gets, scans, scan_rows;
	uint64_t bytes_written, bytes_read;
	uint64_t flushes, compactions, major_compactions, splits, merges;
	uint64_t cache_hits, cache_misses, bloom_skips, files_skipped;
	uint64_t multi_file_reads;	/* reads that consulted two or more
					 * store files of a store (read-driven
					 * compaction counts them) */
	uint64_t wal_syncs, wal_bytes, stalls;
	uint64_t errors;	/* failed engine operations */
	uint64_t regions, store_files, disk_bytes, mem_bytes;
	/* cf_db_stats only: the memstore bytes the memstore limit and the
	 * writers' stall count (equal to mem_bytes when nothing is being
	 * written) */
	uint64_t mem_counted;
};

int cf_db_stats(cf_db *db, struct cf_stats *s);
int cf_table_stats(cf_table *t, struct cf_stats *s);

/* --- access: who may use a table (engine/access.c) ----------------------
 * The daemon's permission bits and owner of a table, or of another name
 * it serves at the top of its tree (tsd), as chmod and chown set them;
 * kept in the catalog.  cf_table_create starts a table without one (the
 * daemon's defaults), cf_table_drop removes it with the table. */
struct cf_access {
	uint32_t mode;		/* permission bits, 0 to 07777 */
	uint32_t uid, gid;
};
/* Calls fn for every name with an access (by name), under the engine's
 * catalog lock: fn must not call the engine.  CF_* code, or fn's
 * non-zero return. */
int cf_db_access_list(cf_db *db,
		      int (*fn)(const char *name, const struct cf_access *a,
				void *arg),
		      void *arg);
/* Stores name's access, or removes it with a NULL.  A name with the
 * syntax of a table must be a table (CF_ENOTFOUND, checked under the
 * lock that serializes create and drop) unless it is in others, a
 * NULL-terminated list of the names the caller serves itself. */
int cf_db_access_set(cf_db *db, const char *name, const struct cf_access *a,
		     const char *const *others);

/* --- offline check and repair (cellfs-fsck) ---------------------------- */

/* What a finding is: damage to committed data, or debris that an
 * unclean stop (kill -9, a power cut) leaves and the next mount removes. */
enum cf_check_kind { CF_CHECK_DAMAGE, CF_CHECK_DEBRIS };

/* Reports one finding: its kind, the file it concerns and what it is. */
typedef void (*cf_check_say)(void *arg, enum cf_check_kind kind,
			     const char *path, const char *what);

/*
 * Checks the data directory dir, which no daemon may have open (CF_EBUSY
 * otherwise): every checksum of every store file and WAL segment, and the
 * catalog against the disk (missing or unknown files, regions that leave
 * gaps or overlap, region directories without .regioninfo).  Each finding
 * is passed to say; *problems gets the number of damages, *debris (if
 * non-NULL) the number of debris.
 *
 * Debris, recognised only when the catalog is sound: store files (whole
 * or torn) and region or table directories the catalog does not name,
 * and a torn tail of the newest WAL segment.  Damage: everything else,
 * including a bad record in any WAL segment but the newest (lost data).
 *
 * With repair: debris is removed as the next mount would remove it (the
 * newest segment cut at its last whole record); a missing, damaged or
 * inconsistent catalog is moved aside and rebuilt from the region
 * directories' .regioninfo files; unreadable store files and unknown
 * files are moved under dir/lost+found/ (never deleted); a damaged WAL
 * segment is cut at the damage after a copy of it is kept in
 * lost+found/.  The counts are then of what was found before repairing.
 */
int cf_check(const char *dir, int repair, cf_check_say say, void *arg,
	     unsigned *problems, unsigned *debris);

#endif
