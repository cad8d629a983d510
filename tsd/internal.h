/*
 * internal.h: what the files of tsd/ share behind tsd.h: the handle, the
 * set of rows waiting for compaction, row decoding and the cursor
 * machinery.  Not for use outside tsd/.
 *
 * Lock order: tsd.mu is a leaf (never held across an engine call); the
 * UID cache locks (uid.c) and the cursor and writer locks are taken
 * before engine calls, never while holding tsd.mu; del_lock before
 * engine locks, after the recent points'; seen_mu (tsmeta.c) is a leaf
 * too.
 */
#ifndef CF_TSD_INTERNAL_H
#define CF_TSD_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/cellfs.h"
#include "tsd/agg.h"
#include "tsd/codec.h"
#include "tsd/tsd.h"
#include "tsd/uid.h"
#include "util/buf.h"

/* A row key waiting for compaction (OpenTSDB's CompactionQueue). */
struct rowent {
	struct rowent *next;
	uint32_t base;
	size_t len;
	unsigned char key[];
};

struct rowset {
	struct rowent **b;
	size_t nb, count;
};

struct tsd_recent;
struct tsd_blk;

#define TSD_POOL_CLASSES 20	/* pool.c: blocks of 64 << k points */

struct tsd {
	cf_db *db;
	struct tsd_options o;
	char gnuplot[256];
	struct tsd_uids *uids;
	pthread_mutex_t mu;	/* pending, stats, stop */
	struct rowset pending;
	struct tsd_stats st;
	pthread_cond_t cv;	/* wakes the compaction thread */
	pthread_t thr;
	int thr_started;
	int stop;
	unsigned tmp_seq;	/* names of gnuplot work directories */
	struct tsd_recent *recent;	/* recent.c; NULL: none */
	pthread_mutex_t pool_mu;	/* pool.c's free lists */
	struct tsd_blk *pool[TSD_POOL_CLASSES];
	size_t pool_bytes;
	int recent_wake;	/* a query found it stale (under mu) */
	/* Row compactions (read) against deletes of what a query reads
	 * (write): a compaction writes back the points it read, so one
	 * of a row read before a delete would bring them back.  del_gen
	 * counts the deletes finished (changed under del_lock written,
	 * read atomically).  Taken before engine locks, after recent's. */
	pthread_rwlock_t del_lock;
	uint64_t del_gen;
	/* Series tracking (tsmeta.c): 64-bit hashes of TSUIDs (open
	 * addressing, 0 empty; emptied when full) and a value each: with
	 * realtime_ts 1, the series' meta is known to exist (a write reads
	 * tsdb-meta only for series it has not seen); else the second its
	 * counter was last written (a write in the same second writes it
	 * not again).  Taken after every other lock, held over no engine
	 * call. */
	pthread_mutex_t seen_mu;
	uint64_t *seen;
	uint32_t *seen_val;
	size_t seen_cap, seen_n;
};

/* Opens handles on the two tables (the caller closes them), creating
 * them when missing; when tsdb-uid had to be created the UID cache is
 * emptied (its old mappings died with the old table). */
int tsd_tables(tsd *t, cf_table **uidt, cf_table **dbt);

/* Queues a row for compaction (best effort: memory pressure skips it). */
void tsd_pending_add(tsd *t, const unsigned char *key, size_t len);

/* Compacts one row of tsdb (OpenTSDB's CompactionQueue.compact): merges
 * its data cells into one and deletes the versions it merged.  row may
 * be the row already read, gen then tsd_del_gen() taken before the read
 * began (a delete finished since: nothing is written), or NULL to read
 * it.  *done is 1 when a write was made.  Engine errors; CF_ECORRUPT
 * for cells that do not decode. */
int tsd_compact_row(tsd *t, cf_table *dbt, const unsigned char *key,
		    size_t klen, const cf_row *row, uint64_t gen, int *done);

/* The deletes of query data finished so far (struct tsd's del_gen). */
uint64_t tsd_del_gen(tsd *t);

/* 1 when a row of base hour base is old enough to compact now. */
int tsd_row_finished(tsd *t, uint32_t base);

/* A decoded point of a row: the timestamp in ms, the value, and whether
 * it was written with a millisecond qualifier. */
struct tsd_rowpt {
	int64_t ts;
	struct tsd_value v;
	int ms;
};

/* Decodes the data points of a tsdb row (single and compacted cells) in
 * time order into *pts (realloc'd; *cap its capacity), *n the count; the
 * number of data cells into *ncells.  CF_ECORRUPT, CF_ENOMEM. */
int tsd_row_decode(const cf_row *row, struct tsd_rowpt **pts, size_t *cap,
		   size_t *n, size_t *ncells);

