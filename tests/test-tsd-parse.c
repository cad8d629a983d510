/*
 * test-tsd-parse.c: OpenTSDB's own unit tests of query parsing, ported
 * case by case to tsd/query.h and tsd/line.h: the tag value filters
 * (TestTagVNotKeyFilter, TestTagVWildcardFilter,
 * TestTagVNotLiteralOrFilter, TestTagVLiteralOrFilter, TestTagVRegexFilter's
 * refusals (its matches are in test-tsd-query.c), TestTagVFilter), the
 * query validation
 * (TestTSQuery, TestTSSubQuery), tags (TestTags) and times
 * (TestDateTime).  Each case names its Java test; a case whose Java
 * subject cellfs has no counterpart for (hashCode, toString, UID
 * resolution mocks) is left out, and the reason given in the group.
 *
 * The filters are built the way a query builds them, from
 * "start=...&m=sum:m{host=FILTER}", so each case also checks the
 * parsing of the m= parameter.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/tap.h"
#include "tsd/line.h"
#include "tsd/number.h"
#include "tsd/query.h"
#include "util/err.h"

/* TestDateTime's System.currentTimeMillis() */
#define NOW INT64_C(1357300800000)

static char why[512];

static int parse(const char *qs, struct tsd_query *q)
{
	return tsd_query_parse(qs, strlen(qs), NOW, q, why, sizeof why);
}

/* The query "start=1356998400&m=sum:m{GROUP}"; rc. */
static int sub(const char *group, struct tsd_query *q)
{
	char qs[512];

	snprintf(qs, sizeof qs, "start=1356998400&m=sum:m%s", group);
	return parse(qs, q);
}

/* 1 if the query refuses m=sum:METRIC with exactly the reason want. */
static int refuses(const char *metric, const char *want)
{
	struct tsd_query q;
	int rc = sub(metric, &q);

	if (rc == CF_OK) {
		tsd_query_release(&q);
		diag("accepted: %s", metric);
		return 0;
	}
	if (strcmp(why, want))
		diag("got: %s", why);
	return rc == CF_EINVAL && !strcmp(why, want);
}

/* Whether the filter host=EXPR matches the tag value v (NULL: the series
 * has no host tag); -1 when it does not parse. */
static int match(const char *expr, const char *v)
{
	struct tsd_query q;
	char g[256];
	int hit;

	snprintf(g, sizeof g, "{host=%s}", expr);
	if (sub(g, &q)) {
		diag("%s: %s", expr, why);
		return -1;
	}
	hit = tsd_filter_match(&q.subs[0].filters[0], v, v ? strlen(v) : 0);
	tsd_query_release(&q);
	return hit;
}

static const char *const OGG = "ogg-01.ops.ankh.morpork.com";

static void not_key(void)
{
	struct tsd_query q;

	/* matchHasKey, matchDoesNotHaveKey */
	is_int(match("not_key()", OGG), 0,
	       "TestTagVNotKeyFilter.matchHasKey");
	is_int(match("not_key()", NULL), 1,
	       "TestTagVNotKeyFilter.matchDoesNotHaveKey");
	/* ctorNullFilter: an empty filter is the null one; postScan has no
	 * counterpart (cellfs filters every row) */
	ok(sub("{host=not_key()}", &q) == 0 &&
	   q.subs[0].filters[0].type == TSD_FILTER_NOT_KEY &&
	   !strcmp(q.subs[0].filters[0].text, "") &&
	   !q.subs[0].filters[0].group_by,
	   "TestTagVNotKeyFilter.ctorNullFilter: not_key() parses, never "
	   "groups");
	tsd_query_release(&q);
	ok(sub("{}{host=NOT_KEY()}", &q) == 0 &&
	   q.subs[0].filters[0].type == TSD_FILTER_NOT_KEY,
	   "the type's case does not matter (getFilter lowercases it)");
	tsd_query_release(&q);
	ok(refuses("{host=not_key(Evadne)}", "When parsing tag "
		   "'host=not_key(Evadne)': The filter must be empty for the "
		   "not_key filter"), "TestTagVNotKeyFilter.ctorFilterHasValue");
}

static void wildcard(void)
{
	static const struct {
		const char *test, *value, *expr;
		int hit;
	} c[] = {
		{ "matchAll", NULL, "wildcard(*)", 1 },
		{ "matchPostfix", NULL, "wildcard(*.morpork.com)", 1 },
		{ "matchPrefix", NULL, "wildcard(ogg*)", 1 },
		{ "matchInfix", NULL, "wildcard(ogg*com)", 1 },
		{ "matchDoubleInfix", NULL, "wildcard(ogg*ops*ank*com)", 1 },
		{ "matchTripleInfix", NULL, "wildcard(ogg*ops*com)", 1 },
		{ "matchPreAndPostfix", NULL, "wildcard(*morpork*)", 1 },
		{ "matchPostAndInfix", NULL, "wildcard(*ops*com)", 1 },
		{ "matchPostAndDoubleInfix", NULL, "wildcard(*ops*mor*com)",
		  1 },
		{ "matchPreAndInfix", NULL, "wildcard(ogg*ops*)", 1 },
		{ "matchPreAndDoubleInfix", NULL, "wildcard(ogg*ops*mor*)", 1 },
		{ "matchMultiWildcardInfix", NULL, "wildcard(ogg***com)", 1 },
		{ "matchMultiWildcardPrefix", NULL, "wildcard(ogg*****)", 1 },
		{ "matchMultiWildcardPostfix", NULL, "wildcard(****com)", 1 },
		{ "matchWildcardsEverywhere", NULL,
		  "wildcard(****ogg*****mor****com****)", 1 },
		{ "matchExactPostfix", "*ops*mor", "wildcard(*ops*mor)", 1 },
		{ "matchExactPretfix", "ogg*ops*", "wildcard(ogg*ops*)", 1 },
		{ "matchExactInfix", "ogg*ops*mor", "wildcard(ogg*ops*mor)", 1 },
		{ "matchUTF8Postfix", "Здравей'_хора", "wildcard(*хора)", 1 },
		{ "matchUTF8Prefix", "Здравей'_хора", "wildcard(Здр*)", 1 },
		{ "matchUTF8Infix", "Здравей'_хора", "wildcard(Здр*ра)", 1 },
		{ "matchPostfixFail", NULL, "wildcard(*.morpork.org)", 0 },
		{ "matchPrefixFail", NULL, "wildcard(magrat*)", 0 },
		{ "matchInfixFail", NULL, "wildcard(magrat*com)", 0 },
		{ "matchPreAndPostfixFail", NULL, "wildcard(*quirm*)", 0 },
		{ "matchPostfixCaseFail", NULL, "wildcard(*.MorPork.com)", 0 },
		{ "matchPrefixCaseFail", NULL, "wildcard(Ogg*)", 0 },
		{ "matchInfixCaseFail", NULL, "wildcard(ogG*Com)", 0 },
		{ "matchPostfixCaseInsensitive", NULL,
		  "iwildcard(*.MorPork.com)", 1 },
		{ "matchPostfixCaseInsensitiveValue",
		  "ogg-01.ops.ankh.MORPORK.com", "iwildcard(*.MorPork.com)",
		  1 },
		{ "matchPrefixCaseInsensitive", NULL, "iwildcard(Ogg*)", 1 },
		{ "matchInfixCaseInsensitive", NULL, "iwildcard(ogG*Com)", 1 },
		{ "matchNothingButStars", NULL, "wildcard(****)", 1 },
	};
	struct tsd_query q;

	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		is_int(match(c[i].expr, c[i].value ? c[i].value : OGG),
		       c[i].hit, "TestTagVWildcardFilter.%s: %s", c[i].test,
		       c[i].expr);
	/* a series without the key is not read by any query of a filter on
	 * it (OpenTSDB's scan needs the key in the row) */
	is_int(match("wildcard(*)", NULL), 0,
	       "TestTagVWildcardFilter.matchAllNoSuchKey");
	is_int(match("wildcard(*.morpork.com)", NULL), 0,
	       "TestTagVWildcardFilter.matchNoSuchTagk");
	is_int(match("iwildcard(*.morpork.com)", NULL), 0,
	       "TestTagVWildcardFilter.matchNoSuchTagkCaseInsensitive");
	/* ctorNullFilter and ctorEmptyFilter are one case here */
	ok(refuses("{host=wildcard()}", "When parsing tag 'host=wildcard()': "
		   "Filter cannot be null or empty"),
	   "TestTagVWildcardFilter.ctorEmptyFilter");
	ok(refuses("{host=wildcard(someliteral)}", "When parsing tag "
		   "'host=wildcard(someliteral)': Filter must contain an "
		   "asterisk"), "TestTagVWildcardFilter.ctorNoWildcard");
	ok(refuses("{=wildcard(*quirm*)}", "When parsing tag "
		   "'=wildcard(*quirm*)': invalid tag: =wildcard(*quirm*)"),
	   "TestTagVWildcardFilter.ctorEmptyTagk (and ctorNullTagk)");
	/* hashCodeAndEqualsTest: equal filters are one (a group-by tag
	 * equal to a filter makes that filter group) */
	ok(sub("{host=wildcard(ogg*com)}{host=wildcard(ogg*com)}", &q) == 0 &&
	   q.subs[0].nfilters == 1 && q.subs[0].filters[0].group_by,
	   "TestTagVWildcardFilter.hashCodeAndEqualsTest: a == b");
	tsd_query_release(&q);
	ok(sub("{host=wildcard(ogg*com)}{host=wildcard(*com)}", &q) == 0 &&
	   q.subs[0].nfilters == 2, "... a != c");
	tsd_query_release(&q);
	ok(sub("{host=wildcard(ogg*com)}{host=wildcard(Ogg*com)}", &q) == 0 &&
	   q.subs[0].nfilters == 2, "... a != d");
	tsd_query_release(&q);
}

