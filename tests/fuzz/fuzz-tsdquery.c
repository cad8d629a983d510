/* fuzz-tsdquery: query strings of MNT/tsd/q?... (tsd/query.c), the
 * times and durations inside them, and the names of MNT/tsd/lookup/
 * files and lookups' m= values (tsd/lookup.c's parsers). */
#include "tests/fuzz/fuzz.h"
#include "tsd/query.h"
#include "tsd/tsd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tsd_query q;
	struct tsd_lookup_query lq;
	struct tsd_error err;
	char why[256];
	int64_t ms;

	if (tsd_query_parse((const char *)data, size, 1700000000000LL, &q, why,
			    sizeof why) == 0)
		tsd_query_release(&q);
	tsd_parse_time((const char *)data, size, 1700000000000LL, &ms);
	tsd_parse_duration((const char *)data, size, &ms);
	tsd_lookup_query_init(&lq);
	tsd_lookup_parse_qs(&lq, (const char *)data, size, &err);
	tsd_lookup_query_release(&lq);
	if (size > 0) {
		tsd_lookup_parse_m(&lq, (const char *)data, size, &err);
		tsd_lookup_query_release(&lq);
	}
	return 0;
}
