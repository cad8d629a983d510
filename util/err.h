/*
 * err.h: the one error enum shared by util/, meta/ and engine/.
 *
 * Functions return 0 (CF_OK) or a negative CF_E* code.  errno is read only
 * in util/env.c, which maps it here; fs/ maps these codes back to errno in
 * one table.
 */
#ifndef CF_ERR_H
#define CF_ERR_H

#include <stddef.h>

enum {
	CF_OK = 0,
	CF_ENOTFOUND = -1,	/* no such table, family, region, row, cell */
	CF_EEXIST = -2,		/* already exists */
	CF_EINVAL = -3,		/* malformed argument, name, setting */
	CF_ENOMEM = -4,		/* allocation failed */
	CF_EIO = -5,		/* I/O error from the OS */
	CF_ENOSPC = -6,		/* disk full, or a memory bound reached */
	CF_ECORRUPT = -7,	/* checksum mismatch, bad format */
	CF_ETOOBIG = -8,	/* value over max_value, key over limits */
	CF_ENAMETOOLONG = -9,	/* a name past its length limit */
	CF_ENOTEMPTY = -10,	/* table still holds cells */
	CF_EBUSY = -11,		/* resource in use (e.g. locked data dir) */
	CF_ECLOSED = -12,	/* handle of a dropped table or closed db */
	CF_ERANGE = -13,	/* counter overflow, UID space exhausted */
	CF_EXDEV = -14,		/* operation would cross rows */
	CF_ECANCELED = -15,	/* a check-and-mutate's check failed */
	CF_ECOUNT = 16
};

/* A static, human-readable description of rc (never NULL). */
const char *cf_strerror(int rc);

/* Formats the reason for refusing an input into why (when why is not
 * NULL and whylen not 0) and returns CF_EINVAL: the parsers' one line,
 * `return cf_einval(why, whylen, "bad %s", word);`. */
__attribute__((format(printf, 3, 4)))
int cf_einval(char *why, size_t whylen, const char *fmt, ...);

#endif
