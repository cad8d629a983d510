/*
 * db.c: opening and closing a data directory, recovery, tables and their
 * schema, status, and the background threads.
 *
 * Layout of DATADIR (SPEC section 8, docs/engine.md):
 *   LOCK                           held while open
 *   catalog.db                     meta/
 *   wal/<segment>.log              engine/wal.c
 *   data/<table>/<region>/.regioninfo
 *   data/<table>/<region>/<family>/<file>.sst
 *
 * Opening: lock, open the catalog, load tables, families, regions and
 * store files; remove files the catalog does not name; replay the WAL
 * into memstores (edits a region already flushed are skipped); open a
 * new WAL segment; start the flusher, compactor and syncer threads.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/cache.h"
#include "engine/internal.h"
#include "engine/wal.h"
#include "meta/meta.h"
#include "util/env.h"
#include "util/log.h"

#define WAL_SEGMENT_SIZE (64u << 20)

void cf_options_default(struct cf_options *o)
{
	memset(o, 0, sizeof *o);
	o->flush_size = 64u << 20;
	o->split_size = UINT64_C(1) << 30;
	o->block_cache = 256u << 20;
	o->memstore_limit = 0;
	o->sync_mode = CF_SYNC_BATCH;
	o->sync_ms = 1000;
	o->max_value = 10u << 20;
	o->background = 1;
	o->compact_threshold = 3;
	o->seek_bytes = 16384;
	o->stall_files = 12;
	o->wal_compression = 1;
}

static int cmp_region(const void *a, const void *b)
{
	const struct region *x = *(struct region *const *)a;
	const struct region *y = *(struct region *const *)b;
	return bytes_cmp(x->start.p, x->start.len, y->start.p, y->start.len);
}

/* --- loading the catalog ---------------------------------------------- */

struct load_ctx {
	struct cf_db *db;
	struct cf_table *t;
	struct region *r;
	struct cf_family *fams;		/* the table's, as they are read */
	size_t nfams;
	int rc;
};

static int load_family(const char *name, const char *settings, void *arg)
{
	struct load_ctx *c = arg;
	struct cf_table *t = c->t;
	struct cf_family f, *n;
	const char *why = "its settings name another family";

	if (cf_family_parse(settings, strlen(settings), &f, &why) ||
	    strcmp(f.name, name) != 0) {
		cf_log(CF_LOG_ERROR, "catalog: family %s of %s: %s", name,
		       t->name, why);
		return c->rc = CF_ECORRUPT;
	}
	n = realloc(c->fams, (c->nfams + 1) * sizeof *n);
	if (!n)
		return c->rc = CF_ENOMEM;
	c->fams = n;
	c->fams[c->nfams++] = f;
	return 0;
}

static int load_file(const struct meta_file *mf, void *arg)
{
	struct load_ctx *c = arg;
	struct cf_db *db = c->db;
	struct region *r = c->r;
	struct sfile *f = calloc(1, sizeof *f);
	struct buf path = BUF_INIT;
	const struct cf_family *fam;
	struct fstore *st;
	int rc;

	if (!f)
		return c->rc = CF_ENOMEM;
	f->id = mf->id;
	f->home_region = mf->home_region;
	f->size = mf->size;
	f->max_seq = mf->max_seq;
	fam = table_family(c->t, mf->family, strlen(mf->family));
	rc = store_path(db, c->t, mf->home_region, mf->family, mf->id, &path);
	if (!rc)
		rc = sst_open((const char *)path.p, mf->id, db->cache,
			      fam && fam->in_memory, &f->sst);
	if (rc) {
		/* keep serving what is readable: reads needing this file
		 * fail with EIO, cellfs-fsck names it */
		cf_log(CF_LOG_ERROR, "store file %s: %s; reads that need it "
		       "will fail", (const char *)path.p, cf_strerror(rc));
		f->sst = NULL;
		rc = CF_OK;
	}
	if (mf->lo) {
		f->lo_set = 1;
		rc = buf_append(&f->lo, mf->lo, mf->lolen);
	}
	if (!rc && mf->hi) {
		f->hi_set = 1;
		rc = buf_append(&f->hi, mf->hi, mf->hilen);
	}
	if (rc)
		goto fail;
	st = view_store(r->view, mf->family, 1);
	if (!st) {
		rc = CF_ENOMEM;
		goto fail;
	}
	{
		struct sfile **n = realloc(st->files, (st->n + 1) * sizeof *n);
		if (!n) {
			rc = CF_ENOMEM;
			goto fail;
		}
		st->files = n;
		st->files[st->n++] = f;
	}
	buf_release(&path);
	return 0;
fail:
	buf_release(&path);
	sfile_free(f);
	return c->rc = rc;
}

static int cmp_sfile_newest(const void *a, const void *b)
{
	const struct sfile *x = *(struct sfile *const *)a;
	const struct sfile *y = *(struct sfile *const *)b;
	return x->max_seq > y->max_seq ? -1 : x->max_seq < y->max_seq;
}

static int load_region(const struct meta_region *mr, void *arg)
{
	struct load_ctx *c = arg;
	struct cf_table *t = c->t;
	struct region *r, **n;

	r = region_new(t, (uint64_t)mr->id, mr->start, mr->startlen, mr->end,
		       mr->endlen);
	if (!r)
		return c->rc = CF_ENOMEM;
	r->flushed_seq = mr->flushed_seq;
	r->created_ms = mr->created_ms;
	n = realloc(t->regions, (t->nregions + 1) * sizeof *n);
	if (!n) {
		region_free(r);
		return c->rc = CF_ENOMEM;
	}
	t->regions = n;
	t->regions[t->nregions++] = r;
	c->r = r;
	if (meta_file_list(c->db->meta, mr->id, load_file, c) || c->rc)
		return c->rc ? c->rc : CF_EIO;
	for (size_t s = 0; s < r->view->nstores; s++)
		if (r->view->stores[s].n > 1)	/* none: files NULL */
			qsort(r->view->stores[s].files, r->view->stores[s].n,
			      sizeof(struct sfile *), cmp_sfile_newest);
	return 0;
}

