/*
 * dir.c: listings: OPENDIR, READDIR, READDIRPLUS and RELEASEDIR of every
 * directory of the tree.  Small listings are made whole at opendir;
 * region and prefix listings stream from an engine scan (struct dirh),
 * and readdirplus makes its next page while the kernel reads the last;
 * row and .versions listings read the row page by page (cf_row_cursor,
 * ROW_PAGE cells at a time), the first page at opendir.
 *
 * Promises: a row deleted through this daemon never reaches the kernel
 * in a page sent after the delete returned (rows_gen); memory per open
 * directory is one page and the entries not yet read back, not the
 * listing.  Locks: a handle's lock (d->lock) serializes its requests and
 * is taken before fs_mu.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"
#include "util/escape.h"

/* --- directories --------------------------------------------------------- */

/* An entry of a listing; have: its attributes are known (a directory,
 * or a cell with size and version) and readdirplus gives them without
 * asking the engine again. */
struct dent {
	char *name;
	int dir, have;
	uint64_t size;
	int64_t mtime;
	uint64_t gen;		/* streaming: rows_gen() of what it says */
};

/* A readdirplus reply: entries from offset off to end, and the nodes
 * pinned (nopen) for the entries that carry one, until the reply is sent
 * (page_send: the pins become kernel lookups) or dropped (page_drop). */
struct page {
	char *buf;
	size_t bcap;		/* of buf */
	size_t size, used;	/* size 0: no page */
	uint64_t off, end;
	int eof;		/* the listing ends with this page */
	uint64_t gen;		/* streaming: rows_gen() when made */
	struct node **pin;
	size_t npin, pcap;
};

/*
 * An open directory.  Small listings are made whole at opendir; region
 * and prefix listings stream from a scanner: e[] holds the entries from
 * offset base on, pulled as readdir asks for them and dropped once read,
 * so a million-row region costs one scan and a page of names.  A seek
 * back before base (rewinddir) starts the scan again.
 *
 * A streaming readdirplus makes its next page (`ahead`) right after each
 * reply, while the kernel turns that reply into inodes and the reader
 * stats them: the kernel's work and ours overlap, and the next request
 * finds its answer ready when it asks for the offset and size expected.
 * Its entries are rows, whose attributes do not change, pulled from the
 * scan, which sees rows written meanwhile or not (cf_scan_open); a
 * request for another offset or size drops it.  But a row deleted once
 * its entry was pulled must not reach the kernel after the delete
 * returned (the kernel would keep the name fs_cache_s), and the scan may
 * still show a row deleted after it opened: a page is sent only if its
 * table had no change since it was made (rows_gen), else made again, and
 * once the table changed after the scan opened, an entry is a row only
 * if the engine still says so (node_stat).
 */
struct dirh {
	struct node *node;	/* the directory (the kernel holds it) */
	struct dent *e;
	size_t n, cap;
	uint64_t base;		/* offset of e[0] */
	cf_scanner *scan;	/* region or prefix listing, continued lazily,
				 * in pages of ROW_PAGE cells (a row of many
				 * cells comes as several pages) */
	struct buf lastrow;	/* the row of the scan's last page */
	int lastrow_listed;	/* ... is the entry e[n - 1] */
	cf_row_cursor *rcur;	/* row or .versions listing, page by page */
	int versions;		/* ... of .versions: every kept version */
	size_t rcount;		/* ... its cells so far */
	int64_t rnewest;	/* ... and the newest version among them */
	uint64_t sgen;		/* rows_gen() before the scan or the row
				 * listing opened */
	int serr;		/* the error that ended the pulls: every pull
				 * past their end fails, until dir_start */
	int streaming;
	int paged;		/* a row listing: pages dropped once read */
	cf_table *t;
	struct page ahead;	/* ahead.buf: the next readdirplus page */
	pthread_mutex_t lock;
};

static int dir_add(struct dirh *d, const char *name, size_t len, int dir)
{
	struct dent *ne;

	if (d->n == d->cap) {
		size_t nc = d->cap ? d->cap * 2 : 32;
		ne = realloc(d->e, nc * sizeof *ne);
		if (!ne)
			return CF_ENOMEM;
		d->e = ne;
		d->cap = nc;
	}
	d->e[d->n].name = strndup(name, len);
	if (!d->e[d->n].name)
		return CF_ENOMEM;
	d->e[d->n].dir = d->e[d->n].have = dir;
	d->e[d->n].gen = 0;
	d->e[d->n].size = 0;
	d->e[d->n++].mtime = 0;
	return 0;
}

