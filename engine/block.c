/*
 * block.c: building, sealing, reading and searching blocks
 * (docs/sst_format.md, "Blocks").
 *
 * Invariants of a parsed struct block (checked once by block_from_raw, so
 * the search code can trust them): the restart array lies inside the
 * block, its offsets ascend strictly and each points before the array.
 * Entries themselves are checked as they are decoded, since a cursor
 * rarely visits them all.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <snappy-c.h>
#include <zstd.h>

#include "engine/block.h"
#include "engine/key.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/env.h"
#include "util/err.h"
#include "util/tsblock.h"

/* A block larger than this cannot come from our builder (restart offsets
 * are u32), so a handle or snappy header claiming more is corrupt; the
 * check keeps a bad length from turning into a huge allocation. */
#define BLOCK_MAX ((uint64_t)UINT32_MAX)

/* --- building --------------------------------------------------------- */

static int push_restart(struct block_builder *b, uint32_t off)
{
	return buf_append(&b->restarts, &off, sizeof off);
}

void block_builder_init(struct block_builder *b, int restart_interval)
{
	memset(b, 0, sizeof *b);
	b->interval = restart_interval > 0 ? restart_interval : 1;
	block_builder_reset(b);
}

void block_builder_release(struct block_builder *b)
{
	buf_release(&b->data);
	buf_release(&b->restarts);
	buf_release(&b->last);
}

void block_builder_reset(struct block_builder *b)
{
	b->data.len = 0;
	b->restarts.len = 0;
	b->last.len = 0;
	b->counter = 0;
	b->entries = 0;
	b->finished = 0;
}

int block_builder_add(struct block_builder *b, const unsigned char *key,
		      size_t klen, const void *val, size_t vlen)
{
	unsigned char hdr[30];
	size_t shared = 0, h;
	int rc;

	if (b->counter < b->interval && b->entries > 0) {
		size_t max = b->last.len < klen ? b->last.len : klen;
		while (shared < max && b->last.p[shared] == key[shared])
			shared++;
	} else {
		rc = push_restart(b, (uint32_t)b->data.len);
		if (rc)
			return rc;
		b->counter = 0;
	}
	h = enc_varint(hdr, shared);
	h += enc_varint(hdr + h, klen - shared);
	h += enc_varint(hdr + h, vlen);
	rc = buf_reserve(&b->data, h + klen - shared + vlen);
	if (rc)
		return rc;
	rc = buf_reserve(&b->last, klen);
	if (rc)
		return rc;
	memcpy(b->data.p + b->data.len, hdr, h);
	b->data.len += h;
	memcpy(b->data.p + b->data.len, key + shared, klen - shared);
	b->data.len += klen - shared;
	if (vlen)
		memcpy(b->data.p + b->data.len, val, vlen);
	b->data.len += vlen;
	memcpy(b->last.p + shared, key + shared, klen - shared);
	b->last.len = klen;
	b->counter++;
	b->entries++;
	return CF_OK;
}

size_t block_builder_size(const struct block_builder *b)
{
	/* an empty block still gets the restart at offset 0 */
	size_t r = b->restarts.len ? b->restarts.len : sizeof(uint32_t);
	return b->data.len + r + 4;
}

int block_builder_finish(struct block_builder *b, const unsigned char **p,
			 size_t *n)
{
	size_t nr;
	int rc;

	if (!b->finished) {
		if (b->restarts.len == 0) {
			rc = push_restart(b, 0);
			if (rc)
				return rc;
		}
		nr = b->restarts.len / sizeof(uint32_t);
		rc = buf_reserve(&b->data, 4 * nr + 4);
		if (rc)
			return rc;
		for (size_t i = 0; i < nr; i++) {
			uint32_t off;
			memcpy(&off, b->restarts.p + 4 * i, 4);
			enc_u32le(b->data.p + b->data.len, off);
			b->data.len += 4;
		}
		enc_u32le(b->data.p + b->data.len, (uint32_t)nr);
		b->data.len += 4;
		b->finished = 1;
	}
	*p = b->data.p;
	*n = b->data.len;
	return CF_OK;
}

static uint32_t trailer_crc(const unsigned char *p, size_t n,
			    unsigned char type)
{
	return crc32c_mask(crc32c_extend(crc32c(p, n), &type, 1));
}

