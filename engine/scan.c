/*
 * scan.c: Scan (cf_scan_open, cf_scan_next): rows from region to region,
 * forward or reversed, whole or in pages (cf_scan_opts.batch); each row
 * is read by read.c's read_row, or in pages by a row cursor
 * (rowpage.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "util/env.h"

struct cf_scanner {
	struct cf_table *t;
	struct cf_read_opts ro;
	struct cf_column *cols;		/* owned copies */
	struct buf colbuf;
	struct buf start, stop, prefix;	/* owned copies */
	int has_stop;
	uint64_t limit, rows;
	uint64_t counted;		/* rows added to the stats */
	struct buf next;		/* first row of the next region;
					 * reversed: the rows left are
					 * below it */
	int has_next;			/* more regions to visit;
					 * reversed: next is a bound */
	int reversed;
	int known;			/* reversed: next is the row to
					 * read, not a bound */
	int rdone;			/* reversed: no region left */
	struct buf below;		/* reversed: the row below next */
	struct region *r;
	struct view *v;
	struct iter *it;
	uint64_t snap;
	cf_row *row;
	int done;
	size_t batch;			/* cells a result at most; 0: rows */
	struct cf_row_cursor *cur;	/* batch: the row being paged */
	int in_row;			/* batch: cur has a row */
};

/*
 * Each thread keeps the last scanner it closed, with its key buffers, for
 * its next scan: a short scan (a seek and a few rows) then allocates
 * neither the scanner nor its start and continuation keys.
 */
#define SCAN_SPARE_MAX ((size_t)4 << 10)	/* bytes of buffers kept */

static pthread_key_t scan_spare_key;
static pthread_once_t scan_spare_once = PTHREAD_ONCE_INIT;
static int scan_spare_ok;

static void scanner_free(cf_scanner *s)
{
	buf_release(&s->colbuf);
	buf_release(&s->start);
	buf_release(&s->stop);
	buf_release(&s->prefix);
	buf_release(&s->next);
	buf_release(&s->below);
	free(s);
}

static void scan_spare_free(void *p)
{
	scanner_free(p);
}

static void scan_spare_init(void)
{
	scan_spare_ok = pthread_key_create(&scan_spare_key,
					   scan_spare_free) == 0;
}

/* A zeroed scanner, its buffers empty (maybe with capacity). */
static cf_scanner *scanner_new(void)
{
	cf_scanner *s;
	struct buf keep[6];

	pthread_once(&scan_spare_once, scan_spare_init);
	if (!scan_spare_ok || !(s = pthread_getspecific(scan_spare_key)))
		return calloc(1, sizeof(struct cf_scanner));
	pthread_setspecific(scan_spare_key, NULL);
	keep[0] = s->colbuf;
	keep[1] = s->start;
	keep[2] = s->stop;
	keep[3] = s->prefix;
	keep[4] = s->next;
	keep[5] = s->below;
	memset(s, 0, sizeof *s);
	s->colbuf = keep[0];
	s->start = keep[1];
	s->stop = keep[2];
	s->prefix = keep[3];
	s->next = keep[4];
	s->below = keep[5];
	buf_reset(&s->colbuf);
	buf_reset(&s->start);
	buf_reset(&s->stop);
	buf_reset(&s->prefix);
	buf_reset(&s->next);
	buf_reset(&s->below);
	return s;
}

static void count_rows(cf_scanner *s);

void cf_scan_close(cf_scanner *s)
{
	if (!s)
		return;
	cf_row_cursor_close(s->cur);
	s->cur = NULL;
	iter_destroy(s->it);
	s->it = NULL;
	if (s->v)
		view_unref(s->v);
	s->v = NULL;
	cf_row_free(s->row);
	s->row = NULL;
	free(s->cols);
	s->cols = NULL;
	if (s->t) {
		count_rows(s);
		table_unref(s->t);
	}
	s->t = NULL;
	pthread_once(&scan_spare_once, scan_spare_init);
	if (scan_spare_ok && s->colbuf.cap + s->start.cap + s->stop.cap +
	    s->prefix.cap + s->next.cap + s->below.cap <= SCAN_SPARE_MAX &&
	    !pthread_getspecific(scan_spare_key) &&
	    pthread_setspecific(scan_spare_key, s) == 0)
		return;
	scanner_free(s);
}

