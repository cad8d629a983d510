/*
 * test-tsd-expr.c: OpenTSDB's unit tests of its graphite-style
 * expressions (test/query/expression/), ported to tsd/expr.h case by
 * case: the parser (TestExpressions, SyntaxChecker's grammar), each
 * function (TestScale, TestAbsolute, TestAlias, TestMovingAverage,
 * TestHighestCurrent, TestHighestMax, TestTimeShift, TestFirstDifference)
 * and the series arithmetic (TestSumSeries, TestDiffSeries,
 * TestMultiplySeries, TestDivideSeries over BaseTimeSyncedIteratorTest's
 * data).  Each case names its Java test.  The series are built as
 * SeekableViewsForTest.generator builds them: NUM_POINTS points from
 * START_TIME, INTERVAL apart, a start value and an increment.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tap.h"
#include "tsd/expr.h"
#include "util/err.h"

#define START INT64_C(1356998400000)
#define INTERVAL 60000
#define NPTS 5
#define END (START + INTERVAL * NPTS)

static char why[256];

/* --- series ----------------------------------------------------------- */

/* A series of metric m (UID u) with tags "k=v,k=v" (key and value
 * UIDs are the letters' codes) and n points from v0 by inc. */
static struct tsd_xseries mk(const char *m, uint32_t u, const char *tags,
			     int is_int, double v0, double inc, size_t n)
{
	struct tsd_xseries s;

	memset(&s, 0, sizeof s);
	s.metric = strdup(m);
	s.muid = u;
	for (const char *p = tags; p && *p;) {
		char k[32], v[32];
		int used;
		if (sscanf(p, "%31[^=]=%31[^,]%n", k, v, &used) != 2)
			break;
		s.tags = realloc(s.tags, (s.ntags + 1) * sizeof *s.tags);
		s.tags[s.ntags++] = (struct tsd_xtag){ (uint32_t)k[0],
			(uint32_t)v[0], strdup(k), strdup(v) };
		p += used + (p[used] == ',');
	}
	s.dp = calloc(n ? n : 1, sizeof *s.dp);
	s.n = n;
	for (size_t i = 0; i < n; i++) {
		double v = v0 + inc * (double)i;
		s.dp[i].ts = START + INTERVAL * (int64_t)i;
		s.dp[i].is_float = !is_int;
		if (is_int)
			s.dp[i].i = (int64_t)v;
		else
			s.dp[i].d = v;
	}
	return s;
}

/* A set of series (taken: the set owns them). */
static struct tsd_xset set(size_t n, ...)
{
	struct tsd_xset x = { calloc(n ? n : 1, sizeof *x.s), n };
	va_list ap;

	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		x.s[i] = va_arg(ap, struct tsd_xseries);
	va_end(ap);
	return x;
}

/* --- parsing and running ---------------------------------------------- */

struct mq {
	char text[32][128];
	size_t n;
};

static int add(void *ctx, const char *m, size_t len, size_t *query)
{
	struct mq *q = ctx;

	if (q->n == 32)
		return CF_ENOMEM;
	snprintf(q->text[q->n], sizeof q->text[0], "%.*s", (int)len, m);
	*query = q->n++;
	return CF_OK;
}

static int parse(const char *s, struct tsd_expr **e, struct mq *q)
{
	memset(q, 0, sizeof *q);
	return tsd_expr_parse(s, strlen(s), add, q, e, why, sizeof why);
}

static uint64_t budget;	/* max_points of the next runs (0: none) */

/* Evaluates expression s over the sets in[0..nin) (its metric queries
 * numbered in order) into *out; rc. */
static int run(const char *s, struct tsd_xset *in, size_t nin,
	       struct tsd_xset *out)
{
	struct tsd_expr *e;
	struct mq q;
	int rc = parse(s, &e, &q);

	memset(out, 0, sizeof *out);
	if (rc) {
		diag("parse %s: %s", s, why);
		return rc;
	}
	rc = tsd_expr_eval(e, in, nin, START, END, budget, out, why,
			   sizeof why);
	tsd_expr_free(e);
	return rc;
}

