/* fuzz-tsdquery: query strings of MNT/tsd/q?... (tsd/query.c), and the
 * times and durations inside them. */
#include "tests/fuzz/fuzz.h"
#include "tsd/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tsd_query q;
	char why[256];
	int64_t ms;

	if (tsd_query_parse((const char *)data, size, 1700000000000LL, &q, why,
			    sizeof why) == 0)
		tsd_query_release(&q);
	tsd_parse_time((const char *)data, size, 1700000000000LL, &ms);
	tsd_parse_duration((const char *)data, size, &ms);
	return 0;
}
