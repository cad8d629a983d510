/*
 * jexl.c: the JEXL arithmetic of /api/query/exp (tsd/jexl.h): a
 * recursive-descent parser into a tree of nodes in one array, and its
 * evaluation over doubles.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tsd/jexl.h"
#include "util/err.h"

enum op {
	J_NUM, J_VAR, J_NEG, J_NOT, J_ADD, J_SUB, J_MUL, J_DIV, J_MOD,
	J_LT, J_LE, J_GT, J_GE, J_EQ, J_NE, J_AND, J_OR, J_IF
};

struct node {
	enum op op;
	double num;
	size_t var;
	int a, b, c;		/* children (indexes), -1 none */
};

struct tsd_jexl {
	struct node *n;
	size_t nn, cap;
	int root;
	char **vars;
	size_t nvars;
};

struct parser {
	const char *s;
	size_t len, pos;
	struct tsd_jexl *j;
	char *why;
	size_t whylen;
	int depth;
	int rc;
};

#define MAX_DEPTH 64

static int add_node(struct parser *p, enum op op, int a, int b, int c)
{
	struct tsd_jexl *j = p->j;

	if (p->rc)
		return -1;
	if (j->nn == j->cap) {
		size_t nc = j->cap ? 2 * j->cap : 16;
		struct node *nn = realloc(j->n, nc * sizeof *nn);
		if (!nn) {
			p->rc = CF_ENOMEM;
			return -1;
		}
		j->n = nn;
		j->cap = nc;
	}
	j->n[j->nn] = (struct node){ op, 0, 0, a, b, c };
	return (int)j->nn++;
}

static void blanks(struct parser *p)
{
	while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]) &&
	       p->s[p->pos])
		p->pos++;
}

static int name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       c == '$';
}

static int name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

/* Takes the operator word or symbol w when it is next (a word must not
 * run on into a name). */
static int accept(struct parser *p, const char *w)
{
	size_t n = strlen(w);

	blanks(p);
	if (p->pos + n > p->len || memcmp(p->s + p->pos, w, n))
		return 0;
	if (name_start(w[0]) && p->pos + n < p->len &&
	    name_char(p->s[p->pos + n]))
		return 0;
	/* "<" is not the start of "<=", "!" not of "!=", "=" alone is
	 * not an operator */
	if ((!strcmp(w, "<") || !strcmp(w, ">") || !strcmp(w, "!")) &&
	    p->pos + 1 < p->len && p->s[p->pos + 1] == '=')
		return 0;
	p->pos += n;
	return 1;
}

static int fail(struct parser *p)
{
	if (!p->rc)
		p->rc = cf_einval(p->why, p->whylen, "Failed to parse the "
				  "expression at position %zu: %.*s",
				  p->pos + 1, (int)(p->len > 80 ? 80 : p->len),
				  p->s);
	return -1;
}

static int expr(struct parser *p);

static int var_index(struct parser *p, const char *s, size_t n)
{
	struct tsd_jexl *j = p->j;
	char **nv;

	for (size_t i = 0; i < j->nvars; i++)
		if (strlen(j->vars[i]) == n && !memcmp(j->vars[i], s, n))
			return (int)i;
	if (!(nv = realloc(j->vars, (j->nvars + 1) * sizeof *nv)) ||
	    !(nv[j->nvars] = strndup(s, n))) {
		if (nv)
			j->vars = nv;
		p->rc = CF_ENOMEM;
		return -1;
	}
	j->vars = nv;
	return (int)j->nvars++;
}

