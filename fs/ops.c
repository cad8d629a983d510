/*
 * ops.c: the FUSE low-level operation table of the tree of SPEC section 3
 * (fs_ops), the daemon's setup and teardown, and statfs.  The operations themselves live by concept: lookup and
 * getattr in fs/attr.c, listings in fs/dir.c, mkdir and rmdir in
 * fs/mkdir.c, open, create, flush and release in fs/file.c, read and
 * write in fs/io.c, truncate and touch in fs/setattr.c, rm in
 * fs/unlink.c, mv in fs/rename.c, forget in fs/node.c; fs/internal.h
 * says what they share and the lock order.
 *
 * fs_setup sets fs_db, fs_max_value (fs/cell.c) and the data directory
 * before the session starts; they never change after: read without a
 * lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "fs/internal.h"

static char *datadir;
static int rdplus_always;

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;

	if (statvfs(datadir, &sv) != 0)
		fs_fail(req, errno, "statfs %s", datadir);
	else
		fuse_reply_statfs(req, &sv);
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	/* O_TRUNC comes with open, not as a separate setattr, so that
	 * `echo v > cell` is one Put and not an empty version first. */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	if (rdplus_always)
		conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
}

void fs_set_readdirplus(int always)
{
	rdplus_always = always;
}

const struct fuse_lowlevel_ops fs_ops = {
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
	.open = op_open,
	.create = op_create,
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

void fs_setup(cf_db *d, const char *dir, uint64_t maxv)
{
	fs_db = d;
	fs_tsd_setup(d);
	datadir = realpath(dir, NULL);
	if (!datadir)
		datadir = strdup(dir);
	fs_max_value = maxv;
}

void fs_teardown(void)
{
	file_teardown();	/* before the tsd layer its files use */
	fs_tsd_teardown();
	stage_teardown();
	erow_teardown();
	neg_teardown();
	node_teardown();
	free(datadir);
	datadir = NULL;
}
