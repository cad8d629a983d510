/*
 * tsd_history_bench.c: does a dashboard's query slow down as history
 * grows?  The same 1-hour queries against a mount holding one day of
 * 1000 series and one holding a year of them.
 *
 *   tsd_history_bench [-d DAYS] [-i SECONDS] [-H HOSTS] [-r ROUNDS]
 *                     CELLFS_BINARY DIR
 *
 * Makes two data directories, DIR/day and DIR/year, through the library
 * (tsd_writer_write, the code behind MNT/tsd/put), with 10 metrics x
 * HOSTS hosts (default 100: 1000 series):
 *   - both: the day before the last hour, a point every 10 s per series;
 *   - DIR/year also: the DAYS - 1 days (default 364) before that, a
 *     point every SECONDS (default 300) per series: the bulk load that
 *     stands for a year of history (one OpenTSDB row per series and hour
 *     either way, so the year holds 365x the day's rows).
 * Each is then compacted as a daemon leaves it (every finished hourly
 * row in OpenTSDB's one-cell form: tsd_compact), flushed and
 * major-compacted.  Then both are mounted with CELLFS_BINARY, the last
 * hour (10 s per series) is written to each MNT/tsd/put, so that it is
 * still in the memstore, and each round runs, on one mount and then the
 * other:
 *   - sum:sys.cpu.user over the last hour (100 series, memstore);
 *   - sum:1m-avg:sys.cpu.user over the last hour;
 *   - sum:sys.cpu.user over an hour 12 hours back (store files).
 * Each query is opened, read to its end and closed through MNT/tsd/q/.
 * Prints p50, p99 and the mean of each query on each mount, and the
 * ratios year / day (the goal: within 1.5x).  The first round is
 * printed apart: it compacts the last hour's rows (compact on read).
 *
 * The points are the same in both directories (the generator restarts
 * from one seed per series at the start of the last day).  A
 * measurement, not a test; DIR must not exist or be empty.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/cellfs.h"
#include "tsd/tsd.h"
#include "util/err.h"

#define FUSE_MAGIC 0x65735546
#define NMETRIC 10
#define STEP 10			/* seconds between recent points */
#define HOUR 3600
#define DAY 86400
/* The end of the data: 2026-01-01 00:00 UTC, so runs repeat. */
#define T_END 1767225600LL
#define NQUERY 3

static const struct {
	const char *name;
	int counter;
	double lo, hi;
} metrics[NMETRIC] = {
	{ "sys.cpu.user", 0, 0, 100 },
	{ "sys.cpu.system", 0, 0, 100 },
	{ "sys.load.1min", 0, 0, 16 },
	{ "proc.meminfo.memfree", 1, -4096, 4096 },
	{ "proc.net.bytes", 1, 0, 5000000 },
	{ "proc.net.packets", 1, 0, 9000 },
	{ "iostat.disk.read_requests", 1, 0, 300 },
	{ "iostat.disk.write_merged", 1, 0, 120 },
	{ "df.bytes.used", 1, -65536, 262144 },
	{ "http.requests.latency_ms", 0, 1, 900 },
};

struct series {
	int m;
	uint64_t rng;
	double gauge;
	int64_t counter;
	char tags[64];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "tsd_history_bench: %s: %s\n", what,
		rc ? cf_strerror(rc) : strerror(errno));
	exit(1);
}

static double uniform(struct series *x)
{
	x->rng ^= x->rng << 13;
	x->rng ^= x->rng >> 7;
	x->rng ^= x->rng << 17;
	return (double)(x->rng >> 11) / 9007199254740992.0;
}

/* Restarts series s's generator: the same points follow in every
 * directory. */
static void series_reset(struct series *x, long s)
{
	x->m = (int)(s % NMETRIC);
	x->rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(s + 1) | 1;
	x->gauge = metrics[x->m].lo +
		   uniform(x) * (metrics[x->m].hi - metrics[x->m].lo);
	x->counter = (int64_t)(x->rng % 1000000000);
	snprintf(x->tags, sizeof x->tags, "host=web%04ld dc=dc%ld",
		 s / NMETRIC, s / NMETRIC % 4);
}

