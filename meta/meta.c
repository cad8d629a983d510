/*
 * meta.c: the catalog in SQLite.  Schema and its invariants:
 * docs/catalog.md.
 *
 * Every statement is prepared once in meta_open and reused: a call binds
 * its values, steps, then resets the statement and clears its bindings
 * before it returns, so no statement stays busy between calls except a
 * list statement while its callback runs.  SQL text is constant; values
 * only ever travel as bound parameters.
 *
 * Transactions nest.  The outermost meta_begin is BEGIN IMMEDIATE (the
 * write lock is taken up front, so a commit never has to upgrade a read
 * lock), inner ones are SAVEPOINTs:
 *
 *   depth 0 --meta_begin: BEGIN IMMEDIATE--> depth 1
 *   depth n --meta_begin: SAVEPOINT-->       depth n+1
 *   depth n+1 --meta_commit: RELEASE-->      depth n
 *   depth n+1 --meta_rollback: ROLLBACK TO, RELEASE--> depth n
 *   depth 1 --meta_commit: COMMIT (ROLLBACK if that fails)--> depth 0
 *   depth 1 --meta_rollback: ROLLBACK-->     depth 0
 *
 * so a function that must be atomic on its own (meta_table_del,
 * meta_region_del) wraps itself in meta_begin/meta_commit and works both
 * alone and inside a caller's transaction, and its failure undoes only
 * its own part.
 *
 * SQLite rolls a whole transaction back by itself on some errors (disk
 * full, I/O error, out of memory).  From then on the connection is in
 * autocommit mode while our depth says "inside a transaction"; running
 * the caller's remaining statements would commit each on its own and
 * break the atomicity the caller asked for.  So every statement run at
 * depth > 0 first checks that SQLite's transaction is still there and
 * fails with CF_EIO when it is not; the caller's meta_rollback then only
 * resets the depth.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta/meta.h"
#include "util/env.h"
#include "util/err.h"
#include "util/log.h"

/* PRAGMA user_version of the schema below; docs/catalog.md. */
#define SCHEMA_VERSION 2
/* How long a statement waits for a lock held by another connection (the
 * engine holds DATADIR/LOCK, so only tools like sqlite3(1) compete). */
#define BUSY_TIMEOUT_MS 5000

enum {
	S_BEGIN, S_COMMIT, S_ROLLBACK,
	S_SAVEPOINT, S_RELEASE, S_ROLLBACK_TO,
	S_CHECK,
	S_KV_GET, S_KV_SET,
	S_TABLE_ADD, S_TABLE_PUT, S_TABLE_DEL, S_TABLE_LIST, S_TABLE_SCHEMA_MS,
	S_FAM_PUT, S_FAM_DEL, S_FAM_DEL_TABLE, S_FAM_LIST,
	S_REG_PUT, S_REG_DEL, S_REG_DEL_TABLE, S_REG_FLUSHED, S_REG_LIST,
	S_FILE_ADD, S_FILE_DEL, S_FILE_DEL_REGION, S_FILE_DEL_TABLE,
	S_FILE_LIST, S_FILE_REFS,
	S_ACC_PUT, S_ACC_DEL, S_ACC_DEL_TABLE, S_ACC_LIST,
	S_COUNT
};

