/*
 * test-engine-merge: HBase's merge_region (cf_table_merge): two adjacent
 * regions become one that references both regions' files, every row
 * readable once and in order; the refusals (the first region, no region
 * at the key); writes in flight at the merge and after it survive a
 * crash (WAL replay into the merged region); its major compaction
 * rewrites the references and a clean close leaves no debris; a catalog
 * lost after a merge is rebuilt by cellfs-fsck with the merged region,
 * not the two it replaced; and writers that keep writing while regions
 * split and merge under them lose nothing (in make check-thread).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/cellfs.h"
#include "tests/regions.h"
#include "tests/tap.h"
#include "util/log.h"

#define ROWS 20000

static const char *dir;

static void put_rows(cf_table *t, int from, int to)
{
	cf_batch *b;

	cf_batch_new(&b);
	for (int i = from; i < to; i++) {
		char key[32], v[160];
		size_t vl;
		snprintf(key, sizeof key, "row%06d", i);
		value_of(i, v, &vl);
		cf_batch_clear(b);
		cf_batch_put(b, key, strlen(key), "f", 1, "q", 1, CF_TS_NOW, v,
			     vl);
		if (cf_table_apply(t, b))
			bail("write %d", i);
	}
	cf_batch_free(b);
}

/* The regions' start keys, ' '-separated ("" for the first), in *out. */
static void starts(cf_table *t, char *out, size_t n)
{
	struct cf_region_info *ri;
	size_t nr = 0, len = 0;

	out[0] = '\0';
	if (cf_table_regions(t, &ri, &nr))
		return;
	for (size_t i = 0; i < nr; i++)
		len += (size_t)snprintf(out + len, n - len, "%s%.*s",
					i ? " " : "", (int)ri[i].startlen,
					(const char *)ri[i].start);
	cf_regions_free(ri, nr);
}

/* A writer of rows w, w + 2, w + 4, ... below CROWS, into "c". */
#define CROWS 40000
struct writer {
	cf_table *t;
	int first;
	int rc;
};

static void *write_c(void *arg)
{
	struct writer *w = arg;
	cf_batch *b;

	cf_batch_new(&b);
	for (int i = w->first; i < CROWS && !w->rc; i += 2) {
		char key[32];
		snprintf(key, sizeof key, "c%05d", i);
		cf_batch_clear(b);
		cf_batch_put(b, key, strlen(key), "f", 1, "q", 1, CF_TS_NOW,
			     key, strlen(key));
		w->rc = cf_table_apply(w->t, b);
	}
	cf_batch_free(b);
	return NULL;
}

/* Regions split and merged while two threads write. */
static void concurrent(void)
{
	struct cf_options o;
	struct cf_family f;
	struct writer w[2];
	pthread_t th[2];
	cf_db *db;
	cf_table *t;
	int merged = 0, busy = 0, other = 0, n = 0;
	cf_scanner *sc;
	const cf_row *r;
	struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };

	cf_options_default(&o);
	o.flush_size = 64 << 10;
	cf_family_default(&f, "f");
	if (cf_db_open(dir, &o, &db) || cf_table_create(db, "c", &f, 1) ||
	    cf_table_open(db, "c", &t))
		bail("concurrent setup");
	for (int i = 0; i < 2; i++) {
		w[i] = (struct writer){ t, i, 0 };
		pthread_create(&th[i], NULL, write_c, &w[i]);
	}
	for (int round = 0; round < 20; round++) {
		char k[16];
		int rc;
		snprintf(k, sizeof k, "c%05d", 1000 + 200 * (round % 20));
		rc = cf_table_split(t, k, strlen(k));
		if (rc && rc != CF_EEXIST)
			other++;
		rc = cf_table_merge(t, k, strlen(k));
		merged += rc == CF_OK;
		busy += rc == CF_EBUSY;
		other += rc && rc != CF_EBUSY && rc != CF_ENOTFOUND;
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	ok(!w[0].rc && !w[1].rc && !other, "writers and splits and merges "
	   "side by side fail nothing (%d merged, %d busy)", merged, busy);
	ok(merged > 0, "some merges went through under writes (%d)", merged);
	if (cf_scan_open(t, &so, &sc))
		bail("scan c");
	while (cf_scan_next(sc, &r) == CF_OK && r) {
		size_t kl;
		const unsigned char *k = cf_row_key(r, &kl);
		char key[32];
		snprintf(key, sizeof key, "c%05d", n);
		if (kl != strlen(key) || memcmp(k, key, kl))
			break;
		n++;
	}
	cf_scan_close(sc);
	is_int(n, CROWS, "every row written is there, once, in order");
	cf_table_close(t);
	cf_db_close(db);
	if (cf_db_open(dir, &o, &db) || cf_table_open(db, "c", &t))
		bail("concurrent reopen");
	n = 0;
	if (cf_scan_open(t, &so, &sc))
		bail("scan c");
	while (cf_scan_next(sc, &r) == CF_OK && r)
		n++;
	cf_scan_close(sc);
	is_int(n, CROWS, "and after a reopen");
	cf_table_close(t);
	cf_db_close(db);
}

static void open_t(const struct cf_options *o, cf_db **db, cf_table **t)
{
	if (cf_db_open(dir, o, db) || cf_table_open(*db, "t", t))
		bail("open");
}

