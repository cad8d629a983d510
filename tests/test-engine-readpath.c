/*
 * test-engine-readpath: the shortcuts of engine/read.c's read path.
 *
 * - read_row ends a row at the next row's first cell, found from that
 *   cell's row bytes alone: rows that are prefixes of one another, rows
 *   with a zero byte, several families and versions, spread over a store
 *   file and the memstore, each get exactly their own cells in a scan, a
 *   scan from each row, and a Get.
 * - A Get of named columns of one family (several of them too) reads
 *   them, and columns of two families are a whole-row read.
 * - Families whose names are prefixes of one another keep their own
 *   VERSIONS.
 * - The thread's spare row (a thread-local variable): rows kept while
 *   more Gets run stay intact, and threads that Get and exit leave no
 *   row behind (the ASan build's leak check would say so).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cellfs.h"
#include "util/log.h"
#include "tests/engine-ops.h"
#include "tests/tap.h"

static cf_db *db;
static cf_table *t;

/* The rows written, in key order; "a\0" is the two bytes 'a' 0. */
static const struct {
	const char *row;
	size_t len;
} rows[] = {
	{ "a", 1 }, { "a\0", 2 }, { "aa", 2 }, { "aaa", 3 }, { "ab", 2 },
	{ "b", 1 },
};
#define NROWS (sizeof rows / sizeof rows[0])

static int put_row(size_t i, const char *fam, const char *qual, int64_t ts,
		   const char *val)
{
	cf_batch *b;
	int rc;

	cf_batch_new(&b);
	cf_batch_put(b, rows[i].row, rows[i].len, fam, strlen(fam), qual,
		     strlen(qual), ts, val, strlen(val));
	rc = cf_table_apply(t, b);
	cf_batch_free(b);
	return rc;
}

/* "fam:qual@ts=val ..." of a row's cells */
static const char *fmt_row(const cf_row *r, char *out, size_t n)
{
	size_t used = 0;

	out[0] = 0;
	for (size_t i = 0; i < cf_row_count(r) && used < n; i++) {
		const struct cf_cell *c = cf_row_cell(r, i);
		used += (size_t)snprintf(out + used, n - used,
					 "%s%.*s:%.*s@%lld=%.*s",
					 used ? " " : "", (int)c->famlen,
					 c->fam, (int)c->qlen,
					 (const char *)c->qual,
					 (long long)c->ts, (int)c->vlen,
					 (const char *)c->val);
	}
	return out;
}

/* What row i holds: two families, f:q with two versions (VERSIONS=1
 * shows the newer), f:r, g:q. */
static const char *want_row(size_t i, char *out, size_t n)
{
	snprintf(out, n, "f:q@20=new%zu f:r@10=r%zu g:q@10=g%zu", i, i, i);
	return out;
}

static void *getter(void *arg)
{
	static const struct cf_column col = { "f", 1, "q", 1 };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	int *bad = arg;

	o.columns = &col;
	o.ncolumns = 1;
	for (int k = 0; k < 200; k++) {
		cf_row *r;
		size_t i = (size_t)k % NROWS;
		char want[32];
		const struct cf_cell *c;

		if (cf_table_get(t, rows[i].row, rows[i].len, &o, &r)) {
			(*bad)++;
			continue;
		}
		snprintf(want, sizeof want, "new%zu", i);
		c = cf_row_cell(r, 0);
		if (cf_row_count(r) != 1 || c->vlen != strlen(want) ||
		    memcmp(c->val, want, c->vlen))
			(*bad)++;
		cf_row_free(r);
		/* a row never written */
		if (cf_table_get(t, "zz", 2, &o, &r) || cf_row_count(r) != 0)
			(*bad)++;
		cf_row_free(r);
	}
	return NULL;
}

