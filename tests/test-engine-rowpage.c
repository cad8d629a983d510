/*
 * test-engine-rowpage: a Get read in pages (cf_row_cursor) gives exactly
 * the cells of cf_table_get, in its order, whatever the page size: over
 * random histories of puts (timestamps repeated, versions crowded out),
 * every kind of delete, families with VERSIONS 1, 3 and 1000, a TTL
 * family and KEEP_DELETED_CELLS, spread over store files and the
 * memstore; with keys only or values, the latest or every version, and
 * time ranges.  Then: one snapshot for the whole read (a write between
 * pages is not seen), and a column of 20000 versions read in pages of
 * 100 holds one page, not the column.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cellfs.h"
#include "util/env.h"
#include "tests/engine-ops.h"
#include "tests/tap.h"

static cf_db *db;

/* The cells of r (or of the pages) as text: fam:qual@ts=val ... */
static void fmt_cell(struct buf *b, const struct cf_cell *c)
{
	buf_printf(b, "%.*s:%.*s@%" PRId64 "#%zu=%.*s ", (int)c->famlen,
		   c->fam, (int)c->qlen, (const char *)c->qual, c->ts,
		   c->vlen, c->val ? (int)c->vlen : 0,
		   c->val ? (const char *)c->val : "");
}

static int by_get(cf_table *t, const char *row,
		  const struct cf_read_opts *o, struct buf *b)
{
	cf_row *r;
	int rc = cf_table_get(t, row, strlen(row), o, &r);

	for (size_t i = 0; !rc && i < cf_row_count(r); i++)
		fmt_cell(b, cf_row_cell(r, i));
	cf_row_free(r);
	return rc;
}

static int by_pages(cf_table *t, const char *row,
		    const struct cf_read_opts *o, size_t limit,
		    struct buf *b)
{
	cf_row_cursor *c;
	const cf_row *p;
	int rc = cf_row_cursor_open(t, row, strlen(row), o, &c);

	while (!rc && !(rc = cf_row_cursor_next(c, limit, &p)) &&
	       cf_row_count(p)) {
		if (cf_row_count(p) > limit)
			rc = -1000;
		for (size_t i = 0; i < cf_row_count(p); i++)
			fmt_cell(b, cf_row_cell(p, i));
	}
	cf_row_cursor_close(c);
	return rc;
}

static cf_table *make(const char *name)
{
	struct cf_family f[4];
	cf_table *t;

	cf_family_default(&f[0], "a");		/* VERSIONS=1 */
	cf_family_default(&f[1], "b");
	f[1].versions = 3;
	f[1].keep_deleted = 1;
	cf_family_default(&f[2], "c");
	f[2].versions = 1000;
	cf_family_default(&f[3], "d");
	f[3].versions = 2;
	f[3].min_versions = 1;
	f[3].ttl = 3600;
	if (cf_table_create(db, name, f, 4) || cf_table_open(db, name, &t))
		abort();
	return t;
}

static const char *const fams[] = { "a", "b", "c", "d" };
static const char *const quals[] = { "", "q", "q1", "r", "zz" };

static void random_op(cf_table *t, const char *row, int64_t now)
{
	const char *fam = fams[rand() % 4];
	const char *qual = quals[rand() % 5];
	int64_t ts = now - 7200000 + (rand() % 16) * 600000;
	char val[32];
	int k = rand() % 20;

	if (rand() % 8 == 0)
		ts = CF_TS_NOW;
	snprintf(val, sizeof val, "v%d", rand() % 1000);
	if (k < 14)
		put(t, row, fam, qual, ts, val);
	else if (k < 16)
		del(t, CF_DEL_VERSION, row, fam, qual, ts);
	else if (k < 18)
		del(t, CF_DEL_COLUMN, row, fam, qual, ts);
	else if (k < 19)
		del(t, CF_DEL_FAMILY, row, fam, NULL, ts);
	else
		del(t, CF_DEL_ROW, row, NULL, NULL, ts);
}

