/*
 * api_tree.c: OpenTSDB's TreeRpc: /api/tree (definitions), /api/tree/
 * branch, /api/tree/rule, /api/tree/rules, /api/tree/test, /api/tree/
 * collisions and /api/tree/notmatched, each from a JSON body or the
 * query string.  The work is tsd/tree.c's; here the request's fields
 * are gathered and tsd's codes turned into TreeRpc's statuses.  Memory:
 * the answer (a branch: its children and leaves).
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/internal.h"
#include "tsd/tree.h"
#include "util/err.h"
#include "util/log.h"

/* The answer of a tsd_tree_* error. */
static int tree_error(struct net_req *r, int rc, const struct tsd_error *err)
{
	switch (rc) {
	case CF_EINVAL:
		return net_error(r, 400, err->reason, NULL);
	case CF_ENOTFOUND:
		return net_error(r, 404, err->reason, NULL);
	case CF_EEXIST:
		r->status = 304;
		return 0;
	case CF_EBUSY:
		return net_error(r, 500, err->reason, "Please try again at a "
				 "later time");
	default:
		cf_log(CF_LOG_WARN, "tsd http: tree: %s %s", cf_strerror(rc),
		       err->reason);
		return net_error(r, 500, cf_strerror(rc), err->reason);
	}
}

/* Integer.parseInt of s into *v: 0 or -1. */
static int parse_int(const char *s, int *v)
{
	char *end;
	long n;

	if (!s || !*s)
		return -1;
	errno = 0;
	n = strtol(s, &end, 10);
	if (*end || errno || n < INT32_MIN || n > INT32_MAX)
		return -1;
	*v = (int)n;
	return 0;
}

/* parseTreeId: the treeid parameter (absent: 0, or with required 400
 * `Missing parameter <code>treeid</code>`); -1 with the answer set. */
static int tree_id(struct net_req *r, int required, int *id)
{
	const char *v = net_arg(r, "treeid");

	*id = 0;
	if (!v && !required)
		return 0;
	if (!v) {
		net_error(r, 400, "Missing parameter <code>treeid</code>",
			  NULL);
		return -1;
	}
	if (parse_int(v, id)) {
		net_error(r, 400, "Unable to parse 'tree' value", NULL);
		return -1;
	}
	return 0;
}

/* The JSON integer v as an int: -1 when it is none or out of range (a
 * bad ID, level or order), 0 when absent. */
static int json_int(json_t *v)
{
	json_int_t n;

	if (!v || json_is_null(v))
		return 0;
	n = json_integer_value(v);
	return json_is_integer(v) && n >= 0 && n <= INT32_MAX ? (int)n : -1;
}

/* The tsd (create for a write); 1 with the answer set when there is
 * none yet: no tree can exist. */
static int get_tsd(struct net_req *r, int create, int id, tsd **t)
{
	int rc = r->get(create, t);
	char msg[64];

	if (rc == CF_OK)
		return 0;
	if (rc != CF_ENOTFOUND) {
		net_error(r, 500, cf_strerror(rc), NULL);
		return 1;
	}
	if (!id) {
		r->status = 200;
		buf_reset(&r->out);
		buf_append(&r->out, "[]", 2);
		return 1;
	}
	snprintf(msg, sizeof msg, "Unable to locate tree: %d", id);
	net_error(r, 404, msg, NULL);
	return 1;
}

/* Sets the answer out (moved into the reply) with status 200. */
static int reply(struct net_req *r, struct buf *out)
{
	buf_release(&r->out);
	r->out = *out;
	*out = (struct buf)BUF_INIT;
	r->status = 200;
	return 0;
}

/* The text of object o (consumed), or NULL with a 500 answer. */
static char *dump(struct net_req *r, json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	if (!s)
		net_error(r, 500, "out of memory", NULL);
	return s;
}

/* Query string parameters copied into o as strings (names[i][0] from
 * the query, names[i][1] in the JSON). */
static void qs_strings(struct net_req *r, json_t *o,
		       const char *const (*names)[2], size_t n)
{
	const char *v;

	for (size_t i = 0; i < n; i++)
		if ((v = net_arg(r, names[i][0])))
			json_object_set_new(o, names[i][1], json_string(v));
}

/* parseTree: the query string's tree as JSON text; NULL with the
 * answer set. */
