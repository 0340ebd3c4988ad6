/* API tokens: "cl_" + 43 base64url characters (32 random bytes), a prefix secret scanners can
 * recognise. The server keeps only the SHA-256 hex of the whole token text: tokens carry 256
 * bits of entropy, so a fast hash is enough (unlike passwords, which use argon2id). */
#ifndef CAPLEDGER_CORE_SECRET_H
#define CAPLEDGER_CORE_SECRET_H

#include <stddef.h>

#define TOKEN_PREFIX "cl_"
#define TOKEN_TEXT_LEN 46   /* "cl_" + 43 */
#define TOKEN_MAX_DAYS 3650 /* the longest expiry a token may be given */

/* Writes a new token (NUL-terminated) into out[TOKEN_TEXT_LEN + 1]. Caller memzeroes it. */
void secret_token_new(char out[TOKEN_TEXT_LEN + 1]);
/* 1 when text has the token shape (prefix, length, alphabet). */
int secret_token_shape_ok(const char *text);
/* out_size - 1 (even) lower-case hex digits of fresh random bytes, NUL-terminated: request ids,
 * Idempotency-Key claim nonces, channel names. */
void secret_random_hex(char *out, size_t out_size);
/* Lower-case hex SHA-256 of text into hex[65]. */
void secret_sha256_hex(const char *text, size_t len, char hex[65]);

#endif
