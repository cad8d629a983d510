/*
 * filter.c: HBase's filter language for the scan file (see filter.h).
 *
 * Grammar (ParseFilter's; keywords upper case, names case-sensitive):
 *
 *   expr   := and ('OR' and)*
 *   and    := unary ('AND' unary)*
 *   unary  := 'SKIP' unary | 'WHILE' unary | '(' expr ')' | NAME '(' args ')'
 *   arg    := 'quoted string' ('' is a quote) | number | true | false
 *             | < <= = != >= >
 *
 * so AND binds tighter than OR, and SKIP and WHILE tightest.  A filter
 * is a tree of nodes; applying it to a row gives each node's verdict on
 * every cell of the row at once (an array of 0 and 1), which is how
 * SKIP (a row passes whole or not at all) and WHILE (the scan ends at
 * the first row that fails) are decided.  Row filters give every cell
 * the row's verdict; AND and OR combine verdicts cell by cell.
 *
 * Each node keeps its scratch array between rows, so a scan allocates
 * only while its rows grow.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "fs/filter.h"
#include "util/buf.h"

enum kind {
	F_AND, F_OR, F_SKIP, F_WHILE,
	F_KEYONLY, F_FIRSTKEY, F_PREFIX, F_COLPREFIX, F_MULTICOLPREFIX,
	F_COLCOUNT, F_PAGE, F_COLPAGE, F_INCLSTOP, F_TIMESTAMPS, F_ROW,
	F_FAMILY, F_QUALIFIER, F_VALUE, F_COLRANGE, F_SCV, F_SCVEXCLUDE,
	F_COLVALUE, F_DEPCOL
};

enum op { OP_LT, OP_LE, OP_EQ, OP_NE, OP_GE, OP_GT };
enum cmpk { C_BINARY, C_PREFIX, C_SUBSTR, C_REGEX };

struct node {
	enum kind k;
	struct node **kids;
	size_t nkids;
	int must;		/* reached from the root through ANDs only */
	enum op op;
	enum cmpk ck;
	struct buf cv;		/* the comparator's value */
	pcre2_code *re;
	pcre2_match_data *md;
	struct buf a, b;	/* strings: prefix, row, family, min */
	struct buf *list;	/* MultipleColumnPrefixFilter's prefixes */
	size_t nlist;
	int64_t *ts;
	size_t nts;
	int64_t n1, n2;		/* limit, offset */
	int f1, f2;		/* filterIfMissing, latestVersionOnly;
				 * minInclusive, maxInclusive */
	unsigned char *tmp;	/* scratch verdicts, tcap bytes */
	size_t tcap;
	int64_t *stamps;	/* DependentColumnFilter's, scap of them */
	size_t scap;
};

struct fs_filter {
	struct node *root;
	int reversed;
	int keys_only;		/* FS_KEYS_* */
	int64_t len_as;		/* FS_KEYS_LEN: -1, or the length shown */
	uint64_t page;
	size_t *colidx;		/* each cell's column number in the row */
	size_t ccap;
};

/* --- tokens ----------------------------------------------------------- */

enum tok { T_END, T_LP, T_RP, T_COMMA, T_STR, T_WORD, T_OP, T_BAD };

struct lex {
	const char *p, *e;
	enum tok t;
	struct buf s;		/* T_STR: unquoted; T_WORD, T_OP: as is */
	enum op op;
	char *why;
	size_t whylen;
	int err;		/* errno once set */
};

static int fail(struct lex *l, const char *fmt, ...)
{
	va_list ap;

	if (!l->err) {
		va_start(ap, fmt);
		vsnprintf(l->why, l->whylen, fmt, ap);
		va_end(ap);
		l->err = EINVAL;
	}
	return l->err;
}

static int word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '+' ||
	       c == '.';
}