static int load_table(const struct meta_table *mt, void *arg)
{
	struct load_ctx *c = arg;
	struct cf_db *db = c->db;
	struct cf_table *t = table_new(db, mt->id, mt->name), **n;
	int rc;

	if (!t)
		return c->rc = CF_ENOMEM;
	n = realloc(db->tables, (db->ntables + 1) * sizeof *n);
	if (!n) {
		table_unref(t);
		return c->rc = CF_ENOMEM;
	}
	db->tables = n;
	db->tables[db->ntables++] = t;
	t->created_ms = mt->created_ms;
	t->schema_ms = mt->schema_ms;
	c->t = t;
	c->nfams = 0;
	rc = meta_family_list(db->meta, t->id, load_family, c);
	if (!rc && !c->rc) {
		struct famset *fs = famset_new(c->fams, c->nfams);
		if (!fs)
			return c->rc = CF_ENOMEM;
		table_set_fams(t, fs);
	}
	if (!rc && !c->rc)
		rc = meta_region_list(db->meta, t->id, load_region, c);
	if (c->rc)
		return c->rc;
	if (rc)
		return c->rc = rc;
	if (t->nregions == 0) {
		cf_log(CF_LOG_ERROR, "catalog: table %s has no region",
		       t->name);
		return c->rc = CF_ECORRUPT;
	}
	qsort(t->regions, t->nregions, sizeof *t->regions, cmp_region);
	return 0;
}

/* --- WAL recovery ----------------------------------------------------- */

static int replay(struct cf_db *db, uint64_t *max_seq, uint64_t **segs,
		  uint64_t **seg_max, size_t *nsegs)
{
	struct buf dir = BUF_INIT;
	char path[4096];
	int rc;

	buf_printf(&dir, "%s/wal", db->dir);
	buf_putc(&dir, 0);
	rc = env_mkdir((const char *)dir.p, 0700);
	if (!rc)
		rc = wal_list((const char *)dir.p, segs, nsegs);
	if (!rc && *nsegs && !(*seg_max = calloc(*nsegs, sizeof **seg_max)))
		rc = CF_ENOMEM;
	for (size_t i = 0; i < *nsegs && rc == CF_OK; i++) {
		struct wal_reader *r;
		const void *rec;
		size_t n;
		uint64_t smax = 0;

		wal_segment_path(path, sizeof path, (const char *)dir.p,
				 (*segs)[i]);
		rc = wal_reader_open(path, &r);
		if (rc) {
			cf_log(CF_LOG_ERROR, "wal %s: %s", path,
			       cf_strerror(rc));
			break;
		}
		while ((rc = wal_reader_next(r, &rec, &n)) == CF_OK && rec) {
			rc = wal_record_replay(db, rec, n, &smax);
			if (rc) {
				cf_log(CF_LOG_ERROR, "wal %s: bad record: %s",
				       path, cf_strerror(rc));
				break;
			}
		}
		if (rc == CF_ECORRUPT)
			cf_log(CF_LOG_ERROR, "wal %s: corrupted record; "
			       "refusing to open (run cellfs-fsck)", path);
		if (rc == CF_OK && wal_reader_torn(r) && i + 1 < *nsegs) {
			/* a segment is cut back and synced before the next
			 * is created: a bad tail here is lost data, never
			 * the debris of a crash.  Left as it is for
			 * cellfs-fsck --repair, which keeps a copy. */
			cf_log(CF_LOG_ERROR, "wal %s: %s after offset %" PRIu64
			       " in a segment older than the newest: records "
			       "after it are lost (run cellfs-fsck)", path,
			       wal_reader_zero_tail(r) ? "zeros" :
			       "a torn record", wal_reader_valid_end(r));
		} else if (rc == CF_OK && wal_reader_torn(r)) {
			struct env_file *f;
			uint64_t end = wal_reader_valid_end(r);
			if (wal_reader_zero_tail(r))
				/* the room of a preallocated segment: no
				 * record was cut short */
				cf_log(CF_LOG_INFO, "wal %s: not closed "
				       "cleanly; cut at %" PRIu64 ", after its "
				       "last record", path, end);
			else
				cf_log(CF_LOG_WARN, "wal %s: torn tail cut at "
				       "%" PRIu64, path, end);
			if (env_open(path, ENV_RDWR, &f) == CF_OK) {
				env_truncate(f, end);
				env_sync(f);
				env_close(f);
			}
		}
		wal_reader_close(r);
		(*seg_max)[i] = smax;
		if (smax > *max_seq)
			*max_seq = smax;
	}
	buf_release(&dir);
	return rc;
}

/* --- flushing and the WAL ------------------------------------------ */

/* The lowest sequence number still only in a memstore (the WAL before
 * it can go), or one past the last published when none is. */
static uint64_t db_min_unflushed(struct cf_db *db)
{
	uint64_t m = UINT64_MAX;

	pthread_mutex_lock(&db->mu);
	for (size_t i = 0; i < db->ntables; i++) {
		struct cf_table *t = db->tables[i];
		pthread_rwlock_rdlock(&t->lock);
		for (size_t j = 0; j < t->nregions; j++) {
			struct view *v = region_view(t->regions[j]);
			uint64_t s;
			if (memstore_count(v->mem)) {
				s = memstore_min_seq(v->mem);
				if (s < m)
					m = s;
			}
			for (size_t k = 0; k < v->nimm; k++) {
				s = memstore_min_seq(v->imm[k]);
				if (memstore_count(v->imm[k]) && s < m)
					m = s;
			}
			view_unref(v);
		}
		pthread_rwlock_unlock(&t->lock);
	}
	pthread_mutex_unlock(&db->mu);
	if (m == UINT64_MAX)
		m = atomic_load(&db->last_seq) + 1;
	return m;
}

