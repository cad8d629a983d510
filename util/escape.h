/*
 * escape.h: the one escaping of keys in paths and text formats (SPEC
 * section 2).  Bytes A-Z a-z 0-9 - _ . , = + ~ stand for themselves,
 * except that a leading '.' is escaped; every other byte is %XX with two
 * upper-case hex digits.  Decoding accepts exactly the names encoding
 * produces, so each key has exactly one name.
 */
#ifndef CF_ESCAPE_H
#define CF_ESCAPE_H

#include <stddef.h>
#include "util/buf.h"

/* Appends the escaped form of key[0..len) to out.  CF_ENOMEM. */
int cf_escape(const void *key, size_t len, struct buf *out);
/* Appends the key named by name[0..len) to out.  CF_EINVAL on a malformed
 * escape, lower-case hex, a byte that must be escaped appearing raw, or
 * an escape of a byte that stands for itself; CF_ENOMEM.  On error out
 * may hold a partial key (its previous length is not restored). */
int cf_unescape(const char *name, size_t len, struct buf *out);

#endif
