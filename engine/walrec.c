/*
 * walrec.c: the payload of the engine's WAL records (walrec.h;
 * docs/wal_format.md, "Payload").
 *
 * Version 2:
 *   u8 version (2) | u8 flags (bit 0: body in snappy) | varint first
 *   sequence number | varint entries | body
 *   entry: u8 head (kind | 0x10 table follows | 0x20 family follows)
 *          [varint table id] varint row length, row [u8 family length,
 *          family] varint qualifier length, qualifier | varint zigzag
 *          timestamp difference | varint value length, value
 * Version 1:
 *   u8 version (1) | varint entries | entries
 *   entry: varint table id | varint key length | ikey | varint value
 *          length | value
 */
#include <string.h>

#include <snappy-c.h>

#include "engine/walrec.h"
#include "util/coding.h"
#include "util/err.h"

#define F_SNAPPY 0x01
#define H_KIND 0x0f
#define H_TABLE 0x10
#define H_FAMILY 0x20
/* a body shorter than this is stored as it is: snappy saves little on
 * it and a small record's latency matters more */
#define ZMIN 64
/* snappy makes at most 64 bytes from a 3-byte copy: an uncompressed
 * length claimed above this is damage, never allocated */
#define ZRATIO 22
/* the longest row an internal key holds (ikey_valid) */
#define ROW_MAX 32767

static int kind_valid(unsigned t)
{
	return t == KT_PUT || t == KT_DELETE || t == KT_DELETE_COLUMN ||
	       t == KT_DELETE_FAMILY;
}

static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
	return (int64_t)((v >> 1) ^ (~(v & 1) + 1));
}

/* --- writing --------------------------------------------------------- */

int walrec_begin(struct walrec_enc *e, struct buf *rec, uint64_t first_seq,
		 uint64_t count, int compress)
{
	unsigned char h[2 + 2 * 10];
	size_t n = 0;

	h[n++] = WALREC_VERSION;
	h[n++] = 0;
	n += enc_varint(h + n, first_seq);
	n += enc_varint(h + n, count);
	buf_reset(rec);
	*e = (struct walrec_enc){ .rec = rec, .compress = compress,
				  .tid = -1 };
	e->body = n;
	return buf_append(rec, h, n);
}

/* memcpy that takes an empty range at NULL */
static unsigned char *put(unsigned char *o, const void *s, size_t n)
{
	if (n)
		memcpy(o, s, n);
	return o + n;
}

int walrec_put(struct walrec_enc *e, int64_t tid, const struct ikey *k,
	       const void *val, size_t vlen, int ref)
{
	struct buf *b = e->rec;
	int newfam = !e->fam_set || e->famlen != k->famlen ||
		     (k->famlen && memcmp(b->p + e->fam, k->fam, k->famlen));
	int head = k->type | (tid != e->tid ? H_TABLE : 0) |
		   (newfam ? H_FAMILY : 0);
	unsigned char *o;
	int rc;

	rc = buf_reserve(b, 1 + 5 * 10 + 1 + k->rowlen + k->famlen +
			    k->qlen + (ref ? 0 : vlen));
	if (rc)
		return rc;
	o = b->p + b->len;
	*o++ = (unsigned char)head;
	if (head & H_TABLE)
		o += enc_varint(o, (uint64_t)tid);
	o += enc_varint(o, k->rowlen);
	o = put(o, k->row, k->rowlen);
	if (head & H_FAMILY) {
		*o++ = (unsigned char)k->famlen;
		e->fam = (size_t)(o - b->p);
		e->famlen = k->famlen;
		e->fam_set = 1;
		o = put(o, k->fam, k->famlen);
	}
	o += enc_varint(o, k->qlen);
	o = put(o, k->qual, k->qlen);
	o += enc_varint(o, zigzag((int64_t)((uint64_t)k->ts -
					    (uint64_t)e->ts)));
	o += enc_varint(o, vlen);
	if (ref)
		e->refs = 1;
	else
		o = put(o, val, vlen);
	b->len = (size_t)(o - b->p);
	e->tid = tid;
	e->ts = k->ts;
	return CF_OK;
}

int walrec_finish(struct walrec_enc *e, struct buf *z, const void **p,
		  size_t *n)
{
	struct buf *b = e->rec;
	size_t body = b->len - e->body, zlen;
	int rc;

	*p = b->p;
	*n = b->len;
	if (!e->compress || e->refs || body < ZMIN)
		return CF_OK;
	zlen = snappy_max_compressed_length(body);
	buf_reset(z);
	rc = buf_reserve(z, e->body + zlen);
	if (rc)
		return rc;
	memcpy(z->p, b->p, e->body);
	z->p[1] = F_SNAPPY;
	if (snappy_compress((const char *)b->p + e->body, body,
			    (char *)z->p + e->body, &zlen) != SNAPPY_OK ||
	    zlen > body - body / 8)
		return CF_OK;	/* stored as it is */
	z->len = e->body + zlen;
	*p = z->p;
	*n = z->len;
	return CF_OK;
}

/* --- reading --------------------------------------------------------- */

