/*
 * test-engine: the public engine API, operation by operation: tables and
 * schema, puts and gets, the webtable example of the HBase guide, every
 * delete kind, the delete-then-put fix, versions, TTL with a controlled
 * clock, append, increment, check-and-put, scans (range, prefix, limit,
 * time range, keys only), regions and splits, statistics, bad input.
 */
#include <dirent.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/cellfs.h"
#include "util/coding.h"
#include "util/env.h"
#include "util/log.h"
#include "tests/engine-ops.h"
#include "tests/tap.h"

static cf_db *db;
static const char *dir;

/* Renders a row as "fam:qual@ts=val fam:qual@ts=val ..." */
static void render(const cf_row *r, char *out, size_t n)
{
	size_t used = 0;

	out[0] = 0;
	for (size_t i = 0; r && i < cf_row_count(r); i++) {
		const struct cf_cell *c = cf_row_cell(r, i);
		used += (size_t)snprintf(out + used, n - used,
					 "%s%.*s:%.*s@%" PRId64 "=%.*s",
					 i ? " " : "", (int)c->famlen, c->fam,
					 (int)c->qlen, (const char *)c->qual,
					 c->ts, c->val ? (int)c->vlen : 1,
					 c->val ? (const char *)c->val : "-");
		if (used >= n)
			break;
	}
}

static const char *get_str(cf_table *t, const char *row,
			   const struct cf_read_opts *o)
{
	static char out[4096];
	cf_row *r;
	int rc = cf_table_get(t, row, strlen(row), o, &r);

	if (rc) {
		snprintf(out, sizeof out, "error %s", cf_strerror(rc));
		return out;
	}
	render(r, out, sizeof out);
	cf_row_free(r);
	return out;
}

static const char *scan_str(cf_table *t, const struct cf_scan_opts *o)
{
	static char out[8192];
	size_t used = 0;
	cf_scanner *s;
	const cf_row *r;
	int rc;

	out[0] = 0;
	if ((rc = cf_scan_open(t, o, &s)))
		return cf_strerror(rc);
	while ((rc = cf_scan_next(s, &r)) == CF_OK && r) {
		size_t kl;
		const unsigned char *k = cf_row_key(r, &kl);
		used += (size_t)snprintf(out + used, sizeof out - used, "%s%.*s",
					 used ? " " : "", (int)kl, k);
	}
	cf_scan_close(s);
	return rc ? cf_strerror(rc) : out;
}

static void reopen(void)
{
	struct cf_options o;

	cf_db_close(db);
	cf_options_default(&o);
	o.background = 0;
	if (cf_db_open(dir, &o, &db))
		bail("reopen");
}

/* Overwrites prow's cf:big with v (n bytes), flushes and major-compacts
 * t: the memstore and store files the last reads came from are gone. */
static int rewrite(cf_table *t, const void *v, size_t n)
{
	int rc = put_n(t, "prow", "cf", "big", CF_TS_NOW, v, n);

	if (!rc)
		rc = cf_table_flush(t);
	if (!rc)
		rc = cf_table_compact(t, 1);
	return rc;
}

/* Byte j of version g of a value in the pinned-values test: versions
 * differ at every byte. */
static unsigned char pin_byte(size_t j, int g)
{
	return (unsigned char)(j * 13 + (size_t)g * 101 + (j >> 9));
}

static void pin_fill(unsigned char *v, int g, size_t n)
{
	for (size_t j = 0; j < n; j++)
		v[j] = pin_byte(j, g);
}

/* Is c's value version g of n bytes? */
static int pin_same(const struct cf_cell *c, int g, size_t n)
{
	const unsigned char *v = c->val;

	if (!v || c->vlen != n)
		return 0;
	for (size_t j = 0; j < n; j++)
		if (v[j] != pin_byte(j, g))
			return 0;
	return 1;
}

/* A filter check's answer: *(int *)arg. */
static int answer(void *arg, const cf_row *row)
{
	(void)row;
	return *(int *)arg;
}

/* Whether cf_table_check_mutate applies bb to row "m" of t under c (-1
 * on an error). */
static int applies(cf_table *t, const struct cf_check *c, cf_batch *bb)
{
	int applied = -1;

	if (cf_table_check_mutate(t, "m", 1, c, bb, &applied))
		return -1;
	return applied;
}

/* cf_table_check_mutate (HBase's CheckAndMutate) on row "m" of t's
 * family cf; bb is the caller's scratch batch. */
static void check_mutate_cases(cf_table *t, cf_batch *bb)
{
	struct cf_check c = { "cf", 2, "e", 1, CF_CMP_EQUAL, NULL, 0, 0,
			      INT64_MAX, NULL, NULL };
	int applied, yes;

	cf_batch_clear(bb);
	cf_batch_put(bb, "m", 1, "cf", 2, "e", 1, 100, "", 0);
	is_int(cf_table_check_mutate(t, "m", 1, &c, bb, &applied), CF_OK,
	       "check_mutate: null on an absent cell");
	is_int(applied, 1, "holds (and writes an empty cell at 100)");
	cf_batch_clear(bb);
	cf_batch_put(bb, "m", 1, "cf", 2, "x", 1, 100, "1", 1);
	cf_table_check_and_apply(t, "m", 1, "cf", 2, "e", 1, NULL, 0, bb,
				 &applied);
	is_int(applied, 0, "check_and_apply: an empty cell exists");
	is_int(applies(t, &c, bb), 1,
	       "check_mutate: an empty cell is HBase's null");
	c.op = CF_CMP_NOT_EQUAL;
	is_int(applies(t, &c, bb), 0, "NOT_EQUAL null: not for an empty cell");
	c.qual = "x";
	is_int(applies(t, &c, bb), 1, "NOT_EQUAL null: a nonempty cell");
	c.op = CF_CMP_LESS;
	c.value = "0";
	c.vlen = 1;
	is_int(applies(t, &c, bb), 1,
	       "LESS: the value given sorts before the cell's");
	c.op = CF_CMP_GREATER_OR_EQUAL;
	is_int(applies(t, &c, bb), 0, "GREATER_OR_EQUAL: not");
	c.op = CF_CMP_EQUAL;
	c.value = "1";
	c.min_ts = 101;
	is_int(applies(t, &c, bb), 0,
	       "a time range without the version: no cell");
	c.min_ts = 100;
	c.max_ts = 101;
	is_int(applies(t, &c, bb), 1, "a time range holding it");
	c.max_ts = 100;
	is_int(cf_table_check_mutate(t, "m", 1, &c, bb, &applied), CF_EINVAL,
	       "an empty time range is CF_EINVAL");
	c.max_ts = INT64_MAX;
	c.op = (enum cf_cmp)99;
	is_int(cf_table_check_mutate(t, "m", 1, &c, bb, &applied), CF_EINVAL,
	       "an unknown op is CF_EINVAL");
	c.op = CF_CMP_EQUAL;
	c.fam = "nofam";
	c.famlen = 5;
	is_int(cf_table_check_mutate(t, "m", 1, &c, bb, &applied),
	       CF_ENOTFOUND, "a family the table lacks");
	c.fam = NULL;
	c.famlen = 0;
	c.filter = answer;
	c.arg = &yes;
	cf_batch_clear(bb);
	cf_batch_put(bb, "m", 1, "cf", 2, "y", 1, 100, "2", 1);
	yes = CF_EIO;
	is_int(cf_table_check_mutate(t, "m", 1, &c, bb, &applied), CF_EIO,
	       "a filter's error is returned");
	is_int(applied, 0, "and nothing applied");
	yes = 0;
	is_int(applies(t, &c, bb), 0, "a filter that says no");
	yes = 1;
	is_int(applies(t, &c, bb), 1, "a filter that says yes");
	{
		cf_row *r = NULL;
		struct cf_read_opts ro = CF_READ_OPTS_INIT;
		struct cf_column col = { "cf", 2, "y", 1 };
		ro.columns = &col;
		ro.ncolumns = 1;
		cf_table_get(t, "m", 1, &ro, &r);
		ok(cf_row_count(r) == 1, "written once, by the last check");
		cf_row_free(r);
	}
	/* a batch whose only op has an empty row holds no data at all
	 * (fuzz-batch: `checkanddelete  cf:q v `, an empty row) */
	c.filter = NULL;
	cf_batch_clear(bb);
	cf_batch_delete(bb, CF_DEL_ROW, "", 0, NULL, 0, NULL, 0, CF_TS_NOW);
	is_int(cf_table_check_mutate(t, "m", 1, &c, bb, &applied), CF_EXDEV,
	       "an op of an empty row under a check of another row: EXDEV");
	ok(cf_table_check_mutate(t, "", 0, &c, bb, &applied) != CF_OK &&
	   !applied, "a check of the empty row is refused");
}

