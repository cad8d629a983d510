/*
 * scan_bench.c: a full-table scan through the engine and through the
 * mount's scan file (T/.scan/all), small cells.
 *
 *   scan_bench [-n CELLS] [-v BYTES] [-c RATIO] [-r ROUNDS] [-b READ]
 *              [-o OPTS] CELLFS_BINARY DIR
 *
 * Loads CELLS rows of one cell of BYTES (default 200000 of 16) into
 * DIR/data through the engine (values cut from tests/bench/values.h's
 * pool as db_bench cuts them: compression ratio RATIO, default 0.5;
 * -c 0: every value BYTES of 'v', the input of the figures before
 * 2026-11-29), flushes and compacts them, copies DIR/data
 * to DIR/engine, opens that copy in this process and mounts DIR/data at
 * DIR/mnt with CELLFS_BINARY (given -o OPTS, the mount's options: io_uring
 * for tests/bench/fuse_uring.sh).  Each of ROUNDS (default 3) then times a
 * scan of every row with cf_scan_next, reading DIR/mnt/s/.scan/all to
 * its end in reads of READ bytes (default 128 KiB, cat's; counting its
 * lines), making the same bytes with fs/scan.c in this thread, without
 * FUSE (the split of the mount's cost: fs/scan.c's lines and chunks,
 * then FUSE's requests and replies; the line count is left out of its
 * time), and the same reversed
 * (HBase REVERSED => true; cf_scan_opts.reversed, T/.scan/reversed):
 * engine and mount take turns, so a load that comes and goes on a shared
 * machine falls on both.  Prints the best cells/s of each, the ratios
 * mount / engine, and the CPU time per cell (a cost that other load
 * changes less), of the round that took the least: the engine loop's
 * thread; the daemon's (all its threads) and the reading thread's for
 * the mount; and the ratio of engine to daemon CPU.  A measurement,
 * not a test; DIR must not be mounted.
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
#include "fs/scan.h"
#include "values.h"

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

/* The CPU seconds process pid has used, all its threads (also those
 * that ended), to the nanosecond (/proc's ticks are too coarse for a
 * round). */
static double proc_cpu_s(pid_t pid)
{
	clockid_t c;

	if (clock_getcpuclockid(pid, &c))
		return 0;
	return cpu_s(c);
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "scan_bench: %s: %s\n", what,
		rc ? cf_strerror(rc) : strerror(errno));
	exit(1);
}

