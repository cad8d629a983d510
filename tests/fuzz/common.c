/* common.c: the helpers of fuzz.h, linked into every target. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/cellfs.h"
#include "tests/fuzz/fuzz.h"
#include "util/env.h"

static char dir[256];

static void remove_dir(void)
{
	env_remove_tree(dir);
}

const char *fuzz_dir(void)
{
	if (!dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/cellfs-fuzz-XXXXXX",
			 t ? t : "/tmp");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			abort();
		}
		atexit(remove_dir);
	}
	return dir;
}

int fuzz_write(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	const char *p = data;

	if (fd < 0)
		return -1;
	while (size) {
		ssize_t w = write(fd, p, size);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		p += w;
		size -= (size_t)w;
	}
	return close(fd);
}

static cf_db *db;
static char db_path[512];

static void db_close(void)
{
	if (db)
		cf_db_close(db);
	db = NULL;
	env_remove_tree(db_path);
}

cf_db *fuzz_db(const char *name, unsigned every, int *fresh)
{
	static unsigned calls;
	struct cf_options o;

	*fresh = 0;
	if (db && ++calls % every != 0)
		return db;
	if (!db) {
		/* after fuzz_dir()'s own: exit handlers run last first, so
		 * the db closes before its directory goes */
		fuzz_dir();
		atexit(db_close);
	}
	db_close();
	snprintf(db_path, sizeof db_path, "%s/%s", fuzz_dir(), name);
	cf_options_default(&o);
	o.background = 0;
	o.sync_mode = CF_SYNC_NONE;
	if (cf_db_open(db_path, &o, &db))
		abort();
	*fresh = 1;
	return db;
}
