/*
 * row.c: decoding a tsdb row read from the engine into its points (the
 * table's answer that queries, dumps and the recent points share).
 */
#include <stdlib.h>

#include "tsd/internal.h"
#include "util/coding.h"
#include "util/err.h"

int tsd_row_decode(const cf_row *row, struct tsd_rowpt **pts, size_t *cap,
		   size_t *n, size_t *ncells)
{
	size_t klen, count = cf_row_count(row), nc = 0, total = 0, np = 0;
	const unsigned char *key = cf_row_key(row, &klen);
	struct tsd_rawcell *cells = NULL;
	struct tsd_cellpt *cp = NULL;
	int rc = CF_OK;

	*n = 0;
	*ncells = 0;
	if (klen < TSD_ROWKEY_PREFIX)
		return CF_ECORRUPT;
	int64_t base_ms = (int64_t)dec_u32be(key + TSD_UID_WIDTH) * 1000;
	cells = malloc((count ? count : 1) * sizeof *cells);
	if (!cells)
		return CF_ENOMEM;
	for (size_t i = 0; i < count; i++) {
		const struct cf_cell *c = cf_row_cell(row, i);
		if (c->famlen != 1 || c->fam[0] != 't' || c->qlen == 0 ||
		    (c->qlen & 1) || !c->val)
			continue;
		cells[nc].q = c->qual;
		cells[nc].qlen = c->qlen;
		cells[nc].v = c->val;
		cells[nc].vlen = c->vlen;
		cells[nc].version = c->ts;
		total += c->qlen / 2;
		nc++;
	}
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
