/*
 * test-engine-timerange: a read with a time range agrees with the death
 * rule of docs/engine.md ("Versions and deletes", rule 3): a put that
 * VERSIONS newer puts crowded out stays dead for a time range that
 * leaves those newer puts out, whichever store file or memstore holds
 * them, and before and after a major compaction alike (found by
 * tests/hbase-model.py through the mount).
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

/* "ts=val ..." of column cf:q of row in [min_ts, max_ts), by a Get
 * (scan 0) or a scan of the row (scan 1) */
static const char *range(cf_table *t, const char *row, int64_t min_ts,
			 int64_t max_ts, int scan)
{
	static char out[512];
	struct cf_column c = { "cf", 2, "q", 1 };
	struct cf_scan_opts so;
	const cf_row *cr = NULL;
	cf_row *r = NULL;
	cf_scanner *s = NULL;
	size_t used = 0, i;
	int rc;

	memset(&so, 0, sizeof so);
	so.read.columns = &c;
	so.read.ncolumns = 1;
	so.read.min_ts = min_ts;
	so.read.max_ts = max_ts;
	so.read.max_versions = 9;
	out[0] = 0;
	if (scan) {
		so.prefix = row;
		so.prefixlen = strlen(row);
		rc = cf_scan_open(t, &so, &s);
		if (!rc)
			rc = cf_scan_next(s, &cr);
	} else {
		rc = cf_table_get(t, row, strlen(row), &so.read, &r);
		cr = r;
	}
	if (rc) {
		snprintf(out, sizeof out, "error %s", cf_strerror(rc));
		goto out;
	}
	for (i = 0; cr && i < cf_row_count(cr); i++) {
		const struct cf_cell *x = cf_row_cell(cr, i);
		used += (size_t)snprintf(out + used, sizeof out - used,
					 "%s%" PRId64 "=%.*s", used ? " " : "",
					 x->ts, (int)x->vlen,
					 (const char *)x->val);
	}
out:
	if (s)
		cf_scan_close(s);
	cf_row_free(r);
	return out;
}

static void both(cf_table *t, const char *row, int64_t lo, int64_t hi,
		 const char *want, const char *what)
{
	char g[512];

	snprintf(g, sizeof g, "%s", range(t, row, lo, hi, 0));
	is_str(g, want, "%s (get)", what);
	snprintf(g, sizeof g, "%s", range(t, row, lo, hi, 1));
	is_str(g, want, "%s (scan)", what);
}

int main(void)
{
	struct cf_options o;
	struct cf_family f;
	const char *dir;
	cf_table *t;

	no_plan();
	dir = tap_tmpdir("engine-timerange");
	env_clock_set(1700000000000LL);
	cf_options_default(&o);
	o.background = 0;
	o.compact_threshold = 1000;
	o.stall_files = 2000;
	is_int(cf_db_open(dir, &o, &db), CF_OK, "open");
	cf_family_default(&f, "cf");
	f.versions = 2;
	if (cf_table_create(db, "t", &f, 1) || cf_table_open(db, "t", &t))
		bail("create");

	/* the crowding puts in a newer file than the crowded one */
	put(t, "a", "cf", "q", 1000, "old");
	cf_table_flush(t);
	put(t, "a", "cf", "q", 2000, "mid");
	put(t, "a", "cf", "q", 3000, "new");
	both(t, "a", 1000, 2000, "", "crowded out, the newer puts in the "
	     "memstore");
	cf_table_flush(t);
	both(t, "a", 1000, 2000, "", "crowded out, the newer puts in a "
	     "newer file");
	both(t, "a", 0, INT64_MAX, "3000=new 2000=mid", "every time");
	both(t, "a", 2000, 3000, "2000=mid", "the middle one");
	/* the crowded one written after the crowding ones */
	put(t, "b", "cf", "q", 2000, "mid");
	put(t, "b", "cf", "q", 3000, "new");
	cf_table_flush(t);
	put(t, "b", "cf", "q", 1000, "late");
	both(t, "b", 0, 2000, "", "born crowded out, in the memstore");
	cf_table_flush(t);
	both(t, "b", 0, 2000, "", "born crowded out, flushed");
	/* a range wholly older than a file still skips it */
	put(t, "c", "cf", "q", 5000, "c5");
	cf_table_flush(t);
	both(t, "c", 0, 5000, "", "nothing before 5000");
	is_int(cf_table_compact(t, 1), CF_OK, "major compaction");
	both(t, "a", 1000, 2000, "", "after the major compaction");
	both(t, "b", 0, 2000, "", "after it, born crowded out");
	both(t, "a", 0, INT64_MAX, "3000=new 2000=mid", "after it, all");
	cf_table_close(t);
	cf_db_close(db);
	return done_testing();
}
