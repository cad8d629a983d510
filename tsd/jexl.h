/*
 * jexl.h: the arithmetic of OpenTSDB's /api/query/exp expressions, the
 * part of Commons JEXL 2.1 they use (pure).
 *
 *   EXPR = OR ["?" EXPR ":" EXPR]
 *   OR   = AND {("||" | "or") AND}
 *   AND  = EQ {("&&" | "and") EQ}
 *   EQ   = REL {("==" | "eq" | "!=" | "ne") REL}
 *   REL  = ADD {("<" | "lt" | "<=" | "le" | ">" | "gt" | ">=" | "ge") ADD}
 *   ADD  = MUL {("+" | "-") MUL}
 *   MUL  = UN {("*" | "/" | "div" | "%" | "mod") UN}
 *   UN   = ("-" | "!" | "not") UN | NUMBER | "true" | "false" | NAME
 *        | "(" EXPR ")"
 *
 * A NAME ([A-Za-z_$][A-Za-z0-9_$]*) is a variable.  Values are doubles;
 * a comparison or a logical operator gives 1 or 0 (JEXL's Boolean, which
 * OpenTSDB's ExpressionIterator turns into 1 or 0), a number is true
 * when not 0.  x / 0 and x % 0 are 0, as JEXL's lenient arithmetic
 * answers them.
 */
#ifndef CF_TSD_JEXL_H
#define CF_TSD_JEXL_H

#include <stddef.h>

struct tsd_jexl;

/*
 * Parses s[0..n).  On success *out owns the tree (tsd_jexl_free).
 * CF_EINVAL with the reason in why, CF_ENOMEM.
 */
int tsd_jexl_parse(const char *s, size_t n, struct tsd_jexl **out,
		   char *why, size_t whylen);
void tsd_jexl_free(struct tsd_jexl *j);

/* The expression's variables, in the order first met (the tree owns
 * them). */
size_t tsd_jexl_nvars(const struct tsd_jexl *j);
const char *tsd_jexl_var(const struct tsd_jexl *j, size_t i);

/* The value of j with variable i set to vals[i]. */
double tsd_jexl_eval(const struct tsd_jexl *j, const double *vals);

#endif