static char *tree_qs(struct net_req *r, int id)
{
	static const char *const strs[][2] = {
		{ "name", "name" }, { "description", "description" },
		{ "notes", "notes" },
	};
	static const char *const bools[][2] = {
		{ "strict_match", "strictMatch" }, { "enabled", "enabled" },
		{ "store_failures", "storeFailures" },
	};
	json_t *o = json_object();
	const char *v;

	if (!o)
		return dump(r, NULL);
	if (id)
		json_object_set_new(o, "treeId", json_integer(id));
	qs_strings(r, o, strs, 3);
	for (int i = 0; i < 3; i++)
		if ((v = net_arg(r, bools[i][0])))
			json_object_set_new(o, bools[i][1],
					    json_boolean(!strcasecmp(v,
								     "true")));
	return dump(r, o);
}

/* /api/tree: GET one tree or all; POST and PUT a tree (new without a
 * treeId); DELETE its branches (definition=true: and itself). */
static int api_tree(struct net_req *r, const char *m)
{
	struct tsd_error err = { 0, "" };
	struct buf out = BUF_INIT;
	json_t *body = NULL, *v;
	char *text = NULL;
	int id = 0, rc, definition = 0;
	tsd *t;

	if (net_has_body(r)) {
		if (!(body = net_body_json(r)))
			return 0;
		v = json_object_get(body, "treeId");
		if (v && !json_is_null(v) && !json_is_integer(v)) {
			json_decref(body);
			return net_error(r, 400, "Unable to parse the given "
					 "JSON", "treeId is not an integer");
		}
		id = json_int(v);
		v = json_object_get(body, "definition");
		definition = json_is_true(v) || (json_is_string(v) &&
			!strcasecmp(json_string_value(v), "true"));
	} else {
		const char *d = net_arg(r, "definition");
		if (tree_id(r, 0, &id))
			return 0;
		definition = d && !strcasecmp(d, "true");
	}
	if (strcmp(m, "GET") && strcmp(m, "POST") && strcmp(m, "PUT") &&
	    strcmp(m, "DELETE")) {
		json_decref(body);
		return net_error(r, 400, "Unsupported HTTP request method",
				 NULL);
	}
	if (id && (id < 1 || id > 65535)) {
		json_decref(body);
		return net_error(r, 400, "Invalid Tree ID", NULL);
	}
	if (get_tsd(r, strcmp(m, "GET") && strcmp(m, "DELETE"), id, &t)) {
		json_decref(body);
		return 0;
	}
	if (!strcmp(m, "GET")) {
		rc = tsd_tree_get(t, id, &out, &err);
	} else if (!strcmp(m, "DELETE")) {
		rc = tsd_tree_delete(t, id, definition, &err);
		if (rc == CF_OK) {
			json_decref(body);
			r->status = 204;
			return 0;
		}
	} else {
		if (body)
			text = json_dumps(body, JSON_COMPACT);
		else if (!(text = tree_qs(r, id)))
			return 0;
		rc = text ? tsd_tree_sync(t, text, strlen(text),
					  !strcmp(m, "PUT"), &out, &err) :
		     CF_ENOMEM;
		free(text);
	}
	json_decref(body);
	if (rc) {
		buf_release(&out);
		return tree_error(r, rc, &err);
	}
	return reply(r, &out);
}

/* /api/tree/branch: GET the branch ?branch=HEX, or the root of
 * ?treeid=N. */
static int api_branch(struct net_req *r, const char *m)
{
	struct tsd_error err = { 0, "" };
	struct buf out = BUF_INIT;
	int id, rc;
	tsd *t;

	if (strcmp(m, "GET") && strcmp(m, "POST"))
		return net_bad_method(r);
	if (tree_id(r, 0, &id))
		return 0;
	if ((rc = r->get(0, &t)) == CF_ENOTFOUND) {
		const char *b = net_arg(r, "branch");
		if ((!b || !*b) && id < 1)
			return net_error(r, 400, "Missing or invalid branch "
					 "and tree IDs", NULL);
		return net_error(r, 404, "Unable to locate branch", NULL);
	}
	if (rc)
		return net_error(r, 500, cf_strerror(rc), NULL);
	rc = tsd_tree_branch(t, id, net_arg(r, "branch"), &out, &err);
	if (rc) {
		buf_release(&out);
		return tree_error(r, rc, &err);
	}
	return reply(r, &out);
}

/* parseRule: the query string's rule as JSON text; NULL with the
 * answer set. */
