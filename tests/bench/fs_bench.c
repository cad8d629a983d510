/*
 * fs_bench.c: filesystem operations per second on a directory.
 *
 *   fs_bench [-n CELLS] [-c CELLS_PER_ROW] [-v BYTES] [-l ROWS]
 *            [-m COUNT_1MIB] [-M COUNT_10MIB] [-w WRITERS]
 *            [-W CELLS_PER_WRITER] [-r ROUNDS] [-o RESULTS] [-t NAME]
 *            [-p DAEMON_PID] DIR
 *
 * Works in DIR/bench, made with mkdir (on cellfs a table with family
 * cf), with the same names on every target: rows are directories
 * DIR/bench/ROW, cells files ROW/cf:qN.
 *  - small cells: CELLS cells of BYTES (default 100) in rows of
 *    CELLS_PER_ROW: mkdir of the rows, create+write+close, stat,
 *    open+read to EOF+close, unlink, rmdir of the rows; ops/s with the
 *    p50 and p99 latency of one operation (ROUNDS times; the best round
 *    by ops/s is printed, every round goes to RESULTS);
 *  - WRITERS threads each creating CELLS_PER_WRITER cells in rows of
 *    their own: creates/s of all together;
 *  - 1 MiB and 10 MiB values written (1 MiB write(2) calls) and read
 *    back: MB/s, open and close included;
 *  - a listing of ROWS rows, one cell each: opendir, readdir, lstat of
 *    every entry (what ls -l does), first with the kernel's dentry and
 *    inode caches dropped, then again, then /bin/ls -l; rows/s.  On
 *    cellfs the rows are listed in the region directory DIR/bench/@ and
 *    loaded through DIR/bench/.batch (one put line a row); elsewhere they
 *    are directories made with mkdir (the listing is the same).
 * With -p, the CPU time the FUSE daemon DAEMON_PID spent per small-cell
 * operation (from /proc, 10 ms ticks): less noisy than the rates on a
 * shared machine.  Prints one table; with -o, also "key value" lines for
 * fs_bench.sh's ratio table.  A measurement, not a test.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/bench/values.h"

static const char *dir;		/* DIR/bench */
static size_t vbytes = 100;
static char *value;
/* the listing's rows go in through .batch lines: a value of letters
 * (the pool's bytes would need escaping), which no phase reads back */
