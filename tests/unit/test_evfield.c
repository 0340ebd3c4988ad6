/* The field tables (core/formats/evfield.h): the types and wordings that the resources outside
 * evidence (reviews, users, teams, webhooks, decisions, scenarios) validate with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include "core/formats/evfield.h"
#include "core/validate.h"

#define END_OF_TABLE                                                                               \
    {                                                                                              \
        NULL, 0, 0, 0, 0, 0, NULL, NULL                                                            \
    }

static const char *const COLOURS[] = {"red", "green", NULL};

static const struct evfield ID_ITEM[] = {
    {"id", EVF_UUID, EVF_MSG_ALL, 0, 0, 0, EVF_WORDS("must be a thing id"), NULL},
    END_OF_TABLE,
};

static const struct evfield PART[] = {
    {"label", EVF_TEXT, EVF_REQUIRED, 0, 0, 5, NULL, NULL},
    END_OF_TABLE,
};

static const struct evfield FIELDS[] = {
    {"title", EVF_TEXT, EVF_REQUIRED, 0, 0, 8, NULL, NULL},
    {"note", EVF_TEXT, 0, 0, 0, 8, NULL, NULL},
    {"owner", EVF_HANDLE, EVF_REQUIRED, 0, 0, 0, EVF_WORDS("must be a username"), NULL},
    {"team", EVF_HANDLE, 0, 0, 0, 0, NULL, NULL},
    {"on", EVF_DATE, 0, 0, 0, 0, NULL, NULL},
    {"colour", EVF_ENUM, EVF_QUOTE, 0, 0, 0, COLOURS, NULL},
    {"ids", EVF_LIST, EVF_MSG_ALL | EVF_UNIQUE, 1, 0, 3,
     EVF_WORDS("must be an array of 1 to 3 thing ids"), ID_ITEM},
    {"parts", EVF_ARRAY, 0, 0, 0, 2, EVF_WORDS("must be at most 2 parts", "must be a part {label}"),
     PART},
    {"record", EVF_ANY, EVF_MSG_ALL, 0, 0, 0, EVF_WORDS("must be the record"), NULL},
    {"ratio", EVF_NUMBER, EVF_MIN_EXCLUSIVE | EVF_MSG_ALL, 0, 10, 0,
     EVF_WORDS("must be above 0 and at most 10"), NULL},
    {"id", EVF_STRING, EVF_SERVER, 0, 0, 0, NULL, NULL},
    END_OF_TABLE,
};

#define A "123e4567-e89b-12d3-a456-426614174000"

/* Checks doc (JSON text) and compares the problems with want: "pointer message" lines. */
static void expect(const char *doc, const char *const *want)
{
    json_error_t err;
    json_t *obj = json_loads(doc, 0, &err);
    assert_non_null(obj);
    struct problems p;
    problems_init(&p);
    evfield_check(obj, FIELDS, "", 0, NULL, &p);
    size_t n = 0;
    while (want[n])
        n++;
    for (size_t i = 0; i < p.count && i < n; i++) {
        char line[600];
        snprintf(line, sizeof line, "%s %s", p.items[i].pointer, p.items[i].message);
        assert_string_equal(line, want[i]);
    }
    assert_int_equal(p.total, n);
    problems_free(&p);
    json_decref(obj);
}

static void test_valid_document(void **state)
{
    (void)state;
    static const char *const none[] = {NULL};
    expect("{\"title\":\"t\",\"note\":\"\",\"owner\":\"ann.b-1\",\"on\":\"2024-02-29\","
           "\"colour\":\"red\",\"ids\":[\"" A "\"],\"parts\":[{\"label\":\"x\"}],"
           "\"record\":{},\"ratio\":10,\"team\":null}",
           none);
}

static void test_text_and_handle(void **state)
{
    (void)state;
    static const char *const want[] = {
        "/title must not be empty", "/note must be at most 8 bytes", "/owner must be a username",
        "/team use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", NULL};
    expect("{\"title\":\"\",\"note\":\"123456789\",\"owner\":\"-x\",\"team\":\"a b\"}", want);
    static const char *const absent[] = {"/title is required", "/owner must be a string", NULL};
    expect("{\"owner\":7}", absent);
}

static void test_date_enum_members(void **state)
{
    (void)state;
    static const char *const want[] = {"/extra unknown field",
                                       "/id is set by the server and may not be given",
                                       "/title is required",
                                       "/owner is required",
                                       "/on must be a date YYYY-MM-DD",
                                       "/colour must be one of 'red', 'green'",
                                       NULL};
    expect("{\"extra\":1,\"id\":\"x\",\"on\":\"2023-02-29\",\"colour\":\"blue\"}", want);
}

static void test_list(void **state)
{
    (void)state;
    static const char *const want[] = {"/title is required", "/owner is required",
                                       "/ids/1 must be a thing id", "/ids/2 repeats /ids/0", NULL};
    expect("{\"ids\":[\"" A "\", 5, \"123E4567-E89B-12D3-A456-426614174000\"]}", want);
    static const char *const few[] = {"/title is required", "/owner is required",
                                      "/ids must be an array of 1 to 3 thing ids", NULL};
    expect("{\"ids\":[]}", few);
    expect("{\"ids\":{}}", few);
    expect("{\"ids\":[\"" A "\",\"" A "\",\"" A "\",\"" A "\"]}", few);
}

