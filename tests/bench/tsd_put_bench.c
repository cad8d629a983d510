/*
 * tsd_put_bench.c: the time-series path through a mounted cellfs.
 *
 *   tsd_put_bench [-n POINTS] [-s SERIES] [-q QSERIES] [-b BYTES] MNT
 *
 * 1. ingest: POINTS points (default 10,000,000) over SERIES series
 *    (default 1000: 10 metrics x SERIES/10 hosts, tags host and dc), one
 *    point every 10 s per series, time-major as collectors send them,
 *    appended to MNT/tsd/put in writes of BYTES (default 1 MiB, cut at a
 *    line end).  The lines are made before the clock starts; the time is
 *    that of the write() calls, which return once the points are in the
 *    write-ahead log.
 * 2. query: one day of 10 s data for QSERIES series (default 100) of the
 *    metric bench.q is written the same way (not timed), its hourly rows
 *    compacted (a dump of the metric meets them all) and flushed; then
 *    aggregate queries over the day read through MNT/tsd/q/, each three
 *    times: points scanned per second of the best and of the first run.
 * 3. bytes per point: tsdb flushed, every finished hour compacted into
 *    its one-cell form (dumps of every metric), tsdb major-compacted; the
 *    store-file bytes of MNT/tsdb/.regions divided by the points stored.
 *
 * Prints a table with the targets beside the figures.  A
 * measurement, not a test.  tests/bench/tsd_put_bench.sh mounts a fresh
 * data directory and runs it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define T0 1356998400LL		/* 2013-01-01 00:00 UTC, an hour start */
#define STEP 10			/* seconds between points of a series */

static const char *mnt;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "tsd_put_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static char *path(const char *rel)
{
	static char p[4096];
	snprintf(p, sizeof p, "%s/%s", mnt, rel);
	return p;
}

/* Writes all of p to fd; counts the time spent in write(). */
static void write_all(int fd, const char *p, size_t len, double *secs)
{
	double t = now_s();
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("write tsd/put");
		p += n;
		len -= (size_t)n;
	}
	*secs += now_s() - t;
}

/* Reads a file to its end; returns its size. */
static uint64_t drain(const char *rel)
{
	static char buf[1 << 17];
	uint64_t total = 0;
	ssize_t n;
	int fd = open(path(rel), O_RDONLY);

	if (fd < 0)
		die(rel);
	while ((n = read(fd, buf, sizeof buf)) > 0)
		total += (uint64_t)n;
	if (n < 0)
		die(rel);
	close(fd);
	return total;
}

static void ctl(const char *rel, const char *word)
{
	int fd = open(path(rel), O_WRONLY);
	if (fd < 0 || write(fd, word, strlen(word)) < 0 || close(fd) < 0)
		die(rel);
}

/* A gauge that wanders like a real one: integers for most series, a
 * float for every fourth metric (as load averages are). */
static int point_line(char *out, size_t cap, const char *metric, long host,
		      long long ts, long i, int is_float)
{
	unsigned x = (unsigned)(host * 2654435761u + (unsigned)i * 40503u);
	x ^= x >> 13;
	if (is_float)
		return snprintf(out, cap, "%s %lld %.2f host=web%04ld dc=dc%ld\n",
				metric, ts, (double)(x % 400) / 100.0, host,
				host % 4);
	return snprintf(out, cap, "%s %lld %u host=web%04ld dc=dc%ld\n",
			metric, ts, 1000 + (unsigned)(i % 600) + x % 50, host,
			host % 4);
}

/* Makes every line first (so line formatting is not timed), then
 * appends them in writes of chunk bytes cut at line ends.  Returns the
 * seconds spent in write(). */
static double put_points(const char *const *metrics, int nmetrics,
			 long hosts, long per_series, size_t chunk)
{
	size_t cap = (size_t)nmetrics * (size_t)hosts * (size_t)per_series *
		     64 + 64, len = 0, off = 0;
	char *all = malloc(cap);
	double secs = 0;
	int fd;

	if (!all)
		die("malloc");
	for (long i = 0; i < per_series; i++)
		for (int m = 0; m < nmetrics; m++)
			for (long h = 0; h < hosts; h++)
				len += (size_t)point_line(all + len, cap - len,
							  metrics[m], h,
							  T0 + i * STEP, i,
							  m % 4 == 3);
	fd = open(path("tsd/put"), O_WRONLY | O_APPEND);
	if (fd < 0)
		die("open tsd/put");
	while (off < len) {
		size_t n = len - off < chunk ? len - off : chunk;
		while (off + n < len && all[off + n - 1] != '\n')
			n--;
		write_all(fd, all + off, n, &secs);
		off += n;
	}
	if (close(fd) < 0)
		die("close tsd/put");
	free(all);
	return secs;
}

/* The sum of the store-file bytes of a table's regions (.regions: name,
 * start, end, files, disk bytes, memstore bytes). */
static uint64_t table_disk_bytes(const char *table, uint64_t *mem)
{
	char rel[256], line[8192], a[4096], b[4096], c[4096];
	uint64_t disk = 0, files, d, m;
	FILE *f;

	snprintf(rel, sizeof rel, "%s/.regions", table);
	if (!(f = fopen(path(rel), "r")))
		die(rel);
	*mem = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%4095s %4095s %4095s %" SCNu64 " %" SCNu64
			   " %" SCNu64, a, b, c, &files, &d, &m) == 6) {
			disk += d;
			*mem += m;
		}
	fclose(f);
	return disk;
}

