/*
 * number.h: numbers as OpenTSDB reads and prints them.
 *
 * OpenTSDB is Java, so its text forms are Java's: integers follow
 * Tags.parseLong (an optional sign, decimal digits, no overflow), and
 * floating-point values print as Double.toString does ("476.0", "1.5E-4",
 * "1.0E10").  These helpers give cellfs the same bytes, so query output
 * and metric dumps read like OpenTSDB's.  Pure functions, thread safe.
 */
#ifndef CF_TSD_NUMBER_H
#define CF_TSD_NUMBER_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Longest text tsd_format_double() writes, with its NUL. */
#define TSD_DOUBLE_MAX 32

/* Parses s[0..len) as OpenTSDB's Tags.parseLong: [+-]?[0-9]+, at most 19
 * digits, no overflow.  CF_EINVAL otherwise. */
int tsd_parse_long(const char *s, size_t len, int64_t *out);

/* Parses s[0..len) as a decimal floating-point number:
 * [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?
 * CF_EINVAL on anything else, including "NaN", "Infinity", hex floats and
 * values that overflow to infinity. */
int tsd_parse_double(const char *s, size_t len, double *out);

/* 1 if s contains none of '.', 'e', 'E' (OpenTSDB's looksLikeInteger: such
 * a value is an integer or an error, never a float). */
int tsd_looks_like_integer(const char *s, size_t len);

/* 1 if d converts to float and back unchanged (Tags.fitsInFloat): such
 * values are stored on 4 bytes. */
int tsd_fits_in_float(double d);

/* Writes d as Java's Double.toString into dst (TSD_DOUBLE_MAX bytes,
 * NUL-terminated); returns the length.  The digits are the shortest that
 * read back as d. */
size_t tsd_format_double(char *dst, double d);

/* Appends tsd_format_double(d) to b.  CF_ENOMEM. */
int tsd_buf_double(struct buf *b, double d);

/* Appends v in decimal to b (printf's %lld, without printf).  CF_ENOMEM. */
int tsd_buf_long(struct buf *b, int64_t v);

/* Java's (long) cast of a double: NaN is 0, out of range saturates. */
int64_t tsd_java_d2l(double d);

/* Appends one output line `METRIC TS VALUE` + tags + '\n' to b: the value
 * an integer (i) or, with is_float, tsd_format_double(d); tags already
 * formatted (` k=v` pairs, or empty).  CF_ENOMEM. */
int tsd_buf_point(struct buf *b, const char *metric, int64_t ts,
		  int is_float, int64_t i, double d, const void *tags,
		  size_t tagslen);

#endif
