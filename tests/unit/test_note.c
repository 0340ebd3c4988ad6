/* C2SP signed notes against golang.org/x/mod's published examples, checkpoint bodies against
 * sumdb/tlog's golden text, and RFC 8032 Ed25519 vectors through libsodium. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/ledger/merkle.h"
#include "core/ledger/note.h"
#include "testutil.h"

#define VECTORS CAPLEDGER_DATA_DIR "/vectors"

static json_t *examples;

static int setup(void **state)
{
    (void)state;
    if (sodium_init() < 0)
        return -1;
    examples = json_load_file(VECTORS "/signed-note/examples.json", 0, NULL);
    return examples ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(examples);
    return 0;
}

static const char *ex(const char *section, const char *key)
{
    const char *s = json_string_value(json_object_get(json_object_get(examples, section), key));
    assert_non_null(s);
    return s;
}

static void load_verifier(size_t i, struct note_verifier *v)
{
    json_t *k = json_array_get(
        json_object_get(json_object_get(examples, "signed_note"), "verifier_keys"), i);
    assert_int_equal(note_verifier_parse(json_string_value(json_object_get(k, "vkey")), v),
                     NOTE_OK);
    assert_string_equal(v->name, json_string_value(json_object_get(k, "name")));
    char hex[65];
    assert_string_equal(codec_hex_encode(v->key_id, NOTE_KEY_ID_BYTES, hex),
                        json_string_value(json_object_get(k, "key_id_hex")));
    assert_string_equal(codec_hex_encode(v->public_key, 32, hex),
                        json_string_value(json_object_get(k, "public_key_hex")));
    char *text = note_verifier_text(v);
    assert_string_equal(text, json_string_value(json_object_get(k, "vkey")));
    free(text);
}

static void test_verifier_keys(void **state)
{
    (void)state;
    struct note_verifier peter, enoch;
    load_verifier(0, &peter);
    load_verifier(1, &enoch);
    /* load_verifier checked each key id against the vector's (SHA-256 of name, \n, 0x01, key). */

    struct note_verifier v;
    static const char *const bad[] = {
        "PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", /* wrong id */
        "PeterNeuman+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",  /* other name */
        "PeterNeumann+c74f20a3+AhpcxQcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", /* algorithm 2 */
        "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10T",  /* short */
        "PeterNeumann+C74F20A3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", /* upper hex */
        "Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "PeterNeumann+c74f20a3",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (note_verifier_parse(bad[i], &v) != NOTE_BAD_VERIFIER)
            fail_msg("accepted verifier key %s", bad[i]);
}

static void test_open_published_notes(void **state)
{
    (void)state;
    struct note_verifier peter, enoch;
    load_verifier(0, &peter);
    load_verifier(1, &enoch);
    const char *text = ex("signed_note", "text");
    const char *one = ex("signed_note", "signed_message_peter");
    const char *two = ex("signed_note", "signed_message_peter_enoch");
    size_t text_len = 0;
    assert_int_equal(note_open(one, strlen(one), &peter, &text_len), NOTE_OK);
    assert_int_equal(text_len, strlen(text));
    assert_memory_equal(one, text, text_len);
    assert_int_equal(note_open(one, strlen(one), &enoch, &text_len), NOTE_UNSIGNED);
    assert_int_equal(note_open(two, strlen(two), &peter, &text_len), NOTE_OK);
    assert_int_equal(note_open(two, strlen(two), &enoch, &text_len), NOTE_OK);
    assert_int_equal(text_len, strlen(text));

    /* The signature covers the final newline: without it, the same signature fails. */
    json_t *sigs = json_object_get(json_object_get(examples, "signed_note"), "signatures_decoded");
    uint8_t sig[64];
    assert_int_equal(testutil_unhex(json_string_value(json_object_get(json_array_get(sigs, 0),
                                                                      "ed25519_signature_hex")),
                                    sig, sizeof sig),
                     64);
    assert_int_equal(
        crypto_sign_verify_detached(sig, (const uint8_t *)text, strlen(text), peter.public_key), 0);
    assert_int_not_equal(
        crypto_sign_verify_detached(sig, (const uint8_t *)text, strlen(text) - 1, peter.public_key),
        0);

    /* One changed letter of the text. */
    char *tampered = strdup(two);
    tampered[3] ^= 0x20;
    assert_int_equal(note_open(tampered, strlen(tampered), &peter, &text_len), NOTE_BAD_SIGNATURE);
    assert_int_equal(note_open(tampered, strlen(tampered), &enoch, &text_len), NOTE_BAD_SIGNATURE);
    free(tampered);
}

