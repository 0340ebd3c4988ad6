/* Webhooks: URL rules, the Standard Webhooks signature, sealing secrets, bodies, backoff. */
#include <arpa/inet.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "core/notify/webhook.h"

static void test_urls(void **state)
{
    (void)state;
    struct webhook_url u;
    assert_null(webhook_url_check("https://hooks.slack.com/services/T0/B0/x", &u));
    assert_true(u.https);
    assert_string_equal(u.host, "hooks.slack.com");
    assert_int_equal(u.port, 443);
    assert_string_equal(u.path, "/services/T0/B0/x");
    assert_null(webhook_url_check("http://127.0.0.1:8123/hook?x=1", &u));
    assert_false(u.https);
    assert_string_equal(u.host, "127.0.0.1");
    assert_int_equal(u.port, 8123);
    assert_string_equal(u.path, "/hook?x=1");
    assert_null(webhook_url_check("HTTP://[::1]:9000", &u));
    assert_string_equal(u.host, "::1");
    assert_int_equal(u.port, 9000);
    assert_string_equal(u.path, "");
    assert_null(webhook_url_check("http://example.com", &u));
    assert_int_equal(u.port, 80);

    static const char *const bad[] = {
        "",
        "ftp://example.com/x",
        "file:///etc/passwd",
        "gopher://127.0.0.1:6379/_FLUSHALL",
        "javascript:alert(1)",
        "dict://localhost:11211/",
        "//example.com/x",
        "example.com/hook",
        "http://",
        "http:///path",
        "http://user:pw@example.com/",
        "http://example.com@evil.test/",
        "http://example.com:0/",
        "http://example.com:65536/",
        "http://example.com:/",
        "http://example.com:80a/",
        "http://example.com:000080/",
        "http://exa mple.com/",
        "http://example.com/\n",
        "http://exämple.com/",
        "http://example.com/#frag",
        "http://[::1/",
        "http://[]/",
        "http://[::1]x/",
        "http://[zz::1]/",
        "http://ex%41mple.com/",
        "http://example.com\\@evil.test/",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_non_null(webhook_url_check(bad[i], NULL));
    assert_non_null(webhook_url_check(NULL, NULL));

    char big[WEBHOOK_URL_MAX + 2];
    memcpy(big, "http://a/", 9);
    memset(big + 9, 'x', sizeof big - 10);
    big[sizeof big - 1] = '\0';
    assert_string_equal(webhook_url_check(big, NULL), "must be at most 2048 bytes");
    big[WEBHOOK_URL_MAX] = '\0';
    assert_null(webhook_url_check(big, NULL));
}

static void test_redact(void **state)
{
    (void)state;
    char out[64];
    webhook_url_redact("https://hooks.slack.com/services/T0/B0/secret", out, sizeof out);
    assert_string_equal(out, "https://hooks.slack.com/\xe2\x80\xa6");
    webhook_url_redact("http://127.0.0.1:8123?token=x", out, sizeof out);
    assert_string_equal(out, "http://127.0.0.1:8123/\xe2\x80\xa6");
    webhook_url_redact("http://example.com", out, sizeof out);
    assert_string_equal(out, "http://example.com");
    char tiny[8];
    webhook_url_redact("https://hooks.slack.com/x", tiny, sizeof tiny);
    assert_string_equal(tiny, "https:/");
}

/* The example of the Standard Webhooks specification (standard-webhooks/standard-webhooks,
 * spec), checked independently with Python's hmac module. */
static void test_signature_vector(void **state)
{
    (void)state;
    unsigned char key[WEBHOOK_KEY_BYTES];
    size_t n = 0;
    assert_int_equal(sodium_base642bin(key, sizeof key, "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 32,
                                       NULL, &n, NULL, sodium_base64_VARIANT_ORIGINAL),
                     0);
    assert_int_equal(n, 24); /* that example's key is 24 bytes */
    const char *body = "{\"test\": 2432232314}";
    char sig[WEBHOOK_SIGNATURE_LEN + 1];
    webhook_sign(key, n, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body, strlen(body), sig);
    assert_string_equal(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    /* any change of id, time or body changes it */
    char other[WEBHOOK_SIGNATURE_LEN + 1];
    webhook_sign(key, n, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265331, body, strlen(body), other);
    assert_string_not_equal(sig, other);
    webhook_sign(key, n, "msg_p5jXN8AQM9LWM0D4loKWxJel", 1614265330, body, strlen(body), other);
    assert_string_not_equal(sig, other);
    webhook_sign(key, n, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body, strlen(body) - 1, other);
    assert_string_not_equal(sig, other);
}

static void test_secret_and_sealing(void **state)
{
    (void)state;
    char secret[WEBHOOK_SECRET_LEN + 1], again[WEBHOOK_SECRET_LEN + 1];
    webhook_secret_new(secret);
    webhook_secret_new(again);
    assert_int_equal(strlen(secret), WEBHOOK_SECRET_LEN);
    assert_memory_equal(secret, "whsec_", 6);
    assert_string_not_equal(secret, again);
    unsigned char key[WEBHOOK_KEY_BYTES], back[WEBHOOK_KEY_BYTES];
    assert_int_equal(webhook_secret_key(secret, key), 0);
    assert_int_equal(webhook_secret_key("whsec_short", key), -1);
    assert_int_equal(webhook_secret_key(NULL, key), -1);
    char wrong[WEBHOOK_SECRET_LEN + 1];
    memcpy(wrong, secret, sizeof wrong);
    wrong[0] = 'W';
    assert_int_equal(webhook_secret_key(wrong, back), -1);

    unsigned char sk[64], pk[32], other_sk[64];
    crypto_sign_keypair(pk, sk);
    crypto_sign_keypair(pk, other_sk);
    char sealed[WEBHOOK_SEALED_LEN + 1], sealed2[WEBHOOK_SEALED_LEN + 1];
    assert_int_equal(webhook_seal(sk, key, sealed), 0);
    assert_int_equal(strlen(sealed), WEBHOOK_SEALED_LEN);
    assert_int_equal(webhook_seal(sk, key, sealed2), 0);
    assert_string_not_equal(sealed, sealed2); /* a fresh nonce each time */
    memset(back, 0, sizeof back);
    assert_int_equal(webhook_unseal(sk, sealed, back), 0);
    assert_memory_equal(back, key, sizeof key);
    assert_int_equal(webhook_unseal(other_sk, sealed, back), -1); /* another server key */
    sealed[10] = sealed[10] == 'A' ? 'B' : 'A';                   /* tampered with */
    assert_int_equal(webhook_unseal(sk, sealed, back), -1);
    assert_int_equal(webhook_unseal(sk, "v1:short", back), -1);
    assert_int_equal(webhook_unseal(sk, NULL, back), -1);
}

static void test_bodies(void **state)
{
    (void)state;
    json_t *alert = json_pack("{s:s, s:s, s:s, s:f}", "id", "a1", "review_id", "r1", "message",
                              "throughput <fell> & stalled", "observed", 0.5);
    char *body = webhook_body("json", "drift", alert);
    assert_non_null(body);
    json_t *doc = json_loads(body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(doc, "type")), "alert.drift");
    assert_true(json_equal(json_object_get(doc, "alert"), alert));
    json_decref(doc);
    free(body);

    body = webhook_body("slack", "drift", alert);
    doc = json_loads(body, 0, NULL);
    assert_int_equal(json_object_size(doc), 1);
    assert_string_equal(
        json_string_value(json_object_get(doc, "text")),
        "capledger drift alert (review r1, alert a1): throughput &lt;fell&gt; &amp; stalled");
    json_decref(doc);
    free(body);

    json_t *integrity = json_pack("{s:s, s:s}", "id", "a2", "message", "root mismatch");
    body = webhook_body("slack", "log_integrity", integrity);
    doc = json_loads(body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(doc, "text")),
                        "capledger log integrity alert (alert a2): root mismatch");
    json_decref(doc);
    free(body);
    json_decref(integrity);

    json_t *ping = json_pack("{s:s, s:s}", "id", "w1", "message", "set up");
    body = webhook_body("json", "ping", ping);
    doc = json_loads(body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(doc, "type")), "ping");
    json_decref(doc);
    free(body);
    body = webhook_body("slack", "ping", ping);
    doc = json_loads(body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(doc, "text")),
                        "capledger test message (webhook w1): set up");
    json_decref(doc);
    free(body);
    json_decref(ping);

    assert_null(webhook_body("xml", "drift", alert));
    json_decref(alert);
}

