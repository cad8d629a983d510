/*
 * memfs.c: the floor for the filesystem benchmark.  A minimal in-memory
 * filesystem on the libfuse3 low-level API, set up the way cellfs sets
 * up the kernel (fs/file.c, fs/inval.c, fs/ops.c, fs/main.c), so that the
 * same workload makes the same kernel round trips with no storage behind them:
 *  - files are opened direct_io (every read and write is a request),
 *    read-only opens without flush, as cellfs opens cells;
 *  - names and attributes are cached CACHE_S = 10 s, created files too;
 *  - init asks for ATOMIC_O_TRUNC and no writeback cache, readdirplus
 *    stays at libfuse's default (auto);
 *  - fuse_session_loop_mt with the same clone_fd and idle-thread
 *    settings.
 *
 *   memfs [-f] [-d] [-o OPT,...] MOUNTPOINT
 *
 * Directories and regular files only; one mutex for everything.  Inodes
 * are struct ino pointers; an inode lives while it is linked, looked up
 * by the kernel or open.  On unmount it prints the number of requests of
 * each kind to stderr (the round trips a workload made).
 */
#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define CACHE_S 10.0

struct ino {
	struct ino *parent;	/* NULL once unlinked (and for the root) */
	struct ino *hnext;	/* chain of the name table */
	struct ino *prev, *next;	/* siblings, in creation order */
	struct ino *first, *last;	/* children of a directory */
	char *name;
	mode_t mode;
	uint64_t nlookup;
	unsigned nopen;
	size_t nchild;
	char *data;
	size_t size, cap;
	struct timespec mtime, ctime;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct ino root = { .mode = S_IFDIR | 0755, .nlookup = 1 };
static struct ino **htab;
static size_t hcap, hcount;

/* Requests by kind, reported at unmount. */
enum { R_LOOKUP, R_FORGET, R_GETATTR, R_SETATTR, R_MKDIR, R_RMDIR,
       R_UNLINK, R_RENAME, R_CREATE, R_OPEN, R_READ, R_WRITE, R_FLUSH,
       R_RELEASE, R_FSYNC, R_OPENDIR, R_READDIR, R_READDIRPLUS,
       R_RELEASEDIR, R_STATFS, R_N };
static const char *const rname[R_N] = {
	"lookup", "forget", "getattr", "setattr", "mkdir", "rmdir",
	"unlink", "rename", "create", "open", "read", "write", "flush",
	"release", "fsync", "opendir", "readdir", "readdirplus",
	"releasedir", "statfs"
};
static uint64_t reqs[R_N];

static void count(int r)
{
	__atomic_fetch_add(&reqs[r], 1, __ATOMIC_RELAXED);
}

static struct ino *ino_of(fuse_ino_t i)
{
	return i == FUSE_ROOT_ID ? &root : (struct ino *)(uintptr_t)i;
}

static fuse_ino_t num_of(struct ino *n)
{
	return n == &root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
}

static int is_dir(const struct ino *n)
{
	return S_ISDIR(n->mode);
}

/* --- the name table: (parent, name) -> inode --------------------------- */

static size_t hslot(const struct ino *parent, const char *name, size_t cap)
{
	uint64_t h = (uintptr_t)parent * 0x9E3779B97F4A7C15ull;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001B3ull;
	return (size_t)(h % cap);
}

/* With mu held. */
static struct ino *find(struct ino *parent, const char *name)
{
	struct ino *n;

