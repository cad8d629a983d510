/*
 * engine-ops.h: one-cell writes for the engine tests, each its own
 * batch (header only, like tap.h).
 *
 *   put(t, row, fam, qual, ts, val)   a Put of a string value
 *   put_n(t, row, fam, qual, ts, v, n)  the same of n bytes
 *   del(t, kind, row, fam, qual, ts)  a Delete of any kind (fam, qual
 *                                     may be NULL where the kind has none)
 *   cell_show(b, cell)                appends " fam:qual@ts=value" to b
 */
#ifndef CF_TEST_ENGINE_OPS_H
#define CF_TEST_ENGINE_OPS_H

#include <inttypes.h>
#include <string.h>

#include "engine/cellfs.h"
#include "util/buf.h"

static inline int put_n(cf_table *t, const char *row, const char *fam,
			const char *qual, int64_t ts, const void *v, size_t n)
{
	cf_batch *b;
	int rc;

	cf_batch_new(&b);
	cf_batch_put(b, row, strlen(row), fam, strlen(fam), qual, strlen(qual),
		     ts, v, n);
	rc = cf_table_apply(t, b);
	cf_batch_free(b);
	return rc;
}

static inline int put(cf_table *t, const char *row, const char *fam,
		      const char *qual, int64_t ts, const char *val)
{
	return put_n(t, row, fam, qual, ts, val, strlen(val));
}

static inline int del(cf_table *t, enum cf_delete_kind k, const char *row,
		      const char *fam, const char *qual, int64_t ts)
{
	cf_batch *b;
	int rc;

	cf_batch_new(&b);
	cf_batch_delete(b, k, row, strlen(row), fam, fam ? strlen(fam) : 0,
			qual, qual ? strlen(qual) : 0, ts);
	rc = cf_table_apply(t, b);
	cf_batch_free(b);
	return rc;
}

static inline void cell_show(struct buf *b, const struct cf_cell *x)
{
	buf_printf(b, " %.*s:%.*s@%" PRId64 "=%.*s", (int)x->famlen, x->fam,
		   (int)x->qlen, (const char *)x->qual, x->ts, (int)x->vlen,
		   x->val ? (const char *)x->val : "");
}

#endif