static int dir_add_attr(struct dirh *d, const char *name, size_t len,
			uint64_t size, int64_t mtime)
{
	int rc = dir_add(d, name, len, 0);

	if (!rc) {
		d->e[d->n - 1].have = 1;
		d->e[d->n - 1].size = size;
		d->e[d->n - 1].mtime = mtime;
	}
	return rc;
}

/* Forgets the entries before offset off. */
static void dir_trim(struct dirh *d, uint64_t off)
{
	size_t k = (size_t)(off - d->base), i;

	if (k > d->n)
		k = d->n;
	for (i = 0; i < k; i++)
		free(d->e[i].name);
	memmove(d->e, d->e + k, (d->n - k) * sizeof *d->e);
	d->n -= k;
	d->base += k;
}

static int dir_add_cb(void *d, const char *name, size_t len, int dir)
{
	return dir_add(d, name, len, dir);
}

/* Drops p's page: its pins are released. */
static void page_drop(struct page *p)
{
	size_t i;

	if (p->npin) {
		pthread_mutex_lock(&fs_mu);
		for (i = 0; i < p->npin; i++) {
			p->pin[i]->nopen--;
			node_unref(p->pin[i]);
		}
		pthread_mutex_unlock(&fs_mu);
	}
	p->npin = 0;
	p->size = p->used = 0;
}

/* p is about to be sent: its pins become the kernel's lookups, which a
 * readdirplus entry with an inode counts (fs_mu once for the page). */
static void page_send(struct page *p)
{
	size_t i;

	pthread_mutex_lock(&fs_mu);
	for (i = 0; i < p->npin; i++) {
		p->pin[i]->nlookup++;
		p->pin[i]->nopen--;
	}
	pthread_mutex_unlock(&fs_mu);
	__atomic_add_fetch(&fs_counts.readdirplus_entries, p->npin,
			   __ATOMIC_RELAXED);
	p->npin = 0;
}

