/*
 * number.c: OpenTSDB's (Java's) number syntax and Double.toString.
 *
 * strtod() and printf("%e") do the correctly rounded conversions; this file
 * only decides which text is acceptable and lays the digits out the way
 * Java does.  Both depend on LC_NUMERIC using '.', which holds because
 * nothing in cellfs calls setlocale().
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsd/number.h"
#include "util/err.h"

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int tsd_parse_long(const char *s, size_t len, int64_t *out)
{
	size_t i = 0;
	int neg = 0;
	uint64_t v = 0, limit;

	if (len == 0)
		return CF_EINVAL;
	if (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-';
		i = 1;
		if (len == 1)
			return CF_EINVAL;
	}
	if (len - i > 19)
		return CF_EINVAL;
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < len; i++) {
		if (!is_digit(s[i]))
			return CF_EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > limit)
			return CF_EINVAL;
	}
	if (neg)
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	else
		*out = (int64_t)v;
	return CF_OK;
}

int tsd_parse_double(const char *s, size_t len, double *out)
{
	char tmp[128];
	size_t i = 0, intd = 0, fracd = 0;
	char *end;
	double d;

	if (len == 0 || len >= sizeof tmp)
		return CF_EINVAL;
	if (s[i] == '+' || s[i] == '-')
		i++;
	while (i < len && is_digit(s[i]))
		i++, intd++;
	if (i < len && s[i] == '.') {
		i++;
		while (i < len && is_digit(s[i]))
			i++, fracd++;
	}
	if (intd + fracd == 0)
		return CF_EINVAL;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		size_t expd = 0;
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		while (i < len && is_digit(s[i]))
			i++, expd++;
		if (expd == 0)
			return CF_EINVAL;
	}
	if (i != len)
		return CF_EINVAL;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	d = strtod(tmp, &end);
	if (end != tmp + len || !isfinite(d))
		return CF_EINVAL;
	*out = d;
	return CF_OK;
}

int tsd_looks_like_integer(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] == '.' || s[i] == 'e' || s[i] == 'E')
			return 0;
	return 1;
}

int tsd_fits_in_float(double d)
{
	return (double)(float)d == d;
}

/*
 * The shortest decimal digits that read back as d: printf rounds
 * correctly, so the first precision that round-trips gives the shortest
 * and, among those, the nearest digits, which is what Java 19+ prints.
 * digits gets the significant digits without trailing zeros; the return
 * value is the decimal exponent of the first digit.
 */
static int shortest_digits_slow(double d, char *digits, size_t *ndigits)
{
	char tmp[40];
	int exp10 = 0;

	/* Java always shows two significant digits ("d.dE" or "d.0"), and
	 * picks the nearest such pair even where one digit would round-trip
	 * (4.9E-324, not 5.0E-324); so start at two. */
	int prec = 14, frexp_e;
	/* Sums and averages mostly need 16 or 17 digits: try 15 first.  If
	 * 15 do not read back, no fewer do (the nearer a decimal grid point,
	 * the likelier it reads back, and a coarser grid's points are on the
	 * finer grid), except at a power of two, whose rounding interval is
	 * lopsided: there, and when 15 do, search up from two. */
	snprintf(tmp, sizeof tmp, "%.*e", prec, d);
	if (strtod(tmp, NULL) == d || frexp(d, &frexp_e) == 0.5)
		prec = 1;
	else
		prec = 15;
	for (; prec < 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*e", prec, d);
		if (strtod(tmp, NULL) == d || prec == 16)
			break;
	}
	/* tmp is "D[.DDD]e[+-]XX" for a positive finite d */
	size_t n = 0;
	const char *p = tmp;
	for (; *p && *p != 'e'; p++)
		if (is_digit(*p))
			digits[n++] = *p;
	if (*p == 'e')
		exp10 = atoi(p + 1);
	while (n > 1 && digits[n - 1] == '0')
		n--;
	digits[n] = '\0';
	*ndigits = n;
	return exp10;
}

/*
 * The same digits without printf and strtod for the common values: a
 * positive d in [1e-3, 1e15) with few decimals.  For k = 0, 1, ... the
 * integer r nearest to d * 10^k is found exactly (the product's rounding
 * error comes from fma), and r / 10^k (one correctly rounded division of
 * exact operands) tells whether the k-decimal rounding of d reads back as
 * d.  The first k that does is the shortest, and r its nearest digits:
 * the slow search's answer, as long as a tie (d * 10^k exactly halfway
 * between integers, to 1e-9) does not need its rounding rule; a tie, or
 * no k up to 17, falls back to the slow search.  Below 2^53 an integer
 * part never has fewer significant digits than it shows, and Java's
 * two-digit minimum changes nothing for normal numbers.
 */
