/*
 * wal.c: the write-ahead log (format: docs/wal_format.md).
 *
 * Writing.  One thread at a time appends (the engine's write leader); any
 * thread may call wal_sync, wal_dirty, wal_purge meanwhile.  The state
 * splits in two:
 *
 *   - appender-owned: frame, seg_bytes, seg_max_seq, cut_pending, and
 *     the mapping state (mapped, seg_cap, seg_win, use_map).  Only the
 *     appending thread touches them, so it needs no lock for them.
 *   - shared, under w->mu: f, seg and seed (written by the appender during
 *     a roll, read by syncers), appended, synced, syncing, the list of
 *     closed segments.
 *
 * Lock order: w->mu, then env's internal leaf lock (inside env calls).
 * No file I/O happens under w->mu: an append writes unlocked and then
 * takes w->mu only to publish its bytes; a sync notes its target under
 * w->mu and runs the fsync unlocked.
 *
 * Group commit.  `syncing` says an fsync of the current segment is in
 * flight.  A syncer takes target = appended; while synced < target and a
 * sync is in flight it waits on w->cv and rechecks (the sync in flight
 * may have started after its bytes were appended, then it covers them).
 * If still short, it sets syncing, notes cover = appended, and fsyncs
 * without w->mu; afterwards synced = cover and every waiter is woken.
 * Bytes are counted in `appended` only once their write(2) or memcpy
 * returned, so cover never claims a byte that was not in the file (the
 * page cache) when fsync began.
 *
 * A roll acts as a syncer: it waits until no sync is in flight, sets
 * syncing (so nobody fsyncs the old file while it is being closed),
 * fsyncs the old segment, creates the next one, and then publishes both.
 * The old segment is durable before the next one holds any record, so a
 * power loss never leaves a hole followed by later records.
 *
 * Appending through a mapping.  A segment is mapped shared and writable
 * whole (seg_win: the segment size rounded up to pages) when it is
 * created, and preallocated by appends (fallocate: the blocks are
 * reserved, so a full disk is an error of the append that grows it, never
 * a SIGBUS) MAP_GROW bytes at a time, from its first record on; one that
 * never gets a record stays its 32-byte header.  A record is then a
 * memcpy into the page cache: no system call, yet a killed process loses
 * nothing, as with write(2) without fsync; fdatasync of the file writes
 * the stored pages back, so syncing is unchanged (env_map_write guards
 * the copy: a page the kernel cannot back is CF_EIO, then cut off as a
 * failed write(2) is).  Each time the segment grows, the pages already
 * written leave the process (release_written), so its resident size does
 * not grow with the segment.  The bytes from seg_bytes to seg_cap are zeros,
 * which a reader takes for a torn tail at the last record: so a crash
 * leaves the newest segment long with zeros, and replay cuts it there.
 * A roll and a close cut the segment back to seg_bytes before its last
 * fsync, so a closed segment is exactly its records, as one written with
 * write(2) is.  A record over MAP_RECORD_MAX (8 KiB), or bigger than
 * the mapping (only one alone in a new segment can be: a record that
 * does not fit rolls), goes through pwrite(2) at its offset instead: a
 * page fault a page costs more than one system call for a record of a
 * few pages.  Where fallocate is not supported, or
 * mmap fails, or wal_open was given WAL_WRITE (cf_options.wal_write),
 * segments are written with one write(2) per record.
 *
 * Failure.  A failed record write is cut off (ftruncate to the end of the
 * last whole record; for a mapped segment that also gives back the
 * preallocation, which the next append takes again) before wal_append
 * returns; if even the cut fails, cut_pending makes the next append retry
 * it first and fail rather than write after a partial record.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/wal.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/env.h"
#include "util/err.h"
#include "util/log.h"

#define SEG_MAGIC "CFWALSEG"
#define SEG_VERSION 1
#define SEG_HDR 32		/* segment header bytes */
#define REC_HDR 16		/* record header bytes */
#define REC_FULL 1		/* record type: a whole record */
#define REC_MAX ((size_t)1 << 30)	/* largest payload */
#define READ_CHUNK ((size_t)1 << 20)	/* reader's read size */
#define FRAME_KEEP ((size_t)1 << 20)	/* frame buffer kept between appends */
#define MAP_GROW ((uint64_t)4 << 20)	/* preallocation step of a segment */
/* Larger records of a mapped segment are written with pwrite(2): storing
 * through the mapping costs a page fault (page_mkwrite, the file system's
 * bookkeeping) for every fresh page, more than the one system call the
 * mapping saves once a record spans a few pages (fs_bench's 1 MiB values
 * went from 443-506 MB/s with write(2) to 231-329 stored mapped). */
