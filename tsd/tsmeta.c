/*
 * tsmeta.c: OpenTSDB's series meta data (meta/TSMeta, UniqueIdRpc's
 * /api/uid/tsmeta, TSUIDQuery.getTSMetas; docs/api.md): a display name,
 * a description, notes, a creation time, custom string pairs, units, a
 * data type, a retention and a max and min of a series, kept where
 * OpenTSDB keeps them: table tsdb-meta, the row the series' TSUID,
 * family "name", qualifier "ts_meta" (getStorageJSON's text) beside
 * "ts_ctr" (an 8-byte counter: the points written, or 1, its timestamp
 * the series' last write).
 *
 * Changes are read, merged and written with a check-and-put on the
 * stored bytes (OpenTSDB's compareAndSet), tried again when another
 * writer came first.  Writes keep the meta up to date as OpenTSDB's
 * tsd.core.meta options say (tsd_tsmeta_track, struct tsd_options).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tsd/internal.h"
#include "tsd/json.h"
#include "tsd/number.h"
#include "tsd/query.h"
#include "tsd/tree.h"
#include "util/err.h"
#include "util/log.h"

#define META_TRIES 8	/* check-and-put attempts before CF_EBUSY */
#define TSUID_MAX (TSD_UID_WIDTH + TSD_MAX_TAGS * 2 * TSD_UID_WIDTH)
#define PAIR (2 * TSD_UID_WIDTH)

static const char FAM[] = "name", QMETA[] = "ts_meta", QCTR[] = "ts_ctr";

/* TSMeta's fields; given: those a request changed (TSMeta's "changed"
 * map: a setter marks a field when the value differs from the one it
 * had, which for max and min, NaN at first, is always). */
struct tmeta {
	unsigned char key[TSUID_MAX];
	size_t klen;
	char *display, *desc, *notes, *units, *dtype;
	json_t *custom;		/* an object of strings, or NULL */
	int64_t created, retention;
	double max, min;
	unsigned given;
	int64_t last_received, total;
};

enum {
	M_DISPLAY = 1, M_DESC = 2, M_NOTES = 4, M_UNITS = 8, M_DTYPE = 16,
	M_CUSTOM = 32, M_CREATED = 64, M_RETENTION = 128, M_MAX = 256,
	M_MIN = 512
};

static int tmeta_init(struct tmeta *m)
{
	memset(m, 0, sizeof *m);
	m->max = m->min = NAN;
	if (tsd_set_str(&m->display, "") || tsd_set_str(&m->desc, "") ||
	    tsd_set_str(&m->notes, "") || tsd_set_str(&m->units, "") ||
	    tsd_set_str(&m->dtype, ""))
		return CF_ENOMEM;
	return CF_OK;
}

static void tmeta_free(struct tmeta *m)
{
	free(m->display);
	free(m->desc);
	free(m->notes);
	free(m->units);
	free(m->dtype);
	json_decref(m->custom);
	memset(m, 0, sizeof *m);
}

/* A double of the JSON: a number, or a string Jackson would coerce
 * ("NaN", "Infinity", "-Infinity", decimal text). */
static int json_double(json_t *v, double *d)
{
	const char *s;

	if (json_is_number(v)) {
		*d = json_number_value(v);
		return CF_OK;
	}
	if (!json_is_string(v))
		return CF_EINVAL;
	s = json_string_value(v);
	if (!strcmp(s, "NaN"))
		*d = NAN;
	else if (!strcmp(s, "Infinity"))
		*d = INFINITY;
	else if (!strcmp(s, "-Infinity"))
		*d = -INFINITY;
	else
		return tsd_parse_double(s, strlen(s), d);
	return CF_OK;
}

/* The fields of JSON object j into m (initialized): a request's (request
 * 1: sets m->given as TSMeta's setters would) or a stored meta's. */
static int tmeta_parse(json_t *j, struct tmeta *m, int request,
		       struct tsd_error *err)
{
	static const struct { const char *key; unsigned bit; } strs[] = {
		{ "displayName", M_DISPLAY }, { "description", M_DESC },
		{ "notes", M_NOTES }, { "units", M_UNITS },
		{ "dataType", M_DTYPE },
	};
	char **f[] = { &m->display, &m->desc, &m->notes, &m->units,
		       &m->dtype };
	json_t *v, *x;
	const char *k;
	int rc;

	if (!json_is_object(j)) {
		tsd_errf(err, "Unable to parse the given JSON: not an object");
		return CF_EINVAL;
	}
	for (size_t i = 0; i < 5; i++) {
		v = json_object_get(j, strs[i].key);
		if (!v || json_is_null(v))
			continue;
		if (!json_is_string(v)) {
			tsd_errf(err, "Unable to parse the given JSON: %s is not "
			     "a string", strs[i].key);
			return CF_EINVAL;
		}
		if (request && strcmp(*f[i], json_string_value(v)))
			m->given |= strs[i].bit;
		if ((rc = tsd_set_str(f[i], json_string_value(v))))
			return rc;
	}
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "retention" : "created";
		int64_t *dst = i ? &m->retention : &m->created;
		v = json_object_get(j, name);
		if (!v || json_is_null(v))
			continue;
		if (!json_is_integer(v) || (i && (json_integer_value(v) >
						  INT32_MAX ||
						  json_integer_value(v) <
						  INT32_MIN))) {
			tsd_errf(err, "Unable to parse the given JSON: %s is not "
			     "an integer", name);
			return CF_EINVAL;
		}
		if (request && *dst != json_integer_value(v))
			m->given |= i ? M_RETENTION : M_CREATED;
		*dst = json_integer_value(v);
	}
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "min" : "max";
		double d;
		v = json_object_get(j, name);
		if (!v || json_is_null(v))
			continue;
		if (json_double(v, &d)) {
			tsd_errf(err, "Unable to parse the given JSON: %s is not "
			     "a number", name);
			return CF_EINVAL;
		}
		*(i ? &m->min : &m->max) = d;
		if (request)	/* setMax: NaN != NaN, so always */
			m->given |= i ? M_MIN : M_MAX;
	}
	v = json_object_get(j, "custom");
	if (v && !json_is_null(v)) {
		if (!json_is_object(v)) {
			tsd_errf(err, "Unable to parse the given JSON: custom is "
			     "not an object");
			return CF_EINVAL;
		}
		json_object_foreach(v, k, x)
			if (!json_is_string(x)) {
				tsd_errf(err, "Unable to parse the given JSON: a "
				     "custom value is not a string");
				return CF_EINVAL;
			}
		json_decref(m->custom);
		if (!(m->custom = json_deep_copy(v)))
			return CF_ENOMEM;
		if (request)
			m->given |= M_CUSTOM;	/* setCustom: always */
	}
	return CF_OK;
}

