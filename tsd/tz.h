/*
 * tz.h: time zones from the system's tz database (/usr/share/zoneinfo,
 * TZif files) and OpenTSDB's calendar intervals on them (DateTime.
 * previousInterval and java.util.Calendar.add, for calendar downsampling
 * "1dc", "1wc", "1nc", "1yc" with a "timezone=" query parameter).
 *
 * A zone is the list of its UTC offset changes; offsets after the last
 * change listed in the file (2037 in Debian's files) stay as they were
 * then.  Weeks begin on Sunday (Java's firstDayOfWeek in Locale.US, which
 * OpenTSDB's tests assume).  Pure once loaded; a zone is immutable and
 * may be shared by threads.
 */
#ifndef CF_TSD_TZ_H
#define CF_TSD_TZ_H

#include <stdint.h>

struct tsd_tz;

/* Loads zone name ("UTC", "America/Denver", "EST", ...) from
 * /usr/share/zoneinfo (or $TZDIR).  *out is the caller's until
 * tsd_tz_free().  CF_ENOTFOUND: no such zone (or a name with "..");
 * CF_ECORRUPT: not a TZif file; CF_ENOMEM. */
int tsd_tz_load(const char *name, struct tsd_tz **out);
void tsd_tz_free(struct tsd_tz *tz);

/* The offset from UTC in ms at instant utc_ms (NULL tz: UTC). */
int64_t tsd_tz_offset(const struct tsd_tz *tz, int64_t utc_ms);

/* Calendar units of a calendar interval. */
enum tsd_cal_unit {
	TSD_CAL_MS, TSD_CAL_SECOND, TSD_CAL_MINUTE, TSD_CAL_HOUR,
	TSD_CAL_DAY, TSD_CAL_WEEK, TSD_CAL_MONTH, TSD_CAL_YEAR
};

/* ts_ms + n units in tz as Java's Calendar.add does: units up to hours
 * add elapsed time, days and weeks keep the wall-clock time, months and
 * years keep the day of the month (the last day when it is shorter). */
int64_t tsd_cal_add(const struct tsd_tz *tz, int64_t ts_ms,
		    enum tsd_cal_unit unit, int64_t n);

/* DateTime.previousInterval: the start of the calendar interval of n
 * units that holds ts_ms (ts_ms >= 0, n >= 1), in tz. */
int64_t tsd_cal_previous(const struct tsd_tz *tz, int64_t ts_ms, int n,
			 enum tsd_cal_unit unit);

#endif