#define MAP_RECORD_MAX ((size_t)8 << 10)

struct closed {
	uint64_t id;
	uint64_t max_seq;
};

struct wal {
	char *dir;
	uint64_t segment_size;

	/* appender-owned */
	unsigned char *frame;
	size_t frame_cap;
	uint64_t seg_bytes;	/* length of the current segment file */
	uint64_t seg_max_seq;
	int cut_pending;	/* a failed record could not be cut off yet */
	int use_map;		/* try mapped segments (0: write(2) only) */
	int mapped;		/* the current segment is stored through a
				 * mapping of seg_win bytes ... */
	uint64_t seg_cap;	/* ... preallocated up to here */
	uint64_t seg_win;
	uint64_t seg_kept;	/* pages from here on may be resident */

	pthread_mutex_t mu;
	pthread_cond_t cv;	/* an fsync (or roll) finished */
	struct env_file *f;	/* the current segment */
	uint64_t seg;		/* its number */
	uint32_t seed;		/* CRC-32C of its number, see seed_of() */
	uint64_t appended;	/* record bytes appended since open */
	uint64_t synced;	/* of those, bytes known durable */
	int syncing;		/* an fsync or roll is in flight */
	struct closed *old;	/* closed segments, for wal_purge */
	size_t nold, oldcap;

	atomic_uint_least64_t nsyncs;
	atomic_uint_least64_t nbytes;
};

/* --- format ----------------------------------------------------------- */

/*
 * CRCs are bound to where a record sits: they start from the CRC of the
 * segment number and the record's offset.  A record copied elsewhere (a
 * user file holding a WAL segment, say, inside a record) does not check
 * at its new place, so the scan for "anything valid after a bad record"
 * is not fooled by payload bytes.
 */
static uint32_t seed_of(uint64_t seg)
{
	unsigned char b[8];

	enc_u64le(b, seg);
	return crc32c(b, sizeof b);
}

static uint32_t pos_crc(uint32_t seed, uint64_t off)
{
	unsigned char b[8];

	enc_u64le(b, off);
	return crc32c_extend(seed, b, sizeof b);
}

static void seg_header(unsigned char *h, uint64_t seg)
{
	memset(h, 0, SEG_HDR);
	memcpy(h, SEG_MAGIC, 8);
	enc_u32le(h + 8, SEG_VERSION);
	enc_u64le(h + 16, seg);
	enc_u32le(h + 24, crc32c_mask(crc32c(h, 24)));
}

/* Fills the 16 header bytes at h for an n-byte payload p at offset off. */
/* The header of a record of n bytes, the pieces of iov[0..cnt). */
static void rec_header(unsigned char *h, uint32_t seed, uint64_t off,
		       const struct iovec *iov, int cnt, size_t n)
{
	uint32_t pc = pos_crc(seed, off), crc;

	enc_u32le(h + 4, (uint32_t)n);
	h[8] = REC_FULL;
	h[9] = h[10] = h[11] = 0;
	enc_u32le(h + 12, crc32c_mask(crc32c_extend(pc, h + 4, 8)));
	crc = crc32c_extend(pc, h + 4, 12);
	for (int i = 0; i < cnt; i++)
		if (iov[i].iov_len)
			crc = crc32c_extend(crc, iov[i].iov_base,
					    iov[i].iov_len);
	enc_u32le(h, crc32c_mask(crc));
}

/* Is the header at h (file offset off) one we wrote?  Its payload
 * length into *n.  Cheap: the type bytes are checked before any CRC. */
static int header_ok(uint32_t seed, uint64_t off, const unsigned char *h,
		     size_t *n)
{
	if (h[8] != REC_FULL || h[9] || h[10] || h[11])
		return 0;
	if (crc32c_unmask(dec_u32le(h + 12)) !=
	    crc32c_extend(pos_crc(seed, off), h + 4, 8))
		return 0;
	*n = dec_u32le(h + 4);
	return *n <= REC_MAX;
}

