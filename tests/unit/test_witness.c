/* Witness cosignatures and add-checkpoint: a cosignature verifies only for its key and its
 * checkpoint; a witness cosigns the first checkpoint it sees and then only extensions of it
 * proven by a consistency proof, and answers every other request as tlog-witness says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/ledger/witness.h"
#include "oracle/merkle_proofs.h"

#define ORIGIN "example.com/log"

struct fixture {
    uint8_t log_sk[64], w_sk[64];
    struct note_verifier log;
    struct witness_key w;
    uint8_t hashes[8][32];
};

static struct fixture f;

static int setup(void **state)
{
    (void)state;
    if (sodium_init() < 0)
        return -1;
    uint8_t pk[32];
    crypto_sign_keypair(pk, f.log_sk);
    if (note_verifier_init(&f.log, ORIGIN, pk) != NOTE_OK)
        return -1;
    crypto_sign_keypair(pk, f.w_sk);
    if (witness_key_init(&f.w, "witness.example/w1", pk) != 0)
        return -1;
    for (int i = 0; i < 8; i++) {
        uint8_t leaf[1] = {(uint8_t)i};
        merkle_leaf_hash(leaf, 1, f.hashes[i]);
    }
    return 0;
}

/* The signed checkpoint of the first n leaves (or of a forged root). */
static char *checkpoint(size_t n, const uint8_t *root_override, const uint8_t *sk)
{
    uint8_t root[32];
    merkle_root((const uint8_t(*)[32])f.hashes, n, root);
    char *body = note_checkpoint_body(ORIGIN, n, root_override ? root_override : root);
    size_t len;
    int status;
    char *note = note_sign(body, strlen(body), ORIGIN, sk ? sk : f.log_sk, &len, &status);
    free(body);
    assert_non_null(note);
    return note;
}

static void check(const struct witness_state *st, uint64_t old, size_t n, int proof_ok,
                  const uint8_t *root_override, const uint8_t *sk, int want)
{
    uint8_t proof[64][32];
    size_t proof_len = 0;
    if (old > 0 && old < n)
        assert_int_equal(
            merkle_consistency_proof((const uint8_t(*)[32])f.hashes, n, old, proof, &proof_len), 0);
    if (!proof_ok && proof_len)
        proof[0][0] ^= 1;
    char *note = checkpoint(n, root_override, sk);
    size_t len;
    char *req = witness_request(old, (const uint8_t(*)[32])proof, proof_len, note, &len);
    struct witness_verdict v;
    witness_check(req, len, &f.log, st, &v);
    if (v.status != want)
        fail_msg("old %llu, size %zu: status %d (%s), want %d", (unsigned long long)old, n,
                 v.status, v.why, want);
    if (want == 200) {
        assert_int_equal(v.cp.size, n);
        /* Its cosignature, appended to the note, verifies — and only for this key. */
        char *line = witness_cosign(&f.w, f.w_sk, v.checkpoint, v.body_len, 1700000000);
        assert_non_null(line);
        assert_true(strncmp(line, "\xe2\x80\x94 witness.example/w1 ", 22) == 0);
        size_t nl = strlen(note), ll = strlen(line);
        char *both = malloc(nl + ll + 1);
        memcpy(both, note, nl);
        memcpy(both + nl, line, ll + 1);
        uint64_t t = 0;
        assert_int_equal(witness_cosignature_verify(both, nl + ll, &f.w, &t), 0);
        assert_int_equal(t, 1700000000);
        struct witness_key other;
        uint8_t other_pk[32], other_sk[64];
        crypto_sign_keypair(other_pk, other_sk);
        assert_int_equal(witness_key_init(&other, "witness.example/w1", other_pk), 0);
        assert_int_equal(witness_cosignature_verify(both, nl + ll, &other, NULL),
                         WITNESS_COSIG_ABSENT); /* same name, another key: not its line */
        /* The note alone, without the witness's line: absent. */
        assert_int_equal(witness_cosignature_verify(note, nl, &f.w, NULL), WITNESS_COSIG_ABSENT);
        /* The good line twice, then once with a forged copy beside it: one failing line of a
         * held key rejects the note, whatever else it carries. */
        char *three = malloc(nl + 2 * ll + 1);
        memcpy(three, note, nl);
        memcpy(three + nl, line, ll);
        memcpy(three + nl + ll, line, ll + 1);
        assert_int_equal(witness_cosignature_verify(three, nl + 2 * ll, &f.w, &t), 0);
        /* Change a base64 character inside the signature (the line's 76 bytes end "==\n";
         * ten characters before that is well within the 64 signature bytes). */
        char *in_sig = three + nl + 2 * ll - 12;
        *in_sig = *in_sig == 'A' ? 'B' : 'A';
        assert_int_equal(witness_cosignature_verify(three, nl + 2 * ll, &f.w, NULL),
                         WITNESS_COSIG_FORGED);
        free(three);
        both[nl - 3] ^= 1; /* a byte of the signed note's signature line: body unchanged */
        both[0] ^= 1;      /* the origin: body changed, so the witness's line no longer holds */
        assert_int_equal(witness_cosignature_verify(both, nl + ll, &f.w, NULL),
                         WITNESS_COSIG_FORGED);
        free(both);
        free(line);
    }
    free(req);
    free(note);
}

