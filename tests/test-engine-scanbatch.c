/*
 * test-engine-scanbatch: a scan in pages (cf_scan_opts.batch, HBase's
 * Scan.setBatch) gives the cells a scan of whole rows gives, in the
 * same order, at most batch a result, a row's pages one after another
 * with its key: random rows of puts and deletes of every kind in two
 * families, in the memstore and over several files, under VERSIONS,
 * MIN_VERSIONS, TTL and KEEP_DELETED_CELLS, with time ranges, version
 * limits, keys only, start, stop, prefix and row limits; batch with
 * columns, raw or reversed is CF_EINVAL.  CELLFS_SEED replays a run.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/cellfs.h"
#include "util/buf.h"
#include "util/env.h"
#include "tests/engine-ops.h"
#include "tests/tap.h"
#include "tests/xorshift.h"

#define NOW INT64_C(1700000000000)

static const char *quals[] = { "", "a", "b", "c", "d", "e", "f" };
static const char *fams[] = { "cf", "x" };

/* every result of a scan: "KEY: cells" a line; with batch, a row's
 * pages joined (and each page checked: 1..batch cells) */
static int scan_text(cf_table *t, struct cf_scan_opts *so, struct buf *out)
{
	struct buf last = BUF_INIT;
	const cf_row *r;
	cf_scanner *s;
	int rc, bad = 0;

	buf_reset(out);
	if ((rc = cf_scan_open(t, so, &s)))
		return rc;
	while (!(rc = cf_scan_next(s, &r)) && r) {
		size_t kl;
		const unsigned char *k = cf_row_key(r, &kl);
		if (so->batch && (cf_row_count(r) == 0 ||
				  cf_row_count(r) > so->batch))
			bad = 1;
		if (!(last.len == kl && !memcmp(last.p, k, kl))) {
			buf_printf(out, "%s%.*s:", out->len ? "\n" : "",
				   (int)kl, (const char *)k);
			buf_reset(&last);
			buf_append(&last, k, kl);
		}
		for (size_t i = 0; i < cf_row_count(r); i++)
			cell_show(out, cf_row_cell(r, i));
	}
	cf_scan_close(s);
	buf_release(&last);
	return rc ? rc : bad ? CF_EINVAL : CF_OK;
}

static const char *rowname(int i)
{
	static const char *rows[] = { "a0", "a1", "b0", "b1", "c" };
	return rows[i];
}

int main(void)
{
	const char *s = getenv("CELLFS_SEED");
	struct cf_options o;
	struct buf a = BUF_INIT, b = BUF_INIT;
	cf_db *db;
	int round = 0, bad = 0;

	rng = s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
	if (!rng)
		rng = 1;
	plan(2);
	diag("seed %" PRIu64 " (CELLFS_SEED=%" PRIu64 " replays)", rng, rng);
	env_clock_set(NOW);
	cf_options_default(&o);
	o.background = 0;
	o.sync_mode = CF_SYNC_NONE;
	if (cf_db_open(tap_tmpdir("engine-scanbatch"), &o, &db))
		bail("open");
	for (; round < 30 && !bad; round++) {
		struct cf_family f[2];
		cf_table *t;
		char name[16], v[16];

		snprintf(name, sizeof name, "t%d", round);
		for (int i = 0; i < 2; i++) {
			cf_family_default(&f[i], fams[i]);
			f[i].versions = 1 + (int)rnd(3);
			f[i].min_versions = (int)rnd((uint64_t)f[i].versions + 1);
			f[i].ttl = rnd(2) ? CF_TTL_FOREVER : 100;
			f[i].keep_deleted = (int)rnd(2);
		}
		if (cf_table_create(db, name, f, 2) ||
		    cf_table_open(db, name, &t))
			bail("create %s", name);
		for (int i = 0; i < 400; i++) {
			const char *row = rowname((int)rnd(5));
			const char *fam = fams[rnd(2)];
			const char *q = quals[rnd(7)];
			int64_t ts = NOW - (int64_t)rnd(12) * 15000;
			int r = (int)rnd(100);
			snprintf(v, sizeof v, "v%d", i);
			if (r < 70)
				put(t, row, fam, q, ts, v);
			else if (r < 80)
				del(t, CF_DEL_VERSION, row, fam, q, ts);
			else if (r < 90)
				del(t, CF_DEL_COLUMN, row, fam, q, ts);
			else if (r < 98)
				del(t, CF_DEL_FAMILY, row, fam, NULL, ts);
			else
				del(t, CF_DEL_ROW, row, NULL, NULL, ts);
			if (i % 71 == 70)
				cf_table_flush(t);
		}
		for (int g = 0; g < 30 && !bad; g++) {
			struct cf_scan_opts so;
			memset(&so, 0, sizeof so);
			so.read.max_ts = INT64_MAX;
			so.read.max_versions = rnd(2) ? INT32_MAX :
					       1 + (int)rnd(3);
			so.read.keys_only = (int)rnd(2);
			if (rnd(3) == 0) {
				so.read.min_ts = NOW - (int64_t)rnd(12) * 15000;
				so.read.max_ts = so.read.min_ts + 1 +
						 (int64_t)rnd(6) * 15000;
			}
			if (rnd(4) == 0) {
				so.start = rowname((int)rnd(5));
				so.startlen = strlen(so.start);
			}
			if (rnd(4) == 0) {
				so.stop = rowname((int)rnd(5));
				so.stoplen = strlen(so.stop);
			}
			if (rnd(4) == 0) {
				so.prefix = "b";
				so.prefixlen = 1;
			}
			so.limit = rnd(4) ? 0 : 1 + rnd(4);
			if (scan_text(t, &so, &a))
				bad = 1;
			so.batch = 1 + rnd(5);
			if (!bad && scan_text(t, &so, &b))
				bad = 1;
			if (!bad && (a.len != b.len ||
				     (a.len && memcmp(a.p, b.p, a.len)))) {
				bad = 1;
				diag("batch %zu:\n%.*s\nwhole rows:\n%.*s",
				     so.batch, (int)b.len, (const char *)b.p,
				     (int)a.len, (const char *)a.p);
			}
		}
		cf_table_close(t);
	}
	ok(!bad, "30 tables, 30 scans each: pages of 1 to 5 cells join to "
	   "the whole rows");
	{
		cf_table *t;
		struct cf_scan_opts so;
		struct cf_column col = { "cf", 2, NULL, 0 };
		cf_scanner *sc = NULL;
		int e1, e2, e3;
		if (cf_table_open(db, "t0", &t))
			bail("open t0");
		memset(&so, 0, sizeof so);
		so.read.max_ts = INT64_MAX;
		so.batch = 2;
		so.read.raw = 1;
		e1 = cf_scan_open(t, &so, &sc);
		so.read.raw = 0;
		so.reversed = 1;
		e2 = cf_scan_open(t, &so, &sc);
		so.reversed = 0;
		so.read.columns = &col;
		so.read.ncolumns = 1;
		e3 = cf_scan_open(t, &so, &sc);
		ok(e1 == CF_EINVAL && e2 == CF_EINVAL && e3 == CF_EINVAL,
		   "batch with raw, reversed or columns: CF_EINVAL (%d %d %d)",
		   e1, e2, e3);
		cf_table_close(t);
	}
	buf_release(&a);
	buf_release(&b);
	cf_db_close(db);
	return done_testing();
}
