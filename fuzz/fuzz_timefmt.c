/* Fuzz target for core/timefmt, the timestamp parser of sacct, nvidia-smi, DCGM and the
 * evidence fields. A time that parses has fields in range and resolves (as UTC, and through a
 * local-time callback that refuses some times as a DST gap would) to epoch milliseconds whose
 * RFC 3339 rendering parses back to the same instant. The first 8 bytes, read as epoch
 * milliseconds within years 0000-9999, must render and parse back exactly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats/timefmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A zone at UTC+05:30 in which 02:xx local does not exist. */
static int fixed_zone(const struct tm *local, void *ctx, int64_t *epoch_s)
{
    (void)ctx;
    if (local->tm_hour == 2)
        return 1;
    int64_t days =
        timefmt_days_from_civil(local->tm_year + 1900, local->tm_mon + 1, local->tm_mday);
    *epoch_s = days * 86400 + local->tm_hour * 3600 + local->tm_min * 60 + local->tm_sec - 19800;
    return 0;
}

static void check_rendering(int64_t ms)
{
    char buf[TIMEFMT_UTC_LEN];
    const char *text = timefmt_format_utc_ms(ms, buf);
    size_t n = strnlen(text, sizeof buf);
    struct timefmt_fields f;
    int64_t back;
    if (n == sizeof buf || !timefmt_parse(text, n, &f) || !f.has_offset || f.offset_s != 0 ||
        timefmt_resolve_ms(&f, NULL, NULL, &back) != 0 || back != ms)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const int64_t first_ms = timefmt_days_from_civil(0, 1, 1) * 86400000;
    const int64_t end_ms = timefmt_days_from_civil(10000, 1, 1) * 86400000;
    if (size >= sizeof(int64_t)) {
        int64_t raw;
        memcpy(&raw, data, sizeof raw);
        if (raw >= first_ms && raw < end_ms)
            check_rendering(raw);
    }
    struct timefmt_fields f;
    if (!timefmt_parse((const char *)data, size, &f))
        return 0;
    if (f.month < 1 || f.month > 12 || f.day < 1 || f.day > 31 || f.hour < 0 || f.hour > 23 ||
        f.minute < 0 || f.minute > 59 || f.second < 0 || f.second > 60 || f.millis < 0 ||
        f.millis > 999)
        abort();
    int64_t ms;
    if (timefmt_resolve_ms(&f, NULL, NULL, &ms) != 0)
        abort(); /* UTC refuses nothing */
    if (ms >= first_ms && ms < end_ms)
        check_rendering(ms);
    int64_t local_ms;
    int rc = timefmt_resolve_ms(&f, fixed_zone, NULL, &local_ms);
    if (f.has_offset ? rc != 0 || local_ms != ms : rc == 0 && local_ms != ms - 19800000)
        abort();
    return 0;
}
