/* Audit bundles built here from fresh keys — a log of five signed decisions, two comparisons,
 * a signed checkpoint — verify; each kind of tampering fails and names the bad item. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/ledger/bundle.h"
#include "core/ledger/codec.h"
#include "core/cost/cost.h"
#include "core/ledger/decision.h"
#include "core/jcs.h"
#include "core/ledger/keylog.h"
#include "core/ledger/merkle.h"
#include "core/ledger/note.h"
#include "oracle/bundle_verify.h"

#define ORIGIN "localhost/capledger"
#define LEAVES 5

struct fixture {
    uint8_t log_pk[32], log_sk[64];
    uint8_t alice_pk[32], alice_sk[64];
    char alice_id[65], alice_pk_b64[45];
    char comparison[2][65];
    json_t *bundle;
};

/* The verifier key the auditor holds: the fixture's log key. */
static char trusted_key[256];

static int verify(const json_t *bundle, const char *previous, char *why, size_t why_size)
{
    struct bundle_trust trust = {.verifier_key = trusted_key, .previous_checkpoint = previous};
    return bundle_verify(bundle, &trust, NULL, why, why_size);
}

static char *sha256_of_jcs(const json_t *v, char hex[65])
{
    size_t len;
    char *bytes = jcs_serialize(v, &len);
    assert_non_null(bytes);
    uint8_t digest[32];
    crypto_hash_sha256(digest, (const uint8_t *)bytes, len);
    free(bytes);
    return codec_hex_encode(digest, 32, hex);
}

static json_t *make_record(struct fixture *f, int i, const char *cited)
{
    char id[64];
    snprintf(id, sizeof id, "7d444840-9dc0-11d1-b245-5ffdce74fa%02d", i);
    char created[32];
    snprintf(created, sizeof created, "2025-09-12T14:06:%02dZ", i);
    return json_pack("{s:s, s:s, s:s, s:[s], s:[], s:s, s:s}", "id", id, "review_id", "r-1",
                     "decision", i % 2 ? "revise" : "advance", "comparison_sha256", cited,
                     "evidence", "created_at", created, "signer_key_id", f->alice_id);
}

/* Leaf bytes of record signed by alice (or with the given signature), base64 for the bundle. */
static json_t *make_leaf(struct fixture *f, json_t *record, const char *signature,
                         const char *received_at, uint8_t hash_out[32])
{
    char sig[DECISION_SIGNATURE_B64_LEN + 1];
    if (!signature) {
        assert_int_equal(decision_sign(record, f->alice_sk, sig), 0);
        signature = sig;
    }
    size_t len;
    char *bytes = decision_leaf(record, signature, f->alice_pk_b64, received_at, &len);
    assert_non_null(bytes);
    if (hash_out)
        merkle_leaf_hash((const uint8_t *)bytes, len, hash_out);
    char *b64 = codec_b64_encode_new((const uint8_t *)bytes, len);
    free(bytes);
    json_t *s = json_string(b64);
    free(b64);
    return s;
}

static char *sign_checkpoint(const uint8_t sk[64], uint64_t size, const uint8_t root[32])
{
    char *body = note_checkpoint_body(ORIGIN, size, root);
    size_t len;
    int status;
    char *note = note_sign(body, strlen(body), ORIGIN, sk, &len, &status);
    free(body);
    assert_non_null(note);
    return note;
}

/* Re-signs the bundle's checkpoint over its current leaves, as a server holding the key would
 * after tampering with its own database. */
static void resign(struct fixture *f)
{
    json_t *leaves = json_object_get(f->bundle, "leaves");
    size_t n = json_array_size(leaves);
    uint8_t hashes[16][32], root[32];
    for (size_t i = 0; i < n; i++) {
        const char *b64 = json_string_value(json_array_get(leaves, i));
        uint8_t bytes[2048];
        long len = codec_b64_decode(b64, strlen(b64), bytes, sizeof bytes);
        assert_true(len > 0);
        merkle_leaf_hash(bytes, (size_t)len, hashes[i]);
    }
    merkle_root((const uint8_t(*)[32])hashes, n, root);
    char *note = sign_checkpoint(f->log_sk, n, root);
    json_object_set_new(f->bundle, "checkpoint", json_string(note));
    free(note);
}

