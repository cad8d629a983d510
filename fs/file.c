/*
 * file.c: open files (struct fileh): OPEN and CREATE load what reads will
 * see or writes start from, FLUSH and RELEASE commit what was written (a
 * cell's value as one Put or Append, a staged file, .schema, the lines of
 * .ctl and .batch through fs/control.h); and what a handle holds, charged
 * to the write budget (fs/budget.c) before it grows.
 *
 * Promises: a value is committed whole or not at all (never half a
 * value: a refused write commits nothing); the lines of .ctl and .batch
 * are applied whole lines at a time, all or nothing per write(2).
 * Locks: a handle's lock, then fs_mu; engine calls hold neither.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "fs/control.h"
#include "fs/internal.h"
#include "util/env.h"
#include "util/log.h"

void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
	      struct fuse_file_info *fi)
{
	int rc = cf_db_sync(fs_db);
	if (rc)
		fs_fail(req, fs_errno(rc), "fsync: %s", cf_strerror(rc));
	else
		fuse_reply_err(req, 0);
}
static enum fs_ctl ctl_of(enum kind k)
{
	switch (k) {
	case K_ROOT_CTL: return FS_ROOT_CTL;
	case K_ROOT_STATS: return FS_ROOT_STATS;
	case K_ROOT_LOG: return FS_ROOT_LOG;
	case K_TCTL: return FS_TCTL;
	case K_TSTATS: return FS_TSTATS;
	case K_REGIONS: return FS_REGIONS;
	default: return FS_BATCH;
	}
}

static int control_write(struct node *n, const char *p, size_t len,
			 const char **why)
{
	return fs_control_write(fs_db, ctl_of(n->kind), n->table, p, len, why);
}

static int control_text(struct node *n, struct buf *out)
{
	cf_table *t;
	int rc;

	if (n->kind != K_SCHEMA)
		return fs_control_text(fs_db, ctl_of(n->kind), n->table, out);
	rc = topen(n->table, &t);
	if (rc)
		return rc;
	rc = schema_text(t, out);
	cf_table_close(t);
	return rc;
}

/* Writes out what a handle holds; 0 or errno (logged). */
int file_flush(struct fileh *h)
{
	struct node *n = h->n;
	struct stage **sp, *s;
	const char *why = "";
	cf_table *t;
	int rc = 0, err = 0;

	if (h->failed) {
		err = h->failed;	/* never half a value */
		goto out;
	}
	if (__atomic_load_n(&h->orphan, __ATOMIC_RELAXED))
		return 0;	/* mv replaced its cell: like writes to an
				 * unlinked file, they show under no name
				 * (op_rename); still dirty, so a time set
				 * on the fd stays the handle's */
	if (!h->dirty)
		return 0;
	switch (n->kind) {
	case K_CELL:
		if (h->append) {
			rc = topen(n->table, &t);
			if (!rc) {
				rc = cf_table_append(t, n->key.p ?
					(const void *)n->key.p : "",
					n->key.len, n->fam, n->famlen,
					n->qual.p ? (const void *)n->qual.p
						  : "", n->qual.len,
					h->data.p ? (const void *)h->data.p
						  : "", h->data.len, NULL);
				cf_table_close(t);
			}
			if (!rc) {
				erow_written(n, CF_TS_NOW);
				cell_changed(n, NULL, 0);
			}
		} else
			rc = cell_put(n, &h->data, h->ts);
		why = cf_strerror(rc);
		break;
	case K_SCHEMA:
		rc = apply_schema(n, &h->data, CF_TS_NOW, &why);
		break;
	case K_STAGE:
		pthread_mutex_lock(&fs_mu);
		sp = stage_find(n);
		if ((s = *sp) != NULL) {
			if (stage_bytes - s->data.len + h->data.len >
			    STAGE_LIMIT) {
				err = ENOSPC;
				why = "staged files over their memory bound";
			} else {
				stage_bytes -= s->data.len;
				buf_reset(&s->data);
				rc = buf_append(&s->data, h->data.p,
						h->data.len);
				if (!rc)
					stage_bytes += h->data.len;
			}
		} else {
			err = ENOENT;
			why = "staged file was removed";
		}
		pthread_mutex_unlock(&fs_mu);
		break;
	default:
		break;
	}
	if (!err && rc)
		err = fs_errno(rc);
	if (err)
		cf_log(CF_LOG_WARN, "write %s: %s: %s", n->name, why,
		       strerror(err));
	else
		h->dirty = 0;
out:
	/* the kernel may hold the name of a cell created by this open
	 * (reply_open): without a Put, it may name nothing */
	if (err && n->kind == K_CELL)
		cell_changed(n, NULL, 1);
	return err;
}