static const char *const sql[S_COUNT] = {
	[S_BEGIN] = "BEGIN IMMEDIATE",
	[S_COMMIT] = "COMMIT",
	[S_ROLLBACK] = "ROLLBACK",
	/* one name for every level: ROLLBACK TO and RELEASE act on the
	 * innermost savepoint of that name */
	[S_SAVEPOINT] = "SAVEPOINT meta_nested",
	[S_RELEASE] = "RELEASE meta_nested",
	[S_ROLLBACK_TO] = "ROLLBACK TO meta_nested",
	[S_CHECK] = "PRAGMA integrity_check",
	[S_KV_GET] = "SELECT value FROM kv WHERE key = ?1",
	[S_KV_SET] = "INSERT OR REPLACE INTO kv(key, value) VALUES (?1, ?2)",
	[S_TABLE_ADD] = "INSERT INTO tables(name, created_ms, schema_ms) "
			"VALUES (?1, ?2, ?2)",
	[S_TABLE_PUT] = "INSERT INTO tables(id, name) VALUES (?1, ?2)",
	[S_TABLE_DEL] = "DELETE FROM tables WHERE id = ?1",
	[S_TABLE_LIST] = "SELECT id, name, created_ms, schema_ms FROM tables "
			 "ORDER BY name",
	[S_TABLE_SCHEMA_MS] = "UPDATE tables SET schema_ms = ?2 WHERE id = ?1",
	[S_FAM_PUT] = "INSERT OR REPLACE INTO families(table_id, name, "
		      "settings) VALUES (?1, ?2, ?3)",
	[S_FAM_DEL] = "DELETE FROM families WHERE table_id = ?1 AND name = ?2",
	[S_FAM_DEL_TABLE] = "DELETE FROM families WHERE table_id = ?1",
	[S_FAM_LIST] = "SELECT name, settings FROM families "
		       "WHERE table_id = ?1 ORDER BY name",
	[S_REG_PUT] = "INSERT OR REPLACE INTO regions(id, table_id, start, "
		      "end, flushed_seq, created_ms) "
		      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[S_REG_DEL] = "DELETE FROM regions WHERE id = ?1",
	[S_REG_DEL_TABLE] = "DELETE FROM regions WHERE table_id = ?1",
	[S_REG_FLUSHED] = "UPDATE regions SET flushed_seq = ?2 WHERE id = ?1",
	[S_REG_LIST] = "SELECT id, table_id, start, end, flushed_seq, "
		       "created_ms "
		       "FROM regions WHERE table_id = ?1 ORDER BY start, id",
	[S_FILE_ADD] = "INSERT INTO files(id, region_id, family, "
		       "home_region, size, max_seq, lo, hi) "
		       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[S_FILE_DEL] = "DELETE FROM files WHERE region_id = ?1 AND id = ?2",
	[S_FILE_DEL_REGION] = "DELETE FROM files WHERE region_id = ?1",
	[S_FILE_DEL_TABLE] = "DELETE FROM files WHERE region_id IN "
			     "(SELECT id FROM regions WHERE table_id = ?1)",
	[S_FILE_LIST] = "SELECT id, region_id, family, home_region, size, "
			"max_seq, lo, hi FROM files WHERE region_id = ?1 "
			"ORDER BY id",
	[S_FILE_REFS] = "SELECT count(*) FROM files WHERE id = ?1",
	[S_ACC_PUT] = "INSERT OR REPLACE INTO access(name, mode, uid, gid) "
		      "VALUES (?1, ?2, ?3, ?4)",
	[S_ACC_DEL] = "DELETE FROM access WHERE name = ?1",
	/* before the table's row goes: it finds the name through it */
	[S_ACC_DEL_TABLE] = "DELETE FROM access WHERE name = "
			    "(SELECT name FROM tables WHERE id = ?1)",
	[S_ACC_LIST] = "SELECT name, mode, uid, gid FROM access ORDER BY name",
};

/*
 * Version 2.  Created in one transaction together with user_version, so
 * a catalog either has all of it or is empty.  The indexes serve
 * meta_region_list (regions of a table by start key) and meta_file_refs
 * (rows naming one physical file); the primary keys serve the rest.
 */
static const char schema[] =
	"CREATE TABLE tables("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" name TEXT NOT NULL UNIQUE,"
	" created_ms INTEGER NOT NULL DEFAULT 0,"
	" schema_ms INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE families("
	" table_id INTEGER NOT NULL, name TEXT NOT NULL,"
	" settings TEXT NOT NULL, PRIMARY KEY(table_id, name));"
	"CREATE TABLE regions("
	" id INTEGER PRIMARY KEY, table_id INTEGER NOT NULL,"
	" start BLOB NOT NULL, end BLOB NOT NULL,"
	" flushed_seq INTEGER NOT NULL DEFAULT 0,"
	" created_ms INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX regions_by_table ON regions(table_id, start);"
	"CREATE TABLE files("
	" id INTEGER NOT NULL, region_id INTEGER NOT NULL,"
	" family TEXT NOT NULL, home_region INTEGER NOT NULL,"
	" size INTEGER NOT NULL, max_seq INTEGER NOT NULL,"
	" lo BLOB, hi BLOB, PRIMARY KEY(region_id, id));"
	"CREATE INDEX files_by_id ON files(id);"
	"CREATE TABLE kv(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
	"CREATE TABLE access(name TEXT PRIMARY KEY, mode INTEGER NOT NULL,"
	" uid INTEGER NOT NULL, gid INTEGER NOT NULL);"
	"PRAGMA user_version = 2;";