static int setup(void **state)
{
    if (sodium_init() < 0)
        return -1;
    struct fixture *f = calloc(1, sizeof *f);
    crypto_sign_keypair(f->log_pk, f->log_sk);
    crypto_sign_keypair(f->alice_pk, f->alice_sk);
    decision_key_id(f->alice_pk, f->alice_id);
    codec_b64_encode(f->alice_pk, 32, f->alice_pk_b64, sizeof f->alice_pk_b64);

    json_t *comparisons = json_object();
    for (int c = 0; c < 2; c++) {
        json_t *scenario = json_pack("{s:s, s:[{s:s, s:f}]}", "kind", "inference", "options",
                                     "name", "l4", "price_per_hour", 0.8 + c);
        char input[65];
        sha256_of_jcs(scenario, input);
        json_t *result = json_pack("{s:s, s:s, s:s, s:[{s:s, s:f}]}", "engine_version",
                                   "capledger-cost/1.0.0", "input_sha256", input, "winner", "l4",
                                   "options", "name", "l4", "expected_total_cost", 21297.6 + c);
        sha256_of_jcs(result, f->comparison[c]);
        json_object_set_new(comparisons, f->comparison[c],
                            json_pack("{s:o, s:o}", "scenario", scenario, "result", result));
    }

    json_t *leaves = json_array();
    uint8_t hashes[LEAVES][32], root[32];
    for (int i = 0; i < LEAVES; i++) {
        json_t *record = make_record(f, i, f->comparison[i % 2]);
        char received[32];
        snprintf(received, sizeof received, "2025-09-12T14:07:%02d.000100Z", i);
        json_array_append_new(leaves, make_leaf(f, record, NULL, received, hashes[i]));
        json_decref(record);
    }
    merkle_root((const uint8_t(*)[32])hashes, LEAVES, root);
    char *note = sign_checkpoint(f->log_sk, LEAVES, root);
    struct note_verifier v;
    assert_int_equal(note_verifier_init(&v, ORIGIN, f->log_pk), NOTE_OK);
    char *vkey = note_verifier_text(&v);
    snprintf(trusted_key, sizeof trusted_key, "%s", vkey);
    f->bundle = json_pack("{s:s, s:s, s:s, s:o, s:{s:{s:s, s:s, s:n}}, s:o}", "origin", ORIGIN,
                          "verifier_key", vkey, "checkpoint", note, "leaves", leaves, "signer_keys",
                          f->alice_id, "public_key", f->alice_pk_b64, "owner", "alice",
                          "revoked_at", "comparisons", comparisons);
    free(vkey);
    free(note);
    assert_non_null(f->bundle);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    json_decref(f->bundle);
    free(f);
    return 0;
}

/* Runs bundle_verify on a copy changed by the caller and checks the failure names `want`. */
static void expect_failure(const json_t *bundle, const char *previous, const char *want)
{
    char why[512] = "";
    int rc = verify(bundle, previous, why, sizeof why);
    if (rc == 0)
        fail_msg("verified, want a failure starting \"%s\"", want);
    if (strncmp(why, want, strlen(want)) != 0)
        fail_msg("failure \"%s\", want one starting \"%s\"", why, want);
}

static void test_untouched_bundle_verifies(void **state)
{
    struct fixture *f = *state;
    char why[512] = "";
    if (verify(f->bundle, NULL, why, sizeof why) != 0)
        fail_msg("%s", why);
}

static void leaf_bytes(const json_t *bundle, size_t i, uint8_t *out, long *len)
{
    const char *b64 = json_string_value(json_array_get(json_object_get(bundle, "leaves"), i));
    *len = codec_b64_decode(b64, strlen(b64), out, 2048);
    assert_true(*len > 0);
}

