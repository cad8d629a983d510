/*
 * line.h: OpenTSDB put lines, parsed and validated as OpenTSDB's telnet
 * "put" command does (PutDataPointRpc.importDataPoint and the checks of
 * TSDB.addPoint):
 *
 *     [put ]METRIC TIMESTAMP VALUE TAGK=TAGV [TAGK=TAGV ...]
 *
 * - words are separated by spaces or tabs; a trailing '\r' is dropped;
 * - names (metric, tag keys, tag values) are non-empty and made of
 *   [A-Za-z0-9-_./], Unicode letters (tsd/unicode.h) and the characters
 *   of tsd_name_allow();
 * - TIMESTAMP is an integer > 0: seconds when it fits in 32 bits, else
 *   milliseconds up to 9999999999999; "SECONDS.mmm" (exactly three
 *   digits after the dot) is milliseconds too;
 * - VALUE without '.', 'e' or 'E' is a 64-bit integer, else a finite
 *   decimal floating-point number;
 * - at most TSD_LINE_MAX bytes, names at most TSD_NAME_MAX;
 * - 1 to 8 tags; a tag key given twice with the same value counts once,
 *   with another value it is an error.
 *
 * Pure; thread safe.  Parsed names point into the caller's line.
 */
#ifndef CF_TSD_LINE_H
#define CF_TSD_LINE_H

#include <stddef.h>
#include <stdint.h>

#include "tsd/codec.h"

/* The longest line (without its newline) and the longest name: a name is
 * a row key of tsdb-uid (CF_ROW_MAX). */
#define TSD_LINE_MAX (64 * 1024)
#define TSD_NAME_MAX 32767

/* tsd_line_parse() result for a line with no words (skipped). */
#define TSD_LINE_BLANK 1

struct tsd_tag {
	const char *k;
	size_t klen;
	const char *v;
	size_t vlen;
};

struct tsd_line {
	const char *metric;
	size_t mlen;
	int64_t ts;		/* seconds, or milliseconds (see above) */
	struct tsd_value value;
	size_t ntags;
	struct tsd_tag tags[TSD_MAX_TAGS];
};

/*
 * Parses the line s[0..len) (without its newline).  With metric non-NULL
 * the line has no metric word ("TIMESTAMP VALUE TAGS...", as appended to
 * MNT/tsd/metrics/M) and metric[0..mlen) is used; it is validated too.
 * Returns CF_OK, TSD_LINE_BLANK, or CF_EINVAL with a reason written to
 * why[0..whylen) (NUL-terminated).
 */
int tsd_line_parse(const char *s, size_t len, const char *metric,
		   size_t mlen, struct tsd_line *out, char *why,
		   size_t whylen);

/* The words of a put line as tsd_line_parse() splits them, unchecked:
 * the metric (NULL with has_metric: the caller's), the timestamp, the
 * value, and tags[0..tagslen), from the first tag word to the end of the
 * last word.  Two lines with the same metric word and the same tag text
 * have the same names, which tsd_line_parse() accepts or refuses alike
 * (a memo of them: tsd/tsd.c). */
struct tsd_line_words {
	const char *metric;
	size_t mlen;
	const char *ts;
	size_t tslen;
	const char *val;
	size_t vlen;
	const char *tags;
	size_t tagslen;
};
/* 1 and *out when s[0..len) has a timestamp, a value and a tag word
 * (and a metric word unless has_metric) and is at most TSD_LINE_MAX
 * bytes, else 0. */
int tsd_line_words(const char *s, size_t len, int has_metric,
		   struct tsd_line_words *out);
/* The timestamp and value of a line whose names tsd_line_parse()
 * accepted: what it would give for them, its refusal (CF_EINVAL, why)
 * worded as it words it. */
int tsd_line_point(const struct tsd_line_words *w, int64_t *ts,
		   struct tsd_value *v, char *why, size_t whylen);

/* 1 if s[0..len) is a valid metric, tag key or tag value name (OpenTSDB's
 * Tags.validateString on the UTF-8 text), else 0. */
int tsd_name_valid(const char *s, size_t len);

/* The most characters tsd_name_allow() takes. */
#define TSD_SPECIAL_MAX 64
/* OpenTSDB's tsd.core.tag.allow_specialchars (Tags.setAllowSpecialChars):
 * the characters of chars (UTF-8; NULL or "" for none, the default) are
 * valid in names too, for the whole process.  Call it at start-up, before
 * any name is checked: it is not safe against concurrent
 * tsd_name_valid().  CF_EINVAL (nothing changed): not UTF-8, or more than
 * TSD_SPECIAL_MAX characters. */
int tsd_name_allow(const char *chars);
/* The characters tsd_name_allow() allowed, as given ("" for none). */
const char *tsd_name_allowed(void);

#endif