/* Appends series x's next put line at ts to out; returns its length. */
static int put_line(struct series *x, int64_t ts, char *out, size_t room)
{
	double lo = metrics[x->m].lo, hi = metrics[x->m].hi;

	if (metrics[x->m].counter) {
		x->counter += (int64_t)(lo + uniform(x) * (hi - lo));
		return snprintf(out, room, "%s %lld %lld %s\n",
				metrics[x->m].name, (long long)ts,
				(long long)x->counter, x->tags);
	}
	x->gauge += (uniform(x) - 0.5) * (hi - lo) / 20;
	if (x->gauge < lo)
		x->gauge = lo + (lo - x->gauge);
	if (x->gauge > hi)
		x->gauge = hi - (x->gauge - hi);
	return snprintf(out, room, "%s %lld %.2f %s\n", metrics[x->m].name,
			(long long)ts, x->gauge, x->tags);
}

/* Where put lines go: a library writer, or a file descriptor. */
struct sink {
	tsd_writer *w;
	int fd;
	char *buf;
	size_t len, cap;
	uint64_t points;
};

static void sink_flush(struct sink *k)
{
	struct tsd_error e;
	size_t off = 0;
	ssize_t n;
	int rc;

	if (k->w) {
		if ((rc = tsd_writer_write(k->w, k->buf, k->len, &e))) {
			fprintf(stderr, "line %" PRIu64 ": %s\n", e.line,
				e.reason);
			die("put", rc);
		}
	} else {
		while (off < k->len) {
			if ((n = write(k->fd, k->buf + off, k->len - off)) < 0)
				die("write of tsd/put", 0);
			off += (size_t)n;
		}
	}
	k->len = 0;
}

/* Puts every series' points in [from, to) every step seconds, time by
 * time across the series as collectors send them. */
static void put_range(struct sink *k, struct series *ser, long nseries,
		      int64_t from, int64_t to, int64_t step)
{
	for (int64_t ts = from; ts < to; ts += step)
		for (long s = 0; s < nseries; s++) {
			if (k->len + 256 > k->cap)
				sink_flush(k);
			k->len += (size_t)put_line(&ser[s], ts,
						   k->buf + k->len,
						   k->cap - k->len);
			k->points++;
		}
	if (k->len)
		sink_flush(k);
}

static uint64_t sst_bytes, sst_files;

static int count_sst(const char *path, const struct stat *st, int type,
		     struct FTW *f)
{
	size_t n = strlen(path);

	(void)f;
	if (type == FTW_F && n > 4 && !strcmp(path + n - 4, ".sst")) {
		sst_bytes += (uint64_t)st->st_size;
		sst_files++;
	}
	return 0;
}

struct hist {
	char name[32];
	char data[4096], mnt[4096];
	pid_t pid;
	uint64_t points;
	double load_s;
	uint64_t files, bytes;
	double *lat[NQUERY];
	double first[NQUERY];
};

/* Builds h's data directory: days of history before the last day. */
static void build(struct hist *h, struct series *ser, long nseries,
		  long days, long interval)
{
	struct tsd_options to;
	struct cf_options o;
	struct sink k = { 0 };
	cf_table *tab;
	cf_db *db;
	tsd *t;
	int rc;
	double t0 = now_s();

	cf_options_default(&o);
	tsd_options_default(&to);
	to.compact_interval_ms = 0;
	if ((rc = cf_db_open(h->data, &o, &db)) ||
	    (rc = tsd_open(db, &to, &t)) ||
	    (rc = tsd_writer_open(t, NULL, &k.w)))
		die("open", rc);
	k.cap = 1 << 20;
	if (!(k.buf = malloc(k.cap)))
		die("malloc", CF_ENOMEM);
	int64_t day0 = T_END - DAY;
	if (days > 1) {
		for (long s = 0; s < nseries; s++)
			series_reset(&ser[s], s + 7919);
		put_range(&k, ser, nseries, day0 - (days - 1) * DAY, day0,
			  interval);
	}
	for (long s = 0; s < nseries; s++)
		series_reset(&ser[s], s);
	put_range(&k, ser, nseries, day0, T_END - HOUR, STEP);
	tsd_writer_close(k.w);
	free(k.buf);
	if ((rc = tsd_compact(t, 1)))
		die("compact", rc);
	tsd_close(t);
	if ((rc = cf_table_open(db, "tsdb", &tab)) ||
	    (rc = cf_table_flush(tab)) || (rc = cf_table_compact(tab, 1)))
		die("flush", rc);
	cf_table_close(tab);
	cf_db_close(db);
	h->points = k.points;
	h->load_s = now_s() - t0;
	sst_bytes = sst_files = 0;
	nftw(h->data, count_sst, 16, FTW_PHYS);
	h->bytes = sst_bytes;
	h->files = sst_files;
}