/* --- text --------------------------------------------------------------- */

static int put_raw(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

/* ,"key":"value" (first: no comma). */
static int put_str(struct buf *b, const char *key, const char *v, int first)
{
	int rc = put_raw(b, first ? "\"" : ",\"");
	if (!rc)
		rc = put_raw(b, key);
	if (!rc)
		rc = put_raw(b, "\":");
	return rc ? rc : tsd_json_string(b, v, strlen(v));
}

static int put_long(struct buf *b, const char *key, int64_t v)
{
	int rc = put_raw(b, ",\"");
	if (!rc)
		rc = put_raw(b, key);
	if (!rc)
		rc = put_raw(b, "\":");
	return rc ? rc : tsd_buf_long(b, v);
}

/* A double as Jackson writes it: Double.toString's text, the
 * non-numbers quoted. */
static int put_double(struct buf *b, const char *key, double d)
{
	int rc = put_raw(b, ",\"");
	if (!rc)
		rc = put_raw(b, key);
	if (!rc)
		rc = put_raw(b, "\":");
	if (!rc && !isfinite(d))
		rc = put_raw(b, isnan(d) ? "\"NaN\"" : d > 0 ? "\"Infinity\"" :
			     "\"-Infinity\"");
	else if (!rc)
		rc = tsd_buf_double(b, d);
	return rc;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ,"custom":{...} with the keys sorted, or ,"custom":null. */
static int put_custom(struct buf *b, const json_t *custom)
{
	const char **keys;
	const char *k;
	json_t *v;
	size_t n = 0;
	int rc;

	if (!custom)
		return put_raw(b, ",\"custom\":null");
	keys = malloc((json_object_size(custom) + 1) * sizeof *keys);
	if (!keys)
		return CF_ENOMEM;
	json_object_foreach((json_t *)custom, k, v)
		keys[n++] = k;
	qsort(keys, n, sizeof *keys, cmp_key);
	rc = put_raw(b, ",\"custom\":{");
	for (size_t i = 0; !rc && i < n; i++) {
		const char *s = json_string_value(json_object_get(custom,
								  keys[i]));
		if (i)
			rc = put_raw(b, ",");
		if (!rc)
			rc = put_str(b, keys[i], s ? s : "", 1);
	}
	free(keys);
	return rc ? rc : put_raw(b, "}");
}

static void hex_of(const unsigned char *k, size_t n, char *out)
{
	static const char hx[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hx[k[i] >> 4];
		out[2 * i + 1] = hx[k[i] & 15];
	}
	out[2 * n] = '\0';
}

/* The UIDMeta of one UID of the series as the API prints it. */
static int put_uidmeta(tsd *t, const char *type, const unsigned char *id,
		       struct buf *b, struct tsd_error *err)
{
	char hex[2 * TSD_UID_WIDTH + 1];
	int rc;

	hex_of(id, TSD_UID_WIDTH, hex);
	rc = tsd_uidmeta_get(t, type, hex, b, err);
	if (rc == CF_ENOTFOUND)
		tsd_errf(err, "Unable to find one of the UIDs");
	return rc;
}

/* "metric":UIDMETA,"tags":[UIDMETA,...] as LoadUIDs loads them. */
static int put_uids(tsd *t, const struct tmeta *m, struct buf *b,
		    struct tsd_error *err)
{
	int rc = put_raw(b, ",\"metric\":");

	if (!rc)
		rc = put_uidmeta(t, "metric", m->key, b, err);
	if (!rc)
		rc = put_raw(b, ",\"tags\":[");
	for (size_t i = TSD_UID_WIDTH; !rc && i < m->klen;
	     i += TSD_UID_WIDTH) {
		if (i > TSD_UID_WIDTH)
			rc = put_raw(b, ",");
		if (!rc)
			rc = put_uidmeta(t, (i / TSD_UID_WIDTH) % 2 ? "tagk" :
					 "tagv", m->key + i, b, err);
	}
	return rc ? rc : put_raw(b, "]");
}

/* The fields of a TSMeta's JSON texts. */
enum tfield {
	F_UIDS, F_DISPLAY, F_DESC, F_NOTES, F_CREATED, F_CUSTOM,
	F_CUSTOM_SET, F_UNITS, F_DTYPE, F_RETENTION, F_MAX, F_MIN, F_LAST,
	F_TOTAL
};

/* getStorageJSON's order, and the API's (Jackson's: the fields whose
 * names match a getter's first, then the others; NON_NULL leaves out a
 * null custom). */
static const enum tfield storage_order[] = {
	F_DISPLAY, F_DESC, F_NOTES, F_CREATED, F_CUSTOM, F_UNITS, F_DTYPE,
	F_RETENTION, F_MAX, F_MIN,
};
static const enum tfield api_order[] = {
	F_UIDS, F_DESC, F_NOTES, F_CREATED, F_CUSTOM_SET, F_UNITS,
	F_RETENTION, F_MAX, F_MIN, F_DISPLAY, F_DTYPE, F_LAST, F_TOTAL,
};

/* {"tsuid":...} with the fields f[0..n) of m. */
static int put_meta(tsd *t, const struct tmeta *m, const enum tfield *f,
		    size_t n, struct buf *b, struct tsd_error *err)
{
	char hex[2 * TSUID_MAX + 1];
	int rc;

	hex_of(m->key, m->klen, hex);
	rc = put_raw(b, "{");
	if (!rc)
		rc = put_str(b, "tsuid", hex, 1);
	for (size_t i = 0; !rc && i < n; i++) {
		switch (f[i]) {
		case F_UIDS: rc = put_uids(t, m, b, err); break;
		case F_DISPLAY:
			rc = put_str(b, "displayName", m->display, 0);
			break;
		case F_DESC: rc = put_str(b, "description", m->desc, 0); break;
		case F_NOTES: rc = put_str(b, "notes", m->notes, 0); break;
		case F_CREATED: rc = put_long(b, "created", m->created); break;
		case F_CUSTOM: rc = put_custom(b, m->custom); break;
		case F_CUSTOM_SET:
			rc = m->custom ? put_custom(b, m->custom) : CF_OK;
			break;
		case F_UNITS: rc = put_str(b, "units", m->units, 0); break;
		case F_DTYPE: rc = put_str(b, "dataType", m->dtype, 0); break;
		case F_RETENTION:
			rc = put_long(b, "retention", m->retention);
			break;
		case F_MAX: rc = put_double(b, "max", m->max); break;
		case F_MIN: rc = put_double(b, "min", m->min); break;
		case F_LAST:
			rc = put_long(b, "lastReceived", m->last_received);
			break;
		case F_TOTAL:
			rc = put_long(b, "totalDatapoints", m->total);
			break;
		}
	}
	return rc ? rc : put_raw(b, "}");
}

/* getStorageJSON. */
static int storage_json(const struct tmeta *m, struct buf *b)
{
	return put_meta(NULL, m, storage_order,
			sizeof storage_order / sizeof storage_order[0], b,
			NULL);
}

/* The API's JSON of m, its UIDMetas loaded. */
static int api_json(tsd *t, const struct tmeta *m, struct buf *b,
		    struct tsd_error *err)
{
	return put_meta(t, m, api_order, sizeof api_order / sizeof api_order[0],
			b, err);
}

/* --- storage ------------------------------------------------------------ */

/* The meta table, created when create is set and it is missing; *out
 * NULL (CF_OK) when missing and not created. */
static int meta_table(tsd *t, int create, cf_table **out)
{
	struct cf_family f;
	int rc = cf_table_open(t->db, TSD_TABLE_META, out);

	if (rc != CF_ENOTFOUND)
		return rc;
	*out = NULL;
	if (!create)
		return CF_OK;
	cf_family_default(&f, FAM);
	rc = cf_table_create(t->db, TSD_TABLE_META, &f, 1);
	if (rc && rc != CF_EEXIST)
		return rc;
	return cf_table_open(t->db, TSD_TABLE_META, out);
}

static int64_t be64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return (int64_t)v;
}

/* The meta of a row's cells into m (initialized, key set): *has_meta
 * and *has_ctr say what was stored; old (may be NULL) gets the stored
 * meta's bytes.  A stored meta that is not one: CF_ECORRUPT. */
static int meta_cells(const cf_row *row, struct tmeta *m, int *has_meta,
		      int *has_ctr, struct buf *old, struct tsd_error *err)
{
	json_error_t je;
	json_t *j;
	int rc = CF_OK;

	*has_meta = *has_ctr = 0;
	for (size_t i = 0; rc == CF_OK && i < cf_row_count(row); i++) {
		const struct cf_cell *c = cf_row_cell(row, i);
		if (c->qlen == strlen(QCTR) && !memcmp(c->qual, QCTR,
						       c->qlen)) {
			*has_ctr = 1;
			m->total = c->vlen == 8 ? be64(c->val) : 0;
			m->last_received = c->ts / 1000;
			continue;
		}
		if (c->qlen != strlen(QMETA) || memcmp(c->qual, QMETA,
						       c->qlen))
			continue;
		if (old && (rc = buf_append(old, c->val, c->vlen)))
			break;
		if (!(j = json_loadb((const char *)c->val, c->vlen, 0, &je))) {
			tsd_errf(err, "a stored TSMeta is not JSON: %s", je.text);
			rc = CF_ECORRUPT;
			break;
		}
		rc = tmeta_parse(j, m, 0, err);
		json_decref(j);
		if (rc == CF_EINVAL)
			rc = CF_ECORRUPT;
		*has_meta = rc == CF_OK;
	}
	return rc;
}

/* The stored meta of m->key into s (initialized here, key copied). */
static int meta_read(cf_table *mt, const struct tmeta *m, struct tmeta *s,
		     int *has_meta, int *has_ctr, struct buf *old,
		     struct tsd_error *err)
{
	struct cf_column col[2] = { { FAM, 4, QCTR, strlen(QCTR) },
				    { FAM, 4, QMETA, strlen(QMETA) } };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	cf_row *row = NULL;
	int rc;

	*has_meta = *has_ctr = 0;
	if ((rc = tmeta_init(s)))
		return rc;
	memcpy(s->key, m->key, m->klen);
	s->klen = m->klen;
	if (!mt)
		return CF_OK;
	o.columns = col;
	o.ncolumns = 2;
	if ((rc = cf_table_get(mt, m->key, m->klen, &o, &row)) == CF_OK)
		rc = meta_cells(row, s, has_meta, has_ctr, old, err);
	cf_row_free(row);
	return rc;
}

/* Each UID of the series has a name (syncToStorage's UidCB). */
static int check_uids(tsd *t, const struct tmeta *m, struct tsd_error *err)
{
	struct buf name = BUF_INIT;
	cf_table *uidt, *dbt;
	int rc;

	if ((rc = tsd_tables(t, &uidt, &dbt)))
		return rc;
	for (size_t i = 0; rc == CF_OK && i < m->klen; i += TSD_UID_WIDTH) {
		enum tsd_kind k = i == 0 ? TSD_METRICS :
				  (i / TSD_UID_WIDTH) % 2 ? TSD_TAGK : TSD_TAGV;
		buf_reset(&name);
		rc = tsd_uid_name(t->uids, uidt, k, tsd_uid_get(m->key + i),
				  &name);
		if (rc == CF_ENOTFOUND)
			tsd_errf(err, "Unable to find one or more UIDs");
	}
	buf_release(&name);
	cf_table_close(uidt);
	cf_table_close(dbt);
	return rc;
}

/* --- the realtime set ---------------------------------------------------- */

static uint64_t key_hash(const unsigned char *k, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ k[i]) * 1099511628211ull;
	return h ? h : 1;
}

