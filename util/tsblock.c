/*
 * tsblock.c: the TSDB block encoding (util/tsblock.h); the byte layout
 * is docs/tsblock_format.md, which this file follows section by section.
 *
 * Invariants:
 * - decode(encode(x)) == x byte for byte, checked by the encoder itself
 *   for every cell and every block before it hands anything out;
 * - the decoder reads only inside its input and writes only inside dst
 *   and its own buffers, whatever the input (fuzz-tsblock);
 * - all integer arithmetic on stored numbers is on uint64_t (wrapping),
 *   so no input makes a signed overflow.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/coding.h"
#include "util/err.h"
#include "util/tsblock.h"

#define TSB_VERSION 3		/* written; 1 and 2 are still read */
#define IKEY_TRAILER 16		/* u64be ts', u64be seqtype */
#define MAXK 15			/* largest decimal scale tried */
/* Version 3: a block's first ts' is given from the ts' of the time 0
 * (docs/sst_format.md: ts' = ts XOR 2^63), so a timestamp of these
 * decades in milliseconds takes 42 bits, not 64 */
#define TS_ZERO ((uint64_t)1 << 63)

enum { K_OPAQUE = 0, K_CELL = 1, K_VERBATIM = 2 };
/* Version 2: flags of an entry's kind byte. */
#define E_DIFF 0x04		/* the head as the previous one's changed bytes */
#define E_TS0 0x08		/* the timestamp's second difference is 0 */
#define E_SEQ0 0x10		/* the seqtype's second difference is 0 */
#define E_SAME 0x20		/* with E_DIFF: the bytes change where they
				 * changed in the previous E_DIFF entry */
#define E_SHAPE 0x40		/* version 3, a cell: its flags and point
				 * count are the previous cell's */
#define E_ZMAP 0x80		/* version 3, a head's shared/suffix/mid
				 * form: the mid bytes as a bitmap of the
				 * nonzero ones, then those */
#define EPRE_MAX 14		/* version 3: E_SAME changes in a cell's
				 * stream, at most (and struct tsctx
				 * without padding) */
enum { M_RAW = 0, M_DELTA = 1, M_DOD = 2 };
enum { F_DECIMAL = 0, F_XOR = 1 };

/* The flags byte of a cell (docs/tsblock_format.md, "Cells"). */
#define C_META 0x01u		/* the value ends with a meta byte */
#define C_CANON 0x02u		/* flags follow the writer's rule */
#define C_ANYMS 0x04u		/* some point has a millisecond qualifier */
#define C_ALLMS 0x08u		/* every point has one (no unit column) */
#define C_METAX 0x10u		/* the meta byte is stored (else derived) */
#define C_ONETYPE 0x20u		/* canonical, one type: no type column */
#define C_FLOATS 0x40u		/* with C_ONETYPE: all floats */
#define C_ALL 0x7Fu
#define C_SAMEN 0x80u		/* version 2: as many points as the previous */

static const double p10[MAXK + 1] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15
};

/* --- small pieces ----------------------------------------------------- */

static uint64_t zz(uint64_t x)
{
	return (x << 1) ^ (0 - (x >> 63));
}