/* Flushes r, then drops the WAL segments no memstore needs any more. */
static int flush_region(struct cf_db *db, struct region *r)
{
	int rc;

	pthread_mutex_lock(&db->ddl_mu);
	rc = region_flush(db, r);
	pthread_mutex_unlock(&db->ddl_mu);
	if (rc == CF_OK)
		wal_purge(db->wal, db_min_unflushed(db));
	return rc;
}

/* --- background ------------------------------------------------------- */

static int bg_wait(struct cf_db *db, unsigned ms)
{
	struct timespec ts;
	int stop;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&db->bg_mu);
	if (!db->stop)
		pthread_cond_timedwait(&db->bg_cv, &db->bg_mu, &ts);
	stop = db->stop;
	pthread_mutex_unlock(&db->bg_mu);
	return stop;
}

/* Referenced snapshot of every table, for background scans. */
static struct cf_table **tables_snapshot(struct cf_db *db, size_t *n)
{
	struct cf_table **ts;

	pthread_mutex_lock(&db->mu);
	*n = db->ntables;
	ts = calloc(*n ? *n : 1, sizeof *ts);
	if (ts)
		for (size_t i = 0; i < *n; i++) {
			ts[i] = db->tables[i];
			table_ref(ts[i]);
		}
	else
		*n = 0;
	pthread_mutex_unlock(&db->mu);
	return ts;
}

static void tables_release(struct cf_table **ts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		table_unref(ts[i]);
	free(ts);
}

/* Picks the region to flush: one that asked, else the largest when all
 * memstores together pass the limit.  Referenced through its table. */
static struct region *pick_flush(struct cf_db *db, struct cf_table **ts,
				 size_t n)
{
	struct region *best = NULL;
	size_t best_bytes = 0;
	int over = atomic_load(&db->mem_total) > db->o.memstore_limit;

	for (size_t i = 0; i < n; i++) {
		struct cf_table *t = ts[i];
		if (atomic_load(&t->dropped))
			continue;
		pthread_rwlock_rdlock(&t->lock);
		for (size_t j = 0; j < t->nregions; j++) {
			struct region *r = t->regions[j];
			struct view *v = region_view(r);
			size_t b = memstore_bytes(v->mem);
			view_unref(v);
			if (atomic_load(&r->flush_wanted) && b) {
				pthread_rwlock_unlock(&t->lock);
				return r;
			}
			if (over && b > best_bytes) {
				best = r;
				best_bytes = b;
			}
		}
		pthread_rwlock_unlock(&t->lock);
	}
	return best;
}

static void *flusher_main(void *arg)
{
	struct cf_db *db = arg;
	unsigned backoff = 0;

	while (!bg_wait(db, backoff ? backoff : 200)) {
		for (;;) {
			size_t n;
			struct cf_table **ts = tables_snapshot(db, &n);
			struct region *r = pick_flush(db, ts, n);
			int rc = CF_OK;

			if (r) {
				rc = flush_region(db, r);
				atomic_store(&r->flush_wanted, rc != CF_OK);
				if (rc == CF_OK)
					region_split_if_big(db, r);
			}
			tables_release(ts, n);
			pthread_mutex_lock(&db->bg_mu);
			pthread_cond_broadcast(&db->bg_done);
			pthread_mutex_unlock(&db->bg_mu);
			if (!r)
				break;
			if (rc) {
				/* disk full or failing: try again later */
				backoff = backoff ? backoff * 2 : 100;
				if (backoff > 5000)
					backoff = 5000;
				break;
			}
			backoff = 0;
		}
	}
	return NULL;
}

static void *compactor_main(void *arg)
{
	struct cf_db *db = arg;
	unsigned backoff = 0;

	while (!bg_wait(db, backoff ? backoff : 500)) {
		size_t n;
		struct cf_table **ts = tables_snapshot(db, &n);
		int did = 0, failed = 0;

		for (size_t i = 0; i < n && !did; i++) {
			struct cf_table *t = ts[i];
			struct region *pick = NULL;
			if (atomic_load(&t->dropped))
				continue;
			pthread_rwlock_rdlock(&t->lock);
			/* only a region a compaction would change: one whose
			 * files the ratio rule leaves alone must not keep
			 * the loop busy, or keep splits from their turn */
			for (size_t j = 0; j < t->nregions && !pick; j++)
				if (region_needs_compaction(db, t->regions[j]))
					pick = t->regions[j];
			pthread_rwlock_unlock(&t->lock);
			if (pick) {
				int rc = region_compact(db, pick, 0);
				did = rc == CF_OK;
				failed = rc != CF_OK;
			}
		}
		/* regions past split_size split (HBase's auto-sharding) */
		for (size_t i = 0; i < n && !did; i++) {
			struct cf_table *t = ts[i];
			struct region *big = NULL;
			if (atomic_load(&t->dropped))
				continue;
			uint64_t limit = table_split_size(db, t);
			pthread_rwlock_rdlock(&t->lock);
			for (size_t j = 0; j < t->nregions && !big; j++) {
				struct view *v = region_view(t->regions[j]);
				if (region_disk_bytes(v) > limit)
					big = t->regions[j];
				view_unref(v);
			}
			pthread_rwlock_unlock(&t->lock);
			if (big && region_split_if_big(db, big) == 1)
				did = 1;
		}
		tables_release(ts, n);
		if (failed) {
			backoff = backoff ? backoff * 2 : 200;
			if (backoff > 10000)
				backoff = 10000;
		} else {
			backoff = did ? 1 : 0;
		}
	}
	return NULL;
}

