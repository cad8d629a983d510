/*
 * query.c: parsing OpenTSDB query strings (grammar in query.h).
 *
 * Each function that can fail takes (why, whylen) and writes one reason;
 * tsd_query_parse() releases everything on failure, so the helpers may
 * leave partly built structures in q.
 */
#include <ctype.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "tsd/codec.h"
#include "tsd/number.h"
#include "tsd/query.h"
#include "util/err.h"

static const struct {
	const char *name;
	enum tsd_interp interp;
} aggs[TSD_AGG_COUNT_ALL] = {
	[TSD_AGG_SUM] = { "sum", TSD_INTERP_LERP },
	[TSD_AGG_PFSUM] = { "pfsum", TSD_INTERP_PREV },
	[TSD_AGG_MIN] = { "min", TSD_INTERP_LERP },
	[TSD_AGG_MAX] = { "max", TSD_INTERP_LERP },
	[TSD_AGG_AVG] = { "avg", TSD_INTERP_LERP },
	[TSD_AGG_MEDIAN] = { "median", TSD_INTERP_LERP },
	[TSD_AGG_NONE] = { "none", TSD_INTERP_ZIM },
	[TSD_AGG_MULT] = { "mult", TSD_INTERP_LERP },
	[TSD_AGG_DEV] = { "dev", TSD_INTERP_LERP },
	[TSD_AGG_DIFF] = { "diff", TSD_INTERP_LERP },
	[TSD_AGG_ZIMSUM] = { "zimsum", TSD_INTERP_ZIM },
	[TSD_AGG_MIMMIN] = { "mimmin", TSD_INTERP_MAX },
	[TSD_AGG_MIMMAX] = { "mimmax", TSD_INTERP_MIN },
	[TSD_AGG_SQUARESUM] = { "squareSum", TSD_INTERP_ZIM },
	[TSD_AGG_COUNT] = { "count", TSD_INTERP_ZIM },
	[TSD_AGG_FIRST] = { "first", TSD_INTERP_ZIM },
	[TSD_AGG_LAST] = { "last", TSD_INTERP_ZIM },
	[TSD_AGG_P999] = { "p999", TSD_INTERP_LERP },
	[TSD_AGG_P99] = { "p99", TSD_INTERP_LERP },
	[TSD_AGG_P95] = { "p95", TSD_INTERP_LERP },
	[TSD_AGG_P90] = { "p90", TSD_INTERP_LERP },
	[TSD_AGG_P75] = { "p75", TSD_INTERP_LERP },
	[TSD_AGG_P50] = { "p50", TSD_INTERP_LERP },
	[TSD_AGG_EP999R3] = { "ep999r3", TSD_INTERP_LERP },
	[TSD_AGG_EP99R3] = { "ep99r3", TSD_INTERP_LERP },
	[TSD_AGG_EP95R3] = { "ep95r3", TSD_INTERP_LERP },
	[TSD_AGG_EP90R3] = { "ep90r3", TSD_INTERP_LERP },
	[TSD_AGG_EP75R3] = { "ep75r3", TSD_INTERP_LERP },
	[TSD_AGG_EP50R3] = { "ep50r3", TSD_INTERP_LERP },
	[TSD_AGG_EP999R7] = { "ep999r7", TSD_INTERP_LERP },
	[TSD_AGG_EP99R7] = { "ep99r7", TSD_INTERP_LERP },
	[TSD_AGG_EP95R7] = { "ep95r7", TSD_INTERP_LERP },
	[TSD_AGG_EP90R7] = { "ep90r7", TSD_INTERP_LERP },
	[TSD_AGG_EP75R7] = { "ep75r7", TSD_INTERP_LERP },
	[TSD_AGG_EP50R7] = { "ep50r7", TSD_INTERP_LERP },
};

const char *tsd_agg_name(enum tsd_agg a)
{
	return (unsigned)a < TSD_AGG_COUNT_ALL ? aggs[a].name : "?";
}

enum tsd_interp tsd_agg_interp(enum tsd_agg a)
{
	return (unsigned)a < TSD_AGG_COUNT_ALL ? aggs[a].interp
					       : TSD_INTERP_LERP;
}

int tsd_agg_lookup(const char *name, size_t n, enum tsd_agg *out)
{
	for (int i = 0; i < TSD_AGG_COUNT_ALL; i++) {
		if (strlen(aggs[i].name) == n && !memcmp(aggs[i].name, name, n)) {
			*out = (enum tsd_agg)i;
			return CF_OK;
		}
	}
	return CF_ENOTFOUND;
}

#define W(len) ((int)((len) > 80 ? 80 : (len)))

char *tsd_dupn(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

/* --- times ------------------------------------------------------------- */

int tsd_parse_duration(const char *s, size_t len, int64_t *ms)
{
	size_t d = 0;
	int64_t n = 0, mult;

	while (d < len && s[d] >= '0' && s[d] <= '9')
		d++;
	if (d == 0 || d == len || d > 18)
		return CF_EINVAL;
	if (tsd_parse_long(s, d, &n) || n <= 0)
		return CF_EINVAL;
	if (len - d == 2 && tolower((unsigned char)s[d]) == 'm' &&
	    tolower((unsigned char)s[d + 1]) == 's') {
		*ms = n;
		return CF_OK;
	}
	if (len - d != 1)
		return CF_EINVAL;
	switch (tolower((unsigned char)s[d])) {
	case 's': mult = 1; break;
	case 'm': mult = 60; break;
	case 'h': mult = 3600; break;
	case 'd': mult = 86400; break;
	case 'w': mult = 7 * 86400; break;
	case 'n': mult = 30 * 86400; break;
	case 'y': mult = 365 * 86400; break;
	default: return CF_EINVAL;
	}
	mult *= 1000;
	if (n > INT64_MAX / mult)
		return CF_EINVAL;
	*ms = n * mult;
	return CF_OK;
}

static int all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return n > 0;
}

static int num_at(const char *s, size_t n, int *out)
{
	if (!all_digits(s, n))
		return 0;
	*out = 0;
	for (size_t i = 0; i < n; i++)
		*out = *out * 10 + (s[i] - '0');
	return 1;
}