/*
 * A reversed scan (HBase REVERSED => true) walks rows downward: s->next
 * holds the row to read next (known) or the bound the rows left are
 * below (has_next 0: none yet, the table's end).  A step back
 * (iter_seek_lt: every child steps back on its own) to the last entry
 * below a bound's first cell finds the row under it.  The row is read
 * forward from its first cell as a forward scan reads it, so its cells
 * come in the same order and pass the same visibility rules (see
 * rscan_next).  Past a region's first row the region before it takes
 * over.  Memory: one row and two row keys.
 */

/* The bound from start (inclusive: the bound is start + 0x00) and the
 * end of prefix's rows (prefix + 1, carried, when there is one); stop
 * and prefix as forward. */
static int rscan_bounds(cf_scanner *s, const struct cf_scan_opts *o)
{
	int rc = CF_OK;

	if (o->start && o->startlen) {
		rc = buf_append(&s->next, o->start, o->startlen);
		if (!rc)
			rc = buf_putc(&s->next, 0);
		s->has_next = 1;
	}
	if (!rc && o->prefix && o->prefixlen) {
		size_t n = o->prefixlen;
		const unsigned char *p = o->prefix;
		rc = buf_append(&s->prefix, p, n);
		while (n && p[n - 1] == 0xff)
			n--;
		/* prefix + 1 in the prefix's buffer, past the prefix */
		if (!rc && n && !(rc = buf_append(&s->prefix, p, n))) {
			unsigned char *succ = s->prefix.p + o->prefixlen;
			succ[n - 1]++;	/* was < 0xff */
			s->prefix.len = o->prefixlen;
			if (!s->has_next || bytes_cmp(succ, n, s->next.p,
						      s->next.len) < 0) {
				buf_reset(&s->next);
				rc = buf_append(&s->next, succ, n);
				s->has_next = 1;
			}
		}
	}
	if (!rc && o->stop && o->stoplen) {
		rc = buf_append(&s->stop, o->stop, o->stoplen);
		s->has_stop = 1;
	}
	return rc;
}

int cf_scan_open(cf_table *t, const struct cf_scan_opts *o, cf_scanner **out)
{
	cf_scanner *s;
	int rc = CF_OK;

	*out = NULL;
	if (atomic_load(&t->dropped))
		return CF_ECLOSED;
	if (!(s = scanner_new()))
		return CF_ENOMEM;
	table_ref(t);
	s->t = t;
	s->ro = o->read;
	s->limit = o->limit;
	s->batch = o->batch;
	if (o->batch && (o->reversed || o->read.raw || o->read.columns))
		rc = CF_EINVAL;
	if (!rc && !(s->row = row_new()))
		rc = CF_ENOMEM;
	if (!rc && o->read.columns && o->read.ncolumns) {
		/* copy the column list so the caller's may go away */
		size_t n = o->read.ncolumns;
		s->cols = calloc(n, sizeof *s->cols);
		if (!s->cols)
			rc = CF_ENOMEM;
		for (size_t i = 0; i < n && !rc; i++) {
			rc = buf_append(&s->colbuf, o->read.columns[i].fam,
					o->read.columns[i].famlen);
			if (!rc && o->read.columns[i].qual)
				rc = buf_append(&s->colbuf,
						o->read.columns[i].qual,
						o->read.columns[i].qlen);
		}
		if (!rc) {
			size_t off = 0;
			for (size_t i = 0; i < n; i++) {
				const struct cf_column *c = &o->read.columns[i];
				s->cols[i].fam = (const char *)s->colbuf.p + off;
				s->cols[i].famlen = c->famlen;
				off += c->famlen;
				if (c->qual) {
					s->cols[i].qual = s->colbuf.p + off;
					s->cols[i].qlen = c->qlen;
					off += c->qlen;
				}
			}
			s->ro.columns = s->cols;
		}
	}
	s->reversed = o->reversed;
	if (!rc && o->reversed) {
		rc = rscan_bounds(s, o);
		goto opened;
	}
	if (!rc && o->start)
		rc = buf_append(&s->start, o->start, o->startlen);
	if (!rc && o->prefix && o->prefixlen) {
		rc = buf_append(&s->prefix, o->prefix, o->prefixlen);
		if (!rc && bytes_cmp(s->start.p, s->start.len, o->prefix,
				     o->prefixlen) < 0) {
			buf_reset(&s->start);
			rc = buf_append(&s->start, o->prefix, o->prefixlen);
		}
	}
	if (!rc && o->stop) {
		rc = buf_append(&s->stop, o->stop, o->stoplen);
		s->has_stop = 1;
	}
	if (!rc) {
		rc = buf_append(&s->next, s->start.p, s->start.len);
		s->has_next = 1;
	}
opened:
	if (rc) {
		cf_scan_close(s);
		return rc;
	}
	atomic_fetch_add(&t->st.scans, 1);
	atomic_fetch_add(&t->db->st.scans, 1);
	*out = s;
	return CF_OK;
}

