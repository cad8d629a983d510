/*
 * assign.c: assigning a UID to a name without writing a point
 * (OpenTSDB's TSDB.assignUid, behind /api/uid/assign).
 */
#include <string.h>

#include "tsd/internal.h"
#include "tsd/line.h"
#include "util/err.h"

int tsd_name_assign(tsd *t, enum tsd_kind kind, const char *name,
		    uint32_t *uid)
{
	cf_table *uidt, *dbt;
	size_t len = strlen(name);
	int rc;

	if ((unsigned)kind > TSD_TAGV || !tsd_name_valid(name, len))
		return CF_EINVAL;
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
