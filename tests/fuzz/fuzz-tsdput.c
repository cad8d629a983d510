/* fuzz-tsdput: lines written to MNT/tsd/put (with the metric) and to
 * MNT/tsd/metrics/M (without), tsd/line.c; and the words of a put
 * writer's memo (tsd_line_words): a line the parser takes has them, its
 * metric word is the parser's, its tag text parses alone to the same
 * tags, and tsd_line_point gives its timestamp and value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "tsd/line.h"
#include "util/err.h"

static void words_agree(const char *s, size_t n, const char *metric,
			size_t mlen)
{
	struct tsd_line l, t;
	struct tsd_line_words w;
	static char tl[TSD_LINE_MAX + 16];
	char why[256];
	int64_t ts;
	struct tsd_value v;

	if (tsd_line_parse(s, n, metric, mlen, &l, why, sizeof why) != CF_OK)
		return;
	if (!tsd_line_words(s, n, metric != NULL, &w))
		abort();
	if (!metric && (w.mlen != l.mlen || memcmp(w.metric, l.metric, l.mlen)))
		abort();
	memcpy(tl, "1 1 ", 4);
	memcpy(tl + 4, w.tags, w.tagslen);
	if (tsd_line_parse(tl, w.tagslen + 4, "m", 1, &t, why,
			   sizeof why) != CF_OK || t.ntags != l.ntags)
		abort();
	for (size_t j = 0; j < l.ntags; j++)
		if (t.tags[j].klen != l.tags[j].klen ||
		    memcmp(t.tags[j].k, l.tags[j].k, l.tags[j].klen) ||
		    t.tags[j].vlen != l.tags[j].vlen ||
		    memcmp(t.tags[j].v, l.tags[j].v, l.tags[j].vlen))
			abort();
	if (tsd_line_point(&w, &ts, &v, why, sizeof why) != CF_OK ||
	    ts != l.ts || v.is_float != l.value.is_float ||
	    v.i != l.value.i || memcmp(&v.d, &l.value.d, sizeof v.d))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tsd_line l;
	char why[256];

	tsd_line_parse((const char *)data, size, NULL, 0, &l, why, sizeof why);
	tsd_line_parse((const char *)data, size, "sys.cpu", 7, &l, why,
		       sizeof why);
	words_agree((const char *)data, size, NULL, 0);
	words_agree((const char *)data, size, "sys.cpu", 7);
	return 0;
}