static void *syncer_main(void *arg)
{
	struct cf_db *db = arg;
	unsigned ms = db->o.sync_ms / 2 ? db->o.sync_ms / 2 : 1;

	while (!bg_wait(db, ms))
		if (wal_dirty(db->wal)) {
			int rc = wal_sync(db->wal);
			if (rc)
				cf_log(CF_LOG_ERROR, "wal sync: %s",
				       cf_strerror(rc));
		}
	return NULL;
}

/* --- open and close --------------------------------------------------- */

static int next_ids(struct cf_db *db)
{
	uint64_t v;

	db->next_file = 1;
	db->next_region = 1;
	if (meta_get_u64(db->meta, "next_file", &v) == CF_OK)
		db->next_file = v;
	if (meta_get_u64(db->meta, "next_region", &v) == CF_OK)
		db->next_region = v;
	return CF_OK;
}

static uint64_t max_seen_seq(struct cf_db *db)
{
	uint64_t m = 0, v;

	if (meta_get_u64(db->meta, "last_seq", &v) == CF_OK)
		m = v;
	for (size_t i = 0; i < db->ntables; i++) {
		struct cf_table *t = db->tables[i];
		for (size_t j = 0; j < t->nregions; j++) {
			struct region *r = t->regions[j];
			struct view *vw = r->view;
			if (r->flushed_seq > m)
				m = r->flushed_seq;
			for (size_t s = 0; s < vw->nstores; s++)
				for (size_t f = 0; f < vw->stores[s].n; f++)
					if (vw->stores[s].files[f]->max_seq > m)
						m = vw->stores[s].files[f]
							->max_seq;
		}
	}
	return m;
}

void cf_db_close(cf_db *db)
{
	if (!db)
		return;
	if (db->bg_started) {
		pthread_mutex_lock(&db->bg_mu);
		db->stop = 1;
		pthread_cond_broadcast(&db->bg_cv);
		pthread_mutex_unlock(&db->bg_mu);
		pthread_join(db->flusher, NULL);
		pthread_join(db->compactor, NULL);
		if (db->o.sync_mode == CF_SYNC_BATCH)
			pthread_join(db->syncer, NULL);
	}
	if (db->wal) {
		/* a clean close leaves nothing to replay when it can */
		if (db->meta)
			cf_db_flush(db);
		wal_sync(db->wal);
		/* when every memstore is on disk, the segment being written
		 * is closed too, so the purge deletes it: the next open
		 * replays nothing and the directory holds no log of what
		 * its store files already hold */
		if (db_min_unflushed(db) > atomic_load(&db->last_seq))
			wal_roll(db->wal);
		wal_purge(db->wal, db_min_unflushed(db));
		wal_close(db->wal);
		db_remove_retired(db);
	}
	for (size_t i = 0; i < db->ntables; i++) {
		table_unref(db->tables[i]);
	}
	free(db->tables);
	meta_close(db->meta);
	if (db->cache)
		cache_free(db->cache);
	env_close(db->lock);
	buf_release(&db->wbuf);
	buf_release(&db->wzbuf);
	pthread_mutex_destroy(&db->ddl_mu);
	pthread_mutex_destroy(&db->compact_mu);
	pthread_mutex_destroy(&db->mu);
	pthread_mutex_destroy(&db->mem_mu);
	pthread_mutex_destroy(&db->meta_mu);
	pthread_mutex_destroy(&db->qmu);
	pthread_mutex_destroy(&db->bg_mu);
	pthread_cond_destroy(&db->bg_cv);
	pthread_cond_destroy(&db->bg_done);
	free(db->dir);
	free(db);
}

