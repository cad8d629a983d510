/*
 * test-tsd-recent.c: the recent points (tsd/recent.c) against the plain
 * path.  Two tsd handles share one engine: one keeps the recent points,
 * the other (recent_bytes 0) always scans the table.  Random rounds of
 * puts (in and out of order, seconds and milliseconds, integers of each
 * width and floats, points written again with the same or another
 * value, hours before the window), writes tsd did not make (rows and
 * cells deleted, cells put under the table), row compactions, flushes,
 * the clock moving the window, handles closed and opened again (a
 * restart: the copy rebuilt from the table), a memory bound that drops
 * hours; after each round a set of queries must give byte-identical text
 * and JSON from both handles, and the copy must have answered some of
 * them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/cellfs.h"
#include "tests/tap.h"
#include "tsd/tsd.h"
#include "util/buf.h"
#include "util/env.h"
#include "util/err.h"

static cf_db *db;
static const char *dir;

/* 2026-01-01 12:00:00 UTC: the clock the window is counted from */
#define NOW_S 1767268800LL

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static tsd *open_tsd(uint64_t recent_bytes)
{
	struct tsd_options o;
	tsd *t;

	tsd_options_default(&o);
	o.compact_interval_ms = 0;	/* maintenance runs in the query */
	o.recent_bytes = recent_bytes;
	if (tsd_open(db, &o, &t))
		bail("tsd_open failed");
	return t;
}

/* The whole answer of query qs in format fmt into out ("ERR n" when
 * it fails). */
static void run_query(tsd *t, const char *qs, enum tsd_format fmt,
		      struct buf *out)
{
	struct tsd_error e;
	tsd_cursor *c;
	char tmp[8192];
	uint64_t off = 0;
	size_t got;
	int rc;

	buf_reset(out);
	rc = tsd_query_open(t, qs, strlen(qs), fmt, &c, &e);
	if (rc) {
		buf_printf(out, "ERR %d %s", rc, e.reason);
		return;
	}
	while ((rc = tsd_cursor_pread(c, tmp, sizeof tmp, off, &got)) == 0 &&
	       got) {
		buf_append(out, tmp, got);
		off += got;
	}
	if (rc)
		buf_printf(out, "ERR read %d", rc);
	tsd_cursor_close(c);
}

static int64_t now_s(void)
{
	return env_now_ms() / 1000;
}

/* The last points written (metric, host, time, ms): some are written
 * again. */
static struct { int m, h, ms; int64_t ts, frac; } seen[64];
static unsigned nseen;

/* A random point line of the recent hours (or, rarely, older). */
static int point_line(char *out, size_t n, int64_t *last)
{
	int m = (int)(rnd() % 3), h = (int)(rnd() % 5);
	int64_t ts, frac = (int64_t)(rnd() % 1000);
	uint64_t k = rnd() % 100;
	int ms = rnd() % 8 == 0;
	char val[64];

	if (k < 70)		/* in order */
		ts = *last += 1 + (int64_t)(rnd() % 20);
	else if (k < 88)	/* anywhere in the last 40 hours */
		ts = now_s() - (int64_t)(rnd() % (40 * 3600));
	else if (k < 90 || !nseen)	/* near the last ones */
		ts = *last - (int64_t)(rnd() % 60);
	else {			/* a point written again */
		unsigned i = (unsigned)(rnd() % (nseen < 64 ? nseen : 64));
		m = seen[i].m;
		h = seen[i].h;
		ts = seen[i].ts;
		ms = seen[i].ms;
		frac = seen[i].frac;
	}
	if (ts > now_s())
		ts = *last = now_s() - (int64_t)(rnd() % 3600);
	seen[nseen++ % 64].m = m;
	seen[(nseen - 1) % 64].h = h;
	seen[(nseen - 1) % 64].ts = ts;
	seen[(nseen - 1) % 64].ms = ms;
	seen[(nseen - 1) % 64].frac = frac;
	switch (rnd() % 6) {
	case 0: snprintf(val, sizeof val, "%d", (int)(rnd() % 200) - 100); break;
	case 1: snprintf(val, sizeof val, "%d", (int)(rnd() % 60000) - 30000); break;
	case 2: snprintf(val, sizeof val, "%lld", (long long)(rnd() % 4000000000ULL)); break;
	case 3: snprintf(val, sizeof val, "%lld", (long long)(rnd() >> 1)); break;
	case 4: snprintf(val, sizeof val, "%.2f", (double)(rnd() % 100000) / 100); break;
	default: snprintf(val, sizeof val, "%.1f", (double)(rnd() % 64) / 2); break;
	}
	if (ms)
		return snprintf(out, n, "r.m%d %lld%03d %s host=h%d dc=d%d\n",
				m, (long long)ts, (int)frac, val, h, h % 2);
	return snprintf(out, n, "r.m%d %lld %s host=h%d dc=d%d\n", m,
			(long long)ts, val, h, h % 2);
}