	if (!hcap)
		return NULL;
	for (n = htab[hslot(parent, name, hcap)]; n; n = n->hnext)
		if (n->parent == parent && !strcmp(n->name, name))
			return n;
	return NULL;
}

/* With mu held: links n (parent and name set) into the table and its
 * parent's list.  0 or ENOMEM. */
static int link_ino(struct ino *n)
{
	struct ino **nt, *e, *p = n->parent;
	size_t i, s;

	if (hcount >= hcap / 2) {
		size_t ncap = hcap ? 2 * hcap : 1024;
		if (!(nt = calloc(ncap, sizeof *nt)))
			return ENOMEM;
		for (i = 0; i < hcap; i++)
			while ((e = htab[i])) {
				htab[i] = e->hnext;
				s = hslot(e->parent, e->name, ncap);
				e->hnext = nt[s];
				nt[s] = e;
			}
		free(htab);
		htab = nt;
		hcap = ncap;
	}
	s = hslot(p, n->name, hcap);
	n->hnext = htab[s];
	htab[s] = n;
	hcount++;
	n->prev = p->last;
	n->next = NULL;
	if (p->last)
		p->last->next = n;
	else
		p->first = n;
	p->last = n;
	p->nchild++;
	return 0;
}

static void ino_free(struct ino *n)
{
	free(n->name);
	free(n->data);
	free(n);
}

/* With mu held: frees n when nothing refers to it any more. */
static void maybe_free(struct ino *n)
{
	if (n != &root && !n->parent && !n->nlookup && !n->nopen)
		ino_free(n);
}

/* With mu held: takes n out of its directory (the inode may live on). */
static void unlink_ino(struct ino *n)
{
	struct ino **pp, *p = n->parent;

	for (pp = &htab[hslot(p, n->name, hcap)]; *pp != n;
	     pp = &(*pp)->hnext)
		;
	*pp = n->hnext;
	hcount--;
	if (n->prev)
		n->prev->next = n->next;
	else
		p->first = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		p->last = n->prev;
	p->nchild--;
	n->parent = NULL;
	n->prev = n->next = NULL;
}

/* --- attributes -------------------------------------------------------- */

static void fill_stat(const struct ino *n, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_ino = num_of((struct ino *)n);
	st->st_mode = n->mode;
	st->st_nlink = is_dir(n) ? 2 : 1;
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_size = (off_t)n->size;
	st->st_blksize = 4096;
	st->st_blocks = (blkcnt_t)((n->size + 511) / 512);
	st->st_mtim = n->mtime;
	st->st_ctim = n->ctime;
	st->st_atim = n->mtime;
}

static void touch(struct ino *n)
{
	clock_gettime(CLOCK_REALTIME, &n->mtime);
	n->ctime = n->mtime;
}

/* With mu held: the entry reply for n, counting the lookup. */
static void entry_of(struct ino *n, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof *e);
	e->ino = num_of(n);
	e->attr_timeout = e->entry_timeout = CACHE_S;
	fill_stat(n, &e->attr);
	n->nlookup++;
}

static void reply_entry(fuse_req_t req, struct ino *n,
			struct fuse_entry_param *e)
{
	if (fuse_reply_entry(req, e) != 0) {
		pthread_mutex_lock(&mu);
		n->nlookup--;
		maybe_free(n);
		pthread_mutex_unlock(&mu);
	}
}

/* --- operations -------------------------------------------------------- */

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	struct ino *n;

	count(R_LOOKUP);
	pthread_mutex_lock(&mu);
	n = find(ino_of(parent), name);
	if (n)
		entry_of(n, &e);
	pthread_mutex_unlock(&mu);
	if (!n)
		fuse_reply_err(req, ENOENT);
	else
		reply_entry(req, n, &e);
}

static void forget_one(fuse_ino_t i, uint64_t nlookup)
{
	struct ino *n = ino_of(i);

	if (n == &root)
		return;
	n->nlookup -= nlookup < n->nlookup ? nlookup : n->nlookup;
	maybe_free(n);
}

static void op_forget(fuse_req_t req, fuse_ino_t i, uint64_t nlookup)
{
	count(R_FORGET);
	pthread_mutex_lock(&mu);
	forget_one(i, nlookup);
	pthread_mutex_unlock(&mu);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t cnt,
			    struct fuse_forget_data *f)
{
	size_t k;

	count(R_FORGET);
	pthread_mutex_lock(&mu);
	for (k = 0; k < cnt; k++)
		forget_one(f[k].ino, f[k].nlookup);
	pthread_mutex_unlock(&mu);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t i,
		       struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	count(R_GETATTR);
	pthread_mutex_lock(&mu);
	fill_stat(ino_of(i), &st);
	pthread_mutex_unlock(&mu);
	fuse_reply_attr(req, &st, CACHE_S);
}

static int resize(struct ino *n, size_t len)
{
	char *p;
	size_t nc;

	if (len > n->cap) {
		nc = n->cap ? n->cap : 64;
		while (nc < len)
			nc *= 2;
		if (!(p = realloc(n->data, nc)))
			return ENOMEM;
		n->data = p;
		n->cap = nc;
	}
	if (len > n->size)
		memset(n->data + n->size, 0, len - n->size);
	n->size = len;
	return 0;
}

static void op_setattr(fuse_req_t req, fuse_ino_t i, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct ino *n = ino_of(i);
	struct stat st;
	int err = 0;

	(void)fi;
	count(R_SETATTR);
	pthread_mutex_lock(&mu);
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (is_dir(n))
			err = EISDIR;
		else if (!(err = resize(n, (size_t)attr->st_size)))
			touch(n);
	}
	if (!err && (to_set & FUSE_SET_ATTR_MODE))
		n->mode = (n->mode & S_IFMT) | (attr->st_mode & 07777);
	if (!err && (to_set & FUSE_SET_ATTR_MTIME_NOW))
		touch(n);
	else if (!err && (to_set & FUSE_SET_ATTR_MTIME))
		n->mtime = attr->st_mtim;
	fill_stat(n, &st);
	pthread_mutex_unlock(&mu);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, CACHE_S);
}

