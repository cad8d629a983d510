/*
 * test-engine-compactstream: a major compaction of rows larger than its
 * window (cf_options.compact_window) streams them column by column
 * (engine/majorrow.c) and keeps exactly what the whole-row compaction
 * keeps.  Four databases get the same writes: one with a window no row
 * reaches (every row classified whole, as before), one of 40 cells (the
 * rows pass it, most of their columns fit), one of 7 cells and one of 1
 * cell (every column of more than one cell read as a large one).  The writes are random puts, Deletes of a version, DeleteColumns,
 * DeleteFamily markers and row deletes at chosen timestamps over a few
 * rows and columns, flushed now and then, under every combination of
 * VERSIONS, MIN_VERSIONS, TTL and KEEP_DELETED_CELLS; a raw scan (every
 * cell and marker kept) and a normal scan after the major compaction
 * must be the same in all four.  With KEEP_DELETED_CELLS (TRUE and
 * TTL) a streamed row decides each column that fits the window with
 * all of the row's DeleteFamily markers kept, and a larger column keeps
 * every cell (engine/majorrow.c), so what it keeps may differ from what
 * the whole row keeps: there scans of time ranges ending at 64 of the
 * writes' timestamps (and just past them) must be the same, as well as
 * the normal scan.  Deterministic rows put the window's
 * edge inside one column's versions and inside a run of DeleteFamily
 * markers and of Deletes, and a column of puts only (streamed put by
 * put) past its TTL under MIN_VERSIONS; and large columns of every
 * kind of marker, one written in timestamp order, one in none (so that
 * both ways of classifying a large column run: big_columns).
 * CELLFS_SEED replays a run.
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
#define NDB 4

static cf_db *db[NDB];
static const size_t windows[NDB] = { 1u << 30, 40, 7, 1 };
/* every row of t by a scan (raw or not) of time range [0, max_ts) into
 * out (appended) */
static int scan_to(cf_table *t, int raw, int64_t max_ts, struct buf *out)
{
	struct cf_scan_opts so;
	const cf_row *r;
	cf_scanner *s;
	int rc;

	memset(&so, 0, sizeof so);
	so.read.max_ts = max_ts;
	so.read.max_versions = INT32_MAX;
	so.read.raw = raw;
	if ((rc = cf_scan_open(t, &so, &s)))
		return rc;
	while (!(rc = cf_scan_next(s, &r)) && r) {
		size_t kl;
		const unsigned char *k = cf_row_key(r, &kl);
		buf_printf(out, "%.*s:", (int)kl, (const char *)k);
		for (size_t i = 0; i < cf_row_count(r); i++) {
			const struct cf_cell *x = cf_row_cell(r, i);
			buf_printf(out, " %.*s@%" PRId64, (int)x->qlen,
				   (const char *)x->qual, (NOW - x->ts) / 1000);
			if (x->kind)
				buf_printf(out, "=D%d", x->kind);
			else
				buf_printf(out, "=%.*s", (int)x->vlen,
					   (const char *)x->val);
		}
		buf_printf(out, "\n");
	}
	cf_scan_close(s);
	return rc;
}

/* every row of t by a scan (raw or not) into out */
static int scan(cf_table *t, int raw, struct buf *out)
{
	buf_reset(out);
	return scan_to(t, raw, INT64_MAX, out);
}

/* Scans (not raw) of ranges ending at, and just past, the timestamps
 * T[0..n) into out: with KEEP_DELETED_CELLS each such range ignores
 * another set of markers. */
static int scan_ranges(cf_table *t, const int64_t *T, size_t n,
		       struct buf *out)
{
	int rc = CF_OK;

	buf_reset(out);
	for (size_t k = 0; k < n && !rc; k++) {
		buf_printf(out, "< %" PRId64 "\n", (NOW - T[k]) / 1000);
		rc = scan_to(t, 0, T[k], out);
		if (!rc)
			rc = scan_to(t, 0, T[k] + 1, out);
	}
	return rc;
}

static const char *rows[] = { "r0", "r1", "r2" };
static const char *quals[] = { "", "a", "b", "c", "d" };

/* the same random writes to table name in every db */
static void writes(cf_table **t, int nops)
{
	for (int i = 0; i < nops; i++) {
		const char *row = rows[rnd(3)];
		const char *q = quals[rnd(5)];
		int64_t ts = NOW - (int64_t)rnd(16) * 15000;
		int r = (int)rnd(100);
		char v[32];

		snprintf(v, sizeof v, "v%d", i);
		for (int d = 0; d < NDB; d++) {
			if (r < 60)
				put(t[d], row, "cf", q, ts, v);
			else if (r < 75)
				del(t[d], CF_DEL_VERSION, row, "cf", q, ts);
			else if (r < 87)
				del(t[d], CF_DEL_COLUMN, row, "cf", q, ts);
			else if (r < 97)
				del(t[d], CF_DEL_FAMILY, row, "cf", NULL, ts);
			else
				del(t[d], CF_DEL_ROW, row, NULL, NULL, ts);
			if (i % 97 == 96)
				cf_table_flush(t[d]);
		}
	}
}