/*
 * zstd contexts, one of each per thread (flush and compaction threads
 * compress, readers decompress): setting a context up costs more than
 * compressing a 64 KiB block, so it is made once per thread and freed
 * when the thread exits.  Memory: at level 1 a compression context holds
 * 300 KiB after 64 KiB blocks, 570 KiB at most (blocks of 1 MiB and up),
 * one per thread that has sealed a zstd block (the flush and compaction
 * threads); a decompression context (in struct read_buf) 94 KiB, one per
 * thread that has read a zstd block.  A thread that cannot get one
 * compresses with a context made for the call.
 */
static pthread_key_t cctx_key;
static pthread_once_t cctx_once = PTHREAD_ONCE_INIT;
static int cctx_ok;

static void cctx_free(void *v)
{
	ZSTD_freeCCtx(v);
}

static void cctx_init(void)
{
	cctx_ok = pthread_key_create(&cctx_key, cctx_free) == 0;
}

/* The thread's compression context; NULL on failure. */
static ZSTD_CCtx *cctx_get(void)
{
	ZSTD_CCtx *c;

	pthread_once(&cctx_once, cctx_init);
	if (!cctx_ok)
		return NULL;
	if (!(c = pthread_getspecific(cctx_key))) {
		if (!(c = ZSTD_createCCtx()))
			return NULL;
		if (pthread_setspecific(cctx_key, c) != 0) {
			ZSTD_freeCCtx(c);
			return NULL;
		}
	}
	return c;
}

/* Compresses [raw, raw+n) into dst (cap bytes) at BLOCK_ZSTD_LEVEL;
 * the compressed size, or 0 on failure. */
static size_t zstd_pack(const unsigned char *raw, size_t n,
			unsigned char *dst, size_t cap)
{
	ZSTD_CCtx *c = cctx_get(), *own = NULL;
	size_t r;

	if (!c && !(c = own = ZSTD_createCCtx()))
		return 0;
	r = ZSTD_compressCCtx(c, dst, cap, raw, n, BLOCK_ZSTD_LEVEL);
	ZSTD_freeCCtx(own);
	return ZSTD_isError(r) ? 0 : r;
}

/*
 * The block encodings by id (enum block_encoding): encode appends the
 * encoded form of a raw block or says CF_EINVAL (it does not apply: the
 * block is stored unencoded); size and decode undo it.  Pure functions
 * over bytes, so that whoever opens a store file (the daemon, fsck, the
 * tests) can read it without any layer above the engine.
 */
static const struct {
	int (*encode)(const unsigned char *raw, size_t n, struct buf *out);
	int (*size)(const unsigned char *p, size_t n, size_t *rawlen);
	int (*decode)(const unsigned char *p, size_t n, unsigned char *dst,
		      size_t rawlen);
} encodings[] = {
	[BLOCK_ENC_TSDB] = { tsblock_encode, tsblock_raw_size, tsblock_decode },
};
#define NENCODINGS (sizeof encodings / sizeof encodings[0])

int block_seal(const unsigned char *raw, size_t n, int compression,
	       int encoding, struct buf *out, size_t *stored)
{
	struct buf enc = BUF_INIT;
	unsigned char type = BLOCK_RAW, encbits = 0, *dst;
	size_t len, keep = 8;	/* compress when it saves 1/keep */
	int rc = CF_OK;

	if (encoding > 0 && (size_t)encoding < NENCODINGS &&
	    encodings[encoding].encode) {
		rc = encodings[encoding].encode(raw, n, &enc);
		if (rc == CF_ENOMEM)
			goto out;
		if (rc == CF_OK && enc.len < n) {
			raw = enc.p;
			n = enc.len;
			encbits = (unsigned char)(encoding << BLOCK_ENC_SHIFT);
			/* decoding costs more than decompressing: any
			 * saving is worth it */
			keep = 64;
		}
		rc = CF_OK;
	}
	len = n;
	if (compression == BLOCK_SNAPPY) {
		size_t max = snappy_max_compressed_length(n);
		size_t clen = max;
		rc = buf_reserve(out, max + BLOCK_TRAILER);
		if (rc)
			goto out;
		dst = out->p + out->len;
		if (snappy_compress((const char *)raw, n, (char *)dst,
				    &clen) == SNAPPY_OK &&
		    clen <= n - n / keep) {
			type = BLOCK_SNAPPY;
			len = clen;
		}
	} else if (compression == BLOCK_ZSTD) {
		size_t max = ZSTD_compressBound(n);
		size_t clen;
		rc = buf_reserve(out, max + BLOCK_TRAILER);
		if (rc)
			goto out;
		dst = out->p + out->len;
		clen = zstd_pack(raw, n, dst, max);
		if (clen && clen <= n - n / keep) {
			type = BLOCK_ZSTD;
			len = clen;
		}
	}
	rc = buf_reserve(out, len + BLOCK_TRAILER);
	if (rc)
		goto out;
	dst = out->p + out->len;
	if (type == BLOCK_RAW && n)
		memcpy(dst, raw, n);
	type |= encbits;
	dst[len] = type;
	enc_u32le(dst + len + 1, trailer_crc(dst, len, type));
	out->len += len + BLOCK_TRAILER;
	*stored = len;
out:
	buf_release(&enc);
	return rc;
}