/* The slot of hash h in the table (its own or the empty one it would
 * take); the table must have one free. */
static size_t seen_slot(const tsd *t, uint64_t h)
{
	size_t j = h & (t->seen_cap - 1);

	while (t->seen[j] && t->seen[j] != h)
		j = (j + 1) & (t->seen_cap - 1);
	return j;
}

/* The value kept for series k (0: none). */
static uint32_t seen_get(tsd *t, const unsigned char *k, size_t n)
{
	uint64_t h = key_hash(k, n);
	uint32_t v = 0;

	pthread_mutex_lock(&t->seen_mu);
	if (t->seen_cap) {
		size_t j = seen_slot(t, h);
		if (t->seen[j])
			v = t->seen_val[j];
	}
	pthread_mutex_unlock(&t->seen_mu);
	return v;
}

/* Keeps v (not 0) for series k: the table doubles up to 2^20 slots
 * (12 MiB), then starts again empty when 3/4 full. */
static void seen_set(tsd *t, const unsigned char *k, size_t n, uint32_t v)
{
	uint64_t h = key_hash(k, n);
	size_t j;

	pthread_mutex_lock(&t->seen_mu);
	if ((t->seen_n + 1) * 4 > t->seen_cap * 3) {
		size_t cap = !t->seen_cap ? 1 << 12 :
			     t->seen_cap < (1u << 20) ? 2 * t->seen_cap :
			     t->seen_cap;
		uint64_t *old = t->seen;
		uint32_t *oldv = t->seen_val;
		size_t ocap = t->seen_cap;
		t->seen = calloc(cap, sizeof *t->seen);
		t->seen_val = calloc(cap, sizeof *t->seen_val);
		if (!t->seen || !t->seen_val) {
			free(t->seen);
			free(t->seen_val);
			t->seen = old;
			t->seen_val = oldv;
			pthread_mutex_unlock(&t->seen_mu);
			return;	/* not kept: the next write does it again */
		}
		t->seen_cap = cap;
		t->seen_n = 0;
		for (size_t i = 0; cap > ocap && i < ocap; i++)
			if (old[i]) {
				j = seen_slot(t, old[i]);
				t->seen[j] = old[i];
				t->seen_val[j] = oldv[i];
				t->seen_n++;
			}
		free(old);
		free(oldv);
	}
	j = seen_slot(t, h);
	t->seen_n += !t->seen[j];
	t->seen[j] = h;
	t->seen_val[j] = v;
	pthread_mutex_unlock(&t->seen_mu);
}

