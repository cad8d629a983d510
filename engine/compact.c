/*
 * compact.c: compactions and splits.
 *
 * Minor compaction merges a run of a store's files that are adjacent in
 * sequence order (flushes produce files with disjoint sequence ranges and
 * a merge of adjacent ones keeps that true), choosing the run as HBase's
 * exploring policy does so big old files are not rewritten for small new
 * ones.  It drops only puts past their TTL in families without
 * MIN_VERSIONS, which no read can see again.
 *
 * Major compaction rewrites every file of a store.  Each family of each
 * row is classified by visible.c at a snapshot covering all the store's
 * files (the memstores only hold later writes); dead and masked puts and
 * delete markers are dropped (with KEEP_DELETED_CELLS, the puts some
 * read of some time range can still need and the markers that cover
 * them are kept: vis_kdc_row; and a column with a put that dies when
 * its TTL passes is kept whole: group_flush).  Since death never
 * reverses, no read changes.  The work on each row, whole in the window
 * or streamed column by column, is majorrow.c's.
 *
 * A split (table_split_at) flushes the region, then in one catalog
 * transaction replaces it with two daughters whose store files are
 * references to the parent's files bounded by the split key; no data is
 * copied.  Compaction of a daughter later rewrites what it references
 * into its own directory; a parent's file is deleted when no catalog row
 * references it any more.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "engine/majorrow.h"
#include "engine/wal.h"
#include "meta/meta.h"
#include "util/coding.h"
#include "util/env.h"
#include "util/log.h"

#define RATIO 1.2
#define MAX_MINOR_FILES 10

/* Is every file of [lo, hi) at most ratio times the rest of them
 * together (HBase's filesInRatio)? */
static int in_ratio(const uint64_t *sizes, size_t lo, size_t hi,
		    uint64_t total, double ratio)
{
	if (hi - lo < 2)
		return 1;
	for (size_t i = lo; i < hi; i++)
		if ((double)sizes[i] > ratio * (double)(total - sizes[i]))
			return 0;
	return 1;
}

/* Is k files of size bytes a better choice than best_n of best_size
 * (HBase's isBetterSelection)?  More files, then fewer bytes; for a
 * store that might be stuck, the most files a byte, by 5%. */
static int better(size_t best_n, uint64_t best_size, size_t k,
		  uint64_t size, int stuck)
{
	if (stuck && best_size > 0 && size > 0)
		return (double)best_n / (double)best_size * 1.05 <
		       (double)k / (double)size;
	return k > best_n || (k == best_n && size < best_size);
}

int compact_pick(const uint64_t *sizes, size_t n,
		 const struct compact_conf *c, size_t *first, size_t *count)
{
	size_t min = c->min_files < 2 ? 2 : (size_t)c->min_files;
	size_t max = c->max_files < 0 || (size_t)c->max_files < min ?
		     min : (size_t)c->max_files;
	size_t best_lo = 0, best_n = 0, small_lo = 0, small_n = 0;
	uint64_t best_size = 0, small_size = UINT64_MAX;
	int stuck = c->stuck_files > 0 && n >= (size_t)c->stuck_files;

	/* a run is [lo, hi) of the newest-first sizes; its oldest file is
	 * hi - 1, so HBase's oldest start is the largest hi, and its
	 * growing end a falling lo */
	for (size_t hi = n; hi >= min; hi--) {
		uint64_t size = 0;
		for (size_t lo = hi; lo-- > 0 && hi - lo <= max;) {
			size_t k = hi - lo;
			size += sizes[lo];
			if (k < min)
				continue;
			if (stuck && size < small_size) {
				small_lo = lo;
				small_n = k;
				small_size = size;
			}
			if (size >= c->min_size &&
			    !in_ratio(sizes, lo, hi, size, c->ratio))
				continue;
			if (better(best_n, best_size, k, size, stuck)) {
				best_lo = lo;
				best_n = k;
				best_size = size;
			}
		}
	}
	if (!best_n && stuck) {
		best_lo = small_lo;
		best_n = small_n;
	}
	if (!best_n)
		return 0;
	*first = best_lo;
	*count = best_n;
	return 1;
}

/* compact_pick over st's files; 0 also while one is unreadable. */
static int pick_minor(const struct cf_db *db, const struct fstore *st,
		      size_t *first, size_t *n)
{
	struct compact_conf c = {
		.min_files = db->o.compact_threshold,
		.max_files = MAX_MINOR_FILES,
		.min_size = db->o.flush_size,
		.ratio = RATIO,
		.stuck_files = db->o.stall_files,
	};
	uint64_t *sizes;
	int rc;

	if (st->n < 2 || st->n < (size_t)c.min_files)
		return 0;
	for (size_t i = 0; i < st->n; i++)
		if (!st->files[i]->sst)
			return 0;	/* unreadable: wait for cellfs-fsck */
	if (!(sizes = malloc(st->n * sizeof *sizes)))
		return 0;	/* tried again at the next check */
	for (size_t i = 0; i < st->n; i++)
		sizes[i] = st->files[i]->size;
	rc = compact_pick(sizes, st->n, &c, first, n);
	free(sizes);
	return rc;
}

