/*
 * test-env.c: the OS layer (util/env.h): every call, the errno mapping,
 * each kind of injected fault, the power-loss simulation and the clock.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include "tests/tap.h"
#include "util/env.h"
#include "util/err.h"

static const char *dir;

static const char *P(const char *name)
{
	static char bufs[4][4200];
	static int i;
	char *b = bufs[i++ % 4];

	snprintf(b, 4200, "%s/%s", dir, name);
	return b;
}

/* The file's size, or -1 if it does not exist. */
static long long fsize(const char *path)
{
	uint64_t n;

	return env_file_size(path, &n) == CF_OK ? (long long)n : -1;
}

/* Makes path hold exactly s. */
static void put_file(const char *path, const char *s)
{
	struct env_file *f;

	if (env_open(path, ENV_WRITE_NEW, &f) || env_write(f, s, strlen(s)) ||
	    env_close(f))
		bail("cannot write %s", path);
}

/* Is path's content exactly s? */
static int has(const char *path, const char *s)
{
	char *p;
	size_t n;
	int r;

	if (env_read_file(path, &p, &n))
		return 0;
	r = n == strlen(s) && !memcmp(p, s, n);
	free(p);
	return r;
}

static void test_files(void)
{
	struct env_file *f, *g;
	char buf[64];
	size_t got;

	is_int(env_open(P("missing"), ENV_READ, &f), CF_ENOTFOUND,
	       "open of a missing file for reading: CF_ENOTFOUND");
	ok(f == NULL, "and *out is NULL");
	is_int(env_open(P("missing"), ENV_RDWR, &f), CF_ENOTFOUND,
	       "ENV_RDWR needs an existing file");
	is_int(env_open(P("no/such/dir/x"), ENV_WRITE_NEW, &f), CF_ENOTFOUND,
	       "creating in a missing directory: CF_ENOTFOUND");
	{
		char longname[400];
		memset(longname, 'n', sizeof longname - 1);
		longname[sizeof longname - 1] = 0;
		is_int(env_open(P(longname), ENV_WRITE_NEW, &f),
		       CF_ENAMETOOLONG, "ENAMETOOLONG maps to CF_ENAMETOOLONG");
	}

	is_int(env_open(P("a"), ENV_WRITE_NEW, &f), CF_OK, "ENV_WRITE_NEW creates");
	is_str(env_path(f), P("a"), "env_path is the path opened");
	is_int(env_write(f, "hello ", 6), CF_OK, "write");
	is_int(env_write(f, "world", 5), CF_OK, "write again");
	is_int(env_write(f, "", 0), CF_OK, "a 0-byte write is fine");
	is_int(env_offset(f), 11, "offset counts bytes written");
	is_int(env_size(f), 11, "env_size");
	is_int(env_sync(f), CF_OK, "sync");
	is_int(env_truncate(f, 5), CF_OK, "truncate");
	is_int(env_size(f), 5, "smaller after truncate");
	is_int(env_offset(f), 5, "offset follows the truncation");
	is_int(env_write(f, "!", 1), CF_OK, "write after truncate");
	is_int(env_close(f), CF_OK, "close");
	ok(has(P("a"), "hello!"), "the write lands at the cut, no hole");
	is_int(env_close(NULL), CF_OK, "env_close(NULL) is a no-op");

	is_int(env_open(P("a"), ENV_APPEND, &f), CF_OK, "ENV_APPEND of an existing file");
	is_int(env_offset(f), 6, "starts at the old size");
	env_write(f, "+1", 2);
	is_int(env_offset(f), 8, "and counts on");
	env_close(f);
	ok(has(P("a"), "hello!+1"), "appended at the end");
	is_int(env_open(P("b"), ENV_APPEND, &f), CF_OK, "ENV_APPEND creates");
	is_int(env_offset(f), 0, "at 0");
	env_close(f);
	is_int(fsize(P("b")), 0, "an empty file");

	is_int(env_open(P("a"), ENV_READ, &f), CF_OK, "ENV_READ");
	is_int(env_pread(f, buf, 5, 0), CF_OK, "pread");
	is_mem(buf, 5, "hello", 5, "reads the bytes");
	is_int(env_pread(f, buf, 3, 5), CF_OK, "pread at an offset");
	is_mem(buf, 3, "!+1", 3, "reads them");
	is_int(env_pread(f, buf, 4, 6), CF_ECORRUPT,
	       "pread past the end: CF_ECORRUPT");
	is_int(env_pread_some(f, buf, sizeof buf, 6, &got), CF_OK, "pread_some");
	is_int(got, 2, "returns what there is");
	is_int(env_pread_some(f, buf, sizeof buf, 8, &got), CF_OK, "pread_some at EOF");
	is_int(got, 0, "0 bytes at EOF");
	is_int(env_pread_some(f, buf, sizeof buf, 1000, &got), CF_OK,
	       "pread_some past EOF");
	is_int(got, 0, "0 bytes past EOF");
	is_int(env_open(P("a"), ENV_READ, &g), CF_OK, "a second reader");
	is_int(env_pread(g, buf, 2, 6), CF_OK, "reads independently");
	env_close(g);
	env_close(f);

	is_int(env_open(P("a"), ENV_RDWR, &f), CF_OK, "ENV_RDWR");
	is_int(env_offset(f), 0, "at 0");
	env_write(f, "J", 1);
	is_int(env_pread(f, buf, 3, 0), CF_OK, "reads what it wrote");
	is_mem(buf, 3, "Jel", 3, "overwrote in place");
	env_close(f);
	is_int(fsize(P("a")), 8, "size unchanged by an overwrite");

	is_int(env_open(P("a"), ENV_WRITE_NEW, &f), CF_OK, "ENV_WRITE_NEW again");
	env_close(f);
	is_int(fsize(P("a")), 0, "truncates");

	/* a big write goes out whole */
	{
		size_t n = 3u << 20;
		char *big = malloc(n), *back = malloc(n);
		for (size_t i = 0; i < n; i++)
			big[i] = (char)(i * 7 + 3);
		env_open(P("big"), ENV_WRITE_NEW, &f);
		is_int(env_write(f, big, n), CF_OK, "a 3 MiB write");
		env_close(f);
		env_open(P("big"), ENV_READ, &f);
		ok(env_pread(f, back, n, 0) == CF_OK && !memcmp(big, back, n),
		   "reads back the same 3 MiB");
		env_close(f);
		free(big);
		free(back);
	}
}