static void test_protocol(void **state)
{
    (void)state;
    struct witness_state st = {.size = 0};
    merkle_root(NULL, 0, st.root);
    check(&st, 0, 3, 1, NULL, NULL, 200); /* first sight: no proof */
    st.size = 3;
    merkle_root((const uint8_t(*)[32])f.hashes, 3, st.root);
    check(&st, 3, 7, 1, NULL, NULL, 200); /* an extension, proven */
    check(&st, 3, 7, 0, NULL, NULL, 422); /* a proof that does not verify */
    check(&st, 2, 7, 1, NULL, NULL, 409); /* not the size it cosigned */
    check(&st, 0, 7, 1, NULL, NULL, 409);
    check(&st, 3, 3, 1, NULL, NULL, 200); /* the same checkpoint again */
    uint8_t fork[32] = {9};
    check(&st, 3, 3, 1, fork, NULL, 409); /* another root for that size */
    check(&st, 5, 3, 1, NULL, NULL, 400); /* old size above the checkpoint's */
    uint8_t pk[32], sk[64];
    crypto_sign_keypair(pk, sk);
    check(&st, 3, 7, 1, NULL, sk, 403); /* signed by another key */

    struct witness_verdict v;
    const char *other = "old 0\n\nelsewhere\n1\nAAAA\n\n\xe2\x80\x94 elsewhere AAAA\n";
    witness_check(other, strlen(other), &f.log, &st, &v);
    assert_int_equal(v.status, 404);
    const char *bad[] = {"", "old\n\n", "old 01\n\n" ORIGIN "\n", "old 3\nnot base64!\n\n",
                         "old 3\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        witness_check(bad[i], strlen(bad[i]), &f.log, &st, &v);
        if (v.status != 400)
            fail_msg("\"%s\": %d", bad[i], v.status);
    }
}

static void test_key_text(void **state)
{
    (void)state;
    char *text = witness_key_text(&f.w);
    struct witness_key k;
    assert_int_equal(witness_key_parse(text, &k), 0);
    assert_string_equal(k.name, "witness.example/w1");
    assert_memory_equal(k.public_key, f.w.public_key, 32);
    /* A note verifier key (type 0x01) is not a witness key, and a wrong id is refused. */
    char *log_key = note_verifier_text(&f.log);
    assert_int_equal(witness_key_parse(log_key, &k), -1);
    text[strlen("witness.example/w1+")] ^= 1;
    assert_int_equal(witness_key_parse(text, &k), -1);
    free(log_key);
    free(text);
}

/* A 409's size is read as uint64 (issue 25, item 10: 2^64 − 1 was reported as 2^63 − 1). */
static void test_conflict_size(void **state)
{
    (void)state;
    static const struct {
        const char *body;
        int ok;
        uint64_t size;
    } cases[] = {
        {"18446744073709551615\n", 1, UINT64_MAX},
        {"18446744073709551615", 1, UINT64_MAX},
        {"9223372036854775808\n", 1, 9223372036854775808ull},
        {"1000\n", 1, 1000},
        {"0\n", 1, 0},
        {"18446744073709551616\n", 0, 0},
        {"-1\n", 0, 0},
        {"\n", 0, 0},
        {"", 0, 0},
        {"12x\n", 0, 0},
        {"12\n\n", 0, 0},
        {"012\n", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint64_t got = 7;
        int rc = witness_conflict_size(cases[i].body, strlen(cases[i].body), &got);
        assert_int_equal(rc == 0, cases[i].ok);
        if (cases[i].ok)
            assert_true(got == cases[i].size);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conflict_size),
        cmocka_unit_test(test_protocol),
        cmocka_unit_test(test_key_text),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