/* Forgets the set (a meta deleted: the next write makes it again). */
static void seen_clear(tsd *t)
{
	pthread_mutex_lock(&t->seen_mu);
	if (t->seen)
		memset(t->seen, 0, t->seen_cap * sizeof *t->seen);
	t->seen_n = 0;
	pthread_mutex_unlock(&t->seen_mu);
}

void tsd_tsmeta_release(tsd *t)
{
	free(t->seen);
	free(t->seen_val);
	t->seen = NULL;
	t->seen_val = NULL;
	t->seen_cap = t->seen_n = 0;
}

/* --- the operations ---------------------------------------------------- */

int tsd_tsmeta_get(tsd *t, const char *tsuid, struct buf *out,
		   struct tsd_error *err)
{
	struct tmeta m, s;
	cf_table *mt = NULL;
	int rc, has_meta = 0, has_ctr;

	memset(&m, 0, sizeof m);
	if ((rc = tsd_tsuid_bytes(tsuid, m.key, &m.klen, err)))
		return rc;
	if ((rc = meta_table(t, 0, &mt)))
		return rc;
	rc = meta_read(mt, &m, &s, &has_meta, &has_ctr, NULL, err);
	if (rc == CF_OK && !has_meta) {
		tsd_errf(err, "Could not find Timeseries meta data");
		rc = CF_ENOTFOUND;
	}
	if (rc == CF_OK)
		rc = api_json(t, &s, out, err);
	tmeta_free(&s);
	cf_table_close(mt);
	return rc;
}

/* The TSUID of m (METRIC{K=V,...}, every name known: getTSUIDForMetric,
 * the pairs sorted by tag key UID) into key; with pairs (may be NULL),
 * the tag pairs alone too, for a list's condition. */