static void test_verdict(void **state)
{
    (void)state;
    assert_int_equal(webhook_verdict(WEBHOOK_T_REPLIED, 200, 1), WEBHOOK_DELIVERED);
    assert_int_equal(webhook_verdict(WEBHOOK_T_REPLIED, 204, 5), WEBHOOK_DELIVERED);
    assert_int_equal(webhook_verdict(WEBHOOK_T_REPLIED, 404, 1), WEBHOOK_GIVE_UP);
    assert_int_equal(webhook_verdict(WEBHOOK_T_REPLIED, 410, 1), WEBHOOK_GIVE_UP);
    assert_int_equal(webhook_verdict(WEBHOOK_T_REPLIED, 400, 1), WEBHOOK_GIVE_UP);
    assert_int_equal(webhook_verdict(WEBHOOK_T_REPLIED, 408, 1), WEBHOOK_RETRY);
    assert_int_equal(webhook_verdict(WEBHOOK_T_REPLIED, 429, 1), WEBHOOK_RETRY);
    assert_int_equal(webhook_verdict(WEBHOOK_T_REPLIED, 500, 1), WEBHOOK_RETRY);
    assert_int_equal(webhook_verdict(WEBHOOK_T_REPLIED, 503, 11), WEBHOOK_RETRY);
    assert_int_equal(webhook_verdict(WEBHOOK_T_REPLIED, 302, 1), WEBHOOK_RETRY);
    assert_int_equal(webhook_verdict(WEBHOOK_T_ADDRESS_REFUSED, 0, 1), WEBHOOK_GIVE_UP);
    assert_int_equal(webhook_verdict(WEBHOOK_T_CONN_REFUSED, 0, 1), WEBHOOK_RETRY);
    assert_int_equal(webhook_verdict(WEBHOOK_T_CONN_REFUSED, 0, 2), WEBHOOK_RETRY);
    assert_int_equal(webhook_verdict(WEBHOOK_T_CONN_REFUSED, 0, 3), WEBHOOK_GIVE_UP);
    assert_int_equal(webhook_verdict(WEBHOOK_T_TIMEOUT, 0, 11), WEBHOOK_RETRY);
    assert_int_equal(webhook_verdict(WEBHOOK_T_OTHER, 0, 1), WEBHOOK_RETRY);
}