/* With mu held: a new inode name under parent; 0 or errno. */
static int make(struct ino *parent, const char *name, mode_t mode,
		struct ino **out)
{
	struct ino *n;

	if (!is_dir(parent))
		return ENOTDIR;
	if (strlen(name) > 255)
		return ENAMETOOLONG;
	if (find(parent, name))
		return EEXIST;
	if (!(n = calloc(1, sizeof *n)) || !(n->name = strdup(name))) {
		free(n);
		return ENOMEM;
	}
	n->mode = mode;
	n->parent = parent;
	touch(n);
	if (link_ino(n)) {
		ino_free(n);
		return ENOMEM;
	}
	touch(parent);
	*out = n;
	return 0;
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	struct fuse_entry_param e;
	struct ino *n;
	int err;

	count(R_MKDIR);
	pthread_mutex_lock(&mu);
	err = make(ino_of(parent), name, S_IFDIR | (mode & 07777), &n);
	if (!err)
		entry_of(n, &e);
	pthread_mutex_unlock(&mu);
	if (err)
		fuse_reply_err(req, err);
	else
		reply_entry(req, n, &e);
}

static void remove_common(fuse_req_t req, fuse_ino_t parent,
			  const char *name, int dir)
{
	struct ino *n;
	int err = 0;

	pthread_mutex_lock(&mu);
	n = find(ino_of(parent), name);
	if (!n)
		err = ENOENT;
	else if (dir && !is_dir(n))
		err = ENOTDIR;
	else if (!dir && is_dir(n))
		err = EISDIR;
	else if (dir && n->nchild)
		err = ENOTEMPTY;
	if (!err) {
		touch(ino_of(parent));
		unlink_ino(n);
		maybe_free(n);
	}
	pthread_mutex_unlock(&mu);
	fuse_reply_err(req, err);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	count(R_RMDIR);
	remove_common(req, parent, name, 1);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	count(R_UNLINK);
	remove_common(req, parent, name, 0);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	struct ino *n, *old, *np = ino_of(newparent);
	char *nn = NULL;
	int err = 0;

	count(R_RENAME);
	if (flags) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	pthread_mutex_lock(&mu);
	n = find(ino_of(parent), name);
	old = find(np, newname);
	if (!n)
		err = ENOENT;
	else if (n == old)
		err = 0;
	else if (old && is_dir(old) && !is_dir(n))
		err = EISDIR;
	else if (old && !is_dir(old) && is_dir(n))
		err = ENOTDIR;
	else if (old && old->nchild)
		err = ENOTEMPTY;
	else if (!(nn = strdup(newname)))
		err = ENOMEM;
	if (!err && n != old) {
		if (old) {
			unlink_ino(old);
			maybe_free(old);
		}
		unlink_ino(n);
		free(n->name);
		n->name = nn;
		n->parent = np;
		if (link_ino(n)) {	/* the table could not grow */
			n->parent = NULL;
			maybe_free(n);
			err = ENOMEM;
		}
		n->ctime = np->mtime;
	}
	pthread_mutex_unlock(&mu);
	fuse_reply_err(req, err);
}

/* As cellfs opens cells. */
static void open_flags(struct fuse_file_info *fi)
{
	fi->direct_io = 1;
	fi->keep_cache = 0;
	fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY;
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	struct ino *n;
	int err;

	count(R_CREATE);
	pthread_mutex_lock(&mu);
	err = make(ino_of(parent), name, S_IFREG | (mode & 07777), &n);
	if (err == EEXIST && !(fi->flags & O_EXCL)) {
		n = find(ino_of(parent), name);
		err = is_dir(n) ? EISDIR : 0;
		if (!err && (fi->flags & O_TRUNC))
			n->size = 0;
	}
	if (!err) {
		entry_of(n, &e);
		n->nopen++;
	}
	pthread_mutex_unlock(&mu);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = 0;
	open_flags(fi);
	if (fuse_reply_create(req, &e, fi) != 0) {
		pthread_mutex_lock(&mu);
		n->nlookup--;
		n->nopen--;
		maybe_free(n);
		pthread_mutex_unlock(&mu);
	}
}

