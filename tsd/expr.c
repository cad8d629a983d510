/*
 * expr.c: OpenTSDB's graphite-style expressions (tsd/expr.h).
 *
 * The parser is a recursive descent over SyntaxChecker's grammar.  Each
 * function follows its OpenTSDB class (src/query/expression/): the
 * per-series ones (scale, absolute, alias, movingAverage, timeShift,
 * firstDiff) map every series of every argument to one result; the
 * top-n ones (highestCurrent, highestMax) rank them; the series
 * arithmetic (sumSeries, diffSeries, multiplySeries, divideSeries) joins
 * its arguments' series by their tags, as UnionIterator does, and
 * combines their points position by position, as ExpressionIterator's
 * per-series iteration (EDPtoDPS) does.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsd/expr.h"
#include "tsd/number.h"
#include "util/err.h"

#define W(len) ((int)((len) > 80 ? 80 : (len)))

/* --- parsing ---------------------------------------------------------- */

static const struct {
	const char *name;
	enum tsd_xfn fn;
} fns[] = {
	{ "alias", TSD_X_ALIAS },
	{ "scale", TSD_X_SCALE },
	{ "absolute", TSD_X_ABSOLUTE },
	{ "movingAverage", TSD_X_MOVING_AVERAGE },
	{ "highestCurrent", TSD_X_HIGHEST_CURRENT },
	{ "highestMax", TSD_X_HIGHEST_MAX },
	{ "shift", TSD_X_TIME_SHIFT },
	{ "timeShift", TSD_X_TIME_SHIFT },
	{ "firstDiff", TSD_X_FIRST_DIFF },
	{ "divideSeries", TSD_X_DIVIDE },
	{ "divide", TSD_X_DIVIDE },
	{ "sumSeries", TSD_X_SUM },
	{ "sum", TSD_X_SUM },
	{ "diffSeries", TSD_X_DIFF },
	{ "difference", TSD_X_DIFF },
	{ "multiplySeries", TSD_X_MULTIPLY },
	{ "multiply", TSD_X_MULTIPLY },
};

struct parser {
	const char *s;
	size_t n, pos;
	tsd_xadd_fn *add;
	void *ctx;
	char *why;
	size_t whylen;
	int depth;
};

/* Nesting deeper than this is refused: the stack is the bound. */
#define MAX_DEPTH 32

static int word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') ||
	       (c && strchr("-_#/$@|.'][*", c) != NULL);
}

/*
 * The next token, past blanks: a word (returns 'w', its bytes at *at,
 * *len of them), one other character (returned), or -1 at the end.  The
 * cursor stays before it.
 */
static int peek(struct parser *p, size_t *at, size_t *len)
{
	size_t e;

	while (p->pos < p->n && p->s[p->pos] &&
	       strchr(" \t\n\r", p->s[p->pos]))
		p->pos++;
	*at = p->pos;
	*len = 0;
	if (p->pos >= p->n)
		return -1;
	for (e = p->pos; e < p->n && word_char(p->s[e]); e++)
		;
	*len = e - p->pos;
	return *len ? 'w' : (unsigned char)p->s[p->pos];
}

/* Takes the next token when it is c ('w': a word, into *at, *len). */
static int take(struct parser *p, int c, size_t *at, size_t *len)
{
	size_t a, l;

	if (peek(p, &a, &l) != c)
		return 0;
	p->pos += l ? l : 1;
	if (at) {
		*at = a;
		*len = l;
	}
	return 1;
}

/* The token after the next one (the next one a word), or -1. */
static int second(struct parser *p)
{
	size_t at, len, save = p->pos;
	int c;

	take(p, 'w', &at, &len);
	c = peek(p, &at, &len);
	p->pos = save;
	return c;
}

static int syntax(struct parser *p)
{
	return cf_einval(p->why, p->whylen, "Failed to parse %.*s",
			 W(p->n), p->s);
}

static int push_param(struct tsd_expr *e, const char *s, size_t n)
{
	char **np = realloc(e->params, (e->nparams + 1) * sizeof *np);

	if (!np)
		return CF_ENOMEM;
	e->params = np;
	if (!(np[e->nparams] = strndup(s, n)))
		return CF_ENOMEM;
	e->nparams++;
	return CF_OK;
}

static int push_arg(struct tsd_expr *e, struct tsd_expr *sub, size_t query)
{
	struct tsd_xarg *na = realloc(e->args, (e->nargs + 1) * sizeof *na);

	if (!na)
		return CF_ENOMEM;
	e->args = na;
	na[e->nargs++] = (struct tsd_xarg){ sub, query };
	return CF_OK;
}

/* Appends s[0..n) to the metric query's text t (*tl bytes of cap). */
static int put(struct parser *p, char *t, size_t *tl, size_t cap,
	       const char *s, size_t n)
{
	if (*tl + n >= cap)
		return cf_einval(p->why, p->whylen, "metric query too long "
				 "in %.*s", W(p->n), p->s);
	memcpy(t + *tl, s, n);
	*tl += n;
	return CF_OK;
}

