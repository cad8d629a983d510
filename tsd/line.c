/*
 * line.c: parsing and validating OpenTSDB put lines (rules in line.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tsd/line.h"
#include "tsd/number.h"
#include "tsd/unicode.h"
#include "util/err.h"

/* Decodes one UTF-8 character at s[0..len); returns its length, or 0 for
 * malformed, overlong or surrogate encodings. */
static size_t utf8_next(const unsigned char *s, size_t len, unsigned long *cp)
{
	unsigned long c = s[0];
	size_t n;

	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if ((c & 0xE0) == 0xC0) {
		n = 2;
		c &= 0x1F;
	} else if ((c & 0xF0) == 0xE0) {
		n = 3;
		c &= 0x0F;
	} else if ((c & 0xF8) == 0xF0) {
		n = 4;
		c &= 0x07;
	} else {
		return 0;
	}
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3F);
	}
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) ||
	    (n == 4 && c < 0x10000) || c > 0x10FFFF ||
	    (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return n;
}

/* tsd.core.tag.allow_specialchars: the characters names may have besides
 * the rule's (Tags.isAllowSpecialChars), as code points; set once at
 * start-up (Tags keeps it static too). */
static unsigned long special[TSD_SPECIAL_MAX];
static size_t nspecial;
static char special_text[4 * TSD_SPECIAL_MAX + 1];

int tsd_name_allow(const char *chars)
{
	const unsigned char *p = (const unsigned char *)(chars ? chars : "");
	size_t len = strlen((const char *)p), n = 0;

	for (size_t i = 0; i < len;) {
		unsigned long c;
		size_t k = utf8_next(p + i, len - i, &c);
		if (k == 0 || c == 0 || n == TSD_SPECIAL_MAX)
			return CF_EINVAL;
		special[n++] = c;
		i += k;
	}
	nspecial = n;
	memcpy(special_text, p, len + 1);
	return CF_OK;
}

const char *tsd_name_allowed(void)
{
	return special_text;
}

static int is_special(unsigned long c)
{
	for (size_t i = 0; i < nspecial; i++)
		if (special[i] == c)
			return 1;
	return 0;
}

int tsd_name_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	if (len == 0)
		return 0;
	for (size_t i = 0; i < len;) {
		unsigned long c;
		size_t n;
		/* ASCII, the common case, without decoding */
		if (p[i] < 0x80) {
			c = p[i];
			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			      (c >= '0' && c <= '9') || c == '-' || c == '_' ||
			      c == '.' || c == '/' || is_special(c)))
				return 0;
			i++;
			continue;
		}
		n = utf8_next(p + i, len - i, &c);
		if (n == 0)
			return 0;
		if (!((c >= '0' && c <= '9') || c == '-' || c == '_' ||
		      c == '.' || c == '/' || tsd_is_letter(c) ||
		      is_special(c)))
			return 0;
		i += n;
	}
	return 1;
}

/* Words quoted in messages are cut so a reason stays one short line. */
#define W(len) ((int)((len) > 64 ? 64 : (len)))

static int parse_ts(const char *s, size_t len, int64_t *ts, char *why,
		    size_t whylen)
{
	const char *dot = memchr(s, '.', len);
	int64_t v;

	if (dot) {
		/* "SECONDS.mmm": OpenTSDB drops the dot, which is only
		 * right with exactly three digits of milliseconds. */
		char tmp[32];
		size_t before = (size_t)(dot - s), after = len - before - 1;
		if (after != 3 || before == 0 || len >= sizeof tmp)
			return cf_einval(why, whylen, "invalid timestamp: %.*s",
					 W(len), s);
		memcpy(tmp, s, before);
		memcpy(tmp + before, dot + 1, 3);
		if (tsd_parse_long(tmp, before + 3, &v) || v <= 0)
			return cf_einval(why, whylen, "invalid timestamp: %.*s",
					 W(len), s);
	} else if (tsd_parse_long(s, len, &v) || v <= 0) {
		return cf_einval(why, whylen,
				 "invalid timestamp: %.*s", W(len), s);
	}
	if (tsd_ts_is_ms(v) && v > TSD_TS_MAX_MS)
		return cf_einval(why, whylen, "bad timestamp: %.*s", W(len), s);
	*ts = v;
	return CF_OK;
}

static int parse_value(const char *s, size_t len, struct tsd_value *v,
		       char *why, size_t whylen)
{
	if (tsd_looks_like_integer(s, len)) {
		v->is_float = 0;
		v->d = 0;
		if (tsd_parse_long(s, len, &v->i))
			return cf_einval(why, whylen, "invalid value: %.*s",
					 W(len), s);
		return CF_OK;
	}
	v->is_float = 1;
	v->i = 0;
	if (tsd_parse_double(s, len, &v->d))
		return cf_einval(why, whylen, "invalid value: %.*s", W(len), s);
	return CF_OK;
}

