/*
 * internal.h: the engine's shared structures (db, table, region, view),
 * seen only by the engine's own files.  Callers outside engine/ see opaque handles.
 *
 * Lock order (take left before right, never the reverse):
 *
 *   table->batch_lock -> table row stripes -> db->qmu (writer queue)
 *     -> db->mem_mu
 *   db->ddl_mu -> db->compact_mu -> db->mu -> db->mem_mu -> table->lock
 *     -> db->meta_mu -> region->mu -> leaf locks (cache, wal, log)
 *
 * db->mu guards the table list.  db->mem_mu is held by the write leader
 * while it inserts into memstores and by whoever swaps a region's active
 * memstore, so a memstore being flushed never receives an insert.
 * table->lock (rwlock) guards the table's region array and schema;
 * region->mu guards the pointer to the region's current view.  A view is
 * immutable once published: readers take a reference under region->mu
 * and then read without locks.  Flush, compaction and split each build a
 * new view and swap it in.  db->ddl_mu serializes table create, drop,
 * alter, split, flush and compaction work (one maintenance operation at
 * a time keeps the catalog and views simple to reason about).
 *
 * Sequence numbers: the write leader takes them from db->next_seq, writes
 * the WAL, inserts into memstores, then publishes db->last_seq.  Readers
 * see exactly the entries with seq <= the last_seq they loaded, so a
 * batch is visible whole or not at all.
 */
#ifndef CF_ENGINE_INTERNAL_H
#define CF_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "engine/cellfs.h"
#include "engine/key.h"
#include "engine/iter.h"
#include "engine/memstore.h"
#include "engine/sst.h"
#include "util/buf.h"

struct meta;
struct wal;
struct cache;
struct env_file;

/* One store file as a region uses it: the open sst and, for a split
 * daughter's reference, the row bounds it may read. */
struct sfile {
	struct sst *sst;
	uint64_t id;
	int64_t home_region;
	struct buf lo, hi;	/* hi.len == 0 and !hi_set: unbounded */
	int lo_set, hi_set;
	uint64_t size;
	uint64_t max_seq;
	/* sst == NULL: the file could not be opened (checksum, I/O); reads
	 * that need it fail with CF_ECORRUPT, the rest of the store works */
};

/* The store files of one family in a view, newest (highest max_seq)
 * first. */
struct fstore {
	char fam[CF_FAMILY_MAX + 1];
	struct sfile **files;
	size_t n;
	/* reads that had to consult two or more of these files, since this
	 * view was made; read_compact is set once they reach the store's
	 * budget (store_note_multi_read) */
	atomic_uint_least64_t multi_reads;
	atomic_int read_compact;
};

/* An immutable snapshot of a region's data sources. */
struct view {
	atomic_int refs;
	struct memstore *mem;		/* active memstore */
	struct memstore **imm;		/* being flushed, newest first */
	size_t nimm;
	struct fstore *stores;		/* one per family with files */
	size_t nstores;
};

struct region {
	uint64_t id;
	struct cf_table *t;
	struct buf start, end;		/* [start, end); end.len 0: +inf */
	pthread_mutex_t mu;
	struct view *view;		/* guarded by mu */
	uint64_t flushed_seq;		/* guarded by ddl_mu */
	int64_t created_ms;		/* set before it is published */
	atomic_int flush_wanted;
	atomic_int compact_wanted;
};

#define ROW_STRIPES 256

struct tstats {
	atomic_uint_least64_t puts, deletes, appends, increments, gets, scans,
		scan_rows, bytes_written, bytes_read, flushes, compactions,
		major_compactions, splits, merges, errors, stalls, wal_bytes,
		bloom_skips, files_skipped, multi_file_reads;
};

/*
 * A table's schema: immutable once published in cf_table.fams.  An
 * alter publishes a new one and keeps the one before (older) until the
 * table is freed, as split parents are kept: a read looks its families
 * up without the table's lock (once a row), so a schema it met must
 * not be freed under it.  An alter flushes the whole table, so there
 * are few; each is n families of ~80 bytes.
 */
struct famset {
	struct famset *older;
	size_t n;
	struct cf_family f[];	/* sorted by name */
};

