/*
 * qexp.c: OpenTSDB 2.3's /api/query/exp (QueryRpc.handleExpressionQuery,
 * QueryExecutor): a JSON query of metrics, filters, expressions over
 * them (JEXL arithmetic, tsd/jexl.h) and outputs, answered as
 * {"outputs":[...],"query":{...}}.
 *
 * The body is read and checked as the pojos of net.opentsdb.query.pojo
 * validate themselves; the metrics become one m= sub query each of a
 * query string that tsd/exec.c runs (tsd_query_sets); each expression
 * joins the series of its variables by their tags (IntersectionIterator
 * or UnionIterator), walks them in time order as TimeSyncedIterator
 * does (a series without a point at a time takes its variable's fill
 * value) and evaluates its arithmetic at every time; an expression that
 * names another is evaluated after it (QueryExecutor's DAG).  The
 * outputs serialize as QueryExecutor's SerializeExpressionIterator and
 * SerializeSubIterator do.  docs/api.md has the format and where cellfs
 * differs.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tsd/expr.h"
#include "tsd/internal.h"
#include "tsd/jexl.h"
#include "tsd/json.h"
#include "tsd/number.h"
#include "tsd/query.h"
#include "util/env.h"
#include "util/err.h"

/* A series of a variable: a group of a metric query, or a row of an
 * expression's result. */
struct vseries {
	const struct tsd_xtag *tags;	/* borrowed: the query's groups */
	size_t ntags;
	struct tsd_xtag *agg;		/* owned when the set is */
	size_t nagg;
	uint32_t *muids;		/* owned */
	size_t nmuids;
	struct tsd_dp *dp;		/* owned when the set is */
	size_t n;
};

struct vset {
	struct vseries *s;
	size_t n;
	int owned;			/* agg and dp are the set's */
};

struct xfill {
	int policy;			/* -1: none given */
	double value;
};

struct xmetric {
	const char *id, *metric, *filter, *agg;
	struct xfill fill;
	const json_t *ftags;		/* its filter's tags, or NULL */
	struct vset set;
};

struct xexpr {
	const char *id, *text;
	struct tsd_jexl *j;
	int isect, qts, ats;
	struct xfill fill;
	int state;			/* 0, 1 being evaluated, 2 done */
	struct vset res;
};

struct qx {
	tsd *t;
	json_t *root;
	const char *start, *end, *tz, *agg, *ds_interval, *ds_agg;
	char startbuf[32], endbuf[32];
	int rate;
	const json_t *filters;
	struct xmetric *m;
	size_t nm;
	struct xexpr *e;
	size_t ne;
	const json_t *outputs;
	struct tsd_xset *sets;		/* the metric queries' results */
	struct tsd_query q;
	int have_q;
	int64_t qs, qe;			/* the range, ms */
	uint64_t budget, made;
	int depth;			/* expressions being evaluated */
	struct tsd_error *err;
};

enum { FILL_NONE, FILL_ZERO, FILL_NAN, FILL_NULL, FILL_SCALAR };

/* The bounds of one query (docs/api.md): metrics, expressions and
 * outputs each, and the depth of expressions naming expressions (the
 * evaluation recurses). */
#define QX_MAX_ITEMS 1024
#define QX_MAX_DEPTH 64

static int bad(struct qx *x, const char *fmt, const char *a, const char *b)
{
	if (x->err) {
		x->err->line = 0;
		snprintf(x->err->reason, sizeof x->err->reason, fmt, a ? a : "",
			 b ? b : "");
	}
	return CF_EINVAL;
}

/* --- the pojos -------------------------------------------------------- */

/* A string field (a number is taken as its text, as Jackson coerces
 * one into a String); NULL when absent or null. */
static const char *str_of(const json_t *o, const char *k, char *buf,
			  size_t n, int *bad_type)
{
	const json_t *v = json_object_get(o, k);

	if (!v || json_is_null(v))
		return NULL;
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v) && buf) {
		snprintf(buf, n, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	*bad_type = 1;
	return NULL;
}

static int bool_of(const json_t *o, const char *k, int dflt)
{
	const json_t *v = json_object_get(o, k);

	if (json_is_boolean(v))
		return json_is_true(v);
	if (json_is_string(v))
		return !strcasecmp(json_string_value(v), "true");
	return dflt;
}

/* Query.validateId */
static int check_id(struct qx *x, const char *what, const char *id)
{
	char c[2] = "";

	if (!id || !*id)
		return bad(x, "Invalid %s: The ID cannot be null or empty",
			   what, NULL);
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9'))) {
			c[0] = *p;
			if (x->err) {
				x->err->line = 0;
				snprintf(x->err->reason, sizeof x->err->reason,
					 "Invalid %s: Invalid id (\"%s\"): "
					 "illegal character: %s", what, id, c);
			}
			return CF_EINVAL;
		}
	if (!id[1] && id[0] >= '0' && id[0] <= '9')
		return bad(x, "Invalid %s: The ID cannot be an integer", what,
			   NULL);
	return CF_OK;
}

/* NumericFillPolicy from {"policy":P,"value":V}, validated. */
static int fill_of(struct qx *x, const char *what, const json_t *o,
		   struct xfill *f)
{
	static const char *const names[] = { "none", "zero", "nan", "null",
					      "scalar" };
	const json_t *p, *v;
	double value = 0;

