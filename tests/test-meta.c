/*
 * test-meta: the SQLite catalog (meta/meta.h, docs/catalog.md).
 *
 * Every function with exact values; transactions (rollback, commit across
 * reopen, nesting with savepoints, a failing step inside a transaction, a
 * begin refused by another connection's lock); region order on binary
 * keys; NUL bytes in blobs; early stop and re-entry of lists; files that
 * are not catalogs; a damaged catalog; a commit that cannot write
 * (RLIMIT_FSIZE); and crash consistency: a child committing transactions
 * is SIGKILLed at random points 20 times and the catalog must always hold
 * whole transactions only.
 *
 * CF_TEST_SEED=n repeats a run.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "meta/meta.h"
#include "tests/tap.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"

static char dbpath[4200];
static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: the sequence depends on the seed only */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static int log_has(const char *needle)
{
	struct buf b = BUF_INIT;
	int found;

	if (cf_log_dump(&b) || buf_putc(&b, 0))
		bail("cf_log_dump");
	found = strstr((const char *)b.p, needle) != NULL;
	buf_release(&b);
	return found;
}

static struct meta *open_ok(void)
{
	struct meta *m = NULL;
	int rc = meta_open(dbpath, &m);

	if (rc != CF_OK || !m)
		bail("meta_open %s: %s", dbpath, cf_strerror(rc));
	return m;
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0)
		bail("cannot write %s", path);
}

static size_t read_file(const char *path, void *p, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		bail("cannot read %s", path);
	n = fread(p, 1, cap, f);
	fclose(f);
	return n;
}

static void rm_catalog(void)
{
	const char *sfx[] = { "", "-wal", "-shm", "-journal" };
	char p[4300];

	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof p, "%s%s", dbpath, sfx[i]);
		unlink(p);
	}
}

/* Runs one SQL text on the catalog through a separate connection (to
 * inspect or damage it behind meta's back). */
static int raw_sql(const char *q, char *out, size_t outlen)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	int e;

	e = sqlite3_open(dbpath, &db);
	if (e == SQLITE_OK)
		e = sqlite3_prepare_v2(db, q, -1, &s, NULL);
	if (e == SQLITE_OK) {
		e = sqlite3_step(s);
		if (e == SQLITE_ROW && out)
			snprintf(out, outlen, "%s",
				 sqlite3_column_text(s, 0) ?
				 (const char *)sqlite3_column_text(s, 0) : "");
		if (e == SQLITE_ROW || e == SQLITE_DONE)
			e = SQLITE_OK;
	}
	sqlite3_finalize(s);
	sqlite3_close(db);
	return e;
}

/* --- collectors ------------------------------------------------------ */

struct trow { int64_t id; char name[64]; };
struct tables { struct trow r[16]; int n, stop_at, inner_rc; struct meta *m; };

static int on_table(const struct meta_table *t, void *arg)
{
	struct tables *c = arg;

	if (c->n >= 16)
		return -100;
	c->r[c->n].id = t->id;
	snprintf(c->r[c->n].name, sizeof c->r[c->n].name, "%s", t->name);
	c->n++;
	return c->n == c->stop_at ? 7 : 0;
}

static int on_table_reenter(const struct meta_table *t, void *arg)
{
	struct tables *c = arg;
	struct tables inner = { .stop_at = -1 };

	c->inner_rc = meta_table_list(c->m, on_table, &inner);
	return on_table(t, arg);
}

static struct tables list_tables(struct meta *m)
{
	struct tables c = { .stop_at = -1 };
	int rc = meta_table_list(m, on_table, &c);

	if (rc)
		bail("meta_table_list: %d", rc);
	return c;
}

struct frow { char name[32]; char settings[128]; };
struct fams { struct frow r[16]; int n, stop_at; };

static int on_family(const char *name, const char *settings, void *arg)
{
	struct fams *c = arg;

	if (c->n >= 16)
		return -100;
	snprintf(c->r[c->n].name, sizeof c->r[c->n].name, "%s", name);
	snprintf(c->r[c->n].settings, sizeof c->r[c->n].settings, "%s",
		 settings);
	c->n++;
	return c->n == c->stop_at ? 9 : 0;
}

struct rrow {
	int64_t id, table_id;
	unsigned char start[64], end[64];
	size_t sl, el;
	int start_null, end_null;
	uint64_t flushed;
};
struct regs { struct rrow r[32]; int n, stop_at; };

static int on_region(const struct meta_region *r, void *arg)
{
	struct regs *c = arg;
	struct rrow *w;

	if (c->n >= 32 || r->startlen > 64 || r->endlen > 64)
		return -100;
	w = &c->r[c->n++];
	w->id = r->id;
	w->table_id = r->table_id;
	w->start_null = r->start == NULL;
	w->end_null = r->end == NULL;
	w->sl = r->startlen;
	w->el = r->endlen;
	if (r->start && r->startlen)
		memcpy(w->start, r->start, r->startlen);
	if (r->end && r->endlen)
		memcpy(w->end, r->end, r->endlen);
	w->flushed = r->flushed_seq;
	return c->n == c->stop_at ? 5 : 0;
}

static struct regs list_regions(struct meta *m, int64_t table_id)
{
	struct regs c = { .stop_at = -1 };
	int rc = meta_region_list(m, table_id, on_region, &c);

	if (rc)
		bail("meta_region_list: %d", rc);
	return c;
}

struct xrow {
	uint64_t id, size, max_seq;
	int64_t region_id, home;
	char family[32];
	unsigned char lo[64], hi[64];
	size_t lolen, hilen;
	int lo_null, hi_null;
};
struct files { struct xrow r[64]; int n, stop_at; };

static int on_file(const struct meta_file *f, void *arg)
{
	struct files *c = arg;
	struct xrow *w;

	if (c->n >= 64 || f->lolen > 64 || f->hilen > 64)
		return -100;
	w = &c->r[c->n++];
	w->id = f->id;
	w->region_id = f->region_id;
	w->home = f->home_region;
	w->size = f->size;
	w->max_seq = f->max_seq;
	snprintf(w->family, sizeof w->family, "%s", f->family);
	w->lo_null = f->lo == NULL;
	w->hi_null = f->hi == NULL;
	w->lolen = f->lolen;
	w->hilen = f->hilen;
	if (f->lo && f->lolen)
		memcpy(w->lo, f->lo, f->lolen);
	if (f->hi && f->hilen)
		memcpy(w->hi, f->hi, f->hilen);
	return c->n == c->stop_at ? 3 : 0;
}

static struct files list_files(struct meta *m, int64_t region_id)
{
	struct files c = { .stop_at = -1 };
	int rc = meta_file_list(m, region_id, on_file, &c);

