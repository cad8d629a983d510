/*
 * tz.c: TZif zones and Java-Calendar interval arithmetic (tz.h).
 *
 * Local time is handled as "wall milliseconds": the local date and time
 * counted as if they were UTC (utc + offset).  Converting back takes the
 * offset in force one offset earlier, which picks, in a gap of a DST
 * change, the instant after it, as Java's lenient Calendar does.
 * TZif (RFC 8536): the version 2+ body with 64-bit transition times is
 * read when present, else the version 1 body.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsd/tz.h"
#include "util/env.h"
#include "util/err.h"

struct tsd_tz {
	size_t n;
	int64_t *at;		/* transition instants, UTC seconds */
	int32_t *off;		/* offset (s) from at[i] on */
	int32_t off0;		/* offset before at[0] */
};

void tsd_tz_free(struct tsd_tz *tz)
{
	if (!tz)
		return;
	free(tz->at);
	free(tz->off);
	free(tz);
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
	return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

/* Parses the body at p[0..len) whose header is at p; times are tw (4 or
 * 8) bytes wide.  *used is the body's size with its header. */
static int parse_body(const unsigned char *p, size_t len, int tw,
		      struct tsd_tz *tz, size_t *used)
{
	if (len < 44 || memcmp(p, "TZif", 4))
		return CF_ECORRUPT;
	uint32_t isut = be32(p + 20), isstd = be32(p + 24),
		 leap = be32(p + 28), timecnt = be32(p + 32),
		 typecnt = be32(p + 36), charcnt = be32(p + 40);
	if (typecnt == 0 || timecnt > 100000 || typecnt > 256 ||
	    leap > 100000 || charcnt > 100000 || isut > 256 || isstd > 256)
		return CF_ECORRUPT;
	size_t need = 44 + (size_t)timecnt * (size_t)tw + timecnt +
		      typecnt * 6u + charcnt + (size_t)leap * (size_t)(tw + 4) +
		      isstd + isut;
	if (need > len)
		return CF_ECORRUPT;
	const unsigned char *times = p + 44;
	const unsigned char *idx = times + (size_t)timecnt * (size_t)tw;
	const unsigned char *types = idx + timecnt;
	tz->at = malloc((timecnt ? timecnt : 1) * sizeof *tz->at);
	tz->off = malloc((timecnt ? timecnt : 1) * sizeof *tz->off);
	if (!tz->at || !tz->off)
		return CF_ENOMEM;
	for (uint32_t i = 0; i < timecnt; i++) {
		if (idx[i] >= typecnt)
			return CF_ECORRUPT;
		tz->at[i] = tw == 8 ? be64(times + 8 * i)
				    : (int32_t)be32(times + 4 * i);
		tz->off[i] = (int32_t)be32(types + 6 * idx[i]);
	}
	tz->n = timecnt;
	/* before the first change: the first standard-time type (RFC 8536
	 * 3.2), else type 0 */
	tz->off0 = (int32_t)be32(types);
	for (uint32_t i = 0; i < typecnt; i++) {
		if (!types[6 * i + 4]) {
			tz->off0 = (int32_t)be32(types + 6 * i);
			break;
		}
	}
	*used = need;
	return CF_OK;
}

int tsd_tz_load(const char *name, struct tsd_tz **out)
{
	const char *dir = getenv("TZDIR");
	struct env_file *f = NULL;
	unsigned char *data = NULL;
	struct tsd_tz *tz = NULL;
	char path[512];
	uint64_t size;
	size_t used;
	int rc;

	*out = NULL;
	if (!name[0] || name[0] == '/' || strstr(name, "..") ||
	    strlen(name) > 200)
		return CF_ENOTFOUND;
	snprintf(path, sizeof path, "%s/%s", dir && dir[0] ? dir :
		 "/usr/share/zoneinfo", name);
	if ((rc = env_file_size(path, &size)))
		return rc == CF_ENOTFOUND ? rc : CF_ENOTFOUND;
	if (size < 44 || size > (1u << 20))
		return CF_ECORRUPT;
	if ((rc = env_open(path, ENV_READ, &f)))
		return rc;
	if (!(data = malloc(size)) || !(tz = calloc(1, sizeof *tz))) {
		rc = CF_ENOMEM;
		goto out;
	}
	if ((rc = env_pread(f, data, size, 0)))
		goto out;
	rc = parse_body(data, size, 4, tz, &used);
	if (rc == CF_OK && data[4] >= '2') {
		free(tz->at);
		free(tz->off);
		tz->at = NULL;
		tz->off = NULL;
		rc = parse_body(data + used, size - used, 8, tz, &used);
	}
out:
	env_close(f);
	free(data);
	if (rc)
		tsd_tz_free(tz);
	else
		*out = tz;
	return rc;
}

static int64_t floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t tsd_tz_offset(const struct tsd_tz *tz, int64_t utc_ms)
{
	if (!tz || tz->n == 0)
		return tz ? (int64_t)tz->off0 * 1000 : 0;
	int64_t s = floordiv(utc_ms, 1000);
	size_t lo = 0, hi = tz->n;	/* first transition after s */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tz->at[mid] <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int64_t)(lo ? tz->off[lo - 1] : tz->off0) * 1000;
}

