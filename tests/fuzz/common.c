/* common.c: the helpers of fuzz.h, linked into every target. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
