/*
 * read.c: naming tags, and the metric dump cursor.
 *
 * A dump scans the rows of one metric (row prefix = metric UID) in key
 * order, a bounded number of rows per call of its producer, and prints
 * every point as "M TS VALUE TAGS".  Rows met whose hour is over and that
 * still hold several cells are compacted on the way when compact_on_read
 * is set, as OpenTSDB compacts at query time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsd/internal.h"
#include "tsd/number.h"
#include "util/coding.h"
#include "util/err.h"
#include "util/log.h"

#define DUMP_CHUNK (64 * 1024)

int tsd_format_tags(tsd *t, cf_table *uidt, const unsigned char *tags,
		    size_t ntags, struct buf *out)
{
	struct buf names = BUF_INIT;
	size_t koff[TSD_MAX_TAGS], voff[TSD_MAX_TAGS], vend[TSD_MAX_TAGS];
	size_t order[TSD_MAX_TAGS];
	int rc = CF_OK;

	if (ntags > TSD_MAX_TAGS)
		return CF_ECORRUPT;
	for (size_t i = 0; i < ntags; i++) {
		const unsigned char *p = tags + i * 2 * TSD_UID_WIDTH;
		koff[i] = names.len;
		if ((rc = tsd_uid_name(t->uids, uidt, TSD_TAGK, tsd_uid_get(p),
				       &names)) ||
		    (rc = buf_putc(&names, 0)))
			goto out;
		voff[i] = names.len;
		if ((rc = tsd_uid_name(t->uids, uidt, TSD_TAGV,
				       tsd_uid_get(p + TSD_UID_WIDTH), &names)))
			goto out;
		vend[i] = names.len;
		if ((rc = buf_putc(&names, 0)))
			goto out;
		order[i] = i;
	}
	/* insertion sort by tag key name: at most eight */
	for (size_t i = 1; i < ntags; i++) {
		size_t x = order[i], j = i;
		while (j > 0 && strcmp((char *)names.p + koff[order[j - 1]],
				       (char *)names.p + koff[x]) > 0) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
	for (size_t i = 0; i < ntags; i++) {
		size_t k = order[i];
		if ((rc = buf_putc(out, ' ')) ||
		    (rc = buf_append(out, names.p + koff[k],
				     voff[k] - koff[k] - 1)) ||
		    (rc = buf_putc(out, '=')) ||
		    (rc = buf_append(out, names.p + voff[k], vend[k] - voff[k])))
			goto out;
	}
out:
	buf_release(&names);
	return rc;
}

/* --- the metric dump ----------------------------------------------------- */

struct dump {
	tsd *t;
	cf_table *uidt, *dbt;
	cf_scanner *s;
	unsigned char muid[TSD_UID_WIDTH];
	char *metric;
	struct tsd_rowpt *pts;
	size_t cap;
	struct buf tags;
	uint64_t gen;	/* tsd_del_gen() before the scan opened */
};

static int dump_scan(struct dump *d)
{
	static const struct cf_column col = { "t", 1, NULL, 0 };
	struct cf_scan_opts so;

	memset(&so, 0, sizeof so);
	so.read.columns = &col;
	so.read.ncolumns = 1;
	so.read.max_ts = INT64_MAX;
	so.read.max_versions = 1;
	so.prefix = d->muid;
	so.prefixlen = TSD_UID_WIDTH;
	d->gen = tsd_del_gen(d->t);
	return cf_scan_open(d->dbt, &so, &d->s);
}

static int dump_restart(struct tsd_cursor *c)
{
	struct dump *d = c->state;
	cf_scan_close(d->s);
	d->s = NULL;
	return dump_scan(d);
}

static int dump_row(struct dump *d, const cf_row *row, struct buf *out)
{
	size_t klen, n, ncells;
	const unsigned char *key = cf_row_key(row, &klen);
	int rc, done;

	if (!tsd_rowkey_valid(key, klen))
		return CF_OK;	/* not a data row of ours: skip it */
	rc = tsd_row_decode(row, &d->pts, &d->cap, &n, &ncells);
	if (rc == CF_ECORRUPT) {
		cf_log(CF_LOG_WARN, "tsd: metric %s: a row does not decode; "
		       "skipped", d->metric);
		return CF_OK;
	}
	if (rc)
		return rc;
	if (ncells > 1 && d->t->o.compact_on_read &&
	    tsd_row_finished(d->t, dec_u32be(key + TSD_UID_WIDTH))) {
		rc = tsd_compact_row(d->t, d->dbt, key, klen, row, d->gen,
				     &done);
		if (rc)
			cf_log(CF_LOG_WARN, "tsd: compaction at read: %s",
			       cf_strerror(rc));
	}
	buf_reset(&d->tags);
	rc = tsd_format_tags(d->t, d->uidt, key + TSD_ROWKEY_PREFIX,
			     (klen - TSD_ROWKEY_PREFIX) / (2 * TSD_UID_WIDTH),
			     &d->tags);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		const struct tsd_rowpt *p = &d->pts[i];
		rc = tsd_buf_point(out, d->metric, p->ms ? p->ts : p->ts / 1000,
				   p->v.is_float, p->v.i, p->v.d, d->tags.p,
				   d->tags.len);
		if (rc)
			return rc;
	}
	return CF_OK;
}

static int dump_more(struct tsd_cursor *c)
{
	struct dump *d = c->state;
	size_t start = c->win.len;
	const cf_row *row;
	int rc;

	while (c->win.len - start < DUMP_CHUNK) {
		if ((rc = cf_scan_next(d->s, &row)))
			return rc;
		if (!row) {
			c->eof = 1;
			break;
		}
		if ((rc = dump_row(d, row, &c->win)))
			return rc;
	}
	return CF_OK;
}

static void dump_release(struct tsd_cursor *c)
{
	struct dump *d = c->state;
	if (!d)
		return;
	cf_scan_close(d->s);
	cf_table_close(d->uidt);
	cf_table_close(d->dbt);
	free(d->metric);
	free(d->pts);
	buf_release(&d->tags);
	free(d);
	c->state = NULL;
}

int tsd_metric_open(tsd *t, const char *metric, tsd_cursor **out)
{
	struct tsd_cursor *c = NULL;
	struct dump *d;
	uint32_t uid;
	int rc;

	if ((rc = tsd_cursor_new(&c)))
		return rc;
	d = calloc(1, sizeof *d);
	if (!d) {
		tsd_cursor_close(c);
		return CF_ENOMEM;
	}
	d->t = t;
	c->state = d;
	c->more = dump_more;
	c->restart = dump_restart;
	c->release = dump_release;
	if (!(d->metric = strdup(metric))) {
		rc = CF_ENOMEM;
		goto fail;
	}
	if ((rc = tsd_tables(t, &d->uidt, &d->dbt)))
		goto fail;
	if ((rc = tsd_uid_lookup(t->uids, d->uidt, TSD_METRICS, metric,
				 strlen(metric), &uid)))
		goto fail;
	tsd_uid_put(d->muid, uid);
	if ((rc = dump_scan(d)))
		goto fail;
	*out = c;
	return CF_OK;
fail:
	tsd_cursor_close(c);
	return rc;
}