int main(void)
{
	struct cf_options o;
	struct cf_family f[2];
	const char *dir;
	char got[256], want[256];
	cf_scanner *s;
	const cf_row *row;
	size_t n;
	int bad;

	no_plan();
	dir = tap_tmpdir("engine-readpath");
	cf_options_default(&o);
	o.background = 0;
	is_int(cf_db_open(dir, &o, &db), CF_OK, "open");
	cf_family_default(&f[0], "f");
	cf_family_default(&f[1], "g");
	if (cf_table_create(db, "t", f, 2) || cf_table_open(db, "t", &t))
		bail("create");

	/* the older version and f:r in a store file, the rest in the
	 * memstore */
	for (size_t i = 0; i < NROWS; i++) {
		char v[16];
		snprintf(v, sizeof v, "old%zu", i);
		put_row(i, "f", "q", 10, v);
		snprintf(v, sizeof v, "r%zu", i);
		put_row(i, "f", "r", 10, v);
	}
	is_int(cf_table_flush(t), CF_OK, "flush");
	for (size_t i = 0; i < NROWS; i++) {
		char v[16];
		snprintf(v, sizeof v, "new%zu", i);
		put_row(i, "f", "q", 20, v);
		snprintf(v, sizeof v, "g%zu", i);
		put_row(i, "g", "q", 10, v);
	}

	/* a full scan: every row whole, in order */
	{
		struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };
		is_int(cf_scan_open(t, &so, &s), CF_OK, "scan");
		for (n = 0; cf_scan_next(s, &row) == CF_OK && row; n++) {
			size_t kl;
			const unsigned char *k = cf_row_key(row, &kl);
			if (n >= NROWS)
				continue;
			is_mem(k, kl, rows[n].row, rows[n].len, "row %zu's key",
			       n);
			is_str(fmt_row(row, got, sizeof got),
			       want_row(n, want, sizeof want),
			       "row %zu's cells, none of the next row's", n);
		}
		is_int((int)n, (int)NROWS, "every row once");
		cf_scan_close(s);
	}

	/* a scan from each row, of two rows; and a Get of each */
	for (size_t i = 0; i < NROWS; i++) {
		struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };
		cf_row *r;
		so.start = rows[i].row;
		so.startlen = rows[i].len;
		so.limit = 2;
		if (cf_scan_open(t, &so, &s))
			bail("scan open");
		for (n = 0; cf_scan_next(s, &row) == CF_OK && row; n++)
			is_str(fmt_row(row, got, sizeof got),
			       want_row(i + n, want, sizeof want),
			       "scan from row %zu: row %zu", i, i + n);
		is_int((int)n, i + 1 < NROWS ? 2 : 1, "scan from row %zu: "
		       "its rows", i);
		cf_scan_close(s);
		is_int(cf_table_get(t, rows[i].row, rows[i].len, NULL, &r),
		       CF_OK, "get row %zu", i);
		is_str(fmt_row(r, got, sizeof got),
		       want_row(i, want, sizeof want), "get row %zu: its cells",
		       i);
		cf_row_free(r);
	}

	/* named columns: one family, two columns; two families */
	{
		struct cf_column two[2] = { { "f", 1, "r", 1 },
					    { "f", 1, "q", 1 } };
		struct cf_column fams[2] = { { "g", 1, "q", 1 },
					     { "f", 1, "q", 1 } };
		struct cf_read_opts ro = CF_READ_OPTS_INIT;
		cf_row *r;

		ro.columns = two;
		ro.ncolumns = 2;
		is_int(cf_table_get(t, "aa", 2, &ro, &r), CF_OK,
		       "get f:r and f:q");
		is_str(fmt_row(r, got, sizeof got), "f:q@20=new2 f:r@10=r2",
		       "both columns of the family, in key order");
		cf_row_free(r);
		ro.columns = fams;
		is_int(cf_table_get(t, "aa", 2, &ro, &r), CF_OK,
		       "get g:q and f:q");
		is_str(fmt_row(r, got, sizeof got), "f:q@20=new2 g:q@10=g2",
		       "columns of two families");
		cf_row_free(r);
	}

	/* rows kept while more Gets run: the spare is only a freed row */
	{
		cf_row *r[3];
		for (size_t i = 0; i < 3; i++)
			is_int(cf_table_get(t, rows[i].row, rows[i].len, NULL,
					    &r[i]), CF_OK, "get %zu, kept", i);
		for (size_t i = 0; i < 3; i++)
			is_str(fmt_row(r[i], got, sizeof got),
			       want_row(i, want, sizeof want),
			       "kept row %zu intact", i);
		cf_row_free(r[1]);	/* the spare */
		cf_row_free(r[0]);	/* freed: a spare is there */
		is_int(cf_table_get(t, rows[4].row, rows[4].len, NULL, &r[0]),
		       CF_OK, "a Get takes the spare");
		is_str(fmt_row(r[0], got, sizeof got),
		       want_row(4, want, sizeof want), "and fills it anew");
		is_str(fmt_row(r[2], got, sizeof got),
		       want_row(2, want, sizeof want),
		       "the row still kept is intact");
		cf_row_free(r[0]);
		cf_row_free(r[2]);
	}

	/* families whose names are prefixes of one another keep their own
	 * settings (engine/table.c, table_family) */
	{
		struct cf_family pf[2];
		struct cf_read_opts ro = CF_READ_OPTS_INIT;
		cf_table *t2;
		cf_row *r;

		cf_family_default(&pf[0], "a");
		cf_family_default(&pf[1], "ab");
		pf[0].versions = 1;
		pf[1].versions = 2;
		if (cf_table_create(db, "t2", pf, 2) ||
		    cf_table_open(db, "t2", &t2))
			bail("create t2");
		put(t2, "r", "a", "q", 1, "a1");
		put(t2, "r", "a", "q", 2, "a2");
		put(t2, "r", "ab", "q", 1, "ab1");
		put(t2, "r", "ab", "q", 2, "ab2");
		is_int(cf_table_flush(t2), CF_OK, "flush t2");
		ro.max_versions = 3;
		is_int(cf_table_get(t2, "r", 1, &ro, &r), CF_OK,
		       "get t2, 3 versions");
		is_str(fmt_row(r, got, sizeof got),
		       "a:q@2=a2 ab:q@2=ab2 ab:q@1=ab1",
		       "family a shows 1 version, family ab 2");
		cf_row_free(r);
		cf_table_close(t2);
	}

	/* threads that Get and exit */
	bad = 0;
	for (int round = 0; round < 4; round++) {
		pthread_t th[3];
		int b[3] = { 0, 0, 0 };
		for (int i = 0; i < 3; i++)
			if (pthread_create(&th[i], NULL, getter, &b[i]))
				bail("pthread_create");
		for (int i = 0; i < 3; i++) {
			pthread_join(th[i], NULL);
			bad += b[i];
		}
	}
	is_int(bad, 0, "Gets on threads that exit: every answer right");

	cf_table_close(t);
	cf_db_close(db);
	tap_rmdir(dir);
	cf_log_release();
	return done_testing();
}
