/* fuzz-batch: what a write(2) to MNT/T/.batch carries (fs/control.c):
 * put and delete lines, escaped tokens, columns and timestamps, applied
 * to a table all or nothing.  The db is made afresh every 1024 inputs. */
#include <stdio.h>
#include <stdlib.h>

#include "engine/cellfs.h"
#include "fs/fs.h"
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

	snprintf(path, sizeof path, "%s/batch", fuzz_dir());
	env_remove_tree(path);
	cf_options_default(&o);
	o.background = 0;
	o.sync_mode = CF_SYNC_NONE;
	cf_family_default(&f[0], "cf");
	cf_family_default(&f[1], "g");
	if (cf_db_open(path, &o, &db) || cf_table_create(db, "t", f, 2))
		abort();
	if (!registered++)
		atexit(db_close);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why;
	struct buf out = BUF_INIT;

	if (!db) {
		db_make();
	} else if (++runs % 1024 == 0) {
		cf_db_close(db);
		db = NULL;
		db_make();
	}
	fs_control_write(db, FS_BATCH, "t", (const char *)data, size, &why);
	fs_control_text(db, FS_BATCH, "t", &out);
	buf_release(&out);
	return 0;
}