/* rows that put the window's edges where they matter */
static void edges(cf_table **t)
{
	char v[32];

	for (int d = 0; d < NDB; d++) {
		/* a run of 20 DeleteFamily markers, then a column of 30
		 * versions under them and a run of Deletes in it */
		for (int i = 0; i < 20; i++)
			del(t[d], CF_DEL_FAMILY, "e0", "cf", NULL,
			    NOW - 400000 + i * 7000);
		for (int i = 0; i < 30; i++) {
			snprintf(v, sizeof v, "e%d", i);
			put(t[d], "e0", "cf", "x", NOW - 300000 + i * 10000, v);
			if (i % 2)
				del(t[d], CF_DEL_VERSION, "e0", "cf", "x",
				    NOW - 300000 + i * 10000);
		}
		cf_table_flush(t[d]);
		for (int i = 0; i < 12; i++)
			put(t[d], "e0", "cf", "x", NOW - 290000 + i * 20000,
			    "again");
		del(t[d], CF_DEL_COLUMN, "e0", "cf", "y", NOW - 100000);
		put(t[d], "e0", "cf", "y", NOW - 200000, "y");
		/* a column of 40 puts only, no marker in its family */
		for (int i = 0; i < 40; i++) {
			snprintf(v, sizeof v, "p%d", i);
			put(t[d], "e1", "cf", "z", NOW - 600000 + i * 15000, v);
		}
		/* and one of 12 whose every put is past a TTL of 100 s
		 * (MIN_VERSIONS keeps the newest), a version rewritten */
		for (int i = 0; i < 12; i++) {
			snprintf(v, sizeof v, "o%d", i);
			put(t[d], "e2", "cf", "z", NOW - 200000 - i * 1000, v);
		}
		put(t[d], "e2", "cf", "z", NOW - 200000, "o0-again");
	}
}

/*
 * Large columns with markers (classified by vis_stream, engine/
 * visible.c, when they pass the window): row "big", column "m" written
 * in timestamp order with versions rewritten and older ones written
 * late, Deletes of a version (of the newest, of older ones, of the next
 * one before it is written, of one at once), DeleteColumns, DeleteFamily
 * markers and row deletes among them, spanning the TTL; column "n"
 * written in random timestamp order, which needs more than vis_stream's
 * cap of 64 entries and is classified the old way from where it stopped.
 */
static void big_columns(cf_table **t)
{
	char v[32];

	for (int i = 0; i < 600; i++) {
		int64_t ts, x;
		int r = (int)rnd(100), k = 0;
		const char *q = "m";

		if (i % 2) {	/* column n, in no order */
			q = "n";
			ts = x = NOW - (int64_t)rnd(300) * 1000;
		} else {
			ts = x = NOW - 400000 + i * 1000 / 2;
		}
		if (r < 55) {
			if (!rnd(10))
				x = ts - (int64_t)rnd(5) * 1000;
		} else if (r < 65) {
			k = CF_DEL_VERSION;
			x = ts - (int64_t)rnd(4) * 1000;
		} else if (r < 70) {
			k = CF_DEL_VERSION;
			x = ts + 1000;	/* the next put's, before it */
		} else if (r < 78) {
			k = CF_DEL_COLUMN;
			x = ts - (int64_t)rnd(10) * 1000;
		} else if (r < 83) {
			k = CF_DEL_FAMILY;
			x = ts - (int64_t)rnd(10) * 1000;
		} else if (r < 86) {
			k = CF_DEL_ROW;
			x = ts - (int64_t)rnd(10) * 1000;
		} else {
			k = -1;		/* a put deleted at once */
		}
		snprintf(v, sizeof v, "b%d", i);
		for (int d = 0; d < NDB; d++) {
			if (k <= 0)
				put(t[d], "big", "cf", q, x, v);
			if (k < 0)
				del(t[d], CF_DEL_VERSION, "big", "cf", q, x);
			else if (k == CF_DEL_FAMILY)
				del(t[d], CF_DEL_FAMILY, "big", "cf", NULL, x);
			else if (k == CF_DEL_ROW)
				del(t[d], CF_DEL_ROW, "big", NULL, NULL, x);
			else if (k)
				del(t[d], (enum cf_delete_kind)k, "big", "cf",
				    q, x);
			if (i % 250 == 249)
				cf_table_flush(t[d]);
		}
	}
}