static void set_leaf_bytes(json_t *bundle, size_t i, const uint8_t *bytes, size_t len)
{
    char *b64 = codec_b64_encode_new(bytes, len);
    json_array_set_new(json_object_get(bundle, "leaves"), i, json_string(b64));
    free(b64);
}

static void test_tampered_leaf_byte(void **state)
{
    struct fixture *f = *state;
    uint8_t bytes[2048];
    long len;
    leaf_bytes(f->bundle, 2, bytes, &len);
    /* A letter of the decision: still canonical JSON, no longer what alice signed. */
    uint8_t *at = memmem(bytes, (size_t)len, "advance", 7);
    assert_non_null(at);
    at[6] = 'f';
    json_t *copy = json_deep_copy(f->bundle);
    set_leaf_bytes(copy, 2, bytes, (size_t)len);
    expect_failure(copy, NULL, "leaf 2: approver signature does not verify");
    /* Even with the checkpoint re-signed over the changed leaf. */
    struct fixture g = *f;
    g.bundle = copy;
    resign(&g);
    expect_failure(copy, NULL, "leaf 2: approver signature does not verify");
    /* A byte that breaks the JSON. */
    at[6] = '"';
    set_leaf_bytes(copy, 2, bytes, (size_t)len);
    expect_failure(copy, NULL, "leaf 2: not valid JSON");
    json_decref(copy);
}

static void test_non_canonical_leaf(void **state)
{
    struct fixture *f = *state;
    uint8_t bytes[2048];
    long len;
    leaf_bytes(f->bundle, 0, bytes, &len);
    memmove(bytes + 2, bytes + 1, (size_t)len - 1);
    bytes[1] = ' ';
    json_t *copy = json_deep_copy(f->bundle);
    set_leaf_bytes(copy, 0, bytes, (size_t)len + 1);
    expect_failure(copy, NULL, "leaf 0: not in RFC 8785 canonical form");
    json_decref(copy);
}

static void test_tampered_comparison(void **state)
{
    struct fixture *f = *state;
    json_t *copy = json_deep_copy(f->bundle);
    json_t *result = json_object_get(
        json_object_get(json_object_get(copy, "comparisons"), f->comparison[1]), "result");
    json_t *option = json_array_get(json_object_get(result, "options"), 0);
    json_object_set_new(option, "expected_total_cost", json_real(1.0));
    char want[128];
    snprintf(want, sizeof want, "comparison %s: its result hashes to", f->comparison[1]);
    expect_failure(copy, NULL, want);
    json_decref(copy);

    /* The scenario changed under an unchanged result. */
    copy = json_deep_copy(f->bundle);
    json_t *scenario = json_object_get(
        json_object_get(json_object_get(copy, "comparisons"), f->comparison[0]), "scenario");
    json_object_set_new(scenario, "kind", json_string("batch"));
    snprintf(want, sizeof want, "comparison %s: its scenario does not hash", f->comparison[0]);
    expect_failure(copy, NULL, want);
    json_decref(copy);

    /* A cited comparison left out. */
    copy = json_deep_copy(f->bundle);
    json_object_del(json_object_get(copy, "comparisons"), f->comparison[0]);
    snprintf(want, sizeof want, "leaf 0: cited comparison %s is not in the bundle",
             f->comparison[0]);
    expect_failure(copy, NULL, want);
    json_decref(copy);
}

static void test_replaced_signature(void **state)
{
    struct fixture *f = *state;
    json_t *copy = json_deep_copy(f->bundle);
    /* Leaf 1 carrying the signature alice made for record 0: valid base64, wrong message. */
    json_t *record0 = make_record(f, 0, f->comparison[0]);
    json_t *record1 = make_record(f, 1, f->comparison[1]);
    char sig0[DECISION_SIGNATURE_B64_LEN + 1];
    assert_int_equal(decision_sign(record0, f->alice_sk, sig0), 0);
    json_array_set_new(json_object_get(copy, "leaves"), 1,
                       make_leaf(f, record1, sig0, "2025-09-12T14:07:01.000100Z", NULL));
    expect_failure(copy, NULL, "leaf 1: approver signature does not verify");
    json_decref(record0);
    json_decref(record1);
    json_decref(copy);
}

