/* fuzz-sst: a store file as the engine opens it and cellfs-fsck checks
 * it (engine/sst.c): footer, index, meta, bloom filter, blocks. */
#include <stdio.h>

#include "engine/internal.h"
#include "engine/iter.h"
#include "engine/sst.h"
#include "tests/fuzz/fuzz.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[512];
	uint64_t bad;
	struct sst *s;
	struct iter *it;
	struct buf mid = BUF_INIT;
	size_t n = 0;

	snprintf(path, sizeof path, "%s/0000000000000001.sst", fuzz_dir());
	if (fuzz_write(path, data, size))
		return 0;
	sst_verify(path, &bad);
	if (sst_open(path, 1, NULL, 0, &s) != 0)
		return 0;
	sst_may_have_row(s, "row", 3);
	sst_mid_row(s, &mid);
	buf_release(&mid);
	it = sst_iter(s, 0);
	if (it) {
		for (iter_seek_first(it); iter_valid(it) && n < 100000;
		     iter_next(it), n++) {
			size_t kl, vl;
			iter_key(it, &kl);
			iter_value(it, &vl);
		}
		iter_status(it);
		iter_destroy(it);
	}
	sst_unref(s);
	return 0;
}