static void test_array_any_number(void **state)
{
    (void)state;
    static const char *const want[] = {"/title is required",
                                       "/owner is required",
                                       "/parts/0 must be a part {label}",
                                       "/parts/1/label must be at most 5 bytes",
                                       "/record must be the record",
                                       "/ratio must be above 0 and at most 10",
                                       NULL};
    expect("{\"parts\":[3,{\"label\":\"toolong\"}],\"record\":[],\"ratio\":0}", want);
    static const char *const many[] = {"/title is required", "/owner is required",
                                       "/parts must be at most 2 parts",
                                       "/ratio must be above 0 and at most 10", NULL};
    expect("{\"parts\":[{},{},{}],\"ratio\":\"1\"}", many);
}

static void test_halves_and_valid_string(void **state)
{
    (void)state;
    json_t *patch = json_pack("{s:n, s:s}", "bogus", "id", "x");
    json_t *merged = json_pack("{s:s, s:s}", "title", "ok", "owner", "bad name");
    struct problems p;
    problems_init(&p);
    evfield_check_members(patch, FIELDS, "", &p);
    evfield_check_values(merged, FIELDS, "", &p);
    assert_int_equal(p.total, 3);
    assert_string_equal(p.items[0].pointer, "/bogus");
    assert_string_equal(p.items[1].pointer, "/id");
    assert_string_equal(p.items[2].pointer, "/owner");
    assert_true(problems_has(&p, "/owner"));
    assert_false(problems_has(&p, "/title"));
    assert_string_equal(evfield_valid_string(merged, "title", &p), "ok");
    assert_null(evfield_valid_string(merged, "owner", &p));
    assert_null(evfield_valid_string(merged, "note", &p));
    problems_free(&p);
    json_decref(patch);
    json_decref(merged);
}

/* Control characters (issue 25, item 9): one table of text and what text_fault says. */
static void test_control_characters(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        size_t len;
        int multiline;
        const char *fault; /* NULL: fine */
    } cases[] = {
        {"plain name", 10, 0, NULL},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, 0, NULL}, /* é € 😀 */
        {"a\x1b]0;owned\x07", 11, 0, "must not contain control characters (U+001B at byte 2)"},
        {"bell\x07", 5, 1,
         "must not contain control characters (U+0007 at byte 5); line feeds and tabs are allowed"},
        {"two\nlines", 9, 0, "must not contain control characters (U+000A at byte 4)"},
        {"two\nlines\tand a tab", 19, 1, NULL},
        {"over\rwrite", 10, 1,
         "must not contain control characters (U+000D at byte 5); line feeds and tabs are allowed"},
        {"del\x7f", 4, 0, "must not contain control characters (U+007F at byte 4)"},
        {"csi\xc2\x9b"
         "2J",
         7, 0, "must not contain control characters (U+009B at byte 4)"},
        {"nbsp\xc2\xa0ok", 8, 0, NULL}, /* U+00A0 is text */
        {"nul\0x", 5, 1, "must be UTF-8 without NUL"},
        {"bad\xff", 4, 0, "must be UTF-8 without NUL"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char why[128];
        const char *got =
            text_fault(cases[i].text, cases[i].len, cases[i].multiline, why, sizeof why);
        if (!cases[i].fault)
            assert_null(got);
        else
            assert_string_equal(got, cases[i].fault);
    }
    /* in a field table: a short field is one line, a long one (notes) may hold line feeds, a
     * secret takes anything but NUL */
    static const struct evfield T[] = {
        {"name", EVF_STRING, 0, 0, 0, 200, NULL, NULL},
        {"notes", EVF_TEXT, 0, 0, 0, 2000, NULL, NULL},
        {"password", EVF_TEXT, EVF_SECRET, 0, 0, 1024, NULL, NULL},
        END_OF_TABLE,
    };
    json_t *doc = json_pack("{s:s, s:s, s:s}", "name", "x\x1b[2J", "notes", "line\nline\x07",
                            "password", "pa\x1bss\x07");
    struct problems p;
    problems_init(&p);
    evfield_check(doc, T, "", 0, NULL, &p);
    assert_int_equal(p.total, 2);
    assert_string_equal(p.items[0].pointer, "/name");
    assert_string_equal(p.items[0].message,
                        "must not contain control characters (U+001B at byte 2)");
    assert_string_equal(p.items[1].pointer, "/notes");
    problems_free(&p);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_document),     cmocka_unit_test(test_text_and_handle),
        cmocka_unit_test(test_date_enum_members),  cmocka_unit_test(test_list),
        cmocka_unit_test(test_array_any_number),   cmocka_unit_test(test_halves_and_valid_string),
        cmocka_unit_test(test_control_characters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
