/* Key events of the decision log: their exact leaf bytes, what a well-formed event is, and
 * the rules of a key's life along the log (enrolled once, revoked once and only after). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/ledger/decision.h"
#include "core/jcs.h"
#include "core/ledger/keylog.h"

struct key {
    char id[65], pk[45];
};

static void make_key(struct key *k, uint8_t seed_byte)
{
    uint8_t seed[32], pk[32], sk[64];
    memset(seed, seed_byte, sizeof seed);
    crypto_sign_seed_keypair(pk, sk, seed);
    decision_key_id(pk, k->id);
    codec_b64_encode(pk, 32, k->pk, sizeof k->pk);
}

static json_t *parse(const char *text)
{
    json_t *v = jcs_parse(text, strlen(text), NULL);
    assert_non_null(v);
    return v;
}

static void test_exact_leaf_bytes(void **state)
{
    (void)state;
    struct key k;
    make_key(&k, 7);
    size_t len;
    char *enrol = keylog_enrol_leaf(k.id, k.pk, "olga", "2026-01-05T10:00:00.000001Z", &len);
    char want[512];
    snprintf(want, sizeof want,
             "{\"at\":\"2026-01-05T10:00:00.000001Z\",\"key_id\":\"%s\",\"kind\":\"key_enrol\","
             "\"owner\":\"olga\",\"public_key\":\"%s\"}",
             k.id, k.pk);
    assert_string_equal(enrol, want);
    assert_int_equal(len, strlen(want));
    char *revoke = keylog_revoke_leaf(k.id, "2026-02-01T08:30:00.5Z", &len);
    snprintf(want, sizeof want,
             "{\"at\":\"2026-02-01T08:30:00.5Z\",\"key_id\":\"%s\",\"kind\":\"key_revoke\"}", k.id);
    assert_string_equal(revoke, want);
    /* Both parse back as the events they are. */
    struct keylog_event ev;
    char why[256];
    json_t *doc = parse(enrol);
    assert_int_equal(keylog_event_parse(doc, &ev, why, sizeof why), 0);
    assert_int_equal(ev.kind, KEYLOG_ENROL);
    assert_string_equal(ev.owner, "olga");
    assert_string_equal(ev.public_key, k.pk);
    json_decref(doc);
    doc = parse(revoke);
    assert_int_equal(keylog_event_parse(doc, &ev, why, sizeof why), 0);
    assert_int_equal(ev.kind, KEYLOG_REVOKE);
    assert_string_equal(ev.key_id, k.id);
    json_decref(doc);
    free(enrol);
    free(revoke);
}

static void expect_bad(const char *text, const char *want)
{
    struct keylog_event ev;
    char why[256] = "";
    json_t *doc = parse(text);
    assert_int_equal(keylog_event_parse(doc, &ev, why, sizeof why), -1);
    if (!strstr(why, want))
        fail_msg("\"%s\" for %s, want \"%s\"", why, text, want);
    json_decref(doc);
}

static void test_malformed_events(void **state)
{
    (void)state;
    struct key k, other;
    make_key(&k, 1);
    make_key(&other, 2);
    struct keylog_event ev;
    char why[256], text[512];
    json_t *doc =
        parse("{\"record\":{},\"signature\":\"\",\"public_key\":\"\",\"received_at\":\"\"}");
    assert_int_equal(keylog_event_parse(doc, &ev, why, sizeof why), 0);
    assert_int_equal(ev.kind, KEYLOG_DECISION);
    json_decref(doc);
    expect_bad("{\"kind\":\"key_rotate\"}", "unknown leaf kind");
    expect_bad("{\"kind\":1}", "unknown leaf kind");
    snprintf(text, sizeof text,
             "{\"at\":\"2026-01-05T10:00:00Z\",\"key_id\":\"%s\",\"kind\":\"key_enrol\","
             "\"owner\":\"olga\",\"public_key\":\"%s\"}",
             other.id, k.pk);
    expect_bad(text, "key_id is not the SHA-256 of public_key");
    snprintf(text, sizeof text, "{\"at\":\"yesterday\",\"key_id\":\"%s\",\"kind\":\"key_revoke\"}",
             k.id);
    expect_bad(text, "at is not an RFC 3339 UTC time");
    snprintf(text, sizeof text,
             "{\"at\":\"2026-01-05T10:00:00Z\",\"key_id\":\"%s\",\"kind\":\"key_revoke\",\"x\":1}",
             k.id);
    expect_bad(text, "a key_revoke leaf is {at, key_id, kind}");
    snprintf(text, sizeof text,
             "{\"at\":\"2026-01-05T10:00:00Z\",\"key_id\":\"%s\",\"kind\":\"key_enrol\","
             "\"owner\":\"\",\"public_key\":\"%s\"}",
             k.id, k.pk);
    expect_bad(text, "a key_enrol leaf is");
    expect_bad("{\"at\":\"2026-01-05T10:00:00Z\",\"key_id\":\"ABC\",\"kind\":\"key_revoke\"}",
               "key_id is not 64 lower-case hex digits");
}

static void test_key_life_along_the_log(void **state)
{
    (void)state;
    struct key k, other;
    make_key(&k, 3);
    make_key(&other, 4);
    struct keylog *log = keylog_new();
    char why[256];
    struct keylog_event enrol = {KEYLOG_ENROL, k.id, k.pk, "olga", "2026-01-05T10:00:00Z"};
    struct keylog_event revoke = {KEYLOG_REVOKE, k.id, NULL, NULL, "2026-01-06T10:00:00Z"};
    assert_int_equal(keylog_may_sign(log, k.id, k.pk, why, sizeof why), -1);
    assert_non_null(strstr(why, "is not enrolled by an earlier leaf"));
    assert_int_equal(keylog_apply(log, 3, &revoke, why, sizeof why), -1);
    assert_non_null(strstr(why, "no earlier leaf enrols it"));
    assert_int_equal(keylog_apply(log, 4, &enrol, why, sizeof why), 0);
    assert_int_equal(keylog_may_sign(log, k.id, k.pk, why, sizeof why), 0);
    assert_string_equal(keylog_owner(log, k.id), "olga");
    assert_null(keylog_owner(log, other.id));
    /* The key id enrolled, but another public key presented with it. */
    assert_int_equal(keylog_may_sign(log, k.id, other.pk, why, sizeof why), -1);
    assert_non_null(strstr(why, "differs from the one leaf 4 enrolled"));
    assert_int_equal(keylog_apply(log, 5, &enrol, why, sizeof why), -1);
    assert_non_null(strstr(why, "enrolled again (first by leaf 4)"));
    assert_int_equal(keylog_apply(log, 9, &revoke, why, sizeof why), 0);
    assert_int_equal(keylog_may_sign(log, k.id, k.pk, why, sizeof why), -1);
    assert_non_null(strstr(why, "was revoked by leaf 9"));
    assert_int_equal(keylog_apply(log, 10, &revoke, why, sizeof why), -1);
    assert_non_null(strstr(why, "revoked again (first by leaf 9)"));
    assert_int_equal(keylog_events(log), 2);
    keylog_free(log);
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_leaf_bytes),
        cmocka_unit_test(test_malformed_events),
        cmocka_unit_test(test_key_life_along_the_log),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
