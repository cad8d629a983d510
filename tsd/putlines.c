/*
 * putlines.c: put lines one by one, as OpenTSDB's PutDataPointRpc takes
 * them from the telnet port and /api/put: a bad line is refused on its
 * own, the good ones around it are stored.
 *
 * Each line is validated with tsd_line_parse() (pure); the valid ones are
 * copied into one text and stored by tsd_put_text() in one batch, so the
 * only failures left there are those that refuse the whole batch (UID
 * space exhausted, engine errors).  Memory: one copy of the valid lines.
 */
#include <string.h>

#include "tsd/internal.h"
#include "tsd/line.h"
#include "util/err.h"

/* The longest line tsd_writer_write() takes (tsd.c's LINE_MAX_BYTES). */
#define LINE_MAX (64 * 1024)

int tsd_put_lines(tsd *t, const char *text, size_t len,
		  void (*bad)(void *ctx, uint64_t line, const char *reason),
		  void *ctx, size_t *stored, struct tsd_error *err)
{
	struct buf good = BUF_INIT;
	struct tsd_line l;
	uint64_t lineno = 0, rejected = 0;
	size_t n = 0;
	char why[200];
	int rc = CF_OK;

	if (err) {
		err->line = 0;
		err->reason[0] = '\0';
	}
	for (size_t b = 0; b < len;) {
		const char *nl = memchr(text + b, '\n', len - b);
		size_t e = nl ? (size_t)(nl - text) : len;
		int prc;

		lineno++;
		if (e - b > LINE_MAX) {
			prc = CF_EINVAL;
			strcpy(why, "line too long");
		} else {
			prc = tsd_line_parse(text + b, e - b, NULL, 0, &l, why,
					     sizeof why);
		}
		if (prc == CF_OK) {
			if ((rc = buf_append(&good, text + b, e - b)) ||
			    (rc = buf_putc(&good, '\n')))
				goto out;
			n++;
		} else if (prc != TSD_LINE_BLANK) {
			rejected++;
			if (bad)
				bad(ctx, lineno, why);
		}
		b = e + 1;
	}
	if (rejected) {
		pthread_mutex_lock(&t->mu);
		t->st.lines_rejected += rejected;
		pthread_mutex_unlock(&t->mu);
	}
	if (n)
		rc = tsd_put_text(t, (const char *)good.p, good.len, err);
out:
	if (stored)
		*stored = rc ? 0 : n;
	buf_release(&good);
	return rc;
}

void tsd_put_refused(tsd *t, uint64_t n)
{
	pthread_mutex_lock(&t->mu);
	t->st.lines_rejected += n;
	pthread_mutex_unlock(&t->mu);
}
