/*
 * json.h: query results as OpenTSDB's /api/query answers them
 * (HttpJsonSerializer.formatQueryAsyncV1); tsd/json.c.  Internal to tsd/:
 * exec.c hands its result groups here for TSD_FMT_JSON.
 */
#ifndef CF_TSD_JSON_H
#define CF_TSD_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "tsd/agg.h"
#include "tsd/query.h"
#include "util/buf.h"

/* One result group. */
struct tsd_json_series {
	const char *metric;
	const void *tags;	/* " k=v k=v": the tags the group shares */
	size_t tagslen;
	const void *aggtags;	/* " k k": the keys aggregated away */
	size_t aggtagslen;
	const struct tsd_dp *dp;
	size_t n;
	int nan_null;		/* fill policy null: NaN prints null */
	/* show_query: the group's sub query, printed as "query" (NULL:
	 * none), and its index among the query's */
	const struct tsd_subquery *sq;
	size_t index;
	/* show_tsuids: " HEX HEX", the TSUIDs of the group's series in
	 * order, printed as "tsuids" (NULL: none) */
	const void *tsuids;
	size_t tsuidslen;
	/* JSON arrays of annotations, printed as "annotations" and
	 * "globalAnnotations" (NULL: none) */
	const void *notes;
	size_t noteslen;
	const void *globals;
	size_t globalslen;
};

/*
 * Appends the JSON array of the groups s[0..n) to out:
 *   [{"metric":M,"tags":{K:V,...},"aggregateTags":[K,...],
 *     ["query":{...},] ["tsuids":[HEX,...],] ["annotations":[...],]
 *     ["globalAnnotations":[...],] "dps":{"TS":VALUE,...}},...]
 * where "query" (a group with sq) is the sub query as OpenTSDB's
 * showQuery prints its TSSubQuery: aggregator, metric (null for a tsuid=
 * sub query), tsuids (as written, or null), downsample, rate, filters,
 * explicitTags, index, rateOptions, tags.
 * or with arrays (OpenTSDB 2.4's "arrays") "dps":[[TS,VALUE],...] with TS
 * a number.  Points outside [start_ms, end_ms] are left out, as OpenTSDB
 * does; TS in seconds, or in milliseconds with ms.  Integers print as integers,
 * floats as Java's Double.toString, NaN and the infinities as "NaN",
 * "Infinity" and "-Infinity" (Jackson quotes non-numeric numbers: JSON
 * has none), and NaN of fill policy null as null.
 * CF_ENOMEM.
 */
int tsd_json_format(struct buf *out, const struct tsd_json_series *s,
		    size_t n, int ms, int arrays, int64_t start_ms,
		    int64_t end_ms);

/* Appends s[0..len) as a JSON string (quoted, escaped).  CF_ENOMEM,
 * CF_EINVAL when s is not UTF-8. */
int tsd_json_string(struct buf *out, const void *s, size_t len);

#endif
