/* fuzz-regioninfo: the .regioninfo files cellfs-fsck reads to rebuild a
 * catalog (engine/check.c). */
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;		/* as env_read_file gives it */
	check_regioninfo_parse(text);
	free(text);
	return 0;
}
