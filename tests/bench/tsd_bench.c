/*
 * tsd_bench.c: throughput of the time-series layer on the engine.
 *
 *   tsd_bench [-n POINTS] [-s SERIES] [-b LINES_PER_WRITE] [-r ROUNDS]
 *             [-m track|realtime|count] [-d DIR]
 *
 * Writes POINTS points (default 500000) spread over SERIES series
 * (default 100: 10 metrics x 10 hosts, one point a second per series)
 * through a put writer in writes of LINES_PER_WRITE lines (default
 * 1000), then measures name assignment, compaction, queries (from the
 * memstore, then after a flush from store files) and a metric dump.
 * Each query runs ROUNDS times (default 1) and the fastest is printed.
 * -m has the writes keep the series' meta data as the mount options
 * tsd_tsuid_tracking (track), with tsd_realtime_ts (realtime), and with
 * tsd_tsuid_incrementing too (count) do.
 * Prints one table; it is a measurement, not a test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/cellfs.h"
#include "tsd/tsd.h"
#include "util/buf.h"
#include "util/err.h"

#define T0 1356998400LL

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU seconds of the calling thread. */
static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "tsd_bench: %s: %s\n", what, cf_strerror(rc));
	exit(1);
}

static void row(const char *what, double secs, double count,
		const char *unit, double bytes)
{
	char u[32];
	snprintf(u, sizeof u, "%s/s", unit);
	printf("%-40s %9.3f s %12.0f %-10s", what, secs, count / secs, u);
	if (bytes > 0)
		printf(" %7.1f MB/s", bytes / secs / 1e6);
	printf("\n");
}

/* Reads a cursor to its end; returns the byte count. */
static uint64_t drain(tsd_cursor *c)
{
	static char buf[1 << 16];
	uint64_t off = 0;
	size_t got;
	int rc;
	while ((rc = tsd_cursor_pread(c, buf, sizeof buf, off, &got)) == 0 &&
	       got)
		off += got;
	if (rc)
		die("read", rc);
	return off;
}

static long rounds = 1;

static void bench_query(tsd *t, const char *label, const char *q,
			uint64_t points)
{
	struct tsd_error e;
	tsd_cursor *c;
	double best = 0;
	uint64_t bytes = 0;

	for (long r = 0; r < rounds; r++) {
		double t0 = now_s();
		int rc = tsd_query_open(t, q, strlen(q), TSD_FMT_TEXT, &c, &e);
		if (rc) {
			fprintf(stderr, "query %s: %s\n", q, e.reason);
			die("query", rc);
		}
		bytes = drain(c);
		tsd_cursor_close(c);
		double secs = now_s() - t0;
		if (r == 0 || secs < best)
			best = secs;
	}
	row(label, best, (double)points, "points", (double)bytes);
}

