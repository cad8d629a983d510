/*
 * meta.h: the catalog, in SQLite (DATADIR/catalog.db): tables, families
 * with their settings, regions with their key ranges and flushed WAL
 * positions, and the store files of each region (the manifest).
 *
 * meta/ knows nothing of file formats: family settings are opaque text,
 * keys are opaque blobs.  Each flush, compaction and split of the engine
 * is one transaction: meta_begin, any number of changes, meta_commit (or
 * meta_rollback).  Changes outside a transaction commit at once.
 *
 * A struct meta is used by one thread at a time (the engine serializes
 * catalog access with its own mutex).  Prepared statements only.
 *
 * Errors of every function that reaches SQLite: CF_EIO (I/O error and
 * anything unexpected), CF_ENOSPC (disk full), CF_ECORRUPT (damaged
 * database), CF_ENOMEM, CF_EBUSY (another connection holds the lock past
 * the busy timeout); each is recorded with SQLite's message by cf_log.
 *
 * The list functions call fn once per row, in the order given; pointers
 * in what fn receives point into SQLite's row and are valid during that
 * call only.  fn may read the catalog through the other functions (also
 * the other lists: tables -> regions -> files nests), but must not call
 * the list it is called from (CF_EBUSY) nor change the catalog.  A
 * non-zero return of fn ends the list and is returned.
 */
#ifndef CF_META_H
#define CF_META_H

#include <stddef.h>
#include <stdint.h>

struct meta;

/* Opens (creating if missing) the catalog at path.  CF_ECORRUPT when the
 * file is not a catalog, CF_EIO on other SQLite failures. */
int meta_open(const char *path, struct meta **out);
void meta_close(struct meta *m);
/* Runs SQLite's integrity check: CF_OK or CF_ECORRUPT. */
int meta_check(struct meta *m);

/* Transactions nest: an inner meta_begin..meta_commit commits into the
 * enclosing transaction, an inner meta_rollback undoes only the changes
 * since its own meta_begin; the outermost commit makes all durable
 * (synchronous=FULL) or, when it fails, rolls all back and returns the
 * error.  After an error SQLite may have rolled the whole transaction back
 * already: further changes in it fail with CF_EIO until meta_rollback.
 * meta_commit without meta_begin: CF_EINVAL.  Each meta_begin that
 * returned CF_OK needs one meta_commit or meta_rollback. */
int meta_begin(struct meta *m);
int meta_commit(struct meta *m);
void meta_rollback(struct meta *m);

/* Named counters and positions ("next_file", "last_seq", ...). */
int meta_get_u64(struct meta *m, const char *key, uint64_t *v); /* ENOTFOUND */
int meta_set_u64(struct meta *m, const char *key, uint64_t v);

struct meta_table {
	int64_t id;
	const char *name;
	int64_t created_ms;	/* ms since the epoch; 0: unknown */
	int64_t schema_ms;	/* last schema change (created_ms at first) */
};

/* Adds a table created at created_ms (its schema_ms too); its id into
 * *id.  CF_EEXIST. */
int meta_table_add(struct meta *m, const char *name, int64_t created_ms,
		   int64_t *id);
/* Adds a table with a given id (a catalog rebuilt by cellfs-fsck keeps
 * the ids the WAL refers to), its times unknown (0).  CF_EEXIST. */
int meta_table_put(struct meta *m, int64_t id, const char *name);
/* The time of the table's last schema change.  CF_ENOTFOUND. */
int meta_table_set_schema_ms(struct meta *m, int64_t id, int64_t ms);
/* Removes the table with its families, regions and files, atomically
 * (alone or inside a transaction).  No such table: CF_OK. */
int meta_table_del(struct meta *m, int64_t id);
/* Calls fn for each table (ordered by name); stops on non-zero return and
 * returns it.  Strings are valid during the call only. */
int meta_table_list(struct meta *m,
		    int (*fn)(const struct meta_table *t, void *arg),
		    void *arg);

/* Inserts or replaces a family's settings text. */
int meta_family_put(struct meta *m, int64_t table_id, const char *name,
		    const char *settings);
/* No such family: CF_OK.  The family's file rows stay (the caller
 * removes them with meta_file_del). */
int meta_family_del(struct meta *m, int64_t table_id, const char *name);
int meta_family_list(struct meta *m, int64_t table_id,
		     int (*fn)(const char *name, const char *settings,
			       void *arg),
		     void *arg);

struct meta_region {
	int64_t id;		/* unique, positive */
	int64_t table_id;
	const void *start;	/* inclusive; startlen 0: table start */
	size_t startlen;
	const void *end;	/* exclusive; endlen 0: table end */
	size_t endlen;
	uint64_t flushed_seq;	/* edits <= this are in store files */
	int64_t created_ms;	/* ms since the epoch; 0: unknown */
};

/* Inserts or replaces a region. */
int meta_region_put(struct meta *m, const struct meta_region *r);
/* Removes a region and its file rows, atomically (alone or inside a
 * transaction).  No such region: CF_OK. */
int meta_region_del(struct meta *m, int64_t id);
/* CF_ENOTFOUND if there is no such region. */
int meta_region_set_flushed(struct meta *m, int64_t id, uint64_t seq);
/* Regions of a table ordered by start key (bytewise; the empty start
 * first).  start and end are never NULL. */
int meta_region_list(struct meta *m, int64_t table_id,
		     int (*fn)(const struct meta_region *r, void *arg),
		     void *arg);

struct meta_file {
	uint64_t id;		/* unique file number: its name */
	int64_t region_id;	/* region that uses the file */
	const char *family;
	int64_t home_region;	/* region directory that holds the file
				   (differs from region_id for a split
				   daughter's reference) */
	uint64_t size;
	uint64_t max_seq;
	const void *lo;		/* reference bounds on rows: [lo, hi); */
	size_t lolen;		/* lolen/hilen 0 with NULL: unbounded */
	const void *hi;
	size_t hilen;
};

/* lo/hi NULL: unbounded, read back as NULL; non-NULL with length 0: an
 * empty bound, read back as a non-NULL empty blob.  CF_EEXIST if the
 * region already has a row for f->id. */
int meta_file_add(struct meta *m, const struct meta_file *f);
/* CF_ENOTFOUND if absent. */
int meta_file_del(struct meta *m, int64_t region_id, uint64_t id);
/* Files of a region, by id. */
int meta_file_list(struct meta *m, int64_t region_id,
		   int (*fn)(const struct meta_file *f, void *arg),
		   void *arg);
/* How many file rows (any region) name physical file id. */
int meta_file_refs(struct meta *m, uint64_t id, int64_t *count);

/* Who may use a table (or another top-level directory of the daemon,
 * such as tsd), as chmod and chown set it: permission bits and owner.
 * A name without a row has the daemon's defaults.  The row of a table
 * goes with meta_table_del. */
struct meta_access {
	uint32_t mode;		/* permission bits, 0 to 07777 */
	uint32_t uid, gid;
};

/* Inserts or replaces name's access row. */
int meta_access_put(struct meta *m, const char *name,
		    const struct meta_access *a);
/* No such row: CF_OK. */
int meta_access_del(struct meta *m, const char *name);
/* Every access row, by name; the name is valid during the call only. */
int meta_access_list(struct meta *m,
		     int (*fn)(const char *name, const struct meta_access *a,
			       void *arg),
		     void *arg);

#endif