static void test_dropped_leaf(void **state)
{
    struct fixture *f = *state;
    json_t *copy = json_deep_copy(f->bundle);
    json_array_remove(json_object_get(copy, "leaves"), 3);
    expect_failure(copy, NULL, "leaves: the checkpoint covers 5 leaves but the bundle has 4");
    /* A server that re-signs after dropping the leaf is caught by an older checkpoint. */
    const char *old = json_string_value(json_object_get(f->bundle, "checkpoint"));
    struct fixture g = *f;
    g.bundle = copy;
    resign(&g);
    char why[256];
    assert_int_equal(verify(copy, NULL, why, sizeof why), 0);
    expect_failure(copy, old, "previous checkpoint: size 5 is larger than the log's 4");
    json_decref(copy);
}

static void test_wrong_root_or_key(void **state)
{
    struct fixture *f = *state;
    json_t *copy = json_deep_copy(f->bundle);
    uint8_t root[32] = {1};
    char *note = sign_checkpoint(f->log_sk, LEAVES, root);
    json_object_set_new(copy, "checkpoint", json_string(note));
    free(note);
    expect_failure(copy, NULL, "checkpoint: the root over the 5 leaves does not match");
    uint8_t other_pk[32], other_sk[64];
    crypto_sign_keypair(other_pk, other_sk);
    note = sign_checkpoint(other_sk, LEAVES, root);
    json_object_set_new(copy, "checkpoint", json_string(note));
    free(note);
    expect_failure(copy, NULL, "checkpoint: no signature by the verifier key");
    json_object_set_new(copy, "origin", json_string("elsewhere"));
    expect_failure(copy, NULL, "verifier_key: names \"localhost/capledger\", not the origin");
    json_object_set_new(copy, "verifier_key", json_string("garbage"));
    expect_failure(copy, NULL, "verifier_key: invalid verifier key");
    json_object_del(copy, "leaves");
    expect_failure(copy, NULL, "bundle: needs");
    json_decref(copy);
}

static void test_revoked_key(void **state)
{
    struct fixture *f = *state;
    json_t *copy = json_deep_copy(f->bundle);
    json_t *key = json_object_get(json_object_get(copy, "signer_keys"), f->alice_id);
    /* Revoked 400 µs after leaf 4 was received: still good (microseconds count). */
    json_object_set_new(key, "revoked_at", json_string("2025-09-12T14:07:04.000500Z"));
    char why[256];
    if (verify(copy, NULL, why, sizeof why) != 0)
        fail_msg("%s", why);
    json_object_set_new(key, "revoked_at", json_string("2025-09-12T14:07:04.000099Z"));
    expect_failure(copy, NULL, "leaf 4: signed with key");
    json_object_set_new(key, "revoked_at", json_string("2025-09-12T16:07:01.5+02:00"));
    expect_failure(copy, NULL, "leaf 2: signed with key");
    json_object_set_new(key, "revoked_at", json_string("yesterday"));
    expect_failure(copy, NULL, "signer_keys[");
    json_object_del(json_object_get(copy, "signer_keys"), f->alice_id);
    expect_failure(copy, NULL, "leaf 0: signer key");
    json_decref(copy);
}

