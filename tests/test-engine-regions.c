/*
 * test-engine-regions: a table written with a small split_size ends in
 * many regions, every row readable once and only once and scans ordered
 * across boundaries; manual splits; cellfs-fsck's check (clean, a damaged
 * store file named, an unknown file) and repair (the catalog deleted and
 * rebuilt from the region directories with every cell back, WAL edits
 * included).
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/cellfs.h"
#include "util/log.h"
#include "tests/regions.h"
#include "tests/tap.h"

#define ROWS 20000

static const char *dir;

static size_t nregions(cf_table *t)
{
	struct cf_region_info *ri;
	size_t n = 0;
	cf_table_regions(t, &ri, &n);
	cf_regions_free(ri, n);
	return n;
}

static int find_sst(const char *root, char *out, size_t outsz)
{
	DIR *d = opendir(root);
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		char p[4096];
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s", root, e->d_name);
		if (stat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			found = find_sst(p, out, outsz);
		else if (strstr(e->d_name, ".sst") && st.st_size > 4096) {
			snprintf(out, outsz, "%s", p);
			found = 1;
		}
	}
	closedir(d);
	return found;
}

/* XORs the byte at off of path with 0x55 (pread and pwrite: stdio's
 * read-then-write on one stream needs a seek between them). */
static void flip_byte(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	unsigned char c;

	if (fd < 0 || pread(fd, &c, 1, off) != 1)
		bail("cannot read %s", path);
	c ^= 0x55;
	if (pwrite(fd, &c, 1, off) != 1 || close(fd))
		bail("cannot damage %s", path);
}

