/*
 * sst.c: writing, opening and iterating store files (format:
 * docs/sst_format.md, the parts shared with sstverify.c in
 * engine/sstfmt.h; contract: engine/sst.h).
 *
 * File order: data blocks, filter block (if any), meta block, index
 * block, footer.  The builder streams sealed blocks through a small write
 * buffer, so memory stays bounded by one block, the index and the bloom
 * hashes, never the whole file.
 *
 * An open sst keeps in memory the footer, the decoded index (one entry
 * per data block), the meta block and the filter; data blocks come from
 * the block cache or from pread.  All of that is immutable after
 * sst_open, so readers of any thread share it without locks; only the
 * reference count and the obsolete flag change, atomically.
 *
 * An iterator holds at most two blocks (each a cache handle, or a
 * private block when it bypasses the cache): the current one, and the
 * one before it, which a reversed scan steps back into; moving to a
 * third lets the older go, and destroying it lets both go.  A seek or
 * seek_first clears a previous error and starts afresh.  An iterator
 * that does not fill the cache (a long scan) reads the file 64 KiB at a
 * time into a buffer of its own and decodes the blocks it needs from
 * there: one pread for many blocks.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/block.h"
#include "engine/bloom.h"
#include "engine/cache.h"
#include "engine/cellfs.h"
#include "engine/key.h"
#include "engine/sst.h"
#include "engine/sstfmt.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/env.h"
#include "util/err.h"
#include "util/log.h"

#define DEFAULT_BLOCK_SIZE 65536
#define DEFAULT_BLOOM_BITS 10
#define MAX_BLOOM_BITS 64
/* Values past this would let one block overflow its u32 offsets. */
#define MAX_VALUE ((size_t)1 << 30)
/* Sealed blocks are written once this much is pending. */
#define WRITE_CHUNK ((size_t)256 << 10)

static atomic_uint_fast64_t blocks_read;
static atomic_uint_fast64_t bloom_negatives;

/* --- meta block ------------------------------------------------------- */

void sst_meta_release(struct sst_meta *m)
{
	buf_release(&m->first_key);
	buf_release(&m->last_key);
}

static int encode_meta(struct buf *out, const struct sst_meta *m,
		       uint64_t blocks)
{
	int rc = 0;

	rc = rc ? rc : buf_put_varint(out, m->first_key.len);
	rc = rc ? rc : buf_append(out, m->first_key.p, m->first_key.len);
	rc = rc ? rc : buf_put_varint(out, m->last_key.len);
	rc = rc ? rc : buf_append(out, m->last_key.p, m->last_key.len);
	rc = rc ? rc : buf_put_u64le(out, (uint64_t)m->min_ts);
	rc = rc ? rc : buf_put_u64le(out, (uint64_t)m->max_ts);
	rc = rc ? rc : buf_put_u64le(out, m->min_seq);
	rc = rc ? rc : buf_put_u64le(out, m->max_seq);
	rc = rc ? rc : buf_put_u64le(out, m->cells);
	rc = rc ? rc : buf_put_u64le(out, m->deletes);
	rc = rc ? rc : buf_put_u64le(out, blocks);
	rc = rc ? rc : buf_putc(out, m->bloom);
	return rc;
}

/* Reads a varint-prefixed byte string into b.  CF_ECORRUPT, CF_ENOMEM. */
static int get_bytes(const unsigned char **p, const unsigned char *end,
		     struct buf *b)
{
	uint64_t len;
	size_t h = dec_varint(*p, end, &len);

	if (!h || len > (uint64_t)(end - *p) - h)
		return CF_ECORRUPT;
	*p += h;
	b->len = 0;
	if (buf_append(b, *p, (size_t)len))
		return CF_ENOMEM;
	*p += len;
	return CF_OK;
}

int sst_decode_meta(const unsigned char *p, size_t n, struct sst_meta *m,
		       uint64_t *blocks)
{
	const unsigned char *end = p + n;
	int rc;

	rc = get_bytes(&p, end, &m->first_key);
	if (rc)
		return rc;
	rc = get_bytes(&p, end, &m->last_key);
	if (rc)
		return rc;
	if (end - p != 7 * 8 + 1)
		return CF_ECORRUPT;
	m->min_ts = (int64_t)dec_u64le(p);
	m->max_ts = (int64_t)dec_u64le(p + 8);
	m->min_seq = dec_u64le(p + 16);
	m->max_seq = dec_u64le(p + 24);
	m->cells = dec_u64le(p + 32);
	m->deletes = dec_u64le(p + 40);
	*blocks = dec_u64le(p + 48);
	m->bloom = p[56];
	if (m->bloom != CF_BLOOM_NONE && m->bloom != CF_BLOOM_ROW &&
	    m->bloom != CF_BLOOM_ROWCOL)
		return CF_ECORRUPT;
	return CF_OK;
}

/* --- footer ----------------------------------------------------------- */

static void put_handle(unsigned char *p, const struct handle *h)
{
	enc_u64le(p, h->off);
	enc_u64le(p + 8, h->size);
}