/* Version 1 -> 2: the times of tables and regions (0: unknown), and who
 * may use each table (meta_access_put). */
static const char migrate_1_2[] =
	"ALTER TABLE tables ADD COLUMN created_ms INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE tables ADD COLUMN schema_ms INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE regions ADD COLUMN created_ms INTEGER NOT NULL "
	"DEFAULT 0;"
	"CREATE TABLE access(name TEXT PRIMARY KEY, mode INTEGER NOT NULL,"
	" uid INTEGER NOT NULL, gid INTEGER NOT NULL);"
	"PRAGMA user_version = 2;";

struct meta {
	sqlite3 *db;
	sqlite3_stmt *st[S_COUNT];
	int depth;		/* meta_begin calls not yet ended */
};

/*
 * Maps a failed SQLite call to a CF_E* code and records SQLite's own
 * message, so a refused flush or split says why in MNT/.log.
 */
static int fail(struct meta *m, int e, const char *what)
{
	int ext = m && m->db ? sqlite3_extended_errcode(m->db) : e;
	const char *msg = m && m->db ? sqlite3_errmsg(m->db) :
		sqlite3_errstr(e);
	int rc;

	switch (e & 0xff) {
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		rc = CF_ECORRUPT;
		break;
	case SQLITE_FULL:
		rc = CF_ENOSPC;
		break;
	case SQLITE_NOMEM:
		rc = CF_ENOMEM;
		break;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		rc = CF_EBUSY;
		break;
	case SQLITE_CONSTRAINT:
		/* a second table of one name, a second row of one key; a
		 * NULL where the schema wants a value is the caller's bug */
		rc = (ext == SQLITE_CONSTRAINT_UNIQUE ||
		      ext == SQLITE_CONSTRAINT_PRIMARYKEY) ? CF_EEXIST :
			CF_EINVAL;
		break;
	default:		/* SQLITE_IOERR and everything else */
		rc = CF_EIO;
	}
	cf_log(rc == CF_EEXIST ? CF_LOG_INFO : CF_LOG_ERROR,
	       "catalog: %s: %s (sqlite %d)", what, msg, ext);
	return rc;
}

/* True when SQLite dropped the transaction the caller still thinks it
 * is in (see the top of this file). */
static int txn_lost(struct meta *m)
{
	return m->depth > 0 && sqlite3_get_autocommit(m->db);
}

