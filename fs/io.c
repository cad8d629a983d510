/*
 * io.c: READ and WRITE of an open file: a cell's value, staged file or
 * .schema from the handle's buffer, a read-only cell from the Get's row
 * (no copy), tsd/ and query files through fs/tsdfs.c and fs/cellq.c.
 *
 * Promises: nothing of a handle is touched once its reply is under way
 * (a RELEASE may free it on another thread); a write past max_value or
 * the write budget fails the handle whole (EFBIG, ENOSPC).
 * Locks: the handle's lock around its buffer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"

static void read_tsd(fuse_req_t req, struct fileh *h, size_t size,
		     off_t off)
{
	char *out = malloc(size ? size : 1);
	size_t got;
	int err;

	if (!out) {
		fs_fail(req, ENOMEM, "read tsd/%s", fs_tsd_file_name(h->tf));
		return;
	}
	err = fs_tsd_read(h->tf, out, size, (uint64_t)off, &got);
	if (err)
		fs_fail(req, err, "read tsd/%s", fs_tsd_file_name(h->tf));
	else
		fuse_reply_buf(req, out, got);
	free(out);
}

/* Answers a scan read that its producer made the bytes of. */
static void scan_reply(void *arg, const struct iovec *iov, int niov,
		       int err, const char *why)
{
	fuse_req_t req = arg;

	if (err)
		fs_fail(req, err, "read scan file: %s", why);
	else if (niov)
		fuse_reply_iov(req, iov, niov);
	else
		fuse_reply_buf(req, NULL, 0);
}

static void read_hq(fuse_req_t req, struct fileh *h, struct fs_hq_file *hf,
		    size_t size, off_t off)
{
	struct fs_scan *scan;
	struct iovec iov[FS_HQ_IOV];
	char why[160], *copy = NULL;
	size_t got;
	int err, niov;

	/* No lock of h: a scan file's reads take turns in fs/scan.c, and
	 * another file's text is fixed from open to close.  Nothing of h
	 * may be sent (see op_read): a scan's bytes are the scan's (sealed
	 * chunks, sent as they are), which its turn keeps until
	 * fs_hq_read_end, after the reply; that then goes on producing the
	 * next reads' bytes while the reader takes these, on a scan that a
	 * RELEASE may have closed meanwhile.  A scan read whose bytes that
	 * production has not made yet is left to it (FS_HQ_LATER: it
	 * replies with scan_reply).  Another file's slice (one cell's
	 * versions) is sent from a copy. */
	err = fs_hq_read(hf, size, (uint64_t)off, iov, &niov, &got,
			 &scan, why, sizeof why, scan_reply, req);
	if (err == FS_HQ_LATER)
		return;
	if (!err && !scan && got) {
		copy = malloc(got);
		if (copy)
			memcpy(copy, iov[0].iov_base, got);
		else
			err = ENOMEM;
		iov[0].iov_base = copy;
	}
	if (err) {
		fs_fail(req, err, "read %s: %s", h->n->name,
			err == ENOMEM && !*why ? "out of memory" : why);
		return;
	}
	if (niov)
		fuse_reply_iov(req, iov, niov);
	else
		fuse_reply_buf(req, NULL, 0);
	free(copy);
	if (scan)
		fs_hq_read_end(scan);
}

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	     struct fuse_file_info *fi)
{
	struct fileh *h = (struct fileh *)(uintptr_t)fi->fh;
	char *copy = NULL;
	size_t got = 0;

	if (h->tf) {
		read_tsd(req, h, size, off);
		return;
	}
	if (h->hf || h->dump) {
		read_hq(req, h, h->hf ? h->hf : h->dump, size, off);
		return;
	}
	if (h->fv) {
		/* read-only: the value never changes; the reference keeps
		 * it past a RELEASE that frees h before the reply returns */
		struct fval *v = h->fv;

		__atomic_add_fetch(&v->refs, 1, __ATOMIC_ACQ_REL);
		if ((uint64_t)off < v->len)
			got = v->len - (size_t)off < size ?
			      v->len - (size_t)off : size;
		fuse_reply_buf(req, got ? (const char *)v->p + off : NULL,
			       got);
		fval_put(v);
		return;
	}
	/* Nothing of h may be touched, nor sent, once the reply is under
	 * way: the kernel can end the read, and the close's RELEASE free h
	 * on another thread, before fuse_reply_buf returns here (at once
	 * when a read-only open's close sends no FLUSH).  So the slice is
	 * copied under the lock and sent from the copy. */
	pthread_mutex_lock(&h->lock);
	if ((uint64_t)off < h->data.len) {
		got = h->data.len - (size_t)off < size ?
		      h->data.len - (size_t)off : size;
		copy = malloc(got);
		if (copy)
			memcpy(copy, h->data.p + off, got);
	}
	pthread_mutex_unlock(&h->lock);
	if (got && !copy)
		fs_fail(req, ENOMEM, "read %s", h->n->name);
	else
		fuse_reply_buf(req, copy, got);
	free(copy);
}

