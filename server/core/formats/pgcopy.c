#include "core/formats/pgcopy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/validate.h"
#include "core/formats/textnum.h"
#include "core/formats/timefmt.h"

void pgcopy_init(struct pgcopy_buf *b)
{
    memset(b, 0, sizeof *b);
}

void pgcopy_free(struct pgcopy_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void pgcopy_reset(struct pgcopy_buf *b)
{
    b->len = 0;
    b->oom = false;
}

bool pgcopy_ok(const struct pgcopy_buf *b)
{
    return !b->oom;
}

static void pgcopy_raw(struct pgcopy_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            b->oom = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
}

void pgcopy_append(struct pgcopy_buf *b, const char *s, size_t n)
{
    pgcopy_raw(b, s, n);
}

void pgcopy_tab(struct pgcopy_buf *b)
{
    pgcopy_raw(b, "\t", 1);
}

void pgcopy_end_row(struct pgcopy_buf *b)
{
    pgcopy_raw(b, "\n", 1);
}

void pgcopy_text(struct pgcopy_buf *b, const char *s)
{
    if (!s) {
        pgcopy_raw(b, "\\N", 2);
        return;
    }
    const char *run = s;
    for (const char *c = s; *c; c++) {
        const char *esc = NULL;
        switch (*c) {
        case '\\':
            esc = "\\\\";
            break;
        case '\t':
            esc = "\\t";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '\v':
            esc = "\\v";
            break;
        default:
            continue;
        }
        pgcopy_raw(b, run, (size_t)(c - run));
        pgcopy_raw(b, esc, 2);
        run = c + 1;
    }
    pgcopy_raw(b, run, strlen(run));
}

void pgcopy_double(struct pgcopy_buf *b, double v)
{
    if (!isfinite(v)) {
        pgcopy_raw(b, "\\N", 2);
        return;
    }
    char buf[TEXTNUM_DOUBLE_MAX_CHARS];
    textnum_format_double(v, buf);
    pgcopy_raw(b, buf, strlen(buf));
}

void pgcopy_time_ms(struct pgcopy_buf *b, int64_t epoch_ms, bool present)
{
    if (!present) {
        pgcopy_raw(b, "\\N", 2);
        return;
    }
    char buf[TIMEFMT_UTC_LEN];
    timefmt_format_utc_ms(epoch_ms, buf);
    pgcopy_raw(b, buf, strlen(buf));
}

static void put_be(struct pgcopy_buf *b, uint64_t v, size_t n)
{
    unsigned char out[8];
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
    pgcopy_raw(b, (const char *)out, n);
}

void pgcopy_bin_header(struct pgcopy_buf *b)
{
    pgcopy_raw(b, "PGCOPY\n\377\r\n\0", 11);
    put_be(b, 0, 4); /* flags: no OIDs */
    put_be(b, 0, 4); /* header extension length */
}

void pgcopy_bin_trailer(struct pgcopy_buf *b)
{
    put_be(b, 0xffff, 2);
}

void pgcopy_bin_row(struct pgcopy_buf *b, uint16_t nfields)
{
    put_be(b, nfields, 2);
}

void pgcopy_bin_null(struct pgcopy_buf *b)
{
    put_be(b, 0xffffffffu, 4);
}

void pgcopy_bin_text(struct pgcopy_buf *b, const char *s)
{
    if (!s) {
        pgcopy_bin_null(b);
        return;
    }
    size_t n = strlen(s);
    if (n > INT32_MAX) {
        b->oom = true;
        return;
    }
    put_be(b, n, 4);
    pgcopy_raw(b, s, n);
}

void pgcopy_bin_int8(struct pgcopy_buf *b, int64_t v)
{
    put_be(b, 8, 4);
    put_be(b, (uint64_t)v, 8);
}

void pgcopy_bin_set_int8(char *field, int64_t v)
{
    for (size_t i = 0; i < 8; i++)
        field[4 + i] = (char)(unsigned char)((uint64_t)v >> (8 * (7 - i)));
}

void pgcopy_bin_double(struct pgcopy_buf *b, double v)
{
    if (!isfinite(v)) {
        pgcopy_bin_null(b);
        return;
    }
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    put_be(b, 8, 4);
    put_be(b, bits, 8);
}

/* Seconds from 1970-01-01 to PostgreSQL's epoch, 2000-01-01 (UTC). */
#define PG_EPOCH_OFFSET_S INT64_C(946684800)

void pgcopy_bin_time_s(struct pgcopy_buf *b, int64_t epoch_s, bool present)
{
    if (!present) {
        pgcopy_bin_null(b);
        return;
    }
    int64_t us = (epoch_s - PG_EPOCH_OFFSET_S) * 1000000;
    put_be(b, 8, 4);
    put_be(b, (uint64_t)us, 8);
}

bool pgcopy_bin_uuid(struct pgcopy_buf *b, const char *text)
{
    unsigned char out[16];
    size_t k = 0;
    for (size_t i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (text[i] != '-')
                return false;
            continue;
        }
        int hi = hex_digit_value(text[i]), lo = hi < 0 ? -1 : hex_digit_value(text[i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[k++] = (unsigned char)(hi << 4 | lo);
        i++;
    }
    if (text[36] != '\0')
        return false;
    put_be(b, 16, 4);
    pgcopy_raw(b, (const char *)out, sizeof out);
    return true;
}