/* yyyy/MM/dd, yyyy/MM/dd-HH:mm, yyyy/MM/dd-HH:mm:ss (or a space for the
 * dash), as UTC. */
static int parse_date(const char *s, size_t len, int64_t *ms)
{
	struct tm tm;
	int y, mo, d, h = 0, mi = 0, se = 0;

	memset(&tm, 0, sizeof tm);
	if (len != 10 && len != 16 && len != 19)
		return CF_EINVAL;
	if (s[4] != '/' || s[7] != '/' || !num_at(s, 4, &y) ||
	    !num_at(s + 5, 2, &mo) || !num_at(s + 8, 2, &d))
		return CF_EINVAL;
	if (len >= 16) {
		if ((s[10] != '-' && s[10] != ' ') || s[13] != ':' ||
		    !num_at(s + 11, 2, &h) || !num_at(s + 14, 2, &mi))
			return CF_EINVAL;
	}
	if (len == 19 && (s[16] != ':' || !num_at(s + 17, 2, &se)))
		return CF_EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    se > 60 || y < 1970)
		return CF_EINVAL;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	*ms = (int64_t)timegm(&tm) * 1000;
	return CF_OK;
}

int tsd_parse_time(const char *s, size_t len, int64_t now_ms, int64_t *ms)
{
	int64_t v;

	if (len == 0)
		return CF_EINVAL;
	if (len > 2 && all_digits(s, len - 2) && s[len - 2] == 'm' &&
	    s[len - 1] == 's')
		return tsd_parse_long(s, len - 2, ms);
	if (len == 3 && !strncasecmp(s, "now", 3)) {
		*ms = now_ms;
		return CF_OK;
	}
	if (len > 4 && !strncasecmp(s + len - 4, "-ago", 4)) {
		if (tsd_parse_duration(s, len - 4, &v))
			return CF_EINVAL;
		*ms = now_ms - v;
		return CF_OK;
	}
	if (memchr(s, '/', len) || memchr(s, ':', len))
		return parse_date(s, len, ms);
	const char *dot = memchr(s, '.', len);
	if (dot) {
		/* SECONDS.mmm, one to three digits of milliseconds */
		size_t before = (size_t)(dot - s), after = len - before - 1;
		int64_t sec, frac;
		if (before != 10 || after < 1 || after > 3 ||
		    !all_digits(s, before) || !all_digits(dot + 1, after) ||
		    tsd_parse_long(s, before, &sec) ||
		    tsd_parse_long(dot + 1, after, &frac))
			return CF_EINVAL;
		for (size_t i = after; i < 3; i++)
			frac *= 10;
		*ms = sec * 1000 + frac;
		return CF_OK;
	}
	if (!all_digits(s, len) || tsd_parse_long(s, len, &v))
		return CF_EINVAL;
	*ms = len <= 10 ? v * 1000 : v;
	return CF_OK;
}

/* Java's Tags.parseLong refusal of s[0..n), or NULL when it parses. */
static const char *long_why(const char *s, size_t n, char *buf, size_t blen)
{
	size_t i = 0;
	int64_t v;

	if (n == 0)
		return "Empty string";
	if (s[0] == '+' || s[0] == '-') {
		if (n == 1) {
			snprintf(buf, blen, "Just a sign, no value: %.*s",
				 W(n), s);
			return buf;
		}
		i = 1;
	}
	if (n > 19 + i) {
		snprintf(buf, blen, "Value too long: %.*s", W(n), s);
		return buf;
	}
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9') {
			snprintf(buf, blen, "Invalid character '%c' in %.*s",
				 s[i], W(n), s);
			return buf;
		}
	}
	if (tsd_parse_long(s, n, &v)) {
		snprintf(buf, blen, "Overflow in %.*s", W(n), s);
		return buf;
	}
	return NULL;
}

/* Why tsd_parse_duration refuses s[0..len), in DateTime.parseDuration's
 * words. */
static void duration_why(const char *s, size_t len, char *why, size_t whylen)
{
	size_t d = 0;
	int64_t n;

	while (d < len && s[d] >= '0' && s[d] <= '9')
		d++;
	if (len == 0)
		snprintf(why, whylen, "Cannot parse null or empty duration");
	else if (d == len)
		snprintf(why, whylen, "Invalid duration, must have an integer "
			 "and unit: %.*s", W(len), s);
	else if (d == 0 || d > 19 || tsd_parse_long(s, d, &n))
		snprintf(why, whylen, "Invalid duration (number): %.*s",
			 W(len), s);
	else if (n <= 0)
		snprintf(why, whylen, "Zero or negative duration: %.*s",
			 W(len), s);
	else if (!strchr("smhdwny", tolower((unsigned char)s[len - 1])) ||
		 len - d > (tolower((unsigned char)s[len - 1]) == 's' ? 2 : 1))
		snprintf(why, whylen, "Invalid duration (suffix): %.*s",
			 W(len), s);
	else
		snprintf(why, whylen, "Duration must be < Long.MAX_VALUE ms: "
			 "%.*s", W(len), s);
}

/* Why tsd_parse_time refuses s[0..len), in DateTime.parseDateTimeString's
 * words (its IllegalArgumentExceptions, which OpenTSDB's /api/query
 * answers with). */
static void time_why(const char *s, size_t len, char *why, size_t whylen)
{
	char lw[120];
	const char *m;

	if (len >= 4 && !strncasecmp(s + len - 4, "-ago", 4)) {
		duration_why(s, len - 4, why, whylen);
		return;
	}
	if (memchr(s, '/', len) || memchr(s, ':', len)) {
		if (len != 10 && len != 16 && len != 19)
			snprintf(why, whylen, "Invalid absolute date: %.*s",
				 W(len), s);
		else
			snprintf(why, whylen, "Invalid date: %.*s. Unparseable "
				 "date: \"%.*s\"", W(len), s, W(len), s);
		return;
	}
	if (memchr(s, '.', len)) {
		snprintf(why, whylen, "Invalid time: %.*s. Millisecond "
			 "timestamps must be in the format <seconds>.<ms> where "
			 "the milliseconds are limited to 3 digits", W(len), s);
		return;
	}
	if ((m = long_why(s, len, lw, sizeof lw)))
		snprintf(why, whylen, "Invalid time: %.*s. %s", W(len), s, m);
	else
		snprintf(why, whylen, "Invalid time: %.*s. Negative timestamps "
			 "are not supported.", W(len), s);
}

