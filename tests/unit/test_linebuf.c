/* Line splitter: chunk boundaries anywhere, CRLF, the maximum line length, NUL and invalid
 * UTF-8 reported with line and column, bounded memory for a 10 MB line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/formats/linebuf.h"

/* Everything a stream produced, one entry per pop that was not NEED_MORE, rendered as
 * "<status>:<lineno>:<column>:<text>" and joined by '|', so a test compares one string. */
static char *drain(struct linebuf *lb, char *acc, size_t *acc_len, size_t cap)
{
    struct linebuf_line line;
    enum linebuf_status st;
    while ((st = linebuf_pop(lb, &line)) != LINEBUF_NEED_MORE) {
        int n;
        if (st == LINEBUF_LINE)
            n = snprintf(acc + *acc_len, cap - *acc_len, "L:%ld:%.*s|", line.lineno, (int)line.len,
                         line.text);
        else if (st == LINEBUF_TOO_LONG)
            n = snprintf(acc + *acc_len, cap - *acc_len, "LONG:%ld|", line.lineno);
        else
            n = snprintf(acc + *acc_len, cap - *acc_len, "BAD:%ld:%ld:%s|", line.lineno,
                         line.column, line.is_nul ? "nul" : "utf8");
        assert_true(n > 0 && (size_t)n < cap - *acc_len);
        *acc_len += (size_t)n;
    }
    return acc;
}

static char *split(const char *text, size_t len, size_t chunk, size_t max_line)
{
    static char acc[8192];
    size_t acc_len = 0;
    acc[0] = '\0';
    struct linebuf lb;
    linebuf_init(&lb, max_line);
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        assert_int_equal(linebuf_push(&lb, text + off, n), 0);
        drain(&lb, acc, &acc_len, sizeof acc);
    }
    linebuf_finish(&lb);
    drain(&lb, acc, &acc_len, sizeof acc);
    linebuf_free(&lb);
    return acc;
}

static void test_every_chunk_size_gives_the_same_lines(void **state)
{
    (void)state;
    const char text[] = "\xEF\xBB\xBFJobID|State\r\n1|COMPLETED\n\n2|FAILED\r\n3|caf\xC3\xA9 "
                        "\xE2\x82\xAC \xF0\x9F\x98\x82";
    const char *expected = "L:1:JobID|State|L:2:1|COMPLETED|L:3:|L:4:2|FAILED|L:5:3|caf\xC3\xA9 "
                           "\xE2\x82\xAC \xF0\x9F\x98\x82|";
    for (size_t chunk = 1; chunk <= sizeof text; chunk++)
        assert_string_equal(split(text, sizeof text - 1, chunk, 0), expected);
}

static void test_lone_cr_inside_a_line_is_kept(void **state)
{
    (void)state;
    assert_string_equal(split("a\rb\n", 4, 1, 0), "L:1:a\rb|");
}

static void test_overlong_line_is_reported_once_and_skipped(void **state)
{
    (void)state;
    const char text[] = "short\n0123456789abcdefXYZ\nok\n0123456789abcdefg";
    const char *expected = "L:1:short|LONG:2|L:3:ok|LONG:4|";
    for (size_t chunk = 1; chunk <= sizeof text; chunk++)
        assert_string_equal(split(text, sizeof text - 1, chunk, 16), expected);
    /* exactly the maximum is accepted, with or without CR */
    assert_string_equal(split("0123456789abcdef\r\n0123456789abcdef", 34, 5, 16),
                        "L:1:0123456789abcdef|L:2:0123456789abcdef|");
    /* fuzz_linebuf (corpus/linebuf/bom_at_max): the byte order mark, which is dropped, does not
     * count against the first line's maximum, in any chunk size; three more bytes do. */
    for (size_t chunk = 1; chunk <= 22; chunk++) {
        assert_string_equal(split("\xEF\xBB\xBF"
                                  "0123456789abcdef\r\nx",
                                  22, chunk, 16),
                            "L:1:0123456789abcdef|L:2:x|");
        assert_string_equal(split("\xEF\xBB\xBF"
                                  "0123456789abcdefg\nx",
                                  22, chunk, 16),
                            "LONG:1|L:2:x|");
    }
}

