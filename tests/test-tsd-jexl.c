/*
 * test-tsd-jexl.c: the JEXL arithmetic of /api/query/exp (tsd/jexl.h):
 * what Commons JEXL 2.1 answers for the expressions OpenTSDB's
 * ExpressionIterator tests write (TestExpressionIterator: "a + b",
 * "a * b", "(a + b) / c", "a > b", ...), its operators by precedence,
 * its words (and, or, not, eq, ne, lt, le, gt, ge, div, mod), the
 * lenient x / 0, and the refusals.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/tap.h"
#include "tsd/jexl.h"
#include "util/err.h"

static char why[256];

/* The value of s with variables a, b, c (in the order s names them
 * first) set from av, bv, cv by name. */
static double val(const char *s, double av, double bv, double cv)
{
	struct tsd_jexl *j;
	double vals[8], d;

	if (tsd_jexl_parse(s, strlen(s), &j, why, sizeof why)) {
		diag("%s: %s", s, why);
		return -12345;
	}
	for (size_t i = 0; i < tsd_jexl_nvars(j) && i < 8; i++) {
		const char *v = tsd_jexl_var(j, i);
		vals[i] = !strcmp(v, "a") ? av : !strcmp(v, "b") ? bv :
			  !strcmp(v, "c") ? cv : 100;
	}
	d = tsd_jexl_eval(j, vals);
	tsd_jexl_free(j);
	return d;
}

static int refused(const char *s)
{
	struct tsd_jexl *j;
	int rc = tsd_jexl_parse(s, strlen(s), &j, why, sizeof why);

	if (rc == CF_OK)
		tsd_jexl_free(j);
	return rc == CF_EINVAL;
}

int main(void)
{
	struct tsd_jexl *j;

	/* TestExpressionIterator's expressions */
	is_int((int)val("a + b", 1, 11, 0), 12, "a + b");
	is_int((int)val("a * b", 2, 12, 0), 24, "a * b");
	ok(val("(a + b) / c", 1, 2, 4) == 0.75, "(a + b) / c");
	ok(val("a - b - c", 10, 3, 2) == 5, "- is left-associative");
	ok(val("a / b / c", 12, 3, 2) == 2, "/ is left-associative");
	ok(val("a + b * c", 1, 2, 3) == 7, "* before +");
	ok(val("-a + b", 1, 2, 0) == 1, "unary minus");
	ok(val("a % b", 7, 4, 0) == 3 && val("a mod b", 7.5, 2, 0) == 1.5,
	   "%% and mod");
	ok(val("a div b", 7, 2, 0) == 3.5, "div");
	/* JexlArithmetic, lenient: a division by zero is 0 */
	ok(val("a / b", 5, 0, 0) == 0 && val("a % b", 5, 0, 0) == 0,
	   "x / 0 and x %% 0 are 0");
	ok(isnan(val("a + b", NAN, 1, 0)), "NaN goes through");
	/* comparisons and logic give 1 or 0 */
	ok(val("a > b", 2, 1, 0) == 1 && val("a > b", 1, 2, 0) == 0,
	   "a > b");
	ok(val("a >= b", 2, 2, 0) == 1 && val("a <= b", 3, 2, 0) == 0 &&
	   val("a < b", 1, 2, 0) == 1, ">= <= <");
	ok(val("a == b", 2, 2, 0) == 1 && val("a != b", 2, 2, 0) == 0,
	   "== !=");
	ok(val("a gt b and b ge c", 3, 2, 2) == 1 &&
	   val("a lt b or a eq c", 3, 2, 3) == 1 &&
	   val("not (a ne b)", 1, 1, 0) == 1 && val("a le b", 1, 1, 0) == 1,
	   "the word operators");
	ok(val("a > 1 && b > 1", 2, 2, 0) == 1 &&
	   val("a > 1 && b > 1", 2, 0, 0) == 0 &&
	   val("a > 1 || b > 1", 0, 2, 0) == 1 && val("!a", 0, 0, 0) == 1,
	   "&& || !");
	ok(val("a > b ? a : b", 3, 5, 0) == 5 &&
	   val("a > b ? a : b", 7, 5, 0) == 7, "the ternary");
	ok(val("a * 2.5e1", 2, 0, 0) == 50 && val("a + 1L", 1, 0, 0) == 2,
	   "number literals");
	ok(val("true + a", 1, 0, 0) == 2, "true is 1");
	ok(val("  a+b ; ", 1, 2, 0) == 3, "blanks and a closing ';'");
	/* variables in the order first named */
	is_int(tsd_jexl_parse("e2 + e3 * e2 + x_1", 18, &j, why, sizeof why),
	       CF_OK, "names with digits and _");
	ok(tsd_jexl_nvars(j) == 3 && !strcmp(tsd_jexl_var(j, 0), "e2") &&
	   !strcmp(tsd_jexl_var(j, 1), "e3") &&
	   !strcmp(tsd_jexl_var(j, 2), "x_1"), "three variables, once each");
	tsd_jexl_free(j);
	ok(refused("a +") && refused("(a + b") && refused("a b") &&
	   refused("") && refused("a = b") && refused("a ? b") &&
	   refused("a + )") && refused("@a"), "malformed expressions refused");
	ok(strstr(why, "Failed to parse the expression at position") != NULL,
	   "the refusal says where");
	{
		char deep[300] = "";
		for (int i = 0; i < 100; i++)
			strcat(deep, "(");
		strcat(deep, "a");
		for (int i = 0; i < 100; i++)
			strcat(deep, ")");
		ok(refused(deep), "nesting past 64 refused");
	}
	return done_testing();
}
