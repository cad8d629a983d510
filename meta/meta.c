/*
 * meta.c: the catalog in SQLite.  Schema in docs/catalog.md.
 *
 * Statements are prepared once at open and reused.  Transactions nest by
 * depth: only the outermost meta_begin/meta_commit talk to SQLite, so a
 * function that needs atomicity on its own (meta_table_del) can run inside
 * a caller's transaction.  Callers serialize access (one thread at a time).
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "meta/meta.h"
#include "util/err.h"
#include "util/log.h"

#define SCHEMA_VERSION 1

enum {
	S_BEGIN, S_COMMIT, S_ROLLBACK,
	S_KV_GET, S_KV_SET,
	S_TABLE_ADD, S_TABLE_PUT, S_TABLE_DEL, S_TABLE_LIST,
	S_FAM_PUT, S_FAM_DEL, S_FAM_DEL_TABLE, S_FAM_LIST,
	S_REG_PUT, S_REG_DEL, S_REG_DEL_TABLE, S_REG_FLUSHED, S_REG_LIST,
	S_FILE_ADD, S_FILE_DEL, S_FILE_DEL_REGION, S_FILE_DEL_TABLE,
	S_FILE_LIST, S_FILE_REFS,
	S_COUNT
};

static const char *const sql[S_COUNT] = {
	[S_BEGIN] = "BEGIN IMMEDIATE",
	[S_COMMIT] = "COMMIT",
	[S_ROLLBACK] = "ROLLBACK",
	[S_KV_GET] = "SELECT value FROM kv WHERE key = ?1",
	[S_KV_SET] = "INSERT OR REPLACE INTO kv(key, value) VALUES (?1, ?2)",
	[S_TABLE_ADD] = "INSERT INTO tables(name) VALUES (?1)",
	[S_TABLE_PUT] = "INSERT INTO tables(id, name) VALUES (?1, ?2)",
	[S_TABLE_DEL] = "DELETE FROM tables WHERE id = ?1",
	[S_TABLE_LIST] = "SELECT id, name FROM tables ORDER BY name",
	[S_FAM_PUT] = "INSERT OR REPLACE INTO families(table_id, name, "
		      "settings) VALUES (?1, ?2, ?3)",
	[S_FAM_DEL] = "DELETE FROM families WHERE table_id = ?1 AND name = ?2",
	[S_FAM_DEL_TABLE] = "DELETE FROM families WHERE table_id = ?1",
	[S_FAM_LIST] = "SELECT name, settings FROM families WHERE "
		       "table_id = ?1 ORDER BY name",
	[S_REG_PUT] = "INSERT OR REPLACE INTO regions(id, table_id, start, "
		      "end, flushed_seq) VALUES (?1, ?2, ?3, ?4, ?5)",
	[S_REG_DEL] = "DELETE FROM regions WHERE id = ?1",
	[S_REG_DEL_TABLE] = "DELETE FROM regions WHERE table_id = ?1",
	[S_REG_FLUSHED] = "UPDATE regions SET flushed_seq = ?2 WHERE id = ?1",
	[S_REG_LIST] = "SELECT id, table_id, start, end, flushed_seq FROM "
		       "regions WHERE table_id = ?1 ORDER BY start",
	[S_FILE_ADD] = "INSERT INTO files(id, region_id, family, home_region, "
		       "size, max_seq, lo, hi) VALUES (?1, ?2, ?3, ?4, ?5, "
		       "?6, ?7, ?8)",
	[S_FILE_DEL] = "DELETE FROM files WHERE region_id = ?1 AND id = ?2",
	[S_FILE_DEL_REGION] = "DELETE FROM files WHERE region_id = ?1",
	[S_FILE_DEL_TABLE] = "DELETE FROM files WHERE region_id IN "
			     "(SELECT id FROM regions WHERE table_id = ?1)",
	[S_FILE_LIST] = "SELECT id, region_id, family, home_region, size, "
			"max_seq, lo, hi FROM files WHERE region_id = ?1 "
			"ORDER BY id",
	[S_FILE_REFS] = "SELECT count(*) FROM files WHERE id = ?1",
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS tables("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" name TEXT NOT NULL UNIQUE);"
	"CREATE TABLE IF NOT EXISTS families("
	" table_id INTEGER NOT NULL, name TEXT NOT NULL,"
	" settings TEXT NOT NULL, PRIMARY KEY(table_id, name));"
	"CREATE TABLE IF NOT EXISTS regions("
	" id INTEGER PRIMARY KEY, table_id INTEGER NOT NULL,"
	" start BLOB NOT NULL, end BLOB NOT NULL,"
	" flushed_seq INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX IF NOT EXISTS regions_by_table ON regions(table_id, start);"
	"CREATE TABLE IF NOT EXISTS files("
	" id INTEGER NOT NULL, region_id INTEGER NOT NULL,"
	" family TEXT NOT NULL, home_region INTEGER NOT NULL,"
	" size INTEGER NOT NULL, max_seq INTEGER NOT NULL,"
	" lo BLOB, hi BLOB, PRIMARY KEY(region_id, id));"
	"CREATE INDEX IF NOT EXISTS files_by_id ON files(id);"
	"CREATE TABLE IF NOT EXISTS kv(key TEXT PRIMARY KEY, value INTEGER);";

struct meta {
	sqlite3 *db;
	sqlite3_stmt *st[S_COUNT];
	int depth;		/* transaction nesting */
	int failed;		/* an inner step failed: roll back at the end */
};

