/*
 * test-engine-corrupt: a flipped byte in a store file or in a WAL record
 * is reported as an error (CF_ECORRUPT), never returned as data; a store
 * file cut short while open fails the reads that need the lost part
 * (CF_EIO) and nothing else.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/cellfs.h"
#include "engine/wal.h"
#include "util/log.h"
#include "tests/tap.h"

#define ROWS 3000

static const char *dir;

static void value_of(int i, char *v, size_t *n)
{
	*n = (size_t)snprintf(v, 64, "value-%06d-%s", i,
			      "padding-padding-padding-padding");
}

static long file_size(const char *p)
{
	struct stat st;
	return stat(p, &st) ? -1 : (long)st.st_size;
}

/* Where the records of WAL segment p end. */
static long wal_end(const char *p)
{
	struct wal_reader *r;
	const void *rec;
	size_t n;
	long end;

	if (wal_reader_open(p, &r))
		return -1;
	while (wal_reader_next(r, &rec, &n) == CF_OK && rec)
		;
	end = (long)wal_reader_valid_end(r);
	wal_reader_close(r);
	return end;
}

/* Finds the largest file under root whose name ends with suffix. */
static int find_file(const char *root, const char *suffix, char *out,
		     size_t outsz)
{
	DIR *d = opendir(root);
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		char path[4096];
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", root, e->d_name);
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			found = find_file(path, suffix, out, outsz);
		else if (strlen(e->d_name) > strlen(suffix) &&
			 strcmp(e->d_name + strlen(e->d_name) - strlen(suffix),
				suffix) == 0 && st.st_size > 0) {
			/* the largest such file */
			if (!out[0] || st.st_size > file_size(out))
				snprintf(out, outsz, "%s", path);
		}
	}
	closedir(d);
	return found || out[0];
}


static void flip(const char *path, long off)
{
	FILE *f = fopen(path, "r+b");
	int c;

	if (!f)
		bail("cannot open %s", path);
	fseek(f, off, SEEK_SET);
	c = fgetc(f);
	fseek(f, off, SEEK_SET);
	fputc(c ^ 0x5a, f);
	fclose(f);
}

static void copy_file(const char *from, const char *to)
{
	char cmd[9000];
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
	if (system(cmd))
		bail("cp");
}

/* Reads every row (o NULL: the whole row; else o's columns): counts
 * good, corrupt-error and wrong answers. */
static void read_all_opts(cf_table *t, const struct cf_read_opts *o,
			  int *good, int *errs, int *wrong)
{
	*good = *errs = *wrong = 0;
	for (int i = 0; i < ROWS; i++) {
		char k[32], v[64];
		size_t vl;
		cf_row *r;
		int rc;
		snprintf(k, sizeof k, "row%06d", i);
		value_of(i, v, &vl);
		rc = cf_table_get(t, k, strlen(k), o, &r);
		if (rc == CF_ECORRUPT) {
			(*errs)++;
			continue;
		}
		if (rc == CF_OK && cf_row_count(r) == 1 &&
		    cf_row_cell(r, 0)->vlen == vl &&
		    memcmp(cf_row_cell(r, 0)->val, v, vl) == 0)
			(*good)++;
		else
			(*wrong)++;
		if (rc == CF_OK)
			cf_row_free(r);
	}
}

static void read_all(cf_table *t, int *good, int *errs, int *wrong)
{
	read_all_opts(t, NULL, good, errs, wrong);
}

static void write_rows(cf_table *t, int from, int to)
{
	cf_batch *b;
	cf_batch_new(&b);
	for (int i = from; i < to; i++) {
		char k[32], v[64];
		size_t vl;
		snprintf(k, sizeof k, "row%06d", i);
		value_of(i, v, &vl);
		cf_batch_clear(b);
		cf_batch_put(b, k, strlen(k), "f", 1, "q", 1, CF_TS_NOW, v, vl);
		if (cf_table_apply(t, b))
			bail("write");
	}
	cf_batch_free(b);
}

