/* fuzz-tsdput: lines written to MNT/tsd/put (with the metric) and to
 * MNT/tsd/metrics/M (without), tsd/line.c. */
#include "tests/fuzz/fuzz.h"
#include "tsd/line.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tsd_line l;
	char why[256];

	tsd_line_parse((const char *)data, size, NULL, 0, &l, why, sizeof why);
	tsd_line_parse((const char *)data, size, "sys.cpu", 7, &l, why,
		       sizeof why);
	return 0;
}
