/*
 * test-engine-compactpolicy: which files a minor compaction takes, and
 * when the compactor runs (engine/compact.c compact_pick, docs/engine.md
 * "Flush, compaction, split"):
 *   - the selection cases of HBase's TestDefaultCompactSelection
 *     (testCompactionRatio's minor ones, testStuckStoreCompaction), with
 *     its TestCompactionPolicy settings, on compact_pick itself;
 *   - files up to flush_size are always taken; a minor compaction that
 *     takes every file of a store is a major one (dead versions and
 *     delete markers leave the disk, reads do not change);
 *   - a big old file is left out of a run of small new ones (ratio 1.2),
 *     two small ones wait for a third, and the compaction stays minor;
 *   - HBase's SteppingSplitPolicy: a table's only region splits past
 *     2 * flush_size, later regions past split_size;
 *   - a store whose files the ratio rule leaves alone does not keep the
 *     compactor from splitting the region (it used to: the compactor
 *     picked the region for its file count, did nothing, and never came
 *     to the split check);
 *   - after open the compactor compacts a store that needs it without
 *     waiting for a write;
 *   - read-driven compaction: reads that consult two or more files of a
 *     store (a Get that looked at a file's bloom filter or blocks before
 *     the file that answered, a scan over several files) are counted,
 *     and at the store's budget (its bytes / seek_bytes, at least 100)
 *     it is compacted whole; reads answered by the newest file do not
 *     count; seek_bytes 0 turns it off.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/cellfs.h"
#include "engine/internal.h"
#include "util/log.h"
#include "tests/engine-ops.h"
#include "tests/tap.h"

static const char *dir;

/* n rows "rNNNN" of vlen bytes that snappy cannot shrink, generation gen */
static void load(cf_table *t, int first, int n, size_t vlen, int gen)
{
	char row[16], *val = malloc(vlen + 1);
	uint64_t x = (uint64_t)gen * 0x9e3779b97f4a7c15ull + 1;

	if (!val)
		bail("out of memory");
	for (int i = first; i < first + n; i++) {
		cf_batch *b;
		for (size_t j = 0; j < vlen; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			val[j] = (char)('a' + x % 26);
		}
		val[0] = (char)('0' + gen % 10);
		snprintf(row, sizeof row, "r%04d", i);
		cf_batch_new(&b);
		cf_batch_put(b, row, strlen(row), "f", 1, "q", 1, CF_TS_NOW,
			     val, vlen);
		if (cf_table_apply(t, b))
			bail("put %s", row);
		cf_batch_free(b);
	}
	free(val);
}

/* the first byte of the value of row i, or '-' when there is none */
static char gen_of(cf_table *t, int i)
{
	char row[16];
	cf_row *r;
	char c = '-';

	snprintf(row, sizeof row, "r%04d", i);
	if (cf_table_get(t, row, strlen(row), NULL, &r))
		return '?';
	if (cf_row_count(r) == 1 && cf_row_cell(r, 0)->vlen)
		c = *(const char *)cf_row_cell(r, 0)->val;
	cf_row_free(r);
	return c;
}

static struct cf_stats stats(cf_table *t)
{
	struct cf_stats s;

	cf_table_stats(t, &s);
	return s;
}

static uint32_t seek_bytes = 16384;

static cf_db *open_db(uint64_t flush_size, uint64_t split_size,
		      int background)
{
	struct cf_options o;
	cf_db *db;

	cf_options_default(&o);
	o.seek_bytes = seek_bytes;
	o.background = background;
	o.flush_size = flush_size;
	o.memstore_limit = 256u << 20;	/* no stalls: tests flush by hand */
	o.split_size = split_size;
	o.sync_mode = CF_SYNC_NONE;
	if (cf_db_open(dir, &o, &db))
		bail("open %s", dir);
	return db;
}

static cf_table *table(cf_db *db, const char *name)
{
	struct cf_family f;
	cf_table *t;

	cf_family_default(&f, "f");
	f.blocksize = 4096;
	if (cf_table_create(db, name, &f, 1) != CF_OK &&
	    cf_table_open(db, name, &t) == CF_OK)
		return t;
	if (cf_table_open(db, name, &t))
		bail("table %s", name);
	return t;
}

/* Waits up to 30 s for cond(t) (background work, not timed). */
static int wait_for(cf_table *t, int (*cond)(cf_table *))
{
	for (int i = 0; i < 3000; i++) {
		if (cond(t))
			return 1;
		usleep(10000);
	}
	return cond(t);
}