void op_write(fuse_req_t req, fuse_ino_t ino, const char *p,
	      size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fileh *h = (struct fileh *)(uintptr_t)fi->fh;
	struct node *n = h->n;
	struct buf tmp = BUF_INIT;
	const char *why = "";
	uint64_t end;
	int rc;

	if (h->tf) {
		char twhy[320];
		rc = fs_tsd_write(h->tf, p, size, twhy, sizeof twhy);
		if (rc)
			fs_fail(req, rc, "write tsd/%s: %s",
			     fs_tsd_file_name(h->tf), twhy);
		else
			fuse_reply_write(req, size);
		return;
	}
	if (h->hf) {
		char qwhy[160];
		pthread_mutex_lock(&h->lock);
		rc = fs_hq_write(h->hf, p, size, qwhy, sizeof qwhy);
		pthread_mutex_unlock(&h->lock);
		if (rc)
			fs_fail(req, rc, "write %s: %s", n->name, qwhy);
		else
			fuse_reply_write(req, size);
		return;
	}
	if (n->kind == K_ROOT_CTL || n->kind == K_TCTL ||
	    n->kind == K_BATCH) {
		pthread_mutex_lock(&h->lock);
		rc = lines_write(h, p, size, &why);
		pthread_mutex_unlock(&h->lock);
		if (rc)
			fs_fail(req, fs_errno(rc), "write %s: %s", n->name ?
			     n->name : "", why);
		else
			fuse_reply_write(req, size);
		return;
	}
	if (n->kind != K_CELL && n->kind != K_STAGE && n->kind != K_SCHEMA) {
		fs_fail(req, EACCES, "write %s: read-only file", n->name);
		return;
	}
	pthread_mutex_lock(&h->lock);
	end = h->append ? h->data.len + size : (uint64_t)off + size;
	if (end > fs_max_value) {
		h->failed = EFBIG;
		pthread_mutex_unlock(&h->lock);
		fs_fail(req, EFBIG, "write %s: value over max_value %" PRIu64,
		     n->name, fs_max_value);
		return;
	}
	if (fileh_hold(h, &h->data, end > h->data.len ? end : h->data.len)) {
		h->failed = ENOSPC;
		pthread_mutex_unlock(&h->lock);
		fs_fail(req, ENOSPC, "write %s: files open for writing hold "
		     "write_buffers bytes", n->name);
		return;
	}
	/* a write at the end (cp, a shell redirection: every one) appends,
	 * without first zeroing what it then overwrites */
	if (h->append || (uint64_t)off == h->data.len)
		rc = buf_append(&h->data, p, size);
	else {
		rc = end > h->data.len ? value_resize(&h->data, end) : 0;
		if (!rc)
			memcpy(h->data.p + off, p, size);
	}
	if (!rc && n->kind == K_SCHEMA) {
		/* Refuse a bad line at write(2), where the shell sees it;
		 * the schema changes at close. */
		size_t last = h->data.len;
		while (last > 0 && h->data.p[last - 1] != '\n')
			last--;
		tmp.p = h->data.p;
		tmp.len = last;
		rc = schema_check(&tmp, NULL, NULL, &why);
		if (rc)
			h->data.len = (size_t)off;
	}
	if (!rc)
		h->dirty = h->written = 1;
	else
		h->failed = fs_errno(rc);
	pthread_mutex_unlock(&h->lock);
	if (rc) {
		fs_fail(req, fs_errno(rc), "write %s: %s", n->name,
		     *why ? why : cf_strerror(rc));
	} else {
		__atomic_store_n(&n->attrs_stale, 1, __ATOMIC_SEQ_CST);
		fuse_reply_write(req, size);
	}
}