static void encode_footer(unsigned char *p, const struct footer *f)
{
	put_handle(p, &f->index);
	put_handle(p + 16, &f->meta);
	put_handle(p + 32, &f->filter);
	enc_u32le(p + 48, SST_VERSION);
	memcpy(p + 52, SST_MAGIC, 8);
	enc_u32le(p + 60, crc32c_mask(crc32c(p, 60)));
}

/* A handle must name a block (and trailer) inside [0, limit). */
static int handle_ok(const struct handle *h, uint64_t limit)
{
	return h->off <= limit && h->size <= limit - h->off &&
	       BLOCK_TRAILER <= limit - h->off - h->size;
}

static int decode_footer(const unsigned char *p, uint64_t file_size,
			 struct footer *f)
{
	uint64_t limit = file_size - FOOTER_SIZE;

	f->version = dec_u32le(p + 48);
	if (memcmp(p + 52, SST_MAGIC, 8) != 0 ||
	    dec_u32le(p + 60) != crc32c_mask(crc32c(p, 60)) ||
	    (f->version != 1 && f->version != 2))
		return CF_ECORRUPT;
	f->index.off = dec_u64le(p);
	f->index.size = dec_u64le(p + 8);
	f->meta.off = dec_u64le(p + 16);
	f->meta.size = dec_u64le(p + 24);
	f->filter.off = dec_u64le(p + 32);
	f->filter.size = dec_u64le(p + 40);
	if (!handle_ok(&f->index, limit) || !handle_ok(&f->meta, limit) ||
	    (f->filter.size && !handle_ok(&f->filter, limit)))
		return CF_ECORRUPT;
	return CF_OK;
}

int sst_read_footer(struct env_file *f, struct footer *ft,
		       uint64_t *file_size)
{
	unsigned char p[FOOTER_SIZE];
	int64_t size = env_size(f);
	int rc;

	if (size < 0)
		return (int)size;
	*file_size = (uint64_t)size;
	if (size < FOOTER_SIZE)
		return CF_ECORRUPT;
	rc = env_pread(f, p, FOOTER_SIZE, (uint64_t)size - FOOTER_SIZE);
	if (rc)
		return rc;
	return decode_footer(p, (uint64_t)size, ft);
}

/* --- index ------------------------------------------------------------ */

/*
 * A seek searches the index by binary search.  The keys live in an arena
 * apart from the entries, so each probe would touch two cold cache lines;
 * a tag per entry decides most probes alone.  The tags sit in an array
 * of their own, 8 bytes each, so the probes of a search share cache
 * lines and a large file's tags stay in the CPU caches.  Every key's row
 * but the last starts with the rows' common prefix (plen bytes, that of
 * the first and the last but one); the tag is the next 8 bytes of the
 * row as a big-endian number, zero-padded.  When two rows share the
 * prefix, a smaller tag means a smaller row (zero padding makes a
 * shorter row's tag at most that of a row it is a prefix of), so an
 * ikey_cmp is needed only on equal tags.  The last key of a version 2
 * index is a short successor of the file's last row ("1" after rows
 * "0..."), which would leave no common prefix and every tag equal; so
 * when it lacks the prefix it is above every row that has it and its
 * tag is the largest.  (struct index: engine/sstfmt.h.)
 */
void sst_index_release(struct index *x)
{
	free(x->e);
	free(x->tags);
	x->e = NULL;
	x->tags = NULL;
	x->n = 0;
	buf_release(&x->keys);
}

/* The tag of a row that starts with the index's common prefix. */
static uint64_t row_tag(const unsigned char *row, size_t rowlen,
			size_t plen)
{
	unsigned char b[8] = { 0 };
	size_t n = rowlen - plen < 8 ? rowlen - plen : 8;

	if (n)
		memcpy(b, row + plen, n);
	return dec_u64be(b);
}

/* Sets the common prefix and every entry's tag.  CF_ENOMEM. */
static int index_tags(struct index *x)
{
	const unsigned char *a, *b;
	size_t al, bl, p = 0;

	x->plen = x->poff = 0;
	if (!x->n)
		return CF_OK;
	if (!(x->tags = malloc(x->n * sizeof *x->tags)))
		return CF_ENOMEM;
	a = ikey_row(ikey_at(x, 0), &al);
	b = ikey_row(ikey_at(x, x->n > 1 ? x->n - 2 : 0), &bl);
	while (p < al && p < bl && a[p] == b[p])
		p++;
	x->plen = p;
	x->poff = (size_t)(a - x->keys.p);
	for (size_t i = 0; i < x->n; i++) {
		const unsigned char *r = ikey_row(ikey_at(x, i), &bl);
		x->tags[i] = bl >= p && memcmp(r, a, p) == 0
			? row_tag(r, bl, p) : UINT64_MAX;
	}
	return CF_OK;
}

