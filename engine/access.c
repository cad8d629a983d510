/*
 * access.c: the permission bits and owner of tables (cf_db_access_*),
 * stored in the catalog's access table (docs/catalog.md).  The engine
 * keeps no copy: the daemon reads them once at mount and keeps its own
 * (fs/perm.c); every change passes through here.
 *
 * Locks: db->ddl_mu (so a table cannot be dropped or created between the
 * check that it exists and the write), then db->meta_mu.
 */
#include <string.h>

#include "engine/internal.h"
#include "meta/meta.h"
#include "util/err.h"

struct list_ctx {
	int (*fn)(const char *name, const struct cf_access *a, void *arg);
	void *arg;
};

static int list_one(const char *name, const struct meta_access *ma,
		    void *arg)
{
	struct list_ctx *c = arg;
	struct cf_access a = { ma->mode, ma->uid, ma->gid };

	return c->fn(name, &a, c->arg);
}

int cf_db_access_list(cf_db *db,
		      int (*fn)(const char *name, const struct cf_access *a,
				void *arg),
		      void *arg)
{
	struct list_ctx c = { fn, arg };
	int rc;

	pthread_mutex_lock(&db->meta_mu);
	rc = meta_access_list(db->meta, list_one, &c);
	pthread_mutex_unlock(&db->meta_mu);
	return rc;
}

static int is_other(const char *name, const char *const *others)
{
	for (; others && *others; others++)
		if (!strcmp(name, *others))
			return 1;
	return 0;
}

int cf_db_access_set(cf_db *db, const char *name, const struct cf_access *a,
		     const char *const *others)
{
	struct meta_access ma;
	int rc = CF_OK, found = is_other(name, others);

	if (!found && !cf_table_name_valid(name))
		return CF_EINVAL;
	if (a && a->mode > 07777)
		return CF_EINVAL;
	pthread_mutex_lock(&db->ddl_mu);
	pthread_mutex_lock(&db->mu);
	for (size_t i = 0; !found && i < db->ntables; i++)
		found = !strcmp(db->tables[i]->name, name);
	pthread_mutex_unlock(&db->mu);
	if (!found)
		rc = CF_ENOTFOUND;
	if (!rc) {
		pthread_mutex_lock(&db->meta_mu);
		if (a) {
			ma.mode = a->mode;
			ma.uid = a->uid;
			ma.gid = a->gid;
			rc = meta_access_put(db->meta, name, &ma);
		} else
			rc = meta_access_del(db->meta, name);
		pthread_mutex_unlock(&db->meta_mu);
	}
	pthread_mutex_unlock(&db->ddl_mu);
	return rc;
}
