/*
 * env.c: the OS layer (util/env.h).  The only file that reads errno.
 *
 * Besides thin wrappers around system calls, env keeps three pieces of
 * global state, all for tests:
 *
 *   - the fault table: armed faults, consulted by open, write, sync, read
 *     and rename;
 *   - the unsynced-data table: for the power-loss simulation, per file the
 *     size it had at its last sync and whether its name is durable;
 *   - the clock override;
 *   - the SIGBUS handler of mapped reads (below, "mapped files").
 *
 * The first two sit behind `mu`, a leaf lock: under it env makes plain
 * system calls only (fstat, and truncate, unlink, open, fallocate and
 * close in env_drop_unsynced), never a call out of this file.  Each has
 * an atomic flag checked before taking the lock, so with no fault armed
 * and tracking off an env_write costs its write(2) and two relaxed loads,
 * an env_map_write its memcpy and three.  The clock is one atomic.
 *
 * A tracked entry belongs to a path, not to an open file: a file may be
 * reopened, renamed (the entry follows it) or unlinked (the entry dies).
 * Open files cache a pointer to their entry, checked against `trk_gen`,
 * which changes whenever the table is freed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "util/env.h"
#include "util/err.h"

/* The one place EINTR is handled: reissues `call` while it fails with
 * EINTR and leaves its result in r.  (close(2) is never reissued: on
 * Linux the descriptor is gone even when it reports EINTR.) */
#define RETRY(r, call) \
	do { (r) = (call); } while ((r) == -1 && errno == EINTR)

/* Largest single write(2)/pread(2) we issue; Linux caps at ~2 GiB. */
#define IO_CHUNK ((size_t)1 << 30)

struct env_file {
	int fd;
	char *path;
	uint64_t off;		/* see env_offset() */
	int created;		/* this open created the file (tracking on) */
	struct tracked *trk;	/* cached entry, valid if trk_gen matches */
	unsigned trk_gen;
	const unsigned char *map;	/* env_map(): the whole file, read only */
	uint64_t map_len;
	unsigned char *wmap;	/* env_map_rw(): writable, wmap_len bytes */
	uint64_t wmap_len;
	/* Set by env_fallocate: the file's size then says nothing about its
	 * data, which ends at dend, the end of the last write or truncate.
	 * Written by the one writing thread, read by env_sync in any. */
	atomic_int prealloc;
	atomic_uint_least64_t dend;
};

static int from_errno(int e)
{
	switch (e) {
	case 0:
		return CF_OK;
	case ENOENT:
	case ENOTDIR:
		return CF_ENOTFOUND;
	case ENOSPC:
	case EDQUOT:
		return CF_ENOSPC;
	case EEXIST:
		return CF_EEXIST;
	case ENOTEMPTY:
		return CF_ENOTEMPTY;
	case ENOMEM:
		return CF_ENOMEM;
	case ENAMETOOLONG:
		return CF_ENAMETOOLONG;
	case EBUSY:
		return CF_EBUSY;
	default:
		return CF_EIO;
	}
}

/* --- shared state ----------------------------------------------------- */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

#define MAX_FAULTS 32

struct fault {
	unsigned ops;
	char *sub;		/* NULL: any path */
	int skip;		/* matching operations still to let through */
	int count;		/* failures still to inject; < 0: forever */
	int err;
	int short_write;
};

static struct fault faults[MAX_FAULTS];
static int nfaults;
static atomic_int armed;
static atomic_uint_least64_t hits;

struct tracked {
	struct tracked *next;
	char *path;		/* NULL once unlinked or renamed over */
	uint64_t synced;	/* size at the last sync */
	int created;		/* created while tracked */
	int named;		/* its directory entry is durable */
	int prealloc;		/* env_fallocate extended it: a drop zeros
				 * the unsynced bytes and keeps the size */
};

static atomic_int tracking;
static struct tracked *trk;
static unsigned trk_gen;

/* --- faults ----------------------------------------------------------- */

static int fault_matches(const struct fault *ft, unsigned op, const char *a,
			 const char *b)
{
	if (!(ft->ops & op))
		return 0;
	if (!ft->sub)
		return 1;
	return (a && strstr(a, ft->sub)) || (b && strstr(b, ft->sub));
}

/*
 * 0, or the error to inject into operation op on path a (and b, for a
 * rename).  Every armed fault that matches counts the operation, so two
 * faults' skips stay independent; the first that fires decides the error
 * and whether a write is made short.
 */
