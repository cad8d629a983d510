/*
 * tree.c: OpenTSDB's tree definitions and their rules (Tree.java,
 * TreeRule.java; tree.h has the layout of tsdb-tree), and the reads of
 * a tree's collisions and not-matched series.  branch.c builds and
 * reads the branches and leaves.
 *
 * A request's fields are taken as Tree's and TreeRule's setters take
 * them: those that differ from the defaults are "given" (their changed
 * maps), and a POST copies only those onto the stored object, a PUT all.
 * Definitions and rules change by check-and-put on the stored bytes
 * (OpenTSDB's compareAndSet), tried again when another writer came
 * first.  Regexes are PCRE2's (Perl syntax, close to java.util.regex).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "tsd/internal.h"
#include "tsd/tree.h"
#include "util/err.h"
#include "util/log.h"

#define TRIES 8		/* check-and-put attempts before CF_EBUSY */
#define TSUID_MAX (TSD_UID_WIDTH + TSD_MAX_TAGS * 2 * TSD_UID_WIDTH)

static const char *const rule_keys[TSD_RULE_NSTR] = {
	"field", "customField", "regex", "separator", "description", "notes",
	"displayFormat"
};
static const char *const tree_keys[TSD_TREE_NSTR] = {
	"name", "description", "notes"
};

/* Which fields a request gave (tsd_rule.given, tsd_tree.given, beside
 * 1 << TSD_RULE_x and 1 << TSD_TREE_x): TreeRule's and Tree's "changed"
 * maps. */
enum { G_TYPE = 1 << 8, G_GIDX = 1 << 9, G_LEVEL = 1 << 10,
       G_ORDER = 1 << 11 };
enum { G_STRICT = 1 << 4, G_ENABLED = 1 << 5, G_FAILS = 1 << 6,
       G_CREATED = 1 << 7 };

const char *const tsd_rule_types[TSD_RULE_NTYPES] = {
	"METRIC", "METRIC_CUSTOM", "TAGK", "TAGK_CUSTOM", "TAGV_CUSTOM"
};

static int set_str(char **dst, const char *src)
{
	char *s = strdup(src ? src : "");
	if (!s)
		return CF_ENOMEM;
	free(*dst);
	*dst = s;
	return CF_OK;
}

/* --- rules --------------------------------------------------------------- */

int tsd_rule_init(struct tsd_rule *r)
{
	memset(r, 0, sizeof *r);
	r->type = -1;
	for (int i = 0; i < TSD_RULE_NSTR; i++)
		if (set_str(&r->s[i], ""))
			return CF_ENOMEM;
	return CF_OK;
}

void tsd_rule_free(struct tsd_rule *r)
{
	for (int i = 0; i < TSD_RULE_NSTR; i++)
		free(r->s[i]);
	pcre2_code_free(r->re);
	memset(r, 0, sizeof *r);
}

/* TreeRule.toString. */
void tsd_rule_name(const struct tsd_rule *r, char *out, size_t n)
{
	snprintf(out, n, "[%d:%d:%d:%s]", r->tree, r->level, r->order,
		 r->type < 0 ? "null" : tsd_rule_types[r->type]);
}

/* TreeRule.stringToType: -1 when unknown. */
static int type_of(const char *s)
{
	for (int i = 0; i < TSD_RULE_NTYPES; i++)
		if (!strcasecmp(s, tsd_rule_types[i]))
			return i;
	return -1;
}

static int compile(struct tsd_rule *r, struct tsd_error *err)
{
	PCRE2_UCHAR msg[120];
	PCRE2_SIZE off;
	int ec;

	pcre2_code_free(r->re);
	r->re = NULL;
	if (!*r->s[TSD_RULE_REGEX])
		return CF_OK;
	r->re = pcre2_compile((PCRE2_SPTR)r->s[TSD_RULE_REGEX],
			      PCRE2_ZERO_TERMINATED, PCRE2_UTF, &ec, &off,
			      NULL);
	if (r->re)
		return CF_OK;
	pcre2_get_error_message(ec, msg, sizeof msg);
	tsd_errf(err, "Unable to parse the 'regex' parameter: %s at %zu",
	     (char *)msg, (size_t)off);
	return CF_EINVAL;
}

/* An int of JSON v into *dst: a number, or decimal text (Jackson's
 * coercion). */
static int json_int(json_t *v, int *dst)
{
	char *end;
	long n;

	if (json_is_integer(v) && json_integer_value(v) >= INT32_MIN &&
	    json_integer_value(v) <= INT32_MAX) {
		*dst = (int)json_integer_value(v);
		return CF_OK;
	}
	if (!json_is_string(v) || !*json_string_value(v))
		return CF_EINVAL;
	n = strtol(json_string_value(v), &end, 10);
	if (*end || n < INT32_MIN || n > INT32_MAX)
		return CF_EINVAL;
	*dst = (int)n;
	return CF_OK;
}

/* The fields of JSON object j into r (initialized), as TreeRule's
 * setters take them: given marks those that differ from what r had. */
