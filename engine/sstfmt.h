/*
 * sstfmt.h: the parts of a store file's format that sst.c (writing,
 * opening, reading) and sstverify.c (checking a file whole) share:
 * block handles, the footer, the decoded index, the meta block
 * (docs/sst_format.md).  Private to engine/.
 */
#ifndef CF_SSTFMT_H
#define CF_SSTFMT_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define SST_VERSION 2		/* written; 1 is still read */
#define SST_MAGIC "CELLFSST"
#define FOOTER_SIZE 64
#define HANDLE_SIZE 16

struct env_file;
struct sst_meta;

struct handle {
	uint64_t off, size;	/* size excludes the block trailer */
};

struct footer {
	struct handle index, meta, filter;
	uint32_t version;	/* 1: index keys are the blocks' last keys;
				 * 2: separators (docs/sst_format.md) */
};


struct ientry {
	size_t koff;		/* into the key arena */
	size_t klen;
	struct handle h;
};

struct index {
	struct ientry *e;
	uint64_t *tags;		/* tags[i]: entry i's row tag, apart from e
				 * so a search reads a dense array */
	size_t n;
	struct buf keys;
	size_t plen;		/* the common row prefix: plen bytes from */
	size_t poff;		/* poff in the key arena */
};


static inline const unsigned char *ikey_at(const struct index *x, size_t i)
{
	return x->keys.p + x->e[i].koff;
}

/* The footer of f (its size into *file_size); CF_ECORRUPT. */
int sst_read_footer(struct env_file *f, struct footer *ft,
		    uint64_t *file_size);
/* Decodes the index block at h: keys strictly ascending, handles inside
 * [0, limit).  CF_ECORRUPT, CF_ENOMEM. */
int sst_load_index(struct env_file *f, const struct handle *h,
		   uint64_t limit, struct index *x);
void sst_index_release(struct index *x);
/* Decodes a meta block of n bytes into *m (its buffers m's own) and
 * the count of data blocks it gives.  CF_ECORRUPT, CF_ENOMEM. */
int sst_decode_meta(const unsigned char *p, size_t n, struct sst_meta *m,
		    uint64_t *blocks);

#endif
