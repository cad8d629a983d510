/*
 * sweep.c: removing from the data directory what the catalog does not
 * name.  At open (db_sweep), after the catalog is loaded and before the
 * WAL is replayed: store files of flushes and compactions cut short or
 * of committed compactions not yet deleted, region directories of splits
 * cut short, table directories of creates and drops cut short (each a
 * line in the log; cellfs-fsck calls them debris, engine/check.c).  At a
 * clean close (db_remove_retired): the directories of split parents that
 * no region's files reference any more.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "engine/internal.h"
#include "meta/meta.h"
#include "util/env.h"
#include "util/log.h"

struct sweep {
	struct cf_db *db;
	struct cf_table *t;
	struct buf path;
	const char *fam;
};

static int file_in_use(struct cf_db *db, uint64_t id)
{
	int64_t refs = 0;
	return meta_file_refs(db->meta, id, &refs) == CF_OK && refs > 0;
}

static int region_in_use(struct cf_table *t, uint64_t id)
{
	for (size_t i = 0; i < t->nregions; i++) {
		struct view *v = t->regions[i]->view;
		if (t->regions[i]->id == id)
			return 1;
		for (size_t s = 0; s < v->nstores; s++)
			for (size_t f = 0; f < v->stores[s].n; f++)
				if ((uint64_t)v->stores[s].files[f]->home_region
				    == id)
					return 1;
	}
	return 0;
}

static int sweep_files(const char *name, void *arg)
{
	struct sweep *s = arg;
	size_t mark = s->path.len;
	uint64_t id;
	char tail[8];

	buf_printf(&s->path, "/%s", name);
	buf_putc(&s->path, 0);
	if (sscanf(name, "%16" SCNx64 "%7s", &id, tail) != 2 ||
	    strcmp(tail, ".sst") != 0 || !file_in_use(s->db, id)) {
		cf_log(CF_LOG_INFO, "removing %s: not in the catalog",
		       (const char *)s->path.p);
		env_remove_tree((const char *)s->path.p);
	}
	s->path.len = mark;
	return 0;
}

static int sweep_families(const char *name, void *arg)
{
	struct sweep *s = arg;
	size_t mark = s->path.len;

	if (strcmp(name, ".regioninfo") == 0)
		return 0;
	buf_printf(&s->path, "/%s", name);
	buf_putc(&s->path, 0);
	s->path.len--;
	env_list_dir((const char *)s->path.p, sweep_files, s);
	s->path.len = mark;
	return 0;
}

static int sweep_regions(const char *name, void *arg)
{
	struct sweep *s = arg;
	size_t mark = s->path.len;
	uint64_t id;

	buf_printf(&s->path, "/%s", name);
	buf_putc(&s->path, 0);
	s->path.len--;
	if (sscanf(name, "%16" SCNx64, &id) != 1 || strlen(name) != 16 ||
	    !region_in_use(s->t, id)) {
		cf_log(CF_LOG_INFO, "removing %s: not in the catalog",
		       (const char *)s->path.p);
		env_remove_tree((const char *)s->path.p);
	} else {
		env_list_dir((const char *)s->path.p, sweep_families, s);
	}
	s->path.len = mark;
	return 0;
}

static int sweep_tables(const char *name, void *arg)
{
	struct sweep *s = arg;
	size_t mark = s->path.len;

	s->t = NULL;
	for (size_t i = 0; i < s->db->ntables; i++)
		if (strcmp(s->db->tables[i]->name, name) == 0)
			s->t = s->db->tables[i];
	buf_printf(&s->path, "/%s", name);
	buf_putc(&s->path, 0);
	s->path.len--;
	if (!s->t) {
		cf_log(CF_LOG_INFO, "removing %s: not in the catalog",
		       (const char *)s->path.p);
		env_remove_tree((const char *)s->path.p);
	} else {
		env_list_dir((const char *)s->path.p, sweep_regions, s);
	}
	s->path.len = mark;
	return 0;
}

void db_sweep(struct cf_db *db)
{
	struct sweep s = { .db = db };

	buf_printf(&s.path, "%s/data", db->dir);
	buf_putc(&s.path, 0);
	s.path.len--;
	env_list_dir((const char *)s.path.p, sweep_tables, &s);
	buf_release(&s.path);
}

/* The directories of split parents that no region's files reference
 * any more (a major compaction of the daughters rewrote them): the next
 * open would remove them (sweep_regions), so a clean close does, and
 * cf_check after it finds no debris.  The background threads stopped. */
void db_remove_retired(struct cf_db *db)
{
	struct buf path = BUF_INIT;

	for (size_t i = 0; i < db->ntables; i++) {
		struct cf_table *t = db->tables[i];
		for (size_t j = 0; j < t->nretired; j++) {
			uint64_t id = t->retired[j]->id;
			if (region_in_use(t, id))
				continue;
			buf_reset(&path);
			buf_printf(&path, "%s/data/%s/%016" PRIx64, db->dir,
				   t->name, id);
			buf_putc(&path, 0);
			if (env_remove_tree((const char *)path.p) == CF_OK)
				cf_log(CF_LOG_INFO, "removed %s: a split "
				       "parent no region references",
				       (const char *)path.p);
		}
	}
	buf_release(&path);
}