static int map_err(struct meta *m, int src, const char *what)
{
	int rc;

	switch (src & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return CF_OK;
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
	case SQLITE_CONSTRAINT:
		rc = CF_EEXIST;
		break;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		rc = CF_EBUSY;
		break;
	default:
		rc = CF_EIO;
	}
	if (rc != CF_EEXIST)
		cf_log(CF_LOG_ERROR, "catalog: %s: %s", what,
		       m && m->db ? sqlite3_errmsg(m->db) : sqlite3_errstr(src));
	return rc;
}

/* Runs a prepared statement that returns no rows; resets it. */
static int run(struct meta *m, sqlite3_stmt *s, const char *what)
{
	int e = sqlite3_step(s);
	int rc = map_err(m, e == SQLITE_ROW ? SQLITE_DONE : e, what);

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}

int meta_open(const char *path, struct meta **out)
{
	struct meta *m = calloc(1, sizeof *m);
	int e, rc = CF_OK, ver = -1;
	sqlite3_stmt *q = NULL;

	*out = NULL;
	if (!m)
		return CF_ENOMEM;
	e = sqlite3_open_v2(path, &m->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL);
	if (e != SQLITE_OK) {
		rc = map_err(m, e, "open");
		goto fail;
	}
	sqlite3_busy_timeout(m->db, 5000);
	e = sqlite3_exec(m->db, "PRAGMA journal_mode=WAL;"
			 "PRAGMA synchronous=FULL;", NULL, NULL, NULL);
	if (e == SQLITE_OK)
		e = sqlite3_prepare_v2(m->db, "PRAGMA user_version", -1, &q,
				       NULL);
	if (e == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
		ver = sqlite3_column_int(q, 0);
	sqlite3_finalize(q);
	if (e != SQLITE_OK) {
		rc = map_err(m, e, "open");
		goto fail;
	}
	if (ver > SCHEMA_VERSION) {
		cf_log(CF_LOG_ERROR, "catalog %s: schema version %d is newer "
		       "than this cellfs (%d)", path, ver, SCHEMA_VERSION);
		rc = CF_ECORRUPT;
		goto fail;
	}
	e = sqlite3_exec(m->db, schema, NULL, NULL, NULL);
	if (e == SQLITE_OK)
		e = sqlite3_exec(m->db, "PRAGMA user_version=1", NULL, NULL,
				 NULL);
	for (int i = 0; i < S_COUNT && e == SQLITE_OK; i++)
		e = sqlite3_prepare_v3(m->db, sql[i], -1,
				       SQLITE_PREPARE_PERSISTENT, &m->st[i],
				       NULL);
	if (e != SQLITE_OK) {
		rc = map_err(m, e, "schema");
		goto fail;
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
	sqlite3_close(m->db);
	free(m);
}

int meta_check(struct meta *m)
{
	sqlite3_stmt *q;
	int rc = CF_OK, e;

	e = sqlite3_prepare_v2(m->db, "PRAGMA integrity_check", -1, &q, NULL);
	if (e != SQLITE_OK)
		return map_err(m, e, "integrity check");
	while ((e = sqlite3_step(q)) == SQLITE_ROW) {
		const char *r = (const char *)sqlite3_column_text(q, 0);
		if (r && strcmp(r, "ok") != 0) {
			cf_log(CF_LOG_ERROR, "catalog: %s", r);
			rc = CF_ECORRUPT;
		}
	}
	if (e != SQLITE_DONE && rc == CF_OK)
		rc = map_err(m, e, "integrity check");
	sqlite3_finalize(q);
	return rc;
}

int meta_begin(struct meta *m)
{
	if (m->depth++ > 0)
		return CF_OK;
	m->failed = 0;
	return run(m, m->st[S_BEGIN], "begin");
}

int meta_commit(struct meta *m)
{
	if (m->depth == 0)
		return CF_EINVAL;
	if (--m->depth > 0)
		return CF_OK;
	if (m->failed) {
		run(m, m->st[S_ROLLBACK], "rollback");
		return CF_EIO;
	}
	{
		int rc = run(m, m->st[S_COMMIT], "commit");
		if (rc)
			run(m, m->st[S_ROLLBACK], "rollback");
		return rc;
	}
}

void meta_rollback(struct meta *m)
{
	if (m->depth == 0)
		return;
	if (--m->depth > 0) {
		m->failed = 1;	/* the outermost commit rolls back */
		return;
	}
	run(m, m->st[S_ROLLBACK], "rollback");
}

int meta_get_u64(struct meta *m, const char *key, uint64_t *v)
{
	sqlite3_stmt *s = m->st[S_KV_GET];
	int e, rc;

	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	e = sqlite3_step(s);
	if (e == SQLITE_ROW) {
		*v = (uint64_t)sqlite3_column_int64(s, 0);
		rc = CF_OK;
	} else {
		rc = e == SQLITE_DONE ? CF_ENOTFOUND : map_err(m, e, "kv get");
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}

int meta_set_u64(struct meta *m, const char *key, uint64_t v)
{
	sqlite3_stmt *s = m->st[S_KV_SET];

	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)v);
	return run(m, s, "kv set");
}

int meta_table_add(struct meta *m, const char *name, int64_t *id)
{
	sqlite3_stmt *s = m->st[S_TABLE_ADD];
	int rc;

	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	rc = run(m, s, "add table");
	if (rc == CF_OK)
		*id = sqlite3_last_insert_rowid(m->db);
	return rc;
}

int meta_table_put(struct meta *m, int64_t id, const char *name)
{
	sqlite3_stmt *s = m->st[S_TABLE_PUT];

	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	return run(m, s, "put table");
}

int meta_table_del(struct meta *m, int64_t id)
{
	int rc = meta_begin(m);
	const int order[] = { S_FILE_DEL_TABLE, S_REG_DEL_TABLE,
			      S_FAM_DEL_TABLE, S_TABLE_DEL };

	for (int i = 0; i < 4 && rc == CF_OK; i++) {
		sqlite3_bind_int64(m->st[order[i]], 1, id);
		rc = run(m, m->st[order[i]], "drop table");
	}
	if (rc == CF_OK)
		return meta_commit(m);
	meta_rollback(m);
	return rc;
}

int meta_table_list(struct meta *m,
		    int (*fn)(const struct meta_table *t, void *arg), void *arg)
{
	sqlite3_stmt *s = m->st[S_TABLE_LIST];
	struct meta_table *rows = NULL;
	size_t n = 0;
	int e, rc = CF_OK;

	/* collect first: callbacks may use the catalog themselves */
	while ((e = sqlite3_step(s)) == SQLITE_ROW) {
		struct meta_table *nr = realloc(rows, (n + 1) * sizeof *nr);
		if (!nr) {
			rc = CF_ENOMEM;
			break;
		}
		rows = nr;
		rows[n].id = sqlite3_column_int64(s, 0);
		rows[n].name = strdup((const char *)sqlite3_column_text(s, 1));
		if (!rows[n++].name) {
			rc = CF_ENOMEM;
			break;
		}
	}
	if (rc == CF_OK && e != SQLITE_DONE)
		rc = map_err(m, e, "list tables");
	sqlite3_reset(s);
	for (size_t i = 0; i < n && rc == CF_OK; i++)
		rc = fn(&rows[i], arg);
	for (size_t i = 0; i < n; i++)
		free((char *)rows[i].name);
	free(rows);
	return rc;
}

int meta_family_put(struct meta *m, int64_t table_id, const char *name,
		    const char *settings)
{
	sqlite3_stmt *s = m->st[S_FAM_PUT];

	sqlite3_bind_int64(s, 1, table_id);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, settings, -1, SQLITE_STATIC);
	return run(m, s, "put family");
}