static int tsuid_of(tsd *t, const char *ms, size_t mlen, unsigned char *key,
		    size_t *klen, struct tsd_error *err)
{
	struct tsd_lookup_query q;
	cf_table *uidt = NULL, *dbt = NULL;
	uint32_t id;
	int rc;

	tsd_lookup_query_init(&q);
	if (!mlen) {
		tsd_errf(err, "The query string was empty");
		return CF_EINVAL;
	}
	rc = tsd_lookup_parse_m(&q, ms, mlen, err);
	if (rc == CF_OK && (!q.metric || !*q.metric)) {
		tsd_errf(err, "Missing metric in: %.100s", ms);
		rc = CF_EINVAL;
	}
	if (rc == CF_OK && q.ntags > TSD_MAX_TAGS) {
		tsd_errf(err, "Too many tags: %zu maximum allowed: %d", q.ntags,
		     TSD_MAX_TAGS);
		rc = CF_EINVAL;
	}
	for (size_t i = 0; rc == CF_OK && i < q.ntags; i++)
		if (!q.tags[i].key || !*q.tags[i].key || !q.tags[i].value ||
		    !*q.tags[i].value) {
			tsd_errf(err, "invalid tag in: %.100s", ms);
			rc = CF_EINVAL;
		}
	if (rc == CF_OK)
		rc = tsd_tables(t, &uidt, &dbt);
	if (rc == CF_OK)
		rc = tsd_uid_lookup(t->uids, uidt, TSD_METRICS, q.metric,
				    strlen(q.metric), &id);
	if (rc == CF_OK)
		tsd_uid_put(key, id);
	*klen = TSD_UID_WIDTH;
	for (size_t i = 0; rc == CF_OK && i < q.ntags; i++) {
		unsigned char *p = key + *klen, tmp[PAIR];
		rc = tsd_uid_lookup(t->uids, uidt, TSD_TAGK, q.tags[i].key,
				    strlen(q.tags[i].key), &id);
		if (rc == CF_OK)
			tsd_uid_put(p, id);
		if (rc == CF_OK)
			rc = tsd_uid_lookup(t->uids, uidt, TSD_TAGV,
					    q.tags[i].value,
					    strlen(q.tags[i].value), &id);
		if (rc != CF_OK)
			break;
		tsd_uid_put(p + TSD_UID_WIDTH, id);
		*klen += PAIR;
		/* insertion by tag key UID; a key given twice is refused */
		for (; p > key + TSD_UID_WIDTH &&
		       memcmp(p - PAIR, p, TSD_UID_WIDTH) >= 0; p -= PAIR) {
			if (!memcmp(p - PAIR, p, TSD_UID_WIDTH)) {
				tsd_errf(err, "duplicate tag: %s", q.tags[i].key);
				rc = CF_EINVAL;
				break;
			}
			memcpy(tmp, p, PAIR);
			memcpy(p, p - PAIR, PAIR);
			memcpy(p - PAIR, tmp, PAIR);
		}
	}
	if (rc == CF_ENOTFOUND)
		tsd_errf(err, "Unable to find one of the UIDs");
	cf_table_close(uidt);
	cf_table_close(dbt);
	tsd_lookup_query_release(&q);
	return rc;
}

/* 1 if the tag pairs of row key k (a TSUID) include every pair of want
 * (both sorted by tag key UID). */
static int has_pairs(const unsigned char *k, size_t n,
		     const unsigned char *want, size_t wn)
{
	size_t i = TSD_UID_WIDTH;

	for (size_t w = 0; w < wn; w += PAIR) {
		while (i < n && memcmp(k + i, want + w, PAIR))
			i += PAIR;
		if (i >= n)
			return 0;
		i += PAIR;
	}
	return 1;
}

int tsd_tsmeta_list(tsd *t, const char *ms, size_t mlen, struct buf *out,
		    struct tsd_error *err)
{
	struct cf_column col[2] = { { FAM, 4, QCTR, strlen(QCTR) },
				    { FAM, 4, QMETA, strlen(QMETA) } };
	struct cf_scan_opts so;
	unsigned char want[TSUID_MAX];
	size_t wlen, count = 0, mark = out->len;
	cf_scanner *sc = NULL;
	cf_table *mt = NULL;
	const cf_row *row;
	int rc;

	if ((rc = tsuid_of(t, ms, mlen, want, &wlen, err)))
		return rc;
	if ((rc = meta_table(t, 0, &mt)))
		return rc;
	rc = put_raw(out, "[");
	memset(&so, 0, sizeof so);
	so.read = (struct cf_read_opts)CF_READ_OPTS_INIT;
	so.read.columns = col;
	so.read.ncolumns = 2;
	so.prefix = want;
	so.prefixlen = TSD_UID_WIDTH;
	if (rc == CF_OK && mt)
		rc = cf_scan_open(mt, &so, &sc);
	while (rc == CF_OK && sc && (rc = cf_scan_next(sc, &row)) == CF_OK &&
	       row) {
		struct tmeta s;
		size_t klen;
		const unsigned char *k = cf_row_key(row, &klen);
		int has_meta, has_ctr;

		if (klen > TSUID_MAX || (klen - TSD_UID_WIDTH) % PAIR ||
		    !has_pairs(k, klen, want + TSD_UID_WIDTH,
			       wlen - TSD_UID_WIDTH))
			continue;
		if ((rc = tmeta_init(&s)))
			break;
		memcpy(s.key, k, klen);
		s.klen = klen;
		rc = meta_cells(row, &s, &has_meta, &has_ctr, NULL, err);
		if (rc == CF_OK && has_meta && ++count > TSD_TSMETA_LIST_MAX) {
			tsd_errf(err, "more than %d series", TSD_TSMETA_LIST_MAX);
			rc = CF_ETOOBIG;
		}
		if (rc == CF_OK && has_meta && count > 1)
			rc = put_raw(out, ",");
		if (rc == CF_OK && has_meta)
			rc = api_json(t, &s, out, err);
		tmeta_free(&s);
	}
	cf_scan_close(sc);
	cf_table_close(mt);
	if (rc == CF_OK)
		rc = put_raw(out, "]");
	if (rc)
		out->len = mark;
	return rc;
}