	f->policy = -1;
	f->value = 0;
	if (!o || json_is_null(o))
		return CF_OK;
	if (!json_is_object(o))
		return bad(x, "Invalid %s: the fill policy is not an object",
			   what, NULL);
	p = json_object_get(o, "policy");
	v = json_object_get(o, "value");
	if (json_is_number(v))
		value = json_number_value(v);
	else if (json_is_string(v) && !strcasecmp(json_string_value(v),
						  "NaN"))
		value = NAN;
	if (!p || json_is_null(p)) {
		f->policy = value == 0 ? FILL_ZERO : value != value ? FILL_NAN :
			    FILL_SCALAR;
		f->value = value;
		return CF_OK;
	}
	for (int i = 0; i < 5; i++)
		if (json_is_string(p) &&
		    !strcasecmp(json_string_value(p), names[i]))
			f->policy = i;
	if (f->policy < 0)
		return bad(x, "Invalid %s: Unrecognized fill policy: %s", what,
			   json_is_string(p) ? json_string_value(p) : "?");
	switch (f->policy) {
	case FILL_NONE: case FILL_NAN:
		if (value != 0 && value == value)
			return bad(x, "Invalid %s: The value for NONE and NAN "
				   "must be NaN", what, NULL);
		f->value = NAN;
		break;
	case FILL_ZERO:
		if (value != 0)
			return bad(x, "Invalid %s: The value for ZERO must be 0",
				   what, NULL);
		f->value = 0;
		break;
	case FILL_NULL:
		if (value != 0 && value == value)
			return bad(x, "Invalid %s: The value for NULL must be 0",
				   what, NULL);
		f->value = NAN;
		break;
	default:
		f->value = value;
	}
	return CF_OK;
}

static int agg_ok(const char *a)
{
	enum tsd_agg g;

	return a && tsd_agg_lookup(a, strlen(a), &g) == CF_OK;
}

static int parse_time(struct qx *x, const json_t *tm)
{
	const json_t *ds;
	int bt = 0;

	if (!tm || json_is_null(tm))
		return bad(x, "missing time", NULL, NULL);
	if (!json_is_object(tm))
		return bad(x, "Invalid time: not an object", NULL, NULL);
	x->start = str_of(tm, "start", x->startbuf, sizeof x->startbuf, &bt);
	x->end = str_of(tm, "end", x->endbuf, sizeof x->endbuf, &bt);
	x->tz = str_of(tm, "timezone", NULL, 0, &bt);
	x->agg = str_of(tm, "aggregator", NULL, 0, &bt);
	x->rate = bool_of(tm, "rate", 0);
	if (bt)
		return bad(x, "Invalid time: a field is not a string", NULL,
			   NULL);
	if (!x->start || !*x->start)
		return bad(x, "Invalid time: missing or empty start", NULL,
			   NULL);
	ds = json_object_get(tm, "downsampler");
	if (ds && !json_is_null(ds)) {
		struct xfill f;
		int rc;
		x->ds_interval = str_of(ds, "interval", NULL, 0, &bt);
		x->ds_agg = str_of(ds, "aggregator", NULL, 0, &bt);
		if (!x->ds_interval || !*x->ds_interval)
			return bad(x, "Invalid time: Missing or empty interval",
				   NULL, NULL);
		if (!x->ds_agg || !*x->ds_agg)
			return bad(x, "Invalid time: Missing or empty "
				   "aggregator", NULL, NULL);
		if (!agg_ok(x->ds_agg))
			return bad(x, "Invalid time: Invalid aggregator", NULL,
				   NULL);
		if ((rc = fill_of(x, "time", json_object_get(ds, "fillPolicy"),
				  &f)))
			return rc;
	}
	if (!x->agg || !*x->agg)
		return bad(x, "Invalid time: Missing or empty aggregator", NULL,
			   NULL);
	if (!agg_ok(x->agg))
		return bad(x, "Invalid time: Invalid aggregator", NULL, NULL);
	return CF_OK;
}

/* 1 if id names a metric or an expression before index lim of e. */
static int id_taken(struct qx *x, const char *id, size_t nm, size_t ne)
{
	for (size_t i = 0; i < nm; i++)
		if (!strcmp(x->m[i].id, id))
			return 1;
	for (size_t i = 0; i < ne; i++)
		if (!strcmp(x->e[i].id, id))
			return 1;
	return 0;
}

