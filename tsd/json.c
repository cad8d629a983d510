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

static int put_point(struct buf *out, const struct tsd_json_series *s,
		     const struct tsd_dp *p, int ms, int first)
{
	int rc;

	if ((!first && (rc = buf_putc(out, ','))) ||
	    (rc = buf_putc(out, '"')) ||
	    (rc = tsd_buf_long(out, ms ? p->ts : p->ts / 1000)) ||
	    (rc = buf_append(out, "\":", 2)))
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
		    size_t n, int ms, int64_t start_ms, int64_t end_ms)
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
		    (rc = buf_append(out, "\"dps\":{", 7)))
			return rc;
		for (size_t j = 0; j < s[i].n; j++) {
			const struct tsd_dp *p = &s[i].dp[j];
			if (p->ts < start_ms || p->ts > end_ms)
				continue;
			if ((rc = put_point(out, &s[i], p, ms, first)))
				return rc;
			first = 0;
		}
		if ((rc = buf_append(out, "}}", 2)))
			return rc;
	}
	return buf_putc(out, ']');
}
