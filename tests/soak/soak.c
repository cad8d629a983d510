/*
 * soak: kill -9 and power-cut soak of the daemon, in the manner of
 * RocksDB's db_crashtest: writes through the mount while splits, flushes
 * and compactions run, kills the daemon with SIGKILL at a random moment,
 * runs cellfs-fsck, remounts, and checks every acknowledged write against
 * an expected-state oracle.  Not a timed test: it runs until the kills
 * are done.  docs/testing.md, "Soak".
 *
 *   soak [-k KILLS] [-s batch|always|none] [-p] [-w WRITERS] [-n KEYS]
 *        [-t MAX_MS] [-S SEED] [-b BUILDDIR] [-v] [-x]
 *
 * Writers (processes, disjoint keys) do puts (whole cell rewrites),
 * appends (O_APPEND), deletes and .batch writes of several rows; one more
 * process writes split, split KEY, flush and compact to T/.ctl.  Each
 * writer sends an intent before and an acknowledgement after each
 * operation (close(2) returned 0) on a pipe.  After the kill the state
 * read through the new mount must be, for each writer, the state after
 * exactly c of its operations in order (the log is one sequence; every
 * operation is atomic): c = acknowledged or acknowledged + 1 (the one in
 * flight) after a kill.  A state that is no such prefix is corrupted;
 * c < acknowledged is lost writes.
 *
 * -p: a power cut instead of a kill: the data directory lives on an ext4
 * image loop-mounted at WORK/img.mnt; at the cut the daemon is killed and
 * the image file copied at once, so only what reached the device (what
 * was synced, and whatever writeback happened to write) is kept; the
 * copy is mounted as the new data directory.  Root only.  With sync=
 * always every acknowledged write must survive, as a prefix; with batch
 * or none regions flushed since the last sync keep newer states than
 * the others, so each key on its own must show a state it had (never
 * one it never had); "lost" then counts keys behind their acknowledged
 * state (not a failure).
 *
 * -t: the kill comes 50 + rand() % MAX_MS ms after the writers start
 * (default 1500).  -x (self-test): after each remount a wrong value is
 * written where an acknowledged one must be; the run must then fail.
 *
 * Exit: 0 when nothing was corrupted, nothing lost that the sync mode
 * promises, and cellfs-fsck found no damage; 1 otherwise; 2 on a setup
 * error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_WRITERS 8
#define BATCH_MAX 4

enum { OP_PUT, OP_APPEND, OP_DELETE, OP_BATCH };
enum { PH_INTENT, PH_ACK, PH_FAIL };

struct msg {			/* one pipe write, atomic (< PIPE_BUF) */
	uint8_t writer, kind, phase, n;
	uint32_t key, ver;
	int32_t err;
};

struct op {
	uint8_t kind, n;
	uint32_t key, ver;
	int acked;
};

struct kstate {			/* one key: its q cell and its a cell */
	uint32_t q;		/* version of cf:q, 0 absent */
	uint32_t a;		/* appended pieces in cf:a, 0 absent */
};

static const char *build = "build/default";
static char work[256], mnt[512], data[600], img[512], imgmnt[512];
static int kills = 20, nwriters = 2, nkeys = 64, power, verbose, selftest;
static int max_ms = 1500;
static const char *sync_mode = "batch";
static pid_t daemon_pid;
static struct kstate *state;	/* nwriters * nkeys */
static uint32_t next_ver[MAX_WRITERS];
static uint64_t checked, lost, corrupted, fsck_damage, writer_errors,
		ops_done, hung_kills;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("soak: ", stdout);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						      noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("soak: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (daemon_pid > 0)
		kill(daemon_pid, SIGKILL);
	exit(2);
}

