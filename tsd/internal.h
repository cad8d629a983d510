/*
 * internal.h: what the files of tsd/ share behind tsd.h: the handle, the
 * set of rows waiting for compaction, row decoding and the cursor
 * machinery.  Not for use outside tsd/.
 *
 * Lock order: tsd.mu is a leaf (never held across an engine call); the
 * UID cache locks (uid.c) and the cursor and writer locks are taken
 * before engine calls, never while holding tsd.mu.
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
};

/* Opens handles on the two tables (the caller closes them), creating
 * them when missing; when tsdb-uid had to be created the UID cache is
 * emptied (its old mappings died with the old table). */
int tsd_tables(tsd *t, cf_table **uidt, cf_table **dbt);

/* Queues a row for compaction (best effort: memory pressure skips it). */
void tsd_pending_add(tsd *t, const unsigned char *key, size_t len);

/* Compacts one row of tsdb (OpenTSDB's CompactionQueue.compact): merges
 * its data cells into one and deletes the versions it merged.  row may
 * be the row already read, or NULL to read it.  *done is 1 when a write
 * was made.  Engine errors; CF_ECORRUPT for cells that do not decode. */
int tsd_compact_row(tsd *t, cf_table *dbt, const unsigned char *key,
		    size_t klen, const cf_row *row, int *done);

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

/* Appends "k1=v1 k2=v2" (names sorted by key) of the tag UID pairs
 * tags[0..ntags) to out, each preceded by a space. */
int tsd_format_tags(tsd *t, cf_table *uidt, const unsigned char *tags,
		    size_t ntags, struct buf *out);

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
int tsd_cursor_new(struct tsd_cursor **out);

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