static int payload_ok(uint32_t seed, uint64_t off, const unsigned char *h,
		      size_t n)
{
	uint32_t crc = crc32c_extend(pos_crc(seed, off), h + 4, 12);

	crc = crc32c_extend(crc, h + REC_HDR, n);
	return crc32c_unmask(dec_u32le(h)) == crc;
}

void wal_segment_path(char *buf, size_t size, const char *dir, uint64_t id)
{
	snprintf(buf, size, "%s/%016" PRIx64 ".log", dir, id);
}

/* --- writing ---------------------------------------------------------- */

static uint64_t page_size(void)
{
	long pg = sysconf(_SC_PAGESIZE);

	return pg > 0 ? (uint64_t)pg : 4096;
}

/* n rounded up, or down, to whole pages. */
static uint64_t page_up(uint64_t n)
{
	return (n + page_size() - 1) / page_size() * page_size();
}

static uint64_t page_down(uint64_t n)
{
	return n / page_size() * page_size();
}

/* A segment being written. */
struct seg {
	struct env_file *f;
	int mapped;		/* see struct wal */
	uint64_t cap, win;
};

/*
 * Preallocates s->f so it holds at least need bytes: MAP_GROW more than
 * now, or, when the disk is too full for that, just need; never past the
 * mapping.  CF_ENOSPC, CF_EIO, CF_EINVAL (no fallocate here).
 */
static int grow(struct seg *s, uint64_t need)
{
	uint64_t want = page_up(need > s->cap + MAP_GROW ? need
						       : s->cap + MAP_GROW);
	uint64_t least = page_up(need);
	int rc;

	if (want > s->win)
		want = s->win;
	if (least > s->win)
		least = s->win;
	rc = env_fallocate(s->f, want);
	if (rc == CF_ENOSPC && least < want) {
		want = least;
		rc = env_fallocate(s->f, want);
	}
	if (rc == CF_OK)
		s->cap = want;
	return rc;
}

/* Maps a new segment whose header is written; the first append
 * preallocates it (so a segment that never gets a record stays 32 bytes).
 * s->mapped stays 0 when mapping fails: records go through write(2). */
static void map_segment(struct wal *w, struct seg *s)
{
	s->mapped = 0;
	s->cap = SEG_HDR;
	s->win = page_up(w->segment_size > SEG_HDR + REC_HDR ?
			 w->segment_size : SEG_HDR + REC_HDR);
	if (w->use_map && env_map_rw(s->f, s->win) == CF_OK)
		s->mapped = 1;
}

/* Creates segment id: header written and synced (before anything can
 * preallocate it, so no crash leaves a long file without its header),
 * mapped, and the directory synced, so a later fsync of its records never
 * leaves a file without a name. */
static int create_segment(struct wal *w, uint64_t id, struct seg *s)
{
	unsigned char h[SEG_HDR];
	char path[4096];
	int rc;

	memset(s, 0, sizeof *s);
	wal_segment_path(path, sizeof path, w->dir, id);
	if (env_exists(path))
		return CF_EEXIST;	/* never truncate a log */
	rc = env_open(path, ENV_RDWR_NEW, &s->f);
	if (rc)
		return rc;
	seg_header(h, id);
	rc = env_write(s->f, h, sizeof h);
	if (rc == CF_OK)
		rc = env_sync(s->f);
	if (rc == CF_OK)
		rc = env_sync_dir(w->dir);
	if (rc == CF_OK)
		map_segment(w, s);
	if (rc) {
		env_close(s->f);
		s->f = NULL;
		env_unlink(path);
		return rc;
	}
	return CF_OK;
}

/* Makes s the current segment; appender, and under w->mu for f. */
static void set_segment(struct wal *w, const struct seg *s)
{
	w->f = s->f;
	w->mapped = s->mapped;
	w->seg_cap = s->cap;
	w->seg_win = s->win;
	w->seg_kept = 0;
}

/* Lets the mapped pages before the one seg_bytes is in leave the
 * process: they are written, and the daemon's resident size should not
 * grow with the segment (up to 64 MiB of it).  Called when the segment
 * grows, so once every MAP_GROW bytes. */