int walrec_open(struct walrec_dec *d, const void *rec, size_t n)
{
	const unsigned char *p = rec, *end = p + n;
	uint64_t count, seq = 0;
	size_t used;
	int flags = 0;

	*d = (struct walrec_dec){ .tid = -1, .body = BUF_INIT };
	if (n < 1 || (p[0] != 1 && p[0] != WALREC_VERSION))
		return CF_ECORRUPT;
	d->version = *p++;
	if (d->version == 2) {
		if (p == end || (*p & ~F_SNAPPY))
			return CF_ECORRUPT;
		flags = *p++;
		if (!(used = dec_varint(p, end, &seq)))
			return CF_ECORRUPT;
		p += used;
	}
	if (!(used = dec_varint(p, end, &count)))
		return CF_ECORRUPT;
	p += used;
	if (d->version == 2 && count &&
	    (seq == 0 || seq > SEQ_MAX || count - 1 > SEQ_MAX - seq))
		return CF_ECORRUPT;
	if (flags & F_SNAPPY) {
		size_t clen = (size_t)(end - p), ulen;
		if (snappy_uncompressed_length((const char *)p, clen, &ulen) !=
			    SNAPPY_OK ||
		    ulen / ZRATIO > clen || ulen > ((size_t)1 << 30))
			return CF_ECORRUPT;
		if (buf_reserve(&d->body, ulen ? ulen : 1))
			return CF_ENOMEM;
		if (snappy_uncompress((const char *)p, clen,
				      (char *)d->body.p, &ulen) != SNAPPY_OK) {
			buf_release(&d->body);
			return CF_ECORRUPT;
		}
		d->body.len = ulen;
		p = d->body.p;
		end = p + ulen;
	}
	d->p = p;
	d->end = end;
	d->left = count;
	d->seq = seq;
	return CF_OK;
}

/* Reads a varint length and that many bytes at *p. */
static int take(const unsigned char **p, const unsigned char *end,
		const unsigned char **s, size_t *len)
{
	uint64_t v;
	size_t used = dec_varint(*p, end, &v);

	if (!used || v > (uint64_t)(end - *p - used))
		return CF_ECORRUPT;
	*s = *p + used;
	*len = (size_t)v;
	*p = *s + v;
	return CF_OK;
}

static int next_v1(struct walrec_dec *d, int64_t *tid, struct ikey *k,
		   const void **val, size_t *vlen)
{
	const unsigned char *key, *v;
	uint64_t t;
	size_t used, klen;

	if (!(used = dec_varint(d->p, d->end, &t)) || t > INT64_MAX)
		return CF_ECORRUPT;
	d->p += used;
	if (take(&d->p, d->end, &key, &klen) ||
	    take(&d->p, d->end, &v, vlen) || ikey_decode(key, klen, k))
		return CF_ECORRUPT;
	*tid = (int64_t)t;
	*val = v;
	return CF_OK;
}

static int next_v2(struct walrec_dec *d, int64_t *tid, struct ikey *k,
		   const void **val, size_t *vlen)
{
	const unsigned char *p = d->p, *end = d->end, *v;
	uint64_t x;
	size_t used;
	int head;

	if (p == end)
		return CF_ECORRUPT;
	head = *p++;
	if ((head & ~(H_KIND | H_TABLE | H_FAMILY)) ||
	    !kind_valid(head & H_KIND))
		return CF_ECORRUPT;
	if (head & H_TABLE) {
		if (!(used = dec_varint(p, end, &x)) || x > INT64_MAX)
			return CF_ECORRUPT;
		p += used;
		d->tid = (int64_t)x;
	} else if (d->tid < 0)
		return CF_ECORRUPT;	/* no entry before to take it from */
	if (take(&p, end, &k->row, &k->rowlen) || k->rowlen > ROW_MAX)
		return CF_ECORRUPT;
	if (head & H_FAMILY) {
		if (p == end || (size_t)(end - p - 1) < *p)
			return CF_ECORRUPT;
		d->famlen = *p;
		d->fam = p + 1;
		p += 1 + d->famlen;
	} else if (!d->fam)
		return CF_ECORRUPT;
	if (take(&p, end, &k->qual, &k->qlen))
		return CF_ECORRUPT;
	if (!(used = dec_varint(p, end, &x)))
		return CF_ECORRUPT;
	p += used;
	d->ts = (int64_t)((uint64_t)d->ts + (uint64_t)unzigzag(x));
	if (take(&p, end, &v, vlen))
		return CF_ECORRUPT;
	k->fam = d->fam;
	k->famlen = d->famlen;
	k->ts = d->ts;
	k->seq = d->seq++;
	k->type = head & H_KIND;
	*tid = d->tid;
	*val = v;
	d->p = p;
	return CF_OK;
}

int walrec_next(struct walrec_dec *d, int64_t *tid, struct ikey *k,
		const void **val, size_t *vlen, int *more)
{
	int rc;

	if (!d->left) {
		*more = 0;
		return d->p == d->end ? CF_OK : CF_ECORRUPT;
	}
	rc = d->version == 1 ? next_v1(d, tid, k, val, vlen) :
			       next_v2(d, tid, k, val, vlen);
	if (rc)
		return rc;
	d->left--;
	*more = 1;
	return CF_OK;
}

void walrec_close(struct walrec_dec *d)
{
	buf_release(&d->body);
}

int walrec_check(const void *rec, size_t n)
{
	struct walrec_dec d;
	int more = 1, rc = walrec_open(&d, rec, n);

	while (rc == CF_OK && more) {
		struct ikey k;
		const void *v;
		size_t vl;
		int64_t tid;
		rc = walrec_next(&d, &tid, &k, &v, &vl, &more);
	}
	walrec_close(&d);
	return rc;
}