/* Reads the next token into l. */
static void next(struct lex *l)
{
	const char *q;

	while (l->p < l->e && (*l->p == ' ' || *l->p == '\t'))
		l->p++;
	buf_reset(&l->s);
	if (l->p == l->e) {
		l->t = T_END;
		return;
	}
	switch (*l->p) {
	case '(':
		l->p++;
		l->t = T_LP;
		return;
	case ')':
		l->p++;
		l->t = T_RP;
		return;
	case ',':
		l->p++;
		l->t = T_COMMA;
		return;
	case '\'':
		/* a quoted string; '' inside is one quote */
		for (q = l->p + 1;; q++) {
			if (q == l->e) {
				l->t = T_BAD;
				fail(l, "filter: unterminated quote");
				return;
			}
			if (*q == '\'') {
				if (q + 1 < l->e && q[1] == '\'') {
					q++;
				} else
					break;
			}
			if (buf_putc(&l->s, *q)) {
				l->t = T_BAD;
				l->err = ENOMEM;
				return;
			}
		}
		l->p = q + 1;
		l->t = T_STR;
		return;
	case '<': case '>': case '=': case '!':
		q = l->p;
		l->t = T_OP;
		if (q + 1 < l->e && q[1] == '=') {
			l->op = *q == '<' ? OP_LE : *q == '>' ? OP_GE :
				*q == '!' ? OP_NE : OP_EQ;
			if (*q == '=') {
				l->t = T_BAD;
				fail(l, "filter: unknown compare operator '=='");
				return;
			}
			l->p += 2;
		} else if (*q == '!') {
			l->t = T_BAD;
			fail(l, "filter: unknown compare operator '!'");
			return;
		} else {
			l->op = *q == '<' ? OP_LT : *q == '>' ? OP_GT : OP_EQ;
			l->p++;
		}
		if (l->p < l->e && (*l->p == '<' || *l->p == '>' ||
				    *l->p == '=' || *l->p == '!')) {
			l->t = T_BAD;
			fail(l, "filter: unknown compare operator at '%.*s'",
			     (int)(l->e - q < 8 ? l->e - q : 8), q);
		}
		return;
	}
	if (!word_char(*l->p)) {
		l->t = T_BAD;
		fail(l, "filter: unexpected '%c'", *l->p);
		return;
	}
	for (q = l->p; q < l->e && word_char(*q); q++)
		;
	if (buf_append(&l->s, l->p, (size_t)(q - l->p))) {
		l->t = T_BAD;
		l->err = ENOMEM;
		return;
	}
	l->p = q;
	l->t = T_WORD;
}

static int is_word(const struct lex *l, const char *w)
{
	return l->t == T_WORD && l->s.len == strlen(w) &&
	       !memcmp(l->s.p, w, l->s.len);
}

/* --- nodes ------------------------------------------------------------- */

static void node_free(struct node *n)
{
	size_t i;

	if (!n)
		return;
	for (i = 0; i < n->nkids; i++)
		node_free(n->kids[i]);
	free(n->kids);
	for (i = 0; i < n->nlist; i++)
		buf_release(&n->list[i]);
	free(n->list);
	free(n->ts);
	buf_release(&n->cv);
	buf_release(&n->a);
	buf_release(&n->b);
	pcre2_match_data_free(n->md);
	pcre2_code_free(n->re);
	free(n->tmp);
	free(n->stamps);
	free(n);
}

static struct node *node_new(enum kind k)
{
	struct node *n = calloc(1, sizeof *n);

	if (n)
		n->k = k;
	return n;
}

static int add_kid(struct node *p, struct node *k)
{
	struct node **v = realloc(p->kids, (p->nkids + 1) * sizeof *v);

	if (!v)
		return ENOMEM;
	p->kids = v;
	p->kids[p->nkids++] = k;
	return 0;
}

/* One argument of a filter as the lexer read it. */
struct arg {
	enum tok t;		/* T_STR, T_WORD or T_OP */
	struct buf s;
	enum op op;
};

#define ARGS_MAX 64

static const struct {
	const char *name;
	enum kind k;
} names[] = {
	{ "KeyOnlyFilter", F_KEYONLY },
	{ "FirstKeyOnlyFilter", F_FIRSTKEY },
	{ "PrefixFilter", F_PREFIX },
	{ "ColumnPrefixFilter", F_COLPREFIX },
	{ "MultipleColumnPrefixFilter", F_MULTICOLPREFIX },
	{ "ColumnCountGetFilter", F_COLCOUNT },
	{ "PageFilter", F_PAGE },
	{ "ColumnPaginationFilter", F_COLPAGE },
	{ "InclusiveStopFilter", F_INCLSTOP },
	{ "TimestampsFilter", F_TIMESTAMPS },
	{ "RowFilter", F_ROW },
	{ "FamilyFilter", F_FAMILY },
	{ "QualifierFilter", F_QUALIFIER },
	{ "ValueFilter", F_VALUE },
	{ "ColumnRangeFilter", F_COLRANGE },
	{ "SingleColumnValueFilter", F_SCV },
	{ "SingleColumnValueExcludeFilter", F_SCVEXCLUDE },
	{ "ColumnValueFilter", F_COLVALUE },
	{ "DependentColumnFilter", F_DEPCOL },
};