/* Query.validate, in its order. */
static int parse_query(struct qx *x)
{
	const json_t *ms, *es, *v;
	char what[64];
	size_t i;
	int rc, bt = 0;

	if (!json_is_object(x->root))
		return bad(x, "the query is not a JSON object", NULL, NULL);
	if ((rc = parse_time(x, json_object_get(x->root, "time"))))
		return rc;
	ms = json_object_get(x->root, "metrics");
	if (!json_is_array(ms) || !json_array_size(ms))
		return bad(x, "missing or empty metrics", NULL, NULL);
	x->filters = json_object_get(x->root, "filters");
	if (x->filters && !json_is_null(x->filters) &&
	    !json_is_array(x->filters))
		return bad(x, "filters is not an array", NULL, NULL);
	es = json_object_get(x->root, "expressions");
	if (es && !json_is_null(es) && !json_is_array(es))
		return bad(x, "expressions is not an array", NULL, NULL);
	x->outputs = json_object_get(x->root, "outputs");
	if (x->outputs && !json_is_null(x->outputs) &&
	    !json_is_array(x->outputs))
		return bad(x, "outputs is not an array", NULL, NULL);
	if (json_array_size(ms) > QX_MAX_ITEMS ||
	    (json_is_array(es) && json_array_size(es) > QX_MAX_ITEMS) ||
	    (json_is_array(x->outputs) &&
	     json_array_size(x->outputs) > QX_MAX_ITEMS) ||
	    (json_is_array(x->filters) &&
	     json_array_size(x->filters) > QX_MAX_ITEMS)) {
		snprintf(what, sizeof what, "%d", QX_MAX_ITEMS);
		return bad(x, "more than %s metrics, filters, expressions or "
			   "outputs", what, NULL);
	}
	if (!(x->m = calloc(json_array_size(ms), sizeof *x->m)))
		return CF_ENOMEM;
	json_array_foreach(ms, i, v) {
		struct xmetric *m = &x->m[i];
		if (!json_is_object(v))
			return bad(x, "Invalid metric: not an object", NULL,
				   NULL);
		m->id = str_of(v, "id", NULL, 0, &bt);
		m->metric = str_of(v, "metric", NULL, 0, &bt);
		m->filter = str_of(v, "filter", NULL, 0, &bt);
		m->agg = str_of(v, "aggregator", NULL, 0, &bt);
		if (bt)
			return bad(x, "Invalid metric: a field is not a string",
				   NULL, NULL);
		if (m->id && id_taken(x, m->id, i, 0))
			return bad(x, "duplicated metric id: %s", m->id, NULL);
		x->nm++;
		m->fill.policy = -1;
	}
	if (json_is_array(x->filters)) {
		json_array_foreach(x->filters, i, v) {
			const char *id = json_is_object(v) ?
				str_of(v, "id", NULL, 0, &bt) : NULL;
			for (size_t k = 0; id && k < i; k++) {
				const char *o = str_of(json_array_get(
					x->filters, k), "id", NULL, 0, &bt);
				if (o && !strcmp(o, id))
					return bad(x, "duplicated filter id: %s",
						   id, NULL);
			}
		}
	}
	if (json_is_array(es)) {
		if (!(x->e = calloc(json_array_size(es) + 1, sizeof *x->e)))
			return CF_ENOMEM;
		json_array_foreach(es, i, v) {
			struct xexpr *e = &x->e[i];
			if (!json_is_object(v))
				return bad(x, "Invalid expression: not an "
					   "object", NULL, NULL);
			e->id = str_of(v, "id", NULL, 0, &bt);
			e->text = str_of(v, "expr", NULL, 0, &bt);
			if (bt)
				return bad(x, "Invalid expression: a field is "
					   "not a string", NULL, NULL);
			if (e->id && id_taken(x, e->id, x->nm, i))
				return bad(x, "Duplicated variable or "
					   "expression id: %s", e->id, NULL);
			x->ne++;
		}
	}
	/* validateCollection(metrics) */
	for (i = 0; i < x->nm; i++) {
		struct xmetric *m = &x->m[i];
		const json_t *mv = json_array_get(ms, i);
		snprintf(what, sizeof what, "metric at index %zu", i);
		if (!m->metric || !*m->metric)
			return bad(x, "Invalid %s: missing or empty metric",
				   what, NULL);
		if (!m->id || !*m->id)
			return bad(x, "Invalid %s: missing or empty id", what,
				   NULL);
		if ((rc = check_id(x, what, m->id)))
			return rc;
		if (m->agg && *m->agg && !agg_ok(m->agg))
			return bad(x, "Invalid %s: Invalid aggregator", what,
				   NULL);
		if ((rc = fill_of(x, what, json_object_get(mv, "fillPolicy"),
				  &m->fill)))
			return rc;
	}
	/* validateCollection(filters) */
	if (json_is_array(x->filters))
		json_array_foreach(x->filters, i, v) {
			const json_t *tags;
			snprintf(what, sizeof what, "filter at index %zu", i);
			if (!json_is_object(v))
				return bad(x, "Invalid %s: not an object", what,
					   NULL);
			const char *id = str_of(v, "id", NULL, 0, &bt);
			if (!id || !*id)
				return bad(x, "Invalid %s: Missing or empty id",
					   what, NULL);
			if ((rc = check_id(x, what, id)))
				return rc;
			tags = json_object_get(v, "tags");
			if (tags && !json_is_null(tags) && !json_is_array(tags))
				return bad(x, "Invalid %s: tags is not an array",
					   what, NULL);
		}
	/* validateCollection(expressions) */
	for (i = 0; i < x->ne; i++) {
		struct xexpr *e = &x->e[i];
		const json_t *ev = json_array_get(es, i), *join;
		char why[200];
		snprintf(what, sizeof what, "expression at index %zu", i);
		if (!e->id || !*e->id)
			return bad(x, "Invalid %s: missing or empty id", what,
				   NULL);
		if ((rc = check_id(x, what, e->id)))
			return rc;
		if (!e->text || !*e->text)
			return bad(x, "Invalid %s: missing or empty expr", what,
				   NULL);
		rc = tsd_jexl_parse(e->text, strlen(e->text), &e->j, why,
				    sizeof why);
		if (rc == CF_EINVAL)
			return bad(x, "Invalid %s: %s", what, why);
		if (rc)
			return rc;
		/* QueryExecutor: no join is a union, on all tags, with the
		 * aggregated tags */
		e->isect = 0;
		e->qts = 0;
		e->ats = 1;
		join = json_object_get(ev, "join");
		if (join && !json_is_null(join)) {
			const char *op = str_of(join, "operator", NULL, 0, &bt);
			if (!op)
				return bad(x, "Invalid %s: Missing join operator",
					   what, NULL);
			if (!strcasecmp(op, "intersection"))
				e->isect = 1;
			else if (strcasecmp(op, "union"))
				return bad(x, "Invalid %s: Unrecognized set "
					   "operator: %s", what, op);
			e->qts = bool_of(join, "useQueryTags", 0);
			e->ats = bool_of(join, "includeAggTags", 1);
		}
		if ((rc = fill_of(x, what, json_object_get(ev, "fillPolicy"),
				  &e->fill)))
			return rc;
	}
	/* validateFilters */
	for (i = 0; i < x->nm; i++) {
		struct xmetric *m = &x->m[i];
		size_t k;
		if (!m->filter || !*m->filter)
			continue;
		if (!json_is_array(x->filters))
			return bad(x, "unrecognized filter id %s in metric %s",
				   m->filter, m->id);
		json_array_foreach(x->filters, k, v) {
			const char *id = str_of(v, "id", NULL, 0, &bt);
			if (id && !strcmp(id, m->filter)) {
				m->ftags = json_object_get(v, "tags");
				break;
			}
		}
		if (k == json_array_size(x->filters))
			return bad(x, "unrecognized filter id %s in metric %s",
				   m->filter, m->id);
	}
	/* every variable of an expression is a metric or an expression */
	for (i = 0; i < x->ne; i++)
		for (size_t k = 0; k < tsd_jexl_nvars(x->e[i].j); k++) {
			const char *var = tsd_jexl_var(x->e[i].j, k);
			if (!id_taken(x, var, x->nm, x->ne))
				return bad(x, "Expression [%s] was missing input "
					   "%s", x->e[i].text, var);
		}
	for (i = 0; i < x->ne; i++)
		if (!tsd_jexl_nvars(x->e[i].j))
			return bad(x, "The expression [%s] didn't appear to "
				   "have any variables", x->e[i].text, NULL);
	/* outputs: an id of the wrong form is refused (Output.validate);
	 * one naming nothing is left out of the answer */
	if (json_is_array(x->outputs))
		json_array_foreach(x->outputs, i, v) {
			snprintf(what, sizeof what, "output at index %zu", i);
			const char *id = json_is_object(v) ?
				str_of(v, "id", NULL, 0, &bt) : NULL;
			if (!id || !*id)
				return bad(x, "Invalid %s: missing or empty id",
					   what, NULL);
			if ((rc = check_id(x, what, id)))
				return rc;
		}
	return CF_OK;
}