static int run(const char *cmd)
{
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int is_mounted(void)
{
	struct statfs s;
	return statfs(mnt, &s) == 0 && s.f_type == 0x65735546; /* FUSE */
}

/* --- values --------------------------------------------------------- */

static int key_of(int w, int i) { return w * 100000 + i; }

/* The value of version ver of key k's q cell. */
static size_t put_value(int k, uint32_t ver, char *buf, size_t size)
{
	int n = snprintf(buf, size, "k%d.v%u.", k, ver);
	size_t pad = (ver * 37u + (unsigned)k) % 700;
	for (size_t i = 0; i < pad && (size_t)n + 1 < size; i++)
		buf[n++] = (char)('a' + (ver + i) % 26);
	buf[n] = 0;
	return (size_t)n;
}

static size_t append_piece(int k, uint32_t i, char *buf, size_t size)
{
	return (size_t)snprintf(buf, size, "k%d.a%u;", k, i);
}

/* --- the daemon ------------------------------------------------------- */

static void mount_daemon(void)
{
	char opts[256], log[512];
	pid_t pid;

	snprintf(opts, sizeof opts, "sync=%s,sync_ms=200,flush_size=131072,"
		 "split_size=524288", sync_mode);
	snprintf(log, sizeof log, "%s/cellfs.err", work);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		char bin[1024];
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd >= 0) {
			dup2(fd, 2);
			dup2(fd, 1);
		}
		snprintf(bin, sizeof bin, "%s/cellfs", build);
		execl(bin, "cellfs", "-f", "-o", opts, data, mnt, (char *)NULL);
		_exit(127);
	}
	daemon_pid = pid;
	/* replay and the sweep take seconds on a loaded machine */
	for (int i = 0; !is_mounted(); i++) {
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			daemon_pid = 0;
			die("cellfs exited before it mounted (see %s)", log);
		}
		if (i > 3000)
			die("cellfs did not mount in 60 s (see %s)", log);
		usleep(20000);
	}
}

/*
 * Waits for the killed daemon.  A daemon thread sending an entry
 * invalidation (the kernel takes the directory's lock for it) while a
 * request on that directory holds the lock and waits for an answer no
 * thread is left to give never finishes: the process cannot exit until
 * the connection is aborted.  After 5 s umount -f aborts it (counted).
 */
static void reap_daemon(void)
{
	char cmd[4096];

	for (int i = 0; waitpid(daemon_pid, NULL, WNOHANG) == 0; i++) {
		if (i == 250) {
			hung_kills++;
			say("the killed daemon is stuck (an entry "
			    "invalidation waiting on a request it will not "
			    "answer); aborting the connection");
			snprintf(cmd, sizeof cmd, "umount -f '%s' "
				 "2>/dev/null", mnt);
			run(cmd);
		}
		usleep(20000);
	}
	daemon_pid = 0;
}

static void kill_daemon(void)
{
	char cmd[4096];

	kill(daemon_pid, SIGKILL);
	reap_daemon();
	snprintf(cmd, sizeof cmd, "fusermount3 -uz '%s' 2>/dev/null", mnt);
	run(cmd);
}

/* The power cut: what the device holds now becomes the data directory. */
static void power_cut(void)
{
	char cmd[4096];

	kill(daemon_pid, SIGKILL);
	snprintf(cmd, sizeof cmd, "cp --sparse=always '%s' '%s.cut'", img, img);
	if (run(cmd))
		die("copying the image failed");
	reap_daemon();
	snprintf(cmd, sizeof cmd, "fusermount3 -uz '%s' 2>/dev/null; "
		 "umount '%s' && mv '%s.cut' '%s' && "
		 "mount -o loop '%s' '%s'", mnt, imgmnt, img, img, img,
		 imgmnt);
	if (run(cmd))
		die("remounting the image failed");
}

static void fsck(void)
{
	char cmd[4096];
	int rc;

	snprintf(cmd, sizeof cmd, "'%s/cellfs-fsck' '%s' >'%s/fsck.out' 2>&1",
		 build, data, work);
	rc = run(cmd);
	if (rc) {
		snprintf(cmd, sizeof cmd, "cat '%s/fsck.out'", work);
		run(cmd);
		say("cellfs-fsck exited %d: damage after the crash", rc);
		fsck_damage++;
	}
}

/* --- the processes that write ----------------------------------------- */

static void send_msg(int fd, const struct msg *m)
{
	if (write(fd, m, sizeof *m) != (ssize_t)sizeof *m)
		_exit(3);
}

static int write_file(const char *path, int flags, const char *p, size_t n)
{
	int fd = open(path, flags, 0644);
	int rc = 0;

	if (fd < 0)
		return errno;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			rc = errno;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
	if (close(fd) && !rc)
		rc = errno;
	return rc;
}

static int make_row(int k)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/t/r%d", mnt, k);
	return mkdir(path, 0755) && errno != EEXIST ? errno : 0;
}

