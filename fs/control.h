/*
 * control.h: the control and status files of SPEC section 5 (fs/control.c):
 * what a read of .ctl, .stats, .log, .regions or .batch shows and what a
 * write to .ctl or .batch does.  The whole of control's interface: the
 * files that serve the tree (fs/internal.h) reach control only through
 * these functions, and control.c sees none of their nodes.
 */
#ifndef CF_FS_CONTROL_H
#define CF_FS_CONTROL_H

#include <stddef.h>

#include "engine/cellfs.h"
#include "util/buf.h"

/* Which control file: MNT/.ctl, .stats, .log, T/.ctl, .stats, .regions,
 * .batch. */
enum fs_ctl {
	FS_ROOT_CTL, FS_ROOT_STATS, FS_ROOT_LOG,
	FS_TCTL, FS_TSTATS, FS_REGIONS, FS_BATCH
};
/* Appends the text a read of file which (of table, if a table's) shows
 * to out; db is borrowed.  CF_* code (CF_EINVAL for FS_BATCH: its dump
 * is read as a scan file, fs_scan_open_dump). */
int fs_control_text(cf_db *db, enum fs_ctl which, const char *table,
		    struct buf *out);
/* Acts on one write(2) of p[0..len) to which: whole lines, all or
 * nothing.  On error *why (static or thread-local) says why. */
/* The region of t (named table) starting at key merged with the one
 * before it (cf_table_merge; `merge KEY` in T/.ctl, rmdir of T/@KEY):
 * its CF_* code, *why set for the refusals (the first region, no region
 * at key, EBUSY). */
int fs_merge_region(cf_table *t, const char *table, const struct buf *key,
		    const char **why);
int fs_control_write(cf_db *db, enum fs_ctl which, const char *table,
		     const char *p, size_t len, const char **why);

#endif
