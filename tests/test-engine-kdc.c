/*
 * test-engine-kdc: what a major compaction keeps with KEEP_DELETED_CELLS
 * (engine/visible.c, vis_kdc_row; docs/engine.md), in the scenarios of
 * HBase's TestKeepDeletes (hbase-server, regionserver/TestKeepDeletes.java:
 * each test below names its method).  As there, a table has three
 * families fam1, fam2, fam3 (HBase's COLUMNS) and a row delete puts a
 * DeleteFamily marker in each; the markers and cells are counted by a raw
 * scan (cf_read_opts.raw) after flushes and compactions.
 *
 * The engine's versions are HBase's NEW_VERSION_BEHAVIOR (a delete masks
 * only the puts written before it; a put VERSIONS newer ones crowded out
 * stays dead), and its major compaction drops every marker that covers
 * no put it keeps, whatever the store's earliest put: where HBase counts
 * otherwise, the test says why.  Every scenario also checks that the
 * compaction changed no read of any time range it asks about.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cellfs.h"
#include "util/buf.h"
#include "util/env.h"
#include "tests/engine-ops.h"
#include "tests/tap.h"

#define TS INT64_C(1000)	/* HBase's ts, of an IncrementingEnvironmentEdge */

#define NOW INT64_C(1700000000000)	/* the clock, but where a test moves it */

static cf_db *db;

/* A table of three families of these settings (keep: enum cf_kdc) */
static cf_table *make_ttl(const char *name, int versions, int minv,
			  int64_t ttl, int keep)
{
	static const char *const fams[] = { "fam1", "fam2", "fam3" };
	struct cf_family f[3];
	cf_table *t;

	for (int i = 0; i < 3; i++) {
		cf_family_default(&f[i], fams[i]);
		f[i].versions = versions;
		f[i].min_versions = minv;
		f[i].ttl = ttl;
		f[i].keep_deleted = keep;
	}
	if (cf_table_create(db, name, f, 3) || cf_table_open(db, name, &t))
		bail("create %s", name);
	return t;
}

static cf_table *make(const char *name, int versions, int keep)
{
	return make_ttl(name, versions, 0, CF_TTL_FOREVER, keep);
}

/* A raw scan of t: " fam:qual@ts=value" a put, " fam:qual@ts=Dk" a
 * marker of kind k (1 Delete, 2 DeleteColumn, 3 DeleteFamily), row by
 * row ("row:" first); *markers their number. */
static const char *raw(cf_table *t, int *markers)
{
	static struct buf out = BUF_INIT;
	struct cf_scan_opts so;
	const cf_row *r;
	cf_scanner *s;

	memset(&so, 0, sizeof so);
	so.read.max_ts = INT64_MAX;
	so.read.raw = 1;
	buf_reset(&out);
	*markers = 0;
	if (cf_scan_open(t, &so, &s))
		return "error";
	while (!cf_scan_next(s, &r) && r) {
		size_t kl;
		const char *k = (const char *)cf_row_key(r, &kl);
		buf_printf(&out, "%s%.*s:", out.len ? " " : "", (int)kl, k);
		for (size_t i = 0; i < cf_row_count(r); i++) {
			const struct cf_cell *x = cf_row_cell(r, i);
			buf_printf(&out, " %.*s:%.*s@%" PRId64, (int)x->famlen,
				   x->fam, (int)x->qlen,
				   (const char *)x->qual, x->ts - TS);
			if (x->kind) {
				buf_printf(&out, "=D%d", x->kind);
				++*markers;
			} else {
				buf_printf(&out, "=%.*s", (int)x->vlen,
					   (const char *)x->val);
			}
		}
	}
	cf_scan_close(s);
	buf_printf(&out, "%s", "");
	return (const char *)out.p;
}

static int markers(cf_table *t)
{
	int n;
	raw(t, &n);
	return n;
}

/* The values of row's fam:qual in [lo, hi) (offsets from TS; hi
 * INT64_MAX: no range), newest first, space separated (HBase's
 * checkGet, every version). */
static const char *get(cf_table *t, const char *row, const char *fam,
		       const char *qual, int64_t lo, int64_t hi)
{
	static char out[256];
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	size_t used = 0;
	cf_row *r;

	o.max_versions = INT32_MAX;
	o.min_ts = lo == 0 ? 0 : TS + lo;
	o.max_ts = hi == INT64_MAX ? INT64_MAX : TS + hi;
	out[0] = 0;
	if (cf_table_get(t, row, strlen(row), &o, &r))
		return "error";
	for (size_t i = 0; r && i < cf_row_count(r); i++) {
		const struct cf_cell *x = cf_row_cell(r, i);
		if (x->famlen != strlen(fam) || memcmp(x->fam, fam, x->famlen) ||
		    x->qlen != strlen(qual) || memcmp(x->qual, qual, x->qlen))
			continue;
		used += (size_t)snprintf(out + used, sizeof out - used, "%s%.*s",
					 used ? " " : "", (int)x->vlen,
					 (const char *)x->val);
	}
	cf_row_free(r);
	return out;
}