/* --- reading ---------------------------------------------------------- */

int block_from_raw(unsigned char *data, size_t n, struct block **out)
{
	struct block *b;
	uint32_t nr, prev = 0;
	size_t roff;

	*out = NULL;
	if (n < 8)
		goto corrupt;
	nr = dec_u32le(data + n - 4);
	if (nr == 0 || nr > (n - 4) / 4)
		goto corrupt;
	roff = n - 4 - 4 * (size_t)nr;
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t r = dec_u32le(data + roff + 4 * (size_t)i);
		if ((i > 0 && r <= prev) || (r >= roff && !(r == 0 && roff == 0)))
			goto corrupt;
		prev = r;
	}
	b = malloc(sizeof *b);
	if (!b) {
		free(data);
		return CF_ENOMEM;
	}
	b->data = data;
	b->size = n;
	b->cap = n;
	b->restarts = roff;
	b->nrestarts = nr;
	atomic_init(&b->refs, 1);
	*out = b;
	return CF_OK;
corrupt:
	free(data);
	return CF_ECORRUPT;
}

/*
 * Per-thread buffers.  A compressed block is read into the thread's read
 * buffer, not a fresh allocation: only its decompressed form outlives
 * the read.  Reads of more than READ_BUF_MAX bytes, or without the
 * buffer, allocate.
 *
 * The thread also keeps one spare: the data of the last block it freed.
 * A block read while the cache is full evicts one, and the next read
 * needs a buffer of about the same size, so handing the evicted block's
 * memory to the next decompression spares malloc and free (whose
 * bookkeeping costs cache misses) on every block-cache miss.  A spare is
 * taken only by a block at most 1/8 smaller, so a block never holds much
 * more memory than it needs; the cache charges what it holds (cap).
 */
#define READ_BUF_MAX ((size_t)256 << 10)

struct read_buf {
	unsigned char *p;
	size_t cap;
	unsigned char *spare;	/* NULL or spare_cap usable bytes */
	size_t spare_cap;
	ZSTD_DCtx *dctx;	/* NULL until the thread reads a zstd block */
};

static pthread_key_t read_buf_key;
static pthread_once_t read_buf_once = PTHREAD_ONCE_INIT;
static int read_buf_ok;

static void read_buf_free(void *v)
{
	struct read_buf *rb = v;

	free(rb->p);
	free(rb->spare);
	ZSTD_freeDCtx(rb->dctx);
	free(rb);
}

static void read_buf_init(void)
{
	read_buf_ok = pthread_key_create(&read_buf_key, read_buf_free) == 0;
}

/* The thread's buffers, made on first use when make; NULL without. */
static struct read_buf *read_buf_of(int make)
{
	struct read_buf *rb;

	pthread_once(&read_buf_once, read_buf_init);
	if (!read_buf_ok)
		return NULL;
	if (!(rb = pthread_getspecific(read_buf_key)) && make) {
		if (!(rb = calloc(1, sizeof *rb)))
			return NULL;
		if (pthread_setspecific(read_buf_key, rb) != 0) {
			free(rb);
			return NULL;
		}
	}
	return rb;
}

/* The thread's read buffer, with room for n bytes; NULL: allocate
 * instead. */