static void row(const char *what, double value, const char *unit,
		const char *target, const char *note)
{
	printf("| %-44s | %14.0f %-8s | %-14s | %s\n", what, value, unit,
	       target, note);
}

int main(int argc, char **argv)
{
	static const char *const metrics[] = {
		"sys.cpu.user", "sys.cpu.system", "sys.mem.free", "sys.load.1m",
		"net.bytes.in", "net.bytes.out", "disk.ops.read",
		"disk.ops.write", "app.requests", "app.latency.p99",
	};
	long points = 10000000, series = 1000, qseries = 100;
	size_t chunk = 1 << 20;
	int opt;

	while ((opt = getopt(argc, argv, "n:s:q:b:")) != -1) {
		switch (opt) {
		case 'n': points = atol(optarg); break;
		case 's': series = atol(optarg); break;
		case 'q': qseries = atol(optarg); break;
		case 'b': chunk = (size_t)atol(optarg); break;
		default: goto usage;
		}
	}
	if (optind + 1 != argc || series < 10 || points < series ||
	    qseries < 1 || chunk < 256)
		goto usage;
	mnt = argv[optind];

	long hosts = series / 10, per_series = points / (hosts * 10);
	long stored = per_series * hosts * 10;
	printf("tsd_put_bench: %ld points, %ld series (10 metrics x %ld hosts), "
	       "%ld points a series every %d s, writes of %zu bytes, at %s\n\n",
	       stored, hosts * 10, hosts, per_series, STEP, chunk, mnt);
	printf("| %-44s | %23s | %-14s | %s\n", "measure", "figure", "target",
	       "");
	printf("|%.46s|%.25s|%.16s|\n",
	       "----------------------------------------------",
	       "-------------------------", "----------------");

	/* 1. ingest */
	double t = now_s();
	double wsecs = put_points(metrics, 10, hosts, per_series, chunk);
	double wall = now_s() - t;
	row("ingest through tsd/put (write() time)", stored / wsecs, "pts/s",
	    "1,000,000", "");
	row("ingest, with making the lines", stored / wall, "pts/s", "", "");

	/* 2. query: a day of 10 s data for qseries series */
	static const char *const qm[] = { "bench.q" };
	long day = 86400 / STEP;
	(void)put_points(qm, 1, qseries, day, chunk);
	t = now_s();
	drain("tsd/metrics/bench.q");	/* meets, so compacts, every row */
	double dump1 = now_s() - t;
	ctl("tsdb/.ctl", "flush\n");
	t = now_s();
	uint64_t dumped = drain("tsd/metrics/bench.q");
	double dump2 = now_s() - t;
	long qpoints = day * qseries;
	row("metric dump, first (compacts the rows)", qpoints / dump1, "pts/s",
	    "", "");
	row("metric dump, compacted", qpoints / dump2, "pts/s", "", "");
	(void)dumped;

	static const char *const queries[][2] = {
		{ "sum:bench.q", "query sum over 100 series" },
		{ "avg:1m-avg:bench.q{host=*}", "query 1m-avg group by host" },
		{ "sum:5m-max:rate:bench.q", "query sum 5m-max rate" },
	};
	for (size_t i = 0; i < sizeof queries / sizeof *queries; i++) {
		char rel[512], what[96];
		double best = 1e9, first = 0;
		snprintf(rel, sizeof rel, "tsd/q/start=%lld&end=%lld&m=%s", T0,
			 T0 + 86400 - 1, queries[i][0]);
		for (int r = 0; r < 3; r++) {
			t = now_s();
			drain(rel);
			double s = now_s() - t;
			if (r == 0)
				first = s;
			if (s < best)
				best = s;
		}
		snprintf(what, sizeof what, "%s, best of 3", queries[i][1]);
		row(what, qpoints / best, "pts/s", "10,000,000", "");
		snprintf(what, sizeof what, "%s, first", queries[i][1]);
		row(what, qpoints / first, "pts/s", "", "");
	}

	/* 3. bytes per point once everything is compacted */
	t = now_s();
	for (size_t m = 0; m < 10; m++) {
		char rel[128];
		snprintf(rel, sizeof rel, "tsd/metrics/%s", metrics[m]);
		drain(rel);
	}
	ctl("tsdb/.ctl", "flush\n");
	ctl("tsdb/.ctl", "major_compact\n");
	double csecs = now_s() - t;
	uint64_t mem, disk = table_disk_bytes("tsdb", &mem);
	uint64_t umem, udisk = table_disk_bytes("tsdb-uid", &umem);
	long all = stored + qpoints;
	printf("| %-44s | %14.1f %-8s | %-14s | %s\n",
	       "compact hours + flush + major compaction", csecs, "s", "", "");
	row("tsdb store files", (double)disk, "bytes", "",
	    mem ? "(memstore not empty)" : "");
	printf("| %-44s | %14.2f %-8s | %-14s | %s\n",
	       "tsdb bytes per point after compaction", (double)disk / all,
	       "B/pt", "<= 3", "");
	row("tsdb-uid store files + memstore", (double)(udisk + umem),
	    "bytes", "", "");
	return 0;
usage:
	fprintf(stderr, "usage: tsd_put_bench [-n POINTS] [-s SERIES] "
			"[-q QSERIES] [-b BYTES] MNT\n");
	return 2;
}
