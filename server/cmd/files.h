/* File helpers for the offline subcommands (jcs, keygen, sign, verify) and for the server's
 * signing key: whole-file reads with a size cap, and the Ed25519 key file format of
 * docs/ledger-format.md (the 32-byte seed as 64 hex characters and a newline, mode 0600, next to
 * FILE.pub holding the raw public key in base64). */
#ifndef CAPLEDGER_CMD_FILES_H
#define CAPLEDGER_CMD_FILES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

/* Reads all of path ("-" = standard input) into a malloc'd NUL-terminated buffer of at most
 * max_bytes. Returns NULL after printing "capledger: PATH: reason" on stderr. */
char *files_read_all(const char *path, size_t max_bytes, size_t *len)
    __attribute__((warn_unused_result));

/* files_read_all, then parsed as one JSON document (duplicate keys refused, nesting bounded:
 * core/jsonlimit.h). Returns a new reference, or NULL after printing "capledger: PATH: reason"
 * or "capledger: PATH:LINE:COLUMN: what" on stderr. */
json_t *files_read_json(const char *path, size_t max_bytes) __attribute__((warn_unused_result));

/* Creates path (refusing to overwrite it) with the hex seed of a fresh key pair, mode 0600,
 * and path.pub with the base64 public key. On success fills pk and returns 0; else prints why
 * and returns -1 (a half-written pair is removed). */
int files_key_create(const char *path, uint8_t pk[crypto_sign_PUBLICKEYBYTES])
    __attribute__((warn_unused_result));

/* Reads a key file into libsodium's 64-byte secret key (seed ‖ public key). Returns 0, or -1
 * after printing why. The caller sodium_memzero()s sk after use. */
int files_key_read(const char *path, uint8_t sk[crypto_sign_SECRETKEYBYTES])
    __attribute__((warn_unused_result));

#endif