static int fault_check(unsigned op, const char *a, const char *b,
		       int *short_write)
{
	int err = 0;

	if (!atomic_load_explicit(&armed, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < nfaults; i++) {
		struct fault *ft = &faults[i];

		if (ft->count == 0 || !fault_matches(ft, op, a, b))
			continue;
		if (ft->skip > 0) {
			ft->skip--;
			continue;
		}
		if (ft->count > 0)
			ft->count--;
		if (!err) {
			err = ft->err;
			if (short_write)
				*short_write = ft->short_write;
		}
	}
	pthread_mutex_unlock(&mu);
	if (err)
		atomic_fetch_add(&hits, 1);
	return err;
}

int env_fault_add(unsigned ops, const char *path_substr, int skip, int count,
		  int err, int short_write)
{
	char *sub = NULL;
	int id;

	if (err >= 0 || skip < 0)
		return CF_EINVAL;
	if (path_substr && !(sub = strdup(path_substr)))
		return CF_ENOMEM;
	pthread_mutex_lock(&mu);
	if (nfaults == MAX_FAULTS) {
		id = CF_ENOMEM;
		free(sub);
	} else {
		id = nfaults++;
		faults[id] = (struct fault){ ops, sub, skip, count, err,
					     short_write };
		atomic_store(&armed, 1);
	}
	pthread_mutex_unlock(&mu);
	return id;
}

void env_fault_clear(void)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < nfaults; i++)
		free(faults[i].sub);
	nfaults = 0;
	atomic_store(&armed, 0);
	pthread_mutex_unlock(&mu);
}

uint64_t env_fault_hits(void)
{
	return atomic_load(&hits);
}

/* --- unsynced-data tracking ------------------------------------------- */

static int is_tracking(void)
{
	return atomic_load_explicit(&tracking, memory_order_relaxed);
}

/* The live entry of path, or NULL.  mu held. */
static struct tracked *track_find(const char *path)
{
	for (struct tracked *t = trk; t; t = t->next)
		if (t->path && !strcmp(t->path, path))
			return t;
	return NULL;
}

/* A new entry for path (NULL on ENOMEM: that file goes untracked, which
 * only makes the simulation keep more data).  mu held. */
static struct tracked *track_new(const char *path, uint64_t synced,
				 int created)
{
	struct tracked *t = calloc(1, sizeof *t);

	if (!t || !(t->path = strdup(path))) {
		free(t);
		return NULL;
	}
	t->synced = synced;
	t->created = created;
	t->named = !created;
	t->next = trk;
	trk = t;
	return t;
}

/* f's entry, made on first use: a file that existed before counts as
 * synced up to its current size.  NULL if tracking is off.  mu held. */
static struct tracked *track_of(struct env_file *f)
{
	struct tracked *t;
	struct stat st;

	if (!is_tracking())
		return NULL;
	if (f->trk && f->trk_gen == trk_gen)
		return f->trk;
	t = track_find(f->path);
	if (!t) {
		uint64_t size = 0;
		if (atomic_load(&f->prealloc))
			size = atomic_load(&f->dend);
		else if (!f->created && fstat(f->fd, &st) == 0)
			size = (uint64_t)st.st_size;
		t = track_new(f->path, size, f->created);
	}
	f->trk = t;
	f->trk_gen = trk_gen;
	return t;
}

static void track_free_all(void)
{
	while (trk) {
		struct tracked *t = trk;
		trk = t->next;
		free(t->path);
		free(t);
	}
	trk_gen++;
}

void env_track_unsynced(int on)
{
	pthread_mutex_lock(&mu);
	if (!on)
		track_free_all();
	atomic_store(&tracking, on ? 1 : 0);
	pthread_mutex_unlock(&mu);
}

/* Makes path size bytes long again after a drop cut it, with zeros
 * (reserved, as env_fallocate left them).  mu held. */
static int regrow(const char *path, uint64_t size)
{
	int fd, r, rc = CF_OK;

	RETRY(fd, open(path, O_WRONLY | O_CLOEXEC));
	if (fd < 0)
		return from_errno(errno);
	RETRY(r, fallocate(fd, 0, 0, (off_t)size));
	if (r)
		RETRY(r, ftruncate(fd, (off_t)size));
	if (r)
		rc = from_errno(errno);
	close(fd);
	return rc;
}