/* Decodes the index block: keys strictly ascending, handles in bounds. */
int sst_load_index(struct env_file *f, const struct handle *h,
		      uint64_t limit, struct index *x)
{
	struct block *b = NULL;
	struct block_iter it;
	size_t cap = 0;
	int rc;

	memset(x, 0, sizeof *x);
	block_iter_init(&it);
	rc = block_read(f, h->off, h->size, &b);
	if (rc)
		goto out;
	block_iter_set(&it, b);
	for (block_iter_seek_first(&it); it.valid; block_iter_next(&it)) {
		const unsigned char *v = it.val, *vend = it.val + it.vlen;
		struct ientry *e;
		size_t n;

		rc = CF_ECORRUPT;
		if (it.key.len < KEY_OVERHEAD ||
		    (x->n && ikey_cmp(ikey_at(x, x->n - 1), x->e[x->n - 1].klen,
				      it.key.p, it.key.len) >= 0))
			goto out;
		if (x->n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct ientry *ne = realloc(x->e, c * sizeof *ne);
			if (!ne) {
				rc = CF_ENOMEM;
				goto out;
			}
			x->e = ne;
			cap = c;
		}
		e = &x->e[x->n];
		n = dec_varint(v, vend, &e->h.off);
		if (!n)
			goto out;
		v += n;
		n = dec_varint(v, vend, &e->h.size);
		if (!n || v + n != vend || !handle_ok(&e->h, limit))
			goto out;
		e->koff = x->keys.len;
		e->klen = it.key.len;
		rc = buf_append(&x->keys, it.key.p, it.key.len);
		if (rc)
			goto out;
		x->n++;
	}
	rc = it.status;
	if (rc == CF_OK)
		rc = index_tags(x);
out:
	block_iter_release(&it);
	block_free(b);
	if (rc)
		sst_index_release(x);
	return rc;
}

/* The first index entry whose key is >= target (x->n if none): the only
 * block that can hold target, since each entry is at least its block's
 * last key and below the next block's first. */
