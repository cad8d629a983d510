/*
 * db_bench: the cellfs engine against its peers (LevelDB, RocksDB,
 * SQLite, LMDB), all linked into this one binary, on the same db_bench
 * style workloads and settings:
 *
 *   16-byte keys (16 decimal digits), 100-byte values half compressible
 *   (-c RATIO: db_bench's --compression_ratio; 1 for values no store
 *   can compress), snappy where the store has it, WAL (or journal) on
 *   without fsync, 10 bloom bits per key, 64 MiB block cache, 64 MiB
 *   write buffer and at most two of them in memory before a writer waits
 *   (LevelDB's memtable and immutable one, RocksDB's
 *   max_write_buffer_number 2, cellfs's memstore_limit 128 MiB), 4 KiB
 *   blocks (the peers' default; cellfs's family default is HBase's 64
 *   KiB, so the bench sets BLOCKSIZE 4096 unless -b says otherwise: -b 0
 *   keeps the family default).  A full scan fills no store's block cache
 *   (cellfs's scans never do; the peers' readseq sets fill_cache false).
 *
 *   db_bench [-n N] [-s STORES] [-w WORKLOADS] [-d DIR] [-b CELLFS_BLOCKSIZE]
 *            [-r RUNS] [-c RATIO] [-S]
 *
 * -r RUNS: every store runs RUNS times, the stores taking turns (each
 * round starts one store later), and each workload's row is its best
 * run by ops/s: on a shared machine interference only slows a run, and
 * single runs of one binary here differ by 10-20%.  make bench uses 2.
 *
 * Each store runs in its own child process, so that peak RSS and the
 * bytes written (/proc/self/io) are that store's alone.  The children
 * leave their numbers in a shared mapping; the parent prints one
 * markdown table per workload, a table of the load (bytes on disk,
 * write amplification, peak RSS) and the ratio of cellfs's ops/s to
 * each peer's.  A benchmark, never a test: it asserts nothing about time.
 *
 * Order per store: fillseq (fresh directory, closed after), fillrandom
 * (fresh directory: every key once, in random order), overwrite (N
 * random puts), close; then with a 64 MiB cache the settle step, untimed
 * (every store compacts what it holds: flush and major compaction,
 * CompactRange over everything, a WAL checkpoint; -S skips it, so the
 * reads race the compactions the reopen starts), readrandom (hot, one
 * thread and two), readmissing, seekrandom, readseq, readwhilewriting,
 * close; then the store is opened, settled and closed again, its files
 * are dropped from the page cache (fdatasync and POSIX_FADV_DONTNEED, on
 * these files only) and it is reopened with an 8 MiB cache for
 * readrandom cold.
 *
 * Every get checks the value it got against the one written (a value
 * depends on its key only, so overwrites keep it), every readmissing get
 * must find nothing and readseq must see every key once: a store that
 * answers wrongly stops the run.
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <leveldb/c.h>
#include <lmdb.h>
#include <rocksdb/c.h>
#include <sqlite3.h>

#include "engine/cellfs.h"
#include "util/log.h"
#include "tests/bench/values.h"

/* Which LevelDB and RocksDB this binary links: make bench builds it
 * against release libraries (tests/bench/peers.sh, -DNDEBUG); the plain
 * build, which make check compiles so the program does not rot, links
 * Debian's packages, whose assertions are live. */
#ifdef PEERS_RELEASE
#define PEER_BUILD "release builds (tests/bench/peers.sh, -O3 -DNDEBUG)"
#else
#define PEER_BUILD "Debian's libraries (assertions live: not for " \
	"publishing; make bench links release builds)"
#endif

#define KEY_LEN 16
#define VAL_LEN 100
#define ENTRY_LEN (KEY_LEN + VAL_LEN)
#define SEEK_ROWS 11		/* a seek and 10 nexts */
#define MiB (1024u * 1024u)
#define HOT_CACHE (64u * MiB)
#define COLD_CACHE (8u * MiB)
#define WRITE_BUFFER (64u * MiB)
#define WRITE_BUFFERS 2		/* in memory before a writer waits */
/* Read workloads stop after this many seconds (the table shows the ops
 * that ran); fills always run to the end so every key exists. */
#define READ_SECS_MAX 60.0

/* --- helpers ------------------------------------------------------------ */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t seed = 88172645463325252ull;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void make_key(uint64_t i, char *k)
{
	for (int j = KEY_LEN - 1; j >= 0; j--) {
		k[j] = (char)('0' + i % 10);
		i /= 10;
	}
}

/* db_bench's values: compression ratio 0.5 (tests/bench/values.h). */
static void make_value(uint64_t i, char *v)
{
	bench_value(i, v, VAL_LEN);
}

static void die(const char *store, const char *what)
{
	fprintf(stderr, "db_bench: %s: %s\n", store, what);
	exit(1);
}

/* --- the stores ----------------------------------------------------------- */

/*
 * One store behind a small interface.  A context belongs to one thread
 * (SQLite: its own connection; LMDB: its own read transaction).  get
 * copies the value out, as every store's own get does, and returns 1
 * (found), 0 (not found) or -1; seek returns the entries read.
 */
struct store {
	const char *name;
	int (*open)(const char *dir, uint64_t cache);
	void (*close)(void);
	int (*settle)(void);	/* compacts everything it holds, untimed */
	void *(*ctx_new)(void);
	void (*ctx_free)(void *ctx);
	int (*put)(void *ctx, const char *k, const char *v);
	int (*get)(void *ctx, const char *k, size_t klen, char *v);
	int (*seek)(void *ctx, const char *k, int n);
	uint64_t (*scan)(void *ctx);
};

/* cellfs: one table, one family "f" (defaults: SNAPPY, ROW bloom), the
 * key as the row, an empty qualifier. */
static cf_db *cdb;
static cf_table *ctab;
/* -b: BLOCKSIZE of the family (0: the family default, 64 KiB); 4 KiB by
 * default, the block size of LevelDB and RocksDB */
static uint32_t cf_blocksize = 4096;

static int cellfs_open(const char *dir, uint64_t cache)
{
	struct cf_options o;
	struct cf_family f;
	int rc;

	/* CELLFS_LOG=1: the engine's log lines (compactions, splits) on
	 * stderr, to see what it did during a run */
	if (getenv("CELLFS_LOG") && *getenv("CELLFS_LOG") == '1')
		cf_log_set_stderr(1);
	cf_options_default(&o);
	o.sync_mode = CF_SYNC_NONE;
	o.block_cache = cache;
	o.flush_size = WRITE_BUFFER;
	o.memstore_limit = (uint64_t)WRITE_BUFFERS * WRITE_BUFFER;
	/* CELLFS_SEEK_BYTES=0: no read-driven compaction (docs/engine.md),
	 * to see what it does to the reads */
	if (getenv("CELLFS_SEEK_BYTES"))
		o.seek_bytes = (uint32_t)strtoul(getenv("CELLFS_SEEK_BYTES"),
						 NULL, 10);
	/* CELLFS_WAL_MMAP=0: WAL records with write(2), not through a
	 * mapping (the daemon's -o wal=write) */
	o.wal_write = getenv("CELLFS_WAL_MMAP") &&
		      !strcmp(getenv("CELLFS_WAL_MMAP"), "0");
	cf_family_default(&f, "f");
	if (cf_blocksize)
		f.blocksize = cf_blocksize;
	if (cf_db_open(dir, &o, &cdb))
		return -1;
	rc = cf_table_create(cdb, "b", &f, 1);
	if (rc && rc != CF_EEXIST)
		return -1;
	return cf_table_open(cdb, "b", &ctab) ? -1 : 0;
}