static void not_literal_or(void)
{
	static const struct {
		const char *test, *value, *expr;
		int hit;
	} c[] = {
		{ "matchMiddle", NULL, "not_literal_or(LutZe|CMTDibbler|Slant)",
		  0 },
		{ "matchStart", NULL, "not_literal_or(CMTDibbler|LutZe|Slant)",
		  0 },
		{ "matchEnd", NULL, "not_literal_or(LutZe|Slant|CMTDibbler)", 0 },
		{ "matchNoPipes", NULL, "not_literal_or(CMTDibbler)", 0 },
		{ "matchPipeNoValueAfter", NULL, "not_literal_or(CMTDibbler|)",
		  0 },
		{ "matchPipeNoValueBefore", NULL, "not_literal_or(|CMTDibbler)",
		  0 },
		{ "matchFail", NULL, "not_literal_or(LutZe|Keli|Slant)", 1 },
		{ "matchFailCase", NULL, "not_literal_or(LutZe|CMtDibbler|Slant)",
		  1 },
		{ "matchCaseInsensitive", NULL,
		  "not_iliteral_or(LutZe|CMtDibbler|Slant)", 0 },
		{ "matchCaseInsensitiveFail", NULL,
		  "not_iliteral_or(LutZe|CMtDibble|Slant)", 1 },
		{ "matchSingle", NULL, "not_literal_or(CMTDibbler)", 0 },
		{ "matchSingleCaseInsensitive", NULL,
		  "not_iliteral_or(cmtDibbler)", 0 },
		{ "matchSingleCharacterTagValue", "c", "not_literal_or(c)", 0 },
	};
	struct tsd_query q;

	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		is_int(match(c[i].expr, c[i].value ? c[i].value : "CMTDibbler"),
		       c[i].hit, "TestTagVNotLiteralOrFilter.%s: %s",
		       c[i].test, c[i].expr);
	/* matchNoSuchTagk: the Java filter says true, but its query never
	 * reads such a series (the scan needs the key); cellfs's neither */
	is_int(match("not_literal_or(LutZe|Keli|Slant)", NULL), 0,
	       "TestTagVNotLiteralOrFilter.matchNoSuchTagk: the series is "
	       "not read (as OpenTSDB's scan does not read it)");
	is_int(match("not_iliteral_or(LutZe|Keli|Slant)", NULL), 0,
	       "TestTagVNotLiteralOrFilter.matchNoSuchTagkCaseInsensitive");
	ok(refuses("{=not_literal_or(LutZe|Keli|Slant)}", "When parsing tag "
		   "'=not_literal_or(LutZe|Keli|Slant)': invalid tag: "
		   "=not_literal_or(LutZe|Keli|Slant)"),
	   "TestTagVNotLiteralOrFilter.ctorEmptyTagk (and ctorNullTagk)");
	ok(refuses("{host=not_literal_or()}", "When parsing tag "
		   "'host=not_literal_or()': Filter cannot be null or empty"),
	   "TestTagVNotLiteralOrFilter.ctorEmptyFilter (and ctorNullFilter)");
	ok(refuses("{host=not_literal_or(|)}", "When parsing tag "
		   "'host=not_literal_or(|)': Filter must contain more than "
		   "just a pipe"), "TestTagVNotLiteralOrFilter.ctorJustAPipe");
	ok(sub("{host=not_literal_or(LutZe|CMTDibbler|Slant)}"
	       "{host=not_literal_or(LutZe|CMTDibbler|Slant)}", &q) == 0 &&
	   q.subs[0].nfilters == 1,
	   "TestTagVNotLiteralOrFilter.hashCodeAndEqualsTest: a == b");
	tsd_query_release(&q);
	ok(sub("{host=not_literal_or(LutZe|CMTDibbler|Slant)}"
	       "{host=not_literal_or(LutZe|Slant)}", &q) == 0 &&
	   q.subs[0].nfilters == 2, "... a != c");
	tsd_query_release(&q);
	ok(sub("{host=not_literal_or(LutZe|CMTDibbler|Slant)}"
	       "{host=not_literal_or(LutZe|cmtdibbler|Slant)}", &q) == 0 &&
	   q.subs[0].nfilters == 2, "... a != d");
	tsd_query_release(&q);
}

/* TestTagVLiteralOrFilter and the TestTagVRegexFilter cases that
 * test-tsd-query.c's table leaves out (refusals, equality) */
static void literal_or_regexp(void)
{
	static const struct {
		const char *test, *value, *expr;
		int hit;
	} c[] = {
		{ "matchMiddle", NULL, "literal_or(LutZe|CMTDibbler|Slant)", 1 },
		{ "matchStart", NULL, "literal_or(CMTDibbler|LutZe|Slant)", 1 },
		{ "matchEnd", NULL, "literal_or(LutZe|Slant|CMTDibbler)", 1 },
		{ "matchNoPipes", NULL, "literal_or(CMTDibbler)", 1 },
		{ "matchPipeNoValueAfter", NULL, "literal_or(CMTDibbler|)", 1 },
		{ "matchPipeNoValueBefore", NULL, "literal_or(|CMTDibbler)", 1 },
		{ "matchFail", NULL, "literal_or(LutZe|Keli|Slant)", 0 },
		{ "matchFailCase", NULL, "literal_or(LutZe|CMtDibbler|Slant)", 0 },
		{ "matchCaseInsensitive", NULL,
		  "iliteral_or(LutZe|CMtDibbler|Slant)", 1 },
		{ "matchCaseInsensitiveValue", "CMTDIBBLER",
		  "iliteral_or(LutZe|CMtDibbler|Slant)", 1 },
		{ "matchCaseInsensitiveFail", NULL,
		  "iliteral_or(LutZe|CMtDibble|Slant)", 0 },
		{ "matchSingle", NULL, "CMTDibbler", 1 },
		{ "matchSingleCaseInsensitive", NULL, "iliteral_or(cmtDibbler)",
		  1 },
	};
	struct tsd_query q;

	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		is_int(match(c[i].expr, c[i].value ? c[i].value : "CMTDibbler"),
		       c[i].hit, "TestTagVLiteralOrFilter.%s: %s", c[i].test,
		       c[i].expr);
	is_int(match("LutZe|Keli|Slant", NULL), 0,
	       "TestTagVLiteralOrFilter.matchNoSuchTagk");
	is_int(match("iliteral_or(LutZe|Keli|Slant)", NULL), 0,
	       "TestTagVLiteralOrFilter.matchNoSuchTagkCaseInsensitive");
	ok(refuses("{=LutZe|Keli|Slant}", "When parsing tag '=LutZe|Keli|"
		   "Slant': invalid tag: =LutZe|Keli|Slant"),
	   "TestTagVLiteralOrFilter.ctorEmptyTagk (and ctorNullTagk)");
	ok(refuses("{host=literal_or()}", "When parsing tag "
		   "'host=literal_or()': Filter cannot be null or empty"),
	   "TestTagVLiteralOrFilter.ctorEmptyFilter (and ctorNullFilter)");
	ok(refuses("{host=|}", "When parsing tag 'host=|': Filter must "
		   "contain more than just a pipe"),
	   "TestTagVLiteralOrFilter.ctorJustAPipe");
	ok(sub("{host=LutZe|CMTDibbler|Slant}{host=literal_or(LutZe|"
	       "CMTDibbler|Slant)}", &q) == 0 && q.subs[0].nfilters == 1,
	   "TestTagVLiteralOrFilter.hashCodeAndEqualsTest: a == b");
	tsd_query_release(&q);
	ok(sub("{host=LutZe|CMTDibbler|Slant}{host=LutZe|Slant}", &q) == 0 &&
	   q.subs[0].nfilters == 2, "... a != c");
	tsd_query_release(&q);
	ok(sub("{host=LutZe|CMTDibbler|Slant}{host=LutZe|cmtdibbler|Slant}",
	       &q) == 0 && q.subs[0].nfilters == 2, "... a != d");
	tsd_query_release(&q);

	ok(refuses("{=regexp(ogg-01.ops.qurim.*)}", "When parsing tag "
		   "'=regexp(ogg-01.ops.qurim.*)': invalid tag: "
		   "=regexp(ogg-01.ops.qurim.*)"),
	   "TestTagVRegexFilter.ctorEmptyTagk (and ctorNullTagk)");
	ok(refuses("{host=regexp()}", "When parsing tag 'host=regexp()': "
		   "Filter cannot be null or empty"),
	   "TestTagVRegexFilter.ctorEmptyFilter (and ctorNullFilter)");
	ok(refuses("{host=regexp(ogg-\\d(3.ops.ankh.morpork.com)}",
		   "When parsing tag 'host=regexp(ogg-\\d(3.ops.ankh.morpork."
		   "com)': bad regexp: ogg-\\d(3.ops.ankh.morpork.com: missing "
		   "closing parenthesis at offset 29"),
	   "TestTagVRegexFilter.ctorBadRegex (PCRE2's message)");
	ok(sub("{host=regexp(ogg-\\d+.ops.ankh.morpork.com)}"
	       "{host=regexp(ogg-\\d+.ops.ankh.morpork.com)}", &q) == 0 &&
	   q.subs[0].nfilters == 1,
	   "TestTagVRegexFilter.hashCodeAndEqualsTest: a == b");
	tsd_query_release(&q);
	ok(sub("{host=regexp(ogg-\\d+.ops.ankh.morpork.com)}"
	       "{host=regexp(ogg-\\d.ops.ankh.morpork.com)}", &q) == 0 &&
	   q.subs[0].nfilters == 2, "... a != c");
	tsd_query_release(&q);
	ok(sub("{host=regexp(ogg-\\d+.ops.ankh.morpork.com)}"
	       "{host=regexp(ogg-\\d+.ops.ankh.morpork.co)}", &q) == 0 &&
	   q.subs[0].nfilters == 2, "... a != d");
	tsd_query_release(&q);
}