static void put_some(tsd *t, int lines, int64_t *last)
{
	struct buf b = BUF_INIT;
	struct tsd_error e;
	char line[200];

	for (int i = 0; i < lines; i++) {
		int n = point_line(line, sizeof line, last);
		buf_append(&b, line, (size_t)n);
	}
	if (tsd_put_text(t, (const char *)b.p, b.len, &e))
		bail("put: %s", e.reason);
	env_clock_advance(1);	/* the next write is a newer version */
	buf_release(&b);
}

/* A write tsd does not make: a row deleted, a cell deleted, or a cell
 * put (an OpenTSDB single point) into a row of the table. */
static void foreign_write(void)
{
	cf_table *tb;
	cf_scanner *s;
	const cf_row *row;
	struct cf_scan_opts so;
	cf_batch *b;
	uint64_t skip = rnd() % 200;

	if (cf_table_open(db, "tsdb", &tb))
		bail("open tsdb");
	memset(&so, 0, sizeof so);
	so.read.max_ts = INT64_MAX;
	so.read.max_versions = 1;
	if (cf_scan_open(tb, &so, &s))
		bail("scan");
	const cf_row *pick = NULL;
	while (cf_scan_next(s, &row) == CF_OK && row) {
		pick = row;
		if (skip-- == 0)
			break;
	}
	if (pick && cf_batch_new(&b) == CF_OK) {
		size_t klen;
		const unsigned char *key = cf_row_key(pick, &klen);
		const struct cf_cell *c = cf_row_cell(pick, 0);
		switch (rnd() % 3) {
		case 0:
			cf_batch_delete(b, CF_DEL_ROW, key, klen, NULL, 0,
					NULL, 0, CF_TS_NOW);
			break;
		case 1:
			cf_batch_delete(b, CF_DEL_COLUMN, key, klen, "t", 1,
					c->qual, c->qlen, CF_TS_NOW);
			break;
		default: {
			/* 7 at second 1234 of the hour, a 1-byte integer */
			unsigned char q[2] = { 0x4d, 0x20 }, v = 7;
			cf_batch_put(b, key, klen, "t", 1, q, 2, CF_TS_NOW,
				     &v, 1);
		}
		}
		if (cf_table_apply(tb, b))
			bail("foreign write");
		cf_batch_free(b);
	}
	cf_scan_close(s);
	cf_table_close(tb);
}

static int compare(tsd *rec, tsd *plain, const char *what)
{
	static const char *const subs[] = {
		"sum:r.m0", "avg:r.m1{host=*}", "max:r.m2{dc=d1}",
		"none:r.m0", "sum:1m-avg:r.m1", "zimsum:10m-max-zero:r.m2",
		"sum:rate:r.m0{host=h1|h3}", "min:r.m1{host=h2}",
		"count:1h-count:r.m2",
	};
	struct buf a = BUF_INIT, b = BUF_INIT;
	char qs[512];
	int bad = 0;
	int64_t n = now_s();
	int64_t ranges[][2] = {
		{ n - 41 * 3600, n }, { n - 3600, n }, { n - 20 * 3600 + 77,
		  n - 2 * 3600 - 5 }, { n - 36 * 3600, n - 30 * 3600 },
	};

	for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
		for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
			snprintf(qs, sizeof qs, "start=%lld&end=%lld&m=%s%s",
				 (long long)ranges[r][0],
				 (long long)ranges[r][1], subs[i],
				 i % 2 ? "&ms" : "");
			enum tsd_format fmt = (r + i) % 3 == 0 ? TSD_FMT_JSON
							       : TSD_FMT_TEXT;
			run_query(rec, qs, fmt, &a);
			run_query(plain, qs, fmt, &b);
			if (a.len != b.len || memcmp(a.p, b.p, a.len)) {
				if (!bad++)
					diag("%s: %s: %zu bytes vs %zu",
					     what, qs, a.len, b.len);
			}
		}
	buf_release(&a);
	buf_release(&b);
	return bad;
}

