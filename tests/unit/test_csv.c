/* CSV line splitting (RFC 4180 quoting within one line) and cell conversion: what a price
 * sheet's author sees as cells, and the line/column a fault is reported at. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/formats/csv.h"

/* Splits s (strlen) and checks the cells against want[0..n). */
static void expect_cells(struct csv_row *row, const char *s, char delim, const char *const *want,
                         size_t n)
{
    long bad = 0;
    assert_int_equal(csv_split(row, s, strlen(s), delim, &bad), 0);
    assert_int_equal(row->n, n);
    for (size_t c = 0; c < n; c++) {
        assert_int_equal(row->len[c], strlen(want[c]));
        assert_string_equal(row->cell[c], want[c]);
    }
}

static long expect_refusal(const char *s, size_t len)
{
    struct csv_row row;
    csv_row_init(&row);
    long bad = 0;
    assert_int_equal(csv_split(&row, s, len, ',', &bad), -1);
    csv_row_free(&row);
    return bad;
}

static void test_plain_and_quoted(void **state)
{
    (void)state;
    struct csv_row row;
    csv_row_init(&row);
    expect_cells(&row, "name,price_per_hour,currency", ',',
                 (const char *const[]){"name", "price_per_hour", "currency"}, 3);
    /* The delimiter inside quotes is text; "" is one quote; spaces are kept. */
    expect_cells(&row, "\"l4, dedicated\",\"say \"\"hi\"\"\", 0.80 ", ',',
                 (const char *const[]){"l4, dedicated", "say \"hi\"", " 0.80 "}, 3);
    /* A quote inside an unquoted cell is an ordinary character. */
    expect_cells(&row, "a\"b,c", ',', (const char *const[]){"a\"b", "c"}, 2);
    expect_cells(&row, "a;b,c;\"d;e\"", ';', (const char *const[]){"a", "b,c", "d;e"}, 3);
    csv_row_free(&row);
}

static void test_empty_cells(void **state)
{
    (void)state;
    struct csv_row row;
    csv_row_init(&row);
    expect_cells(&row, "", ',', (const char *const[]){""}, 1);
    expect_cells(&row, "a,", ',', (const char *const[]){"a", ""}, 2); /* trailing delimiter */
    expect_cells(&row, ",,", ',', (const char *const[]){"", "", ""}, 3);
    expect_cells(&row, "\"\",x", ',', (const char *const[]){"", "x"}, 2);
    csv_row_free(&row);
}

static void test_faults_name_the_cell(void **state)
{
    (void)state;
    assert_int_equal(expect_refusal("a,\"open", 7), 2);          /* unterminated quote */
    assert_int_equal(expect_refusal("a,b,\"x\"y", 9), 3);        /* text after the closing quote */
    assert_int_equal(expect_refusal("\"ends with \"\"", 13), 1); /* "" is a quote, not the end */
    /* A quoted cell cannot continue on the next line: the caller splits lines first, so a
     * newline only arrives here when the line splitter was bypassed, and is then plain text. */
    struct csv_row row;
    csv_row_init(&row);
    expect_cells(&row, "\"a\nb\",c", ',', (const char *const[]){"a\nb", "c"}, 2);

    char many[CSV_MAX_CELLS * 2 + 1];
    for (size_t i = 0; i < CSV_MAX_CELLS * 2; i += 2) {
        many[i] = 'x';
        many[i + 1] = ',';
    }
    long bad = 0;
    /* CSV_MAX_CELLS cells followed by a delimiter: one more (empty) cell than allowed. */
    assert_int_equal(csv_split(&row, many, CSV_MAX_CELLS * 2, ',', &bad), -1);
    assert_int_equal(bad, CSV_MAX_CELLS + 1);
    assert_int_equal(csv_split(&row, many, CSV_MAX_CELLS * 2 - 1, ',', &bad), 0);
    assert_int_equal(row.n, CSV_MAX_CELLS);
    csv_row_free(&row);
}

static void test_long_cells_and_raw_bytes(void **state)
{
    (void)state;
    struct csv_row row;
    csv_row_init(&row);
    /* A 1 MiB quoted cell after a short line: the scratch space grows and the earlier split
     * does not limit the later one. */
    expect_cells(&row, "a", ',', (const char *const[]){"a"}, 1);
    size_t big = (size_t)1 << 20;
    char *line = malloc(big + 4);
    assert_non_null(line);
    line[0] = '"';
    memset(line + 1, 'q', big);
    line[big + 1] = '"';
    line[big + 2] = ',';
    line[big + 3] = 'z';
    long bad = 0;
    assert_int_equal(csv_split(&row, line, big + 4, ',', &bad), 0);
    assert_int_equal(row.n, 2);
    assert_int_equal(row.len[0], big);
    assert_int_equal(row.cell[0][big - 1], 'q');
    assert_string_equal(row.cell[1], "z");
    free(line);

    /* Bytes are copied as they are: a NUL stays in the cell (len counts it) and invalid UTF-8
     * is not judged here — core/linebuf refuses both before a line reaches the splitter. */
    static const char raw[] = {'a', '\0', 'b', ',', '\xff', '\xc0'};
    assert_int_equal(csv_split(&row, raw, sizeof raw, ',', &bad), 0);
    assert_int_equal(row.n, 2);
    assert_int_equal(row.len[0], 3);
    assert_memory_equal(row.cell[0], "a\0b", 3);
    assert_int_equal(row.len[1], 2);
    assert_memory_equal(row.cell[1], "\xff\xc0", 2);
    csv_row_free(&row);
}

static void test_cell_values(void **state)
{
    (void)state;
    json_t *v = csv_cell_json(" 42 ", 4, CSV_CELL_INTEGER);
    assert_true(json_is_integer(v));
    assert_int_equal(json_integer_value(v), 42);
    json_decref(v);
    v = csv_cell_json("0.80", 4, CSV_CELL_INTEGER); /* not an integer: left for the validator */
    assert_true(json_is_string(v));
    json_decref(v);
    v = csv_cell_json("0.80", 4, CSV_CELL_NUMBER);
    assert_true(json_is_real(v));
    assert_true(json_real_value(v) == 0.80);
    json_decref(v);
    v = csv_cell_json("-7", 2, CSV_CELL_NUMBER);
    assert_true(json_is_integer(v));
    json_decref(v);
    v = csv_cell_json("1e309", 5, CSV_CELL_NUMBER); /* overflow: not a figure */
    assert_true(json_is_string(v));
    json_decref(v);
    v = csv_cell_json("1,146.31", 8, CSV_CELL_NUMBER);
    assert_true(json_is_string(v));
    json_decref(v);
    assert_ptr_equal(csv_cell_json("YES", 3, CSV_CELL_BOOL), json_true());
    assert_ptr_equal(csv_cell_json("0", 1, CSV_CELL_BOOL), json_false());
    v = csv_cell_json("maybe", 5, CSV_CELL_BOOL);
    assert_string_equal(json_string_value(v), "maybe");
    json_decref(v);
    v = csv_cell_json("12", 2, CSV_CELL_TEXT);
    assert_string_equal(json_string_value(v), "12");
    json_decref(v);
    assert_null(csv_cell_json(" \t ", 3, CSV_CELL_NUMBER)); /* empty: an absent field */
    assert_null(csv_cell_json("\xff", 1, CSV_CELL_TEXT));   /* not UTF-8: jansson refuses it */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_and_quoted),
        cmocka_unit_test(test_empty_cells),
        cmocka_unit_test(test_faults_name_the_cell),
        cmocka_unit_test(test_long_cells_and_raw_bytes),
        cmocka_unit_test(test_cell_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