int tsd_rule_parse(void *jv, struct tsd_rule *r, struct tsd_error *err)
{
	json_t *j = jv;
	static const char *const ints[] = { "regexGroupIdx", "level", "order",
					    "treeId" };
	int *dst[] = { &r->gidx, &r->level, &r->order, &r->tree };
	json_t *v;
	int rc, n;

	if (!json_is_object(j)) {
		tsd_errf(err, "Unable to parse the given JSON: not an object");
		return CF_EINVAL;
	}
	v = json_object_get(j, "type");
	if (v && !json_is_null(v)) {
		n = json_is_string(v) ? type_of(json_string_value(v)) : -1;
		if (n < 0) {
			tsd_errf(err, "Unable to parse the 'type' parameter: "
			     "Unrecognized rule type");
			return CF_EINVAL;
		}
		if (n != r->type)
			r->given |= G_TYPE;
		r->type = n;
	}
	for (int i = 0; i < TSD_RULE_NSTR; i++) {
		v = json_object_get(j, rule_keys[i]);
		if (!v || json_is_null(v))
			continue;
		if (!json_is_string(v)) {
			tsd_errf(err, "Unable to parse the given JSON: %s is not "
			     "a string", rule_keys[i]);
			return CF_EINVAL;
		}
		if (strcmp(r->s[i], json_string_value(v)))
			r->given |= 1u << i;
		if ((rc = set_str(&r->s[i], json_string_value(v))))
			return rc;
	}
	for (int i = 0; i < 4; i++) {
		v = json_object_get(j, ints[i]);
		if (!v || json_is_null(v))
			continue;
		if (json_int(v, &n)) {
			tsd_errf(err, "Unable to parse the '%s' parameter",
			     i == 0 ? "regex_group_idx" : i == 1 ? "level" :
			     i == 2 ? "order" : "tree");
			return CF_EINVAL;
		}
		if (i == 1 && n < 0) {
			tsd_errf(err, "Negative levels are not allowed");
			return CF_EINVAL;
		}
		if (i == 2 && n < 0) {
			tsd_errf(err, "Negative orders are not allowed");
			return CF_EINVAL;
		}
		if (i < 3 && *dst[i] != n)
			r->given |= i == 0 ? G_GIDX : i == 1 ? G_LEVEL :
				    G_ORDER;
		*dst[i] = n;
	}
	return compile(r, err);
}

/* The rule as Jackson writes a TreeRule. */
static json_t *rule_json(const struct tsd_rule *r)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "type", r->type < 0 ? json_null() :
			    json_string(tsd_rule_types[r->type]));
	json_object_set_new(o, "field", json_string(r->s[TSD_RULE_FIELD]));
	json_object_set_new(o, "regex", json_string(r->s[TSD_RULE_REGEX]));
	json_object_set_new(o, "separator", json_string(r->s[TSD_RULE_SEP]));
	json_object_set_new(o, "description", json_string(r->s[TSD_RULE_DESC]));
	json_object_set_new(o, "notes", json_string(r->s[TSD_RULE_NOTES]));
	json_object_set_new(o, "level", json_integer(r->level));
	json_object_set_new(o, "order", json_integer(r->order));
	json_object_set_new(o, "customField",
			    json_string(r->s[TSD_RULE_CUSTOM]));
	json_object_set_new(o, "regexGroupIdx", json_integer(r->gidx));
	json_object_set_new(o, "displayFormat",
			    json_string(r->s[TSD_RULE_FMT]));
	json_object_set_new(o, "treeId", json_integer(r->tree));
	if (json_object_size(o) != 12) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* TreeRule.validateRule. */
static int rule_validate(const struct tsd_rule *r, struct tsd_error *err)
{
	const char *t;

	if (r->type < 0) {
		tsd_errf(err, "Missing rule type");
		return CF_EINVAL;
	}
	t = tsd_rule_types[r->type];
	if (r->type != TSD_RULE_METRIC && !*r->s[TSD_RULE_FIELD]) {
		tsd_errf(err, "Missing field name required for %s rule", t);
		return CF_EINVAL;
	}
	if (r->type != TSD_RULE_METRIC && r->type != TSD_RULE_TAGK &&
	    !*r->s[TSD_RULE_CUSTOM]) {
		tsd_errf(err, "Missing custom field name required for %s rule", t);
		return CF_EINVAL;
	}
	if (r->gidx < 0) {
		tsd_errf(err, "Invalid regex group index. Cannot be less than 0");
		return CF_EINVAL;
	}
	return CF_OK;
}

/* TreeRule.copyChanges of req onto stored s: 1 if anything changed. */
static int rule_merge(struct tsd_rule *s, const struct tsd_rule *req,
		      int overwrite, int *changed, struct tsd_error *err)
{
	int rc;

	*changed = 0;
	if ((overwrite || req->given & G_TYPE) && s->type != req->type) {
		s->type = req->type;
		*changed = 1;
	}
	for (int i = 0; i < TSD_RULE_NSTR; i++)
		if ((overwrite || req->given & (1u << i)) &&
		    strcmp(s->s[i], req->s[i])) {
			if ((rc = set_str(&s->s[i], req->s[i])))
				return rc;
			*changed = 1;
		}
	if ((overwrite || req->given & G_GIDX) && s->gidx != req->gidx) {
		s->gidx = req->gidx;
		*changed = 1;
	}
	return compile(s, err);
}

/* tree_rule:LEVEL:ORDER into q (room for 40). */
static size_t rule_qual(int level, int order, char *q)
{
	return (size_t)sprintf(q, "%s%d:%d", TSD_TREE_QRULE, level, order);
}

/* --- trees ----------------------------------------------------------- */

int tsd_tree_init(struct tsd_tree *tr)
{
	memset(tr, 0, sizeof *tr);
	for (int i = 0; i < TSD_TREE_NSTR; i++)
		if (set_str(&tr->s[i], ""))
			return CF_ENOMEM;
	return CF_OK;
}

void tsd_tree_free(struct tsd_tree *tr)
{
	for (int i = 0; i < TSD_TREE_NSTR; i++)
		free(tr->s[i]);
	for (size_t i = 0; i < tr->nrules; i++)
		tsd_rule_free(&tr->rules[i]);
	free(tr->rules);
	memset(tr, 0, sizeof *tr);
}

