/* fuzz-json: the JSON that /api/query answers (tsd/json.c): names from
 * any bytes (tsd_json_string) and result groups of any points
 * (tsd_json_format), read back with jansson, the parser the API reads
 * its bodies with.  What is written must parse, and say exactly what it
 * was given: the same name bytes, the same integers, the same doubles
 * (the digits of tsd_format_double read back as the value), NaN as
 * "NaN" or null.  A name that is not UTF-8 is refused (CF_EINVAL), and
 * exactly when jansson refuses it too.
 *
 * Input: a flags byte (bit 0: ms, bit 1: NaN as null, bit 2: "dps" as
 * [[TS,VALUE],...], bit 3: the aggregated keys also printed as
 * "tsuids"), then the metric, the tags (" k=v ...") and the
 * aggregated tag keys (" k ..."), each ended by a NUL, then points of 17
 * bytes (ts, float flag, value).  The whole input is also one name for
 * tsd_json_string. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "tsd/json.h"
#include "util/err.h"

#define MAXP 4096

static void fail(const char *what, const struct buf *out)
{
	fprintf(stderr, "fuzz-json: %s: %.*s\n", what,
		out->len > 400 ? 400 : (int)out->len,
		out->p ? (const char *)out->p : "");
	abort();
}

/* tsd_json_string of s: refused iff jansson refuses it, else it reads
 * back as s. */
static void check_string(const void *s, size_t len)
{
	struct buf out = BUF_INIT;
	json_t *ref = json_stringn(s, len), *back;
	json_error_t e;
	int rc = tsd_json_string(&out, s, len);

	if (rc == CF_ENOMEM)
		goto done;
	if ((rc == CF_EINVAL) != (ref == NULL))
		fail(rc ? "a UTF-8 name refused" : "a bad name taken", &out);
	if (rc)
		goto done;
	back = json_loadb((const char *)out.p, out.len,
			  JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
	if (!back || !json_is_string(back) ||
	    json_string_length(back) != len ||
	    (len && memcmp(json_string_value(back), s, len)))
		fail("a name does not read back", &out);
	json_decref(back);
done:
	json_decref(ref);
	buf_release(&out);
}

static int64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return (int64_t)v;
}

/* Splits off the next NUL-ended part of data (the rest, when none). */
static char *part(const uint8_t **data, size_t *size)
{
	const uint8_t *nul = memchr(*data, 0, *size);
	size_t n = nul ? (size_t)(nul - *data) : *size;
	char *s = malloc(n + 1);

	if (!s)
		abort();
	memcpy(s, *data, n);
	s[n] = '\0';
	*data += n + (nul != NULL);
	*size -= n + (nul != NULL);
	return s;
}

/* One point's value as tsd_json_format must have written it. */
static void check_value(json_t *v, const struct tsd_dp *p,
			const struct tsd_json_series *s, const struct buf *out)
{
	if (!p->is_float) {
		if (!json_is_integer(v) || json_integer_value(v) != p->i)
			fail("an integer does not read back", out);
	} else if (p->d != p->d) {
		if (s->nan_null ? !json_is_null(v) :
		    !json_is_string(v) ||
		    strcmp(json_string_value(v), "NaN"))
			fail("NaN is not written as asked", out);
	} else if (isinf(p->d)) {
		if (!json_is_string(v) ||
		    strcmp(json_string_value(v), p->d > 0 ?
			   "Infinity" : "-Infinity"))
			fail("an infinity is not a JSON string", out);
	} else if (!json_is_number(v) || json_number_value(v) != p->d ||
		   signbit(json_number_value(v)) != signbit(p->d)) {
		fail("a double does not read back", out);
	}
}