/* Does st hold a reference to a split parent's file (all readable)? */
static int store_has_refs(const struct fstore *st, const struct region *r)
{
	int refs = 0;

	for (size_t i = 0; i < st->n; i++) {
		const struct sfile *f = st->files[i];
		if (!f->sst)
			return 0;	/* unreadable: wait for cellfs-fsck */
		if (f->home_region != (int64_t)r->id || f->lo_set ||
		    f->hi_set)
			refs = 1;
	}
	return refs;
}

static int region_has_refs(struct region *r)
{
	struct view *v = region_view(r);
	int refs = 0;

	for (size_t s = 0; s < v->nstores && !refs; s++)
		refs = store_has_refs(&v->stores[s], r);
	view_unref(v);
	return refs;
}

/* Did reads ask for st to be compacted whole (all files readable)? */
static int store_read_wanted(const struct fstore *st)
{
	if (st->n < 2 || !atomic_load(&st->read_compact))
		return 0;
	for (size_t i = 0; i < st->n; i++)
		if (!st->files[i]->sst)
			return 0;	/* unreadable: wait for cellfs-fsck */
	return 1;
}

/*
 * A store needs compacting when the ratio rule picks files, or, as in
 * HBase, when it holds references to a split parent's files: compacting
 * them all rewrites the daughter's part into its own directory, so the
 * parent's files can go and the daughter can split again.
 */
int region_needs_compaction(struct cf_db *db, struct region *r)
{
	struct view *v = region_view(r);
	size_t first, n;
	int need = 0;

	for (size_t s = 0; s < v->nstores && !need; s++)
		need = store_has_refs(&v->stores[s], r) ||
		       store_read_wanted(&v->stores[s]) ||
		       pick_minor(db, &v->stores[s], &first, &n);
	view_unref(v);
	return need;
}

/* Rewrites files[0..n) of family fam of region r into one file. */
static int compact_files(struct cf_db *db, struct region *r, const char *fam,
			 struct sfile **files, size_t n, int major)
{
	struct cf_table *t = r->t;
	const struct cf_family *f;
	struct cf_family fcopy;
	struct iter *it = NULL;
	struct sst_builder *b = NULL;
	struct sst_meta meta = { 0 };
	struct sfile *out = NULL;
	struct buf path = BUF_INIT;
	struct group g = { 0 };
	struct cstream cs;
	struct buf last = BUF_INIT;
	struct sst_build_opts bo;
	uint64_t snap = 0, id, kept = 0;
	int64_t now = env_now_ms();
	int rc = CF_OK, finished = 0;

	memset(&cs, 0, sizeof cs);
	pthread_rwlock_rdlock(&t->lock);
	f = table_family(t, fam, strlen(fam));
	if (f)
		fcopy = *f;
	pthread_rwlock_unlock(&t->lock);
	if (!f)
		return CF_OK;
	bo.block_size = fcopy.blocksize;
	bo.compression = fcopy.compression;
	bo.encoding = fcopy.encoding;
	bo.bloom = fcopy.bloom;
	bo.bloom_bits = 10;

	for (size_t i = 0; i < n; i++) {
		const struct sst_meta *m = sst_get_meta(files[i]->sst);
		if (m->max_seq > snap)
			snap = m->max_seq;
	}
	{
		/* merge the chosen files (bounded for references) */
		struct view v = { 0 };
		struct fstore st;
		struct memstore *empty = NULL;
		memset(&st, 0, sizeof st);
		snprintf(st.fam, sizeof st.fam, "%s", fam);
		st.files = files;
		st.n = n;
		v.stores = &st;
		v.nstores = 1;
		rc = memstore_new(&empty);
		v.mem = empty;
		if (!rc) {
			struct cf_read_opts o = CF_READ_OPTS_INIT;
			it = view_iter(db, r, &v, &o, NULL, 0, 0);
			if (!it)
				rc = CF_ENOMEM;
		}
		if (empty)
			memstore_unref(empty);
	}
	if (rc)
		goto out;

	pthread_mutex_lock(&db->meta_mu);
	id = db->next_file++;
	pthread_mutex_unlock(&db->meta_mu);
	rc = store_path(db, t, (int64_t)r->id, fam, id, &path);
	if (!rc) {
		char *slash = strrchr((char *)path.p, '/');
		*slash = 0;
		rc = env_mkdir_p((const char *)path.p, 0700);
		*slash = '/';
	}
	if (!rc)
		rc = sst_builder_open((const char *)path.p, &bo, &b);
	if (rc)
		goto out;