static char listing_value[4097];
static FILE *results;
static const char *target = "";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *path)
{
	fprintf(stderr, "fs_bench: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Latencies of one timed loop. */
struct lat {
	double *v;
	size_t n;
	double t0, total;
	double cpu0, cpu;	/* the daemon's CPU seconds (with -p) */
};

static int daemon_pid;

/* CPU seconds the daemon (-p PID) has used, its threads past and present
 * (user and system, clock ticks); 0 without -p. */
static double daemon_cpu(void)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	FILE *f;
	size_t got;

	if (!daemon_pid)
		return 0;
	snprintf(path, sizeof path, "/proc/%d/stat", daemon_pid);
	if (!(f = fopen(path, "r")))
		return 0;
	got = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[got] = 0;
	/* after "(comm) ": state is field 3, utime 14, stime 15 */
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
		   "%llu %llu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static void lat_start(struct lat *l, size_t n)
{
	l->v = malloc((n ? n : 1) * sizeof *l->v);
	if (!l->v)
		die("malloc", "");
	l->n = 0;
	l->cpu0 = daemon_cpu();
	l->t0 = now_s();
}

static void lat_end(struct lat *l)
{
	l->total = now_s() - l->t0;
	l->cpu = daemon_cpu() - l->cpu0;
	qsort(l->v, l->n, sizeof *l->v, cmp_double);
}

static double pct(const struct lat *l, double p)
{
	size_t i = (size_t)(p * (double)l->n);

	if (!l->n)
		return 0;
	return l->v[i < l->n ? i : l->n - 1] * 1e6;
}

static void key(const char *k, double v)
{
	if (results)
		fprintf(results, "%s %.1f\n", k, v);
}

static void line_lat(const char *what, const char *k, const struct lat *l)
{
	double rate = l->n / l->total;

	printf("  %-32s %8zu %11.0f ops/s %9.1f %9.1f", what, l->n, rate,
	       pct(l, 0.50), pct(l, 0.99));
	if (daemon_pid)
		printf(" %9.1f", l->cpu / (double)l->n * 1e6);
	printf("\n");
}

static void line_rate(const char *what, const char *k, size_t n,
		      double secs, const char *unit)
{
	printf("  %-32s %8zu %11.0f %-5s\n", what, n, n / secs, unit);
	key(k, n / secs);
}

static void line_mb(const char *what, const char *k, size_t n,
		    double bytes, double secs)
{
	printf("  %-32s %8zu %11.1f MB/s\n", what, n, bytes / secs / 1e6);
	key(k, bytes / secs / 1e6);
}

/* --- one cell ---------------------------------------------------------- */

static void put_cell(const char *path, const char *v, size_t len,
		     size_t chunk)
{
	size_t off = 0;
	ssize_t w;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		die("create", path);
	while (off < len) {
		w = write(fd, v + off, len - off < chunk ? len - off : chunk);
		if (w <= 0)
			die("write", path);
		off += (size_t)w;
	}
	if (close(fd) != 0)
		die("close", path);
}

/* Reads path to EOF as cat does; returns the byte count. */
static size_t get_cell(const char *path, char *buf, size_t bufsz)
{
	size_t got = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		die("open", path);
	while ((r = read(fd, buf, bufsz)) > 0)
		got += (size_t)r;
	if (r < 0)
		die("read", path);
	close(fd);
	return got;
}

/* --- small cells ------------------------------------------------------- */

static char *cell_path(size_t i, size_t per_row)
{
	static char p[4096];

	snprintf(p, sizeof p, "%s/r%07zu/cf:q%zu", dir, i / per_row,
		 i % per_row);
	return p;
}

static char *row_path(const char *prefix, size_t r)
{
	static char p[4096];

	snprintf(p, sizeof p, "%s/%s%07zu", dir, prefix, r);
	return p;
}

/* A permutation of 0..n-1 (a fixed seed: every target gets the same). */
static size_t *shuffled(size_t n)
{
	size_t *o = malloc((n ? n : 1) * sizeof *o), i, j, t;
	uint64_t s = 0x9E3779B97F4A7C15ull;

	if (!o)
		die("malloc", "");
	for (i = 0; i < n; i++)
		o[i] = i;
	for (i = n; i > 1; i--) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		j = (size_t)(s % i);
		t = o[i - 1];
		o[i - 1] = o[j];
		o[j] = t;
	}
	return o;
}

#define TIMED(l, stmt) do {					\
		double t_ = now_s();				\
		stmt;						\
		(l)->v[(l)->n++] = now_s() - t_;		\
	} while (0)

enum { P_MKDIR, P_CREATE, P_STAT, P_READ, P_UNLINK, P_RMDIR, P_N };
static const char *const pname[P_N] = {
	"mkdir row", "create+write+close", "stat", "open+read+close",
	"unlink", "rmdir row"
};
static const char *const pkey[P_N] = {
	"mkdir", "create", "stat", "read", "unlink", "rmdir"
};

