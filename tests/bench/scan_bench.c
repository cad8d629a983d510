/*
 * scan_bench.c: a full-table scan through the engine and through the
 * mount's scan file (T/.scan/all), small cells.
 *
 *   scan_bench [-n CELLS] [-v BYTES] [-r ROUNDS] CELLFS_BINARY DIR
 *
 * Loads CELLS rows of one cell of BYTES (default 200000 of 16) into
 * DIR/data through the engine, flushes and compacts them, copies DIR/data
 * to DIR/engine, opens that copy in this process and mounts DIR/data at
 * DIR/mnt with CELLFS_BINARY.  Each of ROUNDS (default 3) then times a
 * scan of every row with cf_scan_next, reading DIR/mnt/s/.scan/all to
 * its end in 128 KiB reads (counting its lines), and the same reversed
 * (HBase REVERSED => true; cf_scan_opts.reversed, T/.scan/reversed):
 * engine and mount take turns, so a load that comes and goes on a shared
 * machine falls on both.  Prints the best cells/s of each, the ratios
 * mount / engine, and the CPU time per cell (a cost that other load
 * changes less): the engine loop's thread; the daemon's and the reading
 * thread's for the mount.  A measurement, not a test; DIR must not
 * be mounted.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

static double cpu_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The CPU seconds process pid has used (utime + stime). */
static double proc_cpu_s(pid_t pid)
{
	char path[64], line[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
	fclose(f);
	/* after "pid (comm)": state and 10 fields, then utime stime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
			 "%*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
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

static double engine_scan(cf_db *db, int reversed, uint64_t *cells,
			  double *cpu)
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
	*cpu -= cpu_s(CLOCK_THREAD_CPUTIME_ID);
	if ((rc = cf_scan_open(t, &o, &s)))
		die("scan", rc);
	while (!(rc = cf_scan_next(s, &r)) && r)
		*cells += cf_row_count(r);
	if (rc)
		die("scan", rc);
	cf_scan_close(s);
	t0 = now_s() - t0;
	*cpu += cpu_s(CLOCK_THREAD_CPUTIME_ID);
	cf_table_close(t);
	return t0;
}

/* Reads path to its end; *cells its lines.  cpu[0] gains the CPU time
 * of the daemon pid meanwhile, cpu[1] that of this thread. */
static double mount_scan(const char *path, pid_t pid, uint64_t *cells,
			 double *cpu)
{
	static char buf[128 << 10];
	ssize_t got, i;
	uint64_t lines = 0;
	double t0 = now_s(), d0 = proc_cpu_s(pid),
	       r0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		die(path, 0);
	while ((got = read(fd, buf, sizeof buf)) > 0)
		for (i = 0; i < got; i++)
			lines += buf[i] == '\n';
	if (got < 0)
		die(path, 0);
	close(fd);
	t0 = now_s() - t0;
	cpu[0] += proc_cpu_s(pid) - d0;
	cpu[1] += cpu_s(CLOCK_THREAD_CPUTIME_ID) - r0;
	*cells = lines;
	return t0;
}

int main(int argc, char **argv)
{
	struct cf_options o;
	struct statfs sf;
	uint64_t n = 200000, cells;
	size_t vbytes = 16;
	int rounds = 3, c, i, rc;
	double best_e = 1e9, best_m = 1e9, best_er = 1e9, best_mr = 1e9, s;
	double cpu_e = 0, cpu_m[2] = { 0, 0 }, cpu_er = 0, cpu_mr[2] = { 0, 0 };
	char data[4096], edata[4096], mnt[4096], file[4200], rfile[4200];
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
	snprintf(edata, sizeof edata, "%s/engine", argv[optind + 1]);
	snprintf(mnt, sizeof mnt, "%s/mnt", argv[optind + 1]);
	snprintf(file, sizeof file, "%s/s/.scan/all", mnt);
	snprintf(rfile, sizeof rfile, "%s/s/.scan/reversed", mnt);
	mkdir(argv[optind + 1], 0755);
	mkdir(mnt, 0755);
	cf_options_default(&o);
	if ((rc = cf_db_open(data, &o, &db)))
		die("open", rc);
	load(db, n, vbytes);
	cf_db_close(db);
	pid = fork();
	if (pid == 0) {
		execlp("cp", "cp", "-a", data, edata, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &c, 0) != pid || c != 0)
		die("cp", CF_EIO);
	if ((rc = cf_db_open(edata, &o, &db)))
		die("open", rc);

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
		s = engine_scan(db, 0, &cells, &cpu_e);
		if (cells != n)
			die("engine scan: wrong count", CF_EINVAL);
		best_e = s < best_e ? s : best_e;
		s = mount_scan(file, pid, &cells, cpu_m);
		if (cells != n)
			fprintf(stderr, "scan_bench: mount scan: %" PRIu64
				" lines\n", cells);
		best_m = s < best_m ? s : best_m;
		s = engine_scan(db, 1, &cells, &cpu_er);
		if (cells != n)
			die("engine reversed scan: wrong count", CF_EINVAL);
		best_er = s < best_er ? s : best_er;
		s = mount_scan(rfile, pid, &cells, cpu_mr);
		if (cells != n)
			fprintf(stderr, "scan_bench: mount reversed scan: %"
				PRIu64 " lines\n", cells);
		best_mr = s < best_mr ? s : best_mr;
	}
	cf_db_close(db);
	if (fork() == 0) {
		execlp("fusermount3", "fusermount3", "-u", mnt, (char *)NULL);
		_exit(127);
	}
	while (wait(NULL) > 0)
		;
	printf("scan of %" PRIu64 " cells of %zu bytes, best of %d\n", n,
	       vbytes, rounds);
#define NS(c) ((c) * 1e9 / rounds / (double)n)
	printf("%-22s %8s %10s %s\n", "", "", "", "CPU ns per cell");
	printf("%-22s %8s %10s %7s %7s\n", "target", "seconds", "cells/s",
	       "daemon", "reader");
	printf("%-22s %8.3f %10.0f %7.0f\n", "engine cf_scan_next", best_e,
	       (double)n / best_e, NS(cpu_e));
	printf("%-22s %8.3f %10.0f %7.0f %7.0f\n", "mount T/.scan/all",
	       best_m, (double)n / best_m, NS(cpu_m[0]), NS(cpu_m[1]));
	printf("%-22s %8.3f %10.0f %7.0f\n", "engine reversed", best_er,
	       (double)n / best_er, NS(cpu_er));
	printf("%-22s %8.3f %10.0f %7.0f %7.0f\n", "mount .scan/reversed",
	       best_mr, (double)n / best_mr, NS(cpu_mr[0]), NS(cpu_mr[1]));
	printf("%-22s %10.2f\n", "mount / engine", best_e / best_m);
	printf("%-22s %10.2f\n", "reversed: mount/engine", best_er / best_mr);
	return 0;
}
