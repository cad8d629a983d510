/* fuzz-scan: the names of T/.scan/ (fs/scan.c), filter= and HBase's
 * filter language (fs/filter.c) with them: each input is a query, run
 * to its end over a small table of two families, several versions and
 * delete markers (raw shows them).  The db is made afresh every 1024
 * inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cellfs.h"
#include "fs/scan.h"
#include "tests/fuzz/fuzz.h"

static void table_make(cf_db *db)
{
	struct cf_family f[2];
	cf_table *t;
	cf_batch *b = NULL;

	cf_family_default(&f[0], "f");
	f[0].versions = 3;
	cf_family_default(&f[1], "g");
	if (cf_table_create(db, "t", f, 2) != CF_OK ||
	    cf_table_open(db, "t", &t) != CF_OK)
		return;
	if (cf_batch_new(&b) == CF_OK) {
		for (int i = 0; i < 40; i++) {
			char k[16], v[16];
			int n = snprintf(k, sizeof k, "r%02d", i),
			    m = snprintf(v, sizeof v, "v%d'%d", i % 7, i);
			cf_batch_put(b, k, (size_t)n, i % 3 ? "f" : "g", 1,
				     i % 5 ? "a" : "bc", i % 5 ? 1 : 2,
				     1000 + i % 4, v, (size_t)m);
			cf_batch_put(b, k, (size_t)n, "f", 1, "a", 1, 2000,
				     v + 1, (size_t)m - 1);
			if (i % 6 == 0)
				cf_batch_delete(b, CF_DEL_COLUMN, k, (size_t)n,
						"f", 1, "a", 1, 1500);
		}
		cf_table_apply(t, b);
		cf_batch_free(b);
	}
	cf_table_close(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct iovec iov[FS_SCAN_IOV];
	struct fs_scan *s;
	char q[256], why[256];
	uint64_t off = 0;
	size_t got;
	int fresh, niov;
	cf_db *db;

	/* a name: at most 255 bytes, no NUL, no '/' */
	if (!size || size > 255 || memchr(data, 0, size) ||
	    memchr(data, '/', size))
		return 0;
	memcpy(q, data, size);
	q[size] = '\0';
	db = fuzz_db("scan", 1024, &fresh);
	if (fresh)
		table_make(db);
	if (fs_scan_check(q, why, sizeof why))
		return 0;
	if (fs_scan_open(db, "t", q, &s, why, sizeof why))
		return 0;
	do {
		if (fs_scan_read(s, 4096, off, iov, &niov, &got, why,
				 sizeof why, NULL, NULL))
			break;
		off += got;
		fs_scan_ahead(s);
	} while (got);
	fs_scan_close(s);
	return 0;
}