static void writer_main(int w, int fd, unsigned seed)
{
	struct kstate *st = state + (size_t)w * nkeys;
	uint32_t ver = next_ver[w];

	srand(seed);
	for (;;) {
		struct msg m = { .writer = (uint8_t)w, .phase = PH_INTENT };
		char path[1024], val[1024], batch[8192];
		int i = rand() % nkeys, k = key_of(w, i), r = rand() % 100;
		int err = 0;
		size_t n;

		m.key = (uint32_t)i;
		m.ver = ++ver;
		if (r < 45)
			m.kind = OP_PUT;
		else if (r < 70)
			m.kind = OP_APPEND;
		else if (r < 82)
			m.kind = OP_DELETE;
		else
			m.kind = OP_BATCH;
		if (m.kind == OP_BATCH) {
			m.n = (uint8_t)(2 + rand() % (BATCH_MAX - 1));
			if (i + m.n > nkeys)
				m.key = (uint32_t)(i = nkeys - m.n);
		}
		send_msg(fd, &m);
		switch (m.kind) {
		case OP_PUT:
			n = put_value(k, m.ver, val, sizeof val);
			snprintf(path, sizeof path, "%s/t/r%d/cf:q", mnt, k);
			if (!(err = make_row(k)))
				err = write_file(path, O_WRONLY | O_CREAT |
						 O_TRUNC, val, n);
			if (!err)
				st[i].q = m.ver;
			break;
		case OP_APPEND:
			n = append_piece(k, st[i].a + 1, val, sizeof val);
			snprintf(path, sizeof path, "%s/t/r%d/cf:a", mnt, k);
			if (!(err = make_row(k)))
				err = write_file(path, O_WRONLY | O_CREAT |
						 O_APPEND, val, n);
			if (!err)
				st[i].a++;
			break;
		case OP_DELETE:
			snprintf(path, sizeof path, "%s/t/r%d/cf:q", mnt, k);
			err = unlink(path) && errno != ENOENT ? errno : 0;
			if (!err)
				st[i].q = 0;
			break;
		case OP_BATCH: {
			size_t len = 0;
			for (int j = 0; j < m.n; j++) {
				int kk = key_of(w, i + j);
				put_value(kk, m.ver, val, sizeof val);
				len += (size_t)snprintf(batch + len,
					sizeof batch - len,
					"put r%d cf:q %s\n", kk, val);
			}
			snprintf(path, sizeof path, "%s/t/.batch", mnt);
			err = write_file(path, O_WRONLY | O_APPEND, batch, len);
			if (!err)
				for (int j = 0; j < m.n; j++)
					st[i + j].q = m.ver;
			break;
		}
		}
		m.phase = err ? PH_FAIL : PH_ACK;
		m.err = err;
		send_msg(fd, &m);
		if (err)
			_exit(0);
	}
}

static void admin_main(unsigned seed)
{
	char path[1024];
	static const char *words[] = { "split", "flush", "compact", "split",
				       "major_compact" };

	srand(seed);
	snprintf(path, sizeof path, "%s/t/.ctl", mnt);
	for (;;) {
		char w[64];
		int r = rand() % 6;
		usleep((useconds_t)(20000 + rand() % 150000));
		if (r == 5)
			snprintf(w, sizeof w, "split r%d\n",
				 key_of(rand() % nwriters, rand() % nkeys));
		else
			snprintf(w, sizeof w, "%s\n", words[r]);
		if (write_file(path, O_WRONLY, w, strlen(w)) == ENOTCONN)
			_exit(0);
		if (!is_mounted())
			_exit(0);
	}
}

/* --- checking ------------------------------------------------------- */

/* What the mount shows for key k now. */
struct seen {
	int q_absent, a_absent;
	char *q, *a;
	size_t qlen, alen;
};

