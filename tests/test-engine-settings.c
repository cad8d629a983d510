/*
 * test-engine-settings: family settings and database options not covered
 * elsewhere: KEEP_DELETED_CELLS (time travel past a delete, kept through
 * major compaction), IN_MEMORY and BLOCKSIZE round trips, the WAL sync
 * policies (always, batch within sync_ms, none, and cf_db_sync's group
 * commit), and writers slowing down instead of failing when store files
 * pile up.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/cellfs.h"
#include "util/log.h"
#include "tests/tap.h"

static int put(cf_table *t, const char *row, const char *qual, int64_t ts,
	       const char *val)
{
	cf_batch *b;
	int rc;

	cf_batch_new(&b);
	cf_batch_put(b, row, strlen(row), "f", 1, qual, strlen(qual), ts, val,
		     strlen(val));
	rc = cf_table_apply(t, b);
	cf_batch_free(b);
	return rc;
}

static size_t count_at(cf_table *t, const char *row, int64_t max_ts)
{
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	cf_row *r;
	size_t n;

	o.max_ts = max_ts;
	o.max_versions = INT32_MAX;
	if (cf_table_get(t, row, strlen(row), &o, &r))
		return (size_t)-1;
	n = cf_row_count(r);
	cf_row_free(r);
	return n;
}

static cf_db *open_db(const char *dir, int sync, unsigned sync_ms, int bg)
{
	struct cf_options o;
	cf_db *db;

	cf_options_default(&o);
	o.sync_mode = sync;
	o.sync_ms = sync_ms;
	o.background = bg;
	if (cf_db_open(dir, &o, &db))
		bail("open %s", dir);
	return db;
}

struct syncer {
	cf_db *db;
	int rc;
};

static void *do_sync(void *arg)
{
	struct syncer *s = arg;
	s->rc = cf_db_sync(s->db);
	return NULL;
}

int main(void)
{
	const char *dir = tap_tmpdir("settings");
	struct cf_family f, *sch;
	struct cf_stats s0, s1;
	cf_db *db;
	cf_table *t;
	size_t n;

	plan(18);
	db = open_db(dir, CF_SYNC_NONE, 1000, 0);
	cf_family_default(&f, "f");
	f.keep_deleted = 1;
	f.versions = 5;
	f.in_memory = 1;
	f.blocksize = 4096;
	if (cf_table_create(db, "k", &f, 1) || cf_table_open(db, "k", &t))
		bail("create");
	cf_table_schema(t, &sch, &n);
	ok(n == 1 && sch[0].keep_deleted && sch[0].in_memory &&
	   sch[0].blocksize == 4096, "settings are kept");
	free(sch);

	/* KEEP_DELETED_CELLS: a read whose range ends before the delete's
	 * timestamp still sees the deleted cells, also after compaction */
	put(t, "r", "q", 100, "a");
	put(t, "r", "q", 200, "b");
	{
		cf_batch *b;
		cf_batch_new(&b);
		cf_batch_delete(b, CF_DEL_COLUMN, "r", 1, "f", 1, "q", 1, 300);
		cf_table_apply(t, b);
		cf_batch_free(b);
	}
	is_int(count_at(t, "r", INT64_MAX), 0, "the delete hides the column");
	is_int(count_at(t, "r", 300), 2,
	       "a time range ending at the delete's ts still sees both");
	cf_table_flush(t);
	cf_table_compact(t, 1);
	is_int(count_at(t, "r", INT64_MAX), 0, "after major compaction: hidden");
	is_int(count_at(t, "r", 300), 2, "and still there for time travel");
	cf_table_close(t);
	cf_db_close(db);

	/* sync=always: an fsync before every acknowledgement */
	db = open_db(dir, CF_SYNC_ALWAYS, 1000, 0);
	cf_table_open(db, "k", &t);
	cf_db_stats(db, &s0);
	for (int i = 0; i < 10; i++)
		put(t, "s", "q", 1000 + i, "v");
	cf_db_stats(db, &s1);
	ok(s1.wal_syncs - s0.wal_syncs >= 10,
	   "sync=always fsyncs each write (%" PRIu64 " syncs for 10)",
	   s1.wal_syncs - s0.wal_syncs);
	cf_table_close(t);
	cf_db_close(db);

	/* sync=none: no fsync until asked */
	db = open_db(dir, CF_SYNC_NONE, 1000, 1);
	cf_table_open(db, "k", &t);
	cf_db_stats(db, &s0);
	for (int i = 0; i < 10; i++)
		put(t, "s", "q", 2000 + i, "v");
	usleep(300000);
	cf_db_stats(db, &s1);
	is_int(s1.wal_syncs - s0.wal_syncs, 0, "sync=none never fsyncs by itself");
	{
		/* group commit: callers waiting together share fsyncs */
		pthread_t th[8];
		struct syncer sy[8];
		int bad = 0;
		put(t, "s", "q", 3000, "v");
		cf_db_stats(db, &s0);
		for (int i = 0; i < 8; i++) {
			sy[i].db = db;
			pthread_create(&th[i], NULL, do_sync, &sy[i]);
		}
		for (int i = 0; i < 8; i++) {
			pthread_join(th[i], NULL);
			bad |= sy[i].rc != CF_OK;
		}
		cf_db_stats(db, &s1);
		ok(!bad, "cf_db_sync works from 8 threads at once");
		ok(s1.wal_syncs - s0.wal_syncs >= 1 &&
		   s1.wal_syncs - s0.wal_syncs <= 8,
		   "with at most one fsync each (%" PRIu64 ")",
		   s1.wal_syncs - s0.wal_syncs);
		cf_db_stats(db, &s0);
		is_int(cf_db_sync(db), CF_OK, "a sync with nothing new");
		cf_db_stats(db, &s1);
		is_int(s1.wal_syncs - s0.wal_syncs, 0, "needs no fsync");
	}
	cf_table_close(t);
	cf_db_close(db);

	/* sync=batch: the syncer thread fsyncs within sync_ms */
	db = open_db(dir, CF_SYNC_BATCH, 50, 1);
	cf_table_open(db, "k", &t);
	cf_db_stats(db, &s0);
	put(t, "s", "q", 4000, "v");
	usleep(200000);
	cf_db_stats(db, &s1);
	ok(s1.wal_syncs - s0.wal_syncs >= 1,
	   "sync=batch fsyncs within sync_ms by itself");
	cf_table_close(t);
	cf_db_close(db);

	/* many store files: writers slow down, never fail */
	{
		struct cf_options o;
		int fails = 0;
		cf_options_default(&o);
		o.sync_mode = CF_SYNC_NONE;
		o.compact_threshold = 100;	/* compaction far behind */
		o.stall_files = 4;
		if (cf_db_open(dir, &o, &db) || cf_table_open(db, "k", &t))
			bail("reopen");
		for (int round = 0; round < 6; round++) {
			for (int i = 0; i < 20; i++) {
				char row[32];
				snprintf(row, sizeof row, "x%d-%d", round, i);
				fails += put(t, row, "q", CF_TS_NOW, "v") != CF_OK;
			}
			cf_table_flush(t);
		}
		cf_db_stats(db, &s1);
		is_int(fails, 0, "no write fails while files pile up");
		ok(s1.stalls > 0, "writers were slowed down (%" PRIu64 " stalls)",
		   s1.stalls);
		ok(s1.store_files >= 4, "with %" PRIu64 " store files waiting",
		   s1.store_files);
		is_int(count_at(t, "x5-19", INT64_MAX), 1, "and the data is there");
		cf_table_close(t);
		cf_db_close(db);
	}
	/* the global memstore limit: no region reaches flush_size, but all
	 * together pass the limit, so the largest are flushed */
	{
		struct cf_options o;
		struct cf_family g;
		char v[1000];
		int waited = 0;
		cf_options_default(&o);
		o.sync_mode = CF_SYNC_NONE;
		o.flush_size = 4 << 20;
		o.memstore_limit = 1 << 20;
		cf_family_default(&g, "f");
		memset(v, 'v', sizeof v - 1);
		v[sizeof v - 1] = 0;
		if (cf_db_open(dir, &o, &db) ||
		    cf_table_create(db, "g", &g, 1) ||
		    cf_table_open(db, "g", &t))
			bail("global limit setup");
		for (char c = 'b'; c <= 'h'; c++) {
			char key[2] = { c, 0 };
			cf_table_split(t, key, 1);
		}
		cf_db_stats(db, &s0);
		for (int i = 0; i < 2000; i++) {
			char row[32];
			snprintf(row, sizeof row, "%c%05d", 'a' + i % 8, i);
			put(t, row, "q", CF_TS_NOW, v);
		}
		do {
			usleep(50000);
			cf_db_stats(db, &s1);
		} while (s1.mem_bytes > o.memstore_limit && ++waited < 100);
		ok(s1.flushes > s0.flushes,
		   "regions below flush_size were flushed (%" PRIu64 ")",
		   s1.flushes - s0.flushes);
		ok(s1.mem_bytes <= o.memstore_limit,
		   "all memstores together back under the limit (%" PRIu64
		   " bytes)", s1.mem_bytes);
		cf_table_close(t);
		cf_db_close(db);
	}
	tap_rmdir(dir);
	cf_log_release();
	return done_testing();
}
