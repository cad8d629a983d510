/*
 * errmap.c: CF_E* codes back to errno, in one table (STYLE: errors).
 */
#include <errno.h>

#include "fs/fs.h"

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
