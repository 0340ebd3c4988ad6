#include "core/formats/timefmt.h"

#include <stdio.h>
#include <string.h>

static bool timefmt_digits(const char *s, size_t n, int *out)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

static int timefmt_days_in_month(int year, int month)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : days[month - 1];
}

bool timefmt_date_valid(const char *s)
{
    int y, m, d;
    return s && strlen(s) == 10 && s[4] == '-' && s[7] == '-' && timefmt_digits(s, 4, &y) &&
           timefmt_digits(s + 5, 2, &m) && timefmt_digits(s + 8, 2, &d) && y >= 1 && m >= 1 &&
           m <= 12 && d >= 1 && d <= timefmt_days_in_month(y, m);
}

bool timefmt_parse(const char *s, size_t len, struct timefmt_fields *out)
{
    struct timefmt_fields f = {0};
    if (len < 19)
        return false;
    char date_sep = s[4];
    if ((date_sep != '-' && date_sep != '/') || s[7] != date_sep ||
        (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
        return false;
    if (!timefmt_digits(s, 4, &f.year) || !timefmt_digits(s + 5, 2, &f.month) ||
        !timefmt_digits(s + 8, 2, &f.day) || !timefmt_digits(s + 11, 2, &f.hour) ||
        !timefmt_digits(s + 14, 2, &f.minute) || !timefmt_digits(s + 17, 2, &f.second))
        return false;
    size_t i = 19;
    if (i < len && s[i] == '.') {
        size_t digits = 0;
        int scale = 100;
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
            f.millis += (s[i] - '0') * scale;
            scale /= 10;
        }
        if (digits == 0)
            return false;
    }
    if (i < len) {
        if ((s[i] == 'Z' || s[i] == 'z') && i + 1 == len) {
            f.has_offset = true;
        } else if (s[i] == '+' || s[i] == '-') {
            int oh = 0, om = 0;
            size_t rest = len - i - 1;
            const char *o = s + i + 1;
            bool ok = (rest == 5 && o[2] == ':' && timefmt_digits(o, 2, &oh) &&
                       timefmt_digits(o + 3, 2, &om)) ||
                      (rest == 4 && timefmt_digits(o, 2, &oh) && timefmt_digits(o + 2, 2, &om));
            if (!ok)
                return false;
            if (oh > 23 || om > 59)
                return false;
            f.has_offset = true;
            f.offset_s = (s[i] == '-' ? -1 : 1) * (oh * 3600 + om * 60);
        } else {
            return false;
        }
    }
    /* year 0000 does not exist (ISO 8601's proleptic year 0 is 1 BC; PostgreSQL refuses it) */
    if (f.year < 1 || f.month < 1 || f.month > 12 || f.day < 1 ||
        f.day > timefmt_days_in_month(f.year, f.month) || f.hour > 23 || f.minute > 59 ||
        f.second > 60)
        return false;
    *out = f;
    return true;
}

int64_t timefmt_days_from_civil(int year, int month, int day)
{
    /* Howard Hinnant's days_from_civil */
    int64_t y = (int64_t)year - (month <= 2);
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t mp = (month + 9) % 12;
    int64_t doy = (153 * mp + 2) / 5 + day - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int timefmt_resolve_ms(const struct timefmt_fields *f, timefmt_local_to_utc_fn local_to_utc,
                       void *ctx, int64_t *epoch_ms)
{
    int64_t epoch_s;
    if (f->has_offset || !local_to_utc) {
        epoch_s = timefmt_days_from_civil(f->year, f->month, f->day) * 86400 + f->hour * 3600 +
                  f->minute * 60 + f->second - (f->has_offset ? f->offset_s : 0);
    } else {
        struct tm local = {.tm_year = f->year - 1900,
                           .tm_mon = f->month - 1,
                           .tm_mday = f->day,
                           .tm_hour = f->hour,
                           .tm_min = f->minute,
                           .tm_sec = f->second,
                           .tm_isdst = -1};
        if (local_to_utc(&local, ctx, &epoch_s) != 0)
            return -1;
    }
    *epoch_ms = epoch_s * 1000 + f->millis;
    return 0;
}

const char *timefmt_format_utc_ms(int64_t epoch_ms, char *buf)
{
    int64_t ms = epoch_ms % 1000;
    int64_t secs = epoch_ms / 1000;
    if (ms < 0) {
        ms += 1000;
        secs--;
    }
    int64_t days = secs / 86400, rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    /* Howard Hinnant's civil_from_days */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t day = doy - (153 * mp + 2) / 5 + 1;
    int64_t month = mp < 10 ? mp + 3 : mp - 9;
    int64_t year = yoe + era * 400 + (month <= 2);
    if (year < 1 || year > 9999) { /* outside RFC 3339 and PostgreSQL's years: clamp */
        strcpy(buf, year < 1 ? "0001-01-01T00:00:00Z" : "9999-12-31T23:59:59Z");
        return buf;
    }
    /* digits by hand: this runs once per timestamp of a million-row COPY */
    int fields[6] = {
        (int)year,      (int)month, (int)day, (int)(rem / 3600), (int)(rem % 3600 / 60),
        (int)(rem % 60)};
    static const char seps[6] = {'-', '-', 'T', ':', ':', '\0'};
    char *p = buf;
    for (int i = 0; i < 6; i++) {
        int v = fields[i];
        if (i == 0) {
            *p++ = (char)('0' + v / 1000);
            *p++ = (char)('0' + v / 100 % 10);
        }
        *p++ = (char)('0' + v / 10 % 10);
        *p++ = (char)('0' + v % 10);
        if (seps[i])
            *p++ = seps[i];
    }
    if (ms) {
        *p++ = '.';
        *p++ = (char)('0' + ms / 100);
        *p++ = (char)('0' + ms / 10 % 10);
        *p++ = (char)('0' + ms % 10);
    }
    *p++ = 'Z';
    *p = '\0';
    return buf;
}
