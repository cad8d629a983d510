/* fuzz-schema: .schema lines (cf_family_parse), as a write to
 * MNT/T/.schema and the catalog's family rows give them; a line that
 * parses formats to a line that parses to the same family. */
#include <stdlib.h>
#include <string.h>

#include "engine/cellfs.h"
#include "tests/fuzz/fuzz.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cf_family f, g;
	const char *why = NULL;
	struct buf out = BUF_INIT;

	memset(&f, 0, sizeof f);
	memset(&g, 0, sizeof g);
	if (cf_family_parse((const char *)data, size, &f, &why) != CF_OK)
		return 0;
	if (cf_family_format(&f, &out) != CF_OK)
		abort();
	/* the formatted line may end in a newline */
	while (out.len && out.p[out.len - 1] == '\n')
		out.len--;
	if (cf_family_parse((const char *)out.p, out.len, &g, &why) != CF_OK ||
	    memcmp(&f, &g, sizeof f) != 0)
		abort();
	buf_release(&out);
	return 0;
}
