/*
 * region.c: regions and their views.  A view is published under
 * region->mu and never changed afterwards; see internal.h for the rules.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cache.h"
#include "engine/internal.h"
#include "util/env.h"
#include "util/log.h"

struct view *view_new(void)
{
	struct view *v = calloc(1, sizeof *v);

	if (v)
		atomic_init(&v->refs, 1);
	return v;
}

void sfile_free(struct sfile *f)
{
	if (!f)
		return;
	if (f->sst)
		sst_unref(f->sst);
	buf_release(&f->lo);
	buf_release(&f->hi);
	free(f);
}

static struct sfile *sfile_copy(const struct sfile *f)
{
	struct sfile *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	*c = *f;
	memset(&c->lo, 0, sizeof c->lo);
	memset(&c->hi, 0, sizeof c->hi);
	if (buf_append(&c->lo, f->lo.p, f->lo.len) ||
	    buf_append(&c->hi, f->hi.p, f->hi.len)) {
		buf_release(&c->lo);
		buf_release(&c->hi);
		free(c);
		return NULL;
	}
	if (c->sst)
		sst_ref(c->sst);
	return c;
}

static void view_free(struct view *v)
{
	if (v->mem)
		memstore_unref(v->mem);
	for (size_t i = 0; i < v->nimm; i++)
		memstore_unref(v->imm[i]);
	free(v->imm);
	for (size_t s = 0; s < v->nstores; s++) {
		for (size_t i = 0; i < v->stores[s].n; i++)
			sfile_free(v->stores[s].files[i]);
		free(v->stores[s].files);
	}
	free(v->stores);
	free(v);
}

void view_unref(struct view *v)
{
	if (v && atomic_fetch_sub(&v->refs, 1) == 1)
		view_free(v);
}

struct view *view_clone(const struct view *v)
{
	struct view *c = view_new();

	if (!c)
		return NULL;
	c->mem = v->mem;
	memstore_ref(c->mem);
	if (v->nimm) {
		c->imm = calloc(v->nimm, sizeof *c->imm);
		if (!c->imm)
			goto fail;
		for (size_t i = 0; i < v->nimm; i++) {
			c->imm[i] = v->imm[i];
			memstore_ref(c->imm[i]);
			c->nimm++;
		}
	}
	if (v->nstores) {
		c->stores = calloc(v->nstores, sizeof *c->stores);
		if (!c->stores)
			goto fail;
		for (size_t s = 0; s < v->nstores; s++) {
			struct fstore *d = &c->stores[s];
			const struct fstore *o = &v->stores[s];
			memcpy(d->fam, o->fam, sizeof d->fam);
			c->nstores++;
			if (!o->n)
				continue;
			d->files = calloc(o->n, sizeof *d->files);
			if (!d->files)
				goto fail;
			for (size_t i = 0; i < o->n; i++) {
				if (!(d->files[i] = sfile_copy(o->files[i])))
					goto fail;
				d->n++;
			}
		}
	}
	return c;
fail:
	view_free(c);
	return NULL;
}

struct fstore *view_store(struct view *v, const char *fam, int create)
{
	struct fstore *n;

	for (size_t s = 0; s < v->nstores; s++)
		if (strcmp(v->stores[s].fam, fam) == 0)
			return &v->stores[s];
	if (!create)
		return NULL;
	n = realloc(v->stores, (v->nstores + 1) * sizeof *n);
	if (!n)
		return NULL;
	v->stores = n;
	n = &v->stores[v->nstores++];
	memset(n, 0, sizeof *n);
	snprintf(n->fam, sizeof n->fam, "%s", fam);
	return n;
}

struct view *region_view(struct region *r)
{
	struct view *v;

	pthread_mutex_lock(&r->mu);
	v = r->view;
	atomic_fetch_add(&v->refs, 1);
	pthread_mutex_unlock(&r->mu);
	return v;
}

void region_set_view(struct region *r, struct view *nv)
{
	struct view *old;

	pthread_mutex_lock(&r->mu);
	old = r->view;
	r->view = nv;
	pthread_mutex_unlock(&r->mu);
	view_unref(old);
}

struct region *region_new(struct cf_table *t, uint64_t id, const void *start,
			  size_t startlen, const void *end, size_t endlen)
{
	struct region *r = calloc(1, sizeof *r);

	if (!r)
		return NULL;
	r->id = id;
	r->t = t;
	pthread_mutex_init(&r->mu, NULL);
	if (buf_append(&r->start, start, startlen) ||
	    buf_append(&r->end, end, endlen) || !(r->view = view_new()) ||
	    memstore_new(&r->view->mem)) {
		region_free(r);
		return NULL;
	}
	memstore_expect(r->view->mem, t->db->o.flush_size);
	return r;
}

void region_free(struct region *r)
{
	if (!r)
		return;
	view_unref(r->view);
	buf_release(&r->start);
	buf_release(&r->end);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

int region_contains(const struct region *r, const void *row, size_t rowlen)
{
	if (bytes_cmp(row, rowlen, r->start.p, r->start.len) < 0)
		return 0;
	return r->end.len == 0 ||
	       bytes_cmp(row, rowlen, r->end.p, r->end.len) < 0;
}

uint64_t region_disk_bytes(struct view *v)
{
	uint64_t n = 0;

	for (size_t s = 0; s < v->nstores; s++)
		for (size_t i = 0; i < v->stores[s].n; i++)
			n += v->stores[s].files[i]->size;
	return n;
}

size_t region_file_count(struct view *v)
{
	size_t n = 0;

	for (size_t s = 0; s < v->nstores; s++)
		n += v->stores[s].n;
	return n;
}

/* --- store files in a view ------------------------------------------- */