static unsigned char *read_buf_get(size_t n)
{
	struct read_buf *rb;

	if (n > READ_BUF_MAX || !(rb = read_buf_of(1)))
		return NULL;
	if (rb->cap < n) {
		size_t cap = rb->cap ? rb->cap : 4096;
		unsigned char *np;
		while (cap < n)
			cap *= 2;
		if (!(np = realloc(rb->p, cap)))
			return NULL;
		rb->p = np;
		rb->cap = cap;
	}
	return rb->p;
}

/* Memory for a block of n bytes, *cap of them usable: the thread's
 * spare when it fits. */
static unsigned char *data_alloc(size_t n, size_t *cap)
{
	struct read_buf *rb = read_buf_of(0);

	if (rb && rb->spare && rb->spare_cap >= n &&
	    rb->spare_cap - rb->spare_cap / 8 <= n) {
		unsigned char *p = rb->spare;
		rb->spare = NULL;
		*cap = rb->spare_cap;
		return p;
	}
	/* room for 1/32 more, so this buffer, once spare, fits the next
	 * block even when that one is a little larger (blocks close after
	 * the entry that reaches BLOCKSIZE: a 4 KiB block of 100-byte
	 * values is 4096-4230 bytes) */
	*cap = n + n / 32;
	return malloc(*cap ? *cap : 1);
}

/* Frees a block's data (cap usable bytes), or keeps it as the thread's
 * spare. */
static void data_free(unsigned char *p, size_t cap)
{
	struct read_buf *rb;

	if (!p)
		return;
	rb = read_buf_of(0);
	if (rb && cap <= READ_BUF_MAX) {
		/* the newest freed is the likeliest to fit the next read */
		free(rb->spare);
		rb->spare = p;
		rb->spare_cap = cap;
		return;
	}
	free(p);
}

/*
 * Decompresses the zstd frame [p, p+size) into *out (*n bytes, *cap
 * usable).  The frame must say its content size (our writer's always
 * do) and decode to exactly that many bytes.  CF_ECORRUPT, CF_ENOMEM.
 */
static int zstd_unpack(const unsigned char *p, size_t size,
		       unsigned char **out, size_t *n, size_t *cap)
{
	struct read_buf *rb = read_buf_of(1);
	ZSTD_DCtx *d = rb ? rb->dctx : NULL, *own = NULL;
	unsigned long long ulen = ZSTD_getFrameContentSize(p, size);
	unsigned char *u;
	size_t r;

	*out = NULL;
	if (ulen == ZSTD_CONTENTSIZE_UNKNOWN ||
	    ulen == ZSTD_CONTENTSIZE_ERROR || ulen > BLOCK_MAX ||
	    ZSTD_findFrameCompressedSize(p, size) != size)
		return CF_ECORRUPT;
	if (!d) {
		if (!(d = ZSTD_createDCtx()))
			return CF_ENOMEM;
		if (rb)
			rb->dctx = d;
		else
			own = d;
	}
	u = data_alloc((size_t)ulen, cap);
	if (!u) {
		ZSTD_freeDCtx(own);
		return CF_ENOMEM;
	}
	r = ZSTD_decompressDCtx(d, u, (size_t)ulen, p, size);
	ZSTD_freeDCtx(own);
	if (ZSTD_isError(r) || r != ulen) {
		free(u);
		return CF_ECORRUPT;
	}
	*out = u;
	*n = (size_t)ulen;
	return CF_OK;
}

/*
 * Checks and decodes the stored block at p (size bytes, then the
 * trailer) into *out (malloc'd).  own: p itself when malloc'd, handed to
 * the caller as the result of a raw block, freed otherwise; NULL when p
 * is a buffer the caller keeps (a raw block is copied then).
 */