/* --- filters ----------------------------------------------------------- */

static int wild_match(const char *p, size_t plen, const char *s, size_t slen,
		      int icase)
{
	size_t pi = 0, si = 0, star = (size_t)-1, mark = 0;

	while (si < slen) {
		if (pi < plen && p[pi] == '*') {
			star = pi++;
			mark = si;
		} else if (pi < plen &&
			   (icase ? tolower((unsigned char)p[pi]) ==
					    tolower((unsigned char)s[si])
				  : p[pi] == s[si])) {
			pi++;
			si++;
		} else if (star != (size_t)-1) {
			pi = star + 1;
			si = ++mark;
		} else {
			return 0;
		}
	}
	while (pi < plen && p[pi] == '*')
		pi++;
	return pi == plen;
}

int tsd_filter_match(const struct tsd_filter *f, const char *value,
		     size_t vlen)
{
	int hit = 0;

	if (!value)
		return f->type == TSD_FILTER_NOT_KEY;
	switch (f->type) {
	case TSD_FILTER_LITERAL_OR:
	case TSD_FILTER_NOT_LITERAL_OR:
		for (size_t i = 0; i < f->nvalues && !hit; i++)
			hit = strlen(f->values[i]) == vlen &&
			      !memcmp(f->values[i], value, vlen);
		return f->type == TSD_FILTER_LITERAL_OR ? hit : !hit;
	case TSD_FILTER_ILITERAL_OR:
	case TSD_FILTER_NOT_ILITERAL_OR:
		for (size_t i = 0; i < f->nvalues && !hit; i++)
			hit = strlen(f->values[i]) == vlen &&
			      !strncasecmp(f->values[i], value, vlen);
		return f->type == TSD_FILTER_ILITERAL_OR ? hit : !hit;
	case TSD_FILTER_WILDCARD:
	case TSD_FILTER_IWILDCARD:
		return wild_match(f->pattern, strlen(f->pattern), value, vlen,
				  f->type == TSD_FILTER_IWILDCARD || f->icase);
	case TSD_FILTER_REGEXP: {
		/* Java's Matcher.find(): a match anywhere in the value */
		pcre2_match_data *md =
			pcre2_match_data_create_from_pattern(f->regex, NULL);
		if (!md)
			return 0;
		hit = pcre2_match(f->regex, (PCRE2_SPTR)value, vlen, 0, 0, md,
				  NULL) >= 0;
		pcre2_match_data_free(md);
		return hit;
	}
	case TSD_FILTER_NOT_KEY:
		return 0;
	}
	return 0;
}

static void filter_release(struct tsd_filter *f)
{
	free(f->tagk);
	for (size_t i = 0; i < f->nvalues; i++)
		free(f->values[i]);
	free(f->values);
	free(f->pattern);
	free(f->text);
	pcre2_code_free(f->regex);
}

/* The alternatives of a literal_or: s[0..n) split at '|' as Java's
 * String.split("\\|") does (TagVLiteralOrFilter): empty strings at the end
 * are dropped, others kept (an empty one matches no tag value, so "a|"
 * and "|a" match a). */
static int split_values(struct tsd_filter *f, const char *s, size_t n)
{
	size_t cnt = 1;

	while (n && s[n - 1] == '|')
		n--;
	for (size_t i = 0; i < n; i++)
		cnt += s[i] == '|';
	f->values = calloc(cnt, sizeof *f->values);
	if (!f->values)
		return CF_ENOMEM;
	for (size_t b = 0, i = 0; i <= n; i++) {
		if (i == n || s[i] == '|') {
			if (!(f->values[f->nvalues] = tsd_dupn(s + b, i - b)))
				return CF_ENOMEM;
			f->nvalues++;
			b = i + 1;
		}
	}
	return CF_OK;
}

static int filters_equal(const struct tsd_filter *a, const struct tsd_filter *b)
{
	if (strcmp(a->tagk, b->tagk) || a->type != b->type ||
	    a->icase != b->icase || a->nvalues != b->nvalues)
		return 0;
	if ((a->pattern == NULL) != (b->pattern == NULL) ||
	    (a->pattern && strcmp(a->pattern, b->pattern)))
		return 0;
	for (size_t i = 0; i < a->nvalues; i++)
		if (strcmp(a->values[i], b->values[i]))
			return 0;
	return 1;
}

static const struct {
	const char *name;
	enum tsd_filter_type type;
} filter_types[] = {
	{ "literal_or", TSD_FILTER_LITERAL_OR },
	{ "iliteral_or", TSD_FILTER_ILITERAL_OR },
	{ "not_literal_or", TSD_FILTER_NOT_LITERAL_OR },
	{ "not_iliteral_or", TSD_FILTER_NOT_ILITERAL_OR },
	{ "wildcard", TSD_FILTER_WILDCARD },
	{ "iwildcard", TSD_FILTER_IWILDCARD },
	{ "regexp", TSD_FILTER_REGEXP },
	{ "not_key", TSD_FILTER_NOT_KEY },
};

/* f's expression in[0..inlen) as its type's constructor takes it
 * (TagVLiteralOrFilter, TagVWildcardFilter, TagVRegexFilter,
 * TagVNotKeyFilter), with their messages. */