/* 1 if s refuses with exactly the reason want. */
static int refuses(const char *s, struct tsd_xset *in, size_t nin,
		   const char *want)
{
	struct tsd_xset out;
	int rc = run(s, in, nin, &out);

	tsd_xset_release(&out);
	if (rc != CF_EINVAL || strcmp(why, want))
		diag("%s: rc %d, why \"%s\"", s, rc, why);
	return rc == CF_EINVAL && !strcmp(why, want);
}

/* 1 if series s has n points from START, INTERVAL apart, of kind
 * is_int, with values v[0..n). */
static int points(const struct tsd_xseries *s, int is_int, const double *v,
		  size_t n)
{
	if (s->n != n) {
		diag("%zu points, not %zu", s->n, n);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		const struct tsd_dp *p = &s->dp[i];
		double x = p->is_float ? p->d : (double)p->i;
		if (p->ts != START + INTERVAL * (int64_t)i ||
		    p->is_float == is_int || fabs(x - v[i]) > 0.001) {
			diag("point %zu: %lld %s %g, want %g", i,
			     (long long)p->ts, p->is_float ? "float" : "int",
			     x, v[i]);
			return 0;
		}
	}
	return 1;
}

static void release_sets(struct tsd_xset *in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tsd_xset_release(&in[i]);
}

/* --- the parser (TestExpressions, SyntaxChecker) ---------------------- */

static void parser(void)
{
	struct tsd_expr *e;
	struct mq q;

	/* parse: a word without ':' is a parameter */
	is_int(parse("scale(sys.cpu)", &e, &q), CF_OK, "parse");
	ok(e && e->fn == TSD_X_SCALE && e->nargs == 0 && e->nparams == 1 &&
	   !strcmp(e->params[0], "sys.cpu") && q.n == 0,
	   "parse: scale() with one parameter");
	tsd_expr_free(e);
	/* parseWithWhitespace */
	is_int(parse("   scale( sum:sys.cpu , 2 )  ", &e, &q), CF_OK,
	       "parseWithWhitespace");
	ok(e && e->nargs == 1 && e->args[0].sub == NULL &&
	   e->args[0].query == 0 && q.n == 1 &&
	   !strcmp(q.text[0], "sum:sys.cpu") && e->nparams == 1 &&
	   !strcmp(e->params[0], "2"), "parseWithWhitespace: the parts");
	tsd_expr_free(e);
	/* parseMultiParameter (with SyntaxChecker's ',') */
	is_int(parse("sumSeries(sum:proc.sys.cpu, sum:proc.meminfo.memfree)",
		     &e, &q), CF_OK, "parseMultiParameter");
	ok(e && e->fn == TSD_X_SUM && e->nargs == 2 && q.n == 2 &&
	   !strcmp(q.text[0], "sum:proc.sys.cpu") &&
	   !strcmp(q.text[1], "sum:proc.meminfo.memfree") &&
	   e->args[1].query == 1 && e->nparams == 0,
	   "parseMultiParameter: two metric queries, no parameter");
	tsd_expr_free(e);
	/* parseNestedExpr */
	is_int(parse("sum(sum:proc.sys.cpu, scale(sum:proc.a.b, 3))", &e, &q),
	       CF_OK, "parseNestedExpr");
	ok(e && e->nargs == 2 && e->args[1].sub &&
	   e->args[1].sub->fn == TSD_X_SCALE &&
	   e->args[1].sub->args[0].query == 1 && q.n == 2 &&
	   !strcmp(q.text[1], "sum:proc.a.b"), "parseNestedExpr: the tree");
	tsd_expr_free(e);
	/* parseExprWithParam */
	is_int(parse("alias(sum:proc.sys.cpu, 100, 3.1415)", &e, &q), CF_OK,
	       "parseExprWithParam");
	ok(e && e->nparams == 2 && !strcmp(e->params[0], "100") &&
	   !strcmp(e->params[1], "3.1415"), "parseExprWithParam: params");
	tsd_expr_free(e);
	/* SyntaxChecker's METRIC: downsampler, rate, tags rebuilt */
	is_int(parse("absolute(sum : 1m-avg : rate : sys.cpu { host = web* , "
		     "dc = lga|sjc })", &e, &q), CF_OK, "METRIC with all its parts");
	is_str(q.text[0], "sum:1m-avg:rate:sys.cpu{host=web*,dc=lga|sjc}",
	       "METRIC: rebuilt as OpenTSDB joins it");
	tsd_expr_free(e);
	/* parseNullExpression, parseEmptyExpression */
	ok(parse("", &e, &q) == CF_EINVAL &&
	   !strcmp(why, "Expression may not be null or empty"),
	   "parseEmptyExpression");
	/* parseMissingOpenParens, parseMissingClosingParens */
	ok(parse("scalesys.cpu)", &e, &q) == CF_EINVAL &&
	   !strcmp(why, "Function scalesys.cpu has not been implemented"),
	   "parseMissingOpenParens: the word is no function");
	ok(parse("scale sys.cpu)", &e, &q) == CF_EINVAL &&
	   !strcmp(why, "Failed to parse scale sys.cpu)"),
	   "parseMissingOpenParens");
	ok(parse("scale(sys.cpu", &e, &q) == CF_EINVAL &&
	   !strcmp(why, "Failed to parse scale(sys.cpu"),
	   "parseMissingClosingParens");
	/* TestExpressionFactory: getByNameNoSuchFunction; every name */
	ok(parse("nosuchfunc(sum:m)", &e, &q) == CF_EINVAL &&
	   !strcmp(why, "Function nosuchfunc has not been implemented"),
	   "getByNameNoSuchFunction");
	{
		static const char *const names[] = {
			"alias", "scale", "absolute", "movingAverage",
			"highestCurrent", "highestMax", "shift", "timeShift",
			"firstDiff", "divideSeries", "divide", "sumSeries",
			"sum", "diffSeries", "difference", "multiplySeries",
			"multiply",
		};
		int all = 1;
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
			char s[64];
			snprintf(s, sizeof s, "%s(sum:m)", names[i]);
			if (parse(s, &e, &q)) {
				diag("%s: %s", names[i], why);
				all = 0;
			}
			tsd_expr_free(e);
		}
		ok(all, "ExpressionFactory's seventeen names");
	}
	/* the grammar's refusals: ",," (the old reader's separator), an
	 * empty parameter, a tag without a value, text after the end */
	ok(parse("scale(sum:m,,2)", &e, &q) == CF_EINVAL, "',,' refused");
	ok(parse("scale(sum:m{host},2)", &e, &q) == CF_EINVAL,
	   "a tag without value refused");
	ok(parse("scale(sum:m,2) x", &e, &q) == CF_EINVAL,
	   "text after the expression refused");
	ok(parse("scale(sum:a:b:c:d,2)", &e, &q) == CF_EINVAL,
	   "a metric query of five parts refused");
	{
		char deep[512] = "";
		for (int i = 0; i < 40; i++)
			strcat(deep, "absolute(");
		strcat(deep, "sum:m");
		for (int i = 0; i < 40; i++)
			strcat(deep, ")");
		ok(parse(deep, &e, &q) == CF_EINVAL,
		   "nesting past 32 refused");
	}
}

