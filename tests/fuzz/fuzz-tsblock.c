/* fuzz-tsblock: the TSDB block encoding (util/tsblock.c).  The input is
 * read three ways: as an encoded block, which must decode to CF_OK or
 * CF_ECORRUPT within bounds; as a raw block, which must encode to
 * something that decodes back to it byte for byte, or be refused; and as
 * one cell (first byte: where the qualifier ends), likewise. */
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "util/err.h"
#include "util/tsblock.h"

#define MAX_RAW (1u << 20)	/* decoded blocks the target allocates */

static void as_encoded(const uint8_t *data, size_t size)
{
	unsigned char *d;
	size_t rl;
	int rc;

	if (tsblock_raw_size(data, size, &rl) || rl > MAX_RAW)
		return;
	d = malloc(rl ? rl : 1);
	if (!d)
		return;
	rc = tsblock_decode(data, size, d, rl);
	if (rc != CF_OK && rc != CF_ECORRUPT && rc != CF_ENOMEM)
		abort();
	free(d);
}

static void as_raw(const uint8_t *data, size_t size)
{
	struct buf e = BUF_INIT;
	unsigned char *d;
	size_t rl;
	int rc = tsblock_encode(data, size, &e);

	if (rc == CF_EINVAL && e.len != 0)
		abort();
	if (rc == CF_OK) {
		d = malloc(size ? size : 1);
		if (!d || tsblock_raw_size(e.p, e.len, &rl) || rl != size ||
		    tsblock_decode(e.p, e.len, d, size) != CF_OK ||
		    memcmp(d, data, size))
			abort();
		free(d);
	}
	buf_release(&e);
}

static void as_cell(const uint8_t *data, size_t size)
{
	struct buf e = BUF_INIT, q = BUF_INIT, v = BUF_INIT;
	const unsigned char *p;
	size_t ql;

	if (size < 1)
		return;
	ql = data[0] < size - 1 ? data[0] : size - 1;
	if (tsblock_cell_encode(data + 1, ql, data + 1 + ql, size - 1 - ql,
				&e) == CF_OK) {
		p = e.p;
		if (tsblock_cell_decode(&p, e.p + e.len, ql / 2, &q, &v) ||
		    p != e.p + e.len || q.len != ql ||
		    v.len != size - 1 - ql || memcmp(q.p, data + 1, ql) ||
		    memcmp(v.p, data + 1 + ql, v.len))
			abort();
	}
	/* and the input as an encoded cell */
	buf_reset(&q);
	buf_reset(&v);
	p = data;
	(void)tsblock_cell_decode(&p, data + size, size, &q, &v);
	buf_release(&e);
	buf_release(&q);
	buf_release(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	as_encoded(data, size);
	as_raw(data, size);
	as_cell(data, size);
	return 0;
}
