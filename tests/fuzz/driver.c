/*
 * driver.c: runs a fuzz target over files, without libFuzzer (any C
 * compiler): each argument is a file or a directory of files, each file
 * one input.  Prints "TARGET: N inputs" and exits 0 when none crashed
 * (a crash is the test's failure, as under libFuzzer).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz.h"
#include "util/env.h"

static unsigned long inputs;

static int run_file(const char *path)
{
	char *data = NULL;
	uint8_t *exact;
	size_t len = 0;

	if (env_read_file(path, &data, &len) != 0) {
		fprintf(stderr, "cannot read %s\n", path);
		return 1;
	}
	/* the input in memory of its own size, as libFuzzer hands it, so
	 * that ASan sees a read one byte past it (env_read_file leaves
	 * room for a NUL) */
	if (!(exact = malloc(len ? len : 1))) {
		free(data);
		fprintf(stderr, "out of memory for %s\n", path);
		return 1;
	}
	memcpy(exact, data, len);
	free(data);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	inputs++;
	return 0;
}

int main(int argc, char **argv)
{
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 2;
		}
		if (S_ISDIR(st.st_mode)) {
			struct dirent **names;
			int n = scandir(argv[i], &names, NULL, alphasort);
			if (n < 0) {
				perror(argv[i]);
				return 2;
			}
			for (int j = 0; j < n; j++) {
				char path[8192];
				if (names[j]->d_name[0] != '.') {
					snprintf(path, sizeof path, "%s/%s",
						 argv[i], names[j]->d_name);
					bad |= run_file(path);
				}
				free(names[j]);
			}
			free(names);
		} else {
			bad |= run_file(argv[i]);
		}
	}
	printf("%s: %lu inputs\n", strrchr(argv[0], '/') ?
	       strrchr(argv[0], '/') + 1 : argv[0], inputs);
	return bad ? 2 : 0;
}
