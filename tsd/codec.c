/*
 * codec.c: OpenTSDB 2.x row keys, qualifiers, values and compacted cells.
 * The layouts are in codec.h and docs/tsd_format.md; the rules for odd
 * cells (fixes of old float encodings, duplicates in compaction) follow
 * OpenTSDB's Internal.extractDataPoints and CompactionQueue.
 */
#include <stdlib.h>
#include <string.h>

#include "tsd/codec.h"
#include "util/coding.h"
#include "util/err.h"

uint32_t tsd_base_time(int64_t ts)
{
	int64_t s = tsd_ts_is_ms(ts) ? ts / 1000 : ts;
	return (uint32_t)(s - s % TSD_MAX_TIMESPAN);
}

size_t tsd_qualifier_build(unsigned char *q, int64_t ts, unsigned flags)
{
	if (tsd_ts_is_ms(ts)) {
		int64_t base_ms = (int64_t)tsd_base_time(ts) * 1000;
		uint32_t v = TSD_MS_FLAG | ((uint32_t)(ts - base_ms) << 6) |
			     (flags & TSD_FLAGS_MASK);
		enc_u32be(q, v);
		return 4;
	}
	uint32_t delta = (uint32_t)(ts - tsd_base_time(ts));
	uint16_t v = (uint16_t)((delta << 4) | (flags & TSD_FLAGS_MASK));
	q[0] = (unsigned char)(v >> 8);
	q[1] = (unsigned char)v;
	return 2;
}

size_t tsd_value_encode_int(unsigned char *v, int64_t x, unsigned *flags)
{
	size_t len;
	if (x >= INT8_MIN && x <= INT8_MAX)
		len = 1;
	else if (x >= INT16_MIN && x <= INT16_MAX)
		len = 2;
	else if (x >= INT32_MIN && x <= INT32_MAX)
		len = 4;
	else
		len = 8;
	for (size_t i = 0; i < len; i++)
		v[i] = (unsigned char)((uint64_t)x >> (8 * (len - 1 - i)));
	*flags = (unsigned)(len - 1);
	return len;
}

size_t tsd_value_encode_float(unsigned char *v, double x, unsigned *flags)
{
	if ((double)(float)x == x) {
		float f = (float)x;
		uint32_t bits;
		memcpy(&bits, &f, 4);
		enc_u32be(v, bits);
		*flags = TSD_FLAG_FLOAT | 3;
		return 4;
	}
	uint64_t bits;
	memcpy(&bits, &x, 8);
	enc_u64be(v, bits);
	*flags = TSD_FLAG_FLOAT | 7;
	return 8;
}

int tsd_value_decode(unsigned flags, const unsigned char *v, size_t vlen,
		     struct tsd_value *out)
{
	if (flags & TSD_FLAG_FLOAT) {
		out->is_float = 1;
		out->i = 0;
		if (vlen == 4) {
			uint32_t bits = dec_u32be(v);
			float f;
			memcpy(&f, &bits, 4);
			out->d = (double)f;
		} else if (vlen == 8) {
			uint64_t bits = dec_u64be(v);
			memcpy(&out->d, &bits, 8);
		} else {
			return CF_ECORRUPT;
		}
		return CF_OK;
	}
	if (vlen != 1 && vlen != 2 && vlen != 4 && vlen != 8)
		return CF_ECORRUPT;
	uint64_t u = 0;
	for (size_t i = 0; i < vlen; i++)
		u = (u << 8) | v[i];
	/* sign-extend from vlen bytes */
	if (vlen < 8 && (v[0] & 0x80))
		u |= ~UINT64_C(0) << (8 * vlen);
	out->is_float = 0;
	out->i = (int64_t)u;
	out->d = 0;
	return CF_OK;
}

static int qual_is_ms(const unsigned char *q)
{
	return (q[0] & TSD_MS_BYTE_FLAG) == TSD_MS_BYTE_FLAG;
}

uint32_t tsd_qualifier_offset_ms(const unsigned char *q)
{
	if (qual_is_ms(q))
		return (dec_u32be(q) & 0x0FFFFFC0u) >> 6;
	return (uint32_t)(((unsigned)q[0] << 8 | q[1]) >> 4) * 1000;
}

int tsd_cell_split(const unsigned char *q, size_t qlen,
		   const unsigned char *v, size_t vlen,
		   struct tsd_cellpt *out, size_t *n)
{
	*n = 0;
	if (qlen == 0 || (qlen & 1))
		return CF_OK;
	if (qlen == 2 || (qlen == 4 && qual_is_ms(q))) {
		struct tsd_cellpt *p = &out[0];
		unsigned flags = q[qlen - 1] & TSD_FLAGS_MASK;
		if (qlen == 2 && (flags & TSD_FLAG_FLOAT) &&
		    (flags & TSD_LENGTH_MASK) == 3 && vlen == 8) {
			/* Old OpenTSDB wrote such floats on 8 bytes with
			 * four leading zeros; keep the real four. */
			if (v[0] | v[1] | v[2] | v[3])
				return CF_ECORRUPT;
			v += 4;
			vlen = 4;
		}
		if (vlen < 1 || vlen > 8)
			return CF_ECORRUPT;
		memcpy(p->q, q, qlen);
		p->qlen = (unsigned char)qlen;
		/* the length bits say what the value really holds */
		p->q[qlen - 1] = (unsigned char)((q[qlen - 1] & ~TSD_LENGTH_MASK) |
						 (unsigned)(vlen - 1));
		p->offset_ms = tsd_qualifier_offset_ms(q);
		p->v = v;
		p->vlen = (unsigned char)vlen;
		*n = 1;
		return CF_OK;
	}
	size_t vi = 0, k = 0;
	for (size_t i = 0; i < qlen;) {
		size_t ql = qual_is_ms(q + i) ? 4 : 2;
		if (i + ql > qlen)
			return CF_ECORRUPT;
		size_t len = (q[i + ql - 1] & TSD_LENGTH_MASK) + 1;
		if (vi + len > vlen)
			return CF_ECORRUPT;
		struct tsd_cellpt *p = &out[k++];
		memcpy(p->q, q + i, ql);
		p->qlen = (unsigned char)ql;
		p->offset_ms = tsd_qualifier_offset_ms(q + i);
		p->v = v + vi;
		p->vlen = (unsigned char)len;
		vi += len;
		i += ql;
	}
	/* exactly one byte must be left: the meta byte */
	if (vi + 1 != vlen)
		return CF_ECORRUPT;
	*n = k;
	return CF_OK;
}