static void test_breaker(void **state)
{
    (void)state;
    assert_true(webhook_breaker_counts(WEBHOOK_T_TIMEOUT));
    assert_true(webhook_breaker_counts(WEBHOOK_T_CONN_REFUSED));
    assert_false(webhook_breaker_counts(WEBHOOK_T_REPLIED));
    assert_false(webhook_breaker_counts(WEBHOOK_T_OTHER));
    assert_true(webhook_breaker_open_s(0) == 0);
    assert_true(webhook_breaker_open_s(2) == 0);
    assert_true(webhook_breaker_open_s(3) == 60);
    assert_true(webhook_breaker_open_s(4) == 120);
    assert_true(webhook_breaker_open_s(8) == 1920);
    assert_true(webhook_breaker_open_s(9) == 3600);
    assert_true(webhook_breaker_open_s(1000) == 3600);
}

static void test_backoff(void **state)
{
    (void)state;
    /* the lowest draw is half the step, the highest just under the step */
    assert_true(webhook_backoff_s(1, 15, 0) == 7.5);
    assert_true(webhook_backoff_s(2, 15, 0) == 15);
    assert_true(webhook_backoff_s(3, 15, 0) == 30);
    assert_true(webhook_backoff_s(3, 15, UINT32_MAX) < 60);
    assert_true(webhook_backoff_s(3, 15, UINT32_MAX) > 59.99);
    /* capped: never more than an hour, however many attempts */
    assert_true(webhook_backoff_s(12, 15, UINT32_MAX) < WEBHOOK_BACKOFF_CAP_S);
    assert_true(webhook_backoff_s(1000, 15, 0) == WEBHOOK_BACKOFF_CAP_S / 2);
    assert_true(webhook_backoff_s(0, 15, 0) == 7.5);
    assert_true(webhook_backoff_s(-5, 0, 0) == 0.5);
    assert_true(isfinite(webhook_backoff_s(1, NAN, 0)));
}