int cf_db_open(const char *dir, const struct cf_options *opts, cf_db **out)
{
	struct cf_db *db;
	struct buf path = BUF_INIT;
	struct load_ctx lc = { 0 };
	uint64_t *segs = NULL, *seg_max = NULL, max_seq;
	size_t nsegs = 0;
	int rc;

	*out = NULL;
	if (!(db = calloc(1, sizeof *db)))
		return CF_ENOMEM;
	if (opts)
		db->o = *opts;
	else
		cf_options_default(&db->o);
	if (!db->o.memstore_limit)
		db->o.memstore_limit = 4 * db->o.flush_size;
	if (db->o.compact_threshold < 2)
		db->o.compact_threshold = 3;
	if (db->o.stall_files < 1)
		db->o.stall_files = 12;
	if (!db->o.compact_window)
		db->o.compact_window = 4096;
	pthread_mutex_init(&db->ddl_mu, NULL);
	pthread_mutex_init(&db->compact_mu, NULL);
	pthread_mutex_init(&db->mu, NULL);
	pthread_mutex_init(&db->mem_mu, NULL);
	pthread_mutex_init(&db->meta_mu, NULL);
	pthread_mutex_init(&db->qmu, NULL);
	pthread_mutex_init(&db->bg_mu, NULL);
	pthread_cond_init(&db->bg_cv, NULL);
	pthread_cond_init(&db->bg_done, NULL);
	if (!(db->dir = strdup(dir))) {
		rc = CF_ENOMEM;
		goto fail;
	}
	rc = env_mkdir_p(dir, 0700);
	if (!rc) {
		buf_printf(&path, "%s/LOCK", dir);
		buf_putc(&path, 0);
		rc = env_lock_file((const char *)path.p, &db->lock);
		if (rc == CF_EBUSY)
			cf_log(CF_LOG_ERROR, "%s is in use by another process",
			       dir);
	}
	if (!rc) {
		buf_reset(&path);
		buf_printf(&path, "%s/data", dir);
		buf_putc(&path, 0);
		rc = env_mkdir((const char *)path.p, 0700);
	}
	if (!rc) {
		buf_reset(&path);
		buf_printf(&path, "%s/catalog.db", dir);
		buf_putc(&path, 0);
		rc = meta_open((const char *)path.p, &db->meta);
	}
	if (!rc)
		rc = cache_new(db->o.block_cache, &db->cache);
	if (!rc)
		rc = next_ids(db);
	lc.db = db;
	if (!rc)
		rc = meta_table_list(db->meta, load_table, &lc);
	if (!rc && lc.rc)
		rc = lc.rc;
	free(lc.fams);
	if (rc)
		goto fail;
	db_sweep(db);
	max_seq = max_seen_seq(db);
	rc = replay(db, &max_seq, &segs, &seg_max, &nsegs);
	if (rc)
		goto fail;
	for (size_t i = 0; i < db->ntables; i++)
		for (size_t j = 0; j < db->tables[i]->nregions; j++) {
			struct view *v = db->tables[i]->regions[j]->view;
			atomic_fetch_add(&db->mem_total,
					 memstore_bytes(v->mem));
		}
	atomic_store(&db->last_seq, max_seq);
	db->next_seq = max_seq + 1;
	db->wal_segment = nsegs ? segs[nsegs - 1] + 1 : 1;
	buf_reset(&path);
	buf_printf(&path, "%s/wal", dir);
	buf_putc(&path, 0);
	rc = wal_open((const char *)path.p, db->wal_segment, WAL_SEGMENT_SIZE,
		      db->o.wal_write ? WAL_WRITE : 0, &db->wal);
	for (size_t i = 0; i < nsegs && !rc; i++)
		rc = wal_adopt(db->wal, segs[i], seg_max[i]);
	if (rc)
		goto fail;
	if (db->o.background) {
		int e = pthread_create(&db->flusher, NULL, flusher_main, db);
		if (!e)
			e = pthread_create(&db->compactor, NULL,
					   compactor_main, db);
		if (!e && db->o.sync_mode == CF_SYNC_BATCH)
			e = pthread_create(&db->syncer, NULL, syncer_main, db);
		if (e) {
			rc = CF_ENOMEM;
			goto fail;
		}
		db->bg_started = 1;
	}
	free(segs);
	free(seg_max);
	buf_release(&path);
	*out = db;
	return CF_OK;
fail:
	/* threads never started on this path (the last step starts them) */
	free(segs);
	free(seg_max);
	buf_release(&path);
	if (db->wal) {
		wal_close(db->wal);
		db->wal = NULL;
	}
	cf_db_close(db);
	return rc;
}

int cf_db_sync(cf_db *db)
{
	int rc = wal_sync(db->wal);

	if (rc)
		cf_log(CF_LOG_ERROR, "wal sync: %s", cf_strerror(rc));
	return rc;
}

static int for_each_region(struct cf_db *db, struct cf_table *only,
			   int (*fn)(struct cf_db *, struct region *, int),
			   int arg)
{
	size_t n;
	struct cf_table **ts = tables_snapshot(db, &n);
	int rc = CF_OK;

	for (size_t i = 0; i < n; i++) {
		struct cf_table *t = ts[i];
		struct region **rs;
		size_t nr;

		if (only && t != only)
			continue;
		if (atomic_load(&t->dropped))
			continue;
		pthread_rwlock_rdlock(&t->lock);
		nr = t->nregions;
		rs = malloc((nr ? nr : 1) * sizeof *rs);
		if (rs)
			memcpy(rs, t->regions, nr * sizeof *rs);
		pthread_rwlock_unlock(&t->lock);
		if (!rs) {
			rc = CF_ENOMEM;
			break;
		}
		for (size_t j = 0; j < nr; j++) {
			/* a region split away meanwhile is skipped by fn */
			int e = fn(db, rs[j], arg);
			if (e && !rc)
				rc = e;
		}
		free(rs);
	}
	tables_release(ts, n);
	return rc;
}

static int flush_one(struct cf_db *db, struct region *r, int arg)
{
	(void)arg;
	return flush_region(db, r);
}

static int compact_one(struct cf_db *db, struct region *r, int major)
{
	return region_compact(db, r, major);
}

int cf_db_flush(cf_db *db)
{
	int rc = for_each_region(db, NULL, flush_one, 0);

	if (rc == CF_OK)
		wal_purge(db->wal, db_min_unflushed(db));
	return rc;
}

int cf_db_compact(cf_db *db, int major)
{
	return for_each_region(db, NULL, compact_one, major);
}

int cf_table_flush(cf_table *t)
{
	int rc;

	if (atomic_load(&t->dropped))
		return CF_ECLOSED;
	rc = for_each_region(t->db, t, flush_one, 0);
	if (rc == CF_OK)
		wal_purge(t->db->wal, db_min_unflushed(t->db));
	return rc;
}

int cf_table_compact(cf_table *t, int major)
{
	if (atomic_load(&t->dropped))
		return CF_ECLOSED;
	return for_each_region(t->db, t, compact_one, major);
}

/* --- table DDL -------------------------------------------------------- */

static int check_families(const struct cf_family *fams, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct cf_family *f = &fams[i];
		if (!cf_family_name_valid(f->name, strlen(f->name)) ||
		    f->versions < 1 || f->min_versions < 0 ||
		    f->min_versions > f->versions || f->ttl < 1 ||
		    f->compression < 0 || f->compression > 2 ||
		    f->bloom < 0 || f->bloom > 2 || f->blocksize < 1024 ||
		    f->encoding < 0 || f->encoding > 1)
			return CF_EINVAL;
		for (size_t j = 0; j < i; j++)
			if (strcmp(fams[j].name, f->name) == 0)
				return CF_EINVAL;
	}
	return CF_OK;
}