static void test_invalid_utf8_and_nul_name_line_and_column(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t len;
        const char *expected;
    } cases[] = {
        {"ok\nab\xC3(\n", 7, "L:1:ok|BAD:2:3:utf8|"}, /* bad continuation */
        {"\xC0\xAF\n", 3, "BAD:1:1:utf8|"},           /* overlong '/' */
        {"x\xE0\x80\xAF\n", 5, "BAD:1:2:utf8|"},      /* overlong 3-byte */
        {"\xED\xA0\x80\n", 4, "BAD:1:1:utf8|"},       /* surrogate U+D800 */
        {"\xF4\x90\x80\x80\n", 5, "BAD:1:1:utf8|"},   /* above U+10FFFF */
        {"\xF5\n", 2, "BAD:1:1:utf8|"},               /* never valid */
        {"\x80\n", 2, "BAD:1:1:utf8|"},               /* lone continuation */
        {"abc\xE2\x82", 5, "BAD:1:4:utf8|"},          /* truncated at the end */
        {"a\0b\nc\n", 6, "BAD:1:2:nul|L:2:c|"},       /* NUL byte */
        {"\xF0\x9F\x98\x82\xEF\xBF\xBF\n", 8, "L:1:\xF0\x9F\x98\x82\xEF\xBF\xBF|"}, /* valid */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (size_t chunk = 1; chunk <= cases[i].len; chunk++)
            assert_string_equal(split(cases[i].bytes, cases[i].len, chunk, 0), cases[i].expected);
}

static void test_ten_megabyte_line_costs_no_memory(void **state)
{
    (void)state;
    const size_t big = 10u << 20, chunk = 65536;
    char *block = malloc(chunk);
    assert_non_null(block);
    memset(block, 'x', chunk);
    struct linebuf lb;
    linebuf_init(&lb, 0);
    struct problems errs;
    problems_init(&errs);
    assert_int_equal(linebuf_push(&lb, "head\n", 5), 0);
    size_t lines = 0, cap_peak = 0;
    for (size_t off = 0; off < big; off += chunk) {
        assert_int_equal(linebuf_push(&lb, block, chunk), 0);
        struct linebuf_line line;
        enum linebuf_status st;
        while ((st = linebuf_pop(&lb, &line)) != LINEBUF_NEED_MORE) {
            linebuf_report(&lb, st, &line, &errs);
            lines += st == LINEBUF_LINE;
        }
        cap_peak = lb.cap > cap_peak ? lb.cap : cap_peak;
    }
    assert_int_equal(linebuf_push(&lb, "\ntail\n", 6), 0);
    linebuf_finish(&lb);
    struct linebuf_line line;
    enum linebuf_status st;
    char last[16] = "";
    while ((st = linebuf_pop(&lb, &line)) != LINEBUF_NEED_MORE) {
        linebuf_report(&lb, st, &line, &errs);
        if (st == LINEBUF_LINE) {
            lines++;
            snprintf(last, sizeof last, "%ld:%s", line.lineno, line.text);
        }
    }
    assert_int_equal(lines, 2);
    assert_string_equal(last, "3:tail");
    assert_int_equal(errs.total, 1);
    assert_int_equal(errs.items[0].line, 2);
    assert_string_equal(errs.items[0].message, "line 2 is longer than 1048576 bytes");
    /* the buffer never held more than the maximum line plus a chunk (doubling growth: x2) */
    assert_true(cap_peak <= 2 * (LINEBUF_DEFAULT_MAX_LINE_BYTES + 2 * chunk));
    problems_free(&errs);
    linebuf_free(&lb);
    free(block);
}

static void test_report_messages(void **state)
{
    (void)state;
    struct linebuf lb;
    linebuf_init(&lb, 0);
    struct problems errs;
    problems_init(&errs);
    assert_int_equal(linebuf_push(&lb, "ok\nb\xFFz\n", 7), 0);
    struct linebuf_line line;
    enum linebuf_status st;
    while ((st = linebuf_pop(&lb, &line)) != LINEBUF_NEED_MORE)
        linebuf_report(&lb, st, &line, &errs);
    assert_int_equal(errs.count, 1);
    assert_int_equal(errs.items[0].line, 2);
    assert_int_equal(errs.items[0].column, 2);
    assert_string_equal(errs.items[0].message, "line 2 is not valid UTF-8 at byte 2");
    problems_free(&errs);
    linebuf_free(&lb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_chunk_size_gives_the_same_lines),
        cmocka_unit_test(test_lone_cr_inside_a_line_is_kept),
        cmocka_unit_test(test_overlong_line_is_reported_once_and_skipped),
        cmocka_unit_test(test_invalid_utf8_and_nul_name_line_and_column),
        cmocka_unit_test(test_ten_megabyte_line_costs_no_memory),
        cmocka_unit_test(test_report_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