int main(void)
{
	struct cf_options o;
	struct cf_family f;
	cf_db *db;
	cf_table *t;
	cf_batch *b;
	unsigned problems;
	char path[4200];
	size_t n;

	plan(24);
	dir = tap_tmpdir("regions");
	cf_options_default(&o);
	o.flush_size = 256 << 10;
	o.split_size = 512 << 10;
	cf_family_default(&f, "f");
	if (cf_db_open(dir, &o, &db) || cf_table_create(db, "t", &f, 1) ||
	    cf_table_open(db, "t", &t))
		bail("setup");
	/* random order, so every region takes writes while others split */
	cf_batch_new(&b);
	for (int i = 0; i < ROWS; i++) {
		int k = (int)(((uint64_t)i * 7919) % ROWS);
		char key[32], v[160];
		size_t vl;
		snprintf(key, sizeof key, "row%06d", k);
		value_of(k, v, &vl);
		cf_batch_clear(b);
		cf_batch_put(b, key, strlen(key), "f", 1, "q", 1, CF_TS_NOW, v,
			     vl);
		if (cf_table_apply(t, b))
			bail("write %d", i);
	}
	cf_batch_free(b);
	cf_table_flush(t);
	for (int i = 0; i < 300 && nregions(t) < 4; i++)
		usleep(100000);	/* the background splits (a daughter is
				   compacted before it splits again) */
	n = nregions(t);
	ok(n >= 4, "a small split_size made many regions (%zu)", n);
	ok(check_all(t, ROWS, "after splits"),
	   "every row once, in order, across regions");
	cf_table_compact(t, 1);
	ok(check_all(t, ROWS, "after major compaction"),
	   "and after major compaction of the daughters");

	/* manual splits, with no background split to race the count */
	cf_table_close(t);
	cf_db_close(db);
	{
		unsigned debris = 99;
		said[0] = 0;
		is_int(cf_check(dir, 0, say, NULL, &problems, &debris), CF_OK,
		       "fsck after the splits and a clean close");
		ok(problems == 0 && debris == 0, "no debris: the split "
		   "parents the daughters' compaction freed are gone "
		   "(%u problems, %u debris)", problems, debris);
		if (problems || debris)
			diag("%s", said);
	}
	o.background = 0;
	if (cf_db_open(dir, &o, &db) || cf_table_open(db, "t", &t))
		bail("reopen");
	{
		size_t before = nregions(t);
		is_int(cf_table_split(t, "row012345", 9), CF_OK,
		       "a manual split at a key");
		is_int(nregions(t), before + 1, "adds one region");
		is_int(cf_table_split(t, "row012345", 9), CF_EEXIST,
		       "a second split at the same key is EEXIST");
		ok(check_all(t, ROWS, "after a manual split"), "rows unchanged");
	}
	cf_table_close(t);
	cf_db_close(db);

	/* --- fsck: clean ---------------------------------------------- */
	said[0] = 0;
	is_int(cf_check(dir, 0, say, NULL, &problems, NULL), CF_OK, "fsck runs");
	is_int(problems, 0, "a healthy directory has no problem");
	if (problems)
		diag("%s", said);

	/* --- the catalog lost: rebuilt from region directories -------- */
	/* a few writes only in the WAL (the child dies without closing) */
	{
		pid_t pid = fork();
		int st;
		if (pid == 0) {
			struct cf_options oo = o;
			oo.sync_mode = CF_SYNC_NONE;
			oo.background = 0;
			if (cf_db_open(dir, &oo, &db) ||
			    cf_table_open(db, "t", &t))
				_exit(2);
			cf_batch_new(&b);
			for (int i = ROWS; i < ROWS + 100; i++) {
				char key[32], v[160];
				size_t vl;
				snprintf(key, sizeof key, "row%06d", i);
				value_of(i, v, &vl);
				cf_batch_clear(b);
				cf_batch_put(b, key, strlen(key), "f", 1, "q", 1,
					     CF_TS_NOW, v, vl);
				cf_table_apply(t, b);
			}
			_exit(0);
		}
		waitpid(pid, &st, 0);
	}
	snprintf(path, sizeof path, "%s/catalog.db", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/catalog.db-wal", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/catalog.db-shm", dir);
	unlink(path);
	said[0] = 0;
	cf_check(dir, 0, say, NULL, &problems, NULL);
	ok(problems > 0 && strstr(said, "catalog is missing"),
	   "fsck reports the missing catalog");
	said[0] = 0;
	is_int(cf_check(dir, 1, say, NULL, &problems, NULL), CF_OK, "fsck --repair");
	said[0] = 0;
	cf_check(dir, 0, say, NULL, &problems, NULL);
	is_int(problems, 0, "after the repair fsck is clean");
	if (problems)
		diag("%s", said);
	o.background = 0;
	if (cf_db_open(dir, &o, &db) || cf_table_open(db, "t", &t))
		bail("open after repair");
	ok(check_all(t, ROWS + 100, "after catalog rebuild"),
	   "every cell is back, the WAL's too");
	ok(nregions(t) >= 5, "with its regions (%zu)", nregions(t));
	cf_table_close(t);
	cf_db_close(db);

	/* --- a gap between regions in the catalog --------------------- */
	{
		char cmd[4400];
		snprintf(cmd, sizeof cmd, "sqlite3 '%s/catalog.db' \"UPDATE "
			 "regions SET start = X'726f773031' WHERE id = (SELECT "
			 "id FROM regions WHERE length(start) > 0 ORDER BY "
			 "start LIMIT 1)\"", dir);
		is_int(system(cmd), 0, "damage the catalog's region map");
		said[0] = 0;
		cf_check(dir, 0, say, NULL, &problems, NULL);
		ok(problems > 0 && (strstr(said, "a gap") ||
				    strstr(said, "an overlap")),
		   "fsck reports the gap or overlap");
		cf_check(dir, 1, say, NULL, &problems, NULL);
		said[0] = 0;
		cf_check(dir, 0, say, NULL, &problems, NULL);
		is_int(problems, 0, "repair rebuilds a consistent map");
		if (cf_db_open(dir, &o, &db) || cf_table_open(db, "t", &t))
			bail("open after repair");
		ok(check_all(t, ROWS + 100, "after region map repair"),
		   "with every cell");
		cf_table_close(t);
		cf_db_close(db);
	}

	/* --- a damaged store file ------------------------------------- */
	{
		char sst[4096] = "";
		snprintf(path, sizeof path, "%s/data", dir);
		ok(find_sst(path, sst, sizeof sst), "a store file to damage");
		flip_byte(sst, 100);
		said[0] = 0;
		cf_check(dir, 0, say, NULL, &problems, NULL);
		ok(problems > 0 && strstr(said, sst) &&
		   strstr(said, "checksum mismatch"),
		   "fsck names the damaged file and why");
		if (!strstr(said, sst))
			diag("%s", said);
	}
	/* --- an unknown file ----------------------------------------- */
	{
		char sst[4096] = "", stray[4200];
		snprintf(path, sizeof path, "%s/data", dir);
		find_sst(path, sst, sizeof sst);
		snprintf(stray, sizeof stray, "%s", sst);
		strcpy(strrchr(stray, '/') + 1, "00000000deadbeef.sst");
		FILE *fp = fopen(stray, "w");
		fputs("junk", fp);
		fclose(fp);
		said[0] = 0;
		cf_check(dir, 0, say, NULL, &problems, NULL);
		ok(strstr(said, "deadbeef") != NULL, "fsck reports a stray file");
		said[0] = 0;
		cf_check(dir, 1, say, NULL, &problems, NULL);
		snprintf(path, sizeof path, "%s/lost+found", dir);
		if (!ok(access(stray, F_OK) != 0 && access(path, F_OK) == 0,
			"repair removes it (debris, or moved to lost+found)"))
			diag("stray %s: %s; lost+found: %s; repair said:\n%s",
			     stray, access(stray, F_OK) ? "gone" : "still there",
			     access(path, F_OK) ? "missing" : "there", said);
	}
	tap_rmdir(dir);
	cf_log_release();
	return done_testing();
}