static uint64_t unzz(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

static unsigned width_of(uint64_t m)
{
	return m ? 64 - (unsigned)__builtin_clzll(m) : 0;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static int get_varint(const unsigned char **p, const unsigned char *end,
		      uint64_t *v)
{
	size_t k = dec_varint(*p, end, v);
	if (!k)
		return -1;
	*p += k;
	return 0;
}

static double bits_double(uint64_t b)
{
	double d;
	memcpy(&d, &b, 8);
	return d;
}

static uint64_t double_bits(double d)
{
	uint64_t b;
	memcpy(&b, &d, 8);
	return b;
}

/* (float)r, defined for every r: out of float range gives +-inf. */
static float to_float(double r)
{
	if (isnan(r) || fabs(r) <= FLT_MAX)
		return (float)r;
	return r < 0 ? -INFINITY : INFINITY;
}

/* The writer's rule for a float: 4 bytes when exact as a float. */
static int fits_float(double r)
{
	return isinf(r) || (fabs(r) <= FLT_MAX && (double)(float)r == r);
}

/* The writer's rule for an integer: the smallest of 1, 2, 4, 8. */
static unsigned int_len(int64_t x)
{
	if (x >= INT8_MIN && x <= INT8_MAX)
		return 1;
	if (x >= INT16_MIN && x <= INT16_MAX)
		return 2;
	if (x >= INT32_MIN && x <= INT32_MAX)
		return 4;
	return 8;
}

/* Writes the float value r on len (4 or 8) bytes, big-endian. */
static void put_float(unsigned char *o, double r, unsigned len)
{
	if (len == 4) {
		float f = to_float(r);
		uint32_t b;
		memcpy(&b, &f, 4);
		enc_u32be(o, b);
	} else {
		enc_u64be(o, double_bits(r));
	}
}

/* --- bits ------------------------------------------------------------- */

/* Bits are packed least significant first into bytes, in order. */
struct bw {
	struct buf *out;
	uint64_t acc;
	unsigned n;		/* bits in acc, < 64 */
	int rc;
};

static void bw_put(struct bw *w, uint64_t v, unsigned bits)
{
	while (bits) {
		unsigned room = 64 - w->n, take = bits < room ? bits : room;
		uint64_t part = take == 64 ? v : v & (((uint64_t)1 << take) - 1);
		w->acc |= part << w->n;
		w->n += take;
		bits -= take;
		v = take == 64 ? 0 : v >> take;
		if (w->n == 64) {
			unsigned char b[8];
			enc_u64le(b, w->acc);
			if (!w->rc)
				w->rc = buf_append(w->out, b, 8);
			w->acc = 0;
			w->n = 0;
		}
	}
}

static int bw_end(struct bw *w)
{
	unsigned char b[8];
	enc_u64le(b, w->acc);
	if (!w->rc && w->n)
		w->rc = buf_append(w->out, b, (w->n + 7) / 8);
	w->acc = 0;
	w->n = 0;
	return w->rc;
}

struct br {
	const unsigned char *p, *end;
	uint64_t acc;
	unsigned n;		/* bits in acc */
	int bad;		/* read past the end */
};

static void br_init(struct br *r, const unsigned char *p, size_t n)
{
	r->p = p;
	r->end = p + n;
	r->acc = 0;
	r->n = 0;
	r->bad = 0;
}

#define HOT static inline __attribute__((always_inline))

/* Up to 32 bits. */
HOT uint64_t br_get32(struct br *r, unsigned bits)
{
	uint64_t v;

	if (bits == 0)
		return 0;
	if (r->n < bits) {
		/* bits of acc past n may hold bytes not yet counted: masked
		 * off here before new ones go in */
		r->acc &= r->n ? ~(uint64_t)0 >> (64 - r->n) : 0;
		if (r->end - r->p >= 8) {
			unsigned take = (63 - r->n) / 8;
			r->acc |= dec_u64le(r->p) << r->n;
			r->p += take;
			r->n += 8 * take;
		} else {
			while (r->n <= 56 && r->p < r->end) {
				r->acc |= (uint64_t)*r->p++ << r->n;
				r->n += 8;
			}
		}
		if (r->n < bits) {
			r->bad = 1;
			return 0;
		}
	}
	v = r->acc & (((uint64_t)1 << bits) - 1);
	r->acc >>= bits;
	r->n -= bits;
	return v;
}

HOT uint64_t br_get(struct br *r, unsigned bits)
{
	if (bits > 32) {
		uint64_t lo = br_get32(r, 32);
		return lo | br_get32(r, bits - 32) << 32;
	}
	return br_get32(r, bits);
}

/*
 * Version 3's code for a number x with a state k per field (the width
 * of the field's previous number): Elias gamma of zz(w - k) + 1, w the
 * width of x, then x's w - 1 bits below its top bit.  A number of the
 * width of the one before costs w bits.
 */
static unsigned wc_len(uint64_t x, unsigned k)
{
	unsigned w = width_of(x);
	uint64_t g = zz((uint64_t)w - k) + 1;

	return 2 * width_of(g) - 1 + (w ? w - 1 : 0);
}

static void wc_put(struct bw *b, uint64_t x, unsigned *k)
{
	unsigned w = width_of(x);
	uint64_t g = zz((uint64_t)w - *k) + 1;
	unsigned gw = width_of(g);

	bw_put(b, (uint64_t)1 << (gw - 1), gw);
	bw_put(b, g, gw - 1);
	if (w > 1)
		bw_put(b, x, w - 1);
	*k = w;
}

static uint64_t wc_get(struct br *r, unsigned *k)
{
	unsigned z = 0;
	uint64_t g, w;

	while (br_get32(r, 1) == 0) {
		if (r->bad || ++z > 7) {
			r->bad = 1;
			return 0;
		}
	}
	g = ((uint64_t)1 << z) | br_get32(r, z);
	w = *k + unzz(g - 1);
	if (w > 64) {
		r->bad = 1;
		return 0;
	}
	*k = (unsigned)w;
	if (w == 0)
		return 0;
	return (uint64_t)1 << (w - 1) | br_get(r, (unsigned)w - 1);
}

/* Where a reader is, in bits from base. */
static uint64_t br_pos(const struct br *r, const unsigned char *base)
{
	return (uint64_t)(r->p - base) * 8 - r->n;
}

/* A reader of [base + off / 8, end) that skips off % 8 bits first. */
static int br_init_at(struct br *r, const unsigned char *base,
		      const unsigned char *end, uint64_t off)
{
	if (off / 8 > (uint64_t)(end - base))
		return -1;
	br_init(r, base + off / 8, (size_t)(end - base - off / 8));
	br_get32(r, (unsigned)(off % 8));
	return r->bad ? -1 : 0;
}

/* Appends bits bits of p (packed as bw packs them) to w. */
static void bw_copy(struct bw *w, const unsigned char *p, uint64_t bits)
{
	for (; bits >= 64; bits -= 64, p += 8)
		bw_put(w, dec_u64le(p), 64);
	if (bits) {
		uint64_t v = 0;
		for (unsigned i = 0; i < (bits + 7) / 8; i++)
			v |= (uint64_t)p[i] << (8 * i);
		bw_put(w, v, (unsigned)bits);
	}
}

/*
 * Where a column header goes or comes from: bytes and varints (version
 * 2: w NULL), or version 3's bit stream and wc codes.
 */
struct hw {
	struct buf *out;
	struct bw *w;
};

static int h_num(struct hw *h, uint64_t v, unsigned *k)
{
	if (!h->w)
		return buf_put_varint(h->out, v);
	wc_put(h->w, v, k);
	return 0;
}

static int h_bits(struct hw *h, unsigned v, unsigned bits)
{
	if (!h->w)
		return buf_putc(h->out, (int)v);
	bw_put(h->w, v, bits);
	return 0;
}

/* The bits a header number costs. */
static double h_cost(int v3, uint64_t v, unsigned k)
{
	return v3 ? (double)wc_len(v, k) : 8.0 * (double)varint_len(v);
}

struct hr {
	const unsigned char **p, *end;
	struct br *r;		/* version 3 */
};

static int h_getnum(struct hr *h, uint64_t *v, unsigned *k)
{
	if (!h->r)
		return get_varint(h->p, h->end, v);
	*v = wc_get(h->r, k);
	return h->r->bad ? -1 : 0;
}

static int h_getbits(struct hr *h, unsigned *v, unsigned bits)
{
	if (!h->r) {
		if (*h->p >= h->end)
			return -1;
		*v = *(*h->p)++;
		return 0;
	}
	*v = (unsigned)br_get32(h->r, bits);
	return h->r->bad ? -1 : 0;
}

/* --- integer columns (frame of reference over values, deltas or
 * deltas of deltas) ------------------------------------------------------ */

/*
 * A column packs count numbers in [0, max] (values, deltas or deltas of
 * deltas, less their minimum) in a truncated binary code: with w the
 * width of max and u = 2^w - 1 - max, a number below u takes w - 1
 * bits, any other w, so a range that is not a power of two costs about
 * log2(max + 1) bits a number rather than w.
 */
struct tbin {
	unsigned w;
	uint64_t u;
};

static void tbin_init(struct tbin *t, uint64_t max)
{
	t->w = width_of(max);
	t->u = (t->w == 64 ? UINT64_MAX : ((uint64_t)1 << t->w) - 1) - max;
}

static void tbin_put(struct bw *w, const struct tbin *t, uint64_t x)
{
	if (t->w == 0)
		return;
	if (x < t->u) {
		bw_put(w, x, t->w - 1);
	} else {
		uint64_t z = x + t->u;
		bw_put(w, z >> 1, t->w - 1);
		bw_put(w, z & 1, 1);
	}
}

HOT uint64_t tbin_get(struct br *r, const struct tbin *t)
{
	uint64_t y;

	if (t->w == 0)
		return 0;
	y = br_get(r, t->w - 1);
	if (y < t->u)
		return y;
	return ((y << 1) | br_get(r, 1)) - t->u;
}

/* The k-th packed number of method m over x before its minimum is taken
 * off: value, delta or delta of delta (i >= 0, 1, 2). */
static inline uint64_t nth(const uint64_t *x, int m, size_t i)
{
	if (m == M_RAW)
		return x[i];
	if (m == M_DELTA)
		return x[i] - x[i - 1];
	return (x[i] - x[i - 1]) - (x[i - 1] - x[i - 2]);
}

/*
 * Version 2 packs a column's numbers k at a time: k numbers in [0, R)
 * (R = max + 1) as one number sum(x[j] * R^j) in [0, R^k) in the
 * truncated binary code, with k the most that keeps R^k <= 2^57 (and
 * at most TUPLE_MAX); the last group holds what is left.  The code's
 * loss, up to 0.086 bits a code, is so shared by k numbers.
 */
#define TUPLE_MAX 16
#define TUPLE_LIMIT ((uint64_t)1 << 57)

static uint64_t ipow(uint64_t r, unsigned k)
{
	uint64_t p = 1;
	while (k--)
		p *= r;
	return p;
}

/* The group size for numbers in [0, max]. */
static unsigned tuple_k(uint64_t max)
{
	uint64_t r = max + 1, p;
	unsigned k = 1;

	if (max == 0 || max >= TUPLE_LIMIT)
		return 1;
	p = r;
	while (k < TUPLE_MAX && p <= TUPLE_LIMIT / r) {
		p *= r;
		k++;
	}
	return k;
}

/*
 * Division of the numbers below 2^57 by r (2 <= r <= 2^57) as a multiply
 * and a shift (Granlund and Montgomery, "Division by invariant integers
 * using multiplication", 1994, theorem 4.2, with N = 57): with
 * l = ceil(log2 r) and m = ceil(2^(57 + l) / r), m * r - 2^(57 + l) < r
 * <= 2^l, so floor(y * m / 2^(57 + l)) = floor(y / r) for y < 2^57.
 */
static void tuple_magic(uint64_t r, uint64_t *magic, unsigned *shift)
{
	unsigned l = width_of(r - 1);
	unsigned __int128 one = 1;

	*shift = 57 + l;
	*magic = (uint64_t)(((one << *shift) + r - 1) / r);
}

/* The code of a group of kk numbers in [0, max], k at most. */
static void tuple_tbin(struct tbin *t, uint64_t max, unsigned k,
		       unsigned kk)
{
	tbin_init(t, k == 1 ? max : ipow(max + 1, kk) - 1);
}

/* A reader of one integer column. */
struct icur {
	int m;
	struct tbin t;
	size_t i, n;
	uint64_t first, d, mn, prev;
	struct br own;		/* version 1: the column's own bits */
	struct br *r;		/* where the codes are read */
	/* version 2: numbers packed k at a time */
	int v2;
	uint64_t max;
	uint64_t magic;		/* divides by max + 1 (tuple_magic) */
	unsigned shift;
	unsigned k, have, at;
	size_t left;		/* numbers not yet read from r */
	uint64_t dig[TUPLE_MAX];
};

static int icur_open(struct icur *c, const unsigned char **p,
		     const unsigned char *end, size_t n)
{
	uint64_t max, bytes = 0;

	memset(c, 0, sizeof *c);
	c->n = n;
	c->r = &c->own;
	br_init(&c->own, *p, 0);
	if (n == 0)
		return 0;
	if (*p >= end)
		return -1;
	c->m = *(*p)++;
	if (c->m > M_DOD || get_varint(p, end, &max) ||
	    get_varint(p, end, &c->first))
		return -1;
	tbin_init(&c->t, max);
	if (c->m == M_RAW) {
		c->mn = unzz(c->first);
	} else if (c->m == M_DELTA) {
		c->first = unzz(c->first);
		if (n >= 2 && get_varint(p, end, &c->mn))
			return -1;
		c->mn = unzz(c->mn);
	} else {
		c->first = unzz(c->first);
		if (n < 3 || get_varint(p, end, &c->d) ||
		    get_varint(p, end, &c->mn))
			return -1;
		c->d = unzz(c->d);
		c->mn = unzz(c->mn);
	}
	if (c->t.w && n > (size_t)c->m &&
	    (get_varint(p, end, &bytes) || bytes > (uint64_t)(end - *p)))
		return -1;
	br_init(&c->own, *p, (size_t)bytes);
	*p += bytes;
	return 0;
}

/* Reads the next group of a version 2 column. */
static void tuple_read(struct icur *c)
{
	unsigned kk = c->left < c->k ? (unsigned)c->left : c->k;
	uint64_t y;

	c->at = 0;
	c->have = 1;
	c->dig[0] = 0;
	if (kk == 0) {
		c->r->bad = 1;
		return;
	}
	if (kk < c->k)
		tuple_tbin(&c->t, c->max, c->k, kk);
	y = tbin_get(c->r, &c->t);
	if (c->k == 1) {
		c->dig[0] = y;
	} else {
		/* y < 2^57: y / R is (y * magic) >> shift exactly */
		for (unsigned j = 0; j < kk; j++) {
			uint64_t q = (uint64_t)(((unsigned __int128)y *
						 c->magic) >> c->shift);
			c->dig[j] = y - q * (c->max + 1);
			y = q;
		}
	}
	c->have = kk;
	c->left -= kk;
}

HOT uint64_t code_get(struct icur *c)
{
	if (!c->v2)
		return tbin_get(c->r, &c->t);
	if (c->at == c->have)
		tuple_read(c);
	return c->dig[c->at++];
}

HOT uint64_t icur_next(struct icur *c)
{
	uint64_t i = c->i++;

	if (i >= c->n) {
		c->r->bad = 1;
		return 0;
	}
	if (c->m == M_RAW)
		return c->mn + code_get(c);
	if (i == 0)
		return c->prev = c->first;
	if (c->m == M_DELTA)
		return c->prev += c->mn + code_get(c);
	if (i >= 2)
		c->d += c->mn + code_get(c);
	return c->prev += c->d;
}

/* --- float columns ---------------------------------------------------- */

/* A float point as the encoder sees it: its value, and the bytes the
 * decoder must give back. */
struct fpt {
	double d;
	unsigned len;		/* 4 or 8 */
	const unsigned char *v;
};

/* 1 if the decoder, given r, writes exactly the point's bytes: with
 * canon the length follows from r, else it is the point's. */
static int float_exact(double r, const struct fpt *f, int canon)
{
	unsigned char o[8];
	unsigned len = canon ? (fits_float(r) ? 4 : 8) : f->len;

	if (len != f->len)
		return 0;
	put_float(o, r, len);
	return memcmp(o, f->v, len) == 0;
}

/* The mantissa of d at scale k when that gives the point back exactly. */
static int decimal_at(const struct fpt *f, unsigned k, int canon,
		      int64_t *m)
{
	double x = f->d * p10[k];
	long long mm;

	if (!(fabs(x) <= 9007199254740992.0))
		return 0;
	mm = llround(x);
	if (!float_exact((double)mm / p10[k], f, canon))
		return 0;
	*m = mm;
	return 1;
}

/* --- version 2 columns: parameters predicted from the block's previous
 * cell --------------------------------------------------------------- */

/*
 * What the columns of a block's previous encoded cell left, by role
 * (docs/tsblock_format.md, "Columns"): a column's range, first value and
 * first delta default to those of the previous column of its role, and
 * its numbers are read from the one bit stream of the cell.
 */
enum { S_UNIT, S_TIME, S_TYPE, S_INT, S_MANT, NSLOT };

struct slot {
	uint64_t mn, max;	/* the packed numbers less mn lie in [0, max] */
	uint64_t a, b;		/* x[0], x[1] - x[0] */
	/* version 3: the wc states of the header's numbers */
	unsigned kmn, kmax, ka, kb, klen, kexc;
	uint64_t hdr;		/* version 3: the previous header's 5 bits */
};

struct tsctx {
	uint64_t n;		/* points of the previous cell */
	struct slot s[NSLOT];
	/* version 3 */
	unsigned cf;		/* the previous cell's flags */
	unsigned fhdr;		/* the previous float column's 6 bits */
	unsigned kn, knint, kts, kseq, kd[EPRE_MAX];
};

/*
 * Version 3: what of a cell's entry goes in the cell's bit stream, before
 * the cell: the head's changes under E_SAME (nd of them, each zz of the
 * byte's change as a signed byte) and the version's second differences
 * (zz) unless E_TS0, E_SEQ0.  The encoder reports E_SHAPE in shape.
 */
struct epre {
	unsigned ef;
	size_t nd;
	uint64_t d[EPRE_MAX];
	uint64_t ts, seq;
	int shape;
	unsigned b0;		/* the bit of its first byte the stream
				 * starts at (an entry of a run); after
				 * cell_decode, the bit it ended before */
	uint64_t endbits;	/* cell_put: where the stream ended, in
				 * bits from its first byte */
};

#define H_RANGE 0x04u		/* the range follows, else the slot's */
#define H_FIRST 0x08u		/* the first values follow, else the slot's */
#define H_TUPLE 0x10u		/* the numbers go in groups (tuple_k) */

struct plan {
	int m, own, first, tup;
	uint64_t mn, max, a, b;
	double cost;		/* bits, estimated */
};

static double code_bits(size_t cnt, uint64_t max)
{
	return max ? (double)cnt * log2((double)max + 1.0) : 0;
}

/* 1 when every number in [lo, hi] less the slot's minimum lies in
 * [0, max]. */
static int in_range(int64_t lo, int64_t hi, const struct slot *s)
{
	__int128 base = (int64_t)s->mn;

	return (__int128)lo >= base && (__int128)hi - base <= (__int128)s->max;
}

/*
 * Picks the method, and whether the range and first values are given or
 * the slot's, by the estimated size of each choice: the numbers cost
 * about log2(max + 1) bits each in groups (tuple_k).
 */
static void plan_col(const uint64_t *x, size_t n, const struct slot *s,
		     int v3, struct plan *best)
{
	int64_t mn[3] = { INT64_MAX, INT64_MAX, INT64_MAX };
	int64_t mx[3] = { INT64_MIN, INT64_MIN, INT64_MIN };
	uint64_t d = 0, pd = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t v = (int64_t)x[i];
		mn[0] = v < mn[0] ? v : mn[0];
		mx[0] = v > mx[0] ? v : mx[0];
		if (i >= 1) {
			d = x[i] - x[i - 1];
			mn[1] = (int64_t)d < mn[1] ? (int64_t)d : mn[1];
			mx[1] = (int64_t)d > mx[1] ? (int64_t)d : mx[1];
		}
		if (i >= 2) {
			int64_t dd = (int64_t)(d - pd);
			mn[2] = dd < mn[2] ? dd : mn[2];
			mx[2] = dd > mx[2] ? dd : mx[2];
		}
		pd = d;
	}
	best->cost = INFINITY;
	for (int m = M_RAW; m <= M_DOD && (size_t)m < n; m++) {
		size_t cnt = n - (size_t)m;
		uint64_t omn = (uint64_t)mn[m], omax = (uint64_t)mx[m] - omn;
		struct plan p = { m, 0, 0, 0, s->mn, s->max, s->a, s->b,
				  v3 ? 5 : 8 };
		double own, prev = INFINITY;

		if (m >= M_DELTA)
			p.a = x[0];
		if (m == M_DOD)
			p.b = x[1] - x[0];
		p.first = p.a != s->a || p.b != s->b;
		if (p.first)
			p.cost += h_cost(v3, zz(p.a - s->a), s->ka) +
				  (m == M_DOD ? h_cost(v3, zz(p.b - s->b),
						       s->kb) : 0);
		own = code_bits(cnt, omax) +
		      h_cost(v3, zz(omn - s->mn), s->kmn) +
		      h_cost(v3, zz(omax - s->max), s->kmax);
		if (in_range(mn[m], mx[m], s))
			prev = code_bits(cnt, s->max);
		if (own < prev) {
			p.own = 1;
			p.mn = omn;
			p.max = omax;
			p.cost += own;
		} else {
			p.cost += prev;
		}
		if (p.cost < best->cost)
			*best = p;
	}
	/* groups save the truncated code's loss, up to 0.086 bits a code,
	 * when the numbers are spread evenly; numbers that often repeat
	 * (timestamps with some jitter) keep their codes whole, which the
	 * block's compression then finds again */
	if (best->max && n > (size_t)best->m + 1) {
		size_t rep = 0, cnt = n - (size_t)best->m;
		for (size_t i = (size_t)best->m + 1; i < n; i++)
			rep += nth(x, best->m, i) == nth(x, best->m, i - 1);
		best->tup = rep < cnt / 16;
	}
}

/* Appends a column's header and leaves its parameters in the slot:
 * method | H_RANGE | H_FIRST | H_TUPLE (version 2: a byte; 3: 5 bits),
 * [zz(min - slot), zz(max - slot)], [zz(x[0] - slot), [zz(d[1] - slot)]]
 * (version 2: varints; 3: wc codes). */
static int col_head(struct hw *h, const struct plan *p, struct slot *s)
{
	unsigned hv = (unsigned)p->m | (p->own ? H_RANGE : 0) |
		      (p->first ? H_FIRST : 0) | (p->tup ? H_TUPLE : 0);
	int rc = 0;

	/* version 3: one bit when the header is the slot's previous one */
	if (h->w && hv == s->hdr)
		bw_put(h->w, 1, 1);
	else
		rc = h_bits(h, h->w ? hv << 1 : hv, h->w ? 6 : 8);
	s->hdr = hv;

	if (!rc && p->own)
		rc = h_num(h, zz(p->mn - s->mn), &s->kmn);
	if (!rc && p->own)
		rc = h_num(h, zz(p->max - s->max), &s->kmax);
	if (!rc && p->first)
		rc = h_num(h, zz(p->a - s->a), &s->ka);
	if (!rc && p->first && p->m == M_DOD)
		rc = h_num(h, zz(p->b - s->b), &s->kb);
	s->mn = p->mn;
	s->max = p->max;
	s->a = p->a;
	s->b = p->b;
	return rc;
}

/* An encoder's cursor over a column's numbers, for the cell's stream. */
struct ecol {
	const uint64_t *x;
	size_t n, i;
	int m;
	uint64_t mn, max;
	unsigned k;
	struct tbin t;
};

static void ecol_init(struct ecol *c, const uint64_t *x, size_t n,
		      const struct plan *p)
{
	c->x = x;
	c->n = n;
	c->i = 0;
	c->m = p->m;
	c->mn = p->mn;
	c->max = p->max;
	c->k = p->tup ? tuple_k(p->max) : 1;
	tuple_tbin(&c->t, p->max, c->k, c->k);
}

/* Writes what comes with number i of the column: the group's code at
 * the first number of a group, else nothing. */
static void ecol_put(struct bw *w, struct ecol *c)
{
	size_t i = c->i++, kk;
	uint64_t y = 0;
	struct tbin t = c->t;

	if (i < (size_t)c->m || (i - (size_t)c->m) % c->k)
		return;
	kk = c->n - i < c->k ? c->n - i : c->k;
	for (size_t j = kk; j-- > 0;)
		y = y * (c->max + 1) + (nth(c->x, c->m, i + j) - c->mn);
	if (kk < c->k)
		tuple_tbin(&t, c->max, c->k, (unsigned)kk);
	tbin_put(w, &t, y);
}

/* Gorilla's XOR of one value with the previous; returns the bits it
 * takes, and writes them when w is not NULL. */
struct xst {
	uint64_t prev;
	unsigned wlz, wtz;
	int win;
	size_t i;
};

static size_t xor_put(struct bw *w, struct xst *s, uint64_t b)
{
	uint64_t x = b ^ s->prev;
	size_t bits;

	if (s->i++ == 0) {
		bits = 64;
		if (w)
			bw_put(w, b, 64);
	} else if (x == 0) {
		bits = 1;
		if (w)
			bw_put(w, 0, 1);
	} else {
		unsigned lz = (unsigned)__builtin_clzll(x);
		unsigned tz = (unsigned)__builtin_ctzll(x);
		if (s->win && lz >= s->wlz && tz >= s->wtz) {
			unsigned len = 64 - s->wlz - s->wtz;
			bits = 2 + len;
			if (w) {
				bw_put(w, 1, 2);
				bw_put(w, x >> s->wtz, len);
			}
		} else {
			unsigned len = 64 - lz - tz;
			bits = 14 + len;
			if (w) {
				bw_put(w, 3, 2);
				bw_put(w, lz, 6);
				bw_put(w, len - 1, 6);
				bw_put(w, x >> tz, len);
			}
			s->wlz = lz;
			s->wtz = tz;
			s->win = 1;
		}
	}
	s->prev = b;
	return bits;
}

/* Version 3's float column header: 1 when it is the previous one's,
 * else 0 and its 6 bits (mode | k << 1 | 0x20 exceptions). */
static void fput3(struct bw *w, unsigned fm, unsigned *fhdr)
{
	if (fm == *fhdr)
		bw_put(w, 1, 1);
	else
		bw_put(w, fm << 1, 7);
	*fhdr = fm;
}

/* The float column of a cell being encoded: its header is written, its
 * codes follow point by point. */
struct fenc {
	int mode;
	uint64_t *m;		/* decimal: the mantissas */
	struct ecol mc;
	struct xst xs;
};

/*
 * Appends the float column's header for the float points f[0..n):
 * scaled decimals (VictoriaMetrics' idea: a double that is exactly
 * m / 10^k is stored as the integer m) with the points that are not
 * as exceptions, or Gorilla's XOR of consecutive values when there are
 * exceptions and it is smaller.  u8 mode | k << 1 | 0x20 when
 * exceptions follow, [varint nexc, (varint gap, u8 len, bytes)*],
 * decimal: the mantissas' column header.
 */
static int fenc_head(struct hw *h, const struct fpt *f, size_t n,
		     int canon, struct slot *s, struct fenc *fe,
		     struct buf *exb, unsigned *fhdr)
{
	struct buf *out = h->w ? exb : h->out;	/* the exceptions */
	unsigned char *exc = calloc(n, 1);
	unsigned k = 0;
	size_t nexc = 0, last = 0, excbytes = 0;
	int64_t mm, prevm = 0;
	struct plan mp;
	int rc = CF_ENOMEM, xor_ok = 1;

	memset(fe, 0, sizeof *fe);
	fe->m = malloc(n * sizeof *fe->m);
	if (!exc || !fe->m)
		goto out;
	/* the scale: raised until each value is exact at it (a value exact
	 * at k is exact at any larger k whose mantissa fits, and the pass
	 * below checks every value at the final k anyway) */
	for (size_t i = 0; i < n; i++) {
		unsigned ki = k;
		while (ki <= MAXK && !decimal_at(&f[i], ki, canon, &mm))
			ki++;
		if (ki > MAXK)
			exc[i] = 1;
		else
			k = ki;
	}
	for (size_t i = 0; i < n; i++) {
		if (!exc[i] && !decimal_at(&f[i], k, canon, &mm))
			exc[i] = 1;
		if (exc[i]) {
			fe->m[i] = (uint64_t)prevm;
			excbytes += varint_len(i - last) + 1 + 8;
			last = i + 1;
			nexc++;
		} else {
			fe->m[i] = (uint64_t)mm;
			prevm = mm;
		}
	}
	plan_col(fe->m, n, s, h->w != NULL, &mp);
	if (nexc > 0) {
		struct xst xs = { 0, 0, 0, 0, 0 };
		double xbits = 8;
		for (size_t i = 0; i < n && xor_ok; i++) {
			/* a signalling NaN on 4 bytes: only an exception
			 * keeps it */
			xor_ok = float_exact(f[i].d, &f[i], canon);
			xbits += (double)xor_put(NULL, &xs, double_bits(f[i].d));
		}
		if (xor_ok && xbits <= mp.cost + 8.0 * (double)(1 +
				varint_len(nexc) + excbytes)) {
			fe->mode = F_XOR;
			rc = 0;
			if (h->w)
				fput3(h->w, F_XOR, fhdr);
			else
				rc = buf_putc(out, F_XOR);
			goto out;
		}
	}
	fe->mode = F_DECIMAL;
	if (h->w) {
		/* version 3: mode, k, exceptions in 6 bits, then nexc - 1;
		 * the exceptions' bytes follow the header */
		fput3(h->w, F_DECIMAL | k << 1 | (nexc ? 0x20u : 0), fhdr);
		rc = 0;
		if (nexc)
			wc_put(h->w, nexc - 1, &s->kexc);
	} else {
		rc = buf_putc(out, (int)(F_DECIMAL | k << 1 |
					 (nexc ? 0x20u : 0)));
		if (!rc && nexc)
			rc = buf_put_varint(out, nexc);
	}
	last = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (!exc[i])
			continue;
		rc = buf_put_varint(out, i - last);
		if (!rc)
			rc = buf_putc(out, canon ? 8 : (int)f[i].len);
		if (!rc && canon) {
			unsigned char b[8];
			enc_u64be(b, double_bits(f[i].d));
			rc = buf_append(out, b, 8);
		} else if (!rc) {
			rc = buf_append(out, f[i].v, f[i].len);
		}
		last = i + 1;
	}
	if (!rc)
		rc = col_head(h, &mp, s);
	ecol_init(&fe->mc, fe->m, n, &mp);
out:
	free(exc);
	return rc;
}