	cs.f = &fcopy;
	cs.vc = (struct vis_ctx){ &fcopy, snap, now, INT64_MAX, 1 };
	cs.b = b;
	cs.it = it;
	cs.wcells = db->o.compact_window;
	for (iter_seek_first(it); rc == CF_OK && iter_valid(it);
	     iter_next(it)) {
		size_t kl, vl;
		const unsigned char *k = iter_key(it, &kl);
		const unsigned char *v = iter_value(it, &vl);
		struct ikey x;

		if (ikey_decode(k, kl, &x)) {
			rc = CF_ECORRUPT;
			break;
		}
		/* identical keys are one cell (see read.c) */
		if (last.len == kl && memcmp(last.p, k, kl) == 0)
			continue;
		buf_reset(&last);
		if ((rc = buf_append(&last, k, kl)))
			break;
		if (!major) {
			if (x.type == KT_PUT && fcopy.ttl != CF_TTL_FOREVER &&
			    fcopy.min_versions == 0 &&
			    now - x.ts > fcopy.ttl * 1000)
				continue;
			rc = sst_builder_add(b, k, kl, v, vl);
			continue;
		}
		if (g.n) {
			const unsigned char *p = g.data.p + g.offs[0];
			uint64_t l = 0;
			size_t u = dec_varint(p, p + 10, &l);
			if (ikey_cmp_row(p + u, l, k, kl) != 0)
				rc = group_flush(&g, &fcopy, snap, now, b);
		}
		if (!rc && (g.n >= cs.wcells || g.data.len >= WINDOW_BYTES)) {
			/* the row passes the window: stream it from its
			 * first cell, then go on from the cell after it */
			const unsigned char *p = g.data.p + g.offs[0];
			uint64_t l = 0;
			size_t u = dec_varint(p, p + 10, &l);
			rc = cs_row(&cs, p + u, l);
			g.n = 0;
			buf_reset(&g.data);
			buf_reset(&last);
			if (rc || !iter_valid(it))
				break;
			k = iter_key(it, &kl);
			v = iter_value(it, &vl);
			if ((rc = buf_append(&last, k, kl)))
				break;
		}
		if (!rc)
			rc = group_add(&g, k, kl, v, vl);
	}
	if (rc == CF_OK)
		rc = iter_status(it);
	if (rc == CF_OK && major)
		rc = group_flush(&g, &fcopy, snap, now, b);
	if (rc)
		goto out;
	kept = sst_builder_cells(b);
	if (kept) {
		rc = sst_builder_finish(b, &meta);
		b = NULL;
		finished = rc == CF_OK;
		if (!rc)
			rc = sfile_open(db, t, (int64_t)r->id, fam,
					table_in_memory(t, fam), id,
					meta.file_size,
					&out);
		if (rc)
			goto out;
	} else {
		sst_builder_abort(b);
		b = NULL;
	}

	/* the commit point */
	pthread_mutex_lock(&db->meta_mu);
	rc = meta_begin(db->meta);
	for (size_t i = 0; i < n && !rc; i++)
		rc = meta_file_del(db->meta, (int64_t)r->id, files[i]->id);
	if (!rc && out) {
		struct meta_file mf = {
			.id = id, .region_id = (int64_t)r->id, .family = fam,
			.home_region = (int64_t)r->id, .size = meta.file_size,
			.max_seq = meta.max_seq,
		};
		rc = meta_file_add(db->meta, &mf);
	}
	if (!rc)
		rc = meta_set_u64(db->meta, "next_file", db->next_file);
	if (!rc)
		rc = meta_commit(db->meta);
	else
		meta_rollback(db->meta);
	/* inputs no catalog row names any more can go */
	for (size_t i = 0; i < n && !rc; i++) {
		int64_t refs = 1;
		if (meta_file_refs(db->meta, files[i]->id, &refs) == CF_OK &&
		    refs == 0)
			sst_set_obsolete(files[i]->sst);
	}
	pthread_mutex_unlock(&db->meta_mu);
	if (rc)
		goto out;

