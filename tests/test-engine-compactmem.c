/*
 * test-engine-compactmem: a major compaction of one column of a million
 * versions with delete markers spread among them (Deletes of a version,
 * some written before their put, DeleteColumns, DeleteFamily markers,
 * versions rewritten) holds a bounded state, not ~100 bytes a cell:
 * the process's peak memory (VmHWM, reset through /proc/self/clear_refs)
 * grows by less than 16 MiB over the compaction, with the default
 * window (most of what it grows is the store files it reads, which are
 * mapped: their size is told).  The cells it keeps are exactly those of a model that replays
 * the writes in order (HBase's rules with NEW_VERSION_BEHAVIOR,
 * docs/engine.md): VERSIONS 1000 and no TTL; VERSIONS 3, MIN_VERSIONS 1
 * and a TTL that all but the newest versions passed (rule 4 then asks
 * for a pass of its own).  CELLFS_HUGE_N sets the versions (1,000,000),
 * CELLFS_HUGE_HWM_MB the bound in MiB (16; sanitizer builds use 64).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/cellfs.h"
#include "util/buf.h"
#include "util/env.h"
#include "tests/tap.h"

#define NOW INT64_C(1700000000000)

/* --- the model: the writes replayed in sequence order ----------------- */

struct alive {
	int64_t ts;
	int hi;		/* the most puts of higher ts alive at once */
};

struct model {
	int versions, minv;
	int64_t ttl;	/* ms; 0: forever */
	struct alive *a;	/* ts descending, at most versions */
	size_t n;
	size_t markers;
};

static void m_put(struct model *m, int64_t ts)
{
	size_t i, j;

	for (i = 0; i < m->n && m->a[i].ts > ts; i++)
		;
	if (i < m->n && m->a[i].ts == ts) {
		m->a[i].hi = (int)i;	/* the version rewritten: the new
					 * put takes the old one's place */
		return;
	}
	if (i >= (size_t)m->versions)
		return;		/* VERSIONS newer ones alive: dead at once */
	memmove(&m->a[i + 1], &m->a[i], (m->n - i) * sizeof *m->a);
	m->a[i].ts = ts;
	m->a[i].hi = (int)i;
	m->n++;
	for (j = i + 1; j < m->n; j++)
		if ((int)j > m->a[j].hi)
			m->a[j].hi = (int)j;
	if (m->n > (size_t)m->versions)
		m->n--;		/* crowded out */
}

/* a Delete (exact) or a DeleteColumn/DeleteFamily (ts and older) */
static void m_del(struct model *m, int64_t ts, int exact)
{
	size_t k = 0;

	m->markers++;
	for (size_t i = 0; i < m->n; i++)
		if (exact ? m->a[i].ts != ts : m->a[i].ts > ts)
			m->a[k++] = m->a[i];
	m->n = k;
}

/* --- the writes ---------------------------------------------------------- */

static cf_batch *b;
static size_t inb;
static cf_table *tt;

static void flush_batch(void)
{
	if (inb && cf_table_apply(tt, b))
		bail("apply");
	cf_batch_free(b);
	cf_batch_new(&b);
	inb = 0;
}

static void w_put(struct model *m, int64_t ts)
{
	cf_batch_put(b, "big", 3, "cf", 2, "q", 1, ts, "v", 1);
	m_put(m, ts);
	if (++inb == 1000)
		flush_batch();
}

static void w_del(struct model *m, enum cf_delete_kind k, int64_t ts)
{
	cf_batch_delete(b, k, "big", 3, "cf", 2, k == CF_DEL_FAMILY ? NULL :
			"q", k == CF_DEL_FAMILY ? 0 : 1, ts);
	m_del(m, ts, k == CF_DEL_VERSION);
	if (++inb == 1000)
		flush_batch();
}

static long status_kb(const char *what)
{
	FILE *f = fopen("/proc/self/status", "r");
	char l[256];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(l, sizeof l, f))
		if (!strncmp(l, what, strlen(what)))
			v = atol(l + strlen(what));
	fclose(f);
	return v;
}

static int hwm_reset(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	int ok = f && fputs("5", f) >= 0;

	if (f && fclose(f))
		ok = 0;
	return ok;
}

/* bytes of the store files under dir (du -sb), or -1 */
static long long du_bytes(const char *dir)
{
	char cmd[8400];
	long long v = -1;
	FILE *p;

	snprintf(cmd, sizeof cmd, "du -sb '%s'", dir);
	if (!(p = popen(cmd, "r")))
		return -1;
	if (fscanf(p, "%lld", &v) != 1)
		v = -1;
	pclose(p);
	return v;
}

static const char *datadir;