struct cf_table {
	atomic_int refs;
	struct cf_db *db;
	int64_t id;
	char name[CF_TABLE_MAX + 1];
	atomic_int dropped;
	pthread_rwlock_t lock;		/* regions; changes of fams */
	struct region **regions;	/* sorted by start key */
	size_t nregions;
	struct region **retired;	/* split parents, freed with t */
	size_t nretired;
	struct famset *_Atomic fams;	/* the schema (table_fams) */
	int64_t created_ms, schema_ms;	/* schema_ms: under lock */
	pthread_rwlock_t batch_lock;	/* shared: a few rows' stripes;
					   exclusive: a batch of many rows */
	pthread_mutex_t stripes[ROW_STRIPES];
	struct tstats st;
	/* cf_table_stamp(): drawn from db->stamps at creation, at every
	 * write not made with a cf_batch_keep_stamp() batch and at every
	 * schema change */
	atomic_uint_least64_t stamp;
};

/* t's schema now: valid until t is freed (struct famset). */
static inline const struct famset *table_fams(const struct cf_table *t)
{
	return atomic_load_explicit(&t->fams, memory_order_acquire);
}

/* A writer waiting in the queue (group commit). */
struct writer {
	struct cf_table *t;
	const struct cf_batch *b;
	int rc;
	int done;
	pthread_cond_t cv;
	struct writer *next;
};

struct cf_db {
	char *dir;
	struct cf_options o;
	struct env_file *lock;
	struct meta *meta;
	struct wal *wal;
	struct cache *cache;

	pthread_mutex_t ddl_mu;
	pthread_mutex_t compact_mu;
	pthread_mutex_t mu;		/* tables */
	struct cf_table **tables;
	size_t ntables;

	pthread_mutex_t mem_mu;
	pthread_mutex_t meta_mu;

	pthread_mutex_t qmu;		/* writer queue */
	struct writer *qhead, *qtail;
	struct buf wbuf;		/* leader's record buffer (qmu-free:
					   only the leader touches it) */
	struct buf wzbuf;		/* and its compressed payload */

	atomic_uint_least64_t last_seq;	/* published */
	uint64_t next_seq;		/* leader only */
	uint64_t next_file;		/* guarded by meta_mu */
	uint64_t next_region;		/* guarded by meta_mu */
	uint64_t wal_segment;		/* current segment number */
	atomic_uint_least64_t mem_total; /* bytes in all memstores */
	atomic_uint_least64_t stamps;	/* the last table stamp given */

	/* background work */
	pthread_mutex_t bg_mu;
	pthread_cond_t bg_cv;		/* work or stop */
	pthread_cond_t bg_done;		/* a flush finished */
	int stop;
	int bg_started;
	pthread_t flusher, compactor, syncer;
	int bg_error;			/* last background failure */

	struct tstats st;
};

/* --- tables (table.c) ------------------------------------------------ */

/* A table with no regions or families yet, one reference; NULL: no
 * memory. */
struct cf_table *table_new(struct cf_db *db, int64_t id, const char *name);
void table_ref(struct cf_table *t);
/* Drops a reference; the last frees t, its regions and retired ones. */
void table_unref(struct cf_table *t);
/* A schema of fams[0..n) (copied and sorted by name), not yet
 * published; NULL: no memory. */
struct famset *famset_new(const struct cf_family *fams, size_t n);
/* Publishes fs as t's schema (t owns it then, and keeps the one before:
 * struct famset).  The caller holds t->lock for writing, or owns t
 * alone. */
void table_set_fams(struct cf_table *t, struct famset *fs);
/* The family named fam[0..famlen) of t's schema now, or NULL; no lock
 * needed, valid until t is freed.  A caller that needs the settings to
 * stay those of one moment copies them (an alter publishes others). */
const struct cf_family *table_family(const struct cf_table *t, const char *fam,
				     size_t famlen);
/* The family named fam[0..famlen) of schema fs (NULL: none), or NULL. */
const struct cf_family *famset_family(const struct famset *fs,
				      const char *fam, size_t famlen);
/* The IN_MEMORY setting of family fam (NUL-terminated) of t; 0 when t
 * has no such family. */
int table_in_memory(const struct cf_table *t, const char *fam);
/* Region of t holding row; caller holds t->lock (read). */
struct region *table_region_for(struct cf_table *t, const void *row,
				size_t rowlen);
/* 1 if r is still one of its table's live regions (caller holds ddl_mu
 * or compact_mu, which a split takes). */
int region_live(struct region *r);

int region_contains(const struct region *r, const void *row, size_t rowlen);
struct view *region_view(struct region *r);	/* referenced */
void view_unref(struct view *v);