	pthread_mutex_lock(&r->mu);
	{
		struct view *v = r->view, *nv = view_clone(v);
		struct fstore *st = nv ? view_store(nv, fam, 1) : NULL;
		if (!st) {
			pthread_mutex_unlock(&r->mu);
			view_unref(nv);
			rc = CF_ENOMEM;	/* the catalog is right; reopen
					   shows the new state */
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < st->n; j++)
				if (st->files[j]->id == files[i]->id) {
					sfile_free(st->files[j]);
					memmove(&st->files[j],
						&st->files[j + 1],
						(st->n - j - 1) *
						sizeof *st->files);
					st->n--;
					break;
				}
		if (out) {
			view_add_file(nv, fam, out);
			out = NULL;
		}
		r->view = nv;
		pthread_mutex_unlock(&r->mu);
		view_unref(v);
	}
	atomic_fetch_add(&t->st.compactions, 1);
	atomic_fetch_add(&db->st.compactions, 1);
	{
		uint64_t in = 0;
		for (size_t i = 0; i < n; i++)
			in += files[i]->size;
		cf_log(CF_LOG_INFO, "%s compaction of %s/%s region %016"
		       PRIx64 ": %zu files, %" PRIu64 " bytes -> %" PRIu64
		       " bytes, %" PRIu64 " cells, %" PRId64 " ms",
		       major ? "major" : "minor", t->name, fam, r->id, n, in,
		       kept ? meta.file_size : 0, kept,
		       env_now_ms() - now);
	}
	if (major) {
		atomic_fetch_add(&t->st.major_compactions, 1);
		atomic_fetch_add(&db->st.major_compactions, 1);
	}
out:
	if (b)
		sst_builder_abort(b);
	if (rc) {
		cf_log(CF_LOG_ERROR, "compaction of %s/%s region %016" PRIx64
		       ": %s", t->name, fam, r->id, cf_strerror(rc));
		if (out)
			sst_set_obsolete(out->sst);
		else if (finished)
			env_unlink((const char *)path.p);
	}
	if (finished)
		sst_meta_release(&meta);
	sfile_free(out);
	iter_destroy(it);
	group_release(&g);
	cstream_release(&cs);
	buf_release(&last);
	buf_release(&path);
	return rc;
}

int region_compact(struct cf_db *db, struct region *r, int major)
{
	int rc = CF_OK;

	pthread_mutex_lock(&db->compact_mu);
	if (!region_live(r))
		goto out;
	for (size_t s = 0;; s++) {
		struct view *v = region_view(r);
		struct sfile **files = NULL;
		char fam[CF_FAMILY_MAX + 1];
		size_t first = 0, n = 0;
		int all;

		if (s >= v->nstores) {
			view_unref(v);
			break;
		}
		memcpy(fam, v->stores[s].fam, sizeof fam);
		for (size_t i = 0; i < v->stores[s].n; i++)
			if (!v->stores[s].files[i]->sst) {
				/* an unreadable file: leave the store as it
				 * is until cellfs-fsck repairs it */
				view_unref(v);
				v = NULL;
				break;
			}
		if (!v)
			continue;
		if (major || store_has_refs(&v->stores[s], r) ||
		    store_read_wanted(&v->stores[s])) {
			first = 0;
			n = v->stores[s].n;
		} else if (!pick_minor(db, &v->stores[s], &first, &n)) {
			n = 0;
		}
		/* a compaction of every file of the store is a major one
		 * (HBase's isAllFiles): nothing older is left for a delete
		 * marker or a dead version to matter to */
		all = n > 0 && n == v->stores[s].n;
		if (n && (files = calloc(n, sizeof *files))) {
			for (size_t i = 0; i < n; i++) {
				/* private copies keep the ssts referenced */
				files[i] = calloc(1, sizeof **files);
				if (!files[i])
					break;
				*files[i] = *v->stores[s].files[first + i];
				memset(&files[i]->lo, 0, sizeof(struct buf));
				memset(&files[i]->hi, 0, sizeof(struct buf));
				buf_append(&files[i]->lo,
					   v->stores[s].files[first + i]->lo.p,
					   v->stores[s].files[first + i]->lo.len);
				buf_append(&files[i]->hi,
					   v->stores[s].files[first + i]->hi.p,
					   v->stores[s].files[first + i]->hi.len);
				sst_ref(files[i]->sst);
			}
		}
		view_unref(v);
		if (n && !files) {
			rc = CF_ENOMEM;
			break;
		}
		if (n)
			rc = compact_files(db, r, fam, files, n, major || all);
		for (size_t i = 0; files && i < n; i++)
			sfile_free(files[i]);
		free(files);
		if (rc)
			break;
	}
out:
	pthread_mutex_unlock(&db->compact_mu);
	return rc;
}

/* --- splits ----------------------------------------------------------- */

/* The row at the middle of r's data, by bytes; CF_ENOTFOUND if the
 * region has fewer than two rows.  From the largest store file's index
 * when it has one inside the region (the cost does not grow with the
 * region), else by reading the region (small regions). */
