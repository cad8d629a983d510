/*
 * schema.c: column family settings, their text form (the .schema line
 * "NAME VERSIONS=1 MIN_VERSIONS=0 TTL=FOREVER ..."), and name rules of
 * SPEC section 2.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/cellfs.h"

void cf_family_default(struct cf_family *f, const char *name)
{
	memset(f, 0, sizeof *f);
	snprintf(f->name, sizeof f->name, "%s", name ? name : "");
	f->versions = 1;
	f->min_versions = 0;
	f->ttl = CF_TTL_FOREVER;
	f->keep_deleted = 0;
	f->compression = CF_COMPRESS_SNAPPY;
	f->bloom = CF_BLOOM_ROW;
	f->blocksize = 65536;
	f->in_memory = 0;
	f->encoding = CF_ENCODING_NONE;
}

static const char *const bloom_names[] = { "NONE", "ROW", "ROWCOL" };
static const char *const comp_names[] = { "NONE", "SNAPPY", "ZSTD" };
static const char *const enc_names[] = { "NONE", "TSDB" };
static const char *const kdc_names[] = { "FALSE", "TRUE", "TTL" };

int cf_family_format(const struct cf_family *f, struct buf *out)
{
	char ttl[32];

	if (f->ttl == CF_TTL_FOREVER)
		snprintf(ttl, sizeof ttl, "FOREVER");
	else
		snprintf(ttl, sizeof ttl, "%" PRId64, f->ttl);
	return buf_printf(out,
			  "%s VERSIONS=%d MIN_VERSIONS=%d TTL=%s "
			  "KEEP_DELETED_CELLS=%s COMPRESSION=%s "
			  "BLOOMFILTER=%s BLOCKSIZE=%u IN_MEMORY=%s ENCODING=%s",
			  f->name, f->versions, f->min_versions, ttl,
			  kdc_names[f->keep_deleted >= 0 && f->keep_deleted <= 2 ?
				    f->keep_deleted : 0],
			  comp_names[f->compression >= 0 && f->compression <= 2 ?
				     f->compression : 0],
			  bloom_names[f->bloom >= 0 && f->bloom <= 2 ?
				      f->bloom : 0],
			  f->blocksize, f->in_memory ? "TRUE" : "FALSE",
			  enc_names[f->encoding == CF_ENCODING_TSDB]);
}

int cf_table_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > CF_TABLE_MAX || name[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		if (!isalnum(c) && c != '_' && c != '.' && c != '-')
			return 0;
	}
	return 1;
}

int cf_family_name_valid(const char *name, size_t len)
{
	if (len == 0 || len > CF_FAMILY_MAX || name[0] == '.')
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (!isalnum(c) && c != '_' && c != '.' && c != '-')
			return 0;
	}
	return 1;
}

/* Parses a decimal in [lo, hi]; 0 on success. */
static int parse_num(const char *s, size_t n, int64_t lo, int64_t hi,
		     int64_t *out)
{
	char tmp[32];
	char *end;
	long long v;

	if (n == 0 || n >= sizeof tmp)
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = 0;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)tmp[i]))
			return -1;
	errno = 0;
	v = strtoll(tmp, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_bool(const char *s, size_t n, int *out)
{
	if (n == 4 && strncasecmp(s, "TRUE", 4) == 0)
		*out = 1;
	else if (n == 5 && strncasecmp(s, "FALSE", 5) == 0)
		*out = 0;
	else
		return -1;
	return 0;
}

static int word_is(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && strncasecmp(s, w, n) == 0;
}

int cf_family_parse(const char *line, size_t len, struct cf_family *f,
		    const char **why)
{
	const char *p = line, *end = line + len, *w;
	const char *dummy;
	size_t wl;
	int64_t v;

	if (!why)
		why = &dummy;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	w = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	wl = (size_t)(p - w);
	if (!cf_family_name_valid(w, wl)) {
		*why = "bad family name";
		return CF_EINVAL;
	}
	{
		char name[CF_FAMILY_MAX + 1];
		memcpy(name, w, wl);
		name[wl] = 0;
		cf_family_default(f, name);
	}
	for (;;) {
		const char *eq, *val;
		size_t kl, vl;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			break;
		w = p;
		while (p < end && *p != ' ' && *p != '\t')
			p++;
		eq = memchr(w, '=', (size_t)(p - w));
		if (!eq) {
			*why = "setting without '='";
			return CF_EINVAL;
		}
		kl = (size_t)(eq - w);
		val = eq + 1;
		vl = (size_t)(p - val);
		if (word_is(w, kl, "VERSIONS")) {
			if (parse_num(val, vl, 1, INT32_MAX, &v))
				goto bad_value;
			f->versions = (int)v;
		} else if (word_is(w, kl, "MIN_VERSIONS")) {
			if (parse_num(val, vl, 0, INT32_MAX, &v))
				goto bad_value;
			f->min_versions = (int)v;
		} else if (word_is(w, kl, "TTL")) {
			if (word_is(val, vl, "FOREVER"))
				f->ttl = CF_TTL_FOREVER;
			else if (parse_num(val, vl, 1, INT64_MAX / 1000 - 1,
					   &v))
				goto bad_value;
			else
				f->ttl = v;
		} else if (word_is(w, kl, "KEEP_DELETED_CELLS")) {
			if (word_is(val, vl, "TTL"))
				f->keep_deleted = CF_KDC_TTL;
			else if (parse_bool(val, vl, &f->keep_deleted))
				goto bad_value;
		} else if (word_is(w, kl, "COMPRESSION")) {
			if (word_is(val, vl, "SNAPPY"))
				f->compression = CF_COMPRESS_SNAPPY;
			else if (word_is(val, vl, "ZSTD"))
				f->compression = CF_COMPRESS_ZSTD;
			else if (word_is(val, vl, "NONE"))
				f->compression = CF_COMPRESS_NONE;
			else
				goto bad_value;
		} else if (word_is(w, kl, "BLOOMFILTER")) {
			if (word_is(val, vl, "ROW"))
				f->bloom = CF_BLOOM_ROW;
			else if (word_is(val, vl, "ROWCOL"))
				f->bloom = CF_BLOOM_ROWCOL;
			else if (word_is(val, vl, "NONE"))
				f->bloom = CF_BLOOM_NONE;
			else
				goto bad_value;
		} else if (word_is(w, kl, "BLOCKSIZE")) {
			if (parse_num(val, vl, 1024, 16 << 20, &v))
				goto bad_value;
			f->blocksize = (uint32_t)v;
		} else if (word_is(w, kl, "IN_MEMORY")) {
			if (parse_bool(val, vl, &f->in_memory))
				goto bad_value;
		} else if (word_is(w, kl, "ENCODING")) {
			if (word_is(val, vl, "TSDB"))
				f->encoding = CF_ENCODING_TSDB;
			else if (word_is(val, vl, "NONE"))
				f->encoding = CF_ENCODING_NONE;
			else
				goto bad_value;
		} else {
			*why = "unknown setting";
			return CF_EINVAL;
		}
	}
	if (f->min_versions > f->versions) {
		*why = "MIN_VERSIONS above VERSIONS";
		return CF_EINVAL;
	}
	return CF_OK;
bad_value:
	*why = "bad setting value";
	return CF_EINVAL;
}
