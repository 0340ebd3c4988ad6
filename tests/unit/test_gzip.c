/* core/gzip: who accepts gzip, and a compressed body that inflates back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/gzip.h"

static void test_accepted(void **state)
{
    (void)state;
    const struct {
        const char *header;
        int want;
    } cases[] = {
        {NULL, 0},
        {"", 0},
        {"gzip", 1},
        {"GZIP", 1},
        {"x-gzip", 1},
        {"deflate, gzip;q=1.0, *;q=0.5", 1},
        {"br;q=1, gzip;q=0.001", 1},
        {"gzip;q=0", 0},
        {"gzip;q=0.000", 0},
        {"gzip; q=0", 0},
        {"*", 1},
        {"*;q=0", 0},
        {"gzip;q=0, *", 0}, /* gzip named: its own q decides */
        {"identity", 0},
        {"deflate, br", 0},
        {"gzipx", 0},
        {"gzip;q=2", 0},      /* malformed q: not accepting */
        {"gzip;q=0.1234", 0}, /* four digits */
        {"gzip;q=1.5", 0},
        {"gzip;level=9", 1}, /* another parameter is ignored */
        {" , ,gzip", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = gzip_accepted(cases[i].header);
        if (got != cases[i].want)
            fail_msg("Accept-Encoding: %s → %d, want %d",
                     cases[i].header ? cases[i].header : "(none)", got, cases[i].want);
    }
}

static void inflate_back(const uint8_t *gz, size_t gz_len, const uint8_t *want, size_t want_len)
{
    uint8_t *back = malloc(want_len + 16);
    assert_non_null(back);
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK); /* gzip wrapper only */
    z.next_in = (Bytef *)(uintptr_t)gz;
    z.avail_in = (uInt)gz_len;
    z.next_out = back;
    z.avail_out = (uInt)(want_len + 16);
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    assert_int_equal(z.total_out, want_len);
    assert_memory_equal(back, want, want_len);
    inflateEnd(&z);
    free(back);
}

static void test_compress_round_trip(void **state)
{
    (void)state;
    /* An entry bundle: 2-byte big-endian lengths, then JSON leaves. */
    size_t n = 256 * 300;
    uint8_t *in = malloc(n);
    assert_non_null(in);
    for (size_t i = 0; i < n; i++)
        in[i] =
            (uint8_t)((unsigned char)"{\"record\":{\"decision\":\"advance\"}}"[i % 33] ^ (i / 997));
    uint8_t *gz = NULL;
    size_t gz_len = 0;
    assert_int_equal(gzip_compress(in, n, &gz, &gz_len), 0);
    assert_true(gz_len < n);
    assert_int_equal(gz[0], 0x1f); /* the gzip magic */
    assert_int_equal(gz[1], 0x8b);
    inflate_back(gz, gz_len, in, n);
    free(gz);
    /* Empty input is a valid empty gzip member. */
    assert_int_equal(gzip_compress(in, 0, &gz, &gz_len), 0);
    inflate_back(gz, gz_len, in, 0);
    free(gz);
    free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted),
        cmocka_unit_test(test_compress_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