static int put_families(struct cf_db *db, int64_t tid,
			const struct cf_family *fams, size_t n)
{
	struct buf b = BUF_INIT;
	int rc = CF_OK;

	for (size_t i = 0; i < n && rc == CF_OK; i++) {
		buf_reset(&b);
		rc = cf_family_format(&fams[i], &b);
		if (!rc)
			rc = buf_putc(&b, 0);
		if (!rc)
			rc = meta_family_put(db->meta, tid, fams[i].name,
					     (const char *)b.p);
	}
	buf_release(&b);
	return rc;
}

int cf_table_create(cf_db *db, const char *name, const struct cf_family *fams,
		    size_t n)
{
	struct cf_table *t = NULL, **nt;
	struct region *r = NULL;
	struct famset *fs = NULL;
	struct meta_region mr = { 0 };
	int64_t tid, now = env_now_ms();
	int rc;

	if (!cf_table_name_valid(name)) {
		cf_log(CF_LOG_WARN, "bad table name '%s'", name);
		return CF_EINVAL;
	}
	if (n == 0 || check_families(fams, n)) {
		cf_log(CF_LOG_WARN, "table %s: bad family settings", name);
		return CF_EINVAL;
	}
	pthread_mutex_lock(&db->ddl_mu);
	pthread_mutex_lock(&db->mu);
	for (size_t i = 0; i < db->ntables; i++)
		if (strcmp(db->tables[i]->name, name) == 0) {
			rc = CF_EEXIST;
			goto out;
		}
	pthread_mutex_lock(&db->meta_mu);
	rc = meta_begin(db->meta);
	if (!rc)
		rc = meta_table_add(db->meta, name, now, &tid);
	/* a new table starts with the defaults, whatever was set on the
	 * name before (cf_db_access_set) */
	if (!rc)
		rc = meta_access_del(db->meta, name);
	if (!rc)
		rc = put_families(db, tid, fams, n);
	if (!rc) {
		mr.id = (int64_t)db->next_region++;
		mr.table_id = tid;
		mr.created_ms = now;
		rc = meta_region_put(db->meta, &mr);
	}
	if (!rc)
		rc = meta_set_u64(db->meta, "next_region", db->next_region);
	if (!rc && !(t = table_new(db, tid, name)))
		rc = CF_ENOMEM;
	if (!rc && !(fs = famset_new(fams, n)))
		rc = CF_ENOMEM;
	if (!rc) {
		table_set_fams(t, fs);
		t->created_ms = t->schema_ms = now;
		if (!(r = region_new(t, (uint64_t)mr.id, NULL, 0, NULL, 0)) ||
		    !(t->regions = malloc(sizeof *t->regions)))
			rc = CF_ENOMEM;
	}
	if (!rc) {
		r->created_ms = now;
		t->regions[0] = r;
		t->nregions = 1;
		r = NULL;
		rc = region_write_info(db, t->regions[0]);
	}
	if (!rc)
		rc = meta_commit(db->meta);
	if (rc)
		meta_rollback(db->meta);
	pthread_mutex_unlock(&db->meta_mu);
	if (!rc && !(nt = realloc(db->tables,
				  (db->ntables + 1) * sizeof *nt)))
		rc = CF_ENOMEM;
	if (!rc) {
		db->tables = nt;
		db->tables[db->ntables++] = t;
		t = NULL;
	}
out:
	pthread_mutex_unlock(&db->mu);
	pthread_mutex_unlock(&db->ddl_mu);
	region_free(r);
	table_unref(t);
	if (rc && rc != CF_EEXIST)
		cf_log(CF_LOG_ERROR, "create table %s: %s", name,
		       cf_strerror(rc));
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cf_table_list(cf_db *db, char ***names, size_t *n)
{
	size_t total = 0;
	char **v, *p;

	pthread_mutex_lock(&db->mu);
	for (size_t i = 0; i < db->ntables; i++)
		total += strlen(db->tables[i]->name) + 1;
	v = malloc(db->ntables * sizeof *v + total + 1);
	if (!v) {
		pthread_mutex_unlock(&db->mu);
		return CF_ENOMEM;
	}
	p = (char *)(v + db->ntables);
	for (size_t i = 0; i < db->ntables; i++) {
		size_t l = strlen(db->tables[i]->name) + 1;
		memcpy(p, db->tables[i]->name, l);
		v[i] = p;
		p += l;
	}
	*n = db->ntables;
	pthread_mutex_unlock(&db->mu);
	qsort(v, *n, sizeof *v, cmp_str);
	*names = v;
	return CF_OK;
}

int cf_table_open(cf_db *db, const char *name, cf_table **out)
{
	int rc = CF_ENOTFOUND;

	*out = NULL;
	pthread_mutex_lock(&db->mu);
	for (size_t i = 0; i < db->ntables; i++)
		if (strcmp(db->tables[i]->name, name) == 0) {
			*out = db->tables[i];
			table_ref(*out);
			rc = CF_OK;
		}
	pthread_mutex_unlock(&db->mu);
	return rc;
}

void cf_table_close(cf_table *t)
{
	table_unref(t);
}

const char *cf_table_name(const cf_table *t)
{
	return t->name;
}

int cf_table_has_family(cf_table *t, const char *fam, size_t famlen)
{
	int r;

	pthread_rwlock_rdlock(&t->lock);
	r = table_family(t, fam, famlen) != NULL;
	pthread_rwlock_unlock(&t->lock);
	return r;
}

int cf_table_schema(cf_table *t, struct cf_family **fams, size_t *n)
{
	const struct famset *fs;
	int rc = CF_OK;

	if (atomic_load(&t->dropped))
		return CF_ECLOSED;
	fs = table_fams(t);
	*n = fs ? fs->n : 0;
	*fams = malloc((*n ? *n : 1) * sizeof **fams);
	if (*fams && *n)
		memcpy(*fams, fs->f, *n * sizeof **fams);
	else if (!*fams)
		rc = CF_ENOMEM;
	return rc;
}

/* Does the table hold any visible cell? */
static int table_empty(struct cf_table *t)
{
	struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT, .limit = 1 };
	cf_scanner *s;
	const cf_row *row = NULL;
	int rc;

	so.read.keys_only = 1;
	so.batch = 1;	/* the first cell, not its whole row */
	rc = cf_scan_open(t, &so, &s);
	if (rc)
		return rc;
	rc = cf_scan_next(s, &row);
	cf_scan_close(s);
	if (rc)
		return rc;
	return row ? CF_ENOTEMPTY : CF_OK;
}

