/*
 * common.c: what the files of tsd/ share below them all (tsd/internal.h):
 * the handle's tables, error reasons, strings, query-string parameters,
 * TSUIDs and column deletes.  It calls no other file of tsd/ but uid.c
 * and query.c, so that any file may use it without a cycle (t0010).
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsd/internal.h"
#include "tsd/query.h"
#include "util/err.h"

static int create_tables(tsd *t, int *uid_created)
{
	struct cf_family f[2];
	int rc;

	*uid_created = 0;
	cf_family_default(&f[0], "id");
	cf_family_default(&f[1], "name");
	rc = cf_table_create(t->db, TSD_TABLE_UID, f, 2);
	if (rc == CF_OK)
		*uid_created = 1;
	else if (rc != CF_EEXIST)
		return rc;
	cf_family_default(&f[0], "t");
	/* compacted OpenTSDB rows take 4.7 bytes a point under snappy, 3.8
	 * under zstd, and less with the TSDB block encoding under zstd
	 * (docs/timeseries_performance.md, docs/tsblock_format.md); 256 KiB
	 * blocks (HBase's default is 64 KiB) give each block's bit streams
	 * four times the rows: 1.498 bytes a point against 1.505 on the
	 * benchmark's 10M points, store-file queries as fast or faster
	 * ("Block size of tsdb") */
	f[0].compression = CF_COMPRESS_ZSTD;
	f[0].encoding = CF_ENCODING_TSDB;
	f[0].blocksize = TSD_BLOCKSIZE;
	rc = cf_table_create(t->db, TSD_TABLE_DATA, f, 1);
	return rc == CF_EEXIST ? CF_OK : rc;
}

int tsd_tables(tsd *t, cf_table **uidt, cf_table **dbt)
{
	int rc, created;

	*uidt = *dbt = NULL;
	for (int attempt = 0; attempt < 2; attempt++) {
		rc = cf_table_open(t->db, TSD_TABLE_UID, uidt);
		if (rc == CF_OK)
			rc = cf_table_open(t->db, TSD_TABLE_DATA, dbt);
		if (rc != CF_ENOTFOUND || attempt == 1)
			break;
		cf_table_close(*uidt);
		*uidt = NULL;
		if ((rc = create_tables(t, &created)))
			break;
		if (created)
			tsd_uids_clear(t->uids);
	}
	if (rc) {
		cf_table_close(*uidt);
		*uidt = NULL;
		*dbt = NULL;
	}
	return rc;
}

/* --- small helpers ------------------------------------------------------ */

int tsd_delete_column(cf_table *t, const void *key, size_t klen,
		      const char *fam, const char *qual)
{
	cf_batch *b = NULL;
	int rc;

	if ((rc = cf_batch_new(&b)) == CF_OK &&
	    (rc = cf_batch_delete(b, CF_DEL_COLUMN, key, klen, fam,
				  strlen(fam), qual, strlen(qual),
				  CF_TS_NOW)) == CF_OK)
		rc = cf_table_apply(t, b);
	cf_batch_free(b);
	return rc;
}

int tsd_qs_params(const char *qs, size_t len, const char *const *names,
		  size_t n, char **vals, struct tsd_error *err)
{
	if (err)
		err->line = 0;
	return tsd_qs_take(qs, len, names, n, vals, err ? err->reason : NULL,
			   err ? sizeof err->reason : 0);
}

int tsd_set_str(char **dst, const char *src)
{
	char *s = strdup(src ? src : "");

	if (!s)
		return CF_ENOMEM;
	free(*dst);
	*dst = s;
	return CF_OK;
}

void tsd_errf(struct tsd_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	err->line = 0;
	va_start(ap, fmt);
	vsnprintf(err->reason, sizeof err->reason, fmt, ap);
	va_end(ap);
}

/* The bytes of TSUID hex (a metric UID and 1 to TSD_MAX_TAGS tag
 * pairs), as UniqueId.stringToUid reads it. */
int tsd_tsuid_bytes(const char *hex, unsigned char *b, size_t *n,
		    struct tsd_error *err)
{
	size_t len = strlen(hex), pair = 4 * TSD_UID_WIDTH;

	if (len < 2 * TSD_UID_WIDTH + pair ||
	    (len - 2 * TSD_UID_WIDTH) % pair ||
	    (len - 2 * TSD_UID_WIDTH) / pair > TSD_MAX_TAGS)
		goto bad;
	for (size_t i = 0; i < len; i += 2) {
		unsigned v = 0;
		for (int j = 0; j < 2; j++) {
			char c = hex[i + j];
			v <<= 4;
			if (c >= '0' && c <= '9')
				v |= (unsigned)(c - '0');
			else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
				v |= (unsigned)((c | 0x20) - 'a' + 10);
			else
				goto bad;
		}
		b[i / 2] = (unsigned char)v;
	}
	*n = len / 2;
	return CF_OK;
bad:
	tsd_errf(err, "invalid TSUID: %.80s", hex);
	return CF_EINVAL;
}

int tsd_json_put(struct buf *out, void *jv)
{
	json_t *j = jv;
	char *s;
	int rc;

	if (!j)
		return CF_ENOMEM;
	s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER |
		       JSON_ENCODE_ANY);
	json_decref(j);
	if (!s)
		return CF_ENOMEM;
	rc = buf_append(out, s, strlen(s));
	free(s);
	return rc;
}
