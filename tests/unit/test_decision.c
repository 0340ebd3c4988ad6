/* Decision records: the exact signed bytes, signatures, leaf bytes and field validation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/ledger/decision.h"
#include "core/jcs.h"
#include "testutil.h"

/* RFC 8032 TEST 1 key pair: a fixed key makes the signature below a fixed value. */
#define TEST1_SEED "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
#define TEST1_PK_B64 "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="

static const char *const good_record =
    "{\"id\":\"7d444840-9dc0-11d1-b245-5ffdce74fad2\",\"review_id\":\"r-1\","
    "\"decision\":\"advance\",\"chosen_option\":\"l4-dedicated\","
    "\"comparison_sha256\":[\"" /* 64 hex */
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328\"],"
    "\"evidence\":[\"b-1\",42],\"question\":\"Which arrangement?\",\"baseline\":\"on-prem\","
    "\"assumptions\":[\"failure rate 2%\"],\"unresolved_questions\":[],"
    "\"residual_exposure\":\"spot price\",\"expected_operating_cost\":{\"amount\":\"128450.00\","
    "\"currency\":\"USD\",\"period\":\"quarter\"},\"next_authority_boundary\":\"CFO above 200k\","
    "\"owner\":\"ana\",\"accepted_by\":\"ben\",\"justification\":null,\"supersedes\":null,"
    "\"created_at\":\"2025-09-12T14:06:12.123Z\",\"signer_key_id\":"
    "\"21fe31dfa154a261626bf854046fd2271b7bed4b6abe45aa58877ef47f9721b9\"}";

static int setup(void **state)
{
    (void)state;
    return sodium_init() < 0 ? -1 : 0;
}

static json_t *parse(const char *text)
{
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(v);
    return v;
}

static void test1_keys(uint8_t pk[32], uint8_t sk[64])
{
    uint8_t seed[32];
    assert_int_equal(testutil_unhex(TEST1_SEED, seed, sizeof seed), 32);
    crypto_sign_seed_keypair(pk, sk, seed);
}

static void test_message_and_key_id(void **state)
{
    (void)state;
    json_t *record = parse("{\"b\":1,\"a\":\"\\u00e9\"}");
    size_t len;
    uint8_t *msg = decision_message(record, &len);
    const char *want = "capledger-decision-v1\n{\"a\":\"\xc3\xa9\",\"b\":1}";
    assert_int_equal(len, strlen(want));
    assert_memory_equal(msg, want, len);
    free(msg);
    json_decref(record);

    uint8_t pk[32], sk[64];
    test1_keys(pk, sk);
    char id[DECISION_KEY_ID_HEX_LEN + 1];
    decision_key_id(pk, id);
    /* sha256 of the TEST 1 public key, computed independently with Python's hashlib. */
    assert_string_equal(id, "21fe31dfa154a261626bf854046fd2271b7bed4b6abe45aa58877ef47f9721b9");
    char pk_b64[DECISION_PUBLIC_KEY_B64_LEN + 1];
    assert_string_equal(codec_b64_encode(pk, 32, pk_b64, sizeof pk_b64), TEST1_PK_B64);
}

static void test_sign_verify(void **state)
{
    (void)state;
    uint8_t pk[32], sk[64];
    test1_keys(pk, sk);
    json_t *record = parse(good_record);
    char sig[DECISION_SIGNATURE_B64_LEN + 1];
    assert_int_equal(decision_sign(record, sk, sig), 0);
    assert_int_equal(strlen(sig), DECISION_SIGNATURE_B64_LEN);
    assert_int_equal(decision_verify(record, sig, TEST1_PK_B64), 0);

    /* Member order and whitespace do not matter: the canonical bytes are signed. */
    json_t *reordered =
        parse("{\"signer_key_id\":"
              "\"21fe31dfa154a261626bf854046fd2271b7bed4b6abe45aa58877ef47f9721b9\","
              "\"decision\":\"advance\"}");
    char sig2[DECISION_SIGNATURE_B64_LEN + 1];
    assert_int_equal(decision_sign(reordered, sk, sig2), 0);
    json_t *same = parse("{ \"decision\" : \"advance\", \"signer_key_id\" : "
                         "\"21fe31dfa154a261626bf854046fd2271b7bed4b6abe45aa58877ef47f9721b9\" }");
    assert_int_equal(decision_verify(same, sig2, TEST1_PK_B64), 0);
    json_decref(same);
    json_decref(reordered);

    /* Any change to the record, another key, or a damaged signature fails. */
    json_t *changed = json_deep_copy(record);
    assert_int_equal(json_object_set_new(changed, "decision", json_string("stop")), 0);
    assert_int_equal(decision_verify(changed, sig, TEST1_PK_B64), -1);
    json_decref(changed);
    uint8_t other_pk[32], other_sk[64];
    crypto_sign_keypair(other_pk, other_sk);
    char other_b64[DECISION_PUBLIC_KEY_B64_LEN + 1];
    codec_b64_encode(other_pk, 32, other_b64, sizeof other_b64);
    assert_int_equal(decision_verify(record, sig, other_b64), -1);
    char bad_sig[DECISION_SIGNATURE_B64_LEN + 1];
    memcpy(bad_sig, sig, sizeof bad_sig);
    bad_sig[10] = bad_sig[10] == 'A' ? 'B' : 'A';
    assert_int_equal(decision_verify(record, bad_sig, TEST1_PK_B64), -1);
    assert_int_equal(decision_verify(record, "AAAA", TEST1_PK_B64), -1);
    assert_int_equal(decision_verify(record, sig, "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo"),
                     -1);
    assert_int_equal(decision_verify(record, NULL, TEST1_PK_B64), -1);
    json_decref(record);
}