struct mpt {
	struct tsd_cellpt pt;
	int64_t version;
	int compacted;		/* from a cell of several points */
	size_t order;
};

/* Time order; at one time the newest version first.  Versions are
 * milliseconds, so a late point and the compaction before it can share
 * one: then the single cell wins, since a compaction never writes after
 * a single cell it did not merge. */
static int mpt_cmp(const void *a, const void *b)
{
	const struct mpt *x = a, *y = b;
	if (x->pt.offset_ms != y->pt.offset_ms)
		return x->pt.offset_ms < y->pt.offset_ms ? -1 : 1;
	if (x->version != y->version)
		return x->version > y->version ? -1 : 1;
	if (x->compacted != y->compacted)
		return x->compacted - y->compacted;
	return x->order < y->order ? -1 : x->order > y->order;
}

int tsd_row_points(const struct tsd_rawcell *cells, size_t n,
		   struct tsd_cellpt *out, size_t *np)
{
	struct mpt *pts = NULL;
	struct tsd_cellpt *tmp = NULL;
	size_t total = 0, k = 0, m = 0;
	int rc = CF_OK;

	*np = 0;
	for (size_t i = 0; i < n; i++)
		total += cells[i].qlen / 2;
	if (total == 0)
		return CF_OK;
	pts = malloc(total * sizeof *pts);
	tmp = malloc(total * sizeof *tmp);
	if (!pts || !tmp) {
		rc = CF_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		size_t c;
		rc = tsd_cell_split(cells[i].q, cells[i].qlen, cells[i].v,
				    cells[i].vlen, tmp, &c);
		if (rc)
			goto out;
		for (size_t j = 0; j < c; j++) {
			pts[m].pt = tmp[j];
			pts[m].version = cells[i].version;
			pts[m].compacted = c > 1;
			pts[m].order = m;
			m++;
		}
	}
	/* a compacted cell, or single cells met in time order, are in
	 * order already (mpt_cmp orders by offset first) */
	size_t sorted = 1;
	while (sorted < m &&
	       pts[sorted].pt.offset_ms > pts[sorted - 1].pt.offset_ms)
		sorted++;
	if (sorted < m)
		qsort(pts, m, sizeof *pts, mpt_cmp);
	for (size_t i = 0; i < m; i++) {
		if (i > 0 && pts[i].pt.offset_ms == pts[i - 1].pt.offset_ms)
			continue;
		out[k++] = pts[i].pt;
	}
	*np = k;
out:
	free(pts);
	free(tmp);
	return rc;
}

int tsd_compact_cells(const struct tsd_rawcell *cells, size_t n,
		      struct buf *qual, struct buf *val, size_t *npoints)
{
	struct tsd_cellpt *pts;
	size_t total = 0, np = 0;
	int ms = 0, sec = 0, rc;

	for (size_t i = 0; i < n; i++)
		total += cells[i].qlen / 2;
	pts = malloc((total ? total : 1) * sizeof *pts);
	if (!pts)
		return CF_ENOMEM;
	if ((rc = tsd_row_points(cells, n, pts, &np)))
		goto out;
	for (size_t i = 0; i < np; i++) {
		if ((rc = buf_append(qual, pts[i].q, pts[i].qlen)) ||
		    (rc = buf_append(val, pts[i].v, pts[i].vlen)))
			goto out;
		if (pts[i].qlen == 4)
			ms = 1;
		else
			sec = 1;
	}
	if (np > 1)
		rc = buf_putc(val, ms && sec ? TSD_MS_MIXED_COMPACT : 0);
	*npoints = np;
out:
	free(pts);
	return rc;
}

static int tag_cmp(const void *a, const void *b)
{
	return memcmp(a, b, TSD_UID_WIDTH);
}

size_t tsd_rowkey_build(unsigned char *key, const unsigned char *metric,
			uint32_t base, unsigned char (*tags)[2 * TSD_UID_WIDTH],
			size_t ntags)
{
	size_t o = 0;
	memcpy(key, metric, TSD_UID_WIDTH);
	o += TSD_UID_WIDTH;
	enc_u32be(key + o, base);
	o += TSD_TS_BYTES;
	qsort(tags, ntags, sizeof tags[0], tag_cmp);
	for (size_t i = 0; i < ntags; i++) {
		memcpy(key + o, tags[i], 2 * TSD_UID_WIDTH);
		o += 2 * TSD_UID_WIDTH;
	}
	return o;
}

int tsd_rowkey_valid(const unsigned char *key, size_t len)
{
	(void)key;
	if (len < TSD_ROWKEY_PREFIX + 2 * TSD_UID_WIDTH)
		return 0;
	if ((len - TSD_ROWKEY_PREFIX) % (2 * TSD_UID_WIDTH))
		return 0;
	return (len - TSD_ROWKEY_PREFIX) / (2 * TSD_UID_WIDTH) <= TSD_MAX_TAGS;
}