/* --- the metric queries ----------------------------------------------- */

/* Appends s to b %-encoded (all but letters, digits and ._-). */
static int put_enc(struct buf *b, const char *s)
{
	int rc = CF_OK;

	for (; *s && rc == CF_OK; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')
			rc = buf_putc(b, (char)c);
		else
			rc = buf_printf(b, "%%%02X", c);
	}
	return rc;
}

/* One metric's m= value: AGG:[INTERVAL-AGG:][rate:]METRIC{group by
 * filters}{other filters}, as QueryExecutor builds its TSSubQuery. */
static int m_value(struct qx *x, const struct xmetric *m, struct buf *b)
{
	struct buf grp = BUF_INIT, oth = BUF_INIT;
	const json_t *f;
	size_t i;
	int rc;

	rc = buf_printf(b, "%s:", m->agg && *m->agg ? m->agg : x->agg);
	if (rc == CF_OK && x->ds_interval)
		rc = buf_printf(b, "%s-%s:", x->ds_interval, x->ds_agg);
	if (rc == CF_OK && x->rate)
		rc = buf_printf(b, "rate:");
	if (rc == CF_OK)
		rc = buf_printf(b, "%s", m->metric);
	if (json_is_array(m->ftags))
		json_array_foreach(m->ftags, i, f) {
			int bt = 0;
			const char *type = str_of(f, "type", NULL, 0, &bt);
			const char *tagk = str_of(f, "tagk", NULL, 0, &bt);
			const char *flt = str_of(f, "filter", NULL, 0, &bt);
			struct buf *o = bool_of(f, "groupBy", 0) ? &grp : &oth;
			if (!type || !*type || !tagk || !*tagk || bt) {
				rc = bad(x, "Invalid filter: %s", !type || !*type ?
					 "The filter type cannot be null or "
					 "empty" : "The tagk cannot be null or "
					 "empty", NULL);
				break;
			}
			if (rc == CF_OK && o->len)
				rc = buf_putc(o, ',');
			if (rc == CF_OK)
				rc = buf_printf(o, "%s=%s(%s)", tagk, type,
						flt ? flt : "");
		}
	if (rc == CF_OK && (grp.len || oth.len))
		rc = buf_printf(b, "{%.*s}", (int)grp.len,
				grp.len ? (const char *)grp.p : "");
	if (rc == CF_OK && oth.len)
		rc = buf_printf(b, "{%.*s}", (int)oth.len, (const char *)oth.p);
	buf_release(&grp);
	buf_release(&oth);
	return rc;
}

static int run_metrics(struct qx *x)
{
	struct buf qs = BUF_INIT, m = BUF_INIT;
	char why[200];
	int rc = buf_printf(&qs, "start=");

	if (rc == CF_OK)
		rc = put_enc(&qs, x->start);
	if (rc == CF_OK && x->end && *x->end &&
	    (rc = buf_printf(&qs, "&end=")) == CF_OK)
		rc = put_enc(&qs, x->end);
	if (rc == CF_OK && x->tz && *x->tz &&
	    (rc = buf_printf(&qs, "&timezone=")) == CF_OK)
		rc = put_enc(&qs, x->tz);
	for (size_t i = 0; i < x->nm && rc == CF_OK; i++) {
		buf_reset(&m);
		if ((rc = m_value(x, &x->m[i], &m)) ||
		    (rc = buf_putc(&m, '\0')) ||
		    (rc = buf_printf(&qs, "&m=")))
			break;
		rc = put_enc(&qs, (const char *)m.p);
	}
	buf_release(&m);
	if (rc == CF_OK) {
		rc = tsd_query_parse((const char *)qs.p, qs.len, env_now_ms(),
				     &x->q, why, sizeof why);
		if (rc == CF_EINVAL)
			bad(x, "%s", why, NULL);
		x->have_q = rc == CF_OK;
	}
	buf_release(&qs);
	if (rc)
		return rc;
	x->qs = x->q.start_ms;
	x->qe = x->q.end_ms;
	x->q.gexp = 1;	/* the groups keep their tags' UIDs and names */
	if (!(x->sets = calloc(x->nm, sizeof *x->sets)))
		return CF_ENOMEM;
	return tsd_query_sets(x->t, &x->q, x->sets, x->err);
}