int env_drop_unsynced(void)
{
	int rc = CF_OK;
	struct stat st;

	pthread_mutex_lock(&mu);
	for (struct tracked *t = trk; t; t = t->next) {
		if (!t->path)
			continue;
		if (t->created && !t->named) {
			if (unlink(t->path) && errno != ENOENT)
				rc = from_errno(errno);
			free(t->path);
			t->path = NULL;
		} else if (stat(t->path, &st) == 0 &&
			   (uint64_t)st.st_size > t->synced) {
			/* never extend: a file cut shorter since its last
			 * sync keeps its shorter size.  A preallocated one
			 * keeps its size and reads zeros past the synced
			 * end, as a log after a power loss does; a live
			 * writable mapping of it sees the zeros too (the
			 * truncate drops the pages). */
			if (truncate(t->path, (off_t)t->synced))
				rc = from_errno(errno);
			else if (t->prealloc)
				rc = regrow(t->path, (uint64_t)st.st_size);
		}
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

/* Does path sit directly in dir?  Trailing slashes of dir are ignored. */
static int in_dir(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	const char *slash = strrchr(path, '/');

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (!slash)
		return n == 1 && dir[0] == '.';
	return (size_t)(slash - path) == n && !strncmp(path, dir, n);
}

static void track_dir_synced(const char *dir)
{
	pthread_mutex_lock(&mu);
	for (struct tracked *t = trk; t; t = t->next)
		if (t->path && in_dir(t->path, dir))
			t->named = 1;
	pthread_mutex_unlock(&mu);
}

static void track_unlinked(const char *path)
{
	struct tracked *t;

	pthread_mutex_lock(&mu);
	if ((t = track_find(path))) {
		free(t->path);
		t->path = NULL;
	}
	pthread_mutex_unlock(&mu);
}

/* Rename is durable: the entries of from (and of anything under it, when
 * it is a directory) move to to, with durable names; whatever to named
 * before is gone. */
static void track_renamed(const char *from, const char *to)
{
	size_t fl = strlen(from);

	if (!strcmp(from, to))
		return;
	pthread_mutex_lock(&mu);
	for (struct tracked *t = trk; t; t = t->next)
		if (t->path && (!strcmp(t->path, to) ||
				(!strncmp(t->path, to, strlen(to)) &&
				 t->path[strlen(to)] == '/'))) {
			free(t->path);
			t->path = NULL;
		}
	for (struct tracked *t = trk; t; t = t->next) {
		char *np;

		if (!t->path || strncmp(t->path, from, fl) ||
		    (t->path[fl] && t->path[fl] != '/'))
			continue;
		if (asprintf(&np, "%s%s", to, t->path + fl) < 0)
			continue;
		free(t->path);
		t->path = np;
		t->named = 1;
	}
	pthread_mutex_unlock(&mu);
}

/* --- files ------------------------------------------------------------ */

int env_open(const char *path, enum env_open_mode mode, struct env_file **out)
{
	struct env_file *f = NULL;
	struct stat st;
	int flags, fd = -1, existed = 1, rc;

	*out = NULL;
	switch (mode) {
	case ENV_READ: flags = O_RDONLY; break;
	case ENV_WRITE_NEW: flags = O_WRONLY | O_CREAT | O_TRUNC; break;
	case ENV_APPEND: flags = O_WRONLY | O_CREAT | O_APPEND; break;
	case ENV_RDWR: flags = O_RDWR; break;
	case ENV_RDWR_NEW: flags = O_RDWR | O_CREAT | O_TRUNC; break;
	default: return CF_EINVAL;
	}
	if ((rc = fault_check(ENV_OP_OPEN, path, NULL, NULL)))
		return rc;
	if ((flags & O_CREAT) && is_tracking())
		existed = stat(path, &st) == 0;
	RETRY(fd, open(path, flags | O_CLOEXEC, 0600));
	if (fd < 0)
		return from_errno(errno);
	f = calloc(1, sizeof *f);
	if (!f || !(f->path = strdup(path))) {
		rc = CF_ENOMEM;
		goto fail;
	}
	f->fd = fd;
	f->created = !existed;
	if (mode == ENV_APPEND) {
		if (fstat(fd, &st)) {
			rc = from_errno(errno);
			goto fail;
		}
		f->off = (uint64_t)st.st_size;
	}
	if ((mode == ENV_WRITE_NEW || mode == ENV_RDWR_NEW || f->created) &&
	    is_tracking()) {
		/* Entered now, so a directory sync before the first write
		 * counts.  A truncation counts as durable: what the file
		 * held before cannot be brought back anyway. */
		struct tracked *t;
		pthread_mutex_lock(&mu);
		if ((t = track_of(f)) &&
		    (mode == ENV_WRITE_NEW || mode == ENV_RDWR_NEW))
			t->synced = 0;
		pthread_mutex_unlock(&mu);
	}
	*out = f;
	return CF_OK;
fail:
	close(fd);
	if (f)
		free(f->path);
	free(f);
	return rc;
}

/* --- mapped files ------------------------------------------------------
 *
 * env_map() maps a file whole, read only; reads of it then copy from the
 * mapping instead of calling pread(2): no system call per block, and a
 * page that is not in memory yet brings its neighbours in with it (the
 * kernel's read-around), which pread's random 4 KiB reads never get.
 *
 * A mapped page the kernel cannot read (a media error, or the file
 * truncated under us) raises SIGBUS where pread would have failed with
 * EIO.  So the copy runs under a guard: map_jmp, per thread, is set for
 * the length of the copy, and the SIGBUS handler jumps back to it, where
 * the read returns CF_EIO as pread would.  The jump saves no signal mask
 * (that would be a system call per copy); the handler, installed with
 * SA_NODEFER, unblocks SIGBUS itself before jumping, so the thread's mask
 * is as it was.  A SIGBUS anywhere else
 * goes to the handler there was before ours, or kills the process as it
 * would have without us.
 *
 * env_map_rw() maps a file shared and writable, and env_map_write()
 * stores into it under the same guard: a store into a page the kernel
 * cannot back (the file cut under us, a block a copy-on-write file
 * system cannot allocate despite fallocate, a full tmpfs) is CF_EIO where
 * write(2) would have failed.  The stored bytes are in the page cache at
 * once, as write(2)'s are, so a killed process loses none of them, and
 * fdatasync writes them back with the rest of the file.
 */

static __thread sigjmp_buf *map_jmp
	__attribute__((tls_model("initial-exec")));
static struct sigaction old_bus;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *j = map_jmp;

	if (j) {
		sigset_t bus;
		/* unblock it here, in the rare fault, rather than have
		 * every guarded copy save the mask (a system call):
		 * SA_NODEFER leaves it unblocked, but a sanitizer's
		 * wrapper around the handler may not */
		sigemptyset(&bus);
		sigaddset(&bus, SIGBUS);
		pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
		map_jmp = NULL;
		siglongjmp(*j, 1);
	}
	if (old_bus.sa_flags & SA_SIGINFO) {
		if (old_bus.sa_sigaction) {
			old_bus.sa_sigaction(sig, si, uc);
			return;
		}
	} else if (old_bus.sa_handler != SIG_DFL &&
		   old_bus.sa_handler != SIG_IGN) {
		old_bus.sa_handler(sig);
		return;
	}
	/* the default action: the faulting access runs again on return
	 * and this time the signal kills the process */
	signal(SIGBUS, SIG_DFL);
}

static void install_sigbus(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old_bus);
}

