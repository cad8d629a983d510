/* fuzz-block: a store file's data or index block (engine/block.c): the
 * stored form with its trailer (checksum, compression) and, past the
 * checksum, the entry and restart layout itself. */
#include <stdlib.h>
#include <string.h>

#include "engine/block.h"
#include "engine/key.h"
#include "tests/fuzz/fuzz.h"

static void walk(const struct block *b, const uint8_t *data, size_t size)
{
	struct block_iter it;
	struct ikey k = { 0 };
	unsigned char target[64];
	size_t n = 0;

	block_iter_init(&it);
	block_iter_set(&it, b);
	for (block_iter_seek_first(&it); it.valid && n < 100000;
	     block_iter_next(&it), n++)
		;
	/* the engine seeks with whole keys: one whose row is the input's
	 * first bytes */
	k.row = data;
	k.rowlen = size < 16 ? size : 16;
	k.fam = (const unsigned char *)"cf";
	k.famlen = 2;
	k.ts = 1000;
	k.type = KT_PUT;
	block_iter_seek(&it, target, ikey_encode(target, &k));
	if (it.valid)
		block_iter_next(&it);
	/* a reversed scan's steps: seek_lt to that key, to the last entry,
	 * then down through the keys met on the way (the walk kept) */
	block_iter_seek_lt(&it, target, ikey_encode(target, &k));
	block_iter_seek_lt(&it, NULL, 0);
	for (n = 0; it.valid && n < 200; n++) {
		size_t kl = it.key.len;
		unsigned char *kc = malloc(kl ? kl : 1);
		if (!kc)
			break;
		memcpy(kc, it.key.p, kl);
		block_iter_seek_lt(&it, kc, kl);
		if (it.valid && n % 3 == 0)
			block_iter_next(&it);	/* and forward over it */
		if (it.valid && n % 3 == 0)
			block_iter_seek_lt(&it, kc, kl);
		free(kc);
	}
	block_iter_release(&it);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct block *b = NULL;
	unsigned char *raw;

	/* the stored bytes, then the trailer */
	if (size >= BLOCK_TRAILER &&
	    block_decode(data, size - BLOCK_TRAILER, &b) == 0) {
		walk(b, data, size);
		block_free(b);
	}
	raw = malloc(size ? size : 1);
	if (!raw)
		return 0;
	memcpy(raw, data, size);
	if (block_from_raw(raw, size, &b) == 0) {	/* takes raw */
		walk(b, data, size);
		block_free(b);
	}
	return 0;
}