int main(void)
{
	struct cf_options o;
	struct cf_family fams[2], *sch;
	struct cf_read_opts all = CF_READ_OPTS_INIT, call = CF_READ_OPTS_INIT;
	struct cf_column contents = { "contents", 8, NULL, 0 };
	cf_table *t, *w;
	size_t n;
	char **names;
	int64_t now = 1700000000000LL;
	struct buf b = BUF_INIT;
	const char *why;

	no_plan();
	dir = tap_tmpdir("engine");
	env_clock_set(now);
	cf_options_default(&o);
	o.background = 0;
	is_int(cf_db_open(dir, &o, &db), CF_OK, "open a new data directory");

	/* --- schema text --------------------------------------------- */
	cf_family_default(&fams[0], "cf");
	cf_family_format(&fams[0], &b);
	buf_putc(&b, 0);
	is_str((const char *)b.p,
	       "cf VERSIONS=1 MIN_VERSIONS=0 TTL=FOREVER "
	       "KEEP_DELETED_CELLS=FALSE COMPRESSION=SNAPPY BLOOMFILTER=ROW "
	       "BLOCKSIZE=65536 IN_MEMORY=FALSE ENCODING=NONE",
	       "a family's line spells out every setting");
	is_int(cf_family_parse("contents VERSIONS=3 TTL=86400", 29, &fams[0],
			       &why), CF_OK, "a schema line parses");
	ok(fams[0].versions == 3 && fams[0].ttl == 86400 &&
	   fams[0].bloom == CF_BLOOM_ROW, "named settings set, others default");
	is_int(cf_family_parse("z COMPRESSION=zstd", 18, &fams[1], &why),
	       CF_OK, "COMPRESSION=zstd parses (any case)");
	is_int(fams[1].compression, CF_COMPRESS_ZSTD, "as CF_COMPRESS_ZSTD");
	buf_reset(&b);
	cf_family_format(&fams[1], &b);
	buf_putc(&b, 0);
	ok(strstr((const char *)b.p, " COMPRESSION=ZSTD ") != NULL,
	   "and is spelled COMPRESSION=ZSTD");
	is_int(cf_family_parse("k KEEP_DELETED_CELLS=ttl", 24, &fams[1], &why),
	       CF_OK, "KEEP_DELETED_CELLS=ttl parses (any case)");
	is_int(fams[1].keep_deleted, CF_KDC_TTL, "as CF_KDC_TTL");
	buf_reset(&b);
	cf_family_format(&fams[1], &b);
	buf_putc(&b, 0);
	ok(strstr((const char *)b.p, " KEEP_DELETED_CELLS=TTL ") != NULL,
	   "and is spelled KEEP_DELETED_CELLS=TTL");
	is_int(cf_family_parse("k KEEP_DELETED_CELLS=1", 22, &fams[1], &why),
	       CF_EINVAL, "KEEP_DELETED_CELLS=1 is refused");
	is_int(cf_family_parse("z COMPRESSION=LZ4", 17, &fams[1], &why),
	       CF_EINVAL, "an unknown compression is refused");
	is_str(why, "bad setting value", "saying why");
	is_int(cf_family_parse("x VERSIONS=0", 12, &fams[1], &why), CF_EINVAL,
	       "VERSIONS=0 is refused");
	is_int(cf_family_parse("x FOO=1", 7, &fams[1], &why), CF_EINVAL,
	       "an unknown setting is refused");
	is_int(cf_family_parse(".x", 2, &fams[1], &why), CF_EINVAL,
	       "a family name starting with '.' is refused");
	is_int(cf_family_parse("x MIN_VERSIONS=2", 16, &fams[1], &why),
	       CF_EINVAL, "MIN_VERSIONS above VERSIONS is refused");

	/* --- tables -------------------------------------------------- */
	cf_family_default(&fams[0], "contents");
	fams[0].versions = 3;
	cf_family_default(&fams[1], "anchor");
	is_int(cf_table_create(db, "webtable", fams, 2), CF_OK, "create webtable");
	is_int(cf_table_create(db, "webtable", fams, 2), CF_EEXIST,
	       "creating it again is EEXIST");
	is_int(cf_table_create(db, "bad/name", fams, 1), CF_EINVAL,
	       "a bad table name is EINVAL");
	is_int(cf_table_create(db, ".hidden", fams, 1), CF_EINVAL,
	       "a leading dot is EINVAL");
	cf_family_default(&fams[0], "cf");
	is_int(cf_table_create(db, "t", fams, 1), CF_OK, "create t");
	cf_table_list(db, &names, &n);
	ok(n == 2 && !strcmp(names[0], "t") && !strcmp(names[1], "webtable"),
	   "tables are listed sorted");
	free(names);
	is_int(cf_table_open(db, "nope", &t), CF_ENOTFOUND,
	       "an unknown table is ENOTFOUND");

	/* --- the webtable example (HBase guide) ---------------------- */
	cf_table_open(db, "webtable", &w);
	put(w, "com.cnn.www", "anchor", "cnnsi.com", 9, "CNN");
	put(w, "com.cnn.www", "anchor", "my.look.ca", 8, "CNN.com");
	put(w, "com.cnn.www", "contents", "html", 6, "<html>a");
	put(w, "com.cnn.www", "contents", "html", 5, "<html>b");
	put(w, "com.cnn.www", "contents", "html", 3, "<html>c");
	is_str(get_str(w, "com.cnn.www", NULL),
	       "anchor:cnnsi.com@9=CNN anchor:my.look.ca@8=CNN.com "
	       "contents:html@6=<html>a",
	       "a get returns each column's latest version");
	all.max_versions = INT32_MAX;
	call.max_versions = INT32_MAX;
	call.columns = &contents;
	call.ncolumns = 1;
	is_str(get_str(w, "com.cnn.www", &all),
	       "anchor:cnnsi.com@9=CNN anchor:my.look.ca@8=CNN.com "
	       "contents:html@6=<html>a contents:html@5=<html>b "
	       "contents:html@3=<html>c",
	       "all versions, newest first");
	{
		struct cf_read_opts tr = CF_READ_OPTS_INIT;
		struct cf_column col = { "contents", 8, "html", 4 };
		tr.columns = &col;
		tr.ncolumns = 1;
		tr.min_ts = 5;
		tr.max_ts = 6;
		is_str(get_str(w, "com.cnn.www", &tr), "contents:html@5=<html>b",
		       "a version read by time range [5, 6)");
		tr.min_ts = 7;
		tr.max_ts = 9;
		is_str(get_str(w, "com.cnn.www", &tr), "",
		       "contents:html at t8 has no value");
	}
	put(w, "com.cnn.www", "contents", "html", 2, "<html>d");
	is_str(get_str(w, "com.cnn.www", &call),
	       "contents:html@6=<html>a contents:html@5=<html>b "
	       "contents:html@3=<html>c",
	       "a fourth older version is past VERSIONS=3");
	cf_table_flush(w);
	cf_table_close(w);
	reopen();
	cf_table_open(db, "webtable", &w);
	is_str(get_str(w, "com.cnn.www", &all),
	       "anchor:cnnsi.com@9=CNN anchor:my.look.ca@8=CNN.com "
	       "contents:html@6=<html>a contents:html@5=<html>b "
	       "contents:html@3=<html>c",
	       "the same after flush and reopen");
	{
		/* a clean close with everything flushed leaves no log
		 * record to replay (segment headers only) */
		char path[4096];
		DIR *d;
		struct dirent *e;
		long long recs = 0;
		int segs = 0;
		snprintf(path, sizeof path, "%s/wal", dir);
		if ((d = opendir(path))) {
			while ((e = readdir(d))) {
				struct stat st;
				char f[8192];
				if (!strstr(e->d_name, ".log"))
					continue;
				snprintf(f, sizeof f, "%s/%s", path, e->d_name);
				if (stat(f, &st) == 0) {
					segs++;
					recs += st.st_size > 32 ? 1 : 0;
				}
			}
			closedir(d);
		}
		ok(segs >= 1 && recs == 0,
		   "after a clean close the WAL holds no records "
		   "(%d segments, %lld with records)", segs, recs);
	}

	/* --- deletes --------------------------------------------------- */
	del(w, CF_DEL_VERSION, "com.cnn.www", "contents", "html", 5);
	is_str(get_str(w, "com.cnn.www", &call),
	       "contents:html@6=<html>a contents:html@3=<html>c",
	       "Delete removes exactly one version");
	is_str(get_str(w, "com.cnn.www", &call),
	       "contents:html@6=<html>a contents:html@3=<html>c",
	       "and the crowded-out version does not come back");
	del(w, CF_DEL_COLUMN, "com.cnn.www", "contents", "html", CF_TS_NOW);
	is_str(get_str(w, "com.cnn.www", NULL),
	       "anchor:cnnsi.com@9=CNN anchor:my.look.ca@8=CNN.com",
	       "DeleteColumn removes every version");
	put(w, "com.cnn.www", "contents", "html", 4, "<html>after");
	is_str(get_str(w, "com.cnn.www", NULL),
	       "anchor:cnnsi.com@9=CNN anchor:my.look.ca@8=CNN.com "
	       "contents:html@4=<html>after",
	       "a put after a delete is visible even with an older ts");
	cf_table_compact(w, 1);
	is_str(get_str(w, "com.cnn.www", NULL),
	       "anchor:cnnsi.com@9=CNN anchor:my.look.ca@8=CNN.com "
	       "contents:html@4=<html>after",
	       "and major compaction changes nothing");
	del(w, CF_DEL_FAMILY, "com.cnn.www", "anchor", NULL, CF_TS_NOW);
	is_str(get_str(w, "com.cnn.www", NULL), "contents:html@4=<html>after",
	       "DeleteFamily removes the family's columns");
	del(w, CF_DEL_ROW, "com.cnn.www", NULL, NULL, CF_TS_NOW);
	is_str(get_str(w, "com.cnn.www", NULL), "", "a row delete empties it");
	put(w, "com.cnn.www", "anchor", "x", CF_TS_NOW, "new");
	is_str(get_str(w, "com.cnn.www", NULL) + 0, "anchor:x@1700000000000=new",
	       "a put at now after a row delete at now (same ms) is visible");
	del(w, CF_DEL_VERSION, "com.cnn.www", "anchor", "x", CF_TS_NOW);
	is_str(get_str(w, "com.cnn.www", NULL), "",
	       "Delete at 'now' removes the latest version");
	put(w, "two", "contents", "html", 1, "a");
	put(w, "two", "contents", "html", 2, "b");
	put(w, "two", "contents", "html", 3, "c");
	{
		/* HBase's HRegion.prepareDeleteTimestamps: the second Delete
		 * of the latest version in one mutation takes the second */
		cf_batch *bb;
		cf_batch_new(&bb);
		for (int k = 0; k < 2; k++)
			cf_batch_delete(bb, CF_DEL_VERSION, "two", 3,
					"contents", 8, "html", 4, CF_TS_NOW);
		cf_batch_put(bb, "two", 3, "contents", 8, "txt", 3, 7, "t", 1);
		is_int(cf_table_apply(w, bb), CF_OK,
		       "two Deletes of the latest version in one batch");
		is_str(get_str(w, "two", &call),
		       "contents:html@1=a contents:txt@7=t",
		       "delete the two newest versions");
		cf_batch_free(bb);
		cf_batch_new(&bb);
		for (int k = 0; k < 2; k++)
			cf_batch_delete(bb, CF_DEL_VERSION, "two", 3,
					"contents", 8, "html", 4, CF_TS_NOW);
		is_int(cf_table_apply(w, bb), CF_OK,
		       "two such Deletes of a column of one version");
		is_str(get_str(w, "two", &call), "contents:txt@7=t",
		       "delete it, and the second deletes nothing");
		cf_batch_free(bb);
		/* interleaved columns and rows: each counts its own */
		for (int v = 1; v <= 3; v++) {	/* within VERSIONS 3 */
			char val[2] = { (char)('a' + v - 1), 0 };
			put(w, "two", "contents", "a", v, val);
			put(w, "two", "contents", "b", v, val);
			put(w, "three", "contents", "a", v, val);
		}
		cf_batch_new(&bb);
		{
			static const char *const seq[] = { "two a", "two b",
				"two a", "three a", "two a", "two b" };
			for (int k = 0; k < 6; k++)
				cf_batch_delete(bb, CF_DEL_VERSION, seq[k],
						strchr(seq[k], ' ') - seq[k],
						"contents", 8,
						strchr(seq[k], ' ') + 1, 1,
						CF_TS_NOW);
		}
		is_int(cf_table_apply(w, bb), CF_OK,
		       "Deletes of the latest versions of three columns, "
		       "interleaved");
		is_str(get_str(w, "two", &call),
		       "contents:b@1=a contents:txt@7=t",
		       "each column loses as many newest as it was named");
		is_str(get_str(w, "three", &call),
		       "contents:a@2=b contents:a@1=a",
		       "and a row named between them only its newest");
		cf_batch_free(bb);
	}

	/* --- bad input ---------------------------------------------- */
	cf_table_open(db, "t", &t);
	is_int(put(t, "r", "nofam", "q", CF_TS_NOW, "v"), CF_ENOTFOUND,
	       "a put to an unknown family is ENOTFOUND");
	is_int(put(t, "", "cf", "q", CF_TS_NOW, "v"), CF_EINVAL,
	       "an empty row key is EINVAL");
	is_int(put(t, "r", "cf", "q", -5, "v"), CF_EINVAL,
	       "a negative timestamp is EINVAL");
	{
		char *big = malloc(o.max_value + 2);
		cf_batch *bb;
		memset(big, 'x', o.max_value + 1);
		cf_batch_new(&bb);
		cf_batch_put(bb, "r", 1, "cf", 2, "q", 1, CF_TS_NOW, big,
			     o.max_value + 1);
		is_int(cf_table_apply(t, bb), CF_ETOOBIG,
		       "a value over max_value is ETOOBIG");
		cf_batch_free(bb);
		free(big);
	}
	{
		/* a multi-row batch with one bad op applies nothing */
		cf_batch *bb;
		cf_batch_new(&bb);
		cf_batch_put(bb, "r1", 2, "cf", 2, "q", 1, CF_TS_NOW, "1", 1);
		cf_batch_put(bb, "r2", 2, "zz", 2, "q", 1, CF_TS_NOW, "2", 1);
		is_int(cf_table_apply(t, bb), CF_ENOTFOUND,
		       "a batch with a bad family fails");
		is_str(get_str(t, "r1", NULL), "", "and applies none of it");
		cf_batch_free(bb);
	}

	/* --- append, increment, check-and-put ------------------------ */
	{
		struct buf out = BUF_INIT;
		int64_t v = 0;
		int applied;
		cf_batch *bb;
		is_int(cf_table_append(t, "a", 1, "cf", 2, "log", 3, "one ", 4,
				       &out), CF_OK, "append to nothing");
		cf_table_append(t, "a", 1, "cf", 2, "log", 3, "two", 3, &out);
		is_mem(out.p, out.len, "one two", 7, "append appends");
		is_str(get_str(t, "a", NULL) + 0,
		       "cf:log@1700000000000=one two", "and stores the result");
		is_int(cf_table_increment(t, "c", 1, "cf", 2, "n", 1, 5, &v),
		       CF_OK, "increment from nothing");
		cf_table_increment(t, "c", 1, "cf", 2, "n", 1, -2, &v);
		is_int(v, 3, "increments add up");
		is_int(cf_table_increment(t, "a", 1, "cf", 2, "log", 3, 1, &v),
		       CF_EINVAL, "incrementing a non-counter is EINVAL");
		{
			unsigned char mx[8];
			enc_u64be(mx, INT64_MAX);
			cf_batch_new(&bb);
			cf_batch_put(bb, "c", 1, "cf", 2, "m", 1, CF_TS_NOW, mx,
				     8);
			cf_table_apply(t, bb);
			cf_batch_free(bb);
			is_int(cf_table_increment(t, "c", 1, "cf", 2, "m", 1, 1,
						  &v), CF_ERANGE,
			       "counter overflow is ERANGE");
		}
		{
			/* several columns at once (HBase's Increment) */
			unsigned char d[8];
			cf_batch_new(&bb);
			enc_u64be(d, 10);
			cf_batch_put(bb, "c", 1, "cf", 2, "n", 1, CF_TS_NOW, d,
				     8);
			enc_u64be(d, 7);
			cf_batch_put(bb, "c", 1, "cf", 2, "x", 1, CF_TS_NOW, d,
				     8);
			enc_u64be(d, 1);
			cf_batch_put(bb, "c", 1, "cf", 2, "x", 1, CF_TS_NOW, d,
				     8);
			is_int(cf_table_increment_row(t, "c", 1, bb), CF_OK,
			       "increment of several columns");
			cf_table_increment(t, "c", 1, "cf", 2, "n", 1, 0, &v);
			is_int(v, 13, "each column gets its delta");
			cf_table_increment(t, "c", 1, "cf", 2, "x", 1, 0, &v);
			is_int(v, 1, "a column named twice the last delta "
			       "named, as HBase's Increment");
			cf_batch_put(bb, "c", 1, "cf", 2, "m", 1, CF_TS_NOW, d,
				     8);
			is_int(cf_table_increment_row(t, "c", 1, bb), CF_ERANGE,
			       "an overflow of one column is ERANGE");
			cf_table_increment(t, "c", 1, "cf", 2, "n", 1, 0, &v);
			is_int(v, 13, "and changes no column");
			cf_batch_clear(bb);
			cf_batch_put(bb, "a", 1, "cf", 2, "n", 1, CF_TS_NOW, d,
				     8);
			cf_batch_put(bb, "a", 1, "cf", 2, "log", 3, CF_TS_NOW,
				     d, 8);
			is_int(cf_table_increment_row(t, "a", 1, bb), CF_EINVAL,
			       "a non-counter among the columns is EINVAL");
			is_str(get_str(t, "a", NULL),
			       "cf:log@1700000000000=one two",
			       "and writes no column");
			is_int(cf_table_increment_row(t, "c", 1, bb), CF_EXDEV,
			       "a column of another row is EXDEV");
			cf_batch_free(bb);
		}
		cf_batch_new(&bb);
		cf_batch_put(bb, "k", 1, "cf", 2, "q", 1, CF_TS_NOW, "first", 5);
		cf_table_check_and_apply(t, "k", 1, "cf", 2, "q", 1, NULL, 0, bb,
					 &applied);
		is_int(applied, 1, "check-and-put on absent applies");
		cf_table_check_and_apply(t, "k", 1, "cf", 2, "q", 1, NULL, 0, bb,
					 &applied);
		is_int(applied, 0, "but not when the cell exists");
		cf_batch_clear(bb);
		cf_batch_put(bb, "k", 1, "cf", 2, "q", 1, CF_TS_NOW, "second", 6);
		cf_table_check_and_apply(t, "k", 1, "cf", 2, "q", 1, "first", 5,
					 bb, &applied);
		is_int(applied, 1, "check-and-put on a matching value applies");
		cf_batch_clear(bb);
		cf_batch_put(bb, "other", 5, "cf", 2, "q", 1, CF_TS_NOW, "x", 1);
		is_int(cf_table_check_and_apply(t, "k", 1, "cf", 2, "q", 1, NULL,
						0, bb, &applied), CF_EXDEV,
		       "check-and-put touching another row is refused");
		check_mutate_cases(t, bb);
		cf_batch_free(bb);
		buf_release(&out);
	}

	/* --- TTL and MIN_VERSIONS ------------------------------------ */
	{
		struct cf_family tf[2];
		cf_table *tt;
		cf_family_default(&tf[0], "short");
		tf[0].ttl = 10;
		cf_family_default(&tf[1], "kept");
		tf[1].ttl = 10;
		tf[1].versions = 3;
		tf[1].min_versions = 1;
		is_int(cf_table_create(db, "ttl", tf, 2), CF_OK, "create ttl");
		cf_table_open(db, "ttl", &tt);
		put(tt, "r", "short", "q", CF_TS_NOW, "gone soon");
		put(tt, "r", "kept", "q", now - 2000, "old");
		put(tt, "r", "kept", "q", CF_TS_NOW, "new");
		is_str(get_str(tt, "r", &all),
		       "kept:q@1700000000000=new kept:q@1699999998000=old "
		       "short:q@1700000000000=gone soon", "before the TTL");
		env_clock_set(now + 11000);
		is_str(get_str(tt, "r", &all), "kept:q@1700000000000=new",
		       "past the TTL: gone at once, MIN_VERSIONS keeps one");
		cf_table_flush(tt);
		cf_table_compact(tt, 1);
		is_str(get_str(tt, "r", &all), "kept:q@1700000000000=new",
		       "and after major compaction");
		env_clock_set(now);
		is_str(get_str(tt, "r", &all), "kept:q@1700000000000=new",
		       "expired cells left the disk at compaction");

		/* Rule 4 (docs/engine.md) across a major compaction: "old"
		 * was written while "new" (a higher ts) was alive, so it
		 * dies once its TTL passes, even though "new" was deleted
		 * since.  "masked" (covered by the DeleteFamily) and "new"
		 * are that evidence: a compaction before the TTL passes
		 * must not drop them, nor the marker hiding "masked". */
		put(tt, "m", "kept", "p", now - 1000, "masked");
		del(tt, CF_DEL_FAMILY, "m", "kept", NULL, now - 1000);
		put(tt, "m", "kept", "p", now, "new");
		put(tt, "m", "kept", "p", now - 5000, "old");
		del(tt, CF_DEL_VERSION, "m", "kept", "p", now);
		is_str(get_str(tt, "m", &all), "kept:p@1699999995000=old",
		       "the newer version deleted: the older one shows");
		cf_table_flush(tt);
		cf_table_compact(tt, 1);
		is_str(get_str(tt, "m", &all), "kept:p@1699999995000=old",
		       "and after a major compaction before its TTL");
		env_clock_set(now + 6000);
		is_str(get_str(tt, "m", &all), "",
		       "past its TTL it dies: a newer version was alive once "
		       "(MIN_VERSIONS), compacted or not");
		cf_table_compact(tt, 1);
		env_clock_set(now);
		is_str(get_str(tt, "m", &all), "",
		       "the compaction past its TTL dropped it and the rest");
		cf_table_close(tt);
	}

	/* --- scans --------------------------------------------------- */
	{
		struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };
		cf_table *st;
		cf_family_default(&fams[0], "f");
		cf_table_create(db, "s", fams, 1);
		cf_table_open(db, "s", &st);
		const char *rows[] = { "apple", "apricot", "banana", "blue",
				       "cherry", "b", "c" };
		for (int i = 0; i < 7; i++)
			put(st, rows[i], "f", "q", 100 + i, rows[i]);
		is_str(scan_str(st, &so), "apple apricot b banana blue c cherry",
		       "a full scan is in key order");
		so.start = "b";
		so.startlen = 1;
		so.stop = "c";
		so.stoplen = 1;
		is_str(scan_str(st, &so), "b banana blue", "start/stop range");
		memset(&so, 0, sizeof so);
		so.read = (struct cf_read_opts)CF_READ_OPTS_INIT;
		so.prefix = "ap";
		so.prefixlen = 2;
		is_str(scan_str(st, &so), "apple apricot", "prefix scan");
		so.prefix = NULL;
		so.prefixlen = 0;
		so.limit = 3;
		is_str(scan_str(st, &so), "apple apricot b", "limit");
		so.limit = 0;
		so.read.min_ts = 103;
		so.read.max_ts = 105;
		is_str(scan_str(st, &so), "blue cherry", "time range scan");
		/* splits: scans cross region boundaries in order */
		is_int(cf_table_split(st, "b", 1), CF_OK, "split at b");
		is_int(cf_table_split(st, "c", 1), CF_OK, "split at c");
		is_int(cf_table_split(st, "c", 1), CF_EEXIST,
		       "splitting at a region start again is EEXIST");
		{
			struct cf_region_info *ri;
			size_t nr;
			cf_table_regions(st, &ri, &nr);
			ok(nr == 3 && ri[0].startlen == 0 && ri[1].startlen == 1 &&
			   ri[1].start[0] == 'b' && ri[2].start[0] == 'c' &&
			   ri[2].endlen == 0, "three regions with their keys");
			cf_regions_free(ri, nr);
		}
		memset(&so, 0, sizeof so);
		so.read = (struct cf_read_opts)CF_READ_OPTS_INIT;
		is_str(scan_str(st, &so), "apple apricot b banana blue c cherry",
		       "the scan crosses regions in order");
		put(st, "bz", "f", "q", 200, "bz");
		cf_table_compact(st, 1);
		cf_table_close(st);
		cf_table_close(w);
		cf_table_close(t);
		reopen();
		cf_table_open(db, "s", &st);
		cf_table_open(db, "webtable", &w);
		cf_table_open(db, "t", &t);
		is_str(scan_str(st, &so),
		       "apple apricot b banana blue bz c cherry",
		       "and after compaction of the daughters and reopen");
		so.read.keys_only = 1;
		so.prefix = "bz";
		so.prefixlen = 2;
		{
			cf_scanner *sc;
			const cf_row *r;
			cf_scan_open(st, &so, &sc);
			cf_scan_next(sc, &r);
			ok(r && cf_row_count(r) == 1 &&
			   cf_row_cell(r, 0)->val == NULL &&
			   cf_row_cell(r, 0)->vlen == 2,
			   "keys-only gives lengths without values");
			cf_scan_close(sc);
		}
		cf_table_close(st);
	}

	/* --- schema changes ------------------------------------------ */
	{
		struct cf_family nf[2];
		cf_table_close(t);
		cf_table_open(db, "t", &t);
		put(t, "row", "cf", "q", CF_TS_NOW, "v");
		cf_family_default(&nf[0], "cf");
		nf[0].versions = 5;
		cf_family_default(&nf[1], "extra");
		is_int(cf_table_alter(t, nf, 2), CF_OK, "add a family, change one");
		cf_table_schema(t, &sch, &n);
		ok(n == 2 && sch[0].versions == 5 && !strcmp(sch[1].name, "extra"),
		   "the schema is what was written");
		free(sch);
		is_int(put(t, "row", "extra", "q", CF_TS_NOW, "x"), CF_OK,
		       "the new family takes writes");
		is_int(cf_table_alter(t, nf + 1, 1), CF_OK, "drop family cf");
		is_str(get_str(t, "row", NULL), "extra:q@1700000000000=x",
		       "its data went with it");
		is_int(cf_table_alter(t, nf, 2), CF_OK, "add cf back");
		is_str(get_str(t, "row", NULL), "extra:q@1700000000000=x",
		       "and the old cells do not come back");
	}

	/* --- drop ---------------------------------------------------- */
	is_int(cf_table_drop(db, "t", 1), CF_ENOTEMPTY,
	       "dropping a table with cells only-if-empty is ENOTEMPTY");
	is_int(cf_table_drop(db, "t", 0), CF_OK, "drop with data");
	is_int(put(t, "r", "extra", "q", CF_TS_NOW, "v"), CF_ECLOSED,
	       "a handle on a dropped table is closed");
	cf_table_close(t);
	cf_family_default(&fams[0], "cf");
	cf_table_create(db, "empty", fams, 1);
	is_int(cf_table_drop(db, "empty", 1), CF_OK, "an empty table drops");
	{
		struct cf_stats s0, s1;
		cf_db_stats(db, &s0);
		put(w, "stats", "anchor", "a", CF_TS_NOW, "1");
		put(w, "stats", "anchor", "b", CF_TS_NOW, "2");
		put(w, "stats", "anchor", "c", CF_TS_NOW, "3");
		get_str(w, "stats", NULL);
		get_str(w, "stats", NULL);
		cf_table_flush(w);
		cf_db_stats(db, &s1);
		is_int(s1.puts - s0.puts, 3, "statistics count puts");
		is_int(s1.gets - s0.gets, 2, "and gets");
		is_int(s1.flushes - s0.flushes, 1, "and flushes");
		ok(s1.regions >= 4 && s1.store_files >= 1,
		   "and sizes (%" PRIu64 " regions, %" PRIu64 " files)",
		   s1.regions, s1.store_files);
	}
	/* WAL segments go once flushed past; stray files go at open */
	{
		char path[4300], stray[4400];
		struct cf_region_info *ri;
		size_t nr;
		int segs = 0;
		DIR *d;
		struct dirent *e;
		FILE *fp;
		cf_db_flush(db);
		cf_table_regions(w, &ri, &nr);
		snprintf(path, sizeof path, "%s/data/webtable/%016" PRIx64
			 "/anchor", dir, ri[0].id);
		cf_regions_free(ri, nr);
		snprintf(stray, sizeof stray, "%s/00000000000fffff.sst", path);
		fp = fopen(stray, "w");
		ok(fp != NULL, "a stray file in a family directory");
		if (fp)
			fclose(fp);
		cf_table_close(w);
		reopen();
		cf_table_open(db, "webtable", &w);
		ok(access(stray, F_OK) != 0,
		   "a file the catalog does not name is removed at open");
		cf_db_flush(db);
		snprintf(path, sizeof path, "%s/wal", dir);
		d = opendir(path);
		while (d && (e = readdir(d)))
			segs += strstr(e->d_name, ".log") != NULL;
		if (d)
			closedir(d);
		is_int(segs, 1, "flushed WAL segments are deleted, one remains");
	}
	cf_table_close(w);

	/* --- scans over store files outside their range -------------- */
	{
		/* file 1: a0..a9; file 2: a5's delete, m0..m9; memstore:
		 * z0..z9.  A scan leaves out files whose rows end before
		 * its start or begin at or past its stop (read.c,
		 * scan_iter); the rows it returns are the same. */
		struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };
		cf_table *st;
		char row[16];

		cf_family_default(&fams[0], "f");
		cf_table_create(db, "sk", fams, 1);
		cf_table_open(db, "sk", &st);
		for (int i = 0; i < 10; i++) {
			snprintf(row, sizeof row, "a%d", i);
			put(st, row, "f", "q", 100, row);
		}
		cf_db_flush(db);
		del(st, CF_DEL_ROW, "a5", NULL, NULL, 200);
		for (int i = 0; i < 10; i++) {
			snprintf(row, sizeof row, "m%d", i);
			put(st, row, "f", "q", 100, row);
		}
		cf_db_flush(db);
		for (int i = 0; i < 10; i++) {
			snprintf(row, sizeof row, "z%d", i);
			put(st, row, "f", "q", 100, row);
		}
		so.start = "m";
		so.startlen = 1;
		is_str(scan_str(st, &so),
		       "m0 m1 m2 m3 m4 m5 m6 m7 m8 m9 z0 z1 z2 z3 z4 z5 z6 "
		       "z7 z8 z9", "scan from past a file's last row");
		so.start = "a";
		so.stop = "b";
		so.stoplen = 1;
		is_str(scan_str(st, &so), "a0 a1 a2 a3 a4 a6 a7 a8 a9",
		       "scan stopping before a file's first row, with a "
		       "delete in a newer file that overlaps");
		so.start = "a5";
		so.startlen = 2;
		so.stop = "a6";
		is_str(scan_str(st, &so), "", "a deleted row is not shown");
		so.start = "a8";
		so.stop = "m2";
		so.stoplen = 2;
		is_str(scan_str(st, &so), "a8 a9 m0 m1",
		       "scan across two files");
		so.start = "n";
		so.startlen = 1;
		so.stop = "y";
		so.stoplen = 1;
		is_str(scan_str(st, &so), "", "scan between all sources");
		so.start = "z9";
		so.startlen = 2;
		so.stop = NULL;
		so.stoplen = 0;
		is_str(scan_str(st, &so), "z9", "scan of the memstore only");
		so.start = "a9";
		so.limit = 2;
		is_str(scan_str(st, &so), "a9 m0", "short scan across files");
		cf_table_close(st);
	}

	/* --- versions of the empty qualifier across files ------------ */
	{
		/* read.c skips the empty qualifier's puts past VERSIONS but
		 * must still gather the DeleteFamily markers among them,
		 * which cover every column */
		struct cf_family ef[2];
		struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };
		cf_scanner *s;
		const cf_row *r;
		char got[1024], v[16];
		cf_table *et;

		cf_family_default(&ef[0], "f");
		ef[0].versions = 2;
		cf_family_default(&ef[1], "g");	/* the same, with a TTL */
		ef[1].versions = 2;
		ef[1].ttl = 1000000000;
		is_int(cf_table_create(db, "ev", ef, 2), CF_OK, "create ev");
		is_int(cf_table_open(db, "ev", &et), CF_OK, "open ev");
		for (int ts = 1; ts <= 10; ts++) {
			snprintf(v, sizeof v, "%d", ts);
			put(et, "r", "f", "", ts, v);
			put(et, "s", "f", "", ts, v);
			if (ts <= 3) {
				snprintf(v, sizeof v, "q%d", ts);
				put(et, "r", "f", "q", ts, v);
				put(et, "s", "f", "q", ts, v);
			}
			if (ts % 3 == 0)
				cf_table_flush(et);
		}
		del(et, CF_DEL_FAMILY, "r", "f", NULL, 3);
		is_str(get_str(et, "r", &all), "f:@10=10 f:@9=9",
		       "a family delete among skipped puts still masks the "
		       "other columns");
		is_str(get_str(et, "s", &all), "f:@10=10 f:@9=9 f:q@3=q3 f:q@2=q2",
		       "without one, VERSIONS of each column");
		so.read.max_versions = INT32_MAX;
		got[0] = 0;
		if (cf_scan_open(et, &so, &s) == CF_OK) {
			size_t used = 0;
			while (cf_scan_next(s, &r) == CF_OK && r) {
				size_t kl;
				const unsigned char *k = cf_row_key(r, &kl);
				used += (size_t)snprintf(got + used,
							 sizeof got - used,
							 "%s%.*s: ", used ? "; " : "",
							 (int)kl, k);
				render(r, got + used, sizeof got - used);
				used = strlen(got);
			}
			cf_scan_close(s);
		}
		is_str(got, "r: f:@10=10 f:@9=9; "
		       "s: f:@10=10 f:@9=9 f:q@3=q3 f:q@2=q2",
		       "a scan reads the same");

		/* classify_puts (puts only, no TTL) against the general
		 * classification (a TTL that does not expire within the
		 * test): random puts with colliding timestamps, across
		 * files */
		{
			uint64_t rs = 12345;
			int same = 1;
			struct cf_column cf_f = { "f", 1, NULL, 0 };
			struct cf_column cf_g = { "g", 1, NULL, 0 };
			struct cf_read_opts of = CF_READ_OPTS_INIT;
			struct cf_read_opts og = CF_READ_OPTS_INIT;
			of.columns = &cf_f;
			of.ncolumns = 1;
			of.max_versions = INT32_MAX;
			og = of;
			og.columns = &cf_g;
			for (int i = 0; i < 600; i++) {
				char row[16], q[4];
				int64_t ts;
				rs = rs * 6364136223846793005ULL +
				     1442695040888963407ULL;
				snprintf(row, sizeof row, "p%d",
					 (int)(rs >> 33) % 7);
				snprintf(q, sizeof q, "%.*s",
					 (int)(rs >> 40) % 3, "qq");
				ts = now - (int64_t)((rs >> 45) % 6);
				snprintf(v, sizeof v, "%d", i);
				put(et, row, "f", q, ts, v);
				put(et, row, "g", q, ts, v);
				if (i % 150 == 149)
					cf_table_flush(et);
			}
			for (int i = 0; i < 7 && same; i++) {
				char row[16], a[2048];
				const char *b;
				snprintf(row, sizeof row, "p%d", i);
				snprintf(a, sizeof a, "%s", get_str(et, row, &of));
				b = get_str(et, row, &og);
				for (char *c = a; *c; c++)
					if (c[0] == 'f' && c[1] == ':' &&
					    (c == a || c[-1] == ' '))
						c[0] = 'g';
				same = strcmp(a, b) == 0 && strlen(a) > 0;
				if (!same)
					diag("row %s: f %s, g %s", row, a, b);
			}
			ok(same, "puts without TTL classify as with a TTL "
			   "that never expires");
		}
		cf_table_close(et);
	}

	/* --- large values, not copied into the batch (cf_batch_put_ref) --
	 * Four over 64 KiB in one batch: the WAL record takes three from
	 * the batch as pieces of its pwritev(2), the fourth copied. */
	{
		size_t len[5] = { 200u << 10, 1u << 20, 10, 3u << 20,
				  70u << 10 };
		unsigned char *v[5];
		cf_table *bt;
		cf_batch *bb;
		int same = 1, stage;

		struct cf_family bf;

		cf_family_default(&bf, "cf");
		is_int(cf_table_create(db, "bigv", &bf, 1), CF_OK,
		       "create bigv");
		cf_table_open(db, "bigv", &bt);
		cf_batch_new(&bb);
		for (int i = 0; i < 5; i++) {
			char q[16];
			v[i] = malloc(len[i]);
			for (size_t j = 0; j < len[i]; j++)
				v[i][j] = (unsigned char)(j * 31 + i * 7 +
							  (j >> 12));
			snprintf(q, sizeof q, "big%d", i);
			cf_batch_put_ref(bb, "bigrow", 6, "cf", 2, q,
					 strlen(q), CF_TS_NOW, v[i], len[i]);
		}
		is_int(cf_table_apply(bt, bb), CF_OK,
		       "a batch of values put by reference applies");
		cf_batch_free(bb);
		/* the engine holds copies of its own */
		for (int i = 0; i < 5; i++)
			for (size_t j = 0; j < len[i]; j++)
				v[i][j] ^= 0x5a;
		for (stage = 0; stage < 3 && same; stage++) {
			cf_row *r = NULL;
			if (stage == 1) {
				cf_table_close(bt);
				reopen();	/* from the WAL */
				cf_table_open(db, "bigv", &bt);
			} else if (stage == 2) {
				cf_table_flush(bt);
				cf_table_close(bt);
				reopen();	/* from a store file */
				cf_table_open(db, "bigv", &bt);
			}
			if (cf_table_get(bt, "bigrow", 6, NULL, &r) ||
			    cf_row_count(r) != 5)
				same = 0;
			for (size_t i = 0; same && i < 5; i++) {
				const struct cf_cell *c = cf_row_cell(r, i);
				int k = c->qual ? ((const char *)c->qual)[3] -
						  '0' : -1;
				if (k < 0 || k > 4 || c->vlen != len[k]) {
					same = 0;
					break;
				}
				for (size_t j = 0; j < len[k]; j++)
					if ((((const unsigned char *)c->val)[j]
					     ^ 0x5a) != v[k][j]) {
						same = 0;
						break;
					}
			}
			cf_row_free(r);
			if (!same)
				diag("stage %d: values differ", stage);
		}
		ok(same, "values put by reference read back byte-exact, "
		   "after replay of the WAL and after a flush");
		for (int i = 0; i < 5; i++)
			free(v[i]);
		cf_table_close(bt);
	}

	/* --- large values kept where they were read (iter_pin) ----------
	 * A Get keeps a value of 64 KiB or more in the store file's block
	 * instead of copying it: two Gets of the same cell see the same
	 * bytes at the same address, and a row keeps its values through an
	 * overwrite, a flush, a major compaction that deletes the file they
	 * came from, a scan, and the db's close.  From a memstore a value is
	 * copied (a row must not keep a whole memstore). */
	{
		enum { BIG = 1 << 20, MID = 100 << 10 };
		cf_table *pt;
		cf_row *m1 = NULL, *m2 = NULL, *f1 = NULL, *f2 = NULL;
		const struct cf_cell *a, *b;
		struct cf_family pf;
		unsigned char *val = malloc(BIG);
		int ok_all = 1;

		cf_family_default(&pf, "cf");
		is_int(cf_table_create(db, "pinv", &pf, 1), CF_OK,
		       "create pinv");
		cf_table_open(db, "pinv", &pt);
		pin_fill(val, 1, BIG);
		is_int(put_n(pt, "prow", "cf", "big", CF_TS_NOW, val, BIG),
		       CF_OK, "put 1 MiB");
		pin_fill(val, 7, MID);
		is_int(put_n(pt, "prow", "cf", "mid", CF_TS_NOW, val, MID),
		       CF_OK, "put 100 KiB");
		is_int(put(pt, "prow", "cf", "small", CF_TS_NOW, "tiny"),
		       CF_OK, "put 4 bytes");
		ok(!cf_table_get(pt, "prow", 4, NULL, &m1) &&
		   !cf_table_get(pt, "prow", 4, NULL, &m2) &&
		   cf_row_count(m1) == 3 && cf_row_count(m2) == 3,
		   "two Gets from the memstore");
		a = cf_row_cell(m1, 0);	/* big, mid, small */
		b = cf_row_cell(m2, 0);
		ok(a->vlen == BIG && a->val != b->val &&
		   pin_same(a, 1, BIG) && pin_same(b, 1, BIG) &&
		   cf_row_cell(m1, 1)->val != cf_row_cell(m2, 1)->val,
		   "each has its own copy of the memstore's values");
		cf_row_free(m2);
		/* overwrite, flush, compact: the memstore m1 read from is
		 * gone from the region */
		pin_fill(val, 2, BIG);
		is_int(rewrite(pt, val, BIG), CF_OK,
		       "overwrite, flush, major compaction");
		ok_all &= pin_same(cf_row_cell(m1, 0), 1, BIG) &&
			  pin_same(cf_row_cell(m1, 1), 7, MID) &&
			  cf_row_cell(m1, 2)->vlen == 4 &&
			  !memcmp(cf_row_cell(m1, 2)->val, "tiny", 4);
		ok(ok_all, "the first row still holds the values it read");
		ok(!cf_table_get(pt, "prow", 4, NULL, &f1) &&
		   !cf_table_get(pt, "prow", 4, NULL, &f2) &&
		   cf_row_count(f1) == 3 &&
		   pin_same(cf_row_cell(f1, 0), 2, BIG) &&
		   pin_same(cf_row_cell(f1, 1), 7, MID) &&
		   cf_row_cell(f1, 0)->val == cf_row_cell(f2, 0)->val &&
		   cf_row_cell(f1, 1)->val == cf_row_cell(f2, 1)->val &&
		   cf_row_cell(f1, 2)->val != cf_row_cell(f2, 2)->val,
		   "two Gets from the store file: the new value, both "
		   "pointing into the same cached blocks for the large "
		   "values, each with its own copy of the small one");
		cf_row_free(f2);
		pin_fill(val, 3, BIG);
		is_int(rewrite(pt, val, BIG), CF_OK,
		       "again (the file f1 read from is deleted)");
		ok(pin_same(cf_row_cell(f1, 0), 2, BIG) &&
		   pin_same(cf_row_cell(f1, 1), 7, MID),
		   "the second row still holds the values it read");
		{
			struct cf_scan_opts so = { CF_READ_OPTS_INIT, NULL, 0,
						   NULL, 0, NULL, 0, 0, 0, 0 };
			cf_scanner *sc;
			const cf_row *sr;
			int rows = 0, good = 0;
			pin_fill(val, 4, MID);
			put_n(pt, "qrow", "cf", "mid", CF_TS_NOW, val, MID);
			if (!cf_scan_open(pt, &so, &sc)) {
				while (cf_scan_next(sc, &sr) == CF_OK && sr) {
					rows++;
					good += pin_same(cf_row_cell(sr, 0),
							 rows == 1 ? 3 : 4,
							 rows == 1 ? BIG : MID);
				}
				cf_scan_close(sc);
			}
			ok(rows == 2 && good == 2,
			   "a scan reads the large values of each row "
			   "(%d rows, %d right)", rows, good);
		}
		cf_table_close(pt);
		reopen();
		ok(pin_same(cf_row_cell(f1, 0), 2, BIG) &&
		   pin_same(cf_row_cell(m1, 0), 1, BIG),
		   "rows keep their values after the db is closed");
		cf_row_free(f1);
		cf_row_free(m1);
		free(val);
	}
	cf_db_close(db);
	buf_release(&b);
	tap_rmdir(dir);
	cf_log_release();
	return done_testing();
}
