/*
 * internal.h: what the files of the FUSE daemon share (fs/node.c,
 * names.c, inval.c, erow.c, stage.c, cell.c, schema.c, attr.c, dir.c,
 * mkdir.c, file.c, io.c, setattr.c, unlink.c, rename.c, ops.c); nothing
 * outside those files includes it.  control.c, batch.c, perm.c, tsdfs.c,
 * cellq.c and scan.c see none of it: they are reached through fs/fs.h
 * and fs/control.h.
 *
 * The tree of SPEC section 3 on the FUSE low-level API.  Inodes are
 * struct node pointers (the root is FUSE_ROOT_ID).  A node's meaning
 * (which table, row, cell, control file) follows from its parent and its
 * name alone; it changes only when mv moves a cell, and then with the
 * kernel's inode (node_swap).  Whether a node exists is asked of the
 * engine, or for a cell answered from what the engine last said (see
 * fs/inval.c), and every file is opened direct_io, so neither the kernel
 * nor the daemon serves a stale answer after a write returned.  Nodes
 * live while the kernel holds a lookup on them, a child points to them,
 * or a file is open on them (or, for the last few cells found absent,
 * until a create can follow).
 *
 * State beside the engine, all under one mutex fs_mu (fs/node.c): the
 * node table, staged files (`.NAME`, held in memory until renamed onto a
 * cell or .schema; fs/stage.c) and empty rows made by mkdir (fs/erow.c).
 * Engine calls are made without holding fs_mu.  Every request ends in
 * exactly one reply; every refused operation logs one line saying what
 * and why (fs_fail).
 *
 * Lock order: a directory handle's lock (struct dirh, fs/dir.c) or an
 * open file's lock (struct fileh), then fs_mu, then the invalidator's
 * queue lock (fs/inval.c).  A scan file's lock (fs/scan.c) is taken
 * with none of these held, and engine locks under it.  No lock is held
 * across a notification to the kernel.  "With fs_mu held" on a function means its caller holds it;
 * every other function takes fs_mu itself and must be called without it.
 */
#ifndef CF_FS_INTERNAL_H
#define CF_FS_INTERNAL_H

#include <pthread.h>
#include <string.h>
#include <time.h>

#include "fs/fs.h"
#include "util/buf.h"

#define STAGE_LIMIT (256u << 20)	/* all staged bytes together */

enum kind {
	K_ROOT, K_ROOT_CTL, K_ROOT_STATS, K_ROOT_LOG,
	K_TABLE, K_SCHEMA, K_TCTL, K_TSTATS, K_REGIONS, K_BATCH,
	K_REGION, K_PREFIXES, K_PREFIX, K_ROW, K_VERSIONS, K_CELL, K_STAGE,
	K_TSD,		/* MNT/tsd/ and below: tk says which (fs/tsdfs.c) */
	K_HQ		/* F:Q@query, F:Q@counter, T/.scan/: hk says which
			 * (fs/cellq.c, fs/scan.c) */
};

/* A link of a node in one chain of a hash table: the next node, and
 * the address of the pointer to this one (the head or the previous
 * node's next), so that a node leaves the chain in O(1). */
struct nchain {
	struct node *next, **prev;
};