static char *rule_qs(struct net_req *r)
{
	static const char *const strs[][2] = {
		{ "type", "type" }, { "field", "field" },
		{ "custom_field", "customField" }, { "regex", "regex" },
		{ "separator", "separator" },
		{ "description", "description" }, { "notes", "notes" },
		{ "display_format", "displayFormat" },
	};
	static const char *const ints[][2] = {
		{ "regex_group_idx", "regexGroupIdx" }, { "level", "level" },
		{ "order", "order" },
	};
	json_t *o = json_object();
	const char *v;
	char msg[64];
	int id, n;

	if (tree_id(r, 1, &id)) {
		json_decref(o);
		return NULL;
	}
	if (!o)
		return dump(r, NULL);
	json_object_set_new(o, "treeId", json_integer(id));
	qs_strings(r, o, strs, 8);
	for (int i = 0; i < 3; i++) {
		v = net_arg(r, ints[i][0]);
		if (!v && i) {
			snprintf(msg, sizeof msg, "Missing parameter <code>%s"
				 "</code>", ints[i][0]);
			json_decref(o);
			net_error(r, 400, msg, NULL);
			return NULL;
		}
		if (!v)
			continue;
		if (parse_int(v, &n)) {
			snprintf(msg, sizeof msg, "Unable to parse the '%s' "
				 "parameter", ints[i][0]);
			json_decref(o);
			net_error(r, 400, msg, NULL);
			return NULL;
		}
		json_object_set_new(o, ints[i][1], json_integer(n));
	}
	return dump(r, o);
}

/* /api/tree/rule: GET, POST, PUT, DELETE one rule. */
static int api_rule(struct net_req *r, const char *m)
{
	struct tsd_error err = { 0, "" };
	struct buf out = BUF_INIT;
	json_t *j;
	char *text;
	int rc, id, level, order;
	tsd *t;

	if (strcmp(m, "GET") && strcmp(m, "POST") && strcmp(m, "PUT") &&
	    strcmp(m, "DELETE"))
		return net_bad_method(r);
	if (net_has_body(r)) {
		if (!(j = net_body_json(r)))
			return 0;
		text = dump(r, j);
	} else {
		text = rule_qs(r);
	}
	if (!text)
		return 0;
	j = json_loads(text, 0, NULL);
	id = json_int(json_object_get(j, "treeId"));
	level = json_int(json_object_get(j, "level"));
	order = json_int(json_object_get(j, "order"));
	json_decref(j);
	if (id < 1 || id > 65535) {
		free(text);
		return net_error(r, 400, "Invalid Tree ID", NULL);
	}
	if (get_tsd(r, strcmp(m, "GET") && strcmp(m, "DELETE"), id, &t)) {
		free(text);
		return 0;
	}
	if (!strcmp(m, "GET")) {
		rc = tsd_tree_rule_get(t, id, level, order, &out, &err);
	} else if (!strcmp(m, "DELETE")) {
		rc = tsd_tree_rule_delete(t, id, level, order, &err);
		if (rc == CF_OK) {
			free(text);
			r->status = 204;
			return 0;
		}
	} else {
		rc = tsd_tree_rule_sync(t, text, strlen(text),
					!strcmp(m, "PUT"), &out, &err);
	}
	free(text);
	if (rc) {
		buf_release(&out);
		return tree_error(r, rc, &err);
	}
	return reply(r, &out);
}

/* /api/tree/rules: POST or PUT a JSON array of rules (PUT: they replace
 * the tree's); DELETE the rules of ?treeid= (or of a body's). */
static int api_rules(struct net_req *r, const char *m)
{
	struct tsd_error err = { 0, "" };
	int rc, id = 0, has = net_has_body(r), del = !strcmp(m, "DELETE");
	json_t *j;
	tsd *t;

	if (!has && tree_id(r, 0, &id))
		return 0;
	if (has) {
		if (!(j = net_body_json(r)))
			return 0;
		if (!json_is_array(j) || !json_array_size(j)) {
			json_decref(j);
			return net_error(r, 400, "Missing tree rules", NULL);
		}
		id = json_int(json_object_get(
			json_array_get(j, 0), "treeId"));
		json_decref(j);
	}
	if (id < 1 || id > 65535)
		return net_error(r, 400, "Invalid Tree ID", NULL);
	if (get_tsd(r, !del && strcmp(m, "GET"), id, &t))
		return 0;
	if (!del && strcmp(m, "POST") && strcmp(m, "PUT")) {
		/* a GET: the tree must exist, then it is refused */
		struct buf out = BUF_INIT;
		rc = tsd_tree_get(t, id, &out, &err);
		buf_release(&out);
		return rc ? tree_error(r, rc, &err) :
		       net_error(r, 400, "Unsupported HTTP request method",
				 NULL);
	}
	rc = tsd_tree_rules(t, id, del ? NULL : r->body, del ? 0 : r->body_len,
			    !strcmp(m, "PUT"), del, &err);
	if (rc)
		return tree_error(r, rc, &err);
	r->status = 204;
	return 0;
}

