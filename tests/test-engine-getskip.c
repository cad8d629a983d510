/*
 * test-engine-getskip: a Get of named columns reads its sources newest
 * first and leaves out older store files once they cannot change the
 * answer (engine/read.c, struct gsrc).  Each case here would catch it
 * skipping wrongly: an older file holding a newer timestamp, a delete in
 * a newer file, VERSIONS=3 spread over files, TTL, DeleteFamily, a
 * memstore over files; then random histories where the column Get must
 * equal the family Get (which reads every file) filtered to the column.
 * One case checks that the skip happens at all (one block read).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cellfs.h"
#include "util/env.h"
#include "util/log.h"
#include "tests/engine-ops.h"
#include "tests/tap.h"

static cf_db *db;

/* "qual@ts=val ..." of the cells of column fam:qual (qual NULL: of the
 * whole family, then filtered to filter_qual) */
static const char *get_col(cf_table *t, const char *row, const char *fam,
			   const char *qual, const char *filter_qual,
			   int maxv, char *out, size_t n)
{
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	struct cf_column c = { fam, strlen(fam), qual,
			       qual ? strlen(qual) : 0 };
	size_t used = 0;
	cf_row *r;
	int rc;

	o.columns = &c;
	o.ncolumns = 1;
	o.max_versions = maxv;
	out[0] = 0;
	if ((rc = cf_table_get(t, row, strlen(row), &o, &r))) {
		snprintf(out, n, "error %s", cf_strerror(rc));
		return out;
	}
	for (size_t i = 0; i < cf_row_count(r); i++) {
		const struct cf_cell *x = cf_row_cell(r, i);
		if (filter_qual && (x->qlen != strlen(filter_qual) ||
				    memcmp(x->qual, filter_qual, x->qlen)))
			continue;
		used += (size_t)snprintf(out + used, n - used,
					 "%s%.*s@%" PRId64 "=%.*s",
					 used ? " " : "", (int)x->qlen,
					 (const char *)x->qual, x->ts,
					 (int)x->vlen, (const char *)x->val);
		if (used >= n)
			break;
	}
	cf_row_free(r);
	return out;
}

static const char *col(cf_table *t, const char *row, const char *qual,
		       int maxv)
{
	static char out[1024];
	return get_col(t, row, "cf", qual, NULL, maxv, out, sizeof out);
}

static cf_table *make(const char *name, int versions, int64_t ttl)
{
	struct cf_family f;
	cf_table *t;

	cf_family_default(&f, "cf");
	f.versions = versions;
	f.ttl = ttl;
	if (cf_table_create(db, name, &f, 1) || cf_table_open(db, name, &t))
		bail("create %s", name);
	return t;
}

static uint64_t lookups(void)
{
	struct cf_stats s;

	cf_db_stats(db, &s);
	return s.cache_hits + s.cache_misses;
}