	if (rc)
		bail("meta_file_list: %d", rc);
	return c;
}

static int64_t refs(struct meta *m, uint64_t id)
{
	int64_t n = -1;

	if (meta_file_refs(m, id, &n))
		bail("meta_file_refs");
	return n;
}

static int count_files(const struct meta_file *f, void *arg)
{
	(void)f;
	(*(int64_t *)arg)++;
	return 0;
}

static int64_t nfiles(struct meta *m, int64_t region_id)
{
	int64_t n = 0;

	if (meta_file_list(m, region_id, count_files, &n))
		bail("meta_file_list");
	return n;
}

static struct meta_region region(int64_t id, int64_t table_id,
				 const void *s, size_t sl, const void *e,
				 size_t el, uint64_t flushed)
{
	struct meta_region r = { id, table_id, s, sl, e, el, flushed, 0 };
	return r;
}

static struct meta_file file(uint64_t id, int64_t region_id,
			     const char *fam)
{
	struct meta_file f = { .id = id, .region_id = region_id,
			       .family = fam, .home_region = region_id,
			       .size = 1000 + id, .max_seq = 50 + id };
	return f;
}

/* --- tests ----------------------------------------------------------- */

static void test_fresh(void)
{
	struct meta *m = open_ok();
	char v[64] = "";

	ok(meta_check(m) == CF_OK, "fresh catalog passes the integrity check");
	meta_close(m);
	m = open_ok();		/* reopening an existing catalog */
	meta_close(m);
	is_int(raw_sql("PRAGMA user_version", v, sizeof v), SQLITE_OK,
	       "catalog readable by sqlite3");
	is_str(v, "2", "user_version is the schema version");
	raw_sql("PRAGMA journal_mode", v, sizeof v);
	is_str(v, "wal", "journal mode WAL is persistent");
	raw_sql("SELECT group_concat(name, ',') FROM (SELECT name FROM "
		"sqlite_master WHERE type = 'index' AND name NOT LIKE "
		"'sqlite_%' ORDER BY name)", v, sizeof v);
	is_str(v, "files_by_id,regions_by_table", "lookup indexes exist");
}

static void test_kv(void)
{
	struct meta *m = open_ok();
	uint64_t v = 42;

	is_int(meta_get_u64(m, "next_file", &v), CF_ENOTFOUND,
	       "kv: missing key is ENOTFOUND");
	is_int(v, 42, "kv: missing key leaves *v");
	is_int(meta_set_u64(m, "next_file", 7), CF_OK, "kv: set");
	is_int(meta_get_u64(m, "next_file", &v), CF_OK, "kv: get");
	is_int(v, 7, "kv: value");
	meta_set_u64(m, "next_file", 8);
	meta_get_u64(m, "next_file", &v);
	is_int(v, 8, "kv: set replaces");
	meta_set_u64(m, "last_seq", UINT64_MAX);
	meta_set_u64(m, "zero", 0);
	meta_close(m);
	m = open_ok();
	v = 0;
	meta_get_u64(m, "last_seq", &v);
	ok(v == UINT64_MAX, "kv: UINT64_MAX round-trips across reopen");
	v = 1;
	meta_get_u64(m, "zero", &v);
	is_int(v, 0, "kv: zero");
	meta_get_u64(m, "next_file", &v);
	is_int(v, 8, "kv: other key untouched");
	meta_close(m);
}

static void test_tables(void)
{
	struct meta *m = open_ok();
	struct tables t, c = { .stop_at = 1 };
	int64_t a = 0, b = 0, d = 0, x = -5;

	is_int(meta_table_add(m, "webtable", 0, &a), CF_OK, "table add");
	is_int(meta_table_add(m, "metrics", 0, &b), CF_OK, "table add second");
	ok(a > 0 && b > a, "table ids positive and increasing (%lld %lld)",
	   (long long)a, (long long)b);
	is_int(meta_table_add(m, "webtable", 0, &x), CF_EEXIST,
	       "table add of an existing name: EEXIST");
	is_int(x, -5, "and no id given");
	ok(log_has("UNIQUE constraint failed"),
	   "the SQLite message is in the log");
	is_int(meta_table_put(m, 100, "alpha"), CF_OK, "table put with id");
	is_int(meta_table_put(m, 100, "beta"), CF_EEXIST,
	       "table put of an existing id: EEXIST");
	is_int(meta_table_put(m, 101, "metrics"), CF_EEXIST,
	       "table put of an existing name: EEXIST");
	t = list_tables(m);
	is_int(t.n, 3, "three tables");
	is_str(t.r[0].name, "alpha", "ordered by name: alpha");
	is_int(t.r[0].id, 100, "alpha id");
	is_str(t.r[1].name, "metrics", "then metrics");
	is_int(t.r[1].id, b, "metrics id");
	is_str(t.r[2].name, "webtable", "then webtable");
	is_int(t.r[2].id, a, "webtable id");

	is_int(meta_table_list(m, on_table, &c), 7,
	       "callback's non-zero return ends the list and is returned");
	is_int(c.n, 1, "no row after the stop");
	t = list_tables(m);
	is_int(t.n, 3, "the next list starts from the first row again");

	c = (struct tables){ .stop_at = -1, .m = m };
	is_int(meta_table_list(m, on_table_reenter, &c), CF_OK,
	       "a list whose callback calls the same list completes");
	is_int(c.inner_rc, CF_EBUSY, "the re-entered list is refused (EBUSY)");
	is_int(c.n, 3, "and the outer list saw every row");

	is_int(meta_table_del(m, 100), CF_OK, "table del");
	is_int(meta_table_del(m, 100), CF_OK, "table del of a missing id: OK");
	is_int(meta_table_add(m, "gamma", 0, &d), CF_OK, "table add after del");
	ok(d > 100, "a deleted id is never handed out again (%lld)",
	   (long long)d);
	t = list_tables(m);
	is_int(t.n, 3, "three tables again");
	is_str(t.r[0].name, "gamma", "gamma first");
	meta_close(m);
	m = open_ok();
	meta_table_add(m, "delta", 0, &x);
	ok(x > d, "nor after a reopen (%lld)", (long long)x);
	meta_table_del(m, x);
	meta_close(m);
}

