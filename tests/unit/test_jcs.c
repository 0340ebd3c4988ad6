/* RFC 8785: the published vectors, ECMAScript number forms, UTF-16 key order, and refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/jcs.h"
#include "testutil.h"

static const char *const vector_names[] = {"arrays",  "french", "structures",
                                           "unicode", "values", "weird"};

static char *canonical_of(const char *text, size_t *len)
{
    struct problems errs;
    problems_init(&errs);
    json_t *v = jcs_parse(text, strlen(text), &errs);
    if (!v) {
        print_error("parse failed: %s\n", errs.count ? errs.items[0].message : "?");
        problems_free(&errs);
        return NULL;
    }
    problems_free(&errs);
    char *out = jcs_serialize(v, len);
    json_decref(v);
    return out;
}

static void test_published_vectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof vector_names / sizeof vector_names[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/vectors/jcs/input/%s.json", CAPLEDGER_DATA_DIR,
                 vector_names[i]);
        char *input = testutil_read_file(path, NULL);
        assert_non_null(input);
        snprintf(path, sizeof path, "%s/vectors/jcs/output/%s.json", CAPLEDGER_DATA_DIR,
                 vector_names[i]);
        size_t want_len = 0;
        char *want = testutil_read_file(path, &want_len);
        assert_non_null(want);
        snprintf(path, sizeof path, "%s/vectors/jcs/outhex/%s.txt", CAPLEDGER_DATA_DIR,
                 vector_names[i]);
        char *hex = testutil_read_file(path, NULL);
        assert_non_null(hex);
        uint8_t want_hex[4096];
        long hex_len = testutil_unhex(hex, want_hex, sizeof want_hex);

        size_t got_len;
        char *got = canonical_of(input, &got_len);
        assert_non_null(got);
        if (got_len != want_len || memcmp(got, want, want_len) != 0)
            fail_msg("%s: got %s, want %s", vector_names[i], got, want);
        assert_int_equal(hex_len, (long)got_len);
        assert_memory_equal(got, want_hex, got_len);
        free(got);
        free(hex);
        free(want);
        free(input);
    }
}

static double from_bits(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* RFC 8785 Appendix B and cyberphone's README lines (IEEE 754 bits → ECMAScript text); every
 * expected string was also printed by Node.js v20's JSON.stringify. */
static void test_number_forms(void **state)
{
    (void)state;
    static const struct {
        uint64_t bits;
        const char *want;
    } cases[] = {
        {0x0000000000000000, "0"},
        {0x8000000000000000, "0"},
        {0x0000000000000001, "5e-324"},
        {0x8000000000000001, "-5e-324"},
        {0x7fefffffffffffff, "1.7976931348623157e+308"},
        {0xffefffffffffffff, "-1.7976931348623157e+308"},
        {0x4340000000000000, "9007199254740992"},
        {0xc340000000000000, "-9007199254740992"},
        {0x4340000000000001, "9007199254740994"},
        {0x4340000000000002, "9007199254740996"},
        {0x4430000000000000, "295147905179352830000"},
        {0x44b52d02c7e14af5, "9.999999999999997e+22"},
        {0x44b52d02c7e14af6, "1e+23"},
        {0x44b52d02c7e14af7, "1.0000000000000001e+23"},
        {0x444b1ae4d6e2ef4e, "999999999999999700000"},
        {0x444b1ae4d6e2ef4f, "999999999999999900000"},
        {0x444b1ae4d6e2ef50, "1e+21"},
        {0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
        {0x3eb0c6f7a0b5ed8d, "0.000001"},
        {0x41b3de4355555553, "333333333.3333332"},
        {0x41b3de4355555554, "333333333.33333325"},
        {0x41b3de4355555555, "333333333.3333333"},
        {0x41b3de4355555556, "333333333.3333334"},
        {0x41b3de4355555557, "333333333.33333343"},
        {0xbecbf647612f3696, "-0.0000033333333333333333"},
        {0x43143ff3c1cb0959, "1424953923781206.2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[JCS_NUMBER_MAX];
        int n = jcs_format_double(from_bits(cases[i].bits), out);
        assert_int_equal(n, (int)strlen(cases[i].want));
        assert_string_equal(out, cases[i].want);
    }
    char out[JCS_NUMBER_MAX];
    assert_int_equal(jcs_format_double(NAN, out), -1);
    assert_int_equal(jcs_format_double(INFINITY, out), -1);
    assert_int_equal(jcs_format_double(-INFINITY, out), -1);
}

static void expect_canonical(const char *text, const char *want)
{
    size_t len;
    char *got = canonical_of(text, &len);
    assert_non_null(got);
    assert_int_equal(len, strlen(want));
    assert_string_equal(got, want);
    free(got);
}

static void test_tricky_documents(void **state)
{
    (void)state;
    expect_canonical("[5e-324, 1e21, 1E-7, -0, -0.0, 0.0, 1e-6, 4.50, 2e-3]",
                     "[5e-324,1e+21,1e-7,0,0,0,0.000001,4.5,0.002]");
    /* Parsed by jansson as an integer, written as JSON.parse would read it: the nearest double. */
    expect_canonical("9007199254740993", "9007199254740992");
    expect_canonical("-9007199254740993", "-9007199254740992");
    expect_canonical("[9007199254740991, -9007199254740991, 123]",
                     "[9007199254740991,-9007199254740991,123]");
    /* Beyond long long: re-read as doubles. */
    expect_canonical("[100000000000000000000, 1]", "[100000000000000000000,1]");
}

static void test_tricky_documents_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "[1e400]",
        "{\"a\":1,\"a\":2}",
        "{\"x\":{\"b\":1,\"b\":1}}",
        "[\"\\ud800\"]",
        "[\"\\udc00\"]",
        "[\"\\ud83dx\"]",
        "[\"\\ude02\\ud83d\"]",
        "[\"\xed\xa0\x80\"]",              /* a surrogate encoded in UTF-8 */
        "[\"\xc0\xaf\"]",                  /* overlong */
        "{\"a\\u0000\":1,\"a\\u0000\":2}", /* a duplicate name holding U+0000 */
        "{\"a\\u0000\":1, x}",             /* and a syntax error after one */
        "[1] [2]",
        "",
        "{",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct problems errs;
        problems_init(&errs);
        json_t *v = jcs_parse(bad[i], strlen(bad[i]), &errs);
        if (v)
            fail_msg("accepted %s", bad[i]);
        assert_int_equal(errs.count, 1);
        assert_true(errs.items[0].line >= 1);
        problems_free(&errs);
    }
}