/* Every open handle, so that the handles the kernel never released
 * (files still open when a signal ends the daemon) are freed at
 * teardown; under fs_mu. */
static struct fileh *open_files;

static void fileh_free(struct fileh *h)
{
	struct node *n = h->n;

	fs_budget_give(h->held);
	fval_put(h->fv);
	buf_release(&h->data);
	buf_release(&h->tail);
	fs_tsd_file_close(h->tf);
	fs_hq_close(h->hf);
	fs_hq_close(h->dump);
	pthread_mutex_destroy(&h->lock);
	pthread_mutex_lock(&fs_mu);
	*h->oprev = h->onext;
	if (h->onext)
		h->onext->oprev = h->oprev;
	if (n->writer == h)
		n->writer = NULL;
	if (n->kind == K_TSD && h->writable)
		n->twriters--;
	free(h);
	n->nopen--;
	node_unref(n);
	pthread_mutex_unlock(&fs_mu);
}

/* Opens n: loads what reads will see, or what writes start from.
 * Returns 0 or an errno; *why (static or thread-local) says why. */
static int file_open(struct node *n, int flags, int created,
		     struct fileh **out, const char **why)
{
	struct fileh *h = calloc(1, sizeof *h);
	struct stage **sp;
	cf_table *t;
	int rc = 0, found, acc = flags & O_ACCMODE;
	int64_t ts;
	size_t len;

	*why = "";
	if (!h)
		return ENOMEM;
	pthread_mutex_init(&h->lock, NULL);
	h->n = n;
	h->ts = n->ts;
	h->writable = acc != O_RDONLY;
	pthread_mutex_lock(&fs_mu);
	h->onext = open_files;
	h->oprev = &open_files;
	if (open_files)
		open_files->oprev = &h->onext;
	open_files = h;
	n->nopen++;
	if (h->writable && (n->kind == K_CELL || n->kind == K_HQ))
		n->writer = h;
	if (h->writable && n->kind == K_TSD)
		n->twriters++;
	pthread_mutex_unlock(&fs_mu);
	if (n->kind == K_HQ) {
		static __thread char qwhy[160];
		struct fs_hq_target tg;
		int err;
		hq_target(n, &tg);
		err = fs_hq_open(fs_db, n->hk, &tg, flags, &h->hf, qwhy,
				 sizeof qwhy);
		*why = qwhy;
		if (err) {
			fileh_free(h);
			return err;
		}
		*out = h;
		return 0;
	}
	if (n->kind == K_TSD) {
		static __thread char twhy[320];
		int err = fs_tsd_open(n->tk, &n->key, flags, &h->tf, twhy,
				      sizeof twhy);
		*why = twhy;
		if (err) {
			fileh_free(h);
			return err;
		}
		*out = h;
		return 0;
	}
	if (created)
		h->dirty = 1;	/* an empty file is an empty value */
	switch (n->kind) {
	case K_CELL:
		if (h->writable && (flags & O_APPEND)) {
			h->append = 1;
			break;
		}
		if (created || (h->writable && (flags & O_TRUNC))) {
			h->dirty = h->writable;
			break;
		}
		rc = topen(n->table, &t);
		if (!rc && !h->writable) {
			/* reads send the Get's row: no copy of the value */
			rc = fval_get(t, n, attr_cacheable(n->table) &&
				      !table_has_ttl(n->table), &h->fv);
			cf_table_close(t);
		} else if (!rc) {
			rc = cell_get(t, n, &found, &h->data, &ts, &len);
			cf_table_close(t);
			if (!rc && !found)
				rc = CF_ENOTFOUND;
			/* read before it is charged: a bounded overshoot
			 * of one value per open in flight */
			if (!rc && h->data.cap) {
				rc = fs_budget_take(h->data.cap);
				if (rc)
					*why = "files open for writing hold "
					       "write_buffers bytes";
				else
					h->held = h->data.cap;
			}
		}
		break;
	case K_STAGE:
		if (created || (flags & O_TRUNC)) {
			h->dirty = h->writable;
			break;
		}
		pthread_mutex_lock(&fs_mu);
		sp = stage_find(n);
		if (*sp)
			rc = buf_append(&h->data, (*sp)->data.p,
					(*sp)->data.len);
		else
			rc = CF_ENOTFOUND;
		pthread_mutex_unlock(&fs_mu);
		break;
	case K_SCHEMA:
		if (h->writable && (flags & O_TRUNC)) {
			h->dirty = 1;
			break;
		}
		/* fall through */
	case K_ROOT_STATS: case K_ROOT_LOG: case K_TSTATS: case K_REGIONS:
		if (acc == O_WRONLY && n->kind != K_SCHEMA)
			break;
		rc = control_text(n, &h->data);
		break;
	case K_BATCH:
		if (acc != O_WRONLY) {
			/* reads see the dump, made while read as a scan
			 * file's lines (fs/scan.c): a few chunks held,
			 * whatever the table's size */
			static __thread char dwhy[160];
			struct fs_hq_target tg;
			int err;
			memset(&tg, 0, sizeof tg);
			tg.table = n->table;
			tg.row = tg.qual = tg.arg = "";
			tg.fam = "";
			err = fs_hq_open(fs_db, FQ_DUMP, &tg, O_RDONLY,
					 &h->dump, dwhy, sizeof dwhy);
			if (err) {
				*why = dwhy;
				fileh_free(h);
				return err;
			}
		}
		break;
	case K_ROOT_CTL: case K_TCTL:
		break;
	default:
		rc = CF_EINVAL;
		*why = "not a file";
		break;
	}
	if (rc) {
		fileh_free(h);
		if (!**why)
			*why = cf_strerror(rc);
		return fs_errno(rc);
	}
	*out = h;
	return 0;
}

