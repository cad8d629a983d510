/*
 * setattr.c: SETATTR: truncate (of an open file's buffer, a cell as a
 * new Put, a staged file), a new mtime (a cell moves to that version:
 * cell_retime; a file being written puts at it), and chmod/chown of a
 * table's directory or tsd/ (fs/perm.c); atime and the rest are accepted
 * and ignored, as cp -a and rsync need.
 *
 * Locks: the handle's lock or fs_mu, never both at once here.
 */
#include <errno.h>

#include "fs/internal.h"

static int64_t ts_of(const struct stat *a, int to_set, int now_flag)
{
	if (to_set & now_flag)
		return now_ms();
	return (int64_t)a->st_mtim.tv_sec * 1000 +
	       a->st_mtim.tv_nsec / 1000000;
}

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		int to_set, struct fuse_file_info *fi)
{
	struct node *n = node_of(ino);
	struct fileh *h = fi ? (struct fileh *)(uintptr_t)fi->fh : NULL;
	struct stage **sp;
	struct buf v = BUF_INIT;
	struct stat st;
	cf_table *t;
	int rc = 0, err = 0, found;
	int64_t ts, old;
	size_t len;

	/* the kernel does not always name the open file: a cell being
	 * written (cp -p sets times before close) is its open writer */
	if (!h && n->kind == K_CELL) {
		pthread_mutex_lock(&fs_mu);
		h = n->writer;
		pthread_mutex_unlock(&fs_mu);
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if ((uint64_t)attr->st_size > fs_max_value) {
			fs_fail(req, EFBIG, "truncate %s: over max_value",
			     n->name);
			return;
		}
		if (h && (n->kind == K_CELL || n->kind == K_STAGE ||
			  n->kind == K_SCHEMA)) {
			pthread_mutex_lock(&h->lock);
			rc = fileh_hold(h, &h->data, (uint64_t)attr->st_size);
			if (!rc)
				rc = value_resize(&h->data,
					    (uint64_t)attr->st_size);
			if (!rc)
				h->dirty = h->written = 1;
			pthread_mutex_unlock(&h->lock);
		} else if (n->kind == K_CELL) {
			rc = topen(n->table, &t);
			if (!rc) {
				rc = cell_get(t, n, &found, &v, &old, &len);
				cf_table_close(t);
			}
			if (!rc)
				rc = value_resize(&v, (uint64_t)attr->st_size);
			if (!rc)
				rc = cell_put(n, &v, n->ts);
			buf_release(&v);
		} else if (n->kind == K_STAGE) {
			pthread_mutex_lock(&fs_mu);
			sp = stage_find(n);
			if (*sp) {
				stage_bytes -= (*sp)->data.len;
				rc = value_resize(&(*sp)->data,
					    (uint64_t)attr->st_size);
				stage_bytes += (*sp)->data.len;
			}
			pthread_mutex_unlock(&fs_mu);
		}
		if (rc) {
			fs_fail(req, fs_errno(rc), "truncate %s: %s", n->name,
			     cf_strerror(rc));
			return;
		}
	}
	if (to_set & FUSE_SET_ATTR_MTIME) {
		ts = ts_of(attr, to_set, FUSE_SET_ATTR_MTIME_NOW);
		if (n->kind == K_CELL && h && h->dirty && !h->append) {
			pthread_mutex_lock(&h->lock);
			h->ts = ts;
			pthread_mutex_unlock(&h->lock);
		} else if (n->kind == K_CELL) {
			if (h) {
				pthread_mutex_lock(&h->lock);
				err = file_flush(h);
				pthread_mutex_unlock(&h->lock);
			}
			if (!err)
				rc = cell_retime(n, ts);
		} else if (n->kind == K_STAGE) {
			pthread_mutex_lock(&fs_mu);
			sp = stage_find(n);
			if (*sp)
				(*sp)->mtime = ts;
			pthread_mutex_unlock(&fs_mu);
		}
		if (!err && rc)
			err = fs_errno(rc);
		if (err) {
			fs_fail(req, err, "set mtime of %s: %s", n->name,
			     rc ? cf_strerror(rc) : "write failed");
			return;
		}
	}
	/* chmod and chown of a table's directory, or of tsd/, set who may
	 * use it (fs/perm.c); elsewhere they are accepted and ignored, as
	 * is atime (rsync and cp -a set them on every file). */
	if ((to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID |
		       FUSE_SET_ATTR_GID)) &&
	    (n->kind == K_TABLE ||
	     (n->kind == K_TSD && n->parent == &fs_root))) {
		const char *why = "";
		mode_t mode = attr->st_mode;
		uid_t u = attr->st_uid;
		gid_t g = attr->st_gid;
		const char *top = n->kind == K_TSD ? "tsd" : n->table;
		err = fs_perm_set(top,
				  to_set & FUSE_SET_ATTR_MODE ? &mode : NULL,
				  to_set & FUSE_SET_ATTR_UID ? &u : NULL,
				  to_set & FUSE_SET_ATTR_GID ? &g : NULL, &why);
		if (err) {
			fs_fail(req, err, "chmod/chown %s: %s", n->name, why);
			return;
		}
		/* the kernel keeps attributes of what is below it */
		fs_table_changed(n->kind == K_TSD ? "" : n->table, 0);
	}
	err = node_stat(n, &st);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	if (h && h->dirty && n->kind != K_SCHEMA) {
		st.st_size = (off_t)h->data.len;
		if (h->ts != CF_TS_NOW)
			set_time(&st, h->ts);
	}
	attrs_sent(n);
	fuse_reply_attr(req, &st, cache_s(n));
}
