/*
 * assign.c: assigning a UID to a name without writing a point
 * (OpenTSDB's TSDB.assignUid, behind /api/uid/assign), and renaming one
 * (TSDB.renameUid, behind /api/uid/rename).
 */
#include <stdio.h>
#include <string.h>

#include "tsd/internal.h"
#include "tsd/line.h"
#include "util/err.h"
#include "util/log.h"

/* OpenTSDB's Tags.validateString message for an invalid name of type
 * what ("metric", "tagk", "tagv"); the character named when it is
 * ASCII. */
static void invalid(struct tsd_error *err, const char *what,
		    const char *s)
{
	size_t len = strlen(s), i = 0;

	if (!err)
		return;
	err->line = 0;
	while (i < len && tsd_name_valid(s, i + 1))
		i++;
	if (!len)
		snprintf(err->reason, sizeof err->reason,
			 "Invalid %s: empty string", what);
	else if (i < len && !((unsigned char)s[i] & 0x80))
		snprintf(err->reason, sizeof err->reason,
			 "Invalid %s (\"%.200s\"): illegal character: %c",
			 what, s, s[i]);
	else
		snprintf(err->reason, sizeof err->reason,
			 "Invalid %s (\"%.200s\"): illegal character", what,
			 s);
}

int tsd_name_assign(tsd *t, enum tsd_kind kind, const char *name,
		    uint32_t *uid, struct tsd_error *err)
{
	static const char *const what[] = { "metric", "tagk", "tagv" };
	cf_table *uidt, *dbt;
	size_t len = strlen(name);
	int rc;

	if (err)
		err->reason[0] = '\0';
	if ((unsigned)kind > TSD_TAGV)
		return CF_EINVAL;
	if (!tsd_name_valid(name, len)) {
		invalid(err, what[kind], name);
		return CF_EINVAL;
	}
	if ((rc = tsd_tables(t, &uidt, &dbt)))
		return rc;
	rc = tsd_uid_lookup(t->uids, uidt, kind, name, len, uid);
	if (rc == CF_OK)
		rc = CF_EEXIST;
	else if (rc == CF_ENOTFOUND)
		rc = tsd_uid_assign(t->uids, uidt, kind, name, len, uid);
	cf_table_close(uidt);
	cf_table_close(dbt);
	return rc;
}

int tsd_name_rename(tsd *t, enum tsd_kind kind, const char *old,
		    const char *name, struct tsd_error *err)
{
	static const char *const what[] = { "metric", "tagk", "tagv" };
	static const char *const kinds[] = { "metrics", "tagk", "tagv" };
	cf_table *uidt, *dbt;
	uint32_t uid;
	int rc;

	if (err)
		err->reason[0] = '\0';
	if ((unsigned)kind > TSD_TAGV)
		return CF_EINVAL;
	if (!tsd_name_valid(old, strlen(old))) {
		invalid(err, what[kind], old);
		return CF_EINVAL;
	}
	if (!tsd_name_valid(name, strlen(name))) {
		invalid(err, what[kind], name);
		return CF_EINVAL;
	}
	if ((rc = tsd_tables(t, &uidt, &dbt)))
		return rc;
	rc = tsd_uid_rename(t->uids, uidt, kind, old, strlen(old), name,
			    strlen(name), &uid);
	if (rc == CF_ENOTFOUND && err)
		snprintf(err->reason, sizeof err->reason,
			 "Name(\"%.200s\") does not exist", old);
	else if (rc == CF_EEXIST && err)
		/* Java's Arrays.toString of the UID's (signed) bytes */
		snprintf(err->reason, sizeof err->reason,
			 "When trying rename(\"%.60s\", \"%.60s\") on "
			 "UniqueId(tsdb-uid, %s): new name already assigned "
			 "ID=[%d, %d, %d]", old, name, kinds[kind],
			 (signed char)(uid >> 16), (signed char)(uid >> 8),
			 (signed char)uid);
	else if (rc == CF_OK)
		cf_log(CF_LOG_INFO, "tsd: renamed %s %s to %s (UID %06x)",
		       what[kind], old, name, uid);
	cf_table_close(uidt);
	cf_table_close(dbt);
	return rc;
}