int main(void)
{
	static const size_t limits[] = { 1, 2, 3, 7, 1000 };
	struct cf_options o;
	const char *dir;
	int64_t now = 1700000000000LL;
	cf_table *t;
	char row[16];
	int bad = 0, cases = 0;

	no_plan();
	dir = tap_tmpdir("engine-rowpage");
	env_clock_set(now);
	cf_options_default(&o);
	o.background = 0;
	o.compact_threshold = 1000;
	o.stall_files = 2000;
	is_int(cf_db_open(dir, &o, &db), CF_OK, "open");
	t = make("t");

	srand(20);
	for (int round = 0; round < 300; round++) {
		snprintf(row, sizeof row, "r%d", round % 30);
		for (int i = 0, n = rand() % 12; i < n; i++)
			random_op(t, row, now);
		if (rand() % 5 == 0)
			cf_table_flush(t);
		if (rand() % 40 == 0)
			cf_table_compact(t, rand() % 2);
	}
	for (int r = 0; r < 30; r++) {
		snprintf(row, sizeof row, "r%d", r);
		for (int v = 0; v < 8; v++) {
			struct cf_read_opts ro = CF_READ_OPTS_INIT;
			struct buf want = BUF_INIT;
			ro.keys_only = v & 1;
			ro.max_versions = v & 2 ? INT32_MAX : 1;
			if (v & 4) {
				ro.min_ts = now - 5400000;
				ro.max_ts = now - 1200000;
			}
			if (by_get(t, row, &ro, &want))
				bad++;
			for (size_t l = 0; l < 5; l++) {
				struct buf got = BUF_INIT;
				int rc = by_pages(t, row, &ro, limits[l], &got);
				cases++;
				if (rc || got.len != want.len ||
				    (got.len && memcmp(got.p, want.p, got.len))) {
					if (bad++ < 3)
						diag("%s opts %d limit %zu: rc %d\n"
						     "get:   %.*s\npages: %.*s",
						     row, v, limits[l], rc,
						     (int)want.len,
						     want.p ? (char *)want.p : "",
						     (int)got.len,
						     got.p ? (char *)got.p : "");
				}
				buf_release(&got);
			}
			buf_release(&want);
		}
	}
	ok(bad == 0, "%d paged reads equal the Get (%d differ)", cases, bad);

	/* one snapshot: a write between two pages is not seen */
	{
		cf_row_cursor *c;
		const cf_row *p;
		size_t n = 0;
		put(t, "s", "a", "1", 5, "x");
		put(t, "s", "a", "3", 5, "x");
		is_int(cf_row_cursor_open(t, "s", 1, NULL, &c), CF_OK,
		       "cursor open");
		is_int(cf_row_cursor_next(c, 1, &p), CF_OK, "first page");
		n += cf_row_count(p);
		put(t, "s", "a", "2", 5, "new");
		del(t, CF_DEL_COLUMN, "s", "a", "3", CF_TS_NOW);
		while (!cf_row_cursor_next(c, 1, &p) && cf_row_count(p)) {
			ok(cf_row_cell(p, 0)->qlen == 1 &&
			   cf_row_cell(p, 0)->qual[0] == '3',
			   "the page after the writes is a:3, as at open");
			n++;
		}
		is_int((int)n, 2, "two cells: the row as it was at open");
		cf_row_cursor_close(c);
		is_int(cf_row_cursor_open(t, "s", 1, NULL, &c), CF_OK,
		       "a new cursor");
		n = 0;
		while (!cf_row_cursor_next(c, 10, &p) && cf_row_count(p))
			n += cf_row_count(p);
		is_int((int)n, 2, "sees a:1 and a:2");
		cf_row_cursor_close(c);
	}

	/* a column of 20000 versions, in pages of 100 */
	{
		cf_row_cursor *c;
		const cf_row *p;
		struct cf_read_opts ro = CF_READ_OPTS_INIT;
		cf_batch *b;
		size_t n = 0, pages = 0, maxp = 0;
		int64_t last = INT64_MAX;
		int order = 1;
		cf_batch_new(&b);
		for (int i = 1; i <= 20000; i++)
			cf_batch_put(b, "big", 3, "c", 1, "q", 1, i, "v", 1);
		is_int(cf_table_apply(t, b), CF_OK, "20000 versions written");
		cf_batch_free(b);
		ro.keys_only = 1;
		ro.max_versions = INT32_MAX;
		is_int(cf_row_cursor_open(t, "big", 3, &ro, &c), CF_OK,
		       "cursor on the big column");
		while (!cf_row_cursor_next(c, 100, &p) && cf_row_count(p)) {
			pages++;
			if (cf_row_count(p) > maxp)
				maxp = cf_row_count(p);
			for (size_t i = 0; i < cf_row_count(p); i++) {
				if (cf_row_cell(p, i)->ts >= last)
					order = 0;
				last = cf_row_cell(p, i)->ts;
			}
			n += cf_row_count(p);
		}
		cf_row_cursor_close(c);
		is_int((int)n, 1000, "VERSIONS=1000 of them are given");
		is_int((int)pages, 10, "in 10 pages");
		is_int((int)maxp, 100, "of at most 100 cells");
		ok(order && last == 19001, "newest first, down to 19001");
	}
	is_int(cf_row_cursor_open(t, "", 0, NULL, &(cf_row_cursor *){0}),
	       CF_EINVAL, "an empty row: EINVAL");
	{
		struct cf_column col = { "a", 1, NULL, 0 };
		struct cf_read_opts ro = CF_READ_OPTS_INIT;
		cf_row_cursor *c;
		ro.columns = &col;
		ro.ncolumns = 1;
		is_int(cf_row_cursor_open(t, "s", 1, &ro, &c), CF_EINVAL,
		       "columns: EINVAL");
	}
	cf_table_close(t);
	cf_db_close(db);
	env_remove_tree(dir);
	return done_testing();
}