/* n Gets of column f:q of rows first, first + 2, ... (99 rows, then
 * again): how many found */
static int get_q(cf_table *t, int first, int n)
{
	static const struct cf_column col = { "f", 1, "q", 1 };
	struct cf_read_opts ro = CF_READ_OPTS_INIT;
	int found = 0;

	ro.columns = &col;
	ro.ncolumns = 1;
	for (int i = 0; i < n; i++) {
		char row[16];
		cf_row *r;
		snprintf(row, sizeof row, "r%04d", first + 2 * (i % 99));
		if (cf_table_get(t, row, strlen(row), &ro, &r))
			bail("get %s", row);
		found += cf_row_count(r) == 1;
		cf_row_free(r);
	}
	return found;
}

/* n scans of 3 rows from row "r0000" */
static void scans(cf_table *t, int n)
{
	for (int i = 0; i < n; i++) {
		struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };
		const cf_row *row;
		cf_scanner *s;
		so.start = "r0000";
		so.startlen = 5;
		so.limit = 3;
		if (cf_scan_open(t, &so, &s))
			bail("scan");
		while (cf_scan_next(s, &row) == CF_OK && row)
			;
		cf_scan_close(s);
	}
}

/* Even rows r0000..r0198 in one file, odd rows r0001..r0199 in a newer
 * one: a Get of an even row from r0002 looks at the newer file's bloom
 * filter first (r0000 is outside its range). */
static cf_table *two_files(cf_db *db, const char *name)
{
	cf_table *t = table(db, name);

	for (int i = 0; i < 200; i += 2)
		load(t, i, 1, 1000, 1);
	cf_table_flush(t);
	for (int i = 1; i < 200; i += 2)
		load(t, i, 1, 1000, 2);
	cf_table_flush(t);
	return t;
}

static int one_file(cf_table *t)
{
	return stats(t).store_files == 1;
}

static int split_once(cf_table *t)
{
	return stats(t).regions >= 2;
}

static uint64_t settle_bytes, settle_split;

/* every region under split_size and the whole no bigger than the data:
 * no daughter still counts a reference to its parent's whole file */
