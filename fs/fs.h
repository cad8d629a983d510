/*
 * fs.h: the FUSE daemon's face: what main.c starts and stops it with
 * (fs_ops, fs_setup, fs_set_session, fs_teardown ...), and the small
 * interfaces of the files beside the tree (fs/perm.c, budget.c, batch.c,
 * tsdfs.c, cellq.c, errmap.c).  The tree's own structures and lock order
 * are in fs/internal.h, control's interface in fs/control.h.  fs/ turns
 * paths and errno into engine calls (engine/cellfs.h) and back; nothing
 * else sees FUSE.
 */
#ifndef CF_FS_H
#define CF_FS_H

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

#include <sys/stat.h>

#include "engine/cellfs.h"
#include "util/buf.h"
#include "util/escape.h"

/* The errno for a CF_E* code (0 for CF_OK); the one mapping table. */
int fs_errno(int rc);
/* Replies err to req and logs one line, fmt's text and strerror(err):
 * every refused operation says what and why (fs/errmap.c). */
__attribute__((format(printf, 3, 4)))
void fs_fail(fuse_req_t req, int err, const char *fmt, ...);

/* The low-level operations of the tree of SPEC section 3. */
extern const struct fuse_lowlevel_ops fs_ops;

/* Serves db (borrowed; the caller closes it after the session ends);
 * datadir is reported by statfs, max_value bounds open files. */
void fs_setup(cf_db *db, const char *datadir, uint64_t max_value);
/* Frees the inode table, staged files and empty rows. */
void fs_teardown(void);

/* The session whose kernel caches fs keeps true (fs_ops' session), or
 * NULL to stop the invalidator thread before the session is destroyed. */
void fs_set_session(struct fuse_session *se);
/* With always, every listing page carries attributes (find, du: no
 * lookup per entry; the kernel then keeps an inode, and we a node, per
 * entry listed); else the kernel asks for them when it sees stats follow
 * a listing (ls -l, rsync).  Before the session starts. */
void fs_set_readdirplus(int always);
/* How long the kernel may keep names and attributes it was given
 * (default 10 s; 0: it asks every time).  The daemon invalidates what
 * it changes itself, so this bounds only the staleness of what it cannot
 * see change (a TTL family's cells are never cached).  Before the
 * session starts. */
void fs_set_cache_timeout(unsigned seconds);
/* Everything cached of table changed (a .batch write of many rows, a
 * schema change) or the table is gone (dropped). */
void fs_table_changed(const char *table, int dropped);
/* rows[0..n) of table changed (a .batch write): their cells and row
 * directories lose the names and attributes the kernel holds. */
void fs_rows_changed(const char *table, const struct buf *rows, size_t n);

/* --- who may do what (fs/perm.c) -------------------------------------- */
struct fs_perm_opts {
	uid_t uid;		/* owner of what has no owner of its own */
	gid_t gid;
	mode_t umask;		/* taken from 0777 (directories) and 0666 */
	int net_trust;		/* -o tsd_net_trust: the network ports let
				 * every client do everything */
};
/* What a node's attributes carry (st_mode's type and bits, owner). */
enum fs_perm_class {
	FP_DATA_DIR,	/* root, table, region, row ... directories */
	FP_DATA_FILE,	/* cells, staged files, .batch, tsd files */
	FP_CTL,		/* .ctl, .schema: writable by the owner only */
	FP_STATUS	/* .stats, .log, .regions: read-only */
};
/* Reads every access row of db (borrowed until fs_perm_teardown); CF_*
 * code. */
int fs_perm_setup(cf_db *db, const struct fs_perm_opts *o);
void fs_perm_teardown(void);
/* Fills st_mode, st_uid, st_gid of a node of class c under top, the
 * table's name, "tsd", or "" above them (the mount's defaults). */
void fs_perm_attrs(const char *top, enum fs_perm_class c, struct stat *st);
/* chmod/chown of top's directory (mode, uid, gid: NULL when not set);
 * kept in the catalog.  0 or an errno with *why for .log. */
int fs_perm_set(const char *top, const mode_t *mode, const uid_t *uid,
		const gid_t *gid, const char **why);
/* top was dropped or made anew: back to the defaults. */
void fs_perm_forget(const char *top);
/* What a client of the network ports may do (net/net.h's net_access_fn):
 * read or write MNT/tsd as the kernel lets a process do it, by tsd/'s
 * mode and owner: a user of this host as that user (root anything), a
 * peer of another host as "others".  0 or EACCES with why. */
int fs_perm_tsd_net(int local, uid_t uid, int write, char *why, size_t n);

/* --- memory of files open for writing (fs/budget.c) -------------------- */
#define FS_WRITE_BUFFERS_DEFAULT (1ull << 30)
/* Before the first request. */
void fs_budget_setup(uint64_t limit);
/* Charges n bytes: CF_OK, or CF_ENOSPC (counted) when the bytes held
 * would pass the limit. */
int fs_budget_take(uint64_t n);
void fs_budget_give(uint64_t n);
/* Bytes held, the limit, charges refused. */
void fs_budget_stats(uint64_t *held, uint64_t *limit, uint64_t *refused);