/* --- per-series functions -------------------------------------------- */

static void scale(void)
{
	struct tsd_xset in[2], out;
	static const double two[] = { 2, 4, 6, 8, 10 };
	static const double half[] = { 0.5, 1, 1.5, 2, 2.5 };

	/* evaluateGroupByLong */
	in[0] = set(2, mk("sys.cpu", 1, "h=a", 1, 1, 1, NPTS),
		    mk("sys.mem", 2, "h=b", 1, 10, 1, NPTS));
	is_int(run("scale(sum:m,2)", in, 1, &out), CF_OK,
	       "TestScale.evaluateGroupByLong");
	ok(out.n == 2 && points(&out.s[0], 1, two, NPTS) &&
	   !strcmp(out.s[1].metric, "sys.mem") && out.s[1].dp[0].i == 20,
	   "TestScale: integers times an integer stay integers");
	tsd_xset_release(&out);
	/* evaluateFactorIsDouble */
	is_int(run("scale(sum:m,0.5)", in, 1, &out), CF_OK,
	       "TestScale.evaluate with 0.5");
	ok(out.n == 2 && points(&out.s[0], 0, half, NPTS),
	   "TestScale: a fraction gives doubles");
	tsd_xset_release(&out);
	/* evaluateSubQuerySeries: each argument's series in turn */
	in[1] = set(1, mk("sys.disk", 3, "", 0, 1.5, 1, NPTS));
	is_int(run("scale(sum:a,sum:b,-1)", in, 2, &out), CF_OK,
	       "TestScale.evaluateSubQuerySeries");
	ok(out.n == 3 && out.s[2].dp[0].is_float && out.s[2].dp[0].d == -1.5 &&
	   out.s[0].dp[4].i == -5, "TestScale: -1 over two arguments");
	tsd_xset_release(&out);
	/* evaluateNullParams, evaluateEmptyFactor, evaluateBadFactor */
	ok(refuses("scale(sum:m)", in, 1, "Missing scaling factor"),
	   "TestScale.evaluateNullParams");
	ok(refuses("scale(sum:m,notanumber)", in, 1,
		   "Unparseable scale factor value: notanumber"),
	   "TestScale.evaluateFactorNotANumber");
	ok(refuses("scale(sum:m,1.2.3)", in, 1, "Invalid parameter, must be "
		   "an integer or floating point"),
	   "TestScale: a malformed number");
	/* evaluateEmptyResults: no series in, none out */
	{
		struct tsd_xset none = { NULL, 0 };
		is_int(run("scale(sum:m,2)", &none, 1, &out), CF_OK,
		       "TestScale.evaluateEmptyResults");
		is_int((int)out.n, 0, "TestScale: nothing out");
		tsd_xset_release(&out);
	}
	release_sets(in, 2);
}

