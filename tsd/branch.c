/*
 * branch.c: OpenTSDB's TreeBuilder, Branch and Leaf: a series' meta
 * data run through a tree's rules to a path of branches ending in a
 * leaf (stored, or shown by /api/tree/test), and the reads of a branch
 * with its children and leaves (tree.h has the layout of tsdb-tree).
 *
 * The builder (TreeBuilder.processRuleset) walks the levels of the rule
 * set in order; in a level the rules are tried by order until one gives
 * a name.  A rule with a separator gives one name a pass for each part
 * of the value, so its level is visited once per part.  The names, a
 * name equal to the one before dropped and levels giving none skipped,
 * are the path: the last is the leaf's display name, the others the
 * branches under ROOT.  Separators are regexes, as String.split takes
 * them, trailing empty parts dropped.
 *
 * Branches and leaves are written only where absent, so a path built
 * twice stays as first written and a leaf of another series under the
 * same name is a collision.
 */
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "tsd/internal.h"
#include "tsd/query.h"
#include "tsd/tree.h"
#include "util/err.h"
#include "util/log.h"

#define TSUID_MAX (TSD_UID_WIDTH + TSD_MAX_TAGS * 2 * TSD_UID_WIDTH)
#define KEY_MAX 1024	/* a branch key: 2 + 4 a level */
#define PATH_MAX_NAMES ((KEY_MAX - 2) / 4)

/* --- branches ---------------------------------------------------------- */

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

/* A branch's API JSON from its stored JSON j (path, displayName). */
static json_t *branch_json(json_t *stored, const unsigned char *key,
			   size_t klen, json_t *leaves, json_t *branches)
{
	json_t *o = json_object(), *path = json_object_get(stored, "path");
	char hex[2 * KEY_MAX + 1];

	if (!o)
		return NULL;
	tsd_tree_hex(key, klen, hex);
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

	if (!hex || (n = tsd_tree_unhex(hex, strlen(hex), k, sizeof k)) <
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
			json_object_set_new(tags, tagk, json_string(
				(const char *)name.p));
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
	struct cf_column col = { TSD_TREE_FAM, 1, NULL, 0 };
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
			tsd_errf(err, "Missing or invalid branch and tree IDs");
			return CF_EINVAL;
		}
		if ((rc = tsd_tree_check_id(id, err)))
			return rc;
		tsd_tree_key(id, key);
		klen = 2;
	} else {
		if (strlen(branch) < 4) {
			tsd_errf(err, "Branch ID was too short");
			return CF_EINVAL;
		}
		n = tsd_tree_unhex(branch, strlen(branch), key, sizeof key);
		if (n < 0) {
			tsd_errf(err, "Unable to parse the branch ID: %.100s",
			     branch);
			return CF_EINVAL;
		}
		klen = (size_t)n;
	}
	if ((rc = tsd_tree_table(t, 0, &tt)))
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
					!memcmp(c->qual, TSD_TREE_QBRANCH, 6);
			int is_leaf = rlen == klen && c->qlen == 9 &&
				      !memcmp(c->qual, TSD_TREE_QLEAF, 5);
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
		tsd_tree_hex(key, klen, hex);
		tsd_errf(err, "Unable to locate branch '%s' for tree '%d'", hex,
		     key[0] << 8 | key[1]);
		rc = CF_ENOTFOUND;
	}
	if (rc == CF_OK && kids)
		rc = sort_by_name(kids);
	if (rc == CF_OK && leaves)
		rc = sort_by_name(leaves);
	if (rc == CF_OK) {
		rc = tsd_json_put(out, branch_json(self, key, klen,
							leaves, kids));
		leaves = kids = NULL;
	}
	json_decref(self);
	json_decref(leaves);
	json_decref(kids);
	return rc;
}

/* --- the builder ---------------------------------------------------------- */