static int filter_build(struct tsd_filter *f, const char *in, size_t inlen,
			char *why, size_t whylen)
{
	if (f->type == TSD_FILTER_NOT_KEY) {
		if (inlen)
			return cf_einval(why, whylen, "The filter must be "
					 "empty for the not_key filter");
		/* a series without the key has no value to group by */
		f->group_by = 0;
		return (f->text = tsd_dupn("", 0)) ? CF_OK : CF_ENOMEM;
	}
	if (inlen == 0)
		return cf_einval(why, whylen, "Filter cannot be null or empty");
	if (!(f->text = tsd_dupn(in, inlen)))
		return CF_ENOMEM;
	switch (f->type) {
	case TSD_FILTER_LITERAL_OR:
	case TSD_FILTER_ILITERAL_OR:
	case TSD_FILTER_NOT_LITERAL_OR:
	case TSD_FILTER_NOT_ILITERAL_OR:
		if (inlen == 1 && in[0] == '|')
			return cf_einval(why, whylen, "Filter must contain "
					 "more than just a pipe");
		return split_values(f, in, inlen);
	case TSD_FILTER_WILDCARD:
	case TSD_FILTER_IWILDCARD:
		if (!memchr(in, '*', inlen))
			return cf_einval(why, whylen,
					 "Filter must contain an asterisk");
		return (f->pattern = tsd_dupn(in, inlen)) ? CF_OK : CF_ENOMEM;
	case TSD_FILTER_REGEXP: {
		/* PCRE2 reads what users write for Java's Pattern (\\d, \\w,
		 * (?i), lazy quantifiers, ...) */
		PCRE2_UCHAR msg[120];
		PCRE2_SIZE at;
		int ec;
		if (!(f->pattern = tsd_dupn(in, inlen)))
			return CF_ENOMEM;
		f->regex = pcre2_compile((PCRE2_SPTR)in, inlen, PCRE2_UTF |
					 PCRE2_MATCH_INVALID_UTF, &ec, &at,
					 NULL);
		if (f->regex)
			return CF_OK;
		if (pcre2_get_error_message(ec, msg, sizeof msg) < 0)
			snprintf((char *)msg, sizeof msg, "error %d", ec);
		return cf_einval(why, whylen, "bad regexp: %.*s: %s at offset "
				 "%zu", W(inlen), in, (const char *)msg,
				 (size_t)at);
	}
	case TSD_FILTER_NOT_KEY:
		break;
	}
	return CF_OK;
}

/* The filter of tag key s[0..eq) and value eq+1..s+n into f
 * (TagVFilter.getFilter and mapToFilters): "type(expr)", a value with
 * '*' (a wildcard ignoring case), or a literal_or. */
static int filter_parse(struct tsd_filter *f, const char *s, size_t n,
			const char *eq, char *why, size_t whylen)
{
	const char *v = eq + 1;
	size_t vlen = (size_t)(s + n - v);
	const char *paren = memchr(v, '(', vlen);

	if (!(f->tagk = tsd_dupn(s, (size_t)(eq - s))))
		return CF_ENOMEM;
	if (!paren) {
		if (memchr(v, '*', vlen)) {
			f->type = TSD_FILTER_WILDCARD;
			f->icase = 1;
		} else {
			f->type = TSD_FILTER_LITERAL_OR;
		}
		return filter_build(f, v, vlen, why, whylen);
	}
	size_t plen = (size_t)(paren - v), i;
	if (v[vlen - 1] != ')')
		return cf_einval(why, whylen, "Filter must end with a ')': "
				 "%.*s", W(vlen), v);
	if (plen == 0)
		return cf_einval(why, whylen,
				 "The filter type cannot be null or empty");
	for (i = 0; i < sizeof filter_types / sizeof filter_types[0]; i++)
		if (strlen(filter_types[i].name) == plen &&
		    !strncasecmp(filter_types[i].name, v, plen))
			break;
	if (i == sizeof filter_types / sizeof filter_types[0]) {
		char low[81];
		size_t k;
		for (k = 0; k < plen && k + 1 < sizeof low; k++)
			low[k] = (char)tolower((unsigned char)v[k]);
		low[k] = '\0';
		return cf_einval(why, whylen, "Could not find a tag value "
				 "filter of the type: %s", low);
	}
	f->type = filter_types[i].type;
	return filter_build(f, paren + 1, vlen - plen - 2, why, whylen);
}

/* One "k=v" of a tag (group_by) or filter group (Tags.parse, then
 * TagVFilter.mapToFilters), refusals worded as parseWithMetricAndFilters
 * words them: "When parsing tag 'ITEM': REASON". */
static int add_filter(struct tsd_subquery *sq, const char *s, size_t n,
		      int group_by, char *why, size_t whylen)
{
	const char *eq = memchr(s, '=', n);
	struct tsd_filter f;
	char inner[256];
	int rc;

	memset(&f, 0, sizeof f);
	f.group_by = group_by;
	inner[0] = '\0';
	if (!eq || eq == s || eq == s + n - 1 ||
	    memchr(eq + 1, '=', (size_t)(s + n - eq - 1)))
		rc = cf_einval(inner, sizeof inner, "invalid tag: %.*s",
			       W(n), s);
	else
		rc = filter_parse(&f, s, n, eq, inner, sizeof inner);
	if (rc) {
		if (rc == CF_EINVAL)
			cf_einval(why, whylen, "When parsing %s '%.*s': %s",
				  group_by ? "tag" : "filter", W(n), s, inner);
		goto bad;
	}
	if (f.group_by) {
		for (size_t i = 0; i < sq->nfilters; i++) {
			if (filters_equal(&sq->filters[i], &f)) {
				sq->filters[i].group_by = 1;
				filter_release(&f);
				return CF_OK;
			}
		}
	}
	struct tsd_filter *nf = realloc(sq->filters,
					(sq->nfilters + 1) * sizeof *nf);
	if (!nf) {
		rc = CF_ENOMEM;
		goto bad;
	}
	sq->filters = nf;
	sq->filters[sq->nfilters++] = f;
	return CF_OK;
bad:
	filter_release(&f);
	return rc;
}

/* The comma-separated items of s[0..n), each added as a filter.  An
 * empty item ends the list when ends is set (the filter group, and the
 * tag group followed by one), else it is refused, as OpenTSDB's
 * parseWithMetricAndFilters does ("m{a=b,}" fails, "m{a=b,}{}" not). */
static int add_filters(struct tsd_subquery *sq, const char *s, size_t n,
		       int group_by, int ends, char *why, size_t whylen)
{
	size_t b = 0;
	int rc;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != ',')
			continue;
		if (i == b && ends)
			break;
		if ((rc = add_filter(sq, s + b, i - b, group_by, why, whylen)))
			return rc;
		b = i + 1;
	}
	return CF_OK;
}

