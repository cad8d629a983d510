/*
 * row.c: decoding a tsdb row read from the engine into its points (the
 * table's answer that queries, dumps and the recent points share).
 */
#include <stdlib.h>
#include <string.h>

#include "tsd/internal.h"
#include "util/coding.h"
#include "util/err.h"

int tsd_row_cells(const cf_row *row, struct tsd_rawcell **cells, size_t *n)
{
	size_t count = cf_row_count(row), nc = 0;
	struct tsd_rawcell *c = malloc((count ? count : 1) * sizeof *c);

	*cells = c;
	*n = 0;
	if (!c)
		return CF_ENOMEM;
	for (size_t i = 0; i < count; i++) {
		const struct cf_cell *x = cf_row_cell(row, i);
		if (x->famlen != 1 || x->fam[0] != 't' || x->qlen == 0 ||
		    (x->qlen & 1) || !x->val)
			continue;
		c[nc].q = x->qual;
		c[nc].qlen = x->qlen;
		c[nc].v = x->val;
		c[nc].vlen = x->vlen;
		c[nc].version = x->ts;
		nc++;
	}
	*n = nc;
	return CF_OK;
}

int tsd_row_decode(const cf_row *row, struct tsd_rowpt **pts, size_t *cap,
		   size_t *n, size_t *ncells)
{
	size_t klen, nc = 0, total = 0, np = 0;
	const unsigned char *key = cf_row_key(row, &klen);
	struct tsd_rawcell *cells = NULL;
	struct tsd_cellpt *cp = NULL;
	int rc = CF_OK;

	*n = 0;
	*ncells = 0;
	if (klen < TSD_ROWKEY_PREFIX)
		return CF_ECORRUPT;
	int64_t base_ms = (int64_t)dec_u32be(key + TSD_UID_WIDTH) * 1000;
	if ((rc = tsd_row_cells(row, &cells, &nc)))
		return rc;
	for (size_t i = 0; i < nc; i++)
		total += cells[i].qlen / 2;
	*ncells = nc;
	if (total == 0)
		goto out;
	cp = malloc(total * sizeof *cp);
	if (!cp) {
		rc = CF_ENOMEM;
		goto out;
	}
	if ((rc = tsd_row_points(cells, nc, cp, &np)))
		goto out;
	if (np > *cap) {
		struct tsd_rowpt *p = realloc(*pts, np * sizeof *p);
		if (!p) {
			rc = CF_ENOMEM;
			goto out;
		}
		*pts = p;
		*cap = np;
	}
	for (size_t i = 0; i < np; i++) {
		struct tsd_rowpt *p = &(*pts)[i];
		p->ts = base_ms + cp[i].offset_ms;
		p->ms = cp[i].qlen == 4;
		rc = tsd_value_decode(tsd_qualifier_flags(cp[i].q, cp[i].qlen),
				      cp[i].v, cp[i].vlen, &p->v);
		if (rc)
			goto out;
	}
	*n = np;
out:
	free(cells);
	free(cp);
	return rc;
}

int tsd_hour_scan(struct cf_scan_opts *so, unsigned char *start,
		  unsigned char *stop, uint32_t muid, int64_t from, int64_t to)
{
	memset(so, 0, sizeof *so);
	so->read.max_ts = INT64_MAX;
	so->read.max_versions = 1;
	if (from > (int64_t)UINT32_MAX)
		return 0;
	tsd_uid_put(start, muid);
	enc_u32be(start + TSD_UID_WIDTH, (uint32_t)from);
	so->start = start;
	so->startlen = TSD_ROWKEY_PREFIX;
	if (to <= (int64_t)UINT32_MAX) {
		tsd_uid_put(stop, muid);
		enc_u32be(stop + TSD_UID_WIDTH, (uint32_t)to);
		so->stop = stop;
		so->stoplen = TSD_ROWKEY_PREFIX;
	} else {
		/* the end lies past the last base hour: the metric's end */
		so->prefix = start;
		so->prefixlen = TSD_UID_WIDTH;
	}
	return 1;
}