/* --- background work: the signal ---------------------------------------- */

/*
 * Wakes db.c's background threads (flusher, compactor), which then look
 * for regions whose flush_wanted or compact_wanted is set, or stores
 * whose read_compact is.  Lower layers set those flags and call this;
 * they never call the scheduler itself, so the arrows stay one way.
 */
static inline void db_wake_background(struct cf_db *db)
{
	pthread_mutex_lock(&db->bg_mu);
	pthread_cond_broadcast(&db->bg_cv);
	pthread_mutex_unlock(&db->bg_mu);
}

/* --- visibility (visible.c) ------------------------------------------ */

/* One raw cell of a family group, pointing into caller memory. */
struct rcell {
	struct ikey k;
	const unsigned char *val;
	size_t vlen;
	int state;		/* out: VIS_* */
	int expiring;		/* out, with vis_ctx.expiring: a VIS_LIVE put
				 * that rule 4 kills once its TTL passes */
};

enum { VIS_LIVE = 0, VIS_MASKED = 1, VIS_DEAD = 2, VIS_MARKER = 3,
       VIS_FUTURE = 4 };

struct vis_ctx {
	const struct cf_family *f;
	uint64_t snapshot;	/* cells with larger seq are VIS_FUTURE */
	int64_t now_ms;
	int64_t read_max_ts;	/* for KEEP_DELETED_CELLS time travel */
	int expiring;		/* set rcell.expiring (compaction): 1 in
				 * columns with deletes, 2 in every one */
};

/* Classifies cells[0..n) (one family of one row, in ikey order) in
 * place.  O(n log n) time, O(n) words of scratch (visible.c). */
void vis_classify(const struct vis_ctx *c, struct rcell *cells, size_t n);

/* A family's only cell, a put the snapshot sees in family f (NULL:
 * dropped) with no TTL and VERSIONS >= 1, is live: what vis_classify
 * finds (its classify_puts) without the call, for the rows of one cell
 * that scans mostly read.  1 and cells[0] classified, or 0 and nothing
 * done. */
static inline int vis_lone_put(const struct cf_family *f, uint64_t snapshot,
			       struct rcell *cells, size_t n)
{
	if (n != 1 || cells[0].k.type != KT_PUT ||
	    cells[0].k.seq > snapshot ||
	    (f && (f->ttl != CF_TTL_FOREVER || f->versions < 1)))
		return 0;
	cells[0].state = VIS_LIVE;
	return 1;
}

/* What vis_column needs of a cell: 24 bytes, no key bytes. */
struct vcell {
	int64_t ts;
	uint64_t seq;
	unsigned char type;	/* KT_* */
	unsigned char state;	/* out: VIS_* */
	unsigned char expiring;	/* out, as rcell.expiring */
};

/* Delete markers by sequence number, with a tree of their greatest
 * timestamp (visible.c): cap and mxcap are the allocated lengths. */
struct vis_mark {
	uint64_t seq;
	int64_t ts;
};
struct vis_midx {
	struct vis_mark *p;
	size_t n, cap, P;
	int64_t *mx;
	size_t mxcap;
};

/* The DeleteFamily markers of one family of a row that a read or a
 * compaction sees: zeroed, vis_family_add each (in any order;
 * markers past the snapshot or ignored by the read are left out),
 * vis_family_done, then vis_column for each column;
 * vis_family_release frees.  16 bytes a marker. */
struct vis_family {
	struct vis_midx idx;
	size_t n;
};

/* Scratch arrays vis_column reuses from column to column (they grow to
 * the largest column: about 40 bytes a cell); zeroed to start,
 * vis_scratch_release frees. */
struct vis_scratch {
	struct vis_midx col;
	uint64_t *coords;
	size_t ccap;
	int *tree;
	size_t tcap;
	size_t *put;
	size_t pcap;
	uint64_t *death;
	size_t dcap;
	uint64_t *stack;
	size_t scap;
	struct vcell *v;	/* for callers: a column's cells */
	size_t vcap;
};

void vis_family_add(const struct vis_ctx *c, struct vis_family *vf,
		    int64_t ts, uint64_t seq);
void vis_family_done(struct vis_family *vf);
void vis_family_release(struct vis_family *vf);
void vis_scratch_release(struct vis_scratch *s);
/* Classifies cells[0..n), the cells of one column in key order without
 * DeleteFamily markers, against vf's markers (NULL: none): state and
 * expiring of each, exactly as vis_classify.  O(n log n + n log m). */