/* A whole number argument in [0, max]. */
static int arg_num(struct lex *l, const char *f, const struct arg *a,
		   int64_t max, int64_t *v)
{
	const char *p = (const char *)a->s.p;
	size_t i;
	uint64_t x = 0;

	if (a->t != T_WORD || !a->s.len)
		return fail(l, "filter: %s: expected a number", f);
	if (p[0] == '-')
		return fail(l, "filter: %s: a negative number", f);
	for (i = 0; i < a->s.len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return fail(l, "filter: %s: expected a number, not "
				    "'%.*s'", f, (int)(a->s.len > 40 ? 40 :
						       a->s.len), p);
		if (x > ((uint64_t)max - (uint64_t)(p[i] - '0')) / 10)
			return fail(l, "filter: %s: %.*s is too large", f,
				    (int)(a->s.len > 40 ? 40 : a->s.len), p);
		x = x * 10 + (uint64_t)(p[i] - '0');
	}
	*v = (int64_t)x;
	return 0;
}

static int arg_bool(struct lex *l, const char *f, const struct arg *a,
		    int *v)
{
	/* in either case, as ParseFilter.convertByteArrayToBoolean */
	if (a->t == T_WORD && a->s.len == 4 &&
	    !strncasecmp((const char *)a->s.p, "true", 4))
		*v = 1;
	else if (a->t == T_WORD && a->s.len == 5 &&
		 !strncasecmp((const char *)a->s.p, "false", 5))
		*v = 0;
	else
		return fail(l, "filter: %s: expected true or false", f);
	return 0;
}

static int arg_str(struct lex *l, const char *f, struct arg *a,
		   struct buf *out)
{
	if (a->t != T_STR)
		return fail(l, "filter: %s: expected a quoted string", f);
	buf_release(out);
	*out = a->s;
	a->s = (struct buf)BUF_INIT;
	return 0;
}

/* The compare operator and 'type:value' comparator of args a[0], a[1]. */
static int arg_compare(struct lex *l, const char *f, struct arg *a,
		       struct node *n)
{
	static const struct {
		const char *name;
		enum cmpk k;
	} types[] = {
		{ "binary", C_BINARY }, { "binaryprefix", C_PREFIX },
		{ "substring", C_SUBSTR }, { "regexstring", C_REGEX },
	};
	const char *p, *c;
	size_t i, tl;
	int ec;
	PCRE2_SIZE eo;

	if (a[0].t != T_OP)
		return fail(l, "filter: %s: expected a compare operator "
			    "(< <= = != >= >)", f);
	n->op = a[0].op;
	if (a[1].t != T_STR)
		return fail(l, "filter: %s: expected a 'type:value' "
			    "comparator", f);
	p = (const char *)a[1].s.p;
	c = a[1].s.len ? memchr(p, ':', a[1].s.len) : NULL;
	if (!c)
		return fail(l, "filter: %s: expected a 'type:value' "
			    "comparator", f);
	tl = (size_t)(c - p);
	for (i = 0; i < sizeof types / sizeof types[0]; i++)
		if (strlen(types[i].name) == tl &&
		    !memcmp(types[i].name, p, tl))
			break;
	if (i == sizeof types / sizeof types[0])
		return fail(l, "filter: %s: unknown comparator type '%.*s'",
			    f, (int)(tl > 40 ? 40 : tl), p);
	n->ck = types[i].k;
	if ((n->ck == C_SUBSTR || n->ck == C_REGEX) && n->op != OP_EQ &&
	    n->op != OP_NE)
		return fail(l, "filter: %s: %s can only be used with = or !=",
			    f, types[i].name);
	if (buf_append(&n->cv, c + 1, a[1].s.len - tl - 1))
		return l->err = ENOMEM;
	if (n->ck == C_SUBSTR)
		for (i = 0; i < n->cv.len; i++)
			if (n->cv.p[i] >= 'A' && n->cv.p[i] <= 'Z')
				n->cv.p[i] += 'a' - 'A';
	if (n->ck == C_REGEX) {
		/* java.util.regex with DOTALL, as RegexStringComparator;
		 * a cell matches when the pattern is found in it */
		n->re = pcre2_compile(n->cv.len ? n->cv.p :
				      (PCRE2_SPTR)"", n->cv.len,
				      PCRE2_DOTALL, &ec, &eo, NULL);
		if (!n->re)
			return fail(l, "filter: %s: bad regular expression "
				    "at offset %zu", f, (size_t)eo);
		if (!(n->md = pcre2_match_data_create_from_pattern(n->re,
								   NULL)))
			return l->err = ENOMEM;
	}
	return 0;
}

