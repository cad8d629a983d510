/*
 * control.c: the control and status files of SPEC section 5: .ctl words,
 * .stats in the Prometheus text format, .regions, .log and .batch.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/control.h"
#include "fs/fs.h"
#include "util/escape.h"
#include "util/log.h"

static int stats_text(const struct cf_stats *s, const char *table,
		      struct buf *out)
{
	/* Prometheus names: counters end in _total, sizes are _bytes;
	 * every metric has its HELP and TYPE line (promtool check metrics
	 * finds no problem, tests/t1200-fs-metrics.sh).  D: counted for
	 * the whole daemon only (the block cache, the WAL, the store files'
	 * filters), so not in a table's .stats, where it would read 0. */
	static const struct {
		const char *name, *type, *help;
		size_t off;
		int db;
	} m[] = {
#define C(f, t, h) { #f, t, h, offsetof(struct cf_stats, f), 0 }
#define D(f, t, h) { #f, t, h, offsetof(struct cf_stats, f), 1 }
		C(puts, "counter", "Cells written (puts and batch puts)."),
		C(deletes, "counter", "Deletes of cells, columns or rows."),
		C(appends, "counter", "Appends to cells."),
		C(increments, "counter", "Increments of counter cells."),
		C(gets, "counter", "Point reads of rows or cells."),
		C(scans, "counter", "Scans opened."),
		C(scan_rows, "counter", "Rows returned by scans."),
		C(bytes_written, "counter", "Bytes of keys and values "
		  "written."),
		C(bytes_read, "counter", "Bytes of keys and values read."),
		C(flushes, "counter", "Memstore flushes to store files."),
		C(compactions, "counter", "Compactions (minor and major)."),
		C(major_compactions, "counter", "Major compactions."),
		C(splits, "counter", "Region splits."),
		C(merges, "counter", "Region merges."),
		D(cache_hits, "counter", "Block cache hits."),
		D(cache_misses, "counter", "Block cache misses."),
		D(bloom_skips, "counter", "Store file reads a bloom filter "
		  "saved."),
		D(files_skipped, "counter", "Store files skipped by their "
		  "key or time range."),
		D(multi_file_reads, "counter", "Reads that consulted two or "
		  "more store files of a store (a bloom filter's no counts)."),
		D(wal_syncs, "counter", "Write-ahead log syncs."),
		D(wal_bytes, "counter", "Bytes appended to the write-ahead "
		  "log."),
		C(stalls, "counter", "Writes that waited for a flush."),
		C(errors, "counter", "Engine operations that failed."),
		C(regions, "gauge", "Regions open."),
		C(store_files, "gauge", "Store files in use."),
		C(disk_bytes, "gauge", "Bytes of store files on disk."),
		C(mem_bytes, "gauge", "Bytes held in memstores."),
#undef C
#undef D
	};
	size_t i;
	int rc = 0;
	uint64_t v;
	const char *sfx;

	for (i = 0; !rc && i < sizeof m / sizeof m[0]; i++) {
		if (table && m[i].db)
			continue;
		memcpy(&v, (const char *)s + m[i].off, sizeof v);
		sfx = m[i].type[0] == 'c' ? "_total" : "";
		rc = buf_printf(out, "# HELP cellfs_%s%s %s\n"
				"# TYPE cellfs_%s%s %s\n", m[i].name, sfx,
				m[i].help, m[i].name, sfx, m[i].type);
		if (!rc && table)
			rc = buf_printf(out, "cellfs_%s%s{table=\"%s\"} %"
					PRIu64 "\n", m[i].name, sfx, table, v);
		else if (!rc)
			rc = buf_printf(out, "cellfs_%s%s %" PRIu64 "\n",
					m[i].name, sfx, v);
	}
	return rc;
}

/* An escaped key for a text line; the empty key is '' (never a valid
 * escaped name, so unambiguous). */
static int key_text(const void *k, size_t len, struct buf *out)
{
	if (len == 0)
		return buf_append(out, "''", 2);
	return cf_escape(k, len, out);
}

