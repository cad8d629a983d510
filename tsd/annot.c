/*
 * annot.c: OpenTSDB's annotations (meta/Annotation and AnnotationRpc's
 * rules) on table tsdb-annotation (docs/api.md, "Annotations").
 *
 * A note is a cell: its row is the row key of the series' data row for
 * the hour of its start (the metric UID, the base hour, the tag UIDs) or,
 * for a global note, three zero bytes and the base hour; family "t";
 * qualifier 0x01 then the start's offset in that hour (2 bytes of
 * seconds, or 4 of milliseconds); value the note as OpenTSDB stores it
 * (getStorageJSON).  OpenTSDB keeps these cells in the data table's rows;
 * here they have a table of their own, so that a query finds them with a
 * scan of notes only, whatever holds the points (store files, the recent
 * points), and writing one leaves the recent points valid.
 *
 * Changes are read, merged and written with a check-and-put on the
 * cell's old value (OpenTSDB's compareAndSet), tried again if another
 * writer came first.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsd/codec.h"
#include "tsd/internal.h"
#include "tsd/query.h"
#include "util/coding.h"
#include "util/env.h"
#include "util/err.h"
#include "util/log.h"

#define NOTE_PREFIX 0x01
#define NOTE_KEY_MAX TSD_ROWKEY_MAX
/* Deletes of a range applied at a time. */
#define NOTE_DEL_BATCH 10000
/* Check-and-put attempts before a change gives up (CF_EBUSY). */
#define SYNC_TRIES 8

/* A note as parsed; given: the fields a request set to a new value
 * (Annotation's "changed" map). */
struct note {
	char *tsuid;		/* "" global */
	int64_t start, end;
	char *desc, *notes;
	json_t *custom;		/* an object of strings, or NULL */
	unsigned given;
};

enum { G_END = 1, G_DESC = 2, G_NOTES = 4, G_CUSTOM = 8 };

static void note_free(struct note *n)
{
	free(n->tsuid);
	free(n->desc);
	free(n->notes);
	json_decref(n->custom);
	memset(n, 0, sizeof *n);
}

static char *dup0(const char *s)
{
	return strdup(s ? s : "");
}

/* A long as Jackson reads one: a JSON integer, or a string of digits. */
static int get_long(json_t *v, int64_t *out)
{
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		char *e;
		long long x;
		if (!*s)
			return -1;
		errno = 0;
		x = strtoll(s, &e, 10);
		if (*e || errno)
			return -1;
		*out = x;
		return 0;
	}
	return -1;
}

/* The note of JSON object o, as Jackson fills an Annotation: unknown
 * fields ignored; a field counts as given when it differs from the
 * default (Annotation's setters).  CF_EINVAL with *err. */