static void dir_free(struct dirh *d)
{
	size_t i;

	page_drop(&d->ahead);
	free(d->ahead.buf);
	free(d->ahead.pin);
	for (i = 0; i < d->n; i++)
		free(d->e[i].name);
	free(d->e);
	if (d->scan)
		cf_scan_close(d->scan);
	buf_release(&d->lastrow);
	cf_row_cursor_close(d->rcur);
	if (d->t)
		cf_table_close(d->t);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

/* Cells a row listing reads at a time (cf_row_cursor_next): a row of
 * millions of columns or versions costs this many entries, not the row
 * (docs/usage.md, "Bounds"). */
#define ROW_PAGE 1024

/* Opens the row listing of row: every kept version with @TS, or the
 * latest. */
static int row_open(struct dirh *d, const struct buf *row, int versions)
{
	struct cf_read_opts o = CF_READ_OPTS_INIT;

	o.keys_only = 1;
	o.max_versions = versions ? INT32_MAX : 1;
	d->versions = versions;
	d->rcount = 0;
	d->rnewest = 0;
	d->sgen = rows_gen(d->node->table);
	return cf_row_cursor_open(d->t, row->p ? (const void *)row->p : "",
				  row->len, &o, &d->rcur);
}

/* Adds the next page of the row listing (none left: the cursor goes,
 * and the row's time, the newest of all its pages, is its node's). */
static int row_more(struct dirh *d)
{
	struct buf b = BUF_INIT;
	const struct cf_cell *c;
	const cf_row *r;
	struct node *rn;
	size_t i;
	int rc;

	rc = cf_row_cursor_next(d->rcur, ROW_PAGE, &r);
	if (!rc && !cf_row_count(r)) {
		cf_row_cursor_close(d->rcur);	/* r goes with it */
		d->rcur = NULL;
		/* every kept version or the latest of each column: the
		 * newest is the same */
		rn = d->versions ? d->node->parent : d->node;
		if (d->rcount && rows_fillable(d->t, rn->table))
			row_seen(rn, d->rnewest, d->sgen);
		return 0;
	}
	for (i = 0; !rc && i < cf_row_count(r); i++) {
		c = cf_row_cell(r, i);
		d->rcount++;
		if (c->ts > d->rnewest)
			d->rnewest = c->ts;
		buf_reset(&b);
		rc = buf_append(&b, c->fam, c->famlen);
		if (!rc)
			rc = buf_putc(&b, ':');
		if (!rc)
			rc = cf_escape(c->qual, c->qlen, &b);
		if (!rc && d->versions)
			rc = buf_printf(&b, "@%" PRId64, c->ts);
		if (!rc && b.len > 255)
			count(&fs_counts.names_unlisted);
		else if (!rc)
			rc = dir_add_attr(d, (char *)b.p, b.len, c->vlen,
					  c->ts);
	}
	buf_release(&b);
	return rc;
}

/* The creation time of table name, 0 when it cannot be opened (dropped
 * since it was listed: the listing shows it as it was). */
static int64_t table_made(const char *name)
{
	cf_table *t;
	int64_t made = 0, changed;

	if (!topen(name, &t)) {
		if (cf_table_times(t, &made, &changed))
			made = 0;
		cf_table_close(t);
	}
	return made;
}

static int dir_fill(struct node *n, struct dirh *d)
{
	struct cf_region_info *r = NULL;
	struct cf_scan_opts so;
	struct buf b = BUF_INIT;
	char **names = NULL;
	size_t nn = 0, i;
	int rc = 0;

	rc = dir_add(d, ".", 1, 1);
	if (!rc)
		rc = dir_add(d, "..", 2, 1);
	if (rc)
		return rc;
	if (n->kind == K_ROOT) {
		rc = dir_add(d, "tsd", 3, 1);
		if (!rc)	/* made when read, as its stat says */
			d->e[d->n - 1].mtime = now_ms();
		if (!rc)
			rc = cf_table_list(fs_db, &names, &nn);
		for (i = 0; !rc && i < nn; i++) {
			rc = dir_add(d, names[i], strlen(names[i]), 1);
			if (!rc)
				d->e[d->n - 1].mtime = table_made(names[i]);
		}
		free(names);
		return rc;
	}
	if (n->kind == K_TSD)
		return fs_tsd_list(n->tk, dir_add_cb, d);
	rc = topen(n->table, &d->t);
	if (rc)
		return rc;
	switch (n->kind) {
	case K_TABLE:
		rc = dir_add(d, ".schema", 7, 0);
		if (!rc)
			rc = cf_table_regions(d->t, &r, &nn);
		for (i = 0; !rc && i < nn; i++) {
			buf_reset(&b);
			rc = buf_putc(&b, '@');
			if (!rc)
				rc = cf_escape(r[i].start, r[i].startlen, &b);
			if (!rc && b.len > 255)
				count(&fs_counts.names_unlisted);
			else if (!rc &&
				 !(rc = dir_add(d, (char *)b.p, b.len, 1)))
				d->e[d->n - 1].mtime = r[i].created_ms;
		}
		cf_regions_free(r, nn);
		break;
	case K_REGION:
	case K_PREFIX:
		d->sgen = rows_gen(n->table);
		memset(&so, 0, sizeof so);
		so.read.max_ts = INT64_MAX;
		so.read.max_versions = 1;
		so.read.keys_only = 1;
		so.batch = ROW_PAGE;
		if (n->kind == K_PREFIX) {
			so.prefix = n->key.p;
			so.prefixlen = n->key.len;
			rc = cf_scan_open(d->t, &so, &d->scan);
			break;
		}
		rc = cf_table_regions(d->t, &r, &nn);
		for (i = 0; !rc && i < nn; i++)
			if (r[i].startlen == n->key.len && (!n->key.len ||
			    !memcmp(r[i].start, n->key.p, n->key.len)))
				break;
		if (!rc && i == nn)
			rc = CF_ENOTFOUND;
		if (!rc) {
			so.start = r[i].start;
			so.startlen = r[i].startlen;
			so.stop = r[i].endlen ? r[i].end : NULL;
			so.stoplen = r[i].endlen;
			rc = cf_scan_open(d->t, &so, &d->scan);
		}
		cf_regions_free(r, nn);
		break;
	case K_ROW:
	case K_VERSIONS:
		/* the first page now, as a Get of the row would read it */
		rc = row_open(d, &n->key, n->kind == K_VERSIONS);
		if (!rc)
			rc = row_more(d);
		break;
	default:
		break;
	}
	buf_release(&b);
	return rc;
}

/* Pulls rows from the scanner until d holds the entry at offset want. */
static int dir_more(struct dirh *d, uint64_t want)
{
	struct buf b = BUF_INIT;
	const cf_row *r;
	const unsigned char *k;
	size_t klen;
	int rc = 0;

	if (d->serr && d->base + d->n <= want)
		return d->serr;
	while (!rc && d->rcur && d->base + d->n <= want)
		rc = row_more(d);
	/* an entry is complete (its time the newest of all its row's
	 * pages) once the next row begins: one entry past want */
	while (!rc && d->scan && d->base + d->n <= want + 1) {
		rc = cf_scan_next(d->scan, &r);
		if (rc || !r) {
			cf_scan_close(d->scan);
			d->scan = NULL;
			break;
		}
		k = cf_row_key(r, &klen);
		if (d->lastrow.len == klen && klen &&
		    !memcmp(d->lastrow.p, k, klen)) {
			/* the row's next page */
			int64_t ts = row_newest(r);
			if (d->lastrow_listed && d->n &&
			    ts > d->e[d->n - 1].mtime)
				d->e[d->n - 1].mtime = ts;
			continue;
		}
		buf_reset(&d->lastrow);
		d->lastrow_listed = 0;
		if ((rc = buf_append(&d->lastrow, k, klen)))
			break;
		buf_reset(&b);
		rc = cf_escape(k, klen, &b);
		if (!rc && b.len > 255)
			count(&fs_counts.names_unlisted);
		else if (!rc && b.len > 0 &&
			 !(rc = dir_add(d, (char *)b.p, b.len, 1))) {
			d->e[d->n - 1].gen = d->sgen;
			d->e[d->n - 1].mtime = row_newest(r);
			d->lastrow_listed = 1;
		}
		if (rc)
			break;
	}
	buf_release(&b);
	if (rc)
		d->serr = rc;	/* the row is lost: never a listing without it */
	return rc;
}

/* Makes d list n from the start. */
static int dir_start(struct dirh *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->e[i].name);
	d->n = 0;
	d->base = 0;
	d->serr = 0;
	if (d->scan)
		cf_scan_close(d->scan);
	d->scan = NULL;
	buf_reset(&d->lastrow);
	d->lastrow_listed = 0;
	cf_row_cursor_close(d->rcur);
	d->rcur = NULL;
	if (d->t)
		cf_table_close(d->t);
	d->t = NULL;
	return dir_fill(d->node, d);
}

