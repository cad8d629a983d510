/*
 * test-engine-raw: a raw scan (cf_read_opts.raw, HBase RAW => true) shows
 * every cell the store still holds: masked and crowded-out puts and the
 * delete markers with their kind, in key order; a normal scan of the same
 * rows is unchanged; a major compaction drops what it may, except with
 * KEEP_DELETED_CELLS.
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

/* "qual@ts=val|Dk ..." of every row of t, by a scan (raw or not) */
static const char *scan(cf_table *t, int raw)
{
	static char out[1024];
	struct cf_scan_opts so;
	const cf_row *r;
	cf_scanner *s;
	size_t used = 0, i;

	memset(&so, 0, sizeof so);
	so.read.max_ts = INT64_MAX;
	so.read.max_versions = 9;
	so.read.raw = raw;
	out[0] = 0;
	if (cf_scan_open(t, &so, &s))
		return "error";
	while (!cf_scan_next(s, &r) && r)
		for (i = 0; i < cf_row_count(r); i++) {
			const struct cf_cell *x = cf_row_cell(r, i);
			if (x->kind)
				used += (size_t)snprintf(out + used,
					sizeof out - used, "%s%.*s@%" PRId64
					"=D%d", used ? " " : "", (int)x->qlen,
					(const char *)x->qual, x->ts, x->kind);
			else
				used += (size_t)snprintf(out + used,
					sizeof out - used, "%s%.*s@%" PRId64
					"=%.*s", used ? " " : "", (int)x->qlen,
					(const char *)x->qual, x->ts,
					(int)x->vlen, (const char *)x->val);
		}
	cf_scan_close(s);
	return out;
}

static cf_table *make(const char *name, int versions, int keep)
{
	struct cf_family f;
	cf_table *t;

	cf_family_default(&f, "cf");
	f.versions = versions;
	f.keep_deleted = keep;
	if (cf_table_create(db, name, &f, 1) || cf_table_open(db, name, &t))
		bail("create %s", name);
	return t;
}

static void history(cf_table *t)
{
	put(t, "r", "cf", "a", 1000, "a1");
	put(t, "r", "cf", "a", 2000, "a2");
	put(t, "r", "cf", "a", 3000, "a3");	/* crowds a1 out (VERSIONS=2) */
	put(t, "r", "cf", "b", 1000, "b1");
	del(t, CF_DEL_COLUMN, "r", "cf", "a", 2000);
	del(t, CF_DEL_VERSION, "r", "cf", "b", 1000);
	del(t, CF_DEL_FAMILY, "r", "cf", NULL, 500);
}

int main(void)
{
	struct cf_options o;
	const char *dir;
	const char *all = "@500=D3 a@3000=a3 a@2000=D2 a@2000=a2 a@1000=a1 "
			  "b@1000=D1 b@1000=b1";
	char got[1024];
	cf_table *t, *k;

	no_plan();
	dir = tap_tmpdir("engine-raw");
	env_clock_set(1700000000000LL);
	cf_options_default(&o);
	o.background = 0;
	is_int(cf_db_open(dir, &o, &db), CF_OK, "open");
	t = make("t", 2, 0);
	k = make("k", 2, 1);
	history(t);
	history(k);
	snprintf(got, sizeof got, "%s", scan(t, 1));
	is_str(got, all, "raw: every cell and marker, in the memstore");
	snprintf(got, sizeof got, "%s", scan(t, 0));
	is_str(got, "a@3000=a3", "not raw: only the live one");
	cf_table_flush(t);
	snprintf(got, sizeof got, "%s", scan(t, 1));
	is_str(got, all, "raw: the same once flushed");
	is_int(cf_table_compact(t, 1), CF_OK, "major compaction");
	snprintf(got, sizeof got, "%s", scan(t, 1));
	is_str(got, "a@3000=a3", "raw after it: what it kept");
	cf_table_flush(k);
	is_int(cf_table_compact(k, 1), CF_OK, "major compaction, "
	       "KEEP_DELETED_CELLS");
	snprintf(got, sizeof got, "%s", scan(k, 0));
	is_str(got, "a@3000=a3", "not raw: only the live one");
	snprintf(got, sizeof got, "%s", scan(k, 1));
	ok(strstr(got, "a@2000=D2") && strstr(got, "a@2000=a2") &&
	   strstr(got, "b@1000=D1"),
	   "raw with KEEP_DELETED_CELLS: the markers and what they cover "
	   "stay (%s)", got);
	cf_table_close(t);
	cf_table_close(k);
	cf_db_close(db);
	return done_testing();
}
