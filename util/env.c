/*
 * env.c: the OS layer (util/env.h).  The only place that reads errno.
 *
 * Fault injection: a small table of armed faults, checked by every
 * operation that can fail in the ways tests care about.  Power-loss
 * simulation: with tracking on, every file written through env has its
 * last synced size recorded; env_drop_unsynced() cuts files back to it.
 * Both tables sit behind one mutex (a leaf lock).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "util/env.h"
#include "util/err.h"

struct env_file {
	int fd;
	char *path;
	uint64_t off;		/* write offset */
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
	case ENOMEM:
		return CF_ENOMEM;
	case ENAMETOOLONG:
		return CF_ENAMETOOLONG;
	case EBUSY:
	case EWOULDBLOCK:
		return CF_EBUSY;
	case ENOTEMPTY:
		return CF_ENOTEMPTY;
	default:
		return CF_EIO;
	}
}

/* --- faults ----------------------------------------------------------- */

#define MAX_FAULTS 16

struct fault {
	unsigned ops;
	char sub[256];
	int any_path;
	int skip, count, err, short_write;
};

static pthread_mutex_t fmu = PTHREAD_MUTEX_INITIALIZER;
static struct fault faults[MAX_FAULTS];
static int nfaults;
static atomic_int armed;
static atomic_uint_least64_t hits;

