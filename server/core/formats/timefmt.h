/* Timestamps as the tools print them, and RFC 3339 UTC as capledger stores them.
 *
 * Parsing accepts "YYYY-MM-DDTHH:MM:SS" (sacct), the same with a space for the T or with '/'
 * between date parts ("2024/03/13 07:04:28.836", nvidia-smi), an optional fraction, and an
 * optional offset ("Z", "+02:00", "+0200"). A time without an offset is local to some zone the
 * caller knows: converting it needs the zone database, which is I/O, so core takes a callback
 * (the HTTP layer implements it with TZ and mktime) and treats a NULL callback as UTC. Epoch
 * arithmetic is done here by the civil-from-days algorithm, not timegm, so it is pure and
 * valid for every year 0000-9999. */
#ifndef CAPLEDGER_CORE_TIMEFMT_H
#define CAPLEDGER_CORE_TIMEFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define TIMEFMT_UTC_LEN 25 /* "2025-09-12T14:06:12.123Z" + NUL */

struct timefmt_fields {
    int year, month, day, hour, minute, second;
    int millis;      /* fraction, truncated to milliseconds */
    bool has_offset; /* "Z" or ±hh:mm was given */
    int offset_s;    /* east of UTC */
};

/* Converts a local wall-clock time (tm_year, tm_mon, tm_mday, tm_hour, tm_min, tm_sec as in
 * struct tm; tm_isdst = -1) to UTC epoch seconds. Returns 0, or non-zero when the time does not
 * exist in the zone. */
typedef int (*timefmt_local_to_utc_fn)(const struct tm *local, void *ctx, int64_t *epoch_s);

/* Whole of s[0..len) must be a timestamp in one of the forms above, with valid ranges. */
bool timefmt_parse(const char *s, size_t len, struct timefmt_fields *out)
    __attribute__((warn_unused_result));

/* True when s is a calendar date "YYYY-MM-DD" (year 0001-9999, the day within its month, leap
 * years counted): the form of a review's started_on and an artifact's due_on. */
bool timefmt_date_valid(const char *s) __attribute__((warn_unused_result));

/* Days since 1970-01-01 of a proleptic Gregorian date. */
int64_t timefmt_days_from_civil(int year, int month, int day);

/* Epoch milliseconds: with the offset when given, else through local_to_utc (NULL → UTC).
 * Returns 0, or -1 when the callback refuses the time. */
int timefmt_resolve_ms(const struct timefmt_fields *f, timefmt_local_to_utc_fn local_to_utc,
                       void *ctx, int64_t *epoch_ms) __attribute__((warn_unused_result));

/* "2025-09-12T14:06:12Z" (seconds) or "2025-09-12T14:06:12.123Z" when epoch_ms has a fraction.
 * buf needs TIMEFMT_UTC_LEN bytes. Returns buf. */
const char *timefmt_format_utc_ms(int64_t epoch_ms, char *buf);

#endif