static void done(sqlite3_stmt *s)
{
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

/* Runs statement i, which returns no rows, with its bound values; leaves
 * it reset and unbound. */
static int run(struct meta *m, int i, const char *what)
{
	sqlite3_stmt *s = m->st[i];
	int e, rc = CF_OK;

	if (txn_lost(m)) {
		cf_log(CF_LOG_ERROR, "catalog: %s: the transaction was already "
		       "rolled back by an earlier error", what);
		done(s);
		return CF_EIO;
	}
	e = sqlite3_step(s);
	if (e != SQLITE_DONE && e != SQLITE_ROW)
		rc = fail(m, e, what);
	done(s);
	return rc;
}

/*
 * Starts a list: refuses a statement that is already stepping, which
 * means a callback of the same list called it again and would consume
 * its caller's rows.
 */
static int list_start(struct meta *m, int i, const char *what)
{
	if (!sqlite3_stmt_busy(m->st[i]))
		return CF_OK;
	cf_log(CF_LOG_ERROR, "catalog: %s: called again from its own "
	       "callback", what);
	return CF_EBUSY;
}

/* Steps list statement i (bound) through row(), which decodes one row
 * and calls the caller's callback held in cb; stops at the first non-zero
 * return and returns it. */
static int list_run(struct meta *m, int i, const char *what,
		    int (*row)(sqlite3_stmt *s, void *cb), void *cb)
{
	sqlite3_stmt *s = m->st[i];
	int e, rc = CF_OK;

	while ((e = sqlite3_step(s)) == SQLITE_ROW) {
		rc = row(s, cb);
		if (rc)
			break;
	}
	if (!rc && e != SQLITE_DONE)
		rc = fail(m, e, what);
	done(s);
	return rc;
}

/* Column text that the schema declares NOT NULL: NULL here means SQLite
 * could not convert it (out of memory). */
static const char *col_text(sqlite3_stmt *s, int c)
{
	return (const char *)sqlite3_column_text(s, c);
}

/* A blob column; *len its size.  A zero-length blob comes back as ""
 * (never NULL), a SQL NULL as NULL.  *nomem when SQLite failed. */
static const void *col_blob(sqlite3_stmt *s, int c, size_t *len, int *nomem)
{
	const void *p;

	if (sqlite3_column_type(s, c) == SQLITE_NULL) {
		*len = 0;
		return NULL;
	}
	p = sqlite3_column_blob(s, c);	/* before _bytes: SQLite's order */
	*len = (size_t)sqlite3_column_bytes(s, c);
	if (*len == 0)
		return "";
	if (!p)
		*nomem = 1;
	return p;
}

/* Binds a key: NULL pointer -> SQL NULL (only lo/hi allow it), any other
 * pointer -> a blob, empty when len is 0. */
static void bind_blob(sqlite3_stmt *s, int i, const void *p, size_t len)
{
	if (!p)
		sqlite3_bind_null(s, i);
	else if (len == 0)
		sqlite3_bind_zeroblob(s, i, 0);
	else
		sqlite3_bind_blob64(s, i, p, len, SQLITE_STATIC);
}

static void bind_text(sqlite3_stmt *s, int i, const char *p)
{
	sqlite3_bind_text(s, i, p, -1, SQLITE_STATIC);
}

/* One-shot statement at open (pragmas): steps it once; the first column
 * of the first row into *text (copied) if asked.  Values are never
 * spliced into sql. */
static int once(struct meta *m, const char *q, char *text, size_t textlen,
		int *num)
{
	sqlite3_stmt *s = NULL;
	int e, rc = CF_OK;

	e = sqlite3_prepare_v2(m->db, q, -1, &s, NULL);
	if (e != SQLITE_OK)
		return fail(m, e, q);
	e = sqlite3_step(s);
	if (e == SQLITE_ROW) {
		if (text && textlen) {
			const char *t = col_text(s, 0);
			snprintf(text, textlen, "%s", t ? t : "");
		}
		if (num)
			*num = sqlite3_column_int(s, 0);
	} else if (e != SQLITE_DONE) {
		rc = fail(m, e, q);
	}
	sqlite3_finalize(s);
	return rc;
}

/*
 * Brings a new database to the current schema, migrates an older catalog
 * (version 1) to it, or refuses one that is not ours.  A current catalog
 * is only read here, so opening it never waits for the write lock;
 * creating or migrating takes BEGIN IMMEDIATE and looks again, so two
 * openers cannot both do it.
 */
static int setup(struct meta *m, const char *path)
{
	int ver = -1, objects = -1, rc, e;
	char *err = NULL;

	rc = once(m, "PRAGMA user_version", NULL, 0, &ver);
	if (rc || ver == SCHEMA_VERSION)
		return rc;
	if (ver == 0 || ver == 1) {
		rc = once(m, "BEGIN IMMEDIATE", NULL, 0, NULL);
		if (rc)
			return rc;
		rc = once(m, "PRAGMA user_version", NULL, 0, &ver);
		if (!rc && ver == 0)
			rc = once(m, "SELECT count(*) FROM sqlite_master",
				  NULL, 0, &objects);
	}
	if (rc || ver == SCHEMA_VERSION)
		goto out;
	if (ver == 1) {
		/* a catalog of an older cellfs: upgraded in place, once */
		e = sqlite3_exec(m->db, migrate_1_2, NULL, NULL, &err);
		if (e != SQLITE_OK) {
			rc = fail(m, e, "upgrade catalog to version 2");
			sqlite3_free(err);
		} else
			cf_log(CF_LOG_INFO, "catalog %s: upgraded from schema "
			       "version 1 to 2 (times, table access)", path);
		goto out;
	}
	if (ver != 0 || objects != 0) {
		cf_log(CF_LOG_ERROR, "catalog %s: not a cellfs catalog of "
		       "schema version %d (user_version %d, %d objects)", path,
		       SCHEMA_VERSION, ver, objects);
		rc = CF_ECORRUPT;
		goto out;
	}
	e = sqlite3_exec(m->db, schema, NULL, NULL, &err);
	if (e != SQLITE_OK) {
		rc = fail(m, e, "create schema");
		sqlite3_free(err);
	}
out:
	if (!sqlite3_get_autocommit(m->db)) {
		if (rc == CF_OK)
			rc = once(m, "COMMIT", NULL, 0, NULL);
		if (rc && !sqlite3_get_autocommit(m->db))
			once(m, "ROLLBACK", NULL, 0, NULL);
	}
	return rc;
}

int meta_open(const char *path, struct meta **out)
{
	struct meta *m;
	char mode[16] = "";
	int e, rc;

	*out = NULL;
	m = calloc(1, sizeof *m);
	if (!m)
		return CF_ENOMEM;
	/* never created world-readable (docs/catalog.md); when this
	 * fails, SQLite's open below fails with its reason */
	(void)env_create_private(path);
	e = sqlite3_open_v2(path, &m->db, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (e != SQLITE_OK) {
		rc = m->db ? fail(m, e, path) : CF_ENOMEM;
		goto fail;
	}
	sqlite3_extended_result_codes(m->db, 1);
	sqlite3_busy_timeout(m->db, BUSY_TIMEOUT_MS);
	/* no writes to sqlite_schema through SQL, even by mistake */
	sqlite3_db_config(m->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);

	/* the first statement reads the file header: a file that is not a
	 * database fails here with SQLITE_NOTADB */
	rc = once(m, "PRAGMA journal_mode = WAL", mode, sizeof mode, NULL);
	if (rc)
		goto fail;
	if (strcmp(mode, "wal") != 0)
		cf_log(CF_LOG_WARN, "catalog %s: journal mode %s, not wal",
		       path, mode);
	/* every commit is a flush, compaction, split or schema change: rare
	 * enough to sync each, and a commit must survive power loss because
	 * the WAL is truncated after it */
	rc = once(m, "PRAGMA synchronous = FULL", NULL, 0, NULL);
	/* deletes cascade in code, inside the caller's transaction */
	if (!rc)
		rc = once(m, "PRAGMA foreign_keys = OFF", NULL, 0, NULL);
	if (!rc)
		rc = setup(m, path);
	if (rc)
		goto fail;
	for (int i = 0; i < S_COUNT; i++) {
		e = sqlite3_prepare_v3(m->db, sql[i], -1,
				       SQLITE_PREPARE_PERSISTENT, &m->st[i],
				       NULL);
		if (e != SQLITE_OK) {
			rc = fail(m, e, sql[i]);
			/* version 1 with a table or column missing */
			if ((e & 0xff) == SQLITE_ERROR)
				rc = CF_ECORRUPT;
			goto fail;
		}
	}
	*out = m;
	return CF_OK;
fail:
	meta_close(m);
	return rc;
}

void meta_close(struct meta *m)
{
	if (!m)
		return;
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(m->st[i]);
	/* an open transaction is rolled back; the last connection
	 * checkpoints the WAL into the database file */
	if (m->db && sqlite3_close(m->db) != SQLITE_OK)
		cf_log(CF_LOG_ERROR, "catalog: close: %s",
		       sqlite3_errmsg(m->db));
	free(m);
}

int meta_check(struct meta *m)
{
	sqlite3_stmt *s = m->st[S_CHECK];
	int e, rc = CF_OK;

	while ((e = sqlite3_step(s)) == SQLITE_ROW) {
		const char *r = col_text(s, 0);
		if (!r || strcmp(r, "ok") != 0) {
			cf_log(CF_LOG_ERROR, "catalog: integrity check: %s",
			       r ? r : "(no text)");
			rc = CF_ECORRUPT;
		}
	}
	if (e != SQLITE_DONE) {
		int frc = fail(m, e, "integrity check");
		if (rc == CF_OK)
			rc = frc;
	}
	done(s);
	return rc;
}

int meta_begin(struct meta *m)
{
	int rc;

	if (m->depth == 0)
		rc = run(m, S_BEGIN, "begin");
	else
		rc = run(m, S_SAVEPOINT, "savepoint");
	if (rc == CF_OK)
		m->depth++;
	return rc;
}

int meta_commit(struct meta *m)
{
	int rc;

	if (m->depth == 0) {
		cf_log(CF_LOG_ERROR, "catalog: commit outside a transaction");
		return CF_EINVAL;
	}
	if (m->depth > 1) {
		rc = run(m, S_RELEASE, "release savepoint");
		if (rc && !txn_lost(m)) {
			run(m, S_ROLLBACK_TO, "rollback to savepoint");
			run(m, S_RELEASE, "release savepoint");
		}
		m->depth--;
		return rc;
	}
	rc = run(m, S_COMMIT, "commit");
	if (rc && !sqlite3_get_autocommit(m->db))
		run(m, S_ROLLBACK, "rollback");
	m->depth = 0;
	return rc;
}

void meta_rollback(struct meta *m)
{
	if (m->depth == 0)
		return;
	if (m->depth > 1) {
		if (!txn_lost(m)) {
			run(m, S_ROLLBACK_TO, "rollback to savepoint");
			run(m, S_RELEASE, "release savepoint");
		}
		m->depth--;
		return;
	}
	if (!sqlite3_get_autocommit(m->db))
		run(m, S_ROLLBACK, "rollback");
	m->depth = 0;
}

int meta_get_u64(struct meta *m, const char *key, uint64_t *v)
{
	sqlite3_stmt *s = m->st[S_KV_GET];
	int e, rc = CF_OK;

	bind_text(s, 1, key);
	e = sqlite3_step(s);
	if (e == SQLITE_ROW)
		*v = (uint64_t)sqlite3_column_int64(s, 0);
	else if (e == SQLITE_DONE)
		rc = CF_ENOTFOUND;
	else
		rc = fail(m, e, "get counter");
	done(s);
	return rc;
}

int meta_set_u64(struct meta *m, const char *key, uint64_t v)
{
	sqlite3_stmt *s = m->st[S_KV_SET];

	bind_text(s, 1, key);
	/* stored as the int64 of the same bits; read back the same way */
	sqlite3_bind_int64(s, 2, (sqlite3_int64)v);
	return run(m, S_KV_SET, "set counter");
}

int meta_table_add(struct meta *m, const char *name, int64_t created_ms,
		   int64_t *id)
{
	sqlite3_stmt *s = m->st[S_TABLE_ADD];
	int rc;

	bind_text(s, 1, name);
	sqlite3_bind_int64(s, 2, created_ms);
	rc = run(m, S_TABLE_ADD, "add table");
	if (rc == CF_OK)
		*id = sqlite3_last_insert_rowid(m->db);
	return rc;
}

int meta_table_put(struct meta *m, int64_t id, const char *name)
{
	sqlite3_stmt *s = m->st[S_TABLE_PUT];

	sqlite3_bind_int64(s, 1, id);
	bind_text(s, 2, name);
	return run(m, S_TABLE_PUT, "put table");
}

int meta_table_set_schema_ms(struct meta *m, int64_t id, int64_t ms)
{
	sqlite3_stmt *s = m->st[S_TABLE_SCHEMA_MS];
	int rc;

	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, ms);
	rc = run(m, S_TABLE_SCHEMA_MS, "set schema time");
	if (rc == CF_OK && sqlite3_changes(m->db) == 0)
		rc = CF_ENOTFOUND;
	return rc;
}

int meta_table_del(struct meta *m, int64_t id)
{
	/* files first: they find the table through its regions */
	static const int steps[] = { S_FILE_DEL_TABLE, S_REG_DEL_TABLE,
				     S_FAM_DEL_TABLE, S_ACC_DEL_TABLE,
				     S_TABLE_DEL };
	int rc;

	rc = meta_begin(m);
	if (rc)
		return rc;
	for (size_t i = 0; i < sizeof steps / sizeof *steps && !rc; i++) {
		sqlite3_bind_int64(m->st[steps[i]], 1, id);
		rc = run(m, steps[i], "drop table");
	}
	if (rc) {
		meta_rollback(m);
		return rc;
	}
	return meta_commit(m);
}

struct table_cb {
	int (*fn)(const struct meta_table *t, void *arg);
	void *arg;
};

static int table_row(sqlite3_stmt *s, void *cb)
{
	struct table_cb *c = cb;
	struct meta_table t;

	t.id = sqlite3_column_int64(s, 0);
	t.name = col_text(s, 1);
	t.created_ms = sqlite3_column_int64(s, 2);
	t.schema_ms = sqlite3_column_int64(s, 3);
	if (!t.name)
		return CF_ENOMEM;
	return c->fn(&t, c->arg);
}

int meta_table_list(struct meta *m,
		    int (*fn)(const struct meta_table *t, void *arg),
		    void *arg)
{
	struct table_cb c = { fn, arg };
	int rc = list_start(m, S_TABLE_LIST, "list tables");

	if (rc)
		return rc;
	return list_run(m, S_TABLE_LIST, "list tables", table_row, &c);
}

int meta_family_put(struct meta *m, int64_t table_id, const char *name,
		    const char *settings)
{
	sqlite3_stmt *s = m->st[S_FAM_PUT];

	sqlite3_bind_int64(s, 1, table_id);
	bind_text(s, 2, name);
	bind_text(s, 3, settings);
	return run(m, S_FAM_PUT, "put family");
}

int meta_family_del(struct meta *m, int64_t table_id, const char *name)
{
	sqlite3_stmt *s = m->st[S_FAM_DEL];

	sqlite3_bind_int64(s, 1, table_id);
	bind_text(s, 2, name);
	return run(m, S_FAM_DEL, "drop family");
}

struct family_cb {
	int (*fn)(const char *name, const char *settings, void *arg);
	void *arg;
};

static int family_row(sqlite3_stmt *s, void *cb)
{
	struct family_cb *c = cb;
	const char *name = col_text(s, 0), *settings = col_text(s, 1);

	if (!name || !settings)
		return CF_ENOMEM;
	return c->fn(name, settings, c->arg);
}

int meta_family_list(struct meta *m, int64_t table_id,
		     int (*fn)(const char *name, const char *settings,
			       void *arg),
		     void *arg)
{
	struct family_cb c = { fn, arg };
	int rc = list_start(m, S_FAM_LIST, "list families");

	if (rc)
		return rc;
	sqlite3_bind_int64(m->st[S_FAM_LIST], 1, table_id);
	return list_run(m, S_FAM_LIST, "list families", family_row, &c);
}

int meta_region_put(struct meta *m, const struct meta_region *r)
{
	sqlite3_stmt *s = m->st[S_REG_PUT];

	sqlite3_bind_int64(s, 1, r->id);
	sqlite3_bind_int64(s, 2, r->table_id);
	/* never NULL: the empty blob is the table's start or end */
	bind_blob(s, 3, r->startlen ? r->start : "", r->startlen);
	bind_blob(s, 4, r->endlen ? r->end : "", r->endlen);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)r->flushed_seq);
	sqlite3_bind_int64(s, 6, r->created_ms);
	return run(m, S_REG_PUT, "put region");
}