/* Copies n bytes from src to dst, one of them in a mapping; CF_EIO when
 * the kernel cannot read or back a page of it. */
static int guarded_copy(void *dst, const void *src, size_t n)
{
	sigjmp_buf jb;

	if (sigsetjmp(jb, 0))
		return CF_EIO;
	map_jmp = &jb;
	atomic_signal_fence(memory_order_seq_cst);
	memcpy(dst, src, n);
	atomic_signal_fence(memory_order_seq_cst);
	map_jmp = NULL;
	return CF_OK;
}

/* Copies n bytes of f's mapping at off into p. */
static int map_copy(const struct env_file *f, void *p, size_t n,
		    uint64_t off)
{
	return guarded_copy(p, f->map + off, n);
}

/* f's data now reaches end (f preallocated).  Only the thread writing f
 * moves it, so load and store need no loop; release, so that a sync that
 * reads it finds the bytes below it in the page cache. */
static void note_end(struct env_file *f, uint64_t end)
{
	if (end > atomic_load_explicit(&f->dend, memory_order_relaxed))
		atomic_store_explicit(&f->dend, end, memory_order_release);
}

int env_fallocate(struct env_file *f, uint64_t size)
{
	struct stat st;
	int r, first = !atomic_load(&f->prealloc);

	if (first) {
		/* the data ends where the file does now */
		if (fstat(f->fd, &st))
			return from_errno(errno);
		atomic_store(&f->dend, (uint64_t)st.st_size);
		if (is_tracking()) {
			/* entered before the size changes, so a file from
			 * before tracking counts as synced to its data */
			pthread_mutex_lock(&mu);
			track_of(f);
			pthread_mutex_unlock(&mu);
		}
	}
	/* an injected error stands for fallocate(2)'s: checked here, after
	 * what a real failure would have done too, and instead of it */
	if ((r = fault_check(ENV_OP_ALLOC, f->path, NULL, NULL)))
		return r;
	RETRY(r, fallocate(f->fd, 0, 0, (off_t)size));
	if (r) {
		if (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL)
			return CF_EINVAL;
		return from_errno(errno);
	}
	if (first) {
		atomic_store(&f->prealloc, 1);
		if (is_tracking()) {
			struct tracked *t;
			pthread_mutex_lock(&mu);
			if ((t = track_of(f)))
				t->prealloc = 1;
			pthread_mutex_unlock(&mu);
		}
	}
	return CF_OK;
}

int env_map_rw(struct env_file *f, uint64_t len)
{
	void *m;

	if (len == 0 || len > SIZE_MAX)
		return CF_EINVAL;
	pthread_once(&bus_once, install_sigbus);
	m = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 f->fd, 0);
	if (m == MAP_FAILED)
		return from_errno(errno);
	if (f->wmap)
		munmap(f->wmap, (size_t)f->wmap_len);
	f->wmap = m;
	f->wmap_len = len;
	return CF_OK;
}

/*
 * The pages of mapping m (len bytes) that the page cache holds, mapped
 * into this process now: a first read of a page through the mapping
 * otherwise takes a page fault (about a microsecond, more on a virtual
 * machine), and random reads of a file of gigabytes meet one on most of
 * their first touches, which is where their 99th percentile went
 * (docs/performance.md, "Scale curve").  Pages not in memory are left
 * alone: mapping them would read them from the disk now, for reads that
 * may never come.  A kernel without MADV_POPULATE_READ (before Linux
 * 5.14) maps nothing here.  The cost: mincore(2) and a page table entry
 * a page.
 */