static char *read_cell(const char *path, size_t *len, int *absent)
{
	int fd = open(path, O_RDONLY);
	char *buf = NULL;
	size_t cap = 0, n = 0;

	*absent = 0;
	*len = 0;
	if (fd < 0) {
		if (errno == ENOENT) {
			*absent = 1;
			return NULL;
		}
		die("open %s: %s", path, strerror(errno));
	}
	for (;;) {
		ssize_t r;
		if (n + 4096 > cap) {
			cap = cap * 2 + 8192;
			buf = realloc(buf, cap);
			if (!buf)
				die("out of memory");
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0)
			die("read %s: %s", path, strerror(errno));
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*len = n;
	return buf;
}

static int q_matches(int k, uint32_t ver, const struct seen *s)
{
	char v[1024];
	size_t n;

	if (!ver)
		return s->q_absent;
	if (s->q_absent)
		return 0;
	n = put_value(k, ver, v, sizeof v);
	return n == s->qlen && !memcmp(v, s->q, n);
}

static int a_matches(int k, uint32_t count, const struct seen *s)
{
	char piece[64];
	size_t off = 0;

	if (!count)
		return s->a_absent;
	if (s->a_absent)
		return 0;
	for (uint32_t i = 1; i <= count; i++) {
		size_t n = append_piece(k, i, piece, sizeof piece);
		if (off + n > s->alen || memcmp(s->a + off, piece, n))
			return 0;
		off += n;
	}
	return off == s->alen;
}

/* Applies op to st (a writer's keys), as the writer did. */
static void apply(struct kstate *st, const struct op *o)
{
	switch (o->kind) {
	case OP_PUT: st[o->key].q = o->ver; break;
	case OP_APPEND: st[o->key].a++; break;
	case OP_DELETE: st[o->key].q = 0; break;
	case OP_BATCH:
		for (int j = 0; j < o->n; j++)
			st[o->key + j].q = o->ver;
		break;
	}
}

static int key_ok(int w, int i, const struct kstate *ks, const struct seen *s)
{
	int k = key_of(w, i);
	return q_matches(k, ks->q, s) && a_matches(k, ks->a, s);
}

/*
 * Finds the c for writer w: the state after its first c operations of
 * this round equals what the mount shows.  Returns c, or -1.  The
 * candidates are tried from the most operations down, each by replaying
 * onto the state at the start of the round, counting keys that differ.
 */
static long find_prefix(int w, const struct op *ops, size_t nops,
			const struct seen *seen, size_t min)
{
	struct kstate *st = malloc(sizeof *st * (size_t)nkeys);
	int *bad = malloc(sizeof *bad * (size_t)nkeys);
	long found = -1;
	int nbad = 0;

	if (!st || !bad)
		die("out of memory");
	memcpy(st, state + (size_t)w * nkeys, sizeof *st * (size_t)nkeys);
	for (int i = 0; i < nkeys; i++) {
		bad[i] = !key_ok(w, i, &st[i], &seen[i]);
		nbad += bad[i];
	}
	for (size_t c = 0;; c++) {
		if (!nbad && c >= min)
			found = (long)c;	/* the largest wins */
		if (c == nops)
			break;
		apply(st, &ops[c]);
		for (int j = 0; j < (ops[c].kind == OP_BATCH ? ops[c].n : 1);
		     j++) {
			int i = (int)ops[c].key + j;
			int b = !key_ok(w, i, &st[i], &seen[i]);
			nbad += b - bad[i];
			bad[i] = b;
		}
	}
	if (found >= 0) {
		/* adopt that state for the next round */
		memcpy(st, state + (size_t)w * nkeys, sizeof *st *
		       (size_t)nkeys);
		for (long c = 0; c < found; c++)
			apply(st, &ops[c]);
		memcpy(state + (size_t)w * nkeys, st, sizeof *st *
		       (size_t)nkeys);
	}
	free(st);
	free(bad);
	return found;
}

/*
 * Without a sync promise (a power cut with sync=batch or none) regions
 * flush independently and the unsynced log tail is lost, so the writers'
 * operations survive up to a different point per region: each key must
 * then show a state it had after some prefix of the operations (never
 * garbage, never a state it never had).  Returns the keys that show none
 * (corrupted); *behind gets those showing an older state than the
 * acknowledged one.  The state found is adopted.
 */
static int check_keys(int w, const struct op *ops, size_t nops,
		      size_t nacked, const struct seen *seen, int *behind)
{
	struct kstate *st = malloc(sizeof *st * (size_t)nkeys);
	struct kstate *best = malloc(sizeof *best * (size_t)nkeys);
	long *at = malloc(sizeof *at * (size_t)nkeys);
	int bad = 0;

	if (!st || !best || !at)
		die("out of memory");
	memcpy(st, state + (size_t)w * nkeys, sizeof *st * (size_t)nkeys);
	for (int i = 0; i < nkeys; i++) {
		at[i] = key_ok(w, i, &st[i], &seen[i]) ? 0 : -1;
		best[i] = st[i];
	}
	for (size_t c = 0; c < nops; c++) {
		apply(st, &ops[c]);
		for (int j = 0; j < (ops[c].kind == OP_BATCH ? ops[c].n : 1);
		     j++) {
			int i = (int)ops[c].key + j;
			if (key_ok(w, i, &st[i], &seen[i])) {
				at[i] = (long)c + 1;
				best[i] = st[i];
			}
		}
	}
	*behind = 0;
	for (int i = 0; i < nkeys; i++) {
		if (at[i] < 0) {
			bad++;
			say("writer %d key r%d: a state it never had", w,
			    key_of(w, i));
			continue;
		}
		/* behind: its state changed after the point found, by an
		 * acknowledged operation */
		for (size_t c = (size_t)at[i]; c < nacked; c++) {
			const struct op *o = &ops[c];
			if (i >= (int)o->key && i < (int)o->key +
			    (o->kind == OP_BATCH ? o->n : 1)) {
				(*behind)++;
				break;
			}
		}
		state[(size_t)w * nkeys + i] = best[i];
	}
	free(st);
	free(best);
	free(at);
	return bad;
}

static void check_round(int round, struct op **ops, size_t *nops,
			size_t *nacked, int strict)
{
	struct seen *seen = calloc((size_t)nkeys, sizeof *seen);

	if (!seen)
		die("out of memory");
	for (int w = 0; w < nwriters; w++) {
		long c;
		for (int i = 0; i < nkeys; i++) {
			char path[1024];
			int k = key_of(w, i);
			snprintf(path, sizeof path, "%s/t/r%d/cf:q", mnt, k);
			seen[i].q = read_cell(path, &seen[i].qlen,
					      &seen[i].q_absent);
			snprintf(path, sizeof path, "%s/t/r%d/cf:a", mnt, k);
			seen[i].a = read_cell(path, &seen[i].alen,
					      &seen[i].a_absent);
		}
		if (!strict) {
			int behind = 0;
			int bad = check_keys(w, ops[w], nops[w], nacked[w],
					     seen, &behind);
			corrupted += (uint64_t)bad;
			lost += (uint64_t)behind;
			if (bad || (verbose && behind))
				say("round %d: writer %d: %d keys corrupted, "
				    "%d behind their acknowledged state", round,
				    w, bad, behind);
			c = 0;
		} else {
			c = find_prefix(w, ops[w], nops[w], seen, nacked[w]);
		}
		if (!strict) {
			/* counted above */
		} else if (c < 0) {
			/* say which keys disagree with the acked state */
			struct kstate *st = malloc(sizeof *st *
						   (size_t)nkeys);
			memcpy(st, state + (size_t)w * nkeys, sizeof *st *
			       (size_t)nkeys);
			for (size_t j = 0; j < nacked[w]; j++)
				apply(st, &ops[w][j]);
			for (int i = 0; i < nkeys; i++)
				if (!key_ok(w, i, &st[i], &seen[i])) {
					say("round %d: writer %d key r%d: "
					    "expected q v%u a%u, found q %.*s "
					    "a %.*s", round, w, key_of(w, i),
					    st[i].q, st[i].a,
					    seen[i].q_absent ? 6 :
					    (int)(seen[i].qlen > 40 ? 40 :
						  seen[i].qlen),
					    seen[i].q_absent ? "absent" :
					    seen[i].q,
					    seen[i].a_absent ? 6 :
					    (int)(seen[i].alen > 60 ? 60 :
						  seen[i].alen),
					    seen[i].a_absent ? "absent" :
					    seen[i].a);
					corrupted++;
				}
			/* go on from the acknowledged state */
			for (int i = 0; i < nkeys; i++)
				state[(size_t)w * nkeys + i] = st[i];
			free(st);
			say("round %d: writer %d: no prefix of its %zu "
			    "operations (%zu acknowledged) gives what the "
			    "mount shows", round, w, nops[w], nacked[w]);
			if (!corrupted)
				corrupted++;
		} else if ((size_t)c < nacked[w]) {
			lost += nacked[w] - (size_t)c;
			if (verbose)
				say("round %d: writer %d: %zu of %zu "
				    "acknowledged operations lost", round, w,
				    nacked[w] - (size_t)c, nacked[w]);
		}
		checked += nacked[w];
		for (int i = 0; i < nkeys; i++) {
			free(seen[i].q);
			free(seen[i].a);
		}
	}
	free(seen);
}

/* --- one round ------------------------------------------------------ */

static void round_run(int round)
{
	int pfd[2];
	pid_t wpid[MAX_WRITERS], apid;
	struct op *ops[MAX_WRITERS] = { 0 };
	size_t nops[MAX_WRITERS] = { 0 }, cap[MAX_WRITERS] = { 0 };
	size_t nacked[MAX_WRITERS] = { 0 };
	uint64_t until, t0;
	int open_writers = nwriters, killed = 0;

	if (pipe(pfd))
		die("pipe: %s", strerror(errno));
	for (int w = 0; w < nwriters; w++) {
		wpid[w] = fork();
		if (wpid[w] == 0) {
			close(pfd[0]);
			writer_main(w, pfd[1], (unsigned)rand());
		}
	}
	apid = fork();
	if (apid == 0) {
		close(pfd[0]);
		close(pfd[1]);
		admin_main((unsigned)rand());
	}
	close(pfd[1]);
	t0 = now_ms();
	until = t0 + 50 + (uint64_t)(rand() % max_ms);
	while (open_writers) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		int64_t left = (int64_t)(until - now_ms());
		struct msg m;

		if (!killed && left <= 0) {
			if (power)
				power_cut();
			else
				kill_daemon();
			killed = 1;
			continue;
		}
		if (poll(&p, 1, killed ? 1000 : (int)left) <= 0)
			continue;
		if (read(pfd[0], &m, sizeof m) != (ssize_t)sizeof m)
			break;	/* every writer has exited */
		if (m.writer >= nwriters)
			die("bad message");
		if (m.phase == PH_INTENT) {
			struct op *o;
			if (nops[m.writer] == cap[m.writer]) {
				cap[m.writer] = cap[m.writer] * 2 + 1024;
				ops[m.writer] = realloc(ops[m.writer],
					cap[m.writer] * sizeof *o);
				if (!ops[m.writer])
					die("out of memory");
			}
			o = &ops[m.writer][nops[m.writer]++];
			o->kind = m.kind;
			o->n = m.n;
			o->key = m.key;
			o->ver = m.ver;
			o->acked = 0;
			next_ver[m.writer] = m.ver;
		} else if (m.phase == PH_ACK) {
			ops[m.writer][nops[m.writer] - 1].acked = 1;
			nacked[m.writer] = nops[m.writer];
			ops_done++;
		} else {
			if (!killed) {
				writer_errors++;
				say("round %d: writer %d: %s before the kill",
				    round, m.writer, strerror(m.err));
			}
			open_writers--;
		}
	}
	close(pfd[0]);
	if (!killed) {
		if (power)
			power_cut();
		else
			kill_daemon();
	}
	for (int w = 0; w < nwriters; w++)
		waitpid(wpid[w], NULL, 0);
	kill(apid, SIGKILL);
	waitpid(apid, NULL, 0);
	if (verbose)
		say("round %d: writers done at %" PRIu64 " ms", round,
		    now_ms() - t0);
	fsck();
	if (verbose)
		say("round %d: fsck done at %" PRIu64 " ms", round,
		    now_ms() - t0);
	mount_daemon();
	if (verbose)
		say("round %d: mounted at %" PRIu64 " ms", round,
		    now_ms() - t0);
	if (selftest) {
		/* a wrong value where an acknowledged one must be: the
		 * check has to see it */
		char path[1024];
		snprintf(path, sizeof path, "%s/t/r%d", mnt, key_of(0, 0));
		mkdir(path, 0755);
		snprintf(path, sizeof path, "%s/t/r%d/cf:q", mnt, key_of(0, 0));
		write_file(path, O_WRONLY | O_CREAT | O_TRUNC, "wrong", 5);
	}
	check_round(round, ops, nops, nacked,
		    !power || !strcmp(sync_mode, "always"));
	for (int w = 0; w < nwriters; w++)
		free(ops[w]);
}