static int regions_text(cf_table *t, struct buf *out)
{
	struct cf_region_info *r = NULL;
	size_t n = 0, i;
	int rc;

	rc = cf_table_regions(t, &r, &n);
	for (i = 0; !rc && i < n; i++) {
		rc = buf_putc(out, '@');
		if (!rc)
			rc = cf_escape(r[i].start, r[i].startlen, out);
		if (!rc)
			rc = buf_putc(out, ' ');
		if (!rc)
			rc = key_text(r[i].start, r[i].startlen, out);
		if (!rc)
			rc = buf_putc(out, ' ');
		if (!rc)
			rc = key_text(r[i].end, r[i].endlen, out);
		if (!rc)
			rc = buf_printf(out, " %" PRIu64 " %" PRIu64 " %"
					PRIu64 "\n", r[i].files,
					r[i].disk_bytes, r[i].mem_bytes);
	}
	cf_regions_free(r, n);
	return rc;
}

/* The daemon's own counters. */
static int fs_stats_text(struct buf *out)
{
	struct fs_counters c;
	uint64_t held, limit, refused;
	int rc;

	fs_counters(&c);
	fs_budget_stats(&held, &limit, &refused);
	rc = buf_printf(out,
		"# HELP cellfs_fuse_lookups_total FUSE lookups served.\n"
		"# TYPE cellfs_fuse_lookups_total counter\n"
		"cellfs_fuse_lookups_total %" PRIu64 "\n"
		"# HELP cellfs_fuse_getattrs_total FUSE getattrs served.\n"
		"# TYPE cellfs_fuse_getattrs_total counter\n"
		"cellfs_fuse_getattrs_total %" PRIu64 "\n"
		"# HELP cellfs_fuse_readdirplus_entries_total Entries "
		"returned with their attributes by readdirplus.\n"
		"# TYPE cellfs_fuse_readdirplus_entries_total counter\n"
		"cellfs_fuse_readdirplus_entries_total %" PRIu64 "\n"
		"# HELP cellfs_names_too_long_total Names over 255 bytes "
		"refused (ENAMETOOLONG).\n"
		"# TYPE cellfs_names_too_long_total counter\n"
		"cellfs_names_too_long_total %" PRIu64 "\n"
		"# HELP cellfs_names_unlisted_total Keys left out of listings: "
		"their escaped name is over 255 bytes (reach them through "
		".batch).\n"
		"# TYPE cellfs_names_unlisted_total counter\n"
		"cellfs_names_unlisted_total %" PRIu64 "\n"
		"# HELP cellfs_fuse_inodes Nodes the daemon keeps for the "
		"kernel's inodes (freed as the kernel forgets them).\n"
		"# TYPE cellfs_fuse_inodes gauge\n"
		"cellfs_fuse_inodes %" PRIu64 "\n"
		"# HELP cellfs_fuse_notify_refused_total Cache invalidations "
		"the kernel refused with an error other than ENOENT.\n"
		"# TYPE cellfs_fuse_notify_refused_total counter\n"
		"cellfs_fuse_notify_refused_total %" PRIu64 "\n"
		"# HELP cellfs_fuse_forgets_total Inodes the kernel forgot "
		"(FORGET): names it dropped from its caches.\n"
		"# TYPE cellfs_fuse_forgets_total counter\n"
		"cellfs_fuse_forgets_total %" PRIu64 "\n",
		c.lookups, c.getattrs, c.readdirplus_entries,
		c.names_too_long, c.names_unlisted, c.inodes,
		c.notify_refused, c.forgets);
	if (rc)
		return rc;
	return buf_printf(out,
		"# HELP cellfs_write_buffer_bytes Memory held by files open "
		"for writing (values before their close, unfinished lines).\n"
		"# TYPE cellfs_write_buffer_bytes gauge\n"
		"cellfs_write_buffer_bytes %" PRIu64 "\n"
		"# HELP cellfs_write_buffer_limit_bytes Their bound, "
		"write_buffers.\n"
		"# TYPE cellfs_write_buffer_limit_bytes gauge\n"
		"cellfs_write_buffer_limit_bytes %" PRIu64 "\n"
		"# HELP cellfs_write_buffer_refused_total Writes refused "
		"(ENOSPC) because the bound was reached.\n"
		"# TYPE cellfs_write_buffer_refused_total counter\n"
		"cellfs_write_buffer_refused_total %" PRIu64 "\n",
		held, limit, refused);
}

