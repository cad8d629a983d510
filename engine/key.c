/*
 * key.c: encoding and ordering of internal keys (layout in key.h and
 * docs/sst_format.md).  The comparator runs on every skiplist step and
 * block search, so it works on the encoded bytes without a full decode.
 */
#include <string.h>

#include "engine/key.h"
#include "util/coding.h"
#include "util/err.h"

size_t ikey_encode(unsigned char *dst, const struct ikey *k)
{
	unsigned char *p = dst;

	p[0] = (unsigned char)(k->rowlen >> 8);
	p[1] = (unsigned char)k->rowlen;
	p += 2;
	if (k->rowlen)
		memcpy(p, k->row, k->rowlen);
	p += k->rowlen;
	*p++ = (unsigned char)k->famlen;
	if (k->famlen)
		memcpy(p, k->fam, k->famlen);
	p += k->famlen;
	if (k->qlen)
		memcpy(p, k->qual, k->qlen);
	p += k->qlen;
	enc_u64be(p, (uint64_t)k->ts ^ (UINT64_C(1) << 63));
	p += 8;
	enc_u64be(p, (k->seq << 8) | (uint64_t)(k->type & 0xff));
	p += 8;
	return (size_t)(p - dst);
}

int ikey_decode(const unsigned char *p, size_t n, struct ikey *k)
{
	size_t rowlen, famlen;
	uint64_t st;

	if (n < KEY_OVERHEAD)
		return CF_ECORRUPT;
	rowlen = ((size_t)p[0] << 8) | p[1];
	if (rowlen > 32767 || 2 + rowlen + 1 + KEY_TRAILER > n)
		return CF_ECORRUPT;
	famlen = p[2 + rowlen];
	if (KEY_OVERHEAD + rowlen + famlen > n)
		return CF_ECORRUPT;
	k->row = p + 2;
	k->rowlen = rowlen;
	k->fam = p + 3 + rowlen;
	k->famlen = famlen;
	k->qual = k->fam + famlen;
	k->qlen = n - KEY_OVERHEAD - rowlen - famlen;
	k->ts = (int64_t)(dec_u64be(p + n - 16) ^ (UINT64_C(1) << 63));
	st = dec_u64be(p + n - 8);
	k->seq = st >> 8;
	k->type = (int)(st & 0xff);
	return CF_OK;
}

/*
 * Compares n bytes, 8 at a time as big-endian words: rows, families and
 * qualifiers are mostly short, and for them a call into the C library's
 * memcmp (with its dispatch on length and alignment) costs more than the
 * comparison.  Long strings go to memcmp.
 */
static inline int cmp_n(const unsigned char *a, const unsigned char *b,
			size_t n)
{
	if (n > 64)
		return memcmp(a, b, n);
	for (; n >= 8; a += 8, b += 8, n -= 8) {
		uint64_t x = dec_u64be(a), y = dec_u64be(b);
		if (x != y)
			return x < y ? -1 : 1;
	}
	for (; n > 0; a++, b++, n--)
		if (*a != *b)
			return *a < *b ? -1 : 1;
	return 0;
}

static inline int cmp_bytes(const unsigned char *a, size_t an,
			    const unsigned char *b, size_t bn)
{
	int c = cmp_n(a, b, an < bn ? an : bn);

	if (c)
		return c;
	return an < bn ? -1 : an > bn;
}

int bytes_cmp(const void *a, size_t an, const void *b, size_t bn)
{
	return cmp_bytes(a, an, b, bn);
}

int ikey_cmp_row(const unsigned char *a, size_t an, const unsigned char *b,
		 size_t bn)
{
	size_t ar = ((size_t)a[0] << 8) | a[1];
	size_t br = ((size_t)b[0] << 8) | b[1];

	(void)an;
	(void)bn;
	return cmp_bytes(a + 2, ar, b + 2, br);
}

static inline int cmp_column(const unsigned char *a, size_t an,
			     const unsigned char *b, size_t bn)
{
	size_t ar = ((size_t)a[0] << 8) | a[1];
	size_t br = ((size_t)b[0] << 8) | b[1];
	size_t af, bf;
	int c = cmp_bytes(a + 2, ar, b + 2, br);

	if (c)
		return c;
	a += 2 + ar;
	b += 2 + br;
	an -= 2 + ar;
	bn -= 2 + br;
	af = a[0];
	bf = b[0];
	c = cmp_bytes(a + 1, af, b + 1, bf);
	if (c)
		return c;
	/* qualifiers: what lies between the family and the trailer */
	return cmp_bytes(a + 1 + af, an - 1 - af - KEY_TRAILER,
			 b + 1 + bf, bn - 1 - bf - KEY_TRAILER);
}

int ikey_cmp_column(const unsigned char *a, size_t an,
		    const unsigned char *b, size_t bn)
{
	return cmp_column(a, an, b, bn);
}

int ikey_cmp(const unsigned char *a, size_t an, const unsigned char *b,
	     size_t bn)
{
	int c = cmp_column(a, an, b, bn);

	if (c)
		return c;
	/* trailers: ts is stored biased so bytes order = signed order;
	 * descending ts, then descending seqtype. */
	return cmp_n(b + bn - KEY_TRAILER, a + an - KEY_TRAILER, KEY_TRAILER);
}

size_t ikey_separator(const unsigned char *a, size_t an,
		      const unsigned char *b, size_t bn, unsigned char *dst)
{
	size_t ra, rb = 0, i = 0, sl, bump = SIZE_MAX;
	const unsigned char *pa = ikey_row(a, &ra), *pb = NULL, *src = pa;

	(void)bn;
	if (b) {
		pb = ikey_row(b, &rb);
		while (i < ra && i < rb && pa[i] == pb[i])
			i++;
		if (i == rb)
			return 0;	/* one row (or not a < b): a serves */
	}
	if (b && i == ra) {
		/* a's row is a proper prefix of b's: one more byte of b's,
		 * if that is still shorter than b's */
		if (rb <= i + 1)
			return 0;
		src = pb;
		sl = i + 1;
	} else if (b && pa[i] + 1 < pb[i]) {
		bump = i;			/* a's first differing byte + 1 */
		sl = i + 1;
	} else {
		/* the first byte of a's row after the common prefix that
		 * can grow (a successor of a's row: from its start) */
		size_t j = b ? i + 1 : 0;
		while (j < ra && pa[j] == 0xFF)
			j++;
		if (j == ra)
			return 0;
		bump = j;
		sl = j + 1;
	}
	if (KEY_OVERHEAD + sl >= an)
		return 0;
	dst[0] = (unsigned char)(sl >> 8);
	dst[1] = (unsigned char)sl;
	memcpy(dst + 2, src, sl);
	if (bump != SIZE_MAX)
		dst[2 + bump]++;
	memset(dst + 2 + sl, 0, 1 + KEY_TRAILER);
	return KEY_OVERHEAD + sl;
}