int main(void)
{
	struct cf_options o;
	struct cf_family f;
	struct cf_stats st;
	cf_db *db;
	cf_table *t;
	unsigned problems, debris;
	char s[256], path[4200];

	dir = tap_tmpdir("merge");
	cf_options_default(&o);
	o.background = 0;	/* no split or compaction but these */
	o.flush_size = 1 << 20;
	cf_family_default(&f, "f");
	if (cf_db_open(dir, &o, &db) || cf_table_create(db, "t", &f, 1) ||
	    cf_table_open(db, "t", &t))
		bail("setup");
	put_rows(t, 0, ROWS / 2);
	if (cf_table_split(t, "row005000", 9) ||
	    cf_table_split(t, "row010000", 9) ||
	    cf_table_split(t, "row015000", 9))
		bail("split");
	/* rows written after the splits: in the daughters' files and
	 * memstores when they merge */
	put_rows(t, ROWS / 2, ROWS);
	starts(t, s, sizeof s);
	is_str(s, " row005000 row010000 row015000", "four regions to merge");

	is_int(cf_table_merge(t, "", 0), CF_EINVAL,
	       "the first region has none before it: EINVAL");
	is_int(cf_table_merge(t, "row007000", 9), CF_ENOTFOUND,
	       "no region starts at the key: ENOTFOUND");
	is_int(cf_table_merge(t, "row010000", 9), CF_OK,
	       "merge the region at row010000 into the one before");
	starts(t, s, sizeof s);
	is_str(s, " row005000 row015000", "three regions, one of them "
	       "[row005000, row015000)");
	ok(check_all(t, ROWS, "after a merge"), "every row once, in order");
	cf_db_stats(db, &st);
	is_int((int)st.merges, 1, "the merge is counted");

	/* --- a crash after a merge and writes: the WAL replays into the
	 * merged region ------------------------------------------------ */
	put_rows(t, ROWS, ROWS + 500);	/* into the last region */
	cf_table_close(t);
	cf_db_close(db);
	{
		pid_t pid = fork();
		int stt;
		if (pid == 0) {
			struct cf_options oo = o;
			oo.sync_mode = CF_SYNC_NONE;
			open_t(&oo, &db, &t);
			/* rows of both regions in memstores, then merged:
			 * they move into the merged region, flushed first */
			put_rows(t, 0, 100);
			put_rows(t, 15000, 15100);
			if (cf_table_merge(t, "row015000", 9))
				_exit(2);
			/* and writes after the merge, only in the WAL */
			put_rows(t, 14900, 15200);
			_exit(0);	/* no close: the crash */
		}
		waitpid(pid, &stt, 0);
		is_int(WIFEXITED(stt) ? WEXITSTATUS(stt) : -1, 0,
		       "a child merged, wrote, and died without closing");
	}
	open_t(&o, &db, &t);
	starts(t, s, sizeof s);
	is_str(s, " row005000", "the merge survived the crash: two regions");
	ok(check_all(t, ROWS + 500, "after the crash"),
	   "every row, the WAL's after the merge included");

	/* --- merge everything, compact, close: no references left ----- */
	is_int(cf_table_merge(t, "row005000", 9), CF_OK,
	       "merge the last two: one region");
	starts(t, s, sizeof s);
	is_str(s, "", "the table is one region again");
	ok(check_all(t, ROWS + 500, "one region"), "with every row");
	is_int(cf_table_compact(t, 1), CF_OK, "major compaction of it");
	ok(check_all(t, ROWS + 500, "compacted"), "rows unchanged by it");
	cf_table_close(t);
	cf_db_close(db);
	/* the directories of regions replaced in earlier sessions go at
	 * the next open (the sweep), this session's at its close */
	open_t(&o, &db, &t);
	cf_table_close(t);
	cf_db_close(db);
	said[0] = 0;
	debris = 99;
	is_int(cf_check(dir, 0, say, NULL, &problems, &debris), CF_OK,
	       "fsck after the merges");
	ok(problems == 0 && debris == 0, "no problem and no debris: the "
	   "replaced regions' directories went once nothing referenced "
	   "them (%u problems, %u debris)", problems, debris);
	if (problems || debris)
		diag("%s", said);

	/* --- the catalog lost after a merge, before any compaction ---- */
	open_t(&o, &db, &t);
	if (cf_table_split(t, "row008000", 9) ||
	    cf_table_split(t, "row016000", 9))
		bail("split again");
	cf_table_compact(t, 1);	/* the daughters' own files */
	is_int(cf_table_merge(t, "row016000", 9), CF_OK,
	       "merge [row008000, row016000) and [row016000, ...)");
	cf_table_close(t);
	cf_db_close(db);
	snprintf(path, sizeof path, "%s/catalog.db", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/catalog.db-wal", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/catalog.db-shm", dir);
	unlink(path);
	said[0] = 0;
	is_int(cf_check(dir, 1, say, NULL, &problems, NULL), CF_OK,
	       "fsck --repair without a catalog");
	said[0] = 0;
	cf_check(dir, 0, say, NULL, &problems, NULL);
	is_int(problems, 0, "clean after the repair");
	if (problems)
		diag("%s", said);
	open_t(&o, &db, &t);
	starts(t, s, sizeof s);
	is_str(s, " row008000", "the rebuilt map has the merged region, "
	       "not the two it replaced");
	ok(check_all(t, ROWS + 500, "after the rebuild"), "and every row");
	cf_table_close(t);
	cf_db_close(db);
	concurrent();
	tap_rmdir(dir);
	cf_log_release();
	return done_testing();
}