int fs_control_text(cf_db *db, enum fs_ctl which, const char *table,
		    struct buf *out)
{
	struct cf_stats st;
	cf_table *t = NULL;
	int rc;

	switch (which) {
	case FS_ROOT_LOG:
		return cf_log_dump(out);
	case FS_ROOT_STATS:
		rc = cf_db_stats(db, &st);
		if (!rc)
			rc = stats_text(&st, NULL, out);
		if (!rc)
			rc = fs_stats_text(out);
		return rc ? rc : fs_tsd_stats_text(out);
	case FS_ROOT_CTL:
	case FS_TCTL:
		return 0;
	default:
		break;
	}
	rc = cf_table_open(db, table, &t);
	if (rc)
		return rc;
	switch (which) {
	case FS_TSTATS:
		rc = cf_table_stats(t, &st);
		if (!rc)
			rc = stats_text(&st, table, out);
		break;
	case FS_REGIONS:
		rc = regions_text(t, out);
		break;
	default:
		rc = CF_EINVAL;	/* .batch's dump is fs/scan.c's */
		break;
	}
	cf_table_close(t);
	return rc;
}

struct acc_find {
	const char *name;
	struct cf_access a;
	int found;
};

static int acc_one(const char *name, const struct cf_access *a, void *arg)
{
	struct acc_find *f = arg;

	if (!strcmp(name, f->name)) {
		f->a = *a;
		f->found = 1;
	}
	return 0;
}

/* HBase's truncate (disable, drop, create with the same schema) and,
 * with preserve, truncate_preserve (the same region boundaries): the
 * table's data goes; its families, their settings and its access
 * (chmod, chown) stay.  As in HBase, not one atomic step: a crash between
 * the drop and the create leaves no table (the schema is logged first,
 * so that it can be made again). */
static int truncate_table(cf_db *db, const char *table, int preserve,
			  const char **why)
{
	struct acc_find af = { table, { 0, 0, 0 }, 0 };
	struct cf_region_info *r = NULL;
	struct cf_family *fams = NULL;
	struct buf sch = BUF_INIT;
	size_t nf = 0, nr = 0;
	cf_table *t;
	int rc;

	if ((rc = cf_table_open(db, table, &t)))
		return rc;
	rc = cf_table_schema(t, &fams, &nf);
	if (!rc && preserve)
		rc = cf_table_regions(t, &r, &nr);
	cf_table_close(t);
	if (!rc)
		rc = cf_db_access_list(db, acc_one, &af);
	for (size_t i = 0; !rc && i < nf; i++)
		if ((rc = cf_family_format(&fams[i], &sch)) == CF_OK &&
		    i + 1 < nf)
			rc = buf_append(&sch, "; ", 2);
	if (!rc) {
		cf_log(CF_LOG_INFO, "truncate %s: schema %.*s", table,
		       (int)sch.len, (const char *)sch.p);
		rc = cf_table_drop(db, table, 0);
	}
	if (!rc) {
		fs_table_changed(table, 1);
		rc = cf_table_create(db, table, fams, nf);
		if (rc)
			*why = "the table was dropped and not made again";
	}
	if (!rc && nr > 1 && (rc = cf_table_open(db, table, &t)) == CF_OK) {
		/* the old regions' start keys, in order */
		for (size_t i = 1; !rc && i < nr; i++)
			rc = cf_table_split(t, r[i].start, r[i].startlen);
		cf_table_close(t);
	}
	if (!rc && af.found) {
		mode_t mode = (mode_t)af.a.mode;
		uid_t uid = (uid_t)af.a.uid;
		gid_t gid = (gid_t)af.a.gid;
		if (fs_perm_set(table, &mode, &uid, &gid, why))
			rc = CF_EIO;
	}
	if (!rc)
		fs_table_changed(table, 0);
	cf_regions_free(r, nr);
	free(fams);
	buf_release(&sch);
	return rc;
}

