/* fuzz-wal: a WAL segment file as replay reads it (engine/wal.c): the
 * header, record framing, torn tails and damage. */
#include <stdio.h>

#include "engine/wal.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[512];
	struct wal_reader *r;
	const void *rec;
	size_t n;

	snprintf(path, sizeof path, "%s/0000000000000001.log", fuzz_dir());
	if (fuzz_write(path, data, size))
		return 0;
	if (wal_reader_open(path, &r) != 0)
		return 0;
	while (wal_reader_next(r, &rec, &n) == 0 && rec)
		;
	wal_reader_valid_end(r);
	if (wal_reader_torn(r))
		wal_reader_zero_tail(r);
	wal_reader_close(r);
	return 0;
}