static int cellfs_settle(void)
{
	return cf_db_flush(cdb) || cf_db_compact(cdb, 1) ? -1 : 0;
}

static void cellfs_close(void)
{
	cf_table_close(ctab);
	cf_db_close(cdb);
	cdb = NULL;
}

static void *cellfs_ctx_new(void)
{
	cf_batch *b;
	return cf_batch_new(&b) ? NULL : b;
}

static void cellfs_ctx_free(void *ctx)
{
	cf_batch_free(ctx);
}

static int cellfs_put(void *ctx, const char *k, const char *v)
{
	cf_batch *b = ctx;

	cf_batch_clear(b);
	if (cf_batch_put(b, k, KEY_LEN, "f", 1, "", 0, CF_TS_NOW, v, VAL_LEN))
		return -1;
	return cf_table_apply(ctab, b) ? -1 : 0;
}

/* A get is of the one cell a key has, f:"" (as a LevelDB get reads one
 * value): a Get of a named column, which may stop at the newest store
 * file holding it (docs/engine.md, "Reading a row"). */
static int cellfs_get(void *ctx, const char *k, size_t klen, char *v)
{
	static const struct cf_column col = { "f", 1, "", 0 };
	struct cf_read_opts ro = CF_READ_OPTS_INIT;
	cf_row *row;
	int found = 0;

	ro.columns = &col;
	ro.ncolumns = 1;
	if (cf_table_get(ctab, k, klen, &ro, &row))
		return -1;
	if (cf_row_count(row) > 0) {
		const struct cf_cell *c = cf_row_cell(row, 0);
		memcpy(v, c->val, c->vlen < VAL_LEN ? c->vlen : VAL_LEN);
		found = 1;
	}
	cf_row_free(row);
	return found;
}

static int cellfs_seek(void *ctx, const char *k, int n)
{
	struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };
	cf_scanner *s;
	const cf_row *row;
	int got = 0;

	so.start = k;
	so.startlen = KEY_LEN;
	so.limit = (uint64_t)n;
	if (cf_scan_open(ctab, &so, &s))
		return -1;
	while (cf_scan_next(s, &row) == CF_OK && row)
		got++;
	cf_scan_close(s);
	return got;
}

static uint64_t cellfs_scan(void *ctx)
{
	struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };
	cf_scanner *s;
	const cf_row *row;
	uint64_t n = 0;

	if (cf_scan_open(ctab, &so, &s))
		return 0;
	while (cf_scan_next(s, &row) == CF_OK && row)
		n++;
	cf_scan_close(s);
	return n;
}

/* LevelDB: snappy, bloom 10, LRU cache, 64 MiB write buffer. */
static leveldb_t *ldb;
static leveldb_options_t *lopt;
static leveldb_cache_t *lcache;
static leveldb_filterpolicy_t *lbloom;
static leveldb_readoptions_t *lro, *lro_scan;
static leveldb_writeoptions_t *lwo;

static int leveldb_open_(const char *dir, uint64_t cache)
{
	char *err = NULL;

	lopt = leveldb_options_create();
	lcache = leveldb_cache_create_lru(cache);
	lbloom = leveldb_filterpolicy_create_bloom(10);
	leveldb_options_set_create_if_missing(lopt, 1);
	leveldb_options_set_compression(lopt, leveldb_snappy_compression);
	leveldb_options_set_cache(lopt, lcache);
	leveldb_options_set_filter_policy(lopt, lbloom);
	leveldb_options_set_write_buffer_size(lopt, WRITE_BUFFER);
	ldb = leveldb_open(lopt, dir, &err);
	if (err) {
		fprintf(stderr, "leveldb: %s\n", err);
		leveldb_free(err);
		return -1;
	}
	lro = leveldb_readoptions_create();
	lro_scan = leveldb_readoptions_create();
	leveldb_readoptions_set_fill_cache(lro_scan, 0);
	lwo = leveldb_writeoptions_create();
	leveldb_writeoptions_set_sync(lwo, 0);
	return 0;
}

static void leveldb_close_(void)
{
	leveldb_close(ldb);
	leveldb_readoptions_destroy(lro);
	leveldb_readoptions_destroy(lro_scan);
	leveldb_writeoptions_destroy(lwo);
	leveldb_options_destroy(lopt);
	leveldb_filterpolicy_destroy(lbloom);
	leveldb_cache_destroy(lcache);
}

static int leveldb_settle_(void)
{
	leveldb_compact_range(ldb, NULL, 0, NULL, 0);
	return 0;
}

static void *no_ctx_new(void)
{
	static char dummy;
	return &dummy;
}

static void no_ctx_free(void *ctx)
{
}

static int leveldb_put_(void *ctx, const char *k, const char *v)
{
	char *err = NULL;

	leveldb_put(ldb, lwo, k, KEY_LEN, v, VAL_LEN, &err);
	if (err) {
		leveldb_free(err);
		return -1;
	}
	return 0;
}

static int leveldb_get_(void *ctx, const char *k, size_t klen, char *v)
{
	char *err = NULL, *val;
	size_t len;

	val = leveldb_get(ldb, lro, k, klen, &len, &err);
	if (err) {
		leveldb_free(err);
		return -1;
	}
	if (!val)
		return 0;
	memcpy(v, val, len < VAL_LEN ? len : VAL_LEN);
	leveldb_free(val);
	return 1;
}

static int leveldb_seek_(void *ctx, const char *k, int n)
{
	leveldb_iterator_t *it = leveldb_create_iterator(ldb, lro);
	int got = 0;
	size_t kl, vl;

	for (leveldb_iter_seek(it, k, KEY_LEN);
	     got < n && leveldb_iter_valid(it); leveldb_iter_next(it)) {
		leveldb_iter_key(it, &kl);
		leveldb_iter_value(it, &vl);
		got++;
	}
	leveldb_iter_destroy(it);
	return got;
}

static uint64_t leveldb_scan_(void *ctx)
{
	leveldb_iterator_t *it = leveldb_create_iterator(ldb, lro_scan);
	uint64_t n = 0;
	size_t kl, vl;

	for (leveldb_iter_seek_to_first(it); leveldb_iter_valid(it);
	     leveldb_iter_next(it)) {
		leveldb_iter_key(it, &kl);
		leveldb_iter_value(it, &vl);
		n++;
	}
	leveldb_iter_destroy(it);
	return n;
}