/* The metric's series as a variable's set (points borrowed). */
static int metric_set(struct xmetric *m, const struct tsd_xset *in)
{
	m->set.owned = 0;
	m->set.n = in->n;
	if (!(m->set.s = calloc(in->n ? in->n : 1, sizeof *m->set.s)))
		return CF_ENOMEM;
	for (size_t i = 0; i < in->n; i++) {
		struct vseries *v = &m->set.s[i];
		const struct tsd_xseries *s = &in->s[i];
		v->tags = s->tags;
		v->ntags = s->ntags;
		v->agg = s->agg;
		v->nagg = s->nagg;
		v->dp = s->dp;
		v->n = s->n;
		if (!(v->muids = malloc(sizeof *v->muids)))
			return CF_ENOMEM;
		v->muids[0] = s->muid;
		v->nmuids = 1;
	}
	return CF_OK;
}

static void vset_release(struct vset *v)
{
	for (size_t i = 0; i < v->n && v->s; i++) {
		free(v->s[i].muids);
		if (v->owned) {
			for (size_t k = 0; k < v->s[i].nagg; k++)
				free(v->s[i].agg[k].kname);
			free(v->s[i].agg);
			free(v->s[i].dp);
		}
	}
	free(v->s);
	memset(v, 0, sizeof *v);
}

/* --- expressions ------------------------------------------------------ */

/* A variable of an expression: its series, fill value and query tag
 * keys (the filter's, for a metric). */
struct var {
	const struct vset *set;
	double fill;
	const json_t *qtags;
	size_t order;		/* Java's HashMap order of the names */
};

/* Java's String.hashCode, spread as HashMap spreads it. */
static uint32_t jhash(const char *s)
{
	uint32_t h = 0;

	for (; *s; s++)
		h = 31 * h + (unsigned char)*s;
	return h ^ (h >> 16);
}

static int in_qtags(const json_t *qtags, const char *k)
{
	const json_t *f;
	size_t i;

	json_array_foreach(qtags, i, f) {
		const json_t *t = json_object_get(f, "tagk");
		if (json_is_string(t) && !strcmp(json_string_value(t), k))
			return 1;
	}
	return 0;
}

/* UnionIterator.flattenTags: the series' key, its tag pairs' UIDs (only
 * the query's tag keys with qts) then its aggregated keys' (ats). */
static size_t flatten(const struct vseries *s, const struct var *v, int qts,
		      int ats, unsigned char *k)
{
	size_t n = 0;

#define PUT3(u) do { k[n++] = (unsigned char)((u) >> 16); \
		k[n++] = (unsigned char)((u) >> 8); \
		k[n++] = (unsigned char)(u); } while (0)
	for (size_t i = 0; i < s->ntags; i++) {
		if (qts && !(json_is_array(v->qtags) &&
			     in_qtags(v->qtags, s->tags[i].kname)))
			continue;
		PUT3(s->tags[i].k);
		PUT3(s->tags[i].v);
	}
	for (size_t i = 0; ats && i < s->nagg; i++)
		PUT3(s->agg[i].k);
#undef PUT3
	return n;
}

#define KEY_MAX (TSD_MAX_TAGS * 9 + 9)

struct jent {
	unsigned char key[KEY_MAX];
	size_t klen;
	size_t var, ser;
};

static int cmp_jent(const void *a, const void *b)
{
	const struct jent *x = a, *y = b;
	int c = tsd_xkey_cmp(x->key, x->klen, y->key, y->klen);

	if (c)
		return c;
	if (x->var != y->var)
		return x->var < y->var ? -1 : 1;
	return x->ser < y->ser ? -1 : x->ser > y->ser;
}

static int same_key(const struct jent *a, const struct jent *b)
{
	return a->klen == b->klen && !memcmp(a->key, b->key, a->klen);
}

static int add_uid(uint32_t **u, size_t *n, uint32_t v)
{
	size_t i = 0;
	uint32_t *nu;

	while (i < *n && (*u)[i] < v)
		i++;
	if (i < *n && (*u)[i] == v)
		return CF_OK;
	if (!(nu = realloc(*u, (*n + 1) * sizeof *nu)))
		return CF_ENOMEM;
	memmove(nu + i + 1, nu + i, (*n - i) * sizeof *nu);
	nu[i] = v;
	*u = nu;
	(*n)++;
	return CF_OK;
}

static double dval(const struct tsd_dp *p)
{
	return p->is_float ? p->d : (double)p->i;
}

/*
 * Joins the variables' series into rows (rows[r * nv + v]: the series of
 * variable v in row r, or NULL), as IntersectionIterator or
 * UnionIterator does, in the order of their keys.  *nrows.
 */
static int join(struct qx *x, const struct xexpr *e, const struct var *vs,
		size_t nv, const struct vseries ***rows, size_t *nrows)
{
	struct jent *je;
	size_t n = 0, total = 0, nr = 0;
	int rc = CF_OK;

	*rows = NULL;
	*nrows = 0;
	for (size_t v = 0; v < nv; v++)
		total += vs[v].set->n;
	if (!total)
		return CF_OK;	/* no series at all: no rows, no error */
	if (!(je = calloc(total, sizeof *je)))
		return CF_ENOMEM;
	for (size_t v = 0; v < nv; v++)
		for (size_t i = 0; i < vs[v].set->n; i++, n++) {
			je[n].klen = flatten(&vs[v].set->s[i], &vs[v], e->qts,
					     e->ats, je[n].key);
			je[n].var = v;
			je[n].ser = i;
		}
	qsort(je, n, sizeof *je, cmp_jent);
	for (size_t i = 0; i < n; i++)
		nr += i == 0 || !same_key(&je[i], &je[i - 1]);
	if (!(*rows = calloc(nr * nv, sizeof **rows))) {
		free(je);
		return CF_ENOMEM;
	}
	for (size_t i = 0; i < n;) {
		size_t j = i, have = 0;
		const struct vseries **row = *rows + *nrows * nv;
		while (j < n && same_key(&je[j], &je[i])) {
			/* the last series of a variable with the key wins */
			if (!row[je[j].var])
				have++;
			row[je[j].var] = &vs[je[j].var].set->s[je[j].ser];
			j++;
		}
		if (e->isect && have < nv)
			memset(row, 0, nv * sizeof *row);
		else
			(*nrows)++;
		i = j;
	}
	free(je);
	if (e->isect && *nrows == 0)
		rc = bad(x, "No intersections found: %s", e->id, NULL);
	return rc;
}