static void test_families(void)
{
	struct meta *m = open_ok();
	struct fams f = { .stop_at = -1 };

	is_int(meta_family_put(m, 1, "cf", "cf VERSIONS=1"), CF_OK,
	       "family put");
	meta_family_put(m, 1, "a", "a VERSIONS=3 TTL=60");
	meta_family_put(m, 2, "cf", "other table");
	is_int(meta_family_put(m, 1, "cf", "cf VERSIONS=5"), CF_OK,
	       "family put replaces");
	is_int(meta_family_list(m, 1, on_family, &f), CF_OK, "family list");
	is_int(f.n, 2, "two families in table 1");
	is_str(f.r[0].name, "a", "ordered by name");
	is_str(f.r[0].settings, "a VERSIONS=3 TTL=60", "settings text exact");
	is_str(f.r[1].name, "cf", "second family");
	is_str(f.r[1].settings, "cf VERSIONS=5", "replaced settings");
	f = (struct fams){ .stop_at = 1 };
	is_int(meta_family_list(m, 1, on_family, &f), 9,
	       "family list early stop returns the callback's value");
	is_int(f.n, 1, "one row before the stop");
	is_int(meta_family_del(m, 1, "a"), CF_OK, "family del");
	is_int(meta_family_del(m, 1, "nope"), CF_OK,
	       "family del of a missing family: OK");
	f = (struct fams){ .stop_at = -1 };
	meta_family_list(m, 1, on_family, &f);
	ok(f.n == 1 && !strcmp(f.r[0].name, "cf"), "one family left");
	f = (struct fams){ .stop_at = -1 };
	meta_family_list(m, 2, on_family, &f);
	ok(f.n == 1 && !strcmp(f.r[0].settings, "other table"),
	   "the other table's family untouched");
	f = (struct fams){ .stop_at = -1 };
	is_int(meta_family_list(m, 99, on_family, &f), CF_OK,
	       "family list of an unknown table");
	is_int(f.n, 0, "is empty");
	meta_close(m);
}