int tsd_tsmeta_written(tsd *t, const char *spec, int tsuid,
		       tsd_written_fn *fn, void *arg, struct tsd_error *err)
{
	struct cf_column col = { FAM, 4, QCTR, strlen(QCTR) };
	struct cf_read_opts ro = CF_READ_OPTS_INIT;
	struct cf_scan_opts so;
	unsigned char want[TSUID_MAX];
	char hex[2 * TSUID_MAX + 1];
	size_t wlen;
	cf_scanner *sc = NULL;
	cf_table *mt = NULL;
	cf_row *one = NULL;
	const cf_row *row;
	int rc;

	rc = tsuid ? tsd_tsuid_bytes(spec, want, &wlen, err) :
		     tsuid_of(t, spec, strlen(spec), want, &wlen, err);
	if (rc || (rc = meta_table(t, 0, &mt)) || !mt)
		return rc;
	ro.columns = &col;
	ro.ncolumns = 1;
	if (tsuid) {
		/* TSUIDQuery.getLastPoint's Get of the counter */
		rc = cf_table_get(mt, want, wlen, &ro, &one);
		if (rc == CF_OK && cf_row_count(one)) {
			hex_of(want, wlen, hex);
			rc = fn(arg, hex, cf_row_cell(one, 0)->ts);
		}
		cf_row_free(one);
		cf_table_close(mt);
		return rc;
	}
	/* getLastWriteTimes: the counters of the metric's series having
	 * the pairs, in TSUID order */
	memset(&so, 0, sizeof so);
	so.read = ro;
	so.prefix = want;
	so.prefixlen = TSD_UID_WIDTH;
	rc = cf_scan_open(mt, &so, &sc);
	while (rc == CF_OK && (rc = cf_scan_next(sc, &row)) == CF_OK && row) {
		size_t klen;
		const unsigned char *k = cf_row_key(row, &klen);

		if (!cf_row_count(row) || klen > TSUID_MAX ||
		    (klen - TSD_UID_WIDTH) % PAIR ||
		    !has_pairs(k, klen, want + TSD_UID_WIDTH,
			       wlen - TSD_UID_WIDTH))
			continue;
		hex_of(k, klen, hex);
		rc = fn(arg, hex, cf_row_cell(row, 0)->ts);
	}
	cf_scan_close(sc);
	cf_table_close(mt);
	return rc;
}

/* m merged with the stored s (syncMeta): unless overwrite, what m did
 * not change comes from s; the earliest creation time wins. */
static int merge(struct tmeta *m, const struct tmeta *s, int overwrite)
{
	char *const *from[] = { &s->display, &s->desc, &s->notes, &s->units,
				&s->dtype };
	char **to[] = { &m->display, &m->desc, &m->notes, &m->units,
			&m->dtype };
	static const unsigned bits[] = { M_DISPLAY, M_DESC, M_NOTES, M_UNITS,
					 M_DTYPE };
	int rc = CF_OK;

	if (s->created > 0 && (s->created < m->created || m->created == 0))
		m->created = s->created;
	m->last_received = s->last_received;
	m->total = s->total;
	if (overwrite)
		return CF_OK;
	for (size_t i = 0; rc == CF_OK && i < 5; i++)
		if (!(m->given & bits[i]))
			rc = tsd_set_str(to[i], *from[i]);
	if (!(m->given & M_RETENTION))
		m->retention = s->retention;
	if (!(m->given & M_MAX))
		m->max = s->max;
	if (!(m->given & M_MIN))
		m->min = s->min;
	if (rc == CF_OK && !(m->given & M_CUSTOM)) {
		json_decref(m->custom);
		m->custom = s->custom ? json_deep_copy(s->custom) : NULL;
		if (s->custom && !m->custom)
			rc = CF_ENOMEM;
	}
	return rc;
}

/* Puts m's storage JSON into the ts_meta of its row iff the stored
 * bytes are still expect (NULL: none stored). */
static int meta_cas(cf_table *mt, const struct tmeta *m, const struct buf
		    *expect, int *applied)
{
	struct buf val = BUF_INIT;
	cf_batch *b = NULL;
	int rc;

	*applied = 0;
	if ((rc = storage_json(m, &val)) == CF_OK &&
	    (rc = cf_batch_new(&b)) == CF_OK &&
	    (rc = cf_batch_put(b, m->key, m->klen, FAM, 4, QMETA,
			       strlen(QMETA), CF_TS_NOW, val.p, val.len)) ==
	    CF_OK)
		rc = cf_table_check_and_apply(mt, m->key, m->klen, FAM, 4,
					      QMETA, strlen(QMETA),
					      expect ? expect->p : NULL,
					      expect ? expect->len : 0, b,
					      applied);
	cf_batch_free(b);
	buf_release(&val);
	return rc;
}

/* A new meta of the series (storeNew), with a zero counter if it has
 * none (the API's create=true).  *applied 0: one was stored meanwhile. */
static int meta_create(cf_table *mt, const struct tmeta *m, int counter,
		       int *applied)
{
	static const unsigned char zero[8];
	cf_batch *b = NULL;
	int rc, dummy;

	if ((rc = meta_cas(mt, m, NULL, applied)) || !*applied || !counter)
		return rc;
	if ((rc = cf_batch_new(&b)) == CF_OK &&
	    (rc = cf_batch_put(b, m->key, m->klen, FAM, 4, QCTR,
			       strlen(QCTR), CF_TS_NOW, zero, 8)) == CF_OK)
		rc = cf_table_check_and_apply(mt, m->key, m->klen, FAM, 4,
					      QCTR, strlen(QCTR), NULL, 0, b,
					      &dummy);
	cf_batch_free(b);
	return rc;
}

int tsd_tsmeta_sync(tsd *t, const char *body, size_t len, const char *ms,
		    int create, int overwrite, struct buf *out,
		    struct tsd_error *err)
{
	char hex[2 * TSUID_MAX + 1];
	struct buf old = BUF_INIT;
	cf_table *mt = NULL;
	json_error_t je;
	json_t *j, *v;
	struct tmeta m, s;
	int rc, applied = 0, has_meta, has_ctr, by_m;