/* The fields of JSON object j into tr, as Tree's setters take them. */
int tsd_tree_parse(void *jv, struct tsd_tree *tr, struct tsd_error *err)
{
	json_t *j = jv;
	static const char *const bools[] = { "strictMatch", "enabled",
					     "storeFailures" };
	int *dst[] = { &tr->strict, &tr->enabled, &tr->fails };
	json_t *v;
	int rc, n;

	if (!json_is_object(j)) {
		tsd_errf(err, "Unable to parse the given JSON: not an object");
		return CF_EINVAL;
	}
	for (int i = 0; i < TSD_TREE_NSTR; i++) {
		v = json_object_get(j, tree_keys[i]);
		if (!v || json_is_null(v))
			continue;
		if (!json_is_string(v)) {
			tsd_errf(err, "Unable to parse the given JSON: %s is not "
			     "a string", tree_keys[i]);
			return CF_EINVAL;
		}
		if (strcmp(tr->s[i], json_string_value(v)))
			tr->given |= 1u << i;
		if ((rc = set_str(&tr->s[i], json_string_value(v))))
			return rc;
	}
	for (int i = 0; i < 3; i++) {
		v = json_object_get(j, bools[i]);
		if (!v || json_is_null(v))
			continue;
		if (!json_is_boolean(v)) {
			tsd_errf(err, "Unable to parse the given JSON: %s is not "
			     "a boolean", bools[i]);
			return CF_EINVAL;
		}
		if (*dst[i] != json_is_true(v))
			tr->given |= G_STRICT << i;
		*dst[i] = json_is_true(v);
	}
	v = json_object_get(j, "treeId");
	if (v && !json_is_null(v)) {
		if (json_int(v, &n)) {
			tsd_errf(err, "Unable to parse 'tree' value");
			return CF_EINVAL;
		}
		tr->id = n;
	}
	v = json_object_get(j, "created");
	if (v && json_is_integer(v)) {
		tr->created = json_integer_value(v);
		tr->given |= G_CREATED;
	}
	return CF_OK;
}

/* Tree.toStorageJson. */
static char *tree_storage(const struct tsd_tree *tr)
{
	json_t *o = json_object();
	char *s = NULL;

	if (!o)
		return NULL;
	json_object_set_new(o, "name", json_string(tr->s[TSD_TREE_NAME]));
	json_object_set_new(o, "description",
			    json_string(tr->s[TSD_TREE_DESC]));
	json_object_set_new(o, "notes", json_string(tr->s[TSD_TREE_NOTES]));
	json_object_set_new(o, "strictMatch", json_boolean(tr->strict));
	json_object_set_new(o, "created", json_integer(tr->created));
	json_object_set_new(o, "enabled", json_boolean(tr->enabled));
	json_object_set_new(o, "storeFailures", json_boolean(tr->fails));
	if (json_object_size(o) == 7)
		s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s;
}

/* The tree as Jackson writes a Tree: rules as {"LEVEL":{"ORDER":RULE}}
 * or null. */
