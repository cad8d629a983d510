/* fuzz-catalog: catalog rows as the engine reads them back (meta/meta.c,
 * engine/db.c).  The input is SQL run against a real catalog (a table
 * with two families and two regions); only INSERT, UPDATE, DELETE and
 * reads are allowed, so any value can land in any column.  Then the
 * catalog is checked and listed, and the data directory opened. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cellfs.h"
#include "meta/meta.h"
#include "tests/fuzz/fuzz.h"
#include "util/env.h"

static char *tmpl;		/* the template catalog's bytes */
static size_t tmpl_len;
static char dir[512], cat[600];

static void make_template(void)
{
	struct cf_options o;
	struct cf_family f[2];
	cf_db *db;
	cf_table *t;

	snprintf(dir, sizeof dir, "%s/catalog", fuzz_dir());
	snprintf(cat, sizeof cat, "%s/catalog.db", dir);
	cf_options_default(&o);
	o.background = 0;
	cf_family_default(&f[0], "f");
	cf_family_default(&f[1], "g");
	if (cf_db_open(dir, &o, &db) || cf_table_create(db, "t", f, 2) ||
	    cf_table_open(db, "t", &t) || cf_table_split(t, "m", 1))
		abort();
	cf_table_close(t);
	cf_db_close(db);
	if (env_read_file(cat, &tmpl, &tmpl_len))
		abort();
}

static int only_rows(void *arg, int action, const char *a, const char *b,
		     const char *c, const char *d)
{
	switch (action) {
	case SQLITE_INSERT: case SQLITE_UPDATE: case SQLITE_DELETE:
	case SQLITE_READ: case SQLITE_SELECT: case SQLITE_FUNCTION:
		return SQLITE_OK;
	default:
		return SQLITE_DENY;
	}
}

static int on_file(const struct meta_file *f, void *arg) { return 0; }

static int on_region(const struct meta_region *r, void *arg)
{
	return meta_file_list(arg, r->id, on_file, NULL);
}

static int on_family(const char *name, const char *settings, void *arg)
{
	return 0;
}

static int on_table(const struct meta_table *t, void *arg)
{
	meta_family_list(arg, t->id, on_family, NULL);
	return meta_region_list(arg, t->id, on_region, arg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *sql;
	sqlite3 *s;
	struct meta *m;
	struct cf_options o;
	cf_db *db;

	if (size > 4096)
		return 0;
	if (!tmpl)
		make_template();
	env_remove_tree(dir);
	env_mkdir(dir, 0700);
	if (fuzz_write(cat, tmpl, tmpl_len))
		return 0;
	sql = malloc(size + 1);
	if (!sql)
		return 0;
	memcpy(sql, data, size);
	sql[size] = 0;
	if (sqlite3_open(cat, &s) == SQLITE_OK) {
		sqlite3_set_authorizer(s, only_rows, NULL);
		sqlite3_exec(s, sql, NULL, NULL, NULL);
	}
	sqlite3_close(s);
	free(sql);
	if (meta_open(cat, &m) == CF_OK) {
		if (meta_check(m) == CF_OK)
			meta_table_list(m, on_table, m);
		meta_close(m);
	}
	cf_options_default(&o);
	o.background = 0;
	if (cf_db_open(dir, &o, &db) == CF_OK) {
		cf_table *t;
		if (cf_table_open(db, "t", &t) == CF_OK) {
			cf_row *r = NULL;
			cf_table_get(t, "a", 1, NULL, &r);
			cf_row_free(r);
			cf_table_close(t);
		}
		cf_db_close(db);
	}
	return 0;
}