/* The type and case of the filter host=VALUE, or -1 and the reason. */
static int filter_of(const char *value, enum tsd_filter_type *t, int *icase,
		     size_t *nvalues)
{
	struct tsd_query q;
	char g[256];

	snprintf(g, sizeof g, "{host=%s}", value);
	if (sub(g, &q))
		return -1;
	*t = q.subs[0].filters[0].type;
	*icase = q.subs[0].filters[0].icase ||
		 *t == TSD_FILTER_IWILDCARD || *t == TSD_FILTER_ILITERAL_OR;
	*nvalues = q.subs[0].filters[0].nvalues;
	tsd_query_release(&q);
	return 0;
}

static void tagv_filter(void)
{
	/* TagVFilter.getFilter: what a tag value becomes (the Java null,
	 * "a group by or a literal", is the literal_or or wildcard that
	 * mapToFilters makes of it) */
	static const struct {
		const char *test, *value;
		enum tsd_filter_type type;
		int icase;
		size_t nvalues;
	} c[] = {
		{ "getFilterGroupBy", "*", TSD_FILTER_WILDCARD, 1, 0 },
		{ "getFilterLiteral", "web01", TSD_FILTER_LITERAL_OR, 0, 1 },
		{ "getFilterGroupByPiped", "web01|web02", TSD_FILTER_LITERAL_OR,
		  0, 2 },
		{ "getFilterWildcard", "wildcard(*bonk.com)",
		  TSD_FILTER_WILDCARD, 0, 0 },
		{ "getFilterWildcardInsensitive", "iwildcard(*bonk.com)",
		  TSD_FILTER_IWILDCARD, 1, 0 },
		{ "getFilterWildcardFatfinger", "wil@*sugarbean",
		  TSD_FILTER_WILDCARD, 1, 0 },
		{ "getFilterWildcardImplicit", "*bonk.com", TSD_FILTER_WILDCARD,
		  1, 0 },
		{ "getFilterPipe", "literal_or(quirm|bonk)",
		  TSD_FILTER_LITERAL_OR, 0, 2 },
		{ "getFilterPipeInsensitive", "iliteral_or(quirm|bonk)",
		  TSD_FILTER_ILITERAL_OR, 1, 2 },
		{ "getFilterPipeFatfinger", "lite@sugarbean|granny",
		  TSD_FILTER_LITERAL_OR, 0, 2 },
		{ "getFilterRegex", "regexp(.*sugarbean)", TSD_FILTER_REGEXP, 0,
		  0 },
		{ "getFilterRegexFatFinger", "rexp@.*sugarbean",
		  TSD_FILTER_WILDCARD, 1, 0 },
		{ "getFilterRegexCase", "REGEXP(.*sugarbean)", TSD_FILTER_REGEXP,
		  0, 0 },
		{ "stripParenthesesMissingOpening", "regexp.*sugarbean)",
		  TSD_FILTER_WILDCARD, 1, 0 },
		{ "validateGroupByFilterMissingParensViaTags (TestTSSubQuery)",
		  "wildcard", TSD_FILTER_LITERAL_OR, 0, 1 },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		enum tsd_filter_type t;
		int icase, rc;
		size_t nv;
		rc = filter_of(c[i].value, &t, &icase, &nv);
		ok(rc == 0 && t == c[i].type && icase == c[i].icase &&
		   nv == c[i].nvalues, "TestTagVFilter.%s: %s %s", c[i].test,
		   c[i].value, rc ? why : "");
	}
	/* the implicit wildcard ignores case; wildcard() does not */
	is_int(match("*BONK.com", "quirm.bonk.COM"), 1,
	       "an implicit wildcard ignores case (getFilter's shortcut)");
	is_int(match("wildcard(*BONK.com)", "quirm.bonk.COM"), 0,
	       "wildcard() does not");
	ok(refuses("{host=}", "When parsing tag 'host=': invalid tag: host="),
	   "TestTagVFilter.getFilterEmptyFilter (and getFilterNullFilter)");
	ok(refuses("{=myflter}", "When parsing tag '=myflter': invalid tag: "
		   "=myflter"), "TestTagVFilter.getFilterEmptyTagk (and "
	   "getFilterNullTagk)");
	ok(refuses("{host=regexp(.*sugarbean}", "When parsing tag "
		   "'host=regexp(.*sugarbean': Filter must end with a ')': "
		   "regexp(.*sugarbean"),
	   "TestTagVFilter.getFilterMissingClosingParens "
	   "(stripParenthesesMissingClosing)");
	ok(refuses("{host=regexp()}", "When parsing tag 'host=regexp()': "
		   "Filter cannot be null or empty"),
	   "TestTagVFilter.getFilterEmptyParens "
	   "(stripParenthesesEmptyParentheses)");
	ok(refuses("{host=dummyfilter(nothere)}", "When parsing tag "
		   "'host=dummyfilter(nothere)': Could not find a tag value "
		   "filter of the type: dummyfilter"),
	   "TestTagVFilter.getFilterUnknownType");
	ok(refuses("{host=doesnotexist(*beybi)}", "When parsing tag "
		   "'host=doesnotexist(*beybi)': Could not find a tag value "
		   "filter of the type: doesnotexist"),
	   "TestTagVFilter.tagsToFiltersNoSuchFunction");
	ok(refuses("{host=(a)}", "When parsing tag 'host=(a)': The filter "
		   "type cannot be null or empty"),
	   "Builder.build: an empty type");
	ok(refuses("{}{host=Foo(a)}", "When parsing filter 'host=Foo(a)': "
		   "Could not find a tag value filter of the type: foo"),
	   "a filter group's refusal names the filter");

	struct tsd_query q;
	struct tsd_subquery *s;
	/* tagsToFiltersOldGroupBy */
	ok(sub("{host=quirm,owner=vimes|vetinary,colo=*}", &q) == 0,
	   "TestTagVFilter.tagsToFiltersOldGroupBy: %s", why);
	s = &q.subs[0];
	ok(s->nfilters == 3 && s->filters[0].type == TSD_FILTER_LITERAL_OR &&
	   s->filters[0].nvalues == 1 &&
	   s->filters[1].type == TSD_FILTER_LITERAL_OR &&
	   s->filters[1].nvalues == 2 &&
	   s->filters[2].type == TSD_FILTER_WILDCARD && s->filters[2].icase &&
	   s->filters[0].group_by && s->filters[1].group_by &&
	   s->filters[2].group_by, "... literal, pipe, group by all; all group");
	tsd_query_release(&q);
	/* tagsToFiltersNewFunctions */
	ok(sub("{host=*beybi,owner=wildcard(*snapcase*),colo=regexp(.*opolis),"
	       "geo=literal_or(tsort|chalk)}", &q) == 0,
	   "TestTagVFilter.tagsToFiltersNewFunctions: %s", why);
	s = &q.subs[0];
	ok(s->nfilters == 4 && s->filters[0].type == TSD_FILTER_WILDCARD &&
	   s->filters[0].icase && s->filters[1].type == TSD_FILTER_WILDCARD &&
	   !s->filters[1].icase && s->filters[2].type == TSD_FILTER_REGEXP &&
	   s->filters[3].type == TSD_FILTER_LITERAL_OR &&
	   s->filters[0].group_by && s->filters[3].group_by,
	   "... the four types, all grouped");
	tsd_query_release(&q);
	/* tagsToFiltersDuplicate: the filter group's *beybi (an implicit
	 * wildcard, ignoring case as the Java test's is) gets grouped */
	ok(sub("{host=*beybi}{host=*beybi}", &q) == 0 &&
	   q.subs[0].nfilters == 1 && q.subs[0].filters[0].group_by,
	   "TestTagVFilter.tagsToFiltersDuplicate");
	tsd_query_release(&q);
	ok(sub("{host=*beybi}{host=*helit}", &q) == 0 &&
	   q.subs[0].nfilters == 2 && !q.subs[0].filters[0].group_by &&
	   q.subs[0].filters[1].group_by,
	   "TestTagVFilter.tagsToFiltersSameTagDiffValues");
	tsd_query_release(&q);
	ok(sub("{host=*beybi}{host=wildcard(*beybi)}", &q) == 0 &&
	   q.subs[0].nfilters == 2,
	   "an implicit wildcard is not wildcard() (case_insensitive "
	   "differs, so equals does)");
	tsd_query_release(&q);
}

/* TestTSQuery and TestTSSubQuery: getMetricForValidate's query as a
 * query string, each test's change applied. */