static void release_written(struct wal *w)
{
	uint64_t end = page_down(w->seg_bytes);

	if (end > w->seg_kept &&
	    env_map_release(w->f, w->seg_kept, end - w->seg_kept) == CF_OK)
		w->seg_kept = end;
}

int wal_open(const char *dir, uint64_t first_segment, uint64_t segment_size,
	     unsigned flags, struct wal **out)
{
	struct seg s;
	struct wal *w;
	int rc;

	*out = NULL;
	if (strlen(dir) > 4000)
		return CF_ENAMETOOLONG;
	w = calloc(1, sizeof *w);
	if (!w)
		return CF_ENOMEM;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	if (!(w->dir = strdup(dir))) {
		rc = CF_ENOMEM;
		goto fail;
	}
	w->segment_size = segment_size;
	w->use_map = !(flags & WAL_WRITE);
	rc = env_mkdir_p(dir, 0700);
	if (rc == CF_OK)
		rc = create_segment(w, first_segment, &s);
	if (rc)
		goto fail;
	set_segment(w, &s);
	w->seg = first_segment;
	w->seed = seed_of(first_segment);
	w->seg_bytes = SEG_HDR;
	*out = w;
	return CF_OK;
fail:
	wal_close(w);
	return rc;
}

/* Cuts the current segment back to its last whole record (and, if it is
 * mapped, to no preallocation past it: the next append grows it). */
static int cut(struct wal *w)
{
	int rc = env_truncate(w->f, w->seg_bytes);

	if (rc == CF_OK && w->seg_cap > w->seg_bytes)
		w->seg_cap = w->seg_bytes;
	w->cut_pending = rc != CF_OK;
	if (rc)
		cf_log(CF_LOG_ERROR, "wal: cannot cut segment %016" PRIx64
		       " back to %" PRIu64 " bytes: %s", w->seg, w->seg_bytes,
		       cf_strerror(rc));
	return rc;
}

void wal_close(struct wal *w)
{
	int rc;

	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	while (w->syncing)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
	if (w->f) {
		if (w->cut_pending || w->mapped)
			cut(w);		/* a closed segment ends at its records */
		rc = env_sync(w->f);
		if (rc)
			cf_log(CF_LOG_ERROR, "wal: sync at close: %s",
			       cf_strerror(rc));
		env_close(w->f);
	}
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w->frame);
	free(w->old);
	free(w->dir);
	free(w);
}

/* Room for one more closed segment; mu held. */
static int reserve_old(struct wal *w)
{
	struct closed *n;
	size_t cap;

	if (w->nold < w->oldcap)
		return CF_OK;
	cap = w->oldcap ? w->oldcap * 2 : 16;
	n = realloc(w->old, cap * sizeof *n);
	if (!n)
		return CF_ENOMEM;
	w->old = n;
	w->oldcap = cap;
	return CF_OK;
}

/* Syncs and closes the current segment and starts the next.  On failure
 * the current segment stays open and nothing is lost: the next append
 * tries again. */
static int roll(struct wal *w)
{
	struct env_file *old = w->f;
	struct seg ns;
	uint64_t cover;
	int rc, src;

	pthread_mutex_lock(&w->mu);
	rc = reserve_old(w);
	if (rc) {
		pthread_mutex_unlock(&w->mu);
		return rc;
	}
	while (w->syncing)
		pthread_cond_wait(&w->cv, &w->mu);
	w->syncing = 1;
	cover = w->appended;
	pthread_mutex_unlock(&w->mu);

	/* a mapped segment is cut to its records first: one fsync makes
	 * both durable */
	src = w->mapped ? cut(w) : CF_OK;
	if (src == CF_OK)
		src = env_sync(old);
	rc = src ? src : create_segment(w, w->seg + 1, &ns);

	pthread_mutex_lock(&w->mu);
	w->syncing = 0;
	if (src == CF_OK) {
		atomic_fetch_add(&w->nsyncs, 1);
		if (cover > w->synced)
			w->synced = cover;
	}
	if (rc == CF_OK) {
		w->old[w->nold].id = w->seg;
		w->old[w->nold].max_seq = w->seg_max_seq;
		w->nold++;
		set_segment(w, &ns);
		w->seg++;
		w->seed = seed_of(w->seg);
	}
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);

	if (rc) {
		cf_log(CF_LOG_ERROR, "wal: cannot start segment %016" PRIx64
		       ": %s", w->seg + 1, cf_strerror(rc));
		return rc;
	}
	env_close(old);
	w->seg_bytes = SEG_HDR;
	w->seg_max_seq = 0;
	return CF_OK;
}