/* The data cells of row (family t, a qualifier of a nonzero even length,
 * a value: rows read keys_only have none) into *cells (malloc'd, the
 * caller frees it, pointing into row), their count into *n.  CF_ENOMEM. */
int tsd_row_cells(const cf_row *row, struct tsd_rawcell **cells, size_t *n);

/* Fills *so (cleared; the newest version of each cell) to scan the rows of
 * metric muid whose base hours lie in [from, to), seconds: start and stop
 * receive the bounds' keys, or when to lies past the last base hour the
 * metric's prefix ends the scan.  Returns 0 when from lies past the last
 * base hour (there is nothing to scan), else 1. */
int tsd_hour_scan(struct cf_scan_opts *so, unsigned char *start,
		  unsigned char *stop, uint32_t muid, int64_t from, int64_t to);

/* Appends "k1=v1 k2=v2" (names sorted by key) of the tag UID pairs
 * tags[0..ntags) to out, each preceded by a space. */
int tsd_format_tags(tsd *t, cf_table *uidt, const unsigned char *tags,
		    size_t ntags, struct buf *out);

/* One point of a write, encoded (tsd.c's write path). */
struct tsd_point {
	unsigned char key[TSD_ROWKEY_MAX];
	unsigned char q[4], v[8];
	unsigned char klen, qlen, vlen;
	uint32_t seq;		/* its line's place in the write */
	unsigned char gone;	/* a later line of the write gives its time
				 * again: not stored (tsd.c) */
};

/* --- point arrays of queries (pool.c) --------------------------------- */

/* An array of capacity *cap >= want holding the first n points of p (an
 * array of this pool, or NULL), which it replaces (p is given back).
 * NULL: no memory (p untouched). */
struct tsd_dp *tsd_points_grow(tsd *t, struct tsd_dp *p, size_t n,
			       size_t want, size_t *cap);
/* Gives an array of this pool back (NULL: nothing). */
void tsd_points_free(tsd *t, struct tsd_dp *p);
/* Frees the blocks kept (tsd_close). */
void tsd_points_pool_release(tsd *t);

/* --- recent points (recent.c) -------------------------------------------
 * A copy in memory of the newest hours of tsdb, for queries; see the
 * comment at the top of recent.c. */

/* One row (metric, hour, tag set) of the copy: n points in time order,
 * off[i] ms after the base hour, val[i] the int64 or the double's bits
 * (isf[i]).  fallback: read this row from the table. */
struct tsd_recent_row {
	uint32_t base;
	uint32_t n, cap;
	int fallback;
	uint32_t *off;
	uint64_t *val;
	uint8_t *isf;
};

/* What a query gives tsd_recent_query(): table() reads the rows of
 * hours [from, to) from the table; series() takes the rows[0..n) of one
 * series (tags: ntags UID pairs) from the copy.  CF_* codes. */
struct tsd_recent_cb {
	void *arg;
	int (*table)(void *arg, int64_t from, int64_t to);
	int (*series)(void *arg, uint32_t muid, const unsigned char *tags,
		      size_t ntags, const struct tsd_recent_row *rows,
		      size_t n);
};

int tsd_recent_new(const struct tsd_options *o, struct tsd_recent **out);
void tsd_recent_free(struct tsd_recent *r);
/* After a write of pts[0..n) (in key order) was applied. */
void tsd_recent_put(tsd *t, const struct tsd_point *const *pts, size_t n);
/* Rebuilds the copy from dbt when it is not valid for its stamp, and
 * drops hours older than the window.  Engine errors. */
int tsd_recent_maintain(tsd *t, cf_table *dbt);
/* 1 when tsd_recent_maintain() has work. */
int tsd_recent_wanted(tsd *t, cf_table *dbt);
/* The rows of metric muid of base hours [ss, se) (seconds): those the
 * copy covers through cb->series (called under its read lock: no tsd
 * lock may be taken in it), the others through cb->table, earlier hours
 * before later ones.  Errors of the callbacks. */
int tsd_recent_query(tsd *t, cf_table *dbt, uint32_t muid, int64_t ss,
		     int64_t se, const struct tsd_recent_cb *cb);
void tsd_recent_stats(tsd *t, struct tsd_stats *st);
/* Asks the compaction thread for tsd_recent_maintain() now. */
void tsd_recent_kick(tsd *t);

/* --- annotations (tsd/annot.c) ----------------------------------------- */

/* A note found for a query: its row's tags (ntags UID pairs; none for a
 * global note), its start (ms) and its JSON as the API prints it. */
typedef int tsd_note_fn(void *arg, const unsigned char *tags, size_t ntags,
			int64_t ms, const char *json, size_t len);