static void absolute(void)
{
	struct tsd_xset in[1], out;
	static const double up[] = { 10, 9, 8, 7, 6 };
	static const double upd[] = { 1.5, 0.5, 0.5, 1.5, 2.5 };

	/* TestAbsolute.evaluateGroupByLong with negatives */
	in[0] = set(2, mk("sys.cpu", 1, "", 1, -10, 1, NPTS),
		    mk("sys.mem", 2, "", 0, -1.5, 1, NPTS));
	is_int(run("absolute(sum:m)", in, 1, &out), CF_OK, "TestAbsolute");
	ok(out.n == 2 && points(&out.s[0], 1, up, NPTS) &&
	   points(&out.s[1], 0, upd, NPTS),
	   "TestAbsolute: integers stay integers, doubles doubles");
	tsd_xset_release(&out);
	release_sets(in, 1);
}

static void alias(void)
{
	struct tsd_xset in[1], out;
	static const double v[] = { 10, 11, 12, 13, 14 };
	char *name;

	/* evaluateSubQuerySeries: OpenTSDB's Alias takes absolute values */
	in[0] = set(2, mk("sys.cpu", 1, "host=web01,dc=lga", 1, 1, 1, NPTS),
		    mk("sys.mem", 2, "host=web02,dc=lga", 1, -10, -1, NPTS));
	is_int(run("alias(sum:m,My Alias)", in, 1, &out), CF_EINVAL,
	       "a blank inside a word is no word");
	tsd_xset_release(&out);
	is_int(run("alias(sum:m,My_Alias)", in, 1, &out), CF_OK,
	       "TestAlias.evaluateGroupByLong");
	name = out.n == 2 ? tsd_xseries_name(&out.s[1]) : NULL;
	ok(name && !strcmp(name, "My_Alias") && out.s[1].alias &&
	   points(&out.s[1], 1, v, NPTS),
	   "TestAlias.evaluateSubQuerySeries: named, absolute values");
	free(name);
	tsd_xset_release(&out);
	/* evaluateWithTags: @tagk replaced by the series' values */
	is_int(run("alias(sum:m,@host.@dc,x)", in, 1, &out), CF_OK,
	       "TestAlias.evaluateWithTags");
	name = out.n == 2 ? tsd_xseries_name(&out.s[0]) : NULL;
	is_str(name ? name : "", "web01.lga,x",
	       "TestAlias: @host and @dc replaced, parameters joined by ','");
	free(name);
	tsd_xset_release(&out);
	/* evaluateNullParams */
	ok(refuses("alias(sum:m)", in, 1, "Missing the alias"),
	   "TestAlias.evaluateNullParams");
	release_sets(in, 1);
}