/* METRIC (the cursor on its aggregator), handed to the caller's add. */
static int parse_metric(struct parser *p, struct tsd_expr *e)
{
	char t[1024];
	size_t at, len, tl = 0, query;
	int rc;

	if (!take(p, 'w', &at, &len) || !take(p, ':', NULL, NULL))
		return syntax(p);
	if ((rc = put(p, t, &tl, sizeof t, p->s + at, len)) ||
	    (rc = put(p, t, &tl, sizeof t, ":", 1)))
		return rc;
	/* up to two parts (downsampler, rate) before the metric's name */
	for (int opt = 0;; opt++) {
		if (!take(p, 'w', &at, &len))
			return syntax(p);
		if ((rc = put(p, t, &tl, sizeof t, p->s + at, len)))
			return rc;
		if (opt == 2 || !take(p, ':', NULL, NULL))
			break;
		if ((rc = put(p, t, &tl, sizeof t, ":", 1)))
			return rc;
	}
	if (take(p, '{', NULL, NULL)) {
		const char *sep = "{";
		do {
			size_t kat, klen;
			if (!take(p, 'w', &kat, &klen) ||
			    !take(p, '=', NULL, NULL) ||
			    !take(p, 'w', &at, &len))
				return syntax(p);
			if ((rc = put(p, t, &tl, sizeof t, sep, 1)) ||
			    (rc = put(p, t, &tl, sizeof t, p->s + kat,
				      klen)) ||
			    (rc = put(p, t, &tl, sizeof t, "=", 1)) ||
			    (rc = put(p, t, &tl, sizeof t, p->s + at, len)))
				return rc;
			sep = ",";
		} while (take(p, ',', NULL, NULL));
		if (!take(p, '}', NULL, NULL))
			return syntax(p);
		if ((rc = put(p, t, &tl, sizeof t, "}", 1)))
			return rc;
	}
	if ((rc = p->add(p->ctx, t, tl, &query)))
		return rc;
	return push_arg(e, NULL, query);
}

static int parse_expr(struct parser *p, struct tsd_expr **out);

/* PARAMETER: EXPR | METRIC | WORD, added to e. */
static int parse_param(struct parser *p, struct tsd_expr *e)
{
	struct tsd_expr *sub;
	size_t at, len;
	int rc, next;

	if (peek(p, &at, &len) != 'w')
		return syntax(p);
	next = second(p);
	if (next == '(') {
		if ((rc = parse_expr(p, &sub)))
			return rc;
		if ((rc = push_arg(e, sub, 0)))
			tsd_expr_free(sub);
		return rc;
	}
	if (next == ':')
		return parse_metric(p, e);
	take(p, 'w', &at, &len);
	return push_param(e, p->s + at, len);
}

static int parse_expr(struct parser *p, struct tsd_expr **out)
{
	struct tsd_expr *e;
	size_t at, len, i;
	int rc;

	*out = NULL;
	if (!take(p, 'w', &at, &len))
		return syntax(p);
	for (i = 0; i < sizeof fns / sizeof fns[0]; i++)
		if (strlen(fns[i].name) == len &&
		    !memcmp(fns[i].name, p->s + at, len))
			break;
	if (i == sizeof fns / sizeof fns[0])
		return cf_einval(p->why, p->whylen, "Function %.*s has not "
				 "been implemented", W(len), p->s + at);
	if (++p->depth > MAX_DEPTH)
		return cf_einval(p->why, p->whylen, "expression nested over "
				 "%d deep: %.*s", MAX_DEPTH, W(p->n), p->s);
	if (!(e = calloc(1, sizeof *e)))
		return CF_ENOMEM;
	e->fn = fns[i].fn;
	rc = take(p, '(', NULL, NULL) ? parse_param(p, e) : syntax(p);
	while (rc == CF_OK && take(p, ',', NULL, NULL))
		rc = parse_param(p, e);
	if (rc == CF_OK && !take(p, ')', NULL, NULL))
		rc = syntax(p);
	p->depth--;
	if (rc) {
		tsd_expr_free(e);
		return rc;
	}
	*out = e;
	return CF_OK;
}

int tsd_expr_parse(const char *s, size_t n, tsd_xadd_fn *add, void *ctx,
		   struct tsd_expr **out, char *why, size_t whylen)
{
	struct parser p = { s, n, 0, add, ctx, why, whylen, 0 };
	size_t at, len;
	int rc;

	if (why && whylen)
		why[0] = '\0';
	*out = NULL;
	if (n == 0)
		return cf_einval(why, whylen, "Expression may not be null or "
				 "empty");
	if ((rc = parse_expr(&p, out)))
		return rc;
	/* SyntaxChecker stops after the expression; text after it is
	 * refused here (docs/timeseries.md) */
	if (peek(&p, &at, &len) != -1) {
		tsd_expr_free(*out);
		*out = NULL;
		return syntax(&p);
	}
	return CF_OK;
}

void tsd_expr_free(struct tsd_expr *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nargs; i++)
		tsd_expr_free(e->args[i].sub);
	free(e->args);
	for (size_t i = 0; i < e->nparams; i++)
		free(e->params[i]);
	free(e->params);
	free(e);
}