static void test_leaf_bytes(void **state)
{
    (void)state;
    json_t *record = parse("{\"z\":1,\"a\":[true,null]}");
    size_t len;
    char *leaf = decision_leaf(record, "c2ln", "cGs=", "2025-09-12T14:06:12Z", &len);
    const char *want = "{\"public_key\":\"cGs=\",\"received_at\":\"2025-09-12T14:06:12Z\","
                       "\"record\":{\"a\":[true,null],\"z\":1},\"signature\":\"c2ln\"}";
    assert_string_equal(leaf, want);
    assert_int_equal(len, strlen(want));
    free(leaf);
    assert_int_equal(json_object_get(record, "z")->refcount, 1);
    json_decref(record);
}

/* What the API serves comes from the leaf; a stored row that says anything else is named. */
static void test_view_from_leaf(void **state)
{
    (void)state;
    json_t *record = parse(good_record);
    /* An upper-case UUID is served in PostgreSQL's lower-case text. */
    json_object_set_new(record, "id", json_string("7D444840-9DC0-11D1-B245-5FFDCE74FAD2"));
    size_t len;
    char *leaf = decision_leaf(record, "c2ln", "cGs=", "2025-09-12T14:06:12.000001Z", &len);
    json_t *view = decision_view((const uint8_t *)leaf, len);
    assert_non_null(view);
    assert_string_equal(json_string_value(json_object_get(view, "id")),
                        "7d444840-9dc0-11d1-b245-5ffdce74fad2");
    assert_string_equal(json_string_value(json_object_get(view, "decision")), "advance");
    assert_string_equal(json_string_value(json_object_get(view, "received_at")),
                        "2025-09-12T14:06:12.000001Z");
    assert_true(json_equal(json_object_get(view, "record"), record));
    assert_true(json_is_null(json_object_get(view, "supersedes")));
    json_t *row = json_deep_copy(view);
    json_object_set_new(row, "leaf_index", json_integer(3));
    assert_null(decision_view_mismatch(row, view));
    json_object_set_new(row, "decision", json_string("stop"));
    assert_string_equal(decision_view_mismatch(row, view), "decision");
    json_object_set_new(row, "decision", json_string("advance"));
    json_object_set_new(json_object_get(row, "record"), "owner", json_string("mallory"));
    assert_string_equal(decision_view_mismatch(row, view), "record");
    json_decref(row);
    json_decref(view);
    free(leaf);
    /* A key event, or bytes that are not JSON, are not decision leaves. */
    const char *key_event =
        "{\"at\":\"2025-09-12T14:06:12Z\",\"key_id\":\"ab\",\"kind\":\"key_revoke\"}";
    assert_null(decision_view((const uint8_t *)key_event, strlen(key_event)));
    assert_null(decision_view((const uint8_t *)"{", 1));
    json_decref(record);
}

static void test_validate_good(void **state)
{
    (void)state;
    json_t *record = parse(good_record);
    struct problems errs;
    problems_init(&errs);
    assert_int_equal(decision_validate(record, "/record", &errs), 0);
    assert_int_equal(errs.count, 0);
    /* Optional fields may be left out. */
    static const char *const optional[] = {"chosen_option",           "question",   "assumptions",
                                           "expected_operating_cost", "supersedes", "owner"};
    for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++)
        assert_int_equal(json_object_del(record, optional[i]), 0);
    assert_int_equal(decision_validate(record, "/record", &errs), 0);
    problems_free(&errs);
    json_decref(record);
}

static bool has_problem(const struct problems *errs, const char *pointer)
{
    for (size_t i = 0; i < errs->count; i++)
        if (strcmp(errs->items[i].pointer, pointer) == 0)
            return true;
    return false;
}

/* A leaf must fit a C2SP entry bundle entry (65,535 bytes): a record over DECISION_RECORD_MAX
 * canonical bytes is refused, naming the record; one just under is accepted. */
