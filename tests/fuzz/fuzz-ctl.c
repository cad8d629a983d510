/* fuzz-ctl: control words written to MNT/.ctl and MNT/T/.ctl
 * (fs/control.c).  The first byte picks the file; a dropped table is
 * made again.  The db is made afresh every 256 inputs. */
#include <stdio.h>
#include <stdlib.h>

#include "engine/cellfs.h"
#include "fs/control.h"
#include "tests/fuzz/fuzz.h"
#include "util/env.h"

static void table_make(cf_db *db)
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why;
	struct buf out = BUF_INIT;
	enum fs_ctl which;
	int fresh;
	cf_db *db;

	if (!size)
		return 0;
	db = fuzz_db("ctl", 256, &fresh);
	if (fresh)
		table_make(db);
	which = data[0] & 1 ? FS_ROOT_CTL : FS_TCTL;
	fs_control_write(db, which, "t", (const char *)data + 1, size - 1,
			 &why);
	table_make(db);	/* again if dropped; EEXIST otherwise */
	fs_control_text(db, FS_REGIONS, "t", &out);
	buf_release(&out);
	return 0;
}