static int unpack_stored(const unsigned char *p, uint64_t size,
			 unsigned char *own, unsigned char **out, size_t *n,
			 size_t *cap)
{
	unsigned char *u = NULL;
	size_t ulen;
	int rc = CF_ECORRUPT;

	switch (p[size] & ((1u << BLOCK_ENC_SHIFT) - 1)) {
	case BLOCK_RAW:
		if (!own) {
			if (!(own = data_alloc((size_t)size, cap))) {
				rc = CF_ENOMEM;
				goto out;
			}
			if (size)
				memcpy(own, p, (size_t)size);
		} else {
			*cap = (size_t)size + BLOCK_TRAILER;
		}
		*out = own;
		*n = (size_t)size;
		return CF_OK;
	case BLOCK_SNAPPY:
		if (snappy_uncompressed_length((const char *)p, (size_t)size,
					       &ulen) != SNAPPY_OK ||
		    ulen > BLOCK_MAX)
			goto out;
		u = data_alloc(ulen, cap);
		if (!u) {
			rc = CF_ENOMEM;
			goto out;
		}
		if (snappy_uncompress((const char *)p, (size_t)size,
				      (char *)u, &ulen) != SNAPPY_OK)
			goto out;
		free(own);
		*out = u;
		*n = ulen;
		return CF_OK;
	case BLOCK_ZSTD:
		rc = zstd_unpack(p, (size_t)size, &u, n, cap);
		free(own);
		if (rc)
			return rc;
		*out = u;
		return CF_OK;
	default:
		break;
	}
out:
	free(u);
	free(own);
	return rc;
}

/*
 * Checks and decodes the stored block at p (size bytes, then the
 * trailer) into *out (malloc'd): the checksum, then the compression
 * (unpack_stored, which takes own as it says), then the encoding.
 */
static int decode_stored(const unsigned char *p, uint64_t size,
			 unsigned char *own, unsigned char **out, size_t *n,
			 size_t *cap)
{
	unsigned enc = p[size] >> BLOCK_ENC_SHIFT;
	unsigned char *e, *d;
	size_t elen, ecap, rawlen;
	int rc;

	*out = NULL;
	if (dec_u32le(p + size + 1) != trailer_crc(p, (size_t)size, p[size]) ||
	    (enc && (enc >= NENCODINGS || !encodings[enc].decode))) {
		free(own);
		return CF_ECORRUPT;
	}
	if (!enc)
		return unpack_stored(p, size, own, out, n, cap);
	rc = unpack_stored(p, size, own, &e, &elen, &ecap);
	if (rc)
		return rc;
	rc = encodings[enc].size(e, elen, &rawlen);
	if (rc || rawlen > BLOCK_MAX) {
		free(e);
		return CF_ECORRUPT;
	}
	if (!(d = data_alloc(rawlen, cap))) {
		free(e);
		return CF_ENOMEM;
	}
	rc = encodings[enc].decode(e, elen, d, rawlen);
	free(e);
	if (rc) {
		free(d);
		return rc;
	}
	*out = d;
	*n = rawlen;
	return CF_OK;
}

/* block_read_raw, also saying how many bytes are usable at *out. */
static int read_stored(struct env_file *f, uint64_t off, uint64_t size,
		       unsigned char **out, size_t *n, size_t *cap)
{
	unsigned char *p, *own = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	if (size > BLOCK_MAX)
		return CF_ECORRUPT;
	p = read_buf_get((size_t)size + BLOCK_TRAILER);
	if (!p && !(p = own = malloc((size_t)size + BLOCK_TRAILER)))
		return CF_ENOMEM;
	rc = env_pread(f, p, (size_t)size + BLOCK_TRAILER, off);
	if (rc) {
		free(own);
		return rc;
	}
	return decode_stored(p, size, own, out, n, cap);
}

int block_read_raw(struct env_file *f, uint64_t off, uint64_t size,
		   unsigned char **out, size_t *n)
{
	size_t cap;

	return read_stored(f, off, size, out, n, &cap);
}

/* block_from_raw of data with cap usable bytes. */
static int from_raw_cap(unsigned char *data, size_t n, size_t cap,
			struct block **out)
{
	int rc = block_from_raw(data, n, out);

	if (rc == CF_OK)
		(*out)->cap = cap;
	return rc;
}

int block_decode(const unsigned char *p, uint64_t size, struct block **out)
{
	unsigned char *d;
	size_t n, cap;
	int rc;

	*out = NULL;
	if (size > BLOCK_MAX)
		return CF_ECORRUPT;
	rc = decode_stored(p, size, NULL, &d, &n, &cap);
	if (rc)
		return rc;
	return from_raw_cap(d, n, cap, out);
}

int block_read(struct env_file *f, uint64_t off, uint64_t size,
	       struct block **out)
{
	unsigned char *p;
	size_t n, cap;
	int rc;