static void test_regions(void)
{
	struct meta *m = open_ok();
	/* the expected order, bytewise with shorter prefixes first */
	static const struct { const char *k; size_t n; } keys[] = {
		{ "", 0 },
		{ "\x00", 1 },
		{ "\x00\x00", 2 },
		{ "\x00\x01", 2 },
		{ "a", 1 },
		{ "a\x00", 2 },
		{ "a\x00z", 3 },
		{ "a\x01", 2 },
		{ "b", 1 },
		{ "\x7f", 1 },
		{ "\x80", 1 },
		{ "\xfe\xff", 2 },
		{ "\xff", 1 },
		{ "\xff\x00", 2 },
		{ "\xff\xff\xff", 3 },
	};
	const int n = (int)(sizeof keys / sizeof *keys);
	int order[sizeof keys / sizeof *keys], good = 1;
	struct regs r;

	/* insert in a shuffled order; ids unrelated to the key order */
	for (int i = 0; i < n; i++)
		order[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(rnd() % (uint64_t)(i + 1)), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (int i = 0; i < n; i++) {
		int k = order[i];
		int next = k + 1 < n ? k + 1 : -1;
		struct meta_region mr = region(
			1000 - k, 10, keys[k].k, keys[k].n,
			next >= 0 ? keys[next].k : NULL,
			next >= 0 ? keys[next].n : 0, 100 + (uint64_t)k);
		if (meta_region_put(m, &mr) != CF_OK)
			good = 0;
	}
	ok(good, "region put x%d", n);
	meta_region_put(m, &(struct meta_region){ 5, 11, "", 0, "", 0, 0, 0 });
	r = list_regions(m, 10);
	is_int(r.n, n, "region list has every region of the table");
	good = r.n == n;
	for (int i = 0; i < n && good; i++) {
		const struct rrow *w = &r.r[i];
		int next = i + 1 < n ? i + 1 : -1;
		if (w->id != 1000 - i || w->table_id != 10 ||
		    w->sl != keys[i].n || memcmp(w->start, keys[i].k, w->sl) ||
		    w->el != (next >= 0 ? keys[next].n : 0) ||
		    (next >= 0 && memcmp(w->end, keys[next].k, w->el)) ||
		    w->flushed != 100 + (uint64_t)i ||
		    w->start_null || w->end_null) {
			diag("region %d: id %lld startlen %zu", i,
			     (long long)w->id, w->sl);
			good = 0;
		}
	}
	ok(good, "regions ordered by start key bytewise (empty first, 0x00 "
	   "and 0xff bytes), keys with NULs exact, start/end never NULL");

	r = (struct regs){ .stop_at = 2 };
	is_int(meta_region_list(m, 10, on_region, &r), 5,
	       "region list early stop returns the callback's value");
	is_int(r.n, 2, "two rows before the stop");
	r = list_regions(m, 11);
	ok(r.n == 1 && r.r[0].id == 5 && r.r[0].sl == 0 && r.r[0].el == 0,
	   "other table: one whole-table region");
	is_int(list_regions(m, 12).n, 0, "a table without regions: none");

	is_int(meta_region_set_flushed(m, 1000, UINT64_MAX - 1), CF_OK,
	       "set flushed");
	is_int(meta_region_set_flushed(m, 4242, 1), CF_ENOTFOUND,
	       "set flushed of a missing region: ENOTFOUND");
	r = list_regions(m, 10);
	ok(r.r[0].flushed == UINT64_MAX - 1, "flushed_seq stored (u64)");

	/* replace: the same id with a new range (a region after a merge) */
	is_int(meta_region_put(m, &(struct meta_region){ 1000, 10, "", 0,
				"a\x00", 2, 3, 0 }), CF_OK,
	       "region put replaces");
	r = list_regions(m, 10);
	ok(r.n == n && r.r[0].id == 1000 && r.r[0].el == 2 &&
	   !memcmp(r.r[0].end, "a\x00", 2) && r.r[0].flushed == 3,
	   "replaced region read back");

	/* region del removes its file rows, not other regions' */
	{
		struct meta_file f1 = file(1, 999, "cf"),
				 f2 = file(2, 999, "cf"),
				 f3 = file(1, 998, "cf");
		meta_file_add(m, &f1);
		meta_file_add(m, &f2);
		meta_file_add(m, &f3);
	}
	is_int(refs(m, 1), 2, "file 1 referenced by two regions");
	is_int(meta_region_del(m, 999), CF_OK, "region del");
	is_int(refs(m, 1), 1, "region del removed its file rows");
	is_int(refs(m, 2), 0, "all of them");
	is_int(nfiles(m, 998), 1, "another region's files stay");
	is_int(meta_region_del(m, 999), CF_OK,
	       "region del of a missing region: OK");
	r = list_regions(m, 10);
	is_int(r.n, n - 1, "one region fewer");
	meta_close(m);
}

static void test_files(void)
{
	struct meta *m = open_ok();
	struct meta_file f = file(30, 7, "cf");
	struct files l;
	const unsigned char lo[] = { 'r', 0, 0xff, 0, 'x' },
			    hi[] = { 0, 0, 0 };

	is_int(meta_file_add(m, &f), CF_OK, "file add, unbounded");
	f = file(10, 7, "meta");
	f.home_region = 3;
	f.size = (1ull << 40) + 5;
	f.max_seq = UINT64_MAX;
	f.lo = lo;
	f.lolen = sizeof lo;
	f.hi = hi;
	f.hilen = sizeof hi;
	is_int(meta_file_add(m, &f), CF_OK, "file add, reference with bounds");
	f = file(20, 7, "cf");
	f.lo = "";
	f.lolen = 0;
	is_int(meta_file_add(m, &f), CF_OK, "file add, empty non-NULL lo");
	is_int(meta_file_add(m, &f), CF_EEXIST,
	       "file add of an existing (region, id): EEXIST");
	f = file(10, 8, "cf");
	is_int(meta_file_add(m, &f), CF_OK,
	       "the same file id in another region");
	l = list_files(m, 7);
	is_int(l.n, 3, "three files in region 7");
	ok(l.r[0].id == 10 && l.r[1].id == 20 && l.r[2].id == 30,
	   "files listed by id");
	ok(l.r[0].region_id == 7 && l.r[0].home == 3 &&
	   !strcmp(l.r[0].family, "meta") && l.r[0].size == (1ull << 40) + 5 &&
	   l.r[0].max_seq == UINT64_MAX, "file 10 fields exact");
	ok(!l.r[0].lo_null && l.r[0].lolen == sizeof lo &&
	   !memcmp(l.r[0].lo, lo, sizeof lo), "lo with NUL and 0xff bytes "
	   "round-trips");
	ok(!l.r[0].hi_null && l.r[0].hilen == 3 && !memcmp(l.r[0].hi, hi, 3),
	   "hi of only NULs round-trips");
	ok(!l.r[1].lo_null && l.r[1].lolen == 0 && l.r[1].hi_null,
	   "empty lo stays non-NULL, absent hi stays NULL");
	ok(l.r[2].lo_null && l.r[2].hi_null && l.r[2].lolen == 0 &&
	   l.r[2].hilen == 0 && l.r[2].home == 7 && l.r[2].size == 1030 &&
	   l.r[2].max_seq == 80, "unbounded file exact");
	is_int(refs(m, 10), 2, "file 10: two references");
	is_int(refs(m, 30), 1, "file 30: one reference");
	is_int(refs(m, 31), 0, "file 31: none");
	is_int(list_files(m, 9).n, 0, "a region without files: none");

	l = (struct files){ .stop_at = 2 };
	is_int(meta_file_list(m, 7, on_file, &l), 3,
	       "file list early stop returns the callback's value");
	is_int(l.n, 2, "two rows before the stop");

	is_int(meta_file_del(m, 7, 10), CF_OK, "file del");
	is_int(meta_file_del(m, 7, 10), CF_ENOTFOUND,
	       "file del again: ENOTFOUND");
	is_int(meta_file_del(m, 9, 30), CF_ENOTFOUND,
	       "file del in the wrong region: ENOTFOUND");
	is_int(refs(m, 10), 1, "file 10: one reference left");
	is_int(nfiles(m, 7), 2, "two files left in region 7");
	meta_close(m);
}

/* tables -> regions -> files, as the engine loads the catalog at open */
struct walk { struct meta *m; int tables, regions, files, rc; };

static int walk_file(const struct meta_file *f, void *arg)
{
	(void)f;
	((struct walk *)arg)->files++;
	return 0;
}

static int walk_region(const struct meta_region *r, void *arg)
{
	struct walk *w = arg;
	int rc;

	w->regions++;
	rc = meta_file_list(w->m, r->id, walk_file, w);
	if (rc)
		w->rc = rc;
	return rc;
}

static int walk_table(const struct meta_table *t, void *arg)
{
	struct walk *w = arg;
	int rc;

	w->tables++;
	rc = meta_region_list(w->m, t->id, walk_region, w);
	if (rc)
		w->rc = rc;
	return rc;
}

static void test_table_del_and_nesting(void)
{
	struct meta *m = open_ok();
	struct walk w = { .m = m };
	int64_t a = 0, b = 0;

	meta_table_add(m, "t1", 0, &a);
	meta_table_add(m, "t2", 0, &b);
	meta_family_put(m, a, "cf", "cf");
	meta_family_put(m, b, "cf", "cf");
	meta_region_put(m, &(struct meta_region){ 501, a, "", 0, "m", 1,
						  0, 0 });
	meta_region_put(m, &(struct meta_region){ 502, a, "m", 1, "", 0,
						  0, 0 });
	meta_region_put(m, &(struct meta_region){ 503, b, "", 0, "", 0, 0, 0 });
	for (uint64_t i = 1; i <= 3; i++) {
		struct meta_file f = file(600 + i, 501, "cf");
		meta_file_add(m, &f);
		f.region_id = 502;	/* two daughters share the files */
		meta_file_add(m, &f);
		f = file(700 + i, 503, "cf");
		meta_file_add(m, &f);
	}
	is_int(meta_table_list(m, walk_table, &w), CF_OK,
	       "nested lists: tables -> regions -> files");
	/* metrics, webtable, gamma (no regions), t1, t2 */
	ok(w.rc == 0 && w.tables == 5 && w.regions == 3 && w.files == 9,
	   "nested lists saw the rows (%d tables %d regions %d files)",
	   w.tables, w.regions, w.files);

	/* inside a transaction that is rolled back: everything returns */
	is_int(meta_begin(m), CF_OK, "begin");
	is_int(meta_table_del(m, a), CF_OK, "table del inside a transaction");
	is_int(list_regions(m, a).n, 0, "its regions are gone inside");
	meta_rollback(m);
	is_int(list_regions(m, a).n, 2, "rollback brings the regions back");
	is_int(refs(m, 601), 2, "and the file rows");
	{
		struct fams f = { .stop_at = -1 };
		meta_family_list(m, a, on_family, &f);
		is_int(f.n, 1, "and the family");
	}

	/* alone: commits on its own */
	is_int(meta_table_del(m, a), CF_OK, "table del outside a transaction");
	is_int(list_regions(m, a).n, 0, "regions removed");
	is_int(refs(m, 601) + refs(m, 602) + refs(m, 603), 0,
	       "file rows of both regions removed");
	{
		struct fams f = { .stop_at = -1 };
		meta_family_list(m, a, on_family, &f);
		is_int(f.n, 0, "families removed");
	}
	is_int(list_regions(m, b).n, 1, "the other table's region stays");
	is_int(nfiles(m, 503), 3, "the other table's files stay");
	meta_close(m);
	m = open_ok();
	is_int(list_regions(m, a).n + nfiles(m, 501) + nfiles(m, 502), 0,
	       "table del persisted");
	meta_close(m);
}

static void test_transactions(void)
{
	struct meta *m = open_ok();
	uint64_t v = 0;
	int64_t id = 0;
	int ntables = list_tables(m).n;

	meta_set_u64(m, "txn", 1);
	is_int(meta_commit(m), CF_EINVAL, "commit without begin: EINVAL");
	meta_rollback(m);	/* without begin: nothing */
	ok(1, "rollback without begin does nothing");

	is_int(meta_begin(m), CF_OK, "begin");
	meta_set_u64(m, "txn", 2);
	meta_table_add(m, "rolled", 0, &id);
	meta_region_put(m, &(struct meta_region){ 801, id, "", 0, "", 0,
						  0, 0 });
	{
		struct meta_file f = file(900, 801, "cf");
		meta_file_add(m, &f);
	}
	meta_get_u64(m, "txn", &v);
	is_int(v, 2, "a change is visible inside its transaction");
	meta_rollback(m);
	meta_get_u64(m, "txn", &v);
	is_int(v, 1, "rollback: counter back");
	is_int(list_tables(m).n, ntables, "rollback: table gone");
	is_int(list_regions(m, id).n, 0, "rollback: region gone");
	is_int(refs(m, 900), 0, "rollback: file row gone");

	is_int(meta_begin(m), CF_OK, "begin");
	meta_set_u64(m, "txn", 3);
	meta_table_add(m, "kept", 0, &id);
	meta_region_put(m, &(struct meta_region){ 802, id, "", 0, "", 0,
						  0, 0 });
	{
		struct meta_file f = file(901, 802, "cf");
		meta_file_add(m, &f);
	}
	is_int(meta_commit(m), CF_OK, "commit");
	meta_close(m);
	m = open_ok();
	meta_get_u64(m, "txn", &v);
	is_int(v, 3, "commit persists across reopen: counter");
	is_int(list_regions(m, id).n, 1, "region");
	is_int(refs(m, 901), 1, "file row");

	/* a failing step does not end the transaction */
	is_int(meta_begin(m), CF_OK, "begin");
	meta_set_u64(m, "txn", 4);
	is_int(meta_table_add(m, "kept", 0, &id), CF_EEXIST,
	       "a refused insert inside a transaction");
	meta_set_u64(m, "after", 1);
	is_int(meta_commit(m), CF_OK, "the transaction still commits");
	meta_get_u64(m, "txn", &v);
	is_int(v, 4, "with the changes before the refused step");
	v = 0;
	meta_get_u64(m, "after", &v);
	is_int(v, 1, "and after it");

	/* nesting: an inner rollback undoes only the inner part */
	is_int(meta_begin(m), CF_OK, "outer begin");
	meta_set_u64(m, "outer", 1);
	is_int(meta_begin(m), CF_OK, "inner begin");
	meta_set_u64(m, "inner", 1);
	meta_set_u64(m, "outer", 2);
	meta_rollback(m);
	meta_get_u64(m, "outer", &v);
	is_int(v, 1, "inner rollback undid the inner change");
	is_int(meta_get_u64(m, "inner", &v), CF_ENOTFOUND,
	       "inner rollback undid the inner insert");
	is_int(meta_begin(m), CF_OK, "second inner begin");
	meta_set_u64(m, "inner", 2);
	is_int(meta_commit(m), CF_OK, "inner commit");
	is_int(meta_region_del(m, 802), CF_OK,
	       "region del nested in a transaction");
	is_int(meta_commit(m), CF_OK, "outer commit");
	meta_close(m);
	m = open_ok();
	v = 0;
	meta_get_u64(m, "outer", &v);
	is_int(v, 1, "outer change persisted");
	meta_get_u64(m, "inner", &v);
	is_int(v, 2, "committed inner change persisted");
	is_int(refs(m, 901) + (int64_t)list_regions(m, id).n, 0,
	       "nested region del persisted");

	/* an outer rollback undoes committed inner parts too */
	meta_begin(m);
	meta_begin(m);
	meta_set_u64(m, "inner", 3);
	meta_commit(m);
	meta_rollback(m);
	meta_get_u64(m, "inner", &v);
	is_int(v, 2, "outer rollback undoes a committed inner part");
	meta_close(m);

	/* close with a transaction open: it is rolled back */
	m = open_ok();
	meta_begin(m);
	meta_set_u64(m, "inner", 4);
	meta_close(m);
	m = open_ok();
	meta_get_u64(m, "inner", &v);
	is_int(v, 2, "close inside a transaction rolls it back");
	meta_close(m);
}

/*
 * Another connection holds the write lock (sqlite3(1) on a live catalog):
 * opening still works (an existing catalog is only read), meta_begin
 * fails with CF_EBUSY after the busy timeout (5 s) and leaves no nesting
 * level behind, so the next meta_begin starts a real transaction.
 */
static void test_busy(void)
{
	struct meta *m;
	sqlite3 *other = NULL;
	uint64_t v;
	time_t t0;
	int rc;

	if (sqlite3_open(dbpath, &other) ||
	    sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL))
		bail("second connection");
	rc = meta_open(dbpath, &m);
	is_int(rc, CF_OK, "open while another connection holds the write "
	       "lock");
	if (rc) {
		sqlite3_close(other);
		return;
	}
	t0 = time(NULL);
	is_int(meta_begin(m), CF_EBUSY, "begin then: EBUSY");
	ok(time(NULL) - t0 >= 4, "after waiting for the busy timeout");
	sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(other);
	is_int(meta_begin(m), CF_OK, "begin once the lock is free");
	meta_set_u64(m, "busy", 1);
	meta_rollback(m);
	is_int(meta_get_u64(m, "busy", &v), CF_ENOTFOUND,
	       "its rollback undoes its change: the failed begin left no "
	       "nesting level");
	meta_close(m);
}