/* What a run of the builder over one series keeps. */
struct run {
	const struct tsd_tree *tr;
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
static int set_name(struct run *w, const struct tsd_rule *r, const char *orig,
		    const char *value, char **name)
{
	const char *fmt = r->s[TSD_RULE_FMT];
	char *s = strdup(*fmt ? fmt : value), rn[64];

	if (s && *r->s[TSD_RULE_FMT]) {
		s = s ? replace(s, "{ovalue}", orig) : NULL;
		s = s ? replace(s, "{value}", value) : NULL;
		s = s ? replace(s, "{tsuid}", w->tsuid) : NULL;
		if (s && strstr(s, "{tag_name}")) {
			if (r->type == TSD_RULE_METRIC) {
				tsd_rule_name(r, rn, sizeof rn);
				msg(w, "Display rule %s was of the wrong type "
				    "to match on {tag_name}", rn);
			}
			s = replace(s, "{tag_name}",
				    r->type == TSD_RULE_TAGK ?
				    r->s[TSD_RULE_FIELD] :
				    r->type == TSD_RULE_METRIC ? "" :
				    r->s[TSD_RULE_CUSTOM]);
		}
	}
	if (!s)
		return CF_ENOMEM;
	free(*name);
	*name = s;
	return CF_OK;
}

/* String.split(sep): the parts of v, trailing empty ones dropped. */
static int split(struct run *w, const struct tsd_rule *r, const char *v)
{
	pcre2_code *re;
	pcre2_match_data *md = NULL;
	size_t len = strlen(v), at = 0, cap = 0;
	PCRE2_SIZE off;
	int ec, rc = CF_OK;

	re = pcre2_compile((PCRE2_SPTR)r->s[TSD_RULE_SEP],
			   PCRE2_ZERO_TERMINATED, PCRE2_UTF, &ec, &off, NULL);
	if (!re || !(md = pcre2_match_data_create_from_pattern(re, NULL))) {
		pcre2_code_free(re);
		return re ? CF_ENOMEM : CF_EINVAL;
	}
	for (;;) {
		int m = pcre2_match(re, (PCRE2_SPTR)v, len, at, 0, md, NULL);
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		size_t e;
		/* an empty match where the part begins ends no part: the
		 * next match after it does (no empty leading part) */
		if (m > 0 && ov[0] == ov[1] && ov[0] == at)
			m = at < len ? pcre2_match(re, (PCRE2_SPTR)v, len,
						   at + 1, 0, md, NULL) : -1;
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
		if (!(w->parts[w->nparts] = strndup(v + at, e - at))) {
			rc = CF_ENOMEM;
			break;
		}
		w->nparts++;
		if (m <= 0)
			break;
		at = ov[1];	/* past the separator: beyond the last at */
	}
	while (w->nparts && !*w->parts[w->nparts - 1])
		free(w->parts[--w->nparts]);
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return rc;
}

/* processParsedValue: the name of value v under rule r into *name. */
static int parsed(struct run *w, const struct tsd_rule *r, const char *v,
		  char **name)
{
	char rn[64];
	int rc;

	tsd_rule_name(r, rn, sizeof rn);
	if (!r->re && !*r->s[TSD_RULE_SEP])
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
static int apply(struct run *w, const struct tsd_rule *r, char **name)
{
	json_t *u = NULL, *custom, *v;
	const char *what;
	char rn[64];

	tsd_rule_name(r, rn, sizeof rn);
	msg(w, "Processing rule: %s", rn);
	switch (r->type) {
	case TSD_RULE_METRIC:
		u = json_object_get(w->meta, "metric");
		what = json_string_value(json_object_get(u, "name"));
		return what && *what ? parsed(w, r, what, name) : CF_OK;
	case TSD_RULE_TAGK:
		u = tag_meta(w->meta, r->s[TSD_RULE_FIELD], 2);
		what = json_string_value(json_object_get(u, "name"));
		if (!what || !*what) {
			msg(w, "No match on tagk [%s] for rule: %s",
			    r->s[TSD_RULE_FIELD], rn);
			return CF_OK;
		}
		msg(w, "Matched tagk [%s] for rule: %s", r->s[TSD_RULE_FIELD],
		    rn);
		return parsed(w, r, what, name);
	case TSD_RULE_METRIC_CUSTOM:
		u = json_object_get(w->meta, "metric");
		break;
	case TSD_RULE_TAGK_CUSTOM:
	case TSD_RULE_TAGV_CUSTOM:
		u = tag_meta(w->meta, r->s[TSD_RULE_FIELD],
			     r->type == TSD_RULE_TAGV_CUSTOM);
		if (!u) {
			msg(w, "No match on %s [%s] for rule: %s",
			    r->type == TSD_RULE_TAGK_CUSTOM ? "tagk" : "tagv",
			    r->s[TSD_RULE_FIELD], rn);
			return CF_OK;
		}
		msg(w, "Matched %s [%s] for rule: %s",
		    r->type == TSD_RULE_TAGK_CUSTOM ? "tagk" : "tagv",
		    r->s[TSD_RULE_FIELD], rn);
		break;
	default:
		return CF_OK;
	}
	custom = json_object_get(u, "custom");
	v = json_object_get(custom, r->s[TSD_RULE_CUSTOM]);
	if (!json_is_string(v)) {
		msg(w, "No match on custom tag [%s] for rule: %s",
		    r->s[TSD_RULE_CUSTOM], rn);
		return CF_OK;
	}
	msg(w, "Matched custom tag [%s] for rule: %s", r->s[TSD_RULE_CUSTOM],
	    rn);
	return parsed(w, r, json_string_value(v), name);
}

/* The path of the series through the rules into w->names. */
static int build(struct run *w)
{
	const struct tsd_tree *tr = w->tr;
	int rc = CF_OK, level;
	size_t i = 0;

	w->matched = 1;
	if (!tr->nrules)
		return CF_OK;
	level = tr->rules[0].level;
	while (rc == CF_OK && json_array_size(w->names) < PATH_MAX_NAMES) {
		const struct tsd_rule *last = NULL;
		char *name = NULL, rn[64], **parts = w->parts;
		size_t n, part = w->part;
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
			tsd_rule_name(last, rn, sizeof rn);
			w->matched = 0;
			if (w->nm.len)
				rc = buf_putc(&w->nm, ' ');
			if (rc == CF_OK)
				rc = buf_append(&w->nm, rn, strlen(rn));
		}
		/* the level is done unless a rule took a part of a split
		 * and parts remain (a pass taking none ends it too, so
		 * the walk always ends) */
		if (!w->parts || w->part >= w->nparts ||
		    (w->parts == parts && w->part == part)) {
			parts_free(w);
			if (level == INT_MAX)
				i = tr->nrules;	/* the last level there is */
			else
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

static int run_init(struct run *w, const struct tsd_tree *tr, json_t *meta,
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
	struct tsd_tree tr;
	struct run w;
	int rc;

	memset(&w, 0, sizeof w);	/* released on every path below */
	*names = NULL;
	if ((rc = tsd_tree_init(&tr)) == CF_OK && (!tj || !mj ||
					       tsd_tree_parse(tj, &tr, NULL)))
		rc = CF_EINVAL;
	rules = json_object_get(tj, "rules");
	json_object_foreach(rules, k1, lv) {
		json_object_foreach(lv, k2, rj) {
			struct tsd_rule *nr;
			if (rc)
				break;
			if (!(nr = realloc(tr.rules, (tr.nrules + 1) *
					   sizeof *nr))) {
				rc = CF_ENOMEM;
				break;
			}
			tr.rules = nr;
			if ((rc = tsd_rule_init(&nr[tr.nrules])))
				break;
			rc = tsd_rule_parse(rj, &nr[tr.nrules++], NULL);
		}
	}
	if (rc == CF_OK && tr.nrules)
		qsort(tr.rules, tr.nrules, sizeof *tr.rules, tsd_rule_cmp);
	if (rc == CF_OK)
		rc = run_init(&w, &tr, mj, json_string_value(json_object_get(
			mj, "tsuid")), 0);
	if (rc == CF_OK && (rc = build(&w)) == CF_OK) {
		*matched = w.matched;
		if (!(*names = json_dumps(w.names, JSON_COMPACT)))
			rc = CF_ENOMEM;
	}
	run_release(&w);
	tsd_tree_free(&tr);
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

	tsd_tree_key(id, key);
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
	const struct tsd_tree *tr = w->tr;
	size_t n = json_array_size(w->names), klen, lq;
	unsigned char key[KEY_MAX], q[64 + TSUID_MAX], k3[3];
	const char *leaf;
	char *val = NULL;
	json_t *lj;
	int rc = CF_OK, applied;

	tsd_tree_key(tr->id, k3);
	if (!w->matched && tr->strict) {
		k3[2] = 2;
		lq = strlen(TSD_TREE_QNM);
		memcpy(q, TSD_TREE_QNM, lq);
		memcpy(q + lq, ts, tslen);
		if (!tr->fails)
			return CF_OK;
		return tsd_tree_cas(tt, k3, 3, (const char *)q, lq + tslen,
				    w->nm.p ? (const char *)w->nm.p : "",
				    w->nm.len, NULL, &applied);
	}
	if (!n)
		return CF_OK;
	/* ROOT and each branch above the leaf, where missing */
	for (size_t i = 0; rc == CF_OK && i < n; i++) {
		if ((rc = branch_of(tr->id, w->names, i, key, &klen, &val)))
			break;
		rc = tsd_tree_cas(tt, key, klen, TSD_TREE_QBRANCH, 6, val,
				  strlen(val), NULL, &applied);
		free(val);
		val = NULL;
	}
	if (rc)
		return rc;
	leaf = json_string_value(json_array_get(w->names, n - 1));
	memcpy(q, TSD_TREE_QLEAF, 5);
	put_be32(q + 5, tsd_tree_hash(leaf, strlen(leaf)));
	lj = json_object();
	if (!lj || json_object_set_new(lj, "displayName", json_string(leaf)) ||
	    json_object_set_new(lj, "tsuid", json_string(w->tsuid)) ||
	    !(val = json_dumps(lj, JSON_COMPACT | JSON_PRESERVE_ORDER)))
		rc = CF_ENOMEM;
	json_decref(lj);
	if (rc == CF_OK)
		rc = tsd_tree_cas(tt, key, klen, (const char *)q, 9, val,
				  strlen(val), NULL, &applied);
	free(val);
	if (rc == CF_OK && !applied) {
		/* Leaf.storeLeaf: the same series, or a collision */
		struct cf_column col = { TSD_TREE_FAM, 1, q, 9 };
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
			lq = strlen(TSD_TREE_QCOLL);
			memcpy(q, TSD_TREE_QCOLL, lq);
			memcpy(q + lq, ts, tslen);
			if (tr->fails)
				rc = tsd_tree_cas(tt, k3, 3, (const char *)q,
						  lq + tslen, had, strlen(had),
						  NULL, &applied);
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

int tsd_tree_test(tsd *t, int id, const char *tsuids, tsd_tree_meta_fn *meta,
		  struct buf *out, struct tsd_error *err)
{
	struct tsd_tree tr;
	json_t *res = NULL;
	int rc = tsd_tree_load(t, id, &tr, err);

	if (rc == CF_OK && (!tsuids || !*tsuids)) {
		tsd_errf(err, "Missing or empty TSUID list");
		rc = CF_EINVAL;
	}
	if (rc == CF_OK && !(res = json_object()))
		rc = CF_ENOMEM;
	for (const char *p = tsuids; rc == CF_OK && *p;) {
		size_t n = strcspn(p, ",");
		char *hex = strndup(p, n);
		struct tsd_error e = { 0, "" };
		struct buf mb = BUF_INIT;
		json_t *one = json_object(), *mj = NULL, *msgs;
		struct run w;
		p += n + (p[n] == ',');
		if (!hex || !one) {
			rc = CF_ENOMEM;
		} else if ((rc = meta(t, hex, &mb, &e)) ==
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
			mj = json_loadb((const char *)mb.p, mb.len, 0, NULL);
			rc = mj ? run_init(&w, &tr, mj, hex, 1) :
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
				json_object_set(one, "meta", mj);
				json_object_set(one, "messages", w.msgs);
			}
			if (mj)
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
		json_decref(mj);
		buf_release(&mb);
		free(hex);
	}
	if (rc == CF_OK)
		rc = tsd_json_put(out, res);
	else
		json_decref(res);
	tsd_tree_free(&tr);
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

static int process_one(void *arg, struct tsd_tree *tr)
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

void tsd_tree_process(tsd *t, const unsigned char *tsuid, size_t n,
		      tsd_tree_meta_fn *meta)
{
	struct tsd_error err = { 0, "" };
	struct buf mb = BUF_INIT;
	struct proc p;
	int rc;

	memset(&p, 0, sizeof p);
	if (n > TSUID_MAX || (rc = tsd_tree_table(t, 0, &p.tt)) || !p.tt)
		return;		/* no tree: nothing to do */
	p.t = t;
	p.ts = tsuid;
	p.tslen = n;
	tsd_tree_hex(tsuid, n, p.hex);
	rc = meta(t, p.hex, &mb, &err);
	if (rc == CF_OK && !(p.meta = json_loadb((const char *)mb.p, mb.len,
						 0, NULL)))
		rc = CF_ECORRUPT;
	if (rc == CF_OK)
		rc = tsd_tree_each(p.tt, process_one, &p, &err);
	if (rc)
		cf_log(CF_LOG_WARN, "tsd: trees of series %s: %s %s", p.hex,
		       cf_strerror(rc), err.reason);
	json_decref(p.meta);
	buf_release(&mb);
	cf_table_close(p.tt);
}

/* --- the names of MNT/tsd/tree/ ----------------------------------------- */

int tsd_tree_qs(tsd *t, const char *qs, size_t len, struct buf *out,
		struct tsd_error *err)
{
	static const char *const keys[] = { "treeid", "level", "order",
					    "branch" };
	char *v[4] = { NULL, NULL, NULL, NULL }, *end;
	long n[3] = { 0, -1, -1 };
	int rc = CF_OK;

	for (size_t b = 0, i = 0; i <= len && rc == CF_OK; i++) {
		const char *p = qs + b, *eq;
		size_t kl, k;
		if (i < len && qs[i] != '&')
			continue;
		eq = memchr(p, '=', i - b);
		kl = eq ? (size_t)(eq - p) : i - b;
		b = i + 1;
		if (!kl)
			continue;
		for (k = 0; k < 4; k++)
			if (strlen(keys[k]) == kl && !memcmp(p, keys[k], kl))
				break;
		if (k == 4) {
			tsd_errf(err, "unknown parameter: %.*s",
			     (int)(kl > 60 ? 60 : kl), p);
			rc = CF_EINVAL;
			break;
		}
		free(v[k]);
		v[k] = tsd_pct_decode(eq ? eq + 1 : p + kl,
				      eq ? (size_t)(qs + i - eq - 1) : 0);
		if (!v[k])
			rc = CF_ENOMEM;
	}
	for (int k = 0; rc == CF_OK && k < 3; k++) {
		if (!v[k])
			continue;
		n[k] = strtol(v[k], &end, 10);
		if (!*v[k] || *end || n[k] < 0 || n[k] > INT_MAX) {
			tsd_errf(err, k ? "Unable to parse the '%s' parameter" :
			     "Unable to parse '%s' value", k ? keys[k] :
			     "tree");
			rc = CF_EINVAL;
		}
	}
	if (rc == CF_OK && v[3] && (v[0] || v[1] || v[2])) {
		tsd_errf(err, "a branch is named by its ID alone");
		rc = CF_EINVAL;
	} else if (rc == CF_OK && !v[3] && !v[0]) {
		tsd_errf(err, "Missing parameter <code>treeid</code>");
		rc = CF_EINVAL;
	} else if (rc == CF_OK && !v[3] && !v[1] != !v[2]) {
		tsd_errf(err, "Missing parameter <code>%s</code>", v[1] ? "order" :
		     "level");
		rc = CF_EINVAL;
	} else if (rc == CF_OK && v[3] && !*v[3]) {
		tsd_errf(err, "Branch ID was empty");
		rc = CF_EINVAL;
	} else if (rc == CF_OK && !t) {
		/* nothing written yet: no tree */
		if (v[3])
			tsd_errf(err, "Unable to locate branch '%.100s'", v[3]);
		else
			tsd_errf(err, "Unable to locate tree: %ld", n[0]);
		rc = CF_ENOTFOUND;
	} else if (rc == CF_OK && v[3]) {
		rc = tsd_tree_branch(t, 0, v[3], out, err);
	} else if (rc == CF_OK && v[1]) {
		rc = tsd_tree_rule_get(t, (int)n[0], (int)n[1], (int)n[2], out,
				       err);
	} else if (rc == CF_OK) {
		rc = n[0] ? tsd_tree_get(t, (int)n[0], out, err) :
		     tsd_tree_check_id(0, err);
	}
	for (int k = 0; k < 4; k++)
		free(v[k]);
	return rc;
}