/* RocksDB: block-based table with bloom 10 and an LRU cache, snappy,
 * 64 MiB write buffer; everything else its defaults. */
static rocksdb_t *rdb;
static rocksdb_options_t *ropt;
static rocksdb_cache_t *rcache;
static rocksdb_readoptions_t *rro, *rro_scan;
static rocksdb_writeoptions_t *rwo;

static int rocksdb_open_(const char *dir, uint64_t cache)
{
	rocksdb_block_based_table_options_t *bb;
	char *err = NULL;

	ropt = rocksdb_options_create();
	rcache = rocksdb_cache_create_lru(cache);
	bb = rocksdb_block_based_options_create();
	rocksdb_block_based_options_set_block_cache(bb, rcache);
	rocksdb_block_based_options_set_filter_policy(
		bb, rocksdb_filterpolicy_create_bloom(10));
	rocksdb_options_set_block_based_table_factory(ropt, bb);
	rocksdb_block_based_options_destroy(bb);
	rocksdb_options_set_create_if_missing(ropt, 1);
	rocksdb_options_set_compression(ropt, rocksdb_snappy_compression);
	rocksdb_options_set_write_buffer_size(ropt, WRITE_BUFFER);
	rocksdb_options_set_max_write_buffer_number(ropt, WRITE_BUFFERS);
	rdb = rocksdb_open(ropt, dir, &err);
	if (err) {
		fprintf(stderr, "rocksdb: %s\n", err);
		rocksdb_free(err);
		return -1;
	}
	rro = rocksdb_readoptions_create();
	rro_scan = rocksdb_readoptions_create();
	rocksdb_readoptions_set_fill_cache(rro_scan, 0);
	rwo = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(rwo, 0);
	return 0;
}

static void rocksdb_close_(void)
{
	rocksdb_close(rdb);
	rocksdb_readoptions_destroy(rro);
	rocksdb_readoptions_destroy(rro_scan);
	rocksdb_writeoptions_destroy(rwo);
	rocksdb_options_destroy(ropt);
	rocksdb_cache_destroy(rcache);
}

static int rocksdb_settle_(void)
{
	rocksdb_compact_range(rdb, NULL, 0, NULL, 0);
	return 0;
}

static int rocksdb_put_(void *ctx, const char *k, const char *v)
{
	char *err = NULL;

	rocksdb_put(rdb, rwo, k, KEY_LEN, v, VAL_LEN, &err);
	if (err) {
		rocksdb_free(err);
		return -1;
	}
	return 0;
}

static int rocksdb_get_(void *ctx, const char *k, size_t klen, char *v)
{
	char *err = NULL, *val;
	size_t len;

	val = rocksdb_get(rdb, rro, k, klen, &len, &err);
	if (err) {
		rocksdb_free(err);
		return -1;
	}
	if (!val)
		return 0;
	memcpy(v, val, len < VAL_LEN ? len : VAL_LEN);
	rocksdb_free(val);
	return 1;
}

static int rocksdb_seek_(void *ctx, const char *k, int n)
{
	rocksdb_iterator_t *it = rocksdb_create_iterator(rdb, rro);
	int got = 0;
	size_t kl, vl;

	for (rocksdb_iter_seek(it, k, KEY_LEN);
	     got < n && rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		rocksdb_iter_key(it, &kl);
		rocksdb_iter_value(it, &vl);
		got++;
	}
	rocksdb_iter_destroy(it);
	return got;
}

static uint64_t rocksdb_scan_(void *ctx)
{
	rocksdb_iterator_t *it = rocksdb_create_iterator(rdb, rro_scan);
	uint64_t n = 0;
	size_t kl, vl;

	for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it);
	     rocksdb_iter_next(it)) {
		rocksdb_iter_key(it, &kl);
		rocksdb_iter_value(it, &vl);
		n++;
	}
	rocksdb_iter_destroy(it);
	return n;
}

/* SQLite: WAL, synchronous=OFF, one WITHOUT ROWID table, one connection
 * per thread with prepared statements; each put is its own (implicit)
 * transaction, as each put of the others is its own WAL record. */
static char sq_path[4200];
static uint64_t sq_cache;

struct sq_ctx {
	sqlite3 *db;
	sqlite3_stmt *put, *get, *seek, *scan;
};

static int sq_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "sqlite: %s: %s\n", sql, err ? err : "?");
		sqlite3_free(err);
		return -1;
	}
	return 0;
}

