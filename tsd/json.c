/*
 * json.c: query results in OpenTSDB's JSON (tsd/json.h).  Names are
 * encoded by jansson; the points are written straight into the buffer,
 * one at a time, so a result costs its text and no tree of JSON values.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tsd/json.h"
#include "tsd/number.h"
#include "util/err.h"

int tsd_json_string(struct buf *out, const void *s, size_t len)
{
	json_t *j = json_stringn(s, len);
	size_t need;
	int rc;

	if (!j)
		return CF_EINVAL;
	need = json_dumpb(j, NULL, 0, JSON_ENCODE_ANY);
	if (need == 0) {
		json_decref(j);
		return CF_ENOMEM;
	}
	if ((rc = buf_reserve(out, need)) == CF_OK) {
		json_dumpb(j, (char *)out->p + out->len, need,
			   JSON_ENCODE_ANY);
		out->len += need;
	}
	json_decref(j);
	return rc;
}

/* The words of " a b c" (or " k=v k=v" cut at '=' when kv) one by one:
 * *w, *wl the next word from *pos; 0 at the end. */
static int next_word(const char *s, size_t len, size_t *pos, const char **w,
		     size_t *wl)
{
	size_t b = *pos, e;

	while (b < len && s[b] == ' ')
		b++;
	if (b >= len)
		return 0;
	for (e = b; e < len && s[e] != ' '; e++)
		;
	*w = s + b;
	*wl = e - b;
	*pos = e;
	return 1;
}

static int put_tags(struct buf *out, const struct tsd_json_series *s)
{
	const char *w;
	size_t wl, pos = 0;
	int rc, first = 1;

	if ((rc = buf_append(out, "\"tags\":{", 8)))
		return rc;
	while (next_word(s->tags, s->tagslen, &pos, &w, &wl)) {
		const char *eq = memchr(w, '=', wl);
		size_t kl = eq ? (size_t)(eq - w) : wl;
		if ((!first && (rc = buf_putc(out, ','))) ||
		    (rc = tsd_json_string(out, w, kl)) ||
		    (rc = buf_putc(out, ':')) ||
		    (rc = tsd_json_string(out, w + kl + (eq != NULL),
					  wl - kl - (eq != NULL))))
			return rc;
		first = 0;
	}
	if ((rc = buf_append(out, "},\"aggregateTags\":[", 19)))
		return rc;
	first = 1;
	pos = 0;
	while (next_word(s->aggtags, s->aggtagslen, &pos, &w, &wl)) {
		if ((!first && (rc = buf_putc(out, ','))) ||
		    (rc = tsd_json_string(out, w, wl)))
			return rc;
		first = 0;
	}
	return buf_append(out, "],", 2);
}

/* a string literal and its length */
#define LIT(s) s, sizeof s - 1

static const char *filter_type(enum tsd_filter_type t)
{
	switch (t) {
	case TSD_FILTER_LITERAL_OR:	return "literal_or";
	case TSD_FILTER_ILITERAL_OR:	return "iliteral_or";
	case TSD_FILTER_NOT_LITERAL_OR:	return "not_literal_or";
	case TSD_FILTER_NOT_ILITERAL_OR: return "not_iliteral_or";
	case TSD_FILTER_WILDCARD:	return "wildcard";
	case TSD_FILTER_IWILDCARD:	return "iwildcard";
	case TSD_FILTER_REGEXP:		return "regexp";
	case TSD_FILTER_NOT_KEY:	return "not_key";
	}
	return "literal_or";
}

static int put_cstr(struct buf *out, const char *s)
{
	return s ? tsd_json_string(out, s, strlen(s))
		 : buf_append(out, "null", 4);
}

/* A sub query's TSUIDs as written, or null. */
static int put_tsuid_list(struct buf *out, const struct tsd_subquery *sq)
{
	int rc;

	if (!sq->ntsuids)
		return buf_append(out, "null", 4);
	if ((rc = buf_putc(out, '[')))
		return rc;
	for (size_t i = 0; i < sq->ntsuids; i++)
		if ((i && (rc = buf_putc(out, ','))) ||
		    (rc = put_cstr(out, sq->tsuids[i])))
			return rc;
	return buf_putc(out, ']');
}

/* "tsuids":[...],: the words of s's " HEX HEX". */
static int put_tsuids(struct buf *out, const struct tsd_json_series *s)
{
	const char *w;
	size_t wl, pos = 0;
	int rc, first = 1;

	if ((rc = buf_append(out, LIT("\"tsuids\":["))))
		return rc;
	while (next_word(s->tsuids, s->tsuidslen, &pos, &w, &wl)) {
		if ((!first && (rc = buf_putc(out, ','))) ||
		    (rc = tsd_json_string(out, w, wl)))
			return rc;
		first = 0;
	}
	return buf_append(out, "],", 2);
}

/* "query":{...},: the group's sub query as OpenTSDB 2.4 serializes a
 * TSSubQuery (Jackson, its getters), the fields a client reads. */