/* A time range [0, TS + hi) of every version, as a string to compare */
#define GET(t, row, fam, qual, hi) get(t, row, fam, qual, 0, hi)

static void major(cf_table *t)
{
	if (cf_table_compact(t, 1))
		bail("major compaction");
}

/* testBasicScenario: VERSIONS 3; four versions, then a row delete at
 * ts+2 (a DeleteFamily in each of the three families). */
static void basic_scenario(void)
{
	cf_table *t = make("basic", 3, 1);

	put(t, "T1", "fam1", "fam1", TS, "T1");
	put(t, "T1", "fam1", "fam1", TS + 1, "T2");
	put(t, "T1", "fam1", "fam1", TS + 2, "T3");
	put(t, "T1", "fam1", "fam1", TS + 4, "T4");
	del(t, CF_DEL_ROW, "T1", NULL, NULL, TS + 2);
	is_int(markers(t), 3, "testBasicScenario: three DeleteFamily markers");
	/* HBase's memstore still shows T2 T1 before the flush; here T1 is
	 * crowded out at once (three newer versions were alive) */
	is_str(GET(t, "T1", "fam1", "fam1", 2), "T2",
	       "testBasicScenario: a range before the delete sees T2");
	cf_table_flush(t);
	is_str(GET(t, "T1", "fam1", "fam1", 2), "T2", "... flushed: T2");
	major(t);
	major(t);
	is_int(markers(t), 1, "testBasicScenario: one delete marker left "
	       "after two major compactions (the others had no older puts)");
	is_str(raw(t, &(int){ 0 }),
	       "T1: fam1:@2=D3 fam1:fam1@4=T4 fam1:fam1@2=T3 fam1:fam1@1=T2",
	       "... it and the puts some read can see are all that is kept");
	is_str(GET(t, "T1", "fam1", "fam1", 2), "T2", "... still T2");
	is_str(GET(t, "T1", "fam1", "fam1", 4), "",
	       "... a range that includes the delete sees nothing");
	put(t, "T1", "fam1", "fam1", TS + 5, "T5");
	put(t, "T1", "fam1", "fam1", TS + 6, "T6");
	put(t, "T1", "fam1", "fam1", TS, "T1");	/* past VERSIONS */
	is_str(GET(t, "T1", "fam1", "fam1", 4), "",
	       "... an old put again, past VERSIONS: still nothing");
	cf_table_flush(t);
	major(t);
	major(t);
	is_int(markers(t), 0, "testBasicScenario: the delete marker itself "
	       "is collected");
	is_str(raw(t, &(int){ 0 }),
	       "T1: fam1:fam1@6=T6 fam1:fam1@5=T5 fam1:fam1@4=T4",
	       "... the three newest versions are all that is kept");
	/* HBase's Get [0, ts+4) then shows the old put written once more:
	 * it counts only the versions in the range.  Here the three newer
	 * versions crowd it out as they did before (NEW_VERSION_BEHAVIOR) */
	put(t, "T1", "fam1", "fam1", TS, "T1");
	is_str(GET(t, "T1", "fam1", "fam1", 4), "",
	       "... the old put once more is past VERSIONS here (HBase: T1)");
	cf_table_close(t);
}

/* testRawScanWithoutKeepingDeletes and testWithoutKeepingDeletes */
static void without_keeping(void)
{
	cf_table *t = make("nokeep", 3, 0);
	int n;

	put(t, "T1", "fam1", "fam1", TS, "T1");
	del(t, CF_DEL_VERSION, "T1", "fam1", "fam1", TS);
	raw(t, &n);
	is_str(raw(t, &n), "T1: fam1:fam1@0=D1 fam1:fam1@0=T1",
	       "testRawScanWithoutKeepingDeletes: a raw scan sees both");
	cf_table_flush(t);
	major(t);
	is_str(raw(t, &n), "", "... and nothing after a major compaction");
	cf_table_close(t);

	t = make("nokeep2", 3, 0);
	put(t, "T1", "fam1", "fam1", TS, "T1");
	is_str(GET(t, "T1", "fam1", "fam1", 1), "T1",
	       "testWithoutKeepingDeletes: the put");
	del(t, CF_DEL_VERSION, "T1", "fam1", "fam1", TS);
	is_str(GET(t, "T1", "fam1", "fam1", 1), "",
	       "... a past get does not see behind the delete");
	cf_table_flush(t);
	cf_table_compact(t, 0);
	is_int(markers(t), 1, "... flush and a minor compaction keep it");
	major(t);
	is_int(markers(t), 0, "... a major compaction drops it");
	cf_table_close(t);
}