void vis_column(const struct vis_ctx *c, const struct vis_family *vf,
		struct vis_scratch *s, struct vcell *cells, size_t n);

/* A column streamed put by put in key order, in O(1) memory: valid only
 * when every cell of the column is a put the snapshot sees and its
 * family has no DeleteFamily marker (vis_column's case without
 * deletes; expiring is never set then).  Zeroed to start; the state of
 * the next put, of timestamp ts. */
struct vis_puts {
	int64_t ts;
	size_t distinct;	/* timestamps above ts */
	int any;
};
int vis_puts_next(const struct vis_ctx *c, struct vis_puts *st, int64_t ts);

/*
 * A column classified as vis_column would, cell by cell in key order,
 * holding at most cap entries of each of its arrays (about 60 bytes an
 * entry) whatever the column's length (visible.c).  Three steps:
 *   vis_stream_init (0), then vis_stream_sum for
 *   every cell of the column (pass 0: a summary of cap entries), then
 *   vis_stream_sum_done;
 *   any number of classifying passes: vis_stream_rewind, then
 *   vis_stream_next for each cell again, in the same order: the cell's
 *   state and expiring, 0; or 1 when the column needs more than cap
 *   entries or memory runs out (the cell is not classified, nor any
 *   after it: classify the column some other way; every pass stops at
 *   the same cell, memory permitting);
 *   vis_stream_release frees.
 * Cells are those vis_column takes (no DeleteFamily markers: vf, NULL
 * for none, holds them and must outlive the stream, as must c).  With
 * loose, a put that is not live may be VIS_DEAD where vis_column says
 * VIS_MASKED (what a compaction without KEEP_DELETED_CELLS keeps is the
 * same): with VERSIONS 1 the stream then holds no count of lives, only
 * where the last of them ended, and needs no more than the
 * DeleteColumns above it.
 */
struct vis_stream {
	const struct vis_ctx *c;
	const struct vis_family *vf;
	size_t cap;
	/* pass 0 */
	size_t pos;		/* cells fed in this pass */
	size_t chunk, nchunk;	/* cells a chunk; chunks */
	uint64_t *lo, *hi;	/* per chunk: the least and greatest birth
				 * of a put (scap allocated) */
	size_t scap;
	int nomem;		/* an array could not grow */
	uint64_t *slo, *shi;	/* the same from chunk i on (nchunk + 1) */
	uint64_t *rise, *fall;	/* per chunk: the most a put's birth is
				 * above (below) an earlier one's */
	size_t lpos;		/* the last put: its cell */
	uint64_t lseq;		/* and its seq */
	size_t nd;		/* delete markers the column sees, vf's too */
	size_t ndistinct;	/* timestamps of its puts */
	int64_t sts;
	int sany;		/* a put seen (this pass) */
	/* from vis_stream_sum_done */
	int versions, minv;	/* minv: 0 unless rule 4 asks */
	int crowd;		/* rule 3 is asked of C */
	int loose;		/* vis_stream_init's */
	int one;		/* VERSIONS 1 and loose: no C but sup */
	uint64_t sup;		/* the latest end of a life of a higher ts */
	uint64_t gsup;		/* of the last put's timestamp */
	int vc;			/* C counts up to vc (0: not kept) */
	/* a classifying pass */
	uint64_t *x;		/* C: v[i] from moment x[i] on */
	int *v;
	size_t xcap;		/* x and v allocated */
	size_t n;
	uint64_t sat;		/* the first moment C reaches vc, or NEVER */
	int satok;		/* sat is known */
	uint64_t *dc;		/* DeleteColumn seqs, ascending */
	size_t ndc, dccap;
	struct { uint64_t l, r; } *pend;	/* lives of this timestamp */
	size_t npend, pcap;
	int64_t gts;		/* the timestamp of the last put */
	uint64_t gprev;		/* and its seq */
	int gany;
	size_t distinct;	/* timestamps above the last put's */
	int64_t dts;		/* the Deletes of timestamp dts: */
	uint64_t d1, d2;	/* the last seen and the one before */
	int dany;
};

int vis_stream_init(struct vis_stream *st, const struct vis_ctx *c,
		    const struct vis_family *vf, size_t cap, int loose);
void vis_stream_sum(struct vis_stream *st, int64_t ts, uint64_t seq,
		    int type);