static int64_t to_wall(const struct tsd_tz *tz, int64_t utc)
{
	return utc + tsd_tz_offset(tz, utc);
}

static int64_t from_wall(const struct tsd_tz *tz, int64_t wall)
{
	int64_t off = tsd_tz_offset(tz, wall - tsd_tz_offset(tz, wall));
	return wall - off;
}

/* --- civil dates (H. Hinnant's algorithms) ----------------------------- */

static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = floordiv(y, 400);
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	z += 719468;
	int64_t era = floordiv(z, 146097);
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int month_days(int64_t y, int m)
{
	static const int md[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30,
				  31 };
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : md[m - 1];
}

#define DAY_MS 86400000

int64_t tsd_cal_add(const struct tsd_tz *tz, int64_t ts, enum tsd_cal_unit u,
		    int64_t n)
{
	int64_t wall, days, tod, y;
	int m, d;

	switch (u) {
	case TSD_CAL_MS: return ts + n;
	case TSD_CAL_SECOND: return ts + n * 1000;
	case TSD_CAL_MINUTE: return ts + n * 60000;
	case TSD_CAL_HOUR: return ts + n * 3600000;
	default: break;
	}
	wall = to_wall(tz, ts);
	days = floordiv(wall, DAY_MS);
	tod = wall - days * DAY_MS;
	if (u == TSD_CAL_DAY || u == TSD_CAL_WEEK) {
		days += u == TSD_CAL_WEEK ? 7 * n : n;
	} else {
		civil_from_days(days, &y, &m, &d);
		int64_t months = y * 12 + (m - 1) + (u == TSD_CAL_YEAR ? 12 * n
								      : n);
		y = floordiv(months, 12);
		m = (int)(months - y * 12) + 1;
		if (d > month_days(y, m))
			d = month_days(y, m);
		days = days_from_civil(y, m, d);
	}
	return from_wall(tz, days * DAY_MS + tod);
}

int64_t tsd_cal_previous(const struct tsd_tz *tz, int64_t ts, int n,
			 enum tsd_cal_unit u)
{
	int64_t wall = to_wall(tz, ts), days = floordiv(wall, DAY_MS), y;
	int64_t tod = wall - days * DAY_MS, start;
	enum tsd_cal_unit step = u;
	int stepn = n, m, d;
	/* day of week, 0 = Sunday (1970-01-01 was a Thursday) */
	int dow = (int)(((days % 7) + 11) % 7);

	civil_from_days(days, &y, &m, &d);
	switch (u) {
	case TSD_CAL_MS:
		/* the top of the second, or of the minute */
		start = wall - (1000 % n == 0 ? tod % 1000 : tod % 60000);
		break;
	case TSD_CAL_SECOND:
		/* the top of the minute, or of the hour */
		start = wall - (60 % n == 0 ? tod % 60000 : tod % 3600000);
		break;
	case TSD_CAL_MINUTE:
		/* the top of the hour, or of the day */
		start = wall - (60 % n == 0 ? tod % 3600000 : tod);
		break;
	case TSD_CAL_HOUR:
		/* the top of the day, or of the month */
		start = 24 % n == 0 ? days * DAY_MS
				    : days_from_civil(y, m, 1) * DAY_MS;
		break;
	case TSD_CAL_DAY:
		/* the top of the month, or of the year */
		start = days_from_civil(y, n == 1 ? m : 1, 1) * DAY_MS;
		break;
	case TSD_CAL_WEEK:
		/* Sunday of this week; for intervals 2 does not divide, the
		 * Sunday of the week of January 1st (Java resolves that
		 * case through its week fields; see docs/timeseries.md) */
		if (2 % n == 0) {
			start = (days - dow) * DAY_MS;
		} else {
			int64_t j1 = days_from_civil(y, 1, 1);
			start = (j1 - (int)(((j1 % 7) + 11) % 7)) * DAY_MS;
		}
		step = TSD_CAL_DAY;
		stepn = 7;
		break;
	default:		/* months, years: the top of the year */
		start = days_from_civil(y, 1, 1) * DAY_MS;
		break;
	}
	int64_t cal = from_wall(tz, start);
	if (cal == ts)
		return cal;
	/* step up past ts, then one back (DateTime.previousInterval) */
	while (cal <= ts)
		cal = tsd_cal_add(tz, cal, step, stepn);
	return tsd_cal_add(tz, cal, step, -stepn);
}