static void fenc_put(struct bw *w, struct fenc *fe, const struct fpt *f)
{
	if (fe->mode == F_XOR)
		xor_put(w, &fe->xs, double_bits(f->d));
	else
		ecol_put(w, &fe->mc);
}

/* Opens a version 2 integer column of n numbers of slot s (its header;
 * where its bits are is set apart, cell_decode). */
static int icur_open2(struct icur *c, struct hr *hr, size_t n,
		      struct slot *s)
{
	uint64_t u;
	unsigned h;

	memset(c, 0, sizeof *c);
	c->n = n;
	c->r = &c->own;
	c->v2 = 1;
	if (n == 0)
		return 0;
	if (h_getbits(hr, &h, 1))
		return -1;
	/* version 3: 1, the slot's previous header, or 0 and 5 bits */
	if (hr->r && (h & 1))
		h = (unsigned)s->hdr;
	else if (hr->r && h_getbits(hr, &h, 5))
		return -1;
	s->hdr = h;
	c->m = (int)(h & 3);
	if ((h & ~0x1Fu) || c->m > M_DOD || n <= (size_t)c->m ||
	    ((h & H_FIRST) && c->m == M_RAW))
		return -1;
	if (h & H_RANGE) {
		if (h_getnum(hr, &u, &s->kmn))
			return -1;
		s->mn += unzz(u);
		if (h_getnum(hr, &u, &s->kmax))
			return -1;
		s->max += unzz(u);
	}
	if (h & H_FIRST) {
		if (h_getnum(hr, &u, &s->ka))
			return -1;
		s->a += unzz(u);
		if (c->m == M_DOD) {
			if (h_getnum(hr, &u, &s->kb))
				return -1;
			s->b += unzz(u);
		}
	}
	c->mn = s->mn;
	c->first = s->a;
	c->d = s->b;
	c->max = s->max;
	c->k = (h & H_TUPLE) ? tuple_k(s->max) : 1;
	if (c->k > 1)
		tuple_magic(s->max + 1, &c->magic, &c->shift);
	tuple_tbin(&c->t, s->max, c->k, c->k);
	c->left = n - (size_t)c->m;
	return 0;
}

