#include "core/formats/pgcopy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