int main(void)
{
	struct cf_options o;
	const char *dir;
	int64_t now = 1700000000000LL;
	cf_table *t;

	no_plan();
	dir = tap_tmpdir("engine-getskip");
	env_clock_set(now);
	cf_options_default(&o);
	o.background = 0;
	o.compact_threshold = 1000;	/* keep every flushed file apart */
	o.stall_files = 2000;
	is_int(cf_db_open(dir, &o, &db), CF_OK, "open");

	/* --- VERSIONS=1 ---------------------------------------------- */
	t = make("v1", 1, CF_TTL_FOREVER);
	/* an older file holding a newer timestamp */
	put(t, "a", "cf", "q", 100, "ts100");
	cf_table_flush(t);
	put(t, "a", "cf", "q", 50, "ts50");
	cf_table_flush(t);
	is_str(col(t, "a", "q", 1), "q@100=ts100",
	       "an older file's newer timestamp wins over the newest file");
	put(t, "a", "cf", "q", 10, "ts10");
	is_str(col(t, "a", "q", 1), "q@100=ts100",
	       "and over the memstore's older timestamp");
	put(t, "a", "cf", "q", 100, "ts100 again");
	is_str(col(t, "a", "q", 1), "q@100=ts100 again",
	       "the same timestamp written later wins");
	cf_table_flush(t);
	is_str(col(t, "a", "q", 1), "q@100=ts100 again",
	       "also once flushed");

	/* the newest file wins, and then the older one is not read */
	put(t, "b", "cf", "q", 1, "old");
	cf_table_flush(t);
	put(t, "b", "cf", "q", 2, "new");
	cf_table_flush(t);
	{
		/* (is_str evaluates its argument twice) */
		uint64_t before = lookups();
		const char *got = col(t, "b", "q", 1);
		uint64_t d = lookups() - before;
		is_str(got, "q@2=new", "newest version");
		is_int((int)d, 1,
		       "one block looked up: the older file was left out");
		before = lookups();
		got = col(t, "b", "q", 3);
		d = lookups() - before;
		is_str(got, "q@2=new", "max_versions 3 on a VERSIONS=1 family");
		ok(d >= 2, "two versions asked for: the older file read too");
	}

	/* deletes in newer files */
	put(t, "c", "cf", "q", 100, "v");
	cf_table_flush(t);
	del(t, CF_DEL_COLUMN, "c", "cf", "q", 100);
	cf_table_flush(t);
	is_str(col(t, "c", "q", 1), "", "DeleteColumn in a newer file masks");
	put(t, "d", "cf", "q", 100, "v");
	cf_table_flush(t);
	del(t, CF_DEL_VERSION, "d", "cf", "q", 100);
	is_str(col(t, "d", "q", 1), "", "Delete in the memstore masks");
	put(t, "e", "cf", "q", 100, "v");
	put(t, "e", "cf", "other", 100, "w");
	cf_table_flush(t);
	del(t, CF_DEL_FAMILY, "e", "cf", NULL, 200);
	cf_table_flush(t);
	is_str(col(t, "e", "q", 1), "", "DeleteFamily in a newer file masks");
	put(t, "e", "cf", "q", 150, "after");
	is_str(col(t, "e", "q", 1), "q@150=after",
	       "a put under the DeleteFamily's ts written after it shows");
	/* a delete in an older file masks only what was written before */
	del(t, CF_DEL_COLUMN, "f", "cf", "q", 500);
	cf_table_flush(t);
	put(t, "f", "cf", "q", 300, "later");
	cf_table_flush(t);
	is_str(col(t, "f", "q", 1), "q@300=later",
	       "an older file's delete does not mask a later put");
	/* a delete with a newer ts in a newer file, put in an older one */
	put(t, "g", "cf", "q", 10, "x");
	cf_table_flush(t);
	put(t, "g", "cf", "q", 20, "y");
	cf_table_flush(t);
	del(t, CF_DEL_VERSION, "g", "cf", "q", 20);
	cf_table_flush(t);
	is_str(col(t, "g", "q", 1), "",
	       "VERSIONS=1: the version under a deleted one stays dead");
	cf_table_close(t);

	/* --- VERSIONS=3 across files ---------------------------------- */
	t = make("v3", 3, CF_TTL_FOREVER);
	put(t, "r", "cf", "q", 30, "c");
	cf_table_flush(t);
	put(t, "r", "cf", "q", 10, "a");
	cf_table_flush(t);
	put(t, "r", "cf", "q", 20, "b");
	cf_table_flush(t);
	put(t, "r", "cf", "q", 5, "z");
	cf_table_flush(t);
	is_str(col(t, "r", "q", 3), "q@30=c q@20=b q@10=a",
	       "three versions from three files, newest file oldest ts");
	is_str(col(t, "r", "q", 1), "q@30=c", "one version: the oldest file's");
	put(t, "r", "cf", "q", 40, "d");
	is_str(col(t, "r", "q", 2), "q@40=d q@30=c", "memstore and files");
	del(t, CF_DEL_VERSION, "r", "cf", "q", 40);
	cf_table_flush(t);
	is_str(col(t, "r", "q", 3), "q@30=c q@20=b",
	       "a deleted version does not bring back the one it crowded "
	       "out (in an older file)");
	put(t, "s", "cf", "q", 1, "one");
	cf_table_flush(t);
	put(t, "s", "cf", "q", 2, "two");
	cf_table_flush(t);
	put(t, "s", "cf", "q", 3, "three");
	cf_table_flush(t);
	del(t, CF_DEL_VERSION, "s", "cf", "q", 3);
	cf_table_flush(t);
	is_str(col(t, "s", "q", 1), "q@2=two",
	       "VERSIONS=3: under a deleted version the next one shows");
	is_str(col(t, "s", "q", 3), "q@2=two q@1=one", "and all of them");
	cf_table_close(t);

	/* --- TTL ------------------------------------------------------ */
	t = make("ttl", 1, 10);
	put(t, "r", "cf", "q", now, "fresh");
	cf_table_flush(t);
	put(t, "r", "cf", "q", now - 20000, "expired");
	cf_table_flush(t);
	is_str(col(t, "r", "q", 1), "q@1700000000000=fresh",
	       "an expired cell in the newest file, a live one older");
	put(t, "s", "cf", "q", now - 20000, "expired");
	cf_table_flush(t);
	put(t, "s", "cf", "q", now - 30000, "older");
	cf_table_flush(t);
	is_str(col(t, "s", "q", 1), "", "only expired cells: nothing");
	env_clock_set(now + 11000);
	is_str(col(t, "r", "q", 1), "", "past the TTL: gone");
	env_clock_set(now);
	cf_table_close(t);

	/* --- random histories: the column Get equals the family Get ---- */
	for (int versions = 1; versions <= 3; versions += 2) {
		char name[16], a[1024], b[1024], what[64];
		/* CELLFS_SEED replays another history */
		unsigned seed = (getenv("CELLFS_SEED") ?
				 (unsigned)strtoul(getenv("CELLFS_SEED"),
						   NULL, 10) : 12345u) +
				(unsigned)versions;
		int bad = 0, checks = 0;

		snprintf(name, sizeof name, "rand%d", versions);
		t = make(name, versions, CF_TTL_FOREVER);
		for (int step = 0; step < 3000; step++) {
			char row[8], qual[8];
			int op = (int)(rand_r(&seed) % 100);
			int64_t ts = 1 + (int64_t)(rand_r(&seed) % 40);

			snprintf(row, sizeof row, "r%u", rand_r(&seed) % 8);
			snprintf(qual, sizeof qual, "q%u", rand_r(&seed) % 3);
			if (op < 60) {
				snprintf(what, sizeof what, "v%d", step);
				put(t, row, "cf", qual, ts, what);
			} else if (op < 66) {
				del(t, CF_DEL_VERSION, row, "cf", qual, ts);
			} else if (op < 71) {
				del(t, CF_DEL_COLUMN, row, "cf", qual, ts);
			} else if (op < 74) {
				del(t, CF_DEL_FAMILY, row, "cf", NULL, ts);
			} else if (op < 84) {
				cf_table_flush(t);
			} else {
				int maxv = 1 + (int)(rand_r(&seed) % 3);
				get_col(t, row, "cf", qual, NULL, maxv, a,
					sizeof a);
				get_col(t, row, "cf", NULL, qual, maxv, b,
					sizeof b);
				checks++;
				if (strcmp(a, b) && !bad++)
					diag("step %d %s %s maxv %d: column "
					     "'%s' family '%s'", step, row,
					     qual, maxv, a, b);
			}
			if (step == 1500)
				cf_table_compact(t, 0);
		}
		ok(bad == 0 && checks > 300,
		   "VERSIONS=%d: %d random column gets equal the family "
		   "gets", versions, checks);
		cf_table_close(t);
	}

	/* --- a Get stops at its column: the next block is not read ---- */
	{
		struct cf_family f;
		static char big[6000], out[8000];
		uint64_t before, d;
		const char *got;
		cf_row *r = NULL;

		cf_family_default(&f, "cf");
		f.blocksize = 4096;
		f.compression = CF_COMPRESS_NONE;
		if (cf_table_create(db, "blocks", &f, 1) ||
		    cf_table_open(db, "blocks", &t))
			bail("create blocks");
		memset(big, 'x', sizeof big - 1);
		/* block 1: a/cf:q (small) and a/cf:r (big, closes it);
		 * block 2: a/cf:s (big); block 3: b/cf:q (big) */
		put(t, "a", "cf", "q", 10, "small");
		put(t, "a", "cf", "r", 10, big);
		put(t, "a", "cf", "s", 10, big);
		put(t, "b", "cf", "q", 10, big);
		cf_table_flush(t);
		before = lookups();
		got = get_col(t, "a", "cf", "r", NULL, 1, out, sizeof out);
		d = lookups() - before;
		ok(strlen(got) == 5 + sizeof big - 1 && !strncmp(got, "r@10=x", 6),
		   "a Get of a block's last column reads it");
		is_int((int)d, 1, "one block looked up: not the next block, "
		       "which holds the row's next column");
		before = lookups();
		got = col(t, "a", "s", 1);
		d = lookups() - before;
		ok(!strncmp(got, "s@10=x", 6), "a Get of the row's last column");
		is_int((int)d, 2, "two blocks looked up (the row's first, then "
		       "the column's), not the next row's");
		before = lookups();
		got = col(t, "a", "q", 1);
		d = lookups() - before;
		is_str(got, "q@10=small", "a Get of the first column");
		is_int((int)d, 1, "one block looked up");
		del(t, CF_DEL_VERSION, "a", "cf", "s", 10);
		put(t, "a", "cf", "s", 5, "older");
		cf_table_flush(t);
		is_str(col(t, "a", "s", 1), "s@5=older",
		       "a deleted newest version in a newer file: the older "
		       "one shows");
		is_int(cf_table_get(t, "a", 1, NULL, &r), CF_OK,
		       "a whole-row Get");
		is_int((int)cf_row_count(r), 3, "sees the row's three columns");
		cf_row_free(r);
		cf_table_close(t);
	}

	cf_db_close(db);
	tap_rmdir(dir);
	cf_log_release();
	return done_testing();
}