/* The points in range, as tsd_json_format must have written them. */
static void check_points(json_t *dps, const struct tsd_json_series *s,
			 int ms, const struct buf *out)
{
	char key[32];

	for (size_t i = 0; i < s->n; i++) {
		const struct tsd_dp *p = &s->dp[i];
		json_t *v;
		int dup = 0;
		/* a later point of the same key is the one the object keeps */
		for (size_t j = i + 1; j < s->n; j++)
			if ((ms ? s->dp[j].ts : s->dp[j].ts / 1000) ==
			    (ms ? p->ts : p->ts / 1000))
				dup = 1;
		if (dup)
			continue;
		snprintf(key, sizeof key, "%lld",
			 (long long)(ms ? p->ts : p->ts / 1000));
		v = json_object_get(dps, key);
		if (!v)
			fail("a point is missing", out);
		check_value(v, p, s, out);
	}
}

/* With arrays: every point, in order, as [TS,VALUE]. */
static void check_arrays(json_t *dps, const struct tsd_json_series *s,
			 int ms, const struct buf *out)
{
	if (!json_is_array(dps) || json_array_size(dps) != s->n)
		fail("arrays: not one pair a point", out);
	for (size_t i = 0; i < s->n; i++) {
		const struct tsd_dp *p = &s->dp[i];
		json_t *e = json_array_get(dps, i);
		json_t *t = json_array_get(e, 0);
		if (!json_is_array(e) || json_array_size(e) != 2 ||
		    !json_is_integer(t) || json_integer_value(t) !=
		    (ms ? p->ts : p->ts / 1000))
			fail("arrays: not [TS,VALUE]", out);
		check_value(json_array_get(e, 1), p, s, out);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tsd_dp dp[MAXP];
	struct tsd_json_series s;
	struct buf out = BUF_INIT;
	char *metric, *tags, *agg;
	json_t *root, *g;
	json_error_t e;
	int ms, arrays, tsuids, rc;

	check_string(data, size);
	if (size < 1)
		return 0;
	ms = data[0] & 1;
	memset(&s, 0, sizeof s);
	s.nan_null = (data[0] >> 1) & 1;
	arrays = (data[0] >> 2) & 1;
	tsuids = (data[0] >> 3) & 1;
	data++;
	size--;
	metric = part(&data, &size);
	tags = part(&data, &size);
	agg = part(&data, &size);
	for (s.n = 0; size >= 17 && s.n < MAXP; s.n++, data += 17, size -= 17) {
		dp[s.n].ts = get64(data);
		dp[s.n].is_float = data[8] & 1;
		dp[s.n].i = get64(data + 9);
		memcpy(&dp[s.n].d, data + 9, sizeof dp[s.n].d);
	}
	s.metric = metric;
	s.tags = tags;
	s.tagslen = strlen(tags);
	s.aggtags = agg;
	s.aggtagslen = strlen(agg);
	if (tsuids) {	/* the aggregated keys' words stand for TSUIDs */
		s.tsuids = agg;
		s.tsuidslen = s.aggtagslen;
	}
	s.dp = dp;
	rc = tsd_json_format(&out, &s, 1, ms, arrays, INT64_MIN, INT64_MAX);
	if (rc == CF_OK) {
		root = json_loadb((const char *)out.p, out.len, 0, &e);
		if (!root)
			fail(e.text, &out);
		g = json_array_get(root, 0);
		if (json_array_size(root) != 1 || !json_is_object(g) ||
		    !json_is_string(json_object_get(g, "metric")) ||
		    strcmp(json_string_value(json_object_get(g, "metric")),
			   metric) ||
		    !json_is_object(json_object_get(g, "tags")) ||
		    !json_is_array(json_object_get(g, "aggregateTags")) ||
		    !json_object_get(g, "dps") ||
		    (tsuids && json_array_size(json_object_get(g, "tsuids")) !=
		     json_array_size(json_object_get(g, "aggregateTags"))))
			fail("not the shape of a result group", &out);
		if (arrays)
			check_arrays(json_object_get(g, "dps"), &s, ms, &out);
		else if (!json_is_object(json_object_get(g, "dps")))
			fail("not the shape of a result group", &out);
		else
			check_points(json_object_get(g, "dps"), &s, ms, &out);
		json_decref(root);
	} else if (rc != CF_EINVAL && rc != CF_ENOMEM) {
		fail("an unexpected error", &out);
	}
	buf_release(&out);
	free(metric);
	free(tags);
	free(agg);
	return 0;
}
