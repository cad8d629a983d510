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

#define TSB_VERSION 1
#define IKEY_TRAILER 16		/* u64be ts', u64be seqtype */
#define MAXK 15			/* largest decimal scale tried */

enum { K_OPAQUE = 0, K_CELL = 1, K_VERBATIM = 2 };
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

static size_t tbin_bits(const struct tbin *t, uint64_t x)
{
	return t->w == 0 ? 0 : x < t->u ? t->w - 1 : t->w;
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

struct plan {
	int m;
	uint64_t a, b, c;	/* the method's varints (zig-zag) */
	uint64_t max;		/* of the packed numbers */
	size_t bits;		/* packed */
	size_t bytes;		/* the whole column */
};

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

static void plan_method(const uint64_t *x, size_t n, int m, struct plan *p)
{
	size_t first = (size_t)m;
	int64_t mn = INT64_MAX;
	struct tbin t;

	p->m = m;
	p->a = p->b = p->c = 0;
	p->max = 0;
	p->bits = 0;
	for (size_t i = first; i < n; i++) {
		int64_t v = (int64_t)nth(x, m, i);
		if (v < mn)
			mn = v;
	}
	for (size_t i = first; i < n; i++) {
		uint64_t d = nth(x, m, i) - (uint64_t)mn;
		if (d > p->max)
			p->max = d;
	}
	tbin_init(&t, p->max);
	for (size_t i = first; i < n; i++)
		p->bits += tbin_bits(&t, nth(x, m, i) - (uint64_t)mn);
	p->bytes = 1 + varint_len(p->max);
	if (p->bits)
		p->bytes += varint_len((p->bits + 7) / 8) + (p->bits + 7) / 8;
	if (m == M_RAW) {
		p->a = zz((uint64_t)mn);
		p->bytes += varint_len(p->a);
		return;
	}
	p->a = zz(x[0]);
	p->bytes += varint_len(p->a);
	if (m == M_DELTA) {
		if (n >= 2) {
			p->b = zz((uint64_t)mn);
			p->bytes += varint_len(p->b);
		}
		return;
	}
	p->b = zz(x[1] - x[0]);
	p->c = zz((uint64_t)mn);
	p->bytes += varint_len(p->b) + varint_len(p->c);
}

/*
 * Picks the method by one pass over x: the width of each method's range
 * and its varints estimate its size (the truncated code saves about the
 * same on each); only the chosen one is planned exactly.
 */
static void plan_best(const uint64_t *x, size_t n, struct plan *best)
{
	int64_t mn[3] = { INT64_MAX, INT64_MAX, INT64_MAX };
	int64_t mx[3] = { INT64_MIN, INT64_MIN, INT64_MIN };
	uint64_t d = 0, pd = 0;
	size_t cost[3];
	int m = M_RAW;

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
	for (int k = 0; k < 3; k++) {
		size_t cnt = n > (size_t)k ? n - (size_t)k : 0, nb;
		uint64_t max;
		if (cnt == 0 || (k > 0 && n < (size_t)k + 1)) {
			cost[k] = SIZE_MAX;
			continue;
		}
		max = (uint64_t)mx[k] - (uint64_t)mn[k];
		nb = (cnt * width_of(max) + 7) / 8;
		cost[k] = varint_len(max) + varint_len(zz((uint64_t)mn[k])) +
			  (k ? varint_len(zz(x[0])) : 0) +
			  (k == 2 ? varint_len(zz(x[1] - x[0])) : 0) +
			  (nb ? varint_len(nb) + nb : 0);
	}
	if (n >= 2 && cost[1] < cost[m])
		m = M_DELTA;
	if (n >= 3 && cost[2] < cost[m])
		m = M_DOD;
	plan_method(x, n, m, best);
}

/* Appends the column of x[0..n) (nothing when n is 0):
 * u8 method | varint max | the method's varints | [varint nbytes | bits] */
static int intcol_put(struct buf *out, const uint64_t *x, size_t n)
{
	struct plan p;
	struct bw w = { out, 0, 0, 0 };
	struct tbin t;
	uint64_t mn;
	int rc;

	if (n == 0)
		return CF_OK;
	plan_best(x, n, &p);
	rc = buf_putc(out, p.m);
	if (!rc)
		rc = buf_put_varint(out, p.max);
	if (!rc)
		rc = buf_put_varint(out, p.a);
	if (!rc && p.m == M_DELTA && n >= 2)
		rc = buf_put_varint(out, p.b);
	if (!rc && p.m == M_DOD)
		rc = buf_put_varint(out, p.b);
	if (!rc && p.m == M_DOD)
		rc = buf_put_varint(out, p.c);
	if (!rc && p.bits)
		rc = buf_put_varint(out, (p.bits + 7) / 8);
	if (rc || !p.bits)
		return rc;
	mn = unzz(p.m == M_RAW ? p.a : p.m == M_DELTA ? p.b : p.c);
	tbin_init(&t, p.max);
	for (size_t i = (size_t)p.m; i < n; i++)
		tbin_put(&w, &t, nth(x, p.m, i) - mn);
	return bw_end(&w);
}

static size_t intcol_size(const uint64_t *x, size_t n)
{
	struct plan p;

	if (n == 0)
		return 0;
	plan_best(x, n, &p);
	return p.bytes;
}

/* A reader of one integer column. */
struct icur {
	int m;
	struct tbin t;
	size_t i, n;
	uint64_t first, d, mn, prev;
	struct br r;
};

static int icur_open(struct icur *c, const unsigned char **p,
		     const unsigned char *end, size_t n)
{
	uint64_t max, bytes = 0;

	memset(c, 0, sizeof *c);
	c->n = n;
	br_init(&c->r, *p, 0);
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
	br_init(&c->r, *p, (size_t)bytes);
	*p += bytes;
	return 0;
}

HOT uint64_t icur_next(struct icur *c)
{
	uint64_t i = c->i++;

	if (i >= c->n) {
		c->r.bad = 1;
		return 0;
	}
	if (c->m == M_RAW)
		return c->mn + tbin_get(&c->r, &c->t);
	if (i == 0)
		return c->prev = c->first;
	if (c->m == M_DELTA)
		return c->prev += c->mn + tbin_get(&c->r, &c->t);
	if (i >= 2)
		c->d += c->mn + tbin_get(&c->r, &c->t);
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

static int xorcol_put(struct buf *out, const struct fpt *f, size_t n,
		      int canon)
{
	struct buf bits = BUF_INIT;
	struct bw w = { &bits, 0, 0, 0 };
	uint64_t prev = 0;
	unsigned wlz = 0, wtz = 0;
	int win = 0, rc;

	for (size_t i = 0; i < n; i++) {
		uint64_t b = double_bits(f[i].d), x = b ^ prev;
		if (!float_exact(f[i].d, &f[i], canon)) {
			/* a signalling NaN on 4 bytes: only an exception
			 * keeps it */
			buf_release(&bits);
			return CF_EINVAL;
		}
		if (i == 0) {
			bw_put(&w, b, 64);
		} else if (x == 0) {
			bw_put(&w, 0, 1);
		} else {
			unsigned lz = (unsigned)__builtin_clzll(x);
			unsigned tz = (unsigned)__builtin_ctzll(x);
			bw_put(&w, 1, 1);
			if (win && lz >= wlz && tz >= wtz) {
				bw_put(&w, 0, 1);
				bw_put(&w, x >> wtz, 64 - wlz - wtz);
			} else {
				unsigned len = 64 - lz - tz;
				bw_put(&w, 1, 1);
				bw_put(&w, lz, 6);
				bw_put(&w, len - 1, 6);
				bw_put(&w, x >> tz, len);
				wlz = lz;
				wtz = tz;
				win = 1;
			}
		}
		prev = b;
	}
	rc = bw_end(&w);
	if (!rc)
		rc = buf_putc(out, F_XOR);
	if (!rc)
		rc = buf_put_varint(out, bits.len);
	if (!rc)
		rc = buf_append(out, bits.p, bits.len);
	buf_release(&bits);
	return rc;
}

/*
 * Appends the column of the float points f[0..n): scaled decimals
 * (VictoriaMetrics' idea: a double that is exactly m / 10^k is stored as
 * the integer m) with the points that are not stored raw as exceptions,
 * or Gorilla's XOR of consecutive values, whichever is smaller.
 */
static int floatcol_put(struct buf *out, const struct fpt *f, size_t n,
			int canon)
{
	uint64_t *m = NULL;
	unsigned char *exc = NULL;
	unsigned k = 0;
	size_t nexc = 0, dec_size, start = out->len, last = 0;
	int64_t mm, prevm = 0;
	int rc = CF_ENOMEM;

	if (n == 0)
		return CF_OK;
	m = malloc(n * sizeof *m);
	exc = calloc(n, 1);
	if (!m || !exc)
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
	dec_size = 2;
	for (size_t i = 0; i < n; i++) {
		if (!exc[i] && !decimal_at(&f[i], k, canon, &mm))
			exc[i] = 1;
		if (exc[i]) {
			m[i] = (uint64_t)prevm;
			dec_size += varint_len(i - last) + 1 + 8;
			last = i + 1;
			nexc++;
		} else {
			m[i] = (uint64_t)mm;
			prevm = mm;
		}
	}
	dec_size += varint_len(nexc) + intcol_size(m, n);
	if (nexc > 0) {
		rc = xorcol_put(out, f, n, canon);
		if (rc == CF_ENOMEM || (!rc && out->len - start <= dec_size))
			goto out;
		out->len = start;
	}
	rc = buf_putc(out, F_DECIMAL);
	if (!rc)
		rc = buf_putc(out, (int)k);
	if (!rc)
		rc = buf_put_varint(out, nexc);
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
		rc = intcol_put(out, m, n);
out:
	free(m);
	free(exc);
	return rc;
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
	struct br r;
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

static int fcur_open(struct fcur *c, const unsigned char **p,
		     const unsigned char *end, size_t n)
{
	uint64_t v, nexc;

	memset(c, 0, sizeof *c);
	c->n = n;
	c->next_exc = n;
	br_init(&c->r, *p, 0);
	if (n == 0)
		return 0;
	if (*p >= end)
		return -1;
	c->mode = *(*p)++;
	if (c->mode == F_XOR) {
		if (get_varint(p, end, &v) || v > (uint64_t)(end - *p))
			return -1;
		br_init(&c->r, *p, (size_t)v);
		*p += v;
		return 0;
	}
	if (c->mode != F_DECIMAL || *p >= end)
		return -1;
	c->k = *(*p)++;
	if (c->k > MAXK || get_varint(p, end, &nexc) || nexc > n)
		return -1;
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
	return icur_open(&c->m, p, end, n);
}

/* The next value of a XOR column (Gorilla's scheme). */
HOT double xor_next(struct fcur *c)
{
	if (c->i == 1) {
		c->prev = br_get(&c->r, 64);
	} else if (br_get(&c->r, 1)) {
		uint64_t x;
		if (br_get(&c->r, 1) == 0) {
			if (!c->win) {
				c->bad = 1;
				return 0;
			}
			x = br_get(&c->r, 64 - c->wlz - c->wtz) << c->wtz;
		} else {
			unsigned lz = (unsigned)br_get(&c->r, 6);
			unsigned len = (unsigned)br_get(&c->r, 6) + 1;
			if (lz + len > 64) {
				c->bad = 1;
				return 0;
			}
			c->wlz = lz;
			c->wtz = 64 - lz - len;
			c->win = 1;
			x = br_get(&c->r, len) << c->wtz;
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
	return c->bad || c->r.bad || c->m.r.bad;
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

/* Encodes without the check that it decodes back. */
static int cell_put(const struct cpt *pt, size_t n, int meta,
		    const unsigned char *v, size_t vlen, struct buf *out)
{
	uint64_t *x = malloc(n * sizeof *x);
	struct fpt *f = malloc(n * sizeof *f);
	unsigned flags = 0;
	size_t nf = 0, ni, nfl = 0;
	int anyms = 0, allms = 1, canon = 1, rc = CF_ENOMEM;

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
	rc = buf_put_varint(out, n);
	if (!rc)
		rc = buf_putc(out, (int)flags);
	if (!rc && (flags & C_METAX))
		rc = buf_putc(out, v[vlen - 1]);
	for (size_t i = 0; i < n; i++)
		x[i] = pt[i].ms;
	if (!rc && anyms && !allms)
		rc = intcol_put(out, x, n);
	for (size_t i = 0; i < n; i++)
		x[i] = pt[i].ms || !anyms ? pt[i].off
					  : (uint64_t)pt[i].off * 1000;
	if (!rc)
		rc = intcol_put(out, x, n);
	for (size_t i = 0; i < n; i++)
		x[i] = canon ? (pt[i].flags >> 3) & 1 : pt[i].flags;
	if (!rc && !(flags & C_ONETYPE))
		rc = intcol_put(out, x, n);
	ni = 0;
	for (size_t i = 0; i < n; i++) {
		if (pt[i].flags & 8) {
			f[nf].d = float_value(pt[i].v, pt[i].len);
			f[nf].len = pt[i].len;
			f[nf].v = pt[i].v;
			nf++;
		} else {
			x[ni++] = (uint64_t)int_value(pt[i].v, pt[i].len);
		}
	}
	if (!rc)
		rc = intcol_put(out, x, ni);
	if (!rc)
		rc = floatcol_put(out, f, nf, canon);
out:
	free(x);
	free(f);
	return rc;
}

int tsblock_cell_encode(const unsigned char *q, size_t qlen,
			const unsigned char *v, size_t vlen, struct buf *out)
{
	struct buf dq = BUF_INIT, dv = BUF_INIT;
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
	rc = cell_put(pt, n, meta, v, vlen, out);
	if (rc)
		goto out;
	p = out->p + start;
	rc = tsblock_cell_decode(&p, out->p + out->len, n, &dq, &dv);
	if (rc == CF_ENOMEM)
		goto out;
	if (rc || p != out->p + out->len || dq.len != qlen ||
	    dv.len != vlen || memcmp(dq.p, q, qlen) ||
	    (vlen && memcmp(dv.p, v, vlen)))
		rc = CF_EINVAL;
out:
	if (rc)
		out->len = start;
	free(pt);
	buf_release(&dq);
	buf_release(&dv);
	return rc;
}

int tsblock_cell_decode(const unsigned char **pp, const unsigned char *end,
			size_t max_points, struct buf *q, struct buf *v)
{
	const unsigned char *p = *pp;
	struct icur unit, t, tf, ints, scan;
	struct fcur fl;
	uint64_t n;
	size_t nint = 0;
	unsigned cf, meta;
	int rc, has_unit, has_tf, canon;

	if (get_varint(&p, end, &n) || n == 0 || n > max_points || p >= end)
		return CF_ECORRUPT;
	cf = *p++;
	if ((cf & ~C_ALL) || ((cf & C_ALLMS) && !(cf & C_ANYMS)) ||
	    ((cf & C_METAX) && !(cf & C_META)) ||
	    ((cf & C_ONETYPE) && !(cf & C_CANON)) ||
	    ((cf & C_FLOATS) && !(cf & C_ONETYPE)))
		return CF_ECORRUPT;
	canon = !!(cf & C_CANON);
	meta = (cf & C_ANYMS) && !(cf & C_ALLMS);
	if (cf & C_METAX) {
		if (p >= end)
			return CF_ECORRUPT;
		meta = *p++;
	}
	has_unit = (cf & C_ANYMS) && !(cf & C_ALLMS);
	has_tf = !(cf & C_ONETYPE);
	if (icur_open(&unit, &p, end, has_unit ? n : 0) ||
	    icur_open(&t, &p, end, n) ||
	    icur_open(&tf, &p, end, has_tf ? n : 0))
		return CF_ECORRUPT;
	if (has_tf) {
		scan = tf;
		for (size_t i = 0; i < n; i++) {
			uint64_t x = icur_next(&scan);
			if (x > (canon ? 1u : 15u))
				return CF_ECORRUPT;
			nint += canon ? !x : !(x & 8);
		}
		if (scan.r.bad)
			return CF_ECORRUPT;
	} else {
		nint = (cf & C_FLOATS) ? 0 : n;
	}
	if (icur_open(&ints, &p, end, nint) ||
	    fcur_open(&fl, &p, end, n - nint))
		return CF_ECORRUPT;
	if ((rc = buf_reserve(q, 4 * n)) || (rc = buf_reserve(v, 8 * n + 1)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		uint64_t ms = has_unit ? icur_next(&unit) : !!(cf & C_ALLMS);
		uint64_t off = icur_next(&t);
		uint64_t x = has_tf ? icur_next(&tf) : !!(cf & C_FLOATS);
		unsigned flags, len;
		unsigned char *o;

		if (ms > 1)
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
	if (unit.r.bad || t.r.bad || tf.r.bad || ints.r.bad || fcur_bad(&fl))
		return CF_ECORRUPT;
	if (cf & C_META)
		v->p[v->len++] = (unsigned char)meta;
	*pp = p;
	return CF_OK;
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
};

static int put_entry(struct buf *out, struct prev *pv, const unsigned char *k,
		     size_t klen, const unsigned char *v, size_t vlen,
		     struct buf *cell)
{
	size_t head, qlen, sh;
	const unsigned char *tr;
	uint64_t ts, seq;
	int rc, kind = K_VERBATIM;

	if (ikey_split(k, klen, &head, &qlen)) {
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
	/* a cell of one or two points (a qualifier of at most 4 bytes:
	 * what flushes see before rows are compacted) saves a few bytes
	 * encoded and costs a cell's setup: kept verbatim */
	buf_reset(cell);
	rc = qlen > 4 ? tsblock_cell_encode(k + head, qlen, v, vlen, cell)
		      : CF_EINVAL;
	if (rc == CF_ENOMEM)
		return rc;
	if (rc == CF_OK && cell->len < varint_len(qlen) + qlen +
					  varint_len(vlen) + vlen)
		kind = K_CELL;
	sh = common(pv->head.p, pv->head.len, k, head);
	tr = k + klen - IKEY_TRAILER;
	ts = dec_u64be(tr);
	seq = dec_u64be(tr + 8);
	rc = buf_putc(out, kind);
	if (!rc)
		rc = buf_put_varint(out, sh);
	if (!rc)
		rc = buf_put_varint(out, head - sh);
	if (!rc)
		rc = buf_append(out, k + sh, head - sh);
	if (!rc)
		rc = buf_put_varint(out, zz(ts - pv->ts));
	if (!rc)
		rc = buf_put_varint(out, zz(seq - pv->seq));
	if (rc)
		return rc;
	pv->ts = ts;
	pv->seq = seq;
	buf_reset(&pv->head);
	if ((rc = buf_append(&pv->head, k, head)))
		return rc;
	if (kind == K_CELL)
		return buf_append(out, cell->p, cell->len);
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
	struct prev pv = { BUF_INIT, 0, 0 };
	const unsigned char *p = raw, *end;
	unsigned char *check = NULL;
	size_t start = out->len, nent = 0, roff, interval = 0, colbytes = 0;
	uint32_t nr, r1;
	int rc = CF_EINVAL;

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
	return rc;
}

static int read_header(const unsigned char **p, const unsigned char *end,
		       uint64_t *rawlen, uint64_t *nent, uint64_t *interval)
{
	if (*p >= end || *(*p)++ != TSB_VERSION ||
	    get_varint(p, end, rawlen) || get_varint(p, end, nent) ||
	    get_varint(p, end, interval))
		return CF_ECORRUPT;
	return CF_OK;
}

int tsblock_raw_size(const unsigned char *p, size_t n, size_t *rawlen)
{
	uint64_t rl, ne, iv;

	if (read_header(&p, p + n, &rl, &ne, &iv) || rl > SIZE_MAX)
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

int tsblock_decode(const unsigned char *p, size_t n, unsigned char *dst,
		   size_t rawlen)
{
	const unsigned char *end = p + n;
	struct buf key = BUF_INIT, last = BUF_INIT, q = BUF_INIT, v = BUF_INIT;
	struct prev pv = { BUF_INIT, 0, 0 };
	uint64_t rl, nent, interval, nr;
	size_t pos = 0, rend, ri = 0;
	int rc = CF_ECORRUPT;

	if (read_header(&p, end, &rl, &nent, &interval) || rl != rawlen ||
	    nent > rawlen / 3)
		return CF_ECORRUPT;
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
		int kind;

		if (j == 0 || (interval && j % interval == 0)) {
			if (pos > UINT32_MAX)
				goto out;
			enc_u32le(dst + rend + 4 * ri++, (uint32_t)pos);
		}
		if (p >= end)
			goto out;
		kind = *p++;
		buf_reset(&key);
		if (kind == K_OPAQUE) {
			if (get_bytes(&p, end, &s, &len) ||
			    get_bytes(&p, end, &val, &vlen))
				goto out;
			if ((rc = buf_append(&key, s, len)))
				goto out;
		} else if (kind == K_CELL || kind == K_VERBATIM) {
			if (get_varint(&p, end, &a) || a > pv.head.len ||
			    get_bytes(&p, end, &s, &len))
				goto out;
			pv.head.len = (size_t)a;
			if ((rc = buf_append(&pv.head, s, len)) ||
			    (rc = buf_append(&key, pv.head.p, pv.head.len)))
				goto out;
			rc = CF_ECORRUPT;
			if (get_varint(&p, end, &a) || get_varint(&p, end, &b))
				goto out;
			pv.ts += unzz(a);
			pv.seq += unzz(b);
			if (kind == K_VERBATIM) {
				if (get_bytes(&p, end, &s, &len) ||
				    get_bytes(&p, end, &val, &vlen))
					goto out;
				if ((rc = buf_append(&key, s, len)))
					goto out;
			} else {
				buf_reset(&q);
				buf_reset(&v);
				rc = tsblock_cell_decode(&p, end,
							 (rend - pos) / 3 + 1,
							 &q, &v);
				if (rc || (rc = buf_append(&key, q.p, q.len)))
					goto out;
				val = v.p;
				vlen = v.len;
			}
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
	rc = pos == rend && ri == nr - (nent == 0) && p == end ? CF_OK
							       : CF_ECORRUPT;
out:
	buf_release(&key);
	buf_release(&last);
	buf_release(&q);
	buf_release(&v);
	buf_release(&pv.head);
	return rc;
}