#define SHORT_SCAN 1024

/* Opens the region holding s->next and positions on its first row. */
static int open_region(cf_scanner *s)
{
	struct cf_table *t = s->t;
	unsigned char stack[512], *key = stack;
	size_t kl;

	iter_destroy(s->it);
	s->it = NULL;
	if (s->v)
		view_unref(s->v);
	s->v = NULL;
	pthread_rwlock_rdlock(&t->lock);
	s->r = table_region_for(t, s->next.p, s->next.len);
	s->v = region_view(s->r);
	/* where the scan continues after this region */
	buf_reset(&s->next);
	s->has_next = s->r->end.len > 0;
	if (s->has_next &&
	    buf_append(&s->next, s->r->end.p, s->r->end.len) != CF_OK) {
		pthread_rwlock_unlock(&t->lock);
		return CF_ENOMEM;
	}
	pthread_rwlock_unlock(&t->lock);
	s->snap = atomic_load(&t->db->last_seq);
	/* a short scan (a limit of at most SHORT_SCAN rows) fills the block
	 * cache as a Get does, so a seek followed by a few rows finds its
	 * blocks the next time; a long scan does not evict what Gets use */
	{
		const struct buf *from = &s->start;
		if (bytes_cmp(s->r->start.p, s->r->start.len, s->start.p,
			      s->start.len) > 0)
			from = &s->r->start;
		s->it = view_scan_iter(t->db, s->v, &s->ro, from->p, from->len,
				  &s->stop, s->has_stop,
				  s->limit && s->limit <= SHORT_SCAN);
		if (!s->it)
			return CF_ENOMEM;
		if (from->len + KEY_OVERHEAD > sizeof stack &&
		    !(key = malloc(from->len + KEY_OVERHEAD)))
			return CF_ENOMEM;
		kl = row_start_key(key, from->p, from->len);
		iter_seek(s->it, key, kl);
		if (key != stack)
			free(key);
	}
	return iter_status(s->it);
}

/* The region holding the greatest row below s->next (the last region
 * without a bound), a view of it and an iterator over what it holds
 * between the stop row and the bound. */
static int rscan_region(cf_scanner *s)
{
	struct cf_table *t = s->t;
	size_t lo = 0, hi;
	const struct buf *from = &s->stop;

	if (s->v)
		view_unref(s->v);
	s->v = NULL;
	pthread_rwlock_rdlock(&t->lock);
	/* the last region whose start < the bound */
	hi = t->nregions;
	if (s->has_next)
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;
			if (bytes_cmp(t->regions[mid]->start.p,
				      t->regions[mid]->start.len, s->next.p,
				      s->next.len) < 0)
				lo = mid;
			else
				hi = mid;
		}
	else
		lo = hi - 1;
	s->r = t->regions[lo];
	s->v = region_view(s->r);
	pthread_rwlock_unlock(&t->lock);
	s->snap = atomic_load(&t->db->last_seq);
	if (bytes_cmp(s->r->start.p, s->r->start.len, from->p, from->len) > 0)
		from = &s->r->start;
	s->it = view_scan_iter(t->db, s->v, &s->ro, from->p, from->len,
			       &s->next, s->has_next,
			       s->limit && s->limit <= SHORT_SCAN);
	return s->it ? CF_OK : CF_ENOMEM;
}