/* The tree ID and the TSUID list of /api/tree/test, collisions and
 * notmatched: a body {"treeId":N,"tsuids":[..]} or ?treeid=&tsuids=;
 * *list malloc'd (NULL: none given).  -1 with the answer set. */
static int tsuid_list(struct net_req *r, int *id, char **list)
{
	struct buf b = BUF_INIT;
	json_t *j, *a, *v;
	const char *q;

	*list = NULL;
	if (!net_has_body(r)) {
		if (tree_id(r, 1, id))
			return -1;
		if ((q = net_arg(r, "tsuids")) && !(*list = strdup(q))) {
			net_error(r, 500, "out of memory", NULL);
			return -1;
		}
		return 0;
	}
	if (!(j = net_body_json(r)))
		return -1;
	v = json_object_get(j, "treeId");
	if (!json_is_integer(v)) {
		json_decref(j);
		net_error(r, 400, "Missing or invalid Tree ID", NULL);
		return -1;
	}
	*id = json_int(v);
	a = json_object_get(j, "tsuids");
	if (a && !json_is_null(a) && !json_is_array(a)) {
		json_decref(j);
		net_error(r, 400, "Unable to convert the given data to a list",
			  NULL);
		return -1;
	}
	for (size_t i = 0; i < json_array_size(a); i++) {
		const char *s = json_string_value(json_array_get(a, i));
		if (!s || strchr(s, ',')) {
			buf_release(&b);
			json_decref(j);
			net_error(r, 400, "Unable to convert the given data "
				  "to a list", NULL);
			return -1;
		}
		if ((i && buf_putc(&b, ',')) || buf_append(&b, s, strlen(s)))
			break;
	}
	if (json_array_size(a) && buf_putc(&b, '\0') == CF_OK)
		*list = (char *)b.p;
	else
		buf_release(&b);
	json_decref(j);
	return 0;
}

/* /api/tree/test (what) and /api/tree/collisions, notmatched. */
static int api_list(struct net_req *r, const char *m, int what)
{
	struct tsd_error err = { 0, "" };
	struct buf out = BUF_INIT;
	char *list;
	int rc, id;
	tsd *t;

	if (strcmp(m, "GET") && strcmp(m, "POST") && strcmp(m, "PUT"))
		return net_bad_method(r);
	if (tsuid_list(r, &id, &list))
		return 0;
	if (id < 1 || id > 65535) {
		free(list);
		return net_error(r, 400, "Invalid Tree ID", NULL);
	}
	if (get_tsd(r, 0, id, &t)) {
		free(list);
		return 0;
	}
	rc = what == 0 ? tsd_tree_test(t, id, list, tsd_tsmeta_get,
					    &out, &err) :
	     tsd_tree_failures(t, id, list, what == 1, &out, &err);
	free(list);
	if (rc) {
		buf_release(&out);
		return tree_error(r, rc, &err);
	}
	return reply(r, &out);
}

int net_api_tree(struct net_req *r)
{
	static const char *const ends[] = { "", "/branch", "/rule", "/rules",
					    "/test", "/collisions",
					    "/notmatched" };
	const char *m, *end = r->path + 9;	/* past "/api/tree" */
	size_t n = strlen(end), e;

	if (strcmp(r->method, "GET") && strcmp(r->method, "POST") &&
	    strcmp(r->method, "PUT") && strcmp(r->method, "DELETE"))
		return net_bad_method(r);
	while (n && end[n - 1] == '/')
		n--;
	for (e = 0; e < sizeof ends / sizeof ends[0]; e++)
		if (strlen(ends[e]) == n && !strncasecmp(end, ends[e], n))
			break;
	if (e == sizeof ends / sizeof ends[0])
		return net_error(r, 404, "This endpoint is not supported",
				 NULL);
	if (!(m = net_method(r)))
		return 0;
	switch (e) {
	case 0:
		return api_tree(r, m);
	case 1:
		return api_branch(r, m);
	case 2:
		return api_rule(r, m);
	case 3:
		return api_rules(r, m);
	case 4:
		return api_list(r, m, 0);
	default:
		return api_list(r, m, e == 5 ? 1 : 2);
	}
}
