/*
 * tsblock.h: the TSDB block encoding (docs/tsblock_format.md), a
 * reversible transform of a store file's raw data block that stores
 * OpenTSDB columns (compacted or single-point cells of family t) as
 * delta-of-delta timestamps, scaled-decimal or XOR'd floats and
 * frame-of-reference integers.  The engine applies it to the data blocks
 * of a family with ENCODING=TSDB before compressing them, and undoes it
 * after decompressing (engine/block.c).
 *
 * Why it lives in util/ and not in tsd/: a store file must be readable
 * by anything that opens it (the daemon's engine, cellfs-fsck, tests),
 * and the engine may not depend on tsd/ (STYLE.md).  So this is a pure
 * codec over bytes: it knows the raw block layout and the engine's
 * internal key layout (docs/sst_format.md) and OpenTSDB's cell layout
 * (docs/tsd_format.md), and nothing else; no I/O, no state, thread safe.
 *
 * The encoder guarantees exactness: it decodes what it wrote and
 * compares, per cell (a cell that would not come back byte-exact is kept
 * verbatim) and per block (a block that would not is refused, and the
 * caller stores it unencoded).
 *
 * Versions: the encoder writes version 3 (a cell's headers and codes
 * in one bit stream, its column parameters from the block's previous
 * cell); the decoder reads 1, 2 and 3.
 */
#ifndef CF_TSBLOCK_H
#define CF_TSBLOCK_H

#include <stddef.h>

#include "util/buf.h"

/*
 * Appends the encoded form of the raw data block [raw, raw+n) to out.
 * CF_EINVAL: the block is not one the codec can rebuild byte-exact (not a
 * well-formed raw block in the layout block_builder writes); out is left
 * as it was and the caller stores the block unencoded.  CF_ENOMEM.
 * Memory: besides out, scratch of about 3n bytes during the call.
 */
int tsblock_encode(const unsigned char *raw, size_t n, struct buf *out);

/* The size of the raw block that the encoded block [p, p+n) decodes to.
 * CF_ECORRUPT when the header is malformed. */
int tsblock_raw_size(const unsigned char *p, size_t n, size_t *rawlen);

/*
 * Decodes the encoded block [p, p+n) into dst, which has exactly rawlen
 * bytes (tsblock_raw_size).  Any input, however malformed, gives CF_OK
 * with dst filled, or CF_ECORRUPT; never reads or writes out of bounds.
 * CF_ENOMEM.  Memory: scratch of a few times the largest cell.
 */
int tsblock_decode(const unsigned char *p, size_t n, unsigned char *dst,
		   size_t rawlen);

/*
 * One cell (qualifier q, value v) as the block encoding stores a cell it
 * recognises as an OpenTSDB column, as the first cell of a block
 * (version 2), for tests and the fuzz target.
 * tsblock_cell_encode appends it to out, or returns CF_EINVAL (not a
 * column it can store byte-exact: the block keeps such a cell verbatim);
 * CF_ENOMEM.  tsblock_cell_decode reads one from [*p, end), advances *p,
 * and appends the qualifier to q and the value to v; max_points bounds
 * the points it accepts.  CF_ECORRUPT, CF_ENOMEM.
 */
int tsblock_cell_encode(const unsigned char *q, size_t qlen,
			const unsigned char *v, size_t vlen, struct buf *out);
int tsblock_cell_decode(const unsigned char **p, const unsigned char *end,
			size_t max_points, struct buf *q, struct buf *v);

#endif