/* testRawScan: the raw order and raw time ranges (nothing compacted) */
static void raw_scan(void)
{
	cf_table *t = make("rawscan", 3, 1);
	struct cf_scan_opts so;
	const cf_row *r;
	cf_scanner *s;
	int n;

	put(t, "T1", "fam1", "fam1", TS, "T1");
	put(t, "T1", "fam1", "fam1", TS + 2, "T2");
	put(t, "T1", "fam1", "fam1", TS + 4, "T3");
	del(t, CF_DEL_ROW, "T1", NULL, NULL, TS + 1);
	del(t, CF_DEL_VERSION, "T1", "fam1", "fam1", TS + 2);
	del(t, CF_DEL_COLUMN, "T1", "fam1", "fam1", TS + 3);
	is_str(raw(t, &n), "T1: fam1:@1=D3 fam1:fam1@4=T3 fam1:fam1@3=D2 "
	       "fam1:fam1@2=D1 fam1:fam1@2=T2 fam1:fam1@0=T1 fam2:@1=D3 "
	       "fam3:@1=D3", "testRawScan: eight cells in HBase's order");
	memset(&so, 0, sizeof so);
	so.read.raw = 1;
	so.read.min_ts = TS + 3;
	so.read.max_ts = TS + 5;
	n = 0;
	if (!cf_scan_open(t, &so, &s)) {
		while (!cf_scan_next(s, &r) && r)
			n += (int)cf_row_count(r);
		cf_scan_close(s);
	}
	is_int(n, 2, "testRawScan: [ts+3, ts+5) holds T3 and the "
	       "DeleteColumn");
	cf_table_close(t);
}

/* testDeleteMarkerExpirationEmptyStore: VERSIONS 1, markers only */
static void expiration_empty(void)
{
	cf_table *t = make("empty", 1, 1);

	del(t, CF_DEL_COLUMN, "T1", "fam1", "fam1", TS);
	del(t, CF_DEL_FAMILY, "T1", "fam1", NULL, TS);
	del(t, CF_DEL_VERSION, "T1", "fam1", "fam1", TS + 1);
	del(t, CF_DEL_VERSION, "T1", "fam1", "fam1", TS + 2);
	is_int(markers(t), 4, "testDeleteMarkerExpirationEmptyStore: "
	       "1 family marker, 1 column marker, 2 version markers");
	cf_table_flush(t);
	is_int(markers(t), 4, "... a flush keeps them");
	cf_table_compact(t, 0);
	is_int(markers(t), 4, "... a minor compaction keeps them");
	major(t);
	is_int(markers(t), 0, "... a major compaction drops all: no put");
	cf_table_close(t);
}

/* testDeleteMarkerExpiration (other is "fam2": a put in another store)
 * and testWithOldRow (other is "old": an older row in the same store) */
static void expiration(const char *other)
{
	char name[32];
	int row = !strcmp(other, "old");
	const char *m = row ? "testWithOldRow" : "testDeleteMarkerExpiration";
	cf_table *t;

	snprintf(name, sizeof name, "exp-%s", other);
	t = make(name, 1, 1);
	put(t, "T1", "fam1", "fam1", TS, "T1");
	if (row)
		put(t, "T2", "fam1", "fam1", TS - 10, "T1");
	else
		put(t, "T1", "fam2", "fam1", TS - 10, "T1");
	del(t, CF_DEL_COLUMN, "T1", "fam1", "fam1", TS);
	del(t, CF_DEL_FAMILY, "T1", "fam1", NULL, TS);
	del(t, CF_DEL_VERSION, "T1", "fam1", "fam1", TS + 1);
	del(t, CF_DEL_VERSION, "T1", "fam1", "fam1", TS + 2);
	is_int(markers(t), 4, "%s: four markers", m);
	cf_table_flush(t);
	cf_table_compact(t, 0);
	is_int(markers(t), 4, "%s: flush and minor compaction keep them", m);
	/* a range ending at ts ignores every marker but does not hold the
	 * put; [0, ts+1) holds it and honours the DeleteColumn */
	is_str(GET(t, "T1", "fam1", "fam1", 1), "",
	       "%s: [0, ts+1) honours the DeleteColumn", m);
	put(t, "T1", "fam1", "fam1", TS + 3, "T1");
	cf_table_flush(t);
	major(t);
	/* HBase keeps all four here and drops them at the next major
	 * compaction: its rule drops a marker older than the earliest put
	 * of the files, which the first compaction still holds.  Here the
	 * put at ts is dead in every read (crowded out where the markers
	 * are ignored, masked where they are not), so it goes, and the
	 * markers with it, in one compaction */
	is_int(markers(t), 0, "%s: one major compaction drops the covered "
	       "put and all four markers (HBase: two)", m);
	is_str(GET(t, "T1", "fam1", "fam1", 4), "T1",
	       "%s: the new put is all a read sees", m);
	if (row) {
		put(t, "T1", "fam1", "fam1", TS + 4, "T1");
		cf_table_flush(t);
		major(t);
		major(t);
		/* HBase: "the family markers remains. THIS IS A PROBLEM!" */
		is_int(markers(t), 0, "testWithOldRow: no DeleteFamily marker "
		       "stays for ever (HBase: one does)");
		is_str(raw(t, &(int){ 0 }), "T1: fam1:fam1@4=T1 T2: "
		       "fam1:fam1@-10=T1", "testWithOldRow: the newest put "
		       "and the old row");
	} else {
		is_str(raw(t, &(int){ 0 }), "T1: fam1:fam1@3=T1 "
		       "fam2:fam1@-10=T1", "%s: the new put, and the put of "
		       "the other store", m);
	}
	cf_table_close(t);
}

