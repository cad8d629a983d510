/*
 * cellfs-fsck: checks a data directory offline, or repairs it.
 *
 *   cellfs-fsck [--repair] DATADIR
 *
 * Prints one line per finding, "PATH: WHAT" for damage to committed data
 * and "PATH: debris: WHAT" for what an unclean stop leaves (the next
 * mount removes it), then a summary line per kind found:
 *
 *   N item(s) of debris from an unclean stop[ removed]
 *   N problem(s) found[ and repaired]
 *
 * Exits 0 when there is no damage (debris or not), 1 when there is
 * (after --repair: when there was), 2 when the check itself could not
 * run (e.g. a daemon has the directory open).
 */
#include <stdio.h>
#include <string.h>

#include "engine/cellfs.h"
#include "util/log.h"

static void say(void *arg, enum cf_check_kind kind, const char *path,
		const char *what)
{
	(void)arg;
	printf("%s: %s%s\n", path, kind == CF_CHECK_DEBRIS ? "debris: " : "",
	       what);
}

static int usage(void)
{
	fprintf(stderr, "usage: cellfs-fsck [--repair] DATADIR\n");
	return 2;
}

int main(int argc, char **argv)
{
	int repair = 0, rc;
	unsigned problems = 0, debris = 0;
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
	rc = cf_check(dir, repair, say, NULL, &problems, &debris);
	cf_log_release();
	if (rc) {
		fprintf(stderr, "cellfs-fsck: %s: %s\n", dir,
			rc == CF_EBUSY ? "in use by a running cellfs" :
			cf_strerror(rc));
		return 2;
	}
	if (debris)
		printf("%u item%s of debris from an unclean stop%s\n", debris,
		       debris == 1 ? "" : "s", repair ? " removed" : "");
	if (problems)
		printf("%u problem%s%s\n", problems, problems == 1 ? "" : "s",
		       repair ? " found and repaired" : " found");
	return problems ? 1 : 0;
}
