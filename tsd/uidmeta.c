/*
 * uidmeta.c: OpenTSDB's UID meta data (meta/UIDMeta, UniqueIdRpc's
 * /api/uid/uidmeta; docs/api.md): a display name, a description, notes,
 * a creation time and custom string pairs of a metric, tag key or tag
 * value, kept where OpenTSDB keeps them: in tsdb-uid, the UID's row,
 * family "name", qualifier "metric_meta", "tagk_meta" or "tagv_meta",
 * the value getStorageJSON's text.  A UID with no stored meta has a
 * default one (created 0), as UIDMeta.getUIDMeta answers.
 *
 * Changes are read, merged and written with a check-and-put on the
 * stored bytes (OpenTSDB's compareAndSet), tried again when another
 * writer came first.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "tsd/internal.h"
#include "tsd/query.h"
#include "util/err.h"
#include "util/log.h"

/* Check-and-put attempts before a change gives up (CF_EBUSY). */
#define META_TRIES 8

static const char *const type_name[] = { "METRIC", "TAGK", "TAGV" };
static const char *const meta_qual[] = { "metric_meta", "tagk_meta",
					 "tagv_meta" };

/* UIDMeta's fields; given: those a request set to a value other than
 * the default (UIDMeta's "changed" map). */
struct umeta {
	enum tsd_kind kind;
	uint32_t uid;
	char *display, *desc, *notes;
	json_t *custom;		/* an object of strings, or NULL */
	int64_t created;
	unsigned given;
};

enum { M_DISPLAY = 1, M_DESC = 2, M_NOTES = 4, M_CUSTOM = 8, M_CREATED = 16 };

static void umeta_free(struct umeta *m)
{
	free(m->display);
	free(m->desc);
	free(m->notes);
	json_decref(m->custom);
	memset(m, 0, sizeof *m);
}

static void fail(struct tsd_error *err, const char *what, const char *arg)
{
	if (err) {
		err->line = 0;
		snprintf(err->reason, sizeof err->reason, "%s%.200s", what,
			 arg ? arg : "");
	}
}

/* UniqueId.stringToUniqueIdType. */
static int parse_kind(const char *s, enum tsd_kind *k, struct tsd_error *err)
{
	if (!strcasecmp(s, "metric") || !strcasecmp(s, "metrics"))
		*k = TSD_METRICS;
	else if (!strcasecmp(s, "tagk"))
		*k = TSD_TAGK;
	else if (!strcasecmp(s, "tagv"))
		*k = TSD_TAGV;
	else {
		fail(err, "Invalid type requested: ", s);
		return CF_EINVAL;
	}
	return CF_OK;
}

/* UniqueId.stringToUid: hex, padded with zeros to the UID's width. */
static int parse_uid(const char *s, uint32_t *uid, struct tsd_error *err)
{
	size_t n = strlen(s);
	char *end;

	if (!n || n > 2 * TSD_UID_WIDTH || strspn(s, "0123456789abcdefABCDEF")
	    != n) {
		fail(err, "Invalid UID: ", s);
		return CF_EINVAL;
	}
	*uid = (uint32_t)strtoul(s, &end, 16);
	return CF_OK;
}

/* The fields of JSON object j into m: a request's (request 1: each field
 * that differs from the default is given) or a stored meta's. */
static int umeta_parse(json_t *j, struct umeta *m, int request,
		       struct tsd_error *err)
{
	static const struct { const char *key; unsigned bit; } strs[] = {
		{ "displayName", M_DISPLAY }, { "description", M_DESC },
		{ "notes", M_NOTES },
	};
	json_t *v, *x;
	const char *k;
	int rc;