/* The tag and filter groups of s[0..n) from its first '{' (Tags.
 * parseWithMetricAndFilters). */
static int parse_groups(struct tsd_subquery *sq, const char *s, size_t n,
			const char *curly, char *why, size_t whylen)
{
	int rc;

	if (s[n - 1] != '}')
		return cf_einval(why, whylen, "Missing '}' at the end of: %.*s",
				 W(n), s);
	if (curly == s + n - 2)
		return CF_OK;
	const char *close = memchr(curly, '}', (size_t)(s + n - curly));
	if (close != s + n - 1) {
		const char *fb = s + n - 1;
		while (fb > close && *fb != '{')
			fb--;
		if (fb == close || fb != close + 1)
			return cf_einval(why, whylen, "malformed filters: %.*s",
					 W(n), s);
		if ((rc = add_filters(sq, fb + 1, (size_t)(s + n - 1 - fb - 1),
				      0, 1, why, whylen)))
			return rc;
	}
	return add_filters(sq, curly + 1, (size_t)(close - curly - 1), 1,
			   close != s + n - 1, why, whylen);
}

/* METRIC[{TAGS}][{FILTERS}]: the groups are read before the metric is
 * found missing, as OpenTSDB reads them ("{host=}" fails on its tag). */
static int parse_metric(struct tsd_subquery *sq, const char *s, size_t n,
			char *why, size_t whylen)
{
	const char *curly = memchr(s, '{', n);
	size_t mlen = curly ? (size_t)(curly - s) : n;
	int rc;

	if (n == 0)
		return cf_einval(why, whylen, "Metric cannot be null or empty");
	if (curly && (rc = parse_groups(sq, s, n, curly, why, whylen)))
		return rc;
	if (mlen == 0)	/* TSSubQuery.validateAndSetQuery */
		return cf_einval(why, whylen, "Missing the metric or tsuids, "
				 "provide at least one");
	return (sq->metric = tsd_dupn(s, mlen)) ? CF_OK : CF_ENOMEM;
}

/* Whether s[0..n) contains "all" (String.contains). */
static int has_all(const char *s, size_t n)
{
	for (size_t i = 0; i + 3 <= n; i++)
		if (!memcmp(s + i, "all", 3))
			return 1;
	return 0;
}

/*
 * INTERVAL-AGG[-FILL] as OpenTSDB's DownsamplingSpecification(String)
 * reads it, refusals in its words: split at every '-' (Java's split: the
 * empty parts at the end dropped), an interval containing "all" is the
 * whole range, one ending in 'c' a calendar one (its count an int, as
 * Downsampler's Integer.parseInt wants), the function by its exact name,
 * the fill policy without case.
 */
static int parse_downsample(struct tsd_subquery *sq, const char *s, size_t n,
			    char *why, size_t whylen)
{
	const char *part[4];
	size_t plen[4], np = 0, nparts = 0;

	for (const char *b = s, *p = s;; p++) {
		if (p == s + n || *p == '-') {
			if (np < 4) {
				part[np] = b;
				plen[np] = (size_t)(p - b);
			}
			np++;
			if (p > b)
				nparts = np;	/* the last non-empty one */
			b = p + 1;
			if (p == s + n)
				break;
		}
	}
	np = nparts;
	if (np < 2)
		return cf_einval(why, whylen, "Invalid downsampling specifier "
				 "'%.*s': must provide at least interval and "
				 "function", W(n), s);
	if (np > 3)
		return cf_einval(why, whylen, "Invalid downsampling specifier "
				 "'%.*s': must consist of interval, function, "
				 "and optional fill policy", W(n), s);
	const char *iv = part[0];
	size_t ilen = plen[0];
	if (has_all(iv, ilen)) {
		sq->ds_all = 1;
	} else if (ilen == 0) {
		/* Java's charAt(-1) */
		return cf_einval(why, whylen, "String index out of range: -1");
	} else if (iv[ilen - 1] == 'c') {
		size_t dl = ilen - 1, ul;
		int64_t cnt;
		if (tsd_parse_duration(iv, dl, &sq->ds_interval_ms)) {
			duration_why(iv, dl, why, whylen);
			return CF_EINVAL;
		}
		ul = dl >= 2 && tolower((unsigned char)iv[dl - 2]) == 'm' &&
		     tolower((unsigned char)iv[dl - 1]) == 's' ? 2 : 1;
		if (tsd_parse_long(iv, dl - ul, &cnt) || cnt > INT32_MAX)
			return cf_einval(why, whylen, "For input string: "
					 "\"%.*s\"", W(dl - ul), iv);
		static const struct {
			char c;
			enum tsd_cal_unit u;
		} units[] = {
			{ 's', TSD_CAL_SECOND }, { 'm', TSD_CAL_MINUTE },
			{ 'h', TSD_CAL_HOUR }, { 'd', TSD_CAL_DAY },
			{ 'w', TSD_CAL_WEEK }, { 'n', TSD_CAL_MONTH },
			{ 'y', TSD_CAL_YEAR },
		};
		sq->ds_cal_unit = TSD_CAL_MS;
		for (size_t i = 0; ul == 1 && i < sizeof units / sizeof units[0];
		     i++)
			if (tolower((unsigned char)iv[dl - 1]) == units[i].c)
				sq->ds_cal_unit = units[i].u;
		sq->ds_calendar = 1;
		sq->ds_cal_n = (int)cnt;
	} else if (tsd_parse_duration(iv, ilen, &sq->ds_interval_ms)) {
		duration_why(iv, ilen, why, whylen);
		return CF_EINVAL;
	}
	if (tsd_agg_lookup(part[1], plen[1], &sq->ds_agg))
		return cf_einval(why, whylen,
				 "No such downsampling function: %.*s",
				 W(plen[1]), part[1]);
	if (sq->ds_agg == TSD_AGG_NONE)
		return cf_einval(why, whylen,
				 "cannot use the NONE aggregator for "
				 "downsampling");
	sq->ds_fill = TSD_FILL_NONE;
	if (np == 3) {
		const char *f = part[2];
		size_t flen = plen[2];
		if (flen == 4 && !strncasecmp(f, "none", 4))
			sq->ds_fill = TSD_FILL_NONE;
		else if (flen == 3 && !strncasecmp(f, "nan", 3))
			sq->ds_fill = TSD_FILL_NAN;
		else if (flen == 4 && !strncasecmp(f, "null", 4))
			sq->ds_fill = TSD_FILL_NULL;
		else if (flen == 4 && !strncasecmp(f, "zero", 4))
			sq->ds_fill = TSD_FILL_ZERO;
		else if (flen == 6 && !strncasecmp(f, "scalar", 6))
			/* FillingDownsampler: no value to fill with */
			return cf_einval(why, whylen, "unhandled fill policy: "
					 "%.*s", W(flen), f);
		else
			return cf_einval(why, whylen, "Unrecognized fill "
					 "policy: %.*s", W(flen), f);
	}
	return CF_OK;
}