struct node {
	struct node *parent, *hnext;
	/* node_rtab's chain (the nodes of one row) and node_ctab's (the
	 * cells of one column, or the row nodes of one row): each with
	 * the address of the pointer to the node, so that a node leaves
	 * its chains in O(1) (a row of a million cells listed has a
	 * million nodes in one chain, and the kernel forgets them one by
	 * one) */
	struct nchain rchain, cchain;
	uint64_t hash;		/* node_hname(parent, name) */
	char *name;
	uint64_t nlookup;
	unsigned nchild, nopen;
	enum kind kind;
	const char *table;	/* the table's node name: parents outlive
				 * children; "" above the tables */
	struct buf key;		/* row (K_ROW..K_STAGE), region start, prefix */
	int in_row;		/* K_STAGE: in a row directory (else table) */
	const char *fam;	/* K_CELL: famlen bytes, the start of name */
	size_t famlen;
	struct buf qual;
	int64_t ts;		/* K_CELL: CF_TS_NOW for the latest version */
	struct fileh *writer;	/* K_CELL open for writing, not yet put */
	enum fs_tsd_node tk;	/* K_TSD: its meaning; key holds the name */
	enum fs_hq_kind hk;	/* K_HQ: its meaning */
	unsigned twriters;	/* K_TSD: opens for writing (a new metric
				 * exists for fstat before its first point) */
	/* K_CELL: what the engine last said of the cell (see "the
	 * daemon's attribute cache"); under fs_mu */
	enum { A_UNKNOWN, A_ABSENT, A_PRESENT } astate;
	size_t asize;		/* A_PRESENT: value length, version */
	int64_t ats;
	uint64_t agen;		/* bumped by every invalidation */
	/* K_ROW: the engine found no cell and there was no empty row when
	 * rows_gen was rgen (and egen was regen); under fs_mu */
	int rabsent;
	uint64_t rgen, regen;
	/* K_CELL: the value read-only opens of n share (struct fval), while
	 * one is open and no invalidation came since it was read; loading:
	 * an open is reading it, the others wait for it (fval_get).  Under
	 * fs_mu. */
	struct fval *fvc;
	int fvloading;
	/* 1: a WRITE to n was answered and no reply carrying n's attributes
	 * was made since, so the kernel holds none valid (a direct_io
	 * write invalidates them; an answer sent before it is dropped by
	 * the kernel's attr_version), and a Put needs no notification for
	 * n itself.  Atomic: set by op_write, cleared by attrs_sent. */
	int attrs_stale;
};

/* The value a read-only open of a cell reads: the row the Get returned,
 * not copied again, and shared by reference with reads in flight (a
 * read's reply may still be under way when RELEASE frees the handle) and
 * with the other read-only opens of the same node made while it is held
 * and the cell unchanged (node.fvc): N readers of a cell hold one copy.
 * It pins its node (nopen) until freed. */
struct fval {
	int refs;		/* atomic */
	cf_row *row;
	const unsigned char *p;
	size_t len;
	struct node *n;		/* pinned */
	uint64_t gen;		/* n->agen before the Get */
};

/* An open cell: what was written, committed as one Put at close. */
struct fileh {
	struct node *n;
	struct fileh *onext, **oprev;	/* open_files (fs/file.c), fs_mu */
	struct fval *fv;	/* a read-only K_CELL open; data is empty */
	struct buf data;
	int dirty, append, writable;
	int written;		/* write(2) or truncate seen */
	int failed;		/* errno of a refused write: commit nothing */
	int orphan;		/* mv replaced its cell: commit nothing
				 * (op_rename); atomic, set under fs_mu */
	int64_t ts;		/* timestamp of the Put at flush */
	struct fs_tsd_file *tf;	/* K_TSD: everything is done by tsdfs.c */
	struct fs_hq_file *hf;	/* K_HQ: everything is done by cellq.c */
	struct fs_hq_file *dump;	/* K_BATCH opened to read: its dump,
					 * read as a scan file (FQ_DUMP) */
	struct buf tail;	/* .batch, .ctl: a line not finished yet */
	int skip;		/* ... the rest of a refused line follows */
	uint64_t held;		/* bytes of data and tail charged to the
				 * write budget (fs/budget.c) */
	pthread_mutex_t lock;
};

/* A staged file (fs/stage.c). */
struct stage {
	struct stage *next;
	char table[CF_TABLE_MAX + 1];
	struct buf row;
	int in_row;
	char *name;
	struct buf data;
	int64_t mtime;		/* ms; CF_TS_NOW when never set */
};

/* A row the daemon knows about without asking the engine (see "empty
 * rows"). */
struct erow {
	struct erow *next;
	char table[CF_TABLE_MAX + 1];
	struct buf row;
	uint64_t gen;		/* erow_gen(row) before the engine said "no
				 * cell", or EROW_UNSURE: not asked (see
				 * op_unlink) */
	int kept;		/* its directory stays with no cell in it
				 * (mkdir, rm); 0: only cols is known */
	unsigned ncols;		/* the columns written through this daemon */
	struct buf cols;	/* since gen: u8 famlen, u16le quallen, u8
				 * ECOL_FUTURE or 0, fam, qual, each */
};