struct names {
	char s[256];	/* one letter per entry, sorted */
	int calls, stop_at;
};

static int collect(const char *name, void *arg)
{
	struct names *l = arg;
	size_t n = strlen(l->s);

	l->calls++;
	if (strlen(name) == 1 && n + 1 < sizeof l->s) {
		/* insertion sort: the order of readdir is not promised */
		while (n > 0 && l->s[n - 1] > name[0]) {
			l->s[n] = l->s[n - 1];
			n--;
		}
		l->s[n] = name[0];
	}
	return l->calls == l->stop_at ? 42 : 0;
}

static void test_paths(void)
{
	struct env_file *l1, *l2;
	struct names n;
	uint64_t size;
	char *p;
	size_t len;

	ok(env_exists(P("a")) == 1 && env_exists(P("nope")) == 0, "env_exists");
	put_file(P("sz"), "12345");
	ok(env_file_size(P("sz"), &size) == CF_OK && size == 5, "env_file_size");
	is_int(env_file_size(P("nope"), &size), CF_ENOTFOUND,
	       "env_file_size of a missing file");

	is_int(env_mkdir(P("d"), 0755), CF_OK, "mkdir");
	is_int(env_mkdir(P("d"), 0755), CF_OK, "mkdir of an existing dir is ok");
	is_int(env_mkdir(P("sz"), 0755), CF_EEXIST, "mkdir over a file: CF_EEXIST");
	is_int(env_mkdir(P("x/y"), 0755), CF_ENOTFOUND, "mkdir without the parent");
	is_int(env_mkdir_p(P("p/q//r/"), 0755), CF_OK, "mkdir_p");
	ok(env_exists(P("p/q/r")), "made every level");
	is_int(env_mkdir_p(P("p/q/r"), 0755), CF_OK, "mkdir_p again is ok");
	is_int(env_mkdir_p(P("sz/q"), 0755), CF_EEXIST,
	       "mkdir_p through a file: CF_EEXIST");

	put_file(P("d/f1"), "1");
	is_int(env_rmdir(P("d")), CF_ENOTEMPTY, "rmdir of a non-empty dir");
	is_int(env_unlink(P("d/f1")), CF_OK, "unlink");
	is_int(env_unlink(P("d/f1")), CF_ENOTFOUND, "unlink of a missing file");
	is_int(env_rmdir(P("d")), CF_OK, "rmdir");
	is_int(env_rmdir(P("d")), CF_ENOTFOUND, "rmdir of a missing dir");

	put_file(P("p/q/r/f"), "x");
	put_file(P("p/f"), "y");
	is_int(env_remove_tree(P("p")), CF_OK, "remove_tree");
	ok(!env_exists(P("p")), "the tree is gone");
	is_int(env_remove_tree(P("p")), CF_OK, "remove_tree of nothing is ok");
	put_file(P("lone"), "z");
	is_int(env_remove_tree(P("lone")), CF_OK, "remove_tree of a file");
	ok(!env_exists(P("lone")), "removes it");

	put_file(P("r1"), "one");
	is_int(env_rename(P("r1"), P("r2")), CF_OK, "rename");
	ok(!env_exists(P("r1")) && has(P("r2"), "one"), "moved");
	put_file(P("r3"), "three");
	is_int(env_rename(P("r3"), P("r2")), CF_OK, "rename over a file");
	ok(has(P("r2"), "three"), "replaces it");
	is_int(env_rename(P("r1"), P("r4")), CF_ENOTFOUND, "rename of a missing file");
	is_int(env_sync_dir(dir), CF_OK, "sync_dir");
	is_int(env_sync_dir(P("nope")), CF_ENOTFOUND, "sync_dir of a missing dir");

	env_mkdir(P("ls"), 0755);
	put_file(P("ls/c"), "");
	put_file(P("ls/a"), "");
	env_mkdir(P("ls/b"), 0755);
	memset(&n, 0, sizeof n);
	is_int(env_list_dir(P("ls"), collect, &n), CF_OK, "list_dir");
	is_str(n.s, "abc", "every entry once, without . and ..");
	memset(&n, 0, sizeof n);
	n.stop_at = 2;
	is_int(env_list_dir(P("ls"), collect, &n), 42, "list_dir returns fn's value");
	is_int(n.calls, 2, "and stops there");
	is_int(env_list_dir(P("nope"), collect, &n), CF_ENOTFOUND,
	       "list_dir of a missing dir");

	put_file(P("rf"), "abc");
	is_int(env_read_file(P("rf"), &p, &len), CF_OK, "read_file");
	ok(len == 3 && !strcmp(p, "abc"), "whole and NUL-terminated");
	free(p);
	put_file(P("rf"), "");
	is_int(env_read_file(P("rf"), &p, &len), CF_OK, "read_file of an empty file");
	ok(len == 0 && p && p[0] == 0, "an empty string");
	free(p);
	is_int(env_read_file(P("nope"), &p, &len), CF_ENOTFOUND,
	       "read_file of a missing file");
	ok(p == NULL, "*out is NULL on failure");

	is_int(env_write_file_atomic(P("at"), "first", 5), CF_OK, "write_file_atomic");
	ok(has(P("at"), "first"), "writes it");
	is_int(env_write_file_atomic(P("at"), "second!", 7), CF_OK, "again");
	ok(has(P("at"), "second!"), "replaces it whole");
	ok(!env_exists(P("at.tmp")), "no temporary file left");

	is_int(env_lock_file(P("LOCK"), &l1), CF_OK, "lock_file");
	is_int(env_lock_file(P("LOCK"), &l2), CF_EBUSY,
	       "a second lock, even in one process: CF_EBUSY");
	ok(l2 == NULL, "no handle then");
	env_close(l1);
	is_int(env_lock_file(P("LOCK"), &l2), CF_OK, "free again after close");
	env_close(l2);
}

