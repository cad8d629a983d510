/*
 * engine_bench: single-threaded throughput of the cellfs engine in the
 * db_bench style: 16-byte keys, 100-byte values (half compressible),
 * snappy, bloom filters, WAL on without fsync (sync=none).
 *
 *   engine_bench [-n ENTRIES] [-d DIR]
 *   engine_bench -S MIB [-d DIR]    time a split of a region of MIB MiB
 *
 * Prints one table row per workload: ops/s, MB/s, p50 and p99 latency.
 * A benchmark, never a test: it asserts nothing about time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "engine/cellfs.h"
#include "util/log.h"
#include "tests/bench/values.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void make_key(uint64_t i, char *k)
{
	/* 16 decimal digits, as db_bench */
	for (int j = 15; j >= 0; j--) {
		k[j] = (char)('0' + i % 10);
		i /= 10;
	}
	k[16] = 0;
}

static void make_value(uint64_t i, char *v)
{
	bench_value(i, v, 100);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

struct result {
	const char *name;
	uint64_t ops;
	double secs;
	double bytes;
	double *lat;
};

static void report(struct result *r)
{
	double p50 = 0, p99 = 0;

	if (r->lat && r->ops) {
		qsort(r->lat, r->ops, sizeof *r->lat, cmp_double);
		p50 = r->lat[r->ops / 2] * 1e6;
		p99 = r->lat[r->ops * 99 / 100] * 1e6;
	}
	printf("| %-12s | %10" PRIu64 " | %8.2f | %11.0f | %7.1f | %7.2f | %7.2f |\n",
	       r->name, r->ops, r->secs, (double)r->ops / r->secs,
	       r->bytes / r->secs / 1e6, p50, p99);
	fflush(stdout);
}

static void fill(cf_table *t, uint64_t n, int random, struct result *r)
{
	cf_batch *b;
	char k[17], v[100];
	double start = now();

	cf_batch_new(&b);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t id = random ? rnd() % n : i;
		double t0 = now();
		make_key(id, k);
		make_value(id, v);
		cf_batch_clear(b);
		cf_batch_put(b, k, 16, "f", 1, "", 0, CF_TS_NOW, v, 100);
		if (cf_table_apply(t, b)) {
			fprintf(stderr, "put failed\n");
			exit(1);
		}
		r->lat[i] = now() - t0;
	}
	r->secs = now() - start;
	r->ops = n;
	r->bytes = (double)n * 116;
	cf_batch_free(b);
}

static void readrandom(cf_table *t, uint64_t n, uint64_t space, int missing,
		       struct result *r)
{
	char k[17];
	uint64_t found = 0;
	double start = now();

	for (uint64_t i = 0; i < n; i++) {
		cf_row *row;
		double t0 = now();
		/* A missing key: a written one without its last byte, among
		 * the written keys (LevelDB 1.23 db_bench's ReadMissing). */
		make_key(rnd() % space, k);
		if (cf_table_get(t, k, missing ? 15 : 16, NULL, &row) == CF_OK) {
			found += cf_row_count(row) > 0;
			cf_row_free(row);
		}
		r->lat[i] = now() - t0;
	}
	r->secs = now() - start;
	r->ops = n;
	r->bytes = (double)found * 116;
	if (missing && found)
		fprintf(stderr, "warning: %" PRIu64 " missing keys found\n",
			found);
	if (!missing && found != n)
		fprintf(stderr, "warning: %" PRIu64 " of %" PRIu64 " found\n",
			found, n);
}

static void readseq(cf_table *t, struct result *r)
{
	struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };
	cf_scanner *s;
	const cf_row *row;
	uint64_t n = 0;
	double start = now();

	cf_scan_open(t, &so, &s);
	while (cf_scan_next(s, &row) == CF_OK && row)
		n++;
	cf_scan_close(s);
	r->secs = now() - start;
	r->ops = n;
	r->bytes = (double)n * 116;
	r->lat = NULL;
}

/* Loads a region of mib MiB (1 KiB incompressible values), then times
 * a split at its middle: the split copies no data, so its time should
 * not grow with the region. */