static int unary(struct parser *p)
{
	int x;

	if (p->rc)
		return -1;
	if (++p->depth > MAX_DEPTH) {
		p->rc = cf_einval(p->why, p->whylen, "expression nested over "
				  "%d deep", MAX_DEPTH);
		return -1;
	}
	blanks(p);
	if (accept(p, "-")) {
		x = unary(p);
		x = x < 0 ? -1 : add_node(p, J_NEG, x, -1, -1);
	} else if (accept(p, "!") || accept(p, "not")) {
		x = unary(p);
		x = x < 0 ? -1 : add_node(p, J_NOT, x, -1, -1);
	} else if (accept(p, "(")) {
		x = expr(p);
		if (x >= 0 && !accept(p, ")"))
			x = fail(p);
	} else if (accept(p, "true") || accept(p, "false")) {
		x = add_node(p, J_NUM, -1, -1, -1);
		if (x >= 0)
			p->j->n[x].num = p->s[p->pos - 1] == 'e' &&
					 p->s[p->pos - 2] == 'u';
	} else if (p->pos < p->len &&
		   ((p->s[p->pos] >= '0' && p->s[p->pos] <= '9') ||
		    p->s[p->pos] == '.')) {
		char buf[64], *end;
		size_t b = p->pos;
		while (p->pos < p->len &&
		       ((p->s[p->pos] >= '0' && p->s[p->pos] <= '9') ||
			p->s[p->pos] == '.'))
			p->pos++;
		if (p->pos < p->len && (p->s[p->pos] == 'e' ||
					p->s[p->pos] == 'E')) {
			p->pos++;
			if (p->pos < p->len && (p->s[p->pos] == '-' ||
						p->s[p->pos] == '+'))
				p->pos++;
			while (p->pos < p->len && p->s[p->pos] >= '0' &&
			       p->s[p->pos] <= '9')
				p->pos++;
		}
		/* JEXL's literal suffixes: l, d, f */
		if (p->pos < p->len && strchr("lLdDfF", p->s[p->pos]) &&
		    p->s[p->pos])
			p->pos++;
		if (p->pos - b >= sizeof buf)
			return fail(p);
		memcpy(buf, p->s + b, p->pos - b);
		buf[p->pos - b] = '\0';
		if (strchr("lLdDfF", buf[p->pos - b - 1]))
			buf[p->pos - b - 1] = '\0';
		double d = strtod(buf, &end);
		if (*end || end == buf)
			return fail(p);
		x = add_node(p, J_NUM, -1, -1, -1);
		if (x >= 0)
			p->j->n[x].num = d;
	} else if (p->pos < p->len && name_start(p->s[p->pos])) {
		size_t b = p->pos;
		int v;
		while (p->pos < p->len && name_char(p->s[p->pos]))
			p->pos++;
		v = var_index(p, p->s + b, p->pos - b);
		x = v < 0 ? -1 : add_node(p, J_VAR, -1, -1, -1);
		if (x >= 0)
			p->j->n[x].var = (size_t)v;
	} else {
		x = fail(p);
	}
	p->depth--;
	return x;
}

/* One level of left-associative binary operators: ops[i] gives kind[i]. */
static int binary(struct parser *p, int (*next)(struct parser *),
		  const char *const *ops, const enum op *kind, size_t nops)
{
	int x = next(p);

	while (x >= 0) {
		size_t i;
		for (i = 0; i < nops; i++)
			if (accept(p, ops[i]))
				break;
		if (i == nops)
			break;
		int y = next(p);
		x = y < 0 ? -1 : add_node(p, kind[i], x, y, -1);
	}
	return x;
}

static int mul(struct parser *p)
{
	static const char *const ops[] = { "*", "/", "div", "%", "mod" };
	static const enum op k[] = { J_MUL, J_DIV, J_DIV, J_MOD, J_MOD };
	return binary(p, unary, ops, k, 5);
}

static int add(struct parser *p)
{
	static const char *const ops[] = { "+", "-" };
	static const enum op k[] = { J_ADD, J_SUB };
	return binary(p, mul, ops, k, 2);
}

static int rel(struct parser *p)
{
	static const char *const ops[] = { "<=", ">=", "<", ">", "le", "ge",
					   "lt", "gt" };
	static const enum op k[] = { J_LE, J_GE, J_LT, J_GT, J_LE, J_GE,
				     J_LT, J_GT };
	return binary(p, add, ops, k, 8);
}

