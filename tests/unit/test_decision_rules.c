/* core/ledger/decision_rules: a decision's references against the stored facts, and a stored
 * decision row bound to its log leaf. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/ledger/decision.h"
#include "core/ledger/decision_rules.h"
#include "core/ledger/keylog.h"
#include "testutil.h"

#define REVIEW "11111111-1111-4111-8111-111111111111"
#define OTHER_REVIEW "22222222-2222-4222-8222-222222222222"
#define D1 "7d444840-9dc0-11d1-b245-5ffdce74fad2"
#define D2 "8e555951-0ed1-42e2-8356-6ffedf85fbe3"
#define KEY_ID "21fe31dfa154a261626bf854046fd2271b7bed4b6abe45aa58877ef47f9721b9"
#define PK_B64 "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="

static int setup(void **state)
{
    (void)state;
    return sodium_init() < 0 ? -1 : 0;
}

/* Whether p holds a problem at pointer whose message contains words. */
static bool has(const struct problems *p, const char *pointer, const char *words)
{
    for (size_t i = 0; i < p->count; i++)
        if (strcmp(p->items[i].pointer, pointer) == 0 && strstr(p->items[i].message, words))
            return true;
    return false;
}

static json_t *record_of(const char *id, const char *supersedes, const char *chosen)
{
    json_t *r = json_pack("{s:s, s:s, s:s, s:[s], s:s}", "id", id, "review_id", REVIEW, "decision",
                          "advance", "comparison_sha256",
                          "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
                          "signer_key_id", KEY_ID);
    json_object_set_new(r, "supersedes", supersedes ? json_string(supersedes) : json_null());
    json_object_set_new(r, "chosen_option", chosen ? json_string(chosen) : json_null());
    return r;
}

static json_t *facts_of(const char *review_id, const char *sup_review, const char *sup_by,
                        int stored)
{
    json_t *f = json_object();
    json_object_set_new(f, "review", review_id ? json_pack("{s:s}", "id", review_id) : json_null());
    json_t *sup = json_null();
    if (sup_review) {
        sup = json_pack("{s:s}", "review_id", sup_review);
        json_object_set_new(sup, "superseded_by", sup_by ? json_string(sup_by) : json_null());
    }
    json_object_set_new(f, "supersedes", sup);
    json_object_set_new(f, "comparisons",
                        json_pack("[{s:b, s:{s:[{s:s},{s:s}]}}]", "stored", stored, "result",
                                  "options", "name", "a100", "name", "h100"));
    return f;
}

static void test_references_that_hold(void **state)
{
    (void)state;
    struct problems p;
    problems_init(&p);
    json_t *record = record_of(D2, D1, "h100");
    json_t *facts = facts_of(REVIEW, REVIEW, NULL, 1);
    decision_check_references(record, facts, &p);
    assert_int_equal(p.total, 0);
    problems_free(&p);
    json_decref(record);
    json_decref(facts);
}

static void test_references_that_fail(void **state)
{
    (void)state;
    struct problems p;
    /* No review, no superseded decision. */
    problems_init(&p);
    json_t *record = record_of(D2, D1, "h100");
    json_t *facts = facts_of(NULL, NULL, NULL, 1);
    decision_check_references(record, facts, &p);
    assert_true(has(&p, "/record/review_id", "no review"));
    assert_true(has(&p, "/record/supersedes", "no earlier decision"));
    problems_free(&p);
    json_decref(facts);

    /* A decision of another review; one already superseded. */
    problems_init(&p);
    facts = facts_of(REVIEW, OTHER_REVIEW, NULL, 1);
    decision_check_references(record, facts, &p);
    assert_true(has(&p, "/record/supersedes", "another review"));
    problems_free(&p);
    json_decref(facts);
    problems_init(&p);
    facts = facts_of(REVIEW, REVIEW, "99999999-9999-4999-8999-999999999999", 1);
    decision_check_references(record, facts, &p);
    assert_true(has(&p, "/record/supersedes", "already superseded by 99999999"));
    problems_free(&p);
    json_decref(facts);

    /* A comparison that is not stored; a chosen option that is not one of its options. */
    problems_init(&p);
    facts = facts_of(REVIEW, REVIEW, NULL, 0);
    decision_check_references(record, facts, &p);
    assert_true(has(&p, "/record/comparison_sha256/0", "no stored comparison"));
    problems_free(&p);
    json_decref(facts);
    json_decref(record);
    problems_init(&p);
    record = record_of(D2, NULL, "l40s");
    facts = facts_of(REVIEW, NULL, NULL, 1);
    decision_check_references(record, facts, &p);
    assert_true(has(&p, "/record/chosen_option", "'l40s' is not an option"));
    assert_int_equal(p.total, 1);
    problems_free(&p);
    json_decref(facts);

    /* An option named with no comparison cited. */
    problems_init(&p);
    facts = facts_of(REVIEW, NULL, NULL, 1);
    json_object_set_new(facts, "comparisons", json_array());
    decision_check_references(record, facts, &p);
    assert_true(has(&p, "/record/chosen_option", "cites no comparison"));
    problems_free(&p);
    json_decref(facts);
    json_decref(record);
}