int cf_table_drop(cf_db *db, const char *name, int only_if_empty)
{
	struct cf_table *t = NULL;
	struct buf path = BUF_INIT;
	size_t idx = 0;
	int rc;

	pthread_mutex_lock(&db->ddl_mu);
	pthread_mutex_lock(&db->compact_mu);
	pthread_mutex_lock(&db->mu);
	for (size_t i = 0; i < db->ntables; i++)
		if (strcmp(db->tables[i]->name, name) == 0) {
			t = db->tables[i];
			idx = i;
		}
	pthread_mutex_unlock(&db->mu);
	rc = t ? CF_OK : CF_ENOTFOUND;
	if (!rc && only_if_empty)
		rc = table_empty(t);
	if (!rc) {
		pthread_mutex_lock(&db->meta_mu);
		rc = meta_table_del(db->meta, t->id);
		pthread_mutex_unlock(&db->meta_mu);
	}
	if (!rc) {
		atomic_store(&t->dropped, 1);
		pthread_mutex_lock(&db->mu);
		memmove(&db->tables[idx], &db->tables[idx + 1],
			(db->ntables - idx - 1) * sizeof *db->tables);
		db->ntables--;
		pthread_mutex_unlock(&db->mu);
		/* memstore bytes of the table no longer count */
		pthread_rwlock_rdlock(&t->lock);
		for (size_t j = 0; j < t->nregions; j++) {
			struct view *v = region_view(t->regions[j]);
			size_t b = memstore_bytes(v->mem);
			for (size_t k = 0; k < v->nimm; k++)
				b += memstore_bytes(v->imm[k]);
			atomic_fetch_sub(&db->mem_total, b);
			/* files go with the directory below */
			view_unref(v);
		}
		pthread_rwlock_unlock(&t->lock);
		buf_printf(&path, "%s/data/%s", db->dir, name);
		buf_putc(&path, 0);
		env_remove_tree((const char *)path.p);
		cf_log(CF_LOG_INFO, "table %s dropped", name);
		table_unref(t);
	}
	pthread_mutex_unlock(&db->compact_mu);
	pthread_mutex_unlock(&db->ddl_mu);
	buf_release(&path);
	return rc;
}

int cf_table_alter(cf_table *t, const struct cf_family *fams, size_t n)
{
	return cf_table_alter_at(t, fams, n, env_now_ms());
}

int cf_table_times(cf_table *t, int64_t *created_ms, int64_t *schema_ms)
{
	if (atomic_load(&t->dropped))
		return CF_ECLOSED;
	pthread_rwlock_rdlock(&t->lock);
	*created_ms = t->created_ms;
	*schema_ms = t->schema_ms;
	pthread_rwlock_unlock(&t->lock);
	return CF_OK;
}

int cf_table_alter_at(cf_table *t, const struct cf_family *fams, size_t n,
		      int64_t ms)
{
	struct cf_db *db = t->db;
	struct famset *nfs;
	const struct famset *ofs;
	const struct cf_family *nf;
	int rc;

	if (atomic_load(&t->dropped))
		return CF_ECLOSED;
	if (n == 0 || check_families(fams, n)) {
		cf_log(CF_LOG_WARN, "%s: bad schema", t->name);
		return CF_EINVAL;
	}
	/* Flush first, so no memstore holds cells of a dropped family
	 * that a family re-added later would show again. */
	rc = cf_table_flush(t);
	if (rc)
		return rc;
	if (!(nfs = famset_new(fams, n)))
		return CF_ENOMEM;
	nf = nfs->f;
	pthread_mutex_lock(&db->ddl_mu);
	pthread_mutex_lock(&db->compact_mu);
	pthread_mutex_lock(&db->mem_mu);
	pthread_rwlock_wrlock(&t->lock);
	pthread_mutex_lock(&db->meta_mu);
	rc = meta_begin(db->meta);
	ofs = table_fams(t);
	for (size_t i = 0; ofs && i < ofs->n && !rc; i++) {
		int keep = 0;
		for (size_t j = 0; j < n; j++)
			keep |= strcmp(ofs->f[i].name, nf[j].name) == 0;
		if (keep)
			continue;
		rc = meta_family_del(db->meta, t->id, ofs->f[i].name);
		for (size_t r = 0; r < t->nregions && !rc; r++) {
			struct view *v = t->regions[r]->view;
			struct fstore *st = view_store(v, ofs->f[i].name, 0);
			for (size_t f = 0; st && f < st->n && !rc; f++)
				rc = meta_file_del(db->meta,
						   (int64_t)t->regions[r]->id,
						   st->files[f]->id);
		}
	}
	if (!rc)
		rc = put_families(db, t->id, nf, n);
	if (!rc)
		rc = meta_table_set_schema_ms(db->meta, t->id, ms);
	if (!rc)
		rc = meta_commit(db->meta);
	else
		meta_rollback(db->meta);
	pthread_mutex_unlock(&db->meta_mu);
	if (!rc) {
		table_new_stamp(t);
		/* drop the removed families' files from every view */
		for (size_t r = 0; r < t->nregions; r++) {
			struct region *rg = t->regions[r];
			struct view *v, *nv;
			pthread_mutex_lock(&rg->mu);
			v = rg->view;
			nv = view_clone(v);
			if (nv) {
				for (size_t s = 0; s < nv->nstores; s++) {
					struct fstore *st = &nv->stores[s];
					int keep = 0;
					for (size_t j = 0; j < n; j++)
						keep |= strcmp(st->fam,
							       nf[j].name) == 0;
					if (keep)
						continue;
					for (size_t f = 0; f < st->n; f++) {
						sst_set_obsolete(
							st->files[f]->sst);
						sfile_free(st->files[f]);
					}
					st->n = 0;
				}
				rg->view = nv;
			}
			pthread_mutex_unlock(&rg->mu);
			if (nv)
				view_unref(v);
		}
		/* the old schema stays with t: reads may hold it */
		table_set_fams(t, nfs);
		nfs = NULL;
		t->schema_ms = ms;
		for (size_t r = 0; r < t->nregions; r++)
			region_write_info(db, t->regions[r]);
	}
	pthread_rwlock_unlock(&t->lock);
	pthread_mutex_unlock(&db->mem_mu);
	pthread_mutex_unlock(&db->compact_mu);
	pthread_mutex_unlock(&db->ddl_mu);
	free(nfs);
	if (rc)
		cf_log(CF_LOG_ERROR, "%s: schema change failed: %s", t->name,
		       cf_strerror(rc));
	return rc;
}

