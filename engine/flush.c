/*
 * flush.c: writing a region's memstore into store files.
 *
 * The active memstore is swapped for an empty one under db->mem_mu (so
 * no write lands in it afterwards) and stays readable as an immutable
 * memstore while its cells are written, one store file per family.  The
 * files are fsynced, then one catalog transaction adds them and moves
 * the region's flushed sequence number past the memstore; only then does
 * the view drop the memstore.  A crash before the commit leaves files
 * the catalog does not name (removed at open) and a WAL that still holds
 * every edit; after it, replay skips what the files hold.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "engine/wal.h"
#include "meta/meta.h"
#include "util/env.h"
#include "util/log.h"

struct outfile {
	char fam[CF_FAMILY_MAX + 1];
	struct sst_builder *b;
	uint64_t id;
	struct sst_meta meta;
	int finished;
};

static void build_opts(const struct cf_family *f, struct sst_build_opts *o)
{
	o->block_size = f->blocksize;
	o->compression = f->compression;
	o->encoding = f->encoding;
	o->bloom = f->bloom;
	o->bloom_bits = 10;
}

/* Writes memstore m of region r into one file per family. */
static int flush_memstore(struct cf_db *db, struct region *r,
			  struct memstore *m)
{
	struct cf_table *t = r->t;
	const struct famset *fs = table_fams(t);
	struct outfile *outs = NULL;
	size_t nouts = 0, nf;
	struct iter *it = NULL;
	struct buf path = BUF_INIT;
	struct sfile **opened = NULL;
	uint64_t max_seq = memstore_max_seq(m);
	int rc = CF_OK;

	/* one schema for the whole flush: an alter may publish another */
	nf = fs ? fs->n : 0;
	outs = calloc(nf ? nf : 1, sizeof *outs);
	opened = calloc(nf ? nf : 1, sizeof *opened);
	it = memstore_iter(m);
	if (!outs || !opened || !it) {
		rc = CF_ENOMEM;
		goto out;
	}
	for (iter_seek_first(it); iter_valid(it) && rc == CF_OK;
	     iter_next(it)) {
		size_t kl, vl;
		const unsigned char *k = iter_key(it, &kl);
		const unsigned char *v = iter_value(it, &vl);
		struct ikey x;
		struct outfile *o = NULL;

		if (ikey_decode(k, kl, &x)) {
			rc = CF_ECORRUPT;
			break;
		}
		for (size_t i = 0; i < nouts; i++)
			if (strlen(outs[i].fam) == x.famlen &&
			    memcmp(outs[i].fam, x.fam, x.famlen) == 0)
				o = &outs[i];
		if (!o) {
			const struct cf_family *f =
				famset_family(fs, (const char *)x.fam, x.famlen);
			struct sst_build_opts bo;
			if (!f)
				continue;	/* family dropped */
			o = &outs[nouts++];
			memcpy(o->fam, x.fam, x.famlen);
			pthread_mutex_lock(&db->meta_mu);
			o->id = db->next_file++;
			pthread_mutex_unlock(&db->meta_mu);
			build_opts(f, &bo);
			rc = store_path(db, t, (int64_t)r->id, o->fam, o->id,
					&path);
			if (rc)
				break;
			{
				/* the family directory */
				char *slash = strrchr((char *)path.p, '/');
				*slash = 0;
				rc = env_mkdir_p((const char *)path.p, 0700);
				*slash = '/';
			}
			if (!rc)
				rc = sst_builder_open((const char *)path.p,
						      &bo, &o->b);
			if (rc)
				break;
		}
		rc = sst_builder_add(o->b, k, kl, v, vl);
	}
	if (rc == CF_OK)
		rc = iter_status(it);
	for (size_t i = 0; i < nouts; i++) {
		if (rc == CF_OK) {
			rc = sst_builder_finish(outs[i].b, &outs[i].meta);
			outs[i].finished = rc == CF_OK;
		} else {
			sst_builder_abort(outs[i].b);
		}
		outs[i].b = NULL;
	}
	for (size_t i = 0; i < nouts && rc == CF_OK; i++)
		rc = sfile_open(db, t, (int64_t)r->id, outs[i].fam,
				table_in_memory(t, outs[i].fam), outs[i].id,
				outs[i].meta.file_size, &opened[i]);
	if (rc)
		goto out;