/* Files that are not catalogs are refused, and left as they were. */
static void test_not_catalog(void)
{
	static int sentinel;
	unsigned char junk[4096], back[8192];
	struct meta *m = (struct meta *)(void *)&sentinel;
	char v[32], nodir[4300];

	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = (unsigned char)rnd();
	rm_catalog();
	write_file(dbpath, junk, sizeof junk);
	is_int(meta_open(dbpath, &m), CF_ECORRUPT,
	       "garbage catalog.db: ECORRUPT");
	ok(m == NULL, "no handle on failure");
	ok(log_has("file is not a database"), "SQLite's reason is logged");
	ok(read_file(dbpath, back, sizeof back) == sizeof junk &&
	   !memcmp(back, junk, sizeof junk), "the garbage is left untouched");

	rm_catalog();
	write_file(dbpath, "hello, world\n", 13);
	is_int(meta_open(dbpath, &m), CF_ECORRUPT,
	       "a short text file: ECORRUPT");

	/* a valid SQLite database of something else */
	rm_catalog();
	raw_sql("CREATE TABLE notes(x)", NULL, 0);
	is_int(meta_open(dbpath, &m), CF_ECORRUPT,
	       "another SQLite database: ECORRUPT");
	ok(log_has("not a cellfs catalog"), "logged as not a catalog");
	raw_sql("SELECT count(*) FROM sqlite_master", v, sizeof v);
	is_str(v, "1", "and left as it was");

	/* a catalog from a newer cellfs */
	rm_catalog();
	meta_close(open_ok());
	raw_sql("PRAGMA user_version = 3", NULL, 0);
	is_int(meta_open(dbpath, &m), CF_ECORRUPT,
	       "a newer schema version: ECORRUPT");

	/* version 2 with a table missing */
	rm_catalog();
	meta_close(open_ok());
	raw_sql("DROP TABLE files", NULL, 0);
	is_int(meta_open(dbpath, &m), CF_ECORRUPT,
	       "schema version 2 without the files table: ECORRUPT");
	rm_catalog();

	snprintf(nodir, sizeof nodir, "%s.nodir/catalog.db", dbpath);
	is_int(meta_open(nodir, &m), CF_EIO,
	       "a catalog that cannot be created: EIO");
}