static int middle_row(struct cf_db *db, struct region *r, struct buf *out)
{
	struct view *v = region_view(r);
	struct sfile *big = NULL;

	for (size_t s = 0; s < v->nstores; s++)
		for (size_t i = 0; i < v->stores[s].n; i++) {
			struct sfile *f = v->stores[s].files[i];
			if (f->sst && (!big || f->size > big->size))
				big = f;
		}
	if (big && sst_mid_row(big->sst, out) == CF_OK &&
	    bytes_cmp(out->p, out->len, r->start.p, r->start.len) > 0 &&
	    region_contains(r, out->p, out->len)) {
		view_unref(v);
		return CF_OK;
	}
	view_unref(v);
	v = region_view(r);
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	struct iter *it = view_iter(db, r, v, &o, NULL, 0, 0);
	uint64_t total = region_disk_bytes(v), seen = 0;
	struct buf first = BUF_INIT;
	int rc = CF_ENOTFOUND;

	if (!it) {
		view_unref(v);
		return CF_ENOMEM;
	}
	for (iter_seek_first(it); iter_valid(it); iter_next(it)) {
		size_t kl, vl, rl;
		const unsigned char *k = iter_key(it, &kl);
		const unsigned char *row = ikey_row(k, &rl);
		iter_value(it, &vl);
		if (!first.len) {
			buf_append(&first, row, rl);
			continue;
		}
		seen += kl + vl;
		if (bytes_cmp(row, rl, first.p, first.len) != 0 &&
		    seen * 2 >= total) {
			buf_reset(out);
			rc = buf_append(out, row, rl);
			break;
		}
	}
	if (rc == CF_ENOTFOUND && iter_status(it))
		rc = iter_status(it);
	iter_destroy(it);
	view_unref(v);
	buf_release(&first);
	return rc;
}

/* d's reference to file pf (id and home) already in dv, or NULL: a
 * merge meets the file of a split parent twice, once through each of
 * the two daughters it merges. */
static struct sfile *ref_of(struct view *dv, const char *fam,
			    const struct sfile *pf)
{
	for (size_t s = 0; s < dv->nstores; s++) {
		if (strcmp(dv->stores[s].fam, fam))
			continue;
		for (size_t i = 0; i < dv->stores[s].n; i++) {
			struct sfile *f = dv->stores[s].files[i];
			if (f->id == pf->id &&
			    f->home_region == pf->home_region)
				return f;
		}
	}
	return NULL;
}

/* The catalog entry of d's reference f (to store fam). */
static int ref_put(struct cf_db *db, struct region *d, const char *fam,
		   const struct sfile *f)
{
	struct meta_file mf = { 0 };

	mf.id = f->id;
	mf.region_id = (int64_t)d->id;
	mf.family = fam;
	mf.home_region = f->home_region;
	mf.size = f->size;
	mf.max_seq = sst_get_meta(f->sst)->max_seq;
	mf.lo = f->lo.p ? f->lo.p : (const void *)"";
	mf.lolen = f->lo.len;
	mf.hi = f->hi_set ? (f->hi.p ? f->hi.p : (const void *)"") : NULL;
	mf.hilen = f->hi.len;
	return meta_file_add(db->meta, &mf);
}

/*
 * Region d (a split's daughter, or a merge's region) references every
 * file of pv, each bounded by the tighter of its own bounds and d's
 * range, at its size over div (2: a daughter's half).  A file d already
 * references through a region merged before (the two daughters of one
 * split) has its bounds widened to hold both: the two ranges are
 * adjacent.
 */
static int add_refs(struct cf_db *db, struct region *d, struct view *pv,
		    struct view *dv, unsigned div)
{
	int rc = CF_OK;

	for (size_t s = 0; s < pv->nstores && !rc; s++) {
		struct fstore *st = &pv->stores[s];
		for (size_t i = 0; i < st->n && !rc; i++) {
			struct sfile *pf = st->files[i], *f, *old;
			int hi_set = 0;
			struct buf hi = BUF_INIT;

			if (!pf->sst)
				return CF_ECORRUPT;	/* fsck first */
			/* the upper bound: the tighter of the file's and
			 * d's */
			if (d->end.len) {
				hi_set = 1;
				if (pf->hi_set &&
				    bytes_cmp(pf->hi.p, pf->hi.len, d->end.p,
					      d->end.len) < 0)
					rc = buf_append(&hi, pf->hi.p,
							pf->hi.len);
				else
					rc = buf_append(&hi, d->end.p,
							d->end.len);
			} else if (pf->hi_set) {
				hi_set = 1;
				rc = buf_append(&hi, pf->hi.p, pf->hi.len);
			}
			if (!rc && (old = ref_of(dv, st->fam, pf))) {
				/* widened to this one's upper bound */
				buf_reset(&old->hi);
				old->hi_set = hi_set;
				rc = buf_append(&old->hi, hi.p, hi.len);
				old->size += pf->size / div;
				if (!rc)
					rc = meta_file_del(db->meta,
							   (int64_t)d->id,
							   old->id);
				if (!rc)
					rc = ref_put(db, d, st->fam, old);
				buf_release(&hi);
				continue;
			}
			if (!rc && !(f = calloc(1, sizeof *f)))
				rc = CF_ENOMEM;
			if (rc) {
				buf_release(&hi);
				return rc;
			}
			f->sst = pf->sst;
			sst_ref(f->sst);
			f->max_seq = pf->max_seq;
			f->id = pf->id;
			f->home_region = pf->home_region;
			f->size = pf->size / div;
			f->hi = hi;
			f->hi_set = hi_set;
			/* the lower bound: the tighter of the file's and d's */
			f->lo_set = 1;
			if (pf->lo_set && bytes_cmp(pf->lo.p, pf->lo.len,
						    d->start.p,
						    d->start.len) > 0)
				rc = buf_append(&f->lo, pf->lo.p, pf->lo.len);
			else
				rc = buf_append(&f->lo, d->start.p,
						d->start.len);
			if (!rc)
				rc = ref_put(db, d, st->fam, f);
			if (!rc)
				rc = view_add_file(dv, st->fam, f);
			if (rc)
				sfile_free(f);
		}
	}
	return rc;
}

