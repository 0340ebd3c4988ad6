/* Strict base64 and hex: what the log formats accept and refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"

static void test_b64_round_trip(void **state)
{
    (void)state;
    static const char *const rfc4648[][2] = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (size_t i = 0; i < sizeof rfc4648 / sizeof rfc4648[0]; i++) {
        const char *bin = rfc4648[i][0], *text = rfc4648[i][1];
        char out[16];
        assert_string_equal(codec_b64_encode((const uint8_t *)bin, strlen(bin), out, sizeof out),
                            text);
        char *fresh = codec_b64_encode_new((const uint8_t *)bin, strlen(bin));
        assert_string_equal(fresh, text);
        free(fresh);
        assert_int_equal(strlen(text), CODEC_B64_LEN(strlen(bin)));
        uint8_t back[16];
        assert_int_equal(codec_b64_decode(text, strlen(text), back, sizeof back),
                         (long)strlen(bin));
        assert_memory_equal(back, bin, strlen(bin));
    }
}

static void test_b64_refusals(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "Zg",        /* padding missing */
        "Zh==",      /* non-zero leftover bits */
        "Zm9v\n",    /* whitespace */
        "Zm9v!",     /* not base64 */
        "Zm-v",      /* URL alphabet */
        "Zg==Zg==",  /* data after padding */
        "Zm9vYmFy=", /* stray padding */
        /* bytes above 0x7F that libsodium 1.0.18 alone would decode as digits */
        "TszzRgjTG6z2AG31kAXY\xe2\x80\x80KBgQVtCSCE40HmBu2wb0=",
        "Zm9\xe2",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t out[64];
        if (codec_b64_decode(bad[i], strlen(bad[i]), out, sizeof out) >= 0)
            fail_msg("accepted %s", bad[i]);
    }
    uint8_t small[2];
    assert_int_equal(codec_b64_decode("Zm9v", 4, small, sizeof small), -1);
}

static void test_hex(void **state)
{
    (void)state;
    const uint8_t bin[] = {0x00, 0xab, 0xff, 0x10};
    char text[9];
    assert_string_equal(codec_hex_encode(bin, sizeof bin, text), "00abff10");
    uint8_t back[4];
    assert_int_equal(codec_hex_decode_exact("00abff10", back, 4), 0);
    assert_memory_equal(back, bin, 4);
    assert_int_equal(codec_hex_decode_exact("00ABff10", back, 4), -1);
    assert_int_equal(codec_hex_decode_exact("00abff1", back, 4), -1);
    assert_int_equal(codec_hex_decode_exact("00abff100", back, 4), -1);
    assert_int_equal(codec_hex_decode_exact("00abfg10", back, 4), -1);
    /* A span: the first 2·n digits of a longer text (a leaf's hex before ':' and its hash). */
    memset(back, 0, sizeof back);
    assert_int_equal(codec_hex_decode_span("00abff10:beef", back, 4), 0);
    assert_memory_equal(back, bin, 4);
    assert_int_equal(codec_hex_decode_span("00abff1", back, 4), -1);  /* ends early */
    assert_int_equal(codec_hex_decode_span("00abff", back, 4), -1);   /* ends on a pair */
    assert_int_equal(codec_hex_decode_span("00abFf10", back, 4), -1); /* upper case */
    assert_int_equal(codec_hex_decode_span("", back, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_b64_round_trip),
        cmocka_unit_test(test_b64_refusals),
        cmocka_unit_test(test_hex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