/* Java's HashMap order of the variables' names (the first one names a
 * joined series' tags): by bucket of a 16-slot table, then as given. */
static size_t first_var(const struct tsd_jexl *j)
{
	size_t nv = tsd_jexl_nvars(j), best = 0;
	uint32_t cap = 16;

	while (nv > cap * 3 / 4)
		cap *= 2;
	for (size_t v = 1; v < nv; v++)
		if ((jhash(tsd_jexl_var(j, v)) & (cap - 1)) <
		    (jhash(tsd_jexl_var(j, best)) & (cap - 1)))
			best = v;
	return best;
}

static int spend(struct qx *x, size_t n)
{
	x->made += n;
	if (x->budget && x->made > x->budget) {
		if (x->err) {
			x->err->line = 0;
			snprintf(x->err->reason, sizeof x->err->reason,
				 "expression of more than %llu points",
				 (unsigned long long)x->budget);
		}
		return CF_ETOOBIG;
	}
	return CF_OK;
}

static int eval_expr(struct qx *x, struct xexpr *e);

/* The variable var of e: a metric's series (its fill, 0 by default) or
 * an expression's results (its fill, NaN by default). */
static int get_var(struct qx *x, const struct xexpr *e, const char *var,
		   struct var *out)
{
	int rc;

	for (size_t i = 0; i < x->nm; i++)
		if (!strcmp(x->m[i].id, var)) {
			out->set = &x->m[i].set;
			out->fill = x->m[i].fill.policy < 0 ? 0 :
				    x->m[i].fill.value;
			out->qtags = x->m[i].ftags;
			return CF_OK;
		}
	for (size_t i = 0; i < x->ne; i++)
		if (!strcmp(x->e[i].id, var)) {
			if (&x->e[i] == e)
				return bad(x, "Self referencing expression "
					   "found: %s", e->id, NULL);
			if ((rc = eval_expr(x, &x->e[i])))
				return rc;
			out->set = &x->e[i].res;
			out->fill = x->e[i].fill.policy < 0 ? NAN :
				    x->e[i].fill.value;
			out->qtags = NULL;
			return CF_OK;
		}
	return bad(x, "Expression [%s] was missing input %s", e->text, var);
}

/* Walks the rows in time order (TimeSyncedIterator): at each time, the
 * least of the series' next points, every row's value. */
static int sync_rows(struct qx *x, const struct xexpr *e,
		     const struct var *vs, size_t nv,
		     const struct vseries **rows, size_t nr, struct vset *out)
{
	size_t *pos = calloc(nr * nv > 0 ? nr * nv : 1, sizeof *pos);
	double *vals = calloc(nv ? nv : 1, sizeof *vals);
	size_t cap = 0, nts = 0;
	int rc = CF_OK;

	if (!pos || !vals) {
		rc = CF_ENOMEM;
		goto out;
	}
	for (;;) {
		int64_t ts = INT64_MAX;
		for (size_t i = 0; i < nr * nv; i++)
			if (rows[i] && pos[i] < rows[i]->n &&
			    rows[i]->dp[pos[i]].ts < ts)
				ts = rows[i]->dp[pos[i]].ts;
		if (ts == INT64_MAX)
			break;
		if ((rc = spend(x, nr)))
			break;
		if (nts == cap) {
			size_t nc = cap ? 2 * cap : 64;
			for (size_t r = 0; r < nr; r++) {
				struct tsd_dp *nd = realloc(out->s[r].dp,
							    nc * sizeof *nd);
				if (!nd) {
					rc = CF_ENOMEM;
					goto out;
				}
				out->s[r].dp = nd;
			}
			cap = nc;
		}
		for (size_t r = 0; r < nr; r++) {
			for (size_t v = 0; v < nv; v++) {
				const struct vseries *s = rows[r * nv + v];
				size_t *p = &pos[r * nv + v];
				double val = vs[v].fill;
				if (!s) {
					val = 0;	/* the union's fill */
				} else if (*p < s->n && s->dp[*p].ts <= ts) {
					val = dval(&s->dp[*p]);
					(*p)++;
					if (val != val)
						val = vs[v].fill;
				}
				vals[v] = val;
			}
			out->s[r].dp[nts] = (struct tsd_dp){ ts, 1, 0,
				tsd_jexl_eval(e->j, vals) };
			out->s[r].n = nts + 1;
		}
		nts++;
	}
out:
	free(pos);
	free(vals);
	return rc;
}