/* The published private key re-signs the text to the published note, byte for byte. */
static void test_sign_reproduces_published(void **state)
{
    (void)state;
    const char *skey = ex("signed_note", "signer_key");
    /* PRIVATE+KEY+<name>+<id>+<base64>: the base64 itself may hold '+'. */
    const char *b64 = skey;
    for (int plus = 0; plus < 4; plus++)
        b64 = strchr(b64, '+') + 1;
    uint8_t alg_seed[33], pk[32], sk[64];
    assert_int_equal(codec_b64_decode(b64, strlen(b64), alg_seed, sizeof alg_seed), 33);
    assert_int_equal(alg_seed[0], 1);
    crypto_sign_seed_keypair(pk, sk, alg_seed + 1);
    const char *text = ex("signed_note", "text");
    size_t len;
    int status;
    char *note = note_sign(text, strlen(text), "PeterNeumann", sk, &len, &status);
    assert_non_null(note);
    assert_int_equal(status, NOTE_OK);
    assert_string_equal(note, ex("signed_note", "signed_message_peter"));
    assert_int_equal(len, strlen(note));
    free(note);

    assert_null(note_sign("no newline", 10, "PeterNeumann", sk, &len, &status));
    assert_int_equal(status, NOTE_BAD_TEXT);
    assert_null(note_sign("tab\there\n", 9, "PeterNeumann", sk, &len, &status));
    assert_int_equal(status, NOTE_BAD_TEXT);
    assert_null(note_sign("x\n", 2, "Peter+Neumann", sk, &len, &status));
    assert_int_equal(status, NOTE_BAD_NAME);
    assert_null(note_sign("x\n", 2, "Peter\xc2\xa0Neumann", sk, &len, &status));
    assert_int_equal(status, NOTE_BAD_NAME);
    assert_null(note_sign("x\n", 2, "", sk, &len, &status));
    assert_int_equal(status, NOTE_BAD_NAME);
}

static void test_malformed_notes(void **state)
{
    (void)state;
    struct note_verifier peter;
    load_verifier(0, &peter);
    const char *good = ex("signed_note", "signed_message_peter");
    const char *sig_line = strstr(good, "\xe2\x80\x94");
    char buf[1024];
    static const char *const bodies[] = {
        "text\n",   /* no signature block */
        "text\n\n", /* empty signature block */
        "text\n\n-- PeterNeumann "
        "x08go/ZJkuBS9UG/"
        "SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n",
        "text\n\n\xe2\x80\x94 PeterNeumann\n",
        "text\n\n\xe2\x80\x94 PeterNeumann AAAA\n", /* shorter than a key id + 1 byte */
        "text\n\n\xe2\x80\x94 PeterNeumann x08go/ZJ!!\n",
        "te\tt\n\n\xe2\x80\x94 PeterNeumann "
        "x08go/ZJkuBS9UG/"
        "SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n",
        "text\n\n\xe2\x80\x94 PeterNeumann "
        "x08go/ZJkuBS9UG/"
        "SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=",
        "\xff\n\n\xe2\x80\x94 PeterNeumann "
        "x08go/ZJkuBS9UG/"
        "SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n",
        "",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        size_t text_len;
        if (note_open(bodies[i], strlen(bodies[i]), &peter, &text_len) != NOTE_MALFORMED)
            fail_msg("case %zu accepted as well formed", i);
    }
    /* A trailing blank line after the signatures makes the last "blank line" the wrong one. */
    snprintf(buf, sizeof buf, "%s\n", good);
    size_t text_len;
    assert_int_equal(note_open(buf, strlen(buf), &peter, &text_len), NOTE_MALFORMED);
    /* 101 signature lines are refused even though one of them is good. */
    size_t o = (size_t)(sig_line - good);
    char *many = malloc(o + 101 * strlen(sig_line) + 1);
    memcpy(many, good, o);
    for (int i = 0; i < 101; i++) {
        memcpy(many + o, sig_line, strlen(sig_line));
        o += strlen(sig_line);
    }
    many[o] = '\0';
    assert_int_equal(note_open(many, o, &peter, &text_len), NOTE_MALFORMED);
    many[(size_t)(sig_line - good) + 100 * strlen(sig_line)] = '\0';
    assert_int_equal(note_open(many, strlen(many), &peter, &text_len), NOTE_OK);
    free(many);
}