int wal_roll(struct wal *w)
{
	if (w->cut_pending && cut(w))
		return CF_EIO;
	if (w->seg_bytes <= SEG_HDR)
		return CF_OK;	/* nothing in it: keep it */
	return roll(w);
}

int wal_append(struct wal *w, const void *rec, size_t n, uint64_t max_seq)
{
	struct iovec v = { (void *)rec, n };

	return wal_appendv(w, &v, 1, max_seq);
}

int wal_appendv(struct wal *w, const struct iovec *iov, int cnt,
		uint64_t max_seq)
{
	struct iovec v[WAL_IOV_MAX + 1];
	unsigned char hdr[REC_HDR];
	size_t n = 0, len;
	int rc, stored = 1, map;

	if (cnt < 0 || cnt > WAL_IOV_MAX)
		return CF_EINVAL;
	for (int i = 0; i < cnt; i++) {
		if (iov[i].iov_len > REC_MAX)
			return CF_ETOOBIG;
		n += iov[i].iov_len;
	}
	len = REC_HDR + n;
	if (n > REC_MAX)
		return CF_ETOOBIG;
	if (w->cut_pending && cut(w))
		return CF_EIO;
	if (w->seg_bytes > SEG_HDR && w->seg_bytes + len > w->segment_size) {
		rc = roll(w);
		if (rc)
			return rc;
	}
	map = w->mapped && len <= MAP_RECORD_MAX &&
	      w->seg_bytes + len <= w->seg_win;
	if (w->mapped && !map) {
		/* a large record, or one bigger than the mapping (alone in
		 * its segment): one pwritev(2) at its offset costs less than
		 * a page fault for each of its pages, and is written from
		 * the pieces, with no copy of a large value into the frame
		 * (fs_bench's 10 MiB values: a fresh 10 MiB frame, its page
		 * faults and a memcpy a Put) */
		rec_header(hdr, w->seed, w->seg_bytes, iov, cnt, n);
		v[0].iov_base = hdr;
		v[0].iov_len = REC_HDR;
		for (int i = 0; i < cnt; i++)
			v[i + 1] = iov[i];
		rc = env_pwritev(w->f, w->seg_bytes, v, cnt + 1);
		goto out;
	}
	if (len > w->frame_cap) {
		size_t cap = len < 4096 ? 4096 : len;
		unsigned char *p = malloc(cap);
		if (!p)
			return CF_ENOMEM;
		free(w->frame);
		w->frame = p;
		w->frame_cap = cap;
	}
	/* One buffer, one env_write or env_map_write: a record is never
	 * split between two write(2) calls of ours, and an injected fault
	 * counts a record as one write either way. */
	{
		size_t at = REC_HDR;
		for (int i = 0; i < cnt; i++) {
			if (iov[i].iov_len)
				memcpy(w->frame + at, iov[i].iov_base,
				       iov[i].iov_len);
			at += iov[i].iov_len;
		}
	}
	v[0].iov_base = w->frame + REC_HDR;
	v[0].iov_len = n;
	rec_header(w->frame, w->seed, w->seg_bytes, v, 1, n);
	if (map && w->seg_bytes + len > w->seg_cap) {
		struct seg s = { w->f, 1, w->seg_cap, w->seg_win };

		rc = grow(&s, w->seg_bytes + len);
		if (rc == CF_EINVAL && w->seg_bytes == SEG_HDR) {
			/* no fallocate on this file system: from here on,
			 * write(2), which appends at the file offset, 32 */
			cf_log(CF_LOG_INFO, "wal: %s: no fallocate, appending "
			       "with write(2)", w->dir);
			w->use_map = 0;
			w->mapped = 0;
			map = 0;
		} else if (rc) {
			if (rc == CF_EINVAL)
				rc = CF_EIO;
			stored = 0;	/* nothing to cut */
			goto out;
		} else {
			w->seg_cap = s.cap;
			release_written(w);
		}
	}
	if (map) {
		rc = env_map_write(w->f, w->seg_bytes, w->frame, len);
	} else {
		/* write(2): appends at the file offset, seg_bytes */
		rc = env_write(w->f, w->frame, len);
	}
out:
	if (w->frame_cap > FRAME_KEEP) {
		free(w->frame);
		w->frame = NULL;
		w->frame_cap = 0;
	}
	if (rc) {
		if (stored)
			cut(w);
		return rc;
	}
	w->seg_bytes += len;
	if (max_seq > w->seg_max_seq)
		w->seg_max_seq = max_seq;
	pthread_mutex_lock(&w->mu);
	w->appended += len;
	pthread_mutex_unlock(&w->mu);
	atomic_fetch_add_explicit(&w->nbytes, len, memory_order_relaxed);
	return CF_OK;
}