static void small_cells(size_t n, size_t per_row, int rounds)
{
	struct lat best[P_N], l[P_N];
	size_t rows = (n + per_row - 1) / per_row, i, *order;
	struct stat st;
	char buf[4096], k[64];
	int r, p;

	order = shuffled(n);
	memset(best, 0, sizeof best);
	for (r = 0; r < rounds; r++) {
		lat_start(&l[P_MKDIR], rows);
		for (i = 0; i < rows; i++)
			TIMED(&l[P_MKDIR], if (mkdir(row_path("r", i), 0755))
				die("mkdir", row_path("r", i)));
		lat_end(&l[P_MKDIR]);

		lat_start(&l[P_CREATE], n);
		for (i = 0; i < n; i++)
			TIMED(&l[P_CREATE], put_cell(cell_path(i, per_row),
						     value, vbytes, vbytes));
		lat_end(&l[P_CREATE]);

		lat_start(&l[P_STAT], n);
		for (i = 0; i < n; i++) {
			char *c = cell_path(order[i], per_row);
			TIMED(&l[P_STAT], if (stat(c, &st)) die("stat", c));
			if ((size_t)st.st_size != vbytes) {
				fprintf(stderr, "fs_bench: %s: size %lld\n",
					c, (long long)st.st_size);
				exit(1);
			}
		}
		lat_end(&l[P_STAT]);

		lat_start(&l[P_READ], n);
		for (i = 0; i < n; i++) {
			char *c = cell_path(order[i], per_row);
			size_t got = 0;
			TIMED(&l[P_READ], got = get_cell(c, buf, sizeof buf));
			if (got != vbytes) {
				fprintf(stderr, "fs_bench: %s: read %zu\n",
					c, got);
				exit(1);
			}
		}
		lat_end(&l[P_READ]);

		lat_start(&l[P_UNLINK], n);
		for (i = 0; i < n; i++) {
			char *c = cell_path(order[i], per_row);
			TIMED(&l[P_UNLINK], if (unlink(c)) die("unlink", c));
		}
		lat_end(&l[P_UNLINK]);

		lat_start(&l[P_RMDIR], rows);
		for (i = 0; i < rows; i++)
			TIMED(&l[P_RMDIR], if (rmdir(row_path("r", i)))
				die("rmdir", row_path("r", i)));
		lat_end(&l[P_RMDIR]);

		for (p = 0; p < P_N; p++) {
			snprintf(k, sizeof k, "round%d_%s", r + 1, pkey[p]);
			key(k, l[p].n / l[p].total);
			if (!best[p].v || l[p].n / l[p].total >
					  best[p].n / best[p].total) {
				free(best[p].v);
				best[p] = l[p];
			} else
				free(l[p].v);
		}
	}
	printf("  %-32s %8s %11s %-5s %9s %9s%s\n", "small cells "
	       "(best round)", "count", "rate", "", "p50 us", "p99 us",
	       daemon_pid ? " daemon CPU us/op" : "");
	for (p = 0; p < P_N; p++) {
		line_lat(pname[p], pkey[p], &best[p]);
		key(pkey[p], best[p].n / best[p].total);
		snprintf(k, sizeof k, "%s_p50_us", pkey[p]);
		key(k, pct(&best[p], 0.50));
		snprintf(k, sizeof k, "%s_p99_us", pkey[p]);
		key(k, pct(&best[p], 0.99));
		if (daemon_pid) {
			snprintf(k, sizeof k, "%s_cpu_us", pkey[p]);
			key(k, best[p].cpu / (double)best[p].n * 1e6);
		}
		free(best[p].v);
	}
	free(order);
}

/* --- parallel writers -------------------------------------------------- */

struct writer {
	pthread_t th;
	int id;
	size_t n, per_row;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	char p[4096];
	size_t i;

	for (i = 0; i < w->n; i++) {
		if (i % w->per_row == 0) {
			snprintf(p, sizeof p, "%s/w%d-%07zu", dir, w->id,
				 i / w->per_row);
			if (mkdir(p, 0755))
				die("mkdir", p);
		}
		snprintf(p, sizeof p, "%s/w%d-%07zu/cf:q%zu", dir, w->id,
			 i / w->per_row, i % w->per_row);
		put_cell(p, value, vbytes, vbytes);
	}
	return NULL;
}

static void writers(int nw, size_t each, size_t per_row)
{
	struct writer *w = calloc((size_t)nw, sizeof *w);
	char p[4096];
	double t;
	size_t i;
	int k;

	if (!w)
		die("calloc", "");
	t = now_s();
	for (k = 0; k < nw; k++) {
		w[k].id = k;
		w[k].n = each;
		w[k].per_row = per_row;
		if (pthread_create(&w[k].th, NULL, writer_main, &w[k]))
			die("pthread_create", "");
	}
	for (k = 0; k < nw; k++)
		pthread_join(w[k].th, NULL);
	t = now_s() - t;
	snprintf(p, sizeof p, "%d writers: create+write+close", nw);
	line_rate(p, "writers", (size_t)nw * each, t, "ops/s");
	/* cleanup, not timed */
	for (k = 0; k < nw; k++)
		for (i = 0; i < each; i++) {
			snprintf(p, sizeof p, "%s/w%d-%07zu/cf:q%zu", dir, k,
				 i / per_row, i % per_row);
			if (unlink(p))
				die("unlink", p);
			if (i % per_row == per_row - 1 || i == each - 1) {
				snprintf(p, sizeof p, "%s/w%d-%07zu", dir, k,
					 i / per_row);
				if (rmdir(p))
					die("rmdir", p);
			}
		}
	free(w);
}