/* Seeks s->it to the first cell of row (or, with below, to the last
 * entry before that cell).  CF_ENOMEM. */
static int seek_row(cf_scanner *s, const void *row, size_t rowlen,
		    int below)
{
	unsigned char stack[512], *key = stack;
	size_t kl;

	if (rowlen + KEY_OVERHEAD > sizeof stack &&
	    !(key = malloc(rowlen + KEY_OVERHEAD)))
		return CF_ENOMEM;
	kl = row_start_key(key, row, rowlen);
	if (below)
		iter_seek_lt(s->it, key, kl);
	else
		iter_seek(s->it, key, kl);
	if (key != stack)
		free(key);
	return CF_OK;
}

/* The region ran out below s->next: the bound becomes its first row
 * and the region before it takes over (none: the scan is over). */
static int rscan_region_done(cf_scanner *s)
{
	iter_destroy(s->it);
	s->it = NULL;
	s->known = 0;
	if (!s->r->start.len) {
		s->rdone = 1;
		return CF_OK;
	}
	buf_reset(&s->next);
	s->has_next = 1;
	return buf_append(&s->next, s->r->start.p, s->r->start.len);
}

/* 1 when row (rl bytes) lies in the current region (at or past its
 * start: the iterator holds nothing at or past its end). */
static int in_region(const cf_scanner *s, const unsigned char *row,
		     size_t rl)
{
	return bytes_cmp(row, rl, s->r->start.p, s->r->start.len) >= 0;
}

/* Adds the rows s read since the last call to the stats. */
static void count_rows(cf_scanner *s)
{
	uint64_t n = s->rows - s->counted;

	if (n) {
		atomic_fetch_add(&s->t->st.scan_rows, n);
		atomic_fetch_add(&s->t->db->st.scan_rows, n);
		s->counted = s->rows;
	}
}

/* Counts the row s has read and hands it to the caller.  The stats
 * learn of rows 64 at a time (and at close): two scans on two cores
 * adding to the same counters for every row kept their cache line
 * moving between the cores. */
static int scan_emit(cf_scanner *s, const cf_row **row)
{
	if (++s->rows - s->counted >= 64)
		count_rows(s);
	*row = s->row;
	return CF_OK;
}

/*
 * Each step: s->next is the row to read (known) or the bound below
 * which the next row lies (a seek_lt finds it).  Seeking to the last
 * entry before the row's first cell finds the row below it (the next
 * step's row), and one next() from there is the row's first cell, so a
 * row costs one backward seek in each source plus the forward reads of
 * the row itself.
 */
static int rscan_next(cf_scanner *s, const cf_row **row)
{
	const unsigned char *rk = NULL;
	size_t kl, rl = 0;
	int rc, below;

	while (!s->limit || s->rows < s->limit) {
		if (!s->it) {
			if (s->rdone)
				break;
			if (s->has_next && s->has_stop &&
			    bytes_cmp(s->next.p, s->next.len, s->stop.p,
				      s->stop.len) <= 0)
				break;
			if (s->has_next && s->prefix.len &&
			    bytes_cmp(s->next.p, s->next.len, s->prefix.p,
				      s->prefix.len) <= 0)
				break;
			if ((rc = rscan_region(s)))
				return rc;
		}
		if (!s->known) {
			if (!s->has_next)
				iter_seek_lt(s->it, NULL, 0);
			else if ((rc = seek_row(s, s->next.p, s->next.len, 1)))
				return rc;
			if (iter_valid(s->it))
				rk = ikey_row(iter_key(s->it, &kl), &rl);
			if (!iter_valid(s->it) || !in_region(s, rk, rl)) {
				if ((rc = iter_status(s->it)) ||
				    (rc = rscan_region_done(s)))
					return rc;
				continue;
			}
			buf_reset(&s->next);
			if ((rc = buf_append(&s->next, rk, rl)))
				return rc;
			s->has_next = 1;
			s->known = 1;
		}
		/* s->next is the row to read */
		if (s->has_stop && bytes_cmp(s->next.p, s->next.len, s->stop.p,
					     s->stop.len) <= 0)
			break;
		if (s->prefix.len && (s->next.len < s->prefix.len ||
				      memcmp(s->next.p, s->prefix.p,
					     s->prefix.len))) {
			if (bytes_cmp(s->next.p, s->next.len, s->prefix.p,
				      s->prefix.len) < 0)
				break;
			s->known = 0;	/* above the prefix's rows */
			continue;
		}
		if ((rc = seek_row(s, s->next.p, s->next.len, 1)))
			return rc;
		below = iter_valid(s->it);
		if (below) {
			rk = ikey_row(iter_key(s->it, &kl), &rl);
			below = in_region(s, rk, rl);
		}
		buf_reset(&s->below);
		if (below) {
			if ((rc = buf_append(&s->below, rk, rl)))
				return rc;
			iter_next(s->it);	/* the row's first cell */
		} else {
			if ((rc = iter_status(s->it)) ||
			    (rc = seek_row(s, s->next.p, s->next.len, 0)))
				return rc;
		}
		rc = read_row(s->t->db, s->t, s->it, &s->ro, s->snap, NULL,
			      s->row);
		if (rc)
			return rc;
		if (below) {
			struct buf tmp = s->next;
			s->next = s->below;
			s->below = tmp;
		} else if ((rc = rscan_region_done(s))) {
			return rc;
		}
		if (cf_row_count(s->row) == 0)
			continue;
		return scan_emit(s, row);
	}
	s->done = 1;
	return CF_OK;
}