int main(void)
{
	struct cf_options o;
	struct cf_family f;
	cf_db *db;
	cf_table *t;
	char sst[4096] = "", saved[4200], wal[4096] = "";
	char first_saved[4200];
	int good, errs, wrong, rc;

	plan(20);
	dir = tap_tmpdir("corrupt");
	cf_options_default(&o);
	o.background = 0;
	cf_family_default(&f, "f");
	f.compression = CF_COMPRESS_NONE;
	f.blocksize = 4096;
	if (cf_db_open(dir, &o, &db) || cf_table_create(db, "t", &f, 1) ||
	    cf_table_open(db, "t", &t))
		bail("setup");
	write_rows(t, 0, ROWS);
	cf_table_flush(t);
	cf_table_close(t);
	cf_db_close(db);
	ok(find_file(dir, ".sst", sst, sizeof sst), "a store file exists");
	snprintf(saved, sizeof saved, "%s-sst.orig", dir);
	copy_file(sst, saved);

	/* a data block */
	flip(sst, file_size(sst) / 3);
	rc = cf_db_open(dir, &o, &db);
	is_int(rc, CF_OK, "a damaged data block does not stop the open");
	cf_table_open(db, "t", &t);
	read_all(t, &good, &errs, &wrong);
	ok(errs > 0, "reads in the damaged block fail CF_ECORRUPT (%d)", errs);
	is_int(wrong, 0, "no read returns wrong data");
	ok(good > ROWS / 2, "the other rows still read (%d)", good);
	{
		/* the newest-first Get of a named column, too */
		struct cf_column c = { "f", 1, "q", 1 };
		struct cf_read_opts ro = CF_READ_OPTS_INIT;
		int g2, e2, w2;
		ro.columns = &c;
		ro.ncolumns = 1;
		read_all_opts(t, &ro, &g2, &e2, &w2);
		/* the same rows, but for the row whose cells end right
		 * before the damaged block: a whole-row read steps into
		 * the block to see the row end, a Get of its one column
		 * stops at the column's newest cell */
		ok(e2 >= errs - 1 && e2 <= errs && g2 + e2 == good + errs,
		   "column Gets fail on the same rows (%d errors of %d)",
		   e2, errs);
		is_int(w2, 0, "and no column Get returns wrong data");
	}
	{
		struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };
		cf_scanner *s;
		const cf_row *row;
		int n = 0;
		cf_scan_open(t, &so, &s);
		while ((rc = cf_scan_next(s, &row)) == CF_OK && row)
			n++;
		cf_scan_close(s);
		is_int(rc, CF_ECORRUPT, "a scan over it fails (after %d rows)",
		       n);
		so.reversed = 1;
		n = 0;
		cf_scan_open(t, &so, &s);
		while ((rc = cf_scan_next(s, &row)) == CF_OK && row)
			n++;
		cf_scan_close(s);
		is_int(rc, CF_ECORRUPT, "a reversed scan over it fails too "
		       "(after %d rows)", n);
	}
	cf_table_close(t);
	cf_db_close(db);

	/* the footer */
	copy_file(saved, sst);
	flip(sst, file_size(sst) - 3);
	rc = cf_db_open(dir, &o, &db);
	is_int(rc, CF_OK, "a damaged footer does not stop the open");
	cf_table_open(db, "t", &t);
	read_all(t, &good, &errs, &wrong);
	ok(errs == ROWS && wrong == 0,
	   "every read needing the file fails, none is wrong (%d errors)",
	   errs);
	{
		struct buf b = BUF_INIT;
		cf_log_dump(&b);
		buf_putc(&b, 0);
		ok(strstr((const char *)b.p, ".sst") != NULL,
		   "the log names the file");
		buf_release(&b);
	}
	cf_table_close(t);
	cf_db_close(db);
	copy_file(saved, sst);

	/* a store file cut short while open: its blocks are read through a
	 * mapping (util/env.h), where the missing pages raise SIGBUS; the
	 * reads that need them fail CF_EIO, the others still read */
	rc = cf_db_open(dir, &o, &db);
	cf_table_open(db, "t", &t);
	if (truncate(sst, file_size(sst) / 2))
		bail("truncate");
	{
		int eio = 0;
		good = wrong = 0;
		for (int i = 0; i < ROWS; i++) {
			char k[32], v[64];
			size_t vl;
			cf_row *r;
			snprintf(k, sizeof k, "row%06d", i);
			value_of(i, v, &vl);
			rc = cf_table_get(t, k, strlen(k), NULL, &r);
			if (rc == CF_EIO) {
				eio++;
				continue;
			}
			if (rc == CF_OK && cf_row_count(r) == 1 &&
			    cf_row_cell(r, 0)->vlen == vl &&
			    memcmp(cf_row_cell(r, 0)->val, v, vl) == 0)
				good++;
			else
				wrong++;
			if (rc == CF_OK)
				cf_row_free(r);
		}
		ok(eio > ROWS / 3, "reads past the cut fail CF_EIO (%d), "
		   "the process lives", eio);
		ok(good > ROWS / 3, "rows before it still read (%d)", good);
		is_int(wrong, 0, "no read returns wrong data or another error");
	}
	cf_table_close(t);
	cf_db_close(db);
	copy_file(saved, sst);

	/* the WAL: a child writes and dies without closing */
	{
		pid_t pid = fork();
		int status;
		if (pid == 0) {
			o.sync_mode = CF_SYNC_NONE;
			if (cf_db_open(dir, &o, &db) ||
			    cf_table_open(db, "t", &t))
				_exit(2);
			write_rows(t, ROWS, ROWS + 200);
			_exit(0);
		}
		waitpid(pid, &status, 0);
	}
	ok(find_file(dir, ".log", wal, sizeof wal), "a WAL segment exists");
	snprintf(saved, sizeof saved, "%s-wal.orig", dir);
	copy_file(wal, saved);
	/* by its records, not its size: a segment left open may end in
	 * zeros (docs/wal_format.md, "Preallocation") */
	flip(wal, wal_end(wal) / 2);
	rc = cf_db_open(dir, &o, &db);
	is_int(rc, CF_ECORRUPT, "a damaged WAL record refuses the open");
	if (rc == CF_OK)
		cf_db_close(db);
	copy_file(saved, wal);
	flip(wal, wal_end(wal) - 2);
	rc = cf_db_open(dir, &o, &db);
	is_int(rc, CF_OK, "a damaged last record is a torn tail");
	if (rc == CF_OK) {
		int n = 0, bad = 0;
		cf_table_open(db, "t", &t);
		for (int i = ROWS; i < ROWS + 200; i++) {
			char k[32], v[64];
			size_t vl;
			cf_row *r;
			snprintf(k, sizeof k, "row%06d", i);
			value_of(i, v, &vl);
			if (cf_table_get(t, k, strlen(k), NULL, &r)) {
				bad++;
				continue;
			}
			if (cf_row_count(r) == 1 &&
			    memcmp(cf_row_cell(r, 0)->val, v, vl) == 0)
				n++;
			else if (cf_row_count(r))
				bad++;
			cf_row_free(r);
		}
		is_int(n, 199, "all records before it replay");
		is_int(bad, 0, "nothing wrong is returned");
		cf_table_close(t);
		cf_db_close(db);
	}
	unlink(saved);
	snprintf(first_saved, sizeof first_saved, "%s-sst.orig", dir);
	unlink(first_saved);
	tap_rmdir(dir);
	cf_log_release();
	return done_testing();
}