static void test_faults(void)
{
	struct env_file *f;
	char buf[16];
	int i, rc[6];
	uint64_t h0 = env_fault_hits();

	is_int(env_fault_add(ENV_OP_WRITE, NULL, 0, 1, 0, 0), CF_EINVAL,
	       "a fault needs an error");

	/* ENOSPC on write */
	env_open(P("fw"), ENV_WRITE_NEW, &f);
	env_write(f, "ok", 2);
	ok(env_fault_add(ENV_OP_WRITE, "fw", 0, 1, CF_ENOSPC, 0) >= 0, "fault added");
	is_int(env_write(f, "abcd", 4), CF_ENOSPC, "a write fails with ENOSPC");
	is_int(env_size(f), 2, "and writes nothing");
	is_int(env_offset(f), 2, "offset unchanged");
	is_int(env_fault_hits() - h0, 1, "one hit counted");
	is_int(env_write(f, "abcd", 4), CF_OK, "count 1: the next write works");
	env_fault_clear();

	/* short write, then the error */
	env_fault_add(ENV_OP_WRITE, "fw", 0, 1, CF_EIO, 1);
	is_int(env_write(f, "0123456789", 10), CF_EIO, "a short write fails EIO");
	is_int(env_size(f), 11, "after writing half of its bytes");
	is_int(env_offset(f), 11, "offset counts the half");
	is_int(env_truncate(f, 6), CF_OK, "the caller cuts it off");
	is_int(env_write(f, "Z", 1), CF_OK, "and writes on");
	env_close(f);
	ok(has(P("fw"), "okabcdZ"), "content is exactly the whole writes");
	env_fault_clear();

	/* EIO on sync */
	env_open(P("fs"), ENV_WRITE_NEW, &f);
	env_fault_add(ENV_OP_SYNC, "fs", 0, 1, CF_EIO, 0);
	is_int(env_write(f, "x", 1), CF_OK, "a sync fault leaves writes alone");
	is_int(env_sync(f), CF_EIO, "sync fails with EIO");
	is_int(env_sync(f), CF_OK, "once");
	env_fault_clear();
	env_fault_add(ENV_OP_SYNC, NULL, 0, 1, CF_EIO, 0);
	is_int(env_sync_dir(dir), CF_EIO, "sync_dir is a sync too");
	env_fault_clear();

	/* skip and count: ops 1-2 pass, 3-4 fail, 5 passes */
	env_fault_add(ENV_OP_WRITE, "fs", 2, 2, CF_ENOSPC, 0);
	for (i = 0; i < 5; i++)
		rc[i] = env_write(f, "w", 1);
	ok(rc[0] == 0 && rc[1] == 0 && rc[2] == CF_ENOSPC &&
	   rc[3] == CF_ENOSPC && rc[4] == 0,
	   "skip 2 count 2: %d %d %d %d %d", rc[0], rc[1], rc[2], rc[3], rc[4]);
	env_fault_clear();

	/* count < 0: until cleared */
	env_fault_add(ENV_OP_WRITE, "fs", 1, -1, CF_EIO, 0);
	for (i = 0; i < 6; i++)
		rc[i] = env_write(f, "w", 1);
	ok(rc[0] == 0 && rc[1] == CF_EIO && rc[2] == CF_EIO && rc[5] == CF_EIO,
	   "count -1 fails every time after the skip");
	env_fault_clear();
	is_int(env_write(f, "w", 1), CF_OK, "until env_fault_clear");

	/* path and op filters */
	env_fault_add(ENV_OP_WRITE, "other-file", 0, -1, CF_EIO, 0);
	is_int(env_write(f, "w", 1), CF_OK, "a fault on another path does not hit");
	env_fault_clear();
	env_fault_add(ENV_OP_READ | ENV_OP_SYNC, NULL, 0, -1, CF_EIO, 0);
	is_int(env_write(f, "w", 1), CF_OK, "nor one on other operations");
	env_close(f);
	env_open(P("fs"), ENV_READ, &f);
	is_int(env_pread(f, buf, 1, 0), CF_EIO, "a read fault");
	env_fault_clear();
	is_int(env_pread(f, buf, 1, 0), CF_OK, "gone after clear");
	env_close(f);

	/* two faults count independently */
	env_fault_add(ENV_OP_WRITE, "two", 0, 1, CF_ENOSPC, 0);
	env_fault_add(ENV_OP_WRITE, "two", 1, 1, CF_EIO, 0);
	env_open(P("two"), ENV_WRITE_NEW, &f);
	rc[0] = env_write(f, "a", 1);
	rc[1] = env_write(f, "b", 1);
	rc[2] = env_write(f, "c", 1);
	ok(rc[0] == CF_ENOSPC && rc[1] == CF_EIO && rc[2] == CF_OK,
	   "each fault counts every matching op: %d %d %d", rc[0], rc[1], rc[2]);
	env_close(f);
	env_fault_clear();

	/* open and rename */
	env_fault_add(ENV_OP_OPEN, "fo", 0, 1, CF_EIO, 0);
	is_int(env_open(P("fo"), ENV_WRITE_NEW, &f), CF_EIO, "an open fault");
	ok(!env_exists(P("fo")), "nothing created");
	env_fault_clear();
	put_file(P("fo"), "x");
	env_fault_add(ENV_OP_RENAME, "fo2", 0, 1, CF_ENOSPC, 0);
	is_int(env_rename(P("fo"), P("fo2")), CF_ENOSPC,
	       "a rename fault matches the target path");
	ok(env_exists(P("fo")) && !env_exists(P("fo2")), "nothing renamed");
	env_fault_clear();
	env_fault_add(ENV_OP_RENAME, "/fo", 0, 1, CF_EIO, 0);
	is_int(env_rename(P("fo"), P("gx")), CF_EIO, "or the source path");
	env_fault_clear();

	/* whole-file helpers feel the faults */
	env_fault_add(ENV_OP_SYNC, "atomic", 0, 1, CF_EIO, 0);
	put_file(P("atomic"), "old");
	is_int(env_write_file_atomic(P("atomic"), "new", 3), CF_EIO,
	       "write_file_atomic reports a sync error");
	ok(has(P("atomic"), "old") && !env_exists(P("atomic.tmp")),
	   "and leaves the old file, no temporary");
	env_fault_clear();
	env_fault_add(ENV_OP_READ, "atomic", 0, 1, CF_EIO, 0);
	{
		char *p = NULL;
		size_t n;
		is_int(env_read_file(P("atomic"), &p, &n), CF_EIO,
		       "read_file reports a read error");
		free(p);
	}
	env_fault_clear();
	is_int(env_fault_hits() - h0, 19, "env_fault_hits counts every injected failure");
}

