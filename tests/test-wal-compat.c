/*
 * test-wal-compat.c: a data directory left by a crash of older code
 * replays, and today's records replay to the same cells.
 *
 * tests/data/wal-v1/ is a data directory written by the code of a78a151
 * (payload version 1, docs/wal_format.md) with `test-wal-compat --make
 * DIR`: the mutations of write_fixture() applied, then the process ended
 * with _exit(0), no close, no flush: everything is in the WAL only.
 * (Its newest segment was cut after its last record; the zeros of the
 * preallocation read as a torn tail and would be cut the same way.)
 *
 * The test opens a copy of it with today's code and compares a raw scan
 * of every table (puts, masked versions and delete markers) with the
 * same mutations written by today's code in a child process that also
 * ends without a close, and with the cells the mutations must leave.
 * Today's log holds the same mutations in fewer bytes (payload version
 * 2: compact entries, snappy over the body), and its records are of
 * version 2.  cellfs-fsck (cf_check) decodes every record's payload:
 * both directories check clean, and a record whose frame checks but
 * whose payload does not decode is a problem that --repair cuts, after
 * which the directory opens with everything before it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/cellfs.h"
#include "engine/wal.h"
#include "tests/tap.h"
#include "tests/xorshift.h"
#include "util/buf.h"
#include "util/err.h"

#define FIX_ROWS 200

static void must(int rc, const char *what)
{
	if (rc != CF_OK)
		bail("%s: %s", what, cf_strerror(rc));
}

/* A value of n bytes: a few words repeated (so compression has
 * something to take), with the row number in it. */
static size_t fix_value(char *v, size_t n, unsigned i)
{
	static const char *words[] = { "cpu", "load", "host=web", " 42.5 ",
				       "sys.net.bytes", "\0\1\2\377" };
	size_t at = 0;

	while (at < n) {
		const char *w = words[(i + at) % 6];
		size_t wl = (i + at) % 6 == 5 ? 4 : strlen(w);
		if (wl > n - at)
			wl = n - at;
		memcpy(v + at, w, wl);
		at += wl;
		if (at < n)
			v[at++] = (char)('a' + i % 26);
	}
	return n;
}

/* The mutations: two tables, every kind of write, records of one cell
 * and of thousands, values from empty to 100 KiB. */
static void write_fixture(cf_db *db)
{
	struct cf_family f[2], g;
	cf_table *t1, *t2;
	cf_batch *b;
	char row[32], qual[32], *v = malloc(100 << 10);

	if (!v)
		bail("out of memory");
	cf_family_default(&f[0], "f");
	f[0].versions = 3;
	cf_family_default(&f[1], "g");
	cf_family_default(&g, "cf");
	must(cf_table_create(db, "t1", f, 2), "create t1");
	must(cf_table_create(db, "t2", &g, 1), "create t2");
	must(cf_table_open(db, "t1", &t1), "open t1");
	must(cf_table_open(db, "t2", &t2), "open t2");
	must(cf_batch_new(&b), "batch");

	/* one batch of FIX_ROWS rows x 3 cells, two families */
	for (unsigned i = 0; i < FIX_ROWS; i++) {
		snprintf(row, sizeof row, "r%05u", i);
		for (unsigned c = 0; c < 3; c++) {
			size_t n = fix_value(v, (i * 7 + c * 13) % 300, i);
			snprintf(qual, sizeof qual, "q%u", c);
			must(cf_batch_put(b, row, strlen(row), c == 2 ? "g" : "f",
					  1, qual, strlen(qual),
					  1000000 + i * 10 + c, v, n), "put");
		}
	}
	must(cf_table_apply(t1, b), "apply rows");
	cf_batch_clear(b);

	/* versions of one column, one record each */
	for (unsigned k = 0; k < 5; k++) {
		size_t n = fix_value(v, 10 + k, k);
		must(cf_batch_put(b, "r00001", 6, "f", 1, "q0", 2,
				  2000000 + k, v, n), "put version");
		must(cf_table_apply(t1, b), "apply version");
		cf_batch_clear(b);
	}

	/* a value big enough to stay in its batch, and a small one */
	fix_value(v, 100 << 10, 7);
	must(cf_batch_put(b, "r00002", 6, "f", 1, "big", 3, 3000000, v,
			  100 << 10), "put big");
	must(cf_batch_put(b, "r00002", 6, "g", 1, "small", 5, 3000001, "s",
			  1), "put small");
	must(cf_table_apply(t1, b), "apply big");
	cf_batch_clear(b);

	/* every kind of delete, at timestamps */
	must(cf_batch_delete(b, CF_DEL_VERSION, "r00003", 6, "f", 1, "q0", 2,
			     1000030), "delete version");
	must(cf_batch_delete(b, CF_DEL_COLUMN, "r00004", 6, "f", 1, "q1", 2,
			     1000041), "delete column");
	must(cf_batch_delete(b, CF_DEL_FAMILY, "r00005", 6, "f", 1, NULL, 0,
			     1000051), "delete family");
	must(cf_batch_delete(b, CF_DEL_ROW, "r00006", 6, NULL, 0, NULL, 0,
			     1000062), "delete row");
	must(cf_table_apply(t1, b), "apply deletes");
	cf_batch_clear(b);

	/* the second table: binary rows, an empty qualifier and value */
	must(cf_batch_put(b, "\0\377", 2, "cf", 2, "", 0, 5, "", 0), "put");
	must(cf_batch_put(b, "\0\377", 2, "cf", 2, "\n", 1, 7, "x\n", 2),
	     "put");
	must(cf_batch_put(b, "\377", 1, "cf", 2, "q", 1, 0, "neg", 3), "put");
	must(cf_table_apply(t2, b), "apply t2");
	cf_batch_clear(b);

	/* one batch larger than a group's bound: 12,000 small cells */
	rng = 99;
	for (unsigned i = 0; i < 12000; i++) {
		size_t n = fix_value(v, 20 + rnd(150), (unsigned)rnd(1000));
		snprintf(row, sizeof row, "s%08u", (unsigned)rnd(100000000));
		must(cf_batch_put(b, row, strlen(row), "f", 1, "v", 1,
				  4000000 + i, v, n), "put many");
	}
	must(cf_table_apply(t1, b), "apply many");
	cf_batch_free(b);
	cf_table_close(t1);
	cf_table_close(t2);
	free(v);
}