int wal_sync(struct wal *w)
{
	struct env_file *f;
	uint64_t target, cover;
	int rc;

	pthread_mutex_lock(&w->mu);
	target = w->appended;
	while (w->synced < target && w->syncing)
		pthread_cond_wait(&w->cv, &w->mu);
	if (w->synced >= target) {
		pthread_mutex_unlock(&w->mu);
		return CF_OK;
	}
	w->syncing = 1;
	cover = w->appended;
	f = w->f;
	pthread_mutex_unlock(&w->mu);

	rc = env_sync(f);

	pthread_mutex_lock(&w->mu);
	w->syncing = 0;
	if (rc == CF_OK) {
		atomic_fetch_add(&w->nsyncs, 1);
		if (cover > w->synced)
			w->synced = cover;
	}
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
	return atomic_load(&w->nsyncs);
}

uint64_t wal_bytes(const struct wal *w)
{
	return atomic_load_explicit(&w->nbytes, memory_order_relaxed);
}

int wal_adopt(struct wal *w, uint64_t segment, uint64_t max_seq)
{
	int rc;

	pthread_mutex_lock(&w->mu);
	if (segment == w->seg) {
		rc = CF_EINVAL;		/* the open segment is not closed */
	} else if ((rc = reserve_old(w)) == CF_OK) {
		w->old[w->nold].id = segment;
		w->old[w->nold].max_seq = max_seq;
		w->nold++;
	}
	pthread_mutex_unlock(&w->mu);
	return rc;
}