static void write_str(const char *path, enum env_open_mode mode,
		      const char *s, int sync)
{
	struct env_file *f;

	if (env_open(path, mode, &f) || env_write(f, s, strlen(s)) ||
	    (sync && env_sync(f)) || env_close(f))
		bail("write_str %s", path);
}

static void test_power_loss(void)
{
	struct env_file *f;

	env_mkdir(P("pl"), 0755);
	put_file(P("pl/old"), "before");	/* exists before tracking */
	env_sync_dir(P("pl"));
	env_track_unsynced(1);

	/* an old file grown: back to its size when first touched */
	write_str(P("pl/old"), ENV_APPEND, "+more", 0);
	/* synced, then grown */
	write_str(P("pl/s"), ENV_WRITE_NEW, "synced", 1);
	write_str(P("pl/s"), ENV_APPEND, "+lost", 0);
	/* created, directory synced but not the file: empty */
	write_str(P("pl/named"), ENV_WRITE_NEW, "data", 0);
	/* written whole and atomically */
	is_int(env_write_file_atomic(P("pl/at"), "atomic", 6), CF_OK,
	       "atomic write while tracking");
	/* renamed, never synced: the name stays, the data not */
	write_str(P("pl/ren1"), ENV_WRITE_NEW, "moved", 0);
	env_rename(P("pl/ren1"), P("pl/ren2"));
	/* synced, then cut shorter: stays short */
	write_str(P("pl/cut"), ENV_WRITE_NEW, "123456", 1);
	env_open(P("pl/cut"), ENV_RDWR, &f);
	env_truncate(f, 2);
	env_close(f);
	/* unlinked, then made again and not synced: deleted */
	write_str(P("pl/again"), ENV_WRITE_NEW, "first", 1);
	env_unlink(P("pl/again"));
	write_str(P("pl/again"), ENV_WRITE_NEW, "second", 0);

	is_int(env_sync_dir(P("pl")), CF_OK, "sync the directory");
	write_str(P("pl/late"), ENV_WRITE_NEW, "after the dir sync", 0);

	is_int(env_drop_unsynced(), CF_OK, "drop_unsynced");
	ok(has(P("pl/old"), "before"), "an old file is cut to its old size");
	ok(has(P("pl/s"), "synced"), "a synced file keeps its synced bytes");
	ok(!env_exists(P("pl/late")),
	   "a file created and never synced, nor its directory: deleted");
	ok(has(P("pl/named"), ""), "a file whose directory was synced stays, empty");
	ok(has(P("pl/again"), ""),
	   "so does one unlinked and made again before that sync");
	ok(has(P("pl/at"), "atomic"), "an atomic write survives whole");
	ok(!env_exists(P("pl/ren1")) && has(P("pl/ren2"), ""),
	   "a rename is durable, unsynced data in it is not");
	ok(has(P("pl/cut"), "12"), "never extended back to an older size");

	/* tracking survives a drop; turning it off forgets */
	write_str(P("pl/s"), ENV_APPEND, "+x", 0);
	is_int(env_drop_unsynced(), CF_OK, "a second drop");
	ok(has(P("pl/s"), "synced"), "cuts again");
	env_track_unsynced(0);
	write_str(P("pl/s"), ENV_APPEND, "+kept", 0);
	write_str(P("pl/untracked"), ENV_WRITE_NEW, "u", 0);
	is_int(env_drop_unsynced(), CF_OK, "drop with tracking off");
	ok(has(P("pl/s"), "synced+kept") && has(P("pl/untracked"), "u"),
	   "does nothing");

	/* a file opened before tracking began, written after */
	env_open(P("pl/pre"), ENV_WRITE_NEW, &f);
	env_write(f, "pre", 3);
	env_track_unsynced(1);
	env_write(f, "+post", 5);
	is_int(env_drop_unsynced(), CF_OK, "drop");
	ok(has(P("pl/pre"), "pre"), "an already open file keeps what it had "
	   "when tracking began");
	env_write(f, "!", 1);
	env_sync(f);
	env_write(f, "?", 1);
	env_drop_unsynced();
	{
		char *p;
		size_t n;
		env_read_file(P("pl/pre"), &p, &n);
		is_int(n, 9, "then its sync counts (%zu bytes)", n);
		free(p);
	}
	env_close(f);
	env_track_unsynced(0);
}

struct adv_arg {
	int n;
};