static int put_query(struct buf *out, const struct tsd_subquery *sq,
		     size_t index)
{
	int rc;

	if ((rc = buf_append(out, LIT("\"query\":{\"aggregator\":"))) ||
	    (rc = put_cstr(out, tsd_agg_name(sq->agg))) ||
	    (rc = buf_append(out, LIT(",\"metric\":"))) ||
	    (rc = put_cstr(out, sq->metric)) ||
	    (rc = buf_append(out, LIT(",\"tsuids\":"))) ||
	    (rc = put_tsuid_list(out, sq)) ||
	    (rc = buf_append(out, LIT(",\"downsample\":"))) ||
	    (rc = put_cstr(out, sq->ds_text)) ||
	    (rc = buf_printf(out, ",\"rate\":%s,\"filters\":[",
			     sq->rate ? "true" : "false")))
		return rc;
	for (size_t i = 0; i < sq->nfilters; i++) {
		const struct tsd_filter *f = &sq->filters[i];
		if ((i && (rc = buf_putc(out, ','))) ||
		    (rc = buf_append(out, LIT("{\"tagk\":"))) ||
		    (rc = put_cstr(out, f->tagk)) ||
		    (rc = buf_append(out, LIT(",\"filter\":"))) ||
		    (rc = put_cstr(out, f->text)) ||
		    (rc = buf_printf(out, ",\"group_by\":%s,\"type\":\"%s\"}",
				     f->group_by ? "true" : "false",
				     filter_type(f->type))))
			return rc;
	}
	if ((rc = buf_printf(out, "],\"explicitTags\":%s,\"index\":%zu,"
			     "\"rateOptions\":", sq->explicit_tags ? "true" :
			     "false", index)))
		return rc;
	if (!sq->rate_opts)
		rc = buf_append(out, "null", 4);
	else
		rc = buf_printf(out, "{\"counter\":%s,\"counterMax\":%lld,"
				"\"resetValue\":%lld,\"dropResets\":%s}",
				sq->counter ? "true" : "false",
				(long long)sq->counter_max,
				(long long)sq->reset_value,
				sq->drop_resets ? "true" : "false");
	if (rc || (rc = buf_append(out, LIT(",\"tags\":{"))))
		return rc;
	/* TSSubQuery.getTags: a group-by filter's key to "type(filter)",
	 * the last of a key winning (a HashMap) */
	int first = 1;
	for (size_t i = 0; i < sq->nfilters; i++) {
		const struct tsd_filter *f = &sq->filters[i];
		size_t j;
		if (!f->group_by)
			continue;
		for (j = i + 1; j < sq->nfilters; j++)
			if (sq->filters[j].group_by &&
			    !strcmp(sq->filters[j].tagk, f->tagk))
				break;
		if (j < sq->nfilters)
			continue;
		struct buf v = BUF_INIT;
		rc = buf_printf(&v, "%s(%s)", filter_type(f->type),
				f->text ? f->text : "");
		if (!rc && !first)
			rc = buf_putc(out, ',');
		if (!rc)
			rc = put_cstr(out, f->tagk);
		if (!rc)
			rc = buf_putc(out, ':');
		if (!rc)
			rc = tsd_json_string(out, v.p, v.len);
		buf_release(&v);
		if (rc)
			return rc;
		first = 0;
	}
	return buf_append(out, LIT("}},"));
}

/* "TS":VALUE, or [TS,VALUE] with arrays (the caller closes it). */
static int put_point(struct buf *out, const struct tsd_json_series *s,
		     const struct tsd_dp *p, int ms, int arrays, int first)
{
	int rc;

	if ((!first && (rc = buf_putc(out, ','))) ||
	    (rc = buf_putc(out, arrays ? '[' : '"')) ||
	    (rc = tsd_buf_long(out, ms ? p->ts : p->ts / 1000)) ||
	    (rc = arrays ? buf_putc(out, ',') : buf_append(out, "\":", 2)))
		return rc;
	if (!p->is_float)
		return tsd_buf_long(out, p->i);
	if (p->d != p->d)
		return s->nan_null ? buf_append(out, "null", 4)
				   : buf_append(out, "\"NaN\"", 5);
	if (isinf(p->d))	/* not a JSON number: quoted, as Jackson does */
		return p->d > 0 ? buf_append(out, "\"Infinity\"", 10)
				: buf_append(out, "\"-Infinity\"", 11);
	return tsd_buf_double(out, p->d);
}

int tsd_json_format(struct buf *out, const struct tsd_json_series *s,
		    size_t n, int ms, int arrays, int64_t start_ms,
		    int64_t end_ms)
{
	int rc;

	if ((rc = buf_putc(out, '[')))
		return rc;
	for (size_t i = 0; i < n; i++) {
		int first = 1;
		if ((i && (rc = buf_putc(out, ','))) ||
		    (rc = buf_append(out, "{\"metric\":", 10)) ||
		    (rc = tsd_json_string(out, s[i].metric,
					  strlen(s[i].metric))) ||
		    (rc = buf_putc(out, ',')) ||
		    (rc = put_tags(out, &s[i])) ||
		    (s[i].sq && (rc = put_query(out, s[i].sq, s[i].index))) ||
		    (s[i].tsuids && (rc = put_tsuids(out, &s[i]))) ||
		    (s[i].notes &&
		     ((rc = buf_append(out, LIT("\"annotations\":"))) ||
		      (rc = buf_append(out, s[i].notes, s[i].noteslen)) ||
		      (rc = buf_putc(out, ',')))) ||
		    (s[i].globals &&
		     ((rc = buf_append(out, LIT("\"globalAnnotations\":"))) ||
		      (rc = buf_append(out, s[i].globals, s[i].globalslen)) ||
		      (rc = buf_putc(out, ',')))) ||
		    (rc = buf_append(out, LIT("\"dps\":"))) ||
		    (rc = buf_putc(out, arrays ? '[' : '{')))
			return rc;
		for (size_t j = 0; j < s[i].n; j++) {
			const struct tsd_dp *p = &s[i].dp[j];
			if (p->ts < start_ms || p->ts > end_ms)
				continue;
			if ((rc = put_point(out, &s[i], p, ms, arrays,
					    first)) ||
			    (arrays && (rc = buf_putc(out, ']'))))
				return rc;
			first = 0;
		}
		if ((rc = buf_putc(out, arrays ? ']' : '}')) ||
		    (rc = buf_putc(out, '}')))
			return rc;
	}
	return buf_putc(out, ']');
}