static void reply_open(fuse_req_t req, struct fileh *h,
		       struct fuse_file_info *fi, const struct stat *st,
		       struct node *n)
{
	fi->fh = (uint64_t)(uintptr_t)h;
	/* direct_io for reads too: each open reads from its own snapshot
	 * of the value.  Through the page cache (one READ less per cat:
	 * the kernel would stop at the size) two opens of one cell share
	 * pages, and a reader that opened before a write can fill them
	 * with the old value after the writer's open emptied them: t1070
	 * read its own write back stale that way. */
	fi->direct_io = 1;
	fi->keep_cache = 0;
	/* nothing is committed at the close of a read-only open: the
	 * kernel need not send FLUSH (a round trip per cat) */
	fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY;
	if (st) {
		struct fuse_entry_param e;
		memset(&e, 0, sizeof e);
		e.ino = ino_of(n);
		e.attr = *st;
		/* cached as a lookup would be (a stat after the close is
		 * then a GETATTR): the close's Put invalidates the
		 * attributes, a failed one the name too (file_flush) */
		e.attr_timeout = e.entry_timeout = cache_s(n);
		pthread_mutex_lock(&fs_mu);
		n->nlookup++;
		pthread_mutex_unlock(&fs_mu);
		attrs_sent(n);
		if (fuse_reply_create(req, &e, fi) != 0) {
			pthread_mutex_lock(&fs_mu);
			n->nlookup--;
			pthread_mutex_unlock(&fs_mu);
			fileh_free(h);
		}
		return;
	}
	if (fuse_reply_open(req, fi) != 0)
		fileh_free(h);
}