static void moving_average(void)
{
	struct tsd_xset in[2], out;
	static const struct {
		const char *window;
		double v[NPTS];
	} cases[] = {
		{ "1", { 1, 2, 3, 4, 5 } },		/* evaluateWindow1dps */
		{ "2", { 0, 1.5, 2.5, 3.5, 4.5 } },	/* evaluateWindow2dps */
		{ "5", { 0, 0, 0, 0, 3 } },		/* evaluateWindow5dps */
		{ "6", { 0, 0, 0, 0, 0 } },		/* evaluateWindow6dps */
		{ "'1min'", { 0, 2, 3, 4, 5 } },	/* evaluateWindow1min */
		{ "'2min'", { 0, 0, 2.5, 3.5, 4.5 } },	/* evaluateWindow2min */
		{ "'3min'", { 0, 0, 0, 3, 4 } },	/* evaluateWindow3min */
		{ "'4min'", { 0, 0, 0, 0, 3.5 } },	/* evaluateWindow4min */
		{ "'5min'", { 0, 0, 0, 0, 0 } },	/* evaluateWindow5min */
	};
	static const double ten[] = { 10, 11, 12, 13, 14 };

	in[0] = set(1, mk("sys.cpu", 1, "", 1, 1, 1, NPTS));
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char e[64];
		snprintf(e, sizeof e, "movingAverage(sum:m,%s)",
			 cases[i].window);
		is_int(run(e, in, 1, &out), CF_OK, "TestMovingAverage %s",
		       cases[i].window);
		ok(out.n == 1 && points(&out.s[0], 0, cases[i].v, NPTS),
		   "TestMovingAverage.evaluateWindow %s: doubles",
		   cases[i].window);
		tsd_xset_release(&out);
	}
	/* evaluateSubQuery: each argument's series */
	in[1] = set(1, mk("sys.mem", 2, "", 1, 10, 1, NPTS));
	is_int(run("movingAverage(sum:a,sum:b,1)", in, 2, &out), CF_OK,
	       "TestMovingAverage.evaluateSubQuery");
	ok(out.n == 2 && points(&out.s[1], 0, ten, NPTS) &&
	   !strcmp(out.s[1].metric, "sys.mem"),
	   "TestMovingAverage.evaluateSubQuery: the second series");
	tsd_xset_release(&out);
	release_sets(in, 2);
	/* AggregationIterator starts at the query's start: a point before
	 * it is neither printed nor in a window */
	in[0] = set(1, mk("sys.cpu", 1, "", 1, 1, 1, NPTS));
	for (size_t i = 0; i < NPTS; i++)
		in[0].s[0].dp[i].ts -= INTERVAL;
	is_int(run("movingAverage(sum:m,2)", in, 1, &out), CF_OK,
	       "movingAverage of a series begun before the range");
	ok(out.n == 1 && out.s[0].n == NPTS - 1 && out.s[0].dp[0].d == 0 &&
	   out.s[0].dp[1].d == 2.5, "movingAverage: the window starts at "
	   "the range's start");
	tsd_xset_release(&out);
	ok(refuses("movingAverage(sum:m)", in, 1, "Missing moving average "
		   "window size"), "TestMovingAverage.evaluateEmptyParams");
	ok(refuses("movingAverage(sum:m,0)", in, 1, "Moving average window "
		   "must be an integer greater than zero"),
	   "evaluateWindowIsZeroDataPoints");
	ok(refuses("movingAverage(sum:m,'0sec')", in, 1, "Moving average "
		   "window must be an integer greater than zero"),
	   "evaluateWindowIsZeroTime");
	ok(refuses("movingAverage(sum:m,60sec)", in, 1,
		   "Unparseable window size: 60sec"),
	   "evaluateWindowTimedMissingQuotes");
	ok(refuses("movingAverage(sum:m,'60')", in, 1,
		   "Unknown time unit= in window='60'"),
	   "evaluateWindowTimedNoUnit");
	ok(refuses("movingAverage(sum:m,'60years')", in, 1,
		   "Unknown time unit=years in window='60years'"),
	   "evaluateWindowUnknownUnit");
	release_sets(in, 1);
}

