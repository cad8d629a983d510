/*
 * wal.c: the write-ahead log (docs/wal_format.md).
 *
 * Locks: w->mu guards everything in struct wal.  wal_append holds it while
 * it writes (one leader at a time calls it anyway).  wal_sync holds it only
 * to note the target and to publish the result: the fdatasync itself runs
 * unlocked with w->syncing set, and callers that arrive meanwhile wait on
 * w->cv and return without a second fsync if the one in flight covered
 * their bytes (group commit).  A segment roll waits until no sync is in
 * flight, then syncs and closes the old segment itself.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/wal.h"
#include "util/buf.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/env.h"
#include "util/err.h"
#include "util/log.h"

#define MAGIC "CFWAL001"
#define SEG_HEADER 16		/* magic, u64le segment number */
#define REC_HEADER 9		/* u32le masked crc, u32le length, u8 type */
#define REC_FULL 1

struct closed {
	uint64_t id;
	uint64_t max_seq;
};

struct wal {
	char *dir;
	uint64_t segment_size;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct env_file *f;
	uint64_t seg;		/* current segment number */
	uint64_t seg_bytes;	/* bytes in the current segment */
	uint64_t seg_max_seq;
	uint64_t appended;	/* bytes appended since open (all segments) */
	uint64_t synced;	/* of those, bytes known durable */
	int syncing;
	uint64_t nsyncs;
	struct closed *old;
	size_t nold;
	struct buf frame;
};

void wal_segment_path(char *buf, size_t size, const char *dir, uint64_t id)
{
	snprintf(buf, size, "%s/%016" PRIx64 ".log", dir, id);
}

static int open_segment(struct wal *w, uint64_t id)
{
	char path[4096];
	unsigned char hdr[SEG_HEADER];
	int rc;

	wal_segment_path(path, sizeof path, w->dir, id);
	rc = env_open(path, ENV_WRITE_NEW, &w->f);
	if (rc)
		return rc;
	memcpy(hdr, MAGIC, 8);
	enc_u64le(hdr + 8, id);
	rc = env_write(w->f, hdr, sizeof hdr);
	if (!rc)
		rc = env_sync(w->f);
	if (!rc)
		rc = env_sync_dir(w->dir);	/* the new name is durable */
	if (rc) {
		env_close(w->f);
		w->f = NULL;
		env_unlink(path);
		return rc;
	}
	w->seg = id;
	w->seg_bytes = SEG_HEADER;
	w->seg_max_seq = 0;
	return CF_OK;
}

int wal_open(const char *dir, uint64_t first_segment, uint64_t segment_size,
	     struct wal **out)
{
	struct wal *w = calloc(1, sizeof *w);
	int rc;

	*out = NULL;
	if (!w)
		return CF_ENOMEM;
	if (!(w->dir = strdup(dir))) {
		free(w);
		return CF_ENOMEM;
	}
	w->segment_size = segment_size;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	rc = env_mkdir_p(dir, 0700);
	if (!rc)
		rc = open_segment(w, first_segment);
	if (rc) {
		wal_close(w);
		return rc;
	}
	*out = w;
	return CF_OK;
}

void wal_close(struct wal *w)
{
	if (!w)
		return;
	if (w->f) {
		env_sync(w->f);
		env_close(w->f);
	}
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	buf_release(&w->frame);
	free(w->old);
	free(w->dir);
	free(w);
}

/* Closes the current segment (synced) and opens the next.  mu held. */
static int roll(struct wal *w)
{
	struct closed *n;
	int rc;

	while (w->syncing)
		pthread_cond_wait(&w->cv, &w->mu);
	rc = env_sync(w->f);
	if (rc)
		return rc;
	n = realloc(w->old, (w->nold + 1) * sizeof *n);
	if (!n)
		return CF_ENOMEM;
	w->old = n;
	w->old[w->nold].id = w->seg;
	w->old[w->nold].max_seq = w->seg_max_seq;
	w->nold++;
	env_close(w->f);
	w->f = NULL;
	w->synced = w->appended;
	rc = open_segment(w, w->seg + 1);
	if (rc) {
		/* keep appending impossible until a retry succeeds */
		w->nold--;
		cf_log(CF_LOG_ERROR, "wal: cannot start segment %" PRIu64
		       ": %s", w->seg + 1, cf_strerror(rc));
		{
			char path[4096];
			wal_segment_path(path, sizeof path, w->dir, w->seg);
			env_open(path, ENV_APPEND, &w->f);
		}
	}
	return rc;
}