void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct node *n = node_of(ino);
	struct fileh *h;
	const char *why;
	int rc;

	if (node_is_dir(n)) {
		fs_fail(req, EISDIR, "open %s", n->name);
		return;
	}
	rc = file_open(n, fi->flags, 0, &h, &why);
	if (rc) {
		fs_fail(req, rc, "open %s: %s", n->name, why);
		return;
	}
	reply_open(req, h, fi, NULL, n);
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
	       mode_t mode, struct fuse_file_info *fi)
{
	struct node *n;
	struct stage *s, **sp;
	struct fileh *h;
	struct stat st;
	cf_table *t;
	const char *why;
	int err, rc = 0;

	err = lookup_node(parent, name, &n, &why);
	if (err) {
		fs_fail(req, err, "create %s: %s", name, why);
		return;
	}
	switch (n->kind) {
	case K_CELL:
		rc = topen(n->table, &t);
		if (rc)
			break;
		if (!cf_table_has_family(t, n->fam, n->famlen)) {
			err = ENOENT;
			why = "unknown family";
		}
		cf_table_close(t);
		break;
	case K_STAGE:
		s = calloc(1, sizeof *s);
		if (!s || !(s->name = strdup(name)) ||
		    buf_append(&s->row, n->key.p, n->key.len)) {
			if (s)
				free(s->name);
			free(s);
			rc = CF_ENOMEM;
			break;
		}
		strcpy(s->table, n->table);
		s->in_row = n->in_row;
		s->mtime = CF_TS_NOW;
		pthread_mutex_lock(&fs_mu);
		sp = stage_find(n);
		if (*sp) {
			stage_free(*sp == s ? s : (s->next = (*sp)->next,
				   *sp));
			*sp = s;
		} else {
			*sp = s;
		}
		pthread_mutex_unlock(&fs_mu);
		break;
	case K_TSD:
		if (n->tk != FT_PUT && n->tk != FT_METRIC &&
		    n->tk != FT_NOTE) {
			err = EPERM;
			why = "no file can be created here";
		}
		break;
	case K_HQ:
		if (n->hk != FQ_COUNTER) {
			err = EPERM;
			why = "a query name is read-only";
		}
		break;
	default:
		err = EPERM;
		why = "no file can be created here";
		break;
	}
	if (!err && rc) {
		err = fs_errno(rc);
		why = cf_strerror(rc);
	}
	if (!err) {
		err = file_open(n, fi->flags, 1, &h, &why);
	}
	if (err) {
		node_release(n);
		fs_fail(req, err, "create %s: %s", name, why);
		return;
	}
	memset(&st, 0, sizeof st);
	st.st_ino = ino_of(n);
	st.st_nlink = 1;
	node_perm(n, &st);
	set_time(&st, now_ms());
	reply_open(req, h, fi, &st, n);
	node_release(n);
}

/* Applies what was written to a counter (a flush or the release); 0 or
 * errno (logged). */
static int flush_hq(struct fileh *h)
{
	char why[160];
	int err, changed;

	pthread_mutex_lock(&h->lock);
	err = fs_hq_flush(h->hf, &changed, why, sizeof why);
	pthread_mutex_unlock(&h->lock);
	if (err)
		cf_log(CF_LOG_WARN, "write %s: %s: %s", h->n->name, why,
		       strerror(err));
	if (changed) {
		erow_written(h->n, CF_TS_NOW);
		cell_changed(h->n, NULL, 0);
	}
	return err;
}

/* With h->lock held (or h not yet shared): charges the growth of b, h's
 * data or tail, to len bytes to the write budget before it happens, as
 * the capacity buf_reserve will give it.  CF_ENOSPC over the budget. */
int fileh_hold(struct fileh *h, const struct buf *b, uint64_t len)
{
	uint64_t cap = b->cap ? b->cap : 64;
	int rc;

	if (len <= b->cap)
		return CF_OK;
	while (cap < len)
		cap = cap * 2 > cap ? cap * 2 : len;
	rc = fs_budget_take(cap - b->cap);
	if (!rc)
		h->held += cap - b->cap;
	return rc;
}

int value_resize(struct buf *b, uint64_t len)
{
	if (len > b->len) {
		if (buf_reserve(b, (size_t)(len - b->len)))
			return CF_ENOMEM;
		memset(b->p + b->len, 0, (size_t)(len - b->len));
	}
	b->len = (size_t)len;
	return 0;
}