/* --- series ----------------------------------------------------------- */

static void tags_free(struct tsd_xtag *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(t[i].kname);
		free(t[i].vname);
	}
	free(t);
}

void tsd_xseries_release(struct tsd_xseries *s)
{
	free(s->metric);
	tags_free(s->tags, s->ntags);
	tags_free(s->agg, s->nagg);
	free(s->dp);
	memset(s, 0, sizeof *s);
}

void tsd_xset_release(struct tsd_xset *s)
{
	for (size_t i = 0; i < s->n; i++)
		tsd_xseries_release(&s->s[i]);
	free(s->s);
	s->s = NULL;
	s->n = 0;
}

static char *dup0(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int tags_copy(struct tsd_xtag **d, const struct tsd_xtag *s, size_t n)
{
	*d = NULL;
	if (n == 0)
		return CF_OK;
	if (!(*d = calloc(n, sizeof **d)))
		return CF_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		(*d)[i].k = s[i].k;
		(*d)[i].v = s[i].v;
		if (!((*d)[i].kname = dup0(s[i].kname)) ||
		    (s[i].vname && !((*d)[i].vname = dup0(s[i].vname)))) {
			tags_free(*d, n);
			*d = NULL;
			return CF_ENOMEM;
		}
	}
	return CF_OK;
}

/* d gets s's name, metric UID and tags; no points. */
static int meta_copy(struct tsd_xseries *d, const struct tsd_xseries *s)
{
	memset(d, 0, sizeof *d);
	d->muid = s->muid;
	d->alias = s->alias;
	if (!(d->metric = dup0(s->metric)))
		return CF_ENOMEM;
	if (tags_copy(&d->tags, s->tags, s->ntags)) {
		tsd_xseries_release(d);
		return CF_ENOMEM;
	}
	d->ntags = s->ntags;
	if (tags_copy(&d->agg, s->agg, s->nagg)) {
		tsd_xseries_release(d);
		return CF_ENOMEM;
	}
	d->nagg = s->nagg;
	return CF_OK;
}

int tsd_xseries_copy(struct tsd_xseries *d, const struct tsd_xseries *s)
{
	int rc = meta_copy(d, s);

	if (rc == CF_OK && s->n) {
		if (!(d->dp = malloc(s->n * sizeof *d->dp))) {
			tsd_xseries_release(d);
			return CF_ENOMEM;
		}
		memcpy(d->dp, s->dp, s->n * sizeof *d->dp);
		d->n = s->n;
	}
	return rc;
}

/* s with every "@" k replaced by v (malloc'd), or NULL: no memory. */
static char *replace_all(char *s, const char *k, const char *v)
{
	size_t kl = strlen(k), vl = strlen(v), n = 0, len;
	char *out, *o;

	for (char *q = s; (q = strchr(q, '@')); q++)
		n += !strncmp(q + 1, k, kl);
	if (!n)
		return s;
	len = strlen(s) + n * vl + 1;
	if (!(out = malloc(len))) {
		free(s);
		return NULL;
	}
	o = out;
	for (char *q = s; *q;) {
		if (*q == '@' && !strncmp(q + 1, k, kl)) {
			memcpy(o, v, vl);
			o += vl;
			q += 1 + kl;
		} else {
			*o++ = *q++;
		}
	}
	*o = '\0';
	free(s);
	return out;
}

char *tsd_xseries_name(const struct tsd_xseries *s)
{
	char *name = strdup(s->metric ? s->metric : "");

	if (!name || !s->alias || !strchr(name, '@'))
		return name;
	/* PostAggregatedDataPoints: "@TAGK" becomes the series' value of
	 * TAGK, tag by tag (here in the order of the keys' UIDs) */
	for (size_t i = 0; i < s->ntags && name; i++)
		if (s->tags[i].vname)
			name = replace_all(name, s->tags[i].kname,
					   s->tags[i].vname);
	return name;
}

static double dval(const struct tsd_dp *p)
{
	return p->is_float ? p->d : (double)p->i;
}

/* --- evaluation ------------------------------------------------------- */

struct ev {
	const struct tsd_xset *q;
	size_t nq;
	int64_t start, end;
	char *why;
	size_t whylen;
	uint64_t budget;	/* points all functions may make */
	uint64_t made;
};

/* Counts n points made against the budget: CF_ETOOBIG past it. */
static int spend(struct ev *v, size_t n)
{
	v->made += n;
	if (v->budget && v->made > v->budget) {
		if (v->why && v->whylen)
			snprintf(v->why, v->whylen, "expression of more than "
				 "%llu points", (unsigned long long)v->budget);
		return CF_ETOOBIG;
	}
	return CF_OK;
}

/* The series arguments of a function, materialized. */
struct args {
	struct tsd_xset *in;	/* nargs of them */
	int *owned;		/* in[i] is a sub expression's result */
	size_t n;
	size_t total;		/* series in all */
};

static int eval(const struct tsd_expr *e, struct ev *v, struct tsd_xset *out);