static int split_bench(const char *dir, uint64_t mib)
{
	struct cf_options o;
	struct cf_family f;
	struct cf_region_info *ri;
	struct rusage ru;
	cf_db *db;
	cf_table *t;
	cf_batch *b;
	char k[17], v[1024];
	uint64_t n = mib * 1024;
	double t0, t1, load;
	size_t nr;

	cf_options_default(&o);
	o.sync_mode = CF_SYNC_NONE;
	o.split_size = UINT64_MAX;	/* only the manual split */
	cf_family_default(&f, "f");
	if (cf_db_open(dir, &o, &db) || cf_table_create(db, "s", &f, 1) ||
	    cf_table_open(db, "s", &t))
		return 1;
	cf_batch_new(&b);
	t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		make_key(i, k);
		for (int j = 0; j < 1024; j += 8) {
			uint64_t x = rnd();
			memcpy(v + j, &x, 8);
		}
		cf_batch_clear(b);
		cf_batch_put(b, k, 16, "f", 1, "", 0, CF_TS_NOW, v, sizeof v);
		if (cf_table_apply(t, b))
			return 1;
	}
	cf_table_flush(t);
	cf_table_compact(t, 1);
	load = now() - t0;
	getrusage(RUSAGE_SELF, &ru);
	cf_table_regions(t, &ri, &nr);
	printf("| %6" PRIu64 " MiB | load %6.1f s | on disk %7.1f MiB | ",
	       mib, load, (double)ri[0].disk_bytes / 1048576.0);
	cf_regions_free(ri, nr);
	t0 = now();
	if (cf_table_split(t, NULL, 0))
		return 1;
	t1 = now();
	cf_table_regions(t, &ri, &nr);
	printf("split %7.2f ms | %zu regions | peak RSS %ld MiB |\n",
	       (t1 - t0) * 1000, nr, ru.ru_maxrss / 1024);
	cf_regions_free(ri, nr);
	cf_batch_free(b);
	cf_table_close(t);
	cf_db_close(db);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t split_mib = 0;
	uint64_t n = 1000000;
	const char *dir = "/tmp/cellfs-engine-bench";
	struct cf_options o;
	struct cf_family f;
	cf_db *db;
	cf_table *t;
	struct result r;
	double *lat;
	char cmd[4200];
	int c;

	bench_values_init();

	while ((c = getopt(argc, argv, "n:d:S:")) != -1) {
		if (c == 'n')
			n = strtoull(optarg, NULL, 10);
		else if (c == 'S')
			split_mib = strtoull(optarg, NULL, 10);
		else if (c == 'd')
			dir = optarg;
		else {
			fprintf(stderr, "usage: engine_bench [-n N] [-d DIR]\n");
			return 2;
		}
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd))
		return 1;
	if (split_mib) {
		c = split_bench(dir, split_mib);
		if (system(cmd))
			return 1;
		cf_log_release();
		return c;
	}
	lat = malloc(n * sizeof *lat);
	cf_options_default(&o);
	o.sync_mode = CF_SYNC_NONE;
	o.block_cache = 64u << 20;
	o.flush_size = 64u << 20;
	cf_family_default(&f, "f");
	if (cf_db_open(dir, &o, &db) || cf_table_create(db, "b", &f, 1) ||
	    cf_table_open(db, "b", &t)) {
		fprintf(stderr, "cannot open %s\n", dir);
		return 1;
	}
	printf("cellfs engine, %" PRIu64 " entries, 16-byte keys, 100-byte "
	       "values, sync=none\n\n", n);
	printf("| %-12s | %10s | %8s | %11s | %7s | %7s | %7s |\n", "workload",
	       "ops", "seconds", "ops/s", "MB/s", "p50 us", "p99 us");
	printf("|--------------|------------|----------|-------------|---------|---------|---------|\n");
	r = (struct result){ "fillseq", 0, 0, 0, lat };
	fill(t, n, 0, &r);
	report(&r);
	r = (struct result){ "fillrandom", 0, 0, 0, lat };
	fill(t, n, 1, &r);
	report(&r);
	cf_table_flush(t);
	cf_table_compact(t, 1);
	r = (struct result){ "readrandom", 0, 0, 0, lat };
	readrandom(t, n, n, 0, &r);
	report(&r);
	r = (struct result){ "readmissing", 0, 0, 0, lat };
	readrandom(t, n, n, 1, &r);
	report(&r);
	r = (struct result){ "readseq", 0, 0, 0, NULL };
	readseq(t, &r);
	report(&r);
	{
		struct cf_stats s;
		struct rusage ru;
		cf_db_stats(db, &s);
		getrusage(RUSAGE_SELF, &ru);
		printf("\nstore files %" PRIu64 ", bytes on disk %" PRIu64
		       ", cache hits %" PRIu64 ", misses %" PRIu64
		       ", bloom skips %" PRIu64 ", peak RSS %ld MB\n",
		       s.store_files, s.disk_bytes, s.cache_hits,
		       s.cache_misses, s.bloom_skips, ru.ru_maxrss / 1024);
	}
	cf_table_close(t);
	cf_db_close(db);
	free(lat);
	if (system(cmd))
		return 1;
	cf_log_release();
	return 0;
}
