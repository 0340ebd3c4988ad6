/* Browser-session helpers: id shape, the CSRF token (checked against Python's hmac), cookie
 * parsing and the same-origin rule for unsafe requests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sodium.h>
#include <string.h>

#include "core/auth/session.h"

static void test_id_new_shape_and_uniqueness(void **state)
{
    (void)state;
    char a[SESSION_ID_TEXT_LEN + 1], b[SESSION_ID_TEXT_LEN + 1];
    session_id_new(a);
    session_id_new(b);
    assert_int_equal(strlen(a), SESSION_ID_TEXT_LEN);
    assert_true(session_id_shape_ok(a));
    assert_true(session_id_shape_ok(b));
    assert_string_not_equal(a, b);
}

static void test_id_shape_refuses(void **state)
{
    (void)state;
    assert_false(session_id_shape_ok(""));
    assert_false(session_id_shape_ok("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));   /* 42 */
    assert_false(session_id_shape_ok("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")); /* 44 */
    assert_false(session_id_shape_ok("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA+"));  /* '+' */
    assert_false(session_id_shape_ok("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="));
    assert_true(session_id_shape_ok("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA-"));
}

/* Expected values from: hmac.new(sid.encode(), b"capledger csrf v1", sha256), base64url. */
static void test_csrf_known_answers(void **state)
{
    (void)state;
    char csrf[SESSION_CSRF_TEXT_LEN + 1];
    session_csrf_token("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", csrf);
    assert_string_equal(csrf, "3MVVVAUHO-zqxvfAi-MHyuQxNbZ1BwjnMi9h0XexsjA");
    session_csrf_token("168wjLedZzCot0Oosy0txSI3XDtxp9hql7p1g_vRnPU", csrf);
    assert_string_equal(csrf, "4_o1J57ndyXCYlSLmxKH3EYRt04YGBMriFWn9f5_Xdo");
}

static void test_csrf_ok(void **state)
{
    (void)state;
    const char *sid = "168wjLedZzCot0Oosy0txSI3XDtxp9hql7p1g_vRnPU";
    assert_true(session_csrf_ok(sid, "4_o1J57ndyXCYlSLmxKH3EYRt04YGBMriFWn9f5_Xdo"));
    assert_false(session_csrf_ok(sid, "4_o1J57ndyXCYlSLmxKH3EYRt04YGBMriFWn9f5_Xdp"));
    assert_false(session_csrf_ok(sid, "4_o1J57ndyXCYlSLmxKH3EYRt04YGBMriFWn9f5_Xd"));
    assert_false(session_csrf_ok(sid, ""));
    assert_false(session_csrf_ok(sid, NULL));
    /* Another session's token does not pass. */
    assert_false(session_csrf_ok("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                                 "4_o1J57ndyXCYlSLmxKH3EYRt04YGBMriFWn9f5_Xdo"));
}

static void test_cookie_find(void **state)
{
    (void)state;
    char out[64];
    assert_true(session_cookie_find("capledger_session=abc", "capledger_session", out, sizeof out));
    assert_string_equal(out, "abc");
    assert_true(session_cookie_find("a=1; capledger_session=xyz; b=2", "capledger_session", out,
                                    sizeof out));
    assert_string_equal(out, "xyz");
    assert_true(session_cookie_find("a=1;capledger_session=first ;capledger_session=second",
                                    "capledger_session", out, sizeof out));
    assert_string_equal(out, "first");
    /* A longer name that starts with ours is another cookie. */
    assert_false(session_cookie_find("capledger_session2=zz; x_capledger_session=yy",
                                     "capledger_session", out, sizeof out));
    assert_false(session_cookie_find("", "capledger_session", out, sizeof out));
    assert_false(session_cookie_find("capledger_session", "capledger_session", out, sizeof out));
    /* Too long for the buffer: not found rather than truncated. */
    assert_false(session_cookie_find("capledger_session=0123456789", "capledger_session", out, 5));
    assert_true(session_cookie_find("capledger_session=", "capledger_session", out, sizeof out));
    assert_string_equal(out, "");
}

static void test_origin_matches(void **state)
{
    (void)state;
    assert_true(session_origin_matches("http://127.0.0.1:8080", "127.0.0.1:8080", "http"));
    assert_true(
        session_origin_matches("http://127.0.0.1:8080/ui/page?x=1", "127.0.0.1:8080", "http"));
    assert_true(session_origin_matches("https://Capledger.Example", "capledger.example", "https"));
    assert_true(
        session_origin_matches("https://capledger.example", "capledger.example:443", "https"));
    assert_true(session_origin_matches("http://capledger.example:80", "capledger.example", "http"));
    assert_true(session_origin_matches("http://[::1]:8080", "[::1]:8080", "http"));
    assert_false(session_origin_matches("http://127.0.0.1:8081", "127.0.0.1:8080", "http"));
    assert_false(session_origin_matches("http://evil.example", "capledger.example", "http"));
    assert_false(
        session_origin_matches("https://capledger.example", "capledger.example:80", "https"));
    assert_false(session_origin_matches("http://capledger.example.evil.example",
                                        "capledger.example", "http"));
    assert_false(session_origin_matches("http://capledger.example@evil.example",
                                        "capledger.example", "http"));
    assert_false(session_origin_matches("null", "capledger.example", "http"));
    assert_false(session_origin_matches("ftp://capledger.example", "capledger.example", "http"));
    assert_false(session_origin_matches("http://", "", "http"));
    assert_false(session_origin_matches("http://a:99999", "a:99999", "http"));
    assert_false(session_origin_matches("http://a:8x", "a:8x", "http"));
    assert_false(session_origin_matches(NULL, "a", "http"));
    assert_false(session_origin_matches("http://a", NULL, "http"));
    /* the scheme counts: an http page may not write to the https server, nor the reverse */
    assert_false(session_origin_matches("http://capledger.example", "capledger.example", "https"));
    assert_false(
        session_origin_matches("https://capledger.example:80", "capledger.example:80", "http"));
    assert_false(session_origin_matches("http://a", "a", NULL));
    assert_false(session_origin_matches("http://[::1", "[::1", "http"));
}

static void test_cookie_secure(void **state)
{
    (void)state;
    assert_int_equal(session_cookie_secure(1, NULL), 1);
    assert_int_equal(session_cookie_secure(0, NULL), 0);
    assert_int_equal(session_cookie_secure(0, "https://capledger.example"), 1);
    assert_int_equal(session_cookie_secure(0, "HTTPS://capledger.example:8443"), 1);
    assert_int_equal(session_cookie_secure(0, "http://capledger.example"), 0);
    assert_int_equal(session_cookie_secure(1, "http://capledger.example"), 1);
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_id_new_shape_and_uniqueness),
        cmocka_unit_test(test_cookie_secure),
        cmocka_unit_test(test_id_shape_refuses),
        cmocka_unit_test(test_csrf_known_answers),
        cmocka_unit_test(test_csrf_ok),
        cmocka_unit_test(test_cookie_find),
        cmocka_unit_test(test_origin_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