static void args_release(struct args *a)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->owned[i])
			tsd_xset_release(&a->in[i]);
	free(a->in);
	free(a->owned);
}

static int args_get(const struct tsd_expr *e, struct ev *v, struct args *a)
{
	int rc = CF_OK;

	memset(a, 0, sizeof *a);
	if (!e->nargs)
		return CF_OK;
	a->in = calloc(e->nargs, sizeof *a->in);
	a->owned = calloc(e->nargs, sizeof *a->owned);
	if (!a->in || !a->owned) {
		free(a->in);
		free(a->owned);
		return CF_ENOMEM;
	}
	for (size_t i = 0; i < e->nargs && rc == CF_OK; i++, a->n++) {
		const struct tsd_xarg *g = &e->args[i];
		if (g->sub) {
			a->owned[i] = 1;
			rc = eval(g->sub, v, &a->in[i]);
		} else if (g->query < v->nq) {
			a->in[i] = v->q[g->query];
		} else {
			rc = cf_einval(v->why, v->whylen, "no results for "
				       "metric query %zu", g->query);
		}
		a->total += a->in[i].n;
	}
	if (rc)
		args_release(a);
	return rc;
}

/* out gets room for n series (zeroed). */
static int out_alloc(struct tsd_xset *out, size_t n)
{
	out->n = 0;
	out->s = calloc(n ? n : 1, sizeof *out->s);
	return out->s ? CF_OK : CF_ENOMEM;
}

/* Java's long multiplication and Math.abs: wrapping. */
static int64_t mul_wrap(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}

static int64_t abs_wrap(int64_t a)
{
	return a < 0 ? (int64_t)(0 - (uint64_t)a) : a;
}

/* "^[-0-9.]+$" */
static int number_chars(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr("-0123456789.", *s))
			return 0;
	return 1;
}

/* "^[0-9]+$" as a Java int into *n; 0 when it is not one (*big: digits
 * but too large). */
static int parse_int(const char *s, long *n, int *big)
{
	char *end;

	*big = 0;
	if (!*s || strspn(s, "0123456789") != strlen(s))
		return 0;
	*n = strtol(s, &end, 10);
	if (*n > INT_MAX) {
		*big = 1;
		return 0;
	}
	return 1;
}

enum map_kind { MAP_SCALE, MAP_ABS, MAP_ALIAS, MAP_SHIFT, MAP_DIFF };

/* Each series of each argument mapped point by point. */
static int map_series(struct ev *v, const struct args *a,
		      enum map_kind kind, double f, int64_t shift,
		      const char *alias, struct tsd_xset *out)
{
	int f_int = f == floor(f) && !isinf(f);
	int rc = out_alloc(out, a->total);

	for (size_t i = 0; i < (kind == MAP_SHIFT ? 1 : a->n) && !rc; i++) {
		for (size_t j = 0; j < a->in[i].n && !rc; j++) {
			const struct tsd_xseries *s = &a->in[i].s[j];
			struct tsd_xseries *d = &out->s[out->n];
			if ((rc = meta_copy(d, s)))
				break;
			out->n++;
			if ((rc = spend(v, s->n)))
				break;
			if (s->n && !(d->dp = malloc(s->n * sizeof *d->dp))) {
				rc = CF_ENOMEM;
				break;
			}
			d->n = s->n;
			for (size_t k = 0; k < s->n; k++) {
				struct tsd_dp p = s->dp[k];
				switch (kind) {
				case MAP_SCALE:
					if (!p.is_float && f_int) {
						p.i = mul_wrap(tsd_java_d2l(f), p.i);
					} else {
						p.d = f * dval(&p);
						p.is_float = 1;
					}
					break;
				case MAP_ABS: case MAP_ALIAS:
					if (p.is_float)
						p.d = fabs(p.d);
					else
						p.i = abs_wrap(p.i);
					break;
				case MAP_SHIFT:
					p.ts += shift;
					break;
				case MAP_DIFF:
					p.d = k ? dval(&s->dp[k]) -
						  dval(&s->dp[k - 1]) : 0;
					p.is_float = 1;
					break;
				}
				d->dp[k] = p;
			}
			if (kind == MAP_ALIAS) {
				/* an alias has no metric UID, no tags to
				 * print and no aggregated keys */
				free(d->metric);
				d->metric = strdup(alias);
				d->muid = 0;
				d->alias = 1;
				tags_free(d->agg, d->nagg);
				d->agg = NULL;
				d->nagg = 0;
				if (!d->metric)
					rc = CF_ENOMEM;
			}
		}
	}
	return rc;
}

/* MovingAverage.MovingAverageAggregator.runDouble over the points of s
 * in [start, end]: window w points, or (timed) w milliseconds. */