static int add_tag(struct tsd_line *l, const char *w, size_t wl, char *why,
		   size_t whylen)
{
	const char *eq = memchr(w, '=', wl);
	struct tsd_tag t;

	if (!eq || eq == w || eq == w + wl - 1 ||
	    memchr(eq + 1, '=', (size_t)(w + wl - eq - 1)))
		return cf_einval(why, whylen, "invalid tag: %.*s", W(wl), w);
	t.k = w;
	t.klen = (size_t)(eq - w);
	t.v = eq + 1;
	t.vlen = wl - t.klen - 1;
	if (t.klen > TSD_NAME_MAX || t.vlen > TSD_NAME_MAX)
		return cf_einval(why, whylen, "name too long (over %d bytes): "
				 "%.*s...", TSD_NAME_MAX, 40, w);
	if (!tsd_name_valid(t.k, t.klen))
		return cf_einval(why, whylen, "invalid tag name: %.*s",
				 W(t.klen), t.k);
	if (!tsd_name_valid(t.v, t.vlen))
		return cf_einval(why, whylen, "invalid tag value: %.*s",
				 W(t.vlen), t.v);
	for (size_t i = 0; i < l->ntags; i++) {
		const struct tsd_tag *o = &l->tags[i];
		if (o->klen != t.klen || memcmp(o->k, t.k, t.klen))
			continue;
		if (o->vlen == t.vlen && !memcmp(o->v, t.v, t.vlen))
			return CF_OK;
		return cf_einval(why, whylen, "duplicate tag: %.*s", W(wl), w);
	}
	if (l->ntags == TSD_MAX_TAGS)
		return cf_einval(why, whylen, "too many tags: more than %d",
				 TSD_MAX_TAGS);
	l->tags[l->ntags++] = t;
	return CF_OK;
}

int tsd_line_words(const char *s, size_t len, int has_metric,
		   struct tsd_line_words *out)
{
	const char *w[3];
	size_t wl[3], nw = 0, i = 0, need = has_metric ? 2 : 3;
	int first = 1;

	/* the words as tsd_line_parse splits them */
	if (len && s[len - 1] == '\r')
		len--;
	if (len > TSD_LINE_MAX)
		return 0;
	while (nw < need) {
		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == len)
			return 0;
		size_t b = i;
		while (i < len && s[i] != ' ' && s[i] != '\t')
			i++;
		if (first && !has_metric && i - b == 3 &&
		    !memcmp(s + b, "put", 3)) {
			first = 0;
			continue;
		}
		first = 0;
		w[nw] = s + b;
		wl[nw++] = i - b;
	}
	/* the tag words: from the next word to the end of the last (their
	 * bytes are not looked at here) */
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	while (len > i && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (i == len)
		return 0;
	out->tags = s + i;
	out->tagslen = len - i;
	out->metric = has_metric ? NULL : w[0];
	out->mlen = has_metric ? 0 : wl[0];
	out->ts = w[need - 2];
	out->tslen = wl[need - 2];
	out->val = w[need - 1];
	out->vlen = wl[need - 1];
	return 1;
}

int tsd_line_point(const struct tsd_line_words *w, int64_t *ts,
		   struct tsd_value *v, char *why, size_t whylen)
{
	int rc;

	if (why && whylen)
		why[0] = '\0';
	if ((rc = parse_ts(w->ts, w->tslen, ts, why, whylen)))
		return rc;
	return parse_value(w->val, w->vlen, v, why, whylen);
}

int tsd_line_parse(const char *s, size_t len, const char *metric,
		   size_t mlen, struct tsd_line *out, char *why,
		   size_t whylen)
{
	const char *w[3];
	size_t wl[3], nw = 0, i = 0;
	size_t need = metric ? 2 : 3;
	int rc, first = 1, saw_put = 0;

	if (len && s[len - 1] == '\r')
		len--;
	memset(out, 0, sizeof *out);
	if (why && whylen)
		why[0] = '\0';
	if (len > TSD_LINE_MAX)
		return cf_einval(why, whylen, "line too long (over 64 KiB)");
	while (i < len) {
		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == len)
			break;
		size_t b = i;
		while (i < len && s[i] != ' ' && s[i] != '\t')
			i++;
		if (first && !metric && i - b == 3 && !memcmp(s + b, "put", 3)) {
			first = 0;
			saw_put = 1;
			continue;
		}
		first = 0;
		if (nw < need) {
			w[nw] = s + b;
			wl[nw++] = i - b;
		} else if ((rc = add_tag(out, s + b, i - b, why, whylen))) {
			return rc;
		}
	}
	if (nw == 0 && out->ntags == 0 && !saw_put)
		return TSD_LINE_BLANK;
	if (nw < need)
		return cf_einval(why, whylen,
				 "not enough arguments (need %zu, got %zu)",
				 need + 1, nw);
	if (metric) {
		out->metric = metric;
		out->mlen = mlen;
	} else {
		out->metric = w[0];
		out->mlen = wl[0];
	}
	if (out->mlen > TSD_NAME_MAX)
		return cf_einval(why, whylen, "name too long (over %d bytes): "
				 "%.*s...", TSD_NAME_MAX, 40, out->metric);
	if (!tsd_name_valid(out->metric, out->mlen))
		return cf_einval(why, whylen, "invalid metric name: %.*s",
				 W(out->mlen), out->metric);
	if ((rc = parse_ts(w[need - 2], wl[need - 2], &out->ts, why, whylen)))
		return rc;
	if ((rc = parse_value(w[need - 1], wl[need - 1], &out->value, why,
			      whylen)))
		return rc;
	if (out->ntags == 0)
		return cf_einval(why, whylen, "need at least one tag");
	return CF_OK;
}