void vis_stream_sum_done(struct vis_stream *st);
void vis_stream_rewind(struct vis_stream *st);
int vis_stream_next(struct vis_stream *st, struct vcell *x);
void vis_stream_release(struct vis_stream *st);

/*
 * KEEP_DELETED_CELLS: what a major compaction (every file of the store)
 * keeps of one family of one row (visible.c, docs/engine.md).  A read
 * whose time range ends at T ignores the markers of timestamp >= T, so
 * a family with KEEP_DELETED_CELLS has one evaluation per distinct
 * marker timestamp, and one with none ignored; the rule takes at most
 * VIS_KDC_MAX_TS distinct marker timestamps in a column and its row's
 * DeleteFamily markers together.
 */
#define VIS_KDC_MAX_TS 16
struct vis_kdc {
	struct vis_scratch s;
	struct vis_family vf[VIS_KDC_MAX_TS + 1];	/* DeleteFamily markers
							   of each evaluation */
	struct vis_family vk[VIS_KDC_MAX_TS + 1];	/* those kept */
	struct vcell *v, *w;	/* the row's cells but DeleteFamily
				   markers; a column's kept ones */
	size_t vcap, wcap;
	size_t *ri;		/* v[i] is cells[ri[i]] */
	size_t ricap;
	uint64_t *live, *live2;	/* bit t: live in evaluation t; bit
				   32 + t: expiring there */
	size_t lcap, l2cap;
	struct vis_mark *kp;	/* the row's kept puts */
	size_t kpcap;
};
/* Zeroed to start, k is scratch reused from row to row.  cells[0..n),
 * one family of one row in ikey order (c->f with KEEP_DELETED_CELLS),
 * every one at or below c->snapshot: sets keep[i] for each cell a
 * major compaction must keep so that no read of any time range, at any
 * later snapshot and time, changes, and returns 1; or returns 0 (keep
 * undefined) when a column
 * passes VIS_KDC_MAX_TS or the check of what the rule keeps fails: the
 * caller then keeps every cell.  O(k n log n) for k marker timestamps;
 * aborts without memory, as vis_column does. */
int vis_kdc_row(const struct vis_ctx *c, struct vis_kdc *k,
		const struct rcell *cells, size_t n, unsigned char *keep);
void vis_kdc_release(struct vis_kdc *k);

/* --- view iterators (viewiter.c) -------------------------------------- */

/* An iterator over region r's view v for the given families (NULL: all)
 * covering seq <= snapshot, clamped to the region's rows.  For Gets,
 * row limits files by key range and bloom (NULL: scan).  NULL: no
 * memory. */
struct iter *view_iter(struct cf_db *db, struct region *r, struct view *v,
		       const struct cf_read_opts *o, const void *row,
		       size_t rowlen, int fill_cache);
/* A scan's iterator over view v from row `from` (to `stop`, when
 * has_stop): the children a scan of that range cannot need are left
 * out, and a single child is returned unmerged. */
struct iter *view_scan_iter(struct cf_db *db, struct view *v,
			    const struct cf_read_opts *o, const void *from,
			    size_t fromlen, const struct buf *stop,
			    int has_stop, int fill_cache);
/* An iterator over one store file, clamped to its reference's rows; a
 * file that could not be opened gives an iterator in error
 * (CF_ECORRUPT).  NULL: no memory. */
struct iter *sfile_iter(struct sfile *f, int fill_cache);
/* What sfile_may_match found: the file cannot hold what the read wants
 * without a look (its range, times or emptiness), its bloom filter was
 * consulted and said no, or it may. */
enum { FM_SKIP = 0, FM_MAYBE = 1, FM_BLOOM_NO = 2 };
/* May file f hold cells of row (NULL: any) in the read's time range? */
int sfile_may_match(struct cf_db *db, struct sfile *f,
		    const struct cf_read_opts *o, const void *row,
		    size_t rowlen);
/* Does the read o (NULL: all) want family fam? */
int read_wants_family(const struct cf_read_opts *o, const char *fam,
		      size_t famlen);
/* The smallest internal key of row (empty family, newest everything)
 * into dst; returns its length. */
size_t row_start_key(unsigned char *dst, const void *row, size_t rowlen);
/* A read consulted two or more files of st (a store of a view of r):
 * counts it, and asks the compactor for a compaction of the whole store
 * once such reads reach its budget (docs/engine.md, "read-driven
 * compaction"). */
