/*
 * tree.c: OpenTSDB's trees (tree.h has the storage layout): tree
 * definitions and rules, the builder that turns a series' meta data
 * into a path of branches ending in a leaf, and the reads of branches,
 * collisions and not-matched series.
 *
 * Definitions and rules change by check-and-put on the stored bytes
 * (OpenTSDB's compareAndSet), tried again when another writer came
 * first.  Branches and leaves are written only where absent, so a path
 * built twice stays as first written and a leaf of another series
 * under the same name is a collision.
 *
 * The builder (TreeBuilder.processRuleset) walks the levels of the rule
 * set in order; in a level the rules are tried by order until one gives
 * a name.  A rule with a separator gives one name a pass for each part
 * of the value, so its level is visited once per part.  The names, a
 * name equal to the one before dropped and levels giving none skipped,
 * are the path: the last is the leaf's display name, the others the
 * branches under ROOT.  Regexes are PCRE2 (Perl syntax, close to
 * java.util.regex); separators are regexes too, as String.split takes
 * them, trailing empty parts dropped.
 */
#include <jansson.h>
#include <stdarg.h>
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
#define KEY_MAX 1024	/* a branch key: 2 + 4 a level */
#define PATH_MAX_NAMES ((KEY_MAX - 2) / 4)

static const char FAM[] = "t", QTREE[] = "tree", QBRANCH[] = "branch";
static const char RULE_PREFIX[] = "tree_rule:", LEAF_PREFIX[] = "leaf:";
static const char COLL_PREFIX[] = "tree_collision:";
static const char NM_PREFIX[] = "tree_not_matched:";

enum { R_METRIC, R_METRIC_CUSTOM, R_TAGK, R_TAGK_CUSTOM, R_TAGV_CUSTOM,
       R_NTYPES };
static const char *const type_names[R_NTYPES] = {
	"METRIC", "METRIC_CUSTOM", "TAGK", "TAGK_CUSTOM", "TAGV_CUSTOM"
};

/* A rule's text fields, in the order of rule_strs. */
enum { S_FIELD, S_CUSTOM, S_REGEX, S_SEP, S_DESC, S_NOTES, S_FMT, S_N };
static const char *const rule_keys[S_N] = {
	"field", "customField", "regex", "separator", "description", "notes",
	"displayFormat"
};

struct rule {
	int type;		/* -1: none */
	char *s[S_N];
	int gidx, level, order, tree;
	unsigned given;		/* 1 << S_x, G_TYPE, G_GIDX, G_LEVEL... */
	pcre2_code *re;
};

enum { G_TYPE = 1 << 8, G_GIDX = 1 << 9, G_LEVEL = 1 << 10,
       G_ORDER = 1 << 11 };

enum { T_NAME, T_DESC, T_NOTES, T_N };
static const char *const tree_keys[T_N] = { "name", "description", "notes" };

struct tree {
	int id;
	char *s[T_N];
	int strict, enabled, fails;
	int64_t created;
	unsigned given;		/* 1 << T_x, G_STRICT, G_ENABLED, G_FAILS */
	struct rule *rules;	/* by level, then order */
	size_t nrules;
};

enum { G_STRICT = 1 << 4, G_ENABLED = 1 << 5, G_FAILS = 1 << 6,
       G_CREATED = 1 << 7 };

static void fail(struct tsd_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	err->line = 0;
	va_start(ap, fmt);
	vsnprintf(err->reason, sizeof err->reason, fmt, ap);
	va_end(ap);
}

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

static int rule_init(struct rule *r)
{
	memset(r, 0, sizeof *r);
	r->type = -1;
	for (int i = 0; i < S_N; i++)
		if (set_str(&r->s[i], ""))
			return CF_ENOMEM;
	return CF_OK;
}

static void rule_free(struct rule *r)
{
	for (int i = 0; i < S_N; i++)
		free(r->s[i]);
	pcre2_code_free(r->re);
	memset(r, 0, sizeof *r);
}

/* TreeRule.toString. */
static void rule_name(const struct rule *r, char *out, size_t n)
{
	snprintf(out, n, "[%d:%d:%d:%s]", r->tree, r->level, r->order,
		 r->type < 0 ? "null" : type_names[r->type]);
}

/* TreeRule.stringToType: -1 when unknown. */
static int type_of(const char *s)
{
	for (int i = 0; i < R_NTYPES; i++)
		if (!strcasecmp(s, type_names[i]))
			return i;
	return -1;
}

