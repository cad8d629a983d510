/* fuzz-ctl: control words written to MNT/.ctl and MNT/T/.ctl
 * (fs/control.c).  The first byte picks the file; a dropped table is
 * made again.  The db is made afresh every 256 inputs. */
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

static void table_make(void)
{
	struct cf_family f;
	cf_table *t;

	cf_family_default(&f, "cf");
	if (cf_table_create(db, "t", &f, 1) == CF_OK &&
	    cf_table_open(db, "t", &t) == CF_OK) {
		cf_batch *b = NULL;
		if (cf_batch_new(&b) == CF_OK) {
			for (int i = 0; i < 20; i++) {
				char k[16];
				int n = snprintf(k, sizeof k, "r%02d", i);
				cf_batch_put(b, k, (size_t)n, "cf", 2, "q", 1,
					     CF_TS_NOW, k, (size_t)n);
			}
			cf_table_apply(t, b);
			cf_batch_free(b);
		}
		cf_table_close(t);
	}
}

static void db_make(void)
{
	struct cf_options o;

	snprintf(path, sizeof path, "%s/ctl", fuzz_dir());
	env_remove_tree(path);
	cf_options_default(&o);
	o.background = 0;
	o.sync_mode = CF_SYNC_NONE;
	if (cf_db_open(path, &o, &db))
		abort();
	table_make();
	if (!registered++)
		atexit(db_close);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why;
	struct buf out = BUF_INIT;
	enum fs_ctl which;

	if (!size)
		return 0;
	if (!db) {
		db_make();
	} else if (++runs % 256 == 0) {
		cf_db_close(db);
		db = NULL;
		db_make();
	}
	which = data[0] & 1 ? FS_ROOT_CTL : FS_TCTL;
	fs_control_write(db, which, "t", (const char *)data + 1, size - 1,
			 &why);
	table_make();	/* again if dropped; EEXIST otherwise */
	fs_control_text(db, FS_REGIONS, "t", &out);
	buf_release(&out);
	return 0;
}