static void test_previous_checkpoint(void **state)
{
    struct fixture *f = *state;
    uint8_t hashes[LEAVES][32];
    for (size_t i = 0; i < LEAVES; i++) {
        uint8_t bytes[2048];
        long len;
        leaf_bytes(f->bundle, i, bytes, &len);
        merkle_leaf_hash(bytes, (size_t)len, hashes[i]);
    }
    char why[256];
    for (size_t size = 0; size <= LEAVES; size++) {
        uint8_t root[32];
        merkle_root((const uint8_t(*)[32])hashes, size, root);
        char *old = sign_checkpoint(f->log_sk, size, root);
        if (verify(f->bundle, old, why, sizeof why) != 0)
            fail_msg("size %zu: %s", size, why);
        free(old);
    }
    /* A fork: the log once said leaf 1 was something else. */
    uint8_t forked[3][32], root[32];
    memcpy(forked, hashes, sizeof forked);
    forked[1][0] ^= 1;
    merkle_root((const uint8_t(*)[32])forked, 3, root);
    char *old = sign_checkpoint(f->log_sk, 3, root);
    expect_failure(f->bundle, old,
                   "previous checkpoint: its tree of size 3 is not a prefix of the log");
    free(old);
    /* An old checkpoint by another key is not evidence. */
    uint8_t other_pk[32], other_sk[64];
    crypto_sign_keypair(other_pk, other_sk);
    merkle_root((const uint8_t(*)[32])hashes, 3, root);
    old = sign_checkpoint(other_sk, 3, root);
    expect_failure(f->bundle, old, "previous checkpoint: no signature by the verifier key");
    free(old);
    expect_failure(f->bundle, "not a note", "previous checkpoint: malformed signed note");
}

/* A forger drops a leaf, rebuilds the root and signs the checkpoint with a key of their own,
 * naming it as the bundle's verifier_key: only the key the auditor holds catches it. */
static void test_forged_bundle_needs_the_held_key(void **state)
{
    struct fixture *f = *state;
    json_t *copy = json_deep_copy(f->bundle);
    json_array_remove(json_object_get(copy, "leaves"), 2);
    uint8_t forger_pk[32];
    struct fixture g = *f;
    g.bundle = copy;
    crypto_sign_keypair(forger_pk, g.log_sk);
    resign(&g);
    struct note_verifier v;
    assert_int_equal(note_verifier_init(&v, ORIGIN, forger_pk), NOTE_OK);
    char *forger_key = note_verifier_text(&v);
    json_object_set_new(copy, "verifier_key", json_string(forger_key));
    /* Self-consistent: with the forger's key as the one held, it verifies. */
    struct bundle_trust naive = {.verifier_key = forger_key};
    char why[512];
    assert_int_equal(bundle_verify(copy, &naive, NULL, why, sizeof why), 0);
    expect_failure(copy, NULL, "verifier_key: the bundle names");
    /* The forger's checkpoint under the real key's name. */
    json_object_set_new(copy, "verifier_key", json_string(trusted_key));
    expect_failure(copy, NULL, "checkpoint: no signature by the verifier key");
    /* Nothing held: nothing verified. */
    struct bundle_trust none = {0};
    assert_int_equal(bundle_verify(f->bundle, &none, NULL, why, sizeof why), 1);
    assert_non_null(strstr(why, "no verifier key"));
    assert_int_equal(bundle_verify(f->bundle, NULL, NULL, why, sizeof why), 1);
    struct bundle_trust garbage = {.verifier_key = "localhost/capledger+00+AAAA"};
    assert_int_equal(bundle_verify(f->bundle, &garbage, NULL, why, sizeof why), 1);
    assert_non_null(strstr(why, "the verifier key you hold"));
    free(forger_key);
    json_decref(copy);
}