	if ((rc = tmeta_init(&m)))
		return rc;
	memset(&s, 0, sizeof s);
	if (!(j = json_loadb(body, len, 0, &je))) {
		tsd_errf(err, "Unable to parse the given JSON: %s", je.text);
		tmeta_free(&m);
		return CF_EINVAL;
	}
	rc = tmeta_parse(j, &m, 1, err);
	v = json_object_get(j, "tsuid");
	if (rc == CF_OK && v && !json_is_null(v) && !json_is_string(v)) {
		tsd_errf(err, "Unable to parse the given JSON: tsuid is not a "
		     "string");
		rc = CF_EINVAL;
	}
	if (rc == CF_OK && json_string_length(v))
		rc = tsd_tsuid_bytes(json_string_value(v), m.key, &m.klen, err);
	else if (rc == CF_OK && !ms) {
		tsd_errf(err, "Missing parameter <code>m</code>");
		rc = CF_EINVAL;
	} else if (rc == CF_OK) {
		rc = tsuid_of(t, ms, strlen(ms), m.key, &m.klen, err);
		if (rc == CF_ENOTFOUND)
			tsd_errf(err, "Unable to find one or more UIDs");
	}
	by_m = !json_string_length(v);
	json_decref(j);
	if (rc == CF_OK && !by_m && !m.given) {
		tsd_errf(err, "No changes detected in TSUID meta data");
		rc = CF_EEXIST;
	}
	if (rc == CF_OK)
		rc = meta_table(t, 1, &mt);
	/* a series named by m with no meta is created (or refused) */
	if (rc == CF_OK && by_m) {
		rc = meta_read(mt, &m, &s, &has_meta, &has_ctr, NULL, err);
		tmeta_free(&s);
		if (rc == CF_OK && !has_meta && !create) {
			tsd_errf(err, "Could not find TSMeta, specify "
			     "\"create=true\" to create a new one.");
			rc = CF_EINVAL;
		}
		if (rc == CF_OK && !has_meta)
			rc = meta_create(mt, &m, !has_ctr, &applied);
		if (rc == CF_OK && applied)
			tsd_tree_process(t, m.key, m.klen, tsd_tsmeta_get);
		if (rc == CF_OK && !applied && !m.given) {
			tsd_errf(err, "No changes detected in TSUID meta data");
			rc = CF_EEXIST;
		}
	}
	if (rc == CF_OK && !applied)
		rc = check_uids(t, &m, err);
	for (int i = 0; rc == CF_OK && !applied && i < META_TRIES; i++) {
		buf_reset(&old);
		rc = meta_read(mt, &m, &s, &has_meta, &has_ctr, &old, err);
		if (rc == CF_OK && !has_meta) {
			tsd_errf(err, "Requested TSMeta did not exist");
			rc = CF_EINVAL;
		}
		if (rc == CF_OK)
			rc = merge(&m, &s, overwrite);
		if (rc == CF_OK)
			rc = meta_cas(mt, &m, &old, &applied);
		tmeta_free(&s);
	}
	if (rc == CF_OK && !applied) {
		tsd_errf(err, "Failed to save the TSMeta to storage");
		rc = CF_EBUSY;
	}
	if (rc == CF_OK) {
		hex_of(m.key, m.klen, hex);
		rc = tsd_tsmeta_get(t, hex, out, err);
	}
	buf_release(&old);
	tmeta_free(&m);
	cf_table_close(mt);
	return rc;
}

int tsd_tsmeta_delete(tsd *t, const char *tsuid, struct tsd_error *err)
{
	unsigned char key[TSUID_MAX];
	cf_table *mt = NULL;
	size_t klen;
	int rc;

	if (!tsuid || !*tsuid) {
		tsd_errf(err, "Missing UID");
		return CF_EINVAL;
	}
	if ((rc = tsd_tsuid_bytes(tsuid, key, &klen, err)) ||
	    (rc = meta_table(t, 0, &mt)) || !mt)
		return rc;
	rc = tsd_delete_column(mt, key, klen, FAM, QMETA);
	cf_table_close(mt);
	seen_clear(t);
	return rc;
}

int tsd_tsmeta_qs(tsd *t, const char *qs, size_t len, enum tsd_meta_op op,
		  const char *body, size_t blen, struct buf *out,
		  struct tsd_error *err)
{
	static const char *const names[] = { "tsuid", "m", "create" };
	char *v[3], *tsuid, *ms, *create, *text = NULL;
	unsigned char key[TSUID_MAX];
	char hex[2 * TSUID_MAX + 1];
	json_error_t je;
	json_t *j = NULL;
	size_t klen;
	int rc;

	rc = tsd_qs_params(qs, len, names, 3, v, err);
	tsuid = v[0];
	ms = v[1];
	create = v[2];
	if (rc == CF_OK && !(tsuid && *tsuid) && !(ms && *ms)) {
		tsd_errf(err, "Missing parameter <code>tsuid</code> or <code>m"
		     "</code>");
		rc = CF_EINVAL;
	}
	if (rc)
		goto out;
	if (op == TSD_META_GET) {
		rc = tsuid && *tsuid ? tsd_tsmeta_get(t, tsuid, out, err) :
		     tsd_tsmeta_list(t, ms, strlen(ms), out, err);
		goto out;
	}
	if (op == TSD_META_DELETE) {
		if (!(tsuid && *tsuid)) {
			rc = tsuid_of(t, ms, strlen(ms), key, &klen, err);
			if (rc)
				goto out;
			hex_of(key, klen, hex);
		}
		rc = tsd_tsmeta_delete(t, tsuid && *tsuid ? tsuid : hex, err);
		goto out;
	}
	/* the body's fields onto the series the name says */
	if (!(j = json_loadb(body, blen, 0, &je))) {
		tsd_errf(err, "Unable to parse the given JSON: %s", je.text);
		rc = CF_EINVAL;
	} else if (!json_is_object(j)) {
		tsd_errf(err, "Unable to parse the given JSON: not an object");
		rc = CF_EINVAL;
	} else if (tsuid && *tsuid ?
		   json_object_set_new(j, "tsuid", json_string(tsuid)) :
		   json_object_del(j, "tsuid") && json_object_get(j, "tsuid")) {
		rc = CF_ENOMEM;
	} else if (!(text = json_dumps(j, JSON_COMPACT))) {
		rc = CF_ENOMEM;
	} else {
		rc = tsd_tsmeta_sync(t, text, strlen(text),
				     tsuid && *tsuid ? NULL : ms,
				     create && !strcmp(create, "true"),
				     op == TSD_META_PUT, out, err);
	}
out:
	free(text);
	json_decref(j);
	free(tsuid);
	free(ms);
	free(create);
	return rc;
}