static void op_open(fuse_req_t req, fuse_ino_t i, struct fuse_file_info *fi)
{
	struct ino *n = ino_of(i);
	int err = 0;

	count(R_OPEN);
	pthread_mutex_lock(&mu);
	if (is_dir(n))
		err = EISDIR;
	else {
		if ((fi->flags & O_TRUNC) && (fi->flags & O_ACCMODE))
			n->size = 0;
		n->nopen++;
	}
	pthread_mutex_unlock(&mu);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	open_flags(fi);
	if (fuse_reply_open(req, fi) != 0) {
		pthread_mutex_lock(&mu);
		n->nopen--;
		maybe_free(n);
		pthread_mutex_unlock(&mu);
	}
}

static void op_read(fuse_req_t req, fuse_ino_t i, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct ino *n = ino_of(i);
	char *buf = NULL;
	size_t len = 0;

	(void)fi;
	count(R_READ);
	pthread_mutex_lock(&mu);
	if ((size_t)off < n->size) {
		len = n->size - (size_t)off < size ? n->size - (size_t)off
						   : size;
		buf = malloc(len);
		if (buf)
			memcpy(buf, n->data + off, len);
	}
	pthread_mutex_unlock(&mu);
	if (len && !buf)
		fuse_reply_err(req, ENOMEM);
	else
		fuse_reply_buf(req, buf, len);
	free(buf);
}

static void op_write(fuse_req_t req, fuse_ino_t i, const char *p,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct ino *n = ino_of(i);
	int err = 0;

	count(R_WRITE);
	pthread_mutex_lock(&mu);
	if (fi->flags & O_APPEND)
		off = (off_t)n->size;
	if ((size_t)off + size > n->size)
		err = resize(n, (size_t)off + size);
	if (!err) {
		memcpy(n->data + off, p, size);
		touch(n);
	}
	pthread_mutex_unlock(&mu);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_write(req, size);
}

static void op_flush(fuse_req_t req, fuse_ino_t i, struct fuse_file_info *fi)
{
	(void)i;
	(void)fi;
	count(R_FLUSH);
	fuse_reply_err(req, 0);
}

static void op_release(fuse_req_t req, fuse_ino_t i,
		       struct fuse_file_info *fi)
{
	struct ino *n = ino_of(i);

	(void)fi;
	count(R_RELEASE);
	pthread_mutex_lock(&mu);
	n->nopen--;
	maybe_free(n);
	pthread_mutex_unlock(&mu);
	fuse_reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t i, int datasync,
		     struct fuse_file_info *fi)
{
	(void)i;
	(void)datasync;
	(void)fi;
	count(R_FSYNC);
	fuse_reply_err(req, 0);
}

/* An open directory: the names and inodes it had at opendir (each
 * inode pinned), so offsets stay valid while entries come and go. */
struct dirh {
	size_t n;
	struct { char *name; struct ino *ino; } e[];
};

static void op_opendir(fuse_req_t req, fuse_ino_t i,
		       struct fuse_file_info *fi)
{
	struct ino *dir = ino_of(i), *c;
	struct dirh *d;
	size_t k = 0;

	count(R_OPENDIR);
	pthread_mutex_lock(&mu);
	d = malloc(sizeof *d + dir->nchild * sizeof d->e[0]);
	for (c = dir->first; d && c; c = c->next) {
		if (!(d->e[k].name = strdup(c->name)))
			break;
		d->e[k++].ino = c;
		c->nopen++;
	}
	if (d)
		d->n = k;
	if (d && c) {		/* out of memory: unpin what was taken */
		while (k--) {
			d->e[k].ino->nopen--;
			free(d->e[k].name);
		}
		free(d);
		d = NULL;
	}
	pthread_mutex_unlock(&mu);
	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	if (fuse_reply_open(req, fi) != 0) {
		pthread_mutex_lock(&mu);
		for (k = 0; k < d->n; k++) {
			d->e[k].ino->nopen--;
			maybe_free(d->e[k].ino);
			free(d->e[k].name);
		}
		pthread_mutex_unlock(&mu);
		free(d);
	}
}