/* --- large values ------------------------------------------------------ */

static void large(size_t mib, size_t count)
{
	size_t len = mib << 20, i;
	char *v = malloc(len), p[4096], what[64], k[32];
	double t;

	if (!v)
		die("malloc", "");
	bench_fill(v, len, 0);
	t = now_s();
	for (i = 0; i < count; i++) {
		snprintf(p, sizeof p, "%s/big%07zu", dir, i);
		if (mkdir(p, 0755))
			die("mkdir", p);
		snprintf(p, sizeof p, "%s/big%07zu/cf:q", dir, i);
		put_cell(p, v, len, 1 << 20);
	}
	t = now_s() - t;
	snprintf(what, sizeof what, "write %zu MiB values", mib);
	snprintf(k, sizeof k, "write_%zumib", mib);
	line_mb(what, k, count, (double)len * count, t);
	t = now_s();
	for (i = 0; i < count; i++) {
		snprintf(p, sizeof p, "%s/big%07zu/cf:q", dir, i);
		if (get_cell(p, v, 1 << 20) != len) {
			fprintf(stderr, "fs_bench: %s: short read\n", p);
			exit(1);
		}
	}
	t = now_s() - t;
	snprintf(what, sizeof what, "read %zu MiB values", mib);
	snprintf(k, sizeof k, "read_%zumib", mib);
	line_mb(what, k, count, (double)len * count, t);
	for (i = 0; i < count; i++) {
		snprintf(p, sizeof p, "%s/big%07zu/cf:q", dir, i);
		if (unlink(p))
			die("unlink", p);
		snprintf(p, sizeof p, "%s/big%07zu", dir, i);
		if (rmdir(p))
			die("rmdir", p);
	}
	free(v);
}

/* --- listing ----------------------------------------------------------- */

/* Loads rows l0000000..: on cellfs one cell each through .batch (a row
 * exists when it has a cell), elsewhere directories made with mkdir. */
static void load_rows(size_t rows)
{
	char p[4096];
	struct stat st;
	size_t i;
	double t = now_s();

	snprintf(p, sizeof p, "%s/.batch", dir);
	if (stat(p, &st) == 0) {
		FILE *f = fopen(p, "w");
		if (!f)
			die("open", p);
		for (i = 0; i < rows; i++)
			fprintf(f, "put l%07zu cf:q %.*s\n", i, (int)vbytes,
				listing_value);
		if (fclose(f) != 0)
			die("write", p);
		printf("  (%zu rows loaded through .batch in %.1f s)\n", rows,
		       now_s() - t);
		return;
	}
	/* the listing lists the rows, not their cells: directories alone
	 * list the same, and load in a third of the time */
	for (i = 0; i < rows; i++)
		if (mkdir(row_path("l", i), 0755))
			die("mkdir", row_path("l", i));
	printf("  (%zu rows made with mkdir in %.1f s)\n", rows,
	       now_s() - t);
}

/* echo 2 > /proc/sys/vm/drop_caches (dentries and inodes; FUSE
 * filesystems get FORGETs, tmpfs keeps its own); says so when it cannot
 * (not root), so the figures are read knowing it. */
static void drop_kernel_caches(void)
{
	FILE *f;
	int bad;

	sync();
	f = fopen("/proc/sys/vm/drop_caches", "w");
	bad = !f;
	if (f) {
		bad = fputs("2\n", f) == EOF;
		bad |= fclose(f) != 0;
	}
	if (bad)
		printf("  (kernel dentry and inode caches not dropped: "
		       "the first listing may be warm)\n");
}

