/*
 * wal.h: the write-ahead log (format: docs/wal_format.md), shared by all
 * regions of a db.  A log is a directory of numbered segment files; each
 * record is framed with its length and a CRC-32C.  The engine puts one
 * encoded batch in a record; the WAL does not look inside.
 *
 * Concurrency: wal_append is called by one thread at a time (the write
 * leader); wal_sync may run concurrently from any thread and is a group
 * commit: a caller whose bytes were covered by an fsync that started after
 * they were appended returns without a second fsync.  wal.c states its
 * lock order; no lock is held when a function returns.
 */
#ifndef CF_WAL_H
#define CF_WAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct wal;

/* Opens a new segment numbered first_segment in dir (created if
 * missing) for appending.  Segments roll at segment_size bytes.  Records
 * are stored through a shared mapping of the preallocated segment
 * (docs/wal_format.md, "Preallocation"), or with write(2) where the file
 * system cannot preallocate or with WAL_WRITE in flags.  CF_EEXIST if
 * that segment exists already (a log is never truncated); CF_EIO,
 * CF_ENOSPC, CF_ENOMEM. */
int wal_open(const char *dir, uint64_t first_segment, uint64_t segment_size,
	     unsigned flags, struct wal **out);
/* wal_open flags */
#define WAL_WRITE 1u	/* every record with write(2), never a mapping */
/* Cuts the segment back to its records, syncs and closes. */
void wal_close(struct wal *w);
/* Appends one record whose entries have sequence numbers <= max_seq.
 * Not synced, but in the page cache: a killed process loses none of it.
 * CF_EIO, CF_ENOSPC: the partial record is cut off again so the log
 * stays valid, and the call may be retried.  CF_ETOOBIG over 1 GiB. */
int wal_append(struct wal *w, const void *rec, size_t n, uint64_t max_seq);
/* As wal_append, of the record made of the cnt (at most WAL_IOV_MAX)
 * pieces of iov one after the other.  A record that goes out with
 * pwrite(2) (one over 8 KiB in a mapped segment) is written from the
 * pieces themselves, not copied into one buffer first: a large value
 * reaches the page cache in one copy. */
#define WAL_IOV_MAX 8
int wal_appendv(struct wal *w, const struct iovec *iov, int cnt,
		uint64_t max_seq);
/* Makes every record appended before the call durable.  CF_EIO. */
int wal_sync(struct wal *w);
/* 1 if some appended bytes are not yet synced. */
int wal_dirty(struct wal *w);
uint64_t wal_syncs(const struct wal *w);	/* fsyncs done */
uint64_t wal_bytes(const struct wal *w);	/* bytes appended */
/* Registers an existing, closed segment (from before wal_open, found
 * by replay) whose records have seq <= max_seq, so wal_purge can delete
 * it later. */
int wal_adopt(struct wal *w, uint64_t segment, uint64_t max_seq);
/* Deletes every closed segment all of whose records have
 * seq < min_unflushed (those edits are in store files).  */
int wal_purge(struct wal *w, uint64_t min_unflushed);
/* Closes the current segment, if it holds any record, and starts the next
 * (so wal_purge may delete it); called by the appending thread, or with
 * appends stopped. */
int wal_roll(struct wal *w);

/* Segment numbers present in dir, ascending: *ids malloc'd (caller
 * frees).  */
int wal_list(const char *dir, uint64_t **ids, size_t *n);
/* The path of segment id in dir into buf (size >= strlen(dir) + 32). */
void wal_segment_path(char *buf, size_t size, const char *dir, uint64_t id);

struct wal_reader;

/* Opens one segment for reading.  CF_ENOTFOUND, CF_EIO, CF_ENOMEM;
 * CF_ECORRUPT when its header is not one of ours. */
int wal_reader_open(const char *path, struct wal_reader **out);
/*
 * The next record: *rec points at n bytes valid until the next call;
 * *rec = NULL at the end.  A torn tail (an incomplete or bad last record
 * with nothing valid after it, as a crash leaves) ends the segment
 * quietly and sets *torn_off (if non-NULL) to where valid data ends.
 * A bad record followed by valid ones is CF_ECORRUPT, never data.
 */
int wal_reader_next(struct wal_reader *r, const void **rec, size_t *n);
uint64_t wal_reader_valid_end(const struct wal_reader *r);
int wal_reader_torn(const struct wal_reader *r);
/* After the end: 1 if every byte from the valid end to the end of the
 * file is zero (a preallocated segment's unused room, what a crash of a
 * mapped writer leaves; no record was cut short), 0 if not or if they
 * cannot be read. */
int wal_reader_zero_tail(struct wal_reader *r);
void wal_reader_close(struct wal_reader *r);

#endif
