/* fuzz-walrec: the payload of a WAL record (the engine's batch
 * encoding), replayed into a db as recovery does (wal_record_replay),
 * and read back.  The db is made afresh every 512 inputs, its close
 * flushing what was replayed. */
#include <stdio.h>
#include <stdlib.h>

#include "engine/internal.h"
#include "tests/fuzz/fuzz.h"
#include "util/env.h"

static cf_db *db;
static unsigned runs;
static int registered;
static char path[512];

static void db_close(void)
{
	if (db)
		cf_db_close(db);
	db = NULL;
	env_remove_tree(path);
}

static void db_make(void)
{
	struct cf_options o;
	struct cf_family f[2];

	snprintf(path, sizeof path, "%s/walrec", fuzz_dir());
	env_remove_tree(path);
	cf_options_default(&o);
	o.background = 0;
	o.sync_mode = CF_SYNC_NONE;
	cf_family_default(&f[0], "f");
	cf_family_default(&f[1], "g");
	f[1].versions = 3;
	if (cf_db_open(path, &o, &db) || cf_table_create(db, "t", f, 2))
		abort();
	if (!registered++)
		atexit(db_close);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t max_seq = 0;
	cf_table *t;
	cf_row *r = NULL;

	if (!db) {
		db_make();
	} else if (++runs % 512 == 0) {
		cf_db_close(db);
		db = NULL;
		db_make();
	}
	wal_record_replay(db, data, size, &max_seq);
	if (cf_table_open(db, "t", &t) == CF_OK) {
		cf_table_get(t, data, size < 8 ? size : 8, NULL, &r);
		cf_row_free(r);
		cf_table_close(t);
	}
	return 0;
}
