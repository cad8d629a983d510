/* fuzz-tsdquery: query strings of MNT/tsd/q?... (tsd/query.c), the
 * times and durations inside them, the names of MNT/tsd/lookup/ files
 * and lookups' m= values (tsd/lookup.c's parsers), the exp=
 * expressions (tsd/expr.c), parsed and evaluated over two made-up
 * series a metric query, and the input as the JEXL arithmetic of
 * /api/query/exp (tsd/jexl.c), evaluated with every variable 2. */
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "tsd/expr.h"
#include "tsd/jexl.h"
#include "tsd/query.h"
#include "tsd/tsd.h"

static int add(void *ctx, const char *m, size_t len, size_t *query)
{
	struct tsd_query *q = ctx;
	int rc = tsd_query_add_m(q, m, len, NULL, 0);

	*query = q->nsubs - 1;
	return rc;
}

/* Each expression of q over made-up results: two series a sub query,
 * one of integers and one of doubles (a NaN among them). */
static void expressions(struct tsd_query *q)
{
	static struct tsd_dp dp[2][4] = {
		{ { 1000, 0, -3, 0 }, { 61000, 0, 5, 0 },
		  { 121000, 0, 0, 0 }, { 181000, 0, 7, 0 } },
		{ { 1000, 1, 0, 2.5 }, { 61000, 1, 0, 0.0 / 0.0 },
		  { 181000, 1, 0, -1e300 }, { 241000, 1, 0, 4 } },
	};
	static struct tsd_xtag tags[2] = {
		{ 1, 1, (char *)"host", (char *)"a" },
		{ 1, 2, (char *)"host", (char *)"b" },
	};
	struct tsd_xseries s[2] = {
		{ (char *)"m", 1, &tags[0], 1, NULL, 0, 0, dp[0], 4 },
		{ (char *)"m", 1, &tags[1], 1, NULL, 0, 0, dp[1], 4 },
	};
	struct tsd_xset in[16];

	for (size_t i = 0; i < 16; i++)
		in[i] = (struct tsd_xset){ s, 2 };
	for (size_t i = 0; i < q->nexps; i++) {
		struct tsd_expr *e;
		struct tsd_xset out;
		char why[256];
		if (tsd_expr_parse(q->exps[i], strlen(q->exps[i]), add, q, &e,
				   why, sizeof why))
			continue;
		if (q->nsubs <= 16 && tsd_expr_eval(e, in, q->nsubs, 0,
						    200000, 1000, &out, why,
						    sizeof why) == 0)
			tsd_xset_release(&out);
		tsd_expr_free(e);
	}
}

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
	if (tsd_query_parse_flags((const char *)data, size, 1700000000000LL,
				  TSD_QUERY_EXP, &q, why, sizeof why) == 0) {
		expressions(&q);
		tsd_query_release(&q);
	}
	{
		struct tsd_jexl *j;
		double vals[64];
		for (size_t i = 0; i < 64; i++)
			vals[i] = 2;
		if (tsd_jexl_parse((const char *)data, size, &j, why,
				   sizeof why) == 0) {
			if (tsd_jexl_nvars(j) <= 64)
				(void)tsd_jexl_eval(j, vals);
			tsd_jexl_free(j);
		}
	}
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