int meta_family_del(struct meta *m, int64_t table_id, const char *name)
{
	sqlite3_stmt *s = m->st[S_FAM_DEL];

	sqlite3_bind_int64(s, 1, table_id);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	return run(m, s, "drop family");
}

int meta_family_list(struct meta *m, int64_t table_id,
		     int (*fn)(const char *name, const char *settings,
			       void *arg),
		     void *arg)
{
	sqlite3_stmt *s = m->st[S_FAM_LIST];
	int e, rc = CF_OK;

	sqlite3_bind_int64(s, 1, table_id);
	while (rc == CF_OK && (e = sqlite3_step(s)) == SQLITE_ROW)
		rc = fn((const char *)sqlite3_column_text(s, 0),
			(const char *)sqlite3_column_text(s, 1), arg);
	if (rc == CF_OK && e != SQLITE_DONE)
		rc = map_err(m, e, "list families");
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}

static void bind_blob(sqlite3_stmt *s, int i, const void *p, size_t n)
{
	/* a zero-length blob, never NULL, for an empty key */
	sqlite3_bind_blob64(s, i, n ? p : "", n, SQLITE_STATIC);
}

int meta_region_put(struct meta *m, const struct meta_region *r)
{
	sqlite3_stmt *s = m->st[S_REG_PUT];

	sqlite3_bind_int64(s, 1, r->id);
	sqlite3_bind_int64(s, 2, r->table_id);
	bind_blob(s, 3, r->start, r->startlen);
	bind_blob(s, 4, r->end, r->endlen);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)r->flushed_seq);
	return run(m, s, "put region");
}