/*
 * With h->lock held: one write(2) to .batch or .ctl.  The lines it
 * completes (with what earlier writes left unfinished) are applied all or
 * nothing; an unfinished last line waits for the next write or the close,
 * so `cat dump > .batch` works whatever the size of the kernel's writes.
 * A refused write is dropped whole, and the rest of its unfinished line,
 * coming in the next writes, is skipped.
 */
int lines_write(struct fileh *h, const char *p, size_t size,
		const char **why)
{
	size_t last, skipped = 0;
	int rc;

	*why = "";
	if (h->skip) {
		while (skipped < size && p[skipped] != '\n')
			skipped++;
		if (skipped == size)
			return 0;
		h->skip = 0;
		p += skipped + 1;
		size -= skipped + 1;
	}
	for (last = size; last > 0 && p[last - 1] != '\n'; last--)
		;
	if (h->tail.len + size > 3 * fs_max_value + 65536) {
		*why = "line longer than 3 x max_value";
		rc = CF_ETOOBIG;
		goto refused;
	}
	if (fileh_hold(h, &h->tail, h->tail.len + size)) {
		*why = "files open for writing hold write_buffers bytes";
		rc = CF_ENOSPC;
		goto refused;
	}
	if (last == 0)
		return buf_append(&h->tail, p, size);
	rc = buf_append(&h->tail, p, last);
	if (!rc)
		rc = control_write(h->n, (char *)h->tail.p, h->tail.len, why);
	if (rc)
		goto refused;
	buf_reset(&h->tail);
	return buf_append(&h->tail, p + last, size - last);
refused:
	buf_reset(&h->tail);
	h->skip = size > 0 && p[size - 1] != '\n';
	return rc;
}

/* With h->lock held: applies an unfinished last line (at close). */
static int lines_finish(struct fileh *h, const char **why)
{
	int rc;

	*why = "";
	if (!h->tail.len)
		return 0;
	rc = control_write(h->n, (char *)h->tail.p, h->tail.len, why);
	buf_reset(&h->tail);
	return rc;
}

void op_flush(fuse_req_t req, fuse_ino_t ino,
	      struct fuse_file_info *fi)
{
	struct fileh *h = (struct fileh *)(uintptr_t)fi->fh;
	int err;

	/* A shell redirection closes a dup of the fd before writing: an
	 * open that wrote nothing yet commits at release, so that `echo v >
	 * F:Q` is one Put and not an empty version first. */
	if (h->tf) {
		char twhy[320];
		err = fs_tsd_flush(h->tf, twhy, sizeof twhy);
		if (err)
			fs_fail(req, err, "write tsd/%s: %s",
			     fs_tsd_file_name(h->tf), twhy);
		else
			fuse_reply_err(req, 0);
		return;
	}
	if (h->hf) {
		fuse_reply_err(req, flush_hq(h));
		return;
	}
	pthread_mutex_lock(&h->lock);
	if (h->tail.len) {
		const char *why;
		int rc = lines_finish(h, &why);
		pthread_mutex_unlock(&h->lock);
		if (rc)
			fs_fail(req, fs_errno(rc), "write %s: %s", h->n->name,
			     *why ? why : cf_strerror(rc));
		else
			fuse_reply_err(req, 0);
		return;
	}
	err = h->written || h->failed ? file_flush(h) : 0;
	pthread_mutex_unlock(&h->lock);
	fuse_reply_err(req, err);
}

void file_teardown(void)
{
	struct fileh *h;

	for (;;) {
		pthread_mutex_lock(&fs_mu);
		h = open_files;
		pthread_mutex_unlock(&fs_mu);
		if (!h)
			break;
		fileh_free(h);	/* what it holds unflushed was never acked */
	}
}

void op_release(fuse_req_t req, fuse_ino_t ino,
		struct fuse_file_info *fi)
{
	struct fileh *h = (struct fileh *)(uintptr_t)fi->fh;

	if (h->tail.len) {
		const char *why;
		if (lines_finish(h, &why))
			cf_log(CF_LOG_WARN, "write %s: %s", h->n->name, why);
	}
	if (h->hf)
		flush_hq(h);
	else if (!h->failed && !h->tf)
		file_flush(h);	/* errors were logged and told at flush */
	fileh_free(h);
	fuse_reply_err(req, 0);
}
