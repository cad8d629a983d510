/*
 * walrec.h: the payload of the engine's WAL records, one group commit
 * each (docs/wal_format.md, "Payload").  wal.c frames and checks the
 * records; this module says what is inside them.
 *
 * Version 2, written: the record's first sequence number once (the
 * entries take the next ones in turn), and per entry a head byte (kind,
 * whether the table and family change), the row, qualifier and value
 * with their lengths and the timestamp as a difference from the entry
 * before; the whole body compressed with snappy when that saves an
 * eighth (and no value is referenced from outside the record).  Version
 * 1, read: each entry a table id and a whole internal key.
 *
 * Writing:
 *   walrec_begin(&e, rec, first_seq, count, compress);   (CF_ENOMEM)
 *   walrec_put(&e, tid, &key, val, vlen, ref);   per entry, in seq order
 *   walrec_finish(&e, z, &p, &n);                the payload is p[0..n)
 * With ref the value is left out of rec: the caller writes it from its
 * own memory at offset rec->len (as returned by this call), so a record
 * with references is never compressed.
 *
 * Reading:
 *   walrec_open(&d, rec, n);   then walrec_next() until *more is 0
 *   walrec_close(&d);
 * Pointers in the keys returned point into rec or d's own copy, valid
 * until walrec_close.
 */
#ifndef CF_WALREC_H
#define CF_WALREC_H

#include <stddef.h>
#include <stdint.h>

#include "engine/key.h"
#include "util/buf.h"

#define WALREC_VERSION 2

struct walrec_enc {
	struct buf *rec;
	size_t body;		/* where the body begins in rec */
	int compress, refs;
	int64_t tid;		/* the entry before's; -1 at the start */
	size_t fam, famlen;	/* its family: offset in rec */
	int fam_set;
	int64_t ts;		/* its timestamp; 0 at the start */
};

int walrec_begin(struct walrec_enc *e, struct buf *rec, uint64_t first_seq,
		 uint64_t count, int compress);
int walrec_put(struct walrec_enc *e, int64_t tid, const struct ikey *k,
	       const void *val, size_t vlen, int ref);
/* The payload: rec as it is, or its header and the compressed body in z
 * (which is the caller's to keep for the next record). */
int walrec_finish(struct walrec_enc *e, struct buf *z, const void **p,
		  size_t *n);

struct walrec_dec {
	const unsigned char *p, *end;
	int version;
	uint64_t left;		/* entries not read */
	uint64_t seq;		/* version 2: the next entry's */
	int64_t tid;
	const unsigned char *fam;
	size_t famlen;
	int64_t ts;
	struct buf body;	/* a compressed body, uncompressed */
};

/* CF_ECORRUPT when rec is not a payload of a known version. */
int walrec_open(struct walrec_dec *d, const void *rec, size_t n);
/* The next entry, or *more = 0 after the last (CF_ECORRUPT if bytes are
 * left over or an entry is malformed). */
int walrec_next(struct walrec_dec *d, int64_t *tid, struct ikey *k,
		const void **val, size_t *vlen, int *more);
void walrec_close(struct walrec_dec *d);
/* Reads every entry of rec: CF_OK when replay could decode it all,
 * CF_ECORRUPT (or CF_ENOMEM) otherwise.  Structure only: whether a key
 * is already in a memstore is replay's to find. */
int walrec_check(const void *rec, size_t n);

#endif