/* 0, or the error to inject for op on path (and *short_write). */
static int fault_check(unsigned op, const char *path, int *short_write)
{
	int err = 0;

	if (!atomic_load_explicit(&armed, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&fmu);
	for (int i = 0; i < nfaults && !err; i++) {
		struct fault *f = &faults[i];
		if (!(f->ops & op) || f->count == 0)
			continue;
		if (!f->any_path && (!path || !strstr(path, f->sub)))
			continue;
		if (f->skip > 0) {
			f->skip--;
			continue;
		}
		if (f->count > 0)
			f->count--;
		err = f->err;
		if (short_write)
			*short_write = f->short_write;
	}
	pthread_mutex_unlock(&fmu);
	if (err)
		atomic_fetch_add(&hits, 1);
	return err;
}

int env_fault_add(unsigned ops, const char *path_substr, int skip, int count,
		  int err, int short_write)
{
	int id = -1;

	pthread_mutex_lock(&fmu);
	if (nfaults < MAX_FAULTS) {
		struct fault *f = &faults[nfaults];
		memset(f, 0, sizeof *f);
		f->ops = ops;
		f->any_path = path_substr == NULL;
		if (path_substr)
			snprintf(f->sub, sizeof f->sub, "%s", path_substr);
		f->skip = skip;
		f->count = count;
		f->err = err;
		f->short_write = short_write;
		id = nfaults++;
		atomic_store(&armed, 1);
	}
	pthread_mutex_unlock(&fmu);
	return id;
}

void env_fault_clear(void)
{
	pthread_mutex_lock(&fmu);
	nfaults = 0;
	atomic_store(&armed, 0);
	pthread_mutex_unlock(&fmu);
}

uint64_t env_fault_hits(void)
{
	return atomic_load(&hits);
}

/* --- unsynced-data tracking ------------------------------------------ */

struct tracked {
	char *path;
	uint64_t synced;
	int never_synced;	/* created while tracking, never synced */
};

static atomic_int tracking;
static struct tracked *trk;
static size_t ntrk;

static struct tracked *track_find(const char *path)
{
	for (size_t i = 0; i < ntrk; i++)
		if (!strcmp(trk[i].path, path))
			return &trk[i];
	return NULL;
}

/* Called with fmu held. */
static void track_open(const char *path, int created, uint64_t size)
{
	struct tracked *t, *n;

	if (!tracking || track_find(path))
		return;
	n = realloc(trk, (ntrk + 1) * sizeof *n);
	if (!n)
		return;
	trk = n;
	t = &trk[ntrk];
	t->path = strdup(path);
	if (!t->path)
		return;
	t->synced = size;
	t->never_synced = created;
	ntrk++;
}

void env_track_unsynced(int on)
{
	pthread_mutex_lock(&fmu);
	tracking = on;
	if (!on) {
		for (size_t i = 0; i < ntrk; i++)
			free(trk[i].path);
		free(trk);
		trk = NULL;
		ntrk = 0;
	}
	pthread_mutex_unlock(&fmu);
}

int env_drop_unsynced(void)
{
	int rc = CF_OK;

	pthread_mutex_lock(&fmu);
	for (size_t i = 0; i < ntrk; i++) {
		struct tracked *t = &trk[i];
		if (t->never_synced) {
			if (unlink(t->path) && errno != ENOENT)
				rc = CF_EIO;
		} else if (truncate(t->path, (off_t)t->synced) &&
			   errno != ENOENT) {
			rc = CF_EIO;
		}
	}
	pthread_mutex_unlock(&fmu);
	return rc;
}

/* --- files ------------------------------------------------------------ */

int env_open(const char *path, enum env_open_mode mode, struct env_file **out)
{
	struct env_file *f;
	int flags, fd, err, existed;
	struct stat st;

	*out = NULL;
	if ((err = fault_check(ENV_OP_OPEN, path, NULL)))
		return err;
	switch (mode) {
	case ENV_READ: flags = O_RDONLY; break;
	case ENV_WRITE_NEW: flags = O_WRONLY | O_CREAT | O_TRUNC; break;
	case ENV_APPEND: flags = O_WRONLY | O_CREAT | O_APPEND; break;
	case ENV_RDWR: flags = O_RDWR; break;
	default: return CF_EINVAL;
	}
	existed = stat(path, &st) == 0;
	do
		fd = open(path, flags | O_CLOEXEC, 0644);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return from_errno(errno);
	f = calloc(1, sizeof *f);
	if (!f || !(f->path = strdup(path))) {
		free(f);
		close(fd);
		return CF_ENOMEM;
	}
	f->fd = fd;
	if (mode == ENV_APPEND && fstat(fd, &st) == 0)
		f->off = (uint64_t)st.st_size;
	if (mode != ENV_READ) {
		pthread_mutex_lock(&fmu);
		track_open(path, !existed || mode == ENV_WRITE_NEW,
			   mode == ENV_WRITE_NEW ? 0 :
			   (existed ? (uint64_t)st.st_size : 0));
		pthread_mutex_unlock(&fmu);
	}
	*out = f;
	return CF_OK;
}

int env_close(struct env_file *f)
{
	int rc = CF_OK;

	if (!f)
		return CF_OK;
	if (close(f->fd) && errno != EINTR)
		rc = from_errno(errno);
	free(f->path);
	free(f);
	return rc;
}

int env_write(struct env_file *f, const void *p, size_t n)
{
	const char *c = p;
	int err, sw = 0;

	if ((err = fault_check(ENV_OP_WRITE, f->path, &sw))) {
		if (sw && n > 1) {
			size_t half = n / 2;
			ssize_t w = write(f->fd, c, half);
			if (w > 0)
				f->off += (uint64_t)w;
		}
		return err;
	}
	while (n > 0) {
		ssize_t w = write(f->fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return from_errno(errno);
		}
		c += w;
		n -= (size_t)w;
		f->off += (uint64_t)w;
	}
	return CF_OK;
}

int env_pread_some(struct env_file *f, void *p, size_t n, uint64_t off,
		   size_t *got)
{
	char *c = p;
	int err;

	*got = 0;
	if ((err = fault_check(ENV_OP_READ, f->path, NULL)))
		return err;
	while (n > 0) {
		ssize_t r = pread(f->fd, c, n, (off_t)off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return from_errno(errno);
		}
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
	int err;

	if ((err = fault_check(ENV_OP_SYNC, f->path, NULL)))
		return err;
	while (fdatasync(f->fd)) {
		if (errno != EINTR)
			return from_errno(errno);
	}
	if (tracking) {
		struct stat st;
		pthread_mutex_lock(&fmu);
		{
			struct tracked *t = track_find(f->path);
			if (t && fstat(f->fd, &st) == 0) {
				t->synced = (uint64_t)st.st_size;
				t->never_synced = 0;
			}
		}
		pthread_mutex_unlock(&fmu);
	}
	return CF_OK;
}

int env_truncate(struct env_file *f, uint64_t size)
{
	while (ftruncate(f->fd, (off_t)size)) {
		if (errno != EINTR)
			return from_errno(errno);
	}
	if (f->off > size)
		f->off = size;
	if (lseek(f->fd, 0, SEEK_CUR) > (off_t)size)
		lseek(f->fd, (off_t)size, SEEK_SET);
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
	if (mkdir(path, (mode_t)mode) && errno != EEXIST)
		return from_errno(errno);
	return CF_OK;
}

int env_mkdir_p(const char *path, int mode)
{
	char *p = strdup(path);
	int rc = CF_OK;

	if (!p)
		return CF_ENOMEM;
	for (char *s = p + 1; *s && rc == CF_OK; s++)
		if (*s == '/') {
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
	if (!S_ISDIR(st.st_mode))
		return env_unlink(path);
	d = opendir(path);
	if (!d)
		return from_errno(errno);
	while ((e = readdir(d))) {
		char *sub;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (asprintf(&sub, "%s/%s", path, e->d_name) < 0) {
			rc = CF_ENOMEM;
			break;
		}
		rc = env_remove_tree(sub);
		free(sub);
		if (rc)
			break;
	}
	closedir(d);
	if (rc == CF_OK)
		rc = env_rmdir(path);
	return rc;
}

int env_rename(const char *from, const char *to)
{
	int err;

	if ((err = fault_check(ENV_OP_RENAME, to, NULL)))
		return err;
	if (rename(from, to))
		return from_errno(errno);
	return CF_OK;
}

int env_sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = CF_OK;

	if (fd < 0)
		return from_errno(errno);
	if (fsync(fd))
		rc = from_errno(errno);
	close(fd);
	return rc;
}

int env_list_dir(const char *dir, int (*fn)(const char *name, void *arg),
		 void *arg)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;
	int rc = CF_OK;

	if (!d)
		return from_errno(errno);
	/* read the whole list first: fn may change the directory */
	while ((e = readdir(d))) {
		char **nn;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		nn = realloc(names, (n + 1) * sizeof *nn);
		if (!nn || !(nn[n] = strdup(e->d_name))) {
			names = nn ? nn : names;
			rc = CF_ENOMEM;
			break;
		}
		names = nn;
		n++;
	}
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
	struct env_file *f;
	int64_t size;
	char *p;
	int rc;

	*out = NULL;
	rc = env_open(path, ENV_READ, &f);
	if (rc)
		return rc;
	size = env_size(f);
	if (size < 0) {
		env_close(f);
		return (int)size;
	}
	p = malloc((size_t)size + 1);
	if (!p) {
		env_close(f);
		return CF_ENOMEM;
	}
	rc = env_pread(f, p, (size_t)size, 0);
	env_close(f);
	if (rc) {
		free(p);
		return rc;
	}
	p[size] = 0;
	*out = p;
	*len = (size_t)size;
	return CF_OK;
}

int env_write_file_atomic(const char *path, const void *p, size_t n)
{
	struct env_file *f;
	char *tmp, *dir, *slash;
	int rc;

	if (asprintf(&tmp, "%s.tmp", path) < 0)
		return CF_ENOMEM;
	rc = env_open(tmp, ENV_WRITE_NEW, &f);
	if (rc == CF_OK) {
		rc = env_write(f, p, n);
		if (rc == CF_OK)
			rc = env_sync(f);
		env_close(f);
		if (rc == CF_OK)
			rc = env_rename(tmp, path);
		if (rc)
			unlink(tmp);
	}
	free(tmp);
	if (rc == CF_OK && (dir = strdup(path))) {
		slash = strrchr(dir, '/');
		if (slash) {
			*slash = 0;
			rc = env_sync_dir(*dir ? dir : "/");
		}
		free(dir);
	}
	return rc;
}

int env_lock_file(const char *path, struct env_file **out)
{
	struct env_file *f;
	int rc = env_open(path, ENV_APPEND, &f);

	if (rc)
		return rc;
	if (flock(f->fd, LOCK_EX | LOCK_NB)) {
		rc = errno == EWOULDBLOCK ? CF_EBUSY : from_errno(errno);
		env_close(f);
		return rc;
	}
	*out = f;
	return CF_OK;
}

/* --- clock ------------------------------------------------------------ */

static atomic_int_least64_t fixed_ms = -1;

int64_t env_now_ms(void)
{
	int64_t f = atomic_load_explicit(&fixed_ms, memory_order_relaxed);
	struct timespec ts;

	if (f >= 0)
		return f;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void env_clock_set(int64_t ms)
{
	atomic_store(&fixed_ms, ms < 0 ? -1 : ms);
}

void env_clock_advance(int64_t ms)
{
	int64_t f = atomic_load(&fixed_ms);

	if (f < 0)
		f = env_now_ms();
	atomic_store(&fixed_ms, f + ms);
}