static void *sqlite_ctx_new(void)
{
	struct sq_ctx *c = calloc(1, sizeof *c);
	char sql[100];

	if (!c)
		return NULL;
	if (sqlite3_open_v2(sq_path, &c->db, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK)
		goto fail;
	sqlite3_busy_timeout(c->db, 60000);
	snprintf(sql, sizeof sql, "PRAGMA cache_size=-%" PRIu64,
		 sq_cache / 1024);
	if (sq_exec(c->db, "PRAGMA journal_mode=WAL") ||
	    sq_exec(c->db, "PRAGMA synchronous=OFF") || sq_exec(c->db, sql) ||
	    sq_exec(c->db, "CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY,"
		    " v BLOB) WITHOUT ROWID"))
		goto fail;
	if (sqlite3_prepare_v2(c->db, "INSERT OR REPLACE INTO kv VALUES(?,?)",
			       -1, &c->put, NULL) ||
	    sqlite3_prepare_v2(c->db, "SELECT v FROM kv WHERE k=?", -1,
			       &c->get, NULL) ||
	    sqlite3_prepare_v2(c->db, "SELECT k, v FROM kv WHERE k>=? "
			       "ORDER BY k LIMIT ?", -1, &c->seek, NULL) ||
	    sqlite3_prepare_v2(c->db, "SELECT k, v FROM kv ORDER BY k", -1,
			       &c->scan, NULL))
		goto fail;
	return c;
fail:
	fprintf(stderr, "sqlite: %s\n", sqlite3_errmsg(c->db));
	sqlite3_close(c->db);
	free(c);
	return NULL;
}

static void sqlite_ctx_free(void *ctx)
{
	struct sq_ctx *c = ctx;

	sqlite3_finalize(c->put);
	sqlite3_finalize(c->get);
	sqlite3_finalize(c->seek);
	sqlite3_finalize(c->scan);
	sqlite3_close(c->db);
	free(c);
}

static int sqlite_open_(const char *dir, uint64_t cache)
{
	void *c;

	if (mkdir(dir, 0755) && access(dir, F_OK))
		return -1;
	snprintf(sq_path, sizeof sq_path, "%s/kv.db", dir);
	sq_cache = cache;
	/* creates the table once, before threads race to */
	if (!(c = sqlite_ctx_new()))
		return -1;
	sqlite_ctx_free(c);
	return 0;
}

static void sqlite_close_(void)
{
}

/* moves the WAL into the database file, as the others compact */
static int sqlite_settle(void)
{
	struct sq_ctx *c = sqlite_ctx_new();
	int rc;

	if (!c)
		return -1;
	rc = sq_exec(c->db, "PRAGMA wal_checkpoint(TRUNCATE)");
	sqlite_ctx_free(c);
	return rc;
}

static int sqlite_put(void *ctx, const char *k, const char *v)
{
	struct sq_ctx *c = ctx;
	int rc;

	sqlite3_bind_blob(c->put, 1, k, KEY_LEN, SQLITE_STATIC);
	sqlite3_bind_blob(c->put, 2, v, VAL_LEN, SQLITE_STATIC);
	rc = sqlite3_step(c->put);
	sqlite3_reset(c->put);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int sqlite_get(void *ctx, const char *k, size_t klen, char *v)
{
	struct sq_ctx *c = ctx;
	int rc, found = 0;

	sqlite3_bind_blob(c->get, 1, k, (int)klen, SQLITE_STATIC);
	rc = sqlite3_step(c->get);
	if (rc == SQLITE_ROW) {
		int len = sqlite3_column_bytes(c->get, 0);
		memcpy(v, sqlite3_column_blob(c->get, 0),
		       len < VAL_LEN ? (size_t)len : VAL_LEN);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		found = -1;
	}
	sqlite3_reset(c->get);
	return found;
}

static int sqlite_seek(void *ctx, const char *k, int n)
{
	struct sq_ctx *c = ctx;
	int got = 0;

	sqlite3_bind_blob(c->seek, 1, k, KEY_LEN, SQLITE_STATIC);
	sqlite3_bind_int(c->seek, 2, n);
	while (sqlite3_step(c->seek) == SQLITE_ROW) {
		sqlite3_column_blob(c->seek, 0);
		sqlite3_column_blob(c->seek, 1);
		got++;
	}
	sqlite3_reset(c->seek);
	return got;
}

static uint64_t sqlite_scan(void *ctx)
{
	struct sq_ctx *c = ctx;
	uint64_t n = 0;

	while (sqlite3_step(c->scan) == SQLITE_ROW) {
		sqlite3_column_blob(c->scan, 0);
		sqlite3_column_blob(c->scan, 1);
		n++;
	}
	sqlite3_reset(c->scan);
	return n;
}

/* LMDB: MDB_NOSYNC, a map far larger than the data; each put is its own
 * write transaction; each reader keeps one read transaction that it
 * resets and renews around every operation. */
static MDB_env *menv;
static MDB_dbi mdbi;

static int lmdb_open_(const char *dir, uint64_t cache)
{
	MDB_txn *txn;

	if (mkdir(dir, 0755) && access(dir, F_OK))
		return -1;
	if (mdb_env_create(&menv) ||
	    mdb_env_set_mapsize(menv, (size_t)64 << 30) ||
	    mdb_env_open(menv, dir, MDB_NOSYNC | MDB_NOTLS, 0644))
		return -1;
	if (mdb_txn_begin(menv, NULL, 0, &txn) ||
	    mdb_dbi_open(txn, NULL, 0, &mdbi) || mdb_txn_commit(txn))
		return -1;
	return 0;
}

static void lmdb_close_(void)
{
	mdb_env_close(menv);
}

/* a B+tree written in place: nothing to compact */
static int lmdb_settle(void)
{
	return 0;
}

static void *lmdb_ctx_new(void)
{
	MDB_txn *txn;

	if (mdb_txn_begin(menv, NULL, MDB_RDONLY, &txn))
		return NULL;
	mdb_txn_reset(txn);
	return txn;
}

static void lmdb_ctx_free(void *ctx)
{
	mdb_txn_abort(ctx);
}

static int lmdb_put(void *ctx, const char *k, const char *v)
{
	MDB_txn *txn;
	MDB_val key = { KEY_LEN, (void *)k }, val = { VAL_LEN, (void *)v };

	if (mdb_txn_begin(menv, NULL, 0, &txn))
		return -1;
	if (mdb_put(txn, mdbi, &key, &val, 0)) {
		mdb_txn_abort(txn);
		return -1;
	}
	return mdb_txn_commit(txn) ? -1 : 0;
}

static int lmdb_get(void *ctx, const char *k, size_t klen, char *v)
{
	MDB_txn *txn = ctx;
	MDB_val key = { klen, (void *)k }, val;
	int rc;

	if (mdb_txn_renew(txn))
		return -1;
	rc = mdb_get(txn, mdbi, &key, &val);
	if (rc == 0)
		memcpy(v, val.mv_data,
		       val.mv_size < VAL_LEN ? val.mv_size : VAL_LEN);
	mdb_txn_reset(txn);
	return rc == 0 ? 1 : rc == MDB_NOTFOUND ? 0 : -1;
}

static int lmdb_seek(void *ctx, const char *k, int n)
{
	MDB_txn *txn = ctx;
	MDB_cursor *cur;
	MDB_val key = { KEY_LEN, (void *)k }, val;
	int got = 0;

	if (mdb_txn_renew(txn))
		return -1;
	if (mdb_cursor_open(txn, mdbi, &cur) == 0) {
		int rc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
		while (rc == 0 && got < n) {
			got++;
			rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
		}
		mdb_cursor_close(cur);
	}
	mdb_txn_reset(txn);
	return got;
}

static uint64_t lmdb_scan(void *ctx)
{
	MDB_txn *txn = ctx;
	MDB_cursor *cur;
	MDB_val key, val;
	uint64_t n = 0;

	if (mdb_txn_renew(txn))
		return 0;
	if (mdb_cursor_open(txn, mdbi, &cur) == 0) {
		int rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST);
		while (rc == 0) {
			n++;
			rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
		}
		mdb_cursor_close(cur);
	}
	mdb_txn_reset(txn);
	return n;
}

static const struct store stores[] = {
	{ "cellfs", cellfs_open, cellfs_close, cellfs_settle, cellfs_ctx_new,
	  cellfs_ctx_free, cellfs_put, cellfs_get, cellfs_seek, cellfs_scan },
	{ "leveldb", leveldb_open_, leveldb_close_, leveldb_settle_,
	  no_ctx_new, no_ctx_free, leveldb_put_, leveldb_get_, leveldb_seek_,
	  leveldb_scan_ },
	{ "rocksdb", rocksdb_open_, rocksdb_close_, rocksdb_settle_,
	  no_ctx_new, no_ctx_free, rocksdb_put_, rocksdb_get_, rocksdb_seek_,
	  rocksdb_scan_ },
	{ "sqlite", sqlite_open_, sqlite_close_, sqlite_settle,
	  sqlite_ctx_new, sqlite_ctx_free, sqlite_put, sqlite_get,
	  sqlite_seek, sqlite_scan },
	{ "lmdb", lmdb_open_, lmdb_close_, lmdb_settle, lmdb_ctx_new,
	  lmdb_ctx_free, lmdb_put, lmdb_get, lmdb_seek, lmdb_scan },
};
#define NSTORES (sizeof stores / sizeof stores[0])

/* --- workloads and results ---------------------------------------------- */

enum {
	W_FILLSEQ, W_FILLRANDOM, W_OVERWRITE, W_READRANDOM, W_READRANDOM2,
	W_READMISSING, W_SEEKRANDOM, W_READSEQ, W_READWHILEWRITING,
	W_READCOLD, NWORK
};
static const char *const work_names[NWORK] = {
	"fillseq", "fillrandom", "overwrite", "readrandom", "readrandom_2t",
	"readmissing", "seekrandom", "readseq", "readwhilewriting",
	"readrandom_cold",
};

struct result {
	int ran;
	uint64_t ops;
	uint64_t found;		/* gets that found their key; seek: entries */
	double secs;
	double bytes;
	double p50, p99;	/* microseconds */
	uint64_t writes;	/* readwhilewriting: the writer's puts */
	double write_secs;
};

struct load {
	int ran;
	uint64_t disk_bytes;
	uint64_t io_written;
	uint64_t bytes_put;
	long peak_rss_kb;
	double secs;		/* the whole run of the store */
};

/* Shared with the children (MAP_SHARED). */
struct shared {
	struct result r[NSTORES][NWORK];
	struct load load[NSTORES];
	/* cellfs's own counters around each workload, to explain its rows */
	struct cf_stats cf_before[NWORK], cf_after[NWORK];
	int cf_ran[NWORK];
};

static struct shared *sh;
/* -r: runs of every store; best[][] keeps each workload's best, runs[]
 * every run's rate (ops/s) for the ratios' median and range */
#define MAX_REPS 10
static int reps = 1;
static struct result best[NSTORES][NWORK];
static double runs[MAX_REPS][NSTORES][NWORK];

static double rate(const struct result *r)
{
	return r->secs > 0 ? (double)r->ops / r->secs : 0;
}

static uint64_t n_entries = 1000000;
/* -S clears it: no settle step before the reads */
static int settle = 1;
/* -c: the random part of each value (db_bench's --compression_ratio) */
static double value_ratio = 0.5;
static float *lat;		/* per-op latency of the running workload */

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

static void percentiles(float *l, uint64_t n, struct result *r)
{
	if (!n)
		return;
	qsort(l, n, sizeof *l, cmp_float);
	r->p50 = l[n / 2];
	r->p99 = l[n * 99 / 100];
}

static uint64_t io_write_bytes(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	uint64_t v = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "write_bytes: %" SCNu64, &v) == 1)
			break;
	fclose(f);
	return v;
}