/* An erow's gen when the engine was not asked (fs/erow.c). */
#define EROW_UNSURE UINT64_MAX

/* Empty rows kept without asking the engine, at most (fs/erow.c). */
#define EUNSURE_MAX 65536

/* Inodes whose attributes to invalidate once fs_mu is released
 * (inos_add, inval_attrs). */
struct inos {
	fuse_ino_t *v;
	size_t n, cap;
};

/* How long the kernel may keep names and attributes (fs/attr.c, fs/inval.c):
 * -o cache_timeout, 10 s unless given. */
extern double fs_cache_s;

/* --- the node table (fs/node.c) ------------------------------------------ */
/* The lock of all state beside the engine (see the top). */
extern pthread_mutex_t fs_mu;
/* The root node, FUSE_ROOT_ID; never freed. */
extern struct node fs_root;
/* Nodes by node_hname(parent, name), node_hcap slots (a power of 2),
 * chained through hnext; under fs_mu. */
extern struct node **node_htab;
extern size_t node_hcap;
/* Cells and rows by node_rslot(table, row), chained through rchain: a
 * walk of every node of a row (a change of the whole row). */
extern struct node **node_rtab;
/* Cells by node_cslot(table, row, column) and rows by node_rslot(table,
 * row), chained through cchain: a walk of one column's nodes and of its
 * row's row nodes (a change of one cell), not of the whole row's. */
extern struct node **node_ctab;
/* The request counters of .stats (atomics; count()). */
extern struct fs_counters fs_counts;
/* The hash of (parent, name), kept in the node: rehashing and walking a
 * chain then touch no name but the one that matches. */
uint64_t node_hname(const struct node *parent, const char *name);
/* The node_htab slot of hash h in cap slots. */
size_t node_hslot(uint64_t h, size_t cap);
/* The node_rtab slot of row key in table. */
size_t node_rslot(const char *table, const void *key, size_t len,
		  size_t cap);
/* The node_rtab slot of n's row. */
size_t node_rslot_of(const struct node *n, size_t cap);
/* The node_ctab slot of the column fam:qual of row key in table. */
size_t node_cslot(const char *table, const void *key, size_t len,
		  const char *fam, size_t famlen, const void *qual,
		  size_t qlen, size_t cap);
/* The node of an inode number, and back. */
struct node *node_of(fuse_ino_t ino);
fuse_ino_t ino_of(struct node *n);
/* With fs_mu held: takes n out of the tables once nothing refers to it,
 * then its parent, and chains them on *dead (through hnext; nothing
 * finds them any more) for node_free_list, which needs no lock. */
void node_unref_defer(struct node *n, struct node **dead);
/* Frees a chain made by node_unref_defer; no lock needed. */
void node_free_list(struct node *n);
/* With fs_mu held: frees n once nothing refers to it, then its parent. */
void node_unref(struct node *n);
/* With fs_mu held: the node for tmp's meaning under parent, interned (tmp's
 * buffers move into it or are freed).  NULL on ENOMEM. */
struct node *node_intern(struct node *tmp);
/* Frees every node (fs_teardown: the session is over). */
void node_teardown(void);
/* With fs_mu held: n's cached attributes are no longer true. */
void attr_forget(struct node *n);
/* FORGET and BATCH_FORGET: the kernel dropped lookups of nodes.  The
 * nodes are freed after fs_mu is released. */
void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void op_forget_multi(fuse_req_t req, size_t count,
		     struct fuse_forget_data *f);
/* With fs_mu held, after cell s was moved onto d within their row: the
 * kernel's inode of s now stands under d's name (and d's, if it has one,
 * is cut from it), so s takes d's meaning and d takes s's old one, the
 * name that went.  A stat or open of the new name through the moved
 * inode then asks for the new cell, and a file open on s writes there. */
void node_swap(struct node *s, struct node *d);

/* --- names: what a name means (fs/names.c) ------------------------------- */
/* n's type, permission bits and owner into st (fs/perm.c). */
void node_perm(const struct node *n, struct stat *st);
/* 1 if n is a directory. */
int node_is_dir(const struct node *n);
/* Resolves and interns name under parent; 0 or errno (logged by caller). */
int lookup_node(fuse_ino_t parent, const char *name, struct node **out,
		const char **why);