/* With d->lock held: the entry at offset off, or NULL at the end.  With
 * trim, entries of a streaming listing before off are dropped: a reply
 * trims once, at its first offset, so that the kernel may ask again from
 * any entry of the last reply (a reader whose buffer took only part of
 * it) without a new scan. */
static int dir_at(struct dirh *d, uint64_t off, int trim, struct dent **out)
{
	int rc = 0;

	*out = NULL;
	if (off < d->base)
		rc = dir_start(d);
	if (!rc && trim && (d->streaming || d->paged) && off > d->base)
		dir_trim(d, off);
	if (!rc)
		rc = dir_more(d, off);
	if (!rc && off - d->base < d->n)
		*out = &d->e[off - d->base];
	return rc;
}

void op_opendir(fuse_req_t req, fuse_ino_t ino,
		struct fuse_file_info *fi)
{
	struct node *n = node_of(ino);
	struct dirh *d = calloc(1, sizeof *d);
	int rc;

	if (!d) {
		fs_fail(req, ENOMEM, "opendir");
		return;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->node = n;
	d->streaming = n->kind == K_REGION || n->kind == K_PREFIX;
	d->paged = n->kind == K_ROW || n->kind == K_VERSIONS;
	rc = dir_fill(n, d);
	if (rc) {
		dir_free(d);
		fs_fail(req, fs_errno(rc), "opendir %s: %s", n->name ? n->name
		     : "/", cf_strerror(rc));
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	if (fuse_reply_open(req, fi) != 0)
		dir_free(d);
}

/* The attributes of entry e of directory d; 0 or errno.  Entries whose
 * attributes came with the listing cost no engine call. */
static int dent_stat(struct dirh *d, const struct dent *e, struct node *n,
		     struct stat *st)
{
	if (!e->have)
		return node_stat(n, st);
	memset(st, 0, sizeof *st);
	st->st_ino = ino_of(n);
	st->st_nlink = e->dir ? 2 : 1;
	node_perm(n, st);
	st->st_size = (off_t)e->size;
	set_time(st, e->mtime);
	(void)d;
	return 0;
}

/* With d->lock held: the node table's slots for the entries of d from
 * offset off on (RUN of them, pulled from the scan if need be), and the
 * nodes and names in them, are fetched into the cache together.  The
 * table of a large listing is far larger than the caches; looked up one
 * after the other, every entry would wait for three misses in turn. */
#define RUN 32
static void dir_prefetch(struct dirh *d, uint64_t off)
{
	const struct node *n;
	uint64_t h[RUN];
	size_t i, k, cnt;

	/* an error is kept (serr) for the pull that needs the row */
	(void)dir_more(d, off + RUN - 1);
	if (off < d->base || off - d->base >= d->n)
		return;
	k = (size_t)(off - d->base);
	cnt = d->n - k < RUN ? d->n - k : RUN;
	for (i = 0; i < cnt; i++)
		h[i] = node_hname(d->node, d->e[k + i].name);
	pthread_mutex_lock(&fs_mu);
	for (i = 0; node_hcap && i < cnt; i++)
		__builtin_prefetch(&node_htab[node_hslot(h[i], node_hcap)]);
	for (i = 0; node_hcap && i < cnt; i++)
		if ((n = node_htab[node_hslot(h[i], node_hcap)]))
			__builtin_prefetch(n);
	for (i = 0; node_hcap && i < cnt; i++)
		if ((n = node_htab[node_hslot(h[i], node_hcap)]) &&
		    n->hash == h[i])
			__builtin_prefetch(n->name);
	pthread_mutex_unlock(&fs_mu);
}

/* With d->lock held: makes p the readdirplus reply of size bytes from
 * offset off, every entry but . and .. interned and pinned (a lookup).
 * With trim, entries before off are dropped (dir_at).  The buffer is
 * filled without a request: fuse_add_direntry_plus only formats. */
static int page_fill(struct dirh *d, struct page *p, size_t size,
		     uint64_t off, int trim)
{
	struct fuse_entry_param ep;
	struct node *n, **np;
	struct dent *e;
	const char *why;
	double cs = -1;
	size_t ent;
	int rc = 0, dot, again, fill = -1;

	if (p->bcap < size) {
		char *nb = realloc(p->buf, size);
		if (!nb)
			return CF_ENOMEM;
		p->buf = nb;
		p->bcap = size;
	}
	p->size = size;
	p->used = 0;
	p->off = off;
	p->eof = 0;
	p->gen = d->streaming ? rows_gen(d->node->table) : 0;
	for (;; off++) {
		rc = dir_at(d, off, trim && off == p->off, &e);
		if (rc)
			break;
		if (!e) {
			p->eof = 1;
			break;
		}
		if ((off - p->off) % RUN == 0) {
			dir_prefetch(d, off);
			e = &d->e[off - d->base];	/* e[] may have moved */
		}
		ent = fuse_add_direntry_plus(NULL, NULL, 0, e->name, NULL, 0);
		if (ent > size - p->used)
			break;
		if (p->npin == p->pcap) {
			size_t nc = p->pcap ? 2 * p->pcap : 256;
			if (!(np = realloc(p->pin, nc * sizeof *np))) {
				rc = CF_ENOMEM;
				break;
			}
			p->pin = np;
			p->pcap = nc;
		}
		memset(&ep, 0, sizeof ep);
		ep.attr.st_ino = (ino_t)off + 2;
		ep.attr.st_mode = e->dir ? S_IFDIR : S_IFREG;
		dot = !strcmp(e->name, ".") || !strcmp(e->name, "..");
		/* a row pulled before a change: the engine says again */
		again = !dot && d->streaming && e->gen != p->gen;
		if (!dot && !lookup_node(ino_of(d->node), e->name, &n, &why)) {
			if (again ? node_stat(n, &ep.attr)
				  : dent_stat(d, e, n, &ep.attr)) {
				node_release(n);
				if (again)
					continue;	/* gone: not listed */
				/* else listed, without an inode */
			} else {
				if (again)
					e->gen = p->gen;
				else if (d->streaming && n->kind == K_ROW &&
					 e->gen == d->sgen) {
					/* its time from the scan, which
					 * read the row whole */
					if (fill < 0)
						fill = rows_fillable(d->t,
							d->node->table);
					if (fill)
						row_seen(n, e->mtime, e->gen);
				}
				ep.ino = ino_of(n);
				/* below the root, every entry is of one
				 * table: ask whether it has a TTL once */
				if (!cache_by_table(n) ||
				    d->node->kind == K_ROOT)
					ep.attr_timeout = cache_s(n);
				else if (cs < 0)
					ep.attr_timeout = cs = cache_s(n);
				else
					ep.attr_timeout = cs;
				ep.entry_timeout = ep.attr_timeout;
				p->pin[p->npin++] = n;
				attrs_sent(n);
			}
		}
		fuse_add_direntry_plus(NULL, p->buf + p->used, size - p->used,
				       e->name, &ep, (off_t)off + 1);
		p->used += ent;
	}
	p->end = off;
	return rc;
}

static void readdir_plus(fuse_req_t req, size_t size, off_t off,
			 struct dirh *d)
{
	struct page *p = &d->ahead;
	int rc = 0, tries;

	pthread_mutex_lock(&d->lock);
	if (p->size && p->size == size && p->off == (uint64_t)off &&
	    p->gen == rows_gen(d->node->table)) {
		if ((uint64_t)off > d->base)
			dir_trim(d, (uint64_t)off);
	} else {
		page_drop(p);
		rc = page_fill(d, p, size, (uint64_t)off, 1);
	}
	/* a change while it was made: again (a few times; the old
	 * entries are asked about, the new ones pulled after it) */
	for (tries = 0; !rc && d->streaming && tries < 3 &&
	     p->gen != rows_gen(d->node->table); tries++) {
		page_drop(p);
		rc = page_fill(d, p, size, (uint64_t)off, 1);
	}
	if (rc) {
		page_drop(p);
		pthread_mutex_unlock(&d->lock);
		fs_fail(req, fs_errno(rc), "readdir: %s", cf_strerror(rc));
		return;
	}
	page_send(p);
	fuse_reply_buf(req, p->buf, p->used);
	/* the next page, while the kernel reads this one (struct dirh) */
	if (d->streaming && !p->eof) {
		if (page_fill(d, p, size, p->end, 0))
			page_drop(p);
	} else
		p->size = 0;
	pthread_mutex_unlock(&d->lock);
}

static void readdir_common(fuse_req_t req, size_t size, off_t off,
			   struct fuse_file_info *fi, int plus)
{
	struct dirh *d = (struct dirh *)(uintptr_t)fi->fh;
	struct stat st;
	char *out;
	size_t used = 0, ent;
	struct dent *e;
	uint64_t o = (uint64_t)off;
	int rc = 0;

	if (plus) {
		readdir_plus(req, size, off, d);
		return;
	}
	if (!(out = malloc(size))) {
		fs_fail(req, ENOMEM, "readdir");
		return;
	}
	pthread_mutex_lock(&d->lock);
	page_drop(&d->ahead);
	for (;; o++) {
		rc = dir_at(d, o, o == (uint64_t)off, &e);
		if (rc || !e)
			break;
		memset(&st, 0, sizeof st);
		st.st_ino = (ino_t)o + 2;
		st.st_mode = e->dir ? S_IFDIR : S_IFREG;
		ent = fuse_add_direntry(req, out + used, size - used,
					e->name, &st, (off_t)o + 1);
		if (ent > size - used)
			break;
		used += ent;
	}
	pthread_mutex_unlock(&d->lock);
	if (rc)
		fs_fail(req, fs_errno(rc), "readdir: %s", cf_strerror(rc));
	else
		fuse_reply_buf(req, out, used);
	free(out);
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		struct fuse_file_info *fi)
{
	readdir_common(req, size, off, fi, 0);
}

void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
		    off_t off, struct fuse_file_info *fi)
{
	readdir_common(req, size, off, fi, 1);
}

void op_releasedir(fuse_req_t req, fuse_ino_t ino,
		   struct fuse_file_info *fi)
{
	struct dirh *d = (struct dirh *)(uintptr_t)fi->fh;

	/* a readdirplus holds the lock from before its reply until it has
	 * made the next page: the reader may have closed meanwhile */
	pthread_mutex_lock(&d->lock);
	pthread_mutex_unlock(&d->lock);
	dir_free(d);
	fuse_reply_err(req, 0);
}