static uint64_t du_total;

static int du_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	du_total += (uint64_t)st->st_blocks * 512;
	return 0;
}

/* What du(1) says: allocated blocks, not file lengths (LMDB's map is
 * sparse). */
static uint64_t du(const char *dir)
{
	du_total = 0;
	nftw(dir, du_one, 16, FTW_PHYS);
	return du_total;
}

/* Writes back and drops from the page cache every file under dir, so
 * the next open reads from the disk; only these files, so other
 * programs on the machine keep their cache. */
static int drop_one(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	int fd;

	if (flag != FTW_F)
		return 0;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	return 0;
}

static void rmrf(const char *dir)
{
	char cmd[4300];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "db_bench: cannot remove %s\n", dir);
}

static const struct store *cur;

static void open_store(const char *dir, uint64_t cache)
{
	if (cur->open(dir, cache))
		die(cur->name, "cannot open");
}

static void *ctx_new(void)
{
	void *c = cur->ctx_new();

	if (!c)
		die(cur->name, "cannot make a context");
	return c;
}

/* fillseq, fillrandom (perm != NULL: every key once, in that order) or
 * overwrite (random keys). */
static void fill(uint64_t n, const uint32_t *perm, int random,
		 struct result *r)
{
	void *c = ctx_new();
	uint64_t s = seed;
	char k[KEY_LEN], v[VAL_LEN];
	double start = now();

	for (uint64_t i = 0; i < n; i++) {
		uint64_t id = perm ? perm[i] : random ? rnd(&s) % n : i;
		double t0 = now();
		make_key(id, k);
		make_value(id, v);
		if (cur->put(c, k, v))
			die(cur->name, "put failed");
		lat[i] = (float)((now() - t0) * 1e6);
	}
	r->secs = now() - start;
	r->ops = n;
	r->bytes = (double)n * ENTRY_LEN;
	cur->ctx_free(c);
	percentiles(lat, n, r);
	r->ran = 1;
}

/* Random gets or seeks of keys in [0, space); stops early after
 * READ_SECS_MAX.  A missing key is LevelDB 1.23 db_bench's ReadMissing:
 * a written key without its last byte, so it lies among the written
 * keys and every store must ask its filters (or its index) about it. */
static void reads(uint64_t ops, uint64_t space, int missing, int seek,
		  uint64_t sd, float *l, struct result *r)
{
	void *c = ctx_new();
	char k[KEY_LEN], v[VAL_LEN], want[VAL_LEN];
	uint64_t found = 0, i;
	double start = now();

	for (i = 0; i < ops; i++) {
		double t0 = now();
		uint64_t id = rnd(&sd) % space;
		int got;

		make_key(id, k);
		got = seek ? cur->seek(c, k, SEEK_ROWS)
			   : cur->get(c, k, KEY_LEN - (missing ? 1 : 0), v);
		if (got < 0)
			die(cur->name, "read failed");
		found += (uint64_t)got;
		l[i] = (float)((now() - t0) * 1e6);
		if (!seek && got && !missing) {
			make_value(id, want);
			if (memcmp(v, want, VAL_LEN))
				die(cur->name, "a get returned a value that "
				    "was never written for its key");
		}
		if (!seek && got && missing)
			die(cur->name, "a get found a key never written");
		if ((i & 1023) == 1023 && now() - start > READ_SECS_MAX) {
			i++;
			break;
		}
	}
	r->secs = now() - start;
	r->ops = i;
	r->found = found;
	r->bytes = (double)found * ENTRY_LEN;
	cur->ctx_free(c);
}

static void readseq(struct result *r)
{
	void *c = ctx_new();
	double start = now();

	r->ops = cur->scan(c);
	r->secs = now() - start;
	if (r->ops != n_entries)
		die(cur->name, "a full scan did not see every key once");
	r->found = r->ops;
	r->bytes = (double)r->ops * ENTRY_LEN;
	cur->ctx_free(c);
	r->ran = 1;
}

struct rww {
	uint64_t ops, sd;
	float *lat;
	struct result r;
};

static volatile int readers_done;

static void *reader_main(void *arg)
{
	struct rww *a = arg;

	reads(a->ops, n_entries, 0, 0, a->sd, a->lat, &a->r);
	return NULL;
}