int table_split_at(struct cf_db *db, struct cf_table *t, const void *key,
		   size_t keylen)
{
	struct region *r, *a = NULL, *b = NULL;
	struct buf mid = BUF_INIT;
	struct meta_region ma = { 0 }, mb = { 0 };
	int rc;

	pthread_mutex_lock(&db->ddl_mu);
	pthread_mutex_lock(&db->compact_mu);
	if (atomic_load(&t->dropped)) {
		rc = CF_ECLOSED;
		goto out;
	}
	pthread_rwlock_rdlock(&t->lock);
	r = keylen ? table_region_for(t, key, keylen) : NULL;
	if (!keylen) {
		/* the largest region, at its middle row */
		uint64_t best = 0;
		for (size_t i = 0; i < t->nregions; i++) {
			struct view *v = region_view(t->regions[i]);
			uint64_t sz = region_disk_bytes(v) +
				      memstore_bytes(v->mem);
			view_unref(v);
			if (!r || sz > best) {
				r = t->regions[i];
				best = sz;
			}
		}
	}
	pthread_rwlock_unlock(&t->lock);
	rc = region_flush(db, r);
	if (rc)
		goto out;
	if (!keylen) {
		rc = middle_row(db, r, &mid);
		if (rc)
			goto out;
		key = mid.p;
		keylen = mid.len;
	}
	if (bytes_cmp(key, keylen, r->start.p, r->start.len) == 0) {
		rc = CF_EEXIST;
		goto out;
	}

	pthread_mutex_lock(&db->mem_mu);
	pthread_rwlock_wrlock(&t->lock);
	pthread_mutex_lock(&db->meta_mu);
	a = region_new(t, db->next_region++, r->start.p, r->start.len, key,
		       keylen);
	b = region_new(t, db->next_region++, key, keylen, r->end.p,
		       r->end.len);
	rc = a && b ? CF_OK : CF_ENOMEM;
	/* the daughters describe themselves before the catalog names them:
	 * a crash after the commit must not leave a region directory that
	 * cellfs-fsck could not rebuild from (before it, the sweep at open
	 * removes the unnamed directories) */
	if (!rc)
		rc = region_write_info(db, a);
	if (!rc)
		rc = region_write_info(db, b);
	if (!rc)
		rc = meta_begin(db->meta);
	if (!rc) {
		struct view *pv = region_view(r);
		uint64_t moved_from = 0, moved_to = 0;
		a->flushed_seq = b->flushed_seq = r->flushed_seq;
		a->created_ms = b->created_ms = env_now_ms();
		ma = (struct meta_region){ (int64_t)a->id, t->id, a->start.p,
			a->start.len, a->end.p, a->end.len, a->flushed_seq,
			a->created_ms };
		mb = (struct meta_region){ (int64_t)b->id, t->id, b->start.p,
			b->start.len, b->end.p, b->end.len, b->flushed_seq,
			b->created_ms };
		rc = meta_region_del(db->meta, (int64_t)r->id);
		if (!rc)
			rc = meta_region_put(db->meta, &ma);
		if (!rc)
			rc = meta_region_put(db->meta, &mb);
		if (!rc)
			rc = add_refs(db, a, pv, a->view, 2);
		if (!rc)
			rc = add_refs(db, b, pv, b->view, 2);
		if (!rc)
			rc = meta_set_u64(db->meta, "next_region",
					  db->next_region);
		/* writes that reached the parent since the flush move to
		 * the daughters' memstores (same sequence numbers) */
		if (!rc && memstore_count(pv->mem)) {
			moved_from = memstore_bytes(pv->mem);
			struct iter *it = memstore_iter(pv->mem);
			if (!it)
				rc = CF_ENOMEM;
			for (iter_seek_first(it); !rc && iter_valid(it);
			     iter_next(it)) {
				size_t kl, vl;
				const unsigned char *k = iter_key(it, &kl);
				const unsigned char *v = iter_value(it, &vl);
				struct ikey x;
				ikey_decode(k, kl, &x);
				rc = memstore_add(region_contains(a, x.row,
								  x.rowlen) ?
						  a->view->mem : b->view->mem,
						  &x, v, vl);
			}
			iter_destroy(it);
			moved_to = memstore_bytes(a->view->mem) +
				   memstore_bytes(b->view->mem);
		}
		view_unref(pv);
		if (!rc)
			rc = meta_commit(db->meta);
		else
			meta_rollback(db->meta);
		if (!rc) {
			/* the moved writes count as the daughters' bytes now,
			 * which their flushes subtract; the parent's memstore
			 * is never flushed.  Without this the count drifted
			 * by the difference at every split, and once it went
			 * below zero it wrapped: every write stalled 10 s */
			atomic_fetch_add(&db->mem_total, moved_to);
			atomic_fetch_sub(&db->mem_total, moved_from);
		}
	}
	pthread_mutex_unlock(&db->meta_mu);
	if (!rc) {
		struct region **nr = realloc(t->regions,
					     (t->nregions + 1) * sizeof *nr);
		struct region **rt = realloc(t->retired,
					     (t->nretired + 1) * sizeof *rt);
		if (rt)
			t->retired = rt;
		if (!nr || !rt) {
			/* the catalog has the daughters; reopen loads them */
			rc = CF_ENOMEM;
		} else {
			size_t i = 0;
			t->regions = nr;
			while (t->regions[i] != r)
				i++;
			memmove(&t->regions[i + 2], &t->regions[i + 1],
				(t->nregions - i - 1) * sizeof *nr);
			t->regions[i] = a;
			t->regions[i + 1] = b;
			t->nregions++;
			t->retired[t->nretired++] = r;
			a = b = NULL;
		}
	}
	pthread_rwlock_unlock(&t->lock);
	pthread_mutex_unlock(&db->mem_mu);
	if (!rc) {
		atomic_fetch_add(&t->st.splits, 1);
		atomic_fetch_add(&db->st.splits, 1);
		cf_log(CF_LOG_INFO, "%s: region %016" PRIx64 " split",
		       t->name, r->id);
	}
out:
	pthread_mutex_unlock(&db->compact_mu);
	pthread_mutex_unlock(&db->ddl_mu);
	region_free(a);
	region_free(b);
	buf_release(&mid);
	return rc;
}

