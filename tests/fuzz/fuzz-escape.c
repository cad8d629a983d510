/* fuzz-escape: escaped names (util/escape.h), as every path component
 * of the mount and every .batch token is read: unescape any bytes;
 * escaping any key and unescaping it again gives the key back. */
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "util/escape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf a = BUF_INIT, b = BUF_INIT;

	cf_unescape((const char *)data, size, &a);
	buf_reset(&a);
	if (cf_escape(data, size, &a) == 0) {
		if (cf_unescape((const char *)a.p, a.len, &b) != 0 ||
		    b.len != size || (size && memcmp(b.p, data, size)))
			abort();
	}
	buf_release(&a);
	buf_release(&b);
	return 0;
}