static void populate_resident(const char *m, size_t len)
{
#ifdef MADV_POPULATE_READ
	unsigned char vec[4096];
	size_t page = (size_t)sysconf(_SC_PAGESIZE), off, n, i, run;

	for (off = 0; off < len; off += n * page) {
		n = (len - off + page - 1) / page;
		if (n > sizeof vec)
			n = sizeof vec;
		if (mincore((void *)(m + off), n * page < len - off ?
			    n * page : len - off, vec))
			return;
		for (i = 0; i < n; i += run) {
			for (run = 0; i + run < n && (vec[i + run] & 1);
			     run++)
				;
			if (run && madvise((void *)(m + off + i * page),
					   run * page, MADV_POPULATE_READ) &&
			    errno == EINVAL)
				return;	/* not this kernel's */
			if (!run)
				run = 1;
		}
	}
#else
	(void)m;
	(void)len;
#endif
}

int env_map(struct env_file *f)
{
	struct stat st;
	void *m;

	if (f->map)
		return CF_OK;
	if (fstat(f->fd, &st))
		return from_errno(errno);
	if (st.st_size <= 0 || (uint64_t)st.st_size > SIZE_MAX)
		return CF_OK;
	pthread_once(&bus_once, install_sigbus);
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, f->fd, 0);
	if (m == MAP_FAILED)
		return CF_OK;	/* reads go on with pread(2) */
	populate_resident(m, (size_t)st.st_size);
	f->map = m;
	f->map_len = (uint64_t)st.st_size;
	return CF_OK;
}

int env_map_release(struct env_file *f, uint64_t off, uint64_t len)
{
	if (!f->wmap || off > f->wmap_len || len > f->wmap_len - off)
		return CF_EINVAL;
	/* for a shared file mapping this only unmaps: a dirty page is
	 * marked dirty in the page cache as it goes, and written back as
	 * any other */
	if (len && madvise(f->wmap + off, (size_t)len, MADV_DONTNEED))
		return CF_EINVAL;
	return CF_OK;
}

int env_close(struct env_file *f)
{
	int rc = CF_OK;

	if (!f)
		return CF_OK;
	if (f->map)
		munmap((void *)f->map, (size_t)f->map_len);
	if (f->wmap)
		munmap(f->wmap, (size_t)f->wmap_len);
	if (close(f->fd) && errno != EINTR)
		rc = from_errno(errno);
	free(f->path);
	free(f);
	return rc;
}

/* How put() stores: write(2) at the file offset, pwrite(2) at off, or a
 * copy into the env_map_rw mapping at off. */
enum put_how { PUT_APPEND, PUT_AT, PUT_MAPPED };

/* Stores all n bytes as how says: short writes are completed here.
 * *done: how many went (a failed mapped copy counts them all: some may
 * be there). */
static int put_all(struct env_file *f, const char *p, size_t n,
		   enum put_how how, uint64_t off, size_t *done)
{
	*done = 0;
	if (how == PUT_MAPPED) {
		*done = n;
		return guarded_copy(f->wmap + off, p, n);
	}
	while (n > 0) {
		size_t c = n < IO_CHUNK ? n : IO_CHUNK;
		ssize_t w;

		if (how == PUT_APPEND)
			RETRY(w, write(f->fd, p, c));
		else
			RETRY(w, pwrite(f->fd, p, c, (off_t)(off + *done)));
		if (w < 0)
			return from_errno(errno);
		if (w == 0)
			return CF_EIO;	/* no progress and no reason */
		p += w;
		n -= (size_t)w;
		*done += (size_t)w;
		if (how == PUT_APPEND)
			f->off += (uint64_t)w;
	}
	return CF_OK;
}

/* The tracking entry of f, made before the bytes of a write land, so a
 * file opened before tracking began counts as synced up to here. */
static void track_before_write(struct env_file *f)
{
	if (is_tracking()) {
		pthread_mutex_lock(&mu);
		track_of(f);
		pthread_mutex_unlock(&mu);
	}
}

/* env_write, env_pwrite and env_map_write: the tracking entry before the
 * bytes land, the injected faults (a short write stores the first half,
 * then fails), and a preallocated file's data end after. */
static int put(struct env_file *f, const void *p, size_t n, enum put_how how,
	       uint64_t off)
{
	size_t done = 0;
	int err, sw = 0;

	track_before_write(f);
	if ((err = fault_check(ENV_OP_WRITE, f->path, NULL, &sw))) {
		if (sw)
			put_all(f, p, n / 2, how, off, &done);
	} else {
		err = put_all(f, p, n, how, off, &done);
	}
	if (atomic_load_explicit(&f->prealloc, memory_order_relaxed))
		note_end(f, how == PUT_APPEND ? f->off : off + done);
	return err;
}