static double secs(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* n versions 10 ms apart, oldest first, the newest at NOW (with tail:
 * 2 s before NOW, and one more at NOW) */
static void one(cf_db *db, const char *name, int versions, int minv,
		int64_t ttl_s, size_t n, long bound_kb, int rewrite, int tail)
{
	struct cf_family f;
	struct model m = { versions, minv, ttl_s * 1000, NULL, 0, 0 };
	struct cf_scan_opts so;
	cf_scanner *s;
	const cf_row *r;
	struct buf got = BUF_INIT, want = BUF_INIT;
	long rss, hwm;
	double t0, t1;
	size_t cells = 0, live = 0;
	char path[4400];
	long long files;
	int rc;

	cf_family_default(&f, "cf");
	f.versions = versions;
	f.min_versions = minv;
	f.ttl = ttl_s ? ttl_s : CF_TTL_FOREVER;
	if (cf_table_create(db, name, &f, 1) || cf_table_open(db, name, &tt))
		bail("create %s", name);
	m.a = calloc((size_t)versions + 1, sizeof *m.a);
	cf_batch_new(&b);
	for (size_t i = 0; i < n; i++) {
		/* oldest first, the newest at NOW */
		int64_t ts = NOW - (int64_t)(n - i) * 10 - (tail ? 2000 : 0);
		if (i % 50 == 7)	/* a Delete before its put */
			w_del(&m, CF_DEL_VERSION, ts);
		w_put(&m, ts);
		if (i % 10 == 3)	/* deleted at once */
			w_del(&m, CF_DEL_VERSION, ts);
		if (i % 97 == 40)	/* an older version, maybe gone */
			w_del(&m, CF_DEL_VERSION, ts - 50);
		if (rewrite && i % 1000 == 999)
			w_put(&m, ts - 20);
		if (i % 100003 == 50000)
			w_del(&m, CF_DEL_COLUMN, ts - 300);
		if (i % 250007 == 125000)
			w_del(&m, CF_DEL_FAMILY, ts - 200);
		if (i % 200000 == 199999) {
			flush_batch();
			cf_table_flush(tt);
		}
		cells++;
	}
	if (tail) {
		w_put(&m, NOW);
		cells++;
	}
	flush_batch();
	cf_batch_free(b);
	cf_table_flush(tt);

	/* what the model keeps: its live puts, less those rule 4 kills */
	for (size_t i = 0; i < m.n; i++) {
		int expired = m.ttl && NOW - m.a[i].ts > m.ttl;
		if (expired && (minv == 0 || m.a[i].hi >= minv))
			continue;
		if (!expired && m.ttl && minv > 0 && m.a[i].hi >= minv)
			bail("%s: a put rule 4 keeps its column for: "
			     "not what this test checks", name);
		buf_printf(&want, " %" PRId64, (NOW - m.a[i].ts) / 10);
		live++;
	}

	snprintf(path, sizeof path, "%s/data/%s", datadir, name);
	files = du_bytes(path);
	rss = status_kb("VmRSS:");
	if (!hwm_reset())
		bail("cannot reset VmHWM (/proc/self/clear_refs)");
	t0 = secs();
	rc = cf_table_compact(tt, 1);
	t1 = secs();
	hwm = status_kb("VmHWM:");
	ok(rc == 0, "%s: major compaction of %zu versions and %zu markers",
	   name, cells, m.markers);
	diag("%s: %.2f s, VmHWM %ld KiB over VmRSS before (%.1f bytes a "
	     "cell; the store files it read, which it maps, are %lld KiB)",
	     name, t1 - t0, hwm - rss, (double)(hwm - rss) * 1024 /
	     (double)(cells + m.markers), files / 1024);
	ok(hwm - rss < bound_kb, "%s: peak memory grew %ld KiB, under %ld "
	   "KiB", name, hwm - rss, bound_kb);

	memset(&so, 0, sizeof so);
	so.read.max_ts = INT64_MAX;
	so.read.max_versions = INT32_MAX;
	so.read.raw = 1;
	if (cf_scan_open(tt, &so, &s))
		bail("scan");
	while (!(rc = cf_scan_next(s, &r)) && r)
		for (size_t i = 0; i < cf_row_count(r); i++) {
			const struct cf_cell *x = cf_row_cell(r, i);
			buf_printf(&got, " %" PRId64 "%s",
				   (NOW - x->ts) / 10, x->kind ? "D" : "");
		}
	cf_scan_close(s);
	ok(rc == 0 && got.len == want.len &&
	   !memcmp(got.p, want.p, got.len),
	   "%s: it keeps the model's %zu versions, nothing else", name,
	   live);
	if (got.len != want.len || memcmp(got.p, want.p, got.len)) {
		diag("kept (10 ms ago):%.*s", got.len > 2000 ? 2000 :
		     (int)got.len, (const char *)got.p);
		diag("model:%.*s", want.len > 2000 ? 2000 : (int)want.len,
		     (const char *)want.p);
	}
	cf_table_close(tt);
	buf_release(&got);
	buf_release(&want);
	free(m.a);
}

int main(void)
{
	const char *ns = getenv("CELLFS_HUGE_N");
	const char *hs = getenv("CELLFS_HUGE_HWM_MB");
	size_t n = ns ? (size_t)strtoul(ns, NULL, 10) : 1000000;
	long bound = (hs ? atol(hs) : 16) * 1024;
	struct cf_options o;
	cf_db *db;

	plan(6);
	env_clock_set(NOW);
	cf_options_default(&o);
	o.background = 0;
	o.sync_mode = CF_SYNC_NONE;
	o.block_cache = 1u << 20;
	datadir = tap_tmpdir("engine-compactmem");
	if (cf_db_open(datadir, &o, &db))
		bail("open");
	one(db, "keep1000", 1000, 0, 0, n, bound, 1, 0);
	/* every version but the newest past a TTL of 1 s: the two below
	 * it saw one newer put alive (MIN_VERSIONS 1), so they die */
	one(db, "ttl", 3, 1, 1, n, bound, 0, 1);
	cf_db_close(db);
	tap_rmdir(datadir);
	return done_testing();
}