int meta_region_del(struct meta *m, int64_t id)
{
	int rc;

	rc = meta_begin(m);
	if (rc)
		return rc;
	sqlite3_bind_int64(m->st[S_FILE_DEL_REGION], 1, id);
	rc = run(m, S_FILE_DEL_REGION, "drop region files");
	if (!rc) {
		sqlite3_bind_int64(m->st[S_REG_DEL], 1, id);
		rc = run(m, S_REG_DEL, "drop region");
	}
	if (rc) {
		meta_rollback(m);
		return rc;
	}
	return meta_commit(m);
}

int meta_region_set_flushed(struct meta *m, int64_t id, uint64_t seq)
{
	sqlite3_stmt *s = m->st[S_REG_FLUSHED];
	int rc;

	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)seq);
	rc = run(m, S_REG_FLUSHED, "set flushed");
	if (rc == CF_OK && sqlite3_changes(m->db) == 0)
		rc = CF_ENOTFOUND;
	return rc;
}

struct region_cb {
	int (*fn)(const struct meta_region *r, void *arg);
	void *arg;
};

static int region_row(sqlite3_stmt *s, void *cb)
{
	struct region_cb *c = cb;
	struct meta_region r;
	int nomem = 0;

	r.id = sqlite3_column_int64(s, 0);
	r.table_id = sqlite3_column_int64(s, 1);
	r.start = col_blob(s, 2, &r.startlen, &nomem);
	r.end = col_blob(s, 3, &r.endlen, &nomem);
	r.flushed_seq = (uint64_t)sqlite3_column_int64(s, 4);
	r.created_ms = sqlite3_column_int64(s, 5);
	if (nomem)
		return CF_ENOMEM;
	/* the schema forbids NULL keys; an old or hand-edited row still
	 * reads as the table's start or end */
	if (!r.start)
		r.start = "";
	if (!r.end)
		r.end = "";
	return c->fn(&r, c->arg);
}