/* Writes the fixture into dir in a process that ends without a close. */
static void make(const char *dir)
{
	struct cf_options o;
	cf_db *db;

	cf_options_default(&o);
	o.background = 0;
	must(cf_db_open(dir, &o, &db), "open");
	write_fixture(db);
	fflush(stdout);
	_exit(0);
}

/* Every cell of table name, raw, one line each, into out. */
static size_t dump(cf_db *db, const char *name, struct buf *out)
{
	struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };
	cf_table *t;
	cf_scanner *s;
	const cf_row *r;
	size_t cells = 0;

	so.read.raw = 1;
	must(cf_table_open(db, name, &t), "open table");
	must(cf_scan_open(t, &so, &s), "scan");
	while (cf_scan_next(s, &r) == CF_OK && r) {
		size_t kl;
		const unsigned char *k = cf_row_key(r, &kl);
		for (size_t i = 0; i < cf_row_count(r); i++) {
			const struct cf_cell *c = cf_row_cell(r, i);
			buf_printf(out, "%zu:", kl);
			buf_append(out, k, kl);
			buf_printf(out, " %.*s:", (int)c->famlen, c->fam);
			buf_append(out, c->qual, c->qlen);
			buf_printf(out, " %lld %d %zu:", (long long)c->ts,
				   c->kind, c->vlen);
			if (c->vlen)
				buf_append(out, c->val, c->vlen);
			buf_putc(out, '\n');
			cells++;
		}
	}
	cf_scan_close(s);
	cf_table_close(t);
	return cells;
}

/* The payload bytes of dir's log, and how many of its records have
 * payload version v. */
static void say(void *arg, enum cf_check_kind kind, const char *path,
		const char *what)
{
	int *undecodable = arg;

	diag("fsck: %s: %s%s", path, kind == CF_CHECK_DEBRIS ? "debris: " :
	     "", what);
	if (strstr(what, "do not decode"))
		(*undecodable)++;
}

/* Appends to dir's log a record whose frame is good and whose payload
 * is not (a head byte with unknown bits), in a segment of its own. */
static void append_undecodable(const char *dir)
{
	static const unsigned char bad[] = { 2, 0, 1, 1, 0xff, 0, 0, 0, 0 };
	char wdir[8400];
	uint64_t *ids = NULL;
	size_t n = 0;
	struct wal *w;

	snprintf(wdir, sizeof wdir, "%s/wal", dir);
	must(wal_list(wdir, &ids, &n), "wal_list");
	must(wal_open(wdir, n ? ids[n - 1] + 1 : 1, 64u << 20, WAL_WRITE, &w),
	     "wal_open");
	must(wal_append(w, bad, sizeof bad, 1), "wal_append");
	wal_close(w);
	free(ids);
}