/* A reader of one float column. */
struct fcur {
	int mode;
	unsigned k;
	size_t i, n;
	/* decimal */
	struct icur m;
	const unsigned char *exc, *exc_end;
	size_t next_exc;	/* index of the next exception, or n */
	/* xor */
	struct br own, *r;	/* version 1: own bits; 2: the cell's */
	uint64_t nexc;		/* version 3: exceptions, read after the
				 * cell's headers */
	uint64_t prev;
	unsigned wlz, wtz;
	int win;
	int bad;
};

static void fcur_next_exc(struct fcur *c, size_t from)
{
	uint64_t d;

	if (c->exc >= c->exc_end) {
		c->next_exc = c->n;
		return;
	}
	if (get_varint(&c->exc, c->exc_end, &d) || d >= c->n - from) {
		c->bad = 1;
		c->next_exc = c->n;
		return;
	}
	c->next_exc = from + (size_t)d;
}

/* The nexc exceptions of a decimal column at *p (each a varint gap, a
 * length byte, 4 or 8 and the value): checked, skipped and the first
 * one found.  0, or -1 when they run past end. */
static int fcur_exceptions(struct fcur *c, const unsigned char **p,
			   const unsigned char *end, uint64_t nexc)
{
	uint64_t v;

	c->exc = *p;
	for (uint64_t i = 0; i < nexc; i++) {
		unsigned len;
		if (get_varint(p, end, &v) || *p >= end)
			return -1;
		len = *(*p)++;
		if ((len != 4 && len != 8) || end - *p < len)
			return -1;
		*p += len;
	}
	c->exc_end = *p;
	fcur_next_exc(c, 0);
	return 0;
}

static int fcur_open(struct fcur *c, const unsigned char **p,
		     const unsigned char *end, size_t n)
{
	uint64_t v, nexc;

	memset(c, 0, sizeof *c);
	c->n = n;
	c->next_exc = n;
	c->r = &c->own;
	br_init(&c->own, *p, 0);
	if (n == 0)
		return 0;
	if (*p >= end)
		return -1;
	c->mode = *(*p)++;
	if (c->mode == F_XOR) {
		if (get_varint(p, end, &v) || v > (uint64_t)(end - *p))
			return -1;
		br_init(&c->own, *p, (size_t)v);
		*p += v;
		return 0;
	}
	if (c->mode != F_DECIMAL || *p >= end)
		return -1;
	c->k = *(*p)++;
	if (c->k > MAXK || get_varint(p, end, &nexc) || nexc > n)
		return -1;
	if (fcur_exceptions(c, p, end, nexc))
		return -1;
	return icur_open(&c->m, p, end, n);
}

/* Opens a version 2 float column of n values of slot s: u8 mode |
 * k << 1 | 0x20 when exceptions follow, then as version 1 but for the
 * mantissas' column header. */
static int fcur_open2(struct fcur *c, struct hr *hr, size_t n,
		      struct slot *s, unsigned *fhdr)
{
	uint64_t nexc = 0;
	unsigned fm;

	memset(c, 0, sizeof *c);
	c->n = n;
	c->next_exc = n;
	c->r = &c->own;
	if (n == 0)
		return 0;
	if (h_getbits(hr, &fm, hr->r ? 1 : 8))
		return -1;
	if (hr->r) {
		/* version 3: 1, the previous header; else 0 and 6 bits;
		 * then nexc - 1 */
		if (fm)
			fm = *fhdr;
		else if (h_getbits(hr, &fm, 6))
			return -1;
		*fhdr = fm;
		if ((fm & 0x20) && (h_getnum(hr, &nexc, &s->kexc) ||
				    nexc >= n))
			return -1;
		nexc += !!(fm & 0x20);
	}
	if (fm & ~0x3Fu)
		return -1;
	c->mode = (int)(fm & 1);
	c->k = (fm >> 1) & 15;
	if (c->mode == F_XOR)
		return c->k || (fm & 0x20) ? -1 : 0;
	if (c->k > MAXK)
		return -1;
	if (!hr->r) {
		if ((fm & 0x20) && (get_varint(hr->p, hr->end, &nexc) ||
				    nexc == 0 || nexc > n))
			return -1;
		if (fcur_exceptions(c, hr->p, hr->end, nexc))
			return -1;
	}
	c->nexc = nexc;
	return icur_open2(&c->m, hr, n, s);
}

/* The next value of a XOR column (Gorilla's scheme). */
HOT double xor_next(struct fcur *c)
{
	if (c->i == 1) {
		c->prev = br_get(c->r, 64);
	} else if (br_get(c->r, 1)) {
		uint64_t x;
		if (br_get(c->r, 1) == 0) {
			if (!c->win) {
				c->bad = 1;
				return 0;
			}
			x = br_get(c->r, 64 - c->wlz - c->wtz) << c->wtz;
		} else {
			unsigned lz = (unsigned)br_get(c->r, 6);
			unsigned len = (unsigned)br_get(c->r, 6) + 1;
			if (lz + len > 64) {
				c->bad = 1;
				return 0;
			}
			c->wlz = lz;
			c->wtz = 64 - lz - len;
			c->win = 1;
			x = br_get(c->r, len) << c->wtz;
		}
		c->prev ^= x;
	}
	return bits_double(c->prev);
}

/*
 * Writes the next float point at o and returns its length: len when the
 * flags say it (4 or 8), or 0 under the writer's rule (4 when the value
 * is exact as a float).  0 on a bad column.
 */
HOT unsigned fcur_next(struct fcur *c, unsigned len, unsigned char *o)
{
	size_t i = c->i++;
	double r;

	if (i >= c->n) {
		c->bad = 1;
		return 0;
	}
	if (c->mode == F_DECIMAL) {
		int64_t mm = (int64_t)icur_next(&c->m);
		if (i == c->next_exc) {
			unsigned elen = *c->exc++;
			const unsigned char *e = c->exc;
			c->exc += elen;
			fcur_next_exc(c, i + 1);
			if (len) {
				if (elen != len) {
					c->bad = 1;
					return 0;
				}
				memcpy(o, e, len);
				return len;
			}
			if (elen != 8) {
				c->bad = 1;
				return 0;
			}
			r = bits_double(dec_u64be(e));
		} else {
			r = (double)mm / p10[c->k];
		}
	} else {
		r = xor_next(c);
	}
	if (!len)
		len = fits_float(r) ? 4 : 8;
	put_float(o, r, len);
	return len;
}

static int fcur_bad(const struct fcur *c)
{
	return c->bad || c->r->bad || (c->m.r && c->m.r->bad);
}

/* --- cells ------------------------------------------------------------ */

/* One point of a cell being encoded. */
struct cpt {
	uint32_t off;
	unsigned char ms, flags, len;
	const unsigned char *v;
};

/* Splits an OpenTSDB column into points; 0, or -1 when it is not one
 * this codec stores. */
static int cell_parse(const unsigned char *q, size_t qlen,
		      const unsigned char *v, size_t vlen, struct cpt *pt,
		      size_t *np, int *meta)
{
	size_t n = 0, i = 0, sum = 0;

	while (i < qlen) {
		struct cpt *p = &pt[n];
		if (qlen - i < 2)
			return -1;
		if ((q[i] & 0xF0) == 0xF0) {
			uint32_t x;
			if (qlen - i < 4)
				return -1;
			x = dec_u32be(q + i);
			if (x & 0x30)
				return -1;
			p->ms = 1;
			p->off = (x >> 6) & 0x3FFFFF;
			p->flags = x & 0xF;
			i += 4;
		} else {
			uint32_t x = (uint32_t)q[i] << 8 | q[i + 1];
			p->ms = 0;
			p->off = x >> 4;
			p->flags = x & 0xF;
			i += 2;
		}
		p->len = (p->flags & 7) + 1;
		if ((p->flags & 8) && p->len != 4 && p->len != 8)
			return -1;
		p->v = v + sum;
		sum += p->len;
		n++;
	}
	if (n == 0 || (vlen != sum && vlen != sum + 1))
		return -1;
	*meta = vlen == sum + 1;
	*np = n;
	return 0;
}

static int64_t int_value(const unsigned char *v, unsigned len)
{
	uint64_t x = (v[0] & 0x80) ? UINT64_MAX : 0;

	for (unsigned i = 0; i < len; i++)
		x = x << 8 | v[i];
	return (int64_t)x;
}

static double float_value(const unsigned char *v, unsigned len)
{
	if (len == 4) {
		uint32_t b = dec_u32be(v);
		float f;
		memcpy(&f, &b, 4);
		return (double)f;
	}
	return bits_double(dec_u64be(v));
}

/* Encodes a cell in the block's context ctx (which it advances), without
 * the check that it decodes back.  Version 2 (e NULL):
 * u8 cflags | C_SAMEN, [varint zz(n - ctx n)] | [u8 meta] | [varint nint] |
 * column headers | each column's bits, all but the last with their
 * length.  Version 3: one bit stream: e's part of the entry, [7 bits
 * cflags, wc zz(n - ctx n)] unless E_SHAPE, [8 bits meta], [wc nint],
 * column headers, wc bits of each column that has bits but the last,
 * [padding to a byte and the exceptions' bytes], the columns' bits. */
static int cell_put(const struct cpt *pt, size_t n, int meta,
		    const unsigned char *v, size_t vlen, struct tsctx *ctx,
		    struct epre *e, struct buf *out)
{
	uint64_t *x = malloc(4 * n * sizeof *x);
	uint64_t *unit = x, *tim = x + n, *typ = x + 2 * n, *ints = x + 3 * n;
	struct fpt *f = malloc(n * sizeof *f);
	struct ecol eu, et, ety, ei;
	struct fenc fe;
	struct plan p;
	struct buf sb[5] = { BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT,
			     BUF_INIT };
	struct bw w[5] = { { &sb[0], 0, 0, 0 }, { &sb[1], 0, 0, 0 },
			   { &sb[2], 0, 0, 0 }, { &sb[3], 0, 0, 0 },
			   { &sb[4], 0, 0, 0 } };
	struct buf exb = BUF_INIT;
	struct bw hb = { out, 0, e ? e->b0 : 0, 0 };
	struct hw h = { out, e ? &hb : NULL };
	size_t o0 = out->len;
	uint64_t nbits[5];
	unsigned flags = 0;
	const int slot_of[5] = { S_UNIT, S_TIME, S_TYPE, S_INT, S_MANT };
	size_t nf = 0, ni = 0, nfl = 0;
	int anyms = 0, allms = 1, canon = 1, rc = CF_ENOMEM;
	int has_unit, has_tf;