/*
 * HBase's merge_region of two adjacent regions: a (before) and b, the
 * region starting at key, become one region m over [a.start, b.end)
 * that references the files of both (as a split's daughters reference
 * their parent's), in one catalog transaction; m's compactions then
 * rewrite them into files of its own.  Both are flushed first.  m's
 * flushed sequence number is the greater of theirs, which is right only
 * when neither memstore holds a write after its flush (a write below
 * it would be skipped by a replay): writes that came in between make
 * the merge flush again, up to three times, then CF_EBUSY.
 */
int table_merge_at(struct cf_db *db, struct cf_table *t, const void *key,
		   size_t keylen)
{
	struct region *a = NULL, *b = NULL, *m = NULL;
	struct meta_region mm = { 0 };
	int rc = CF_OK, tries = 0;

	pthread_mutex_lock(&db->ddl_mu);
	pthread_mutex_lock(&db->compact_mu);
	if (atomic_load(&t->dropped)) {
		rc = CF_ECLOSED;
		goto out;
	}
	pthread_rwlock_rdlock(&t->lock);
	for (size_t i = 0; i < t->nregions; i++)
		if (!bytes_cmp(key, keylen, t->regions[i]->start.p,
			       t->regions[i]->start.len)) {
			b = t->regions[i];
			a = i ? t->regions[i - 1] : NULL;
		}
	pthread_rwlock_unlock(&t->lock);
	if (!b) {
		rc = CF_ENOTFOUND;	/* no region starts there */
		goto out;
	}
	if (!a) {
		rc = CF_EINVAL;		/* the first region: none before */
		goto out;
	}
	for (;;) {
		struct view *av, *bv;
		int empty;
		if ((rc = region_flush(db, a)) || (rc = region_flush(db, b)))
			goto out;
		pthread_mutex_lock(&db->mem_mu);
		pthread_rwlock_wrlock(&t->lock);
		av = region_view(a);
		bv = region_view(b);
		empty = !memstore_count(av->mem) && !memstore_count(bv->mem);
		view_unref(av);
		view_unref(bv);
		if (empty)
			break;	/* the locks stay taken */
		pthread_rwlock_unlock(&t->lock);
		pthread_mutex_unlock(&db->mem_mu);
		if (++tries == 3) {
			rc = CF_EBUSY;
			goto out;
		}
	}
	pthread_mutex_lock(&db->meta_mu);
	m = region_new(t, db->next_region++, a->start.p, a->start.len,
		       b->end.p, b->end.len);
	rc = m ? CF_OK : CF_ENOMEM;
	/* m describes itself before the catalog names it (cellfs-fsck
	 * rebuilds from the newest regions: docs/engine.md) */
	if (!rc)
		rc = region_write_info(db, m);
	if (!rc)
		rc = meta_begin(db->meta);
	if (!rc) {
		struct view *av = region_view(a), *bv = region_view(b);
		m->flushed_seq = a->flushed_seq > b->flushed_seq ?
				 a->flushed_seq : b->flushed_seq;
		m->created_ms = env_now_ms();
		mm = (struct meta_region){ (int64_t)m->id, t->id, m->start.p,
			m->start.len, m->end.p, m->end.len, m->flushed_seq,
			m->created_ms };
		rc = meta_region_del(db->meta, (int64_t)a->id);
		if (!rc)
			rc = meta_region_del(db->meta, (int64_t)b->id);
		if (!rc)
			rc = meta_region_put(db->meta, &mm);
		if (!rc)
			rc = add_refs(db, m, av, m->view, 1);
		if (!rc)
			rc = add_refs(db, m, bv, m->view, 1);
		if (!rc)
			rc = meta_set_u64(db->meta, "next_region",
					  db->next_region);
		/* nothing moves: both memstores are empty, and a write
		 * reaches one only under db->mem_mu and t->lock, which this
		 * holds from the check on */
		view_unref(av);
		view_unref(bv);
		if (!rc)
			rc = meta_commit(db->meta);
		else
			meta_rollback(db->meta);
	}
	pthread_mutex_unlock(&db->meta_mu);
	if (!rc) {
		struct region **rt = realloc(t->retired, (t->nretired + 2) *
					     sizeof *rt);
		if (!rt) {
			/* the catalog has m; reopen loads it */
			rc = CF_ENOMEM;
		} else {
			size_t i = 0;
			t->retired = rt;
			while (t->regions[i] != a)
				i++;
			t->regions[i] = m;
			memmove(&t->regions[i + 1], &t->regions[i + 2],
				(t->nregions - i - 2) * sizeof *t->regions);
			t->nregions--;
			t->retired[t->nretired++] = a;
			t->retired[t->nretired++] = b;
			m = NULL;
		}
	}
	pthread_rwlock_unlock(&t->lock);
	pthread_mutex_unlock(&db->mem_mu);
	if (!rc) {
		atomic_fetch_add(&t->st.merges, 1);
		atomic_fetch_add(&db->st.merges, 1);
		cf_log(CF_LOG_INFO, "%s: regions %016" PRIx64 " and %016"
		       PRIx64 " merged", t->name, a->id, b->id);
	}
out:
	pthread_mutex_unlock(&db->compact_mu);
	pthread_mutex_unlock(&db->ddl_mu);
	region_free(m);
	return rc;
}