/* Pinned approver keys: alice's passes and reports her leaves; a set without her fails. */
static void test_pinned_approvers(void **state)
{
    struct fixture *f = *state;
    uint8_t bob_pk[32], bob_sk[64];
    crypto_sign_keypair(bob_pk, bob_sk);
    char bob_b64[45], bob_id[65];
    codec_b64_encode(bob_pk, 32, bob_b64, sizeof bob_b64);
    decision_key_id(bob_pk, bob_id);
    const char *both[] = {f->alice_pk_b64, bob_b64};
    struct bundle_trust trust = {
        .verifier_key = trusted_key, .approvers = both, .approver_count = 2};
    json_t *report = json_object();
    char why[512];
    if (bundle_verify(f->bundle, &trust, report, why, sizeof why) != 0)
        fail_msg("%s", why);
    json_t *alice = json_object_get(json_object_get(report, "approvers"), f->alice_id);
    assert_string_equal(json_string_value(json_object_get(alice, "owner")), "alice");
    assert_true(json_is_true(json_object_get(alice, "pinned")));
    assert_int_equal(json_array_size(json_object_get(alice, "leaves")), LEAVES);
    json_t *bob = json_object_get(json_object_get(report, "approvers"), bob_id);
    assert_int_equal(json_array_size(json_object_get(bob, "leaves")), 0);
    json_decref(report);

    const char *only_bob[] = {bob_b64};
    trust.approvers = only_bob;
    trust.approver_count = 1;
    assert_int_equal(bundle_verify(f->bundle, &trust, NULL, why, sizeof why), 1);
    char want[256];
    snprintf(want, sizeof want, "leaf 0: signed by key %s (of \"alice\"), which is not",
             f->alice_id);
    if (strncmp(why, want, strlen(want)) != 0)
        fail_msg("failure \"%s\", want \"%s\"", why, want);
    const char *bad[] = {"not-a-key"};
    trust.approvers = bad;
    assert_int_equal(bundle_verify(f->bundle, &trust, NULL, why, sizeof why), 1);
    assert_non_null(strstr(why, "approver key 1: not the base64"));
}

/* A bundle whose leaves are the given key events (NULL: alice's decision number i), signed
 * afresh by the log key. */
static json_t *bundle_of(struct fixture *f, const char *const *events, size_t n)
{
    json_t *copy = json_deep_copy(f->bundle);
    json_t *leaves = json_array();
    for (size_t i = 0; i < n; i++) {
        if (events[i]) {
            char *b64 = codec_b64_encode_new((const uint8_t *)events[i], strlen(events[i]));
            json_array_append_new(leaves, json_string(b64));
            free(b64);
            continue;
        }
        json_t *record = make_record(f, (int)i, f->comparison[i % 2]);
        char received[32];
        snprintf(received, sizeof received, "2025-09-12T14:07:%02zu.000100Z", i);
        json_array_append_new(leaves, make_leaf(f, record, NULL, received, NULL));
        json_decref(record);
    }
    json_object_set_new(copy, "leaves", leaves);
    struct fixture g = *f;
    g.bundle = copy;
    resign(&g);
    return copy;
}

/* Key events in the log: a decision needs its key enrolled by an earlier leaf and not revoked
 * by one; decisions before the log's first key event are legacy. */
