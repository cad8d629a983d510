/*
 * majorrow.h: a major compaction's work on the rows of one family
 * (engine/majorrow.c): a row gathered whole in the window and classified
 * at once (group_flush), or a larger one streamed column by column
 * (cs_row).  compact.c drives them over the merged store files.
 */
#ifndef CF_MAJORROW_H
#define CF_MAJORROW_H

#include <stddef.h>
#include <stdint.h>

#include "engine/internal.h"
#include "util/buf.h"

struct iter;
struct sst_builder;

/* At most this many bytes of a row's cells are gathered whole (and
 * compact_window cells); a larger row is streamed. */
#define WINDOW_BYTES (8u << 20)

/* The cells of one row of one family, gathered (key and value each). */
struct group {
	struct buf data;
	size_t *offs;
	size_t n, cap;
	struct rcell *cells;
	size_t ccap;
	unsigned char *keep;	/* KEEP_DELETED_CELLS: vis_kdc_row's */
	size_t kcap;
	struct vis_kdc kdc;
};

/* Appends a cell (its encoded key and value) to g. */
int group_add(struct group *g, const unsigned char *k, size_t kl,
	      const unsigned char *v, size_t vl);
/* Classifies the gathered row at snapshot snap and time now, writes what
 * survives to b and empties g. */
int group_flush(struct group *g, const struct cf_family *f, uint64_t snap,
		int64_t now, struct sst_builder *b);
void group_release(struct group *g);

/*
 * A major compaction holds at most compact_window cells (and
 * WINDOW_BYTES of them, plus one cell) of a row.  A larger row is
 * streamed column by column: a column's fate depends only on its own
 * cells and its family's DeleteFamily markers (visible.c), which sort
 * first in the row (empty qualifier) and are kept as 16 bytes each.  A
 * column that fits the window is classified as the whole row would be;
 * a larger one is read again from its first cell: all puts in a family
 * without DeleteFamily markers, put by put (vis_puts_next, nothing
 * held); otherwise cell by cell by vis_stream in the window's entries
 * (cs_column_big), or, for a column it cannot hold, its timestamps and
 * sequence numbers (vis_column: about 100 bytes a cell, never its
 * values) are classified first (cs_column_whole).  When a
 * column might have to be kept whole (TTL and MIN_VERSIONS: group_flush)
 * and the row has DeleteFamily markers, whose fate depends on every
 * column, the columns are classified once before anything is written.
 * With KEEP_DELETED_CELLS a column that fits the window is decided with
 * the row's DeleteFamily markers as vis_kdc_row decides a row (each
 * column's evaluations depend on its cells and those markers alone),
 * the markers all kept; a larger one, and a column past the rule's
 * bound, keep every cell.
 */
struct cstream {
	const struct cf_family *f;
	struct vis_ctx vc;
	struct sst_builder *b;
	struct iter *it;
	size_t wcells;
	struct group g;		/* a column's cells, at most the window */
	struct vis_family vf;
	struct vis_scratch vs;
	struct buf row;		/* the row */
	struct buf col;		/* the first key of the column */
	struct buf last;	/* the last key taken */
	int fam_whole;		/* some column is kept whole: so are the
				   DeleteFamily markers */
	int err;		/* a failure of cs_advance */
	struct vis_mark *dfm;	/* KEEP_DELETED_CELLS: the row's
				   DeleteFamily markers, in key order */
	size_t ndfm, dfmcap;
};

/* Compacts the row of key k0 (its first cell), larger than the window,
 * from s->it into s->b (f, vc, b, it and wcells set by the caller);
 * leaves the iterator on the first cell after it. */
int cs_row(struct cstream *s, const unsigned char *k0, size_t kl0);
void cstream_release(struct cstream *s);

#endif