static int eq(struct parser *p)
{
	static const char *const ops[] = { "==", "!=", "eq", "ne" };
	static const enum op k[] = { J_EQ, J_NE, J_EQ, J_NE };
	return binary(p, rel, ops, k, 4);
}

static int and(struct parser *p)
{
	static const char *const ops[] = { "&&", "and" };
	static const enum op k[] = { J_AND, J_AND };
	return binary(p, eq, ops, k, 2);
}

static int or(struct parser *p)
{
	static const char *const ops[] = { "||", "or" };
	static const enum op k[] = { J_OR, J_OR };
	return binary(p, and, ops, k, 2);
}

static int expr(struct parser *p)
{
	int c = or(p), a, b;

	if (c < 0 || !accept(p, "?"))
		return c;
	if (++p->depth > MAX_DEPTH) {
		p->rc = cf_einval(p->why, p->whylen, "expression nested over "
				  "%d deep", MAX_DEPTH);
		return -1;
	}
	a = expr(p);
	if (a >= 0 && !accept(p, ":"))
		a = fail(p);
	b = a < 0 ? -1 : expr(p);
	p->depth--;
	return b < 0 ? -1 : add_node(p, J_IF, a, b, c);
}

int tsd_jexl_parse(const char *s, size_t n, struct tsd_jexl **out,
		   char *why, size_t whylen)
{
	struct tsd_jexl *j = calloc(1, sizeof *j);
	struct parser p = { s, n, 0, j, why, whylen, 0, CF_OK };

	*out = NULL;
	if (why && whylen)
		why[0] = '\0';
	if (!j)
		return CF_ENOMEM;
	j->root = expr(&p);
	blanks(&p);
	/* JEXL reads a script: a trailing ';' ends the statement */
	if (!p.rc && p.pos < n && s[p.pos] == ';')
		p.pos++, blanks(&p);
	if (!p.rc && (j->root < 0 || p.pos < n))
		fail(&p);
	if (p.rc) {
		tsd_jexl_free(j);
		return p.rc;
	}
	*out = j;
	return CF_OK;
}

void tsd_jexl_free(struct tsd_jexl *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->nvars; i++)
		free(j->vars[i]);
	free(j->vars);
	free(j->n);
	free(j);
}

size_t tsd_jexl_nvars(const struct tsd_jexl *j)
{
	return j->nvars;
}

const char *tsd_jexl_var(const struct tsd_jexl *j, size_t i)
{
	return i < j->nvars ? j->vars[i] : NULL;
}

static double ev(const struct tsd_jexl *j, int i, const double *vals)
{
	const struct node *n = &j->n[i];
	double a, b;

	switch (n->op) {
	case J_NUM:
		return n->num;
	case J_VAR:
		return vals[n->var];
	case J_NEG:
		return -ev(j, n->a, vals);
	case J_NOT:
		return ev(j, n->a, vals) == 0;
	case J_AND:	/* short-circuit, as JEXL */
		return ev(j, n->a, vals) != 0 && ev(j, n->b, vals) != 0;
	case J_OR:
		return ev(j, n->a, vals) != 0 || ev(j, n->b, vals) != 0;
	case J_IF:
		return ev(j, n->c, vals) != 0 ? ev(j, n->a, vals) :
						ev(j, n->b, vals);
	default:
		break;
	}
	a = ev(j, n->a, vals);
	b = ev(j, n->b, vals);
	switch (n->op) {
	case J_ADD: return a + b;
	case J_SUB: return a - b;
	case J_MUL: return a * b;
	case J_DIV: return b == 0 ? 0 : a / b;
	case J_MOD: return b == 0 ? 0 : fmod(a, b);
	case J_LT: return a < b;
	case J_LE: return a <= b;
	case J_GT: return a > b;
	case J_GE: return a >= b;
	case J_EQ: return a == b;
	case J_NE: return a != b;
	default: return NAN;
	}
}

double tsd_jexl_eval(const struct tsd_jexl *j, const double *vals)
{
	return ev(j, j->root, vals);
}