static void test_checkpoint_body(void **state)
{
    (void)state;
    const char *golden = ex("tlog_tree", "golden_text");
    uint8_t root[32];
    merkle_leaf_hash((const uint8_t *)"hello world", 11, root);
    char *body = note_checkpoint_body("go.sum database tree", 123456789012ULL, root);
    assert_string_equal(body, golden);
    free(body);

    struct note_checkpoint cp;
    assert_int_equal(note_checkpoint_parse(golden, strlen(golden), &cp), 0);
    assert_string_equal(cp.origin, "go.sum database tree");
    assert_true(cp.size == 123456789012ULL);
    assert_memory_equal(cp.root, root, 32);

    json_t *bad =
        json_object_get(json_object_get(examples, "tlog_tree"), "bad_examples_from_TestParseTree");
    assert_int_equal(json_array_size(bad), 3);
    for (size_t i = 0; i < 2; i++) {
        const char *t = json_string_value(json_array_get(bad, i));
        assert_int_equal(note_checkpoint_parse(t, strlen(t), &cp), -1);
    }
    /* The third is well formed but from another origin: the caller compares it. */
    const char *t = json_string_value(json_array_get(bad, 2));
    assert_int_equal(note_checkpoint_parse(t, strlen(t), &cp), 0);
    assert_string_not_equal(cp.origin, "go.sum database tree");

    static const char *const malformed[] = {
        "o\n012\nTszzRgjTG6xce+z2AG31kAXYKBgQVtCSCE40HmuwBb0=\n",
        "o\n-1\nTszzRgjTG6xce+z2AG31kAXYKBgQVtCSCE40HmuwBb0=\n",
        "o\n18446744073709551616\nTszzRgjTG6xce+z2AG31kAXYKBgQVtCSCE40HmuwBb0=\n",
        "o\n1\nTszzRgjTG6xce+z2AG31kAXYKBgQVtCSCE40HmuwBb0=",
        "o\n1\nTszzRgjTG6xce+z2AG31kAXYKBgQVtCSCE40HmuwBb0=\n\n",
        "\n1\nTszzRgjTG6xce+z2AG31kAXYKBgQVtCSCE40HmuwBb0=\n",
        "o\n1\nTszzRgjTG6xce+z2AG31kAXYKBgQVtCSCE40Hmuw\n",
        "o\n1\n",
    };
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++)
        if (note_checkpoint_parse(malformed[i], strlen(malformed[i]), &cp) == 0)
            fail_msg("accepted checkpoint %zu", i);
    const char *ext =
        "o\n18446744073709551615\nTszzRgjTG6xce+z2AG31kAXYKBgQVtCSCE40HmuwBb0=\nx y\n";
    assert_int_equal(note_checkpoint_parse(ext, strlen(ext), &cp), 0);
    assert_true(cp.size == UINT64_MAX);
    assert_null(note_checkpoint_body("two\nlines", 1, root));
    assert_null(note_checkpoint_body("", 1, root));
}

