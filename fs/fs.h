/*
 * fs.h: the FUSE daemon's internal interface.  fs/ turns paths and errno
 * into engine calls (engine/cellfs.h) and back; nothing else sees FUSE.
 */
#ifndef CF_FS_H
#define CF_FS_H

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

#include "engine/cellfs.h"

/* The errno for a CF_E* code (0 for CF_OK); the one mapping table. */
int fs_errno(int rc);

/* The low-level operations of the tree of SPEC section 3. */
extern const struct fuse_lowlevel_ops fs_ops;

/* Serves db (borrowed; the caller closes it after the session ends);
 * datadir is reported by statfs, max_value bounds open files. */
void fs_setup(cf_db *db, const char *datadir, uint64_t max_value);
/* Frees the inode table, staged files and empty rows. */
void fs_teardown(void);

/* Control and status files (SPEC section 5). */
enum fs_ctl {
	FS_ROOT_CTL, FS_ROOT_STATS, FS_ROOT_LOG,
	FS_TCTL, FS_TSTATS, FS_REGIONS, FS_BATCH
};
/* Appends the text a read of file which (of table, if a table's) shows. */
int fs_control_text(cf_db *db, enum fs_ctl which, const char *table,
		    struct buf *out);
/* Acts on one write(2) of p[0..len) to which: whole lines, all or
 * nothing.  On error *why (static or thread-local) says why. */
int fs_control_write(cf_db *db, enum fs_ctl which, const char *table,
		     const char *p, size_t len, const char **why);

#endif