	memset(&fe, 0, sizeof fe);
	if (!x || !f)
		goto out;
	for (size_t i = 0; i < n; i++) {
		anyms |= pt[i].ms;
		allms &= pt[i].ms;
		nfl += (pt[i].flags >> 3) & 1;
		if (pt[i].flags & 8) {
			double d = float_value(pt[i].v, pt[i].len);
			if ((pt[i].len == 4) != fits_float(d))
				canon = 0;
		} else if (pt[i].len != int_len(int_value(pt[i].v,
							  pt[i].len))) {
			canon = 0;
		}
	}
	flags = (meta ? C_META : 0) | (canon ? C_CANON : 0) |
		(anyms ? C_ANYMS : 0) | (allms ? C_ALLMS : 0);
	/* OpenTSDB's meta byte: 1 when seconds and milliseconds mix */
	if (meta && v[vlen - 1] != (anyms && !allms))
		flags |= C_METAX;
	if (canon && (nfl == 0 || nfl == n))
		flags |= C_ONETYPE | (nfl ? C_FLOATS : 0);
	has_unit = anyms && !allms;
	has_tf = !(flags & C_ONETYPE);
	for (size_t i = 0; i < n; i++) {
		unit[i] = pt[i].ms;
		tim[i] = pt[i].ms || !anyms ? pt[i].off
					    : (uint64_t)pt[i].off * 1000;
		typ[i] = canon ? (pt[i].flags >> 3) & 1 : pt[i].flags;
		if (pt[i].flags & 8) {
			f[nf].d = float_value(pt[i].v, pt[i].len);
			f[nf].len = pt[i].len;
			f[nf].v = pt[i].v;
			nf++;
		} else {
			ints[ni++] = (uint64_t)int_value(pt[i].v, pt[i].len);
		}
	}
	if (!e) {
		rc = buf_putc(out, (int)(flags | (n == ctx->n ? C_SAMEN : 0)));
		if (!rc && n != ctx->n)
			rc = buf_put_varint(out, zz(n - ctx->n));
		if (!rc && (flags & C_METAX))
			rc = buf_putc(out, v[vlen - 1]);
		if (!rc && has_tf)
			rc = buf_put_varint(out, ni);
	} else {
		for (size_t j = 0; j < e->nd && (e->ef & E_SAME); j++)
			wc_put(&hb, e->d[j], &ctx->kd[j]);
		if (!(e->ef & E_TS0))
			wc_put(&hb, e->ts, &ctx->kts);
		if (!(e->ef & E_SEQ0))
			wc_put(&hb, e->seq, &ctx->kseq);
		e->shape = flags == ctx->cf && n == ctx->n;
		if (!e->shape) {
			bw_put(&hb, flags, 7);
			wc_put(&hb, zz(n - ctx->n), &ctx->kn);
		}
		ctx->cf = flags;
		if (flags & C_METAX)
			bw_put(&hb, v[vlen - 1], 8);
		if (has_tf)
			wc_put(&hb, ni, &ctx->knint);
		rc = 0;
	}
	ctx->n = n;
	if (!rc && has_unit) {
		plan_col(unit, n, &ctx->s[S_UNIT], !!e, &p);
		rc = col_head(&h, &p, &ctx->s[S_UNIT]);
		ecol_init(&eu, unit, n, &p);
	}
	if (!rc) {
		plan_col(tim, n, &ctx->s[S_TIME], !!e, &p);
		rc = col_head(&h, &p, &ctx->s[S_TIME]);
		ecol_init(&et, tim, n, &p);
	}
	if (!rc && has_tf) {
		plan_col(typ, n, &ctx->s[S_TYPE], !!e, &p);
		rc = col_head(&h, &p, &ctx->s[S_TYPE]);
		ecol_init(&ety, typ, n, &p);
	}
	if (!rc && ni) {
		plan_col(ints, ni, &ctx->s[S_INT], !!e, &p);
		rc = col_head(&h, &p, &ctx->s[S_INT]);
		ecol_init(&ei, ints, ni, &p);
	}
	if (!rc && nf)
		rc = fenc_head(&h, f, nf, canon, &ctx->s[S_MANT], &fe, &exb,
			       &ctx->fhdr);
	if (rc)
		goto out;
	nf = 0;
	for (size_t i = 0; i < n; i++) {
		if (has_unit)
			ecol_put(&w[0], &eu);
		ecol_put(&w[1], &et);
		if (has_tf)
			ecol_put(&w[2], &ety);
		if (pt[i].flags & 8)
			fenc_put(&w[4], &fe, &f[nf++]);
		else
			ecol_put(&w[3], &ei);
	}
	for (int i = 0; i < 5; i++)
		nbits[i] = 8 * (uint64_t)sb[i].len + w[i].n;
	for (int i = 0; i < 5 && !rc; i++)
		rc = bw_end(&w[i]);
	if (e && !rc) {
		/* the length in bits of each column with bits but the last,
		 * then the exceptions, then the bits, one after the other */
		int last = 4;
		while (last >= 0 && nbits[last] == 0)
			last--;
		for (int i = 0; i < last; i++)
			if (nbits[i])
				wc_put(&hb, nbits[i],
				       &ctx->s[slot_of[i]].klen);
		int pad[5];
		pad[0] = has_unit && eu.k == 1;
		pad[1] = et.k == 1;
		pad[2] = has_tf && ety.k == 1;
		pad[3] = ni && ei.k == 1;
		pad[4] = fe.mode == F_DECIMAL && fe.mc.k == 1;
		if (exb.len) {
			rc = bw_end(&hb);
			if (!rc)
				rc = buf_append(out, exb.p, exb.len);
		}
		for (int i = 0; i < 5 && !rc; i++) {
			/* codes not in groups (numbers that repeat) start
			 * at a byte, as in version 2, so that the block's
			 * compression finds them again */
			if (nbits[i] && pad[i])
				bw_put(&hb, 0, (8 - hb.n % 8) % 8);
			bw_copy(&hb, sb[i].p, nbits[i]);
		}
		e->endbits = 8 * (uint64_t)(out->len - o0) + hb.n;
		if (!rc)
			rc = bw_end(&hb);
		goto out;
	}
	/* each column's bits apart (zstd, after, finds what repeats in
	 * one), all but the last with their length */
	for (int i = 0, last = 4; i < 5 && !rc; i++) {
		while (last >= 0 && sb[last].len == 0)
			last--;
		if (!sb[i].len)
			continue;
		if (i < last)
			rc = buf_put_varint(out, sb[i].len);
		if (!rc)
			rc = buf_append(out, sb[i].p, sb[i].len);
	}
out:
	for (int i = 0; i < 5; i++)
		buf_release(&sb[i]);
	buf_release(&exb);
	free(x);
	free(f);
	free(fe.m);
	return rc;
}

/* The bits of a version 2 column: a group code takes at least one bit
 * when max > 0. */
static struct br *bits_of(struct icur *c)
{
	return c->n > (size_t)c->m && c->max ? &c->own : NULL;
}

/*
 * Sets where each version 2 column's bits are: the columns that have
 * bits, in order, each as varint nbytes and the bytes but the last,
 * which runs to where its last code ends (*last: its reader; NULL when
 * no column has bits).
 */
static int streams(const unsigned char **p, const unsigned char *end,
		   struct icur *unit, struct icur *t, struct icur *tf,
		   struct icur *ints, struct fcur *fl, struct br **last)
{
	struct br *r[5];
	int nr = 0;

	if ((r[nr] = bits_of(unit)))
		nr++;
	if ((r[nr] = bits_of(t)))
		nr++;
	if ((r[nr] = bits_of(tf)))
		nr++;
	if ((r[nr] = bits_of(ints)))
		nr++;
	if (fl->n && (r[nr] = fl->mode == F_XOR ? &fl->own : bits_of(&fl->m)))
		nr++;
	*last = NULL;
	for (int i = 0; i < nr; i++) {
		uint64_t len = (uint64_t)(end - *p);
		if (i < nr - 1 &&
		    (get_varint(p, end, &len) || len > (uint64_t)(end - *p)))
			return -1;
		br_init(r[i], *p, (size_t)len);
		*p += len;
	}
	if (nr) {
		*last = r[nr - 1];
		*p = last[0]->p;
	}
	return 0;
}

/*
 * Version 3: after the headers (read by hb from p), the length in bits
 * of each column with bits but the last, [the exceptions at the next
 * byte], then the columns' bits one after the other; sets each column's
 * reader, *base and where each but the last must end (lim, NULL when
 * no column has bits: then *lim0 is where the cell's bits end).
 */
static int streams3(struct br *hb, const unsigned char *p,
		    const unsigned char *end, struct tsctx *ctx,
		    struct icur *unit, struct icur *t, struct icur *tf,
		    struct icur *ints, struct fcur *fl, struct br **rs,
		    uint64_t *lim, int *nr, const unsigned char **base,
		    uint64_t *lim0)
{
	static const int slot_of[5] = { S_UNIT, S_TIME, S_TYPE, S_INT,
					S_MANT };
	struct br *r[5];
	int sl[5], pad[5];
	uint64_t len[5], off;
	const unsigned char *q;

	*nr = 0;
	if ((r[*nr] = bits_of(unit)))
		pad[*nr] = unit->k == 1, sl[(*nr)++] = 0;
	if ((r[*nr] = bits_of(t)))
		pad[*nr] = t->k == 1, sl[(*nr)++] = 1;
	if ((r[*nr] = bits_of(tf)))
		pad[*nr] = tf->k == 1, sl[(*nr)++] = 2;
	if ((r[*nr] = bits_of(ints)))
		pad[*nr] = ints->k == 1, sl[(*nr)++] = 3;
	if (fl->n && (r[*nr] = fl->mode == F_XOR ? &fl->own : bits_of(&fl->m)))
		pad[*nr] = fl->mode == F_DECIMAL && fl->m.k == 1,
		sl[(*nr)++] = 4;
	for (int i = 0; i + 1 < *nr; i++) {
		len[i] = wc_get(hb, &ctx->s[slot_of[sl[i]]].klen);
		if (hb->bad || len[i] > 8 * (uint64_t)(end - p))
			return -1;
	}
	off = br_pos(hb, p);
	*base = p;
	if (fl->nexc) {
		q = p + (off + 7) / 8;
		if (fcur_exceptions(fl, &q, end, fl->nexc))
			return -1;
		*base = q;
		off = 0;
	}
	for (int i = 0; i < *nr; i++) {
		if (pad[i])
			off = (off + 7) / 8 * 8;
		if (br_init_at(r[i], *base, end, off))
			return -1;
		rs[i] = r[i];
		if (i + 1 < *nr) {
			off += len[i];
			lim[i] = off;
		}
	}
	*lim0 = off;
	return 0;
}

/*
 * Decodes one cell from [*pp, end) into q and v: version 1 when ctx is
 * NULL, else version 2 in the block's context ctx (which it advances),
 * or version 3 when e is not NULL (its entry's part in e).
 */
