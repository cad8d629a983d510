/*
 * scan_bench.c: a full-table scan through the engine and through the
 * mount's scan file (T/.scan/all), small cells.
 *
 *   scan_bench [-n CELLS] [-v BYTES] [-r ROUNDS] CELLFS_BINARY DIR
 *
 * Loads CELLS rows of one cell of BYTES (default 200000 of 16) into
 * DIR/data through the engine, flushes them, and times (best of ROUNDS,
 * default 3) a scan of every row with cf_scan_next; then mounts DIR/data
 * at DIR/mnt with CELLFS_BINARY and times reading DIR/mnt/s/.scan/all to
 * its end in 128 KiB reads.  The same for a reversed scan (HBase
 * REVERSED => true; cf_scan_opts.reversed, T/.scan/reversed).  Prints
 * cells/s of each and the ratios mount / engine.  A measurement, not a
 * test; DIR must not be mounted.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/cellfs.h"

#define FUSE_MAGIC 0x65735546

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "scan_bench: %s: %s\n", what,
		rc ? cf_strerror(rc) : strerror(errno));
	exit(1);
}

static void load(cf_db *db, uint64_t n, size_t vbytes)
{
	struct cf_family f;
	cf_table *t;
	cf_batch *b;
	char row[32], *val = malloc(vbytes);
	uint64_t i;
	int rc;

	memset(val, 'v', vbytes);
	cf_family_default(&f, "cf");
	if ((rc = cf_table_create(db, "s", &f, 1)) ||
	    (rc = cf_table_open(db, "s", &t)) || (rc = cf_batch_new(&b)))
		die("create", rc);
	for (i = 0; i < n; i++) {
		int len = snprintf(row, sizeof row, "r%010" PRIu64, i);
		cf_batch_put(b, row, (size_t)len, "cf", 2, "q", 1, 1000,
			     val, vbytes);
		if (cf_batch_count(b) == 1000 || i + 1 == n) {
			if ((rc = cf_table_apply(t, b)))
				die("put", rc);
			cf_batch_clear(b);
		}
	}
	if ((rc = cf_table_flush(t)) || (rc = cf_table_compact(t, 1)))
		die("flush", rc);
	cf_batch_free(b);
	cf_table_close(t);
	free(val);
}

static double engine_scan(cf_db *db, int reversed, uint64_t *cells)
{
	struct cf_scan_opts o;
	const cf_row *r;
	cf_scanner *s;
	cf_table *t;
	double t0;
	int rc;

	memset(&o, 0, sizeof o);
	o.read.max_ts = INT64_MAX;
	o.read.max_versions = 1;
	o.reversed = reversed;
	*cells = 0;
	if ((rc = cf_table_open(db, "s", &t)))
		die("open", rc);
	t0 = now_s();
	if ((rc = cf_scan_open(t, &o, &s)))
		die("scan", rc);
	while (!(rc = cf_scan_next(s, &r)) && r)
		*cells += cf_row_count(r);
	if (rc)
		die("scan", rc);
	cf_scan_close(s);
	t0 = now_s() - t0;
	cf_table_close(t);
	return t0;
}

static double mount_scan(const char *path, uint64_t *cells)
{
	static char buf[128 << 10];
	ssize_t got, i;
	double t0 = now_s();
	int fd = open(path, O_RDONLY);

	*cells = 0;
	if (fd < 0)
		die(path, 0);
	while ((got = read(fd, buf, sizeof buf)) > 0)
		for (i = 0; i < got; i++)
			*cells += buf[i] == '\n';
	if (got < 0)
		die(path, 0);
	close(fd);
	return now_s() - t0;
}

int main(int argc, char **argv)
{
	struct cf_options o;
	struct statfs sf;
	uint64_t n = 200000, cells;
	size_t vbytes = 16;
	int rounds = 3, c, i, rc;
	double best_e = 1e9, best_m = 1e9, best_er = 1e9, best_mr = 1e9, s;
	char data[4096], mnt[4096], file[4200], rfile[4200];
	cf_db *db;
	pid_t pid;

	while ((c = getopt(argc, argv, "n:v:r:")) != -1) {
		if (c == 'n')
			n = strtoull(optarg, NULL, 10);
		else if (c == 'v')
			vbytes = strtoul(optarg, NULL, 10);
		else if (c == 'r')
			rounds = atoi(optarg);
		else
			return 2;
	}
	if (optind + 2 != argc || !n || rounds < 1) {
		fprintf(stderr, "usage: scan_bench [-n CELLS] [-v BYTES] "
			"[-r ROUNDS] CELLFS_BINARY DIR\n");
		return 2;
	}
	snprintf(data, sizeof data, "%s/data", argv[optind + 1]);
	snprintf(mnt, sizeof mnt, "%s/mnt", argv[optind + 1]);
	snprintf(file, sizeof file, "%s/s/.scan/all", mnt);
	snprintf(rfile, sizeof rfile, "%s/s/.scan/reversed", mnt);
	mkdir(argv[optind + 1], 0755);
	mkdir(mnt, 0755);
	cf_options_default(&o);
	if ((rc = cf_db_open(data, &o, &db)))
		die("open", rc);
	load(db, n, vbytes);
	for (i = 0; i < rounds; i++) {
		s = engine_scan(db, 0, &cells);
		if (cells != n)
			die("engine scan: wrong count", CF_EINVAL);
		best_e = s < best_e ? s : best_e;
		s = engine_scan(db, 1, &cells);
		if (cells != n)
			die("engine reversed scan: wrong count", CF_EINVAL);
		best_er = s < best_er ? s : best_er;
	}
	cf_db_close(db);

	pid = fork();
	if (pid == 0) {
		execl(argv[optind], argv[optind], "-f", data, mnt,
		      (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 200; i++) {
		if (!statfs(mnt, &sf) && sf.f_type == FUSE_MAGIC)
			break;
		usleep(50000);
	}
	if (i == 200)
		die("mount", CF_EIO);
	for (i = 0; i < rounds; i++) {
		s = mount_scan(file, &cells);
		if (cells != n)
			fprintf(stderr, "scan_bench: mount scan: %" PRIu64
				" lines\n", cells);
		best_m = s < best_m ? s : best_m;
		s = mount_scan(rfile, &cells);
		if (cells != n)
			fprintf(stderr, "scan_bench: mount reversed scan: %"
				PRIu64 " lines\n", cells);
		best_mr = s < best_mr ? s : best_mr;
	}
	if (fork() == 0) {
		execlp("fusermount3", "fusermount3", "-u", mnt, (char *)NULL);
		_exit(127);
	}
	while (wait(NULL) > 0)
		;
	printf("scan of %" PRIu64 " cells of %zu bytes, best of %d\n", n,
	       vbytes, rounds);
	printf("%-22s %10s %12s\n", "target", "seconds", "cells/s");
	printf("%-22s %10.3f %12.0f\n", "engine cf_scan_next", best_e,
	       (double)n / best_e);
	printf("%-22s %10.3f %12.0f\n", "mount T/.scan/all", best_m,
	       (double)n / best_m);
	printf("%-22s %10.3f %12.0f\n", "engine reversed", best_er,
	       (double)n / best_er);
	printf("%-22s %10.3f %12.0f\n", "mount .scan/reversed", best_mr,
	       (double)n / best_mr);
	printf("%-22s %10.2f\n", "mount / engine", best_e / best_m);
	printf("%-22s %10.2f\n", "reversed: mount/engine", best_er / best_mr);
	return 0;
}