static int cmp_newest(const void *a, const void *b)
{
	const struct sfile *x = *(struct sfile *const *)a;
	const struct sfile *y = *(struct sfile *const *)b;
	return x->max_seq > y->max_seq ? -1 : x->max_seq < y->max_seq;
}

int view_add_file(struct view *v, const char *fam, struct sfile *f)
{
	struct fstore *st = view_store(v, fam, 1);
	struct sfile **n;

	if (!st)
		return CF_ENOMEM;
	n = realloc(st->files, (st->n + 1) * sizeof *n);
	if (!n)
		return CF_ENOMEM;
	st->files = n;
	st->files[st->n++] = f;
	qsort(st->files, st->n, sizeof *st->files, cmp_newest);
	return CF_OK;
}

int sfile_open(struct cf_db *db, struct cf_table *t, int64_t home,
	       const char *fam, int in_memory, uint64_t id, uint64_t size,
	       struct sfile **out)
{
	struct buf path = BUF_INIT;
	struct sfile *sf = calloc(1, sizeof *sf);
	int rc;

	if (!sf)
		return CF_ENOMEM;
	sf->id = id;
	sf->home_region = home;
	sf->size = size;
	rc = store_path(db, t, home, fam, id, &path);
	if (!rc)
		rc = sst_open((const char *)path.p, id, db->cache,
			      in_memory, &sf->sst);
	buf_release(&path);
	if (rc) {
		free(sf);
		return rc;
	}
	sf->max_seq = sst_get_meta(sf->sst)->max_seq;
	*out = sf;
	return CF_OK;
}

/* --- paths and .regioninfo ------------------------------------------- */

int region_dir(struct cf_db *db, struct cf_table *t, int64_t region_id,
	       struct buf *out)
{
	buf_reset(out);
	return buf_printf(out, "%s/data/%s/%016" PRIx64, db->dir, t->name,
			  (uint64_t)region_id) ||
	       buf_putc(out, 0) ? CF_ENOMEM : (out->len--, CF_OK);
}

int store_path(struct cf_db *db, struct cf_table *t, int64_t region_id,
	       const char *fam, uint64_t file_id, struct buf *out)
{
	buf_reset(out);
	if (buf_printf(out, "%s/data/%s/%016" PRIx64 "/%s/%016" PRIx64 ".sst",
		       db->dir, t->name, (uint64_t)region_id, fam, file_id) ||
	    buf_putc(out, 0))
		return CF_ENOMEM;
	out->len--;
	return CF_OK;
}

static void hex(struct buf *b, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		buf_printf(b, "%02x", s[i]);
}

int region_write_info(struct cf_db *db, struct region *r)
{
	struct buf path = BUF_INIT, b = BUF_INIT;
	struct cf_table *t = r->t;
	const struct famset *fs = table_fams(t);
	int rc;

	rc = region_dir(db, t, (int64_t)r->id, &path);
	if (!rc)
		rc = env_mkdir_p((const char *)path.p, 0700);
	buf_printf(&b, "cellfs-regioninfo 1\ntable %s\ntableid %" PRId64
		   "\nregion %016" PRIx64 "\nstart ", t->name, t->id, r->id);
	hex(&b, r->start.p, r->start.len);
	buf_printf(&b, "\nend ");
	hex(&b, r->end.p, r->end.len);
	buf_putc(&b, '\n');
	for (size_t i = 0; fs && i < fs->n; i++) {
		buf_printf(&b, "family ");
		cf_family_format(&fs->f[i], &b);
		buf_putc(&b, '\n');
	}
	if (!rc)
		rc = buf_printf(&path, "/.regioninfo") || buf_putc(&path, 0) ?
			     CF_ENOMEM : CF_OK;
	if (!rc)
		rc = env_write_file_atomic((const char *)path.p, b.p, b.len);
	buf_release(&path);
	buf_release(&b);
	return rc;
}