/* testRanges: VERSIONS 3, reads at ts+2 and ts+3, before and after a
 * flush and a major compaction */
static void ranges(void)
{
	static const char *const fq[4][2] = {
		{ "fam1", "fam1" }, { "fam1", "fam2" },
		{ "fam2", "fam1" }, { "fam2", "fam2" },
	};
	/* at ts+3: T1's fam1:fam1 (DeleteColumn), fam2 (DeleteFamily);
	 * T2's fam1 (DeleteFamily) are deleted */
	static const int gone[2][4] = { { 1, 0, 1, 1 }, { 1, 1, 0, 0 } };
	cf_table *t = make("ranges", 3, 1);
	int bad = 0;

	for (int v = 0; v < 2; v++)
		for (int r = 0; r < 2; r++)
			for (int i = 0; i < 4; i++)
				put(t, r ? "T2" : "T1", fq[i][0], fq[i][1],
				    TS + v, v ? "T2" : "T1");
	del(t, CF_DEL_COLUMN, "T1", "fam1", "fam1", TS + 2);
	del(t, CF_DEL_FAMILY, "T1", "fam2", NULL, TS + 2);
	del(t, CF_DEL_FAMILY, "T2", "fam1", NULL, TS + 2);
	del(t, CF_DEL_FAMILY, "T1", "fam2", NULL, TS - 10);	/* older */
	for (int pass = 0; pass < 2; pass++) {
		for (int r = 0; r < 2; r++)
			for (int i = 0; i < 4; i++) {
				const char *row = r ? "T2" : "T1";
				bad |= strcmp(GET(t, row, fq[i][0], fq[i][1],
						  2), "T2 T1") != 0;
				bad |= strcmp(GET(t, row, fq[i][0], fq[i][1],
						  3), gone[r][i] ? ""
						  : "T2 T1") != 0;
			}
		ok(!bad, "testRanges: ts+2 does not include the deletes at "
		   "ts+2, ts+3 does%s", pass ? ", after a major compaction"
		   : "");
		cf_table_flush(t);
		major(t);
	}
	/* every put is still seen by a range before the deletes; of the
	 * markers only the older DeleteFamily (at ts-10) covers none */
	is_int(markers(t), 3, "testRanges: the three markers at ts+2 stay, "
	       "the one at ts-10 goes");
	cf_table_close(t);
}

/* testDeleteMarkerVersioning: VERSIONS 1, a Delete of a version no put
 * has, next to a column's puts */
