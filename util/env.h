/*
 * env.h: the OS layer.  Every file operation of meta/ (except SQLite's own
 * I/O) and engine/ goes through here, as LevelDB's Env: errno is read only
 * in env.c and mapped to CF_E* codes; EINTR is retried here; short writes
 * are completed here.
 *
 * Tests swap behaviour through the fault hooks below: make the Nth matching
 * operation fail with ENOSPC or EIO (or a preallocation with "not
 * supported"), make writes short, and simulate a power loss by dropping
 * every byte written since a file's last sync.
 *
 * The clock lives here too, so TTL tests can move time.
 *
 * Thread safety: every function may be called from any thread.  The fault
 * table is protected by one internal mutex (a leaf lock: nothing is called
 * while holding it).
 */
#ifndef CF_ENV_H
#define CF_ENV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* An open file.  Not shared between threads for writes; pread is safe
 * from any number of threads. */
struct env_file;

enum env_open_mode {
	ENV_READ = 0,		/* existing file, read only */
	ENV_WRITE_NEW = 1,	/* create or truncate, write only */
	ENV_APPEND = 2,		/* create if missing, append */
	ENV_RDWR = 3,		/* existing file, read and write */
	ENV_RDWR_NEW = 4	/* create or truncate, read and write (for
				 * env_map_rw) */
};

/* Opens path; *out owned by the caller until env_close().
 * Errors: CF_ENOTFOUND, CF_EIO, CF_ENOSPC, CF_ENOMEM. */
int env_open(const char *path, enum env_open_mode mode, struct env_file **out);
/* Maps f (opened ENV_READ, never to grow or change) whole: its reads
 * then copy from memory instead of calling pread(2); a page the kernel
 * cannot read fails the read with CF_EIO as pread would (env.c, "mapped
 * files").  The pages the page cache holds are mapped at once (no fault
 * at their first read), the others when read.  Reads past the size f
 * had here read nothing.  When mapping fails, reads go on with pread.
 * Errors: CF_EIO (fstat). */
int env_map(struct env_file *f);
/* Closes f (NULL is a no-op).  Returns the close(2) error, if any. */
int env_close(struct env_file *f);
/* Appends all n bytes at the end (ENV_WRITE_NEW/APPEND) or at the current
 * position.  Errors: CF_EIO, CF_ENOSPC (some prefix may have been written:
 * callers that care truncate back with env_truncate). */
int env_write(struct env_file *f, const void *p, size_t n);
/* As env_write, but at off (pwrite(2)), leaving the write offset where it
 * was: for a file written through env_map_write too, where a large record
 * costs less as one system call than as a page fault a page. */
int env_pwrite(struct env_file *f, uint64_t off, const void *p, size_t n);
/* As env_pwrite, of the cnt (at most ENV_IOV_MAX) pieces of iov one
 * after the other: one pwritev(2), no copy to gather them.  A fault
 * point as one write (a short one stores the first half of the whole). */
#define ENV_IOV_MAX 16
int env_pwritev(struct env_file *f, uint64_t off, const struct iovec *iov,
		int cnt);
/* Reads exactly n bytes at off.  Errors: CF_EIO, CF_ECORRUPT when the file
 * ends before off + n. */
int env_pread(struct env_file *f, void *p, size_t n, uint64_t off);
/* Reads up to n bytes at off into p; *got says how many (0 at EOF). */
int env_pread_some(struct env_file *f, void *p, size_t n, uint64_t off,
		   size_t *got);
/* fdatasync(2).  It covers bytes stored through env_map_write too: on
 * Linux fsync and fdatasync write back the file's dirty pages however
 * they were dirtied, so no msync(2) is needed.  Errors: CF_EIO. */
int env_sync(struct env_file *f);
/* ftruncate(2).  The part of an env_map_rw mapping past the new size
 * stays mapped, but storing there is CF_EIO until the file grows again. */
int env_truncate(struct env_file *f, uint64_t size);

/*
 * Preallocation and writable mappings, for a log that appends with a
 * memcpy instead of a write(2) per record (engine/wal.c).
 *
 * env_fallocate reserves the disk blocks of f's first size bytes
 * (fallocate(2), mode 0) and makes f at least that long; the new bytes
 * read as zeros.  From then on f's data ends where its last write or
 * env_truncate ended, not at its size, as far as the power-loss
 * simulation is concerned: env_sync makes up to that end durable, and
 * env_drop_unsynced zeros the bytes between the synced end and the size
 * (the size stays, as it would after a real power loss once a sync made
 * it durable).  A fault-injection point (ENV_OP_ALLOC): an injected
 * error is returned as fallocate(2)'s own would be, the file unchanged,
 * so CF_EINVAL there makes a file system without preallocation.
 * Errors: CF_ENOSPC; CF_EINVAL when the file system cannot preallocate
 * (write without it); CF_EIO.
 */
int env_fallocate(struct env_file *f, uint64_t size);
/* Maps f's first len bytes shared and writable, for env_map_write; f was
 * opened ENV_RDWR_NEW or ENV_RDWR.  len may run past the file's end, but
 * only bytes below the end may be stored.  A second call replaces the
 * mapping; env_close unmaps.  Errors: CF_ENOMEM or CF_EIO (mmap failed:
 * write with env_write instead). */