int meta_region_list(struct meta *m, int64_t table_id,
		     int (*fn)(const struct meta_region *r, void *arg),
		     void *arg)
{
	struct region_cb c = { fn, arg };
	int rc = list_start(m, S_REG_LIST, "list regions");

	if (rc)
		return rc;
	sqlite3_bind_int64(m->st[S_REG_LIST], 1, table_id);
	return list_run(m, S_REG_LIST, "list regions", region_row, &c);
}

int meta_file_add(struct meta *m, const struct meta_file *f)
{
	sqlite3_stmt *s = m->st[S_FILE_ADD];

	sqlite3_bind_int64(s, 1, (sqlite3_int64)f->id);
	sqlite3_bind_int64(s, 2, f->region_id);
	bind_text(s, 3, f->family);
	sqlite3_bind_int64(s, 4, f->home_region);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)f->size);
	sqlite3_bind_int64(s, 6, (sqlite3_int64)f->max_seq);
	bind_blob(s, 7, f->lo, f->lolen);
	bind_blob(s, 8, f->hi, f->hilen);
	return run(m, S_FILE_ADD, "add file");
}

int meta_file_del(struct meta *m, int64_t region_id, uint64_t id)
{
	sqlite3_stmt *s = m->st[S_FILE_DEL];
	int rc;

	sqlite3_bind_int64(s, 1, region_id);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)id);
	rc = run(m, S_FILE_DEL, "drop file");
	if (rc == CF_OK && sqlite3_changes(m->db) == 0)
		rc = CF_ENOTFOUND;
	return rc;
}