static int ctl_word(cf_db *db, enum fs_ctl which, const char *table,
		    const char *w, size_t len, const char **why)
{
	struct buf key = BUF_INIT;
	cf_table *t = NULL;
	int rc;

#define IS(s) (len == sizeof(s) - 1 && !memcmp(w, s, len))
	if (which == FS_ROOT_CTL) {
		if (IS("flush"))
			return cf_db_flush(db);
		if (IS("sync"))
			return cf_db_sync(db);
		if (IS("compact"))
			return cf_db_compact(db, 0);
		if (IS("major_compact"))
			return cf_db_compact(db, 1);
		*why = "unknown control word (flush, sync, compact)";
		return CF_EINVAL;
	}
	if (IS("truncate") || IS("truncate_preserve"))
		return truncate_table(db, table, len > 8, why);
	if (IS("drop")) {
		rc = cf_table_drop(db, table, 0);
		if (!rc)
			fs_table_changed(table, 1);
		return rc;
	}
	rc = cf_table_open(db, table, &t);
	if (rc)
		return rc;
	if (IS("flush"))
		rc = cf_table_flush(t);
	else if (IS("compact"))
		rc = cf_table_compact(t, 0);
	else if (IS("major_compact"))
		rc = cf_table_compact(t, 1);
	else if (IS("split"))
		rc = cf_table_split(t, NULL, 0);
	else if (len > 6 && !memcmp(w, "split ", 6)) {
		rc = cf_unescape(w + 6, len - 6, &key);
		if (rc)
			*why = "malformed escape in split key";
		else
			rc = cf_table_split(t, key.p, key.len);
	} else if (len > 6 && !memcmp(w, "merge ", 6)) {
		/* HBase's merge_region: the region starting at KEY and
		 * the one before it */
		rc = cf_unescape(w + 6, len - 6, &key);
		if (rc)
			*why = "malformed escape in merge key";
		else
			rc = fs_merge_region(t, table, &key, why);
	} else {
		*why = "unknown control word (flush, compact, "
		       "major_compact, split [KEY], merge KEY, truncate, "
		       "truncate_preserve, drop)";
		rc = CF_EINVAL;
	}
#undef IS
	buf_release(&key);
	cf_table_close(t);
	return rc;
}

int fs_merge_region(cf_table *t, const char *table, const struct buf *key,
		    const char **why)
{
	int rc = cf_table_merge(t, key->p, key->len);

	if (rc == CF_EINVAL)
		*why = "the first region has no region before it to merge "
		       "with";
	else if (rc == CF_ENOTFOUND)
		*why = "no region starts at the key";
	else if (rc == CF_EBUSY)
		*why = "the regions kept taking writes through three "
		       "flushes; try again";
	if (!rc)	/* the region names changed */
		fs_table_changed(table, 0);
	return rc;
}

int fs_control_write(cf_db *db, enum fs_ctl which, const char *table,
		     const char *p, size_t len, const char **why)
{
	cf_table *t;
	size_t i = 0, j;
	int rc = 0;

	*why = "";
	if (which == FS_BATCH) {
		rc = cf_table_open(db, table, &t);
		if (rc)
			return rc;
		rc = fs_batch_write(t, p, len, why);
		cf_table_close(t);
		return rc;
	}
	if (which != FS_ROOT_CTL && which != FS_TCTL) {
		*why = "read-only file";
		return CF_EINVAL;
	}
	while (!rc && i < len) {
		for (j = i; j < len && p[j] != '\n'; j++)
			;
		if (j > i)
			rc = ctl_word(db, which, table, p + i, j - i, why);
		i = j + 1;
	}
	if (rc && !**why)
		*why = cf_strerror(rc);
	return rc;
}