static int moving_average(const struct tsd_xseries *s, struct ev *v,
			  int64_t w, int timed, struct tsd_xseries *d)
{
	size_t floor_ = 0, m = 0, first = 0;
	int started = 0;

	int rc;

	while (first < s->n && s->dp[first].ts < v->start)
		first++;
	if ((rc = spend(v, s->n - first)))
		return rc;
	if (s->n && !(d->dp = malloc(s->n * sizeof *d->dp)))
		return CF_ENOMEM;
	floor_ = first;
	for (size_t k = first; k < s->n && s->dp[k].ts <= v->end; k++) {
		double sum = 0, out = 0;
		int64_t cum = 0, last = -1;
		long count = 0;
		int met = 0;
		size_t j = k + 1;
		if (timed && !started) {
			started = 1;
			d->dp[m++] = (struct tsd_dp){ s->dp[k].ts, 1, 0, 0 };
			continue;
		}
		/* newest first, down to the oldest point still held */
		while (j-- > floor_) {
			const struct tsd_dp *p = &s->dp[j];
			double x = dval(p);
			if (timed) {
				if (last < 0) {
					last = p->ts;
				} else {
					cum += last - p->ts;
					last = p->ts;
					if (cum >= w) {
						met = 1;
						break;
					}
				}
			}
			if (x == x) {
				sum += x;
				count++;
			}
			if (!timed && count >= w) {
				met = 1;
				break;
			}
		}
		if (met)
			floor_ = j;	/* the older ones are dropped */
		if (met && count)
			out = sum / (double)count;
		d->dp[m++] = (struct tsd_dp){ s->dp[k].ts, 1, 0, out };
	}
	d->n = m;
	return CF_OK;
}

/* MovingAverage.parseParam: 'N UNIT' (day d hr hour h min m sec s). */
static int window_ms(const char *param, struct ev *v, int64_t *ms)
{
	size_t len = strlen(param), nd = 0;
	static const struct {
		const char *u;
		int64_t ms;
	} units[] = {
		{ "day", 86400000 }, { "d", 86400000 }, { "hr", 3600000 },
		{ "hour", 3600000 }, { "h", 3600000 }, { "min", 60000 },
		{ "m", 60000 }, { "sec", 1000 }, { "s", 1000 },
	};

	while (1 + nd < len && param[1 + nd] >= '0' && param[1 + nd] <= '9')
		nd++;
	if (nd < 1)
		return cf_einval(v->why, v->whylen, "Invalid moving window "
				 "parameter: %s", param);
	if (nd > 9)
		return cf_einval(v->why, v->whylen, "Unable to parse moving "
				 "window parameter: %s", param);
	long t = strtol(param + 1, NULL, 10);
	const char *u = param + 1 + nd;
	size_t ul = len - 1 - nd - 1;	/* up to the closing quote */
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strlen(units[i].u) == ul && !strncmp(u, units[i].u, ul)) {
			*ms = t * units[i].ms;
			return CF_OK;
		}
	return cf_einval(v->why, v->whylen, "Unknown time unit=%.*s in "
			 "window=%s", (int)ul, u, param);
}

/* TimeShift.parseParam: 'N UNIT' (sec min hr day days week weeks). */
static int shift_ms(const char *param, struct ev *v, int64_t *ms)
{
	size_t len = strlen(param), nd = 0, ul;
	static const struct {
		const char *u;
		int64_t ms;
	} units[] = {
		{ "sec", 1000 }, { "min", 60000 }, { "hr", 3600000 },
		{ "day", 86400000 }, { "days", 86400000 },
		{ "week", 604800000 }, { "weeks", 604800000 },
	};

	while (1 + nd < len && param[1 + nd] >= '0' && param[1 + nd] <= '9')
		nd++;
	if (nd == 0)
		return cf_einval(v->why, v->whylen, "Invalid Parameter: %s",
				 param);
	if (nd > 9)
		return cf_einval(v->why, v->whylen, "Invalid timeshift='%s'",
				 param);
	long t = strtol(param + 1, NULL, 10);
	const char *u = param + 1 + nd;
	ul = len - 1 - nd;
	/* OpenTSDB keeps the closing quote in the unit ("min'"), which
	 * no unit matches: cellfs reads the unit inside the quotes */
	if (ul && u[ul - 1] == '\'')
		ul--;
	while (ul && (*u == ' ' || *u == '\t'))
		u++, ul--;
	while (ul && (u[ul - 1] == ' ' || u[ul - 1] == '\t'))
		ul--;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strlen(units[i].u) == ul && !strncmp(u, units[i].u, ul)) {
			*ms = t * units[i].ms;
			return CF_OK;
		}
	return cf_einval(v->why, v->whylen, "unknown time unit=%.*s",
			 (int)ul, u);
}

struct rank {
	double val;
	size_t pos;
};

