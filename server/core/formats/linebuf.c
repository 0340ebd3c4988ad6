#include "core/formats/linebuf.h"

#include <stdlib.h>
#include <string.h>

void linebuf_init(struct linebuf *lb, size_t max_line_bytes)
{
    memset(lb, 0, sizeof *lb);
    lb->max_line = max_line_bytes ? max_line_bytes : LINEBUF_DEFAULT_MAX_LINE_BYTES;
    lb->lineno = 1;
}

void linebuf_free(struct linebuf *lb)
{
    free(lb->buf);
    memset(lb, 0, sizeof *lb);
}

/* While an overlong line is being skipped its bytes are dropped straight from the chunk, so a
 * 10 MB line costs no memory. Returns how many bytes of data were consumed. */
static size_t linebuf_skip_chunk(struct linebuf *lb, const char *data, size_t len)
{
    const char *lf = memchr(data, '\n', len);
    if (!lf)
        return len;
    lb->skipping = false;
    lb->lineno++;
    return (size_t)(lf - data) + 1;
}

int linebuf_push(struct linebuf *lb, const void *data, size_t len)
{
    if (lb->oom)
        return -1;
    const char *bytes = data;
    if (lb->skipping && lb->start == lb->len) {
        size_t used = linebuf_skip_chunk(lb, bytes, len);
        bytes += used;
        len -= used;
    }
    if (lb->start > 0) { /* compact: popped lines are gone */
        memmove(lb->buf, lb->buf + lb->start, lb->len - lb->start);
        lb->len -= lb->start;
        lb->start = 0;
    }
    if (len == 0)
        return 0;
    /* one spare byte so a final unterminated line can be NUL-terminated in place */
    if (lb->len + len + 1 > lb->cap) {
        size_t cap = lb->cap ? lb->cap : 4096;
        while (cap < lb->len + len + 1)
            cap *= 2;
        char *grown = realloc(lb->buf, cap);
        if (!grown) {
            lb->oom = true;
            return -1;
        }
        lb->buf = grown;
        lb->cap = cap;
    }
    memcpy(lb->buf + lb->len, bytes, len);
    lb->len += len;
    return 0;
}

void linebuf_finish(struct linebuf *lb)
{
    lb->finished = true;
}

size_t linebuf_utf8_check(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        if (c >= 0x01 && c < 0x80) {
            i++;
            continue;
        }
        size_t need;
        unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0)
                lo = 0xA0; /* overlong */
            else if (c == 0xED)
                hi = 0x9F; /* UTF-16 surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0)
                lo = 0x90; /* overlong */
            else if (c == 0xF4)
                hi = 0x8F; /* above U+10FFFF */
        } else {
            return i; /* NUL, a continuation byte, C0/C1 overlong leads, F5..FF */
        }
        if (i + need >= len)
            return i; /* truncated sequence */
        if (s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t k = 2; k <= need; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
        i += need + 1;
    }
    return len;
}

/* Hands out buf[begin, end) as a line (end excludes the LF); consumes through `next`. */
static enum linebuf_status linebuf_emit(struct linebuf *lb, size_t begin, size_t end, size_t next,
                                        struct linebuf_line *out)
{
    long lineno = lb->lineno++;
    lb->start = next;
    lb->scanned = 0;
    if (end > begin && lb->buf[end - 1] == '\r')
        end--;
    if (lineno == 1 && end - begin >= 3 && memcmp(lb->buf + begin, "\xEF\xBB\xBF", 3) == 0)
        begin += 3;
    *out = (struct linebuf_line){.text = lb->buf + begin, .len = end - begin, .lineno = lineno};
    if (out->len > lb->max_line)
        return LINEBUF_TOO_LONG;
    size_t bad = linebuf_utf8_check((const unsigned char *)out->text, out->len);
    lb->buf[end] = '\0';
    if (bad < out->len) {
        out->column = (long)bad + 1;
        out->is_nul = out->text[bad] == '\0';
        return LINEBUF_BAD_BYTES;
    }
    return LINEBUF_LINE;
}

enum linebuf_status linebuf_pop(struct linebuf *lb, struct linebuf_line *out)
{
    while (lb->start < lb->len) {
        size_t from = lb->start + lb->scanned;
        char *lf = memchr(lb->buf + from, '\n', lb->len - from);
        if (lf) {
            size_t end = (size_t)(lf - lb->buf);
            if (lb->skipping) { /* the tail of a line already reported */
                lb->skipping = false;
                lb->lineno++;
                lb->start = end + 1;
                lb->scanned = 0;
                continue;
            }
            return linebuf_emit(lb, lb->start, end, end + 1, out);
        }
        size_t held = lb->len - lb->start;
        if (lb->skipping) {
            lb->start = lb->len;
            break;
        }
        /* Too long for certain, before its end arrives: + 1 as a CR may still be stripped, and
         * + 3 for the first line's byte order mark, which linebuf_emit drops (fuzz_linebuf: in
         * 1-byte chunks a first line of exactly max_line bytes after a BOM was refused). */
        size_t slack = 1;
        if (lb->lineno == 1 && held >= 3 && memcmp(lb->buf + lb->start, "\xEF\xBB\xBF", 3) == 0)
            slack += 3;
        if (held > lb->max_line + slack) {
            *out = (struct linebuf_line){
                .text = lb->buf + lb->start, .len = held, .lineno = lb->lineno};
            lb->skipping = true;
            lb->start = lb->len;
            lb->scanned = 0;
            return LINEBUF_TOO_LONG;
        }
        if (lb->finished)
            return linebuf_emit(lb, lb->start, lb->len, lb->len, out);
        lb->scanned = held;
        return LINEBUF_NEED_MORE;
    }
    if (lb->finished && lb->skipping) {
        lb->skipping = false;
        lb->lineno++;
    }
    return LINEBUF_NEED_MORE;
}

void linebuf_report(const struct linebuf *lb, enum linebuf_status status,
                    const struct linebuf_line *line, struct problems *errs)
{
    if (status == LINEBUF_TOO_LONG)
        problems_add_line(errs, line->lineno, 0, NULL, "line %ld is longer than %zu bytes",
                          line->lineno, lb->max_line);
    else if (status == LINEBUF_BAD_BYTES)
        problems_add_line(errs, line->lineno, line->column, NULL,
                          line->is_nul ? "line %ld has a NUL byte at byte %ld"
                                       : "line %ld is not valid UTF-8 at byte %ld",
                          line->lineno, line->column);
}