/* Times of tables (created, last schema change) and regions (created). */
struct times { int64_t id, a, b; int n; };

static int on_table_times(const struct meta_table *t, void *arg)
{
	struct times *c = arg;

	c->id = t->id;
	c->a = t->created_ms;
	c->b = t->schema_ms;
	c->n++;
	return 0;
}

static int on_region_times(const struct meta_region *r, void *arg)
{
	struct times *c = arg;

	c->id = r->id;
	c->a = r->created_ms;
	c->n++;
	return 0;
}

static void test_times(void)
{
	struct meta *m;
	struct times t = { 0 }, r = { 0 };
	int64_t id;
	struct meta_region mr = region(7, 0, "", 0, "", 0, 0);

	rm_catalog();
	m = open_ok();
	is_int(meta_table_add(m, "timed", 1700000000123, &id), CF_OK,
	       "table added at a time");
	mr.table_id = id;
	mr.created_ms = 1700000000456;
	is_int(meta_region_put(m, &mr), CF_OK, "region put with a time");
	is_int(meta_table_set_schema_ms(m, id, 1700000000789), CF_OK,
	       "schema time set");
	is_int(meta_table_set_schema_ms(m, id + 1, 1), CF_ENOTFOUND,
	       "schema time of no table: ENOTFOUND");
	meta_close(m);
	m = open_ok();
	meta_table_list(m, on_table_times, &t);
	meta_region_list(m, id, on_region_times, &r);
	ok(t.n == 1 && t.a == 1700000000123 && t.b == 1700000000789,
	   "created_ms and schema_ms read back after reopen");
	ok(r.n == 1 && r.id == 7 && r.a == 1700000000456,
	   "region created_ms reads back");
	is_int(meta_table_put(m, 50, "zrebuilt"), CF_OK, "table put");
	t.n = 0;
	meta_table_list(m, on_table_times, &t);
	ok(t.n == 2 && t.id == 50 && t.a == 0 && t.b == 0,
	   "a table put by fsck has unknown (0) times");
	meta_close(m);
	rm_catalog();
}

/* A catalog written by a cellfs of schema version 1 (the statements it
 * ran) opens: upgraded once to version 2, rows kept, times unknown. */
static void test_migrate(void)
{
	static const char *const v1[] = {
		"CREATE TABLE tables(id INTEGER PRIMARY KEY AUTOINCREMENT,"
		" name TEXT NOT NULL UNIQUE)",
		"CREATE TABLE families(table_id INTEGER NOT NULL, name TEXT "
		"NOT NULL, settings TEXT NOT NULL, PRIMARY KEY(table_id, "
		"name))",
		"CREATE TABLE regions(id INTEGER PRIMARY KEY, table_id "
		"INTEGER NOT NULL, start BLOB NOT NULL, end BLOB NOT NULL, "
		"flushed_seq INTEGER NOT NULL DEFAULT 0)",
		"CREATE INDEX regions_by_table ON regions(table_id, start)",
		"CREATE TABLE files(id INTEGER NOT NULL, region_id INTEGER "
		"NOT NULL, family TEXT NOT NULL, home_region INTEGER NOT NULL,"
		" size INTEGER NOT NULL, max_seq INTEGER NOT NULL, lo BLOB, "
		"hi BLOB, PRIMARY KEY(region_id, id))",
		"CREATE INDEX files_by_id ON files(id)",
		"CREATE TABLE kv(key TEXT PRIMARY KEY, value INTEGER NOT NULL)",
		"INSERT INTO tables(id, name) VALUES (3, 'old')",
		"INSERT INTO regions(id, table_id, start, end, flushed_seq) "
		"VALUES (9, 3, x'', x'6d', 42)",
		"INSERT INTO kv(key, value) VALUES ('next_region', 10)",
		"PRAGMA user_version = 1",
	};
	struct meta *m = NULL;
	struct times t = { 0 }, r = { 0 };
	uint64_t v = 0;
	char out[64] = "";

	rm_catalog();
	for (size_t i = 0; i < sizeof v1 / sizeof v1[0]; i++)
		if (raw_sql(v1[i], NULL, 0) != SQLITE_OK)
			bail("building a version 1 catalog: %s", v1[i]);
	is_int(meta_open(dbpath, &m), CF_OK, "a version 1 catalog opens");
	ok(log_has("upgraded from schema version 1 to 2"),
	   "the upgrade is logged");
	meta_table_list(m, on_table_times, &t);
	meta_region_list(m, 3, on_region_times, &r);
	ok(t.n == 1 && t.id == 3 && t.a == 0 && t.b == 0,
	   "its table is there, times unknown (0)");
	ok(r.n == 1 && r.id == 9 && r.a == 0, "its region is there");
	ok(meta_get_u64(m, "next_region", &v) == CF_OK && v == 10,
	   "its counters are there");
	is_int(meta_set_u64(m, "next_region", 11), CF_OK,
	       "and it takes writes");
	meta_close(m);
	raw_sql("PRAGMA user_version", out, sizeof out);
	is_str(out, "2", "user_version is now 2");
	raw_sql("SELECT count(*) FROM pragma_table_info('regions') "
		"WHERE name = 'created_ms'", out, sizeof out);
	is_str(out, "1", "regions has created_ms");
	meta_close(open_ok());
	raw_sql("SELECT group_concat(name, ',') FROM "
		"pragma_table_info('tables')", out, sizeof out);
	is_str(out, "id,name,created_ms,schema_ms",
	       "a second open changes nothing more");
	rm_catalog();
}