void store_note_multi_read(struct cf_db *db, struct fstore *st);

/* --- reading rows (read.c) --------------------------------------------- */

/* Reads the visible cells of the row under the iterator positioned at
 * its first cell, appending to out; leaves the iterator on the next
 * row, or, given last (a Get of named columns of one family, last the
 * greatest of them), anywhere once the cells left cannot be shown.
 * Returns CF_OK or the iterator's error. */
struct rowacc;
int read_row(struct cf_db *db, struct cf_table *t, struct iter *it,
	     const struct cf_read_opts *o, uint64_t snapshot,
	     const struct cf_column *last, cf_row *out);

cf_row *row_new(void);
void row_reset(cf_row *r);
int row_set_key(cf_row *r, const void *row, size_t rowlen);

/* For the paged read (rowpage.c), what read_row does step by step:
 * row_gather appends the iterator's current cell (key k, decoded x,
 * value v) to out's gathered cells (*n of them), copying it (or pinning
 * a large value); row_same_as_last says whether it is the last one
 * gathered again; row_emit_family classifies the n gathered cells (one
 * family's, in key order) and makes out's cells the live ones;
 * row_seek_past_column seeks past the column of k.  row_push appends a
 * cell to out, its bytes copied; row_finish makes out's cells point
 * into its buffers once it is complete.  CF_ENOMEM. */
int row_gather(cf_row *out, size_t *n, struct iter *it,
	       const unsigned char *k, size_t kl, const struct ikey *x,
	       const unsigned char *v, size_t vl, int with_val);
int row_same_as_last(const cf_row *out, size_t n, const unsigned char *k,
		     size_t kl, const struct ikey *x);
int row_emit_family(const struct cf_family *f, cf_row *out,
		    const struct cf_read_opts *o, uint64_t snapshot,
		    size_t n);
void row_seek_past_column(struct iter *it, const struct ikey *k);
int row_push(cf_row *r, const char *fam, size_t famlen,
	     const unsigned char *qual, size_t qlen, int64_t ts,
	     const unsigned char *val, size_t vlen, int with_val);
void row_finish(cf_row *r);
/* For a scan in pages (cf_scan_opts.batch): makes *cp (NULL: a new
 * one, freed with cf_row_cursor_close) a cursor over row read from it,
 * positioned on the row's first cell, of view v at snapshot snap, all
 * three the scanner's and left to it; o as for cf_row_cursor_open.  The
 * cursor leaves it on the first cell after the row once its last page
 * is given.  CF_ENOMEM. */
struct cf_row_cursor;
int row_cursor_at(struct cf_table *t, struct view *v, struct iter *it,
		  uint64_t snap, const struct cf_read_opts *o,
		  const void *row, size_t rowlen, struct cf_row_cursor **cp);
/* Latest visible value of one cell into out; CF_ENOTFOUND if none.
 * *ts gets its timestamp. */
int table_get_latest(struct cf_table *t, const void *row, size_t rowlen,
		     const char *fam, size_t famlen, const void *qual,
		     size_t qlen, struct buf *out, int64_t *ts);

/* --- what the catalog does not name (sweep.c) ----------------------- */

/* At open, the catalog loaded: removes store files, region and table
 * directories the catalog does not name, each with a log line. */
void db_sweep(struct cf_db *db);
/* At a clean close, the background threads stopped: removes the
 * directories of split parents no region's files reference. */
void db_remove_retired(struct cf_db *db);

/* --- flush and compaction (flush.c, compact.c) ----------------------- */

/* Writes r's memstores into store files (flush.c); the caller holds
 * db->ddl_mu.  db.c then purges the WAL. */
int region_flush(struct cf_db *db, struct region *r);
int region_compact(struct cf_db *db, struct region *r, int major);
/* Would a minor compaction of r (region_compact(db, r, 0)) do anything? */
int region_needs_compaction(struct cf_db *db, struct region *r);

/* Which files a minor compaction takes: HBase's default policy
 * (ExploringCompactionPolicy; docs/engine.md).  Of every run of
 * min_files to max_files files adjacent in sequence order, the runs in
 * which no file is larger than ratio times the others together (or
 * whose total is under min_size) are candidates; the one that removes
 * the most files wins, then the one of fewest bytes (runs tried from the
 * oldest, as HBase tries them).  With stuck_files files or more the
 * store might be stuck: the run of most files a byte wins (by 5%), and
 * when no run is in ratio the smallest run is taken.  sizes[0..n) are
 * the files' sizes, newest first; the run is [*first, *first + *count).
 * 0 when there is nothing to do. */
