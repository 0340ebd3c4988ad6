/* C2SP signed notes (Ed25519, algorithm byte 0x01) and tlog-checkpoint bodies — the format Go's
 * checksum database, Sigstore and Sigsum use, so an auditor can check capledger's checkpoints
 * with tools nobody here wrote.
 *
 *   <text, ending in \n>
 *   \n
 *   — <name> <base64(key id ‖ Ed25519 signature over the text, final newline included)>\n
 *
 * key id = first 4 bytes of SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key); verifier key text
 * "<name>+<8 hex key id>+<base64(0x01 ‖ public key)>". Pure; callers have run sodium_init(). */
#ifndef CAPLEDGER_CORE_NOTE_H
#define CAPLEDGER_CORE_NOTE_H

#include <sodium.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NOTE_NAME_MAX 255 /* longest key name or checkpoint origin accepted, in bytes */
#define NOTE_KEY_ID_BYTES 4
#define NOTE_MAX_SIGNATURES 100 /* as Go's sumdb/note: more lines are a malformed note */

struct note_verifier {
    char name[NOTE_NAME_MAX + 1];
    uint8_t key_id[NOTE_KEY_ID_BYTES];
    uint8_t public_key[crypto_sign_PUBLICKEYBYTES];
};

enum note_status {
    NOTE_OK = 0,
    NOTE_MALFORMED,     /* not a signed note: text rules, separator or a signature line */
    NOTE_UNSIGNED,      /* well formed, but no signature line for the verifier's key */
    NOTE_BAD_SIGNATURE, /* a line for the verifier's key whose signature does not verify */
    NOTE_BAD_TEXT,      /* text that cannot be signed (not UTF-8, controls, no final \n) */
    NOTE_BAD_NAME,      /* empty, too long, or with a space or '+' */
    NOTE_BAD_VERIFIER,  /* verifier key text malformed or its key id does not match */
    NOTE_NO_MEMORY,
};

/* A short English description of a note_status, for error messages. */
const char *note_status_message(int status);

/* Fills v for name and public key. Returns NOTE_OK or NOTE_BAD_NAME. */
int note_verifier_init(struct note_verifier *v, const char *name,
                       const uint8_t public_key[crypto_sign_PUBLICKEYBYTES])
    __attribute__((warn_unused_result));

/* "<name>+<hex key id>+<base64(alg ‖ public key)>", malloc'd; NULL when out of memory. The
 * verifier key text of a note key (alg 0x01), or of a witness's cosignature key (0x04). */
char *note_key_text(const char *name, uint8_t alg, const uint8_t key_id[NOTE_KEY_ID_BYTES],
                    const uint8_t public_key[crypto_sign_PUBLICKEYBYTES])
    __attribute__((warn_unused_result));

/* The verifier key text of v, malloc'd (the caller frees it); NULL when out of memory. */
char *note_verifier_text(const struct note_verifier *v) __attribute__((warn_unused_result));

/* Parses verifier key text (NUL-terminated; surrounding whitespace is not allowed). Returns
 * NOTE_OK, or NOTE_BAD_VERIFIER (also when the key id is not the one of the name and key). */
int note_verifier_parse(const char *text, struct note_verifier *v)
    __attribute__((warn_unused_result));

/* Signs text[0..text_len) with libsodium's 64-byte secret key under name and returns the whole
 * signed note (text, blank line, one signature line), malloc'd and NUL-terminated, its length
 * in *out_len. NULL, with *status set, when the text or name cannot be signed. */
char *note_sign(const char *text, size_t text_len, const char *name,
                const uint8_t secret_key[crypto_sign_SECRETKEYBYTES], size_t *out_len, int *status)
    __attribute__((warn_unused_result));

/* Checks msg[0..len) is a well-formed signed note carrying a valid signature by v (signature
 * lines of other keys are ignored, as C2SP says). Returns a note_status; on NOTE_OK *text_len
 * is the length of the signed text at the start of msg. */
int note_open(const char *msg, size_t len, const struct note_verifier *v, size_t *text_len)
    __attribute__((warn_unused_result));

/* ---- tlog-checkpoint bodies --------------------------------------------------------------- */

struct note_checkpoint {
    char origin[NOTE_NAME_MAX + 1];
    uint64_t size;
    uint8_t root[32];
};

/* "<origin>\n<size>\n<base64 root>\n", malloc'd; NULL when out of memory or the origin is empty,
 * too long or holds a newline or control character. */
char *note_checkpoint_body(const char *origin, uint64_t size, const uint8_t root[32])
    __attribute__((warn_unused_result));

/* Parses a checkpoint body (the text of a signed note): origin, decimal size without sign or
 * leading zeros, the base64 of exactly 32 bytes; any further non-empty lines are C2SP
 * extension lines and are ignored. Returns 0, or -1 when the text is not that. */
int note_checkpoint_parse(const char *text, size_t len, struct note_checkpoint *out)
    __attribute__((warn_unused_result));

/* The checkpoint a signed note carries, only when v's signature on it verifies (note_open) and
 * its origin is v's name: what an authenticated read trusts. Returns 0, or -1. */
int note_checkpoint_open(const char *msg, size_t len, const struct note_verifier *v,
                         struct note_checkpoint *out) __attribute__((warn_unused_result));

#endif
