/*
 * cellfs-fsck: checks a data directory offline, or repairs it.
 *
 *   cellfs-fsck [--repair] DATADIR
 *
 * Prints one line per problem ("PATH: WHAT") and exits 0 when there is
 * none, 1 when there are (after --repair: when there were), 2 when the
 * check itself could not run (e.g. a daemon has the directory open).
 */
#include <stdio.h>
#include <string.h>

#include "engine/cellfs.h"
#include "util/log.h"

static void say(void *arg, const char *path, const char *what)
{
	(void)arg;
	printf("%s: %s\n", path, what);
}

static int usage(void)
{
	fprintf(stderr, "usage: cellfs-fsck [--repair] DATADIR\n");
	return 2;
}

int main(int argc, char **argv)
{
	int repair = 0, rc;
	unsigned problems = 0;
	const char *dir = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--repair"))
			repair = 1;
		else if (argv[i][0] == '-' || dir)
			return usage();
		else
			dir = argv[i];
	}
	if (!dir)
		return usage();
	rc = cf_check(dir, repair, say, NULL, &problems);
	cf_log_release();
	if (rc) {
		fprintf(stderr, "cellfs-fsck: %s: %s\n", dir,
			rc == CF_EBUSY ? "in use by a running cellfs" :
			cf_strerror(rc));
		return 2;
	}
	if (problems)
		printf("%u problem%s%s\n", problems, problems == 1 ? "" : "s",
		       repair ? " found and repaired" : " found");
	return problems ? 1 : 0;
}