/* Checks the count of args. */
static int arity(struct lex *l, const char *f, size_t na, size_t lo,
		 size_t hi)
{
	if (na < lo || na > hi) {
		if (lo == hi)
			return fail(l, "filter: %s takes %zu argument%s, "
				    "not %zu", f, lo, lo == 1 ? "" : "s", na);
		return fail(l, "filter: %s takes %zu to %zu arguments, "
			    "not %zu", f, lo, hi, na);
	}
	return 0;
}

/* Builds the leaf named by the word in l from its args. */
static int leaf(struct lex *l, const char *f, enum kind k, struct arg *a,
		size_t na, struct node *n)
{
	size_t i;
	int64_t v;
	int rc = 0;

	switch (k) {
	case F_KEYONLY:
		/* KeyOnlyFilter(lenAsVal) */
		return arity(l, f, na, 0, 1) ? l->err :
		       na && arg_bool(l, f, &a[0], &n->f1) ? l->err : 0;
	case F_FIRSTKEY:
		return arity(l, f, na, 0, 0);
	case F_PREFIX:
	case F_COLPREFIX:
	case F_INCLSTOP:
		return arity(l, f, na, 1, 1) ? l->err :
		       arg_str(l, f, &a[0], &n->a);
	case F_MULTICOLPREFIX:
		if (arity(l, f, na, 1, ARGS_MAX))
			return l->err;
		if (!(n->list = calloc(na, sizeof *n->list)))
			return l->err = ENOMEM;
		for (i = 0; i < na && !rc; i++) {
			n->nlist = i + 1;
			rc = arg_str(l, f, &a[i], &n->list[i]);
		}
		return rc;
	case F_COLCOUNT:
		return arity(l, f, na, 1, 1) ? l->err :
		       arg_num(l, f, &a[0], INT32_MAX, &n->n1);
	case F_PAGE:
		return arity(l, f, na, 1, 1) ? l->err :
		       arg_num(l, f, &a[0], INT64_MAX, &n->n1);
	case F_COLPAGE:
		return arity(l, f, na, 2, 2) ? l->err :
		       arg_num(l, f, &a[0], INT32_MAX, &n->n1) ? l->err :
		       arg_num(l, f, &a[1], INT32_MAX, &n->n2);
	case F_TIMESTAMPS:
		if (na && !(n->ts = calloc(na, sizeof *n->ts)))
			return l->err = ENOMEM;
		for (i = 0; i < na && !rc; i++)
			if (!(rc = arg_num(l, f, &a[i], INT64_MAX, &v)))
				n->ts[n->nts++] = v;
		return rc;
	case F_ROW:
	case F_FAMILY:
	case F_QUALIFIER:
	case F_VALUE:
		return arity(l, f, na, 2, 2) ? l->err :
		       arg_compare(l, f, a, n);
	case F_COLRANGE:
		return arity(l, f, na, 4, 4) ? l->err :
		       arg_str(l, f, &a[0], &n->a) ? l->err :
		       arg_bool(l, f, &a[1], &n->f1) ? l->err :
		       arg_str(l, f, &a[2], &n->b) ? l->err :
		       arg_bool(l, f, &a[3], &n->f2);
	case F_SCV:
	case F_SCVEXCLUDE:
	case F_COLVALUE:
		if (arity(l, f, na, 4, k == F_COLVALUE ? 4 : 6) ||
		    (na == 5 && fail(l, "filter: %s takes 4 or 6 "
				     "arguments, not 5", f)) ||
		    arg_str(l, f, &a[0], &n->a) ||
		    arg_str(l, f, &a[1], &n->b) ||
		    arg_compare(l, f, a + 2, n))
			return l->err;
		n->f1 = 0;	/* filterIfMissing */
		n->f2 = 1;	/* latestVersionOnly */
		if (na == 6 && (arg_bool(l, f, &a[4], &n->f1) ||
				arg_bool(l, f, &a[5], &n->f2)))
			return l->err;
		return 0;
	case F_DEPCOL:
		/* (family, qualifier[, dropDependentColumn[, op,
		 * comparator]]) */
		if (arity(l, f, na, 2, 5) ||
		    (na == 4 && fail(l, "filter: %s takes 2, 3 or 5 "
				     "arguments, not 4", f)) ||
		    arg_str(l, f, &a[0], &n->a) ||
		    arg_str(l, f, &a[1], &n->b) ||
		    (na >= 3 && arg_bool(l, f, &a[2], &n->f1)) ||
		    (na == 5 && arg_compare(l, f, a + 3, n)))
			return l->err;
		n->n1 = na == 5;	/* a comparator */
		return 0;
	default:
		return fail(l, "filter: %s: not a filter", f);
	}
}