static void ts_query(void)
{
	const char *base = "start=1356998400&end=1356998460&m=sum:5m-avg:"
			   "sys.cpu.0{host=*,dc=lga}";
	struct tsd_query q;
	struct tsd_subquery *s;

	ok(parse(base, &q) == 0, "TestTSQuery.validate: %s", why);
	s = &q.subs[0];
	ok(q.start_ms == INT64_C(1356998400000) &&
	   q.end_ms == INT64_C(1356998460000) &&
	   !strcmp(s->metric, "sys.cpu.0") && s->agg == TSD_AGG_SUM &&
	   s->ds_agg == TSD_AGG_AVG && s->ds_interval_ms == 300000 &&
	   !s->ds_calendar && !q.tz,
	   "... times, metric, aggregator, downsampler, no timezone");
	ok(s->nfilters == 2 && !strcmp(s->filters[0].tagk, "host") &&
	   s->filters[0].type == TSD_FILTER_WILDCARD &&
	   !strcmp(s->filters[0].text, "*") &&
	   !strcmp(s->filters[1].tagk, "dc") &&
	   s->filters[1].type == TSD_FILTER_LITERAL_OR &&
	   !strcmp(s->filters[1].text, "lga"),
	   "... tags wildcard(*) and literal_or(lga) (TestTSSubQuery.validate)");
	tsd_query_release(&q);
	ok(parse("start=1356998400&end=1356998460&m=sum:5mc-avg:sys.cpu.0"
		 "{host=*,dc=lga}&timezone=Pacific/Funafuti", &q) == 0 &&
	   q.tz && q.subs[0].ds_calendar,
	   "TestTSQuery.validateWithTimezone (useCalendar is the 'c')");
	tsd_query_release(&q);
	ok(parse("start=1356998400&end=1356998460&m=sum:sys.cpu.0"
		 "&timezone=Pacific/Funafuti", &q) == 0 &&
	   q.subs[0].ds_interval_ms == 0 && !q.subs[0].ds_calendar,
	   "TestTSQuery.validateVerifyNoDSOverrideWithCalendar "
	   "(TestTSSubQuery.validateNoDS)");
	tsd_query_release(&q);

	static const struct {
		const char *test, *qs, *why;
	} bad[] = {
		{ "TestTSQuery.validateNullStart",
		  "end=1356998460&m=sum:sys.cpu.0",
		  "Missing parameter <code>start</code>" },
		{ "TestTSQuery.validateEmptyStart",
		  "start=&end=1356998460&m=sum:sys.cpu.0",
		  "Missing parameter <code>start</code>" },
		{ "TestTSQuery.validateInvalidStart",
		  "start=Not%20a%20timestamp%20at%20all&m=sum:sys.cpu.0",
		  "Invalid time: Not a timestamp at all. Value too long: Not a "
		  "timestamp at all" },
		{ "TestTSQuery.validateNullQueries (and validateEmptyQueries)",
		  "start=1356998400&end=1356998460", "Missing sub queries" },
		{ "TestTSQuery.testHashCodeandEqualsStartInvalid",
		  "start=1h-ago&end=1356998460&m=sum:sys.cpu.0",
		  "End time [1356998460000] must be greater than the start time "
		  "[1357297200000]" },
		{ "TestTSQuery.testHashCodeandEqualsEndInvalid",
		  "start=1356998400&end=1356998300&m=sum:sys.cpu.0",
		  "End time [1356998300000] must be greater than the start time "
		  "[1356998400000]" },
		{ "an end equal to the start (OpenTSDB 2.4's <=)",
		  "start=1356998400&end=1356998400&m=sum:sys.cpu.0",
		  "End time [1356998400000] must be greater than the start time "
		  "[1356998400000]" },
		{ "TestTSSubQuery.validateNullAgg (validateEmptyAgg)",
		  "start=1356998400&m=:sys.cpu.0",
		  "Missing the aggregation function" },
		{ "TestTSSubQuery.validateBadAgg",
		  "start=1356998400&m=Notanagg:sys.cpu.0",
		  "No such aggregation function: Notanagg" },
		{ "TestTSSubQuery.testHashCodeandEqualsAggregatorNonExistant",
		  "start=1356998400&m=nosuchagg:sys.cpu.0",
		  "No such aggregation function: nosuchagg" },
		{ "TestTSSubQuery.validateNoMetricOrTsuids",
		  "start=1356998400&m=sum:{host=*}",
		  "Missing the metric or tsuids, provide at least one" },
		{ "TestTSSubQuery.validateNoMetricOrEmptyTsuids",
		  "start=1356998400&m=sum:{}",
		  "Missing the metric or tsuids, provide at least one" },
		{ "TestTSSubQuery.validateWithDownsampleNone",
		  "start=1356998400&m=sum:1m-none:sys.cpu.0",
		  "cannot use the NONE aggregator for downsampling" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = parse(bad[i].qs, &q);
		if (rc == 0)
			tsd_query_release(&q);
		ok(rc == CF_EINVAL && !strcmp(why, bad[i].why), "%s: %s",
		   bad[i].test, rc ? why : "accepted");
	}
	/* validateNullEnd, validateEmptyEnd: now */
	ok(parse("start=1356998400&m=sum:sys.cpu.0", &q) == 0 &&
	   q.end_ms == NOW, "TestTSQuery.validateNullEnd");
	tsd_query_release(&q);
	ok(parse("start=1356998400&end=&m=sum:sys.cpu.0", &q) == 0 &&
	   q.end_ms == NOW, "TestTSQuery.validateEmptyEnd");
	tsd_query_release(&q);
	/* validateBadDS: OpenTSDB's GET ignores a part it does not know
	 * ("bad" does not start with a digit); cellfs refuses it */
	ok(parse("start=1356998400&m=sum:bad:sys.cpu.0", &q) == CF_EINVAL &&
	   !strcmp(why, "unsupported query part: bad"),
	   "TestTSSubQuery.validateBadDS: %s", why);
	/* validateWithFilterViaTags, validateWithFilterAndGroupByFilter,
	 * validateWithFilterAndGroupByFilterSameTag */
	ok(parse("start=1356998400&m=sum:sys.cpu.0{host=wildcard(*nari)}",
		 &q) == 0 && q.subs[0].nfilters == 1 &&
	   q.subs[0].filters[0].type == TSD_FILTER_WILDCARD &&
	   q.subs[0].filters[0].group_by,
	   "TestTSSubQuery.validateWithFilterViaTags");
	tsd_query_release(&q);
	ok(parse("start=1356998400&m=sum:sys.cpu.0{host=wildcard(*nari)}"
		 "{colo=lga*}", &q) == 0 && q.subs[0].nfilters == 2 &&
	   !q.subs[0].filters[0].group_by && q.subs[0].filters[1].group_by,
	   "TestTSSubQuery.validateWithFilterAndGroupByFilter");
	tsd_query_release(&q);
	ok(parse("start=1356998400&m=sum:sys.cpu.0{host=wildcard(*nari)}"
		 "{host=veti*}", &q) == 0 && q.subs[0].nfilters == 2,
	   "TestTSSubQuery.validateWithFilterAndGroupByFilterSameTag");
	tsd_query_release(&q);
	ok(parse("start=1356998400&m=sum:sys.cpu.0{}{host=wildcard(*nari)}",
		 &q) == 0 && q.subs[0].nfilters == 1 &&
	   !q.subs[0].filters[0].group_by,
	   "TestTSSubQuery.validateWithFilter");
	tsd_query_release(&q);
	ok(parse("start=1356998400&tsuid=sum:5m-avg:ABCDEF", &q) == 0 &&
	   q.subs[0].ntsuids == 1 && !q.subs[0].metric &&
	   q.subs[0].ds_interval_ms == 300000, "TestTSSubQuery.validateTS");
	tsd_query_release(&q);
}

static void tags(void)
{
	struct tsd_query q;
	struct tsd_subquery *s;

	/* Tags.parseWithMetric, through m= (each tag a filter) */
	ok(sub("{host=web01}", &q) == 0 && !strcmp(q.subs[0].metric, "m") &&
	   q.subs[0].nfilters == 1 &&
	   !strcmp(q.subs[0].filters[0].text, "web01"),
	   "TestTags.parseWithMetricWTag");
	tsd_query_release(&q);
	ok(sub("{host=web01,dc=lga}", &q) == 0 && q.subs[0].nfilters == 2 &&
	   !strcmp(q.subs[0].filters[1].tagk, "dc"),
	   "TestTags.parseWithMetricWTags");
	tsd_query_release(&q);
	ok(sub("", &q) == 0 && q.subs[0].nfilters == 0,
	   "TestTags.parseWithMetricMetricOnly");
	tsd_query_release(&q);
	ok(sub("{}", &q) == 0 && q.subs[0].nfilters == 0,
	   "TestTags.parseWithMetricMetricEmptyCurlies");
	tsd_query_release(&q);
	ok(parse("start=1356998400&m=sum:sys.cpu.user%20host=web01}", &q) == 0 &&
	   !strcmp(q.subs[0].metric, "sys.cpu.user host=web01}"),
	   "TestTags.parseWithMetricMissingOpeningCurly: all of it is the "
	   "metric (no such metric when run)");
	tsd_query_release(&q);
	static const struct {
		const char *test, *metric, *why;
	} bad[] = {
		{ "parseWithMetricNullMetric", "{host=}",
		  "When parsing tag 'host=': invalid tag: host=" },
		{ "parseWithMetricNullTagv", "m{host=}",
		  "When parsing tag 'host=': invalid tag: host=" },
		{ "parseWithMetricNullTagk", "m{=web01}",
		  "When parsing tag '=web01': invalid tag: =web01" },
		{ "parseWithMetricNullTagv2", "m{host=web01,dc=}",
		  "When parsing tag 'dc=': invalid tag: dc=" },
		{ "parseWithMetricNullTagk2", "m{host=web01,=lga}",
		  "When parsing tag '=lga': invalid tag: =lga" },
		{ "parseWithMetricNullTagv3", "m{host=web01,dc=,=root}",
		  "When parsing tag 'dc=': invalid tag: dc=" },
		{ "parseWithMetricNullTagk3", "m{host=web01,=lga,owner=}",
		  "When parsing tag '=lga': invalid tag: =lga" },
		{ "parseWithMetricEmpty (parseWithMetricAndFiltersEmptyString)",
		  "", "Metric cannot be null or empty" },
		{ "parseWithMetricMissingClosingCurly", "m{host=web01",
		  "Missing '}' at the end of: m{host=web01" },
		{ "parseWithMetricMissingEquals", "m{hostweb01}",
		  "When parsing tag 'hostweb01': invalid tag: hostweb01" },
		{ "parseWithMetricMissingComma", "m{host=web01%20dc=lga}",
		  "When parsing tag 'host=web01 dc=lga': invalid tag: host=web01 "
		  "dc=lga" },
		{ "parseWithMetricTrailingComma", "m{host=web01,}",
		  "When parsing tag '': invalid tag: " },
		{ "parseWithMetricForwardComma", "m{,host=web01}",
		  "When parsing tag '': invalid tag: " },
		{ "parseWithMetricOnlyEquals", "{=}",
		  "When parsing tag '=': invalid tag: =" },
		{ "parseWithMetricAndFiltersMissingTrailingCurly",
		  "m{}{host=web01", "Missing '}' at the end of: m{}{host=web01" },
		{ "parseNoEqualSign", "m{foo}",
		  "When parsing tag 'foo': invalid tag: foo" },
		{ "parseTooManyEqualSigns", "m{foo=bar=qux}",
		  "When parsing tag 'foo=bar=qux': invalid tag: foo=bar=qux" },
		{ "parseEmptyTagName", "m{=bar}",
		  "When parsing tag '=bar': invalid tag: =bar" },
		{ "parseEmptyTagValue", "m{foo=}",
		  "When parsing tag 'foo=': invalid tag: foo=" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char qs[256];
		snprintf(qs, sizeof qs, "start=1356998400&m=sum:%s",
			 bad[i].metric);
		int rc = parse(qs, &q);
		if (rc == 0)
			tsd_query_release(&q);
		ok(rc == CF_EINVAL && !strcmp(why, bad[i].why), "TestTags.%s: "
		   "%s", bad[i].test, rc ? why : "accepted");
	}
	/* an empty tag ends the group when a filter group follows */
	ok(sub("{host=web01,}{}", &q) == 0 && q.subs[0].nfilters == 1,
	   "m{host=web01,}{} is read (the empty tag ends the group)");
	tsd_query_release(&q);

	/* TestTags.parseWithMetricAndFilters, its nine queries */
	ok(sub("{host=web01}", &q) == 0 && q.subs[0].filters[0].group_by &&
	   q.subs[0].filters[0].type == TSD_FILTER_LITERAL_OR,
	   "TestTags.parseWithMetricAndFilters: {host=web01}");
	tsd_query_release(&q);
	ok(sub("{host=*}", &q) == 0 && q.subs[0].filters[0].group_by &&
	   q.subs[0].filters[0].type == TSD_FILTER_WILDCARD, "... {host=*}");
	tsd_query_release(&q);
	ok(sub("{host=web01}{}", &q) == 0 && q.subs[0].nfilters == 1 &&
	   q.subs[0].filters[0].group_by, "... {host=web01}{}");
	tsd_query_release(&q);
	ok(sub("{host=*,owner=regexp(.*ob)}", &q) == 0 &&
	   q.subs[0].nfilters == 2 &&
	   q.subs[0].filters[1].type == TSD_FILTER_REGEXP &&
	   q.subs[0].filters[0].group_by && q.subs[0].filters[1].group_by,
	   "... {host=*,owner=regexp(.*ob)}");
	tsd_query_release(&q);
	ok(sub("{}{host=web01}", &q) == 0 && q.subs[0].nfilters == 1 &&
	   !q.subs[0].filters[0].group_by, "... {}{host=web01}");
	tsd_query_release(&q);
	ok(sub("{}{host=iliteral_or(web01|Web02)}", &q) == 0 &&
	   q.subs[0].filters[0].type == TSD_FILTER_ILITERAL_OR &&
	   !q.subs[0].filters[0].group_by,
	   "... {}{host=iliteral_or(web01|Web02)}");
	tsd_query_release(&q);
	ok(sub("{}{host=iliteral_or(web01|Web02),owner=*}", &q) == 0 &&
	   q.subs[0].nfilters == 2 && !q.subs[0].filters[0].group_by &&
	   !q.subs[0].filters[1].group_by,
	   "... {}{host=iliteral_or(web01|Web02),owner=*}");
	tsd_query_release(&q);
	ok(sub("{host=iliteral_or(web01|Web02)}{owner=*}", &q) == 0, "... "
	   "{host=iliteral_or(web01|Web02)}{owner=*}: %s", why);
	s = &q.subs[0];
	ok(s->nfilters == 2 && !strcmp(s->filters[0].tagk, "owner") &&
	   !s->filters[0].group_by && s->filters[1].group_by &&
	   s->filters[1].type == TSD_FILTER_ILITERAL_OR,
	   "... owner filters only, host groups");
	tsd_query_release(&q);
	/* parseDifferentValues: a put line refuses a key given twice with
	 * two values (Tags.parse's duplicate); parseSameValues: one */
	struct tsd_line l;
	const char *line = "m 1356998400 1 foo=bar foo=qux";
	ok(tsd_line_parse(line, strlen(line), NULL, 0, &l, why, sizeof why) ==
	   CF_EINVAL, "TestTags.parseDifferentValues (a put line): %s", why);
	line = "m 1356998400 1 foo=bar foo=bar";
	ok(tsd_line_parse(line, strlen(line), NULL, 0, &l, why, sizeof why) ==
	   CF_OK && l.ntags == 1, "TestTags.parseSameValues (a put line)");
	line = "m 1356998400 1 foo=bar qux=baz";
	ok(tsd_line_parse(line, strlen(line), NULL, 0, &l, why, sizeof why) ==
	   CF_OK && l.ntags == 2, "TestTags.parseSuccessful (a put line)");
	/* a query's tags may repeat a key: each is a filter, all must pass
	 * (parseWithMetricAndFilters parses each into a new map) */
	ok(sub("{foo=bar,foo=qux}", &q) == 0 && q.subs[0].nfilters == 2,
	   "a query's key given twice: two filters");
	tsd_query_release(&q);

	/* validateString: tsd_name_valid */
	ok(tsd_name_valid("omg-TSDB/42._foo_", 17),
	   "TestTags.validateGoodString");
	ok(!tsd_name_valid("this is a test!", 15), "TestTags.validateBadString");
	ok(!tsd_name_valid("", 0), "validateString: an empty string");
	ok(tsd_name_valid("Здравей", strlen("Здравей")),
	   "validateString: Character.isLetter");

	/* setAllowSpecialChars: tsd_name_allow (process-wide, as Tags's) */
	ok(!tsd_name_valid("a!", 2) && !strcmp(tsd_name_allowed(), ""),
	   "TestTags.setAllowSpecialChars: none by default");
	ok(tsd_name_allow(NULL) == 0 && !tsd_name_valid("a!", 2),
	   "... null allows none");
	ok(tsd_name_allow("") == 0 && !tsd_name_valid("a!", 2),
	   "... nor does empty");
	ok(tsd_name_allow("!)(%") == 0 && tsd_name_valid("a!", 2) &&
	   tsd_name_valid("(a)", 3) && tsd_name_valid("50%", 3) &&
	   !tsd_name_valid("a b", 3) && !strcmp(tsd_name_allowed(), "!)(%"),
	   "... \"!)(%%\" allows !, ( and %%, not space");
	ok(tsd_name_valid("omg-TSDB/42._foo_", 17) &&
	   !tsd_name_valid("this is a test!", 15),
	   "... the rule's characters still, the rest still not");
	ok(tsd_name_allow("\xc2\xb0") == 0 && tsd_name_valid("20\xc2\xb0", 4),
	   "... a character beyond ASCII (a degree sign)");
	ok(tsd_name_allow("\xff") == CF_EINVAL &&
	   tsd_name_valid("20\xc2\xb0", 4), "... not UTF-8: refused, "
	   "nothing changed");
	line = "m! 1356998400 1 host=a(1)";
	ok(tsd_name_allow("!()") == 0 &&
	   tsd_line_parse(line, strlen(line), NULL, 0, &l, why, sizeof why) ==
	   CF_OK, "... put lines take them: %s", why);
	ok(tsd_name_allow("") == 0 && tsd_line_parse(line, strlen(line), NULL,
						     0, &l, why, sizeof why) ==
	   CF_EINVAL && !strcmp(why, "invalid tag value: a(1)"),
	   "... and refuse them again after: %s", why);

	/* parseLong: tsd_parse_long */
	static const struct {
		const char *test, *s;
		int64_t v;
	} lg[] = {
		{ "Simple", "0", 0 }, { "Simple", "+0", 0 },
		{ "Simple", "-0", 0 }, { "Simple", "1", 1 },
		{ "Simple", "+1", 1 }, { "Simple", "-1", -1 },
		{ "Simple", "4242", 4242 }, { "Simple", "+4242", 4242 },
		{ "Simple", "-4242", -4242 },
		{ "MaxValue", "9223372036854775807", INT64_MAX },
		{ "MinValue", "-9223372036854775808", INT64_MIN },
	};
	for (size_t i = 0; i < sizeof lg / sizeof lg[0]; i++) {
		int64_t v;
		ok(tsd_parse_long(lg[i].s, strlen(lg[i].s), &v) == 0 &&
		   v == lg[i].v, "TestTags.parseLong%s: %s", lg[i].test,
		   lg[i].s);
	}
	static const char *const lbad[][2] = {
		{ "EmptyString", "" }, { "Malformed", "42a51" },
		{ "MalformedPlus", "+" }, { "MalformedMinus", "-" },
		{ "ValueTooLarge", "18446744073709551616" },
		{ "ValueTooLargeSubtle", "9223372036854775808" },
		{ "ValueTooSmallSubtle", "-9223372036854775809" },
	};
	for (size_t i = 0; i < sizeof lbad / sizeof lbad[0]; i++) {
		int64_t v;
		is_int(tsd_parse_long(lbad[i][1], strlen(lbad[i][1]), &v),
		       CF_EINVAL, "TestTags.parseLong%s refuses '%s'",
		       lbad[i][0], lbad[i][1]);
	}
}

static void date_time(void)
{
	static const struct {
		const char *test, *s;
		int64_t ms;
	} good[] = {
		{ "parseDateTimeStringNow", "now", NOW },
		{ "parseDateTimeStringRelativeS", "60s-ago", NOW - 60000 },
		{ "parseDateTimeStringRelativeM", "1m-ago", NOW - 60000 },
		{ "parseDateTimeStringRelativeH", "2h-ago", NOW - 7200000 },
		{ "parseDateTimeStringRelativeD", "2d-ago",
		  NOW - INT64_C(172800000) },
		{ "parseDateTimeStringRelativeD30", "30d-ago",
		  NOW - INT64_C(2592000000) },
		{ "parseDateTimeStringRelativeW", "3w-ago",
		  NOW - INT64_C(1814400000) },
		{ "parseDateTimeStringRelativeN", "2n-ago",
		  NOW - INT64_C(5184000000) },
		{ "parseDateTimeStringRelativeY", "2y-ago",
		  NOW - INT64_C(63072000000) },
		{ "isRelativeDateCase", "1H-AGO", NOW - 3600000 },
		{ "parseDateTimeStringUnixSeconds", "1355961600",
		  INT64_C(1355961600000) },
		{ "parseDateTimeStringUnixSecondsZero", "0", 0 },
		{ "parseDateTimeStringUnixSecondsInvalidLong", "13559616000",
		  INT64_C(13559616000) },
		{ "parseDateTimeStringUnixMS", "1355961603418",
		  INT64_C(1355961603418) },
		{ "parseDateTimeStringShortExplicitMS", "123123ms", 123123 },
		{ "parseDateTimeStringExplicitMS", "1234567890123ms",
		  INT64_C(1234567890123) },
		{ "parseDateTimeStringUnixMSDot", "1355961603.418",
		  INT64_C(1355961603418) },
		/* OpenTSDB drops the dot: 135596160341 and 13559616034; cellfs
		 * reads tenths and hundredths (docs/api.md) */
		{ "parseDateTimeStringUnixMSDotShorter (differs)",
		  "1355961603.41", INT64_C(1355961603410) },
		{ "parseDateTimeStringUnixMSDotShortest (differs)",
		  "1355961603.4", INT64_C(1355961603400) },
		{ "parseDateTimeStringDate", "2012/12/20",
		  INT64_C(1355961600000) },
		{ "parseDateTimeStringDateTimeShort", "2012/12/20 12:42",
		  INT64_C(1356007320000) },
		{ "parseDateTimeStringDateTimeDashShort", "2012/12/20-12:42",
		  INT64_C(1356007320000) },
		{ "parseDateTimeStringDateTime", "2012/12/20 12:42:42",
		  INT64_C(1356007362000) },
		{ "parseDateTimeStringDateTimeDash", "2012/12/20-12:42:42",
		  INT64_C(1356007362000) },
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		int64_t ms = -1;
		int rc = tsd_parse_time(good[i].s, strlen(good[i].s), NOW, &ms);
		ok(rc == 0 && ms == good[i].ms, "TestDateTime.%s: %s = %lld",
		   good[i].test, good[i].s, (long long)ms);
	}

	/* refusals, through start= for OpenTSDB's messages */
	static const struct {
		const char *test, *s, *why;
	} bad[] = {
		{ "parseDateTimeStringUnixSecondsNegative", "-135596160",
		  "Invalid time: -135596160. Negative timestamps are not "
		  "supported." },
		{ "parseDateTimeStringMultipleDots", "1234567890.2.4",
		  "Invalid time: 1234567890.2.4. Millisecond timestamps must be "
		  "in the format <seconds>.<ms> where the milliseconds are "
		  "limited to 3 digits" },
		{ "parseDateTimeStringMultipleDotsEarlyDot", "1234.56789.123",
		  "Invalid time: 1234.56789.123. Millisecond timestamps must be "
		  "in the format <seconds>.<ms> where the milliseconds are "
		  "limited to 3 digits" },
		{ "parseDateTimeStringEarlyandExtraDots", "1234.56789.0.3",
		  "Invalid time: 1234.56789.0.3. Millisecond timestamps must be "
		  "in the format <seconds>.<ms> where the milliseconds are "
		  "limited to 3 digits" },
		{ "parseDateTimeStringUnixMSDotInvalid", "135596160.418",
		  "Invalid time: 135596160.418. Millisecond timestamps must be "
		  "in the format <seconds>.<ms> where the milliseconds are "
		  "limited to 3 digits" },
		{ "parseDateTimeStringUnixMSDotInvalid2", "1355961603.4180",
		  "Invalid time: 1355961603.4180. Millisecond timestamps must "
		  "be in the format <seconds>.<ms> where the milliseconds are "
		  "limited to 3 digits" },
		{ "parseDateTimeStringTooBig", "1355961603587168438418",
		  "Invalid time: 1355961603587168438418. Value too long: "
		  "1355961603587168438418" },
		{ "parseDateTimeStringBadFormat", "2012/12/",
		  "Invalid absolute date: 2012/12/" },
		{ "parseDateTimeStringBadRelative", "1s",
		  "Invalid time: 1s. Invalid character 's' in 1s" },
		{ "parseDurationTooLong", "4611686018427387904y-ago",
		  "Duration must be < Long.MAX_VALUE ms: 4611686018427387904y" },
		{ "parseDurationNegative", "-60s-ago",
		  "Invalid duration (number): -60s" },
		{ "parseDurationBad", "foo60s-ago",
		  "Invalid duration (number): foo60s" },
		{ "parseDurationInvalidSuffix", "60p-ago",
		  "Invalid duration (suffix): 60p" },
		{ "parseDurationTooBig", "6393590450230209347573980s-ago",
		  "Invalid duration (number): 6393590450230209347573980s" },
		{ "parseDuration: no unit", "42-ago",
		  "Invalid duration, must have an integer and unit: 42" },
		{ "parseDuration: zero", "0s-ago",
		  "Zero or negative duration: 0s" },
		{ "parseDuration: empty", "-ago",
		  "Cannot parse null or empty duration" },
		{ "a date SimpleDateFormat cannot read", "2012/1x/20",
		  "Invalid date: 2012/1x/20. Unparseable date: \"2012/1x/20\"" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct tsd_query q;
		char qs[256];
		int64_t ms;
		snprintf(qs, sizeof qs, "start=%s&m=sum:m", bad[i].s);
		int rc = parse(qs, &q);
		if (rc == 0)
			tsd_query_release(&q);
		ok(rc == CF_EINVAL && !strcmp(why, bad[i].why) &&
		   tsd_parse_time(bad[i].s, strlen(bad[i].s), NOW, &ms) ==
		   CF_EINVAL, "TestDateTime.%s: %s", bad[i].test,
		   rc ? why : "accepted");
	}

	/* getTimezone, getTimezoneNull, setTimeZoneBadTZ: tsd_tz_load */
	struct tsd_tz *tz = NULL;
	ok(tsd_tz_load("America/Los_Angeles", &tz) == 0 && tz,
	   "TestDateTime.getTimezone: America/Los_Angeles");
	tsd_tz_free(tz);
	is_int(tsd_tz_load("Nothere", &tz), CF_ENOTFOUND,
	       "TestDateTime.getTimezoneNull (setTimeZoneBadTZ): Nothere");
	{
		struct tsd_query q;
		ok(parse("start=1356998400&m=sum:m&timezone=NotHere", &q) ==
		   CF_EINVAL && !strcmp(why, "unknown timezone: NotHere"),
		   "... a query with it is refused: %s", why);
	}

	/* parseDuration */
	static const struct {
		const char *test, *s;
		int64_t ms;
	} dur[] = {
		{ "MS", "60ms", 60 }, { "S", "60s", 60000 },
		{ "Case", "60S", 60000 }, { "M", "60m", 3600000 },
		{ "H", "24h", 86400000 }, { "D", "1d", 86400000 },
		{ "W", "1w", 604800000 }, { "N", "1n", INT64_C(2592000000) },
		{ "Y", "2y", INT64_C(63072000000) },
		{ "LongMS", "4294967296ms", INT64_C(4294967296) },
	};
	for (size_t i = 0; i < sizeof dur / sizeof dur[0]; i++) {
		int64_t ms = -1;
		ok(tsd_parse_duration(dur[i].s, strlen(dur[i].s), &ms) == 0 &&
		   ms == dur[i].ms, "TestDateTime.parseDuration%s: %s = %lld",
		   dur[i].test, dur[i].s, (long long)ms);
	}
	static const char *const dbad[][2] = {
		{ "TooLong", "4611686018427387904y" }, { "Negative", "-60s" },
		{ "Bad", "foo60s" }, { "InvalidSuffix", "60p" },
		{ "TooBig", "6393590450230209347573980s" },
		{ " (empty)", "" }, { " (no unit)", "42" }, { " (zero)", "0s" },
	};
	for (size_t i = 0; i < sizeof dbad / sizeof dbad[0]; i++) {
		int64_t ms;
		is_int(tsd_parse_duration(dbad[i][1], strlen(dbad[i][1]), &ms),
		       CF_EINVAL, "TestDateTime.parseDuration%s refuses '%s'",
		       dbad[i][0], dbad[i][1]);
	}
	/* parseDateTimeStringNull, parseDateTimeStringEmpty: -1 in Java, a
	 * start or end not given in a query (TestTSQuery.validateEmptyStart
	 * and validateEmptyEnd) */
	{
		int64_t ms;
		is_int(tsd_parse_time("", 0, NOW, &ms), CF_EINVAL,
		       "TestDateTime.parseDateTimeStringEmpty (and Null)");
		ok(tsd_parse_time("1355961600", 10, NOW, &ms) == 0 &&
		   ms == INT64_C(1355961600000),
		   "TestDateTime.isRelativeDateNot: 1355961600 is absolute");
	}
}

/* TestDateTime.previousInterval*: tsd_cal_previous, the calendar
 * downsampling's interval starts (Calendar.WEEK_OF_YEAR is left out: no
 * downsampling unit maps to it; the refusals of a negative time, interval
 * or unit too: the C function takes neither, and no query can pass one) */
static void previous_interval(void)
{
	/* Fri, 15 May 2015 14:21:13.432 UTC; Tue, 15 Dec 2015 04:02:25.123 */
	const int64_t NON_DST_TS = INT64_C(1431699673432);
	const int64_t DST_TS = INT64_C(1450152145123);
	enum { UTC, AF, NZ, TV, FJ, NZONES };
	static const char *const names[NZONES] = {
		NULL, "Asia/Kabul", "Pacific/Chatham", "Pacific/Funafuti",
		"Pacific/Fiji",
	};
	struct tsd_tz *z[NZONES] = { NULL };
	const struct {
		const char *test;
		int64_t want, ts;
		int n;
		enum tsd_cal_unit unit;
		int zone;
	} c[] = {
		{ "Milliseconds", DST_TS, DST_TS, 1, TSD_CAL_MS, UTC },
		{ "Milliseconds", NON_DST_TS, NON_DST_TS, 1, TSD_CAL_MS, UTC },
		{ "Milliseconds", INT64_C(1450152145100), DST_TS, 100, TSD_CAL_MS, UTC },
		{ "Milliseconds", INT64_C(1450152145000), INT64_C(1450152145000), 100, TSD_CAL_MS, UTC },
		{ "Milliseconds", INT64_C(1450152144769), DST_TS, 799, TSD_CAL_MS, UTC },
		{ "Milliseconds", INT64_C(1450152145100), DST_TS, 100, TSD_CAL_MS, AF },
		{ "Milliseconds", INT64_C(1431699673400), NON_DST_TS, 100, TSD_CAL_MS, AF },
		{ "Milliseconds", INT64_C(1450152145100), DST_TS, 100, TSD_CAL_MS, NZ },
		{ "Milliseconds", INT64_C(1431699673400), NON_DST_TS, 100, TSD_CAL_MS, NZ },
		{ "Milliseconds", INT64_C(1450152145100), DST_TS, 100, TSD_CAL_MS, TV },
		{ "Milliseconds", INT64_C(1431699673400), NON_DST_TS, 100, TSD_CAL_MS, TV },
		{ "Milliseconds", INT64_C(1450152145100), DST_TS, 100, TSD_CAL_MS, FJ },
		{ "Milliseconds", INT64_C(1431699673400), NON_DST_TS, 100, TSD_CAL_MS, FJ },
		{ "Milliseconds", INT64_C(1450152120000), DST_TS, 60000, TSD_CAL_MS, UTC },
		{ "Milliseconds", INT64_C(1431699660000), NON_DST_TS, 60000, TSD_CAL_MS, UTC },
		{ "Seconds", INT64_C(1450152145000), DST_TS, 1, TSD_CAL_SECOND, UTC },
		{ "Seconds", INT64_C(1431699673000), NON_DST_TS, 1, TSD_CAL_SECOND, UTC },
		{ "Seconds", INT64_C(1450152120000), DST_TS, 30, TSD_CAL_SECOND, UTC },
		{ "Seconds", INT64_C(1431699660000), NON_DST_TS, 30, TSD_CAL_SECOND, UTC },
		{ "Seconds", INT64_C(1450152120000), INT64_C(1450152120000), 30, TSD_CAL_SECOND, UTC },
		{ "Seconds", INT64_C(1431699647000), NON_DST_TS, 29, TSD_CAL_SECOND, UTC },
		{ "Seconds", INT64_C(1450152145000), DST_TS, 29, TSD_CAL_SECOND, UTC },
		{ "Seconds", INT64_C(1450152120000), DST_TS, 30, TSD_CAL_SECOND, AF },
		{ "Seconds", INT64_C(1431699660000), NON_DST_TS, 30, TSD_CAL_SECOND, AF },
		{ "Seconds", INT64_C(1450152120000), DST_TS, 30, TSD_CAL_SECOND, NZ },
		{ "Seconds", INT64_C(1431699660000), NON_DST_TS, 30, TSD_CAL_SECOND, NZ },
		{ "Seconds", INT64_C(1450152120000), DST_TS, 30, TSD_CAL_SECOND, TV },
		{ "Seconds", INT64_C(1431699660000), NON_DST_TS, 30, TSD_CAL_SECOND, TV },
		{ "Seconds", INT64_C(1450152120000), DST_TS, 30, TSD_CAL_SECOND, FJ },
		{ "Seconds", INT64_C(1431699660000), NON_DST_TS, 30, TSD_CAL_SECOND, FJ },
		{ "Seconds", INT64_C(1450152000000), DST_TS, 60000, TSD_CAL_SECOND, UTC },
		{ "Seconds", INT64_C(1431698400000), NON_DST_TS, 60000, TSD_CAL_SECOND, UTC },
		{ "Minutes", INT64_C(1450152120000), DST_TS, 1, TSD_CAL_MINUTE, UTC },
		{ "Minutes", INT64_C(1431699660000), NON_DST_TS, 1, TSD_CAL_MINUTE, UTC },
		{ "Minutes", INT64_C(1450152000000), DST_TS, 30, TSD_CAL_MINUTE, UTC },
		{ "Minutes", INT64_C(1431698400000), NON_DST_TS, 30, TSD_CAL_MINUTE, UTC },
		{ "Minutes", INT64_C(1431698400000), INT64_C(1431698400000), 30, TSD_CAL_MINUTE, UTC },
		{ "Minutes", INT64_C(1431698460000), NON_DST_TS, 29, TSD_CAL_MINUTE, UTC },
		{ "Minutes", INT64_C(1450151520000), DST_TS, 29, TSD_CAL_MINUTE, UTC },
		{ "Minutes", INT64_C(1450152000000), DST_TS, 30, TSD_CAL_MINUTE, AF },
		{ "Minutes", INT64_C(1431698400000), NON_DST_TS, 30, TSD_CAL_MINUTE, AF },
		{ "Minutes", INT64_C(1450152000000), DST_TS, 15, TSD_CAL_MINUTE, AF },
		{ "Minutes", INT64_C(1431699300000), NON_DST_TS, 15, TSD_CAL_MINUTE, AF },
		{ "Minutes", INT64_C(1450151100000), DST_TS, 30, TSD_CAL_MINUTE, NZ },
		{ "Minutes", INT64_C(1431699300000), NON_DST_TS, 30, TSD_CAL_MINUTE, NZ },
		{ "Minutes", INT64_C(1450152000000), DST_TS, 30, TSD_CAL_MINUTE, TV },
		{ "Minutes", INT64_C(1431698400000), NON_DST_TS, 30, TSD_CAL_MINUTE, TV },
		{ "Minutes", INT64_C(1450152000000), DST_TS, 30, TSD_CAL_MINUTE, FJ },
		{ "Minutes", INT64_C(1431698400000), NON_DST_TS, 30, TSD_CAL_MINUTE, FJ },
		{ "Minutes", INT64_C(1450152000000), DST_TS, 120, TSD_CAL_MINUTE, UTC },
		{ "Minutes", INT64_C(1431698400000), NON_DST_TS, 120, TSD_CAL_MINUTE, UTC },
		{ "Hours", INT64_C(1450152000000), DST_TS, 1, TSD_CAL_HOUR, UTC },
		{ "Hours", INT64_C(1431698400000), NON_DST_TS, 1, TSD_CAL_HOUR, UTC },
		{ "Hours", INT64_C(1450137600000), DST_TS, 12, TSD_CAL_HOUR, UTC },
		{ "Hours", INT64_C(1431691200000), NON_DST_TS, 12, TSD_CAL_HOUR, UTC },
		{ "Hours", INT64_C(1450137600000), INT64_C(1450137600000), 12, TSD_CAL_HOUR, UTC },
		{ "Hours", INT64_C(1431680400000), NON_DST_TS, 15, TSD_CAL_HOUR, UTC },
		{ "Hours", INT64_C(1450116000000), DST_TS, 15, TSD_CAL_HOUR, UTC },
		{ "Hours", INT64_C(1450121400000), DST_TS, 12, TSD_CAL_HOUR, AF },
		{ "Hours", INT64_C(1431675000000), NON_DST_TS, 12, TSD_CAL_HOUR, AF },
		{ "Hours", INT64_C(1450131300000), DST_TS, 12, TSD_CAL_HOUR, NZ },
		{ "Hours", INT64_C(1431688500000), NON_DST_TS, 12, TSD_CAL_HOUR, NZ },
		{ "Hours", INT64_C(1450137600000), DST_TS, 12, TSD_CAL_HOUR, TV },
		{ "Hours", INT64_C(1431691200000), NON_DST_TS, 12, TSD_CAL_HOUR, TV },
		{ "Hours", INT64_C(1450134000000), DST_TS, 12, TSD_CAL_HOUR, FJ },
		{ "Hours", INT64_C(1431691200000), NON_DST_TS, 12, TSD_CAL_HOUR, FJ },
		{ "Hours", INT64_C(1450094400000), DST_TS, 36, TSD_CAL_HOUR, UTC },
		{ "Hours", INT64_C(1431604800000), NON_DST_TS, 36, TSD_CAL_HOUR, UTC },
		{ "Days", INT64_C(1450137600000), DST_TS, 1, TSD_CAL_DAY, UTC },
		{ "Days", INT64_C(1431648000000), NON_DST_TS, 1, TSD_CAL_DAY, UTC },
		{ "Days", INT64_C(1449705600000), DST_TS, 7, TSD_CAL_DAY, UTC },
		{ "Days", INT64_C(1431561600000), NON_DST_TS, 7, TSD_CAL_DAY, UTC },
		{ "Days", INT64_C(1449705600000), INT64_C(1449705600000), 7, TSD_CAL_DAY, UTC },
		{ "Days", INT64_C(1330473600000), INT64_C(1330516800000), 1, TSD_CAL_DAY, UTC },
		{ "Days", INT64_C(1450121400000), DST_TS, 1, TSD_CAL_DAY, AF },
		{ "Days", INT64_C(1431631800000), NON_DST_TS, 1, TSD_CAL_DAY, AF },
		{ "Days", INT64_C(1450088100000), DST_TS, 1, TSD_CAL_DAY, NZ },
		{ "Days", INT64_C(1431688500000), NON_DST_TS, 1, TSD_CAL_DAY, NZ },
		{ "Days", INT64_C(1450094400000), DST_TS, 1, TSD_CAL_DAY, TV },
		{ "Days", INT64_C(1431691200000), NON_DST_TS, 1, TSD_CAL_DAY, TV },
		{ "Days", INT64_C(1450090800000), DST_TS, 1, TSD_CAL_DAY, FJ },
		{ "Days", INT64_C(1431691200000), NON_DST_TS, 1, TSD_CAL_DAY, FJ },
		{ "Days", INT64_C(1445990400000), DST_TS, 60, TSD_CAL_DAY, UTC },
		{ "Days", INT64_C(1430438400000), NON_DST_TS, 60, TSD_CAL_DAY, UTC },
		{ "Weeks", INT64_C(1449964800000), DST_TS, 1, TSD_CAL_WEEK, UTC },
		{ "Weeks", INT64_C(1431216000000), NON_DST_TS, 1, TSD_CAL_WEEK, UTC },
		{ "Weeks", INT64_C(1449964800000), DST_TS, 2, TSD_CAL_WEEK, UTC },
		{ "Weeks", INT64_C(1431216000000), NON_DST_TS, 2, TSD_CAL_WEEK, UTC },
		{ "Weeks", INT64_C(1435449600000), INT64_C(1435795200000), 2, TSD_CAL_WEEK, UTC },
		{ "Weeks", INT64_C(1449948600000), DST_TS, 1, TSD_CAL_WEEK, AF },
		{ "Weeks", INT64_C(1431199800000), NON_DST_TS, 1, TSD_CAL_WEEK, AF },
		{ "Weeks", INT64_C(1449915300000), DST_TS, 1, TSD_CAL_WEEK, NZ },
		{ "Weeks", INT64_C(1431170100000), NON_DST_TS, 1, TSD_CAL_WEEK, NZ },
		{ "Weeks", INT64_C(1449921600000), DST_TS, 1, TSD_CAL_WEEK, TV },
		{ "Weeks", INT64_C(1431172800000), NON_DST_TS, 1, TSD_CAL_WEEK, TV },
		{ "Weeks", INT64_C(1449918000000), DST_TS, 1, TSD_CAL_WEEK, FJ },
		{ "Weeks", INT64_C(1431172800000), NON_DST_TS, 1, TSD_CAL_WEEK, FJ },
		{ "Weeks", INT64_C(1449964800000), DST_TS, 104, TSD_CAL_WEEK, UTC },
		{ "Weeks", INT64_C(1431216000000), NON_DST_TS, 104, TSD_CAL_WEEK, UTC },
		{ "Months", INT64_C(1448928000000), DST_TS, 1, TSD_CAL_MONTH, UTC },
		{ "Months", INT64_C(1430438400000), NON_DST_TS, 1, TSD_CAL_MONTH, UTC },
		{ "Months", INT64_C(1443657600000), DST_TS, 3, TSD_CAL_MONTH, UTC },
		{ "Months", INT64_C(1427846400000), NON_DST_TS, 3, TSD_CAL_MONTH, UTC },
		{ "Months", INT64_C(1443657600000), INT64_C(1443657600000), 3, TSD_CAL_MONTH, UTC },
		{ "Months", INT64_C(1446336000000), DST_TS, 5, TSD_CAL_MONTH, UTC },
		{ "Months", INT64_C(1420070400000), NON_DST_TS, 5, TSD_CAL_MONTH, UTC },
		{ "Months", INT64_C(1448911800000), DST_TS, 1, TSD_CAL_MONTH, AF },
		{ "Months", INT64_C(1430422200000), NON_DST_TS, 1, TSD_CAL_MONTH, AF },
		{ "Months", INT64_C(1448878500000), DST_TS, 1, TSD_CAL_MONTH, NZ },
		{ "Months", INT64_C(1430392500000), NON_DST_TS, 1, TSD_CAL_MONTH, NZ },
		{ "Months", INT64_C(1448884800000), DST_TS, 1, TSD_CAL_MONTH, TV },
		{ "Months", INT64_C(1430395200000), NON_DST_TS, 1, TSD_CAL_MONTH, TV },
		{ "Months", INT64_C(1448881200000), DST_TS, 1, TSD_CAL_MONTH, FJ },
		{ "Months", INT64_C(1430395200000), NON_DST_TS, 1, TSD_CAL_MONTH, FJ },
		{ "Months", INT64_C(1420070400000), DST_TS, 24, TSD_CAL_MONTH, UTC },
		{ "Months", INT64_C(1420070400000), NON_DST_TS, 24, TSD_CAL_MONTH, UTC },
		{ "Years", INT64_C(1420070400000), DST_TS, 1, TSD_CAL_YEAR, UTC },
		{ "Years", INT64_C(1420070400000), NON_DST_TS, 1, TSD_CAL_YEAR, UTC },
		{ "Years", INT64_C(1420070400000), DST_TS, 5, TSD_CAL_YEAR, UTC },
		{ "Years", INT64_C(1420070400000), NON_DST_TS, 5, TSD_CAL_YEAR, UTC },
		{ "Years", INT64_C(1420070400000), INT64_C(1420070400000), 5, TSD_CAL_YEAR, UTC },
		{ "Years", INT64_C(1420054200000), DST_TS, 1, TSD_CAL_YEAR, AF },
		{ "Years", INT64_C(1420054200000), NON_DST_TS, 1, TSD_CAL_YEAR, AF },
		{ "Years", INT64_C(1420020900000), DST_TS, 1, TSD_CAL_YEAR, NZ },
		{ "Years", INT64_C(1420020900000), NON_DST_TS, 1, TSD_CAL_YEAR, NZ },
		{ "Years", INT64_C(1420027200000), DST_TS, 1, TSD_CAL_YEAR, TV },
		{ "Years", INT64_C(1420027200000), NON_DST_TS, 1, TSD_CAL_YEAR, TV },
		{ "Years", INT64_C(1420023600000), DST_TS, 1, TSD_CAL_YEAR, FJ },
		{ "Years", INT64_C(1420023600000), NON_DST_TS, 1, TSD_CAL_YEAR, FJ },
	};

	for (int i = 1; i < NZONES; i++)
		ok(tsd_tz_load(names[i], &z[i]) == 0, "zone %s", names[i]);
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		int64_t got = tsd_cal_previous(z[c[i].zone], c[i].ts, c[i].n,
					       c[i].unit);
		ok(got == c[i].want, "TestDateTime.previousInterval%s: %d of "
		   "unit %d in %s: %lld (want %lld)", c[i].test, c[i].n,
		   (int)c[i].unit, names[c[i].zone] ? names[c[i].zone] : "UTC",
		   (long long)got, (long long)c[i].want);
	}
	for (int i = 1; i < NZONES; i++)
		tsd_tz_free(z[i]);
}

int main(void)
{
	not_key();
	wildcard();
	not_literal_or();
	literal_or_regexp();
	tagv_filter();
	ts_query();
	tags();
	date_time();
	previous_interval();
	return done_testing();
}