static void highest(void)
{
	struct tsd_xset in[2], out;
	static const double ten[] = { 10, 11, 12, 13, 14 };
	static const double one[] = { 1, 2, 3, 4, 5 };

	in[0] = set(2, mk("sys.cpu", 1, "", 1, 1, 1, NPTS),
		    mk("sys.mem", 2, "", 1, 10, 1, NPTS));
	/* evaluateTopN1with2SeriesLong */
	is_int(run("highestCurrent(sum:m,1)", in, 1, &out), CF_OK,
	       "TestHighestCurrent.evaluateTopN1with2SeriesLong");
	ok(out.n == 1 && !strcmp(out.s[0].metric, "sys.mem") &&
	   points(&out.s[0], 1, ten, NPTS), "highestCurrent: the greater");
	tsd_xset_release(&out);
	/* evaluateTopN2with2SeriesLong, evaluateTopN100with2SeriesLong */
	is_int(run("highestCurrent(sum:m,100)", in, 1, &out), CF_OK,
	       "TestHighestCurrent.evaluateTopN100with2SeriesLong");
	ok(out.n == 2 && !strcmp(out.s[0].metric, "sys.mem") &&
	   !strcmp(out.s[1].metric, "sys.cpu"),
	   "highestCurrent: both, greatest first");
	tsd_xset_release(&out);
	is_int(run("highestMax(sum:m,1)", in, 1, &out), CF_OK,
	       "TestHighestMax.evaluateTopN1with2SeriesLong");
	ok(out.n == 1 && !strcmp(out.s[0].metric, "sys.mem"),
	   "highestMax: the greater");
	tsd_xset_release(&out);
	release_sets(in, 1);
	/* evaluateTopN1with2SeriesDiffSpan: the series that ends early
	 * is out though its last value was greater */
	in[0] = set(2, mk("sys.cpu", 1, "", 1, 1, 1, NPTS),
		    mk("sys.mem", 2, "", 1, 10, 1, 3));
	is_int(run("highestCurrent(sum:m,1)", in, 1, &out), CF_OK,
	       "TestHighestCurrent.evaluateTopN1with2SeriesDiffSpan");
	ok(out.n == 1 && !strcmp(out.s[0].metric, "sys.cpu") &&
	   points(&out.s[0], 1, one, NPTS),
	   "highestCurrent: the series still there wins");
	tsd_xset_release(&out);
	/* highestMax over the same: the greatest of all (12 > 5) */
	is_int(run("highestMax(sum:m,1)", in, 1, &out), CF_OK,
	       "TestHighestMax over different spans");
	ok(out.n == 1 && !strcmp(out.s[0].metric, "sys.mem"),
	   "highestMax: the greatest value wins");
	tsd_xset_release(&out);
	/* evaluateTopN100with2SubQuerySeriesLong: over two arguments */
	in[1] = set(1, mk("sys.disk", 3, "", 0, 20.5, 1, NPTS));
	is_int(run("highestMax(sum:a,sum:b,2)", in, 2, &out), CF_OK,
	       "TestHighestMax.evaluateTopN2with2SubQuerySeries");
	ok(out.n == 2 && !strcmp(out.s[0].metric, "sys.disk") &&
	   !strcmp(out.s[1].metric, "sys.mem"), "highestMax: doubles and "
	   "integers ranked together");
	tsd_xset_release(&out);
	release_sets(in, 2);
	/* Double.compare puts NaN above every number: highestMax ranks a
	 * series holding one first */
	in[0] = set(2, mk("sys.cpu", 1, "", 1, 1, 1, NPTS),
		    mk("sys.nan", 4, "", 0, 0.5, 0, NPTS));
	in[0].s[1].dp[2].d = NAN;
	is_int(run("highestMax(sum:m,1)", in, 1, &out), CF_OK,
	       "highestMax with a NaN");
	ok(out.n == 1 && !strcmp(out.s[0].metric, "sys.nan"),
	   "highestMax: NaN ranks first, as Math.max and Double.compare do");
	tsd_xset_release(&out);
	ok(refuses("highestCurrent(sum:m)", in, 1, "Need aggregation window "
		   "for moving average"), "evaluateNullParams (sic)");
	ok(refuses("highestCurrent(sum:m,0)", in, 1, "Top n value must be "
		   "greater than zero: 0"), "evaluateTopnZero");
	ok(refuses("highestMax(sum:m,not_a_number)", in, 1,
		   "Unparseable top n value: not_a_number"),
	   "evaluateTopnNotaNumber");
	release_sets(in, 1);
}

