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

struct fs_filter;

/* Parses the filter string s[0..len) into *out (the caller's until
 * fs_filter_free), for a scan in descending row order when reversed
 * (InclusiveStopFilter's and PrefixFilter's ends). */
int fs_filter_parse(const char *s, size_t len, int reversed,
		    struct fs_filter **out, char *why, size_t whylen);
void fs_filter_free(struct fs_filter *f);

/* 1 if the filter shows keys only (KeyOnlyFilter: values as ''). */
int fs_filter_keys_only(const struct fs_filter *f);
/* The rows a PageFilter allows (the least of them; 0: no PageFilter). */
uint64_t fs_filter_page(const struct fs_filter *f);

/* Applies f to row: keep[i] (cf_row_count(row) bytes, the caller's) is
 * 1 for each cell shown.  *end is set when no later row can pass
 * (InclusiveStopFilter past its row, WhileMatchFilter's first miss);
 * this row's cells are then all 0.  ENOMEM. */
int fs_filter_row(struct fs_filter *f, const cf_row *row,
		  unsigned char *keep, int *end);

#endif
