/*
 * key.h: the internal key of a cell, as stored in memstores, WAL records
 * and store files (docs/sst_format.md):
 *
 *   u16be rowlen | row | u8 famlen | fam | qual | i64be ts | u64be seqtype
 *
 * seqtype = seq << 8 | type.  The qualifier length is what remains.
 * Order: row, family, qualifier ascending (bytewise, shorter first on a
 * common prefix), then timestamp descending, then seqtype descending
 * (newest write first).
 */
#ifndef CF_KEY_H
#define CF_KEY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum cf_type {
	KT_PUT = 4,
	KT_DELETE = 8,		/* one version: exactly ts */
	KT_DELETE_COLUMN = 12,	/* every version <= ts */
	KT_DELETE_FAMILY = 14	/* every column of the family, <= ts;
				   stored with an empty qualifier */
};

#define KEY_TRAILER 16		/* ts + seqtype */
#define KEY_OVERHEAD (2 + 1 + KEY_TRAILER)
#define SEQ_MAX ((UINT64_C(1) << 56) - 1)

struct ikey {
	const unsigned char *row;
	size_t rowlen;
	const unsigned char *fam;
	size_t famlen;
	const unsigned char *qual;
	size_t qlen;
	int64_t ts;
	uint64_t seq;
	int type;
};

static inline size_t ikey_size(const struct ikey *k)
{
	return KEY_OVERHEAD + k->rowlen + k->famlen + k->qlen;
}

/* 1 if p[0..n) has the layout of an internal key (what ikey_decode
 * checks), so ikey_cmp may read it; 0 for a malformed one. */
static inline int ikey_valid(const unsigned char *p, size_t n)
{
	size_t rowlen;

	if (n < KEY_OVERHEAD)
		return 0;
	rowlen = ((size_t)p[0] << 8) | p[1];
	return rowlen <= 32767 && 2 + rowlen + 1 + KEY_TRAILER <= n &&
	       KEY_OVERHEAD + rowlen + p[2 + rowlen] <= n;
}

/* Writes k at dst (ikey_size(k) bytes); returns the size. */
size_t ikey_encode(unsigned char *dst, const struct ikey *k);
/* Parses n bytes at p; pointers in *k point into p.  CF_ECORRUPT if
 * malformed. */
int ikey_decode(const unsigned char *p, size_t n, struct ikey *k);
/* <0, 0, >0 as a sorts before, with, after b. */
int ikey_cmp(const unsigned char *a, size_t an, const unsigned char *b,
	     size_t bn);
/* Compares only (row, fam, qual): 0 when both name the same column. */
int ikey_cmp_column(const unsigned char *a, size_t an,
		    const unsigned char *b, size_t bn);
/* Compares only the rows. */
int ikey_cmp_row(const unsigned char *a, size_t an, const unsigned char *b,
		 size_t bn);
/* The row of an encoded key, without a full decode. */
static inline const unsigned char *ikey_row(const unsigned char *p,
					    size_t *rowlen)
{
	*rowlen = ((size_t)p[0] << 8) | p[1];
	return p + 2;
}
/*
 * A short key k with a <= k < b (b NULL: any k >= a), for a store file's
 * index (LevelDB's FindShortestSeparator and FindShortSuccessor, on the
 * row): a row strictly between a's and b's (after a's when b is NULL),
 * an empty family and qualifier, a zero timestamp and seqtype field.
 * Writes it at dst, which has room for an bytes, and returns its
 * length; 0 when there is no such key shorter than a (a itself serves).
 * a and b are well-formed keys, a < b.
 */
size_t ikey_separator(const unsigned char *a, size_t an,
		      const unsigned char *b, size_t bn, unsigned char *dst);
/* Bytewise compare of two byte strings, shorter first on a tie. */
int bytes_cmp(const void *a, size_t an, const void *b, size_t bn);

/* 1 if the n bytes at a and b are the same: up to 16 of them in two
 * overlapping words, without a call (a scan asks once a cell whether
 * the row or the family goes on). */
static inline int bytes_equal(const void *a, const void *b, size_t n)
{
	const unsigned char *p = a, *q = b;
	uint64_t x, y, u, v;

	if (n >= 8 && n <= 16) {
		memcpy(&x, p, 8);
		memcpy(&y, q, 8);
		memcpy(&u, p + n - 8, 8);
		memcpy(&v, q + n - 8, 8);
		return ((x ^ y) | (u ^ v)) == 0;
	}
	if (n < 8) {
		x = y = 0;
		for (size_t i = 0; i < n; i++) {
			x = x << 8 | p[i];
			y = y << 8 | q[i];
		}
		return x == y;
	}
	return memcmp(p, q, n) == 0;
}

#endif