int cf_scan_next(cf_scanner *s, const cf_row **row)
{
	int rc;

	*row = NULL;
	if (s->done)
		return CF_OK;
	if (atomic_load(&s->t->dropped))
		return CF_ECLOSED;
	if (s->reversed)
		return rscan_next(s, row);
	for (;;) {
		const unsigned char *k, *rk;
		size_t kl, rl;

		if (s->in_row) {
			/* a scan in pages: the row's next page */
			const cf_row *pg;
			if ((rc = cf_row_cursor_next(s->cur, s->batch, &pg)))
				return rc;
			if (cf_row_count(pg)) {
				if (s->in_row == 1) {	/* its first */
					s->in_row = 2;
					scan_emit(s, row);
				}
				*row = pg;
				return CF_OK;
			}
			s->in_row = 0;	/* it is after the row now */
			continue;
		}

		if (s->limit && s->rows >= s->limit)
			break;
		if (!s->it || !iter_valid(s->it)) {
			if (s->it && (rc = iter_status(s->it)))
				return rc;
			if (s->it && !s->has_next)
				break;
			if (s->it && s->has_stop &&
			    bytes_cmp(s->next.p, s->next.len, s->stop.p,
				      s->stop.len) >= 0)
				break;
			if (s->it && s->prefix.len &&
			    bytes_cmp(s->next.p, s->next.len, s->prefix.p,
				      s->prefix.len) > 0 &&
			    (s->next.len < s->prefix.len ||
			     memcmp(s->next.p, s->prefix.p, s->prefix.len)))
				break;
			if ((rc = open_region(s)))
				return rc;
			continue;
		}
		k = iter_key(s->it, &kl);
		rk = ikey_row(k, &rl);
		if (s->r->end.len &&
		    bytes_cmp(rk, rl, s->r->end.p, s->r->end.len) >= 0) {
			/* past this region: the next one takes over */
			iter_destroy(s->it);
			s->it = NULL;
			if (!s->has_next)
				break;
			if ((rc = open_region(s)))
				return rc;
			continue;
		}
		if (s->has_stop && bytes_cmp(rk, rl, s->stop.p,
					     s->stop.len) >= 0)
			break;
		if (s->prefix.len && (rl < s->prefix.len ||
				      memcmp(rk, s->prefix.p, s->prefix.len)))
			break;
		if (s->batch) {
			if ((rc = row_cursor_at(s->t, s->v, s->it, s->snap,
						&s->ro, rk, rl, &s->cur)))
				return rc;
			s->in_row = 1;
			continue;
		}
		rc = read_row(s->t->db, s->t, s->it, &s->ro, s->snap, NULL,
			      s->row);
		if (rc)
			return rc;
		if (cf_row_count(s->row) == 0)
			continue;
		return scan_emit(s, row);
	}
	s->done = 1;
	return CF_OK;
}