static char *b64_of(const char *bytes, size_t len)
{
    char *out = codec_b64_encode_new((const uint8_t *)bytes, len);
    assert_non_null(out);
    return out;
}

/* A stored row as the store reads it: the leaf's view, plus leaf_index, signer and the helper
 * members. */
static json_t *row_for(const json_t *record, const char *owner, const char *enrolled_owner,
                       const json_t *successor)
{
    size_t len;
    char *leaf = decision_leaf(record, "c2ln", PK_B64, "2025-09-12T14:06:12.000001Z", &len);
    assert_non_null(leaf);
    json_t *row = decision_view((const uint8_t *)leaf, len);
    assert_non_null(row);
    json_object_set_new(row, "leaf_index", json_integer(3));
    json_object_set_new(row, "signer", json_string(owner));
    char *leaf_b64 = b64_of(leaf, len);
    json_object_set_new(row, "leaf", json_string(leaf_b64));
    free(leaf_b64);
    free(leaf);
    char *enrol = keylog_enrol_leaf(KEY_ID, PK_B64, enrolled_owner, "2025-09-01T00:00:00Z", &len);
    assert_non_null(enrol);
    char *enrol_b64 = b64_of(enrol, len);
    json_object_set_new(row, "enrol_leaf", json_string(enrol_b64));
    free(enrol_b64);
    free(enrol);
    json_object_set_new(row, "superseded_by", json_null());
    if (successor) {
        char *next = decision_leaf(successor, "c2ln", PK_B64, "2025-09-13T00:00:00Z", &len);
        char *next_b64 = b64_of(next, len);
        json_object_set_new(row, "successor_leaf", json_string(next_b64));
        json_object_set(row, "superseded_by", json_object_get(successor, "id"));
        free(next_b64);
        free(next);
    }
    return row;
}

static void test_bind_a_faithful_row(void **state)
{
    (void)state;
    json_t *record = record_of(D1, NULL, "h100");
    json_t *successor = record_of(D2, D1, "a100");
    json_t *row = row_for(record, "olga", "olga", successor);
    char fault[400] = "";
    decision_bind_to_leaf(row, fault, sizeof fault);
    assert_string_equal(fault, "");
    assert_true(json_equal(json_object_get(row, "record"), record));
    assert_null(json_object_get(row, "leaf"));
    assert_null(json_object_get(row, "enrol_leaf"));
    assert_null(json_object_get(row, "successor_leaf"));
    json_decref(row);
    json_decref(successor);
    json_decref(record);
}

static void test_bind_refuses_what_the_leaf_does_not_say(void **state)
{
    (void)state;
    json_t *record = record_of(D1, NULL, "h100");
    char fault[400];

    /* The row's decision edited in the table. */
    json_t *row = row_for(record, "olga", "olga", NULL);
    json_object_set_new(row, "decision", json_string("stop"));
    fault[0] = '\0';
    decision_bind_to_leaf(row, fault, sizeof fault);
    assert_non_null(strstr(fault, "the stored row's decision differs from leaf 3"));
    assert_null(json_object_get(row, "leaf"));
    json_decref(row);

    /* The signer is not the owner the log enrolled the key for. */
    row = row_for(record, "mallory", "olga", NULL);
    fault[0] = '\0';
    decision_bind_to_leaf(row, fault, sizeof fault);
    assert_non_null(strstr(fault, "not the owner the log enrolled its key for"));
    json_decref(row);

    /* A successor whose leaf does not supersede this decision. */
    json_t *unrelated = record_of(D2, NULL, "a100");
    row = row_for(record, "olga", "olga", unrelated);
    fault[0] = '\0';
    decision_bind_to_leaf(row, fault, sizeof fault);
    assert_non_null(strstr(fault, "whose leaf does not supersede it"));
    json_decref(row);
    json_decref(unrelated);

    /* A leaf that is not a decision leaf. */
    row = row_for(record, "olga", "olga", NULL);
    json_object_set_new(row, "leaf", json_string("e30=")); /* "{}" */
    fault[0] = '\0';
    decision_bind_to_leaf(row, fault, sizeof fault);
    assert_non_null(strstr(fault, "is not a decision leaf"));
    json_decref(row);
    json_decref(record);

    assert_null(decision_view_b64("not base64!"));
    assert_null(decision_view_b64(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_references_that_hold),
        cmocka_unit_test(test_references_that_fail),
        cmocka_unit_test(test_bind_a_faithful_row),
        cmocka_unit_test(test_bind_refuses_what_the_leaf_does_not_say),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