/* The notes of metric muid (0: the global notes) whose start lies in
 * [start_ms, end_ms], through fn, in row order (then by start within a
 * row).  No table of notes: none.  Engine errors, fn's. */
int tsd_notes_of(tsd *t, uint32_t muid, int64_t start_ms, int64_t end_ms,
		 tsd_note_fn *fn, void *arg);

/* Deletes column fam:qual of row key[0..klen) at now (HBase's
 * DeleteColumns).  Engine errors. */
int tsd_delete_column(cf_table *t, const void *key, size_t klen,
		      const char *fam, const char *qual);

/* tsd_qs_take() with its reason in *err (NULL: none kept). */
int tsd_qs_params(const char *qs, size_t len, const char *const *names,
		  size_t n, char **vals, struct tsd_error *err);

/* Replaces *dst (malloc'd or NULL) by a copy of src (NULL: "").
 * CF_ENOMEM, *dst kept. */
int tsd_set_str(char **dst, const char *src);

/* Appends the compact text of j (a json_t, consumed; NULL: CF_ENOMEM),
 * keys in their order. */
int tsd_json_put(struct buf *out, void *j);

/* Sets *err (NULL: nothing) to the printf-formatted reason, line 0. */
void tsd_errf(struct tsd_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The bytes of TSUID hex (a metric UID and 1 to TSD_MAX_TAGS tag
 * pairs; room for TSD_UID_WIDTH + TSD_MAX_TAGS * 6), as
 * UniqueId.stringToUid reads it.  CF_EINVAL (`invalid TSUID: x`). */
int tsd_tsuid_bytes(const char *hex, unsigned char *b, size_t *n,
		    struct tsd_error *err);

/* The UIDMeta of a UID just assigned (tsd_uid_assigned_fn; arg the
 * handle): created now, unless one is stored.  Failures are logged. */
void tsd_uidmeta_assigned(void *arg, cf_table *uidt, enum tsd_kind kind,
			  uint32_t uid);

/* --- series meta data (tsd/tsmeta.c) ---------------------------------- */

/* After a write of pts[0..n) (in key order) was applied: the tracking
 * of struct tsd_options (tsuid_tracking and the others).  Failures are
 * logged, not returned: the points are stored. */
void tsd_tsmeta_track(tsd *t, const struct tsd_point *const *pts, size_t n);
/* Frees the set of series known to have a meta (tsd_close). */
void tsd_tsmeta_release(tsd *t);

/* --- trees (tree.c: definitions and rules; branch.c: the builder,
 * branches and leaves; tree.h has the layout of tsdb-tree) ------------ */

#define TSD_TREE_FAM "t"
#define TSD_TREE_QTREE "tree"
#define TSD_TREE_QBRANCH "branch"
#define TSD_TREE_QRULE "tree_rule:"
#define TSD_TREE_QLEAF "leaf:"
#define TSD_TREE_QCOLL "tree_collision:"
#define TSD_TREE_QNM "tree_not_matched:"

enum { TSD_RULE_METRIC, TSD_RULE_METRIC_CUSTOM, TSD_RULE_TAGK,
       TSD_RULE_TAGK_CUSTOM, TSD_RULE_TAGV_CUSTOM, TSD_RULE_NTYPES };
/* TreeRuleType's names, by TSD_RULE_x. */
extern const char *const tsd_rule_types[TSD_RULE_NTYPES];

/* A rule's texts, by index in tsd_rule.s. */
enum { TSD_RULE_FIELD, TSD_RULE_CUSTOM, TSD_RULE_REGEX, TSD_RULE_SEP,
       TSD_RULE_DESC, TSD_RULE_NOTES, TSD_RULE_FMT, TSD_RULE_NSTR };

/* A TreeRule: every text malloc'd (never NULL once initialized). */
struct tsd_rule {
	int type;		/* TSD_RULE_x; -1: none */
	char *s[TSD_RULE_NSTR];
	int gidx, level, order, tree;
	unsigned given;		/* the fields a request set (tree.c) */
	void *re;		/* the compiled regex (pcre2_code), or NULL */
};

enum { TSD_TREE_NAME, TSD_TREE_DESC, TSD_TREE_NOTES, TSD_TREE_NSTR };

/* A Tree with its rules. */
struct tsd_tree {
	int id;
	char *s[TSD_TREE_NSTR];
	int strict, enabled, fails;	/* fails: storeFailures */
	int64_t created;
	unsigned given;		/* the fields a request set (tree.c) */
	struct tsd_rule *rules;	/* by level, then order */
	size_t nrules;
};

/* Initializes r (empty texts, no type) / frees what it holds.
 * CF_ENOMEM. */
int tsd_rule_init(struct tsd_rule *r);
void tsd_rule_free(struct tsd_rule *r);
/* The fields of JSON object j (a json_t) into r as TreeRule's setters
 * take them; the regex compiled.  CF_EINVAL with err (may be NULL). */
int tsd_rule_parse(void *j, struct tsd_rule *r, struct tsd_error *err);
/* TreeRule.toString: "[TREE:LEVEL:ORDER:TYPE]" into out. */
void tsd_rule_name(const struct tsd_rule *r, char *out, size_t n);
/* qsort's order of rules: by level, then order. */
int tsd_rule_cmp(const void *a, const void *b);

/* Initializes tr / frees what it holds (its rules too).  CF_ENOMEM. */
int tsd_tree_init(struct tsd_tree *tr);
void tsd_tree_free(struct tsd_tree *tr);
/* The fields of JSON object j (a json_t) into tr, as Tree's setters
 * take them (not its rules).  CF_EINVAL with err (may be NULL). */
int tsd_tree_parse(void *j, struct tsd_tree *tr, struct tsd_error *err);
/* The tree table (made when create is set); *out NULL when missing and
 * not made. */
int tsd_tree_table(tsd *t, int create, cf_table **out);
/* The stored tree id with its rules into tr (initialized here, freed by
 * the caller even on error).  CF_EINVAL (`Invalid Tree ID`),
 * CF_ENOTFOUND (`Unable to locate tree: N`), CF_ECORRUPT. */
int tsd_tree_load(tsd *t, int id, struct tsd_tree *tr,
		  struct tsd_error *err);
/* Calls fn for each stored tree (tt may be NULL: none) in ID order; the
 * tree is freed after fn.  fn's first error stops the walk. */
int tsd_tree_each(cf_table *tt, int (*fn)(void *arg, struct tsd_tree *tr),
		  void *arg, struct tsd_error *err);
/* The tree ID as the 2 bytes of a row key into k. */
void tsd_tree_key(int id, unsigned char *k);
/* CF_EINVAL (`Invalid Tree ID`) unless 1 <= id <= 65535. */
int tsd_tree_check_id(int id, struct tsd_error *err);
/* Puts val into family t, qualifier qual of row iff the stored bytes
 * are expect (NULL: no cell); *applied says which. */
int tsd_tree_cas(cf_table *tt, const void *row, size_t rlen,
		 const char *qual, size_t qlen, const char *val, size_t vlen,
		 const struct buf *expect, int *applied);
/* Upper-case hex of k[0..n) into out (room for 2n + 1). */
void tsd_tree_hex(const unsigned char *k, size_t n, char *out);
/* Hex s[0..n) (odd: a leading 0, as Branch.stringToId pads) into b
 * (room max): the byte count, or -1 when not hex or too long. */
long tsd_tree_unhex(const char *s, size_t n, unsigned char *b, size_t max);

/* --- cursors ----------------------------------------------------------- */

struct tsd_cursor {
	pthread_mutex_t mu;
	struct buf win;		/* content [base, base + win.len) */
	uint64_t base;
	int eof;
	/* production: more() appends to win (setting eof at the end);
	 * restart() goes back to the beginning; release() frees state */
	int (*more)(struct tsd_cursor *c);
	int (*restart)(struct tsd_cursor *c);
	void (*release)(struct tsd_cursor *c);
	void *state;
};

/* A cursor over content produced on demand by the callbacks (set by the
 * caller on the returned cursor).  CF_ENOMEM. */
/* The BLOCKSIZE of the tsdb table's family t when tsd/ makes it. */
#define TSD_BLOCKSIZE (256 * 1024)

int tsd_cursor_new(struct tsd_cursor **out);

struct tsd_query;
struct tsd_xset;
/*
 * Runs the parsed query q (tsd/exec.c) and gives each sub query's groups,
 * aggregated whole, as expressions' inputs (tsd/expr.h): sets[i] gets
 * q->subs[i]'s (release each with tsd_xset_release).  q->gexp must be
 * set (the groups keep their tags' UIDs and names).  The points of all
 * groups count against max_graph_points (CF_ETOOBIG, *err says so).
 * Errors: those of tsd_query_open().
 */
int tsd_query_sets(tsd *t, const struct tsd_query *q, struct tsd_xset *sets,
		   struct tsd_error *err);

/* Renders the query q (already parsed) to a graph: the result groups in
 * data are drawn by gnuplot into a PNG appended to out.  CF_EIO with
 * *err when gnuplot fails. */
struct tsd_plot_series {
	char *label;		/* "metric{k=v,...}" */
	struct tsd_dp *dp;
	size_t n;
};
int tsd_plot(tsd *t, const struct tsd_query *q,
	     const struct tsd_plot_series *series, size_t n, struct buf *out,
	     struct tsd_error *err);

#endif