static int eval_expr(struct qx *x, struct xexpr *e)
{
	size_t nv = tsd_jexl_nvars(e->j), nr = 0, first;
	const struct vseries **rows = NULL;
	struct var *vs;
	int rc = CF_OK;

	if (e->state == 2)
		return CF_OK;
	if (e->state == 1)
		return bad(x, "Circular reference found: %s", e->id, NULL);
	if (x->depth == QX_MAX_DEPTH) {
		char n[16];
		snprintf(n, sizeof n, "%d", QX_MAX_DEPTH);
		return bad(x, "expressions nested over %s deep at %s", n,
			   e->id);
	}
	x->depth++;
	e->state = 1;
	if (!(vs = calloc(nv, sizeof *vs))) {
		x->depth--;
		return CF_ENOMEM;
	}
	for (size_t v = 0; v < nv && rc == CF_OK; v++)
		rc = get_var(x, e, tsd_jexl_var(e->j, v), &vs[v]);
	if (rc == CF_OK)
		rc = join(x, e, vs, nv, &rows, &nr);
	e->res.owned = 1;
	if (rc == CF_OK && nr &&
	    !(e->res.s = calloc(nr, sizeof *e->res.s)))
		rc = CF_ENOMEM;
	if (rc == CF_OK)
		e->res.n = nr;
	/* each row: the first variable's tags, every series' metrics and
	 * aggregated keys (ExpressionIterator.compile) */
	first = first_var(e->j);
	for (size_t r = 0; r < nr && rc == CF_OK; r++) {
		struct vseries *d = &e->res.s[r];
		const struct vseries *f = rows[r * nv + first];
		if (f) {
			d->tags = f->tags;
			d->ntags = f->ntags;
		}
		for (size_t v = 0; v < nv && rc == CF_OK; v++) {
			const struct vseries *s = rows[r * nv + v];
			for (size_t k = 0; s && k < s->nmuids && !rc; k++)
				rc = add_uid(&d->muids, &d->nmuids,
					     s->muids[k]);
			for (size_t k = 0; s && k < s->nagg && !rc; k++)
				rc = tsd_xtags_add_key(&d->agg, &d->nagg,
						       &s->agg[k]);
		}
	}
	if (rc == CF_OK)
		rc = sync_rows(x, e, vs, nv, rows, nr, &e->res);
	free(rows);
	free(vs);
	e->state = 2;
	x->depth--;
	return rc;
}

/* --- the answer ------------------------------------------------------- */