static int shortest_digits_fast(double d, char *digits, size_t *ndigits,
				int *exp10)
{
	static const double p10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
		1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
	};
	char tmp[24];

	if (!(d >= 1e-3 && d < 1e15))
		return 0;
	for (int k = 0; k < (int)(sizeof p10 / sizeof p10[0]); k++) {
		double P = p10[k], p = d * P;
		if (p >= 9007199254740992.0)	/* 2^53 */
			return 0;
		double err = fma(d, P, -p);	/* d * P == p + err */
		double r = nearbyint(p);
		double f = (p - r) + err;	/* p - r is exact */
		if (fabs(fabs(f) - 0.5) < 1e-9)
			return 0;
		if (f > 0.5)
			r += 1;
		else if (f < -0.5)
			r -= 1;
		if (r <= 0 || r / P != d)
			continue;
		uint64_t m = (uint64_t)r;
		size_t n = 0;
		while (m) {
			tmp[n++] = (char)('0' + m % 10);
			m /= 10;
		}
		*exp10 = (int)n - 1 - k;
		for (size_t i = 0; i < n; i++)
			digits[i] = tmp[n - 1 - i];
		while (n > 1 && digits[n - 1] == '0')
			n--;
		digits[n] = '\0';
		*ndigits = n;
		return 1;
	}
	return 0;
}

static int shortest_digits(double d, char *digits, size_t *ndigits)
{
	int e;
	if (shortest_digits_fast(d, digits, ndigits, &e))
		return e;
	return shortest_digits_slow(d, digits, ndigits);
}

#ifdef TSD_NUMBER_SELFTEST
/* 1 if shortest_digits gives what the plain search from two digits
 * gives (cc -DTSD_NUMBER_SELFTEST, with a driver calling this). */
int tsd_number_selftest(double d);
int tsd_number_selftest(double d)
{
	char a[24], b[40];
	size_t na, nb = 0;
	int ea, eb, prec;
	ea = shortest_digits(d, a, &na);
	for (prec = 1; prec < 17; prec++) {
		snprintf(b, sizeof b, "%.*e", prec, d);
		if (strtod(b, NULL) == d || prec == 16)
			break;
	}
	char *e = strchr(b, 'e');
	eb = atoi(e + 1);
	for (char *p = b, *q = b; p < e; p++)
		if (*p != '.')
			*q++ = *p, nb++;
	while (nb > 1 && b[nb - 1] == '0')
		nb--;
	b[nb] = '\0';
	return ea == eb && na == nb && !strncmp(a, b, nb);
}
#endif

size_t tsd_format_double(char *dst, double d)
{
	char digits[24];
	size_t nd, o = 0;
	int e;

	if (isnan(d))
		return (size_t)snprintf(dst, TSD_DOUBLE_MAX, "NaN");
	if (isinf(d))
		return (size_t)snprintf(dst, TSD_DOUBLE_MAX, "%sInfinity",
					d < 0 ? "-" : "");
	if (signbit(d)) {
		dst[o++] = '-';
		d = -d;
	}
	if (d == 0) {
		memcpy(dst + o, "0.0", 4);
		return o + 3;
	}
	e = shortest_digits(d, digits, &nd);
	if (d >= 1e-3 && d < 1e7) {
		if (e >= 0) {
			for (int i = 0; i <= e; i++)
				dst[o++] = (size_t)i < nd ? digits[i] : '0';
			dst[o++] = '.';
			if ((size_t)e + 1 >= nd)
				dst[o++] = '0';
			else
				for (size_t i = (size_t)e + 1; i < nd; i++)
					dst[o++] = digits[i];
		} else {
			dst[o++] = '0';
			dst[o++] = '.';
			for (int i = 0; i < -e - 1; i++)
				dst[o++] = '0';
			for (size_t i = 0; i < nd; i++)
				dst[o++] = digits[i];
		}
		dst[o] = '\0';
		return o;
	}
	dst[o++] = digits[0];
	dst[o++] = '.';
	if (nd == 1)
		dst[o++] = '0';
	for (size_t i = 1; i < nd; i++)
		dst[o++] = digits[i];
	o += (size_t)snprintf(dst + o, TSD_DOUBLE_MAX - o, "E%d", e);
	return o;
}

int tsd_buf_double(struct buf *b, double d)
{
	char tmp[TSD_DOUBLE_MAX];
	size_t n = tsd_format_double(tmp, d);
	return buf_append(b, tmp, n);
}

int tsd_buf_long(struct buf *b, int64_t v)
{
	char tmp[24], *p = tmp + sizeof tmp;
	/* the magnitude as unsigned, so INT64_MIN has one too */
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10));
	if (v < 0)
		*--p = '-';
	return buf_append(b, p, (size_t)(tmp + sizeof tmp - p));
}

int tsd_buf_point(struct buf *b, const char *metric, int64_t ts,
		  int is_float, int64_t i, double d, const void *tags,
		  size_t tagslen)
{
	int rc = buf_append(b, metric, strlen(metric));

	if (!rc)
		rc = buf_putc(b, ' ');
	if (!rc)
		rc = tsd_buf_long(b, ts);
	if (!rc)
		rc = buf_putc(b, ' ');
	if (!rc)
		rc = is_float ? tsd_buf_double(b, d) : tsd_buf_long(b, i);
	if (!rc)
		rc = buf_append(b, tags, tagslen);
	if (!rc)
		rc = buf_putc(b, '\n');
	return rc;
}

int64_t tsd_java_d2l(double d)
{
	if (d != d)
		return 0;
	if (d >= 9223372036854775807.0)
		return INT64_MAX;
	if (d <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)d;
}