static struct node *parse_or(struct lex *l);

/* NAME '(' args ')', the lexer on NAME. */
static struct node *parse_filter(struct lex *l)
{
	struct arg a[ARGS_MAX];
	char f[64];
	size_t na = 0, i;
	struct node *n = NULL;
	enum kind k = F_AND;

	snprintf(f, sizeof f, "%.*s", (int)(l->s.len > 40 ? 40 : l->s.len),
		 (const char *)l->s.p);
	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(names[i].name, f))
			break;
	if (i == sizeof names / sizeof names[0]) {
		fail(l, "filter: unknown filter '%s'", f);
		return NULL;
	}
	k = names[i].k;
	next(l);
	if (l->t != T_LP) {
		fail(l, "filter: %s: expected '('", f);
		return NULL;
	}
	next(l);
	while (l->t != T_RP) {
		if (na == ARGS_MAX) {
			fail(l, "filter: %s: too many arguments", f);
			goto out;
		}
		if (l->t != T_STR && l->t != T_WORD && l->t != T_OP) {
			if (l->t != T_BAD)
				fail(l, "filter: %s: expected an argument "
				     "or ')'", f);
			goto out;
		}
		a[na].t = l->t;
		a[na].op = l->op;
		a[na].s = l->s;
		l->s = (struct buf)BUF_INIT;
		na++;
		next(l);
		if (l->t == T_COMMA) {
			next(l);
			if (l->t == T_RP) {
				fail(l, "filter: %s: an argument missing "
				     "after ','", f);
				goto out;
			}
		} else if (l->t != T_RP) {
			if (l->t != T_BAD)
				fail(l, "filter: %s: expected ',' or ')'", f);
			goto out;
		}
	}
	next(l);
	if (!(n = node_new(k))) {
		l->err = ENOMEM;
		goto out;
	}
	if (leaf(l, f, k, a, na, n)) {
		node_free(n);
		n = NULL;
	}
out:
	for (i = 0; i < na; i++)
		buf_release(&a[i].s);
	return n;
}

static struct node *parse_unary(struct lex *l)
{
	struct node *n, *k;

	if (is_word(l, "SKIP") || is_word(l, "WHILE")) {
		enum kind kind = is_word(l, "SKIP") ? F_SKIP : F_WHILE;
		next(l);
		if (!(k = parse_unary(l)))
			return NULL;
		if (!(n = node_new(kind)) || add_kid(n, k)) {
			free(n);
			node_free(k);
			l->err = ENOMEM;
			return NULL;
		}
		return n;
	}
	if (l->t == T_LP) {
		next(l);
		if (!(n = parse_or(l)))
			return NULL;
		if (l->t != T_RP) {
			if (l->t != T_BAD)
				fail(l, "filter: expected ')'");
			node_free(n);
			return NULL;
		}
		next(l);
		return n;
	}
	if (l->t == T_WORD)
		return parse_filter(l);
	if (l->t != T_BAD)
		fail(l, l->t == T_END ? "filter: a filter missing at the end" :
			"filter: expected a filter");
	return NULL;
}

/* A list of operands joined by word w (AND or OR), or one operand. */
static struct node *parse_list(struct lex *l, const char *w, enum kind k,
			       struct node *(*sub)(struct lex *))
{
	struct node *n, *list = NULL, *x;

	if (!(n = sub(l)))
		return NULL;
	while (is_word(l, w)) {
		next(l);
		if (!(x = sub(l)))
			goto fail;
		if (!list) {
			if (!(list = node_new(k)) || add_kid(list, n)) {
				free(list);
				list = NULL;
				node_free(x);
				l->err = ENOMEM;
				goto fail;
			}
			n = NULL;
		}
		if (add_kid(list, x)) {
			node_free(x);
			l->err = ENOMEM;
			goto fail;
		}
	}
	return list ? list : n;
fail:
	node_free(n);
	node_free(list);
	return NULL;
}

static struct node *parse_and(struct lex *l)
{
	return parse_list(l, "AND", F_AND, parse_unary);
}

static struct node *parse_or(struct lex *l)
{
	return parse_list(l, "OR", F_OR, parse_and);
}

/* Marks the nodes every passing row must pass; collects KeyOnlyFilter
 * and PageFilter. */