static uint64_t recent_answered(tsd *t)
{
	struct tsd_stats st;
	tsd_stats(t, &st);
	return st.query_points_recent;
}

static void test_model(uint64_t bytes, int rounds, const char *what)
{
	tsd *rec = open_tsd(bytes), *plain = open_tsd(0);
	int64_t last = now_s() - 30 * 3600;
	int bad = 0, restarts = 0, foreign = 0;
	uint64_t answered = 0;
	struct tsd_stats st;

	for (int round = 0; round < rounds; round++) {
		put_some(rec, 50 + (int)(rnd() % 300), &last);
		switch (rnd() % 8) {
		case 0:
			foreign_write();
			foreign++;
			break;
		case 1:
			tsd_compact(rec, 1);
			break;
		case 2:
			cf_db_flush(db);
			break;
		case 3:
			env_clock_advance(20 * 60 * 1000);
			break;
		case 4:
			answered += recent_answered(rec);
			tsd_close(rec);
			rec = open_tsd(bytes);
			restarts++;
			break;
		default:
			break;
		}
		bad += compare(rec, plain, what);
	}
	answered += recent_answered(rec);
	tsd_stats(rec, &st);
	ok(bad == 0, "%s: %d rounds (%d restarts, %d foreign writes), every "
	   "query the same from both paths", what, rounds, restarts, foreign);
	ok(answered > 0, "%s: the recent points answered (%llu points)", what,
	   (unsigned long long)answered);
	ok(bytes == 0 || st.recent_bytes <= bytes, "%s: within its bound "
	   "(%llu bytes, %llu points)", what,
	   (unsigned long long)st.recent_bytes,
	   (unsigned long long)st.recent_points);
	tsd_close(rec);
	tsd_close(plain);
}

/* A point written again with another value: its row is read from the
 * table, whose newest version wins. */
static void test_rewrite(void)
{
	tsd *rec = open_tsd(1 << 20), *plain = open_tsd(0);
	struct buf a = BUF_INIT, b = BUF_INIT;
	struct tsd_error e;
	char text[256], qs[256];
	int64_t t0 = now_s() - 600;

	snprintf(text, sizeof text, "w.m %lld 1 h=a\nw.m %lld 2 h=a\n",
		 (long long)t0, (long long)t0 + 10);
	is_int(tsd_put_text(rec, text, strlen(text), &e), 0, "two points");
	snprintf(qs, sizeof qs, "start=%lld&m=sum:w.m", (long long)t0 - 60);
	run_query(rec, qs, TSD_FMT_TEXT, &a);
	snprintf(text, sizeof text, "w.m %lld 1 h=a\nw.m %lld 2 h=a\n",
		 (long long)t0, (long long)t0 + 10);
	is_mem(a.p, a.len, text, strlen(text), "read from the copy");
	env_clock_advance(1000);	/* a newer version */
	snprintf(text, sizeof text, "w.m %lld 5.5 h=a\n", (long long)t0 + 10);
	is_int(tsd_put_text(rec, text, strlen(text), &e), 0,
	       "the second point again, another value");
	run_query(rec, qs, TSD_FMT_TEXT, &a);
	run_query(plain, qs, TSD_FMT_TEXT, &b);
	snprintf(text, sizeof text, "w.m %lld 1.0 h=a\nw.m %lld 5.5 h=a\n",
		 (long long)t0, (long long)t0 + 10);
	is_mem(a.p, a.len, text, strlen(text), "the newest value, as the "
	       "table has it");
	is_mem(b.p, b.len, a.p, a.len, "the same from the table");
	buf_release(&a);
	buf_release(&b);
	tsd_close(rec);
	tsd_close(plain);
}

int main(void)
{
	struct cf_options o;

	alarm(300);
	dir = tap_tmpdir("tsd-recent");
	cf_options_default(&o);
	o.background = 0;
	o.sync_mode = CF_SYNC_NONE;
	o.flush_size = 256 << 10;
	if (cf_db_open(dir, &o, &db))
		bail("cf_db_open %s", dir);
	env_clock_set(NOW_S * 1000);
	test_rewrite();
	test_model(256u << 20, 40, "default bound");
	test_model(64 << 10, 30, "a 64 KiB bound");
	env_clock_set(-1);
	cf_db_close(db);
	tap_rmdir(dir);
	return done_testing();
}