/* TopNSortingEntry: descending by Double.compare (NaN first), stable. */
static int cmp_rank(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;
	int xn = x->val != x->val, yn = y->val != y->val;

	if (xn != yn)
		return xn ? -1 : 1;
	if (!xn && x->val != y->val)
		return x->val > y->val ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* highestCurrent (cur) or highestMax: the topn series ranked. */
static int top_n(const struct args *a, struct ev *v, long topn, int cur,
		 struct tsd_xset *out)
{
	struct rank *r = calloc(a->total ? a->total : 1, sizeof *r);
	const struct tsd_xseries **ss = calloc(a->total ? a->total : 1,
					       sizeof *ss);
	size_t n = 0, keep;
	int64_t last = INT64_MIN;
	int rc;

	if (!r || !ss) {
		free(r);
		free(ss);
		return CF_ENOMEM;
	}
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < a->in[i].n; j++) {
			const struct tsd_xseries *s = &a->in[i].s[j];
			/* HighestCurrent drops the series without points */
			if (cur && !s->n)
				continue;
			ss[n++] = s;
			for (size_t k = 0; k < s->n; k++)
				if (s->dp[k].ts >= v->start &&
				    s->dp[k].ts <= v->end &&
				    s->dp[k].ts > last)
					last = s->dp[k].ts;
		}
	for (size_t i = 0; i < n; i++) {
		const struct tsd_xseries *s = ss[i];
		/* highestCurrent: the value at the last time of all (0 for
		 * a series that ended before it); highestMax: the greatest
		 * value (NaN above all, as Math.max keeps it); a series
		 * without points in the range ranks last */
		double best = cur && last != INT64_MIN ? 0 : -INFINITY;
		for (size_t k = 0; k < s->n; k++) {
			const struct tsd_dp *p = &s->dp[k];
			double x = dval(p);
			if (p->ts < v->start || p->ts > v->end)
				continue;
			if (cur && p->ts == last)
				best = x;
			else if (!cur && (x != x || x > best || best != best))
				best = best != best ? best : x;
		}
		r[i] = (struct rank){ best, i };
	}
	qsort(r, n, sizeof *r, cmp_rank);
	keep = (size_t)topn < n ? (size_t)topn : n;
	rc = out_alloc(out, keep);
	for (size_t i = 0; i < keep && rc == CF_OK; i++)
		if ((rc = spend(v, ss[r[i].pos]->n)) == CF_OK &&
		    (rc = tsd_xseries_copy(&out->s[i], ss[r[i].pos])) == CF_OK)
			out->n++;
	free(r);
	free(ss);
	return rc;
}

/* A series' tags as UnionIterator.flattenTags' key: the UID pairs. */
static size_t join_key(const struct tsd_xseries *s, unsigned char *k)
{
	for (size_t i = 0; i < s->ntags; i++) {
		uint32_t a = s->tags[i].k, b = s->tags[i].v;
		unsigned char *p = k + 6 * i;
		p[0] = (unsigned char)(a >> 16);
		p[1] = (unsigned char)(a >> 8);
		p[2] = (unsigned char)a;
		p[3] = (unsigned char)(b >> 16);
		p[4] = (unsigned char)(b >> 8);
		p[5] = (unsigned char)b;
	}
	return 6 * s->ntags;
}

struct jent {
	unsigned char *key;
	size_t klen;
	size_t var;		/* the argument */
	const struct tsd_xseries *s;
	size_t order;		/* found order: the last of a key wins */
};

int tsd_xkey_cmp(const unsigned char *a, size_t an, const unsigned char *b,
		 size_t bn)
{
	int c = an && bn ? memcmp(a, b, an < bn ? an : bn) : 0;

	if (c)
		return c;
	return an < bn ? -1 : an > bn;
}