	*out = NULL;
	rc = read_stored(f, off, size, &p, &n, &cap);
	if (rc)
		return rc;
	return from_raw_cap(p, n, cap, out);
}

void block_ref(struct block *b)
{
	atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}

void block_free(struct block *b)
{
	/* acq_rel: every reader's use happens before the free */
	if (b && atomic_fetch_sub_explicit(&b->refs, 1,
					   memory_order_acq_rel) == 1) {
		data_free(b->data, b->cap);
		free(b);
	}
}

void block_free_void(void *b)
{
	block_free(b);
}

size_t block_charge(const struct block *b)
{
	/* the memory held, headroom of a reused buffer included */
	return sizeof *b + b->cap;
}

/* --- searching -------------------------------------------------------- */

/*
 * Decodes the entry header at p (before limit): shared, unshared and
 * value lengths.  Returns the header size, or 0 when the entry does not
 * fit.  Most headers are three one-byte varints, so that case goes first.
 */
static size_t entry_header(const unsigned char *p, const unsigned char *limit,
			   uint64_t *shared, uint64_t *unshared,
			   uint64_t *vlen)
{
	size_t h, n;

	if (limit - p >= 3 && (p[0] | p[1] | p[2]) < 0x80) {
		*shared = p[0];
		*unshared = p[1];
		*vlen = p[2];
		h = 3;
	} else {
		h = dec_varint(p, limit, shared);
		if (!h)
			return 0;
		n = dec_varint(p + h, limit, unshared);
		if (!n)
			return 0;
		h += n;
		n = dec_varint(p + h, limit, vlen);
		if (!n)
			return 0;
		h += n;
	}
	if (*unshared > (uint64_t)(limit - p) - h ||
	    *vlen > (uint64_t)(limit - p) - h - *unshared)
		return 0;
	return h;
}

static void corrupt(struct block_iter *it)
{
	it->valid = 0;
	it->status = CF_ECORRUPT;
}

void block_iter_init(struct block_iter *it)
{
	memset(it, 0, sizeof *it);
}

void block_iter_release(struct block_iter *it)
{
	buf_release(&it->key);
	block_iter_drop_run(it);
	it->valid = 0;
	it->b = NULL;
}

/*
 * seek_lt's last walk: the entries it decoded, from a restart point to
 * the first entry >= its target (or the block's end), whole keys and
 * all.  They are contiguous, so a later target T with the first of them
 * < T <= the last of them (or the walk reached the block's end) has its
 * answer among them: a binary search, no entry decoded.  A reversed
 * scan asks for the entry below each row in turn, a few entries lower
 * each time.
 */
#define RUN_MAX 40			/* entries kept of a walk */
#define RUN_KEYS 2048			/* bytes of their keys */

struct seek_run {
	const struct block *b;		/* NULL: nothing kept */
	uint32_t n;
	int to_end;			/* the walk reached the block's end */
	size_t cur[RUN_MAX], next[RUN_MAX], vlen[RUN_MAX];
	const unsigned char *val[RUN_MAX];
	uint32_t koff[RUN_MAX + 1];
	unsigned char keys[RUN_KEYS];
};

void block_iter_drop_run(struct block_iter *it)
{
	free(it->run);
	it->run = NULL;
}

void block_iter_set(struct block_iter *it, const struct block *b)
{
	if (it->run && it->b != b)
		it->run->b = NULL;
	it->b = b;
	it->cur = it->next = 0;
	it->valid = 0;
	it->status = CF_OK;
	it->key.len = 0;
}

/* Decodes the entry at it->next and makes it current. */
static void parse_next(struct block_iter *it)
{
	const struct block *b = it->b;
	const unsigned char *p = b->data + it->next;
	const unsigned char *limit = b->data + b->restarts;
	uint64_t shared, unshared, vlen;
	size_t h;

	if (it->next >= b->restarts) {
		it->valid = 0;
		return;
	}
	h = entry_header(p, limit, &shared, &unshared, &vlen);
	if (!h || shared > it->key.len) {
		corrupt(it);
		return;
	}
	if (shared + unshared > it->key.cap &&
	    buf_reserve(&it->key, (size_t)(shared + unshared) -
				  it->key.len)) {
		it->valid = 0;
		it->status = CF_ENOMEM;
		return;
	}
	if (unshared)
		memcpy(it->key.p + shared, p + h, (size_t)unshared);
	it->key.len = (size_t)(shared + unshared);
	if (!ikey_valid(it->key.p, it->key.len)) {
		/* keys are compared in place: a malformed one would be
		 * read past its end */
		corrupt(it);
		return;
	}
	it->cur = it->next;
	it->val = p + h + unshared;
	it->vlen = (size_t)vlen;
	it->next = (size_t)(it->val + vlen - b->data);
	it->valid = 1;
}

