/*
 * log.h: recent messages.  Every layer reports refused operations and
 * background failures here; the daemon shows the ring as MNT/.log and
 * copies lines to stderr when asked.  Thread safe (one leaf mutex).
 */
#ifndef CF_LOG_H
#define CF_LOG_H

#include <stddef.h>
#include "util/buf.h"

enum { CF_LOG_ERROR = 0, CF_LOG_WARN = 1, CF_LOG_INFO = 2 };

/* Records one line (no trailing newline needed; newlines inside are
 * replaced by spaces).  Never fails: on memory pressure the line is
 * dropped and counted. */
void cf_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends the kept lines, oldest first, each "TIME LEVEL text\n". */
int cf_log_dump(struct buf *out);
/* Keep at most n lines (default 1000). */
void cf_log_set_capacity(size_t n);
/* Also write each line to stderr (1) or not (0, default). */
void cf_log_set_stderr(int on);
/* Frees the ring (at exit, so leak checkers stay quiet). */
void cf_log_release(void);

#endif
