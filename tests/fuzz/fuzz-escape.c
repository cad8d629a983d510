/* fuzz-escape: escaped names (util/escape.h), as every path component
 * of the mount and every .batch token is read: unescape any bytes;
 * escaping any key and unescaping it again gives the key back; and the
 * scan file's escaping (util/escape_fast.h, each of its ways) writes
 * exactly cf_escape()'s bytes within CF_ESCAPE_ROOM, reading nothing
 * past the key (libFuzzer's input ends where ASan watches). */
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "util/escape.h"
#include "util/escape_fast.h"

typedef unsigned char *put_fn(unsigned char *d, const unsigned char *k,
			      size_t len);

static unsigned char *put_dispatch(unsigned char *d, const unsigned char *k,
				   size_t len)
{
	return cf_escape_put(d, k, len);
}

static void same_as(const struct buf *want, put_fn *fn, const uint8_t *data,
		    size_t size)
{
	unsigned char *o = malloc(CF_ESCAPE_ROOM(size));
	unsigned char *e;

	if (!o)
		return;
	e = fn(o, data, size);
	if ((size_t)(e - o) != want->len ||
	    (want->len && memcmp(o, want->p, want->len)))
		abort();
	free(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf a = BUF_INIT, b = BUF_INIT;

	cf_unescape((const char *)data, size, &a);
	buf_reset(&a);
	if (cf_escape(data, size, &a) == 0) {
		if (cf_unescape((const char *)a.p, a.len, &b) != 0 ||
		    b.len != size || (size && memcmp(b.p, data, size)))
			abort();
		same_as(&a, put_dispatch, data, size);
		same_as(&a, cf_escape_put_slow, data, size);
		same_as(&a, cf_escape_put_words, data, size);
#if defined(__SSE2__)
		same_as(&a, cf_escape_put_vec_sse2, data, size);
#if defined(__x86_64__) || defined(__i386__)
		if (__builtin_cpu_supports("ssse3"))
			same_as(&a, cf_escape_put_vec_ssse3, data, size);
#endif
#endif
	}
	buf_release(&a);
	buf_release(&b);
	return 0;
}