int wal_append(struct wal *w, const void *rec, size_t n, uint64_t max_seq)
{
	unsigned char *h;
	uint32_t crc;
	int rc;

	if (n > UINT32_MAX - REC_HEADER)
		return CF_ETOOBIG;
	pthread_mutex_lock(&w->mu);
	if (!w->f) {
		rc = CF_EIO;
		goto out;
	}
	if (w->seg_bytes > SEG_HEADER &&
	    w->seg_bytes + REC_HEADER + n > w->segment_size) {
		rc = roll(w);
		if (rc)
			goto out;
	}
	buf_reset(&w->frame);
	rc = buf_reserve(&w->frame, REC_HEADER + n);
	if (rc)
		goto out;
	h = w->frame.p;
	enc_u32le(h + 4, (uint32_t)n);
	h[8] = REC_FULL;
	memcpy(h + REC_HEADER, rec, n);
	crc = crc32c(h + 4, 5 + n);
	enc_u32le(h, crc32c_mask(crc));
	w->frame.len = REC_HEADER + n;
	rc = env_write(w->f, w->frame.p, w->frame.len);
	if (rc) {
		/* cut the partial record so the log stays valid */
		if (env_truncate(w->f, w->seg_bytes) != CF_OK)
			cf_log(CF_LOG_ERROR, "wal: cannot cut a partial "
			       "record in segment %" PRIu64, w->seg);
		goto out;
	}
	w->seg_bytes += w->frame.len;
	w->appended += w->frame.len;
	if (max_seq > w->seg_max_seq)
		w->seg_max_seq = max_seq;
out:
	pthread_mutex_unlock(&w->mu);
	return rc;
}

int wal_sync(struct wal *w)
{
	uint64_t target, cover;
	struct env_file *f;
	int rc;

	pthread_mutex_lock(&w->mu);
	target = w->appended;
	while (w->syncing && w->synced < target)
		pthread_cond_wait(&w->cv, &w->mu);
	if (w->synced >= target || !w->f) {
		rc = w->f ? CF_OK : CF_EIO;
		pthread_mutex_unlock(&w->mu);
		return rc;
	}
	w->syncing = 1;
	cover = w->appended;
	f = w->f;
	pthread_mutex_unlock(&w->mu);

	rc = env_sync(f);

	pthread_mutex_lock(&w->mu);
	w->syncing = 0;
	w->nsyncs++;
	if (rc == CF_OK && cover > w->synced)
		w->synced = cover;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return rc;
}

int wal_dirty(struct wal *w)
{
	int d;

	pthread_mutex_lock(&w->mu);
	d = w->appended > w->synced;
	pthread_mutex_unlock(&w->mu);
	return d;
}

uint64_t wal_syncs(const struct wal *w)
{
	uint64_t n;
	struct wal *m = (struct wal *)w;

	pthread_mutex_lock(&m->mu);
	n = m->nsyncs;
	pthread_mutex_unlock(&m->mu);
	return n;
}

uint64_t wal_bytes(const struct wal *w)
{
	uint64_t n;
	struct wal *m = (struct wal *)w;

	pthread_mutex_lock(&m->mu);
	n = m->appended;
	pthread_mutex_unlock(&m->mu);
	return n;
}

int wal_adopt(struct wal *w, uint64_t segment, uint64_t max_seq)
{
	struct closed *n;
	int rc = CF_OK;

	pthread_mutex_lock(&w->mu);
	n = realloc(w->old, (w->nold + 1) * sizeof *n);
	if (!n) {
		rc = CF_ENOMEM;
	} else {
		w->old = n;
		w->old[w->nold].id = segment;
		w->old[w->nold].max_seq = max_seq;
		w->nold++;
	}
	pthread_mutex_unlock(&w->mu);
	return rc;
}