int env_write(struct env_file *f, const void *p, size_t n)
{
	return put(f, p, n, PUT_APPEND, 0);
}

int env_pwrite(struct env_file *f, uint64_t off, const void *p, size_t n)
{
	return put(f, p, n, PUT_AT, off);
}

/* pwritev(2) of the first n bytes of iov[0..cnt) at off; short writes
 * are completed here.  *done: how many went. */
static int pwritev_all(struct env_file *f, const struct iovec *iov, int cnt,
		       uint64_t off, size_t n, size_t *done)
{
	struct iovec v[ENV_IOV_MAX];
	int k = 0;

	*done = 0;
	for (int i = 0; i < cnt && n > 0; i++) {
		size_t c = iov[i].iov_len < n ? iov[i].iov_len : n;
		if (!c)
			continue;
		v[k].iov_base = iov[i].iov_base;
		v[k++].iov_len = c;
		n -= c;
	}
	for (int i = 0; i < k;) {
		ssize_t w;

		RETRY(w, pwritev(f->fd, v + i, k - i, (off_t)(off + *done)));
		if (w < 0)
			return from_errno(errno);
		if (w == 0)
			return CF_EIO;	/* no progress and no reason */
		*done += (size_t)w;
		while (i < k && (size_t)w >= v[i].iov_len)
			w -= (ssize_t)v[i++].iov_len;
		if (i < k) {
			v[i].iov_base = (char *)v[i].iov_base + w;
			v[i].iov_len -= (size_t)w;
		}
	}
	return CF_OK;
}

int env_pwritev(struct env_file *f, uint64_t off, const struct iovec *iov,
		int cnt)
{
	size_t n = 0, done = 0;
	int err, sw = 0;

	if (cnt < 0 || cnt > ENV_IOV_MAX)
		return CF_EINVAL;
	for (int i = 0; i < cnt; i++)
		n += iov[i].iov_len;
	track_before_write(f);
	if ((err = fault_check(ENV_OP_WRITE, f->path, NULL, &sw))) {
		if (sw)
			pwritev_all(f, iov, cnt, off, n / 2, &done);
	} else {
		err = pwritev_all(f, iov, cnt, off, n, &done);
	}
	if (atomic_load_explicit(&f->prealloc, memory_order_relaxed))
		note_end(f, off + done);
	return err;
}

int env_map_write(struct env_file *f, uint64_t off, const void *p, size_t n)
{
	if (!f->wmap || off > f->wmap_len || n > f->wmap_len - off)
		return CF_EINVAL;
	return put(f, p, n, PUT_MAPPED, off);
}

int env_pread_some(struct env_file *f, void *p, size_t n, uint64_t off,
		   size_t *got)
{
	char *c = p;
	int err;

	*got = 0;
	if ((err = fault_check(ENV_OP_READ, f->path, NULL, NULL)))
		return err;
	if (f->map) {
		size_t m = 0;
		if (off < f->map_len)
			m = off + n <= f->map_len ? n
						  : (size_t)(f->map_len - off);
		if (m && (err = map_copy(f, p, m, off)))
			return err;
		*got = m;
		return CF_OK;
	}
	while (n > 0) {
		ssize_t r;

		RETRY(r, pread(f->fd, c, n < IO_CHUNK ? n : IO_CHUNK,
			       (off_t)off));
		if (r < 0)
			return from_errno(errno);
		if (r == 0)
			break;
		c += r;
		n -= (size_t)r;
		off += (uint64_t)r;
		*got += (size_t)r;
	}
	return CF_OK;
}

int env_pread(struct env_file *f, void *p, size_t n, uint64_t off)
{
	size_t got;
	int rc = env_pread_some(f, p, n, off, &got);

	if (rc == CF_OK && got != n)
		rc = CF_ECORRUPT;	/* the file ends early */
	return rc;
}

int env_sync(struct env_file *f)
{
	struct stat st;
	int r, err, track = is_tracking();

	if ((err = fault_check(ENV_OP_SYNC, f->path, NULL, NULL)))
		return err;
	/* Only bytes written before the fsync starts are durable after it;
	 * another thread may be appending meanwhile (the WAL does).  A
	 * preallocated file's data ends at dend, not at its size. */
	if (track && atomic_load(&f->prealloc))
		st.st_size = (off_t)atomic_load_explicit(&f->dend,
							 memory_order_acquire);
	else if (track && fstat(f->fd, &st))
		return from_errno(errno);
	RETRY(r, fdatasync(f->fd));
	if (r)
		return from_errno(errno);
	if (track) {
		struct tracked *t;
		pthread_mutex_lock(&mu);
		if ((t = track_of(f))) {
			t->synced = (uint64_t)st.st_size;
			t->named = 1;
		}
		pthread_mutex_unlock(&mu);
	}
	return CF_OK;
}