static int compile(struct rule *r, struct tsd_error *err)
{
	PCRE2_UCHAR msg[120];
	PCRE2_SIZE off;
	int ec;

	pcre2_code_free(r->re);
	r->re = NULL;
	if (!*r->s[S_REGEX])
		return CF_OK;
	r->re = pcre2_compile((PCRE2_SPTR)r->s[S_REGEX], PCRE2_ZERO_TERMINATED,
			      PCRE2_UTF, &ec, &off, NULL);
	if (r->re)
		return CF_OK;
	pcre2_get_error_message(ec, msg, sizeof msg);
	fail(err, "Unable to parse the 'regex' parameter: %s at %zu",
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
static int rule_parse(json_t *j, struct rule *r, struct tsd_error *err)
{
	static const char *const ints[] = { "regexGroupIdx", "level", "order",
					    "treeId" };
	int *dst[] = { &r->gidx, &r->level, &r->order, &r->tree };
	json_t *v;
	int rc, n;

	if (!json_is_object(j)) {
		fail(err, "Unable to parse the given JSON: not an object");
		return CF_EINVAL;
	}
	v = json_object_get(j, "type");
	if (v && !json_is_null(v)) {
		n = json_is_string(v) ? type_of(json_string_value(v)) : -1;
		if (n < 0) {
			fail(err, "Unable to parse the 'type' parameter: "
			     "Unrecognized rule type");
			return CF_EINVAL;
		}
		if (n != r->type)
			r->given |= G_TYPE;
		r->type = n;
	}
	for (int i = 0; i < S_N; i++) {
		v = json_object_get(j, rule_keys[i]);
		if (!v || json_is_null(v))
			continue;
		if (!json_is_string(v)) {
			fail(err, "Unable to parse the given JSON: %s is not "
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
			fail(err, "Unable to parse the '%s' parameter",
			     i == 0 ? "regex_group_idx" : i == 1 ? "level" :
			     i == 2 ? "order" : "tree");
			return CF_EINVAL;
		}
		if (i == 1 && n < 0) {
			fail(err, "Negative levels are not allowed");
			return CF_EINVAL;
		}
		if (i == 2 && n < 0) {
			fail(err, "Negative orders are not allowed");
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
static json_t *rule_json(const struct rule *r)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "type", r->type < 0 ? json_null() :
			    json_string(type_names[r->type]));
	json_object_set_new(o, "field", json_string(r->s[S_FIELD]));
	json_object_set_new(o, "regex", json_string(r->s[S_REGEX]));
	json_object_set_new(o, "separator", json_string(r->s[S_SEP]));
	json_object_set_new(o, "description", json_string(r->s[S_DESC]));
	json_object_set_new(o, "notes", json_string(r->s[S_NOTES]));
	json_object_set_new(o, "level", json_integer(r->level));
	json_object_set_new(o, "order", json_integer(r->order));
	json_object_set_new(o, "customField", json_string(r->s[S_CUSTOM]));
	json_object_set_new(o, "regexGroupIdx", json_integer(r->gidx));
	json_object_set_new(o, "displayFormat", json_string(r->s[S_FMT]));
	json_object_set_new(o, "treeId", json_integer(r->tree));
	if (json_object_size(o) != 12) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* TreeRule.validateRule. */
static int rule_validate(const struct rule *r, struct tsd_error *err)
{
	const char *t;

	if (r->type < 0) {
		fail(err, "Missing rule type");
		return CF_EINVAL;
	}
	t = type_names[r->type];
	if (r->type != R_METRIC && !*r->s[S_FIELD]) {
		fail(err, "Missing field name required for %s rule", t);
		return CF_EINVAL;
	}
	if (r->type != R_METRIC && r->type != R_TAGK && !*r->s[S_CUSTOM]) {
		fail(err, "Missing custom field name required for %s rule", t);
		return CF_EINVAL;
	}
	if (r->gidx < 0) {
		fail(err, "Invalid regex group index. Cannot be less than 0");
		return CF_EINVAL;
	}
	return CF_OK;
}

/* TreeRule.copyChanges of req onto stored s: 1 if anything changed. */
static int rule_merge(struct rule *s, const struct rule *req, int overwrite,
		      int *changed, struct tsd_error *err)
{
	int rc;

	*changed = 0;
	if ((overwrite || req->given & G_TYPE) && s->type != req->type) {
		s->type = req->type;
		*changed = 1;
	}
	for (int i = 0; i < S_N; i++)
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
	return (size_t)sprintf(q, "%s%d:%d", RULE_PREFIX, level, order);
}

/* --- trees ----------------------------------------------------------- */

static int tree_init(struct tree *tr)
{
	memset(tr, 0, sizeof *tr);
	for (int i = 0; i < T_N; i++)
		if (set_str(&tr->s[i], ""))
			return CF_ENOMEM;
	return CF_OK;
}

static void tree_free(struct tree *tr)
{
	for (int i = 0; i < T_N; i++)
		free(tr->s[i]);
	for (size_t i = 0; i < tr->nrules; i++)
		rule_free(&tr->rules[i]);
	free(tr->rules);
	memset(tr, 0, sizeof *tr);
}

/* The fields of JSON object j into tr, as Tree's setters take them. */
static int tree_parse(json_t *j, struct tree *tr, struct tsd_error *err)
{
	static const char *const bools[] = { "strictMatch", "enabled",
					     "storeFailures" };
	int *dst[] = { &tr->strict, &tr->enabled, &tr->fails };
	json_t *v;
	int rc, n;

	if (!json_is_object(j)) {
		fail(err, "Unable to parse the given JSON: not an object");
		return CF_EINVAL;
	}
	for (int i = 0; i < T_N; i++) {
		v = json_object_get(j, tree_keys[i]);
		if (!v || json_is_null(v))
			continue;
		if (!json_is_string(v)) {
			fail(err, "Unable to parse the given JSON: %s is not "
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
			fail(err, "Unable to parse the given JSON: %s is not "
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
			fail(err, "Unable to parse 'tree' value");
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
static char *tree_storage(const struct tree *tr)
{
	json_t *o = json_object();
	char *s = NULL;

	if (!o)
		return NULL;
	json_object_set_new(o, "name", json_string(tr->s[T_NAME]));
	json_object_set_new(o, "description", json_string(tr->s[T_DESC]));
	json_object_set_new(o, "notes", json_string(tr->s[T_NOTES]));
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
static json_t *tree_json(const struct tree *tr)
{
	json_t *o = json_object(), *rules = NULL, *lv = NULL;
	char k[16];
	int ok = o != NULL;

	if (tr->nrules && !(rules = json_object()))
		ok = 0;
	for (size_t i = 0; ok && i < tr->nrules; i++) {
		const struct rule *r = &tr->rules[i];
		if (!i || r->level != tr->rules[i - 1].level) {
			snprintf(k, sizeof k, "%d", r->level);
			ok = (lv = json_object()) &&
			     !json_object_set_new(rules, k, lv);
		}
		snprintf(k, sizeof k, "%d", r->order);
		ok = ok && !json_object_set_new(lv, k, rule_json(r));
	}
	if (ok) {
		json_object_set_new(o, "name", json_string(tr->s[T_NAME]));
		json_object_set_new(o, "description",
				    json_string(tr->s[T_DESC]));
		json_object_set_new(o, "notes", json_string(tr->s[T_NOTES]));
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

static int rule_cmp(const void *a, const void *b)
{
	const struct rule *x = a, *y = b;
	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

/* The tree of a row's cells (its definition and rules) into tr
 * (initialized); *found 0 when the row has no definition; old (may be
 * NULL) gets the stored definition's bytes. */
static int tree_cells(const cf_row *row, int id, struct tree *tr, int *found,
		      struct buf *old, struct tsd_error *err)
{
	size_t plen = strlen(RULE_PREFIX);
	json_error_t je;
	json_t *j;
	int rc = CF_OK;

	*found = 0;
	tr->id = id;
	for (size_t i = 0; rc == CF_OK && i < cf_row_count(row); i++) {
		const struct cf_cell *c = cf_row_cell(row, i);
		int is_tree = c->qlen == 4 && !memcmp(c->qual, QTREE, 4);
		if (!is_tree && (c->qlen <= plen ||
				 memcmp(c->qual, RULE_PREFIX, plen)))
			continue;
		if (!(j = json_loadb((const char *)c->val, c->vlen, 0, &je))) {
			fail(err, "a stored tree or rule is not JSON: %s",
			     je.text);
			return CF_ECORRUPT;
		}
		if (is_tree) {
			unsigned given = tr->given;
			if (old)
				rc = buf_append(old, c->val, c->vlen);
			if (rc == CF_OK)
				rc = tree_parse(j, tr, err);
			tr->id = id;
			tr->given = given;
			*found = 1;
		} else {
			struct rule *nr = realloc(tr->rules, (tr->nrules + 1) *
						  sizeof *nr);
			if (!nr) {
				rc = CF_ENOMEM;
			} else {
				tr->rules = nr;
				rc = rule_init(&nr[tr->nrules]);
				if (rc == CF_OK)
					tr->nrules++;
				if (rc == CF_OK)
					rc = rule_parse(j, &nr[tr->nrules - 1],
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
		qsort(tr->rules, tr->nrules, sizeof *tr->rules, rule_cmp);
	return rc;
}

/* --- storage ------------------------------------------------------------ */

static int tree_table(tsd *t, int create, cf_table **out)
{
	struct cf_family f;
	int rc = cf_table_open(t->db, TSD_TABLE_TREE, out);

	if (rc != CF_ENOTFOUND)
		return rc;
	*out = NULL;
	if (!create)
		return CF_OK;
	cf_family_default(&f, FAM);
	rc = cf_table_create(t->db, TSD_TABLE_TREE, &f, 1);
	if (rc && rc != CF_EEXIST)
		return rc;
	return cf_table_open(t->db, TSD_TABLE_TREE, out);
}

static void id_bytes(int id, unsigned char *k)
{
	k[0] = (unsigned char)(id >> 8);
	k[1] = (unsigned char)id;
}

static int check_id(int id, struct tsd_error *err)
{
	if (id >= 1 && id <= 65535)
		return CF_OK;
	fail(err, "Invalid Tree ID");
	return CF_EINVAL;
}

/* The tree id (definition and rules) into tr (initialized here). */
static int tree_read(cf_table *tt, int id, struct tree *tr, int *found,
		     struct buf *old, struct tsd_error *err)
{
	struct cf_column col = { FAM, 1, NULL, 0 };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	unsigned char k[2];
	cf_row *row = NULL;
	int rc;

	*found = 0;
	if ((rc = tree_init(tr)))
		return rc;
	tr->id = id;
	if (!tt)
		return CF_OK;
	id_bytes(id, k);
	o.columns = &col;
	o.ncolumns = 1;
	if ((rc = cf_table_get(tt, k, 2, &o, &row)) == CF_OK)
		rc = tree_cells(row, id, tr, found, old, err);
	cf_row_free(row);
	return rc;
}

/* The stored tree id or CF_ENOTFOUND (`Unable to locate tree: N`). */
static int tree_load(tsd *t, int id, struct tree *tr, struct tsd_error *err)
{
	cf_table *tt = NULL;
	int rc, found = 0;

	memset(tr, 0, sizeof *tr);
	if ((rc = check_id(id, err)) || (rc = tree_table(t, 0, &tt)))
		return rc;
	rc = tree_read(tt, id, tr, &found, NULL, err);
	if (rc == CF_OK && !found) {
		fail(err, "Unable to locate tree: %d", id);
		rc = CF_ENOTFOUND;
	}
	cf_table_close(tt);
	return rc;
}

/* Calls fn for each stored tree in ID order (Tree.fetchAllTrees): the
 * rows of 2-byte keys, found by seeking past each tree's branches. */
static int tree_each(cf_table *tt, int (*fn)(void *arg, struct tree *tr),
		     void *arg, struct tsd_error *err)
{
	struct cf_column col = { FAM, 1, NULL, 0 };
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
		id_bytes(next, k);
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
			next = klen >= 2 ? (key[0] << 8 | key[1]) : 0;
			if (klen == 2 && next > 0) {
				struct tree tr;
				int found;
				if ((rc = tree_init(&tr)) == CF_OK)
					rc = tree_cells(row, next, &tr, &found,
							NULL, err);
				if (rc == CF_OK && found)
					rc = fn(arg, &tr);
				tree_free(&tr);
			}
			next++;
		}
		cf_scan_close(sc);
	}
	return rc;
}

static int add_json(void *arg, struct tree *tr)
{
	json_t *o = tree_json(tr);
	return o && !json_array_append_new(arg, o) ? CF_OK : CF_ENOMEM;
}

/* Appends j's compact text (j consumed). */
static int put_json(struct buf *out, json_t *j)
{
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

int tsd_tree_get(tsd *t, int id, struct buf *out, struct tsd_error *err)
{
	cf_table *tt = NULL;
	struct tree tr;
	json_t *a;
	int rc;

	if (id) {
		if ((rc = tree_load(t, id, &tr, err)) == CF_OK)
			rc = put_json(out, tree_json(&tr));
		tree_free(&tr);
		return rc;
	}
	if ((rc = tree_table(t, 0, &tt)))
		return rc;
	if (!(a = json_array()))
		rc = CF_ENOMEM;
	else
		rc = tree_each(tt, add_json, a, err);
	if (rc == CF_OK)
		rc = put_json(out, a);
	else
		json_decref(a);
	cf_table_close(tt);
	return rc;
}

/* Puts val into fam:qual of row iff the stored bytes are expect (NULL:
 * absent). */
static int cas(cf_table *tt, const void *row, size_t rlen, const char *qual,
	       size_t qlen, const char *val, size_t vlen, const struct buf
	       *expect, int *applied)
{
	cf_batch *b = NULL;
	int rc;

	*applied = 0;
	if ((rc = cf_batch_new(&b)) == CF_OK &&
	    (rc = cf_batch_put(b, row, rlen, FAM, 1, qual, qlen, CF_TS_NOW,
			       val, vlen)) == CF_OK)
		rc = cf_table_check_and_apply(tt, row, rlen, FAM, 1, qual,
					      qlen, expect ? expect->p : NULL,
					      expect ? expect->len : 0, b,
					      applied);
	cf_batch_free(b);
	return rc;
}

static int max_id(void *arg, struct tree *tr)
{
	if (tr->id > *(int *)arg)
		*(int *)arg = tr->id;
	return CF_OK;
}

int tsd_tree_sync(tsd *t, const char *body, size_t len, int overwrite,
		  struct buf *out, struct tsd_error *err)
{
	static const unsigned bits[T_N] = { 1 << T_NAME, 1 << T_DESC,
					    1 << T_NOTES };
	struct buf old = BUF_INIT;
	struct tree req, s;
	cf_table *tt = NULL;
	unsigned char k[2];
	json_error_t je;
	json_t *j;
	char *val = NULL;
	int rc, found, applied = 0, top = 0;

	memset(&s, 0, sizeof s);
	if ((rc = tree_init(&req)))
		return rc;
	if (!(j = json_loadb(body, len, 0, &je))) {
		fail(err, "Unable to parse the given JSON: %s", je.text);
		rc = CF_EINVAL;
	} else {
		rc = tree_parse(j, &req, err);
		json_decref(j);
	}
	if (rc == CF_OK && req.id && (rc = check_id(req.id, err)) == CF_OK)
		rc = tree_table(t, 0, &tt);
	if (rc == CF_OK && req.id) {
		rc = tree_read(tt, req.id, &s, &found, NULL, err);
		tree_free(&s);
		if (rc == CF_OK && !found) {
			fail(err, "Unable to locate tree: %d", req.id);
			rc = CF_ENOTFOUND;
		}
		if (rc == CF_OK && !(req.given & ~G_CREATED)) {
			fail(err, "No changes detected in the tree");
			rc = CF_EEXIST;
		}
	}
	for (int i = 0; rc == CF_OK && req.id && !applied && i < TRIES; i++) {
		buf_reset(&old);
		if ((rc = tree_read(tt, req.id, &s, &found, &old, err)))
			break;
		for (int f = 0; rc == CF_OK && f < T_N; f++)
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
		id_bytes(req.id, k);
		if (rc == CF_OK)
			rc = cas(tt, k, 2, QTREE, 4, val, strlen(val),
				 found ? &old : NULL, &applied);
		tree_free(&s);
	}
	if (rc == CF_OK && !req.id) {
		/* createNewTree: the ID after the greatest stored */
		if (!*req.s[T_NAME]) {
			fail(err, "Tree was missing the name");
			rc = CF_EINVAL;
		}
		if (rc == CF_OK)
			rc = tree_table(t, 1, &tt);
		for (int i = 0; rc == CF_OK && !applied && i < TRIES; i++) {
			top = 0;
			if ((rc = tree_each(tt, max_id, &top, err)))
				break;
			if (top >= 65535) {
				fail(err, "Exhausted all Tree IDs");
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
			id_bytes(req.id, k);
			rc = cas(tt, k, 2, QTREE, 4, val, strlen(val), NULL,
				 &applied);
		}
	}
	if (rc == CF_OK && !applied) {
		fail(err, "Unable to save changes to tree: %d", req.id);
		rc = CF_EBUSY;
	}
	if (rc == CF_OK)
		rc = tsd_tree_get(t, req.id, out, err);
	free(val);
	buf_release(&old);
	tree_free(&req);
	cf_table_close(tt);
	return rc;
}

/* 1 if qualifier q[0..n) is one Tree.deleteTree removes. */
static int deletable(const unsigned char *q, size_t n, int definition)
{
	static const char *const pre[] = { LEAF_PREFIX, COLL_PREFIX,
					   NM_PREFIX, RULE_PREFIX };
	if (n == 6 && !memcmp(q, QBRANCH, 6))
		return 1;
	if (n == 4 && !memcmp(q, QTREE, 4))
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
	struct cf_column col = { FAM, 1, NULL, 0 };
	struct cf_scan_opts so;
	cf_scanner *sc = NULL;
	cf_table *tt = NULL;
	const cf_row *row;
	unsigned char k[2];
	struct tree tr;
	int rc;

	if ((rc = tree_load(t, id, &tr, err))) {
		tree_free(&tr);
		return rc;
	}
	tree_free(&tr);
	if ((rc = tree_table(t, 0, &tt)) || !tt)
		return rc;
	memset(&so, 0, sizeof so);
	so.read = (struct cf_read_opts)CF_READ_OPTS_INIT;
	so.read.columns = &col;
	so.read.ncolumns = 1;
	so.read.keys_only = 1;
	id_bytes(id, k);
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
			rc = cf_batch_delete(b, CF_DEL_COLUMN, key, klen, FAM, 1,
					     c->qual, c->qlen, CF_TS_NOW);
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
	struct tree tr;
	int rc = tree_load(t, id, &tr, err);

	if (rc == CF_OK) {
		rc = CF_ENOTFOUND;
		for (size_t i = 0; i < tr.nrules; i++)
			if (tr.rules[i].level == level &&
			    tr.rules[i].order == order) {
				rc = put_json(out, rule_json(&tr.rules[i]));
				break;
			}
		if (rc == CF_ENOTFOUND)
			fail(err, "Unable to locate rule: [%d:%d:%d:null]", id,
			     level, order);
	}
	tree_free(&tr);
	return rc;
}

/* The stored rule of req's place into s (initialized here); *found. */
static int rule_read(cf_table *tt, const struct rule *req, struct rule *s,
		     int *found, struct buf *old, struct tsd_error *err)
{
	struct cf_column col = { FAM, 1, NULL, 0 };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	unsigned char k[2];
	cf_row *row = NULL;
	char q[48];
	json_t *j;
	int rc;

	*found = 0;
	if ((rc = rule_init(s)))
		return rc;
	s->tree = req->tree;
	s->level = req->level;
	s->order = req->order;
	col.qual = q;
	col.qlen = rule_qual(req->level, req->order, q);
	o.columns = &col;
	o.ncolumns = 1;
	id_bytes(req->tree, k);
	if ((rc = cf_table_get(tt, k, 2, &o, &row)) == CF_OK &&
	    cf_row_count(row)) {
		const struct cf_cell *c = cf_row_cell(row, 0);
		if ((rc = buf_append(old, c->val, c->vlen)))
			goto out;
		if (!(j = json_loadb((const char *)c->val, c->vlen, 0, NULL))) {
			fail(err, "a stored rule is not JSON");
			rc = CF_ECORRUPT;
			goto out;
		}
		rc = rule_parse(j, s, err);
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
static int rule_prepare(cf_table *tt, const struct rule *req, int overwrite,
			struct rule *s, int *found, struct buf *old,
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
		fail(err, "No changes detected in the rule");
		return CF_EEXIST;
	}
	return rc ? rc : rule_validate(s, err);
}

/* Writes the rule req (parsed) of an existing tree. */
static int rule_store(cf_table *tt, const struct rule *req, int overwrite,
		      struct tsd_error *err)
{
	struct buf old = BUF_INIT;
	unsigned char k[2];
	struct rule s;
	char q[48], *val = NULL;
	size_t qlen = rule_qual(req->level, req->order, q);
	int rc = CF_OK, found, applied = 0;

	if (!req->given) {
		fail(err, "No changes detected in the rule");
		return CF_EEXIST;
	}
	id_bytes(req->tree, k);
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
			rc = cas(tt, k, 2, q, qlen, val, strlen(val),
				 found ? &old : NULL, &applied);
		free(val);
		val = NULL;
		rule_free(&s);
	}
	if (rc == CF_OK && !applied) {
		fail(err, "Unable to save rule to storage");
		rc = CF_EBUSY;
	}
	buf_release(&old);
	return rc;
}

/* Parses body into rule r (initialized here) and checks its place. */
static int rule_of(const char *body, size_t len, json_t *j, struct rule *r,
		   struct tsd_error *err)
{
	json_error_t je;
	json_t *own = NULL;
	int rc;

	if ((rc = rule_init(r)))
		return rc;
	if (!j && !(j = own = json_loadb(body, len, 0, &je))) {
		fail(err, "Unable to parse the given JSON: %s", je.text);
		return CF_EINVAL;
	}
	rc = rule_parse(j, r, err);
	json_decref(own);
	return rc ? rc : check_id(r->tree, err);
}

int tsd_tree_rule_sync(tsd *t, const char *body, size_t len, int overwrite,
		       struct buf *out, struct tsd_error *err)
{
	cf_table *tt = NULL;
	struct tree tr;
	struct rule r;
	int rc = rule_of(body, len, NULL, &r, err);

	memset(&tr, 0, sizeof tr);
	if (rc == CF_OK)
		rc = tree_load(t, r.tree, &tr, err);
	if (rc == CF_OK)
		rc = tree_table(t, 1, &tt);
	if (rc == CF_OK)
		rc = rule_store(tt, &r, overwrite, err);
	if (rc == CF_OK && out)
		rc = tsd_tree_rule_get(t, r.tree, r.level, r.order, out, err);
	tree_free(&tr);
	rule_free(&r);
	cf_table_close(tt);
	return rc;
}

/* Deletes the rules of tr (all, or the one at level:order). */
static int rules_delete(tsd *t, const struct tree *tr, int all, int level,
			int order)
{
	cf_table *tt = NULL;
	cf_batch *b = NULL;
	unsigned char k[2];
	char q[48];
	size_t n = 0;
	int rc;

	if ((rc = tree_table(t, 0, &tt)) || !tt)
		return rc;
	id_bytes(tr->id, k);
	rc = cf_batch_new(&b);
	for (size_t i = 0; rc == CF_OK && i < tr->nrules; i++) {
		const struct rule *r = &tr->rules[i];
		if (!all && (r->level != level || r->order != order))
			continue;
		rc = cf_batch_delete(b, CF_DEL_COLUMN, k, 2, FAM, 1, q,
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
	struct tree tr;
	int rc = tree_load(t, id, &tr, err), has = 0;

	for (size_t i = 0; rc == CF_OK && i < tr.nrules; i++)
		has |= tr.rules[i].level == level && tr.rules[i].order == order;
	if (rc == CF_OK && !has) {
		fail(err, "Unable to locate rule: [%d:%d:%d:null]", id, level,
		     order);
		rc = CF_ENOTFOUND;
	}
	if (rc == CF_OK)
		rc = rules_delete(t, &tr, 0, level, order);
	tree_free(&tr);
	return rc;
}

int tsd_tree_rules(tsd *t, int id, const char *body, size_t len,
		   int overwrite, int del, struct tsd_error *err)
{
	struct rule *rs = NULL;
	struct buf old = BUF_INIT;
	cf_table *tt = NULL;
	struct tree tr;
	json_error_t je;
	json_t *a = NULL;
	size_t n = 0;
	int rc = CF_OK;

	memset(&tr, 0, sizeof tr);
	if (body) {
		if (!(a = json_loadb(body, len, 0, &je))) {
			fail(err, "Unable to parse the given JSON: %s",
			     je.text);
			return CF_EINVAL;
		}
		if (!json_is_array(a) || !json_array_size(a)) {
			fail(err, "Missing tree rules");
			rc = CF_EINVAL;
		} else if (!(rs = calloc(json_array_size(a), sizeof *rs))) {
			rc = CF_ENOMEM;
		}
		for (; rc == CF_OK && n < json_array_size(a); n++) {
			rc = rule_of(NULL, 0, json_array_get(a, n), &rs[n],
				     err);
			if (rc == CF_OK && rs[n].tree != rs[0].tree) {
				fail(err, "All rules must belong to the same "
				     "tree");
				rc = CF_EINVAL;
			}
		}
		if (n)
			id = rs[0].tree;
	}
	if (rc == CF_OK)
		rc = tree_load(t, id, &tr, err);
	if (rc == CF_OK && !body && !del) {
		fail(err, "Missing tree rules");
		rc = CF_EINVAL;
	}
	if (rc == CF_OK)
		rc = tree_table(t, 1, &tt);
	/* every rule checked before any is written: bad input loses
	 * nothing */
	for (size_t i = 0; rc == CF_OK && !del && i < n; i++) {
		struct rule s;
		int found;
		rc = rule_prepare(tt, &rs[i], overwrite, &s, &found, &old,
				  err);
		if (rc == CF_EEXIST)
			rc = CF_OK;
		rule_free(&s);
	}
	if (rc == CF_OK && (del || overwrite))
		rc = rules_delete(t, &tr, 1, 0, 0);
	for (size_t i = 0; rc == CF_OK && !del && i < n; i++) {
		rc = rule_store(tt, &rs[i], overwrite, err);
		if (rc == CF_EEXIST)
			rc = CF_OK;
	}
	for (size_t i = 0; i < n; i++)
		rule_free(&rs[i]);
	free(rs);
	json_decref(a);
	buf_release(&old);
	tree_free(&tr);
	cf_table_close(tt);
	return rc;
}

/* --- branches ------------------------------------------------------------ */

int32_t tsd_tree_hash(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t h = 0;

	for (size_t i = 0; i < n;) {
		uint32_t c = p[i], v = 0;
		size_t need = c >= 0xf0 && c < 0xf8 ? 3 : c >= 0xe0 &&
			      c < 0xf0 ? 2 : c >= 0xc0 && c < 0xe0 ? 1 : 0, j;

		v = need == 3 ? c & 7 : need == 2 ? c & 15 : c & 31;
		for (j = 1; need && j <= need && i + j < n &&
		     (p[i + j] & 0xc0) == 0x80; j++)
			v = v << 6 | (p[i + j] & 63);
		if (need && j == need + 1) {
			c = v;
			i += need + 1;
		} else {
			i++;	/* ASCII, or a stray byte: itself */
		}
		if (c >= 0x10000) {
			/* a UTF-16 surrogate pair, as Java holds it */
			c -= 0x10000;
			h = 31 * h + (0xd800 + (c >> 10));
			h = 31 * h + (0xdc00 + (c & 0x3ff));
		} else {
			h = 31 * h + c;
		}
	}
	return (int32_t)h;
}

static void put_be32(unsigned char *p, int32_t v)
{
	uint32_t u = (uint32_t)v;
	p[0] = (unsigned char)(u >> 24);
	p[1] = (unsigned char)(u >> 16);
	p[2] = (unsigned char)(u >> 8);
	p[3] = (unsigned char)u;
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

/* UniqueId.stringToUid / Branch.stringToId: hex (odd: a leading 0) into
 * b (room max); -1 when not hex or too long. */
static long unhex(const char *s, size_t n, unsigned char *b, size_t max)
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

/* A branch's API JSON from its stored JSON j (path, displayName). */
static json_t *branch_json(json_t *stored, const unsigned char *key,
			   size_t klen, json_t *leaves, json_t *branches)
{
	json_t *o = json_object(), *path = json_object_get(stored, "path");
	char hex[2 * KEY_MAX + 1];

	if (!o)
		return NULL;
	hex_of(key, klen, hex);
	json_object_set_new(o, "leaves", leaves ? leaves : json_null());
	json_object_set_new(o, "branches", branches ? branches : json_null());
	json_object_set(o, "path", path ? path : json_null());
	json_object_set_new(o, "treeId", json_integer(key[0] << 8 | key[1]));
	json_object_set_new(o, "branchId", json_string(hex));
	json_object_set_new(o, "depth", json_integer(
		path ? (json_int_t)json_object_size(path) - 1 : 0));
	json_object_set(o, "displayName",
			json_object_get(stored, "displayName"));
	return o;
}

static int by_name(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a,
							  "displayName"));
	const char *y = json_string_value(json_object_get(*(json_t *const *)b,
							  "displayName"));
	return strcasecmp(x ? x : "", y ? y : "");
}

/* Sorts the objects of array a by displayName ignoring case (Branch's
 * and Leaf's compareTo). */
static int sort_by_name(json_t *a)
{
	size_t n = json_array_size(a);
	json_t **v = malloc((n ? n : 1) * sizeof *v);

	if (!v)
		return CF_ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(a, i));
	qsort(v, n, sizeof *v, by_name);
	json_array_clear(a);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, v[i]);
	free(v);
	return CF_OK;
}

/* A stored leaf with its series' metric and tag names (Leaf's
 * parseFromStorage with load_uids); NULL when a UID has no name. */
static json_t *leaf_json(tsd *t, json_t *stored)
{
	const char *hex = json_string_value(json_object_get(stored, "tsuid"));
	unsigned char k[TSUID_MAX];
	struct buf name = BUF_INIT;
	cf_table *uidt = NULL, *dbt = NULL;
	json_t *o = NULL, *tags = NULL, *metric = NULL;
	char tagk[512] = "";
	long n;
	int rc;

	if (!hex || (n = unhex(hex, strlen(hex), k, sizeof k)) <
	    TSD_UID_WIDTH || (n - TSD_UID_WIDTH) % (2 * TSD_UID_WIDTH))
		return NULL;
	if (tsd_tables(t, &uidt, &dbt))
		return NULL;
	rc = (tags = json_object()) ? CF_OK : CF_ENOMEM;
	for (long i = 0; rc == CF_OK && i < n; i += TSD_UID_WIDTH) {
		enum tsd_kind kind = i == 0 ? TSD_METRICS :
				     (i / TSD_UID_WIDTH) % 2 ? TSD_TAGK :
				     TSD_TAGV;
		buf_reset(&name);
		rc = tsd_uid_name(t->uids, uidt, kind, tsd_uid_get(k + i),
				  &name);
		if (rc == CF_OK)
			rc = buf_putc(&name, '\0');
		if (rc != CF_OK)
			break;
		if (kind == TSD_METRICS)
			metric = json_string((const char *)name.p);
		else if (kind == TSD_TAGK)
			snprintf(tagk, sizeof tagk, "%s", name.p);
		else
			json_object_set_new(tags, tagk, json_string((const char *)name.p));
	}
	if (rc == CF_OK && (o = json_object())) {
		json_object_set_new(o, "metric", metric ? metric : json_null());
		metric = NULL;
		json_object_set_new(o, "tags", tags);
		tags = NULL;
		json_object_set_new(o, "tsuid", json_string(hex));
		json_object_set(o, "displayName",
				json_object_get(stored, "displayName"));
	}
	json_decref(metric);
	json_decref(tags);
	buf_release(&name);
	cf_table_close(uidt);
	cf_table_close(dbt);
	return o;
}

int tsd_tree_branch(tsd *t, int id, const char *branch, struct buf *out,
		    struct tsd_error *err)
{
	struct cf_column col = { FAM, 1, NULL, 0 };
	unsigned char key[KEY_MAX];
	struct cf_scan_opts so;
	cf_scanner *sc = NULL;
	cf_table *tt = NULL;
	json_t *self = NULL, *leaves = NULL, *kids = NULL;
	const cf_row *row;
	size_t klen;
	long n;
	int rc;

	if (!branch || !*branch) {
		if (id < 1) {
			fail(err, "Missing or invalid branch and tree IDs");
			return CF_EINVAL;
		}
		if ((rc = check_id(id, err)))
			return rc;
		id_bytes(id, key);
		klen = 2;
	} else {
		if (strlen(branch) < 4) {
			fail(err, "Branch ID was too short");
			return CF_EINVAL;
		}
		if ((n = unhex(branch, strlen(branch), key, sizeof key)) < 0) {
			fail(err, "Unable to parse the branch ID: %.100s",
			     branch);
			return CF_EINVAL;
		}
		klen = (size_t)n;
	}
	if ((rc = tree_table(t, 0, &tt)))
		return rc;
	memset(&so, 0, sizeof so);
	so.read = (struct cf_read_opts)CF_READ_OPTS_INIT;
	so.read.columns = &col;
	so.read.ncolumns = 1;
	so.prefix = key;
	so.prefixlen = klen;
	if (tt)
		rc = cf_scan_open(tt, &so, &sc);
	while (rc == CF_OK && sc && (rc = cf_scan_next(sc, &row)) == CF_OK &&
	       row) {
		size_t rlen;
		const unsigned char *rk = cf_row_key(row, &rlen);
		if (rlen != klen && rlen != klen + 4)
			continue;
		for (size_t i = 0; rc == CF_OK && i < cf_row_count(row); i++) {
			const struct cf_cell *c = cf_row_cell(row, i);
			int is_branch = c->qlen == 6 &&
					!memcmp(c->qual, QBRANCH, 6);
			int is_leaf = rlen == klen && c->qlen == 9 &&
				      !memcmp(c->qual, LEAF_PREFIX, 5);
			json_t *j, *o;
			if (!is_branch && !is_leaf)
				continue;
			if (!(j = json_loadb((const char *)c->val, c->vlen, 0,
					     NULL)))
				continue;	/* not ours: skipped */
			if (is_branch && rlen == klen) {
				json_decref(self);
				self = json_incref(j);
			} else if (is_branch) {
				if (!kids && !(kids = json_array()))
					rc = CF_ENOMEM;
				else if ((o = branch_json(j, rk, rlen, NULL,
							  NULL)))
					json_array_append_new(kids, o);
			} else if ((o = leaf_json(t, j))) {
				/* a leaf of a series with a UID without a
				 * name is left out, as OpenTSDB does */
				if (!leaves && !(leaves = json_array()))
					rc = CF_ENOMEM;
				else
					json_array_append_new(leaves, o);
			}
			json_decref(j);
		}
	}
	cf_scan_close(sc);
	cf_table_close(tt);
	if (rc == CF_OK && !self) {
		char hex[2 * KEY_MAX + 1];
		hex_of(key, klen, hex);
		fail(err, "Unable to locate branch '%s' for tree '%d'", hex,
		     key[0] << 8 | key[1]);
		rc = CF_ENOTFOUND;
	}
	if (rc == CF_OK && kids)
		rc = sort_by_name(kids);
	if (rc == CF_OK && leaves)
		rc = sort_by_name(leaves);
	if (rc == CF_OK) {
		rc = put_json(out, branch_json(self, key, klen, leaves, kids));
		leaves = kids = NULL;
	}
	json_decref(self);
	json_decref(leaves);
	json_decref(kids);
	return rc;
}

/* --- collisions and not matched ------------------------------------------ */

int tsd_tree_failures(tsd *t, int id, const char *tsuids, int collisions,
		      struct buf *out, struct tsd_error *err)
{
	const char *pre = collisions ? COLL_PREFIX : NM_PREFIX;
	size_t pl = strlen(pre);
	struct cf_column col = { FAM, 1, NULL, 0 };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	unsigned char k[3], want[TSUID_MAX];
	cf_row *row = NULL;
	cf_table *tt = NULL;
	struct tree tr;
	json_t *res;
	int rc = tree_load(t, id, &tr, err);

	tree_free(&tr);
	if (rc)
		return rc;
	if (!(res = json_object()))
		return CF_ENOMEM;
	rc = tree_table(t, 0, &tt);
	id_bytes(id, k);
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
			long w = unhex(p, n, want, sizeof want);
			if (w < 0) {
				fail(err, "Invalid TSUID: %.*s",
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
		hex_of(c->qual + pl, c->qlen - pl, hex);
		if (json_object_set_new(res, hex, json_stringn(
				(const char *)c->val, c->vlen)))
			rc = CF_ENOMEM;
	}
	cf_row_free(row);
	cf_table_close(tt);
	if (rc == CF_OK)
		rc = put_json(out, json_deep_copy(res));
	/* json_dumps without JSON_SORT_KEYS: sorted for a stable answer */
	json_decref(res);
	return rc;
}

/* --- the builder ---------------------------------------------------------- */

/* What a run of the builder over one series keeps. */
struct run {
	const struct tree *tr;
	json_t *meta;		/* the API's TSMeta */
	const char *tsuid;
	json_t *names;		/* the path's names */
	json_t *msgs;		/* test messages, or NULL */
	struct buf nm;		/* the rules that matched nothing */
	int matched;		/* 0: a level gave no name */
	/* a rule with a separator being walked */
	char **parts;
	size_t nparts, part;
};

static void msg(struct run *w, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!w->msgs)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	json_array_append_new(w->msgs, json_string(line));
}

static void parts_free(struct run *w)
{
	for (size_t i = 0; i < w->nparts; i++)
		free(w->parts[i]);
	free(w->parts);
	w->parts = NULL;
	w->nparts = w->part = 0;
}

/* s with every "key" replaced by val (String.replace). */
static char *replace(char *s, const char *key, const char *val)
{
	struct buf b = BUF_INIT;
	size_t kl = strlen(key);
	const char *p = s, *hit;

	while ((hit = strstr(p, key))) {
		if (buf_append(&b, p, (size_t)(hit - p)) ||
		    buf_append(&b, val, strlen(val)))
			goto oom;
		p = hit + kl;
	}
	if (buf_append(&b, p, strlen(p) + 1))
		goto oom;
	free(s);
	return (char *)b.p;
oom:
	buf_release(&b);
	free(s);
	return NULL;
}

/* setCurrentName: the display format applied.  *name (malloc'd). */
static int set_name(struct run *w, const struct rule *r, const char *orig,
		    const char *value, char **name)
{
	char *s = strdup(*r->s[S_FMT] ? r->s[S_FMT] : value), rn[64];

	if (s && *r->s[S_FMT]) {
		s = s ? replace(s, "{ovalue}", orig) : NULL;
		s = s ? replace(s, "{value}", value) : NULL;
		s = s ? replace(s, "{tsuid}", w->tsuid) : NULL;
		if (s && strstr(s, "{tag_name}")) {
			if (r->type == R_METRIC) {
				rule_name(r, rn, sizeof rn);
				msg(w, "Display rule %s was of the wrong type "
				    "to match on {tag_name}", rn);
			}
			s = replace(s, "{tag_name}", r->type == R_TAGK ?
				    r->s[S_FIELD] : r->type == R_METRIC ? "" :
				    r->s[S_CUSTOM]);
		}
	}
	if (!s)
		return CF_ENOMEM;
	free(*name);
	*name = s;
	return CF_OK;
}

/* String.split(sep): the parts of v, trailing empty ones dropped. */
static int split(struct run *w, const struct rule *r, const char *v)
{
	pcre2_code *re;
	pcre2_match_data *md = NULL;
	size_t len = strlen(v), at = 0, cap = 0;
	PCRE2_SIZE off;
	int ec, rc = CF_OK;

	re = pcre2_compile((PCRE2_SPTR)r->s[S_SEP], PCRE2_ZERO_TERMINATED,
			   PCRE2_UTF, &ec, &off, NULL);
	if (!re || !(md = pcre2_match_data_create_from_pattern(re, NULL))) {
		pcre2_code_free(re);
		return re ? CF_ENOMEM : CF_EINVAL;
	}
	for (;;) {
		size_t s, e;
		int m = at <= len ? pcre2_match(re, (PCRE2_SPTR)v, len, at, 0,
						md, NULL) : -1;
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		if (m > 0 && ov[1] == ov[0] && ov[0] == at && at < len) {
			/* an empty match: the part runs on a character */
			m = pcre2_match(re, (PCRE2_SPTR)v, len, at + 1, 0, md,
					NULL);
		}
		if (m > 0 && ov[0] == 0 && ov[1] == 0) {
			at = 1;	/* no leading empty part for an empty match */
			continue;
		}
		s = at;
		e = m > 0 ? ov[0] : len;
		if (w->nparts == cap) {
			char **np = realloc(w->parts, (cap ? 2 * cap : 8) *
					    sizeof *np);
			if (!np) {
				rc = CF_ENOMEM;
				break;
			}
			w->parts = np;
			cap = cap ? 2 * cap : 8;
		}
		if (!(w->parts[w->nparts] = strndup(v + s, e - s))) {
			rc = CF_ENOMEM;
			break;
		}
		w->nparts++;
		if (m <= 0 || ov[1] >= len)
			break;
		at = ov[1] > ov[0] ? ov[1] : ov[1] + 1;
	}
	while (w->nparts && !*w->parts[w->nparts - 1])
		free(w->parts[--w->nparts]);
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return rc;
}

/* processParsedValue: the name of value v under rule r into *name. */
static int parsed(struct run *w, const struct rule *r, const char *v,
		  char **name)
{
	char rn[64];
	int rc;

	rule_name(r, rn, sizeof rn);
	if (!r->re && !*r->s[S_SEP])
		return set_name(w, r, v, v, name);
	if (r->re) {
		pcre2_match_data *md =
			pcre2_match_data_create_from_pattern(r->re, NULL);
		int m;
		uint32_t groups = 0;
		if (!md)
			return CF_ENOMEM;
		pcre2_pattern_info(r->re, PCRE2_INFO_CAPTURECOUNT, &groups);
		m = pcre2_match(r->re, (PCRE2_SPTR)v, strlen(v), 0, 0, md,
				NULL);
		rc = CF_OK;
		if (m > 0 && groups >= (uint32_t)r->gidx + 1) {
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
			size_t g = (size_t)r->gidx + 1;
			if (g >= (size_t)m || ov[2 * g] == PCRE2_UNSET ||
			    ov[2 * g] == ov[2 * g + 1]) {
				msg(w, "Extracted value for rule %s was null "
				    "or empty", rn);
			} else {
				char *x = strndup(v + ov[2 * g],
						  ov[2 * g + 1] - ov[2 * g]);
				rc = x ? set_name(w, r, v, x, name) :
				     CF_ENOMEM;
				free(x);
			}
		} else if (m > 0) {
			msg(w, "Regex group index [%d] for rule %s was out of "
			    "bounds [%u]", r->gidx, rn, groups);
		}
		pcre2_match_data_free(md);
		return rc;
	}
	if (!w->parts) {
		if (!*v)
			return CF_OK;
		if ((rc = split(w, r, v)))
			return rc;
		if (!w->nparts) {
			msg(w, "Separator did not match, created an empty "
			    "list on rule: %s", rn);
			w->part = 1;
			return CF_OK;
		}
	}
	if (w->part >= w->nparts)
		return CF_OK;
	return set_name(w, r, v, w->parts[w->part++], name);
}

/* The UIDMeta of the tag key (kind 0) or value (1) named field, or the
 * tag value after the tag key named field (kind 2). */
static json_t *tag_meta(json_t *meta, const char *field, int kind)
{
	json_t *tags = json_object_get(meta, "tags");

	for (size_t i = 0; i < json_array_size(tags); i++) {
		const char *n = json_string_value(json_object_get(
			json_array_get(tags, i), "name"));
		if ((int)(i % 2) != (kind == 1) || !n || strcmp(n, field))
			continue;
		return kind == 2 ? json_array_get(tags, i + 1) :
		       json_array_get(tags, i);
	}
	return NULL;
}

/* One rule over the series: *name set when it gives one. */
static int apply(struct run *w, const struct rule *r, char **name)
{
	json_t *u = NULL, *custom, *v;
	const char *what;
	char rn[64];

	rule_name(r, rn, sizeof rn);
	msg(w, "Processing rule: %s", rn);
	switch (r->type) {
	case R_METRIC:
		u = json_object_get(w->meta, "metric");
		what = json_string_value(json_object_get(u, "name"));
		return what && *what ? parsed(w, r, what, name) : CF_OK;
	case R_TAGK:
		u = tag_meta(w->meta, r->s[S_FIELD], 2);
		what = json_string_value(json_object_get(u, "name"));
		if (!what || !*what) {
			msg(w, "No match on tagk [%s] for rule: %s",
			    r->s[S_FIELD], rn);
			return CF_OK;
		}
		msg(w, "Matched tagk [%s] for rule: %s", r->s[S_FIELD], rn);
		return parsed(w, r, what, name);
	case R_METRIC_CUSTOM:
		u = json_object_get(w->meta, "metric");
		break;
	case R_TAGK_CUSTOM:
	case R_TAGV_CUSTOM:
		u = tag_meta(w->meta, r->s[S_FIELD], r->type == R_TAGV_CUSTOM);
		if (!u) {
			msg(w, "No match on %s [%s] for rule: %s",
			    r->type == R_TAGK_CUSTOM ? "tagk" : "tagv",
			    r->s[S_FIELD], rn);
			return CF_OK;
		}
		msg(w, "Matched %s [%s] for rule: %s",
		    r->type == R_TAGK_CUSTOM ? "tagk" : "tagv", r->s[S_FIELD],
		    rn);
		break;
	default:
		return CF_OK;
	}
	custom = json_object_get(u, "custom");
	v = json_object_get(custom, r->s[S_CUSTOM]);
	if (!json_is_string(v)) {
		msg(w, "No match on custom tag [%s] for rule: %s",
		    r->s[S_CUSTOM], rn);
		return CF_OK;
	}
	msg(w, "Matched custom tag [%s] for rule: %s", r->s[S_CUSTOM], rn);
	return parsed(w, r, json_string_value(v), name);
}

/* The path of the series through the rules into w->names. */
static int build(struct run *w)
{
	const struct tree *tr = w->tr;
	int rc = CF_OK, level;
	size_t i = 0;

	w->matched = 1;
	if (!tr->nrules)
		return CF_OK;
	level = tr->rules[0].level;
	while (rc == CF_OK && json_array_size(w->names) < PATH_MAX_NAMES) {
		const struct rule *last = NULL;
		char *name = NULL, rn[64];
		size_t n;
		/* the first rule of the next level with rules */
		while (i < tr->nrules && tr->rules[i].level < level)
			i++;
		if (i >= tr->nrules)
			break;
		level = tr->rules[i].level;
		for (size_t j = i; rc == CF_OK && j < tr->nrules &&
		     tr->rules[j].level == level; j++) {
			last = &tr->rules[j];
			rc = apply(w, last, &name);
			if (name && *name)
				break;
		}
		if (rc == CF_OK && (!name || !*name)) {
			rule_name(last, rn, sizeof rn);
			w->matched = 0;
			if (w->nm.len)
				rc = buf_putc(&w->nm, ' ');
			if (rc == CF_OK)
				rc = buf_append(&w->nm, rn, strlen(rn));
		}
		if (w->parts && w->part >= w->nparts) {
			parts_free(w);
			level++;
		} else if (!w->parts) {
			level++;
		}
		n = json_array_size(w->names);
		if (rc == CF_OK && name && *name &&
		    (!n || strcmp(json_string_value(json_array_get(
				w->names, n - 1)), name))) {
			if (json_array_append_new(w->names, json_string(name)))
				rc = CF_ENOMEM;
		} else if (rc == CF_OK && name && *name) {
			msg(w, "Depth [%zu] Current was the same as previous",
			    n + 1);
		}
		free(name);
	}
	parts_free(w);
	if (rc == CF_OK && !w->matched && tr->strict)
		msg(w, "TSUID failed to match one or more rule levels, will "
		    "not add: %s", w->tsuid);
	return rc;
}

static int run_init(struct run *w, const struct tree *tr, json_t *meta,
		    const char *tsuid, int testing)
{
	memset(w, 0, sizeof *w);
	w->tr = tr;
	w->meta = meta;
	w->tsuid = tsuid;
	w->nm = (struct buf)BUF_INIT;
	if (!(w->names = json_array()) || (testing &&
					   !(w->msgs = json_array())))
		return CF_ENOMEM;
	return CF_OK;
}

static void run_release(struct run *w)
{
	json_decref(w->names);
	json_decref(w->msgs);
	buf_release(&w->nm);
	parts_free(w);
}

int tsd_tree_build(const char *tree, const char *meta, char **names,
		   int *matched)
{
	json_t *tj = json_loads(tree, 0, NULL), *mj = json_loads(meta, 0,
								 NULL);
	json_t *rules, *lv, *rj;
	const char *k1, *k2;
	struct tree tr;
	struct run w;
	int rc;

	*names = NULL;
	if ((rc = tree_init(&tr)) == CF_OK && (!tj || !mj ||
					       tree_parse(tj, &tr, NULL)))
		rc = CF_EINVAL;
	rules = json_object_get(tj, "rules");
	json_object_foreach(rules, k1, lv) {
		json_object_foreach(lv, k2, rj) {
			struct rule *nr;
			if (rc)
				break;
			if (!(nr = realloc(tr.rules, (tr.nrules + 1) *
					   sizeof *nr))) {
				rc = CF_ENOMEM;
				break;
			}
			tr.rules = nr;
			if ((rc = rule_init(&nr[tr.nrules])))
				break;
			rc = rule_parse(rj, &nr[tr.nrules++], NULL);
		}
	}
	if (rc == CF_OK && tr.nrules)
		qsort(tr.rules, tr.nrules, sizeof *tr.rules, rule_cmp);
	if (rc == CF_OK)
		rc = run_init(&w, &tr, mj, json_string_value(json_object_get(
			mj, "tsuid")), 0);
	if (rc == CF_OK && (rc = build(&w)) == CF_OK) {
		*matched = w.matched;
		if (!(*names = json_dumps(w.names, JSON_COMPACT)))
			rc = CF_ENOMEM;
	}
	if (rc == CF_OK || w.names)
		run_release(&w);
	tree_free(&tr);
	json_decref(tj);
	json_decref(mj);
	return rc;
}

/* The branch key of names[0..n) into key; its stored JSON into *json
 * (malloc'd). */
static int branch_of(int id, json_t *names, size_t n, unsigned char *key,
		     size_t *klen, char **json)
{
	json_t *o = json_object(), *path = json_object();
	char k[24];
	int ok = o && path;

	id_bytes(id, key);
	*klen = 2;
	ok = ok && !json_object_set_new(path, "0", json_string("ROOT"));
	for (size_t i = 0; ok && i < n; i++) {
		const char *s = json_string_value(json_array_get(names, i));
		put_be32(key + *klen, tsd_tree_hash(s, strlen(s)));
		*klen += 4;
		snprintf(k, sizeof k, "%zu", i + 1);
		ok = !json_object_set_new(path, k, json_string(s));
	}
	if (ok) {
		json_object_set_new(o, "path", path);
		path = NULL;
		json_object_set_new(o, "displayName", n ? json_incref(
			json_array_get(names, n - 1)) : json_string("ROOT"));
		*json = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
		ok = *json != NULL;
	}
	json_decref(path);
	json_decref(o);
	return ok ? CF_OK : CF_ENOMEM;
}

/* Stores the path of w: the branches where missing, the leaf, and the
 * collision or the failure to match. */
static int store(cf_table *tt, struct run *w, const unsigned char *ts,
		 size_t tslen)
{
	const struct tree *tr = w->tr;
	size_t n = json_array_size(w->names), klen, lq;
	unsigned char key[KEY_MAX], q[64 + TSUID_MAX], k3[3];
	const char *leaf;
	char *val = NULL;
	json_t *lj;
	int rc = CF_OK, applied;

	id_bytes(tr->id, k3);
	if (!w->matched && tr->strict) {
		k3[2] = 2;
		lq = strlen(NM_PREFIX);
		memcpy(q, NM_PREFIX, lq);
		memcpy(q + lq, ts, tslen);
		return !tr->fails ? CF_OK :
		       cas(tt, k3, 3, (const char *)q, lq + tslen,
			   w->nm.p ? (const char *)w->nm.p : "", w->nm.len,
			   NULL, &applied);
	}
	if (!n)
		return CF_OK;
	/* ROOT and each branch above the leaf, where missing */
	for (size_t i = 0; rc == CF_OK && i < n; i++) {
		if ((rc = branch_of(tr->id, w->names, i, key, &klen, &val)))
			break;
		rc = cas(tt, key, klen, QBRANCH, 6, val, strlen(val), NULL,
			 &applied);
		free(val);
		val = NULL;
	}
	if (rc)
		return rc;
	leaf = json_string_value(json_array_get(w->names, n - 1));
	memcpy(q, LEAF_PREFIX, 5);
	put_be32(q + 5, tsd_tree_hash(leaf, strlen(leaf)));
	lj = json_object();
	if (!lj || json_object_set_new(lj, "displayName", json_string(leaf)) ||
	    json_object_set_new(lj, "tsuid", json_string(w->tsuid)) ||
	    !(val = json_dumps(lj, JSON_COMPACT | JSON_PRESERVE_ORDER)))
		rc = CF_ENOMEM;
	json_decref(lj);
	if (rc == CF_OK)
		rc = cas(tt, key, klen, (const char *)q, 9, val, strlen(val),
			 NULL, &applied);
	free(val);
	if (rc == CF_OK && !applied) {
		/* Leaf.storeLeaf: the same series, or a collision */
		struct cf_column col = { FAM, 1, q, 9 };
		struct cf_read_opts o = CF_READ_OPTS_INIT;
		cf_row *row = NULL;
		json_t *old = NULL;
		const char *had = NULL;
		o.columns = &col;
		o.ncolumns = 1;
		if ((rc = cf_table_get(tt, key, klen, &o, &row)) == CF_OK &&
		    cf_row_count(row))
			old = json_loadb((const char *)cf_row_cell(row, 0)->val,
					 cf_row_cell(row, 0)->vlen, 0, NULL);
		had = json_string_value(json_object_get(old, "tsuid"));
		if (rc == CF_OK && had && strcmp(had, w->tsuid)) {
			cf_log(CF_LOG_INFO, "tsd: tree %d: series %s collided "
			       "with %s on leaf %s", tr->id, w->tsuid, had,
			       leaf);
			k3[2] = 1;
			lq = strlen(COLL_PREFIX);
			memcpy(q, COLL_PREFIX, lq);
			memcpy(q + lq, ts, tslen);
			if (tr->fails)
				rc = cas(tt, k3, 3, (const char *)q, lq + tslen,
					 had, strlen(had), NULL, &applied);
		}
		json_decref(old);
		cf_row_free(row);
	}
	return rc;
}

/* The root of tree id as /api/tree/test shows it, the path of w below
 * it. */
static json_t *test_branch(struct run *w)
{
	size_t n = json_array_size(w->names), klen;
	unsigned char key[KEY_MAX];
	json_t *child = NULL, *o = NULL;
	char *val = NULL;

	for (size_t i = n + 1; i-- > 0;) {
		json_t *stored, *leaves = NULL, *kids = NULL;
		if (i == n && n) {
			continue;	/* the leaf is no branch */
		}
		if (branch_of(w->tr->id, w->names, i, key, &klen, &val))
			break;
		stored = json_loads(val, 0, NULL);
		free(val);
		val = NULL;
		if (i == (n ? n - 1 : 0) && n) {
			json_t *l = json_object();
			leaves = json_array();
			json_object_set_new(l, "metric", json_null());
			json_object_set_new(l, "tags", json_null());
			json_object_set_new(l, "tsuid", json_string(w->tsuid));
			json_object_set(l, "displayName",
					json_array_get(w->names, n - 1));
			json_array_append_new(leaves, l);
		}
		if (child) {
			kids = json_array();
			json_array_append_new(kids, child);
		}
		o = stored ? branch_json(stored, key, klen, leaves, kids) :
		    NULL;
		json_decref(stored);
		child = o;
		if (!o)
			break;
	}
	return o;
}

int tsd_tree_test(tsd *t, int id, const char *tsuids, struct buf *out,
		  struct tsd_error *err)
{
	struct tree tr;
	json_t *res = NULL;
	int rc = tree_load(t, id, &tr, err);

	if (rc == CF_OK && (!tsuids || !*tsuids)) {
		fail(err, "Missing or empty TSUID list");
		rc = CF_EINVAL;
	}
	if (rc == CF_OK && !(res = json_object()))
		rc = CF_ENOMEM;
	for (const char *p = tsuids; rc == CF_OK && *p;) {
		size_t n = strcspn(p, ",");
		char *hex = strndup(p, n);
		struct tsd_error e = { 0, "" };
		struct buf mb = BUF_INIT;
		json_t *one = json_object(), *meta = NULL, *msgs;
		struct run w;
		p += n + (p[n] == ',');
		if (!hex || !one) {
			rc = CF_ENOMEM;
		} else if ((rc = tsd_tsmeta_get(t, hex, &mb, &e)) ==
			   CF_ENOTFOUND) {
			rc = CF_OK;
			msgs = json_array();
			json_array_append_new(msgs, json_string(
				strstr(e.reason, "UIDs") ? "TSUID was missing "
				"a UID name: No such unique ID" :
				"Unable to locate TSUID meta data"));
			json_object_set_new(one, "branch", json_null());
			json_object_set_new(one, "meta", json_null());
			json_object_set_new(one, "messages", msgs);
		} else if (rc == CF_OK) {
			meta = json_loadb((const char *)mb.p, mb.len, 0, NULL);
			rc = meta ? run_init(&w, &tr, meta, hex, 1) :
			     CF_ECORRUPT;
			if (rc == CF_OK && (rc = build(&w)) == CF_OK) {
				size_t nn = json_array_size(w.names);
				if (nn && (w.matched || !tr.strict))
					msg(&w, "Depth [%zu] Adding leaf "
					    "[name: %s tsuid: %s] to parent "
					    "branch", nn + 1,
					    json_string_value(json_array_get(
						w.names, nn - 1)), hex);
				json_object_set_new(one, "branch",
						    w.matched || !tr.strict ?
						    test_branch(&w) :
						    json_null());
				json_object_set(one, "meta", meta);
				json_object_set(one, "messages", w.msgs);
			}
			if (meta)
				run_release(&w);
		} else {
			snprintf(err->reason, sizeof err->reason, "%s",
				 e.reason);
		}
		if (rc == CF_OK)
			rc = json_object_set_new(res, hex, one) ? CF_ENOMEM :
			     CF_OK;
		else
			json_decref(one);
		json_decref(meta);
		buf_release(&mb);
		free(hex);
	}
	if (rc == CF_OK)
		rc = put_json(out, res);
	else if (res && tsuids && *tsuids)
		json_decref(res);
	tree_free(&tr);
	return rc;
}

/* --- processing new series ------------------------------------------------ */

struct proc {
	tsd *t;
	cf_table *tt;
	json_t *meta;
	char hex[2 * TSUID_MAX + 1];
	const unsigned char *ts;
	size_t tslen;
};

static int process_one(void *arg, struct tree *tr)
{
	struct proc *p = arg;
	struct run w;
	int rc;

	if (!tr->enabled)
		return CF_OK;
	if ((rc = run_init(&w, tr, p->meta, p->hex, 0)) == CF_OK &&
	    (rc = build(&w)) == CF_OK)
		rc = store(p->tt, &w, p->ts, p->tslen);
	run_release(&w);
	if (rc)
		cf_log(CF_LOG_WARN, "tsd: tree %d: series %s: %s", tr->id,
		       p->hex, cf_strerror(rc));
	return CF_OK;
}

void tsd_tree_process(tsd *t, const unsigned char *tsuid, size_t n)
{
	struct tsd_error err = { 0, "" };
	struct buf mb = BUF_INIT;
	struct proc p;
	int rc;

	memset(&p, 0, sizeof p);
	if (n > TSUID_MAX || (rc = tree_table(t, 0, &p.tt)) || !p.tt)
		return;		/* no tree: nothing to do */
	p.t = t;
	p.ts = tsuid;
	p.tslen = n;
	hex_of(tsuid, n, p.hex);
	rc = tsd_tsmeta_get(t, p.hex, &mb, &err);
	if (rc == CF_OK && !(p.meta = json_loadb((const char *)mb.p, mb.len,
						 0, NULL)))
		rc = CF_ECORRUPT;
	if (rc == CF_OK)
		rc = tree_each(p.tt, process_one, &p, &err);
	if (rc)
		cf_log(CF_LOG_WARN, "tsd: trees of series %s: %s %s", p.hex,
		       cf_strerror(rc), err.reason);
	json_decref(p.meta);
	buf_release(&mb);
	cf_table_close(p.tt);
}
