/*
 * sstverify.c: sst_verify, a store file checked whole (engine/sst.h):
 * every block's checksum and key order, the index against the blocks,
 * the filter's form, the meta block against what the blocks hold, and
 * the sections laid end to end (docs/sst_format.md).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/block.h"
#include "engine/bloom.h"
#include "engine/cellfs.h"
#include "engine/key.h"
#include "engine/sst.h"
#include "engine/sstfmt.h"
#include "util/env.h"
#include "util/err.h"

/* Walks one data block: every key well formed and strictly after *prev,
 * the first after the previous block's index key lo (lo NULL: none), the
 * last one equal to the index key (exact: version 1) or at most it;
 * updates the recomputed meta. */
static int verify_block(const struct block *b, const unsigned char *ikey,
			size_t iklen, const unsigned char *lo, size_t lolen,
			int exact, struct buf *prev, struct sst_meta *m)
{
	int first = 1;

	struct block_iter it;
	struct ikey k;
	int rc = CF_OK;

	block_iter_init(&it);
	block_iter_set(&it, b);
	for (block_iter_seek_first(&it); it.valid; block_iter_next(&it)) {
		if (ikey_decode(it.key.p, it.key.len, &k) ||
		    (m->cells && ikey_cmp(prev->p, prev->len, it.key.p,
					  it.key.len) >= 0) ||
		    (first && lo &&
		     ikey_cmp(lo, lolen, it.key.p, it.key.len) >= 0)) {
			rc = CF_ECORRUPT;
			goto out;
		}
		first = 0;
		if (!m->cells) {
			m->min_ts = m->max_ts = k.ts;
			m->min_seq = m->max_seq = k.seq;
			rc = buf_append(&m->first_key, it.key.p, it.key.len);
			if (rc)
				goto out;
		}
		if (k.ts < m->min_ts)
			m->min_ts = k.ts;
		if (k.ts > m->max_ts)
			m->max_ts = k.ts;
		if (k.seq < m->min_seq)
			m->min_seq = k.seq;
		if (k.seq > m->max_seq)
			m->max_seq = k.seq;
		m->cells++;
		if (k.type != KT_PUT)
			m->deletes++;
		prev->len = 0;
		rc = buf_append(prev, it.key.p, it.key.len);
		if (rc)
			goto out;
	}
	rc = it.status;
	if (!rc && (exact ? bytes_cmp(prev->p, prev->len, ikey, iklen) != 0
			  : first || ikey_cmp(prev->p, prev->len, ikey,
					      iklen) > 0))
		rc = CF_ECORRUPT;
out:
	block_iter_release(&it);
	return rc;
}

static int same_meta(const struct sst_meta *a, const struct sst_meta *b)
{
	return a->cells == b->cells && a->deletes == b->deletes &&
	       a->min_ts == b->min_ts && a->max_ts == b->max_ts &&
	       a->min_seq == b->min_seq && a->max_seq == b->max_seq &&
	       bytes_cmp(a->first_key.p, a->first_key.len, b->first_key.p,
			 b->first_key.len) == 0 &&
	       bytes_cmp(a->last_key.p, a->last_key.len, b->last_key.p,
			 b->last_key.len) == 0;
}

/* The raw bytes of part h of f, which must start at expect (where the
 * part before it ended): *p (the caller's) and *n.  *bad_off is set to
 * h's offset first.  CF_ECORRUPT for a gap or an overlap. */
static int part_at(struct env_file *f, const struct handle *h,
		   uint64_t expect, uint64_t *bad_off, unsigned char **p,
		   size_t *n)
{
	*bad_off = h->off;
	if (h->off != expect)
		return CF_ECORRUPT;
	return block_read_raw(f, h->off, h->size, p, n);
}

int sst_verify(const char *path, uint64_t *bad_off)
{
	struct env_file *f = NULL;
	struct footer ft;
	struct index x;
	struct sst_meta stored, seen;
	struct buf prev = BUF_INIT;
	struct bloom bl;
	unsigned char *p = NULL;
	uint64_t size = 0, blocks, expect = 0;
	size_t n;
	int rc;

	memset(&x, 0, sizeof x);
	memset(&stored, 0, sizeof stored);
	memset(&seen, 0, sizeof seen);
	*bad_off = 0;
	rc = env_open(path, ENV_READ, &f);
	if (rc)
		goto out;
	rc = sst_read_footer(f, &ft, &size);
	if (rc) {
		*bad_off = size >= FOOTER_SIZE ? size - FOOTER_SIZE : 0;
		goto out;
	}
	*bad_off = ft.index.off;
	rc = sst_load_index(f, &ft.index, size - FOOTER_SIZE, &x);
	if (rc)
		goto out;
	for (size_t i = 0; i < x.n; i++) {
		struct block *b;
		*bad_off = x.e[i].h.off;
		rc = CF_ECORRUPT;
		if (x.e[i].h.off != expect)	/* a gap or an overlap */
			goto out;
		rc = block_read(f, x.e[i].h.off, x.e[i].h.size, &b);
		if (rc)
			goto out;
		rc = verify_block(b, ikey_at(&x, i), x.e[i].klen,
				  i ? ikey_at(&x, i - 1) : NULL,
				  i ? x.e[i - 1].klen : 0, ft.version == 1,
				  &prev, &seen);
		block_free(b);
		if (rc)
			goto out;
		expect += x.e[i].h.size + BLOCK_TRAILER;
	}
	if (ft.filter.size) {
		rc = part_at(f, &ft.filter, expect, bad_off, &p, &n);
		if (rc)
			goto out;
		rc = bloom_init(&bl, p, n);
		free(p);
		p = NULL;
		if (rc)
			goto out;
		expect += ft.filter.size + BLOCK_TRAILER;
	}
	rc = buf_append(&seen.last_key, prev.p, prev.len);
	if (rc)
		goto out;
	rc = part_at(f, &ft.meta, expect, bad_off, &p, &n);
	if (rc)
		goto out;
	rc = sst_decode_meta(p, n, &stored, &blocks);
	if (rc)
		goto out;
	rc = CF_ECORRUPT;
	if (blocks != x.n || !same_meta(&stored, &seen) ||
	    (stored.bloom != CF_BLOOM_NONE) != (ft.filter.size != 0))
		goto out;
	expect += ft.meta.size + BLOCK_TRAILER;
	*bad_off = ft.index.off;
	if (ft.index.off != expect ||
	    expect + ft.index.size + BLOCK_TRAILER != size - FOOTER_SIZE)
		goto out;
	rc = CF_OK;
	*bad_off = 0;
out:
	free(p);
	buf_release(&prev);
	sst_meta_release(&stored);
	sst_meta_release(&seen);
	sst_index_release(&x);
	env_close(f);
	return rc;
}