static int note_parse(json_t *o, struct note *n, struct tsd_error *err)
{
	json_t *v;
	const char *k;

	memset(n, 0, sizeof *n);
	if (!(n->tsuid = dup0("")) || !(n->desc = dup0("")) ||
	    !(n->notes = dup0("")))
		return CF_ENOMEM;
	if (!json_is_object(o)) {
		tsd_errf(err, "an annotation is not a JSON object");
		return CF_EINVAL;
	}
	json_object_foreach(o, k, v) {
		char **s = NULL;
		unsigned g = 0;
		if (!strcmp(k, "tsuid"))
			s = &n->tsuid;
		else if (!strcmp(k, "description"))
			s = &n->desc, g = G_DESC;
		else if (!strcmp(k, "notes"))
			s = &n->notes, g = G_NOTES;
		if (s) {
			if (json_is_null(v))
				continue;
			if (!json_is_string(v)) {
				tsd_errf(err, "annotation field %s is not a "
					"string", k);
				return CF_EINVAL;
			}
			if (**s == '\0' && !json_string_length(v))
				continue;
			free(*s);
			if (!(*s = strdup(json_string_value(v))))
				return CF_ENOMEM;
			n->given |= g;
		} else if (!strcmp(k, "startTime") || !strcmp(k, "endTime")) {
			int64_t x;
			if (json_is_null(v))
				continue;
			if (get_long(v, &x)) {
				tsd_errf(err, "annotation field %s is not a "
					"number", k);
				return CF_EINVAL;
			}
			if (k[0] == 's')
				n->start = x;
			else if (x != n->end) {
				n->end = x;
				n->given |= G_END;
			}
		} else if (!strcmp(k, "custom")) {
			json_t *cv;
			const char *ck;
			if (json_is_null(v))
				continue;
			if (!json_is_object(v)) {
				tsd_errf(err, "annotation field custom is not "
					"an object");
				return CF_EINVAL;
			}
			json_object_foreach(v, ck, cv)
				if (!json_is_string(cv) && !json_is_null(cv)) {
					tsd_errf(err, "a custom value of an "
						"annotation is not a string");
					return CF_EINVAL;
				}
			json_decref(n->custom);
			n->custom = json_incref(v);
			n->given |= G_CUSTOM;
		}
	}
	return CF_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* custom with its keys sorted (a TreeMap), or null. */
static json_t *sorted_custom(json_t *c)
{
	const char **keys;
	const char *k;
	json_t *v, *o;
	size_t n = 0;

	if (!c)
		return json_null();
	if (!(keys = malloc((json_object_size(c) + 1) * sizeof *keys)) ||
	    !(o = json_object())) {
		free(keys);
		return NULL;
	}
	json_object_foreach(c, k, v)
		keys[n++] = k;
	qsort(keys, n, sizeof *keys, cmp_str);
	for (size_t i = 0; i < n; i++)
		if (json_object_set(o, keys[i], json_object_get(c, keys[i]))) {
			json_decref(o);
			o = NULL;
			break;
		}
	free(keys);
	return o;
}

/* The note as JSON: storage (getStorageJSON: tsuid only when set, custom
 * null when none) or the API's (Jackson on Annotation's getters: tsuid
 * always, custom left out when none). */
static json_t *note_json(const struct note *n, int storage)
{
	json_t *o = json_object(), *c = NULL;

	if (!o)
		return NULL;
	if ((!storage || n->tsuid[0]) &&
	    json_object_set_new(o, "tsuid", json_string(n->tsuid)))
		goto bad;
	if (json_object_set_new(o, "startTime", json_integer(n->start)) ||
	    json_object_set_new(o, "endTime", json_integer(n->end)) ||
	    json_object_set_new(o, "description", json_string(n->desc)) ||
	    json_object_set_new(o, "notes", json_string(n->notes)))
		goto bad;
	if (n->custom || storage) {
		if (!(c = sorted_custom(n->custom)) ||
		    json_object_set_new(o, "custom", c))
			goto bad;
	}
	return o;
bad:
	json_decref(o);
	return NULL;
}

static int dump_to(json_t *j, struct buf *out)
{
	size_t need = json_dumpb(j, NULL, 0, JSON_COMPACT);
	int rc;

	if (need == 0)
		return CF_ENOMEM;
	if ((rc = buf_reserve(out, need)))
		return rc;
	json_dumpb(j, (char *)out->p + out->len, need, JSON_COMPACT);
	out->len += need;
	return CF_OK;
}

/* The note's row key (getRowKey) and qualifier (getQualifier: a start
 * in milliseconds on a whole second is stored as seconds). */
static int note_cell(const char *tsuid, int64_t start, unsigned char *key,
		     size_t *klen, unsigned char *q, size_t *qlen,
		     struct tsd_error *err)
{
	unsigned char b[TSD_UID_WIDTH + TSD_MAX_TAGS * 6];
	size_t n = 0;
	int64_t ts = start;
	uint32_t base;
	int rc;

	if (start < 1) {
		tsd_errf(err, "The start timestamp has not been set");
		return CF_EINVAL;
	}
	if (tsuid[0] && (rc = tsd_tsuid_bytes(tsuid, b, &n, err)))
		return rc;
	if (tsd_ts_is_ms(ts) && ts % 1000 == 0)
		ts /= 1000;
	base = tsd_base_time(ts);
	memset(key, 0, TSD_UID_WIDTH);
	if (n)
		memcpy(key, b, TSD_UID_WIDTH);
	enc_u32be(key + TSD_UID_WIDTH, base);
	if (n > TSD_UID_WIDTH)
		memcpy(key + TSD_ROWKEY_PREFIX, b + TSD_UID_WIDTH,
		       n - TSD_UID_WIDTH);
	*klen = TSD_ROWKEY_PREFIX + (n ? n - TSD_UID_WIDTH : 0);
	q[0] = NOTE_PREFIX;
	if (tsd_ts_is_ms(ts)) {
		enc_u32be(q + 1, (uint32_t)(ts - (int64_t)base * 1000));
		*qlen = 5;
	} else {
		uint32_t off = (uint32_t)(ts - base);
		q[1] = (unsigned char)(off >> 8);
		q[2] = (unsigned char)off;
		*qlen = 3;
	}
	return CF_OK;
}

/* timeFromQualifier: the start (ms) of a note cell of row hour base. */
static int64_t cell_time_ms(const unsigned char *q, size_t qlen,
			    uint32_t base)
{
	if (qlen == 3)
		return ((int64_t)base + (q[1] << 8 | q[2])) * 1000;
	return (int64_t)base * 1000 + dec_u32be(q + 1);
}

static int is_note_cell(const struct cf_cell *c)
{
	return (c->qlen == 3 || c->qlen == 5) && c->qual[0] == NOTE_PREFIX;
}

/* The note table, created when create is set and it is missing;
 * *out NULL (CF_OK) when missing and not created. */
static int note_table(tsd *t, int create, cf_table **out)
{
	struct cf_family f;
	int rc = cf_table_open(t->db, TSD_TABLE_NOTE, out);

	if (rc != CF_ENOTFOUND)
		return rc;
	*out = NULL;
	if (!create)
		return CF_OK;
	cf_family_default(&f, "t");
	rc = cf_table_create(t->db, TSD_TABLE_NOTE, &f, 1);
	if (rc && rc != CF_EEXIST)
		return rc;
	return cf_table_open(t->db, TSD_TABLE_NOTE, out);
}

/* The stored note of a cell: *found 0 when none.  old (may be NULL)
 * gets its bytes. */
static int cell_get(cf_table *nt, const unsigned char *key, size_t klen,
		    const unsigned char *q, size_t qlen, struct note *n,
		    int *found, struct buf *old, struct tsd_error *err)
{
	struct cf_column col = { "t", 1, q, qlen };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	cf_row *row = NULL;
	json_t *j;
	json_error_t je;
	int rc;

	*found = 0;
	o.columns = &col;
	o.ncolumns = 1;
	if ((rc = cf_table_get(nt, key, klen, &o, &row)))
		return rc;
	if (cf_row_count(row) == 0) {
		cf_row_free(row);
		return CF_OK;
	}
	const struct cf_cell *c = cf_row_cell(row, 0);
	if (old && (rc = buf_append(old, c->val, c->vlen))) {
		cf_row_free(row);
		return rc;
	}
	j = json_loadb((const char *)c->val, c->vlen, 0, &je);
	cf_row_free(row);
	if (!j) {
		tsd_errf(err, "a stored annotation is not JSON: %s", je.text);
		return CF_ECORRUPT;
	}
	rc = note_parse(j, n, err);
	json_decref(j);
	if (rc) {
		note_free(n);
		return rc == CF_EINVAL ? CF_ECORRUPT : rc;
	}
	*found = 1;
	return CF_OK;
}

/* Replaces field *dst by src's. */
static int take_str(char **dst, const char *src)
{
	char *s = strdup(src);
	if (!s)
		return CF_ENOMEM;
	free(*dst);
	*dst = s;
	return CF_OK;
}

/* syncToStorage: n merged with the stored note (fields n did not change
 * taken from it, unless overwrite), written with a check-and-put on the
 * stored bytes; the result into *out (the API's JSON).  CF_EEXIST: n
 * changes nothing (HTTP 304). */
static int note_sync(cf_table *nt, struct note *n, int overwrite,
		     struct buf *out, struct tsd_error *err)
{
	unsigned char key[NOTE_KEY_MAX], q[5];
	size_t klen, qlen;
	int rc;

	if ((rc = note_cell(n->tsuid, n->start, key, &klen, q, &qlen, err)))
		return rc;
	if (!n->given) {
		tsd_errf(err, "No changes detected in Annotation data");
		return CF_EEXIST;
	}
	for (int attempt = 0; attempt < SYNC_TRIES; attempt++) {
		struct buf old = BUF_INIT, val = BUF_INIT;
		struct note s, m;
		cf_batch *b = NULL;
		json_t *j = NULL;
		int found, applied = 0;

		memset(&m, 0, sizeof m);
		rc = cell_get(nt, key, klen, q, qlen, &s, &found, &old, err);
		if (rc == CF_OK && !(m.tsuid = strdup(n->tsuid)))
			rc = CF_ENOMEM;
		if (rc)
			goto next;
		m.start = n->start;
		m.end = n->end;
		if ((rc = take_str(&m.desc, n->desc)) ||
		    (rc = take_str(&m.notes, n->notes)))
			goto next;
		m.custom = n->custom ? json_incref(n->custom) : NULL;
		if (found) {
			if (s.start > 0 && s.start < m.start)
				m.start = s.start;
			if (!overwrite && !(n->given & G_END))
				m.end = s.end;
			if (!overwrite && !(n->given & G_DESC) &&
			    (rc = take_str(&m.desc, s.desc)))
				goto next;
			if (!overwrite && !(n->given & G_NOTES) &&
			    (rc = take_str(&m.notes, s.notes)))
				goto next;
			if (!overwrite && !(n->given & G_CUSTOM)) {
				json_decref(m.custom);
				m.custom = s.custom ? json_incref(s.custom)
						    : NULL;
			}
		}
		if (!(j = note_json(&m, 1)) || dump_to(j, &val) ||
		    cf_batch_new(&b)) {
			rc = CF_ENOMEM;
			goto next;
		}
		rc = cf_batch_put(b, key, klen, "t", 1, q, qlen, CF_TS_NOW,
				  val.p, val.len);
		if (rc == CF_OK)
			rc = cf_table_check_and_apply(nt, key, klen, "t", 1, q,
						      qlen, found ? old.p : NULL,
						      old.len, b, &applied);
		if (rc == CF_OK && applied) {
			json_decref(j);
			j = note_json(&m, 0);
			rc = j ? dump_to(j, out) : CF_ENOMEM;
		}
next:
		json_decref(j);
		cf_batch_free(b);
		buf_release(&old);
		buf_release(&val);
		if (found)
			note_free(&s);
		note_free(&m);
		if (rc || applied)
			return rc;
	}
	tsd_errf(err, "Failed to save the Annotation to storage");
	return CF_EBUSY;
}

int tsd_note_sync(tsd *t, const char *body, size_t len, int bulk,
		  int overwrite, struct buf *out, struct tsd_error *err)
{
	json_error_t je;
	json_t *j = json_loadb(body, len, 0, &je), *e;
	cf_table *nt = NULL;
	size_t i, done = 0;
	int rc;

	if (!j) {
		tsd_errf(err, "Unable to parse the given JSON: %s", je.text);
		return CF_EINVAL;
	}
	if (bulk && !json_is_array(j)) {
		tsd_errf(err, "Unable to parse the given JSON: not an array of "
			"annotations");
		json_decref(j);
		return CF_EINVAL;
	}
	if ((rc = note_table(t, 1, &nt)))
		goto out;
	if (!bulk) {
		struct note n;
		rc = note_parse(j, &n, err);
		if (rc == CF_OK)
			rc = note_sync(nt, &n, overwrite, out, err);
		note_free(&n);
		goto out;
	}
	/* AnnotationRpc.executeBulkUpdate: each in turn, those without a
	 * change left out of the answer; the first error stops */
	if ((rc = buf_putc(out, '[')))
		goto out;
	json_array_foreach(j, i, e) {
		struct note n;
		size_t mark = out->len;
		if (done && (rc = buf_putc(out, ',')))
			break;
		rc = note_parse(e, &n, err);
		if (rc == CF_OK)
			rc = note_sync(nt, &n, overwrite, out, err);
		note_free(&n);
		if (rc == CF_EEXIST) {
			out->len = mark;
			rc = CF_OK;
			continue;
		}
		if (rc)
			break;
		done++;
	}
	if (rc == CF_OK)
		rc = buf_putc(out, ']');
out:
	cf_table_close(nt);
	json_decref(j);
	return rc;
}

int tsd_note_get(tsd *t, const char *tsuid, int64_t start, struct buf *out,
		 struct tsd_error *err)
{
	unsigned char key[NOTE_KEY_MAX], q[5];
	size_t klen, qlen;
	cf_table *nt = NULL;
	struct note n;
	json_t *j;
	int rc, found = 0;

	if ((rc = note_cell(tsuid, start, key, &klen, q, &qlen, err)) ||
	    (rc = note_table(t, 0, &nt)))
		return rc;
	if (nt)
		rc = cell_get(nt, key, klen, q, qlen, &n, &found, NULL, err);
	cf_table_close(nt);
	if (rc)
		return rc;
	if (!found) {
		tsd_errf(err, "Unable to locate annotation in storage");
		return CF_ENOTFOUND;
	}
	rc = (j = note_json(&n, 0)) ? dump_to(j, out) : CF_ENOMEM;
	json_decref(j);
	note_free(&n);
	return rc;
}

int tsd_note_delete(tsd *t, const char *tsuid, int64_t start,
		    struct tsd_error *err)
{
	unsigned char key[NOTE_KEY_MAX], q[5];
	size_t klen, qlen;
	cf_table *nt = NULL;
	cf_batch *b = NULL;
	int rc;

	if ((rc = note_cell(tsuid, start, key, &klen, q, &qlen, err)) ||
	    (rc = note_table(t, 0, &nt)) || !nt)
		return rc;
	if ((rc = cf_batch_new(&b)) == CF_OK &&
	    (rc = cf_batch_delete(b, CF_DEL_COLUMN, key, klen, "t", 1, q, qlen,
				  CF_TS_NOW)) == CF_OK)
		rc = cf_table_apply(nt, b);
	cf_batch_free(b);
	cf_table_close(nt);
	return rc;
}

/* The rows of one metric (muid; 0 with global: the global notes) from
 * the hour of start_ms to the hour of end_ms: each note cell whose start
 * lies in [start_ms, end_ms] goes to fn with its row's tags. */
typedef int note_fn(void *arg, const unsigned char *tags, size_t ntags,
		    const struct cf_cell *c, int64_t ms);

static int scan_notes(cf_table *nt, uint32_t muid, int64_t start_ms,
		      int64_t end_ms, note_fn *fn, void *arg)
{
	unsigned char from[TSD_ROWKEY_PREFIX], to[TSD_ROWKEY_PREFIX];
	struct cf_scan_opts so;
	cf_scanner *s = NULL;
	const cf_row *row;
	int64_t hs, he;
	int rc;

	if (end_ms < start_ms || end_ms < 0)
		return CF_OK;
	hs = start_ms < 0 ? 0 : start_ms / 1000;
	hs -= hs % TSD_MAX_TIMESPAN;
	he = end_ms / 1000;
	he = he - he % TSD_MAX_TIMESPAN + TSD_MAX_TIMESPAN;
	if (!tsd_hour_scan(&so, from, to, muid, hs, he))
		return CF_OK;
	if ((rc = cf_scan_open(nt, &so, &s)))
		return rc;
	while ((rc = cf_scan_next(s, &row)) == CF_OK && row) {
		size_t klen;
		const unsigned char *key = cf_row_key(row, &klen);
		if (klen < TSD_ROWKEY_PREFIX ||
		    (klen - TSD_ROWKEY_PREFIX) % 6 ||
		    (muid == 0) != (klen == TSD_ROWKEY_PREFIX))
			continue;
		uint32_t base = dec_u32be(key + TSD_UID_WIDTH);
		for (size_t i = 0; i < cf_row_count(row) && rc == CF_OK; i++) {
			const struct cf_cell *c = cf_row_cell(row, i);
			int64_t ms;
			if (!is_note_cell(c))
				continue;
			ms = cell_time_ms(c->qual, c->qlen, base);
			if (ms >= start_ms && ms <= end_ms)
				rc = fn(arg, key + TSD_ROWKEY_PREFIX,
					(klen - TSD_ROWKEY_PREFIX) / 6, c, ms);
		}
		if (rc)
			break;
	}
	cf_scan_close(s);
	return rc;
}

/* --- the global notes of a range, and deletes of a range --------------- */

struct collect {
	json_t *arr;		/* the notes as the API prints them */
	const unsigned char *tags;	/* NULL: any row */
	size_t ntags;
	cf_batch *del;		/* deleting: their cells */
	const unsigned char *key;	/* ... of this row prefix */
	cf_table *nt;
	struct tsd_error *err;
	uint64_t n;
};

/* A stored note cell as the API prints it: NULL when it does not parse
 * (logged). */
static json_t *cell_note(const struct cf_cell *c)
{
	json_error_t je;
	json_t *j = json_loadb((const char *)c->val, c->vlen, 0, &je), *o;
	struct note n;

	if (!j || note_parse(j, &n, NULL) != CF_OK) {
		cf_log(CF_LOG_WARN, "tsd: an annotation that is not one: "
		       "%.*s", (int)(c->vlen > 80 ? 80 : c->vlen), c->val);
		if (j)
			note_free(&n);
		json_decref(j);
		return NULL;
	}
	json_decref(j);
	o = note_json(&n, 0);
	note_free(&n);
	return o;
}

static int collect_note(void *arg, const unsigned char *tags, size_t ntags,
			const struct cf_cell *c, int64_t ms)
{
	struct collect *x = arg;
	json_t *o;

	(void)ms;
	if (x->tags && (ntags != x->ntags ||
			memcmp(tags, x->tags, 6 * ntags)))
		return CF_OK;
	if (x->del) {
		unsigned char key[NOTE_KEY_MAX];
		int rc;
		/* deleted in batches: a range of any size in bounded memory */
		if (cf_batch_count(x->del) >= NOTE_DEL_BATCH &&
		    ((rc = cf_table_apply(x->nt, x->del))))
			return rc;
		if (cf_batch_count(x->del) >= NOTE_DEL_BATCH)
			cf_batch_clear(x->del);
		memcpy(key, x->key, TSD_UID_WIDTH);
		enc_u32be(key + TSD_UID_WIDTH,
			  (uint32_t)((ms / 1000) - (ms / 1000) %
				     TSD_MAX_TIMESPAN));
		memcpy(key + TSD_ROWKEY_PREFIX, tags, 6 * ntags);
		x->n++;
		return cf_batch_delete(x->del, CF_DEL_COLUMN, key,
				       TSD_ROWKEY_PREFIX + 6 * ntags, "t", 1,
				       c->qual, c->qlen, CF_TS_NOW);
	}
	if (x->n >= TSD_NOTES_MAX) {
		tsd_errf(x->err, "more than %d annotations in the range",
			TSD_NOTES_MAX);
		return CF_ETOOBIG;
	}
	if (!(o = cell_note(c)))
		return CF_OK;
	x->n++;
	return json_array_append_new(x->arr, o) ? CF_ENOMEM : CF_OK;
}

int tsd_note_range(tsd *t, const char *tsuid, int64_t start_ms,
		   int64_t end_ms, int del, struct buf *out, uint64_t *count,
		   struct tsd_error *err)
{
	unsigned char b[TSD_UID_WIDTH + TSD_MAX_TAGS * 6] = { 0 };
	struct collect x;
	cf_table *nt = NULL;
	size_t n = 0;
	int rc;

	memset(&x, 0, sizeof x);
	if (count)
		*count = 0;
	if (tsuid && tsuid[0] && (rc = tsd_tsuid_bytes(tsuid, b, &n, err)))
		return rc;
	if (t && (rc = note_table(t, 0, &nt)))
		return rc;
	if (!(x.arr = json_array())) {
		cf_table_close(nt);
		return CF_ENOMEM;
	}
	x.key = b;
	x.nt = nt;
	x.err = err;
	x.tags = n ? b + TSD_UID_WIDTH : NULL;
	x.ntags = n ? (n - TSD_UID_WIDTH) / 6 : 0;
	if (del && (rc = cf_batch_new(&x.del)))
		goto out;
	if (nt)
		rc = scan_notes(nt, n ? tsd_uid_get(b) : 0, start_ms, end_ms,
				collect_note, &x);
	if (rc == CF_OK && del && cf_batch_count(x.del))
		rc = cf_table_apply(nt, x.del);
	if (rc == CF_OK && out && !del)
		rc = dump_to(x.arr, out);
	if (rc == CF_OK && count)
		*count = x.n;
out:
	cf_batch_free(x.del);
	json_decref(x.arr);
	cf_table_close(nt);
	return rc;
}

/* --- for queries (tsd/exec.c) ------------------------------------------ */

struct qnotes {
	tsd_note_fn *fn;
	void *arg;
};

static int query_note(void *arg, const unsigned char *tags, size_t ntags,
		      const struct cf_cell *c, int64_t ms)
{
	struct qnotes *x = arg;
	json_t *o = cell_note(c);
	struct buf text = BUF_INIT;
	int rc;

	if (!o)
		return CF_OK;
	rc = dump_to(o, &text);
	json_decref(o);
	if (rc == CF_OK)
		rc = x->fn(x->arg, tags, ntags, ms, (const char *)text.p,
			   text.len);
	buf_release(&text);
	return rc;
}

int tsd_notes_of(tsd *t, uint32_t muid, int64_t start_ms, int64_t end_ms,
		 tsd_note_fn *fn, void *arg)
{
	struct qnotes x = { fn, arg };
	cf_table *nt = NULL;
	int rc;

	if ((rc = note_table(t, 0, &nt)) || !nt)
		return rc;
	rc = scan_notes(nt, muid, start_ms, end_ms, query_note, &x);
	cf_table_close(nt);
	return rc;
}

/* --- MNT/tsd/annotations/QUERY ---------------------------------------- */

int tsd_note_qs(tsd *t, const char *qs, size_t len, int del, struct buf *out,
		uint64_t *count, struct tsd_error *err)
{
	int64_t start = 0, end = 0, now = env_now_ms();
	char *tsuid = NULL;
	int rc = CF_OK;

	for (size_t b = 0, i = 0; i <= len && rc == CF_OK; i++) {
		if (i < len && qs[i] != '&')
			continue;
		const char *item = qs + b, *eq;
		size_t ilen = i - b;
		char *v;
		b = i + 1;
		if (!ilen)
			continue;
		if (!(eq = memchr(item, '=', ilen))) {
			tsd_errf(err, "not KEY=VALUE: %.*s",
				(int)(ilen > 80 ? 80 : ilen), item);
			rc = CF_EINVAL;
			break;
		}
		if (!(v = tsd_pct_decode(eq + 1, ilen - (size_t)(eq - item) -
					 1))) {
			rc = CF_ENOMEM;
			break;
		}
		size_t kl = (size_t)(eq - item);
		if ((kl == 10 && !memcmp(item, "start_time", 10)) ||
		    (kl == 8 && !memcmp(item, "end_time", 8))) {
			int64_t *dst = kl == 10 ? &start : &end;
			if (tsd_parse_time(v, strlen(v), now, dst) || *dst < 1) {
				tsd_errf(err, "invalid %.*s: %.80s", (int)kl,
					item, v);
				rc = CF_EINVAL;
			}
			free(v);
		} else if (kl == 5 && !memcmp(item, "tsuid", 5)) {
			free(tsuid);
			tsuid = v;
		} else {
			tsd_errf(err, "unknown parameter: %.*s",
				(int)(kl > 80 ? 80 : kl), item);
			free(v);
			rc = CF_EINVAL;
		}
	}
	if (rc == CF_OK && start < 1) {
		tsd_errf(err, "Missing start time");
		rc = CF_EINVAL;
	}
	if (rc == CF_OK)
		rc = tsd_note_range(t, tsuid, start, end ? end : now, del, out,
				    count, err);
	free(tsuid);
	return rc;
}