static void time_shift(void)
{
	struct tsd_xset in[1], out;
	static const struct {
		const char *p;
		int64_t ms;
	} cases[] = {
		/* TestTimeShift.parseParam, in the quotes evaluate wants
		 * (its "+1 week" forms have a blank, which no word of the
		 * grammar holds) */
		{ "'1week'", 604800000 }, { "'1days'", 86400000 },
		{ "'1hr'", 3600000 }, { "'1min'", 60000 },
		{ "'1sec'", 1000 }, { "'2weeks'", 1209600000 },
		{ "'2day'", 172800000 }, { "'130days'", INT64_C(11232000000) },
	};

	in[0] = set(1, mk("sys.cpu", 1, "", 1, 1, 1, NPTS));
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char e[64];
		snprintf(e, sizeof e, "timeShift(sum:m,%s)", cases[i].p);
		is_int(run(e, in, 1, &out), CF_OK, "TestTimeShift %s",
		       cases[i].p);
		ok(out.n == 1 && out.s[0].n == NPTS &&
		   out.s[0].dp[0].ts == START + cases[i].ms &&
		   out.s[0].dp[4].i == 5 && !out.s[0].dp[4].is_float,
		   "TestTimeShift.shiftDataPoint: %s later", cases[i].p);
		tsd_xset_release(&out);
	}
	ok(refuses("timeShift(sum:m)", in, 1, "Need amount of timeshift to "
		   "perform timeshift"), "timeShift without its parameter");
	ok(refuses("timeShift(sum:m,1min)", in, 1, "Invalid timeshift "
		   "parameter: eg '10min'"), "timeShift without quotes");
	ok(refuses("timeShift(sum:m,'1year')", in, 1,
		   "unknown time unit=year"), "timeShift: unknown unit");
	ok(refuses("timeShift(sum:m,'0min')", in, 1, "timeshift <= 0"),
	   "timeShift of nothing");
	release_sets(in, 1);
}

static void first_diff(void)
{
	struct tsd_xset in[1], out;
	static const double d[] = { 0, 1, 1, 1, 1 };
	static const double dd[] = { 0, -2.5, -2.5, -2.5, -2.5 };

	/* TestFirstDifference.evaluateGroupByLong and ...Double */
	in[0] = set(2, mk("sys.cpu", 1, "", 1, 1, 1, NPTS),
		    mk("sys.mem", 2, "", 0, 10, -2.5, NPTS));
	is_int(run("firstDiff(sum:m)", in, 1, &out), CF_OK,
	       "TestFirstDifference");
	ok(out.n == 2 && points(&out.s[0], 0, d, NPTS) &&
	   points(&out.s[1], 0, dd, NPTS),
	   "TestFirstDifference: 0 first, then the differences, doubles");
	tsd_xset_release(&out);
	release_sets(in, 1);
}

/* --- the series arithmetic (BaseTimeSyncedIteratorTest.oneExtraSameE,
 * queryAB_Dstar: A and B grouped by D, B with one series more) --------- */