static void *advancer(void *arg)
{
	struct adv_arg *a = arg;

	for (int i = 0; i < a->n; i++)
		env_clock_advance(1);
	return NULL;
}

static void test_clock(void)
{
	pthread_t th[4];
	struct adv_arg a = { 10000 };
	int64_t real = (int64_t)time(NULL) * 1000, now;

	now = env_now_ms();
	ok(now >= real - 2000 && now <= real + 2000, "the real clock by default");
	env_clock_set(1000);
	is_int(env_now_ms(), 1000, "a fixed clock");
	is_int(env_now_ms(), 1000, "stays put");
	env_clock_advance(500);
	is_int(env_now_ms(), 1500, "advance");
	env_clock_advance(-200);
	is_int(env_now_ms(), 1300, "and back");
	env_clock_set(0);
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, advancer, &a);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	is_int(env_now_ms(), 40000, "concurrent advances all count");
	env_clock_set(-1);
	now = env_now_ms();
	ok(now >= real - 2000 && now <= real + 60000, "ms < 0 restores the real clock");
	env_clock_advance(3600000);
	now = env_now_ms();
	ok(now >= real + 3600000 - 2000 && now <= real + 3600000 + 60000,
	   "advancing the real clock fixes it an hour ahead");
	is_int(env_now_ms(), now, "and it stays fixed");
	env_clock_set(-1);
}


/* --- locks across processes ------------------------------------------ */

/* A child that tries to take path's lock: exits 0 if it got it, 1 if
 * CF_EBUSY, 2 otherwise. */