static int cell_decode(struct tsctx *ctx, struct epre *e,
		       const unsigned char **pp, const unsigned char *end,
		       size_t max_points, struct buf *q, struct buf *v)
{
	const unsigned char *p = *pp, *bits = NULL, *base = NULL;
	struct icur unit, t, tf, ints, scan;
	struct fcur fl;
	struct br *last = NULL, hb, *rs[5];
	struct hr hr = { &p, end, NULL };
	uint64_t n, nint = 0, lim[5], lim0 = 0;
	unsigned cf, meta;
	int rc, has_unit, has_tf, canon, nr = 0;

	if (e) {
		/* version 3: the entry's part, then the cell's flags */
		if (e->b0 > 7 || br_init_at(&hb, p, end, e->b0))
			return CF_ECORRUPT;
		hr.r = &hb;
		if ((e->ef & E_SAME) && e->nd > EPRE_MAX)
			return CF_ECORRUPT;
		for (size_t j = 0; j < e->nd && (e->ef & E_SAME); j++) {
			e->d[j] = wc_get(&hb, &ctx->kd[j]);
			if (e->d[j] > 255)
				return CF_ECORRUPT;
		}
		e->ts = e->ef & E_TS0 ? 0 : wc_get(&hb, &ctx->kts);
		e->seq = e->ef & E_SEQ0 ? 0 : wc_get(&hb, &ctx->kseq);
		if (e->ef & E_SHAPE) {
			cf = ctx->cf;
			n = ctx->n;
		} else {
			cf = (unsigned)br_get32(&hb, 7);
			n = ctx->n + unzz(wc_get(&hb, &ctx->kn));
		}
		if (hb.bad || n == 0 || n > max_points)
			return CF_ECORRUPT;
		ctx->cf = cf;
		ctx->n = n;
	} else if (ctx) {
		/* u8 cflags | C_SAMEN, [varint zz(n - previous n)] */
		if (p >= end)
			return CF_ECORRUPT;
		cf = *p++;
		n = 0;
		if (!(cf & C_SAMEN) && get_varint(&p, end, &n))
			return CF_ECORRUPT;
		n = ctx->n + unzz(n);
		ctx->n = n;
		cf &= ~C_SAMEN;
		if (n == 0 || n > max_points)
			return CF_ECORRUPT;
	} else {
		if (get_varint(&p, end, &n) || n == 0 || n > max_points ||
		    p >= end)
			return CF_ECORRUPT;
		cf = *p++;
	}
	if ((cf & ~C_ALL) || ((cf & C_ALLMS) && !(cf & C_ANYMS)) ||
	    ((cf & C_METAX) && !(cf & C_META)) ||
	    ((cf & C_ONETYPE) && !(cf & C_CANON)) ||
	    ((cf & C_FLOATS) && !(cf & C_ONETYPE)))
		return CF_ECORRUPT;
	canon = !!(cf & C_CANON);
	meta = (cf & C_ANYMS) && !(cf & C_ALLMS);
	if (cf & C_METAX) {
		if (h_getbits(&hr, &meta, 8))
			return CF_ECORRUPT;
	}
	has_unit = (cf & C_ANYMS) && !(cf & C_ALLMS);
	has_tf = !(cf & C_ONETYPE);
	if (!has_tf)
		nint = (cf & C_FLOATS) ? 0 : n;
	if (ctx) {
		if (has_tf && (h_getnum(&hr, &nint, &ctx->knint) || nint > n))
			return CF_ECORRUPT;
		if (icur_open2(&unit, &hr, has_unit ? n : 0,
			       &ctx->s[S_UNIT]) ||
		    icur_open2(&t, &hr, n, &ctx->s[S_TIME]) ||
		    icur_open2(&tf, &hr, has_tf ? n : 0, &ctx->s[S_TYPE]) ||
		    icur_open2(&ints, &hr, nint, &ctx->s[S_INT]) ||
		    fcur_open2(&fl, &hr, n - nint, &ctx->s[S_MANT],
			       &ctx->fhdr))
			return CF_ECORRUPT;
		if (e ? streams3(&hb, p, end, ctx, &unit, &t, &tf, &ints, &fl,
				 rs, lim, &nr, &base, &lim0)
		      : streams(&p, end, &unit, &t, &tf, &ints, &fl, &last))
			return CF_ECORRUPT;
		bits = p;
	} else {
		if (icur_open(&unit, &p, end, has_unit ? n : 0) ||
		    icur_open(&t, &p, end, n) ||
		    icur_open(&tf, &p, end, has_tf ? n : 0))
			return CF_ECORRUPT;
		if (has_tf) {
			scan = tf;
			scan.r = &scan.own;
			for (size_t i = 0; i < n; i++) {
				uint64_t x = icur_next(&scan);
				if (x > (canon ? 1u : 15u))
					return CF_ECORRUPT;
				nint += canon ? !x : !(x & 8);
			}
			if (scan.r->bad)
				return CF_ECORRUPT;
		}
		if (icur_open(&ints, &p, end, nint) ||
		    fcur_open(&fl, &p, end, n - nint))
			return CF_ECORRUPT;
	}
	if ((rc = buf_reserve(q, 4 * n)) || (rc = buf_reserve(v, 8 * n + 1)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		uint64_t ms = has_unit ? icur_next(&unit) : !!(cf & C_ALLMS);
		uint64_t off = icur_next(&t);
		uint64_t x = has_tf ? icur_next(&tf) : !!(cf & C_FLOATS);
		unsigned flags, len;
		unsigned char *o;

		if (ms > 1 || x > (canon ? 1u : 15u))
			return CF_ECORRUPT;
		if (!ms && (cf & C_ANYMS)) {
			if (off % 1000)
				return CF_ECORRUPT;
			off /= 1000;
		}
		if (off > (ms ? 0x3FFFFFu : 0xFFFu))
			return CF_ECORRUPT;
		o = v->p + v->len;
		if (canon ? x == 0 : !(x & 8)) {
			int64_t iv = (int64_t)icur_next(&ints);
			uint64_t u = (uint64_t)iv;
			len = canon ? int_len(iv) : (unsigned)(x & 7) + 1;
			flags = canon ? len - 1 : (unsigned)x;
			for (unsigned j = len; j-- > 0; u >>= 8)
				o[j] = (unsigned char)u;
		} else {
			if (canon) {
				len = fcur_next(&fl, 0, o);
				flags = 8 | (len - 1);
			} else {
				flags = (unsigned)x;
				len = (flags & 7) + 1;
				if ((len != 4 && len != 8) ||
				    fcur_next(&fl, len, o) != len)
					return CF_ECORRUPT;
			}
			if (!len)
				return CF_ECORRUPT;
		}
		v->len += len;
		o = q->p + q->len;
		if (ms) {
			enc_u32be(o, 0xF0000000u | (uint32_t)off << 6 | flags);
			q->len += 4;
		} else {
			o[0] = (unsigned char)(off >> 4);
			o[1] = (unsigned char)(off << 4 | flags);
			q->len += 2;
		}
	}
	if (unit.r->bad || t.r->bad || tf.r->bad || ints.r->bad ||
	    fcur_bad(&fl) || ints.i != ints.n || fl.i != fl.n)
		return CF_ECORRUPT;
	if (e) {
		/* each column's bits end where the next one's begin; the
		 * cell at the byte holding its last bit */
		for (int i = 0; i + 1 < nr; i++)
			if (br_pos(rs[i], base) != lim[i])
				return CF_ECORRUPT;
		if (nr)
			lim0 = br_pos(rs[nr - 1], base);
		p = base + lim0 / 8;
		e->b0 = (unsigned)(lim0 % 8);
	} else if (last) {
		/* the last stream ends at the byte holding its last bit */
		size_t used = (size_t)(last->p - bits) * 8 - last->n;
		p = bits + (used + 7) / 8;
	}
	if (cf & C_META)
		v->p[v->len++] = (unsigned char)meta;
	*pp = p;
	return CF_OK;
}

/* Encodes one cell in the block's context ctx (version 3 with the
 * entry's part e, else 2), checking that it decodes back byte-exact;
 * ctx advances only on success. */
static int cell_encode(struct tsctx *ctx, struct epre *e,
		       const unsigned char *q, size_t qlen,
		       const unsigned char *v, size_t vlen, struct buf *out)
{
	struct buf dq = BUF_INIT, dv = BUF_INIT;
	struct tsctx ec = *ctx, dc = *ctx;
	struct epre de;
	struct cpt *pt;
	const unsigned char *p;
	size_t n, start = out->len;
	int meta, rc;

	if (qlen < 2)
		return CF_EINVAL;
	pt = malloc(qlen / 2 * sizeof *pt);
	if (!pt)
		return CF_ENOMEM;
	if (cell_parse(q, qlen, v, vlen, pt, &n, &meta)) {
		rc = CF_EINVAL;
		goto out;
	}
	rc = cell_put(pt, n, meta, v, vlen, &ec, e, out);
	if (rc)
		goto out;
	p = out->p + start;
	if (e) {
		memset(&de, 0, sizeof de);
		de.ef = e->ef | (e->shape ? E_SHAPE : 0);
		de.nd = e->nd;
		de.b0 = e->b0;
	}
	rc = cell_decode(&dc, e ? &de : NULL, &p, out->p + out->len, n, &dq,
			 &dv);
	if (rc == CF_ENOMEM)
		goto out;
	if (!rc && e)
		rc = p != out->p + start + e->endbits / 8 ||
		     de.b0 != e->endbits % 8;
	else if (!rc)
		rc = p != out->p + out->len;
	if (rc || dq.len != qlen ||
	    dv.len != vlen || memcmp(dq.p, q, qlen) ||
	    (vlen && memcmp(dv.p, v, vlen)) || memcmp(&ec, &dc, sizeof ec) ||
	    (e && (de.ts != e->ts || de.seq != e->seq ||
		   ((e->ef & E_SAME) &&
		    memcmp(de.d, e->d, e->nd * sizeof *e->d)))))
		rc = CF_EINVAL;
	else
		*ctx = dc;
out:
	if (rc)
		out->len = start;
	free(pt);
	buf_release(&dq);
	buf_release(&dv);
	return rc;
}

int tsblock_cell_encode(const unsigned char *q, size_t qlen,
			const unsigned char *v, size_t vlen, struct buf *out)
{
	struct tsctx c;

	memset(&c, 0, sizeof c);
	return cell_encode(&c, NULL, q, qlen, v, vlen, out);
}

int tsblock_cell_decode(const unsigned char **pp, const unsigned char *end,
			size_t max_points, struct buf *q, struct buf *v)
{
	struct tsctx c;

	memset(&c, 0, sizeof c);
	return cell_decode(&c, NULL, pp, end, max_points, q, v);
}

/* --- blocks ----------------------------------------------------------- */

/* The parts of an internal key; 0 when it has that shape. */
static int ikey_split(const unsigned char *k, size_t klen, size_t *head,
		      size_t *qual)
{
	size_t rowlen, h;

	if (klen < 3 + IKEY_TRAILER)
		return -1;
	rowlen = (size_t)k[0] << 8 | k[1];
	if (2 + rowlen + 1 > klen - IKEY_TRAILER)
		return -1;
	h = 3 + rowlen + k[2 + rowlen];
	if (h > klen - IKEY_TRAILER)
		return -1;
	*head = h;
	*qual = klen - IKEY_TRAILER - h;
	return 0;
}

static size_t common(const unsigned char *a, size_t an,
		     const unsigned char *b, size_t bn)
{
	size_t n = an < bn ? an : bn, i = 0;
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* State shared by the encoder and decoder of one block's entries. */
struct prev {
	struct buf head;
	uint64_t ts, seq;
	uint64_t dts, dseq;	/* version 2: the previous differences
				 * (version 3: dts stays 0, dseq is 0
				 * after the block's first entry) */
	int v3, started;	/* version 3; ts and seq were set */
	struct buf pos;		/* version 2: where the last E_DIFF head
				 * changed, one u32 a byte */
	struct tsctx cx;	/* version 2: the previous cell's columns */
	/* version 3, the encoder: the last entry was a cell, whose run
	 * bit is not written yet; the bits of out's last byte in use (0:
	 * the cell ended at a byte) */
	int open;
	unsigned obits;
};

/* Appends bits bits of v to out, whose last byte has *obits bits in
 * use (0: none, a new byte begins). */
static int put_bits(struct buf *out, unsigned *obits, unsigned v,
		    unsigned bits)
{
	int rc;

	while (bits) {
		unsigned take = 8 - *obits < bits ? 8 - *obits : bits;
		if (*obits == 0 && (rc = buf_putc(out, 0)))
			return rc;
		out->p[out->len - 1] |= (unsigned char)((v & ((1u << take) - 1))
							<< *obits);
		*obits = (*obits + take) % 8;
		v >>= take;
		bits -= take;
	}
	return 0;
}

/* Version 3: ends an open run with the bit 0 (the entry after is not
 * in the run). */
static int run_close(struct buf *out, struct prev *pv)
{
	int rc = 0;

	if (pv->open && pv->obits == 0)
		rc = buf_putc(out, 0);
	pv->open = 0;
	pv->obits = 0;
	return rc;
}

/* The mid bytes of a head as E_ZMAP gives them: a bitmap of the nonzero
 * ones, then those. */
static size_t zmap_len(const unsigned char *s, size_t n)
{
	size_t z = (n + 7) / 8;
	for (size_t i = 0; i < n; i++)
		z += s[i] != 0;
	return z;
}

static int zmap_put(struct buf *out, const unsigned char *s, size_t n)
{
	size_t at = out->len;
	int rc = buf_reserve(out, (n + 7) / 8);

	if (rc)
		return rc;
	memset(out->p + at, 0, (n + 7) / 8);
	out->len += (n + 7) / 8;
	for (size_t i = 0; i < n; i++)
		if (s[i])
			out->p[at + i / 8] |= (unsigned char)(1u << (i % 8));
	for (size_t i = 0; i < n && !rc; i++)
		if (s[i])
			rc = buf_putc(out, s[i]);
	return rc;
}

/* The common suffix of a[sh..an) and b[sh..bn). */
static size_t common_tail(const unsigned char *a, size_t an,
			  const unsigned char *b, size_t bn, size_t sh)
{
	size_t n = (an < bn ? an : bn) - sh, i = 0;
	while (i < n && a[an - 1 - i] == b[bn - 1 - i])
		i++;
	return i;
}

static int put_entry(struct buf *out, struct prev *pv, const unsigned char *k,
		     size_t klen, const unsigned char *v, size_t vlen,
		     struct buf *cell)
{
	size_t head, qlen, sh, sf, nch, dsize, pbytes, zsize;
	int same;
	const unsigned char *tr;
	uint64_t ts, seq;
	struct tsctx cx;
	struct epre e;
	int rc, kind = K_VERBATIM, run;

	if (ikey_split(k, klen, &head, &qlen)) {
		rc = run_close(out, pv);
		if (!rc)
			rc = buf_putc(out, K_OPAQUE);
		if (!rc)
			rc = buf_put_varint(out, klen);
		if (!rc)
			rc = buf_append(out, k, klen);
		if (!rc)
			rc = buf_put_varint(out, vlen);
		if (!rc)
			rc = buf_append(out, v, vlen);
		return rc;
	}
	tr = k + klen - IKEY_TRAILER;
	ts = dec_u64be(tr) - pv->ts - pv->dts;
	seq = dec_u64be(tr + 8) - pv->seq - pv->dseq;
	sh = common(pv->head.p, pv->head.len, k, head);
	sf = common_tail(pv->head.p, pv->head.len, k, head, sh);
	/* the head as the previous one's changed bytes when that is
	 * shorter (a row key whose tag values change in a few places) */
	nch = 0;
	dsize = SIZE_MAX;
	same = 0;
	memset(&e, 0, sizeof e);
	if (head == pv->head.len) {
		size_t last = 0, np = pv->pos.len / 4;
		same = 1;
		dsize = 0;
		for (size_t i = 0; i < head; i++) {
			if (k[i] == pv->head.p[i])
				continue;
			dsize += varint_len(i - last) + 1;
			last = i + 1;
			same = same && nch < np &&
			       dec_u32le(pv->pos.p + 4 * nch) == i;
			/* version 3 codes a cell's E_SAME changes as
			 * numbers: (signed) byte differences */
			if (nch < EPRE_MAX)
				e.d[nch] = zz((uint64_t)(int64_t)(signed char)
					      (k[i] - pv->head.p[i]));
			nch++;
		}
		same = same && nch == np && nch > 0 && nch <= EPRE_MAX;
		dsize = same ? nch : dsize + varint_len(nch);
	}
	zsize = zmap_len(k + sh, head - sh - sf);
	if (dsize < varint_len(sh) + varint_len(sf) +
		    varint_len(head - sh - sf) +
		    (zsize < head - sh - sf ? zsize : head - sh - sf))
		kind |= E_DIFF | (same ? E_SAME : 0);
	/* a cell of one or two points (a qualifier of at most 4 bytes:
	 * what flushes see before rows are compacted) saves a few bytes
	 * encoded and costs a cell's setup: kept verbatim */
	buf_reset(cell);
	cx = pv->cx;
	e.ef = (unsigned)kind & E_SAME;
	e.ef |= (ts ? 0 : E_TS0) | (seq ? 0 : E_SEQ0);
	e.nd = (kind & E_SAME) ? nch : 0;
	e.ts = zz(ts);
	e.seq = zz(seq);
	/* version 3: a cell whose head changes where the last one's did
	 * follows the previous cell in its stream when that was a cell:
	 * its run bit 1, then 3 bits of flags, then its stream */
	run = pv->open && (kind & E_SAME);
	e.b0 = run ? (pv->obits + 4) % 8 : 0;
	/* what goes in the stream of a cell and as bytes of a verbatim
	 * entry */
	pbytes = ((kind & E_SAME) ? nch : 0) + (ts ? varint_len(zz(ts)) : 0) +
		 (seq ? varint_len(zz(seq)) : 0);
	rc = qlen > 4 ? cell_encode(&cx, &e, k + head, qlen, v, vlen, cell)
		      : CF_EINVAL;
	if (rc == CF_ENOMEM)
		return rc;
	if (rc == CF_OK && cell->len < varint_len(qlen) + qlen +
					  varint_len(vlen) + vlen + pbytes) {
		kind = (kind & ~3) | K_CELL;
		pv->cx = cx;
	} else {
		run = 0;
	}
	if (run) {
		rc = put_bits(out, &pv->obits,
			      1u | (ts ? 0 : 2u) | (seq ? 0 : 4u) |
			      (e.shape ? 8u : 0), 4);
		goto versions;
	}
	/* a head in the shared/suffix/mid form with its mid bytes as a
	 * bitmap of the nonzero ones (a block's first row key: uids are
	 * mostly zero bytes) */
	if (!(kind & E_DIFF) && zsize < head - sh - sf)
		kind |= E_ZMAP;
	rc = run_close(out, pv);
	if (!rc)
		rc = buf_putc(out, kind | (ts ? 0 : E_TS0) | (seq ? 0 : E_SEQ0) |
			      ((kind & 3) == K_CELL && e.shape ? E_SHAPE : 0));
	if (!rc && (kind & E_DIFF)) {
		size_t last = 0;
		if (!same) {
			rc = buf_put_varint(out, nch);
			buf_reset(&pv->pos);
		}
		for (size_t i = 0; i < head && !rc; i++) {
			unsigned char b4[4];
			if (k[i] == pv->head.p[i])
				continue;
			if (!same) {
				rc = buf_put_varint(out, i - last);
				enc_u32le(b4, (uint32_t)i);
				if (!rc)
					rc = buf_append(&pv->pos, b4, 4);
			}
			/* version 3: a cell's E_SAME bytes are in its
			 * stream */
			if (!rc && !(same && (kind & 3) == K_CELL))
				rc = buf_putc(out, k[i]);
			last = i + 1;
		}
	} else {
		if (!rc)
			rc = buf_put_varint(out, sh);
		if (!rc)
			rc = buf_put_varint(out, sf);
		if (!rc)
			rc = buf_put_varint(out, head - sh - sf);
		if (!rc && (kind & E_ZMAP))
			rc = zmap_put(out, k + sh, head - sh - sf);
		else if (!rc)
			rc = buf_append(out, k + sh, head - sh - sf);
	}
	/* version 3: a cell's versions are in its stream */
	if (!rc && ts && (kind & 3) != K_CELL)
		rc = buf_put_varint(out, zz(ts));
	if (!rc && seq && (kind & 3) != K_CELL)
		rc = buf_put_varint(out, zz(seq));
versions:
	if (rc)
		return rc;
	kind &= 3;
	ts = dec_u64be(tr);
	seq = dec_u64be(tr + 8);
	pv->dts = pv->v3 ? 0 : ts - pv->ts;
	pv->dseq = pv->v3 && !pv->started ? 0 : seq - pv->seq;
	pv->started = 1;
	pv->ts = ts;
	pv->seq = seq;
	buf_reset(&pv->head);
	if ((rc = buf_append(&pv->head, k, head)))
		return rc;
	if (kind == K_CELL) {
		/* the cell's stream begins at bit e.b0 of its first byte,
		 * which is out's last when e.b0 > 0 */
		if (e.b0) {
			out->p[out->len - 1] |= cell->p[0];
			rc = buf_append(out, cell->p + 1, cell->len - 1);
		} else {
			rc = buf_append(out, cell->p, cell->len);
		}
		pv->open = 1;
		pv->obits = (unsigned)(e.endbits % 8);
		return rc;
	}
	rc = buf_put_varint(out, qlen);
	if (!rc)
		rc = buf_append(out, k + head, qlen);
	if (!rc)
		rc = buf_put_varint(out, vlen);
	if (!rc)
		rc = buf_append(out, v, vlen);
	return rc;
}

int tsblock_encode(const unsigned char *raw, size_t n, struct buf *out)
{
	struct buf key = BUF_INIT, cell = BUF_INIT;
	struct prev pv;
	const unsigned char *p = raw, *end;
	unsigned char *check = NULL;
	size_t start = out->len, nent = 0, roff, interval = 0, colbytes = 0;
	uint32_t nr, r1;
	int rc = CF_EINVAL;

	memset(&pv, 0, sizeof pv);
	pv.v3 = 1;
	pv.ts = TS_ZERO;
	if (n < 8)
		return CF_EINVAL;
	nr = dec_u32le(raw + n - 4);
	if (nr == 0 || nr > (n - 4) / 4)
		return CF_EINVAL;
	roff = n - 4 - 4 * (size_t)nr;
	end = raw + roff;
	r1 = nr > 1 ? dec_u32le(raw + roff + 4) : 0;
	/* count the entries first (the header states them), and the bytes
	 * of cells that are columns of several points */
	for (const unsigned char *s = p; s < end; nent++) {
		uint64_t sh, un, vl;
		size_t head, qlen;
		if (nr > 1 && (size_t)(s - raw) == r1)
			interval = nent;
		if (get_varint(&s, end, &sh) || get_varint(&s, end, &un) ||
		    get_varint(&s, end, &vl) || un > (uint64_t)(end - s) ||
		    vl > (uint64_t)(end - s) - un || sh > key.len)
			goto refuse;
		key.len = (size_t)sh;
		if ((rc = buf_append(&key, s, (size_t)un)))
			goto out;
		if (!ikey_split(key.p, key.len, &head, &qlen) && qlen > 4)
			colbytes += qlen + (size_t)vl;
		s += un + vl;
	}
	/* a block mostly of single points and delete markers (a flush
	 * before rows are compacted, or after, with the cells the
	 * compaction replaced) gains little and would cost every flush:
	 * stored as it is */
	if ((nr > 1 && interval == 0) || colbytes < n / 4)
		goto refuse;
	key.len = 0;
	if ((rc = buf_putc(out, TSB_VERSION)) || (rc = buf_put_varint(out, n)) ||
	    (rc = buf_put_varint(out, nent)) ||
	    (rc = buf_put_varint(out, interval)))
		goto out;
	while (p < end) {
		uint64_t sh = 0, un = 0, vl = 0;
		get_varint(&p, end, &sh);
		get_varint(&p, end, &un);
		get_varint(&p, end, &vl);
		if (sh > key.len) {
			rc = CF_EINVAL;
			goto out;
		}
		key.len = (size_t)sh;
		if ((rc = buf_append(&key, p, (size_t)un)))
			goto out;
		p += un;
		rc = put_entry(out, &pv, key.p, key.len, p, (size_t)vl, &cell);
		if (rc)
			goto out;
		p += vl;
	}
	if ((rc = run_close(out, &pv)))
		goto out;
	rc = CF_ENOMEM;
	if (!(check = malloc(n)))
		goto out;
	rc = tsblock_decode(out->p + start, out->len - start, check, n);
	if (rc == CF_ENOMEM)
		goto out;
	rc = rc || memcmp(check, raw, n) ? CF_EINVAL : CF_OK;
	goto out;
refuse:
	rc = CF_EINVAL;
out:
	if (rc)
		out->len = start;
	free(check);
	buf_release(&key);
	buf_release(&cell);
	buf_release(&pv.head);
	buf_release(&pv.pos);
	return rc;
}

static int read_header(const unsigned char **p, const unsigned char *end,
		       int *version, uint64_t *rawlen, uint64_t *nent,
		       uint64_t *interval)
{
	if (*p >= end || **p < 1 || **p > 3)
		return CF_ECORRUPT;
	*version = *(*p)++;
	if (get_varint(p, end, rawlen) || get_varint(p, end, nent) ||
	    get_varint(p, end, interval))
		return CF_ECORRUPT;
	return CF_OK;
}

int tsblock_raw_size(const unsigned char *p, size_t n, size_t *rawlen)
{
	uint64_t rl, ne, iv;
	int ver;

	if (read_header(&p, p + n, &ver, &rl, &ne, &iv) || rl > SIZE_MAX)
		return CF_ECORRUPT;
	*rawlen = (size_t)rl;
	return CF_OK;
}

/* Reads a length-prefixed byte string of [*p, end). */
static int get_bytes(const unsigned char **p, const unsigned char *end,
		     const unsigned char **s, size_t *len)
{
	uint64_t l;

	if (get_varint(p, end, &l) || l > (uint64_t)(end - *p))
		return -1;
	*s = *p;
	*len = (size_t)l;
	*p += l;
	return 0;
}

/* Reads bits bits at bit *off of *p, and moves past them. */
static int get_bits_at(const unsigned char **p, unsigned *off,
		       const unsigned char *end, unsigned bits, unsigned *v)
{
	struct br r;
	uint64_t pos;

	if (br_init_at(&r, *p, end, *off))
		return -1;
	*v = (unsigned)br_get32(&r, bits);
	if (r.bad)
		return -1;
	pos = br_pos(&r, *p);
	*p += pos / 8;
	*off = (unsigned)(pos % 8);
	return 0;
}

/* Reads E_ZMAP's mid bytes of a head (len of them) into key. */
static int zmap_get(const unsigned char **p, const unsigned char *end,
		    size_t len, struct buf *key)
{
	const unsigned char *map = *p;
	size_t nb = (len + 7) / 8;
	int rc;

	if (nb > (size_t)(end - *p) || (len % 8 && map[nb - 1] >> (len % 8)))
		return CF_ECORRUPT;
	*p += nb;
	if ((rc = buf_reserve(key, len)))
		return rc;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = 0;
		if (map[i / 8] >> (i % 8) & 1) {
			if (*p >= end || **p == 0)
				return CF_ECORRUPT;
			c = *(*p)++;
		}
		key->p[key->len++] = c;
	}
	return CF_OK;
}

int tsblock_decode(const unsigned char *p, size_t n, unsigned char *dst,
		   size_t rawlen)
{
	const unsigned char *end = p + n;
	struct buf key = BUF_INIT, last = BUF_INIT, q = BUF_INIT, v = BUF_INIT;
	struct prev pv;
	uint64_t rl, nent, interval, nr;
	size_t pos = 0, rend, ri = 0;
	int rc = CF_ECORRUPT, ver;
	/* version 3: the next entry is a cell of the run (its flags in
	 * runf), its stream at bit boff of p */
	int run = 0;
	unsigned runf = 0, boff = 0;

	memset(&pv, 0, sizeof pv);
	if (read_header(&p, end, &ver, &rl, &nent, &interval) || rl != rawlen ||
	    nent > rawlen / 3)
		return CF_ECORRUPT;
	if (ver == 3)
		pv.ts = TS_ZERO;
	nr = nent == 0 ? 1 : 1 + (interval ? (nent - 1) / interval : 0);
	if (rawlen < 4 || nr > (rawlen - 4) / 4)
		return CF_ECORRUPT;
	rend = rawlen - 4 - 4 * (size_t)nr;
	enc_u32le(dst + rawlen - 4, (uint32_t)nr);
	if (nent == 0)
		enc_u32le(dst + rend, 0);
	for (uint64_t j = 0; j < nent; j++) {
		const unsigned char *val, *s;
		size_t vlen, len, sh;
		unsigned char hdr[30];
		struct buf swap;
		uint64_t a, b;
		int kind, eflags, v3cell;
		struct epre e;

		if (j == 0 || (interval && j % interval == 0)) {
			if (pos > UINT32_MAX)
				goto out;
			enc_u32le(dst + rend + 4 * ri++, (uint32_t)pos);
		}
		if (run) {
			kind = K_CELL;
			eflags = E_DIFF | E_SAME | (runf & 1 ? E_TS0 : 0) |
				 (runf & 2 ? E_SEQ0 : 0) |
				 (runf & 4 ? E_SHAPE : 0);
		} else {
			if (p >= end)
				goto out;
			kind = *p++;
			eflags = ver >= 2 ? kind & ~3 : 0;
			kind &= ver >= 2 ? 3 : 0xFF;
		}
		v3cell = ver == 3 && kind == K_CELL;
		buf_reset(&key);
		if (kind == K_OPAQUE) {
			if (eflags || get_bytes(&p, end, &s, &len) ||
			    get_bytes(&p, end, &val, &vlen))
				goto out;
			if ((rc = buf_append(&key, s, len)))
				goto out;
		} else if (kind == K_CELL || kind == K_VERBATIM) {
			if ((eflags & ~(E_DIFF | E_TS0 | E_SEQ0 | E_SAME |
					(v3cell ? E_SHAPE : 0) |
					(ver == 3 ? E_ZMAP : 0))) ||
			    ((eflags & E_SAME) && !(eflags & E_DIFF)) ||
			    ((eflags & E_ZMAP) && (eflags & E_DIFF)))
				goto out;
			if ((eflags & E_SAME) && v3cell) {
				/* the changes are in the cell's stream */
				for (size_t i = 0; i < pv.pos.len; i += 4)
					if (dec_u32le(pv.pos.p + i) >=
					    pv.head.len)
						goto out;
			} else if (eflags & E_SAME) {
				/* bytes where the last E_DIFF changed them */
				for (size_t i = 0; i < pv.pos.len; i += 4) {
					size_t at = dec_u32le(pv.pos.p + i);
					if (at >= pv.head.len || p >= end)
						goto out;
					pv.head.p[at] = *p++;
				}
				if ((rc = buf_append(&key, pv.head.p,
						     pv.head.len)))
					goto out;
			} else if (eflags & E_DIFF) {
				/* the previous head with bytes changed */
				size_t at = 0;
				if (get_varint(&p, end, &a) || a > pv.head.len)
					goto out;
				buf_reset(&pv.pos);
				for (uint64_t i = 0; i < a; i++) {
					unsigned char b4[4];
					if (get_varint(&p, end, &b) ||
					    b >= pv.head.len - at || p >= end)
						goto out;
					at += (size_t)b;
					enc_u32le(b4, (uint32_t)at);
					if ((rc = buf_append(&pv.pos, b4, 4)))
						goto out;
					rc = CF_ECORRUPT;
					pv.head.p[at++] = *p++;
				}
				if ((rc = buf_append(&key, pv.head.p,
						     pv.head.len)))
					goto out;
			} else {
				b = 0;
				uint64_t mid;
				if (get_varint(&p, end, &a) ||
				    (ver >= 2 && get_varint(&p, end, &b)) ||
				    a > pv.head.len || b > pv.head.len - a)
					goto out;
				if (!(eflags & E_ZMAP)) {
					if (get_bytes(&p, end, &s, &len))
						goto out;
				} else if (get_varint(&p, end, &mid) ||
					   mid / 8 > (uint64_t)(end - p)) {
					goto out;
				}
				/* a bytes of the previous head, s (or the
				 * bitmap's bytes), and (version 2) the
				 * previous one's last b */
				if ((a && (rc = buf_append(&key, pv.head.p,
							  (size_t)a))) ||
				    (!(eflags & E_ZMAP) &&
				     (rc = buf_append(&key, s, len))) ||
				    ((eflags & E_ZMAP) &&
				     (rc = zmap_get(&p, end, (size_t)mid,
						    &key))) ||
				    (b && (rc = buf_append(&key, pv.head.p +
							       pv.head.len - b,
							   (size_t)b))))
					goto out;
				buf_reset(&pv.head);
				if ((rc = buf_append(&pv.head, key.p, key.len)))
					goto out;
			}
			rc = CF_ECORRUPT;
			a = b = 0;
			if (!v3cell &&
			    ((!(eflags & E_TS0) && get_varint(&p, end, &a)) ||
			     (!(eflags & E_SEQ0) && get_varint(&p, end, &b))))
				goto out;
			if (kind == K_VERBATIM) {
				if (get_bytes(&p, end, &s, &len) ||
				    get_bytes(&p, end, &val, &vlen))
					goto out;
				if ((rc = buf_append(&key, s, len)))
					goto out;
			} else {
				buf_reset(&q);
				buf_reset(&v);
				memset(&e, 0, sizeof e);
				e.ef = (unsigned)eflags;
				e.nd = pv.pos.len / 4;
				e.b0 = run ? boff : 0;
				rc = cell_decode(ver >= 2 ? &pv.cx : NULL,
						 v3cell ? &e : NULL, &p, end,
						 (rend - pos) / 3 + 1, &q, &v);
				if (rc)
					goto out;
				rc = CF_ECORRUPT;
				if (v3cell) {
					/* the run bit, [its 3 flags] */
					unsigned rb;
					boff = e.b0;
					if (get_bits_at(&p, &boff, end, 1, &rb) ||
					    (rb && get_bits_at(&p, &boff, end, 3,
							       &runf)))
						goto out;
					run = (int)rb;
					if (!run && boff)
						p++, boff = 0;
				}
				if (v3cell && (eflags & E_SAME)) {
					for (size_t i = 0; i < e.nd; i++)
						pv.head.p[dec_u32le(pv.pos.p +
								    4 * i)] +=
							(unsigned char)
							unzz(e.d[i]);
					if ((rc = buf_append(&key, pv.head.p,
							     pv.head.len)))
						goto out;
				}
				if ((rc = buf_append(&key, q.p, q.len)))
					goto out;
				if (v3cell) {
					a = e.ts;
					b = e.seq;
				}
				val = v.p;
				vlen = v.len;
			}
			if (ver >= 2) {
				pv.dts += ver == 3 ? 0 : unzz(a);
				pv.dseq += unzz(b);
				a = ver == 3 ? unzz(a) : pv.dts;
				b = pv.dseq;
				if (ver == 3 && !pv.started)
					pv.dseq = 0;
				pv.started = 1;
			} else {
				a = unzz(a);
				b = unzz(b);
			}
			pv.ts += a;
			pv.seq += b;
			rc = CF_ECORRUPT;
			if ((rc = buf_reserve(&key, IKEY_TRAILER)))
				goto out;
			enc_u64be(key.p + key.len, pv.ts);
			enc_u64be(key.p + key.len + 8, pv.seq);
			key.len += IKEY_TRAILER;
		} else {
			goto out;
		}
		rc = CF_ECORRUPT;
		sh = (j == 0 || (interval && j % interval == 0))
			     ? 0 : common(last.p, last.len, key.p, key.len);
		len = enc_varint(hdr, sh);
		len += enc_varint(hdr + len, key.len - sh);
		len += enc_varint(hdr + len, vlen);
		if (len > rend - pos || key.len - sh > rend - pos - len ||
		    vlen > rend - pos - len - (key.len - sh))
			goto out;
		memcpy(dst + pos, hdr, len);
		pos += len;
		if (key.len > sh)
			memcpy(dst + pos, key.p + sh, key.len - sh);
		pos += key.len - sh;
		if (vlen)
			memcpy(dst + pos, val, vlen);
		pos += vlen;
		swap = key;
		key = last;
		last = swap;
	}
	rc = pos == rend && ri == nr - (nent == 0) && p == end && !run
		     ? CF_OK : CF_ECORRUPT;
out:
	buf_release(&key);
	buf_release(&last);
	buf_release(&q);
	buf_release(&v);
	buf_release(&pv.head);
	buf_release(&pv.pos);
	return rc;
}