static int cmp_jent(const void *a, const void *b)
{
	const struct jent *x = a, *y = b;
	int c = tsd_xkey_cmp(x->key, x->klen, y->key, y->klen);

	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int same_key(const struct jent *x, const struct jent *y)
{
	return x->klen == y->klen &&
	       (!x->klen || !memcmp(x->key, y->key, x->klen));
}

int tsd_xtags_add_key(struct tsd_xtag **agg, size_t *n,
		      const struct tsd_xtag *t)
{
	size_t i = 0;
	struct tsd_xtag *na;

	while (i < *n && (*agg)[i].k < t->k)
		i++;
	if (i < *n && (*agg)[i].k == t->k)
		return CF_OK;
	if (!(na = realloc(*agg, (*n + 1) * sizeof *na)))
		return CF_ENOMEM;
	*agg = na;
	memmove(na + i + 1, na + i, (*n - i) * sizeof *na);
	na[i] = (struct tsd_xtag){ t->k, 0, strdup(t->kname), NULL };
	(*n)++;
	return na[i].kname ? CF_OK : CF_ENOMEM;
}

/* One joined series: the arguments' series s[0..nv) (NULL: none with
 * these tags) combined by op, as ExpressionIterator.next(i) does. */
static int join_one(struct ev *v, const struct tsd_xseries **s, size_t nv,
		    char op, struct tsd_xseries *d)
{
	const struct tsd_xseries *name = NULL;
	size_t len = 0;
	int rc = CF_OK;

	memset(d, 0, sizeof *d);
	for (size_t j = 0; j < nv; j++) {
		if (!s[j])
			continue;
		if (!name || s[j]->muid < name->muid)
			name = s[j];
		if (s[j]->n > len)
			len = s[j]->n;
	}
	/* EDPtoDPS: the name of the least metric UID among them, the tags
	 * of the first argument's series, every aggregated key */
	d->metric = tsd_xseries_name(name);
	d->muid = name->muid;
	if (!d->metric)
		return CF_ENOMEM;
	if (s[0] && (rc = tags_copy(&d->tags, s[0]->tags, s[0]->ntags)))
		return rc;
	d->ntags = s[0] ? s[0]->ntags : 0;
	for (size_t j = 0; j < nv && rc == CF_OK; j++)
		for (size_t x = 0; s[j] && x < s[j]->nagg && rc == CF_OK; x++)
			rc = tsd_xtags_add_key(&d->agg, &d->nagg,
					       &s[j]->agg[x]);
	if (rc || (rc = spend(v, len)))
		return rc;
	if (len && !(d->dp = malloc(len * sizeof *d->dp)))
		return CF_ENOMEM;
	for (size_t k = 0; k < len; k++) {
		int64_t ts = INT64_MAX;
		double acc = 0;
		for (size_t j = 0; j < nv; j++) {
			double x = 0;	/* the fill policy: zero */
			if (s[j] && k < s[j]->n) {
				x = dval(&s[j]->dp[k]);
				if (x != x)
					x = 0;
				if (s[j]->dp[k].ts < ts)
					ts = s[j]->dp[k].ts;
			}
			if (j == 0)
				acc = x;
			else if (op == '+')
				acc += x;
			else if (op == '-')
				acc -= x;
			else if (op == '*')
				acc *= x;
			else	/* JEXL, not strict: x / 0 is 0 */
				acc = x == 0 ? 0 : acc / x;
		}
		d->dp[k] = (struct tsd_dp){ ts, 1, 0, acc };
	}
	d->n = len;
	return CF_OK;
}

/* sumSeries and its kin: the arguments' series joined by their tags
 * (UnionIterator: every tag set of any argument, in the order of the
 * UID bytes), each combined by op. */
static int join_series(struct ev *v, const struct args *a, char op,
		       struct tsd_xset *out)
{
	struct jent *je = calloc(a->total ? a->total : 1, sizeof *je);
	const struct tsd_xseries **row = calloc(a->n, sizeof *row);
	size_t n = 0, nkeys = 0;
	int rc = CF_OK;

	if (!je || !row)
		goto nomem;
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < a->in[i].n; j++) {
			const struct tsd_xseries *s = &a->in[i].s[j];
			je[n].klen = 6 * s->ntags;
			if (je[n].klen && !(je[n].key = malloc(je[n].klen)))
				goto nomem;
			join_key(s, je[n].key);
			je[n].var = i;
			je[n].s = s;
			je[n].order = n;
			n++;
		}
	qsort(je, n, sizeof *je, cmp_jent);
	for (size_t i = 0; i < n; i++)
		nkeys += i == 0 || !same_key(&je[i], &je[i - 1]);
	if ((rc = out_alloc(out, nkeys)))
		goto out;
	for (size_t i = 0; i < n && rc == CF_OK;) {
		size_t j = i;
		memset(row, 0, a->n * sizeof *row);
		while (j < n && same_key(&je[j], &je[i])) {
			row[je[j].var] = je[j].s;
			j++;
		}
		if ((rc = join_one(v, row, a->n, op, &out->s[out->n])) == CF_OK)
			out->n++;
		else
			tsd_xseries_release(&out->s[out->n]);
		i = j;
	}
	goto out;
nomem:
	rc = CF_ENOMEM;
out:
	for (size_t i = 0; je && i < n; i++)
		free(je[i].key);
	free(je);
	free(row);
	return rc;
}