static json_t *tree_json(const struct tsd_tree *tr)
{
	json_t *o = json_object(), *rules = NULL, *lv = NULL;
	char k[16];
	int ok = o != NULL;

	if (tr->nrules && !(rules = json_object()))
		ok = 0;
	for (size_t i = 0; ok && i < tr->nrules; i++) {
		const struct tsd_rule *r = &tr->rules[i];
		if (!i || r->level != tr->rules[i - 1].level) {
			snprintf(k, sizeof k, "%d", r->level);
			ok = (lv = json_object()) &&
			     !json_object_set_new(rules, k, lv);
		}
		snprintf(k, sizeof k, "%d", r->order);
		ok = ok && !json_object_set_new(lv, k, rule_json(r));
	}
	if (ok) {
		json_object_set_new(o, "name",
				    json_string(tr->s[TSD_TREE_NAME]));
		json_object_set_new(o, "description",
				    json_string(tr->s[TSD_TREE_DESC]));
		json_object_set_new(o, "notes",
				    json_string(tr->s[TSD_TREE_NOTES]));
		json_object_set_new(o, "enabled", json_boolean(tr->enabled));
		json_object_set_new(o, "rules", rules ? rules : json_null());
		rules = NULL;
		json_object_set_new(o, "created", json_integer(tr->created));
		json_object_set_new(o, "treeId", json_integer(tr->id));
		json_object_set_new(o, "strictMatch", json_boolean(tr->strict));
		json_object_set_new(o, "storeFailures",
				    json_boolean(tr->fails));
		ok = json_object_size(o) == 9;
	}
	json_decref(rules);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int tsd_rule_cmp(const void *a, const void *b)
{
	const struct tsd_rule *x = a, *y = b;
	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

/* The tree of a row's cells (its definition and rules) into tr
 * (initialized); *found 0 when the row has no definition; old (may be
 * NULL) gets the stored definition's bytes. */
static int tree_cells(const cf_row *row, int id, struct tsd_tree *tr,
		      int *found, struct buf *old, struct tsd_error *err)
{
	size_t plen = strlen(TSD_TREE_QRULE);
	json_error_t je;
	json_t *j;
	int rc = CF_OK;

	*found = 0;
	tr->id = id;
	for (size_t i = 0; rc == CF_OK && i < cf_row_count(row); i++) {
		const struct cf_cell *c = cf_row_cell(row, i);
		int is_tree = c->qlen == 4 &&
			      !memcmp(c->qual, TSD_TREE_QTREE, 4);
		if (!is_tree && (c->qlen <= plen ||
				 memcmp(c->qual, TSD_TREE_QRULE, plen)))
			continue;
		if (!(j = json_loadb((const char *)c->val, c->vlen, 0, &je))) {
			tsd_errf(err, "a stored tree or rule is not JSON: %s",
			     je.text);
			return CF_ECORRUPT;
		}
		if (is_tree) {
			unsigned given = tr->given;
			if (old)
				rc = buf_append(old, c->val, c->vlen);
			if (rc == CF_OK)
				rc = tsd_tree_parse(j, tr, err);
			tr->id = id;
			tr->given = given;
			*found = 1;
		} else {
			struct tsd_rule *nr = realloc(tr->rules,
						      (tr->nrules + 1) *
						      sizeof *nr);
			if (!nr) {
				rc = CF_ENOMEM;
			} else {
				tr->rules = nr;
				rc = tsd_rule_init(&nr[tr->nrules]);
				if (rc == CF_OK)
					tr->nrules++;
				if (rc == CF_OK)
					rc = tsd_rule_parse(j,
							    &nr[tr->nrules - 1],
							    err);
				nr[tr->nrules - 1].tree = id;
				nr[tr->nrules - 1].given = 0;
			}
		}
		json_decref(j);
		if (rc == CF_EINVAL)
			rc = CF_ECORRUPT;
	}
	if (rc == CF_OK && tr->nrules)
		qsort(tr->rules, tr->nrules, sizeof *tr->rules, tsd_rule_cmp);
	return rc;
}

/* --- storage ------------------------------------------------------------ */

int tsd_tree_table(tsd *t, int create, cf_table **out)
{
	struct cf_family f;
	int rc = cf_table_open(t->db, TSD_TABLE_TREE, out);

	if (rc != CF_ENOTFOUND)
		return rc;
	*out = NULL;
	if (!create)
		return CF_OK;
	cf_family_default(&f, TSD_TREE_FAM);
	rc = cf_table_create(t->db, TSD_TABLE_TREE, &f, 1);
	if (rc && rc != CF_EEXIST)
		return rc;
	return cf_table_open(t->db, TSD_TABLE_TREE, out);
}

void tsd_tree_key(int id, unsigned char *k)
{
	k[0] = (unsigned char)(id >> 8);
	k[1] = (unsigned char)id;
}

int tsd_tree_check_id(int id, struct tsd_error *err)
{
	if (id >= 1 && id <= 65535)
		return CF_OK;
	tsd_errf(err, "Invalid Tree ID");
	return CF_EINVAL;
}

/* The tree id (definition and rules) into tr (initialized here). */
static int tree_read(cf_table *tt, int id, struct tsd_tree *tr, int *found,
		     struct buf *old, struct tsd_error *err)
{
	struct cf_column col = { TSD_TREE_FAM, 1, NULL, 0 };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	unsigned char k[2];
	cf_row *row = NULL;
	int rc;

	*found = 0;
	if ((rc = tsd_tree_init(tr)))
		return rc;
	tr->id = id;
	if (!tt)
		return CF_OK;
	tsd_tree_key(id, k);
	o.columns = &col;
	o.ncolumns = 1;
	if ((rc = cf_table_get(tt, k, 2, &o, &row)) == CF_OK)
		rc = tree_cells(row, id, tr, found, old, err);
	cf_row_free(row);
	return rc;
}

/* The stored tree id or CF_ENOTFOUND (`Unable to locate tree: N`). */
int tsd_tree_load(tsd *t, int id, struct tsd_tree *tr, struct tsd_error *err)
{
	cf_table *tt = NULL;
	int rc, found = 0;

	memset(tr, 0, sizeof *tr);
	if ((rc = tsd_tree_check_id(id, err)) ||
	    (rc = tsd_tree_table(t, 0, &tt)))
		return rc;
	rc = tree_read(tt, id, tr, &found, NULL, err);
	if (rc == CF_OK && !found) {
		tsd_errf(err, "Unable to locate tree: %d", id);
		rc = CF_ENOTFOUND;
	}
	cf_table_close(tt);
	return rc;
}

/* Calls fn for each stored tree in ID order (Tree.fetchAllTrees): the
 * rows of 2-byte keys, found by seeking past each tree's branches. */
int tsd_tree_each(cf_table *tt, int (*fn)(void *arg, struct tsd_tree *tr),
		  void *arg, struct tsd_error *err)
{
	struct cf_column col = { TSD_TREE_FAM, 1, NULL, 0 };
	unsigned char k[2];
	int rc = CF_OK, next = 0;

	while (rc == CF_OK && tt && next <= 65535) {
		struct cf_scan_opts so;
		cf_scanner *sc = NULL;
		const cf_row *row = NULL;
		size_t klen;
		const unsigned char *key;

		memset(&so, 0, sizeof so);
		so.read = (struct cf_read_opts)CF_READ_OPTS_INIT;
		so.read.columns = &col;
		so.read.ncolumns = 1;
		tsd_tree_key(next, k);
		so.start = k;
		so.startlen = 2;
		so.limit = 1;
		if ((rc = cf_scan_open(tt, &so, &sc)) == CF_OK)
			rc = cf_scan_next(sc, &row);
		if (rc == CF_OK && !row) {
			cf_scan_close(sc);
			break;
		}
		if (rc == CF_OK) {
			key = cf_row_key(row, &klen);
			if (klen < 2) {
				/* not OpenTSDB's: seek past it (a 1-byte
				 * key sorts before the 2-byte ones it
				 * begins) */
				next = klen ? key[0] << 8 : next + 1;
				cf_scan_close(sc);
				continue;
			}
			next = key[0] << 8 | key[1];
			if (klen == 2 && next > 0) {
				struct tsd_tree tr;
				int found;
				if ((rc = tsd_tree_init(&tr)) == CF_OK)
					rc = tree_cells(row, next, &tr, &found,
							NULL, err);
				if (rc == CF_OK && found)
					rc = fn(arg, &tr);
				tsd_tree_free(&tr);
			}
			next++;
		}
		cf_scan_close(sc);
	}
	return rc;
}

static int add_json(void *arg, struct tsd_tree *tr)
{
	json_t *o = tree_json(tr);
	return o && !json_array_append_new(arg, o) ? CF_OK : CF_ENOMEM;
}

/* Appends j's compact text (j consumed). */
int tsd_tree_get(tsd *t, int id, struct buf *out, struct tsd_error *err)
{
	cf_table *tt = NULL;
	struct tsd_tree tr;
	json_t *a;
	int rc;

	if (id) {
		if ((rc = tsd_tree_load(t, id, &tr, err)) == CF_OK)
			rc = tsd_json_put(out, tree_json(&tr));
		tsd_tree_free(&tr);
		return rc;
	}
	if ((rc = tsd_tree_table(t, 0, &tt)))
		return rc;
	if (!(a = json_array()))
		rc = CF_ENOMEM;
	else
		rc = tsd_tree_each(tt, add_json, a, err);
	if (rc == CF_OK)
		rc = tsd_json_put(out, a);
	else
		json_decref(a);
	cf_table_close(tt);
	return rc;
}

/* Puts val into fam:qual of row iff the stored bytes are expect (NULL:
 * absent). */
int tsd_tree_cas(cf_table *tt, const void *row, size_t rlen,
		 const char *qual, size_t qlen, const char *val, size_t vlen,
		 const struct buf *expect, int *applied)
{
	cf_batch *b = NULL;
	int rc;

	*applied = 0;
	if ((rc = cf_batch_new(&b)) == CF_OK &&
	    (rc = cf_batch_put(b, row, rlen, TSD_TREE_FAM, 1, qual, qlen,
			       CF_TS_NOW, val, vlen)) == CF_OK)
		rc = cf_table_check_and_apply(tt, row, rlen, TSD_TREE_FAM, 1,
					      qual, qlen,
					      expect ? expect->p : NULL,
					      expect ? expect->len : 0, b,
					      applied);
	cf_batch_free(b);
	return rc;
}

static int max_id(void *arg, struct tsd_tree *tr)
{
	if (tr->id > *(int *)arg)
		*(int *)arg = tr->id;
	return CF_OK;
}

int tsd_tree_sync(tsd *t, const char *body, size_t len, int overwrite,
		  struct buf *out, struct tsd_error *err)
{
	static const unsigned bits[TSD_TREE_NSTR] = {
		1 << TSD_TREE_NAME, 1 << TSD_TREE_DESC, 1 << TSD_TREE_NOTES
	};
	struct buf old = BUF_INIT;
	struct tsd_tree req, s;
	cf_table *tt = NULL;
	unsigned char k[2];
	json_error_t je;
	json_t *j;
	char *val = NULL;
	int rc, found, applied = 0, top = 0;

	memset(&s, 0, sizeof s);
	if ((rc = tsd_tree_init(&req)))
		return rc;
	if (!(j = json_loadb(body, len, 0, &je))) {
		tsd_errf(err, "Unable to parse the given JSON: %s", je.text);
		rc = CF_EINVAL;
	} else {
		rc = tsd_tree_parse(j, &req, err);
		json_decref(j);
	}
	if (rc == CF_OK && req.id &&
	    (rc = tsd_tree_check_id(req.id, err)) == CF_OK)
		rc = tsd_tree_table(t, 0, &tt);
	if (rc == CF_OK && req.id) {
		rc = tree_read(tt, req.id, &s, &found, NULL, err);
		tsd_tree_free(&s);
		if (rc == CF_OK && !found) {
			tsd_errf(err, "Unable to locate tree: %d", req.id);
			rc = CF_ENOTFOUND;
		}
		if (rc == CF_OK && !(req.given & ~G_CREATED)) {
			tsd_errf(err, "No changes detected in the tree");
			rc = CF_EEXIST;
		}
	}
	for (int i = 0; rc == CF_OK && req.id && !applied && i < TRIES; i++) {
		buf_reset(&old);
		if ((rc = tree_read(tt, req.id, &s, &found, &old, err)))
			break;
		if (!found) {
			/* deleted meanwhile: not made again */
			tsd_errf(err, "Unable to locate tree: %d", req.id);
			rc = CF_ENOTFOUND;
		}
		for (int f = 0; rc == CF_OK && f < TSD_TREE_NSTR; f++)
			if (overwrite || req.given & bits[f])
				rc = set_str(&s.s[f], req.s[f]);
		if (overwrite || req.given & G_STRICT)
			s.strict = req.strict;
		if (overwrite || req.given & G_ENABLED)
			s.enabled = req.enabled;
		if (overwrite || req.given & G_FAILS)
			s.fails = req.fails;
		free(val);
		val = rc ? NULL : tree_storage(&s);
		if (rc == CF_OK && !val)
			rc = CF_ENOMEM;
		tsd_tree_key(req.id, k);
		if (rc == CF_OK)
			rc = tsd_tree_cas(tt, k, 2, TSD_TREE_QTREE, 4, val,
					  strlen(val), found ? &old : NULL,
					  &applied);
		tsd_tree_free(&s);
	}
	if (rc == CF_OK && !req.id) {
		/* createNewTree: the ID after the greatest stored */
		if (!*req.s[TSD_TREE_NAME]) {
			tsd_errf(err, "Tree was missing the name");
			rc = CF_EINVAL;
		}
		if (rc == CF_OK)
			rc = tsd_tree_table(t, 1, &tt);
		for (int i = 0; rc == CF_OK && !applied && i < TRIES; i++) {
			top = 0;
			if ((rc = tsd_tree_each(tt, max_id, &top, err)))
				break;
			if (top >= 65535) {
				tsd_errf(err, "Exhausted all Tree IDs");
				rc = CF_EINVAL;
				break;
			}
			req.id = top + 1;
			if (!(req.given & G_CREATED))
				req.created = (int64_t)time(NULL);
			free(val);
			if (!(val = tree_storage(&req))) {
				rc = CF_ENOMEM;
				break;
			}
			tsd_tree_key(req.id, k);
			rc = tsd_tree_cas(tt, k, 2, TSD_TREE_QTREE, 4, val,
					  strlen(val), NULL, &applied);
		}
	}
	if (rc == CF_OK && !applied) {
		tsd_errf(err, "Unable to save changes to tree: %d", req.id);
		rc = CF_EBUSY;
	}
	if (rc == CF_OK)
		rc = tsd_tree_get(t, req.id, out, err);
	free(val);
	buf_release(&old);
	tsd_tree_free(&req);
	cf_table_close(tt);
	return rc;
}

/* 1 if qualifier q[0..n) is one Tree.deleteTree removes. */
static int deletable(const unsigned char *q, size_t n, int definition)
{
	static const char *const pre[] = { TSD_TREE_QLEAF, TSD_TREE_QCOLL,
					   TSD_TREE_QNM, TSD_TREE_QRULE };
	if (n == 6 && !memcmp(q, TSD_TREE_QBRANCH, 6))
		return 1;
	if (n == 4 && !memcmp(q, TSD_TREE_QTREE, 4))
		return definition;
	for (int i = 0; i < 4; i++) {
		size_t pl = strlen(pre[i]);
		if (n > pl && !memcmp(q, pre[i], pl))
			return i < 3 || definition;
	}
	return 0;
}

int tsd_tree_delete(tsd *t, int id, int definition, struct tsd_error *err)
{
	struct cf_column col = { TSD_TREE_FAM, 1, NULL, 0 };
	struct cf_scan_opts so;
	cf_scanner *sc = NULL;
	cf_table *tt = NULL;
	const cf_row *row;
	unsigned char k[2];
	struct tsd_tree tr;
	int rc;

	if ((rc = tsd_tree_load(t, id, &tr, err))) {
		tsd_tree_free(&tr);
		return rc;
	}
	tsd_tree_free(&tr);
	if ((rc = tsd_tree_table(t, 0, &tt)) || !tt)
		return rc;
	memset(&so, 0, sizeof so);
	so.read = (struct cf_read_opts)CF_READ_OPTS_INIT;
	so.read.columns = &col;
	so.read.ncolumns = 1;
	so.read.keys_only = 1;
	tsd_tree_key(id, k);
	so.prefix = k;
	so.prefixlen = 2;
	rc = cf_scan_open(tt, &so, &sc);
	while (rc == CF_OK && (rc = cf_scan_next(sc, &row)) == CF_OK && row) {
		cf_batch *b = NULL;
		size_t klen, n = 0;
		const unsigned char *key = cf_row_key(row, &klen);
		if ((rc = cf_batch_new(&b)))
			break;
		for (size_t i = 0; rc == CF_OK && i < cf_row_count(row); i++) {
			const struct cf_cell *c = cf_row_cell(row, i);
			if (!deletable(c->qual, c->qlen, definition))
				continue;
			rc = cf_batch_delete(b, CF_DEL_COLUMN, key, klen,
					     TSD_TREE_FAM, 1, c->qual,
					     c->qlen, CF_TS_NOW);
			n++;
		}
		if (rc == CF_OK && n)
			rc = cf_table_apply(tt, b);
		cf_batch_free(b);
	}
	cf_scan_close(sc);
	cf_table_close(tt);
	return rc;
}

/* --- rules' operations ------------------------------------------------- */

int tsd_tree_rule_get(tsd *t, int id, int level, int order, struct buf *out,
		      struct tsd_error *err)
{
	struct tsd_tree tr;
	int rc = tsd_tree_load(t, id, &tr, err);

	if (rc == CF_OK) {
		rc = CF_ENOTFOUND;
		for (size_t i = 0; i < tr.nrules; i++)
			if (tr.rules[i].level == level &&
			    tr.rules[i].order == order) {
				rc = tsd_json_put(out,
						       rule_json(&tr.rules[i]));
				break;
			}
		if (rc == CF_ENOTFOUND)
			tsd_errf(err, "Unable to locate rule: [%d:%d:%d:null]", id,
			     level, order);
	}
	tsd_tree_free(&tr);
	return rc;
}

/* The stored rule of req's place into s (initialized here); *found. */
static int rule_read(cf_table *tt, const struct tsd_rule *req,
		     struct tsd_rule *s, int *found, struct buf *old,
		     struct tsd_error *err)
{
	struct cf_column col = { TSD_TREE_FAM, 1, NULL, 0 };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	unsigned char k[2];
	cf_row *row = NULL;
	char q[48];
	json_t *j;
	int rc;

	*found = 0;
	if ((rc = tsd_rule_init(s)))
		return rc;
	s->tree = req->tree;
	s->level = req->level;
	s->order = req->order;
	col.qual = q;
	col.qlen = rule_qual(req->level, req->order, q);
	o.columns = &col;
	o.ncolumns = 1;
	tsd_tree_key(req->tree, k);
	if ((rc = cf_table_get(tt, k, 2, &o, &row)) == CF_OK &&
	    cf_row_count(row)) {
		const struct cf_cell *c = cf_row_cell(row, 0);
		if ((rc = buf_append(old, c->val, c->vlen)))
			goto out;
		if (!(j = json_loadb((const char *)c->val, c->vlen, 0, NULL))) {
			tsd_errf(err, "a stored rule is not JSON");
			rc = CF_ECORRUPT;
			goto out;
		}
		rc = tsd_rule_parse(j, s, err);
		json_decref(j);
		s->tree = req->tree;
		s->level = req->level;
		s->order = req->order;
		*found = rc == CF_OK;
		if (rc == CF_EINVAL)
			rc = CF_ECORRUPT;
	}
out:
	cf_row_free(row);
	return rc;
}

/* The merged rule of req (syncToStorage up to the write): into s,
 * validated, with the stored bytes in old. */
static int rule_prepare(cf_table *tt, const struct tsd_rule *req, int overwrite,
			struct tsd_rule *s, int *found, struct buf *old,
			struct tsd_error *err)
{
	int rc, changed;

	buf_reset(old);
	if ((rc = rule_read(tt, req, s, found, old, err)))
		return rc;
	if (!*found) {
		/* the request is the rule */
		unsigned given = req->given;
		int chg;
		s->given = 0;
		rc = rule_merge(s, req, 1, &chg, err);
		s->given = given;
	} else if ((rc = rule_merge(s, req, overwrite, &changed, err)) ==
		   CF_OK && !changed) {
		tsd_errf(err, "No changes detected in the rule");
		return CF_EEXIST;
	}
	return rc ? rc : rule_validate(s, err);
}

/* Writes the rule req (parsed) of an existing tree. */
static int rule_store(cf_table *tt, const struct tsd_rule *req, int overwrite,
		      struct tsd_error *err)
{
	struct buf old = BUF_INIT;
	unsigned char k[2];
	struct tsd_rule s;
	char q[48], *val = NULL;
	size_t qlen = rule_qual(req->level, req->order, q);
	int rc = CF_OK, found, applied = 0;

	if (!req->given) {
		tsd_errf(err, "No changes detected in the rule");
		return CF_EEXIST;
	}
	tsd_tree_key(req->tree, k);
	for (int i = 0; rc == CF_OK && !applied && i < TRIES; i++) {
		rc = rule_prepare(tt, req, overwrite, &s, &found, &old, err);
		if (rc == CF_OK) {
			json_t *j = rule_json(&s);
			val = j ? json_dumps(j, JSON_COMPACT |
					     JSON_PRESERVE_ORDER) : NULL;
			json_decref(j);
			rc = val ? CF_OK : CF_ENOMEM;
		}
		if (rc == CF_OK)
			rc = tsd_tree_cas(tt, k, 2, q, qlen, val, strlen(val),
					  found ? &old : NULL, &applied);
		free(val);
		val = NULL;
		tsd_rule_free(&s);
	}
	if (rc == CF_OK && !applied) {
		tsd_errf(err, "Unable to save rule to storage");
		rc = CF_EBUSY;
	}
	buf_release(&old);
	return rc;
}

/* Parses body into rule r (initialized here) and checks its place. */
static int rule_of(const char *body, size_t len, json_t *j, struct tsd_rule *r,
		   struct tsd_error *err)
{
	json_error_t je;
	json_t *own = NULL;
	int rc;

	if ((rc = tsd_rule_init(r)))
		return rc;
	if (!j && !(j = own = json_loadb(body, len, 0, &je))) {
		tsd_errf(err, "Unable to parse the given JSON: %s", je.text);
		return CF_EINVAL;
	}
	rc = tsd_rule_parse(j, r, err);
	json_decref(own);
	return rc ? rc : tsd_tree_check_id(r->tree, err);
}

int tsd_tree_rule_sync(tsd *t, const char *body, size_t len, int overwrite,
		       struct buf *out, struct tsd_error *err)
{
	cf_table *tt = NULL;
	struct tsd_tree tr;
	struct tsd_rule r;
	int rc = rule_of(body, len, NULL, &r, err);

	memset(&tr, 0, sizeof tr);
	if (rc == CF_OK)
		rc = tsd_tree_load(t, r.tree, &tr, err);
	if (rc == CF_OK)
		rc = tsd_tree_table(t, 1, &tt);
	if (rc == CF_OK)
		rc = rule_store(tt, &r, overwrite, err);
	if (rc == CF_OK && out)
		rc = tsd_tree_rule_get(t, r.tree, r.level, r.order, out, err);
	tsd_tree_free(&tr);
	tsd_rule_free(&r);
	cf_table_close(tt);
	return rc;
}

/* Deletes the rules of tr (all, or the one at level:order). */
static int rules_delete(tsd *t, const struct tsd_tree *tr, int all, int level,
			int order)
{
	cf_table *tt = NULL;
	cf_batch *b = NULL;
	unsigned char k[2];
	char q[48];
	size_t n = 0;
	int rc;

	if ((rc = tsd_tree_table(t, 0, &tt)) || !tt)
		return rc;
	tsd_tree_key(tr->id, k);
	rc = cf_batch_new(&b);
	for (size_t i = 0; rc == CF_OK && i < tr->nrules; i++) {
		const struct tsd_rule *r = &tr->rules[i];
		if (!all && (r->level != level || r->order != order))
			continue;
		rc = cf_batch_delete(b, CF_DEL_COLUMN, k, 2, TSD_TREE_FAM, 1, q,
				     rule_qual(r->level, r->order, q),
				     CF_TS_NOW);
		n++;
	}
	if (rc == CF_OK && n)
		rc = cf_table_apply(tt, b);
	cf_batch_free(b);
	cf_table_close(tt);
	return rc;
}

int tsd_tree_rule_delete(tsd *t, int id, int level, int order,
			 struct tsd_error *err)
{
	struct tsd_tree tr;
	int rc = tsd_tree_load(t, id, &tr, err), has = 0;

	for (size_t i = 0; rc == CF_OK && i < tr.nrules; i++)
		has |= tr.rules[i].level == level && tr.rules[i].order == order;
	if (rc == CF_OK && !has) {
		tsd_errf(err, "Unable to locate rule: [%d:%d:%d:null]", id, level,
		     order);
		rc = CF_ENOTFOUND;
	}
	if (rc == CF_OK)
		rc = rules_delete(t, &tr, 0, level, order);
	tsd_tree_free(&tr);
	return rc;
}

int tsd_tree_rules(tsd *t, int id, const char *body, size_t len,
		   int overwrite, int del, struct tsd_error *err)
{
	struct tsd_rule *rs = NULL;
	struct buf old = BUF_INIT;
	cf_table *tt = NULL;
	struct tsd_tree tr;
	json_error_t je;
	json_t *a = NULL;
	size_t n = 0;
	int rc = CF_OK;

	memset(&tr, 0, sizeof tr);
	if (body) {
		if (!(a = json_loadb(body, len, 0, &je))) {
			tsd_errf(err, "Unable to parse the given JSON: %s",
			     je.text);
			return CF_EINVAL;
		}
		if (!json_is_array(a) || !json_array_size(a)) {
			tsd_errf(err, "Missing tree rules");
			rc = CF_EINVAL;
		} else if (!(rs = calloc(json_array_size(a), sizeof *rs))) {
			rc = CF_ENOMEM;
		}
		for (; rc == CF_OK && n < json_array_size(a); n++) {
			rc = rule_of(NULL, 0, json_array_get(a, n), &rs[n],
				     err);
			if (rc == CF_OK && rs[n].tree != rs[0].tree) {
				tsd_errf(err, "All rules must belong to the same "
				     "tree");
				rc = CF_EINVAL;
			}
		}
		if (n)
			id = rs[0].tree;
	}
	if (rc == CF_OK)
		rc = tsd_tree_load(t, id, &tr, err);
	if (rc == CF_OK && !body && !del) {
		tsd_errf(err, "Missing tree rules");
		rc = CF_EINVAL;
	}
	if (rc == CF_OK)
		rc = tsd_tree_table(t, 1, &tt);
	/* every rule checked before any is written: bad input loses
	 * nothing */
	for (size_t i = 0; rc == CF_OK && !del && i < n; i++) {
		struct tsd_rule s;
		int found;
		rc = rule_prepare(tt, &rs[i], overwrite, &s, &found, &old,
				  err);
		if (rc == CF_EEXIST)
			rc = CF_OK;
		tsd_rule_free(&s);
	}
	if (rc == CF_OK && (del || overwrite))
		rc = rules_delete(t, &tr, 1, 0, 0);
	for (size_t i = 0; rc == CF_OK && !del && i < n; i++) {
		rc = rule_store(tt, &rs[i], overwrite, err);
		if (rc == CF_EEXIST)
			rc = CF_OK;
	}
	for (size_t i = 0; i < n; i++)
		tsd_rule_free(&rs[i]);
	free(rs);
	json_decref(a);
	buf_release(&old);
	tsd_tree_free(&tr);
	cf_table_close(tt);
	return rc;
}

void tsd_tree_hex(const unsigned char *k, size_t n, char *out)
{
	static const char hx[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hx[k[i] >> 4];
		out[2 * i + 1] = hx[k[i] & 15];
	}
	out[2 * n] = '\0';
}

/* UniqueId.stringToUid / Branch.stringToId: hex (odd: a leading 0) into
 * b (room max); -1 when not hex or too long. */
long tsd_tree_unhex(const char *s, size_t n, unsigned char *b, size_t max)
{
	size_t odd = n & 1, len = (n + odd) / 2;

	if (len > max)
		return -1;
	for (size_t i = 0; i < n + odd; i++) {
		int c = i < odd ? '0' : s[i - odd], v;
		v = c >= '0' && c <= '9' ? c - '0' :
		    c >= 'a' && c <= 'f' ? c - 'a' + 10 :
		    c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (v < 0)
			return -1;
		if (i & 1)
			b[i / 2] |= (unsigned char)v;
		else
			b[i / 2] = (unsigned char)(v << 4);
	}
	return (long)len;
}

/* --- collisions and not matched ------------------------------------------ */

int tsd_tree_failures(tsd *t, int id, const char *tsuids, int collisions,
		      struct buf *out, struct tsd_error *err)
{
	const char *pre = collisions ? TSD_TREE_QCOLL : TSD_TREE_QNM;
	size_t pl = strlen(pre);
	struct cf_column col = { TSD_TREE_FAM, 1, NULL, 0 };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	unsigned char k[3], want[TSUID_MAX];
	cf_row *row = NULL;
	cf_table *tt = NULL;
	struct tsd_tree tr;
	json_t *res;
	int rc = tsd_tree_load(t, id, &tr, err);

	tsd_tree_free(&tr);
	if (rc)
		return rc;
	if (!(res = json_object()))
		return CF_ENOMEM;
	rc = tsd_tree_table(t, 0, &tt);
	tsd_tree_key(id, k);
	k[2] = collisions ? 1 : 2;
	o.columns = &col;
	o.ncolumns = 1;
	if (rc == CF_OK && tt)
		rc = cf_table_get(tt, k, 3, &o, &row);
	for (size_t i = 0; rc == CF_OK && row && i < cf_row_count(row); i++) {
		const struct cf_cell *c = cf_row_cell(row, i);
		char hex[2 * TSUID_MAX + 1];
		int keep = !tsuids || !*tsuids;
		if (c->qlen <= pl || memcmp(c->qual, pre, pl) ||
		    c->qlen - pl > TSUID_MAX)
			continue;
		/* the list's TSUIDs as stringToUid reads them */
		for (const char *p = tsuids; !keep && p && *p;) {
			size_t n = strcspn(p, ",");
			long w = tsd_tree_unhex(p, n, want, sizeof want);
			if (w < 0) {
				tsd_errf(err, "Invalid TSUID: %.*s",
				     (int)(n > 60 ? 60 : n), p);
				rc = CF_EINVAL;
				break;
			}
			keep = (size_t)w == c->qlen - pl &&
			       !memcmp(want, c->qual + pl, (size_t)w);
			p += n + (p[n] == ',');
		}
		if (rc || !keep)
			continue;
		tsd_tree_hex(c->qual + pl, c->qlen - pl, hex);
		if (json_object_set_new(res, hex, json_stringn(
				(const char *)c->val, c->vlen)))
			rc = CF_ENOMEM;
	}
	cf_row_free(row);
	cf_table_close(tt);
	/* in the cells' order: by TSUID (OpenTSDB's HashMap has none) */
	if (rc == CF_OK)
		return tsd_json_put(out, res);
	json_decref(res);
	return rc;
}
