/*
 * table.c: a table as the engine holds it: its regions (sorted by start
 * key), its families, its reference count.  Below db.c (which creates,
 * loads, alters and drops tables, and schedules their work) and above
 * region.c; the write, read, flush and compaction paths find a row's
 * region and a family's settings here.
 *
 * Locks: t->lock (rwlock) guards regions and fams; table_region_for()
 * and table_family() expect the caller to hold it (read) or to own the
 * table alone.  References: table_ref/table_unref; the last unref frees
 * the table and its regions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"

void table_ref(struct cf_table *t)
{
	atomic_fetch_add(&t->refs, 1);
}

static void table_free(struct cf_table *t)
{
	for (size_t i = 0; i < t->nregions; i++)
		region_free(t->regions[i]);
	free(t->regions);
	for (size_t i = 0; i < t->nretired; i++)
		region_free(t->retired[i]);
	free(t->retired);
	for (struct famset *fs = atomic_load(&t->fams), *o; fs; fs = o) {
		o = fs->older;
		free(fs);
	}
	for (int i = 0; i < ROW_STRIPES; i++)
		pthread_mutex_destroy(&t->stripes[i]);
	pthread_rwlock_destroy(&t->lock);
	pthread_rwlock_destroy(&t->batch_lock);
	free(t);
}

void table_unref(struct cf_table *t)
{
	if (t && atomic_fetch_sub(&t->refs, 1) == 1)
		table_free(t);
}

struct cf_table *table_new(struct cf_db *db, int64_t id,
				  const char *name)
{
	struct cf_table *t = calloc(1, sizeof *t);

	if (!t)
		return NULL;
	atomic_init(&t->refs, 1);
	t->db = db;
	t->id = id;
	snprintf(t->name, sizeof t->name, "%s", name);
	pthread_rwlock_init(&t->lock, NULL);
	pthread_rwlock_init(&t->batch_lock, NULL);
	for (int i = 0; i < ROW_STRIPES; i++)
		pthread_mutex_init(&t->stripes[i], NULL);
	table_new_stamp(t);
	return t;
}

static int cmp_fam(const void *a, const void *b)
{
	return strcmp(((const struct cf_family *)a)->name,
		      ((const struct cf_family *)b)->name);
}

struct famset *famset_new(const struct cf_family *fams, size_t n)
{
	struct famset *fs = malloc(sizeof *fs + n * sizeof fs->f[0]);

	if (!fs)
		return NULL;
	fs->older = NULL;
	fs->n = n;
	if (n) {
		memcpy(fs->f, fams, n * sizeof fs->f[0]);
		qsort(fs->f, n, sizeof fs->f[0], cmp_fam);
	}
	return fs;
}

void table_set_fams(struct cf_table *t, struct famset *fs)
{
	fs->older = atomic_load_explicit(&t->fams, memory_order_relaxed);
	atomic_store_explicit(&t->fams, fs, memory_order_release);
}

const struct cf_family *table_family(const struct cf_table *t,
				     const char *fam, size_t famlen)
{
	return famset_family(table_fams(t), fam, famlen);
}

const struct cf_family *famset_family(const struct famset *fs,
				      const char *fam, size_t famlen)
{
	/* a read asks once a row: compared in place, no strlen and
	 * memcmp calls (a tenth of a scan's instructions per row
	 * were these) */
	if (famlen > CF_FAMILY_MAX || !fs)
		return NULL;
	for (size_t i = 0; i < fs->n; i++) {
		const char *name = fs->f[i].name;
		size_t j = 0;
		while (j < famlen && name[j] && name[j] == fam[j])
			j++;
		if (j == famlen && !name[j])
			return &fs->f[i];
	}
	return NULL;
}

int table_in_memory(const struct cf_table *t, const char *fam)
{
	const struct cf_family *f = table_family(t, fam, strlen(fam));

	return f && f->in_memory;
}

struct region *table_region_for(struct cf_table *t, const void *row,
				size_t rowlen)
{
	size_t lo = 0, hi = t->nregions;

	/* the last region whose start <= row */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (bytes_cmp(t->regions[mid]->start.p,
			      t->regions[mid]->start.len, row, rowlen) <= 0)
			lo = mid;
		else
			hi = mid;
	}
	return t->regions[lo];
}

int region_live(struct region *r)
{
	struct cf_table *t = r->t;
	int live = 0;

	if (atomic_load(&t->dropped))
		return 0;
	pthread_rwlock_rdlock(&t->lock);
	for (size_t i = 0; i < t->nregions; i++)
		if (t->regions[i] == r)
			live = 1;
	pthread_rwlock_unlock(&t->lock);
	return live;
}