/* Drops the pin lookup_node took. */
void node_release(struct node *n);

/* --- keeping the kernel's caches true (fs/inval.c) ----------------------- */
/* The change counter of table's rows: moved on (after the engine write,
 * before the reply) by every change of them this daemon makes. */
uint64_t rows_gen(const char *table);
/* With fs_mu held: keeps n's pin (from lookup_node) in negs[], dropping the
 * oldest. */
void neg_keep(struct node *n);
/* Forgets the pins of negs[] without dropping them (fs_teardown: the
 * nodes are freed with the table). */
void neg_teardown(void);
/* Without fs_mu: invalidates the attributes of a's inodes and frees a. */
void inval_attrs(struct inos *a);
/* Row key of table changed: its cells' attributes are invalid, and the
 * names of its versions (all its cells with deleted) may be gone.  With
 * col, only the cells of col's column changed (the node col itself and
 * the same cell under other names: other directories, @TS versions):
 * a Put or Delete of one cell leaves its row's other cells as they were,
 * so their kernel caches stay.  Nothing is sent for skip, a name whose
 * unlink the kernel is finishing (it drops the name and the attributes
 * itself). */
void cells_changed_locked(const char *table, const void *key,
			  size_t len, const struct node *col,
			  const struct node *skip, int deleted,
			  int64_t put_ts, struct inos *a);
/* The cell n names changed (Put, Append, Delete of it). */
void cell_changed(const struct node *n, const struct node *skip,
		  int deleted);

/* --- empty rows: the daemon's memory of rows (fs/erow.c) ----------------- */
/* Empty rows with gen EROW_UNSURE (rm made them without asking);
 * atomic. */
extern size_t erow_unsure;
/* Bumped by every column an erow takes (erow_written); atomic. */
extern uint64_t erow_wseq;
/* A write of this daemon may have added cells to any row other than
 * through erow_written (.batch, mv, touch, a schema change): every
 * erow's gen moves on.  After the engine write. */
void cells_added(void);
/* With fs_mu held: the empty row, or the slot to add it (NULL: no table
 * yet, and ENOMEM to make one). */
struct erow **erow_find(const char *table, const struct buf *row);
/* With fs_mu held (and unlinked from etab): frees e. */
void erow_free(struct erow *e);
/* With fs_mu held: row is no empty row any more. */
void erow_drop_locked(const char *table, const struct buf *row);
/* For erow_new: read before asking the engine whether row is empty.  The
 * sum of two counters that only grow is unchanged only while neither
 * has changed. */
uint64_t erow_gen(const char *table, const struct buf *row);
/* With fs_mu held: 1 if e still knows every cell of its row (none written
 * but through erow_written since the engine found it empty). */
int erow_valid(const struct erow *e);
/* With fs_mu held: 1 if e has a cell of n's column written since. */
int erow_has_col(const struct erow *e, const struct node *n);
/* With fs_mu held: e forgets n's column after a DeleteColumn at now, unless
 * a version of it was written with a timestamp past the clock (the
 * Delete leaves that one: HBase's TimestampTestBase.doTestDelete). */
void erow_col_del(struct erow *e, const struct node *n);
/* With fs_mu held: 1 if row is kept as a directory with no cell in it. */
int erow_kept(const char *table, const struct buf *row);
/* A cell of n's column was written in n's row (after the engine write),
 * at version ts (CF_TS_NOW: at the clock, as appends are).
 * A row whose cells the daemon knows (found empty, and written since only
 * through here) remembers the column, so that a lookup of another cell
 * of it still asks the engine nothing (cp -r, rsync and tar make a row,
 * then its cells); any other row's erow goes, and its stripe's gen moves
 * on, so that an erow a mkdir is making now (its engine read done before
 * this write) is not believed. */
void erow_written(const struct node *n, int64_t ts);
/* Keeps row as an empty row directory until a cell is written in it or
 * it is removed. */
struct erow *erow_new(const char *table, const struct buf *row,
		      uint64_t gen);
/* With fs_mu held: adds e (made by erow_new) unless its row is kept
 * already; e is taken or freed either way.  An erow that only tracked
 * columns takes e's meaning: the row was found empty since. */