	if (!json_is_object(j)) {
		fail(err, "Unable to parse the given JSON: not an object",
		     NULL);
		return CF_EINVAL;
	}
	for (size_t i = 0; i < 3; i++) {
		char **f = i == 0 ? &m->display : i == 1 ? &m->desc : &m->notes;
		v = json_object_get(j, strs[i].key);
		if (v && !json_is_null(v) && !json_is_string(v)) {
			fail(err, "Unable to parse the given JSON: not a "
			     "string: ", strs[i].key);
			return CF_EINVAL;
		}
		if ((rc = tsd_set_str(f, json_string_value(v))))
			return rc;
		if (request && **f)
			m->given |= strs[i].bit;
	}
	v = json_object_get(j, "created");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v)) {
			fail(err, "Unable to parse the given JSON: created is "
			     "not a number", NULL);
			return CF_EINVAL;
		}
		m->created = json_integer_value(v);
		if (request && m->created)
			m->given |= M_CREATED;
	}
	v = json_object_get(j, "custom");
	if (v && !json_is_null(v)) {
		if (!json_is_object(v)) {
			fail(err, "Unable to parse the given JSON: custom is "
			     "not an object", NULL);
			return CF_EINVAL;
		}
		json_object_foreach(v, k, x)
			if (!json_is_string(x)) {
				fail(err, "Unable to parse the given JSON: a "
				     "custom value is not a string", NULL);
				return CF_EINVAL;
			}
		m->custom = json_deep_copy(v);
		if (!m->custom)
			return CF_ENOMEM;
		if (request)
			m->given |= M_CUSTOM;	/* setCustom: always */
	}
	return CF_OK;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* m as JSON: storage (getStorageJSON) or the API's (UIDMeta as Jackson
 * writes it, name the UID's).  custom's keys sorted. */
static json_t *umeta_json(const struct umeta *m, const char *name,
			  int storage)
{
	json_t *o = json_object(), *c = json_null();
	char uid[2 * TSD_UID_WIDTH + 1];

	if (m->custom) {
		const char **keys = malloc((json_object_size(m->custom) + 1) *
					   sizeof *keys);
		const char *k;
		json_t *v;
		size_t n = 0;

		json_decref(c);
		c = json_object();
		if (!keys || !c) {
			free(keys);
			json_decref(c);
			json_decref(o);
			return NULL;
		}
		json_object_foreach(m->custom, k, v)
			keys[n++] = k;
		qsort(keys, n, sizeof *keys, cmp_key);
		for (size_t i = 0; i < n; i++)
			json_object_set(c, keys[i],
					json_object_get(m->custom, keys[i]));
		free(keys);
	}
	snprintf(uid, sizeof uid, "%06X", m->uid);
	if (!o || !c) {
		json_decref(o);
		json_decref(c);
		return NULL;
	}
	if (!storage) {
		json_object_set_new(o, "uid", json_string(uid));
		json_object_set_new(o, "type", json_string(type_name[m->kind]));
		json_object_set_new(o, "name", json_string(name));
		json_object_set_new(o, "description", json_string(m->desc));
		json_object_set_new(o, "notes", json_string(m->notes));
		json_object_set_new(o, "created", json_integer(m->created));
		json_object_set_new(o, "custom", c);
		json_object_set_new(o, "displayName",
				    json_string(m->display));
		return o;
	}
	json_object_set_new(o, "type", json_string(type_name[m->kind]));
	json_object_set_new(o, "displayName", json_string(m->display));
	json_object_set_new(o, "description", json_string(m->desc));
	json_object_set_new(o, "notes", json_string(m->notes));
	json_object_set_new(o, "created", json_integer(m->created));
	json_object_set_new(o, "custom", c);
	return o;
}

/* The stored meta of m->kind, m->uid into *s (*found 0: none; old gets
 * its bytes). */
static int meta_read(cf_table *uidt, const struct umeta *m, struct umeta *s,
		     int *found, struct buf *old, struct tsd_error *err)
{
	const char *q = meta_qual[m->kind];
	struct cf_column col = { "name", 4, q, strlen(q) };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	unsigned char id[TSD_UID_WIDTH];
	cf_row *row = NULL;
	json_error_t je;
	json_t *j;
	int rc;

	*found = 0;
	memset(s, 0, sizeof *s);
	s->kind = m->kind;
	s->uid = m->uid;
	tsd_uid_put(id, m->uid);
	o.columns = &col;
	o.ncolumns = 1;
	if ((rc = cf_table_get(uidt, id, sizeof id, &o, &row)))
		return rc;
	if (cf_row_count(row)) {
		const struct cf_cell *c = cf_row_cell(row, 0);
		rc = old ? buf_append(old, c->val, c->vlen) : CF_OK;
		j = json_loadb((const char *)c->val, c->vlen, 0, &je);
		if (rc == CF_OK && !j) {
			fail(err, "a stored UIDMeta is not JSON: ", je.text);
			rc = CF_ECORRUPT;
		}
		if (rc == CF_OK && (rc = umeta_parse(j, s, 0, err)) ==
		    CF_EINVAL)
			rc = CF_ECORRUPT;
		json_decref(j);
		*found = rc == CF_OK;
	}
	cf_row_free(row);
	if (rc == CF_OK && !*found) {
		/* the default: empty texts */
		if (tsd_set_str(&s->display, "") || tsd_set_str(&s->desc, "") ||
		    tsd_set_str(&s->notes, ""))
			rc = CF_ENOMEM;
	}
	if (rc)
		umeta_free(s);
	return rc;
}