/* --- status ----------------------------------------------------------- */

int cf_table_regions(cf_table *t, struct cf_region_info **out, size_t *n)
{
	struct cf_region_info *ri;
	int rc = CF_OK;

	if (atomic_load(&t->dropped))
		return CF_ECLOSED;
	pthread_rwlock_rdlock(&t->lock);
	*n = t->nregions;
	ri = calloc(*n, sizeof *ri);
	for (size_t i = 0; ri && i < *n; i++) {
		struct region *r = t->regions[i];
		struct view *v = region_view(r);
		ri[i].id = r->id;
		ri[i].start = malloc(r->start.len + 1);
		ri[i].end = malloc(r->end.len + 1);
		if (!ri[i].start || !ri[i].end)
			rc = CF_ENOMEM;
		else {
			if (r->start.len)
				memcpy(ri[i].start, r->start.p, r->start.len);
			if (r->end.len)
				memcpy(ri[i].end, r->end.p, r->end.len);
		}
		ri[i].startlen = r->start.len;
		ri[i].endlen = r->end.len;
		ri[i].created_ms = r->created_ms;
		ri[i].files = region_file_count(v);
		ri[i].disk_bytes = region_disk_bytes(v);
		ri[i].mem_bytes = memstore_bytes(v->mem);
		for (size_t k = 0; k < v->nimm; k++)
			ri[i].mem_bytes += memstore_bytes(v->imm[k]);
		view_unref(v);
	}
	pthread_rwlock_unlock(&t->lock);
	if (!ri)
		return CF_ENOMEM;
	if (rc) {
		cf_regions_free(ri, *n);
		return rc;
	}
	*out = ri;
	return CF_OK;
}

void cf_regions_free(struct cf_region_info *r, size_t n)
{
	if (!r)
		return;
	for (size_t i = 0; i < n; i++) {
		free(r[i].start);
		free(r[i].end);
	}
	free(r);
}

static void copy_stats(const struct tstats *s, struct cf_stats *o)
{
	o->puts = atomic_load(&s->puts);
	o->deletes = atomic_load(&s->deletes);
	o->appends = atomic_load(&s->appends);
	o->increments = atomic_load(&s->increments);
	o->gets = atomic_load(&s->gets);
	o->scans = atomic_load(&s->scans);
	o->scan_rows = atomic_load(&s->scan_rows);
	o->bytes_written = atomic_load(&s->bytes_written);
	o->bytes_read = atomic_load(&s->bytes_read);
	o->flushes = atomic_load(&s->flushes);
	o->compactions = atomic_load(&s->compactions);
	o->major_compactions = atomic_load(&s->major_compactions);
	o->splits = atomic_load(&s->splits);
	o->merges = atomic_load(&s->merges);
	o->errors = atomic_load(&s->errors);
	o->stalls = atomic_load(&s->stalls);
	o->bloom_skips = atomic_load(&s->bloom_skips);
	o->files_skipped = atomic_load(&s->files_skipped);
	o->multi_file_reads = atomic_load(&s->multi_file_reads);
}

static void add_table_sizes(struct cf_table *t, struct cf_stats *o)
{
	pthread_rwlock_rdlock(&t->lock);
	o->regions += t->nregions;
	for (size_t i = 0; i < t->nregions; i++) {
		struct view *v = region_view(t->regions[i]);
		o->store_files += region_file_count(v);
		o->disk_bytes += region_disk_bytes(v);
		o->mem_bytes += memstore_bytes(v->mem);
		for (size_t k = 0; k < v->nimm; k++)
			o->mem_bytes += memstore_bytes(v->imm[k]);
		view_unref(v);
	}
	pthread_rwlock_unlock(&t->lock);
}

int cf_db_stats(cf_db *db, struct cf_stats *s)
{
	size_t n;
	struct cf_table **ts;

	memset(s, 0, sizeof *s);
	copy_stats(&db->st, s);
	s->cache_hits = cache_hits(db->cache);
	s->cache_misses = cache_misses(db->cache);
	s->wal_syncs = wal_syncs(db->wal);
	s->wal_bytes = wal_bytes(db->wal);
	s->mem_counted = atomic_load(&db->mem_total);
	ts = tables_snapshot(db, &n);
	for (size_t i = 0; i < n; i++)
		add_table_sizes(ts[i], s);
	tables_release(ts, n);
	return CF_OK;
}

int cf_table_stats(cf_table *t, struct cf_stats *s)
{
	memset(s, 0, sizeof *s);
	if (atomic_load(&t->dropped))
		return CF_ECLOSED;
	copy_stats(&t->st, s);
	add_table_sizes(t, s);
	return CF_OK;
}