static size_t index_find(const struct index *x, const unsigned char *target,
			 size_t n)
{
	size_t lo = 0, hi = x->n, rl;
	const unsigned char *row = ikey_row(target, &rl);
	int tagged = x->n && rl >= x->plen &&
		     (!x->plen ||
		      memcmp(row, x->keys.p + x->poff, x->plen) == 0);
	uint64_t tag = tagged ? row_tag(row, rl, x->plen) : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int below = tagged && x->tags[mid] != tag
			? x->tags[mid] < tag
			: ikey_cmp(ikey_at(x, mid), x->e[mid].klen, target,
				   n) < 0;
		if (below)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* --- building --------------------------------------------------------- */

struct sst_builder {
	char *path;
	struct env_file *f;
	struct sst_build_opts o;
	struct block_builder data;
	struct block_builder index;
	struct bloom_builder bloom;
	struct buf out;		/* sealed bytes not yet written */
	uint64_t written;	/* file offset of out.p[0] */
	struct buf last;	/* the last key added */
	struct buf pend;	/* the last key of the block whose index
				 * entry waits for the next block's first */
	struct handle pend_h;
	int pending;
	struct buf scratch;
	struct sst_meta m;
	uint64_t blocks;
	int created;		/* the file exists: remove it on failure */
	int rc;			/* first write error: the file is lost */
};

static int flush_out(struct sst_builder *b)
{
	int rc = env_write(b->f, b->out.p, b->out.len);

	if (rc)
		return rc;
	b->written += b->out.len;
	b->out.len = 0;
	return CF_OK;
}

/* Seals raw into the output; *h gets where it lands in the file. */
static int emit(struct sst_builder *b, const unsigned char *raw, size_t n,
		int compression, int encoding, struct handle *h)
{
	size_t stored;
	int rc;

	h->off = b->written + b->out.len;
	rc = block_seal(raw, n, compression, encoding, &b->out, &stored);
	if (rc)
		return rc;
	h->size = stored;
	if (b->out.len >= WRITE_CHUNK)
		return flush_out(b);
	return CF_OK;
}

/*
 * Adds the index entry of the pending block: a short key between its
 * last key and next, the first key of the next block (NULL: after the
 * last block), instead of the whole last key, which in a table of
 * compacted time series holds a qualifier of hundreds of bytes.
 */
static int index_pending(struct sst_builder *b, const unsigned char *next,
			 size_t nlen)
{
	unsigned char hv[20];
	size_t hn, sl;
	int rc;

	b->pending = 0;
	b->scratch.len = 0;
	rc = buf_reserve(&b->scratch, b->pend.len);
	if (rc)
		return rc;
	sl = ikey_separator(b->pend.p, b->pend.len, next, nlen, b->scratch.p);
	hn = enc_varint(hv, b->pend_h.off);
	hn += enc_varint(hv + hn, b->pend_h.size);
	return block_builder_add(&b->index, sl ? b->scratch.p : b->pend.p,
				 sl ? sl : b->pend.len, hv, hn);
}

static int flush_block(struct sst_builder *b)
{
	const unsigned char *raw;
	struct handle h;
	size_t n;
	int rc;

	rc = block_builder_finish(&b->data, &raw, &n);
	if (rc)
		return rc;
	rc = emit(b, raw, n, b->o.compression, b->o.encoding, &h);
	if (rc)
		return rc;
	b->pend.len = 0;
	rc = buf_append(&b->pend, b->last.p, b->last.len);
	if (rc)
		return rc;
	b->pend_h = h;
	b->pending = 1;
	block_builder_reset(&b->data);
	b->blocks++;
	return CF_OK;
}

int sst_builder_open(const char *path, const struct sst_build_opts *o,
		     struct sst_builder **out)
{
	struct sst_builder *b;
	int rc;

	*out = NULL;
	if ((o->compression != CF_COMPRESS_NONE &&
	     o->compression != CF_COMPRESS_SNAPPY &&
	     o->compression != CF_COMPRESS_ZSTD) ||
	    (o->bloom != CF_BLOOM_NONE && o->bloom != CF_BLOOM_ROW &&
	     o->bloom != CF_BLOOM_ROWCOL) ||
	    o->bloom_bits < 0 || o->bloom_bits > MAX_BLOOM_BITS ||
	    (o->encoding != BLOCK_ENC_NONE && o->encoding != BLOCK_ENC_TSDB))
		return CF_EINVAL;
	b = calloc(1, sizeof *b);
	if (!b)
		return CF_ENOMEM;
	b->o = *o;
	if (!b->o.block_size)
		b->o.block_size = DEFAULT_BLOCK_SIZE;
	if (!b->o.bloom_bits)
		b->o.bloom_bits = DEFAULT_BLOOM_BITS;
	b->m.bloom = o->bloom;
	block_builder_init(&b->data, BLOCK_RESTART_INTERVAL);
	/* every index key whole, so a reader may binary-search entries */
	block_builder_init(&b->index, 1);
	bloom_builder_init(&b->bloom, b->o.bloom_bits);
	b->path = strdup(path);
	if (!b->path) {
		rc = CF_ENOMEM;
		goto fail;
	}
	rc = env_open(path, ENV_WRITE_NEW, &b->f);
	if (rc)
		goto fail;
	b->created = 1;
	*out = b;
	return CF_OK;
fail:
	sst_builder_abort(b);
	return rc;
}

int sst_builder_add(struct sst_builder *b, const unsigned char *key,
		    size_t klen, const void *val, size_t vlen)
{
	struct ikey k;
	uint64_t h;
	int rc;

	if (b->rc)
		return b->rc;
	if (ikey_decode(key, klen, &k))
		return CF_EINVAL;
	if (vlen > MAX_VALUE)
		return CF_ETOOBIG;
	if (b->m.cells && ikey_cmp(b->last.p, b->last.len, key, klen) >= 0)
		return CF_EINVAL;

	if (b->o.bloom == CF_BLOOM_ROW &&
	    (!b->m.cells ||
	     ikey_cmp_row(b->last.p, b->last.len, key, klen) != 0)) {
		h = bloom_hash_row(k.row, k.rowlen);
		rc = bloom_builder_add(&b->bloom, h);
		if (rc)
			goto fail;
	} else if (b->o.bloom == CF_BLOOM_ROWCOL &&
		   (!b->m.cells ||
		    ikey_cmp_column(b->last.p, b->last.len, key, klen) != 0)) {
		h = bloom_hash_rowcol(k.row, k.rowlen, k.qual, k.qlen);
		rc = bloom_builder_add(&b->bloom, h);
		if (rc)
			goto fail;
	}

	if (b->pending) {
		rc = index_pending(b, key, klen);
		if (rc)
			goto fail;
	}
	rc = block_builder_add(&b->data, key, klen, val, vlen);
	if (rc)
		goto fail;
	b->last.len = 0;
	rc = buf_append(&b->last, key, klen);
	if (rc)
		goto fail;

	if (!b->m.cells) {
		rc = buf_append(&b->m.first_key, key, klen);
		if (rc)
			goto fail;
		b->m.min_ts = b->m.max_ts = k.ts;
		b->m.min_seq = b->m.max_seq = k.seq;
	} else {
		if (k.ts < b->m.min_ts)
			b->m.min_ts = k.ts;
		if (k.ts > b->m.max_ts)
			b->m.max_ts = k.ts;
		if (k.seq < b->m.min_seq)
			b->m.min_seq = k.seq;
		if (k.seq > b->m.max_seq)
			b->m.max_seq = k.seq;
	}
	b->m.cells++;
	if (k.type != KT_PUT)
		b->m.deletes++;

	if (block_builder_size(&b->data) >= b->o.block_size) {
		rc = flush_block(b);
		if (rc)
			goto fail;
	}
	return CF_OK;
fail:
	/* the block or the file is now incomplete: no way to continue */
	b->rc = rc;
	return rc;
}

int sst_builder_finish(struct sst_builder *b, struct sst_meta *meta)
{
	struct footer ft;
	const unsigned char *raw;
	unsigned char fbuf[FOOTER_SIZE];
	size_t n;
	int rc = b->rc;

	memset(&ft, 0, sizeof ft);
	if (rc)
		goto fail;
	if (!block_builder_empty(&b->data)) {
		rc = flush_block(b);
		if (rc)
			goto fail;
	}
	if (b->pending) {
		rc = index_pending(b, NULL, 0);
		if (rc)
			goto fail;
	}
	if (b->o.bloom != CF_BLOOM_NONE) {
		b->scratch.len = 0;
		rc = bloom_builder_finish(&b->bloom, &b->scratch);
		if (rc)
			goto fail;
		rc = emit(b, b->scratch.p, b->scratch.len, BLOCK_RAW,
			  BLOCK_ENC_NONE, &ft.filter);
		if (rc)
			goto fail;
	}
	rc = buf_append(&b->m.last_key, b->last.p, b->last.len);
	if (rc)
		goto fail;
	b->scratch.len = 0;
	rc = encode_meta(&b->scratch, &b->m, b->blocks);
	if (rc)
		goto fail;
	rc = emit(b, b->scratch.p, b->scratch.len, BLOCK_RAW, BLOCK_ENC_NONE,
		  &ft.meta);
	if (rc)
		goto fail;
	rc = block_builder_finish(&b->index, &raw, &n);
	if (rc)
		goto fail;
	/* with an encoding the index is sealed as the data blocks are */
	rc = emit(b, raw, n, b->o.encoding ? b->o.compression : BLOCK_RAW,
		  b->o.encoding, &ft.index);
	if (rc)
		goto fail;
	encode_footer(fbuf, &ft);
	rc = buf_append(&b->out, fbuf, FOOTER_SIZE);
	if (rc)
		goto fail;
	rc = flush_out(b);
	if (rc)
		goto fail;
	rc = env_sync(b->f);
	if (rc)
		goto fail;
	rc = env_close(b->f);
	b->f = NULL;
	if (rc)
		goto fail;
	b->m.file_size = b->written;
	if (meta) {
		*meta = b->m;
		memset(&b->m, 0, sizeof b->m);
	}
	b->created = 0;		/* complete: abort only frees memory now */
	sst_builder_abort(b);
	return CF_OK;
fail:
	sst_builder_abort(b);
	return rc;
}

void sst_builder_abort(struct sst_builder *b)
{
	if (!b)
		return;
	if (b->f)
		env_close(b->f);
	if (b->created)
		env_unlink(b->path);
	free(b->path);
	block_builder_release(&b->data);
	block_builder_release(&b->index);
	bloom_builder_release(&b->bloom);
	buf_release(&b->out);
	buf_release(&b->last);
	buf_release(&b->pend);
	buf_release(&b->scratch);
	sst_meta_release(&b->m);
	free(b);
}

uint64_t sst_builder_cells(const struct sst_builder *b)
{
	return b->m.cells;
}

uint64_t sst_builder_size(const struct sst_builder *b)
{
	return b->written + b->out.len + block_builder_size(&b->data);
}

/* Reads and parses the filter block at h into *data (malloc'd, the
 * caller's) and *f.  A blocked filter's lines are put on 64-byte
 * boundaries, so that a lookup reads one cache line. */
static int read_filter(struct env_file *file, const struct handle *h,
		       unsigned char **data, struct bloom *f)
{
	unsigned char *p, *a;
	size_t n;
	int rc;

	*data = NULL;
	rc = block_read_raw(file, h->off, h->size, &p, &n);
	if (rc)
		return rc;
	if ((rc = bloom_init(f, p, n))) {
		free(p);
		return rc;
	}
	if (f->blocked && ((uintptr_t)p & 63)) {
		if (!(a = aligned_alloc(64, (n + 63) & ~(size_t)63))) {
			free(p);
			return CF_ENOMEM;
		}
		memcpy(a, p, n);
		free(p);
		p = a;
		rc = bloom_init(f, p, n);	/* the same bytes: CF_OK */
	}
	*data = p;
	return rc;
}

/* --- reading ---------------------------------------------------------- */

struct sst {
	atomic_int refs;
	atomic_int obsolete;
	char *path;
	struct env_file *f;
	uint64_t id;
	struct cache *cache;
	int high;
	struct sst_meta meta;
	struct index index;
	unsigned char *filter_data;
	struct bloom filter;
	int has_filter;
	uint32_t version;	/* the footer's */
};

static void sst_free(struct sst *s)
{
	env_close(s->f);
	free(s->path);
	sst_meta_release(&s->meta);
	sst_index_release(&s->index);
	free(s->filter_data);
	free(s);
}

int sst_open(const char *path, uint64_t file_id, struct cache *c,
	     int high_priority, struct sst **out)
{
	struct sst *s;
	struct footer ft;
	uint64_t size, blocks, limit;
	unsigned char *p = NULL;
	size_t n;
	int rc;

	*out = NULL;
	s = calloc(1, sizeof *s);
	if (!s)
		return CF_ENOMEM;
	atomic_init(&s->refs, 1);
	atomic_init(&s->obsolete, 0);
	s->id = file_id;
	s->cache = c;
	s->high = high_priority;
	s->path = strdup(path);
	if (!s->path) {
		rc = CF_ENOMEM;
		goto fail;
	}
	rc = env_open(path, ENV_READ, &s->f);
	if (rc)
		goto fail;
	/* blocks are copied from a mapping, not pread (util/env.h) */
	rc = env_map(s->f);
	if (rc)
		goto fail;
	rc = sst_read_footer(s->f, &ft, &size);
	if (rc)
		goto fail;
	limit = size - FOOTER_SIZE;
	s->version = ft.version;
	rc = sst_load_index(s->f, &ft.index, limit, &s->index);
	if (rc)
		goto fail;
	rc = block_read_raw(s->f, ft.meta.off, ft.meta.size, &p, &n);
	if (rc)
		goto fail;
	rc = sst_decode_meta(p, n, &s->meta, &blocks);
	free(p);
	if (rc)
		goto fail;
	rc = CF_ECORRUPT;
	if (blocks != s->index.n)
		goto fail;
	s->meta.file_size = size;
	if (ft.filter.size) {
		rc = read_filter(s->f, &ft.filter, &s->filter_data,
				 &s->filter);
		if (rc)
			goto fail;
		s->has_filter = 1;
	}
	*out = s;
	return CF_OK;
fail:
	sst_free(s);
	return rc;
}

void sst_ref(struct sst *s)
{
	atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void sst_unref(struct sst *s)
{
	if (!s || atomic_fetch_sub_explicit(&s->refs, 1,
					    memory_order_acq_rel) != 1)
		return;
	/* no iterator is left, so no cache handle of this file is held */
	if (s->cache)
		cache_erase_file(s->cache, s->id);
	env_close(s->f);
	s->f = NULL;
	if (atomic_load(&s->obsolete))
		env_unlink(s->path);
	sst_free(s);
}

void sst_set_obsolete(struct sst *s)
{
	atomic_store(&s->obsolete, 1);
}

const struct sst_meta *sst_get_meta(const struct sst *s)
{
	return &s->meta;
}

uint64_t sst_file_id(const struct sst *s)
{
	return s->id;
}

int sst_may_have_row(const struct sst *s, const void *row, size_t rowlen)
{
	if (!s->has_filter || s->meta.bloom != CF_BLOOM_ROW)
		return 1;
	if (bloom_may_contain(&s->filter, bloom_hash_row(row, rowlen)))
		return 1;
	atomic_fetch_add_explicit(&bloom_negatives, 1, memory_order_relaxed);
	return 0;
}

int sst_may_have_rowcol(const struct sst *s, const void *row, size_t rowlen,
			const void *qual, size_t qlen)
{
	uint64_t h;

	if (!s->has_filter || s->meta.bloom != CF_BLOOM_ROWCOL)
		return 1;
	h = bloom_hash_rowcol(row, rowlen, qual, qlen);
	if (bloom_may_contain(&s->filter, h))
		return 1;
	atomic_fetch_add_explicit(&bloom_negatives, 1, memory_order_relaxed);
	return 0;
}

size_t sst_index_prefix(const struct sst *s)
{
	return s->index.plen;
}

uint64_t sst_blocks_read(void)
{
	return atomic_load_explicit(&blocks_read, memory_order_relaxed);
}

uint64_t sst_bloom_negatives(void)
{
	return atomic_load_explicit(&bloom_negatives, memory_order_relaxed);
}

/* --- iterating -------------------------------------------------------- */

struct sst_iter {
	struct iter base;
	struct sst *s;
	int fill;
	size_t bi;			/* index entry of blk */
	struct block *blk;		/* the block held, or NULL */
	struct cache_handle *h;		/* blk's cache handle, or NULL */
	/* the block held before blk (pbi, pblk, ph as bi, blk, h): a
	 * reversed scan steps back into it after reading a row forward
	 * past its end, and would decode it again */
	size_t pbi;
	struct block *pblk;
	struct cache_handle *ph;
	struct block_iter bit;
	int status;
	/* a long scan's read-ahead (fill == 0): bytes [ra_off, ra_off +
	 * ra_len) of the file, in ra (READ_AHEAD bytes, made on first use) */
	unsigned char *ra;
	uint64_t ra_off;
	size_t ra_len;
	int back;		/* the last positioning was a seek_lt: the
				 * blocks wanted next lie before, and a
				 * read-ahead ends at the block's end */
};

/* A long scan reads this much of the file at a time: data blocks lie in
 * key order, so the next blocks it needs are those after the last. */
#define READ_AHEAD ((size_t)64 << 10)

static void release_block(struct sst_iter *it, struct block *b,
			  struct cache_handle *h)
{
	if (h)
		cache_release(it->s->cache, h);
	else
		block_free(b);
}

/* Lets go of the current block: it becomes the one held before (and
 * that one is let go). */
static void drop_block(struct sst_iter *it)
{
	if (it->blk) {
		release_block(it, it->pblk, it->ph);
		it->pblk = it->blk;
		it->ph = it->h;
		it->pbi = it->bi;
	}
	it->h = NULL;
	it->blk = NULL;
	it->bit.valid = 0;
	it->bit.b = NULL;
}

/* Reads block hd through the read-ahead buffer. */
static int read_ahead(struct sst_iter *it, const struct handle *hd,
		      struct block **b)
{
	uint64_t end = hd->off + hd->size + BLOCK_TRAILER;
	size_t got;
	int rc;

	if (hd->size + BLOCK_TRAILER > READ_AHEAD)
		return block_read(it->s->f, hd->off, hd->size, b);
	if (!it->ra_len || hd->off < it->ra_off ||
	    end > it->ra_off + it->ra_len) {
		uint64_t from = hd->off;
		if (it->back)
			from = end > READ_AHEAD ? end - READ_AHEAD : 0;
		it->ra_len = 0;
		if (!it->ra && !(it->ra = malloc(READ_AHEAD)))
			return CF_ENOMEM;
		rc = env_pread_some(it->s->f, it->ra, READ_AHEAD, from, &got);
		if (rc)
			return rc;
		if (got < end - from)
			return CF_ECORRUPT;	/* the file ends early */
		it->ra_off = from;
		it->ra_len = got;
	}
	return block_decode(it->ra + (hd->off - it->ra_off), hd->size, b);
}

/* Makes data block i current (unpositioned).  On error the iterator is
 * invalid with the status set. */
static int load_block(struct sst_iter *it, size_t i)
{
	struct sst *s = it->s;
	const struct handle *hd = &s->index.e[i].h;
	struct block *b;
	int rc;

	if (it->blk && it->bi == i) {
		block_iter_set(&it->bit, it->blk);
		return CF_OK;
	}
	if (it->pblk && it->pbi == i) {
		/* the block before: the two change places */
		struct block *pb = it->pblk;
		struct cache_handle *ph = it->ph;
		it->pblk = it->blk;
		it->ph = it->h;
		it->pbi = it->bi;
		it->blk = pb;
		it->h = ph;
		it->bi = i;
		block_iter_set(&it->bit, pb);
		return CF_OK;
	}
	drop_block(it);
	if (s->cache) {
		it->h = cache_lookup(s->cache, s->id, hd->off);
		if (it->h) {
			b = cache_value(it->h);
			goto have;
		}
	}
	rc = it->fill ? block_read(s->f, hd->off, hd->size, &b)
		      : read_ahead(it, hd, &b);
	atomic_fetch_add_explicit(&blocks_read, 1, memory_order_relaxed);
	if (rc) {
		/* the read fails (EIO through the filesystem); the log says
		 * which file and where, as it does for a file bad at open */
		cf_log(CF_LOG_ERROR, "store file %s: block at %" PRIu64 ": %s",
		       s->path, hd->off, cf_strerror(rc));
		it->status = rc;
		return rc;
	}
	if (s->cache && it->fill) {
		it->h = cache_insert(s->cache, s->id, hd->off, b,
				     block_charge(b), s->high,
				     block_free_void);
		if (!it->h) {
			it->status = CF_ENOMEM;
			return CF_ENOMEM;
		}
	}
have:
	it->blk = b;
	it->bi = i;
	block_iter_set(&it->bit, b);
	return CF_OK;
}

/* Past the end of a block, moves on to the next one. */
static void skip_forward(struct sst_iter *it)
{
	while (it->blk && !it->bit.valid) {
		if (it->bit.status) {
			it->status = it->bit.status;
			break;
		}
		if (it->bi + 1 >= it->s->index.n)
			break;
		if (load_block(it, it->bi + 1))
			break;
		block_iter_seek_first(&it->bit);
	}
	if (it->blk && !it->bit.valid)
		drop_block(it);
}

static void it_seek_first(struct iter *base)
{
	struct sst_iter *it = (struct sst_iter *)base;

	it->status = CF_OK;
	it->back = 0;
	if (it->s->index.n == 0) {
		drop_block(it);
		return;
	}
	if (load_block(it, 0))
		return;
	block_iter_seek_first(&it->bit);
	skip_forward(it);
}

static void it_seek(struct iter *base, const unsigned char *key, size_t n)
{
	struct sst_iter *it = (struct sst_iter *)base;
	size_t i;

	it->status = CF_OK;
	it->back = 0;
	i = index_find(&it->s->index, key, n);
	if (i == it->s->index.n) {
		drop_block(it);
		return;
	}
	if (load_block(it, i))
		return;
	block_iter_seek(&it->bit, key, n);
	skip_forward(it);
}

/* The entry before key lies in the block that would hold key, or is the
 * last of an earlier block (an index key is its block's last key). */
static void it_seek_lt(struct iter *base, const unsigned char *key, size_t n)
{
	struct sst_iter *it = (struct sst_iter *)base;
	size_t i;

	it->status = CF_OK;
	it->back = 1;
	i = key ? index_find(&it->s->index, key, n) : it->s->index.n;
	if (i < it->s->index.n) {
		if (load_block(it, i))
			return;
		block_iter_seek_lt(&it->bit, key, n);
	} else {
		drop_block(it);
		it->bit.status = CF_OK;
	}
	while (!it->bit.valid && !it->bit.status && i > 0) {
		if (load_block(it, --i))
			return;
		block_iter_seek_lt(&it->bit, NULL, 0);
	}
	if (it->bit.status)
		it->status = it->bit.status;
	if (!it->bit.valid)
		drop_block(it);
}

static void it_next(struct iter *base)
{
	struct sst_iter *it = (struct sst_iter *)base;

	if (!it->blk || !it->bit.valid)
		return;
	block_iter_next(&it->bit);
	skip_forward(it);
}

static int it_valid(const struct iter *base)
{
	const struct sst_iter *it = (const struct sst_iter *)base;

	return it->blk && it->bit.valid && it->status == CF_OK;
}

static const unsigned char *it_key(const struct iter *base, size_t *n)
{
	const struct sst_iter *it = (const struct sst_iter *)base;

	*n = it->bit.key.len;
	return it->bit.key.p;
}

static const unsigned char *it_value(const struct iter *base, size_t *n)
{
	const struct sst_iter *it = (const struct sst_iter *)base;

	*n = it->bit.vlen;
	return it->bit.val;
}

static int it_status(const struct iter *base)
{
	return ((const struct sst_iter *)base)->status;
}

/*
 * Each thread keeps the last few store-file iterators it destroyed, with
 * their key buffers, for the next ones it makes: a scan of a few rows (a
 * seek in each of a store's files) then allocates none.
 */
#define ITER_SPARE_MAX ((size_t)4 << 10)	/* key buffer bytes kept */
#define ITER_SPARES 8

struct iter_spares {
	size_t n;
	struct sst_iter *it[ITER_SPARES];
};

static pthread_key_t iter_spare_key;
static pthread_once_t iter_spare_once = PTHREAD_ONCE_INIT;
static int iter_spare_ok;

static void iter_spare_free(void *p);

static void iter_spare_init(void)
{
	iter_spare_ok = pthread_key_create(&iter_spare_key,
					   iter_spare_free) == 0;
}

static void iter_free(struct sst_iter *it)
{
	block_iter_release(&it->bit);
	free(it->ra);
	free(it);
}

static void iter_spare_free(void *p)
{
	struct iter_spares *sp = p;

	while (sp->n)
		iter_free(sp->it[--sp->n]);
	free(sp);
}

/* The thread's spares, made on first use; NULL when that fails. */
static struct iter_spares *iter_spares(void)
{
	struct iter_spares *sp;

	pthread_once(&iter_spare_once, iter_spare_init);
	if (!iter_spare_ok)
		return NULL;
	if ((sp = pthread_getspecific(iter_spare_key)))
		return sp;
	if (!(sp = calloc(1, sizeof *sp)))
		return NULL;
	if (pthread_setspecific(iter_spare_key, sp) != 0) {
		free(sp);
		return NULL;
	}
	return sp;
}

static void it_destroy(struct iter *base)
{
	struct sst_iter *it = (struct sst_iter *)base;

	struct iter_spares *sp;

	drop_block(it);
	release_block(it, it->pblk, it->ph);
	it->pblk = NULL;
	it->ph = NULL;
	sst_unref(it->s);
	it->s = NULL;
	free(it->ra);		/* a spare keeps no read-ahead */
	it->ra = NULL;
	block_iter_drop_run(&it->bit);	/* nor a reversed walk */
	it->ra_len = 0;
	if (it->bit.key.cap <= ITER_SPARE_MAX && (sp = iter_spares()) &&
	    sp->n < ITER_SPARES) {
		sp->it[sp->n++] = it;
		return;
	}
	iter_free(it);
}

/* The value lies in the current block: a reference keeps it (the cache
 * may evict or drop the block meanwhile; the reference outlives both). */
static int it_pin(struct iter *base, struct iter_pin *p)
{
	struct sst_iter *it = (struct sst_iter *)base;

	if (!it->blk)
		return 0;
	block_ref(it->blk);
	p->release = block_free_void;
	p->arg = it->blk;
	return 1;
}

static const struct iter_ops sst_iter_ops = {
	.seek_first = it_seek_first,
	.seek = it_seek,
	.next = it_next,
	.valid = it_valid,
	.key = it_key,
	.value = it_value,
	.status = it_status,
	.destroy = it_destroy,
	.pin = it_pin,
	.seek_lt = it_seek_lt,
};

struct iter *sst_iter(struct sst *s, int fill_cache)
{
	struct sst_iter *it = NULL;
	struct iter_spares *sp = iter_spares();

	if (sp && sp->n) {
		struct buf key;
		it = sp->it[--sp->n];
		key = it->bit.key;
		memset(it, 0, sizeof *it);
		block_iter_init(&it->bit);
		it->bit.key = key;
		buf_reset(&it->bit.key);
	} else {
		if (!(it = calloc(1, sizeof *it)))
			return NULL;
		block_iter_init(&it->bit);
	}
	it->base.ops = &sst_iter_ops;
	it->s = s;
	it->fill = fill_cache;
	sst_ref(s);
	return &it->base;
}

int sst_mid_row(const struct sst *s, struct buf *out)
{
	const struct ientry *e;
	const unsigned char *row;
	struct block *b = NULL;
	struct block_iter it;
	size_t rl;
	int rc;

	/* the last key of the middle block: half the file's blocks lie
	 * before it, so half its bytes, give or take a block */
	if (s->index.n < 2)
		return CF_ENOTFOUND;
	e = &s->index.e[(s->index.n - 1) / 2];
	buf_reset(out);
	if (s->version == 1) {
		row = ikey_row(ikey_at(&s->index, (size_t)(e - s->index.e)),
			       &rl);
		return buf_append(out, row, rl);
	}
	/* an index key of version 2 is a separator, maybe no row of the
	 * file: the block's own last key */
	rc = block_read(s->f, e->h.off, e->h.size, &b);
	if (rc)
		return rc;
	block_iter_init(&it);
	block_iter_set(&it, b);
	block_iter_seek_lt(&it, NULL, 0);
	rc = it.valid ? CF_OK : it.status ? it.status : CF_ECORRUPT;
	if (!rc && !ikey_valid(it.key.p, it.key.len))
		rc = CF_ECORRUPT;
	if (!rc) {
		row = ikey_row(it.key.p, &rl);
		rc = buf_append(out, row, rl);
	}
	block_iter_release(&it);
	block_free(b);
	return rc;
}