int env_map_rw(struct env_file *f, uint64_t len);
/* Stores n bytes at off through f's env_map_rw mapping: a memcpy, no
 * system call, but otherwise as env_write: the ENV_OP_WRITE faults apply
 * (a short write stores the first half of the bytes, then fails), the
 * power-loss simulation counts the bytes, and a page the kernel cannot
 * back (past the file's end, say, or a block it cannot allocate) is
 * CF_EIO, not a SIGBUS (env.c, "mapped files").  Errors: CF_EIO,
 * CF_EINVAL (past the mapping), and injected ones; some prefix may have
 * been stored. */
int env_map_write(struct env_file *f, uint64_t off, const void *p, size_t n);
/* Lets the pages of [off, off + len) of f's env_map_rw mapping go from
 * the process (madvise MADV_DONTNEED): what was stored stays in the file
 * and the page cache, and the next store there maps the page again; the
 * process's resident size stops counting them.  off and len are
 * multiples of the page size.  Errors: CF_EINVAL. */
int env_map_release(struct env_file *f, uint64_t off, uint64_t len);
/* The file's size in bytes, or a negative CF_E* code. */
int64_t env_size(struct env_file *f);
/* Current write offset (bytes written since open plus initial size for
 * ENV_APPEND). */
uint64_t env_offset(const struct env_file *f);
const char *env_path(const struct env_file *f);

/* Path-level operations. */
int env_exists(const char *path);	/* 1, 0 */
int env_file_size(const char *path, uint64_t *size);
int env_mkdir(const char *path, int mode);	/* ok if it exists */
int env_mkdir_p(const char *path, int mode);
int env_unlink(const char *path);	/* CF_ENOTFOUND if missing */
int env_rmdir(const char *path);
/* rm -r; missing path is not an error. */
int env_remove_tree(const char *path);
int env_rename(const char *from, const char *to);
/* fsync of a directory, after creating or renaming files in it. */
int env_sync_dir(const char *path);
/* Calls fn(name, arg) for each entry of dir except . and .., in no
 * particular order; stops and returns fn's value when it is non-zero.
 * fn may create or remove entries of dir. */
int env_list_dir(const char *dir, int (*fn)(const char *name, void *arg),
		 void *arg);
/* Reads a whole small file into *out (malloc'd, NUL-terminated; caller
 * frees) and its length into *len. */
int env_read_file(const char *path, char **out, size_t *len);
/* Writes a whole small file atomically: temp file, fsync, rename, fsync
 * of the directory. */
int env_write_file_atomic(const char *path, const void *p, size_t n);
/* Takes an exclusive advisory lock on path (created if missing); the
 * returned file holds it until env_close().  CF_EBUSY when held. */
int env_lock_file(const char *path, struct env_file **out);
/* Creates path empty, readable by its owner only, if it is missing (a
 * file another library fills, such as the SQLite catalog, which would
 * otherwise be made 0644; SQLite gives its -wal and -shm files the
 * database's mode).  Not tracked for the power-loss simulation. */
int env_create_private(const char *path);

/* --- the clock ------------------------------------------------------- */

/* Milliseconds since the epoch; tests may replace the source. */
int64_t env_now_ms(void);
/* Sets a fixed clock (ms), or restores the real one with ms < 0. */
void env_clock_set(int64_t ms);
void env_clock_advance(int64_t ms);

/* --- fault injection (tests only) ------------------------------------ */

enum env_fault_op {
	ENV_OP_OPEN = 1 << 0,
	ENV_OP_WRITE = 1 << 1,
	ENV_OP_SYNC = 1 << 2,
	ENV_OP_READ = 1 << 3,
	ENV_OP_RENAME = 1 << 4,
	ENV_OP_ALLOC = 1 << 5,
	ENV_OP_ANY = 0xff
};

/*
 * Arms a fault: from the (skip+1)-th operation in ops on a path containing
 * path_substr (NULL: any path), fail `count` times (count < 0: until
 * cleared) with err (CF_ENOSPC or CF_EIO; any negative CF_E* code is
 * taken, e.g. CF_EINVAL for ENV_OP_ALLOC).  With short_write set, a failing
 * write first writes half of its bytes.  Every armed fault counts each
 * operation it matches.  Returns a fault id (>= 0), or CF_EINVAL (err not
 * negative, skip negative) or CF_ENOMEM (table full).  Faults are checked
 * by env_open, env_lock_file (ENV_OP_OPEN), env_write, env_pwrite,
 * env_map_write (WRITE), env_sync, env_sync_dir (SYNC), env_pread* (READ),
 * env_rename (RENAME, on either path) and env_fallocate (ALLOC).
 */
int env_fault_add(unsigned ops, const char *path_substr, int skip, int count,
		  int err, int short_write);
void env_fault_clear(void);
/* How many operations failed by injection so far. */
uint64_t env_fault_hits(void);

/*
 * Power-loss simulation.  While tracking is on, env remembers for each file
 * written the size it had at its last env_sync() (or at creation), and
 * env_drop_unsynced() truncates every tracked file back to that size and
 * deletes files created and never synced (and whose directory was never
 * synced after creation).  Rename is treated as durable.  A file opened
 * before tracking began counts as synced up to its size when first
 * written afterwards.  Files are never extended by a drop.  A file that
 * env_fallocate extended keeps its size and reads zeros from its synced
 * end on (see env_fallocate).  Turning tracking off forgets everything.
 */
void env_track_unsynced(int on);
int env_drop_unsynced(void);

#endif