static void mark(struct fs_filter *f, struct node *n, int must)
{
	size_t i;

	n->must = must;
	if (n->k == F_KEYONLY && !n->f1) {
		f->keys_only = FS_KEYS_EMPTY;
	} else if (n->k == F_KEYONLY) {
		/* each KeyOnlyFilter transforms what the one before it
		 * left, in the order of the text (HBase's lists apply
		 * transformCell so, AND or OR: a KeyOnlyFilter includes
		 * every cell): the length of '' is 0, of a length 4 */
		f->len_as = f->keys_only == FS_KEYS_NONE ? -1 :
			    f->keys_only == FS_KEYS_EMPTY ? 0 : 4;
		f->keys_only = FS_KEYS_LEN;
	}
	if (n->k == F_PAGE && n->n1 && (!f->page ||
					(uint64_t)n->n1 < f->page))
		f->page = (uint64_t)n->n1;
	for (i = 0; i < n->nkids; i++)
		mark(f, n->kids[i], must && n->k == F_AND);
}

int fs_filter_parse(const char *s, size_t len, int reversed,
		    struct fs_filter **out, char *why, size_t whylen)
{
	struct lex l;
	struct fs_filter *f;
	struct node *n;

	*out = NULL;
	if (!s)
		s = "";		/* filter= with nothing after it */
	memset(&l, 0, sizeof l);
	l.p = s;
	l.e = s + len;
	l.why = why;
	l.whylen = whylen;
	next(&l);
	n = l.t == T_END ? (fail(&l, "filter: empty"), NULL) : parse_or(&l);
	if (n && l.t != T_END) {
		if (l.t == T_RP)
			fail(&l, "filter: unexpected ')'");
		else if (l.t != T_BAD)
			fail(&l, "filter: unexpected '%.*s'",
			     (int)(l.s.len > 20 ? 20 : l.s.len),
			     l.s.len ? (const char *)l.s.p : "");
		node_free(n);
		n = NULL;
	}
	buf_release(&l.s);
	if (!n)
		return l.err ? l.err : EINVAL;
	if (!(f = calloc(1, sizeof *f))) {
		node_free(n);
		return ENOMEM;
	}
	f->root = n;
	f->reversed = reversed;
	mark(f, n, 1);
	*out = f;
	return 0;
}

void fs_filter_free(struct fs_filter *f)
{
	if (!f)
		return;
	node_free(f->root);
	free(f->colidx);
	free(f);
}

int fs_filter_keys_only(const struct fs_filter *f, int64_t *len)
{
	*len = f->len_as;
	return f->keys_only;
}

uint64_t fs_filter_page(const struct fs_filter *f)
{
	return f->page;
}

/* --- applying ---------------------------------------------------------- */

struct ctx {
	struct fs_filter *f;
	const cf_row *row;
	const unsigned char *key;
	size_t klen, n;
	int end;
};

/* (an empty buf's bytes are NULL: memcmp must not see them) */
static int bytes_cmp(const void *a, size_t an, const void *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int c = n ? memcmp(a, b, n) : 0;

	return c ? c : an < bn ? -1 : an > bn;
}

static int same(const void *a, const void *b, size_t n)
{
	return !n || !memcmp(a, b, n);
}

/* The comparator of n against v[0..len): whether "v OP value" holds
 * (CompareFilter.compare's opposite). */
static int compare(struct node *n, const void *v, size_t len)
{
	const unsigned char *p = v;
	int c;
	size_t i, j;

	switch (n->ck) {
	case C_BINARY:
		c = bytes_cmp(p, len, n->cv.p, n->cv.len);
		break;
	case C_PREFIX:
		c = bytes_cmp(p, len < n->cv.len ? len : n->cv.len, n->cv.p,
			      n->cv.len);
		break;
	case C_SUBSTR:
		/* found (lower case, as SubstringComparator) compares 0 */
		c = 1;
		for (i = 0; c && i + n->cv.len <= len; i++) {
			for (j = 0; j < n->cv.len; j++) {
				unsigned char x = p[i + j];
				if (x >= 'A' && x <= 'Z')
					x += 'a' - 'A';
				if (x != n->cv.p[j])
					break;
			}
			c = j != n->cv.len;
		}
		break;
	default:
		c = pcre2_match(n->re, len ? p : (PCRE2_SPTR)"", len, 0, 0,
				n->md, NULL) < 0;
		break;
	}
	switch (n->op) {
	case OP_LT: return c < 0;
	case OP_LE: return c <= 0;
	case OP_EQ: return c == 0;
	case OP_NE: return c != 0;
	case OP_GE: return c >= 0;
	default: return c > 0;
	}
}

static int has_prefix(const void *p, size_t n, const struct buf *pre)
{
	return n >= pre->len && same(p, pre->p, pre->len);
}