struct file_cb {
	int (*fn)(const struct meta_file *f, void *arg);
	void *arg;
};

static int file_row(sqlite3_stmt *s, void *cb)
{
	struct file_cb *c = cb;
	struct meta_file f;
	int nomem = 0;

	f.id = (uint64_t)sqlite3_column_int64(s, 0);
	f.region_id = sqlite3_column_int64(s, 1);
	f.family = col_text(s, 2);
	f.home_region = sqlite3_column_int64(s, 3);
	f.size = (uint64_t)sqlite3_column_int64(s, 4);
	f.max_seq = (uint64_t)sqlite3_column_int64(s, 5);
	f.lo = col_blob(s, 6, &f.lolen, &nomem);
	f.hi = col_blob(s, 7, &f.hilen, &nomem);
	if (nomem || !f.family)
		return CF_ENOMEM;
	return c->fn(&f, c->arg);
}

int meta_file_list(struct meta *m, int64_t region_id,
		   int (*fn)(const struct meta_file *f, void *arg),
		   void *arg)
{
	struct file_cb c = { fn, arg };
	int rc = list_start(m, S_FILE_LIST, "list files");

	if (rc)
		return rc;
	sqlite3_bind_int64(m->st[S_FILE_LIST], 1, region_id);
	return list_run(m, S_FILE_LIST, "list files", file_row, &c);
}

