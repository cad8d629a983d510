/*
 * test-engine-append: cf_table_append_row, HBase's Append of several
 * columns of one row: each column gets its data after its latest value,
 * a column named twice the last data named (HBase computes each from
 * the value read before the Append), all as one mutation (a concurrent
 * reader sees every column of an append or none), at a timestamp never
 * below the versions read; errors change nothing.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cellfs.h"
#include "util/buf.h"
#include "tests/engine-ops.h"
#include "tests/tap.h"

static cf_db *db;
static cf_table *t;
static atomic_int stop, torn, reads;

/* The latest value of row's fam:qual as a string ("-" when absent). */
static const char *get(const char *row, const char *fam, const char *qual)
{
	static char out[512];
	struct cf_column c = { fam, strlen(fam), qual, strlen(qual) };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	cf_row *r;

	o.columns = &c;
	o.ncolumns = 1;
	if (cf_table_get(t, row, strlen(row), &o, &r))
		return "error";
	if (cf_row_count(r) == 0)
		snprintf(out, sizeof out, "-");
	else
		snprintf(out, sizeof out, "%.*s",
			 (int)cf_row_cell(r, 0)->vlen,
			 (const char *)cf_row_cell(r, 0)->val);
	cf_row_free(r);
	return out;
}

/* Appends "f:q=v ..." (fam and qual one letter each) to row. */
static int append(const char *row, const char *spec)
{
	cf_batch *b;
	char fam[2] = "", qual[2] = "";
	const char *p = spec;
	int rc;

	cf_batch_new(&b);
	while (*p) {
		const char *e = strchr(p, ' ');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		fam[0] = p[0];
		qual[0] = p[2];
		cf_batch_put(b, row, strlen(row), fam, 1, qual, 1, CF_TS_NOW,
			     p + 4, n - 4);
		p += n + (e != NULL);
	}
	rc = cf_table_append_row(t, row, strlen(row), b);
	cf_batch_free(b);
	return rc;
}

static void *reader(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		cf_row *r;
		size_t lx = 0, ly = 0;
		if (cf_table_get(t, "c", 1, NULL, &r))
			continue;
		for (size_t i = 0; i < cf_row_count(r); i++) {
			const struct cf_cell *c = cf_row_cell(r, i);
			if (c->fam[0] == 'f')
				lx = c->vlen;
			else
				ly = c->vlen;
		}
		cf_row_free(r);
		if (lx != ly)
			atomic_fetch_add(&torn, 1);
		atomic_fetch_add(&reads, 1);
	}
	return NULL;
}

int main(void)
{
	struct cf_options o;
	struct cf_family f[2];
	const char *dir;
	cf_batch *b;
	pthread_t rd;
	char big[1022];	/* under max_value; with f:a's 3 bytes over */
	int fails = 0;

	no_plan();
	dir = tap_tmpdir("engine-append");
	cf_options_default(&o);
	o.background = 0;
	o.max_value = 1024;
	if (cf_db_open(dir, &o, &db))
		bail("open");
	cf_family_default(&f[0], "f");
	cf_family_default(&f[1], "g");
	f[0].versions = 3;
	if (cf_table_create(db, "t", f, 2) || cf_table_open(db, "t", &t))
		bail("create");

	is_int(append("r", "f:a=x g:b=y"), CF_OK, "append to absent cells");
	is_str(get("r", "f", "a"), "x", "f:a starts empty");
	is_str(get("r", "g", "b"), "y", "g:b too");
	is_int(append("r", "f:a=1 g:b=2 f:a=3"), CF_OK,
	       "a column named twice");
	is_str(get("r", "f", "a"), "x3", "gets the last data named");
	is_str(get("r", "g", "b"), "y2", "the other column its own");
	put(t, "r", "f", "c", 4102444800000LL, "fut");
	is_int(append("r", "f:c=ure"), CF_OK, "append to a future version");
	{
		struct cf_column c = { "f", 1, "c", 1 };
		struct cf_read_opts ro = CF_READ_OPTS_INIT;
		cf_row *r;
		ro.columns = &c;
		ro.ncolumns = 1;
		ro.max_versions = 3;
		cf_table_get(t, "r", 1, &ro, &r);
		ok(cf_row_count(r) == 1 &&
		   cf_row_cell(r, 0)->ts == 4102444800000LL &&
		   cf_row_cell(r, 0)->vlen == 6 &&
		   !memcmp(cf_row_cell(r, 0)->val, "future", 6),
		   "its new value takes the version's timestamp, not now");
		cf_row_free(r);
	}
	cf_table_flush(t);
	is_int(append("r", "f:a=4"), CF_OK, "append after a flush");
	is_str(get("r", "f", "a"), "x34", "reads the flushed value");

	/* errors: nothing changes */
	cf_batch_new(&b);
	is_int(cf_table_append_row(t, "r", 1, b), CF_EINVAL, "no column");
	cf_batch_put(b, "s", 1, "f", 1, "a", 1, CF_TS_NOW, "z", 1);
	is_int(cf_table_append_row(t, "r", 1, b), CF_EXDEV, "another row");
	cf_batch_clear(b);
	cf_batch_put(b, "r", 1, "f", 1, "a", 1, CF_TS_NOW, "z", 1);
	cf_batch_delete(b, CF_DEL_COLUMN, "r", 1, "g", 1, "b", 1, CF_TS_NOW);
	is_int(cf_table_append_row(t, "r", 1, b), CF_EINVAL, "a delete");
	cf_batch_clear(b);
	cf_batch_put(b, "r", 1, "f", 1, "a", 1, CF_TS_NOW, "z", 1);
	cf_batch_put(b, "r", 1, "h", 1, "a", 1, CF_TS_NOW, "z", 1);
	is_int(cf_table_append_row(t, "r", 1, b), CF_ENOTFOUND,
	       "an unknown family");
	memset(big, 'b', sizeof big);
	cf_batch_clear(b);
	cf_batch_put(b, "r", 1, "g", 1, "b", 1, CF_TS_NOW, "z", 1);
	cf_batch_put(b, "r", 1, "f", 1, "a", 1, CF_TS_NOW, big, sizeof big);
	is_int(cf_table_append_row(t, "r", 1, b), CF_ETOOBIG,
	       "a new value over max_value");
	cf_batch_free(b);
	is_str(get("r", "f", "a"), "x34", "f:a unchanged by the errors");
	is_str(get("r", "g", "b"), "y2", "g:b too");

	/* atomic: a reader never sees one column ahead of the other */
	pthread_create(&rd, NULL, reader, NULL);
	for (int i = 0; i < 300; i++)
		if (append("c", "f:x=. g:y=."))
			fails++;
	while (atomic_load(&reads) < 50)
		;
	atomic_store(&stop, 1);
	pthread_join(rd, NULL);
	is_int(fails, 0, "300 appends of two columns");
	is_int(atomic_load(&torn), 0, "no read saw one column without the "
	       "other (%d reads)", atomic_load(&reads));
	is_int((int)strlen(get("c", "f", "x")), 300, "every append is there");
	cf_table_close(t);
	cf_db_close(db);
	return done_testing();
}