static int lock_in_child(const char *path)
{
	struct env_file *l;
	pid_t pid;
	int st, rc;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		bail("fork");
	if (pid == 0) {
		rc = env_lock_file(path, &l);
		_exit(rc == CF_OK ? 0 : rc == CF_EBUSY ? 1 : 2);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void test_lock_processes(void)
{
	struct env_file *l;
	int fds[2];
	char c;
	pid_t pid;
	int st;

	is_int(env_lock_file(P("PLOCK"), &l), CF_OK, "lock_file in the parent");
	is_int(lock_in_child(P("PLOCK")), 1,
	       "another process gets CF_EBUSY for it");
	env_close(l);
	is_int(lock_in_child(P("PLOCK")), 0,
	       "and the lock once the parent closed it");

	/* a child holds it; it goes with the child, even killed */
	if (pipe(fds))
		bail("pipe");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		bail("fork");
	if (pid == 0) {
		close(fds[0]);
		if (env_lock_file(P("PLOCK"), &l))
			_exit(2);
		if (write(fds[1], "L", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	close(fds[1]);
	ok(read(fds[0], &c, 1) == 1 && c == 'L', "a child takes the lock");
	close(fds[0]);
	is_int(env_lock_file(P("PLOCK"), &l), CF_EBUSY,
	       "the parent gets CF_EBUSY while the child holds it");
	ok(l == NULL, "and no handle");
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	is_int(env_lock_file(P("PLOCK"), &l), CF_OK,
	       "free once the child is killed");
	env_close(l);
}

/* --- more faults ---------------------------------------------------- */

static void test_more_faults(void)
{
	struct env_file *f;
	char buf[64];
	size_t got = 99;
	int id, ids = 0, full;
	uint64_t h0;

	is_int(env_fault_add(ENV_OP_WRITE, NULL, -1, 1, CF_EIO, 0), CF_EINVAL,
	       "a negative skip: CF_EINVAL");
	is_int(env_fault_add(ENV_OP_WRITE, NULL, 0, 1, 5, 0), CF_EINVAL,
	       "a positive error: CF_EINVAL");
	/* the table fills; ids are distinct and >= 0 */
	full = 0;
	for (int i = 0; i < 100 && !full; i++) {
		id = env_fault_add(ENV_OP_WRITE, "never-matches", 0, 1, CF_EIO, 0);
		if (id == CF_ENOMEM)
			full = 1;
		else if (id == i)
			ids++;
	}
	ok(full && ids >= 8, "the fault table fills (%d faults) with ids "
	   "0, 1, ..., then CF_ENOMEM", ids);
	env_fault_clear();
	is_int(env_fault_add(ENV_OP_WRITE, "never-matches", 0, 1, CF_EIO, 0), 0,
	       "env_fault_clear empties it");
	env_fault_clear();

	h0 = env_fault_hits();
	/* ENOSPC with a short write: half the bytes land */
	env_open(P("mf"), ENV_WRITE_NEW, &f);
	env_fault_add(ENV_OP_WRITE, "/mf", 0, 1, CF_ENOSPC, 1);
	is_int(env_write(f, "abcdefgh", 8), CF_ENOSPC, "short write, then "
	       "CF_ENOSPC");
	is_int(env_size(f), 4, "4 of the 8 bytes written");
	is_int(env_write(f, "XY", 2), CF_OK, "count 1: the next write is whole");
	env_close(f);
	ok(has(P("mf"), "abcdXY"), "the file holds the half and the next write");
	env_fault_clear();

	/* count -1 with short writes: each write half, until cleared */
	env_open(P("mf2"), ENV_WRITE_NEW, &f);
	env_fault_add(ENV_OP_WRITE, "/mf2", 1, -1, CF_EIO, 1);
	ok(env_write(f, "1234", 4) == CF_OK &&
	   env_write(f, "5678", 4) == CF_EIO &&
	   env_write(f, "abcd", 4) == CF_EIO, "skip 1, then every write fails");
	env_fault_clear();
	env_write(f, "!", 1);
	env_close(f);
	ok(has(P("mf2"), "123456ab!"), "each failed write left its half");

	/* a read fault: pread_some reports it and reads nothing */
	env_open(P("mf"), ENV_READ, &f);
	env_fault_add(ENV_OP_READ, "/mf", 0, 1, CF_EIO, 0);
	is_int(env_pread_some(f, buf, sizeof buf, 0, &got), CF_EIO,
	       "pread_some with a read fault: CF_EIO");
	is_int(got, 0, "and 0 bytes");
	is_int(env_pread_some(f, buf, sizeof buf, 0, &got), CF_OK, "then reads");
	is_int(got, 6, "all 6 bytes");
	env_close(f);
	env_fault_clear();

	/* a rename fault inside write_file_atomic */
	put_file(P("ra"), "old");
	env_fault_add(ENV_OP_RENAME, "/ra", 0, 1, CF_EIO, 0);
	is_int(env_write_file_atomic(P("ra"), "new", 3), CF_EIO,
	       "write_file_atomic reports a rename error");
	ok(has(P("ra"), "old") && !env_exists(P("ra.tmp")),
	   "the old content stays, no temporary file");
	env_fault_clear();
	/* ENOSPC on its write */
	env_fault_add(ENV_OP_WRITE, "/ra", 0, 1, CF_ENOSPC, 1);
	is_int(env_write_file_atomic(P("ra"), "newer", 5), CF_ENOSPC,
	       "write_file_atomic reports ENOSPC");
	ok(has(P("ra"), "old") && !env_exists(P("ra.tmp")),
	   "the old content stays, no temporary file");
	env_fault_clear();

	/* ENV_OP_ANY, and the open fault of env_lock_file */
	env_fault_add(ENV_OP_ANY, "/anyop", 0, -1, CF_EIO, 0);
	is_int(env_open(P("anyop"), ENV_WRITE_NEW, &f), CF_EIO, "ENV_OP_ANY "
	       "fails an open");
	is_int(env_lock_file(P("anyop"), &f), CF_EIO, "and env_lock_file");
	put_file(P("src-for-any"), "s");
	is_int(env_rename(P("src-for-any"), P("anyop")), CF_EIO, "and a rename");
	env_fault_clear();
	is_int(env_fault_hits() - h0, 9, "env_fault_hits: 9 more, one per "
	       "failed operation");

	/* a fault armed on another path leaves the hit count alone */
	h0 = env_fault_hits();
	env_fault_add(ENV_OP_ANY, "/elsewhere/", 0, -1, CF_EIO, 0);
	put_file(P("quiet"), "q");
	is_int(env_fault_hits(), h0, "no hit without a failure");
	env_fault_clear();
}

/* --- power loss, the simple cases ----------------------------------- */

static void test_power_loss_simple(void)
{
	struct env_file *f;

	env_mkdir(P("pl2"), 0755);
	env_sync_dir(dir);
	env_track_unsynced(1);

	/* write A, sync, write B */
	is_int(env_open(P("pl2/ab"), ENV_WRITE_NEW, &f), CF_OK, "create");
	env_write(f, "AAAA", 4);
	is_int(env_sync(f), CF_OK, "sync after A");
	env_write(f, "BBBBBB", 6);
	is_int(env_drop_unsynced(), CF_OK, "power loss");
	is_int(fsize(P("pl2/ab")), 4, "the file holds A only");
	ok(has(P("pl2/ab"), "AAAA"), "A's bytes");
	env_close(f);

	/* created and never synced: gone */
	write_str(P("pl2/never"), ENV_WRITE_NEW, "lost", 0);
	ok(env_exists(P("pl2/never")), "a new unsynced file exists");
	env_drop_unsynced();
	ok(!env_exists(P("pl2/never")), "and is gone after the power loss");

	/* a synced file in a directory renamed afterwards */
	env_mkdir(P("pl2/d1"), 0755);
	write_str(P("pl2/d1/f"), ENV_WRITE_NEW, "kept", 1);
	write_str(P("pl2/d1/f"), ENV_APPEND, "+lost", 0);
	is_int(env_rename(P("pl2/d1"), P("pl2/d2")), CF_OK,
	       "rename its directory");
	env_drop_unsynced();
	ok(has(P("pl2/d2/f"), "kept"), "the tracking follows the directory "
	   "rename: the synced bytes only");
	env_track_unsynced(0);
}

/* A read of a mapped file from another thread: its result. */
static void *mapped_read(void *arg)
{
	static int rc;
	char b[100];

	rc = env_pread(arg, b, sizeof b, 4096);
	return &rc;
}

/* env_map: reads copy from the mapping; faults still fire; a page the
 * kernel cannot read (the file truncated under the mapping) fails the
 * read with CF_EIO instead of killing the process, on any thread and
 * more than once; a SIGBUS outside a mapped read still kills. */
static void test_mapped(void)
{
	const size_t n = 3 * 4096 + 100;
	struct env_file *f;
	char *data = malloc(n), b[8192];
	size_t got;
	pthread_t th;
	void *res;
	pid_t pid;
	int st, ok1;

	if (!data)
		bail("out of memory");
	for (size_t i = 0; i < n; i++)
		data[i] = (char)('a' + i * 7 % 26);
	if (env_open(P("mapped"), ENV_WRITE_NEW, &f) ||
	    env_write(f, data, n) || env_close(f))
		bail("write mapped");
	is_int(env_open(P("mapped"), ENV_READ, &f), CF_OK, "open to map");
	is_int(env_map(f), CF_OK, "env_map");
	ok(env_pread(f, b, 100, 4000) == CF_OK && !memcmp(b, data + 4000, 100),
	   "a read across a page boundary copies the file's bytes");
	ok(env_pread_some(f, b, sizeof b, n - 50, &got) == CF_OK && got == 50 &&
	   !memcmp(b, data + n - 50, 50), "a read past the end is short");
	ok(env_pread_some(f, b, 10, n, &got) == CF_OK && got == 0,
	   "a read at the end reads nothing");
	is_int(env_pread(f, b, 100, n - 50), CF_ECORRUPT,
	       "env_pread past the end: CF_ECORRUPT, as unmapped");
	env_fault_add(ENV_OP_READ, "mapped", 0, 1, CF_EIO, 0);
	is_int(env_pread(f, b, 10, 0), CF_EIO, "an injected read fault fires");
	is_int(env_pread(f, b, 10, 0), CF_OK, "... once");
	env_fault_clear();

	if (truncate(P("mapped"), 0))
		bail("truncate");
	is_int(env_pread(f, b, 100, 4096), CF_EIO,
	       "file truncated under the mapping: CF_EIO, no crash");
	is_int(env_pread(f, b, 100, 8192), CF_EIO, "and again");
	ok1 = pthread_create(&th, NULL, mapped_read, f) == 0 &&
	      pthread_join(th, &res) == 0 && *(int *)res == CF_EIO;
	ok(ok1, "and on another thread");
	is_int(env_close(f), CF_OK, "close unmaps");

	/* outside a mapped read, SIGBUS keeps its meaning */
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		bail("fork");
	if (pid == 0) {
		volatile char *m;
		int fd = open(P("bus"), O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || ftruncate(fd, 8192))
			_exit(3);
		m = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED || ftruncate(fd, 0))
			_exit(3);
		(void)m[4096];
		_exit(0);	/* survived: the handler swallowed it */
	}
	if (waitpid(pid, &st, 0) != pid)
		bail("waitpid");
	ok(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0 &&
			       WEXITSTATUS(st) != 3),
	   "a SIGBUS outside a mapped read still ends the process");
	unlink(P("bus"));
	unlink(P("mapped"));
	free(data);
}

/* The pages (of 4 KiB) of path's mappings that this process has mapped:
 * the Rss lines of /proc/self/smaps after path's; -1 if none. */
static long mapped_kib(const char *path)
{
	FILE *fp = fopen("/proc/self/smaps", "r");
	char line[4600], name[4200];
	unsigned long a, b;
	long kib = -1, v;
	int in = 0, k;

	if (!fp)
		return -1;
	while (fgets(line, sizeof line, fp)) {
		/* a mapping's line: addresses, perms, offset, dev, inode
		 * and, for a file, its path */
		if (sscanf(line, "%lx-%lx", &a, &b) == 2) {
			k = sscanf(line, "%*s %*s %*s %*s %*s %4199s", name);
			in = k == 1 && !strcmp(name, path);
		} else if (in && sscanf(line, "Rss: %ld kB", &v) == 1)
			kib = (kib < 0 ? 0 : kib) + v;
	}
	fclose(fp);
	return kib;
}

/* env_map maps at once the pages of the file that the page cache holds
 * (a first read through the mapping would fault), and only those. */
static void test_map_populate(void)
{
	const size_t page = 4096, n = 64 * page;
	unsigned char vec[64];
	struct env_file *f;
	char *data = malloc(n);
	void *m;
	long kib;
	int fd, resident = 0, i;

	if (!data)
		bail("out of memory");
	memset(data, 'p', n);
	/* written a page at a time (a larger write may make folios larger
	 * than a page, which the advice below cannot split) and synced,
	 * then the second half out of the page cache (where the file
	 * system lets it go: not on tmpfs) */
	fd = open(P("populate"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (i = 0; fd >= 0 && i < 64; i++)
		if (write(fd, data, page) != (ssize_t)page)
			bail("write populate");
	if (fd < 0 || fdatasync(fd) ||
	    posix_fadvise(fd, 32 * page, 32 * page, POSIX_FADV_DONTNEED))
		bail("write populate");
	m = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED || mincore(m, n, vec))
		bail("mincore");
	for (i = 32; i < 64; i++)
		resident += vec[i] & 1;
#ifdef MADV_POPULATE_READ
	if (madvise(m, page, MADV_POPULATE_READ) && errno == EINVAL) {
		ok(1, "# SKIP no MADV_POPULATE_READ in this kernel");
		ok(1, "# SKIP");
		munmap(m, n);
		close(fd);
		unlink(P("populate"));
		free(data);
		return;
	}
#endif
	munmap(m, n);
	close(fd);
	is_int(env_open(P("populate"), ENV_READ, &f), CF_OK, "open to map");
	is_int(env_map(f), CF_OK, "env_map");
	kib = mapped_kib(P("populate"));
#ifdef MADV_POPULATE_READ
	ok(kib >= 32 * 4 && kib <= (32 + resident) * 4,
	   "the cached first half is mapped, and of the second half only "
	   "what the cache holds (%ld KiB mapped; %d of its 32 pages "
	   "cached)", kib, resident);
#else
	ok(kib <= 64 * 4, "no populating without MADV_POPULATE_READ");
#endif
	env_close(f);
	unlink(P("populate"));
	free(data);
}

/* Does path hold want (n bytes) and then only zeros, size bytes in all? */
static int holds(const char *path, const char *want, size_t n, size_t size)
{
	char *p;
	size_t len, i;
	int r;

	if (env_read_file(path, &p, &len))
		return 0;
	r = len == size && !memcmp(p, want, n);
	for (i = n; r && i < len; i++)
		r = !p[i];
	free(p);
	return r;
}

/* env_fallocate, env_map_rw, env_map_write: a store is in the file at
 * once; the write faults fire as for env_write (a short one stores
 * half); the power-loss simulation counts stores by where the data ends,
 * not by the preallocated size: a drop zeros what was stored after the
 * last sync and keeps the size; a store the kernel cannot back is
 * CF_EIO, not a SIGBUS. */
static void test_mapped_writes(void)
{
	const char *path = P("mw/log");
	struct env_file *f;
	int rc;

	env_mkdir(P("mw"), 0755);
	env_sync_dir(dir);
	env_track_unsynced(1);
	is_int(env_open(path, ENV_RDWR_NEW, &f), CF_OK,
	       "ENV_RDWR_NEW creates a file to map");
	env_write(f, "HEAD", 4);
	is_int(env_sync(f), CF_OK, "its head written and synced");
	env_sync_dir(P("mw"));
	rc = env_fallocate(f, 65536);
	is_int(rc, CF_OK, "env_fallocate 64 KiB");
	if (rc)
		bail("no fallocate on %s", dir);
	is_int(fsize(path), 65536, "the file is that long");
	ok(holds(path, "HEAD", 4, 65536), "zeros after its head");
	is_int(env_map_rw(f, 1 << 20), CF_OK, "map 1 MiB of it, past its end");
	is_int(env_map_write(f, 4, "AAAA", 4), CF_OK, "store A");
	ok(holds(path, "HEADAAAA", 8, 65536), "a read sees it at once");
	is_int(env_sync(f), CF_OK, "sync");
	is_int(env_map_write(f, 8, "BBBBBB", 6), CF_OK, "store B");
	is_int(env_write(f, "w", 1), CF_OK, "env_write still works");
	ok(holds(path, "HEADwAAABBBBBB", 14, 65536),
	   "at the file offset (5, after HEAD)");
	is_int(env_drop_unsynced(), CF_OK, "power loss");
	ok(holds(path, "HEADwAAA", 8, 65536),
	   "B, stored after the sync, reads as zeros; the size stays");

	env_fault_add(ENV_OP_WRITE, "mw/log", 0, 1, CF_ENOSPC, 1);
	is_int(env_map_write(f, 8, "CCCCCCCC", 8), CF_ENOSPC,
	       "an injected write fault fails a store");
	ok(holds(path, "HEADwAAACCCC", 12, 65536), "a short one stores half");
	env_fault_add(ENV_OP_WRITE, "mw/log", 1, 1, CF_EIO, 0);
	is_int(env_map_write(f, 8, "CCCCCCCC", 8), CF_OK,
	       "the skip of a fault counts stores");
	is_int(env_map_write(f, 16, "DD", 2), CF_EIO, "then it fires");
	ok(holds(path, "HEADwAAACCCCCCCC", 16, 65536), "storing nothing");
	env_fault_clear();
	is_int(env_sync(f), CF_OK, "sync");
	is_int(env_drop_unsynced(), CF_OK, "power loss");
	ok(holds(path, "HEADwAAACCCCCCCC", 16, 65536), "synced stores stay");

	is_int(env_map_release(f, 0, 65536), CF_OK,
	       "env_map_release lets the pages go");
	ok(holds(path, "HEADwAAACCCCCCCC", 16, 65536), "the file keeps them");
	is_int(env_map_write(f, 16, "EE", 2), CF_OK, "a store there after it");
	ok(holds(path, "HEADwAAACCCCCCCCEE", 18, 65536), "lands");
	is_int(env_map_release(f, 0, 2u << 20), CF_EINVAL,
	       "releasing past the mapping: CF_EINVAL");
	is_int(env_map_write(f, (1 << 20) - 2, "xyz", 3), CF_EINVAL,
	       "a store past the mapping: CF_EINVAL");
	is_int(env_truncate(f, 4096), CF_OK, "cut the file to one page");
	is_int(env_map_write(f, 8192, "x", 1), CF_EIO,
	       "a store past the file's end: CF_EIO, no crash");
	is_int(env_map_write(f, 100000, "y", 1), CF_EIO, "and again");
	/* env_fallocate is a fault point of its own (ENV_OP_ALLOC) */
	{
		uint64_t h0 = env_fault_hits();
		env_fault_add(ENV_OP_WRITE, "mw/log", 0, -1, CF_EIO, 0);
		env_fault_add(ENV_OP_ALLOC, "other-file", 0, -1, CF_EIO, 0);
		env_fault_add(ENV_OP_ALLOC, "mw/log", 1, 2, CF_EINVAL, 0);
		is_int(env_fallocate(f, 8192), CF_OK, "a write fault or one "
		       "on another path leaves env_fallocate alone");
		is_int(env_fallocate(f, 12288), CF_EINVAL, "an ALLOC fault "
		       "fails it: CF_EINVAL, \"not supported\"");
		is_int(fsize(path), 8192, "and leaves the size");
		is_int(env_fallocate(f, 12288), CF_EINVAL, "count 2: again");
		is_int(env_fallocate(f, 12288), CF_OK, "then it works");
		is_int(fsize(path), 12288, "and grows the file");
		env_fault_clear();
		env_fault_add(ENV_OP_ANY, "mw/log", 0, 1, CF_ENOSPC, 0);
		is_int(env_fallocate(f, 16384), CF_ENOSPC,
		       "ENV_OP_ANY covers it (CF_ENOSPC)");
		is_int(fsize(path), 12288, "the size stays");
		is_int(env_fault_hits() - h0, 3, "3 hits counted");
		env_fault_clear();
	}
	is_int(env_fallocate(f, 16384), CF_OK, "grow it again");
	is_int(env_map_write(f, 8192, "x", 1), CF_OK, "then the store works");
	is_int(env_sync(f), CF_OK, "sync");
	is_int(env_drop_unsynced(), CF_OK, "power loss");
	is_int(fsize(path), 16384, "the size stays");
	is_int(env_close(f), CF_OK, "close unmaps");
	{
		char *p;
		size_t n;
		ok(env_read_file(path, &p, &n) == CF_OK && n == 16384 &&
		   !memcmp(p, "HEADwAAACCCCCCCCEE", 18) && p[8192] == 'x',
		   "every synced store is in the file");
		free(p);
	}
	env_track_unsynced(0);
	env_remove_tree(P("mw"));
}

int main(void)
{
	dir = tap_tmpdir("env");
	test_files();
	test_paths();
	test_faults();
	test_power_loss();
	test_clock();
	test_lock_processes();
	test_more_faults();
	test_power_loss_simple();
	test_mapped();
	test_map_populate();
	test_mapped_writes();
	tap_rmdir(dir);
	return done_testing();
}
