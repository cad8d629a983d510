/*
 * tap.h: a minimal TAP producer for the C tests (prove reads it).
 *
 *   plan(n) or no_plan() ... ok(cond, fmt, ...) ... return done_testing();
 *
 * Header only: each test program is one translation unit.
 */
#ifndef CF_TAP_H
#define CF_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tap_n, tap_failed, tap_planned = -1;

static inline void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline void no_plan(void) { tap_planned = -1; }

__attribute__((format(printf, 2, 3)))
static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;
	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

__attribute__((format(printf, 1, 2)))
static inline void diag(const char *fmt, ...)
{
	va_list ap;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

#define is_int(got, want, ...) \
	(ok((long long)(got) == (long long)(want), __VA_ARGS__) || \
	 (diag("  got %lld, want %lld", (long long)(got), \
	       (long long)(want)), 0))

#define is_mem(got, glen, want, wlen, ...) \
	(ok((size_t)(glen) == (size_t)(wlen) && \
	    memcmp((got), (want), (wlen)) == 0, __VA_ARGS__) || \
	 (diag("  got %zu bytes '%.*s', want %zu bytes '%.*s'", \
	       (size_t)(glen), (int)(glen), (const char *)(got), \
	       (size_t)(wlen), (int)(wlen), (const char *)(want)), 0))

#define is_str(got, want, ...) \
	is_mem((got), strlen(got), (want), strlen(want), __VA_ARGS__)

/* Aborts the whole test with a reason (TAP "Bail out!"). */
#define bail(...) do { printf("Bail out! "); printf(__VA_ARGS__); \
	printf("\n"); exit(255); } while (0)

/* The directories tap_tmpdir() made (in the process that made them):
 * done_testing() removes them when every test passed, and keeps them for
 * a look when one failed or CELLFS_KEEP_TMP is set. */
static char tap_dirs[32][4096];
static int tap_ndirs;
static pid_t tap_dirs_pid;

/* A fresh empty directory under $TMPDIR for a test's data; the path is
 * static storage. */
static inline const char *tap_tmpdir(const char *name)
{
	static char path[4096];
	const char *t = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/cellfs-%s-%ld", t ? t : "/tmp", name,
		 (long)getpid());
	char cmd[8300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", path, path);
	if (system(cmd) != 0)
		bail("cannot make %s", path);
	if (tap_dirs_pid != getpid()) {
		tap_dirs_pid = getpid();
		tap_ndirs = 0;
	}
	if (tap_ndirs < (int)(sizeof tap_dirs / sizeof tap_dirs[0]))
		snprintf(tap_dirs[tap_ndirs++], sizeof tap_dirs[0], "%s", path);
	return path;
}

static inline void tap_rmdir(const char *path)
{
	char cmd[4200];
	if (strlen(path) > 4000)
		return;
	/* bounded in the format too, so gcc can see it fits */
	snprintf(cmd, sizeof cmd, "rm -rf '%.4000s'", path);
	if (system(cmd) != 0)
		diag("cannot remove %s", path);
}

static inline int done_testing(void)
{
	if (tap_planned < 0)
		printf("1..%d\n", tap_n);
	else if (tap_planned != tap_n)
		printf("# planned %d tests, ran %d\n", tap_planned, tap_n);
	fflush(stdout);
	int failed = tap_failed || (tap_planned >= 0 && tap_planned != tap_n);
	if (tap_dirs_pid == getpid() && !getenv("CELLFS_KEEP_TMP")) {
		for (int i = 0; i < tap_ndirs; i++) {
			if (failed)
				diag("kept %s", tap_dirs[i]);
			else
				tap_rmdir(tap_dirs[i]);
		}
	}
	return failed;
}

#endif