static const char *metric_name(struct qx *x, uint32_t uid)
{
	for (size_t i = 0; i < x->nm; i++)
		for (size_t k = 0; x->sets && k < x->sets[i].n; k++)
			if (x->sets[i].s[k].muid == uid)
				return x->sets[i].s[k].metric;
	return "";
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_tagp(const void *a, const void *b)
{
	const struct tsd_xtag *const *x = a, *const *y = b;

	return strcmp((*x)->kname, (*y)->kname);
}

static int put_double(struct buf *b, double d)
{
	/* Jackson quotes NaN and the infinities */
	if (d != d)
		return buf_append(b, "\"NaN\"", 5);
	if (isinf(d))
		return buf_printf(b, "\"%sInfinity\"", d < 0 ? "-" : "");
	return tsd_buf_double(b, d);
}

/* "meta": the timestamp column, then each series' metrics (those of the
 * first series, sorted, as MetaSerializer writes them for every one),
 * tags (sorted by name) and aggregated keys. */
static int put_meta(struct qx *x, const struct vset *s, struct buf *b)
{
	const char *names[64];
	size_t nn = 0;
	int rc = buf_printf(b, ",\"meta\":[{\"index\":0,\"metrics\":"
			    "[\"timestamp\"]}");

	for (size_t i = 0; i < s->s[0].nmuids && nn < 64; i++)
		names[nn++] = metric_name(x, s->s[0].muids[i]);
	qsort(names, nn, sizeof names[0], cmp_str);
	for (size_t r = 0; r < s->n && rc == CF_OK; r++) {
		const struct vseries *v = &s->s[r];
		const struct tsd_xtag *by[TSD_MAX_TAGS];
		size_t nb = 0;
		rc = buf_printf(b, ",{\"index\":%zu,\"metrics\":[", r + 1);
		for (size_t i = 0; i < nn && rc == CF_OK; i++) {
			if (i)
				rc = buf_putc(b, ',');
			if (rc == CF_OK)
				rc = tsd_json_string(b, names[i],
						     strlen(names[i]));
		}
		if (rc == CF_OK)
			rc = buf_printf(b, "],\"commonTags\":{");
		for (size_t i = 0; i < v->ntags && nb < TSD_MAX_TAGS; i++)
			by[nb++] = &v->tags[i];
		qsort(by, nb, sizeof by[0], cmp_tagp);
		for (size_t i = 0; i < nb && rc == CF_OK; i++) {
			if (i)
				rc = buf_putc(b, ',');
			if (rc == CF_OK)
				rc = tsd_json_string(b, by[i]->kname,
						     strlen(by[i]->kname));
			if (rc == CF_OK)
				rc = buf_putc(b, ':');
			if (rc == CF_OK)
				rc = tsd_json_string(b, by[i]->vname,
						     strlen(by[i]->vname));
		}
		if (rc == CF_OK)
			rc = buf_printf(b, "},\"aggregatedTags\":[");
		for (size_t i = 0; i < v->nagg && rc == CF_OK; i++) {
			if (i)
				rc = buf_putc(b, ',');
			if (rc == CF_OK)
				rc = tsd_json_string(b, v->agg[i].kname,
						     strlen(v->agg[i].kname));
		}
		if (rc == CF_OK)
			rc = buf_printf(b, "]}");
	}
	return rc == CF_OK ? buf_putc(b, ']') : rc;
}

/*
 * One output: {"id":..,["alias":..,]"dps":[[TS,V,...],...],"dpsMeta":
 * {...}[,"meta":[...]]}.  An expression's rows share their times and
 * only those in the range are written (SerializeExpressionIterator); a
 * metric's series are walked in time order with 0 for a missing point
 * and every time written (SerializeSubIterator).
 */
static int put_output(struct qx *x, const char *id, const char *alias,
		      const struct vset *s, int is_expr, struct buf *b)
{
	int64_t first = is_expr ? INT64_MIN : INT64_MAX, last = 0;
	uint64_t count = 0;
	size_t *pos = NULL;
	int rc = buf_printf(b, "{\"id\":");

	if (rc == CF_OK)
		rc = tsd_json_string(b, id, strlen(id));
	if (rc == CF_OK && alias && (rc = buf_printf(b, ",\"alias\":")) == 0)
		rc = tsd_json_string(b, alias, strlen(alias));
	if (rc == CF_OK)
		rc = buf_printf(b, ",\"dps\":[");
	if (rc == CF_OK && s->n &&
	    !(pos = calloc(s->n, sizeof *pos)))
		rc = CF_ENOMEM;
	for (int sep = 0; rc == CF_OK;) {
		int64_t ts = INT64_MAX;
		for (size_t r = 0; r < s->n; r++)
			if (pos[r] < s->s[r].n && s->s[r].dp[pos[r]].ts < ts)
				ts = s->s[r].dp[pos[r]].ts;
		if (ts == INT64_MAX)
			break;
		if (!is_expr && first == INT64_MAX)
			first = ts;
		int show = !is_expr || (ts >= x->qs && ts <= x->qe);
		if (show) {
			/* as the Java writes them: an expression's first
			 * time is not its last */
			if (is_expr && first == INT64_MIN)
				first = ts;
			else
				last = ts;
			count++;
			rc = buf_printf(b, "%s[%lld", sep ? "," : "",
					(long long)ts);
			sep = 1;
		}
		for (size_t r = 0; r < s->n && rc == CF_OK; r++) {
			double v = 0;
			if (pos[r] < s->s[r].n && s->s[r].dp[pos[r]].ts <= ts)
				v = dval(&s->s[r].dp[pos[r]++]);
			if (show && (rc = buf_putc(b, ',')) == CF_OK)
				rc = put_double(b, v);
		}
		if (rc == CF_OK && show)
			rc = buf_putc(b, ']');
	}
	free(pos);
	if (rc == CF_OK)
		rc = buf_printf(b, "],\"dpsMeta\":{\"firstTimestamp\":%lld,"
				"\"lastTimestamp\":%lld,\"setCount\":%llu,"
				"\"series\":%zu}",
				(long long)(is_expr && first < 0 ? 0 : first),
				(long long)last, (unsigned long long)count,
				s->n);
	if (rc == CF_OK && s->n)
		rc = put_meta(x, s, b);
	return rc == CF_OK ? buf_putc(b, '}') : rc;
}

static int answer(struct qx *x, struct buf *out)
{
	size_t i, n = 0;
	const json_t *o;
	char *q;
	int rc = buf_printf(out, "{\"outputs\":[");

	/* no outputs: every expression, or without any every metric */
	if (!json_is_array(x->outputs) || !json_array_size(x->outputs)) {
		for (i = 0; i < x->ne && rc == CF_OK; i++, n++)
			rc = (i ? buf_putc(out, ',') : CF_OK) ? CF_ENOMEM :
			     put_output(x, x->e[i].id, NULL, &x->e[i].res, 1,
					out);
		for (i = 0; !x->ne && i < x->nm && rc == CF_OK; i++, n++)
			rc = (i ? buf_putc(out, ',') : CF_OK) ? CF_ENOMEM :
			     put_output(x, x->m[i].id, NULL, &x->m[i].set, 0,
					out);
	} else {
		json_array_foreach(x->outputs, i, o) {
			int bt = 0;
			const char *id = str_of(o, "id", NULL, 0, &bt);
			const char *alias = str_of(o, "alias", NULL, 0, &bt);
			const struct vset *s = NULL;
			int is_expr = 0;
			for (size_t k = 0; k < x->ne && !s; k++)
				if (!strcmp(x->e[k].id, id))
					s = &x->e[k].res, is_expr = 1;
			for (size_t k = 0; k < x->nm && !s; k++)
				if (!strcmp(x->m[k].id, id))
					s = &x->m[k].set;
			if (!s)
				continue;	/* names nothing: left out */
			if (n++ && (rc = buf_putc(out, ',')))
				break;
			if ((rc = put_output(x, id, alias, s, is_expr, out)))
				break;
		}
	}
	if (rc)
		return rc;
	/* "query": the query as it came */
	if (!(q = json_dumps(x->root, JSON_COMPACT | JSON_PRESERVE_ORDER)))
		return CF_ENOMEM;
	rc = buf_printf(out, "],\"query\":%s}", q);
	free(q);
	return rc;
}

int tsd_query_exp(tsd *t, const char *body, size_t len, struct buf *out,
		  struct tsd_error *err)
{
	struct qx x;
	json_error_t jerr;
	int rc;

	memset(&x, 0, sizeof x);
	x.t = t;
	x.err = err;
	x.budget = t->o.max_graph_points;
	if (err) {
		err->line = 0;
		err->reason[0] = '\0';
	}
	if (!(x.root = json_loadb(body, len, 0, &jerr))) {
		rc = bad(&x, "Unable to parse the given JSON: %s", jerr.text,
			 NULL);
		goto out;
	}
	if ((rc = parse_query(&x)) || (rc = run_metrics(&x)))
		goto out;
	for (size_t i = 0; i < x.nm && rc == CF_OK; i++)
		rc = metric_set(&x.m[i], &x.sets[i]);
	for (size_t i = 0; i < x.ne && rc == CF_OK; i++)
		rc = eval_expr(&x, &x.e[i]);
	if (rc == CF_OK)
		rc = answer(&x, out);
out:
	for (size_t i = 0; i < x.ne; i++) {
		tsd_jexl_free(x.e[i].j);
		vset_release(&x.e[i].res);
	}
	for (size_t i = 0; i < x.nm; i++)
		vset_release(&x.m[i].set);
	for (size_t i = 0; x.sets && i < x.nm; i++)
		tsd_xset_release(&x.sets[i]);
	free(x.sets);
	free(x.m);
	free(x.e);
	if (x.have_q)
		tsd_query_release(&x.q);
	json_decref(x.root);
	return rc;
}