	/* the commit point */
	pthread_mutex_lock(&db->meta_mu);
	rc = meta_begin(db->meta);
	for (size_t i = 0; i < nouts && rc == CF_OK; i++) {
		struct meta_file mf = {
			.id = outs[i].id, .region_id = (int64_t)r->id,
			.family = outs[i].fam, .home_region = (int64_t)r->id,
			.size = outs[i].meta.file_size,
			.max_seq = outs[i].meta.max_seq,
		};
		rc = meta_file_add(db->meta, &mf);
	}
	if (!rc)
		rc = meta_region_set_flushed(db->meta, (int64_t)r->id,
					     max_seq);
	if (!rc)
		rc = meta_set_u64(db->meta, "next_file", db->next_file);
	if (!rc && max_seq)
		rc = meta_set_u64(db->meta, "last_seq", max_seq);
	if (!rc)
		rc = meta_commit(db->meta);
	else
		meta_rollback(db->meta);
	pthread_mutex_unlock(&db->meta_mu);
	if (rc)
		goto out;
	r->flushed_seq = max_seq;

	pthread_mutex_lock(&r->mu);
	{
		struct view *v = r->view, *nv = view_clone(v);
		if (!nv) {
			/* the catalog already has the files: keep serving
			 * the memstore; the next flush retries the view */
			pthread_mutex_unlock(&r->mu);
			rc = CF_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < nv->nimm; i++)
			if (nv->imm[i] == m) {
				memstore_unref(m);
				memmove(&nv->imm[i], &nv->imm[i + 1],
					(nv->nimm - i - 1) * sizeof *nv->imm);
				nv->nimm--;
				break;
			}
		for (size_t i = 0; i < nouts; i++) {
			view_add_file(nv, outs[i].fam, opened[i]);
			opened[i] = NULL;
		}
		r->view = nv;
		pthread_mutex_unlock(&r->mu);
		view_unref(v);
	}
	atomic_fetch_sub(&db->mem_total, memstore_bytes(m));
	atomic_fetch_add(&t->st.flushes, 1);
	atomic_fetch_add(&db->st.flushes, 1);
out:
	if (rc) {
		cf_log(CF_LOG_ERROR, "flush of %s region %016" PRIx64 ": %s",
		       t->name, r->id, cf_strerror(rc));
		for (size_t i = 0; i < nouts; i++)
			if (outs[i].finished) {
				if (opened[i]) {
					sst_set_obsolete(opened[i]->sst);
				} else if (!store_path(db, t, (int64_t)r->id,
						       outs[i].fam, outs[i].id,
						       &path)) {
					env_unlink((const char *)path.p);
				}
			}
	}
	for (size_t i = 0; outs && i < nouts; i++)
		if (outs[i].finished)
			sst_meta_release(&outs[i].meta);
	for (size_t i = 0; opened && i < nouts; i++)
		sfile_free(opened[i]);
	free(opened);
	free(outs);
	iter_destroy(it);
	buf_release(&path);
	return rc;
}

int region_flush(struct cf_db *db, struct region *r)
{
	struct memstore *fresh = NULL;
	int rc = CF_OK;

	if (!region_live(r))
		return CF_OK;
	/* swap the active memstore for an empty one */
	pthread_mutex_lock(&db->mem_mu);
	pthread_mutex_lock(&r->mu);
	if (memstore_count(r->view->mem)) {
		struct view *v = r->view, *nv = view_clone(v);
		struct memstore **imm = NULL;
		if (nv)
			imm = realloc(nv->imm,
				      (nv->nimm + 1) * sizeof *nv->imm);
		if (!nv || !imm || memstore_new(&fresh)) {
			if (nv && imm)
				nv->imm = imm;
			pthread_mutex_unlock(&r->mu);
			pthread_mutex_unlock(&db->mem_mu);
			view_unref(nv);
			return CF_ENOMEM;
		}
		nv->imm = imm;
		memstore_expect(fresh, db->o.flush_size);
		memmove(&nv->imm[1], &nv->imm[0], nv->nimm * sizeof *imm);
		nv->imm[0] = nv->mem;	/* the clone's reference moves */
		nv->nimm++;
		nv->mem = fresh;
		r->view = nv;
		pthread_mutex_unlock(&r->mu);
		pthread_mutex_unlock(&db->mem_mu);
		view_unref(v);
	} else {
		pthread_mutex_unlock(&r->mu);
		pthread_mutex_unlock(&db->mem_mu);
	}
	/* write the immutable memstores, oldest first */
	for (;;) {
		struct view *v = region_view(r);
		struct memstore *m = NULL;
		if (v->nimm) {
			m = v->imm[v->nimm - 1];
			memstore_ref(m);
		}
		view_unref(v);
		if (!m)
			break;
		rc = flush_memstore(db, r, m);
		memstore_unref(m);
		if (rc)
			break;
	}
	return rc;
}

