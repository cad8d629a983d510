/*
 * test-engine-crash: a child process writes (puts, overwrites, deletes)
 * with background flushes and compactions running, and reports each
 * acknowledged write on a pipe; the parent kills it with SIGKILL at a
 * random moment, reopens the store and checks that every acknowledged
 * write is there and nothing is corrupted.  CELLFS_CRASH_KILLS rounds
 * (default 50), and more (at most four times as many, each longer than
 * the last) until the table has split; the seed is printed, CELLFS_SEED
 * replays.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/cellfs.h"
#include "util/log.h"
#include "tests/tap.h"

#define NKEYS 2000
/* acknowledgements a round waits for before its kill: 50 rounds of 40
 * writes of 120 bytes pass the 64 KiB split size several times */
#define MIN_ACKS 40

/* latest acknowledged version per key; 0 never written; negative:
 * deleted at that version */
static int64_t acked[NKEYS];

static void key_of(int k, char *out, size_t *len)
{
	*len = (size_t)snprintf(out, 32, "key%05d", k);
}

static size_t value_of(int k, int64_t ver, char *out)
{
	/* long enough values that flushes and compactions happen */
	int n = snprintf(out, 256, "k%d-v%" PRId64 "-", k, ver);
	while (n < 120) {
		out[n] = (char)('a' + (k + n) % 26);
		n++;
	}
	return (size_t)n;
}

static void child(const char *dir, int fd, uint64_t seed)
{
	struct cf_options o;
	cf_db *db;
	cf_table *t;
	cf_batch *b;
	uint64_t x = seed | 1;
	int64_t ver = 1;
	char key[32], val[256];
	size_t kl, vl;

	cf_options_default(&o);
	o.flush_size = 64 << 10;	/* flush, compact and split often */
	o.split_size = 64 << 10;
	o.sync_mode = CF_SYNC_NONE;	/* a kill loses no written byte */
	if (cf_db_open(dir, &o, &db) || cf_table_open(db, "c", &t))
		_exit(2);
	cf_batch_new(&b);
	/* versions continue past the parent's knowledge */
	if (read(fd, &ver, sizeof ver) != sizeof ver)
		_exit(3);
	for (;;) {
		int k, del;
		int32_t msg[3];

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = (int)(x % NKEYS);
		del = x % 10 == 0;
		key_of(k, key, &kl);
		cf_batch_clear(b);
		if (del) {
			cf_batch_delete(b, CF_DEL_COLUMN, key, kl, "f", 1, "q",
					1, CF_TS_NOW);
		} else {
			vl = value_of(k, ver, val);
			cf_batch_put(b, key, kl, "f", 1, "q", 1, CF_TS_NOW, val,
				     vl);
		}
		/* intent first, so the parent knows the one write that may
		 * be applied without its acknowledgement */
		msg[0] = k;
		msg[1] = (int32_t)ver;
		msg[2] = del | 2;
		if (write(1, msg, sizeof msg) != sizeof msg)
			_exit(5);
		if (cf_table_apply(t, b) != CF_OK)
			_exit(4);
		msg[2] = del;
		if (write(1, msg, sizeof msg) != sizeof msg)
			_exit(5);
		ver++;
	}
}

static void say(void *arg, enum cf_check_kind kind, const char *path,
		const char *what)
{
	(void)arg;
	diag("fsck: %s: %s%s", path, kind == CF_CHECK_DEBRIS ? "debris: " :
	     "", what);
}