static void marker_versioning(void)
{
	cf_table *t = make("versioning", 1, 1);

	put(t, "T1", "fam1", "fam1", TS, "T1");
	put(t, "T1", "fam1", "fam2", TS - 10, "T1");
	del(t, CF_DEL_COLUMN, "T1", "fam1", "fam1", TS);	/* same ts */
	del(t, CF_DEL_VERSION, "T1", "fam1", "fam1", TS + 1);
	del(t, CF_DEL_VERSION, "T1", "fam1", "fam1", TS + 3);
	cf_table_flush(t);
	major(t);
	major(t);
	/* HBase keeps all three.  The Deletes of ts+1 and ts+3 cover no
	 * put and go.  The put at ts is seen by no read (a range holding
	 * ts honours the DeleteColumn), but it is alive where the markers
	 * are ignored, and there it crowds out what is written later
	 * below ts: so it stays, with its DeleteColumn */
	is_int(markers(t), 1, "testDeleteMarkerVersioning: the DeleteColumn "
	       "stays, the Deletes of versions no put has go (HBase: 3)");
	is_str(raw(t, &(int){ 0 }), "T1: fam1:fam1@0=D2 fam1:fam1@0=T1 "
	       "fam1:fam2@-10=T1", "... with the put at ts it covers");
	put(t, "T1", "fam1", "fam1", TS + 2, "T2");
	put(t, "T1", "fam1", "fam1", TS + 3, "T3");
	is_int(markers(t), 1, "... two more puts: a raw scan still shows "
	       "it (HBase's raw scan stops at VERSIONS: 1)");
	cf_table_flush(t);
	is_int(markers(t), 1, "... flushed (HBase: 3)");
	major(t);
	is_int(markers(t), 0, "... a major compaction drops it: the put at "
	       "ts is crowded out where it is ignored (HBase: 3)");
	put(t, "T1", "fam1", "fam1", TS + 4, "T4");
	cf_table_flush(t);
	major(t);
	major(t);
	is_int(markers(t), 0, "... and none comes back (HBase: 1)");
	is_str(raw(t, &(int){ 0 }), "T1: fam1:fam1@4=T4 fam1:fam2@-10=T1",
	       "... the newest put and the other column");
	cf_table_close(t);
}

/*
 * A put no read shows can still matter: VERSIONS 2, puts at 10, 20, a
 * Delete of 20, a put at 30.  A range holding 20 ends past it and so
 * honours the Delete; ranges ending at or before 20 ignore it, and there
 * the puts at 20 and 30 crowd out the one at 10.  Dropping the put at 20
 * (and its Delete) would show the put at 10 to [0, 20).
 */
static void hidden_crowder(void)
{
	cf_table *t = make("crowder", 2, 1);

	put(t, "r", "fam1", "q", TS + 10, "p");
	put(t, "r", "fam1", "q", TS + 20, "q");
	del(t, CF_DEL_VERSION, "r", "fam1", "q", TS + 20);
	put(t, "r", "fam1", "q", TS + 30, "r");
	cf_table_flush(t);
	is_str(GET(t, "r", "fam1", "q", 20), "", "[0, 20): p crowded out");
	is_str(GET(t, "r", "fam1", "q", 21), "p", "[0, 21): p");
	is_str(GET(t, "r", "fam1", "q", INT64_MAX), "r p", "no range: r p");
	major(t);
	is_str(raw(t, &(int){ 0 }), "r: fam1:q@30=r fam1:q@20=D1 "
	       "fam1:q@20=q fam1:q@10=p", "a put no read shows, alive where "
	       "its Delete is ignored, stays with the Delete");
	is_str(GET(t, "r", "fam1", "q", 20), "", "[0, 20): still nothing");
	is_str(GET(t, "r", "fam1", "q", INT64_MAX), "r p", "no range: r p");
	put(t, "r", "fam1", "q", TS + 5, "s");
	is_str(GET(t, "r", "fam1", "q", 20), "", "a later put at 5 is "
	       "crowded out in [0, 20) too");
	cf_table_close(t);
}

/*
 * A put dropped as dead in every evaluation may still have crowded out a
 * kept one at some earlier moment in one of them, and is the only record
 * of that: VERSIONS 2, column b: x@40, p@10, a DeleteFamily at 30, x@40
 * again, q@0, a Delete of 10, x@40 once more.  Reads of [0, 30) honour
 * the Delete and ignore the DeleteFamily: q was crowded out at its birth
 * by the second x@40 and p, so they show nothing; without the second
 * x@40 (dead: rewritten) q would have been crowded by p alone and live.
 * vis_kdc_row's check finds that and the row keeps every cell.  (The
 * rule before it kept every masked put and marker but dropped the dead
 * puts, and so showed q to [0, 30) and [0, 11) after the compaction.)
 */