/* Offsets: 0 ".", 1 "..", 2 + k the k-th entry of the snapshot. */
static void readdir_common(fuse_req_t req, fuse_ino_t i, size_t size,
			   off_t off, struct fuse_file_info *fi, int plus)
{
	struct dirh *d = (struct dirh *)(uintptr_t)fi->fh;
	struct fuse_entry_param e;
	struct ino *n;
	const char *name;
	char *out = malloc(size);
	size_t used = 0, ent;

	if (!out) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&mu);
	for (; (size_t)off < d->n + 2; off++) {
		memset(&e, 0, sizeof e);
		if (off < 2) {
			name = off ? ".." : ".";
			n = NULL;
			e.attr.st_mode = S_IFDIR;
			e.attr.st_ino = off + 1;
		} else {
			n = d->e[off - 2].ino;
			name = d->e[off - 2].name;
			fill_stat(n, &e.attr);
		}
		if (!plus) {
			ent = fuse_add_direntry(req, out + used, size - used,
						name, &e.attr, off + 1);
		} else {
			if (n && n->parent) {	/* still linked */
				e.ino = num_of(n);
				e.attr_timeout = e.entry_timeout = CACHE_S;
			}
			ent = fuse_add_direntry_plus(req, out + used,
						     size - used, name, &e,
						     off + 1);
			if (ent <= size - used && e.ino)
				n->nlookup++;
		}
		if (ent > size - used)
			break;
		used += ent;
	}
	pthread_mutex_unlock(&mu);
	(void)i;
	fuse_reply_buf(req, out, used);
	free(out);
}

static void op_readdir(fuse_req_t req, fuse_ino_t i, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	count(R_READDIR);
	readdir_common(req, i, size, off, fi, 0);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t i, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	count(R_READDIRPLUS);
	readdir_common(req, i, size, off, fi, 1);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t i,
			  struct fuse_file_info *fi)
{
	struct dirh *d = (struct dirh *)(uintptr_t)fi->fh;
	size_t k;

	(void)i;
	count(R_RELEASEDIR);
	pthread_mutex_lock(&mu);
	for (k = 0; k < d->n; k++) {
		d->e[k].ino->nopen--;
		maybe_free(d->e[k].ino);
		free(d->e[k].name);
	}
	pthread_mutex_unlock(&mu);
	free(d);
	fuse_reply_err(req, 0);
}

static void op_statfs(fuse_req_t req, fuse_ino_t i)
{
	struct statvfs sv;

	(void)i;
	count(R_STATFS);
	memset(&sv, 0, sizeof sv);
	sv.f_bsize = sv.f_frsize = 4096;
	sv.f_blocks = sv.f_bfree = sv.f_bavail = 1u << 30;
	sv.f_files = sv.f_ffree = sv.f_favail = 1u << 30;
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.mkdir = op_mkdir,
	.rmdir = op_rmdir,
	.unlink = op_unlink,
	.rename = op_rename,
	.create = op_create,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.release = op_release,
	.fsync = op_fsync,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.releasedir = op_releasedir,
	.fsyncdir = op_fsync,
	.statfs = op_statfs,
};

static void free_tree(struct ino *dir)
{
	struct ino *c, *next;

	for (c = dir->first; c; c = next) {
		next = c->next;
		if (is_dir(c))
			free_tree(c);
		ino_free(c);
	}
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts fo;
	struct fuse_loop_config lc;
	struct fuse_session *se = NULL;
	int ret = 1, mounted = 0, handlers = 0, r;

	memset(&fo, 0, sizeof fo);
	if (fuse_parse_cmdline(&args, &fo) != 0)
		goto out;
	if (fo.show_help || !fo.mountpoint) {
		printf("usage: %s [-f] [-d] [-o OPT,...] MOUNTPOINT\n",
		       argv[0]);
		ret = !fo.show_help;
		goto out;
	}
	clock_gettime(CLOCK_REALTIME, &root.mtime);
	root.ctime = root.mtime;
	se = fuse_session_new(&args, &ops, sizeof ops, NULL);
	if (!se)
		goto out;
	if (fuse_set_signal_handlers(se) != 0)
		goto out;
	handlers = 1;
	if (fuse_session_mount(se, fo.mountpoint) != 0)
		goto out;
	mounted = 1;
	if (fuse_daemonize(fo.foreground) != 0)
		goto out;
	if (fo.singlethread) {
		fuse_session_loop(se);
	} else {
		lc.clone_fd = fo.clone_fd;
		lc.max_idle_threads = fo.max_idle_threads == UINT_MAX ?
				      10 : fo.max_idle_threads;
		fuse_session_loop_mt(se, &lc);
	}
	ret = 0;
	fprintf(stderr, "memfs requests:");
	for (r = 0; r < R_N; r++)
		if (reqs[r])
			fprintf(stderr, " %s=%llu", rname[r],
				(unsigned long long)reqs[r]);
	fprintf(stderr, "\n");
out:
	if (mounted)
		fuse_session_unmount(se);
	if (handlers)
		fuse_remove_signal_handlers(se);
	if (se)
		fuse_session_destroy(se);
	free_tree(&root);
	free(htab);
	free(fo.mountpoint);
	fuse_opt_free_args(&args);
	return ret;
}