static int settled(cf_table *t)
{
	struct cf_region_info *ri;
	uint64_t sum = 0;
	size_t n;
	int ok = 1;

	if (cf_table_regions(t, &ri, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		sum += ri[i].disk_bytes;
		if (ri[i].disk_bytes > settle_split || ri[i].files != 1)
			ok = 0;
	}
	cf_regions_free(ri, n);
	return ok && n >= 2 && sum <= settle_bytes;
}

/* HBase's compactEquals: files oldest first, as sfCreate makes them;
 * want the sizes of the files picked, oldest first (0 ends it). */
static void pick_is(const struct compact_conf *c, const char *what,
		    const uint64_t *oldest_first, const uint64_t *want)
{
	uint64_t sizes[16] = { 0 };
	size_t n = 0, nw = 0, first = 0, count = 0;
	int same;

	while (oldest_first[n])
		n++;
	while (want[nw])
		nw++;
	for (size_t i = 0; i < n; i++)	/* compact_pick: newest first */
		sizes[i] = oldest_first[n - 1 - i];
	if (!compact_pick(sizes, n, c, &first, &count))
		count = 0;
	same = count == nw;
	for (size_t i = 0; same && i < nw; i++)
		same = sizes[first + count - 1 - i] == want[i];
	ok(same, "%s: %zu files picked, want %zu", what, count, nw);
}

#define SZ(...) ((const uint64_t[]){ __VA_ARGS__, 0 })

static void hbase_selection(void)
{
	/* TestCompactionPolicy: min 3 files, max 5, min size 10, ratio
	 * 1.0; blocking store files 10 (the stuck cases) */
	struct compact_conf c = { 3, 5, 10, 1.0, 10 };

	pick_is(&c, "default case", SZ(100, 50, 23, 12, 12), SZ(23, 12, 12));
	pick_is(&c, "less than compact threshold", SZ(100, 50, 25, 12, 12),
		SZ(0));
	pick_is(&c, "small files: ratio not asked", SZ(7, 1, 1), SZ(7, 1, 1));
	pick_is(&c, "at most max files", SZ(7, 6, 5, 4, 3, 2, 1),
		SZ(5, 4, 3, 2, 1));
	pick_is(&c, "a big old file out", SZ(50, 10, 10, 10, 10),
		SZ(10, 10, 10, 10));
	pick_is(&c, "a big new file out", SZ(10, 10, 10, 10, 50),
		SZ(10, 10, 10, 10));
	pick_is(&c, "a larger newest file out", SZ(251, 253, 251, 2099),
		SZ(251, 253, 251));
	c.min_size = 1;
	pick_is(&c, "always something below the blocking count",
		SZ(512, 256, 128, 64, 32, 16, 8, 4, 2, 1), SZ(4, 2, 1));
	c.min_size = 10;
	pick_is(&c, "stuck: the smallest", SZ(99, 99, 99, 99, 99, 99, 30, 30,
					      30, 30), SZ(30, 30, 30));
	pick_is(&c, "not stuck: the standard rule", SZ(99, 99, 99, 99, 99, 30,
						       30, 30, 30),
		SZ(99, 30, 30, 30, 30));
	pick_is(&c, "stuck: small enough files added", SZ(99, 99, 99, 99, 99,
							  99, 30, 30, 30, 15),
		SZ(30, 30, 30, 15));
	pick_is(&c, "stuck: the earlier run if not much worse",
		SZ(99, 99, 99, 99, 30, 26, 26, 29, 25, 25), SZ(30, 26, 26));
	pick_is(&c, "stuck: the later run if much better",
		SZ(99, 99, 99, 99, 27, 27, 27, 20, 20, 20), SZ(20, 20, 20));
	c.ratio = 5.0;		/* testOffPeakCompactionRatio's off-peak */
	pick_is(&c, "ratio 5", SZ(999, 50, 12, 12, 1), SZ(50, 12, 12, 1));
	c.ratio = 1.0;
	pick_is(&c, "ratio 1", SZ(999, 50, 12, 12, 1), SZ(12, 12, 1));
	pick_is(&c, "nothing", SZ(0), SZ(0));
}

/* region_split_if_big on each region of t: how many split */
static int split_check(cf_db *db, cf_table *t)
{
	struct region *r[16];
	size_t n;
	int split = 0;

	pthread_rwlock_rdlock(&t->lock);
	n = t->nregions < 16 ? t->nregions : 16;
	for (size_t i = 0; i < n; i++)
		r[i] = t->regions[i];	/* split parents are kept with t */
	pthread_rwlock_unlock(&t->lock);
	for (size_t i = 0; i < n; i++) {
		int rc = region_split_if_big(db, r[i]);
		if (rc < 0)
			bail("split check: %s", cf_strerror(rc));
		split += rc == 1;
	}
	return split;
}

/*
 * HBase's SteppingSplitPolicy: a table's only region splits once its
 * store passes 2 * flush_size (or split_size, if smaller); from two
 * regions on, a region splits at split_size.
 */
static void stepping_split(void)
{
	cf_db *db = open_db(64u << 10, 1ull << 40, 0);
	cf_table *t = table(db, "stepping");

	load(t, 0, 100, 1000, 1);	/* ~100 KB: under 2 * 64 KiB */
	cf_table_flush(t);
	is_int(split_check(db, t), 0, "one region of 100 KB, flush_size "
	       "64 KiB: no split");
	load(t, 100, 200, 1000, 1);	/* ~300 KB */
	cf_table_flush(t);
	cf_table_compact(t, 1);
	is_int(split_check(db, t), 1, "the table's only region past 2 * "
	       "flush_size splits, split_size 1 TiB");
	is_int((int)stats(t).regions, 2, "two regions");
	cf_table_compact(t, 1);		/* out of their references */
	is_int(split_check(db, t), 0, "two regions of ~150 KB each, past "
	       "2 * flush_size: no split under split_size");
	ok(stats(t).regions == 2 && gen_of(t, 0) == '1' &&
	   gen_of(t, 299) == '1', "still two regions; every row read");
	cf_table_close(t);
	cf_db_close(db);

	db = open_db(64u << 10, 96u << 10, 0);
	t = table(db, "stepping2");
	load(t, 0, 110, 1000, 1);	/* ~110 KB: over 96 KiB, under 128 */
	cf_table_flush(t);
	is_int(split_check(db, t), 1, "split_size under 2 * flush_size: "
	       "the only region splits at split_size");
	cf_table_close(t);
	cf_db_close(db);
}

int main(void)
{
	struct cf_stats a, b;
	cf_db *db;
	cf_table *t;
	int okv;

	no_plan();
	if (getenv("TEST_LOG"))
		cf_log_set_stderr(1);
	dir = tap_tmpdir("engine-compactpolicy");
	hbase_selection();

	/* --- small files: all taken, and that is a major compaction ---- */
	db = open_db(1u << 20, 1ull << 40, 0);
	t = table(db, "small");
	load(t, 0, 200, 1000, 1);
	cf_table_flush(t);
	load(t, 0, 200, 1000, 2);	/* every row overwritten */
	cf_table_flush(t);
	load(t, 100, 100, 1000, 3);	/* half of them again */
	if (del(t, CF_DEL_ROW, "r0000", NULL, NULL, CF_TS_NOW))
		bail("delete r0000");
	cf_table_flush(t);
	a = stats(t);
	is_int((int)a.store_files, 3, "three flushed files");
	is_int(cf_table_compact(t, 0), CF_OK, "minor compaction");
	b = stats(t);
	is_int((int)b.store_files, 1, "files under flush_size all taken");
	is_int((int)(b.compactions - a.compactions), 1, "one compaction");
	is_int((int)(b.major_compactions - a.major_compactions), 1,
	       "taking every file made it a major one");
	ok(b.disk_bytes * 100 < a.disk_bytes * 50,
	   "overwritten versions left the disk (%" PRIu64 " -> %" PRIu64
	   " bytes; 500 puts, 199 live)", a.disk_bytes, b.disk_bytes);
	ok(gen_of(t, 0) == '-' && gen_of(t, 1) == '2' && gen_of(t, 99) == '2' &&
	   gen_of(t, 100) == '3' && gen_of(t, 199) == '3',
	   "reads unchanged: deleted row gone, newest versions kept");
	cf_table_close(t);
	cf_db_close(db);

	/* --- a big old file stays out, and the compaction stays minor --- */
	db = open_db(2048, 1ull << 40, 0);
	t = table(db, "ratio");
	load(t, 0, 300, 1000, 1);	/* ~300 KB */
	cf_table_flush(t);
	load(t, 1000, 5, 1000, 2);	/* ~5 KB each */
	cf_table_flush(t);
	load(t, 1005, 5, 1000, 3);
	cf_table_flush(t);
	a = stats(t);
	is_int(cf_table_compact(t, 0), CF_OK, "minor compaction");
	b = stats(t);
	is_int((int)(b.compactions - a.compactions), 0,
	       "two small files beside a big one wait for a third (HBase's "
	       "minimum of 3 files a run)");
	load(t, 1010, 5, 1000, 4);
	cf_table_flush(t);
	a = stats(t);
	is_int(cf_table_compact(t, 0), CF_OK, "minor compaction");
	b = stats(t);
	is_int((int)b.store_files, 2, "the big old file was left out");
	is_int((int)(b.compactions - a.compactions), 1, "one compaction");
	is_int((int)(b.major_compactions - a.major_compactions), 0,
	       "not every file: a minor one");
	ok(gen_of(t, 299) == '1' && gen_of(t, 1004) == '2' &&
	   gen_of(t, 1009) == '3' && gen_of(t, 1014) == '4',
	   "reads unchanged");
	/* three files no run of which is in ratio: 300 KB, 15 KB, 1 KB */
	load(t, 3000, 1, 1000, 5);
	cf_table_flush(t);
	a = stats(t);
	is_int((int)a.store_files, 3, "300 KB, 15 KB and 1 KB files");
	is_int(cf_table_compact(t, 0), CF_OK, "minor compaction");
	b = stats(t);
	is_int((int)(b.compactions - a.compactions), 0,
	       "the ratio rule takes none of them");
	cf_table_close(t);
	cf_db_close(db);

	/* --- ... and the compactor still splits that region ------------- */
	db = open_db(2048, 100u << 10, 1);
	t = table(db, "ratio");
	settle_bytes = a.disk_bytes + a.disk_bytes / 5;
	settle_split = 100u << 10;
	ok(wait_for(t, split_once),
	   "a region of uncompactable files past split_size splits");
	okv = wait_for(t, settled);
	ok(okv,
	   "its daughters are compacted out of their references and split "
	   "on their own sizes until each is under split_size, one file "
	   "each (%" PRIu64 " regions, %" PRIu64 " bytes; %" PRIu64
	   " before)", stats(t).regions, stats(t).disk_bytes, a.disk_bytes);
	ok(gen_of(t, 299) == '1' && gen_of(t, 1009) == '3' &&
	   gen_of(t, 1014) == '4' && gen_of(t, 3000) == '5',
	   "every row readable after the split");
	cf_table_close(t);
	cf_db_close(db);

	stepping_split();

	/* --- after open, a store that needs it is compacted unasked ----- */
	db = open_db(1u << 20, 1ull << 40, 0);
	t = table(db, "reopen");
	for (int g = 1; g <= 3; g++) {
		load(t, 0, 50, 1000, g);
		cf_table_flush(t);
	}
	is_int((int)stats(t).store_files, 3, "three files, none compacted");
	cf_table_close(t);
	cf_db_close(db);
	db = open_db(1u << 20, 1ull << 40, 1);
	t = table(db, "reopen");
	okv = wait_for(t, one_file);
	ok(okv,
	   "compacted after open with no write (files %" PRIu64 ")",
	   stats(t).store_files);
	ok(gen_of(t, 0) == '3' && gen_of(t, 49) == '3', "reads unchanged");
	cf_table_close(t);
	cf_db_close(db);

	/* --- read-driven compaction ------------------------------------ */
	db = open_db(1u << 20, 1ull << 40, 0);
	t = two_files(db, "reads");
	a = stats(t);
	is_int((int)a.store_files, 2, "two files, under compact_threshold");
	is_int(get_q(t, 1, 1000), 1000, "1000 Gets of odd rows found");
	cf_table_compact(t, 0);
	b = stats(t);
	is_int((int)(b.compactions - a.compactions), 0,
	       "answered by the newest file: not counted, no compaction");
	is_int(get_q(t, 2, 99), 99, "99 Gets of even rows found");
	cf_table_compact(t, 0);
	b = stats(t);
	is_int((int)(b.compactions - a.compactions), 0,
	       "99 reads that looked at two files: under the budget of 100");
	is_int(get_q(t, 2, 1), 1, "one more");
	cf_table_compact(t, 0);
	b = stats(t);
	is_int((int)(b.compactions - a.compactions), 1,
	       "the 100th: the minor compaction takes the store whole");
	is_int((int)(b.major_compactions - a.major_compactions), 1,
	       "every file: a major one");
	is_int((int)b.store_files, 1, "one file");
	ok(gen_of(t, 0) == '1' && gen_of(t, 1) == '2' && gen_of(t, 198) == '1' &&
	   gen_of(t, 199) == '2', "reads unchanged");
	cf_table_close(t);

	t = two_files(db, "scans");
	a = stats(t);
	scans(t, 99);
	cf_table_compact(t, 0);
	b = stats(t);
	is_int((int)(b.compactions - a.compactions), 0,
	       "99 scans over two files: under the budget");
	scans(t, 1);
	cf_table_compact(t, 0);
	b = stats(t);
	ok(b.compactions - a.compactions == 1 && b.store_files == 1,
	   "the 100th scan: compacted whole (files %" PRIu64 ")",
	   b.store_files);
	cf_table_close(t);
	cf_db_close(db);

	seek_bytes = 0;
	db = open_db(1u << 20, 1ull << 40, 0);
	t = two_files(db, "off");
	a = stats(t);
	get_q(t, 2, 1000);
	scans(t, 1000);
	cf_table_compact(t, 0);
	b = stats(t);
	ok(b.compactions == a.compactions && b.store_files == 2,
	   "seek_bytes 0: no read-driven compaction");
	cf_table_close(t);
	cf_db_close(db);

	/* the compactor does it unasked, once reads reach the budget */
	seek_bytes = 16384;
	db = open_db(1u << 20, 1ull << 40, 0);
	t = two_files(db, "bg");
	cf_table_close(t);
	cf_db_close(db);
	db = open_db(1u << 20, 1ull << 40, 1);
	t = table(db, "bg");
	is_int((int)stats(t).store_files, 2, "reopened: two files");
	get_q(t, 2, 100);
	okv = wait_for(t, one_file);
	ok(okv, "the compactor compacted the store after 100 such Gets "
	   "(files %" PRIu64 ")", stats(t).store_files);
	ok(gen_of(t, 0) == '1' && gen_of(t, 199) == '2', "reads unchanged");
	cf_table_close(t);
	cf_db_close(db);

	cf_log_release();
	return done_testing();
}