static int is_column(const struct cf_cell *c, const struct node *n)
{
	return c->famlen == n->a.len && same(c->fam, n->a.p, c->famlen) &&
	       c->qlen == n->b.len && same(c->qual, n->b.p, c->qlen);
}

static const void *value_of(const struct cf_cell *c, size_t *len)
{
	/* a delete marker (raw scans) compares as an empty value */
	*len = c->kind || !c->val ? 0 : c->vlen;
	return c->kind || !c->val ? "" : (const void *)c->val;
}

/* Each cell's column number in the row (0 for the first column). */
static int columns(struct ctx *x)
{
	struct fs_filter *f = x->f;
	const struct cf_cell *c, *p = NULL;
	size_t i, col = 0;

	if (f->ccap < x->n) {
		size_t *v = realloc(f->colidx, x->n * sizeof *v);
		if (!v)
			return ENOMEM;
		f->colidx = v;
		f->ccap = x->n;
	}
	for (i = 0; i < x->n; i++, p = c) {
		c = cf_row_cell(x->row, i);
		if (p && !(p->famlen == c->famlen && p->qlen == c->qlen &&
			   same(p->fam, c->fam, c->famlen) &&
			   same(p->qual, c->qual, c->qlen)))
			col++;
		f->colidx[i] = col;
	}
	return 0;
}

/* SingleColumnValueFilter's verdict on the row. */
static int scv_row(struct ctx *x, struct node *n)
{
	const struct cf_cell *c;
	const void *v;
	size_t i, len;
	int found = 0;

	for (i = 0; i < x->n; i++) {
		c = cf_row_cell(x->row, i);
		if (!is_column(c, n))
			continue;
		found = 1;
		v = value_of(c, &len);
		if (compare(n, v, len))
			return 1;
		if (n->f2)	/* latestVersionOnly: the newest decides */
			return 0;
	}
	return !found && !n->f1;
}

