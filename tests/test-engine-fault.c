/*
 * test-engine-fault: injected ENOSPC and EIO during WAL appends, WAL
 * syncs, flushes and compactions give a clear error, lose nothing
 * acknowledged, and the engine works again once the fault is gone; a
 * simulated power loss (every byte not yet fsynced dropped) after a sync
 * keeps every synced write.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/cellfs.h"
#include "util/env.h"
#include "util/log.h"
#include "tests/tap.h"

static const char *dir;
static cf_db *db;
static cf_table *t;

static void open_db(int sync_mode)
{
	struct cf_options o;

	cf_options_default(&o);
	o.background = 0;
	o.sync_mode = sync_mode;
	if (cf_db_open(dir, &o, &db) || cf_table_open(db, "t", &t))
		bail("open");
}

static void close_db(void)
{
	cf_table_close(t);
	cf_db_close(db);
}

static int put(int i, const char *tag)
{
	char k[32], v[64];
	cf_batch *b;
	int rc;

	snprintf(k, sizeof k, "row%05d", i);
	snprintf(v, sizeof v, "%s-%d", tag, i);
	cf_batch_new(&b);
	cf_batch_put(b, k, strlen(k), "f", 1, "q", 1, CF_TS_NOW, v, strlen(v));
	rc = cf_table_apply(t, b);
	cf_batch_free(b);
	return rc;
}

/* 1 if row i reads back as tag (or, with tag NULL, is absent) */
static int has(int i, const char *tag)
{
	char k[32], v[64];
	cf_row *r;
	int ok_ = 0;

	snprintf(k, sizeof k, "row%05d", i);
	snprintf(v, sizeof v, "%s-%d", tag ? tag : "", i);
	if (cf_table_get(t, k, strlen(k), NULL, &r))
		return 0;
	if (!tag)
		ok_ = cf_row_count(r) == 0;
	else if (cf_row_count(r) == 1) {
		const struct cf_cell *c = cf_row_cell(r, 0);
		ok_ = c->vlen == strlen(v) && memcmp(c->val, v, c->vlen) == 0;
	}
	cf_row_free(r);
	return ok_;
}

static int all_have(int from, int to, const char *tag)
{
	for (int i = from; i < to; i++)
		if (!has(i, tag)) {
			diag("row %d is not %s", i, tag ? tag : "absent");
			return 0;
		}
	return 1;
}

static int log_mentions(const char *what)
{
	struct buf b = BUF_INIT;
	int found;

	cf_log_dump(&b);
	buf_putc(&b, 0);
	found = strstr((const char *)b.p, what) != NULL;
	buf_release(&b);
	return found;
}

int main(void)
{
	struct cf_family f;
	int rc;

	plan(27);
	dir = tap_tmpdir("fault");
	cf_family_default(&f, "f");
	if (cf_db_open(dir, NULL, &db) || cf_table_create(db, "t", &f, 1))
		bail("setup");
	cf_db_close(db);
	open_db(CF_SYNC_NONE);

	/* --- WAL append ---------------------------------------------- */
	for (int i = 0; i < 100; i++)
		put(i, "a");
	env_fault_add(ENV_OP_WRITE, "/wal/", 0, -1, CF_ENOSPC, 0);
	is_int(put(100, "a"), CF_ENOSPC, "a write on a full disk fails ENOSPC");
	is_int(put(101, "a"), CF_ENOSPC, "and keeps failing while full");
	ok(log_mentions("write-ahead log: no space left"),
	   "the log says why");
	ok(all_have(0, 100, "a"), "every acknowledged write still reads");
	ok(has(100, NULL) && has(101, NULL), "refused writes are absent");
	env_fault_clear();
	is_int(put(100, "b"), CF_OK, "writes resume when space returns");
	env_fault_add(ENV_OP_WRITE, "/wal/", 0, 1, CF_ENOSPC, 1);
	is_int(put(102, "a"), CF_ENOSPC, "a short write then ENOSPC fails");
	env_fault_clear();
	is_int(put(103, "a"), CF_OK, "and the log is usable after it");
	close_db();
	open_db(CF_SYNC_NONE);
	ok(all_have(0, 100, "a") && has(100, "b") && has(103, "a") &&
	   has(101, NULL) && has(102, NULL),
	   "after reopen: acknowledged writes there, refused ones not");

	/* --- WAL sync ------------------------------------------------ */
	env_fault_add(ENV_OP_SYNC, "/wal/", 0, 1, CF_EIO, 0);
	put(104, "a");
	is_int(cf_db_sync(db), CF_EIO, "an fsync failure is reported (EIO)");
	is_int(cf_db_sync(db), CF_OK, "and the next sync works");

	/* --- flush --------------------------------------------------- */
	env_fault_add(ENV_OP_WRITE, "/data/", 0, -1, CF_ENOSPC, 0);
	rc = cf_table_flush(t);
	is_int(rc, CF_ENOSPC, "a flush on a full disk fails ENOSPC");
	ok(all_have(0, 100, "a") && has(104, "a"),
	   "everything still reads from memory");
	is_int(put(105, "a"), CF_OK, "writes go on while flushes fail");
	env_fault_clear();
	is_int(cf_table_flush(t), CF_OK, "the flush works once space returns");
	ok(all_have(0, 100, "a") && has(105, "a"), "and the data is there");
	env_fault_add(ENV_OP_SYNC, "/data/", 0, 1, CF_EIO, 0);
	put(106, "a");
	is_int(cf_table_flush(t), CF_EIO, "an fsync error in a flush is EIO");
	env_fault_clear();
	is_int(cf_table_flush(t), CF_OK, "and a retry works");

	/* --- compaction ---------------------------------------------- */
	for (int round = 0; round < 3; round++) {
		for (int i = 200 + round * 50; i < 250 + round * 50; i++)
			put(i, "c");
		cf_table_flush(t);
	}
	env_fault_add(ENV_OP_WRITE, "/data/", 0, -1, CF_EIO, 0);
	is_int(cf_table_compact(t, 1), CF_EIO, "an I/O error in compaction is EIO");
	env_fault_clear();
	ok(all_have(200, 350, "c") && all_have(0, 100, "a"),
	   "a failed compaction loses nothing");
	is_int(cf_table_compact(t, 1), CF_OK, "the compaction works afterwards");
	ok(all_have(200, 350, "c") && all_have(0, 100, "a"), "same data after it");
	close_db();
	open_db(CF_SYNC_NONE);
	ok(all_have(200, 350, "c") && all_have(0, 100, "a") && has(106, "a"),
	   "and after reopen");
	close_db();

	/* --- power loss ---------------------------------------------- */
	{
		pid_t pid = fork();
		int status;
		if (pid == 0) {
			env_track_unsynced(1);
			open_db(CF_SYNC_NONE);
			for (int i = 400; i < 450; i++)
				put(i, "synced");
			if (cf_db_sync(db))
				_exit(3);
			for (int i = 450; i < 500; i++)
				put(i, "unsynced");
			if (env_drop_unsynced())
				_exit(4);
			_exit(0);	/* the power goes: no close */
		}
		waitpid(pid, &status, 0);
		is_int(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
		       "the power-loss child ran");
	}
	open_db(CF_SYNC_NONE);
	ok(all_have(400, 450, "synced"), "every synced write survives power loss");
	{
		int lost = 0;
		for (int i = 450; i < 500; i++)
			lost += has(i, NULL);
		ok(lost == 50, "unsynced writes were really dropped (%d of 50)",
		   lost);
	}
	ok(all_have(200, 350, "c"), "older data is intact");
	close_db();
	tap_rmdir(dir);
	cf_log_release();
	return done_testing();
}