/* Request counters of the daemon, for MNT/.stats. */
struct fs_counters {
	uint64_t lookups;		/* LOOKUP requests */
	uint64_t getattrs;		/* GETATTR requests */
	uint64_t readdirplus_entries;	/* entries given with attributes */
	uint64_t names_too_long;	/* names refused: over 255 bytes */
	uint64_t names_unlisted;	/* keys left out of listings: their
					 * escaped name is over 255 bytes */
	uint64_t inodes;		/* nodes the daemon keeps for the
					 * kernel's inodes and open files */
	uint64_t notify_refused;	/* cache invalidations the kernel
					 * refused (an error but ENOENT) */
	uint64_t forgets;		/* inodes the kernel forgot (FORGET
					 * requests' entries) */
};
void fs_counters(struct fs_counters *c);

/* Control and status files (SPEC section 5): fs/control.h. */

/* Applies one write(2) of T/.batch, p[0..len): whole lines, parsed
 * before anything is applied (fs/batch.c).  CF_EINVAL on a bad line,
 * CF_ECANCELED when a check fails (nothing applied either way); *why
 * (static or thread-local) says which line and why. */
int fs_batch_write(cf_table *t, const char *p, size_t len, const char **why);

/* --- MNT/tsd/ (SPEC section 6; fs/tsdfs.c) ------------------------------
 * The tree (fs/internal.h) keeps one node kind for the tsd subtree and
 * asks these functions what a node means.  Functions returning int
 * return 0 or an errno; those with why fill it with the reason for
 * MNT/.log. */
enum fs_tsd_node {
	FT_DIR, FT_PUT, FT_METRICS, FT_METRIC, FT_TAGK, FT_TAGV,
	FT_KNAME, FT_VNAME, FT_Q, FT_QUERY, FT_LOOKUP, FT_LOOKUPQ,
	FT_NOTE, FT_NOTES, FT_NOTESQ, FT_UMETAS, FT_UMETAQ, FT_TMETAS,
	FT_TMETAQ, FT_TREES, FT_TREEQ
};
struct fs_tsd_file;

/* Serves MNT/tsd/ from db (borrowed); the tsd layer opens at first use. */
void fs_tsd_setup(cf_db *db);
/* The memory of tsd's recent points (-o tsd_recent=BYTES; 0: none),
 * before the layer is first used. */
void fs_tsd_set_recent(uint64_t bytes);
/* What writes keep of the meta data (-o tsd_tsuid_tracking,
 * tsd_realtime_ts, tsd_tsuid_incrementing, tsd_realtime_uid: struct
 * tsd_options), before the layer is first used. */
void fs_tsd_set_meta(int tracking, int realtime, int incrementing,
		     int realtime_uid);
/* Closes the tsd layer; before the engine closes. */
void fs_tsd_teardown(void);
/* The daemon's tsd handle, shared with the network servers (net/net.h's
 * net_tsd_fn): with create 0, CF_ENOTFOUND while no tsd table exists. */
struct tsd;
int fs_tsd_get(int create, struct tsd **out);
int fs_tsd_is_dir(enum fs_tsd_node k);
/* The meaning of name under parent: *kind, and in arg the unescaped name
 * or the query (NUL-terminated beyond len). */
int fs_tsd_resolve(enum fs_tsd_node parent, const char *name,
		   enum fs_tsd_node *kind, struct buf *arg, const char **why);
/* Whether the node exists; st_size of what it knows (else 0). */
int fs_tsd_stat(enum fs_tsd_node k, const struct buf *arg, struct stat *st,
		char *why, size_t whylen);
/* Calls add for every entry of directory k (not . and ..); CF_* code. */
int fs_tsd_list(enum fs_tsd_node k,
		int (*add)(void *ctx, const char *name, size_t len, int dir),
		void *ctx);
/* Opens a file of the subtree with open(2) flags; *out is the caller's
 * until fs_tsd_file_close(). */
int fs_tsd_open(enum fs_tsd_node k, const struct buf *arg, int flags,
		struct fs_tsd_file **out, char *why, size_t whylen);
int fs_tsd_read(struct fs_tsd_file *f, void *dst, size_t n, uint64_t off,
		size_t *got);
/* One write(2): valid lines stored, each invalid one refused with a
 * .log line, EINVAL if any was (tsd_writer_put). */
int fs_tsd_write(struct fs_tsd_file *f, const void *p, size_t n,
		 char *why, size_t whylen);
/* Stores a last line without '\n' (close of the file). */
int fs_tsd_flush(struct fs_tsd_file *f, char *why, size_t whylen);
/* rm of a node: the annotations a tsd/annotations/QUERY names are
 * deleted (EPERM for any other node). */
int fs_tsd_unlink(enum fs_tsd_node k, const struct buf *arg, char *why,
		  size_t whylen);
/* mv of tsd/metrics/OLD, tagk/OLD or tagv/OLD to NEW in the same
 * directory (k the node kind of both): the name's UID renamed
 * (tsd_name_rename).  An errno, why set. */
