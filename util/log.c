/*
 * log.c: the ring of recent messages (MNT/.log).  One mutex guards the
 * ring; it is a leaf lock: nothing else is locked or called under it
 * except stdio for the optional stderr copy.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/err.h"
#include "util/log.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char **ring;
static size_t cap = 1000, head, count;
static int to_stderr;

static const char *const level_names[] = { "error", "warn", "info" };

void cf_log(int level, const char *fmt, ...)
{
	char text[1024], line[1200], stamp[32];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	char *copy;

	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	for (char *p = text; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
	if (level < 0 || level > CF_LOG_INFO)
		level = CF_LOG_ERROR;
	snprintf(line, sizeof line, "%s.%03ldZ %s %s", stamp,
		 ts.tv_nsec / 1000000, level_names[level], text);
	copy = strdup(line);

	pthread_mutex_lock(&mu);
	if (to_stderr)
		fprintf(stderr, "cellfs: %s\n", line);
	if (copy && !ring)
		ring = calloc(cap, sizeof *ring);
	if (copy && ring) {
		size_t slot = (head + count) % cap;
		if (count == cap) {
			free(ring[head]);
			ring[head] = NULL;
			head = (head + 1) % cap;
			slot = (head + count - 1) % cap;
		} else {
			count++;
		}
		ring[slot] = copy;
		copy = NULL;
	}
	pthread_mutex_unlock(&mu);
	free(copy);
}

int cf_log_dump(struct buf *out)
{
	int rc = CF_OK;

	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < count && rc == CF_OK; i++) {
		const char *l = ring[(head + i) % cap];
		rc = buf_append(out, l, strlen(l));
		if (rc == CF_OK)
			rc = buf_putc(out, '\n');
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

void cf_log_set_capacity(size_t n)
{
	pthread_mutex_lock(&mu);
	if (n > 0 && !ring)
		cap = n;
	pthread_mutex_unlock(&mu);
}

void cf_log_set_stderr(int on)
{
	pthread_mutex_lock(&mu);
	to_stderr = on;
	pthread_mutex_unlock(&mu);
}

void cf_log_release(void)
{
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < count; i++)
		free(ring[(head + i) % cap]);
	free(ring);
	ring = NULL;
	head = count = 0;
	pthread_mutex_unlock(&mu);
}