/* The name of the UID (UIDMeta checks it exists first). */
static int meta_name(tsd *t, cf_table *uidt, const struct umeta *m,
		     struct buf *name, struct tsd_error *err)
{
	int rc = tsd_uid_name(t->uids, uidt, m->kind, m->uid, name);

	if (rc == CF_ENOTFOUND)
		fail(err, "Could not find the requested UID", NULL);
	if (rc == CF_OK)
		rc = buf_putc(name, '\0');
	return rc;
}

int tsd_uidmeta_get(tsd *t, const char *type, const char *uid,
		    struct buf *out, struct tsd_error *err)
{
	struct buf name = BUF_INIT;
	cf_table *uidt, *dbt;
	struct umeta m, s;
	int rc, found;

	memset(&m, 0, sizeof m);
	if ((rc = parse_kind(type, &m.kind, err)) ||
	    (rc = parse_uid(uid, &m.uid, err)))
		return rc;
	if ((rc = tsd_tables(t, &uidt, &dbt)))
		return rc;
	rc = meta_name(t, uidt, &m, &name, err);
	if (rc == CF_OK)
		rc = meta_read(uidt, &m, &s, &found, NULL, err);
	if (rc == CF_OK) {
		if (out)	/* NULL: only whether it exists */
			rc = tsd_json_put(out, umeta_json(&s, (const char *)name.p, 0));
		umeta_free(&s);
	}
	buf_release(&name);
	cf_table_close(uidt);
	cf_table_close(dbt);
	return rc;
}

/* m merged with the stored meta s (syncMeta): unless overwrite, what m
 * did not change comes from s; the earliest creation time wins. */
static int merge(struct umeta *m, const struct umeta *s, int overwrite)
{
	int rc = CF_OK;

	if (s->created > 0 && (s->created < m->created || m->created == 0))
		m->created = s->created;
	if (overwrite)
		return CF_OK;
	if (!(m->given & M_DISPLAY))
		rc = tsd_set_str(&m->display, s->display);
	if (rc == CF_OK && !(m->given & M_DESC))
		rc = tsd_set_str(&m->desc, s->desc);
	if (rc == CF_OK && !(m->given & M_NOTES))
		rc = tsd_set_str(&m->notes, s->notes);
	if (rc == CF_OK && !(m->given & M_CUSTOM)) {
		json_decref(m->custom);
		m->custom = s->custom ? json_deep_copy(s->custom) : NULL;
		if (s->custom && !m->custom)
			rc = CF_ENOMEM;
	}
	return rc;
}

/* One read-merge-check-and-put of m; *applied 0: another writer came
 * first. */
static int meta_put(cf_table *uidt, struct umeta *m, int overwrite,
		    int *applied, struct tsd_error *err)
{
	const char *q = meta_qual[m->kind];
	unsigned char id[TSD_UID_WIDTH];
	struct buf old = BUF_INIT, val = BUF_INIT;
	cf_batch *b = NULL;
	struct umeta s;
	int found, rc;

	*applied = 0;
	if ((rc = meta_read(uidt, m, &s, &found, &old, err)))
		return rc;
	tsd_uid_put(id, m->uid);
	if ((rc = merge(m, &s, overwrite)) == CF_OK &&
	    (rc = tsd_json_put(&val, umeta_json(m, NULL, 1))) == CF_OK &&
	    (rc = cf_batch_new(&b)) == CF_OK &&
	    (rc = cf_batch_put(b, id, sizeof id, "name", 4, q, strlen(q),
			       CF_TS_NOW, val.p, val.len)) == CF_OK)
		rc = cf_table_check_and_apply(uidt, id, sizeof id, "name", 4,
					      q, strlen(q),
					      found ? old.p : NULL, old.len, b,
					      applied);
	cf_batch_free(b);
	umeta_free(&s);
	buf_release(&old);
	buf_release(&val);
	return rc;
}