int env_truncate(struct env_file *f, uint64_t size)
{
	off_t pos;
	int r;

	RETRY(r, ftruncate(f->fd, (off_t)size));
	if (r)
		return from_errno(errno);
	if (f->off > size)
		f->off = size;
	if (atomic_load(&f->prealloc) && atomic_load(&f->dend) > size)
		atomic_store(&f->dend, size);
	/* a plain (not O_APPEND) descriptor must not leave a hole when it
	 * writes next */
	pos = lseek(f->fd, 0, SEEK_CUR);
	if (pos > (off_t)size && lseek(f->fd, (off_t)size, SEEK_SET) < 0)
		return from_errno(errno);
	if (is_tracking()) {
		struct tracked *t;
		pthread_mutex_lock(&mu);
		if ((t = track_of(f)) && t->synced > size)
			t->synced = size;
		pthread_mutex_unlock(&mu);
	}
	return CF_OK;
}

int64_t env_size(struct env_file *f)
{
	struct stat st;

	if (fstat(f->fd, &st))
		return from_errno(errno);
	return (int64_t)st.st_size;
}

uint64_t env_offset(const struct env_file *f)
{
	return f->off;
}

const char *env_path(const struct env_file *f)
{
	return f->path;
}

/* --- paths ------------------------------------------------------------ */

int env_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int env_file_size(const char *path, uint64_t *size)
{
	struct stat st;

	if (stat(path, &st))
		return from_errno(errno);
	*size = (uint64_t)st.st_size;
	return CF_OK;
}

int env_mkdir(const char *path, int mode)
{
	struct stat st;

	if (mkdir(path, (mode_t)mode) == 0)
		return CF_OK;
	if (errno != EEXIST)
		return from_errno(errno);
	/* "exists" is fine only if it is a directory */
	if (stat(path, &st))
		return from_errno(errno);
	return S_ISDIR(st.st_mode) ? CF_OK : CF_EEXIST;
}

int env_mkdir_p(const char *path, int mode)
{
	char *p = strdup(path);
	int rc = CF_OK;

	if (!p)
		return CF_ENOMEM;
	for (char *s = p + 1; *s && rc == CF_OK; s++) {
		if (*s != '/' || s[-1] == '/')
			continue;
		*s = 0;
		rc = env_mkdir(p, mode);
		*s = '/';
	}
	if (rc == CF_OK)
		rc = env_mkdir(p, mode);
	free(p);
	return rc;
}

int env_unlink(const char *path)
{
	if (unlink(path))
		return from_errno(errno);
	if (is_tracking())
		track_unlinked(path);
	return CF_OK;
}

int env_rmdir(const char *path)
{
	if (rmdir(path))
		return from_errno(errno);
	return CF_OK;
}

int env_remove_tree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = CF_OK;

	if (lstat(path, &st))
		return errno == ENOENT ? CF_OK : from_errno(errno);
	if (!S_ISDIR(st.st_mode)) {
		rc = env_unlink(path);
		return rc == CF_ENOTFOUND ? CF_OK : rc;
	}
	if (!(d = opendir(path)))
		return errno == ENOENT ? CF_OK : from_errno(errno);
	while (rc == CF_OK && (errno = 0, e = readdir(d))) {
		char *sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (asprintf(&sub, "%s/%s", path, e->d_name) < 0) {
			rc = CF_ENOMEM;
			break;
		}
		rc = env_remove_tree(sub);
		free(sub);
	}
	if (rc == CF_OK && errno)
		rc = from_errno(errno);	/* readdir failed */
	closedir(d);
	if (rc == CF_OK) {
		rc = env_rmdir(path);
		if (rc == CF_ENOTFOUND)
			rc = CF_OK;
	}
	return rc;
}

int env_rename(const char *from, const char *to)
{
	int err;

	if ((err = fault_check(ENV_OP_RENAME, from, to, NULL)))
		return err;
	if (rename(from, to))
		return from_errno(errno);
	if (is_tracking())
		track_renamed(from, to);
	return CF_OK;
}