static void load(cf_db *db, uint64_t n, size_t vbytes, double ratio)
{
	struct cf_family f;
	cf_table *t;
	cf_batch *b;
	char row[32], *val = malloc(vbytes);
	uint64_t i;
	int rc;

	if (ratio > 0)
		bench_values_init_ratio(ratio);
	memset(val, 'v', vbytes);
	cf_family_default(&f, "cf");
	if ((rc = cf_table_create(db, "s", &f, 1)) ||
	    (rc = cf_table_open(db, "s", &t)) || (rc = cf_batch_new(&b)))
		die("create", rc);
	for (i = 0; i < n; i++) {
		int len = snprintf(row, sizeof row, "r%010" PRIu64, i);
		if (ratio > 0)
			bench_slice(i, val, vbytes);
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
	*cpu = -cpu_s(CLOCK_THREAD_CPUTIME_ID);
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

/* The bytes of T/.scan/all made by fs/scan.c in this thread, without
 * FUSE: reads of rsize bytes, each followed by the production ahead that
 * the daemon's replying thread does (fs_scan_ahead).  *cells: the
 * lines, counted as the mount's reader counts them. */
static double fs_scan(cf_db *db, size_t rsize, uint64_t *cells,
		      double *cpu)
{
	struct iovec iov[FS_SCAN_IOV];
	struct fs_scan *fs;
	uint64_t off = 0;
	size_t got, j;
	double t0, c0, cnt = 0;
	char why[256];
	int niov, i;

	*cells = 0;
	t0 = now_s();
	c0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
	if (fs_scan_open(db, "s", "all", &fs, why, sizeof why))
		die(why, CF_EINVAL);
	do {
		if (fs_scan_read(fs, rsize, off, iov, &niov, &got, why,
				 sizeof why, NULL, NULL))
			die(why, CF_EIO);
		/* the count is the reader's work: not in the time */
		cnt -= cpu_s(CLOCK_THREAD_CPUTIME_ID);
		for (i = 0; i < niov; i++)
			for (j = 0; j < iov[i].iov_len; j++)
				*cells += ((const char *)
					   iov[i].iov_base)[j] == '\n';
		cnt += cpu_s(CLOCK_THREAD_CPUTIME_ID);
		off += got;
		fs_scan_ahead(fs);
	} while (got);
	fs_scan_close(fs);
	*cpu = cpu_s(CLOCK_THREAD_CPUTIME_ID) - c0 - cnt;
	return now_s() - t0 - cnt;
}

/* Reads path to its end; *cells its lines.  cpu[0] gains the CPU time
 * of the daemon pid meanwhile, cpu[1] that of this thread. */
static double mount_scan(const char *path, pid_t pid, size_t rsize,
			 uint64_t *cells, double *cpu)
{
	static char *buf;
	ssize_t got, i;
	uint64_t lines = 0;
	double t0 = now_s(), d0 = proc_cpu_s(pid),
	       r0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
	int fd = open(path, O_RDONLY);

	if (!buf && !(buf = malloc(rsize)))
		die("malloc", CF_ENOMEM);
	if (fd < 0)
		die(path, 0);
	while ((got = read(fd, buf, rsize)) > 0)
		for (i = 0; i < got; i++)
			lines += buf[i] == '\n';
	if (got < 0)
		die(path, 0);
	close(fd);
	t0 = now_s() - t0;
	cpu[0] = proc_cpu_s(pid) - d0;
	cpu[1] = cpu_s(CLOCK_THREAD_CPUTIME_ID) - r0;
	*cells = lines;
	return t0;
}

int main(int argc, char **argv)
{
	struct cf_options o;
	struct statfs sf;
	uint64_t n = 200000, cells;
	size_t vbytes = 16;
	size_t rsize = 128 << 10;
	double ratio = 0.5;
	int rounds = 3, c, i, rc;
	double best_f = 1e9, cpu_f = 1e9, best_e = 1e9, best_m = 1e9, best_er = 1e9, best_mr = 1e9, s;
	double cpu_e = 1e9, cpu_m[2] = { 1e9, 0 }, cpu_er = 1e9,
	       cpu_mr[2] = { 1e9, 0 }, cpu[2];
	char data[4096], edata[4096], mnt[4096], file[4200], rfile[4200];
	const char *mopts = NULL;
	cf_db *db;
	pid_t pid;

	while ((c = getopt(argc, argv, "n:v:c:r:b:o:")) != -1) {
		if (c == 'n')
			n = strtoull(optarg, NULL, 10);
		else if (c == 'v')
			vbytes = strtoul(optarg, NULL, 10);
		else if (c == 'c')
			ratio = strtod(optarg, NULL);
		else if (c == 'r')
			rounds = atoi(optarg);
		else if (c == 'b')
			rsize = strtoul(optarg, NULL, 10);
		else if (c == 'o')
			mopts = optarg;
		else
			return 2;
	}
	if (optind + 2 != argc || !n || rounds < 1 || !rsize ||
	    !vbytes || (ratio > 0 && vbytes > BENCH_POOL) || ratio < 0 ||
	    ratio > 1) {
		fprintf(stderr, "usage: scan_bench [-n CELLS] [-v BYTES] "
			"[-c RATIO] [-r ROUNDS] [-b READ] [-o OPTS] "
			"CELLFS_BINARY DIR\n");
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
	load(db, n, vbytes, ratio);
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
		if (mopts)
			execl(argv[optind], argv[optind], "-f", "-o", mopts,
			      data, mnt, (char *)NULL);
		else
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
	/* the least CPU of the rounds: the one other load disturbed least */
#define LEAST(best, c) ((best) = (c) < (best) ? (c) : (best))
	for (i = 0; i < rounds; i++) {
		s = engine_scan(db, 0, &cells, cpu);
		if (cells != n)
			die("engine scan: wrong count", CF_EINVAL);
		LEAST(best_e, s);
		LEAST(cpu_e, cpu[0]);
		s = mount_scan(file, pid, rsize, &cells, cpu);
		if (cells != n)
			fprintf(stderr, "scan_bench: mount scan: %" PRIu64
				" lines\n", cells);
		LEAST(best_m, s);
		if (cpu[0] < cpu_m[0]) {
			cpu_m[0] = cpu[0];
			cpu_m[1] = cpu[1];
		}
		s = fs_scan(db, rsize, &cells, cpu);
		if (cells != n)
			die("fs_scan: wrong count", CF_EINVAL);
		LEAST(best_f, s);
		LEAST(cpu_f, cpu[0]);
		s = engine_scan(db, 1, &cells, cpu);
		if (cells != n)
			die("engine reversed scan: wrong count", CF_EINVAL);
		LEAST(best_er, s);
		LEAST(cpu_er, cpu[0]);
		s = mount_scan(rfile, pid, rsize, &cells, cpu);
		if (cells != n)
			fprintf(stderr, "scan_bench: mount reversed scan: %"
				PRIu64 " lines\n", cells);
		LEAST(best_mr, s);
		if (cpu[0] < cpu_mr[0]) {
			cpu_mr[0] = cpu[0];
			cpu_mr[1] = cpu[1];
		}
	}
	cf_db_close(db);
	if (fork() == 0) {
		execlp("fusermount3", "fusermount3", "-u", mnt, (char *)NULL);
		_exit(127);
	}
	while (wait(NULL) > 0)
		;
	printf("scan of %" PRIu64 " cells of %zu bytes, %zu-byte reads, "
	       "best of %d\n", n, vbytes, rsize, rounds);
	if (ratio > 0)
		printf("values: db_bench's, compression ratio %.2f\n", ratio);
	else
		printf("values: every byte 'v'\n");
#define NS(c) ((c) * 1e9 / (double)n)
	printf("%-22s %8s %10s %s\n", "", "", "", "CPU ns per cell");
	printf("%-22s %8s %10s %7s %7s\n", "target", "seconds", "cells/s",
	       "daemon", "reader");
	printf("%-22s %8.3f %10.0f %7.0f\n", "engine cf_scan_next", best_e,
	       (double)n / best_e, NS(cpu_e));
	printf("%-22s %8.3f %10.0f %7.0f\n", "fs/scan.c, no FUSE",
	       best_f, (double)n / best_f, NS(cpu_f));
	printf("%-22s %8.3f %10.0f %7.0f %7.0f\n", "mount T/.scan/all",
	       best_m, (double)n / best_m, NS(cpu_m[0]), NS(cpu_m[1]));
	printf("%-22s %8.3f %10.0f %7.0f\n", "engine reversed", best_er,
	       (double)n / best_er, NS(cpu_er));
	printf("%-22s %8.3f %10.0f %7.0f %7.0f\n", "mount .scan/reversed",
	       best_mr, (double)n / best_mr, NS(cpu_mr[0]), NS(cpu_mr[1]));
	printf("%-22s %10s %10s\n", "mount / engine", "cells/s", "CPU");
	printf("%-22s %10.2f %10.2f\n", "forward", best_e / best_m,
	       cpu_e / cpu_m[0]);
	printf("%-22s %10.2f %10.2f\n", "fs/scan.c / engine", best_e / best_f,
	       cpu_e / cpu_f);
	printf("%-22s %10.2f %10.2f\n", "reversed", best_er / best_mr,
	       cpu_er / cpu_mr[0]);
	return 0;
}
