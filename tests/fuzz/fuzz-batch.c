/* fuzz-batch: what a write(2) to MNT/T/.batch carries (fs/control.c):
 * put and delete lines, escaped tokens, columns and timestamps, applied
 * to a table all or nothing.  The db is made afresh every 1024 inputs. */
#include <stdio.h>
#include <stdlib.h>

#include "engine/cellfs.h"
#include "fs/control.h"
#include "tests/fuzz/fuzz.h"
#include "util/env.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why;
	struct buf out = BUF_INIT;
	struct cf_family f[2];
	int fresh;
	cf_db *db = fuzz_db("batch", 1024, &fresh);

	if (fresh) {
		cf_family_default(&f[0], "cf");
		cf_family_default(&f[1], "g");
		if (cf_table_create(db, "t", f, 2))
			abort();
	}
	fs_control_write(db, FS_BATCH, "t", (const char *)data, size, &why);
	fs_control_text(db, FS_BATCH, "t", &out);
	buf_release(&out);
	return 0;
}
