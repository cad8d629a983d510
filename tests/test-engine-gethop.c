/*
 * test-engine-gethop: a Get of named columns of one family seeks from
 * the family's empty-qualifier column (its DeleteFamily markers) to each
 * named column in turn (engine/read.c, get_hop) and returns exactly
 * what a Get of the whole row returns for those columns: random rows of
 * puts and deletes of every kind in two families, in the memstore and
 * over several files, under VERSIONS, MIN_VERSIONS, TTL and
 * KEEP_DELETED_CELLS, with time ranges and version limits.  CELLFS_SEED
 * replays a run.
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

/* A Get of cols[0..n) against the whole row's cells of those columns. */
static int same_get(cf_table *t, const char *row, struct cf_column *cols,
		    size_t n, struct cf_read_opts *o)
{
	struct buf a = BUF_INIT, b = BUF_INIT;
	cf_row *r1 = NULL, *r2 = NULL;
	int same;

	o->columns = cols;
	o->ncolumns = n;
	if (cf_table_get(t, row, strlen(row), o, &r1))
		return 0;
	o->columns = NULL;
	o->ncolumns = 0;
	if (cf_table_get(t, row, strlen(row), o, &r2))
		return 0;
	for (size_t i = 0; i < cf_row_count(r1); i++)
		cell_show(&a, cf_row_cell(r1, i));
	for (size_t i = 0; i < cf_row_count(r2); i++) {
		const struct cf_cell *x = cf_row_cell(r2, i);
		for (size_t j = 0; j < n; j++)
			if (x->famlen == cols[j].famlen &&
			    !memcmp(x->fam, cols[j].fam, x->famlen) &&
			    x->qlen == cols[j].qlen &&
			    !memcmp(x->qual, cols[j].qual, x->qlen)) {
				cell_show(&b, x);
				break;
			}
	}
	same = a.len == b.len && (!a.len || !memcmp(a.p, b.p, a.len));
	if (!same)
		diag("row %s: named %.*s\n  whole %.*s", row, (int)a.len,
		     a.p ? (const char *)a.p : "", (int)b.len,
		     b.p ? (const char *)b.p : "");
	cf_row_free(r1);
	cf_row_free(r2);
	buf_release(&a);
	buf_release(&b);
	return same;
}

int main(void)
{
	const char *s = getenv("CELLFS_SEED");
	struct cf_options o;
	cf_db *db;
	int round = 0;

	rng = s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
	if (!rng)
		rng = 1;
	plan(1);
	diag("seed %" PRIu64 " (CELLFS_SEED=%" PRIu64 " replays)", rng, rng);
	env_clock_set(NOW);
	cf_options_default(&o);
	o.background = 0;
	o.sync_mode = CF_SYNC_NONE;
	if (cf_db_open(tap_tmpdir("engine-gethop"), &o, &db))
		bail("open");
	for (int bad = 0; round < 40 && !bad; round++) {
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
		for (int i = 0; i < 300; i++) {
			const char *row = rnd(2) ? "r0" : "r1";
			const char *fam = fams[rnd(2)];
			const char *q = quals[rnd(7)];
			int64_t ts = NOW - (int64_t)rnd(12) * 15000;
			int r = (int)rnd(100);
			snprintf(v, sizeof v, "v%d", i);
			if (r < 60)
				put(t, row, fam, q, ts, v);
			else if (r < 75)
				del(t, CF_DEL_VERSION, row, fam, q, ts);
			else if (r < 87)
				del(t, CF_DEL_COLUMN, row, fam, q, ts);
			else if (r < 97)
				del(t, CF_DEL_FAMILY, row, fam, NULL, ts);
			else
				del(t, CF_DEL_ROW, row, NULL, NULL, ts);
			if (i % 71 == 70)
				cf_table_flush(t);
		}
		for (int g = 0; g < 50 && !bad; g++) {
			struct cf_column cols[4];
			struct cf_read_opts ro = CF_READ_OPTS_INIT;
			const char *fam = fams[rnd(2)];
			size_t n = 1 + rnd(4);
			for (size_t j = 0; j < n; j++) {
				const char *q = quals[rnd(7)];
				cols[j].fam = fam;
				cols[j].famlen = strlen(fam);
				cols[j].qual = q;
				cols[j].qlen = strlen(q);
			}
			ro.max_versions = rnd(2) ? INT32_MAX : 1 + (int)rnd(3);
			if (rnd(3) == 0) {
				ro.min_ts = NOW - (int64_t)rnd(12) * 15000;
				ro.max_ts = ro.min_ts + 1 +
					    (int64_t)rnd(6) * 15000;
			}
			bad = !same_get(t, rnd(2) ? "r0" : "r1", cols, n, &ro);
		}
		cf_table_close(t);
		if (bad)
			break;
	}
	ok(round == 40, "40 tables, 50 Gets each: named columns as the "
	   "whole row shows them");
	cf_db_close(db);
	return done_testing();
}