static void dead_crowder(const char *name, int minv, int64_t ttl)
{
	cf_table *t = make_ttl(name, 2, minv, ttl, CF_KDC_TRUE);

	put(t, "r", "fam1", "b", TS + 40, "x1");
	put(t, "r", "fam1", "b", TS + 10, "p");
	del(t, CF_DEL_FAMILY, "r", "fam1", NULL, TS + 30);
	put(t, "r", "fam1", "b", TS + 40, "x2");
	put(t, "r", "fam1", "b", TS + 0, "q");
	del(t, CF_DEL_VERSION, "r", "fam1", "b", TS + 10);
	put(t, "r", "fam1", "b", TS + 40, "x3");
	cf_table_flush(t);
	is_str(GET(t, "r", "fam1", "b", 30), "", "[0, 30): nothing");
	is_str(GET(t, "r", "fam1", "b", 11), "", "[0, 11): nothing");
	is_str(GET(t, "r", "fam1", "b", INT64_MAX), "x3 q", "no range: x3 q");
	major(t);
	is_str(GET(t, "r", "fam1", "b", 30), "", "[0, 30): still nothing "
	       "after a major compaction");
	is_str(GET(t, "r", "fam1", "b", 11), "", "[0, 11): nothing");
	is_str(GET(t, "r", "fam1", "b", INT64_MAX), "x3 q", "no range: x3 q");
	is_str(raw(t, &(int){ 0 }), "r: fam1:@30=D3 fam1:b@40=x3 fam1:b@40=x2 "
	       "fam1:b@40=x1 fam1:b@10=D1 fam1:b@10=p fam1:b@0=q",
	       "the row keeps every cell, the rewritten versions too");
	cf_table_close(t);
}

/* testWithMinVersions: VERSIONS 1000, MIN_VERSIONS 3, a TTL of 1 s that
 * has passed for every put (HBase's are 2 s old; these are older).  A
 * put whose TTL has passed lives while fewer than three newer puts were
 * ever alive at once (rule 4), counting those a read of the range sees:
 * a range ending before the markers ignores them. */
static void with_min_versions(void)
{
	cf_table *t = make_ttl("minversions", 1000, 3, 1, CF_KDC_TRUE);

	put(t, "T1", "fam1", "fam1", TS, "T3");
	put(t, "T1", "fam1", "fam1", TS - 1, "T2");
	put(t, "T1", "fam1", "fam1", TS - 3, "T1");
	put(t, "T1", "fam1", "fam1", TS - 4, "T0");
	del(t, CF_DEL_ROW, "T1", NULL, NULL, TS - 1);
	del(t, CF_DEL_COLUMN, "T1", "fam1", "fam1", TS - 1);
	/* HBase's memstore shows T1 T0 until the flush, which drops T0 */
	is_str(GET(t, "T1", "fam1", "fam1", -2), "T1",
	       "testWithMinVersions: [0, ts-2) sees T1 (T0 is the fourth, "
	       "past MIN_VERSIONS)");
	is_int(markers(t), 4, "... 3 DeleteFamily markers, 1 DeleteColumn");
	cf_table_flush(t);
	is_int(markers(t), 4, "... the flush removes none");
	is_str(GET(t, "T1", "fam1", "fam1", -2), "T1", "... still T1");
	put(t, "T1", "fam1", "fam1", TS + 1, "T4");
	cf_table_flush(t);
	is_int(markers(t), 4, "... a newer put flushed: four markers");
	/* HBase shows T1 until a major compaction rewrites its file */
	is_str(GET(t, "T1", "fam1", "fam1", -2), "",
	       "... [0, ts-2): T4 T3 T2 alive at once put T1 past "
	       "MIN_VERSIONS (HBase: T1 until a major compaction)");
	is_str(GET(t, "T1", "fam1", "fam1", INT64_MAX), "T4 T3",
	       "... no range: T4 T3, the markers honoured");
	put(t, "T1", "fam1", "fam1", TS + 2, "T5");
	cf_table_flush(t);
	major(t);
	/* HBase: 2, then 0 after the next: its earliest put decides */
	is_int(markers(t), 0, "... T5 and a major compaction: no marker "
	       "covers a put some read needs (HBase: 2, then 0)");
	is_str(raw(t, &(int){ 0 }),
	       "T1: fam1:fam1@2=T5 fam1:fam1@1=T4 fam1:fam1@0=T3",
	       "... the three newest, MIN_VERSIONS, are what is kept");
	is_str(GET(t, "T1", "fam1", "fam1", INT64_MAX), "T5 T4 T3",
	       "... no range: T5 T4 T3");
	is_str(GET(t, "T1", "fam1", "fam1", -2), "", "... [0, ts-2): nothing");
	cf_table_close(t);
}

/* testWithTTL: VERSIONS 1000, MIN_VERSIONS 1, a TTL of 1 s that has
 * passed, KEEP_DELETED_CELLS=TTL: a marker whose TTL has passed is
 * honoured by every read, so what it covers is gone for good. */