/* Whether a part of m= that does not start with a digit is a downsampler
 * (POST's "downsample", which OpenTSDB parses whatever it starts with):
 * one with a '-' that is none of QueryRpc's other words. */
static int is_downsample(const char *p, size_t l)
{
	static const char *const other[] = { "pre-agg", "rollup_",
					     "percentiles",
					     "show-histogram-buckets" };

	if (!memchr(p, '-', l))
		return 0;
	for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
		size_t ol = strlen(other[i]);
		if (l >= ol && !strncasecmp(p, other[i], ol))
			return 0;
	}
	return 1;
}

/* rate[{counter[,max[,reset]]}] as QueryRpc.parseRateOptions reads it:
 * options only with a '{', whose last character is dropped whatever it
 * is, split at every ',' (empty parts kept); "counter" is any first part
 * that ends so, "dropcounter" also drops the resets. */
static int parse_rate(struct tsd_subquery *sq, const char *s, size_t n,
		      char *why, size_t whylen)
{
	sq->rate = 1;
	if (n == 4 || !memchr(s, '{', n))
		return CF_OK;
	sq->rate_opts = 1;
	if (n < 6)
		return cf_einval(why, whylen, "Invalid rate options "
				 "specification: %.*s", W(n), s);
	const char *p = s + 5, *end = s + n - 1;
	const char *part[3];
	size_t plen[3], np = 0;
	for (const char *b = p;; p++) {
		if (p == end || *p == ',') {
			if (np < 3) {
				part[np] = b;
				plen[np] = (size_t)(p - b);
			}
			np++;
			b = p + 1;
			if (p == end)
				break;
		}
	}
	if (np > 3)
		return cf_einval(why, whylen, "Incorrect number of values in "
				 "rate options specification, must be counter"
				 "[,counter max value,reset value], recieved: "
				 "%zu parts", np);
	if (plen[0] >= 7 && !memcmp(part[0] + plen[0] - 7, "counter", 7))
		sq->counter = 1;
	if (plen[0] == 11 && !memcmp(part[0], "dropcounter", 11))
		sq->drop_resets = 1;
	if (np >= 2 && plen[1] &&
	    tsd_parse_long(part[1], plen[1], &sq->counter_max))
		return cf_einval(why, whylen, "Max value of counter was not a "
				 "number, received '%.*s'", W(plen[1]),
				 part[1]);
	if (np >= 3 && plen[2] &&
	    tsd_parse_long(part[2], plen[2], &sq->reset_value))
		return cf_einval(why, whylen, "Reset value of counter was not "
				 "a number, received '%.*s'", W(plen[2]),
				 part[2]);
	return CF_OK;
}

/* The comma-separated TSUIDs of a tsuid= sub query (OpenTSDB's
 * parseTsuidTypeSubQuery), kept as written: each hex, a metric UID and
 * up to TSD_MAX_TAGS tag pairs (none matches no row, but parses, as in
 * TestQueryRpc).  That they share a metric is checked when the query
 * runs (TsdbQuery.configureFromQuery), as OpenTSDB does. */
static int parse_tsuids(struct tsd_subquery *sq, const char *s, size_t n,
			char *why, size_t whylen)
{
	const size_t mw = 2 * TSD_UID_WIDTH, pw = 4 * TSD_UID_WIDTH;

	for (size_t b = 0, i = 0; i <= n; i++) {
		if (i < n && s[i] != ',')
			continue;
		const char *t = s + b;
		size_t tl = i - b, j;
		char **nt;
		b = i + 1;
		for (j = 0; j < tl && isxdigit((unsigned char)t[j]); j++)
			;
		if (j < tl || tl < mw || (tl - mw) % pw ||
		    (tl - mw) / pw > TSD_MAX_TAGS)
			return cf_einval(why, whylen, "invalid TSUID: %.*s",
					 W(tl), t);
		nt = realloc(sq->tsuids, (sq->ntsuids + 1) * sizeof *nt);
		if (!nt)
			return CF_ENOMEM;
		sq->tsuids = nt;
		if (!(nt[sq->ntsuids] = tsd_dupn(t, tl)))
			return CF_ENOMEM;
		sq->ntsuids++;
	}
	return CF_OK;
}

/* One sub query: m=AGG:[...:]METRIC{...} or, with tsuid, tsuid=AGG:
 * [...:]TSUID,TSUID... */