static void test_key_order_utf16(void **state)
{
    (void)state;
    /* U+1F602 is D83D DE02 in UTF-16, so it sorts before U+FB33 although its UTF-8 bytes
     * (F0 …) sort after (EF …); U+10000 (D800 DC00) sorts before U+E000. */
    expect_canonical("{\"\\ufb33\":1,\"\\ud83d\\ude02\":2}",
                     "{\"\xf0\x9f\x98\x82\":2,\"\xef\xac\xb3\":1}");
    expect_canonical("{\"\\ue000\":1,\"\\ud800\\udc00\":2,\"\\uffff\":3}",
                     "{\"\xf0\x90\x80\x80\":2,\"\xee\x80\x80\":1,\"\xef\xbf\xbf\":3}");
    expect_canonical("{\"aa\":1,\"a\":2,\"\":3,\"b\":4,\"B\":5}",
                     "{\"\":3,\"B\":5,\"a\":2,\"aa\":1,\"b\":4}");
    expect_canonical("{\"\\u00e9\":1,\"e\\u0301\":2}", "{\"e\xcc\x81\":2,\"\xc3\xa9\":1}");
}

/* RFC 8785 covers every I-JSON string, U+0000 included: it comes out as the lower-case
 * six-character escape, wherever it stands in the string, and the value keeps its length. */
static void test_nul_in_strings(void **state)
{
    (void)state;
    expect_canonical("[\"\\u0000\"]", "[\"\\u0000\"]");
    expect_canonical("{\"b\":\"x\\u0000y\",\"a\":\"\\u0000\\u0000\"}",
                     "{\"a\":\"\\u0000\\u0000\",\"b\":\"x\\u0000y\"}");
    expect_canonical("[\"\\u0000\\u001F\\u007f\\u00e9\"]", "[\"\\u0000\\u001f\x7f\xc3\xa9\"]");
    struct problems errs;
    problems_init(&errs);
    const char *text = "[\"a\\u0000b\"]";
    json_t *v = jcs_parse(text, strlen(text), &errs);
    assert_non_null(v);
    assert_int_equal(json_string_length(json_array_get(v, 0)), 3);
    assert_memory_equal(json_string_value(json_array_get(v, 0)), "a\0b", 3);
    json_decref(v);
    problems_free(&errs);
}

