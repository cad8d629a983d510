/*
 * errmap.c: CF_E* codes back to errno, in one table (STYLE: errors), and
 * fs_fail, the reply that refuses a request with an errno and logs why.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fs/fs.h"
#include "util/log.h"

static const int table[CF_ECOUNT] = {
	[0] = 0,
	[-CF_ENOTFOUND] = ENOENT,
	[-CF_EEXIST] = EEXIST,
	[-CF_EINVAL] = EINVAL,
	[-CF_ENOMEM] = ENOMEM,
	[-CF_EIO] = EIO,
	[-CF_ENOSPC] = ENOSPC,
	[-CF_ECORRUPT] = EIO,
	[-CF_ETOOBIG] = EFBIG,
	[-CF_ENAMETOOLONG] = ENAMETOOLONG,
	[-CF_ENOTEMPTY] = ENOTEMPTY,
	[-CF_EBUSY] = EBUSY,
	[-CF_ECLOSED] = ENOENT,	/* a dropped table is simply gone */
	[-CF_ERANGE] = ERANGE,
	[-CF_EXDEV] = EXDEV,
	[-CF_ECANCELED] = ECANCELED,
};

int fs_errno(int rc)
{
	if (rc > 0 || rc <= -CF_ECOUNT)
		return EIO;
	return table[-rc];
}

__attribute__((format(printf, 3, 4)))
void fs_fail(fuse_req_t req, int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cf_log(CF_LOG_WARN, "%s: %s", msg, strerror(err));
	fuse_reply_err(req, err);
}