static void *writer_main(void *arg)
{
	struct rww *a = arg;
	void *c = ctx_new();
	char k[KEY_LEN], v[VAL_LEN];
	double start = now();

	while (!__atomic_load_n(&readers_done, __ATOMIC_ACQUIRE)) {
		uint64_t id = rnd(&a->sd) % n_entries;
		make_key(id, k);
		make_value(id, v);
		if (cur->put(c, k, v))
			die(cur->name, "put failed");
		a->ops++;
	}
	a->r.secs = now() - start;
	cur->ctx_free(c);
	return NULL;
}

/* Two readers doing readrandom, while one writer overwrites (writer
 * set); the result is the readers' (the writer's rate goes in
 * writes/write_secs). */
static void two_readers(uint64_t ops, int writer, uint64_t sd,
			struct result *r)
{
	struct rww rd[2], wr = { .sd = seed ^ 0x5555 };
	pthread_t th[3];
	double start = now(), end = start;

	readers_done = 0;
	if (writer)
		pthread_create(&th[2], NULL, writer_main, &wr);
	for (int i = 0; i < 2; i++) {
		rd[i] = (struct rww){ .ops = ops / 2,
				      .sd = sd + 77 * (uint64_t)i,
				      .lat = lat + i * (ops / 2) };
		pthread_create(&th[i], NULL, reader_main, &rd[i]);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		if (now() > end)
			end = now();
	}
	__atomic_store_n(&readers_done, 1, __ATOMIC_RELEASE);
	if (writer)
		pthread_join(th[2], NULL);
	r->ops = rd[0].r.ops + rd[1].r.ops;
	r->found = rd[0].r.found + rd[1].r.found;
	r->secs = end - start;
	r->bytes = (double)r->found * ENTRY_LEN;
	/* the two segments may have stopped early: close the gap */
	memmove(lat + rd[0].r.ops, rd[1].lat, rd[1].r.ops * sizeof *lat);
	percentiles(lat, r->ops, r);
	r->writes = wr.ops;
	r->write_secs = wr.r.secs;
	r->ran = 1;
}

/* Snapshots cellfs's counters before (after = 0) or after workload w. */
static void cf_snap(int w, int after)
{
	if (cur != &stores[0] || !cdb)
		return;
	cf_db_stats(cdb, after ? &sh->cf_after[w] : &sh->cf_before[w]);
	sh->cf_ran[w] = after;
}

static void progress(int w, const struct result *r)
{
	cf_snap(w, 1);
	fprintf(stderr, "db_bench: %-8s %-16s %10" PRIu64 " ops %8.2f s\n",
		cur->name, work_names[w], r->ops, r->secs);
}