static int cmp_ts(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* DependentColumnFilter: the cells at the timestamps of the dependent
 * column's cells that pass the comparator; those cells themselves
 * unless dropped (the others of that column never). */
static int depcol(struct ctx *x, struct node *n, unsigned char *out)
{
	const struct cf_cell *c;
	const void *v;
	size_t i, len, ns = 0;

	if (n->scap < x->n) {
		int64_t *t = realloc(n->stamps, x->n * sizeof *t);
		if (!t)
			return ENOMEM;
		n->stamps = t;
		n->scap = x->n;
	}
	for (i = 0; i < x->n; i++) {
		c = cf_row_cell(x->row, i);
		v = value_of(c, &len);
		out[i] = is_column(c, n) && (!n->n1 || compare(n, v, len));
		if (out[i])
			n->stamps[ns++] = c->ts;
	}
	qsort(n->stamps, ns, sizeof *n->stamps, cmp_ts);
	for (i = 0; i < x->n; i++) {
		c = cf_row_cell(x->row, i);
		if (is_column(c, n))
			out[i] = out[i] && !n->f1;
		else
			out[i] = ns && bsearch(&c->ts, n->stamps, ns,
					       sizeof *n->stamps,
					       cmp_ts) != NULL;
	}
	return 0;
}

static int eval(struct ctx *x, struct node *n, unsigned char *out)
{
	const struct cf_cell *c;
	const void *v;
	size_t i, j, len;
	int rc, r;

	switch (n->k) {
	case F_AND:
	case F_OR:
		if ((rc = eval(x, n->kids[0], out)))
			return rc;
		if (n->tcap < x->n) {
			unsigned char *t = realloc(n->tmp, x->n);
			if (!t)
				return ENOMEM;
			n->tmp = t;
			n->tcap = x->n;
		}
		for (j = 1; j < n->nkids; j++) {
			if ((rc = eval(x, n->kids[j], n->tmp)))
				return rc;
			for (i = 0; i < x->n; i++)
				out[i] = n->k == F_AND ? out[i] & n->tmp[i] :
					 out[i] | n->tmp[i];
		}
		return 0;
	case F_SKIP:
	case F_WHILE:
		if ((rc = eval(x, n->kids[0], out)))
			return rc;
		for (r = 1, i = 0; i < x->n; i++)
			r &= out[i];
		if (!r && n->k == F_WHILE)
			x->end = 1;
		memset(out, r, x->n);
		return 0;
	case F_PREFIX:
		r = has_prefix(x->key, x->klen, &n->a);
		/* past the prefix every later row fails too */
		if (!r && n->must && (x->f->reversed ?
		    bytes_cmp(x->key, x->klen, n->a.p, n->a.len) < 0 :
		    bytes_cmp(x->key, x->klen, n->a.p, n->a.len) > 0))
			x->end = 1;
		memset(out, r, x->n);
		return 0;
	case F_INCLSTOP:
		r = bytes_cmp(x->key, x->klen, n->a.p, n->a.len);
		r = x->f->reversed ? r >= 0 : r <= 0;
		if (!r && n->must)
			x->end = 1;
		memset(out, r, x->n);
		return 0;
	case F_ROW:
		memset(out, compare(n, x->key, x->klen), x->n);
		return 0;
	case F_SCV:
	case F_SCVEXCLUDE:
		r = scv_row(x, n);
		for (i = 0; i < x->n; i++)
			out[i] = r && !(n->k == F_SCVEXCLUDE &&
					is_column(cf_row_cell(x->row, i), n));
		return 0;
	case F_KEYONLY:
		memset(out, 1, x->n);
		return 0;
	case F_DEPCOL:
		return depcol(x, n, out);
	case F_PAGE:
		/* the limit is the scan's (fs_filter_page); PageFilter(0)
		 * lets no row through */
		r = n->n1 != 0;
		if (!r && n->must)
			x->end = 1;
		memset(out, r, x->n);
		return 0;
	case F_FIRSTKEY:
		memset(out, 0, x->n);
		out[0] = 1;
		return 0;
	case F_COLCOUNT:
	case F_COLPAGE:
		if ((rc = columns(x)))
			return rc;
		for (i = 0; i < x->n; i++) {
			size_t col = x->f->colidx[i];
			out[i] = n->k == F_COLCOUNT ? col < (size_t)n->n1 :
				 col >= (size_t)n->n2 &&
				 col - (size_t)n->n2 < (size_t)n->n1;
		}
		return 0;
	default:
		break;
	}
	for (i = 0; i < x->n; i++) {
		c = cf_row_cell(x->row, i);
		switch (n->k) {
		case F_COLPREFIX:
			r = has_prefix(c->qual, c->qlen, &n->a);
			break;
		case F_MULTICOLPREFIX:
			for (r = 0, j = 0; !r && j < n->nlist; j++)
				r = has_prefix(c->qual, c->qlen, &n->list[j]);
			break;
		case F_TIMESTAMPS:
			for (r = 0, j = 0; !r && j < n->nts; j++)
				r = n->ts[j] == c->ts;
			break;
		case F_FAMILY:
			r = compare(n, c->fam, c->famlen);
			break;
		case F_QUALIFIER:
			r = compare(n, c->qual, c->qlen);
			break;
		case F_VALUE:
			v = value_of(c, &len);
			r = compare(n, v, len);
			break;
		case F_COLRANGE:
			/* '' leaves that end open (ColumnRangeFilter's null) */
			r = 1;
			if (n->a.len) {
				int m = bytes_cmp(c->qual, c->qlen, n->a.p,
						  n->a.len);
				r = m > 0 || (m == 0 && n->f1);
			}
			if (r && n->b.len) {
				int m = bytes_cmp(c->qual, c->qlen, n->b.p,
						  n->b.len);
				r = m < 0 || (m == 0 && n->f2);
			}
			break;
		default:	/* F_COLVALUE */
			v = value_of(c, &len);
			r = is_column(c, n) && compare(n, v, len);
			break;
		}
		out[i] = (unsigned char)r;
	}
	return 0;
}

int fs_filter_row(struct fs_filter *f, const cf_row *row,
		  unsigned char *keep, int *end)
{
	struct ctx x;
	int rc;

	memset(&x, 0, sizeof x);
	x.f = f;
	x.row = row;
	x.key = cf_row_key(row, &x.klen);
	x.n = cf_row_count(row);
	*end = 0;
	if (!x.n)
		return 0;
	if ((rc = eval(&x, f->root, keep)))
		return rc;
	if (x.end) {
		memset(keep, 0, x.n);
		*end = 1;
	}
	return 0;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ?
	       c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int fs_filter_decode(const char *p, size_t len, struct buf *out)
{
	size_t i;
	int h, l;

	for (i = 0; i < len; i++) {
		if (p[i] != '%') {
			if (buf_putc(out, p[i]))
				return -1;
			continue;
		}
		if (i + 2 >= len || (h = hexval(p[i + 1])) < 0 ||
		    (l = hexval(p[i + 2])) < 0 ||
		    buf_putc(out, (char)(h << 4 | l)))
			return -1;
		i += 2;
	}
	return 0;
}