int tsd_uidmeta_sync(tsd *t, const char *body, size_t len, int overwrite,
		     struct buf *out, struct tsd_error *err)
{
	struct buf name = BUF_INIT;
	cf_table *uidt = NULL, *dbt = NULL;
	json_error_t je;
	json_t *j = json_loadb(body, len, 0, &je), *v;
	struct umeta m;
	int rc, applied = 0;

	memset(&m, 0, sizeof m);
	if (!j) {
		fail(err, "Unable to parse the given JSON: ", je.text);
		return CF_EINVAL;
	}
	rc = umeta_parse(j, &m, 1, err);
	v = json_object_get(j, "uid");
	if (rc == CF_OK && (!json_is_string(v) || !*json_string_value(v))) {
		fail(err, "Missing UID", NULL);
		rc = CF_EINVAL;
	}
	if (rc == CF_OK)
		rc = parse_uid(json_string_value(v), &m.uid, err);
	v = json_object_get(j, "type");
	if (rc == CF_OK && (!json_is_string(v) || !*json_string_value(v))) {
		fail(err, "Missing type", NULL);
		rc = CF_EINVAL;
	}
	if (rc == CF_OK)
		rc = parse_kind(json_string_value(v), &m.kind, err);
	json_decref(j);
	if (rc == CF_OK && !m.given) {
		fail(err, "No changes detected in UID meta data", NULL);
		rc = CF_EEXIST;
	}
	if (rc == CF_OK)
		rc = tsd_tables(t, &uidt, &dbt);
	if (rc == CF_OK)
		rc = meta_name(t, uidt, &m, &name, err);
	for (int i = 0; rc == CF_OK && !applied && i < META_TRIES; i++)
		rc = meta_put(uidt, &m, overwrite, &applied, err);
	if (rc == CF_OK && !applied) {
		fail(err, "Failed to save the UIDMeta to storage", NULL);
		rc = CF_EBUSY;
	}
	if (rc == CF_OK)
		rc = tsd_json_put(out, umeta_json(&m, (const char *)name.p, 0));
	umeta_free(&m);
	buf_release(&name);
	cf_table_close(uidt);
	cf_table_close(dbt);
	return rc;
}

int tsd_uidmeta_delete(tsd *t, const char *type, const char *uid,
		       struct tsd_error *err)
{
	unsigned char id[TSD_UID_WIDTH];
	cf_table *uidt, *dbt;
	struct umeta m;
	int rc;

	memset(&m, 0, sizeof m);
	if (!uid || !*uid) {
		fail(err, "Missing UID", NULL);
		return CF_EINVAL;
	}
	if (!type || !*type) {
		fail(err, "Missing type", NULL);
		return CF_EINVAL;
	}
	if ((rc = parse_kind(type, &m.kind, err)) ||
	    (rc = parse_uid(uid, &m.uid, err)))
		return rc;
	if ((rc = tsd_tables(t, &uidt, &dbt)))
		return rc;
	tsd_uid_put(id, m.uid);
	rc = tsd_delete_column(uidt, id, sizeof id, "name", meta_qual[m.kind]);
	cf_table_close(uidt);
	cf_table_close(dbt);
	return rc;
}

/* The UID a query string names: type=TYPE and uid=HEX or name=NAME. */
static int qs_target(tsd *t, cf_table *uidt, const char *qs, size_t len,
		     struct umeta *m, struct tsd_error *err)
{
	static const char *const names[] = { "type", "uid", "name" };
	char *v[3], *type, *uid, *name;
	int rc;

