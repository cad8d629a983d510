/*
 * schema.c: T/.schema: its text (one family a line, cf_family_format),
 * the check of a written text (refused at write(2), where the shell sees
 * it) and the change of the table's schema at close or rename.
 *
 * Promises: a schema is applied whole or not at all, and never empty.
 * Locks: none held; fs_table_changed takes fs_mu.
 */
#include <stdlib.h>

#include "fs/internal.h"

/* The text of .schema of table. */
int schema_text(cf_table *t, struct buf *out)
{
	struct cf_family *f = NULL;
	size_t n, i;
	int rc;

	rc = cf_table_schema(t, &f, &n);
	for (i = 0; !rc && i < n; i++) {
		rc = cf_family_format(&f[i], out);
		if (!rc)
			rc = buf_putc(out, '\n');
	}
	free(f);
	return rc;
}

/* Checks every complete line of a schema text; 0 or CF_EINVAL. */
int schema_check(const struct buf *text, struct cf_family **out,
		 size_t *nout, const char **why)
{
	struct cf_family *f = NULL, *nf;
	size_t i = 0, j, n = 0;
	const char *p = (const char *)text->p;
	int rc = 0;

	while (i < text->len) {
		for (j = i; j < text->len && p[j] != '\n'; j++)
			;
		if (j > i) {
			nf = realloc(f, (n + 1) * sizeof *f);
			if (!nf) {
				rc = CF_ENOMEM;
				break;
			}
			f = nf;
			rc = cf_family_parse(p + i, j - i, &f[n], why);
			if (rc)
				break;
			n++;
		}
		i = j + 1;
	}
	if (rc || !out)
		free(f);
	else {
		*out = f;
		*nout = n;
	}
	return rc;
}

/* Makes text the schema of n's table, changed at mtime (CF_TS_NOW: now;
 * a staged file's mtime, as rsync sets it, keeps the copied schema's). */
int apply_schema(struct node *n, const struct buf *text,
		 int64_t mtime, const char **why)
{
	struct cf_family *f = NULL;
	cf_table *t;
	size_t cnt = 0;
	int rc;

	*why = "bad schema line";
	rc = schema_check(text, &f, &cnt, why);
	if (rc)
		return rc;
	if (cnt == 0) {
		free(f);
		*why = "a table needs at least one family";
		return CF_EINVAL;
	}
	rc = topen(n->table, &t);
	if (!rc) {
		rc = mtime == CF_TS_NOW ? cf_table_alter(t, f, cnt) :
		     cf_table_alter_at(t, f, cnt, mtime);
		if (!rc)
			fs_table_changed(n->table, 0);
		cf_table_close(t);
	}
	if (rc)
		*why = cf_strerror(rc);
	free(f);
	return rc;
}