/* --- tracking of writes ------------------------------------------------- */

struct series {
	unsigned char k[TSUID_MAX];
	size_t klen;
	int64_t points;
};

static int series_cmp(const void *a, const void *b)
{
	const struct series *x = a, *y = b;
	size_t n = x->klen < y->klen ? x->klen : y->klen;
	int c = memcmp(x->k, y->k, n);
	return c ? c : (x->klen > y->klen) - (x->klen < y->klen);
}

/* The series of pts[0..n) (their TSUIDs: the row key without its hour),
 * each once, with its number of points; *ns of them (NULL: memory). */
static struct series *series_of(const struct tsd_point *const *pts, size_t n,
				size_t *ns)
{
	struct series *s = malloc((n ? n : 1) * sizeof *s);
	size_t k = 0;

	*ns = 0;
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct tsd_point *p = pts[i];
		if (k && p->klen == pts[i - 1]->klen &&
		    !memcmp(p->key, pts[i - 1]->key, p->klen)) {
			s[k - 1].points++;	/* the same row */
			continue;
		}
		memcpy(s[k].k, p->key, TSD_UID_WIDTH);
		memcpy(s[k].k + TSD_UID_WIDTH, p->key + TSD_ROWKEY_PREFIX,
		       p->klen - TSD_ROWKEY_PREFIX);
		s[k].klen = p->klen - TSD_TS_BYTES;
		s[k].points = 1;
		k++;
	}
	qsort(s, k, sizeof *s, series_cmp);
	*ns = 0;
	for (size_t i = 0; i < k; i++) {
		if (*ns && !series_cmp(&s[*ns - 1], &s[i])) {
			s[*ns - 1].points += s[i].points;
			continue;
		}
		s[(*ns)++] = s[i];
	}
	return s;
}

/* A new series' meta, created now (TSMeta(tsuid, now) then storeNew),
 * unless one is stored. */
static int store_if_new(tsd *t, cf_table *mt, const struct series *s)
{
	struct tmeta m;
	int rc, applied;

	if ((rc = tmeta_init(&m)))
		return rc;
	memcpy(m.key, s->k, s->klen);
	m.klen = s->klen;
	m.created = (int64_t)time(NULL);
	rc = meta_cas(mt, &m, NULL, &applied);
	tmeta_free(&m);
	if (rc == CF_OK && applied)
		tsd_tree_process(t, s->k, s->klen, tsd_tsmeta_get);
	return rc;
}

void tsd_tsmeta_track(tsd *t, const struct tsd_point *const *pts, size_t n)
{
	unsigned char one[8] = { 0, 0, 0, 0, 0, 0, 0, 1 };
	cf_table *mt = NULL;
	cf_batch *b = NULL;
	struct series *s;
	size_t ns;
	int64_t now;
	uint32_t sec;
	int rc;

	if (!t->o.tsuid_tracking || !n)
		return;
	if (!(s = series_of(pts, n, &ns))) {
		cf_log(CF_LOG_WARN, "tsd: series tracking: %s",
		       cf_strerror(CF_ENOMEM));
		return;
	}
	rc = meta_table(t, 1, &mt);
	sec = (uint32_t)time(NULL);
	if (rc == CF_OK && !t->o.realtime_ts) {
		/* the counter set to 1: its timestamp, in seconds, is the
		 * last write (one put a series a second says the same) */
		size_t nput = 0;
		rc = cf_batch_new(&b);
		for (size_t i = 0; rc == CF_OK && i < ns; i++) {
			if (seen_get(t, s[i].k, s[i].klen) == sec) {
				s[i].points = 0;
				continue;
			}
			rc = cf_batch_put(b, s[i].k, s[i].klen, FAM, 4, QCTR,
					  strlen(QCTR), CF_TS_NOW, one, 8);
			nput++;
		}
		if (rc == CF_OK && nput)
			rc = cf_table_apply(mt, b);
		for (size_t i = 0; rc == CF_OK && i < ns; i++)
			if (s[i].points)
				seen_set(t, s[i].k, s[i].klen, sec);
		cf_batch_free(b);
	}
	for (size_t i = 0; rc == CF_OK && t->o.realtime_ts && i < ns; i++) {
		if (t->o.tsuid_incrementing) {
			/* incrementAndGetCounter: the meta at the first */
			rc = cf_table_increment(mt, s[i].k, s[i].klen, FAM, 4,
						QCTR, strlen(QCTR),
						s[i].points, &now);
			if (rc == CF_OK && now == s[i].points)
				rc = store_if_new(t, mt, &s[i]);
		} else if (!seen_get(t, s[i].k, s[i].klen)) {
			/* storeIfNecessary */
			rc = store_if_new(t, mt, &s[i]);
			if (rc == CF_OK)
				seen_set(t, s[i].k, s[i].klen, 1);
		}
	}
	if (rc)
		cf_log(CF_LOG_WARN, "tsd: series tracking of a write of %zu "
		       "series: %s", ns, cf_strerror(rc));
	cf_table_close(mt);
	free(s);
}