static void test_key_events(void **state)
{
    struct fixture *f = *state;
    size_t len;
    char *enrol = keylog_enrol_leaf(f->alice_id, f->alice_pk_b64, "alice",
                                    "2025-09-12T14:00:00.000001Z", &len);
    char *revoke = keylog_revoke_leaf(f->alice_id, "2025-09-12T14:07:02.5Z", &len);
    uint8_t bob_pk[32], bob_sk[64];
    crypto_sign_keypair(bob_pk, bob_sk);
    char bob_id[65], bob_b64[45];
    decision_key_id(bob_pk, bob_id);
    codec_b64_encode(bob_pk, 32, bob_b64, sizeof bob_b64);
    char *enrol_bob =
        keylog_enrol_leaf(bob_id, bob_b64, "bob", "2025-09-12T14:00:00.000001Z", &len);
    char why[512];

    /* Enrolled, then signing: verifies, and the report says where alice was enrolled. */
    const char *ok[] = {enrol, NULL, NULL, NULL};
    json_t *b = bundle_of(f, ok, 4);
    json_t *report = json_object();
    struct bundle_trust trust = {.verifier_key = trusted_key};
    if (bundle_verify(b, &trust, report, why, sizeof why) != 0)
        fail_msg("%s", why);
    json_t *alice = json_object_get(json_object_get(report, "approvers"), f->alice_id);
    assert_int_equal(json_integer_value(json_object_get(alice, "enrolled")), 0);
    assert_int_equal(json_array_size(json_object_get(alice, "leaves")), 3);
    assert_int_equal(json_integer_value(json_object_get(report, "legacy_decisions")), 0);
    json_decref(report);
    json_decref(b);

    /* Revoked by leaf 2, then signing at leaf 3. */
    const char *after_revoke[] = {enrol, NULL, revoke, NULL};
    b = bundle_of(f, after_revoke, 4);
    char want[256];
    snprintf(want, sizeof want, "leaf 3: key %s was revoked by leaf 2", f->alice_id);
    expect_failure(b, NULL, want);
    json_decref(b);

    /* The log enrols only bob: alice's decision is signed by a key the log never enrolled. */
    const char *not_enrolled[] = {enrol_bob, NULL};
    b = bundle_of(f, not_enrolled, 2);
    snprintf(want, sizeof want, "leaf 1: key %s is not enrolled by an earlier leaf", f->alice_id);
    expect_failure(b, NULL, want);
    json_decref(b);

    /* Enrolled after signing, in a log with key events before: refused too. */
    const char *late[] = {enrol_bob, NULL, enrol};
    b = bundle_of(f, late, 3);
    expect_failure(b, NULL, want);
    json_decref(b);

    /* A legacy log: decisions from before key events were logged, then the enrolments the
     * server appended at its first start with them, then new decisions. */
    const char *legacy[] = {NULL, NULL, enrol, enrol_bob, NULL};
    b = bundle_of(f, legacy, 5);
    report = json_object();
    if (bundle_verify(b, &trust, report, why, sizeof why) != 0)
        fail_msg("%s", why);
    assert_int_equal(json_integer_value(json_object_get(report, "legacy_decisions")), 2);
    json_decref(report);
    json_decref(b);

    /* A key enrolled twice, a revocation of an unknown key, a malformed event. */
    const char *twice[] = {enrol, enrol};
    b = bundle_of(f, twice, 2);
    expect_failure(b, NULL, "leaf 1: key");
    json_decref(b);
    const char *unknown[] = {revoke};
    b = bundle_of(f, unknown, 1);
    expect_failure(b, NULL, "leaf 0: key");
    json_decref(b);
    const char *bad[] = {"{\"kind\":\"key_enrol\"}"};
    b = bundle_of(f, bad, 1);
    expect_failure(b, NULL, "leaf 0: a key_enrol leaf is");
    json_decref(b);
    free(enrol);
    free(revoke);
    free(enrol_bob);
}

struct notices {
    int count;
    char last[512];
};

static void collect_notice(void *ctx, const char *message)
{
    struct notices *n = ctx;
    n->count++;
    snprintf(n->last, sizeof n->last, "%s", message);
}

/* --recompute: the engine's own output for the shared example agrees with itself; a stored
 * figure off by more than 1e-9 relative is named; another engine_version is only reported. */