/* A checkpoint signed with a fresh key opens with its verifier key and no other. */
static void test_checkpoint_round_trip(void **state)
{
    (void)state;
    uint8_t pk[32], sk[64], root[32];
    crypto_sign_keypair(pk, sk);
    merkle_root(NULL, 0, root);
    char *body = note_checkpoint_body("localhost/capledger", 0, root);
    size_t len;
    int status;
    char *note = note_sign(body, strlen(body), "localhost/capledger", sk, &len, &status);
    assert_non_null(note);
    struct note_verifier v, parsed;
    assert_int_equal(note_verifier_init(&v, "localhost/capledger", pk), NOTE_OK);
    char *vkey = note_verifier_text(&v);
    assert_int_equal(note_verifier_parse(vkey, &parsed), NOTE_OK);
    size_t text_len;
    assert_int_equal(note_open(note, len, &parsed, &text_len), NOTE_OK);
    struct note_checkpoint cp;
    assert_int_equal(note_checkpoint_parse(note, text_len, &cp), 0);
    assert_string_equal(cp.origin, "localhost/capledger");
    assert_true(cp.size == 0);
    assert_memory_equal(cp.root, root, 32);
    uint8_t other_pk[32], other_sk[64];
    crypto_sign_keypair(other_pk, other_sk);
    assert_int_equal(note_verifier_init(&v, "localhost/capledger", other_pk), NOTE_OK);
    assert_int_equal(note_open(note, len, &v, &text_len), NOTE_UNSIGNED);
    free(vkey);
    free(note);
    free(body);
}

static void test_rfc8032(void **state)
{
    (void)state;
    json_t *doc = json_load_file(VECTORS "/ed25519/rfc8032.json", 0, NULL);
    assert_non_null(doc);
    json_t *vectors = json_object_get(doc, "vectors");
    assert_int_equal(json_array_size(vectors), 4);
    for (size_t i = 0; i < json_array_size(vectors); i++) {
        json_t *t = json_array_get(vectors, i);
        uint8_t seed[32], want_pk[32], want_sig[64], pk[32], sk[64], sig[64];
        static uint8_t msg[2048];
        assert_int_equal(
            testutil_unhex(json_string_value(json_object_get(t, "secret_key")), seed, sizeof seed),
            32);
        assert_int_equal(testutil_unhex(json_string_value(json_object_get(t, "public_key")),
                                        want_pk, sizeof want_pk),
                         32);
        assert_int_equal(testutil_unhex(json_string_value(json_object_get(t, "signature")),
                                        want_sig, sizeof want_sig),
                         64);
        long msg_len =
            testutil_unhex(json_string_value(json_object_get(t, "message")), msg, sizeof msg);
        assert_true(msg_len >= 0);
        crypto_sign_seed_keypair(pk, sk, seed);
        assert_memory_equal(pk, want_pk, 32);
        crypto_sign_detached(sig, NULL, msg, (size_t)msg_len, sk);
        assert_memory_equal(sig, want_sig, 64);
        assert_int_equal(crypto_sign_verify_detached(want_sig, msg, (size_t)msg_len, pk), 0);
        want_sig[i % 64] ^= 0x01;
        assert_int_not_equal(crypto_sign_verify_detached(want_sig, msg, (size_t)msg_len, pk), 0);
    }
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verifier_keys),
        cmocka_unit_test(test_open_published_notes),
        cmocka_unit_test(test_sign_reproduces_published),
        cmocka_unit_test(test_malformed_notes),
        cmocka_unit_test(test_checkpoint_body),
        cmocka_unit_test(test_checkpoint_round_trip),
        cmocka_unit_test(test_rfc8032),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