/* A catalog whose pages past the first are overwritten: it still opens
 * (the schema is on page 1), the check and the reads report it. */
static void test_damaged(void)
{
	struct meta *m = open_ok();
	unsigned char key[100], *data;
	struct stat st;
	int fd, rc;
	struct regs r = { .stop_at = -1 };

	memset(key, 'k', sizeof key);
	meta_begin(m);
	for (int i = 0; i < 300; i++) {
		key[0] = (unsigned char)i;
		key[1] = (unsigned char)(i >> 8);
		meta_region_put(m, &(struct meta_region){ i + 1, 1, key,
				sizeof key, "", 0, 0, 0 });
	}
	is_int(meta_commit(m), CF_OK, "300 regions");
	is_int(meta_check(m), CF_OK, "integrity check passes");
	meta_close(m);

	if (stat(dbpath, &st) != 0 || st.st_size < 4 * 4096)
		bail("catalog too small to damage");
	data = malloc((size_t)st.st_size - 4096);
	if (!data)
		bail("malloc");
	memset(data, 0x5a, (size_t)st.st_size - 4096);
	fd = open(dbpath, O_WRONLY);
	if (fd < 0 || pwrite(fd, data, (size_t)st.st_size - 4096, 4096) !=
	    st.st_size - 4096 || close(fd) != 0)
		bail("cannot damage %s", dbpath);
	free(data);

	rc = meta_open(dbpath, &m);
	is_int(rc, CF_OK, "a catalog with damaged pages still opens");
	if (rc)
		return;
	is_int(meta_check(m), CF_ECORRUPT, "integrity check: ECORRUPT");
	ok(log_has("integrity check"), "the check's findings are logged");
	is_int(meta_region_list(m, 1, on_region, &r), CF_ECORRUPT,
	       "reading a damaged page: ECORRUPT");
	meta_close(m);
	rm_catalog();
}

/*
 * A commit that cannot write its WAL frames (file size limit: EFBIG, an
 * I/O error to SQLite) fails with CF_EIO and leaves nothing of the
 * transaction; the catalog works afterwards.  In a child, since the limit
 * is per process.  Exit status: 0, or the number of the failed check.
 */
static int fsize_child(void)
{
	static unsigned char big[200000];
	struct meta *m;
	struct stat st;
	struct rlimit rl;
	char wal[4300];
	int rc, rc2;
	uint64_t v = 0;

	signal(SIGXFSZ, SIG_IGN);
	if (meta_open(dbpath, &m))
		return 1;
	if (meta_set_u64(m, "count", 1))
		return 2;
	snprintf(wal, sizeof wal, "%s-wal", dbpath);
	if (stat(wal, &st) != 0)
		return 3;
	/* the soft limit only: lowering the hard one could not be undone */
	if (getrlimit(RLIMIT_FSIZE, &rl) != 0)
		return 4;
	rl.rlim_cur = (rlim_t)st.st_size;
	if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
		return 4;

	/* small: everything waits for the commit */
	meta_begin(m);
	rc = meta_set_u64(m, "count", 2);
	rc2 = meta_commit(m);
	if (rc != CF_OK || rc2 != CF_EIO)
		return 5;
	if (!log_has("disk I/O error"))
		return 6;

	/* large: the page cache spills to the WAL inside the transaction */
	memset(big, 'x', sizeof big);
	rc = meta_begin(m);
	for (uint64_t i = 0; i < 200 && !rc; i++) {
		struct meta_file f = file(i + 1, 1, "cf");
		f.lo = big;
		f.lolen = sizeof big;
		rc = meta_file_add(m, &f);
	}
	if (rc != CF_EIO)
		return 7;
	/* with the disk back, a change after the error must still not
	 * commit on its own if SQLite dropped the transaction */
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
		return 8;
	rc2 = meta_set_u64(m, "count", 3);
	meta_rollback(m);
	printf("# large transaction: add %s, then set %s\n",
	       cf_strerror(rc), cf_strerror(rc2));
	if (meta_get_u64(m, "count", &v) || v != 1)
		return 9;
	if (nfiles(m, 1) != 0)
		return 10;
	meta_begin(m);
	meta_set_u64(m, "count", 4);
	if (meta_commit(m) != CF_OK)
		return 11;
	meta_close(m);
	if (meta_open(dbpath, &m))
		return 12;
	if (meta_get_u64(m, "count", &v) || v != 4 || nfiles(m, 1) != 0)
		return 13;
	if (meta_check(m) != CF_OK)
		return 14;
	meta_close(m);
	return 0;
}

static void test_write_failure(void)
{
	pid_t pid;
	int status = 0;

	rm_catalog();
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		bail("fork");
	if (pid == 0) {
		int rc = fsize_child();
		fflush(stdout);
		_exit(rc);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "a commit that cannot write fails with EIO and leaves nothing "
	   "(child status %d)", WIFEXITED(status) ? WEXITSTATUS(status) :
	   -WTERMSIG(status));
	rm_catalog();
}

/*
 * Crash consistency.  The child commits transactions forever, each adding
 * one file row (with a key of random length, so transactions span one or
 * several pages) and bumping "count" in kv; it is SIGKILLed after a
 * random delay.  After each kill the catalog must hold exactly count file
 * rows, with ids 1..count.
 */
/*
 * Commits transactions until killed.  One byte on the pipe `ready` says
 * it has started: after meta_open, or after its first commit when
 * after_commit (so the parent's clock runs from a point the child
 * reached, not from fork, and a loaded machine cannot turn every run
 * into a kill before the first commit).
 */