int wal_purge(struct wal *w, uint64_t min_unflushed)
{
	struct closed *gone = NULL;
	size_t ngone = 0, keep = 0;
	char path[4096];
	int rc = CF_OK;

	/* pick under the lock, unlink without it */
	pthread_mutex_lock(&w->mu);
	for (size_t i = 0; i < w->nold; i++)
		ngone += w->old[i].max_seq < min_unflushed;
	if (ngone && !(gone = malloc(ngone * sizeof *gone)))
		rc = CF_ENOMEM;
	ngone = 0;
	for (size_t i = 0; i < w->nold && rc == CF_OK; i++) {
		if (w->old[i].max_seq < min_unflushed)
			gone[ngone++] = w->old[i];
		else
			w->old[keep++] = w->old[i];
	}
	if (rc == CF_OK)
		w->nold = keep;
	pthread_mutex_unlock(&w->mu);

	for (size_t i = 0; i < ngone; i++) {
		int e;

		wal_segment_path(path, sizeof path, w->dir, gone[i].id);
		e = env_unlink(path);
		if (e == CF_OK || e == CF_ENOTFOUND)
			continue;
		/* keep it listed, so a later purge tries again */
		cf_log(CF_LOG_ERROR, "wal: cannot delete %s: %s", path,
		       cf_strerror(e));
		rc = e;
		pthread_mutex_lock(&w->mu);
		if (reserve_old(w) == CF_OK)
			w->old[w->nold++] = gone[i];
		pthread_mutex_unlock(&w->mu);
	}
	free(gone);
	return rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct listing {
	uint64_t *ids;
	size_t n, cap;
};

/* Takes exactly the names wal_segment_path makes: 16 lowercase hex
 * digits and ".log". */
static int list_one(const char *name, void *arg)
{
	struct listing *l = arg;
	uint64_t id = 0;

	if (strlen(name) != 20 || strcmp(name + 16, ".log"))
		return 0;
	for (int i = 0; i < 16; i++) {
		char c = name[i];
		int d = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return 0;
		id = id << 4 | (uint64_t)d;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		uint64_t *n = realloc(l->ids, cap * sizeof *n);
		if (!n)
			return CF_ENOMEM;
		l->ids = n;
		l->cap = cap;
	}
	l->ids[l->n++] = id;
	return 0;
}

int wal_list(const char *dir, uint64_t **ids, size_t *n)
{
	struct listing l = { NULL, 0, 0 };
	int rc;

	*ids = NULL;
	*n = 0;
	rc = env_list_dir(dir, list_one, &l);
	if (rc) {
		free(l.ids);
		return rc;
	}
	if (l.n > 1)
		qsort(l.ids, l.n, sizeof *l.ids, cmp_u64);
	*ids = l.ids;
	*n = l.n;
	return CF_OK;
}

/* --- reading ---------------------------------------------------------- */

struct wal_reader {
	struct env_file *f;
	uint64_t size;		/* file size at open */
	uint32_t seed;		/* from the segment number in the header */
	unsigned char *buf;	/* holds file bytes [base, base + len) */
	size_t cap, len;
	uint64_t base;
	uint64_t off;		/* the next record */
	uint64_t valid_end;
	int torn;
	int state;		/* 0 reading, 1 at the end, or an error */
};

/* Makes buf hold file bytes [off, off + need); need <= size - off.
 * Reads READ_CHUNK at a time, or the whole record when it is bigger. */
static int fill(struct wal_reader *r, uint64_t off, size_t need)
{
	size_t keep = 0, want, got;
	int rc;

	if (off >= r->base && off + need <= r->base + r->len)
		return CF_OK;
	if (off >= r->base && off < r->base + r->len) {
		keep = (size_t)(r->base + r->len - off);
		memmove(r->buf, r->buf + (off - r->base), keep);
	}
	r->base = off;
	r->len = keep;
	want = need > READ_CHUNK ? need : READ_CHUNK;
	if (want > r->size - off)
		want = (size_t)(r->size - off);
	if (want > r->cap) {
		unsigned char *nb = realloc(r->buf, want);
		if (!nb)
			return CF_ENOMEM;
		r->buf = nb;
		r->cap = want;
	}
	rc = env_pread_some(r->f, r->buf + keep, want - keep, off + keep, &got);
	if (rc)
		return rc;
	r->len = keep + got;
	return r->len >= need ? CF_OK : CF_EIO;	/* shrank under us */
}

/*
 * After a bad record at off: is there a record header we wrote anywhere
 * after it?  1 yes, 0 no, or an error.  Only offsets with the type bytes
 * in place get a CRC check, so zeros and most garbage go by at memchr
 * speed.
 */
static int valid_after(struct wal_reader *r, uint64_t off)
{
	static const unsigned char pat[4] = { REC_FULL, 0, 0, 0 };
	uint64_t pos = off + 1;
	size_t n;

	while (pos + REC_HDR <= r->size) {
		size_t avail = r->size - pos > READ_CHUNK ? READ_CHUNK :
			       (size_t)(r->size - pos);
		const unsigned char *p, *m, *end;
		int rc = fill(r, pos, avail);

		if (rc)
			return rc;
		p = r->buf + (pos - r->base);
		end = p + avail;
		m = p + 8;
		while ((m = memmem(m, (size_t)(end - m), pat, sizeof pat))) {
			const unsigned char *h = m - 8;
			if (h + REC_HDR > end)
				break;
			if (header_ok(r->seed, pos + (uint64_t)(h - p), h, &n))
				return 1;
			m++;
		}
		pos += avail - REC_HDR + 1;
	}
	return 0;
}

static int all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Are the file's bytes from off to its end all zeros?  1, 0, or an
 * error. */
static int zeros_from(struct wal_reader *r, uint64_t off)
{
	while (off < r->size) {
		size_t n = r->size - off > READ_CHUNK ? READ_CHUNK :
			   (size_t)(r->size - off);
		int rc = fill(r, off, n);

		if (rc)
			return rc;
		if (!all_zero(r->buf + (off - r->base), n))
			return 0;
		off += n;
	}
	return 1;
}

/* Could these len bytes be a segment header cut short by a crash while
 * the segment was being created: zeros, or the start of the magic? */
static int torn_header(const unsigned char *h, size_t len)
{
	size_t m = len < 8 ? len : 8;

	return all_zero(h, len) || !memcmp(h, SEG_MAGIC, m);
}

int wal_reader_open(const char *path, struct wal_reader **out)
{
	struct wal_reader *r;
	const unsigned char *h;
	int64_t size;
	int rc, empty;

	*out = NULL;
	r = calloc(1, sizeof *r);
	if (!r)
		return CF_ENOMEM;
	rc = env_open(path, ENV_READ, &r->f);
	if (rc)
		goto fail;
	size = env_size(r->f);
	if (size < 0) {
		rc = (int)size;
		goto fail;
	}
	r->size = (uint64_t)size;
	rc = fill(r, 0, r->size < SEG_HDR ? (size_t)r->size : SEG_HDR);
	if (rc)
		goto fail;
	h = r->buf;
	empty = r->size < SEG_HDR;
	if (empty && !torn_header(h, (size_t)r->size)) {
		rc = CF_ECORRUPT;
		goto fail;
	}
	if (!empty && all_zero(h, SEG_HDR)) {
		/* A header of zeros: a segment created just before a crash,
		 * empty, if the rest is zeros too, however long (a file
		 * system may keep a preallocated length and lose the
		 * header).  Zeros followed by data are not ours. */
		rc = zeros_from(r, SEG_HDR);
		if (rc < 0)
			goto fail;
		if (rc == 0) {
			rc = CF_ECORRUPT;
			goto fail;
		}
		empty = 1;
	}
	if (empty) {
		r->torn = r->size > 0;
		r->state = 1;
		*out = r;
		return CF_OK;
	}
	if (memcmp(h, SEG_MAGIC, 8) || dec_u32le(h + 8) != SEG_VERSION ||
	    dec_u32le(h + 12) != 0 || dec_u32le(h + 28) != 0 ||
	    crc32c_unmask(dec_u32le(h + 24)) != crc32c(h, 24)) {
		rc = CF_ECORRUPT;
		goto fail;
	}
	r->seed = seed_of(dec_u64le(h + 16));
	r->off = r->valid_end = SEG_HDR;
	*out = r;
	return CF_OK;
fail:
	wal_reader_close(r);
	return rc;
}

int wal_reader_next(struct wal_reader *r, const void **rec, size_t *n)
{
	const unsigned char *h;
	size_t len;
	int rc;

	*rec = NULL;
	*n = 0;
	if (r->state)
		return r->state < 0 ? r->state : CF_OK;
	if (r->off == r->size) {
		r->state = 1;
		return CF_OK;
	}
	if (r->size - r->off < REC_HDR)
		goto bad;
	if ((rc = fill(r, r->off, REC_HDR)))
		goto fail;
	h = r->buf + (r->off - r->base);
	if (!header_ok(r->seed, r->off, h, &len) ||
	    len > r->size - r->off - REC_HDR)
		goto bad;
	if ((rc = fill(r, r->off, REC_HDR + len)))
		goto fail;
	h = r->buf + (r->off - r->base);
	if (!payload_ok(r->seed, r->off, h, len))
		goto bad;
	*rec = h + REC_HDR;
	*n = len;
	r->off += REC_HDR + len;
	r->valid_end = r->off;
	return CF_OK;
bad:
	/* torn tail if nothing we wrote follows, damage otherwise */
	rc = valid_after(r, r->off);
	if (rc == 0) {
		r->torn = 1;
		r->state = 1;
		return CF_OK;
	}
	if (rc == 1)
		rc = CF_ECORRUPT;
fail:
	r->state = rc;
	return rc;
}

uint64_t wal_reader_valid_end(const struct wal_reader *r)
{
	return r->valid_end;
}

int wal_reader_torn(const struct wal_reader *r)
{
	return r->torn;
}

int wal_reader_zero_tail(struct wal_reader *r)
{
	return zeros_from(r, r->valid_end) == 1;
}

void wal_reader_close(struct wal_reader *r)
{
	if (!r)
		return;
	env_close(r->f);
	free(r->buf);
	free(r);
}