static void fsck_payloads(const char *old, const char *now, size_t cells)
{
	unsigned problems = 9, debris = 9;
	int undecodable = 0;
	struct cf_options o;
	struct buf a = BUF_INIT;
	cf_db *db;

	is_int(cf_check(old, 0, say, &undecodable, &problems, &debris),
	       CF_OK, "cellfs-fsck of the older directory");
	is_int((int)problems, 0, "no problem in its version 1 records");
	is_int(cf_check(now, 0, say, &undecodable, &problems, &debris),
	       CF_OK, "cellfs-fsck of today's");
	is_int((int)problems, 0, "no problem in its version 2 records");
	append_undecodable(now);
	cf_options_default(&o);
	o.background = 0;
	is_int(cf_db_open(now, &o, &db), CF_ECORRUPT,
	       "a whole record that does not decode refuses the open");
	undecodable = 0;
	cf_check(now, 0, say, &undecodable, &problems, &debris);
	ok(problems == 1 && undecodable == 1, "cellfs-fsck says so "
	   "(%u problems)", problems);
	cf_check(now, 1, say, &undecodable, &problems, &debris);
	is_int(cf_db_open(now, &o, &db), CF_OK,
	       "after --repair the directory opens");
	ok(dump(db, "t1", &a) + dump(db, "t2", &a) == cells,
	   "with every cell before the record");
	cf_db_close(db);
	is_int(cf_check(now, 0, say, &undecodable, &problems, &debris),
	       CF_OK, "and checks clean");
	is_int((int)problems, 0, "no problem left");
	buf_release(&a);
}

static long long log_bytes(const char *dir, int v, size_t *nv)
{
	char wdir[4200], path[4400];
	uint64_t *ids = NULL;
	size_t n = 0;
	long long bytes = 0;

	*nv = 0;
	snprintf(wdir, sizeof wdir, "%s/wal", dir);
	must(wal_list(wdir, &ids, &n), "wal_list");
	for (size_t i = 0; i < n; i++) {
		struct wal_reader *r;
		const void *rec;
		size_t len;

		wal_segment_path(path, sizeof path, wdir, ids[i]);
		must(wal_reader_open(path, &r), "wal_reader_open");
		while (wal_reader_next(r, &rec, &len) == CF_OK && rec) {
			bytes += (long long)len;
			if (len && *(const unsigned char *)rec == v)
				(*nv)++;
		}
		wal_reader_close(r);
	}
	free(ids);
	return bytes;
}

int main(int argc, char **argv)
{
	const char *top = getenv("CELLFS_TOP");
	const char *tmp;
	char old[8192], now[8192], cmd[20000];
	struct cf_options o;
	struct buf a = BUF_INIT, b = BUF_INIT;
	size_t na, nb, vo, vn;
	long long lo, ln;
	cf_db *db;
	pid_t pid;
	int st;

	if (argc == 3 && !strcmp(argv[1], "--make"))
		make(argv[2]);
	if (!top)
		top = ".";
	tmp = tap_tmpdir("wal-compat");
	snprintf(old, sizeof old, "%s/old", tmp);
	snprintf(now, sizeof now, "%s/now", tmp);
	snprintf(cmd, sizeof cmd, "cp -r '%s/tests/data/wal-v1' '%s'", top,
		 old);
	if (system(cmd) != 0)
		bail("%s failed", cmd);
	if ((pid = fork()) == 0)
		make(now);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		bail("the child writing %s failed", now);
	lo = log_bytes(old, 1, &vo);
	ln = log_bytes(now, 2, &vn);
	is_int(vo, 10, "the older log: 10 records of version 1");
	is_int(vn, 10, "today's: 10 records of version 2");
	ok(ln * 2 < lo, "today's log holds the mutations in under half the "
	   "bytes (%lld, was %lld)", ln, lo);

	cf_options_default(&o);
	o.background = 0;
	is_int(cf_db_open(old, &o, &db), CF_OK, "the older directory opens");
	na = dump(db, "t1", &a);
	na += dump(db, "t2", &a);
	cf_db_close(db);
	is_int(cf_db_open(now, &o, &db), CF_OK, "today's directory opens");
	nb = dump(db, "t1", &b);
	nb += dump(db, "t2", &b);
	cf_db_close(db);
	/* 600 + 5 versions + 2 + 4 markers (the row's: one a family)
	 * + 3 + 12,000 (rows drawn at random may repeat, cells do not) */
	is_int(na, 600 + 5 + 2 + 5 + 3 + 12000, "the older directory holds "
	       "every cell and marker written");
	is_int(nb, na, "today's holds as many");
	ok(a.len == b.len && memcmp(a.p, b.p, a.len) == 0,
	   "raw scans of both read the same bytes (%zu, %zu)", a.len, b.len);

	/* reopened after a clean close: the same again */
	is_int(cf_db_open(now, &o, &db), CF_OK, "today's reopens");
	buf_reset(&b);
	dump(db, "t1", &b);
	dump(db, "t2", &b);
	cf_db_close(db);
	ok(a.len == b.len && memcmp(a.p, b.p, a.len) == 0,
	   "and after its close and flush");
	fsck_payloads(old, now, na);
	buf_release(&a);
	buf_release(&b);
	tap_rmdir(tmp);
	return done_testing();
}