int fs_tsd_rename(enum fs_tsd_node k, const struct buf *old,
		  const struct buf *name, char *why, size_t whylen);
/* The file's name below tsd/, for messages; valid while f is open. */
const char *fs_tsd_file_name(const struct fs_tsd_file *f);
void fs_tsd_file_close(struct fs_tsd_file *f);
/* Appends the tsd counters in the Prometheus text format; CF_* code. */
int fs_tsd_stats_text(struct buf *out);

/* --- HBase reads and counters beyond plain cells -----------------------
 * (fs/cellq.c: a cell's F:Q@SPEC names; fs/scan.c: T/.scan/QUERY.)  The
 * tree keeps one node kind for them and leaves the rest to these functions;
 * int functions return 0 or an errno, and fill why (up to whylen bytes)
 * with the reason for MNT/.log. */
enum fs_hq_kind {
	FQ_CELL,	/* ROW/F:Q@T1,T2[,v=N] or F:Q@v=N: read only */
	FQ_COUNTER,	/* ROW/F:Q@counter: read as decimal, write adds */
	FQ_SCANS,	/* T/.scan/: lists nothing, any query resolves */
	FQ_SCAN,	/* T/.scan/QUERY: read only, produced while read */
	FQ_DUMP		/* T/.batch's dump (the reads of a .batch open):
			 * produced while read, as a scan file; opened by
			 * fs/file.c with the node's table (read only) */
};
/* What a special name stands for (pointers borrowed from the node). */
struct fs_hq_target {
	const char *table;
	const void *row;	/* FQ_CELL, FQ_COUNTER */
	size_t rowlen;
	const char *fam;
	size_t famlen;
	const void *qual;
	size_t qlen;
	const char *arg;	/* the text after '@', or the scan query */
};
struct fs_hq_file;

/* For a cell name whose '@' is followed by spec (NUL-terminated): 1 and
 * *kind if spec is a query or "counter", 0 if it is a plain version
 * (digits: F:Q@TS, fs/names.c), EINVAL if malformed. */
int fs_hq_cell_kind(const char *spec, enum fs_hq_kind *kind);
/* 0 if the scan query q is well formed, else EINVAL with why. */
int fs_hq_scan_check(const char *q, char *why, size_t whylen);
/* Whether the name exists, and its size and time into st. */
int fs_hq_stat(cf_db *db, enum fs_hq_kind k, const struct fs_hq_target *t,
	       struct stat *st, char *why, size_t whylen);
/* Opens it with open(2) flags; *out is the caller's until
 * fs_hq_close(). */
int fs_hq_open(cf_db *db, enum fs_hq_kind k, const struct fs_hq_target *t,
	       int flags, struct fs_hq_file **out, char *why, size_t whylen);
struct fs_scan;
/* The most pieces a read of fs_hq_read comes in. */
#define FS_HQ_IOV 32
/* How a scan read left to the scan's producer is answered, from the
 * producer's thread (fs/scan.h's fs_scan_reply_fn). */
typedef void fs_hq_reply_fn(void *arg, const struct iovec *iov, int niov,
			    int err, const char *why);
/* fs_hq_read's answer: reply(arg, ...) will answer this read. */
#define FS_HQ_LATER (-1)
/* Up to n bytes at offset off, *got in all, as *niov pieces into iov
 * (FS_HQ_IOV of them).  A scan file's read sets *scan and holds the
 * scan's turn (fs/scan.h): after sending the pieces the caller calls
 * fs_hq_read_end(*scan), even if f was closed meanwhile, and they are
 * valid until then; or it returns FS_HQ_LATER, and reply(arg, ...)
 * answers the read later, from another thread.  Any other file's read
 * sets *scan NULL; its piece is fixed from open to close.
 * Thread-safe. */
int fs_hq_read(struct fs_hq_file *f, size_t n, uint64_t off,
	       struct iovec *iov, int *niov, size_t *got,
	       struct fs_scan **scan, char *why, size_t whylen,
	       fs_hq_reply_fn *reply, void *arg);
/* Ends a scan read's turn: goes on producing the lines of the reads
 * after it meanwhile (fs_scan_ahead). */
void fs_hq_read_end(struct fs_scan *scan);
/* One write(2) to a counter: checked at once, applied at flush. */
int fs_hq_write(struct fs_hq_file *f, const void *p, size_t n, char *why,
		size_t whylen);
/* Applies what was written (the increment): *changed is 1 when a cell
 * changed; the next flush applies nothing more. */
int fs_hq_flush(struct fs_hq_file *f, int *changed, char *why,
		size_t whylen);
void fs_hq_close(struct fs_hq_file *f);
/* Appends a value as lines show it: escaped as names are (SPEC section
 * 2), the empty value as ''.  Inline: fs/cellq.c and fs/scan.c both use
 * it, and cellq.c uses scan.c. */
static inline int fs_value_text(const void *v, size_t len, struct buf *out)
{
	if (len == 0)
		return buf_append(out, "''", 2);
	return cf_escape(v, len, out);
}

#endif
