/* List cursors: a cursor round-trips its key, and only the text cursor_encode writes decodes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/cursor.h"

static void test_round_trip(void **state)
{
    (void)state;
    const char *key = "2025-09-12T14:06:12Z|7d444840-9dc0-11d1-b245-5ffdce74fad2";
    char *cursor = cursor_encode(key);
    assert_non_null(cursor);
    assert_null(strpbrk(cursor, "+/=")); /* URL-safe, unpadded: goes into a query string as is */
    char buf[128];
    assert_int_equal(cursor_decode(cursor, buf, sizeof buf), 0);
    assert_string_equal(buf, key);
    assert_int_equal(cursor_decode(cursor, buf, 10), -1); /* a key longer than the buffer */
    free(cursor);
}

/* fuzz_codec (corpus/codec/cursor_high_byte): libsodium took a byte above 0x7F as a base64
 * digit, so a cursor with one inserted decoded to a key; now it is refused. */
static void test_foreign_bytes_refused(void **state)
{
    (void)state;
    char buf[128];
    assert_int_equal(cursor_decode("MjAyNS0wOS0x0xMlQxNDowNMlQx\xce"
                                   "DoMNxowljp8N2Q0NDQ4LDA",
                                   buf, sizeof buf),
                     -1);
    assert_int_equal(cursor_decode("YWJj", buf, sizeof buf), 0);
    assert_string_equal(buf, "abc");
    assert_int_equal(cursor_decode("YWJj\xe2\x80\x80", buf, sizeof buf), -1);
    assert_int_equal(cursor_decode("YWJj=", buf, sizeof buf), -1); /* no padding in ours */
    assert_int_equal(cursor_decode("YW+j", buf, sizeof buf), -1);  /* standard, not URL-safe */
    assert_int_equal(cursor_decode("AA", buf, sizeof buf), -1);    /* a NUL inside the key */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_foreign_bytes_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