static int eval(const struct tsd_expr *e, struct ev *v, struct tsd_xset *out)
{
	const char *p0 = e->nparams ? e->params[0] : NULL;
	struct args a;
	long topn;
	int64_t ms = 0;
	double f = 0;
	int rc, big;
	char op;

	out->s = NULL;
	out->n = 0;
	if ((rc = args_get(e, v, &a)))
		return rc;
	/* every function: no series arguments, no series (before any
	 * check of its parameters) */
	if (a.n == 0) {
		rc = out_alloc(out, 0);
		goto out;
	}
	switch (e->fn) {
	case TSD_X_SCALE: {
		char *end;
		if (!p0) {
			rc = cf_einval(v->why, v->whylen, "Missing scaling "
				       "factor");
			break;
		}
		if (!number_chars(p0)) {
			rc = cf_einval(v->why, v->whylen, "Unparseable scale "
				       "factor value: %s", p0);
			break;
		}
		f = strtod(p0, &end);
		if (*end || end == p0) {
			rc = cf_einval(v->why, v->whylen, "Invalid parameter, "
				       "must be an integer or floating point");
			break;
		}
		rc = map_series(v, &a, MAP_SCALE, f, 0, NULL, out);
		break;
	}
	case TSD_X_ABSOLUTE:
		rc = map_series(v, &a, MAP_ABS, 0, 0, NULL, out);
		break;
	case TSD_X_FIRST_DIFF:
		rc = map_series(v, &a, MAP_DIFF, 0, 0, NULL, out);
		break;
	case TSD_X_ALIAS: {
		/* Alias joins its parameters with ',' (and, as OpenTSDB's
		 * does, takes the absolute value of every point) */
		size_t len = 1;
		char *t;
		if (!p0) {
			rc = cf_einval(v->why, v->whylen, "Missing the alias");
			break;
		}
		for (size_t i = 0; i < e->nparams; i++)
			len += strlen(e->params[i]) + 1;
		if (!(t = malloc(len))) {
			rc = CF_ENOMEM;
			break;
		}
		t[0] = '\0';
		for (size_t i = 0; i < e->nparams; i++) {
			if (i)
				strcat(t, ",");
			strcat(t, e->params[i]);
		}
		rc = map_series(v, &a, MAP_ALIAS, 0, 0, t, out);
		free(t);
		break;
	}
	case TSD_X_TIME_SHIFT:
		if (!p0) {
			rc = cf_einval(v->why, v->whylen, "Need amount of "
				       "timeshift to perform timeshift");
			break;
		}
		{
			size_t l = strlen(p0);
			if (l < 2 || p0[0] != '\'' || p0[l - 1] != '\'') {
				rc = cf_einval(v->why, v->whylen, "Invalid "
					       "timeshift parameter: eg "
					       "'10min'");
				break;
			}
		}
		if ((rc = shift_ms(p0, v, &ms)))
			break;
		if (ms <= 0) {
			rc = cf_einval(v->why, v->whylen, "timeshift <= 0");
			break;
		}
		rc = map_series(v, &a, MAP_SHIFT, 0, ms, NULL, out);
		break;
	case TSD_X_MOVING_AVERAGE: {
		int timed = 0;
		size_t l = p0 ? strlen(p0) : 0;
		if (!l) {
			rc = cf_einval(v->why, v->whylen, "Missing moving "
				       "average window size");
			break;
		}
		if (parse_int(p0, &topn, &big)) {
			ms = topn;
		} else if (big) {
			rc = cf_einval(v->why, v->whylen, "Invalid parameter, "
				       "must be an integer");
			break;
		} else if (l >= 2 && p0[0] == '\'' && p0[l - 1] == '\'') {
			if ((rc = window_ms(p0, v, &ms)))
				break;
			timed = 1;
		} else {
			rc = cf_einval(v->why, v->whylen, "Unparseable window "
				       "size: %s", p0);
			break;
		}
		if (ms <= 0) {
			rc = cf_einval(v->why, v->whylen, "Moving average "
				       "window must be an integer greater "
				       "than zero");
			break;
		}
		if ((rc = out_alloc(out, a.total)))
			break;
		for (size_t i = 0; i < a.n && rc == CF_OK; i++)
			for (size_t j = 0; j < a.in[i].n && rc == CF_OK; j++) {
				struct tsd_xseries *d = &out->s[out->n];
				if ((rc = meta_copy(d, &a.in[i].s[j])))
					break;
				out->n++;
				rc = moving_average(&a.in[i].s[j], v, ms,
						    timed, d);
			}
		break;
	}
	case TSD_X_HIGHEST_CURRENT: case TSD_X_HIGHEST_MAX:
		if (!p0) {
			/* sic: OpenTSDB's message */
			rc = cf_einval(v->why, v->whylen, "Need aggregation "
				       "window for moving average");
			break;
		}
		if (!*p0) {
			rc = cf_einval(v->why, v->whylen, "Missing top n value "
				       "(number of series to return)");
			break;
		}
		if (!parse_int(p0, &topn, &big)) {
			rc = big ? cf_einval(v->why, v->whylen, "Invalid "
					     "parameter, must be an integer") :
			     cf_einval(v->why, v->whylen, "Unparseable top n "
				       "value: %s", p0);
			break;
		}
		if (topn < 1) {
			rc = cf_einval(v->why, v->whylen, "Top n value must be "
				       "greater than zero: %ld", topn);
			break;
		}
		rc = top_n(&a, v, topn, e->fn == TSD_X_HIGHEST_CURRENT, out);
		break;
	case TSD_X_SUM: case TSD_X_DIFF: case TSD_X_MULTIPLY:
	case TSD_X_DIVIDE:
		if (a.n < 2 || a.n > 26) {
			rc = cf_einval(v->why, v->whylen, "Must have 2 to 26 "
				       "series, got %zu instead", a.n);
			break;
		}
		op = e->fn == TSD_X_SUM ? '+' : e->fn == TSD_X_DIFF ? '-' :
		     e->fn == TSD_X_MULTIPLY ? '*' : '/';
		rc = join_series(v, &a, op, out);
		break;
	}
out:
	args_release(&a);
	if (rc)
		tsd_xset_release(out);
	return rc;
}

int tsd_expr_eval(const struct tsd_expr *e, const struct tsd_xset *q,
		  size_t nq, int64_t start_ms, int64_t end_ms,
		  uint64_t max_points, struct tsd_xset *out, char *why,
		  size_t whylen)
{
	struct ev v = { q, nq, start_ms, end_ms, why, whylen, max_points, 0 };

	if (why && whylen)
		why[0] = '\0';
	return eval(e, &v, out);
}