/* In member names too (jansson's parser refuses them, its objects hold them by length): the
 * name keeps its length, sorts by its UTF-16 units (U+0000 first), and is escaped. */
static void test_nul_in_member_names(void **state)
{
    (void)state;
    expect_canonical("{\"a\\u0000b\":1}", "{\"a\\u0000b\":1}");
    expect_canonical("{\"a\\u0000b\":1,\"a\":2,\"\\u0000\":3,\"a\\u0001\":4}",
                     "{\"\\u0000\":3,\"a\":2,\"a\\u0000b\":1,\"a\\u0001\":4}");
    /* Nested, next to a backslash escape that only looks like one, and with a private-use
     * character (what the parser stands in for U+0000 with) already in the document. */
    expect_canonical(
        "[{\"x\":{\"\\u0000\":\"\\\\u0000\"}},{\"\\\\u0000\":1,\"\\ue000\":2,\"\\u0000\":3}]",
        "[{\"x\":{\"\\u0000\":\"\\\\u0000\"}},{\"\\u0000\":3,\"\\\\u0000\":1,\"\xee\x80\x80\":2}]");
    struct problems errs;
    problems_init(&errs);
    const char *text = "{\"k\\u0000\":[1]}";
    json_t *v = jcs_parse(text, strlen(text), &errs);
    assert_non_null(v);
    assert_int_equal(json_object_size(v), 1);
    assert_non_null(json_object_getn(v, "k\0", 2));
    assert_null(json_object_get(v, "k"));
    json_decref(v);
    problems_free(&errs);
}

static void test_string_escapes(void **state)
{
    (void)state;
    expect_canonical("[\"\\u0001\\u001F\\u007f\\u2028\\b\\f\\n\\r\\t\\\"\\\\\\/\"]",
                     "[\"\\u0001\\u001f\x7f\xe2\x80\xa8\\b\\f\\n\\r\\t\\\"\\\\/\"]");
}

/* Trees built in code can hold what the parser refuses; the serializer checks on its own. */
static void test_serializer_refuses_unrepresentable(void **state)
{
    (void)state;
    /* (jansson refuses NaN and infinite reals itself: json_real(NAN) is NULL.) */
    assert_null(json_real(NAN));
    json_t *bad_utf8 = json_array();
    assert_int_equal(json_array_append_new(bad_utf8, json_stringn_nocheck("\xed\xa0\x80", 3)), 0);
    assert_null(jcs_serialize(bad_utf8, NULL));
    json_decref(bad_utf8);

    json_t *bad_key = json_object();
    assert_int_equal(json_object_set_new_nocheck(bad_key, "\xff", json_true()), 0);
    assert_null(jcs_serialize(bad_key, NULL));
    json_decref(bad_key);

    /* A NUL inside a string built in code is escaped, not cut off. */
    json_t *nul = json_stringn("a\0b", 3);
    size_t len;
    char *out = jcs_serialize(nul, &len);
    assert_non_null(out);
    assert_int_equal(len, 10);
    assert_memory_equal(out, "\"a\\u0000b\"", 10);
    free(out);
    json_decref(nul);
    assert_null(jcs_serialize(NULL, NULL));
}

/* jcs_dump keeps the document's member order (for replies) with JCS number forms. */
static void test_dump_keeps_document_order(void **state)
{
    (void)state;
    json_t *doc = json_pack("{s:f, s:f, s:{s:i, s:f}}", "low", 0.6, "expected", 1.0, "high", "z", 1,
                            "a", 0.76);
    assert_non_null(doc);
    char *dumped = jcs_dump(doc, NULL);
    char *canonical = jcs_serialize(doc, NULL);
    assert_string_equal(dumped, "{\"low\":0.6,\"expected\":1,\"high\":{\"z\":1,\"a\":0.76}}");
    assert_string_equal(canonical, "{\"expected\":1,\"high\":{\"a\":0.76,\"z\":1},\"low\":0.6}");
    free(dumped);
    free(canonical);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published_vectors),
        cmocka_unit_test(test_number_forms),
        cmocka_unit_test(test_tricky_documents),
        cmocka_unit_test(test_tricky_documents_refused),
        cmocka_unit_test(test_key_order_utf16),
        cmocka_unit_test(test_string_escapes),
        cmocka_unit_test(test_nul_in_strings),
        cmocka_unit_test(test_nul_in_member_names),
        cmocka_unit_test(test_serializer_refuses_unrepresentable),
        cmocka_unit_test(test_dump_keeps_document_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