static int buf_same(const struct buf *a, const struct buf *b)
{
	return a->len == b->len && (!a->len || !memcmp(a->p, b->p, a->len));
}

static int round_ok(int versions, int minv, int64_t ttl, int keep,
		    int nops, int n)
{
	cf_table *t[NDB];
	struct cf_family f;
	struct buf got[NDB] = { BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT };
	struct buf norm[NDB] = { BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT };
	struct buf rng[NDB] = { BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT };
	int64_t T[64];
	char name[32];
	int same = 1;

	snprintf(name, sizeof name, "t%d", n);
	cf_family_default(&f, "cf");
	f.versions = versions;
	f.min_versions = minv;
	f.ttl = ttl;
	f.keep_deleted = keep;
	for (int d = 0; d < NDB; d++)
		if (cf_table_create(db[d], name, &f, 1) ||
		    cf_table_open(db[d], name, &t[d]))
			bail("create %s", name);
	writes(t, nops);
	edges(t);
	big_columns(t);
	for (size_t k = 0; k < 64; k++)	/* where the writes put markers */
		T[k] = NOW - (int64_t)rnd(1201) * 500;
	for (int d = 0; d < NDB; d++) {
		cf_table_flush(t[d]);
		if (cf_table_compact(t[d], 1))
			same = 0;
		if (scan(t[d], 1, &got[d]) || scan(t[d], 0, &norm[d]) ||
		    (keep && scan_ranges(t[d], T, 64, &rng[d])))
			same = 0;
	}
	/*
	 * With KEEP_DELETED_CELLS a streamed row keeps what its columns
	 * need with all of its DeleteFamily markers, which may differ
	 * from what the whole row keeps (engine/majorrow.c): every read
	 * of every time range must still be the same.
	 */
	for (int d = 1; d < NDB && same; d++) {
		if ((!keep && !buf_same(&got[d], &got[0])) ||
		    !buf_same(&norm[d], &norm[0]) ||
		    !buf_same(&rng[d], &rng[0])) {
			same = 0;
			diag("VERSIONS %d MIN_VERSIONS %d TTL %" PRId64
			     " KEEP_DELETED_CELLS %d, window %zu:", versions,
			     minv, ttl, keep, windows[d]);
			diag("whole rows:\n%.*s%.*s", (int)got[0].len,
			     (const char *)got[0].p, (int)norm[0].len,
			     (const char *)norm[0].p);
			diag("streamed:\n%.*s%.*s", (int)got[d].len,
			     (const char *)got[d].p, (int)norm[d].len,
			     (const char *)norm[d].p);
		}
	}
	for (int d = 0; d < NDB; d++) {
		cf_table_close(t[d]);
		buf_release(&got[d]);
		buf_release(&norm[d]);
		buf_release(&rng[d]);
	}
	return same;
}

int main(void)
{
	const char *s = getenv("CELLFS_SEED");
	int n = 0;

	rng = s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
	if (!rng)
		rng = 1;
	plan(30);
	diag("seed %" PRIu64 " (CELLFS_SEED=%" PRIu64 " replays)", rng, rng);
	env_clock_set(NOW);
	for (int d = 0; d < NDB; d++) {
		struct cf_options o;
		char sub[48];
		snprintf(sub, sizeof sub, "engine-compactstream-%d", d);
		cf_options_default(&o);
		o.background = 0;
		o.sync_mode = CF_SYNC_NONE;
		o.compact_window = windows[d];
		if (cf_db_open(tap_tmpdir(sub), &o, &db[d]))
			bail("open %s", sub);
	}
	for (int versions = 1; versions <= 3; versions += 2)
		for (int minv = 0; minv <= 2; minv++)
			for (int ttl = 0; ttl < 2; ttl++)
				for (int keep = CF_KDC_FALSE;
				     keep <= CF_KDC_TTL; keep++) {
					int64_t tl = ttl ? 100 : CF_TTL_FOREVER;
					int good = 1;
					if (minv > versions)
						continue;
					for (int r = 0; r < 4 && good; r++)
						good = round_ok(versions, minv,
								tl, keep, 400,
								n++);
					ok(good, "VERSIONS %d MIN_VERSIONS %d "
					   "TTL %s KEEP_DELETED_CELLS %d: "
					   "streamed rows keep what whole "
					   "rows keep (%s)", versions, minv,
					   ttl ? "100" : "forever", keep,
					   keep ? "what any read sees" :
					   "every cell");
				}
	for (int d = 0; d < NDB; d++)
		cf_db_close(db[d]);
	return done_testing();
}