static void cleanup(void)
{
	char cmd[4096];

	if (daemon_pid > 0) {
		kill(daemon_pid, SIGKILL);
		reap_daemon();
	}
	snprintf(cmd, sizeof cmd, "fusermount3 -uz '%s' 2>/dev/null", mnt);
	run(cmd);
	if (power) {
		snprintf(cmd, sizeof cmd, "umount '%s' 2>/dev/null", imgmnt);
		run(cmd);
	}
	if (!getenv("SOAK_KEEP")) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
		run(cmd);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: soak [-k KILLS] [-s batch|always|none] [-p] "
		"[-w WRITERS] [-n KEYS] [-t MAX_MS] [-S SEED] [-b BUILDDIR] "
		"[-v] [-x]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	const char *t = getenv("TMPDIR");
	uint64_t start = now_ms();
	int opt, ok;

	if (getenv("CELLFS_BUILD"))
		build = getenv("CELLFS_BUILD");
	while ((opt = getopt(argc, argv, "k:s:pw:n:t:S:b:vx")) != -1) {
		switch (opt) {
		case 'k': kills = atoi(optarg); break;
		case 's': sync_mode = optarg; break;
		case 'p': power = 1; break;
		case 'w': nwriters = atoi(optarg); break;
		case 'n': nkeys = atoi(optarg); break;
		case 't': max_ms = atoi(optarg); break;
		case 'S': seed = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'b': build = optarg; break;
		case 'v': verbose = 1; break;
		case 'x': selftest = 1; break;
		default: usage();
		}
	}
	if (kills < 1 || nwriters < 1 || nwriters > MAX_WRITERS ||
	    nkeys < BATCH_MAX || max_ms < 1 ||
	    (strcmp(sync_mode, "batch") && strcmp(sync_mode, "always") &&
	     strcmp(sync_mode, "none")))
		usage();
	srand(seed);
	signal(SIGPIPE, SIG_IGN);
	snprintf(work, sizeof work, "%s/cellfs-soak-XXXXXX", t ? t : "/tmp");
	if (!mkdtemp(work))
		die("mkdtemp: %s", strerror(errno));
	atexit(cleanup);
	snprintf(mnt, sizeof mnt, "%s/mnt", work);
	mkdir(mnt, 0755);
	if (power) {
		char cmd[4096];
		snprintf(img, sizeof img, "%s/img", work);
		snprintf(imgmnt, sizeof imgmnt, "%s/img.mnt", work);
		mkdir(imgmnt, 0755);
		snprintf(cmd, sizeof cmd, "truncate -s 256M '%s' && "
			 "mkfs.ext4 -q -F '%s' && mount -o loop '%s' '%s'",
			 img, img, img, imgmnt);
		if (run(cmd))
			die("cannot make and mount an ext4 image (root, "
			    "loop devices)");
		snprintf(data, sizeof data, "%s/data", imgmnt);
	} else {
		snprintf(data, sizeof data, "%s/data", work);
	}
	state = calloc((size_t)nwriters * (size_t)nkeys, sizeof *state);
	if (!state)
		die("out of memory");
	say("seed %u, %d %s, sync=%s, %d writers x %d keys, %s", seed, kills,
	    power ? "power cuts" : "kills", sync_mode, nwriters, nkeys, work);
	mount_daemon();
	{
		char path[1024];
		snprintf(path, sizeof path, "%s/t", mnt);
		if (mkdir(path, 0755))
			die("mkdir %s: %s", path, strerror(errno));
	}
	for (int r = 1; r <= kills; r++) {
		round_run(r);
		if (verbose || r % 10 == 0 || r == kills)
			say("%d/%d: %" PRIu64 " acknowledged writes checked, "
			    "%" PRIu64 " lost, %" PRIu64 " corrupted", r,
			    kills, checked, lost, corrupted);
	}
	{
		char cmd[4096];
		snprintf(cmd, sizeof cmd, "fusermount3 -u '%s'", mnt);
		run(cmd);
		waitpid(daemon_pid, NULL, 0);
		daemon_pid = 0;
		fsck();
	}
	ok = !corrupted && !fsck_damage &&
	     (!lost || (power && strcmp(sync_mode, "always")));
	say("%s: %d %s, sync=%s: %" PRIu64 " acknowledged writes checked, "
	    "%" PRIu64 " %s, %" PRIu64 " corrupted, %" PRIu64 " fsck "
	    "damage, %" PRIu64 " writer errors before a kill, %" PRIu64
	    " hung kills, %.0f s",
	    ok ? "PASS" : "FAIL", kills, power ? "power cuts" : "kills",
	    sync_mode, checked, lost, power && strcmp(sync_mode, "always") ?
	    "keys behind (unsynced: allowed)" : "lost", corrupted,
	    fsck_damage, writer_errors, hung_kills,
	    (double)(now_ms() - start) / 1000);
	return ok ? 0 : 1;
}