int main(int argc, char **argv)
{
	long npoints = 500000, nseries = 100, batch = 1000;
	char dirbuf[256];
	const char *dir = NULL;
	struct cf_options o;
	struct tsd_options to;
	struct tsd_error e;
	struct tsd_stats st;
	cf_db *db;
	tsd *t;
	const char *meta = NULL;
	int opt, rc;

	while ((opt = getopt(argc, argv, "n:s:b:r:d:m:")) != -1) {
		switch (opt) {
		case 'n': npoints = atol(optarg); break;
		case 's': nseries = atol(optarg); break;
		case 'b': batch = atol(optarg); break;
		case 'r': rounds = atol(optarg) > 0 ? atol(optarg) : 1; break;
		case 'd': dir = optarg; break;
		case 'm': meta = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-n POINTS] [-s SERIES] "
				"[-b LINES] [-r ROUNDS] [-m track|realtime|"
				"count] [-d DIR]\n", argv[0]);
			return 2;
		}
	}
	if (nseries < 10)
		nseries = 10;
	if (!dir) {
		snprintf(dirbuf, sizeof dirbuf, "/tmp/tsd-bench-%ld",
			 (long)getpid());
		dir = dirbuf;
	}
	cf_options_default(&o);
	if ((rc = cf_db_open(dir, &o, &db)))
		die("cf_db_open", rc);
	tsd_options_default(&to);
	to.compact_interval_ms = 0;
	to.compact_on_read = 0;
	if (meta) {
		to.tsuid_tracking = 1;
		to.realtime_ts = strcmp(meta, "track") != 0;
		to.tsuid_incrementing = !strcmp(meta, "count");
	}
	if ((rc = tsd_open(db, &to, &t)))
		die("tsd_open", rc);

	printf("tsd_bench: %ld points, %ld series, %ld lines a write, "
	       "series meta %s, in %s\n", npoints, nseries, batch,
	       meta ? meta : "off", dir);
	printf("%-40s %11s %12s %-10s %12s\n", "operation", "time", "rate",
	       "unit", "bytes");

	/* ingest: metric m (10 of them), host h, one point a second */
	long per_series = npoints / nseries;
	struct buf b = BUF_INIT;
	char line[128];
	tsd_writer *w;
	double bytes = 0, t0 = now_s(), wcpu = 0, c0;
	long lines = 0;
	if ((rc = tsd_writer_open(t, NULL, &w)))
		die("writer", rc);
	for (long i = 0; i < per_series; i++) {
		for (long s = 0; s < nseries; s++) {
			int n = snprintf(line, sizeof line,
					 "bench.m%ld %lld %ld host=h%ld dc=d%ld\n",
					 s % 10, T0 + i, (i * 7 + s) % 1000,
					 s / 10, (s / 10) % 3);
			buf_append(&b, line, (size_t)n);
			if (++lines % batch == 0) {
				c0 = thread_cpu_s();
				if ((rc = tsd_writer_write(w, b.p, b.len, &e)))
					die(e.reason, rc);
				wcpu += thread_cpu_s() - c0;
				bytes += (double)b.len;
				buf_reset(&b);
			}
		}
	}
	if (b.len && (rc = tsd_writer_write(w, b.p, b.len, &e)))
		die(e.reason, rc);
	bytes += (double)b.len;
	tsd_writer_close(w);
	row("put lines (known names)", now_s() - t0, (double)lines, "points",
	    bytes);
	printf("%-40s %9.0f ns a point (the writing thread's CPU in "
	       "tsd_writer_write)\n", "  put: CPU", wcpu * 1e9 / (double)lines);

	/* new names: every line brings a new tag value (each costs an
	 * Increment of the counter row and two puts) */
	long fresh = 5000;
	t0 = now_s();
	if ((rc = tsd_writer_open(t, NULL, &w)))
		die("writer", rc);
	buf_reset(&b);
	for (long i = 0; i < fresh; i++) {
		int n = snprintf(line, sizeof line,
				 "bench.new %lld 1 host=n%ld\n", T0, i);
		buf_append(&b, line, (size_t)n);
		if ((i + 1) % batch == 0) {
			if ((rc = tsd_writer_write(w, b.p, b.len, &e)))
				die(e.reason, rc);
			buf_reset(&b);
		}
	}
	if (b.len && (rc = tsd_writer_write(w, b.p, b.len, &e)))
		die(e.reason, rc);
	tsd_writer_close(w);
	buf_release(&b);
	row("put lines, a new tag value each", now_s() - t0, (double)fresh,
	    "UIDs", 0);

	char q[256];
	long span = per_series;
	uint64_t one_metric = (uint64_t)per_series * (uint64_t)(nseries / 10);
	snprintf(q, sizeof q, "start=%lld&end=%lld&m=sum:bench.m3", T0,
		 T0 + span);
	bench_query(t, "query sum, one metric (memstore)", q, one_metric);
	snprintf(q, sizeof q, "start=%lld&end=%lld&m=avg:1m-avg:bench.m3"
		 "{host=*}", T0, T0 + span);
	bench_query(t, "query 1m-avg by host (memstore)", q, one_metric);

	t0 = now_s();
	if ((rc = tsd_compact(t, 1)))
		die("compact", rc);
	tsd_stats(t, &st);
	row("compact finished rows", now_s() - t0, (double)st.rows_compacted,
	    "rows", 0);

	t0 = now_s();
	if ((rc = cf_db_flush(db)))
		die("flush", rc);
	row("engine flush", now_s() - t0, (double)npoints, "points", 0);

	snprintf(q, sizeof q, "start=%lld&end=%lld&m=sum:bench.m3", T0,
		 T0 + span);
	bench_query(t, "query sum, one metric (store files)", q, one_metric);
	snprintf(q, sizeof q, "start=%lld&end=%lld&m=sum:rate:bench.m3"
		 "{dc=d1}", T0, T0 + span);
	bench_query(t, "query rate, a third of the series", q,
		    one_metric / 3);
	snprintf(q, sizeof q, "start=%lld&end=%lld&m=sum:bench.m3", T0 + span / 2,
		 T0 + span / 2 + 60);
	bench_query(t, "query one minute (store files)", q,
		    (uint64_t)(nseries / 10) * 60);

	tsd_cursor *c;
	t0 = now_s();
	if ((rc = tsd_metric_open(t, "bench.m5", &c)))
		die("dump", rc);
	uint64_t db_bytes = drain(c);
	tsd_cursor_close(c);
	row("dump one metric", now_s() - t0, (double)one_metric, "points",
	    (double)db_bytes);

	tsd_close(t);
	cf_db_close(db);
	if (dir == dirbuf) {
		char cmd[300];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	return 0;
}