static void test_validate_record_size(void **state)
{
    (void)state;
    json_t *record = parse(good_record);
    size_t base = 0;
    char *canon = jcs_serialize(record, &base);
    free(canon);
    struct problems errs;
    problems_init(&errs);
    size_t room = DECISION_RECORD_MAX - base; /* the question may grow by this much */
    const char *q = json_string_value(json_object_get(record, "question"));
    size_t qlen = strlen(q) + room;
    char *longer = malloc(qlen + 2);
    memset(longer, 'q', qlen + 1);
    longer[qlen] = 0;
    json_object_set_new(record, "question", json_string(longer));
    assert_int_equal(decision_validate(record, "/record", &errs), 0); /* exactly the limit */
    longer[qlen] = 'q';
    longer[qlen + 1] = 0;
    json_object_set_new(record, "question", json_string(longer));
    assert_int_equal(decision_validate(record, "/record", &errs), 1);
    assert_true(has_problem(&errs, "/record"));
    free(longer);
    problems_free(&errs);
    json_decref(record);
}

/* jcs_parse accepts U+0000 in member names; a record never carries one, since "decision\0x"
 * would read as "decision" to every C-string comparison. */
static void test_validate_refuses_nul_in_member_names(void **state)
{
    (void)state;
    json_t *record = parse(good_record);
    json_object_setn_new(record, "decision\0x", 10, json_string("advance"));
    struct problems errs;
    problems_init(&errs);
    assert_true(decision_validate(record, "/record", &errs) >= 1);
    bool named = false;
    for (size_t i = 0; i < errs.count; i++)
        named |= strcmp(errs.items[i].message, "member names may not hold U+0000") == 0;
    assert_true(named);
    problems_free(&errs);
    json_decref(record);
}

static void test_validate_names_every_fault(void **state)
{
    (void)state;
    json_t *record = parse(good_record);
    assert_int_equal(json_object_del(record, "id"), 0);
    json_object_set_new(record, "decision", json_string("go"));
    json_object_set_new(record, "created_at", json_string("2025-09-12 14:06:12"));
    json_object_set_new(
        record, "signer_key_id",
        json_string("21FE31DFA154A261626BF854046FD2271B7BED4B6ABE45AA58877EF47F9721B9"));
    json_object_set_new(record, "supersedes", json_string("not-a-uuid"));
    json_object_set_new(record, "surprise", json_true());
    json_object_set_new(record, "evidence", json_pack("[s, i, s]", "ok", 0, ""));
    json_object_set_new(record, "comparison_sha256", json_pack("[s]", "abc"));
    json_object_set_new(
        record, "expected_operating_cost",
        json_pack("{s:f, s:s, s:s}", "amount", 128450.0, "currency", "usd", "period", "quarter"));
    json_object_set_new(record, "assumptions", json_pack("[s, I]", "ok", 9007199254740992LL));
    json_object_set_new(record, "unresolved_questions", json_string("none"));
    struct problems errs;
    problems_init(&errs);
    size_t n = decision_validate(record, "/record", &errs);
    static const char *const want[] = {
        "/record/id",
        "/record/decision",
        "/record/created_at",
        "/record/signer_key_id",
        "/record/supersedes",
        "/record/surprise",
        "/record/evidence/1",
        "/record/evidence/2",
        "/record/comparison_sha256/0",
        "/record/expected_operating_cost/amount",
        "/record/expected_operating_cost/currency",
        "/record/assumptions/1",
        "/record/unresolved_questions",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!has_problem(&errs, want[i]))
            fail_msg("no problem reported at %s", want[i]);
    /* The real amount is named twice: wrong type for the field, and a float anywhere. */
    assert_int_equal(n, sizeof want / sizeof want[0] + 2);
    assert_int_equal(errs.count, n);
    problems_free(&errs);
    json_decref(record);

    problems_init(&errs);
    json_t *not_object = json_array();
    assert_int_equal(decision_validate(not_object, NULL, &errs), 1);
    assert_string_equal(errs.items[0].pointer, "");
    json_decref(not_object);
    problems_free(&errs);
}

static void test_validate_timestamps(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool ok;
    } cases[] = {
        {"2025-09-12T14:06:12Z", true},       {"2025-09-12T14:06:12.123456Z", true},
        {"2024-02-29T00:00:00Z", true},       {"2025-02-29T00:00:00Z", false},
        {"2025-09-12T14:06:12+00:00", false}, {"2025-09-12t14:06:12Z", false},
        {"2025-09-12T24:00:00Z", false},      {"2025-09-12T14:06Z", false},
        {"2025/09/12T14:06:12Z", false},      {"2025-09-12T14:06:12.Z", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *record = parse(good_record);
        json_object_set_new(record, "created_at", json_string(cases[i].text));
        struct problems errs;
        problems_init(&errs);
        size_t n = decision_validate(record, "", &errs);
        if ((n == 0) != cases[i].ok)
            fail_msg("%s: %zu problems", cases[i].text, n);
        problems_free(&errs);
        json_decref(record);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_message_and_key_id),
        cmocka_unit_test(test_sign_verify),
        cmocka_unit_test(test_leaf_bytes),
        cmocka_unit_test(test_view_from_leaf),
        cmocka_unit_test(test_validate_good),
        cmocka_unit_test(test_validate_refuses_nul_in_member_names),
        cmocka_unit_test(test_validate_record_size),
        cmocka_unit_test(test_validate_names_every_fault),
        cmocka_unit_test(test_validate_timestamps),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