int meta_region_del(struct meta *m, int64_t id)
{
	int rc = meta_begin(m);

	sqlite3_bind_int64(m->st[S_FILE_DEL_REGION], 1, id);
	if (rc == CF_OK)
		rc = run(m, m->st[S_FILE_DEL_REGION], "drop region files");
	sqlite3_bind_int64(m->st[S_REG_DEL], 1, id);
	if (rc == CF_OK)
		rc = run(m, m->st[S_REG_DEL], "drop region");
	else
		sqlite3_clear_bindings(m->st[S_REG_DEL]);
	if (rc == CF_OK)
		return meta_commit(m);
	meta_rollback(m);
	return rc;
}

int meta_region_set_flushed(struct meta *m, int64_t id, uint64_t seq)
{
	sqlite3_stmt *s = m->st[S_REG_FLUSHED];

	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)seq);
	return run(m, s, "set flushed");
}

int meta_region_list(struct meta *m, int64_t table_id,
		     int (*fn)(const struct meta_region *r, void *arg),
		     void *arg)
{
	sqlite3_stmt *s = m->st[S_REG_LIST];
	struct meta_region *rows = NULL;
	void **bufs = NULL;
	size_t n = 0;
	int e, rc = CF_OK;

	sqlite3_bind_int64(s, 1, table_id);
	while ((e = sqlite3_step(s)) == SQLITE_ROW) {
		struct meta_region *nr = realloc(rows, (n + 1) * sizeof *nr);
		void **nb = realloc(bufs, (n + 1) * sizeof *nb);
		size_t sl = (size_t)sqlite3_column_bytes(s, 2);
		size_t el = (size_t)sqlite3_column_bytes(s, 3);
		unsigned char *b;
		if (nr)
			rows = nr;
		if (nb)
			bufs = nb;
		if (!nr || !nb || !(b = malloc(sl + el + 1))) {
			rc = CF_ENOMEM;
			break;
		}
		bufs[n] = b;
		if (sl)
			memcpy(b, sqlite3_column_blob(s, 2), sl);
		if (el)
			memcpy(b + sl, sqlite3_column_blob(s, 3), el);
		rows[n].id = sqlite3_column_int64(s, 0);
		rows[n].table_id = sqlite3_column_int64(s, 1);
		rows[n].start = b;
		rows[n].startlen = sl;
		rows[n].end = b + sl;
		rows[n].endlen = el;
		rows[n].flushed_seq = (uint64_t)sqlite3_column_int64(s, 4);
		n++;
	}
	if (rc == CF_OK && e != SQLITE_DONE)
		rc = map_err(m, e, "list regions");
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	for (size_t i = 0; i < n && rc == CF_OK; i++)
		rc = fn(&rows[i], arg);
	for (size_t i = 0; i < n; i++)
		free(bufs[i]);
	free(bufs);
	free(rows);
	return rc;
}