int meta_file_refs(struct meta *m, uint64_t id, int64_t *count)
{
	sqlite3_stmt *s = m->st[S_FILE_REFS];
	int e, rc = CF_OK;

	sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
	e = sqlite3_step(s);
	if (e == SQLITE_ROW)
		*count = sqlite3_column_int64(s, 0);
	else if (e == SQLITE_DONE)	/* count(*) always has a row */
		*count = 0;
	else
		rc = fail(m, e, "count file references");
	done(s);
	return rc;
}

int meta_access_put(struct meta *m, const char *name,
		    const struct meta_access *a)
{
	sqlite3_stmt *s = m->st[S_ACC_PUT];

	bind_text(s, 1, name);
	sqlite3_bind_int64(s, 2, a->mode);
	sqlite3_bind_int64(s, 3, a->uid);
	sqlite3_bind_int64(s, 4, a->gid);
	return run(m, S_ACC_PUT, "put access");
}

int meta_access_del(struct meta *m, const char *name)
{
	bind_text(m->st[S_ACC_DEL], 1, name);
	return run(m, S_ACC_DEL, "delete access");
}

struct access_cb {
	int (*fn)(const char *name, const struct meta_access *a, void *arg);
	void *arg;
};

static int access_row(sqlite3_stmt *s, void *cb)
{
	struct access_cb *c = cb;
	struct meta_access a;
	const char *name = col_text(s, 0);

	if (!name)
		return CF_ENOMEM;
	a.mode = (uint32_t)sqlite3_column_int64(s, 1);
	a.uid = (uint32_t)sqlite3_column_int64(s, 2);
	a.gid = (uint32_t)sqlite3_column_int64(s, 3);
	return c->fn(name, &a, c->arg);
}

int meta_access_list(struct meta *m,
		     int (*fn)(const char *name, const struct meta_access *a,
			       void *arg),
		     void *arg)
{
	struct access_cb c = { fn, arg };
	int rc = list_start(m, S_ACC_LIST, "list access");

	if (rc)
		return rc;
	return list_run(m, S_ACC_LIST, "list access", access_row, &c);
}