static int parse_sub(struct tsd_query *q, const char *s, size_t n,
		     int tsuid, char *why, size_t whylen)
{
	const char *kind = tsuid ? "tsuid" : "m";
	const char *part[5];
	size_t plen[5], np = 0;
	struct tsd_subquery *sq;
	int rc;

	if (n == 0)
		return cf_einval(why, whylen, "The %squery string was empty",
				 tsuid ? "tsuid " : "");
	for (size_t b = 0, i = 0; i <= n; i++) {
		if (i < n && s[i] != ':')
			continue;
		if (np == 5)
			return cf_einval(why, whylen,
					 "Invalid parameter %s=%.*s (too many "
					 ":-separated parts)", kind, W(n), s);
		part[np] = s + b;
		plen[np++] = i - b;
		b = i + 1;
	}
	if (np < 2)
		return cf_einval(why, whylen, "Invalid parameter %s=%.*s (not "
				 "enough :-separated parts)", kind, W(n), s);
	sq = realloc(q->subs, (q->nsubs + 1) * sizeof *sq);
	if (!sq)
		return CF_ENOMEM;
	q->subs = sq;
	sq = &q->subs[q->nsubs++];
	memset(sq, 0, sizeof *sq);
	sq->counter_max = INT64_MAX;
	if (plen[0] == 0)
		return cf_einval(why, whylen, "Missing the aggregation "
				 "function");
	if (tsd_agg_lookup(part[0], plen[0], &sq->agg))
		return cf_einval(why, whylen, "No such aggregation function: "
				 "%.*s", W(plen[0]), part[0]);
	rc = tsuid ? parse_tsuids(sq, part[np - 1], plen[np - 1], why, whylen)
		   : parse_metric(sq, part[np - 1], plen[np - 1], why, whylen);
	if (rc)
		return rc;
	for (size_t i = 1; i + 1 < np; i++) {
		const char *p = part[i];
		size_t l = plen[i];
		if (l >= 4 && !strncasecmp(p, "rate", 4))
			rc = parse_rate(sq, p, l, why, whylen);
		else if (l && ((p[0] >= '0' && p[0] <= '9') ||
			       is_downsample(p, l))) {
			rc = parse_downsample(sq, p, l, why, whylen);
			free(sq->ds_text);	/* a later one overrides */
			sq->ds_text = NULL;
			if (!rc && !(sq->ds_text = tsd_dupn(p, l)))
				rc = CF_ENOMEM;
		}
		else if (l == 13 && !strncasecmp(p, "explicit_tags", 13))
			sq->explicit_tags = 1;
		else
			rc = cf_einval(why, whylen,
				       "unsupported query part: %.*s",
				       W(l), p);
		if (rc)
			return rc;
	}
	return CF_OK;
}

char *tsd_pct_decode(const char *s, size_t n)
{
	char *o = malloc(n + 1);
	size_t k = 0;

	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n &&
		    isxdigit((unsigned char)s[i + 1]) &&
		    isxdigit((unsigned char)s[i + 2])) {
			char hex[3] = { s[i + 1], s[i + 2], 0 };
			o[k++] = (char)strtol(hex, NULL, 16);
			i += 2;
		} else {
			o[k++] = s[i];
		}
	}
	o[k] = '\0';
	return o;
}

int tsd_qs_take(const char *qs, size_t len, const char *const *names,
		size_t n, char **vals, char *why, size_t whylen)
{
	int rc = CF_OK;

	for (size_t i = 0; i < n; i++)
		vals[i] = NULL;
	for (size_t b = 0, i = 0; i <= len && rc == CF_OK; i++) {
		if (i < len && qs[i] != '&')
			continue;
		const char *p = qs + b, *eq = memchr(p, '=', i - b);
		size_t kl = eq ? (size_t)(eq - p) : i - b, k;
		b = i + 1;
		if (!kl)
			continue;
		for (k = 0; k < n; k++)
			if (strlen(names[k]) == kl && !memcmp(p, names[k], kl))
				break;
		if (k == n) {
			snprintf(why, whylen, "unknown parameter: %.*s",
				 (int)(kl > 60 ? 60 : kl), p);
			rc = CF_EINVAL;
			break;
		}
		free(vals[k]);
		vals[k] = tsd_pct_decode(eq ? eq + 1 : p + kl,
					 eq ? (size_t)(qs + i - eq - 1) : 0);
		if (!vals[k])
			rc = CF_ENOMEM;
	}
	for (size_t i = 0; rc && i < n; i++) {
		free(vals[i]);
		vals[i] = NULL;
	}
	return rc;
}

static int set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = strdup(v);
	return *dst ? CF_OK : CF_ENOMEM;
}

int tsd_query_add_m(struct tsd_query *q, const char *s, size_t n,
		    char *why, size_t whylen)
{
	return parse_sub(q, s, n, 0, why, whylen);
}

static int add_exp(struct tsd_query *q, const char *s, size_t n)
{
	char **ne = realloc(q->exps, (q->nexps + 1) * sizeof *ne);

	if (!ne)
		return CF_ENOMEM;
	q->exps = ne;
	if (!(ne[q->nexps] = tsd_dupn(s, n)))
		return CF_ENOMEM;
	q->nexps++;
	return CF_OK;
}

int tsd_query_parse(const char *qs, size_t len, int64_t now_ms,
		    struct tsd_query *q, char *why, size_t whylen)
{
	return tsd_query_parse_flags(qs, len, now_ms, 0, q, why, whylen);
}