int wal_purge(struct wal *w, uint64_t min_unflushed)
{
	char path[4096];
	size_t keep = 0;
	int rc = CF_OK;

	pthread_mutex_lock(&w->mu);
	for (size_t i = 0; i < w->nold; i++) {
		if (w->old[i].max_seq < min_unflushed) {
			wal_segment_path(path, sizeof path, w->dir,
					 w->old[i].id);
			int e = env_unlink(path);
			if (e == CF_OK || e == CF_ENOTFOUND)
				continue;
			rc = e;
		}
		w->old[keep++] = w->old[i];
	}
	w->nold = keep;
	pthread_mutex_unlock(&w->mu);
	return rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct listing {
	uint64_t *ids;
	size_t n;
	int rc;
};

static int list_one(const char *name, void *arg)
{
	struct listing *l = arg;
	uint64_t id;
	char tail[8];
	uint64_t *n;

	if (strlen(name) != 20 ||
	    sscanf(name, "%16" SCNx64 "%7s", &id, tail) != 2 ||
	    strcmp(tail, ".log") != 0)
		return 0;
	n = realloc(l->ids, (l->n + 1) * sizeof *n);
	if (!n)
		return l->rc = CF_ENOMEM;
	l->ids = n;
	l->ids[l->n++] = id;
	return 0;
}

int wal_list(const char *dir, uint64_t **ids, size_t *n)
{
	struct listing l = { NULL, 0, CF_OK };
	int rc = env_list_dir(dir, list_one, &l);

	if (!rc)
		rc = l.rc;
	if (rc) {
		free(l.ids);
		return rc;
	}
	if (l.n)
		qsort(l.ids, l.n, sizeof *l.ids, cmp_u64);
	*ids = l.ids;
	*n = l.n;
	return CF_OK;
}

/* --- reading ---------------------------------------------------------- */

struct wal_reader {
	char *data;
	size_t len;
	size_t off;		/* next record */
	size_t valid_end;
	int torn;
	int done;
};

/* Is there a whole, good record at off? Its payload length into *n. */
static int record_at(const struct wal_reader *r, size_t off, size_t *n)
{
	const unsigned char *p = (const unsigned char *)r->data + off;
	uint32_t len;

	if (r->len - off < REC_HEADER)
		return 0;
	len = dec_u32le(p + 4);
	if (p[8] != REC_FULL || len > r->len - off - REC_HEADER)
		return 0;
	if (crc32c_unmask(dec_u32le(p)) != crc32c(p + 4, 5 + (size_t)len))
		return 0;
	*n = len;
	return 1;
}

int wal_reader_open(const char *path, struct wal_reader **out)
{
	struct wal_reader *r = calloc(1, sizeof *r);
	int rc;

	*out = NULL;
	if (!r)
		return CF_ENOMEM;
	rc = env_read_file(path, &r->data, &r->len);
	if (rc) {
		free(r);
		return rc;
	}
	if (r->len < SEG_HEADER) {
		/* created, never written: a crash right at the roll */
		r->done = 1;
		r->torn = r->len > 0;
		r->valid_end = 0;
	} else if (memcmp(r->data, MAGIC, 8) != 0) {
		free(r->data);
		free(r);
		return CF_ECORRUPT;
	} else {
		r->off = r->valid_end = SEG_HEADER;
	}
	*out = r;
	return CF_OK;
}

int wal_reader_next(struct wal_reader *r, const void **rec, size_t *n)
{
	size_t len;

	*rec = NULL;
	*n = 0;
	if (r->done || r->off == r->len) {
		r->done = 1;
		return CF_OK;
	}
	if (record_at(r, r->off, &len)) {
		*rec = r->data + r->off + REC_HEADER;
		*n = len;
		r->off += REC_HEADER + len;
		r->valid_end = r->off;
		return CF_OK;
	}
	/* A bad record: a torn tail if nothing valid follows it, else
	 * damage in the middle of the log. */
	r->done = 1;
	for (size_t o = r->off + 1; o + REC_HEADER <= r->len; o++)
		if (record_at(r, o, &len))
			return CF_ECORRUPT;
	r->torn = 1;
	return CF_OK;
}

uint64_t wal_reader_valid_end(const struct wal_reader *r)
{
	return r->valid_end;
}

int wal_reader_torn(const struct wal_reader *r)
{
	return r->torn;
}

void wal_reader_close(struct wal_reader *r)
{
	if (!r)
		return;
	free(r->data);
	free(r);
}