/* One store, all wanted workloads, in a child process. */
static void run_store(int si, const char *base, const int *want)
{
	char dir[4200];
	struct result *res = sh->r[si];
	struct load *ld = &sh->load[si];
	uint32_t *perm = NULL;
	uint64_t n = n_entries, io0;
	struct rusage ru;
	double t_start = now();
	int any_read = 0;

	cur = &stores[si];
	/* every store starts with no dirty pages of the one before (or of
	 * engine_bench, which make bench runs first) still being written
	 * back under its first workload */
	sync();
	snprintf(dir, sizeof dir, "%s/%s", base, cur->name);
	lat = malloc(n * sizeof *lat);
	if (!lat)
		die(cur->name, "out of memory");

	if (want[W_FILLSEQ]) {
		rmrf(dir);
		open_store(dir, HOT_CACHE);
		cf_snap(W_FILLSEQ, 0);
		fill(n, NULL, 0, &res[W_FILLSEQ]);
		progress(W_FILLSEQ, &res[W_FILLSEQ]);
		cur->close();
	}

	/* The load the reads run on: every key once in random order, then
	 * N random overwrites. */
	perm = malloc(n * sizeof *perm);
	if (!perm)
		die(cur->name, "out of memory");
	for (uint64_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	{
		uint64_t s = seed ^ 0xabcdef;
		for (uint64_t i = n - 1; i > 0; i--) {
			uint64_t j = rnd(&s) % (i + 1);
			uint32_t t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
	}
	rmrf(dir);
	io0 = io_write_bytes();
	open_store(dir, HOT_CACHE);
	cf_snap(W_FILLRANDOM, 0);
	fill(n, perm, 0, &res[W_FILLRANDOM]);
	progress(W_FILLRANDOM, &res[W_FILLRANDOM]);
	free(perm);
	ld->bytes_put = n * ENTRY_LEN;
	if (want[W_OVERWRITE]) {
		cf_snap(W_OVERWRITE, 0);
		fill(n, NULL, 1, &res[W_OVERWRITE]);
		progress(W_OVERWRITE, &res[W_OVERWRITE]);
		ld->bytes_put += n * ENTRY_LEN;
	}
	cur->close();
	ld->io_written = io_write_bytes() - io0;
	ld->disk_bytes = du(dir);
	if (!want[W_FILLRANDOM])
		res[W_FILLRANDOM].ran = 0;

	for (int w = W_READRANDOM; w <= W_READWHILEWRITING; w++)
		any_read |= want[w];
	if (any_read) {
		open_store(dir, HOT_CACHE);
		if (settle && cur->settle())
			die(cur->name, "settle (compaction) failed");
		if (want[W_READRANDOM]) {
			struct result *r = &res[W_READRANDOM];
			cf_snap(W_READRANDOM, 0);
			reads(n, n, 0, 0, seed + 1, lat, r);
			percentiles(lat, r->ops, r);
			r->ran = 1;
			progress(W_READRANDOM, r);
			if (r->found != r->ops)
				fprintf(stderr, "db_bench: %s: %" PRIu64
					" of %" PRIu64 " found\n", cur->name,
					r->found, r->ops);
		}
		if (want[W_READRANDOM2]) {
			cf_snap(W_READRANDOM2, 0);
			two_readers(n, 0, seed + 5, &res[W_READRANDOM2]);
			progress(W_READRANDOM2, &res[W_READRANDOM2]);
		}
		if (want[W_READMISSING]) {
			struct result *r = &res[W_READMISSING];
			cf_snap(W_READMISSING, 0);
			reads(n, n, 1, 0, seed + 2, lat, r);
			percentiles(lat, r->ops, r);
			r->ran = 1;
			progress(W_READMISSING, r);
		}
		if (want[W_SEEKRANDOM]) {
			struct result *r = &res[W_SEEKRANDOM];
			cf_snap(W_SEEKRANDOM, 0);
			reads(n / 10 ? n / 10 : 1, n, 0, 1, seed + 3, lat, r);
			percentiles(lat, r->ops, r);
			r->ran = 1;
			progress(W_SEEKRANDOM, r);
		}
		if (want[W_READSEQ]) {
			cf_snap(W_READSEQ, 0);
			readseq(&res[W_READSEQ]);
			progress(W_READSEQ, &res[W_READSEQ]);
		}
		if (want[W_READWHILEWRITING]) {
			cf_snap(W_READWHILEWRITING, 0);
			two_readers(n / 2 ? n / 2 : 2, 1, seed + 1,
				    &res[W_READWHILEWRITING]);
			progress(W_READWHILEWRITING, &res[W_READWHILEWRITING]);
		}
		cur->close();
	}

	if (want[W_READCOLD]) {
		struct result *r = &res[W_READCOLD];
		if (settle) {
			open_store(dir, HOT_CACHE);
			if (cur->settle())
				die(cur->name, "settle (compaction) failed");
			cur->close();
		}
		nftw(dir, drop_one, 16, FTW_PHYS);
		open_store(dir, COLD_CACHE);
		cf_snap(W_READCOLD, 0);
		reads(n / 10 ? n / 10 : 1, n, 0, 0, seed + 4, lat, r);
		percentiles(lat, r->ops, r);
		r->ran = 1;
		progress(W_READCOLD, r);
		cur->close();
	}

	getrusage(RUSAGE_SELF, &ru);
	ld->peak_rss_kb = ru.ru_maxrss;
	ld->secs = now() - t_start;
	ld->ran = 1;
	free(lat);
	rmrf(dir);
	if (cur == &stores[0])
		cf_log_release();
}

/* --- output -------------------------------------------------------------- */

static const char *const work_notes[NWORK] = {
	"fresh directory",
	"fresh directory; every key once, random order",
	"N random puts over the fillrandom load",
	"N random gets, 64 MiB cache",
	"2 threads, N/2 random gets each, 64 MiB cache; both threads' rate",
	"N gets of keys never written",
	"N/10 seeks, each reading 11 entries",
	"one full scan",
	"2 readers (N/2 gets) while 1 writer overwrites; readers' rate",
	"N/10 gets after reopen with an 8 MiB cache, page cache dropped",
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* With -r: the ratio of each run (cellfs's run i over the peer's run i),
 * as median and range over the runs. */
static void print_run_ratios(const int *run_store_, const int *want)
{
	printf("### cellfs / peer, run by run: median (min-max) of %d runs\n\n",
	       reps);
	printf("| workload         |");
	for (size_t s = 1; s < NSTORES; s++)
		if (run_store_[s])
			printf(" %17s |", stores[s].name);
	printf("\n|------------------|");
	for (size_t s = 1; s < NSTORES; s++)
		if (run_store_[s])
			printf("------------------:|");
	printf("\n");
	for (int w = 0; w < NWORK; w++) {
		if (!want[w])
			continue;
		printf("| %-16s |", work_names[w]);
		for (size_t s = 1; s < NSTORES; s++) {
			double q[MAX_REPS];
			int k = 0;

			if (!run_store_[s])
				continue;
			for (int i = 0; i < reps; i++)
				if (runs[i][0][w] > 0 && runs[i][s][w] > 0)
					q[k++] = runs[i][0][w] / runs[i][s][w];
			if (!k) {
				printf(" %17s |", "-");
				continue;
			}
			qsort(q, (size_t)k, sizeof *q, cmp_double);
			printf(" %5.2f (%4.2f-%4.2f) |", k % 2 ? q[k / 2] :
			       (q[k / 2 - 1] + q[k / 2]) / 2, q[0], q[k - 1]);
		}
		printf("\n");
	}
	printf("\n");
}

static void print_tables(const int *run_store_,
			 const int *want)
{
	size_t s;
	int c;

	for (int w = 0; w < NWORK; w++) {
		if (!want[w])
			continue;
		printf("### %s\n\n%s.\n\n", work_names[w], work_notes[w]);
		printf("| store   |        ops |     ops/s |   MB/s |  p50 us |  p99 us |%s\n",
		       w == W_READWHILEWRITING ? " writer puts/s |" : "");
		printf("|---------|-----------:|----------:|-------:|--------:|--------:|%s\n",
		       w == W_READWHILEWRITING ? "--------------:|" : "");
		for (size_t s = 0; s < NSTORES; s++) {
			const struct result *r = &sh->r[s][w];
			if (!run_store_[s])
				continue;
			if (!r->ran || r->secs <= 0) {
				printf("| %-7s | (not run) |\n", stores[s].name);
				continue;
			}
			printf("| %-7s | %10" PRIu64 " | %9.0f | %6.1f |",
			       stores[s].name, r->ops, (double)r->ops / r->secs,
			       r->bytes / r->secs / 1e6);
			/* a scan is one operation: no per-row latency */
			if (w == W_READSEQ)
				printf("       - |       - |");
			else
				printf(" %7.2f | %7.2f |", r->p50, r->p99);
			if (w == W_READWHILEWRITING)
				printf(" %13.0f |", r->write_secs > 0 ?
				       (double)r->writes / r->write_secs : 0);
			printf("\n");
		}
		printf("\n");
	}

	printf("### load\n\nAfter fillrandom and overwrite, the store closed: "
	       "bytes on disk (du), write amplification (write_bytes of "
	       "/proc/self/io over the load / bytes put), peak RSS of the "
	       "store's whole run.\n\n");
	printf("| store   | on disk MiB | written MiB | write amp | peak RSS MiB | run s |\n");
	printf("|---------|------------:|------------:|----------:|-------------:|------:|\n");
	for (size_t s = 0; s < NSTORES; s++) {
		const struct load *l = &sh->load[s];
		if (!run_store_[s] || !l->ran)
			continue;
		printf("| %-7s | %11.1f | %11.1f | %9.2f | %12.1f | %5.0f |\n",
		       stores[s].name, (double)l->disk_bytes / MiB,
		       (double)l->io_written / MiB,
		       l->bytes_put ? (double)l->io_written /
		       (double)l->bytes_put : 0,
		       (double)l->peak_rss_kb / 1024, l->secs);
	}
	printf("\n");

	if (!run_store_[0] || !sh->load[0].ran)
		return;
	printf("### cellfs counters per workload\n\nFrom cf_db_stats(): "
	       "store files and regions at the end, block cache hits and "
	       "misses, files skipped by bloom filter, flushes and "
	       "compactions during the workload, and the bytes of the WAL "
	       "records it wrote (their framing included).\n\n");
	printf("| workload         | files | regions | cache hits | cache misses | bloom skips | flushes | compactions | WAL MiB |\n");
	printf("|------------------|------:|--------:|-----------:|-------------:|------------:|--------:|------------:|--------:|\n");
	for (int w = 0; w < NWORK; w++) {
		const struct cf_stats *a = &sh->cf_before[w], *b = &sh->cf_after[w];
		if (!sh->cf_ran[w])
			continue;
		printf("| %-16s | %5" PRIu64 " | %7" PRIu64 " | %10" PRIu64
		       " | %12" PRIu64 " | %11" PRIu64 " | %7" PRIu64
		       " | %11" PRIu64 " | %7.1f |\n", work_names[w],
		       b->store_files,
		       b->regions, b->cache_hits - a->cache_hits,
		       b->cache_misses - a->cache_misses,
		       b->bloom_skips - a->bloom_skips,
		       b->flushes - a->flushes,
		       b->compactions - a->compactions,
		       (double)(b->wal_bytes - a->wal_bytes) / 1048576.0);
	}
	printf("\n");
	for (c = 0, s = 1; s < NSTORES; s++)
		c |= run_store_[s];
	if (!c)
		return;
	printf("### cellfs ops/s / peer ops/s\n\nAbove 1: cellfs is faster.\n\n");
	printf("| workload         |");
	for (size_t s = 1; s < NSTORES; s++)
		if (run_store_[s])
			printf(" %7s |", stores[s].name);
	printf("\n|------------------|");
	for (size_t s = 1; s < NSTORES; s++)
		if (run_store_[s])
			printf("--------:|");
	printf("\n");
	for (int w = 0; w < NWORK; w++) {
		const struct result *c = &sh->r[0][w];
		if (!want[w])
			continue;
		printf("| %-16s |", work_names[w]);
		for (size_t s = 1; s < NSTORES; s++) {
			const struct result *p = &sh->r[s][w];
			if (!run_store_[s])
				continue;
			if (!c->ran || !p->ran || c->secs <= 0 ||
			    p->secs <= 0 || !p->ops)
				printf("       - |");
			else
				printf(" %7.2f |",
				       ((double)c->ops / c->secs) /
				       ((double)p->ops / p->secs));
		}
		printf("\n");
	}
	printf("\n");
	if (reps > 1)
		print_run_ratios(run_store_, want);
}

/* Sets flags[i] for each name of the comma list that names[i] matches. */
static int parse_list(const char *list, const char *const *names, int count,
		      int *flags)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int rc = 0;

	memset(flags, 0, sizeof *flags * (size_t)count);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int i;
		for (i = 0; i < count; i++)
			if (!strcmp(tok, names[i]))
				break;
		if (i == count) {
			fprintf(stderr, "db_bench: unknown name %s\n", tok);
			rc = -1;
		} else {
			flags[i] = 1;
		}
	}
	free(copy);
	return rc;
}

int main(int argc, char **argv)
{
	const char *dir = "/tmp/cellfs-db-bench";
	const char *store_names[NSTORES];
	int want_store[NSTORES], want[NWORK];
	double start = now();
	int c;

	for (size_t s = 0; s < NSTORES; s++) {
		store_names[s] = stores[s].name;
		want_store[s] = 1;
	}
	for (int w = 0; w < NWORK; w++)
		want[w] = 1;
	while ((c = getopt(argc, argv, "n:s:w:d:b:r:c:S")) != -1) {
		if (c == 'n') {
			n_entries = strtoull(optarg, NULL, 10);
		} else if (c == 'r') {
			reps = atoi(optarg);
		} else if (c == 's') {
			if (parse_list(optarg, store_names, NSTORES,
				       want_store))
				return 2;
		} else if (c == 'w') {
			if (parse_list(optarg, work_names, NWORK, want))
				return 2;
		} else if (c == 'd') {
			dir = optarg;
		} else if (c == 'b') {
			cf_blocksize = (uint32_t)strtoul(optarg, NULL, 10);
		} else if (c == 'c') {
			value_ratio = strtod(optarg, NULL);
		} else if (c == 'S') {
			settle = 0;
		} else {
			fprintf(stderr, "usage: db_bench [-n N] [-s cellfs,"
				"leveldb,rocksdb,sqlite,lmdb] [-w fillseq,"
				"fillrandom,overwrite,readrandom,readmissing,"
				"seekrandom,readseq,readwhilewriting,"
				"readrandom_cold] [-d DIR] [-b CELLFS_BLOCKSIZE] "
				"[-r RUNS] [-c COMPRESSION_RATIO] [-S]\n");
			return 2;
		}
	}
	if (n_entries < 10 || n_entries > UINT32_MAX) {
		fprintf(stderr, "db_bench: -n between 10 and 2^32-1\n");
		return 2;
	}
	if (!(value_ratio > 0 && value_ratio <= 1)) {
		fprintf(stderr, "db_bench: -c between 0 and 1\n");
		return 2;
	}
	bench_values_init_ratio(value_ratio);
	if (reps < 1 || reps > MAX_REPS) {
		fprintf(stderr, "db_bench: -r between 1 and %d\n", MAX_REPS);
		return 2;
	}
	/* the reads need the fillrandom load */
	want[W_FILLRANDOM] = 1;

	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	memset(sh, 0, sizeof *sh);
	rmrf(dir);
	if (mkdir(dir, 0755)) {
		perror(dir);
		return 1;
	}
	fprintf(stderr, "db_bench: %" PRIu64 " entries, seed %" PRIu64
		", dir %s\n", n_entries, seed, dir);
	/* With -r, the stores take turns (the first store of each round
	 * moves on by one) and each workload keeps its best run: other work
	 * on a shared machine only ever makes a run slower. */
	for (int rep = 0; rep < reps; rep++)
		for (size_t k = 0; k < NSTORES; k++) {
			size_t s = (k + (size_t)rep) % NSTORES;
			pid_t pid;
			int status;

			if (!want_store[s])
				continue;
			fflush(NULL);
			pid = fork();
			if (pid < 0)
				return 1;
			if (pid == 0) {
				run_store((int)s, dir, want);
				_exit(0);
			}
			if (waitpid(pid, &status, 0) < 0 ||
			    !WIFEXITED(status) || WEXITSTATUS(status))
				fprintf(stderr, "db_bench: %s failed\n",
					stores[s].name);
			for (int w = 0; w < NWORK; w++)
				if (sh->r[s][w].ran)
					runs[rep][s][w] = rate(&sh->r[s][w]);
			for (int w = 0; w < NWORK; w++)
				if (sh->r[s][w].ran &&
				    (!best[s][w].ran ||
				     rate(&sh->r[s][w]) > rate(&best[s][w])))
					best[s][w] = sh->r[s][w];
		}
	memcpy(sh->r, best, sizeof best);
	rmrf(dir);

	printf("## db_bench: %" PRIu64 " entries, %d-byte keys, %d-byte "
	       "values, WAL without fsync, cellfs "
	       "BLOCKSIZE %" PRIu32 "%s\n\n", n_entries, KEY_LEN, VAL_LEN,
	       cf_blocksize ? cf_blocksize : 65536,
	       cf_blocksize ? "" : " (family default)");
	printf("Values: %.0f random printable bytes of every 100, repeated "
	       "(db_bench's compression ratio %.2f).  Write buffers: %d of "
	       "%u MiB.  Reads %s.  LevelDB and RocksDB: %s.\n\n",
	       value_ratio * 100, value_ratio, WRITE_BUFFERS,
	       WRITE_BUFFER / MiB, settle ? "after a settle step (every "
	       "store compacted, untimed)" : "without a settle step (-S)",
	       PEER_BUILD);
	if (reps > 1)
		printf("Each store ran %d times, taking turns; every workload's "
		       "row is its best run by ops/s (the load and counter "
		       "tables are from the last).\n\n", reps);
	print_tables(want_store, want);
	printf("Total %.0f s.\n", now() - start);
	munmap(sh, sizeof *sh);
	return 0;
}