int meta_file_add(struct meta *m, const struct meta_file *f)
{
	sqlite3_stmt *s = m->st[S_FILE_ADD];

	sqlite3_bind_int64(s, 1, (sqlite3_int64)f->id);
	sqlite3_bind_int64(s, 2, f->region_id);
	sqlite3_bind_text(s, 3, f->family, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, f->home_region);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)f->size);
	sqlite3_bind_int64(s, 6, (sqlite3_int64)f->max_seq);
	if (f->lo)
		bind_blob(s, 7, f->lo, f->lolen);
	if (f->hi)
		bind_blob(s, 8, f->hi, f->hilen);
	return run(m, s, "add file");
}

int meta_file_del(struct meta *m, int64_t region_id, uint64_t id)
{
	sqlite3_stmt *s = m->st[S_FILE_DEL];
	int rc;

	sqlite3_bind_int64(s, 1, region_id);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)id);
	rc = run(m, s, "drop file");
	if (rc == CF_OK && sqlite3_changes(m->db) == 0)
		rc = CF_ENOTFOUND;
	return rc;
}

int meta_file_list(struct meta *m, int64_t region_id,
		   int (*fn)(const struct meta_file *f, void *arg), void *arg)
{
	sqlite3_stmt *s = m->st[S_FILE_LIST];
	int e, rc = CF_OK;

	/* callbacks must not use the catalog (they get column memory) */
	sqlite3_bind_int64(s, 1, region_id);
	while (rc == CF_OK && (e = sqlite3_step(s)) == SQLITE_ROW) {
		struct meta_file f;
		f.id = (uint64_t)sqlite3_column_int64(s, 0);
		f.region_id = sqlite3_column_int64(s, 1);
		f.family = (const char *)sqlite3_column_text(s, 2);
		f.home_region = sqlite3_column_int64(s, 3);
		f.size = (uint64_t)sqlite3_column_int64(s, 4);
		f.max_seq = (uint64_t)sqlite3_column_int64(s, 5);
		f.lo = sqlite3_column_type(s, 6) == SQLITE_NULL ? NULL :
		       (sqlite3_column_blob(s, 6) ? sqlite3_column_blob(s, 6) :
			(const void *)"");
		f.lolen = (size_t)sqlite3_column_bytes(s, 6);
		f.hi = sqlite3_column_type(s, 7) == SQLITE_NULL ? NULL :
		       (sqlite3_column_blob(s, 7) ? sqlite3_column_blob(s, 7) :
			(const void *)"");
		f.hilen = (size_t)sqlite3_column_bytes(s, 7);
		rc = fn(&f, arg);
	}
	if (rc == CF_OK && e != SQLITE_DONE)
		rc = map_err(m, e, "list files");
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}

int meta_file_refs(struct meta *m, uint64_t id, int64_t *count)
{
	sqlite3_stmt *s = m->st[S_FILE_REFS];
	int e, rc;

	sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
	e = sqlite3_step(s);
	if (e == SQLITE_ROW) {
		*count = sqlite3_column_int64(s, 0);
		rc = CF_OK;
	} else {
		rc = map_err(m, e, "count file references");
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}