static uint32_t restart_at(const struct block *b, uint32_t i)
{
	return dec_u32le(b->data + b->restarts + 4 * (size_t)i);
}

static void seek_restart(struct block_iter *it, uint32_t i)
{
	it->key.len = 0;
	it->next = restart_at(it->b, i);
	it->status = CF_OK;
	parse_next(it);
}

void block_iter_seek_first(struct block_iter *it)
{
	seek_restart(it, 0);
}

void block_iter_next(struct block_iter *it)
{
	if (it->valid)
		parse_next(it);
}

/*
 * Asks for the cache lines of the entries from restart i to the next
 * (at most RUN_PREFETCH bytes).  A seek then scans them one after the
 * other, and each entry (a value apart from the last) starts on a line
 * of its own: in a block that came from the block cache rather than
 * from a fresh decompression those lines are usually in memory, not in
 * the CPU caches, and fetching them one at a time as the scan reaches
 * them costs a miss per entry.
 */
#define RUN_PREFETCH 2048

static void prefetch_run(const struct block *b, uint32_t i)
{
	size_t from = restart_at(b, i);
	size_t to = i + 1 < b->nrestarts ? restart_at(b, i + 1) : b->restarts;

	if (to - from > RUN_PREFETCH)
		to = from + RUN_PREFETCH;
	for (size_t q = from; q < to; q += 64)
		__builtin_prefetch(b->data + q);
}

void block_iter_seek(struct block_iter *it, const unsigned char *target,
		     size_t n)
{
	const struct block *b = it->b;
	const unsigned char *limit = b->data + b->restarts;
	uint32_t lo = 0, hi = b->nrestarts - 1;

	/* the last restart whose key is < target: keys at restarts are
	 * whole (shared == 0), so they compare in place */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		const unsigned char *p = b->data + restart_at(b, mid);
		uint64_t shared, unshared, vlen;
		size_t h = entry_header(p, limit, &shared, &unshared, &vlen);

		if (!h || shared != 0 || !ikey_valid(p + h, (size_t)unshared)) {
			corrupt(it);
			return;
		}
		if (ikey_cmp(p + h, (size_t)unshared, target, n) < 0)
			lo = mid;
		else
			hi = mid - 1;
	}
	prefetch_run(b, lo);
	seek_restart(it, lo);
	while (it->valid && ikey_cmp(it->key.p, it->key.len, target, n) < 0)
		parse_next(it);
}

/* --- stepping back (a reversed scan) ---------------------------------- */

/*
 * A block links its entries forward only (each key is stored as the
 * bytes after the part it shares with the one before), so the entry
 * before a target is found forward from the restart before it: the walk
 * keeps a copy of the last key below the target (a key too long for
 * that takes a second walk).  At most BLOCK_RESTART_INTERVAL entries
 * decoded per step, twice that for long keys.
 */

/* Sets *r to the last restart whose key is < target (target NULL: the
 * last restart).  0 when restart 0's key is not < target either (no
 * entry of the block is), -1 when corrupt, 1 otherwise. */