int tsd_query_parse_flags(const char *qs, size_t len, int64_t now_ms,
			  unsigned flags, struct tsd_query *q, char *why,
			  size_t whylen)
{
	char *key = NULL, *val = NULL;
	int have_start = 0, have_end = 0, start_date = 0, end_date = 0;
	int rc = CF_OK;

	memset(q, 0, sizeof *q);
	q->width = 800;
	q->height = 600;
	if (why && whylen)
		why[0] = '\0';
	if (len >= 2 && qs[0] == 'q' && qs[1] == '?')
		qs += 2, len -= 2;
	else if (len >= 1 && qs[0] == '?')
		qs++, len--;
	for (size_t b = 0, i = 0; i <= len; i++) {
		if (i < len && qs[i] != '&')
			continue;
		const char *item = qs + b;
		size_t ilen = i - b;
		b = i + 1;
		if (ilen == 0)
			continue;
		const char *eq = memchr(item, '=', ilen);
		size_t klen = eq ? (size_t)(eq - item) : ilen;
		free(key);
		free(val);
		key = tsd_pct_decode(item, klen);
		val = eq ? tsd_pct_decode(eq + 1, ilen - klen - 1) : strdup("");
		if (!key || !val) {
			rc = CF_ENOMEM;
			goto out;
		}
		size_t vl = strlen(val);
		if (!strcmp(key, "start") || !strcmp(key, "end")) {
			int st = key[0] == 's';
			/* an empty one is not given (getQueryStringParam) */
			if (st)
				have_start = vl > 0;
			else
				have_end = vl > 0;
			if (vl && tsd_parse_time(val, vl, now_ms, st ?
						 &q->start_ms : &q->end_ms)) {
				time_why(val, vl, why, whylen);
				rc = CF_EINVAL;
				goto out;
			}
			*(st ? &start_date : &end_date) =
				memchr(val, '/', vl) || memchr(val, ':', vl);
		} else if (!strcmp(key, "m") || !strcmp(key, "tsuid")) {
			if ((rc = parse_sub(q, val, vl, key[0] == 't', why,
					    whylen)))
				goto out;
		} else if (!strcmp(key, "exp") && (flags & TSD_QUERY_EXP)) {
			if ((rc = add_exp(q, val, vl)))
				goto out;
		} else if (!strcmp(key, "ms")) {
			q->ms = 1;
		} else if (!strcmp(key, "show_query")) {
			q->show_query = 1;
		} else if (!strcmp(key, "show_tsuids")) {
			q->show_tsuids = 1;
		} else if (!strcmp(key, "show_stats")) {
			q->show_stats = 1;
		} else if (!strcmp(key, "show_summary")) {
			q->show_summary = 1;
		} else if (!strcmp(key, "no_annotations")) {
			q->no_annotations = 1;
		} else if (!strcmp(key, "global_annotations")) {
			q->global_annotations = 1;
		} else if (!strcmp(key, "arrays")) {
			q->arrays = 1;	/* present: on, whatever its value */
		} else if (!strcmp(key, "timezone") || !strcmp(key, "tz")) {
			/* tz: GraphHandler's (/q) name of it */
			tsd_tz_free(q->tz);
			q->tz = NULL;
			rc = tsd_tz_load(val, &q->tz);
			if (rc == CF_ENOMEM)
				goto out;
			if (rc) {
				rc = cf_einval(why, whylen,
					       "unknown timezone: %.*s",
					       W(vl), val);
				goto out;
			}
		} else if (!strcmp(key, "wxh")) {
			int w, h;
			char c;
			if (sscanf(val, "%dx%d%c", &w, &h, &c) != 2 || w < 16 ||
			    h < 16 || w > 8192 || h > 8192) {
				rc = cf_einval(why, whylen, "invalid wxh: %.*s",
					       W(vl), val);
				goto out;
			}
			q->width = w;
			q->height = h;
		} else if (!strcmp(key, "title")) {
			if ((rc = set_str(&q->title, val)))
				goto out;
		} else if (!strcmp(key, "ylabel")) {
			if ((rc = set_str(&q->ylabel, val)))
				goto out;
		} else if (!strcmp(key, "yrange")) {
			double lo, hi;
			char c;
			if (!((vl == 3 && !strcmp(val, "[:]")) ||
			      sscanf(val, "[%lf:%lf%c", &lo, &hi, &c) == 3 ||
			      sscanf(val, "[:%lf%c", &hi, &c) == 2 ||
			      sscanf(val, "[%lf:%c", &lo, &c) == 2) ||
			    val[vl - 1] != ']') {
				rc = cf_einval(why, whylen,
					       "invalid yrange: %.*s",
					       W(vl), val);
				goto out;
			}
			if ((rc = set_str(&q->yrange, val)))
				goto out;
		} else if (!strcmp(key, "ylog")) {
			q->ylog = 1;
		} else if (!strcmp(key, "key")) {
			for (size_t j = 0; j < vl; j++) {
				if (!isalpha((unsigned char)val[j]) &&
				    val[j] != ' ') {
					rc = cf_einval(why, whylen,
						       "invalid key: "
						       "%.*s", W(vl), val);
					goto out;
				}
			}
			if ((rc = set_str(&q->key, val)))
				goto out;
		} else if (!strcmp(key, "nokey")) {
			q->nokey = 1;
		}
	}
	if (!have_start) {
		/* QueryRpc's getRequiredQueryStringParam */
		rc = cf_einval(why, whylen, "Missing parameter <code>start"
			       "</code>");
		goto out;
	}
	/* dates are wall-clock times of the zone (DateTime.
	 * parseDateTimeString with the query's timezone) */
	if (q->tz && start_date)
		q->start_ms -= tsd_tz_offset(q->tz, q->start_ms -
					     tsd_tz_offset(q->tz, q->start_ms));
	if (q->tz && have_end && end_date)
		q->end_ms -= tsd_tz_offset(q->tz, q->end_ms -
					   tsd_tz_offset(q->tz, q->end_ms));
	if (!have_end)
		q->end_ms = now_ms;
	if (q->end_ms <= q->start_ms) {
		rc = cf_einval(why, whylen,
			       "End time [%lld] must be greater than the "
			       "start time [%lld]", (long long)q->end_ms,
			       (long long)q->start_ms);
		goto out;
	}
	/* an expression's metric queries become subs once it is parsed
	 * (tsd_query_add_m) */
	if (q->nsubs == 0 && q->nexps == 0)
		rc = cf_einval(why, whylen, "Missing sub queries");
	q->gexp = (flags & TSD_QUERY_GEXP) || q->nexps;
out:
	free(key);
	free(val);
	if (rc)
		tsd_query_release(q);
	return rc;
}

void tsd_query_release(struct tsd_query *q)
{
	for (size_t i = 0; i < q->nsubs; i++) {
		struct tsd_subquery *sq = &q->subs[i];
		free(sq->metric);
		free(sq->ds_text);
		for (size_t j = 0; j < sq->ntsuids; j++)
			free(sq->tsuids[j]);
		free(sq->tsuids);
		for (size_t j = 0; j < sq->nfilters; j++)
			filter_release(&sq->filters[j]);
		free(sq->filters);
	}
	free(q->subs);
	for (size_t i = 0; i < q->nexps; i++)
		free(q->exps[i]);
	free(q->exps);
	tsd_tz_free(q->tz);
	free(q->title);
	free(q->ylabel);
	free(q->yrange);
	free(q->key);
	memset(q, 0, sizeof *q);
}
