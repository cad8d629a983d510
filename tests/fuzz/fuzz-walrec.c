/* fuzz-walrec: the payload of a WAL record (the engine's batch
 * encoding), replayed into a db as recovery does (wal_record_replay),
 * and read back.  The db is made afresh every 512 inputs, its close
 * flushing what was replayed. */
#include <stdio.h>
#include <stdlib.h>

#include "engine/internal.h"
#include "tests/fuzz/fuzz.h"
#include "util/env.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t max_seq = 0;
	cf_table *t;
	cf_row *r = NULL;
	struct cf_family f[2];
	int fresh;
	cf_db *db = fuzz_db("walrec", 512, &fresh);

	if (fresh) {
		cf_family_default(&f[0], "f");
		cf_family_default(&f[1], "g");
		f[1].versions = 3;
		if (cf_table_create(db, "t", f, 2))
			abort();
	}
	wal_record_replay(db, data, size, &max_seq);
	if (cf_table_open(db, "t", &t) == CF_OK) {
		cf_table_get(t, data, size < 8 ? size : 8, NULL, &r);
		cf_row_free(r);
		cf_table_close(t);
	}
	return 0;
}
