/*
 * test-tsd-number.c: tsd_format_double's shortest digits (the fast paths
 * of tsd/number.c) against the plain search they replace: from two
 * significant digits up, the first "%.*e" that strtod reads back.  Many
 * values of the kinds the time-series layer prints: decimals, sums and
 * averages of them, random bit patterns, powers of two, subnormals.
 * number.c is compiled in with TSD_NUMBER_SELFTEST, which adds the
 * comparison tsd_number_selftest().
 */
#define TSD_NUMBER_SELFTEST
#include "tsd/number.c"

#include "tests/tap.h"

static uint64_t rs = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static double value(long i)
{
	double d, a = 0;
	uint64_t b;
	int k;

	switch (i % 6) {
	case 0:		/* up to 8 decimals */
		return (double)(rnd() % 100000000000ull) /
		       pow(10, (double)(rnd() % 9));
	case 1:		/* any bits */
		b = rnd();
		memcpy(&d, &b, 8);
		return isfinite(d) ? fabs(d) : 1.5;
	case 2:		/* sums and averages of two-decimal gauges */
		k = 1 + (int)(rnd() % 100);
		for (int j = 0; j < k; j++)
			a += (double)(rnd() % 100000) / 100;
		return i & 8 ? a / k : a;
	case 3:		/* neighbours of short decimals */
		return nextafter((double)(rnd() % 1000000) / 100,
				 rnd() & 1 ? 1e300 : 0);
	case 4:		/* powers of two, around the fast path's range */
		return ldexp(1.0, (int)(rnd() % 120) - 60);
	default:	/* subnormal and huge */
		return i & 8 ? (double)(rnd() % 1000) * 1e-310
			     : (double)(rnd() % 1000) * 1e300;
	}
}

int main(void)
{
	static const double edge[] = {
		0.1, 0.2, 0.3, 1e-3, 0.0015, 0.5, 2.5, 1.005, 999999.99,
		1e7, 9999999.999, 123456789012345.6, 1e15 - 1, 1e15,
		4503599627370496.5, 9007199254740991.0, 5e-324, 1.7976931348623157e308,
	};
	long bad = 0, n = 200000;
	char buf[TSD_DOUBLE_MAX];

	plan(4);
	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
		if (!tsd_number_selftest(edge[i])) {
			diag("differs: %.17g", edge[i]);
			bad++;
		}
	is_int(bad, 0, "edge values print as the plain search prints them");
	bad = 0;
	for (long i = 0; i < n; i++) {
		double d = value(i);
		if (!tsd_number_selftest(d) && bad++ < 5)
			diag("differs: %.17g", d);
	}
	is_int(bad, 0, "%ld values print as the plain search prints them", n);
	tsd_format_double(buf, 1026.1200000000001);
	is_str(buf, "1026.1200000000001", "a sum needing 17 digits");
	tsd_format_double(buf, 42.37);
	is_str(buf, "42.37", "two decimals");
	return done_testing();
}