int erow_insert_locked(struct erow *e);
/* erow_new and erow_insert_locked, taking fs_mu. */
int erow_add(const char *table, const struct buf *row, uint64_t gen);
/* With fs_mu held: table is dropped; its empty rows go. */
void erow_forget_table(const char *table);
/* Frees every empty row (fs_teardown). */
void erow_teardown(void);

/* --- staged files (fs/stage.c) ------------------------------------------- */
/* Bytes held by all staged files; under fs_mu. */
extern size_t stage_bytes;
/* With fs_mu held: the staged file n names, or the slot to add it. */
struct stage **stage_find(const struct node *n);
/* With fs_mu held (and unlinked from the list): frees s. */
void stage_free(struct stage *s);
/* Frees every staged file (fs_teardown). */
void stage_teardown(void);

/* --- cells in the engine (fs/cell.c) ------------------------------------- */
/* The engine the daemon serves (fs_setup). */
extern cf_db *fs_db;
/* The largest value a cell may take (write(2) past it: EFBIG). */
extern uint64_t fs_max_value;
/* The cell n names: *found, its value into val (if non-NULL), ts, len. */
int cell_get(cf_table *t, const struct node *n, int *found,
	     struct buf *val, int64_t *ts, size_t *len);
/* Drops a reference to v; the last frees it and its row, and unpins its
 * node.  Without fs_mu. */
void fval_put(struct fval *v);
/* A read-only open of the cell n: its value, as the Get returned it, or
 * with share (n's table has every write pass through this daemon and no
 * TTL: attr_cacheable, table_has_ttl) the value another open of n
 * holds, when no invalidation of n came since it was read.  Opens at
 * the same moment wait for one Get.  Without fs_mu. */
int fval_get(cf_table *t, struct node *n, int share, struct fval **out);
/* The newest version among the cells of r (0: none): a row's time. */
int64_t row_newest(const cf_row *r);
/* Number of visible cells of row (without newest: of its first page, at
 * least 1 when it has any, which is enough for callers), read page by
 * page (cf_row_cursor: memory of a page, not of the row);
 * with newest, the newest version among them too. */
int row_cells_at(cf_table *t, const struct buf *row, size_t *n,
		 int64_t *newest);
/* row_cells_at without the time. */
int row_cells(cf_table *t, const struct buf *row, size_t *n);
/* Puts data at the cell n names (ts: CF_TS_NOW or a version). */
int cell_put(struct node *n, const struct buf *data, int64_t ts);
/* Moves a cell to timestamp ts: Put at ts and Delete of the old version,
 * one row mutation. */
int cell_retime(struct node *n, int64_t ts);

/* --- .schema (fs/schema.c) ----------------------------------------------- */
/* The text of .schema of table. */
int schema_text(cf_table *t, struct buf *out);
/* Checks every complete line of a schema text; 0 or CF_EINVAL. */
int schema_check(const struct buf *text, struct cf_family **out,
		 size_t *nout, const char **why);
/* Makes text the schema of n's table, changed at mtime (CF_TS_NOW: now;
 * a staged file's mtime, as rsync sets it, keeps the copied schema's). */
int apply_schema(struct node *n, const struct buf *text,
		 int64_t mtime, const char **why);

/* --- attributes (fs/attr.c) ---------------------------------------------- */
/* What the special name n stands for (pointers into n). */
void hq_target(const struct node *n, struct fs_hq_target *tg);
/* 1 if every write to table passes through this daemon's files, so
 * what they remember of the table's cells and rows (attributes, absent
 * rows, empty rows) stays true: the time-series layer writes its tables
 * without telling them. */
int attr_cacheable(const char *table);
/* 1 if the daemon may keep what it is told of t's rows (attr_cacheable,
 * and no family with a TTL). */
int rows_fillable(cf_table *t, const char *table);
/* A listing read row n (K_ROW) whole, with newest cell version ts, in a
 * read begun when rows_gen(n->table) was gen, of a table rows_fillable:
 * that is n's cached answer (node_stat), unless a change came since. */
