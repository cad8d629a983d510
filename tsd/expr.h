/*
 * expr.h: OpenTSDB's graphite-style expressions (2.3+: the exp=
 * parameter of /api/query/gexp), parsed and evaluated (pure; no
 * storage).
 *
 *   EXPR  = FUNC "(" ARG ("," ARG)* ")"
 *   ARG   = EXPR | METRIC | WORD
 *   METRIC = AGG ":" [WORD ":"] [WORD ":"] NAME ["{" K "=" V ("," K "=" V)* "}"]
 *
 * as OpenTSDB's SyntaxChecker (src/parser.jj) reads it: words are runs of
 * letters, digits and - _ # / $ @ | . ' [ ] *, blanks between tokens are
 * skipped.  A METRIC is an m= sub query (tsd/query.h) that the caller
 * runs; a WORD is a parameter of the function (a factor, a window, an
 * alias).  The functions are those of OpenTSDB's ExpressionFactory;
 * docs/timeseries.md, "Expressions", says what each computes and where
 * cellfs differs from OpenTSDB 2.4.
 */
#ifndef CF_TSD_EXPR_H
#define CF_TSD_EXPR_H

#include <stddef.h>
#include <stdint.h>

#include "tsd/agg.h"

enum tsd_xfn {
	TSD_X_ALIAS, TSD_X_SCALE, TSD_X_ABSOLUTE, TSD_X_MOVING_AVERAGE,
	TSD_X_HIGHEST_CURRENT, TSD_X_HIGHEST_MAX, TSD_X_TIME_SHIFT,
	TSD_X_FIRST_DIFF, TSD_X_DIVIDE, TSD_X_SUM, TSD_X_DIFF, TSD_X_MULTIPLY
};

struct tsd_expr;

/* A series argument: a sub expression, or (sub NULL) the metric query
 * numbered query by the caller's add function. */
struct tsd_xarg {
	struct tsd_expr *sub;
	size_t query;
};

struct tsd_expr {
	enum tsd_xfn fn;
	struct tsd_xarg *args;	/* series arguments, in order */
	size_t nargs;
	char **params;		/* WORD arguments, in order */
	size_t nparams;
};

/* Called for each METRIC of an expression, in the order written, with
 * its text (as OpenTSDB rebuilds it: the parts joined by ':', the tags
 * as {k=v,k=v}); sets *query to the number the caller gives it.
 * Returns CF_OK or an error, which the parse returns. */
typedef int tsd_xadd_fn(void *ctx, const char *m, size_t len, size_t *query);

/*
 * Parses s[0..n).  On success *out owns the tree (tsd_expr_free).
 * CF_EINVAL with the reason in why ("Failed to parse EXPR", "Function
 * X has not been implemented"), CF_ENOMEM, or add's error.
 */
int tsd_expr_parse(const char *s, size_t n, tsd_xadd_fn *add, void *ctx,
		   struct tsd_expr **out, char *why, size_t whylen);
void tsd_expr_free(struct tsd_expr *e);

/* A tag key (aggregated away) or a tag pair of a series. */
struct tsd_xtag {
	uint32_t k, v;		/* UIDs (v 0: an aggregated key) */
	char *kname, *vname;	/* vname NULL for an aggregated key */
};

/* One series, an input or a result.  Everything is owned by it. */
struct tsd_xseries {
	char *metric;
	uint32_t muid;		/* 0: an alias (no metric UID) */
	struct tsd_xtag *tags;	/* the series' tags, by key UID */
	size_t ntags;
	struct tsd_xtag *agg;	/* keys aggregated away, by UID */
	size_t nagg;
	int alias;		/* alias(): printed without tags */
	struct tsd_dp *dp;
	size_t n;
};

/* The series of one argument (a metric query's groups, in order). */
struct tsd_xset {
	struct tsd_xseries *s;
	size_t n;
};

/*
 * Evaluates e over the metric queries' results q[0..nq) (indexed as add
 * numbered them) for the range [start_ms, end_ms] into *out (release
 * with tsd_xset_release).  Memory: the points every function of e makes
 * (each result and sub result), at most max_points of them in all (0:
 * no bound), besides q.  CF_EINVAL with the reason in why (a
 * function's bad parameter, as OpenTSDB's IllegalArgumentException
 * says it), CF_ETOOBIG past max_points (why says so), CF_ENOMEM.
 */
int tsd_expr_eval(const struct tsd_expr *e, const struct tsd_xset *q,
		  size_t nq, int64_t start_ms, int64_t end_ms,
		  uint64_t max_points, struct tsd_xset *out, char *why,
		  size_t whylen);
void tsd_xset_release(struct tsd_xset *s);
void tsd_xseries_release(struct tsd_xseries *s);
/* A deep copy of s into *d.  CF_ENOMEM. */
int tsd_xseries_copy(struct tsd_xseries *d, const struct tsd_xseries *s);

/* The order of two join keys (tag UID bytes, as UnionIterator's ByteMap
 * orders them): the bytes, then the shorter first. */
int tsd_xkey_cmp(const unsigned char *a, size_t an, const unsigned char *b,
		 size_t bn);

/* Adds aggregated key t (its UID and name, copied) to agg[0..*n), kept
 * in UID order, unless there.  CF_ENOMEM. */
int tsd_xtags_add_key(struct tsd_xtag **agg, size_t *n,
		      const struct tsd_xtag *t);

/* The output name of s: its metric, or its alias with each "@TAGK"
 * replaced by the series' value of TAGK (malloc'd; NULL: no memory). */
char *tsd_xseries_name(const struct tsd_xseries *s);

#endif