/* opendir, readdir, lstat of every entry: what ls -l does. */
static size_t list(const char *ldir)
{
	DIR *d = opendir(ldir);
	struct dirent *e;
	struct stat st;
	size_t n = 0;

	if (!d)
		die("opendir", ldir);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			die("lstat", e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

static void listing(size_t rows)
{
	char ldir[4096], cmd[8192];
	struct stat st;
	size_t n;
	double t;
	int pass;

	load_rows(rows);
	snprintf(ldir, sizeof ldir, "%s/@", dir);
	if (stat(ldir, &st) != 0)
		snprintf(ldir, sizeof ldir, "%s", dir);
	/* The first listing starts with the kernel's dentries and inodes
	 * dropped, on every target: rows made with mkdir would otherwise
	 * come with their inodes already in the kernel, and rows loaded
	 * through .batch without, which made memfs's first listing a warm
	 * one and cellfs's a cold one. */
	drop_kernel_caches();
	for (pass = 0; pass < 2; pass++) {
		t = now_s();
		n = list(ldir);
		t = now_s() - t;
		if (n != rows) {
			fprintf(stderr, "fs_bench: %s: %zu entries, not %zu\n",
				ldir, n, rows);
			exit(1);
		}
		line_rate(pass ? "ls -l equivalent, again" :
			  "ls -l equivalent (readdir+lstat)",
			  pass ? "list2" : "list", n, t, "rows/s");
	}
	snprintf(cmd, sizeof cmd, "ls -l '%s' >/dev/null", ldir);
	t = now_s();
	if (system(cmd) != 0)
		die("run", cmd);
	t = now_s() - t;
	line_rate("/bin/ls -l", "ls", rows, t, "rows/s");
}

int main(int argc, char **argv)
{
	size_t n = 10000, per_row = 4, rows = 100000, m1 = 20, m10 = 4;
	size_t each = 2500;
	int nw = 4, rounds = 1, c;
	const char *out = NULL;
	char *d;

	while ((c = getopt(argc, argv, "n:c:v:l:m:M:w:W:r:o:t:p:")) != -1) {
		switch (c) {
		case 'n': n = strtoul(optarg, NULL, 10); break;
		case 'c': per_row = strtoul(optarg, NULL, 10); break;
		case 'v': vbytes = strtoul(optarg, NULL, 10); break;
		case 'l': rows = strtoul(optarg, NULL, 10); break;
		case 'm': m1 = strtoul(optarg, NULL, 10); break;
		case 'M': m10 = strtoul(optarg, NULL, 10); break;
		case 'w': nw = atoi(optarg); break;
		case 'W': each = strtoul(optarg, NULL, 10); break;
		case 'r': rounds = atoi(optarg); break;
		case 'o': out = optarg; break;
		case 't': target = optarg; break;
		case 'p': daemon_pid = atoi(optarg); break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1 || !per_row || vbytes > 4096 || nw < 1 ||
	    rounds < 1)
		goto usage;
	if (asprintf(&d, "%s/bench", argv[optind]) < 0)
		die("malloc", "");
	dir = d;
	if (!(value = malloc(vbytes + 1)))
		die("malloc", "");
	bench_values_init();
	bench_fill(value, vbytes, 0);
	value[vbytes] = 0;
	memset(listing_value, 'v', vbytes);
	if (out && !(results = fopen(out, "w")))
		die("open", out);
	if (mkdir(dir, 0755))
		die("mkdir", dir);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("%s%s%s: %zu cells of %zu bytes, %zu a row\n", target,
	       *target ? " " : "", argv[optind], n, vbytes, per_row);
	small_cells(n, per_row, rounds);
	writers(nw, each, per_row);
	if (m1)
		large(1, m1);
	if (m10)
		large(10, m10);
	if (rows)
		listing(rows);
	if (results)
		fclose(results);
	free(value);
	free(d);
	return 0;
usage:
	fprintf(stderr, "usage: fs_bench [-n CELLS] [-c CELLS_PER_ROW] "
		"[-v BYTES] [-l ROWS] [-m COUNT_1MIB] [-M COUNT_10MIB] "
		"[-w WRITERS] [-W CELLS_PER_WRITER] [-r ROUNDS] "
		"[-o RESULTS] [-t NAME] [-p DAEMON_PID] DIR\n");
	return 2;
}