static int restart_below(struct block_iter *it, const unsigned char *target,
			 size_t n, uint32_t *r)
{
	const struct block *b = it->b;
	const unsigned char *limit = b->data + b->restarts;
	uint32_t lo = 0, hi = b->nrestarts;	/* restarts < hi qualify */

	if (!target) {
		*r = b->nrestarts - 1;
		return 1;
	}
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const unsigned char *p = b->data + restart_at(b, mid);
		uint64_t shared, unshared, vlen;
		size_t h = entry_header(p, limit, &shared, &unshared, &vlen);

		if (!h || shared != 0 || !ikey_valid(p + h, (size_t)unshared)) {
			corrupt(it);
			return -1;
		}
		if (ikey_cmp(p + h, (size_t)unshared, target, n) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	*r = lo - 1;
	return 1;
}

/* Answers seek_lt(target) from the last walk (struct seek_run): 1 and
 * the entry made current, or 0 when the answer may lie outside it. */
static int run_seek_lt(struct block_iter *it, const unsigned char *target,
		       size_t n)
{
	struct seek_run *w = it->run;
	uint32_t lo, hi, j;

	if (!w || w->b != it->b || !w->n || !target ||
	    ikey_cmp(w->keys, w->koff[1], target, n) >= 0 ||
	    (!w->to_end && ikey_cmp(w->keys + w->koff[w->n - 1],
				    w->koff[w->n] - w->koff[w->n - 1],
				    target, n) < 0))
		return 0;
	/* the last entry < target: entry 0 is, and when the walk did not
	 * reach the end its last entry is not */
	lo = 0;
	hi = w->n - 1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		if (ikey_cmp(w->keys + w->koff[mid], w->koff[mid + 1] -
			     w->koff[mid], target, n) < 0)
			lo = mid;
		else
			hi = mid - 1;
	}
	j = lo;
	if (buf_reserve(&it->key, w->koff[j + 1] - w->koff[j]))
		return 0;
	memcpy(it->key.p, w->keys + w->koff[j], w->koff[j + 1] - w->koff[j]);
	it->key.len = w->koff[j + 1] - w->koff[j];
	it->cur = w->cur[j];
	it->next = w->next[j];
	it->val = w->val[j];
	it->vlen = w->vlen[j];
	it->valid = 1;
	it->status = CF_OK;
	return 1;
}

/* Adds the current entry to the walk being kept (it stops keeping when
 * it is full: w->b NULL). */
static void run_add(struct block_iter *it)
{
	struct seek_run *w = it->run;

	if (!w || !w->b)
		return;
	if (w->n == RUN_MAX || it->key.len > RUN_KEYS - w->koff[w->n]) {
		w->b = NULL;
		return;
	}
	memcpy(w->keys + w->koff[w->n], it->key.p, it->key.len);
	w->cur[w->n] = it->cur;
	w->next[w->n] = it->next;
	w->val[w->n] = it->val;
	w->vlen[w->n] = it->vlen;
	w->koff[w->n + 1] = w->koff[w->n] + (uint32_t)it->key.len;
	w->n++;
}

void block_iter_seek_lt(struct block_iter *it, const unsigned char *target,
			size_t n)
{
	unsigned char prev[256];	/* the last entry < target, when its
					 * key fits: no second walk */
	size_t want, plen = 0, pnext = 0, pvlen = 0;
	const unsigned char *pval = NULL;
	uint32_t r;
	int found, saved;

	if (run_seek_lt(it, target, n))
		return;
	found = restart_below(it, target, n, &r);
	if (found <= 0) {
		it->valid = 0;
		return;
	}
	if (target && !it->run)
		it->run = calloc(1, sizeof *it->run);	/* none: no keeping */
	if (it->run) {
		it->run->b = target ? it->b : NULL;
		it->run->n = 0;
		it->run->to_end = 0;
		it->run->koff[0] = 0;
	}
	seek_restart(it, r);
	if (!it->valid)
		return;
	for (;;) {
		/* the current entry is < target */
		run_add(it);
		want = it->cur;
		saved = it->key.len <= sizeof prev;
		if (saved) {
			memcpy(prev, it->key.p, it->key.len);
			plen = it->key.len;
			pnext = it->next;
			pval = it->val;
			pvlen = it->vlen;
		}
		parse_next(it);
		if (!it->valid || (target && ikey_cmp(it->key.p, it->key.len,
						      target, n) >= 0))
			break;
	}
	if (it->status) {
		if (it->run)
			it->run->b = NULL;
		return;
	}
	if (it->valid)
		run_add(it);	/* the first entry >= target */
	else if (it->run)
		it->run->to_end = 1;
	if (saved) {
		/* the key buffer held this key before: it is large enough */
		memcpy(it->key.p, prev, plen);
		it->key.len = plen;
		it->cur = want;
		it->next = pnext;
		it->val = pval;
		it->vlen = pvlen;
		it->valid = 1;
		return;
	}
	seek_restart(it, r);
	while (it->valid && it->cur != want)
		parse_next(it);
}