int env_sync_dir(const char *path)
{
	int fd, r, rc = CF_OK;

	if ((rc = fault_check(ENV_OP_SYNC, path, NULL, NULL)))
		return rc;
	RETRY(fd, open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (fd < 0)
		return from_errno(errno);
	RETRY(r, fsync(fd));
	if (r)
		rc = from_errno(errno);
	close(fd);
	if (rc == CF_OK && is_tracking())
		track_dir_synced(path);
	return rc;
}

int env_list_dir(const char *dir, int (*fn)(const char *name, void *arg),
		 void *arg)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = CF_OK;

	if (!d)
		return from_errno(errno);
	/* Read the whole list first, since fn may change the directory.
	 * The order is readdir's. */
	while ((errno = 0, e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **nn = realloc(names, nc * sizeof *nn);
			if (!nn) {
				rc = CF_ENOMEM;
				break;
			}
			names = nn;
			cap = nc;
		}
		if (!(names[n] = strdup(e->d_name))) {
			rc = CF_ENOMEM;
			break;
		}
		n++;
	}
	if (rc == CF_OK && errno)
		rc = from_errno(errno);
	closedir(d);
	for (size_t i = 0; i < n && rc == CF_OK; i++)
		rc = fn(names[i], arg);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int env_read_file(const char *path, char **out, size_t *len)
{
	struct env_file *f = NULL;
	char *p = NULL, *np;
	size_t cap, n = 0, got;
	int64_t size;
	int rc;

	*out = NULL;
	*len = 0;
	rc = env_open(path, ENV_READ, &f);
	if (rc)
		goto out;
	size = env_size(f);
	if (size < 0) {
		rc = (int)size;
		goto out;
	}
	/* the size is a hint: read to the end even if the file grew */
	cap = (size_t)size + 1;
	for (;;) {
		np = realloc(p, cap + 1);
		if (!np) {
			rc = CF_ENOMEM;
			goto out;
		}
		p = np;
		rc = env_pread_some(f, p + n, cap - n, n, &got);
		if (rc)
			goto out;
		n += got;
		if (n < cap)
			break;
		cap *= 2;
	}
	p[n] = 0;
	*out = p;
	*len = n;
	p = NULL;
out:
	free(p);
	env_close(f);
	return rc;
}

/* The directory part of path ("." if none) into a malloc'd string. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d;

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	d = malloc((size_t)(slash - path) + 1);
	if (d) {
		memcpy(d, path, (size_t)(slash - path));
		d[slash - path] = 0;
	}
	return d;
}

int env_write_file_atomic(const char *path, const void *p, size_t n)
{
	struct env_file *f = NULL;
	char *tmp = NULL, *dir = NULL;
	int rc;

	if (asprintf(&tmp, "%s.tmp", path) < 0) {
		tmp = NULL;
		rc = CF_ENOMEM;
		goto out;
	}
	if (!(dir = dir_of(path))) {
		rc = CF_ENOMEM;
		goto out;
	}
	rc = env_open(tmp, ENV_WRITE_NEW, &f);
	if (rc)
		goto out;
	rc = env_write(f, p, n);
	if (rc == CF_OK)
		rc = env_sync(f);
	if (rc == CF_OK)
		rc = env_close(f);
	else
		env_close(f);
	f = NULL;
	if (rc == CF_OK)
		rc = env_rename(tmp, path);
	if (rc) {
		env_unlink(tmp);
		goto out;
	}
	rc = env_sync_dir(dir);
out:
	free(tmp);
	free(dir);
	return rc;
}

int env_create_private(const char *path)
{
	int fd, rc;

	if ((rc = fault_check(ENV_OP_OPEN, path, NULL, NULL)))
		return rc;
	RETRY(fd, open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600));
	if (fd < 0)
		return from_errno(errno);
	close(fd);
	return CF_OK;
}

int env_lock_file(const char *path, struct env_file **out)
{
	struct env_file *f = NULL;
	int fd, r, rc;

	*out = NULL;
	if ((rc = fault_check(ENV_OP_OPEN, path, NULL, NULL)))
		return rc;
	/* not through env_open: a lock file holds no data and is not
	 * tracked for the power-loss simulation */
	RETRY(fd, open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600));
	if (fd < 0)
		return from_errno(errno);
	/* flock, not fcntl: a second open in the same process conflicts
	 * too, as a second cf_db_open of one directory must */
	RETRY(r, flock(fd, LOCK_EX | LOCK_NB));
	if (r) {
		rc = errno == EWOULDBLOCK ? CF_EBUSY : from_errno(errno);
		goto fail;
	}
	f = calloc(1, sizeof *f);
	if (!f || !(f->path = strdup(path))) {
		rc = CF_ENOMEM;
		goto fail;
	}
	f->fd = fd;
	*out = f;
	return CF_OK;
fail:
	close(fd);
	free(f);
	return rc;
}

/* --- the clock -------------------------------------------------------- */

/* The fixed time in ms, or -1 for the real clock. */
static atomic_int_least64_t fixed_ms = -1;

static int64_t real_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t env_now_ms(void)
{
	int64_t f = atomic_load_explicit(&fixed_ms, memory_order_relaxed);

	return f >= 0 ? f : real_ms();
}

void env_clock_set(int64_t ms)
{
	atomic_store(&fixed_ms, ms < 0 ? -1 : ms);
}

void env_clock_advance(int64_t ms)
{
	int_least64_t cur = atomic_load(&fixed_ms), next;

	/* a CAS loop, so concurrent advances all count */
	do {
		next = (cur >= 0 ? cur : real_ms()) + ms;
		if (next < 0)
			next = 0;
	} while (!atomic_compare_exchange_weak(&fixed_ms, &cur, next));
}