static void with_ttl(void)
{
	cf_table *t = make_ttl("withttl", 1000, 1, 1, CF_KDC_TTL);

	put(t, "T1", "fam1", "fam1", TS, "T3");
	put(t, "T2", "fam1", "fam1", TS - 10, "T1");	/* an old row */
	is_str(GET(t, "T1", "fam1", "fam1", 1), "T3",
	       "testWithTTL: its TTL passed, T3 lives as MIN_VERSIONS");
	del(t, CF_DEL_ROW, "T1", NULL, NULL, TS + 2);
	/* HBase's memstore shows T3 until the flush */
	is_str(GET(t, "T1", "fam1", "fam1", 1), "",
	       "... a row delete whose TTL has passed: [0, ts+1) sees "
	       "nothing (HBase: T3 until the flush)");
	is_int(markers(t), 3, "... three DeleteFamily markers");
	cf_table_flush(t);
	is_int(markers(t), 3, "... the flush removes none");
	is_str(GET(t, "T1", "fam1", "fam1", 1), "", "... the put is gone");
	major(t);
	is_int(markers(t), 0, "... all markers gone after a major compaction");
	is_str(raw(t, &(int){ 0 }), "T2: fam1:fam1@-10=T1",
	       "... and the put they covered; the old row stays");
	cf_table_close(t);
}

/* KEEP_DELETED_CELLS=TRUE against TTL as the clock passes a marker's
 * TTL (10 s; VERSIONS 1, MIN_VERSIONS 1, so the put outlives its own
 * TTL as the newest version): a read of a range before the delete sees
 * the put while the delete is young, and with TTL no more once it has
 * aged past the TTL; a major compaction then drops both. */
static void marker_expiry(int keep)
{
	const char *m = keep == CF_KDC_TTL ? "TTL" : "TRUE";
	cf_table *t = make_ttl(keep == CF_KDC_TTL ? "expiry_ttl" :
			       "expiry_true", 1, 1, 10, keep);
	int64_t before = NOW - 3000 - TS;	/* [0, now - 3 s) */

	put(t, "r", "fam1", "q", NOW - 5000, "p");
	del(t, CF_DEL_COLUMN, "r", "fam1", "q", NOW - 3000);
	is_str(GET(t, "r", "fam1", "q", before), "p",
	       "%s: a range before a young delete sees the put", m);
	is_str(GET(t, "r", "fam1", "q", INT64_MAX), "",
	       "%s: no range: deleted", m);
	cf_table_flush(t);
	major(t);
	is_str(raw(t, &(int){ 0 }),
	       "r: fam1:q@1699999996000=D2 fam1:q@1699999994000=p",
	       "%s: a major compaction keeps both while the delete is young",
	       m);
	env_clock_set(NOW + 8000);	/* the delete is 11 s old, the put 13 */
	is_str(GET(t, "r", "fam1", "q", before),
	       keep == CF_KDC_TTL ? "" : "p",
	       "%s: the delete past its TTL: the range %s", m,
	       keep == CF_KDC_TTL ? "honours it" : "still sees the put");
	is_str(GET(t, "r", "fam1", "q", INT64_MAX), "",
	       "%s: no range: deleted", m);
	major(t);
	is_int(markers(t), keep == CF_KDC_TTL ? 0 : 1,
	       "%s: a major compaction %s the delete", m,
	       keep == CF_KDC_TTL ? "drops" : "keeps");
	is_str(GET(t, "r", "fam1", "q", before),
	       keep == CF_KDC_TTL ? "" : "p",
	       "%s: and the range reads as before", m);
	env_clock_set(NOW);
	cf_table_close(t);
}

/* A row past the compaction window is streamed column by column: a
 * column that fits the window is decided as in a whole row, with every
 * DeleteFamily marker of the row kept (engine/majorrow.c).  Column a:
 * p@10 masked by a DeleteColumn at 20, crowded out by x@30 and y@40
 * where the delete is ignored (VERSIONS 2): no read needs p or the
 * delete.  The same writes in a whole row (the default window) drop
 * the DeleteFamily marker at 1 too, which covers nothing. */