static void test_addresses(void **state)
{
    (void)state;
    static const unsigned char public4[] = {93, 184, 215, 14}, loop4[] = {127, 0, 0, 1},
                               meta4[] = {169, 254, 169, 254}, zero4[] = {0, 0, 0, 0},
                               ten[] = {10, 1, 2, 3}, cgnat[] = {100, 64, 0, 1},
                               not_cgnat[] = {100, 128, 0, 1}, p172[] = {172, 31, 255, 1},
                               not172[] = {172, 32, 0, 1}, mcast[] = {239, 1, 1, 1},
                               bcast[] = {255, 255, 255, 255};
    assert_null(webhook_addr_refused(4, public4, 1));
    assert_null(webhook_addr_refused(4, loop4, 0));
    assert_non_null(webhook_addr_refused(4, loop4, 1));
    assert_non_null(webhook_addr_refused(4, meta4, 0));
    assert_non_null(webhook_addr_refused(4, zero4, 0));
    assert_non_null(webhook_addr_refused(4, mcast, 0));
    assert_non_null(webhook_addr_refused(4, bcast, 0));
    assert_null(webhook_addr_refused(4, ten, 0));
    assert_non_null(webhook_addr_refused(4, ten, 1));
    assert_non_null(webhook_addr_refused(4, cgnat, 1));
    assert_null(webhook_addr_refused(4, not_cgnat, 1));
    assert_non_null(webhook_addr_refused(4, p172, 1));
    assert_null(webhook_addr_refused(4, not172, 1));

    unsigned char v6[16] = {0};
    assert_non_null(webhook_addr_refused(6, v6, 0)); /* :: */
    v6[15] = 1;
    assert_null(webhook_addr_refused(6, v6, 0)); /* ::1 */
    assert_non_null(webhook_addr_refused(6, v6, 1));
    memset(v6, 0, sizeof v6);
    v6[10] = v6[11] = 0xff;
    memcpy(v6 + 12, meta4, 4); /* ::ffff:169.254.169.254 */
    assert_non_null(webhook_addr_refused(6, v6, 0));
    memcpy(v6 + 12, public4, 4);
    assert_null(webhook_addr_refused(6, v6, 1));
    memset(v6, 0, sizeof v6);
    v6[0] = 0xfe;
    v6[1] = 0x80;
    assert_non_null(webhook_addr_refused(6, v6, 0));
    v6[0] = 0xfd;
    v6[1] = 0x12;
    assert_null(webhook_addr_refused(6, v6, 0));
    assert_non_null(webhook_addr_refused(6, v6, 1));
    v6[0] = 0xff;
    assert_non_null(webhook_addr_refused(6, v6, 0));
    v6[0] = 0x26;
    v6[1] = 0x06;
    assert_null(webhook_addr_refused(6, v6, 1));
    assert_non_null(webhook_addr_refused(5, v6, 0));
}

