/* err.c: descriptions of the CF_E* codes. */
#include <stdarg.h>
#include <stdio.h>

#include "util/err.h"

static const char *const msgs[CF_ECOUNT] = {
	"ok",
	"not found",
	"already exists",
	"invalid argument",
	"out of memory",
	"I/O error",
	"no space left",
	"data corrupted (checksum or format)",
	"too big",
	"name too long",
	"not empty",
	"busy",
	"closed or dropped",
	"out of range",
	"crosses rows",
	"check failed",
};

const char *cf_strerror(int rc)
{
	if (rc > 0 || -rc >= CF_ECOUNT)
		return "unknown error";
	return msgs[-rc];
}

int cf_einval(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return CF_EINVAL;
}
