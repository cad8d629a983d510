/*
 * codec.h: the bytes of OpenTSDB 2.x storage (docs/tsd_format.md).
 *
 * Row keys of table tsdb:
 *     metric UID (3) | base hour (4, big-endian seconds, ts - ts % 3600)
 *     | tagk UID (3) tagv UID (3) ... sorted by tagk UID bytes
 * Qualifiers of family t:
 *     seconds: 2 bytes, (delta_s << 4) | flags
 *     millis:  4 bytes, 0xF0000000 | (delta_ms << 6) | flags
 *     flags:   0x8 = floating point, low 3 bits = value length - 1
 * Values: integers big-endian two's complement on 1, 2, 4 or 8 bytes;
 *     floats as IEEE 754 on 4 bytes (float) or 8 (double).
 * Compacted cells: the qualifiers of several points concatenated in time
 *     order, the values concatenated plus one trailing meta byte (0x01 when
 *     seconds and milliseconds points are mixed, else 0x00).
 *
 * Pure functions over caller memory; thread safe.
 */
#ifndef CF_TSD_CODEC_H
#define CF_TSD_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define TSD_UID_WIDTH 3
#define TSD_UID_MAX 0xFFFFFFu
#define TSD_TS_BYTES 4
#define TSD_MAX_TIMESPAN 3600
#define TSD_MAX_TAGS 8
#define TSD_ROWKEY_PREFIX (TSD_UID_WIDTH + TSD_TS_BYTES)
#define TSD_ROWKEY_MAX (TSD_ROWKEY_PREFIX + TSD_MAX_TAGS * 2 * TSD_UID_WIDTH)

#define TSD_FLAG_FLOAT 0x8u
#define TSD_LENGTH_MASK 0x7u
#define TSD_FLAGS_MASK 0xFu
#define TSD_MS_FLAG 0xF0000000u
#define TSD_MS_BYTE_FLAG 0xF0u
#define TSD_MS_MIXED_COMPACT 0x01u

/* Largest timestamp: 13 digits of milliseconds (OpenTSDB's bound). */
#define TSD_TS_MAX_MS INT64_C(9999999999999)

/* A value as stored: an integer or a floating-point number. */
struct tsd_value {
	int is_float;
	int64_t i;		/* when !is_float */
	double d;		/* when is_float */
};

/* One point inside a cell.  q holds its own (2 or 4 byte) qualifier with
 * the length bits corrected as OpenTSDB's fixQualifierFlags does; v points
 * into the cell's value. */
struct tsd_cellpt {
	uint32_t offset_ms;	/* from the row's base time */
	unsigned char q[4];
	unsigned char qlen;	/* 2: seconds, 4: milliseconds */
	unsigned char vlen;	/* 1..8 */
	const unsigned char *v;
};

/* The time of the point of qualifier q (2 or 4 bytes, one point's) from
 * its row's base time, in milliseconds: a seconds qualifier and a
 * milliseconds one may name the same time. */
uint32_t tsd_qualifier_offset_ms(const unsigned char *q);

/* 1 when ts (seconds or milliseconds) is in milliseconds: OpenTSDB's rule
 * is "does not fit in 32 bits". */
static inline int tsd_ts_is_ms(int64_t ts)
{
	return (ts & INT64_C(0x7FFFFFFF00000000)) != 0;
}

/* ts in milliseconds, whatever unit it came in. */
static inline int64_t tsd_ts_to_ms(int64_t ts)
{
	return tsd_ts_is_ms(ts) ? ts : ts * 1000;
}

/* The base hour (seconds) of ts, which may be in seconds or milliseconds. */
uint32_t tsd_base_time(int64_t ts);

/* Writes the qualifier of a point at ts (seconds or milliseconds) with the
 * given flags into q (room for 4); returns its length, 2 or 4. */
size_t tsd_qualifier_build(unsigned char *q, int64_t ts, unsigned flags);

/* Encodes an integer in the smallest of 1, 2, 4, 8 bytes into v (room for
 * 8); sets *flags (length - 1) and returns the length. */
size_t tsd_value_encode_int(unsigned char *v, int64_t x, unsigned *flags);
/* Encodes a finite double: on 4 bytes as a float when exact, else on 8;
 * sets *flags (0x8 | length - 1) and returns the length. */
size_t tsd_value_encode_float(unsigned char *v, double x, unsigned *flags);

/* Decodes the value of one point from its flags and bytes.  CF_ECORRUPT
 * when the length does not fit the type. */
int tsd_value_decode(unsigned flags, const unsigned char *v, size_t vlen,
		     struct tsd_value *out);

/* Flags (low 4 bits) of the point qualifier at q. */
static inline unsigned tsd_qualifier_flags(const unsigned char *q,
					   size_t qlen)
{
	return q[qlen - 1] & TSD_FLAGS_MASK;
}

/*
 * Splits one cell of family t into its points, in qualifier order.  out
 * must have room for qlen / 2 entries; *n gets the count.  Cells that hold
 * no data point (odd-length qualifiers: annotations, appends) give *n = 0.
 * Single cells are fixed as OpenTSDB fixes them (a float flagged as 4
 * bytes but stored on 8 with leading zeros).  CF_ECORRUPT when the
 * qualifier and value do not agree.
 */
int tsd_cell_split(const unsigned char *q, size_t qlen,
		   const unsigned char *v, size_t vlen,
		   struct tsd_cellpt *out, size_t *n);

/* A cell of a row, with its HBase version, for compaction. */
struct tsd_rawcell {
	const unsigned char *q;
	size_t qlen;
	const unsigned char *v;
	size_t vlen;
	int64_t version;
};

/*
 * The points of a row's cells[0..n), in time order; of several points at
 * the same millisecond the one from the newest cell is kept (at equal
 * versions: from a single-point cell, then the earliest listed).  out must have room for the sum of qlen / 2 over the
 * cells; *np gets the count.  CF_ECORRUPT, CF_ENOMEM.
 */
int tsd_row_points(const struct tsd_rawcell *cells, size_t n,
		   struct tsd_cellpt *out, size_t *np);

/*
 * OpenTSDB's row compaction: merges the points of cells[0..n) into one
 * cell, in time order; duplicates resolved as tsd_row_points() does.  The qualifier and
 * value are appended to qual and val; the value gets the trailing meta
 * byte only when the result holds more than one point.  *npoints gets the
 * number of points kept.  CF_ECORRUPT, CF_ENOMEM.
 */
int tsd_compact_cells(const struct tsd_rawcell *cells, size_t n,
		      struct buf *qual, struct buf *val, size_t *npoints);

/* Builds a row key into key (room for TSD_ROWKEY_MAX): metric UID, base
 * hour, then the ntags pairs of tags (each 6 bytes: tagk UID, tagv UID),
 * which this function sorts by tagk UID.  Returns the key length. */
size_t tsd_rowkey_build(unsigned char *key, const unsigned char *metric,
			uint32_t base, unsigned char (*tags)[2 * TSD_UID_WIDTH],
			size_t ntags);

/* Checks the shape of a row key: 1 if it has a metric, a base hour and
 * whole tag pairs (at least one, at most TSD_MAX_TAGS), else 0. */
int tsd_rowkey_valid(const unsigned char *key, size_t len);

static inline uint32_t tsd_uid_get(const unsigned char *p)
{
	return ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2];
}

static inline void tsd_uid_put(unsigned char *p, uint32_t uid)
{
	p[0] = (unsigned char)(uid >> 16);
	p[1] = (unsigned char)(uid >> 8);
	p[2] = (unsigned char)uid;
}

#endif