/* Issue 25 item 6: every address by its parsed family, with and without deny_private. */
static void test_address_table(void **state)
{
    (void)state;
    static const struct {
        const char *addr;
        int refused_default, refused_private;
    } cases[] = {
        {"93.184.215.14", 0, 0},
        {"169.254.169.254", 1, 1},
        {"100.100.100.200", 1, 1}, /* Alibaba Cloud metadata */
        {"168.63.129.16", 1, 1},   /* Azure WireServer */
        {"100.100.100.201", 0, 1}, /* carrier-grade NAT, not metadata */
        {"127.0.0.1", 0, 1},
        {"10.0.0.1", 0, 1},
        {"fd00:ec2::254", 1, 1}, /* AWS IMDS over IPv6 */
        {"fd00:ec2::253", 0, 1}, /* unique-local, not metadata */
        {"2606:4700::1111", 0, 0},
        {"::1", 0, 1},
        {"::", 1, 1},
        {"fe80::1", 1, 1},
        {"ff02::1", 1, 1},
        /* IPv4 inside IPv6: judged as the IPv4 address */
        {"::ffff:169.254.169.254", 1, 1},
        {"::ffff:10.0.0.1", 0, 1},
        {"::ffff:93.184.215.14", 0, 0},
        {"::ffff:0:10.0.0.1", 0, 1}, /* IPv4-translated */
        {"::ffff:0:169.254.169.254", 1, 1},
        {"::10.0.0.1", 0, 1}, /* IPv4-compatible */
        {"::127.0.0.1", 0, 1},
        {"::169.254.169.254", 1, 1},
        {"::100.100.100.200", 1, 1},
        {"::93.184.215.14", 0, 0},
        {"64:ff9b::10.0.0.1", 0, 1}, /* NAT64 */
        {"64:ff9b::127.0.0.1", 0, 1},
        {"64:ff9b::169.254.169.254", 1, 1},
        {"64:ff9b::93.184.215.14", 0, 0},
        {"64:ff9b:1::a00:1", 0, 1},  /* local-use NAT64, 10.0.0.1 */
        {"2002:a00:1::1", 0, 1},     /* 6to4 of 10.0.0.1 */
        {"2002:7f00:1::", 0, 1},     /* 6to4 of 127.0.0.1 */
        {"2002:a9fe:a9fe::1", 1, 1}, /* 6to4 of 169.254.169.254 */
        {"2002:5db8:d70e::1", 0, 0}, /* 6to4 of 93.184.215.14 */
        {"fec0::1", 0, 1},           /* site-local */
        {"feff::1", 0, 1},
        {"2001:0:4136:e378::1", 0, 1}, /* Teredo */
        {"2001:db8::1", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        unsigned char a[16];
        int family = strchr(cases[i].addr, ':') ? 6 : 4;
        assert_int_equal(inet_pton(family == 6 ? AF_INET6 : AF_INET, cases[i].addr, a), 1);
        for (int deny = 0; deny <= 1; deny++) {
            int want = deny ? cases[i].refused_private : cases[i].refused_default;
            const char *why = webhook_addr_refused(family, a, deny);
            if ((why != NULL) != want)
                fail_msg("%s with deny_private=%d: %s", cases[i].addr, deny, why ? why : "allowed");
        }
    }
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_urls),
        cmocka_unit_test(test_redact),
        cmocka_unit_test(test_signature_vector),
        cmocka_unit_test(test_secret_and_sealing),
        cmocka_unit_test(test_bodies),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_verdict),
        cmocka_unit_test(test_breaker),
        cmocka_unit_test(test_addresses),
        cmocka_unit_test(test_address_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