static void arithmetic(void)
{
	struct tsd_xset in[2], out;
	static const double d0[] = { 11.0, 6.0, 13.0 / 3 };
	static const double d1[] = { 3.5, 3.0, 16.0 / 6 };
	static const double zero[] = { 0, 0, 0 };
	static const double s0[] = { 12, 14, 16 };
	static const double s2[] = { 17, 18, 19 };
	static const double m0[] = { 11, 24, 39 };
	static const double f0[] = { -10, -10, -10 };
	char *name;

	in[0] = set(2, mk("A", 1, "D=D,E=E", 1, 1, 1, 3),
		    mk("A", 1, "D=F,E=E", 1, 4, 1, 3));
	in[1] = set(3, mk("B", 2, "D=D,E=E", 1, 11, 1, 3),
		    mk("B", 2, "D=F,E=E", 1, 14, 1, 3),
		    mk("B", 2, "D=G,E=E", 1, 17, 1, 3));
	/* TestDivideSeries.divideMultipleSeriesEach: B / A; the series
	 * without a divisor is 0 (JEXL's lenient x / 0) */
	{
		struct tsd_xset ba[2] = { in[1], in[0] };
		is_int(run("divideSeries(sum:b,sum:a)", ba, 2, &out), CF_OK,
		       "TestDivideSeries.divideMultipleSeriesEach");
	}
	ok(out.n == 3 && points(&out.s[0], 0, d0, 3) &&
	   points(&out.s[1], 0, d1, 3) && points(&out.s[2], 0, zero, 3),
	   "divideSeries: joined by tags, 0 where A has no series");
	/* EDPtoDPS: the least metric UID of the series joined */
	ok(out.n == 3 && !strcmp(out.s[0].metric, "A") &&
	   !strcmp(out.s[2].metric, "B"),
	   "divideSeries: named by the least metric UID");
	ok(out.n == 3 && out.s[2].ntags == 2 && out.s[2].tags[0].v == 'G',
	   "divideSeries: the tags of the first argument's series");
	tsd_xset_release(&out);
	/* TestSumSeries.sumMultipleSeriesEach */
	is_int(run("sumSeries(sum:a,sum:b)", in, 2, &out), CF_OK,
	       "TestSumSeries.sumMultipleSeriesEach");
	ok(out.n == 3 && points(&out.s[0], 0, s0, 3) &&
	   points(&out.s[2], 0, s2, 3) && out.s[2].ntags == 0,
	   "sumSeries: a series of B alone keeps its value, and no tags "
	   "(A has none there)");
	name = out.n == 3 ? tsd_xseries_name(&out.s[2]) : NULL;
	is_str(name ? name : "", "B", "sumSeries: B names it");
	free(name);
	tsd_xset_release(&out);
	/* TestMultiplySeries, TestDiffSeries */
	is_int(run("multiply(sum:a,sum:b)", in, 2, &out), CF_OK,
	       "TestMultiplySeries.multiplyMultipleSeriesEach");
	ok(out.n == 3 && points(&out.s[0], 0, m0, 3) &&
	   points(&out.s[2], 0, zero, 3), "multiplySeries");
	tsd_xset_release(&out);
	is_int(run("difference(sum:a,sum:b)", in, 2, &out), CF_OK,
	       "TestDiffSeries.diffMultipleSeriesEach");
	ok(out.n == 3 && points(&out.s[0], 0, f0, 3), "diffSeries");
	tsd_xset_release(&out);
	/* nested: the sum of a scaled argument */
	is_int(run("sumSeries(scale(sum:a,10),sum:b)", in, 2, &out), CF_OK,
	       "a sub expression as an argument");
	ok(out.n == 3 && out.s[0].dp[0].d == 21 && out.s[1].dp[2].d == 76,
	   "sumSeries(scale(A, 10), B)");
	tsd_xset_release(&out);
	/* the memory bound: every point any function makes counts */
	budget = 9;
	is_int(run("sumSeries(sum:a,sum:b)", in, 2, &out), CF_OK,
	       "9 points made within a bound of 9");
	tsd_xset_release(&out);
	is_int(run("sumSeries(scale(sum:a,10),sum:b)", in, 2, &out),
	       CF_ETOOBIG, "15 points made past a bound of 9: ETOOBIG");
	is_str(why, "expression of more than 9 points", "ETOOBIG says why");
	tsd_xset_release(&out);
	budget = 0;
	/* divideOneResultSet, divideTooManyResultSets */
	ok(refuses("divideSeries(sum:a)", in, 2,
		   "Must have 2 to 26 series, got 1 instead"),
	   "TestDivideSeries.divideOneResultSet");
	{
		char e[600] = "sumSeries(";
		for (int i = 0; i < 27; i++)
			strcat(e, i ? ",sum:a" : "sum:a");
		strcat(e, ")");
		struct tsd_xset many[27];
		for (int i = 0; i < 27; i++)
			many[i] = in[0];
		ok(refuses(e, many, 27, "Must have 2 to 26 series, got 27 "
			   "instead"), "TestSumSeries.sumTooManyResultSets");
	}
	release_sets(in, 2);
}

int main(void)
{
	parser();
	scale();
	absolute();
	alias();
	moving_average();
	highest();
	time_shift();
	first_diff();
	arithmetic();
	return done_testing();
}