static void test_recompute(void **state)
{
    (void)state;
    json_t *scenario = json_load_file(CAPLEDGER_DATA_DIR "/spec/example-inference.json",
                                      JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(scenario);
    struct problems errs;
    problems_init(&errs);
    json_t *result = cost_compare(scenario, &errs);
    assert_non_null(result);
    problems_free(&errs);
    char hash[65];
    sha256_of_jcs(result, hash);
    json_t *bundle = json_pack("{s:{s:{s:O, s:O}}}", "comparisons", hash, "scenario", scenario,
                               "result", result);
    struct notices notices = {0};
    char why[512] = "";
    if (bundle_recompute(bundle, 1e-9, collect_notice, &notices, why, sizeof why) != 0)
        fail_msg("%s", why);
    assert_int_equal(notices.count, 0);

    json_t *stored =
        json_object_get(json_object_get(json_object_get(bundle, "comparisons"), hash), "result");
    json_t *option = json_array_get(json_object_get(stored, "options"), 0);
    double cost = json_real_value(json_object_get(option, "expected_total_cost"));
    assert_true(cost > 0);
    /* Within tolerance: 1e-12 relative. */
    json_object_set_new(option, "expected_total_cost", json_real(cost * (1 + 1e-12)));
    json_object_set_new(stored, "engine_version", json_string("capledger-cost/0.9.0"));
    if (bundle_recompute(bundle, 1e-9, collect_notice, &notices, why, sizeof why) != 0)
        fail_msg("%s", why);
    assert_int_equal(notices.count, 1);
    assert_non_null(strstr(notices.last, "capledger-cost/0.9.0"));
    /* Beyond it: 1e-6 relative. */
    json_object_set_new(option, "expected_total_cost", json_real(cost * (1 + 1e-6)));
    {
        int rc = bundle_recompute(bundle, 1e-9, NULL, NULL, why, sizeof why);
        assert_int_equal(rc, 1);
        char want[256];
        snprintf(want, sizeof want,
                 "comparison %s: recomputed figures differ at /options/0/expected_total_cost",
                 hash);
        if (strncmp(why, want, strlen(want)) != 0)
            fail_msg("failure \"%s\", want one starting \"%s\"", why, want);
    }
    json_decref(bundle);
    json_decref(result);
    json_decref(scenario);
}

/* A comparison engine 1 made before engine 2 existed (its scenario names no engine) recomputes
 * equal with engine 1, the engine its engine_version names, and without a notice; recomputed
 * with the current engine instead, its figures would differ (issue 20). */
static void test_recompute_engine1_comparison(void **state)
{
    (void)state;
    const char *const files[] = {CAPLEDGER_DATA_DIR "/spec/example-training.json",
                                 CAPLEDGER_DATA_DIR "/spec/example-inference.json"};
    for (size_t k = 0; k < 2; k++) {
        json_t *scenario = json_load_file(files[k], JSON_REJECT_DUPLICATES, NULL);
        assert_non_null(scenario);
        struct problems errs;
        problems_init(&errs);
        json_t *result = cost_compare_engine(scenario, 1, &errs);
        json_t *current = cost_compare(scenario, &errs);
        assert_non_null(result);
        assert_non_null(current);
        problems_free(&errs);
        assert_string_equal(json_string_value(json_object_get(result, "engine_version")),
                            COST_ENGINE_1_VERSION);
        assert_int_equal(cost_compare_results(result, current, 1e-9, NULL, 0), 1);
        char hash[65];
        sha256_of_jcs(result, hash);
        json_t *bundle = json_pack("{s:{s:{s:O, s:O}}}", "comparisons", hash, "scenario", scenario,
                                   "result", result);
        struct notices notices = {0};
        char why[512] = "";
        if (bundle_recompute(bundle, 1e-9, collect_notice, &notices, why, sizeof why) != 0)
            fail_msg("%s", why);
        assert_int_equal(notices.count, 0);
        json_decref(bundle);
        json_decref(result);
        json_decref(current);
        json_decref(scenario);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recompute_engine1_comparison),
        cmocka_unit_test(test_untouched_bundle_verifies),
        cmocka_unit_test(test_tampered_leaf_byte),
        cmocka_unit_test(test_non_canonical_leaf),
        cmocka_unit_test(test_tampered_comparison),
        cmocka_unit_test(test_replaced_signature),
        cmocka_unit_test(test_dropped_leaf),
        cmocka_unit_test(test_wrong_root_or_key),
        cmocka_unit_test(test_revoked_key),
        cmocka_unit_test(test_previous_checkpoint),
        cmocka_unit_test(test_recompute),
        cmocka_unit_test(test_forged_bundle_needs_the_held_key),
        cmocka_unit_test(test_pinned_approvers),
        cmocka_unit_test(test_key_events),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