/* HBase's SteppingSplitPolicy: a table's only region splits early, so
 * that a growing table spreads over regions whose stores compact on
 * their own (each minor compaction rewrites half as much); from two
 * regions on, a region splits at split_size. */
uint64_t table_split_size(const struct cf_db *db, struct cf_table *t)
{
	uint64_t first = 2 * db->o.flush_size;
	size_t n;

	pthread_rwlock_rdlock(&t->lock);
	n = t->nregions;
	pthread_rwlock_unlock(&t->lock);
	return n == 1 && first < db->o.split_size ? first : db->o.split_size;
}

int region_split_if_big(struct cf_db *db, struct region *r)
{
	struct view *v = region_view(r);
	uint64_t size = region_disk_bytes(v);
	uint64_t limit = table_split_size(db, r->t);
	struct buf mid = BUF_INIT;
	int rc = CF_OK;

	view_unref(v);
	/* a daughter still referencing its parent's files is compacted
	 * before it may split again (HBase's rule): its size counts the
	 * whole parent files, and a split point from them may lie outside
	 * it */
	if (size <= limit || !region_live(r) || region_has_refs(r))
		return CF_OK;
	rc = middle_row(db, r, &mid);
	if (rc == CF_OK)
		rc = table_split_at(db, r->t, mid.p, mid.len);
	if (rc == CF_OK)
		rc = 1;
	else if (rc == CF_EEXIST || rc == CF_ENOTFOUND)
		rc = CF_OK;	/* one row, or nothing to split */
	buf_release(&mid);
	return rc;
}

int cf_table_merge(cf_table *t, const void *key, size_t keylen)
{
	int rc;

	if (atomic_load(&t->dropped))
		return CF_ECLOSED;
	if (keylen > CF_ROW_MAX)
		return CF_ETOOBIG;
	rc = table_merge_at(t->db, t, key, keylen);
	if (rc && rc != CF_ENOTFOUND && rc != CF_EINVAL && rc != CF_EBUSY)
		cf_log(CF_LOG_ERROR, "%s: merge: %s", t->name,
		       cf_strerror(rc));
	return rc;
}

int cf_table_split(cf_table *t, const void *key, size_t keylen)
{
	int rc;

	if (atomic_load(&t->dropped))
		return CF_ECLOSED;
	if (keylen > CF_ROW_MAX)
		return CF_ETOOBIG;
	rc = table_split_at(t->db, t, key, keylen);
	if (rc && rc != CF_EEXIST)
		cf_log(CF_LOG_ERROR, "%s: split: %s", t->name, cf_strerror(rc));
	return rc;
}