struct compact_conf {
	int min_files, max_files;
	uint64_t min_size;
	double ratio;
	int stuck_files;
};
int compact_pick(const uint64_t *sizes, size_t n,
		 const struct compact_conf *c, size_t *first, size_t *count);
int table_merge_at(struct cf_db *db, struct cf_table *t, const void *key,
		   size_t keylen);
int table_split_at(struct cf_db *db, struct cf_table *t, const void *key,
		   size_t keylen);
/* The store bytes past which a region of t splits: 2 * flush_size while
 * t has one region, then split_size (HBase's SteppingSplitPolicy). */
uint64_t table_split_size(const struct cf_db *db, struct cf_table *t);
/* Splits r at its middle when its store files pass table_split_size: 1
 * if it split, CF_OK if it did not need to or could not (a single
 * row). */
int region_split_if_big(struct cf_db *db, struct region *r);

/* --- batches and the write path (write.c) ------------------------------ */

enum { BOP_PUT = 1, BOP_DEL_VERSION, BOP_DEL_COLUMN, BOP_DEL_FAMILY,
       BOP_DEL_ROW };

struct bop {
	int kind;
	size_t row, rowlen;	/* offsets into cf_batch.data */
	size_t fam, famlen;
	size_t qual, qlen;
	size_t val, vlen;
	const void *ext;	/* the value, not copied (cf_batch_put_ref) */
	int64_t ts;
};

struct cf_batch {
	struct bop *ops;
	size_t n, cap;
	struct buf data;
	int keep_stamp;		/* cf_batch_keep_stamp() */
};

/* Gives t a new stamp (cf_table_stamp()), once what changed it is
 * visible to readers. */
static inline void table_new_stamp(struct cf_table *t)
{
	atomic_store(&t->stamp, atomic_fetch_add(&t->db->stamps, 1) + 1);
}

/* Applies one decoded WAL record during recovery: every entry for a live
 * table and family whose region has not flushed past its seq goes into
 * that region's memstore.  *max_seq is raised to the record's largest. */
int wal_record_replay(struct cf_db *db, const void *rec, size_t n,
		      uint64_t *max_seq);
/* Stops writers from outrunning flushes and compactions (stall). */
void write_throttle(struct cf_db *db, struct cf_table *t);

/* --- region views (region.c) ------------------------------------------ */

struct view *view_new(void);
/* A copy of v (new references on everything) to modify and publish. */
struct view *view_clone(const struct view *v);
/* Publishes nv as r's view (takes over the caller's reference). */
void region_set_view(struct region *r, struct view *nv);
struct fstore *view_store(struct view *v, const char *fam, int create);
void sfile_free(struct sfile *f);
struct region *region_new(struct cf_table *t, uint64_t id, const void *start,
			  size_t startlen, const void *end, size_t endlen);
void region_free(struct region *r);
uint64_t region_disk_bytes(struct view *v);
size_t region_file_count(struct view *v);

/* Opens store file id of family fam just written (in_memory: the
 * family's IN_MEMORY setting, for the block cache) and wraps it for a
 * view. */
int sfile_open(struct cf_db *db, struct cf_table *t, int64_t home,
	       const char *fam, int in_memory, uint64_t id, uint64_t size,
	       struct sfile **out);
/* Puts f into the family store of v, keeping newest-first order. */
int view_add_file(struct view *v, const char *fam, struct sfile *f);
/* The path of a region's directory, or of one of its store files, into
 * out (NUL-terminated, len without it).  CF_ENOMEM. */
int region_dir(struct cf_db *db, struct cf_table *t, int64_t region_id,
	       struct buf *out);
int store_path(struct cf_db *db, struct cf_table *t, int64_t region_id,
	       const char *fam, uint64_t file_id, struct buf *out);
/* Writes DATADIR/data/T/REGION/.regioninfo (docs/engine.md). */
int region_write_info(struct cf_db *db, struct region *r);

/* --- the offline check (check.c) -------------------------------------- */

/* Parses the text of a .regioninfo file (NUL-terminated), as
 * cellfs-fsck reads it: CF_OK, CF_ECORRUPT (tests/fuzz). */
int check_regioninfo_parse(const char *text);

#endif