static void crash_child(uint64_t seed, int ready, int after_commit)
{
	static unsigned char lo[6000];
	struct meta *m;
	int told = 0;

	rng_state = seed | 1;
	if (meta_open(dbpath, &m))
		_exit(2);
	for (;;) {
		if (told <= 0 && (!after_commit || told < 0)) {
			if (write(ready, "r", 1) != 1)
				_exit(4);
			told = 1;
		}
		uint64_t n = 0;
		struct meta_file f;
		int rc = meta_begin(m);

		if (!rc) {
			rc = meta_get_u64(m, "count", &n);
			if (rc == CF_ENOTFOUND)
				rc = CF_OK;
		}
		f = file(n + 1, 1, "cf");
		f.lo = lo;
		f.lolen = (size_t)(rnd() % sizeof lo);
		memset(lo, (int)n, f.lolen);
		if (!rc)
			rc = meta_file_add(m, &f);
		if (!rc)
			rc = meta_set_u64(m, "count", n + 1);
		if (!rc)
			rc = meta_commit(m);
		else
			meta_rollback(m);
		if (rc)
			_exit(3);
		if (!told)
			told = -1;	/* committed: tell at the loop's top */
	}
}

struct seq { uint64_t next; int good; };

static int check_seq(const struct meta_file *f, void *arg)
{
	struct seq *s = arg;

	if (f->id != s->next || f->lolen > 6000)
		s->good = 0;
	for (size_t i = 0; i < f->lolen && s->good; i++)
		if (((const unsigned char *)f->lo)[i] !=
		    (unsigned char)(f->id - 1))
			s->good = 0;
	s->next++;
	return 0;
}

static int access_cb(const char *name, const struct meta_access *a,
		     void *arg)
{
	char *out = arg;
	size_t len = strlen(out);

	snprintf(out + len, 256 - len, "%s:%o:%u:%u;", name,
		 (unsigned)a->mode, (unsigned)a->uid, (unsigned)a->gid);
	return 0;
}

static void test_access(void)
{
	struct meta_access a = { 0750, 1000, 65534 }, b = { 0777, 0, 0 };
	struct meta *m;
	char v[64] = "", list[256] = "";
	int64_t tid = 0;
	struct stat st;

	/* a version 1 catalog: version 2 without the access table and the
	 * times */
	rm_catalog();
	m = open_ok();
	ok(stat(dbpath, &st) == 0 && (st.st_mode & 0777) == 0600,
	   "a new catalog is 0600");
	is_int(meta_table_add(m, "t", 0, &tid), CF_OK, "a table in it");
	meta_close(m);
	raw_sql("DROP TABLE access", NULL, 0);
	raw_sql("ALTER TABLE tables DROP COLUMN created_ms", NULL, 0);
	raw_sql("ALTER TABLE tables DROP COLUMN schema_ms", NULL, 0);
	raw_sql("ALTER TABLE regions DROP COLUMN created_ms", NULL, 0);
	raw_sql("PRAGMA user_version = 1", NULL, 0);
	is_int(meta_open(dbpath, &m), CF_OK, "a version 1 catalog opens");
	ok(log_has("upgraded from schema version 1 to 2"),
	   "the migration is logged");
	raw_sql("PRAGMA user_version", v, sizeof v);
	is_str(v, "2", "and is version 2");
	is_int(meta_access_put(m, "t", &a), CF_OK, "access of a table");
	is_int(meta_access_put(m, "tsd", &b), CF_OK, "access of another name");
	is_int(meta_access_put(m, "tsd", &b), CF_OK, "put again replaces");
	is_int(meta_access_list(m, access_cb, list), CF_OK, "listed");
	is_str(list, "t:750:1000:65534;tsd:777:0:0;", "by name, as put");
	meta_close(m);
	m = open_ok();
	list[0] = 0;
	meta_access_list(m, access_cb, list);
	is_str(list, "t:750:1000:65534;tsd:777:0:0;", "kept across a reopen");
	is_int(meta_table_del(m, tid), CF_OK, "drop the table");
	list[0] = 0;
	meta_access_list(m, access_cb, list);
	is_str(list, "tsd:777:0:0;", "its access went with it");
	is_int(meta_access_del(m, "tsd"), CF_OK, "delete an access");
	is_int(meta_access_del(m, "tsd"), CF_OK, "again: no such row is fine");
	list[0] = 0;
	meta_access_list(m, access_cb, list);
	is_str(list, "", "none left");
	meta_close(m);
	rm_catalog();
}

static void test_crash(void)
{
	uint64_t last = 0, moved = 0;

	rm_catalog();
	for (int k = 0; k < 20; k++) {
		uint64_t seed = rnd(), delay = 2000 + rnd() % 60000, n = 0;
		struct seq s = { 1, 1 };
		struct meta *m;
		int status = 0, rc, fds[2];
		char c;
		pid_t pid;

		fflush(stdout);
		if (pipe(fds))
			bail("pipe");
		pid = fork();
		if (pid < 0)
			bail("fork");
		if (pid == 0) {
			close(fds[0]);
			crash_child(seed, fds[1], k % 2);
		}
		close(fds[1]);
		/* wait for the child to start (odd runs: to commit once),
		 * however slow the machine; EOF means it died */
		if (read(fds[0], &c, 1) != 1)
			diag("child %d never said it started", k + 1);
		close(fds[0]);
		usleep((useconds_t)delay);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		if (!WIFSIGNALED(status))
			diag("child ended by itself: status %d", status);
		m = open_ok();
		rc = meta_get_u64(m, "count", &n);
		if (rc == CF_ENOTFOUND)
			rc = CF_OK;
		meta_file_list(m, 1, check_seq, &s);
		ok(WIFSIGNALED(status) && rc == CF_OK && s.good &&
		   s.next - 1 == n && n >= last && meta_check(m) == CF_OK,
		   "kill %d after %llu us: %llu file rows, counter %llu",
		   k + 1, (unsigned long long)delay,
		   (unsigned long long)(s.next - 1), (unsigned long long)n);
		if (n > last)
			moved++;
		last = n;
		meta_close(m);
	}
	ok(last > 0 && moved >= 5, "the children made progress (%llu "
	   "transactions, %llu of 20 runs committed some)",
	   (unsigned long long)last, (unsigned long long)moved);
	rm_catalog();
}

int main(void)
{
	const char *env = getenv("CF_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) :
		(uint64_t)time(NULL) ^ (uint64_t)getpid() << 20;
	const char *dir = tap_tmpdir("meta");

	printf("# seed %llu (CF_TEST_SEED to repeat)\n",
	       (unsigned long long)seed);
	rng_state = seed | 1;
	snprintf(dbpath, sizeof dbpath, "%s/catalog.db", dir);

	test_fresh();
	test_kv();
	test_tables();
	test_families();
	test_regions();
	test_files();
	test_table_del_and_nesting();
	test_transactions();
	test_busy();
	test_not_catalog();
	test_times();
	test_migrate();
	test_damaged();
	test_write_failure();
	test_access();
	test_crash();

	tap_rmdir(dir);
	cf_log_release();
	return done_testing();
}