static void mount_hist(struct hist *h, const char *bin)
{
	struct statfs sf;
	int i;

	h->pid = fork();
	if (h->pid == 0) {
		execl(bin, bin, "-f", h->data, h->mnt, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 600; i++) {
		if (!statfs(h->mnt, &sf) && sf.f_type == FUSE_MAGIC)
			return;
		usleep(50000);
	}
	die("mount", CF_EIO);
}

static void umount_hist(struct hist *h)
{
	pid_t p = fork();

	if (p == 0) {
		execlp("fusermount3", "fusermount3", "-u", h->mnt,
		       (char *)NULL);
		_exit(127);
	}
	waitpid(p, NULL, 0);
	waitpid(h->pid, NULL, 0);
}

/* Opens MNT/tsd/q/q, reads it to its end; returns the seconds taken. */
static double query(struct hist *h, const char *q, uint64_t *bytes)
{
	static char buf[128 << 10];
	char path[8192];
	ssize_t got;
	double t0 = now_s();
	int fd;

	snprintf(path, sizeof path, "%s/tsd/q/%s", h->mnt, q);
	if ((fd = open(path, O_RDONLY)) < 0)
		die(path, 0);
	*bytes = 0;
	while ((got = read(fd, buf, sizeof buf)) > 0)
		*bytes += (uint64_t)got;
	if (got < 0)
		die(path, 0);
	close(fd);
	return now_s() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void stats(double *v, int n, double *p50, double *p99, double *mean)
{
	double sum = 0;

	qsort(v, (size_t)n, sizeof *v, cmp_double);
	for (int i = 0; i < n; i++)
		sum += v[i];
	*p50 = v[n / 2];
	*p99 = v[(n * 99 + 99) / 100 - 1];
	*mean = sum / n;
}

int main(int argc, char **argv)
{
	long days = 365, interval = 300, hosts = 100, rounds = 100;
	struct hist hs[2] = { { .name = "1 day" } };
	char qs[NQUERY][256];
	const char *qname[NQUERY] = {
		"sum, last hour (memstore)",
		"sum:1m-avg, last hour",
		"sum, an hour 12 h back (files)",
	};
	uint64_t qbytes[2][NQUERY];
	int c;

	while ((c = getopt(argc, argv, "d:i:H:r:")) != -1) {
		if (c == 'd')
			days = atol(optarg);
		else if (c == 'i')
			interval = atol(optarg);
		else if (c == 'H')
			hosts = atol(optarg);
		else if (c == 'r')
			rounds = atol(optarg);
		else
			return 2;
	}
	if (optind + 2 != argc || days < 2 || interval < 1 || hosts < 1 ||
	    rounds < 2) {
		fprintf(stderr, "usage: tsd_history_bench [-d DAYS] "
			"[-i SECONDS] [-H HOSTS] [-r ROUNDS] CELLFS_BINARY "
			"DIR\n");
		return 2;
	}
	const char *bin = argv[optind], *dir = argv[optind + 1];
	long nseries = hosts * NMETRIC;
	struct series *ser = calloc((size_t)nseries, sizeof *ser);
	if (!ser)
		die("malloc", CF_ENOMEM);
	snprintf(hs[1].name, sizeof hs[1].name, "%ld days", days);
	mkdir(dir, 0755);
	for (int i = 0; i < 2; i++) {
		char sub[3000];
		snprintf(sub, sizeof sub, "%s/%s", dir, i ? "year" : "day");
		mkdir(sub, 0755);
		snprintf(hs[i].data, sizeof hs[i].data, "%s/data", sub);
		snprintf(hs[i].mnt, sizeof hs[i].mnt, "%s/mnt", sub);
		mkdir(hs[i].mnt, 0755);
		for (int q = 0; q < NQUERY; q++)
			if (!(hs[i].lat[q] = calloc((size_t)rounds,
						    sizeof(double))))
				die("malloc", CF_ENOMEM);
		build(&hs[i], ser, nseries, i ? days : 1, interval);
		fprintf(stderr, "built %s: %" PRIu64 " points in %.0f s\n",
			hs[i].name, hs[i].points, hs[i].load_s);
	}

	/* The last hour, through each mount: still in the memstore. */
	for (int i = 0; i < 2; i++) {
		struct sink k = { .cap = 1 << 20 };
		char path[4200];

		mount_hist(&hs[i], bin);
		snprintf(path, sizeof path, "%s/tsd/put", hs[i].mnt);
		if ((k.fd = open(path, O_WRONLY | O_APPEND)) < 0)
			die(path, 0);
		if (!(k.buf = malloc(k.cap)))
			die("malloc", CF_ENOMEM);
		for (long s = 0; s < nseries; s++)
			series_reset(&ser[s], s + 104729);
		put_range(&k, ser, nseries, T_END - HOUR, T_END, STEP);
		if (close(k.fd))
			die("close of tsd/put", 0);
		free(k.buf);
	}

	int64_t h0 = T_END - HOUR, b0 = T_END - 12 * HOUR;
	snprintf(qs[0], sizeof qs[0], "start=%lld&end=%lld&m=sum:sys.cpu.user",
		 (long long)h0, (long long)T_END);
	snprintf(qs[1], sizeof qs[1],
		 "start=%lld&end=%lld&m=sum:1m-avg:sys.cpu.user",
		 (long long)h0, (long long)T_END);
	snprintf(qs[2], sizeof qs[2], "start=%lld&end=%lld&m=sum:sys.cpu.user",
		 (long long)b0, (long long)(b0 + HOUR));
	for (long r = 0; r <= rounds; r++)
		for (int i = 0; i < 2; i++)
			for (int q = 0; q < NQUERY; q++) {
				double s = query(&hs[i], qs[q], &qbytes[i][q]);
				if (r == 0)
					hs[i].first[q] = s;
				else
					hs[i].lat[q][r - 1] = s;
			}
	for (int i = 0; i < 2; i++)
		umount_hist(&hs[i]);
	for (int q = 0; q < NQUERY; q++)
		if (qbytes[0][q] != qbytes[1][q] || !qbytes[0][q])
			fprintf(stderr, "tsd_history_bench: query %d answers "
				"differ: %" PRIu64 " vs %" PRIu64 " bytes\n",
				q, qbytes[0][q], qbytes[1][q]);

	printf("tsd_history_bench: %ld series (10 metrics x %ld hosts); "
	       "history every %ld s, the last day every %d s\n", nseries,
	       hosts, interval, STEP);
	printf("%-10s %12s %9s %6s %8s\n", "history", "points", "sst MB",
	       "files", "load s");
	for (int i = 0; i < 2; i++)
		printf("%-10s %12" PRIu64 " %9.1f %6" PRIu64 " %8.0f\n",
		       hs[i].name, hs[i].points + (uint64_t)nseries * 360,
		       hs[i].bytes / 1e6, hs[i].files, hs[i].load_s);
	char head[64];
	snprintf(head, sizeof head, "query (%ld series)", hosts);
	printf("\n%-32s %-10s %8s %8s %8s %8s\n", head,
	       "history", "first ms", "p50 ms", "p99 ms", "mean ms");
	for (int q = 0; q < NQUERY; q++) {
		double p50[2], p99[2], mean[2];
		for (int i = 0; i < 2; i++) {
			stats(hs[i].lat[q], (int)rounds, &p50[i], &p99[i],
			      &mean[i]);
			printf("%-32s %-10s %8.2f %8.2f %8.2f %8.2f\n",
			       i ? "" : qname[q], hs[i].name,
			       hs[i].first[q] * 1e3, p50[i] * 1e3,
			       p99[i] * 1e3, mean[i] * 1e3);
		}
		printf("%-32s %-10s %8s %8.2f %8.2f %8.2f\n", "", "ratio", "",
		       p50[1] / p50[0], p99[1] / p99[0], mean[1] / mean[0]);
	}
	printf("(%ld rounds; engine and load alternate between the two "
	       "mounts query by query)\n", rounds);
	return 0;
}