	rc = tsd_qs_params(qs, len, names, 3, v, err);
	type = v[0];
	uid = v[1];
	name = v[2];
	if (rc == CF_OK && (!type || !*type)) {
		fail(err, "Missing type", NULL);
		rc = CF_EINVAL;
	}
	if (rc == CF_OK)
		rc = parse_kind(type, &m->kind, err);
	if (rc == CF_OK && uid && *uid)
		rc = parse_uid(uid, &m->uid, err);
	else if (rc == CF_OK && name && *name) {
		rc = tsd_uid_lookup(t->uids, uidt, m->kind, name, strlen(name),
				    &m->uid);
		if (rc == CF_ENOTFOUND)
			fail(err, "Could not find the requested UID", NULL);
	} else if (rc == CF_OK) {
		fail(err, "Missing UID", NULL);
		rc = CF_EINVAL;
	}
	free(type);
	free(uid);
	free(name);
	return rc;
}

int tsd_uidmeta_qs(tsd *t, const char *qs, size_t len, enum tsd_meta_op op,
		   const char *body, size_t blen, struct buf *out,
		   struct tsd_error *err)
{
	char uid[2 * TSD_UID_WIDTH + 1];
	cf_table *uidt, *dbt;
	struct umeta m;
	json_error_t je;
	json_t *j = NULL;
	char *text = NULL;
	int rc;

	memset(&m, 0, sizeof m);
	if ((rc = tsd_tables(t, &uidt, &dbt)))
		return rc;
	rc = qs_target(t, uidt, qs, len, &m, err);
	cf_table_close(uidt);
	cf_table_close(dbt);
	if (rc)
		return rc;
	snprintf(uid, sizeof uid, "%06X", m.uid);
	if (op == TSD_META_GET)
		return tsd_uidmeta_get(t, type_name[m.kind], uid, out, err);
	if (op == TSD_META_DELETE)
		return tsd_uidmeta_delete(t, type_name[m.kind], uid, err);
	/* the body's fields onto the UID the name says */
	if (!(j = json_loadb(body, blen, 0, &je))) {
		fail(err, "Unable to parse the given JSON: ", je.text);
		return CF_EINVAL;
	}
	if (!json_is_object(j) ||
	    json_object_set_new(j, "uid", json_string(uid)) ||
	    json_object_set_new(j, "type", json_string(type_name[m.kind])) ||
	    !(text = json_dumps(j, JSON_COMPACT))) {
		rc = json_is_object(j) ? CF_ENOMEM : CF_EINVAL;
		if (rc == CF_EINVAL)
			fail(err, "Unable to parse the given JSON: not an "
			     "object", NULL);
	} else {
		rc = tsd_uidmeta_sync(t, text, strlen(text),
				      op == TSD_META_PUT, out, err);
	}
	free(text);
	json_decref(j);
	return rc;
}

void tsd_uidmeta_assigned(void *arg, cf_table *uidt, enum tsd_kind kind,
			  uint32_t uid)
{
	const char *q = meta_qual[kind];
	unsigned char id[TSD_UID_WIDTH];
	struct buf val = BUF_INIT;
	cf_batch *b = NULL;
	struct umeta m;
	int rc, applied;

	(void)arg;
	memset(&m, 0, sizeof m);
	m.kind = kind;
	m.uid = uid;
	m.created = (int64_t)time(NULL);	/* UIDMeta(type, uid, name) */
	tsd_uid_put(id, uid);
	if ((rc = tsd_set_str(&m.display, "")) == CF_OK &&
	    (rc = tsd_set_str(&m.desc, "")) == CF_OK &&
	    (rc = tsd_set_str(&m.notes, "")) == CF_OK &&
	    (rc = tsd_json_put(&val, umeta_json(&m, NULL, 1))) == CF_OK &&
	    (rc = cf_batch_new(&b)) == CF_OK &&
	    (rc = cf_batch_put(b, id, sizeof id, "name", 4, q, strlen(q),
			       CF_TS_NOW, val.p, val.len)) == CF_OK)
		rc = cf_table_check_and_apply(uidt, id, sizeof id, "name", 4,
					      q, strlen(q), NULL, 0, b,
					      &applied);
	if (rc)
		cf_log(CF_LOG_WARN, "tsd: the UIDMeta of new %s %06X: %s",
		       type_name[kind], uid, cf_strerror(rc));
	cf_batch_free(b);
	buf_release(&val);
	umeta_free(&m);
}