int main(void)
{
	cf_table *t0;
	const char *s = getenv("CELLFS_SEED"), *kn = getenv("CELLFS_CRASH_KILLS");
	uint64_t seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
	int kills = kn ? atoi(kn) : 50, bad = 0, round;
	const char *dir = tap_tmpdir("crash");
	struct cf_family f;
	cf_db *db;
	int64_t ver = 1, total = 0;

	diag("seed %" PRIu64 ", %d kills", seed, kills);
	srand((unsigned)seed);
	cf_family_default(&f, "f");
	if (cf_db_open(dir, NULL, &db) || cf_table_create(db, "c", &f, 1))
		bail("setup");
	cf_db_close(db);

	/* at least `kills` rounds, then on until the table has split (a
	 * busy machine may give the child's flushes and splits little CPU
	 * before its kills), at most 4 x kills */
	size_t nr = 0;
	for (round = 0; round < 4 * kills && !bad &&
	     (round < kills || nr < 2); round++) {
		int up[2], down[2], status, pk = -1;
		int64_t pv = 0;
		pid_t pid;
		long delay_ms = 20 + rand() % 150;
		struct timespec start, now;

		/* past `kills` rounds with no split yet (ASan at load 10
		 * left 200 rounds unsplit), each round runs longer, so the
		 * child's flush and split get done before some kill */
		if (round >= kills && nr < 2)
			delay_ms *= 1 + (round - kills) / 8;

		if (pipe(up) || pipe(down))
			bail("pipe");
		pid = fork();
		if (pid < 0)
			bail("fork");
		if (pid == 0) {
			close(up[0]);
			close(down[1]);
			dup2(up[1], 1);
			child(dir, down[0], seed + (uint64_t)round);
		}
		close(up[1]);
		close(down[0]);
		if (write(down[1], &ver, sizeof ver) != sizeof ver)
			bail("write to child");
		/* read acknowledgements until the deadline and at least
		 * MIN_ACKS of them (on a busy machine the child may get
		 * little CPU before the deadline; the totals checked below
		 * must not depend on it), then kill */
		clock_gettime(CLOCK_MONOTONIC, &start);
		for (int64_t got = 0;; ) {
			int32_t msg[3];
			ssize_t n;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((now.tv_sec - start.tv_sec) * 1000 +
			    (now.tv_nsec - start.tv_nsec) / 1000000 >= delay_ms
			    && got >= MIN_ACKS)
				break;
			n = read(up[0], msg, sizeof msg);
			if (n != sizeof msg)
				break;
			if (msg[2] & 2) {
				pk = msg[0];
				pv = msg[2] & 1 ? -msg[1] : msg[1];
				continue;
			}
			pk = -1;
			acked[msg[0]] = msg[2] ? -msg[1] : msg[1];
			if (msg[1] >= ver)
				ver = msg[1] + 1;
			total++;
			got++;
		}
		kill(pid, SIGKILL);
		/* a write acknowledged just before the kill may still sit
		 * in the pipe: drain it */
		for (;;) {
			int32_t msg[3];
			if (read(up[0], msg, sizeof msg) != sizeof msg)
				break;
			if (msg[2] & 2) {
				pk = msg[0];
				pv = msg[2] & 1 ? -msg[1] : msg[1];
				continue;
			}
			pk = -1;
			acked[msg[0]] = msg[2] ? -msg[1] : msg[1];
			if (msg[1] >= ver)
				ver = msg[1] + 1;
			total++;
		}
		waitpid(pid, &status, 0);
		close(up[0]);
		close(down[1]);
		if (!WIFSIGNALED(status)) {
			diag("child exited with %d before the kill",
			     WEXITSTATUS(status));
			bad = 1;
			break;
		}
		ver += 1000;	/* beyond anything the child may have sent */

		/* reopen and check every key */
		struct cf_options o;
		cf_table *t;
		cf_options_default(&o);
		o.background = 0;
		int rc = cf_db_open(dir, &o, &db);
		if (rc) {
			diag("round %d: reopen: %s", round, cf_strerror(rc));
			bad = 1;
			break;
		}
		cf_table_open(db, "c", &t);
		for (int k = 0; k < NKEYS && !bad; k++) {
			char key[32], want[256];
			size_t kl, wl;
			cf_row *r;
			key_of(k, key, &kl);
			rc = cf_table_get(t, key, kl, NULL, &r);
			if (rc) {
				diag("round %d key %d: %s", round, k,
				     cf_strerror(rc));
				bad = 1;
				break;
			}
			const struct cf_cell *c = cf_row_cell(r, 0);
			/* the one write in flight at the kill may or may
			 * not have been applied */
			if (k == pk) {
				int64_t got = 0;
				if ((pv < 0 && !c) ||
				    (pv > 0 && c &&
				     sscanf((const char *)c->val,
					    "k%*d-v%" SCNd64, &got) == 1 &&
				     got == pv))
					acked[k] = pv;
			}
			if (acked[k] > 0) {
				wl = value_of(k, acked[k], want);
				if (!c || c->vlen != wl ||
				    memcmp(c->val, want, wl)) {
					diag("round %d key %d: acknowledged "
					     "version %" PRId64 " missing: %s",
					     round, k, acked[k],
					     c ? "other value" : "no value");
					bad = 1;
				}
			} else if (acked[k] < 0 && cf_row_count(r) != 0) {
				diag("round %d key %d: deleted but visible",
				     round, k);
				bad = 1;
			}
			cf_row_free(r);
		}
		{
			struct cf_region_info *ri;
			if (cf_table_regions(t, &ri, &nr) == CF_OK)
				cf_regions_free(ri, nr);
			else
				nr = 0;
		}
		cf_table_close(t);
		cf_db_close(db);
		/* and the directory is whole: no gap, overlap, lost file */
		{
			unsigned problems = 0;
			rc = cf_check(dir, 0, say, NULL, &problems, NULL);
			if (rc || problems) {
				diag("round %d: cellfs-fsck: %s, %u problems",
				     round, cf_strerror(rc), problems);
				bad = 1;
			}
		}
	}
	{
		struct cf_region_info *ri;
		cf_db_open(dir, NULL, &db);
		cf_table_open(db, "c", &t0);
		nr = 0;
		cf_table_regions(t0, &ri, &nr);
		cf_regions_free(ri, nr);
		cf_table_close(t0);
		cf_db_close(db);
		ok(nr > 1, "the table split while the writer was killed (%zu "
		   "regions)", nr);
	}
	ok(!bad, "%d kills, %" PRId64 " acknowledged writes, all there", round,
	   total);
	ok(total > 1000, "the child wrote enough (%" PRId64 ")", total);
	tap_rmdir(dir);
	cf_log_release();
	return done_testing();
}
