/*
 * filter.h: HBase's filter language (the shell's FILTER => "..." string,
 * org.apache.hadoop.hbase.filter.ParseFilter) for the scan file's
 * filter= parameter (fs/scan.c; docs/usage.md, "Filters").
 *
 * A filter is parsed once, then applied to each row the scan reads:
 * fs_filter_row says which of the row's cells are shown.  Functions
 * return 0 or an errno (EINVAL: a malformed filter, why filled for
 * MNT/.log; ENOMEM).
 */
#ifndef CF_FS_FILTER_H
#define CF_FS_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "engine/cellfs.h"
#include "util/buf.h"

struct fs_filter;

/* Appends the filter text written at p (len bytes) to out: %XX is the
 * byte XX (what a name or a .batch line cannot hold: '/', '&', '%', a
 * newline), every other byte stands for itself.  -1 on a '%' not
 * followed by two hex digits (or no memory). */
int fs_filter_decode(const char *p, size_t len, struct buf *out);

/* Parses the filter string s[0..len) into *out (the caller's until
 * fs_filter_free), for a scan in descending row order when reversed
 * (InclusiveStopFilter's and PrefixFilter's ends). */
int fs_filter_parse(const char *s, size_t len, int reversed,
		    struct fs_filter **out, char *why, size_t whylen);
void fs_filter_free(struct fs_filter *f);

/* How the filter's KeyOnlyFilters show values: FS_KEYS_NONE (none:
 * as they are), FS_KEYS_EMPTY (KeyOnlyFilter(): as ''), FS_KEYS_LEN
 * (KeyOnlyFilter(true): as 4 bytes, the big-endian length of the value,
 * or *len when it is not -1: what an earlier KeyOnlyFilter left). */
enum { FS_KEYS_NONE, FS_KEYS_EMPTY, FS_KEYS_LEN };
int fs_filter_keys_only(const struct fs_filter *f, int64_t *len);
/* The rows a PageFilter allows (the least of them; 0: no PageFilter). */
uint64_t fs_filter_page(const struct fs_filter *f);

/* Applies f to row: keep[i] (cf_row_count(row) bytes, the caller's) is
 * 1 for each cell shown.  *end is set when no later row can pass
 * (InclusiveStopFilter past its row, WhileMatchFilter's first miss);
 * this row's cells are then all 0.  ENOMEM. */
int fs_filter_row(struct fs_filter *f, const cf_row *row,
		  unsigned char *keep, int *end);

#endif