void row_seen(struct node *n, int64_t ts, uint64_t gen);
/* 1 if a family of table has a TTL (table_ttl). */
int table_has_ttl(const char *table);
/* Fills st for n after asking the engine whether it exists (or, for a
 * cell or a row, its cached answer): 0 or errno. */
int node_stat(struct node *n, struct stat *st);
/* 1 if how long n is cached depends on its table (cache_s). */
int cache_by_table(const struct node *n);
/* How long the kernel may keep n's name and attributes (see "keeping the
 * kernel's caches true"). */
double cache_s(const struct node *n);
/* Before any reply that gives the kernel n's attributes. */
void attrs_sent(struct node *n);
/* Replies to a LOOKUP, MKDIR or the like with n and its attributes st:
 * one more kernel lookup of n. */
void reply_entry(fuse_req_t req, struct node *n, const struct stat *st);
void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void op_getattr(fuse_req_t req, fuse_ino_t ino,
		struct fuse_file_info *fi);

/* --- listings (fs/dir.c) ------------------------------------------------- */
void op_opendir(fuse_req_t req, fuse_ino_t ino,
		struct fuse_file_info *fi);
void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		struct fuse_file_info *fi);
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
		    off_t off, struct fuse_file_info *fi);
void op_releasedir(fuse_req_t req, fuse_ino_t ino,
		   struct fuse_file_info *fi);

/* --- mkdir and rmdir (fs/mkdir.c) ---------------------------------------- */
void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
	      mode_t mode);
void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);

/* --- open files (fs/file.c) ---------------------------------------------- */
void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
	      struct fuse_file_info *fi);
/* Writes out what a handle holds; 0 or errno (logged). */
int file_flush(struct fileh *h);
void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
	       mode_t mode, struct fuse_file_info *fi);
/* With h->lock held (or h not yet shared): charges the growth of b, h's
 * data or tail, to len bytes to the write budget before it happens, as
 * the capacity buf_reserve will give it.  CF_ENOSPC over the budget. */
int fileh_hold(struct fileh *h, const struct buf *b, uint64_t len);
/* Makes b len bytes long, zero-filled past its old end; CF_ENOMEM. */
int value_resize(struct buf *b, uint64_t len);
/*
 * With h->lock held: one write(2) to .batch or .ctl.  The lines it
 * completes (with what earlier writes left unfinished) are applied all or
 * nothing; an unfinished last line waits for the next write or the close,
 * so `cat dump > .batch` works whatever the size of the kernel's writes.
 * A refused write is dropped whole, and the rest of its unfinished line,
 * coming in the next writes, is skipped.
 */
int lines_write(struct fileh *h, const char *p, size_t size,
		const char **why);
void op_flush(fuse_req_t req, fuse_ino_t ino,
	      struct fuse_file_info *fi);
/* Frees the handles of files still open (fs_teardown: the session is
 * over, no RELEASE will come). */
void file_teardown(void);
void op_release(fuse_req_t req, fuse_ino_t ino,
		struct fuse_file_info *fi);

/* --- read and write (fs/io.c) -------------------------------------------- */
void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	     struct fuse_file_info *fi);
void op_write(fuse_req_t req, fuse_ino_t ino, const char *p,
	      size_t size, off_t off, struct fuse_file_info *fi);

/* --- truncate, touch, chmod (fs/setattr.c) ------------------------------- */
void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		int to_set, struct fuse_file_info *fi);

/* --- rm (fs/unlink.c) ---------------------------------------------------- */
void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);

/* --- mv (fs/rename.c) ---------------------------------------------------- */
void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
	       fuse_ino_t newparent, const char *newname,
	       unsigned int flags);

/* --- small helpers every file uses --------------------------------------- */

/* Counts one (a field of fs_counts). */
static inline void count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* Opens table name of the daemon's db. */
static inline int topen(const char *name, cf_table **t)
{
	return cf_table_open(fs_db, name, t);
}

/* The clock, in ms since the epoch. */
static inline int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* st's times: ms since the epoch. */
static inline void set_time(struct stat *st, int64_t ms)
{
	st->st_mtim.tv_sec = ms / 1000;
	st->st_mtim.tv_nsec = (ms % 1000) * 1000000;
	st->st_atim = st->st_ctim = st->st_mtim;
}

#endif