static void streamed(void)
{
	static const char *const name[] = { "streamed", "whole" };
	static const char *const quals[] = { "b", "c", "d", "e" };
	struct cf_options o;
	cf_db *whole = db, *small;

	cf_options_default(&o);
	o.background = 0;
	o.compact_window = 4;
	if (cf_db_open(tap_tmpdir("engine-kdc-stream"), &o, &small))
		bail("open");
	for (int w = 0; w < 2; w++) {
		cf_table *t;
		db = w ? whole : small;
		t = make(name[w], 2, CF_KDC_TRUE);
		put(t, "r", "fam1", "a", TS + 10, "p");
		del(t, CF_DEL_COLUMN, "r", "fam1", "a", TS + 20);
		put(t, "r", "fam1", "a", TS + 30, "x");
		put(t, "r", "fam1", "a", TS + 40, "y");
		for (int i = 0; i < 4; i++)
			put(t, "r", "fam1", quals[i], TS + 5, "v");
		del(t, CF_DEL_FAMILY, "r", "fam1", NULL, TS + 1);
		cf_table_flush(t);
		is_str(GET(t, "r", "fam1", "a", 20), "", "%s: [0, 20): nothing",
		       name[w]);
		major(t);
		is_str(raw(t, &(int){ 0 }), w ?
		       "r: fam1:a@40=y fam1:a@30=x fam1:b@5=v fam1:c@5=v "
		       "fam1:d@5=v fam1:e@5=v" :
		       "r: fam1:@1=D3 fam1:a@40=y fam1:a@30=x fam1:b@5=v "
		       "fam1:c@5=v fam1:d@5=v fam1:e@5=v",
		       "%s: a major compaction drops p and its delete%s",
		       name[w], w ? " and the DeleteFamily marker" :
		       ", keeps the DeleteFamily marker");
		is_str(GET(t, "r", "fam1", "a", 20), "", "%s: [0, 20): still "
		       "nothing", name[w]);
		is_str(GET(t, "r", "fam1", "a", INT64_MAX), "y x",
		       "%s: no range: y x", name[w]);
		cf_table_close(t);
	}
	db = whole;
	cf_db_close(small);
}

/* cf_table_row_stored: does the store hold a put of the row, whatever
 * its state (what a read with a time range may show; fs/attr.c makes
 * such a row an empty directory)? */
static void row_stored(void)
{
	cf_table *t = make("stored", 1, CF_KDC_TRUE);
	int has = -1;

	put(t, "masked", "fam1", "q", TS + 10, "p");
	del(t, CF_DEL_COLUMN, "masked", "fam1", "q", TS + 20);
	del(t, CF_DEL_ROW, "marks", NULL, NULL, TS + 20);
	put(t, "live", "fam2", "q", TS + 10, "v");
	is_int(cf_table_row_stored(t, "masked", 6, &has), CF_OK, "row_stored");
	is_int(has, 1, "a row whose only put is masked holds a put");
	is_str(GET(t, "masked", "fam1", "q", INT64_MAX), "", "... no read "
	       "without a range shows it");
	is_str(GET(t, "masked", "fam1", "q", 20), "p", "... [0, 20) does");
	cf_table_row_stored(t, "marks", 5, &has);
	is_int(has, 0, "a row of markers only holds none");
	cf_table_row_stored(t, "absent", 6, &has);
	is_int(has, 0, "nor does an absent row");
	cf_table_row_stored(t, "live", 4, &has);
	is_int(has, 1, "a row with a live put holds one");
	cf_table_flush(t);
	major(t);
	cf_table_row_stored(t, "masked", 6, &has);
	is_int(has, 1, "after a major compaction the masked put stays "
	       "(a read of [0, 20) needs it)");
	cf_table_close(t);
}

/* More than VIS_KDC_MAX_TS (16) distinct marker timestamps in a column:
 * the row keeps every marker, as before; 16 are decided by the rule. */
static void bound(void)
{
	cf_table *t = make("bound16", 1, 1), *u = make("bound17", 1, 1);

	for (int i = 0; i < 17; i++) {
		if (i < 16)
			del(t, CF_DEL_VERSION, "r", "fam1", "q", TS + i);
		del(u, CF_DEL_VERSION, "r", "fam1", "q", TS + i);
	}
	put(t, "r", "fam1", "q", TS + 100, "v");
	put(u, "r", "fam1", "q", TS + 100, "v");
	cf_table_flush(t);
	cf_table_flush(u);
	major(t);
	major(u);
	is_int(markers(t), 0, "16 marker timestamps: none covers a put, all "
	       "go");
	is_int(markers(u), 17, "17: past the bound, all stay (as before)");
	cf_table_close(t);
	cf_table_close(u);
}

int main(void)
{
	struct cf_options o;

	no_plan();
	env_clock_set(INT64_C(1700000000000));
	cf_options_default(&o);
	o.background = 0;
	if (cf_db_open(tap_tmpdir("engine-kdc"), &o, &db))
		bail("open");
	basic_scenario();
	without_keeping();
	raw_scan();
	expiration_empty();
	expiration("fam2");
	expiration("old");
	ranges();
	marker_versioning();
	hidden_crowder();
	dead_crowder("deadcrowder", 0, CF_TTL_FOREVER);
	/* the same with MIN_VERSIONS and a TTL that has not passed (rule 4
	 * then marks q, crowded once, to die when it passes) */
	dead_crowder("deadcrowder_minv", 1, INT64_C(4000000000));
	with_min_versions();
	with_ttl();
	marker_expiry(CF_KDC_TRUE);
	marker_expiry(CF_KDC_TTL);
	streamed();
	row_stored();
	bound();
	cf_db_close(db);
	return done_testing();
}
