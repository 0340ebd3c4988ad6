/* Request framing rules (RFC 9112 §6): every rule of httpframe_refusal, accepted and refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/httpframe.h"

#define H(n, v)                                                                                    \
    {                                                                                              \
        (n), (v)                                                                                   \
    }
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void test_no_body_headers(void **state)
{
    (void)state;
    struct httpframe_header h[] = {H("Host", "x"), H("Accept", "*/*")};
    assert_null(httpframe_refusal("1.1", h, COUNT(h)));
    assert_null(httpframe_refusal("1.0", h, COUNT(h)));
    assert_null(httpframe_refusal(NULL, NULL, 0));
}

static void test_content_length(void **state)
{
    (void)state;
    struct httpframe_header ok[] = {H("content-length", "0")};
    assert_null(httpframe_refusal("1.1", ok, 1));
    assert_null(httpframe_refusal("1.0", ok, 1));
    struct httpframe_header max[] = {H("Content-Length", "999999999999999999")}; /* 18 digits */
    assert_null(httpframe_refusal("1.1", max, 1));
    const char *bad[] = {"", "+2", "-1", " 2", "2 ", "0x10", "1e3", "1,2", "9999999999999999999"};
    for (size_t i = 0; i < COUNT(bad); i++) {
        struct httpframe_header h[] = {H("Content-Length", bad[i])};
        const char *why = httpframe_refusal("1.1", h, 1);
        assert_non_null(why);
        assert_non_null(strstr(why, "Content-Length"));
    }
}

static void test_content_length_repeated(void **state)
{
    (void)state;
    struct httpframe_header same[] = {H("Content-Length", "2"), H("Host", "x"),
                                      H("CONTENT-LENGTH", "2")};
    struct httpframe_header differ[] = {H("Content-Length", "2"), H("Content-Length", "40")};
    assert_string_equal(httpframe_refusal("1.1", same, COUNT(same)),
                        "Content-Length is given more than once");
    assert_string_equal(httpframe_refusal("1.1", differ, COUNT(differ)),
                        "Content-Length is given more than once");
}

/* The body's media type decides how it is read: two would let the reader and the checks
 * disagree (the attack pass: the first one was read, a charset in the second went unseen). */
static void test_content_type_repeated(void **state)
{
    (void)state;
    struct httpframe_header once[] = {H("Content-Type", "application/json"), H("Host", "x")};
    struct httpframe_header twice[] = {H("Content-Type", "application/json"),
                                       H("content-type", "application/json; charset=utf-16")};
    assert_null(httpframe_refusal("1.1", once, COUNT(once)));
    assert_string_equal(httpframe_refusal("1.1", twice, COUNT(twice)),
                        "Content-Type is given more than once");
}

static void test_transfer_encoding(void **state)
{
    (void)state;
    struct httpframe_header chunked[] = {H("Transfer-Encoding", "chunked")};
    struct httpframe_header upper[] = {H("transfer-encoding", "CHUNKED")};
    assert_null(httpframe_refusal("1.1", chunked, 1));
    assert_null(httpframe_refusal(NULL, chunked, 1)); /* NULL: 1.1 */
    assert_null(httpframe_refusal("1.1", upper, 1));
    const char *bad[] = {"gzip", "gzip, chunked", "chunked, gzip", "identity", "", " chunked"};
    for (size_t i = 0; i < COUNT(bad); i++) {
        struct httpframe_header h[] = {H("Transfer-Encoding", bad[i])};
        assert_string_equal(httpframe_refusal("1.1", h, 1),
                            "the only transfer coding accepted is chunked");
    }
    struct httpframe_header twice[] = {H("Transfer-Encoding", "chunked"),
                                       H("Transfer-Encoding", "chunked")};
    assert_string_equal(httpframe_refusal("1.1", twice, 2),
                        "Transfer-Encoding is given more than once");
}

static void test_both(void **state)
{
    (void)state;
    struct httpframe_header both[] = {H("Content-Length", "5"), H("Transfer-Encoding", "chunked")};
    struct httpframe_header rev[] = {H("Transfer-Encoding", "chunked"), H("Content-Length", "5")};
    assert_string_equal(httpframe_refusal("1.1", both, 2),
                        "Content-Length and Transfer-Encoding must not both be given");
    assert_string_equal(httpframe_refusal("1.1", rev, 2),
                        "Content-Length and Transfer-Encoding must not both be given");
}

static void test_transfer_encoding_http10(void **state)
{
    (void)state;
    struct httpframe_header chunked[] = {H("Host", "x"), H("Transfer-Encoding", "chunked")};
    const char *why = "Transfer-Encoding is not allowed in an HTTP/1.0 request";
    assert_string_equal(httpframe_refusal("1.0", chunked, 2), why);
    assert_string_equal(httpframe_refusal("0.9", chunked, 2), why);
    /* refused even together with a Content-Length, and whatever the coding */
    struct httpframe_header both[] = {H("Content-Length", "5"), H("Transfer-Encoding", "chunked")};
    assert_string_equal(httpframe_refusal("1.0", both, 2), why);
    struct httpframe_header gzip[] = {H("Transfer-Encoding", "gzip")};
    assert_string_equal(httpframe_refusal("1.0", gzip, 1), why);
}

static void test_null_fields(void **state)
{
    (void)state;
    struct httpframe_header h[] = {H(NULL, NULL), H("Content-Length", NULL)};
    assert_non_null(httpframe_refusal("1.1", h, 2)); /* an empty Content-Length */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_body_headers),
        cmocka_unit_test(test_content_length),
        cmocka_unit_test(test_content_length_repeated),
        cmocka_unit_test(test_content_type_repeated),
        cmocka_unit_test(test_transfer_encoding),
        cmocka_unit_test(test_both),
        cmocka_unit_test(test_transfer_encoding_http10),
        cmocka_unit_test(test_null_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
