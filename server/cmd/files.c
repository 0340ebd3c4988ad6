#include "cmd/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/jsonlimit.h"
#include "core/ledger/codec.h"

char *files_read_all(const char *path, size_t max_bytes, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "capledger: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n > max_bytes) {
            fprintf(stderr, "capledger: %s: larger than %zu bytes\n", path, max_bytes);
            free(buf);
            buf = NULL;
            break;
        }
        if (n + 1 == cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown) {
                fprintf(stderr, "capledger: %s: out of memory\n", path);
                free(buf);
                buf = NULL;
            } else {
                buf = grown;
            }
        }
    }
    if (buf && ferror(f)) {
        fprintf(stderr, "capledger: %s: %s\n", path, strerror(errno));
        free(buf);
        buf = NULL;
    }
    if (f != stdin)
        fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}

/* Writes all of text to a new file (O_EXCL: never over an existing one) with the given mode. */
static int write_new_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) {
        fprintf(stderr, "capledger: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    int failed = done != len || fsync(fd) != 0;
    if (close(fd) != 0)
        failed = 1;
    if (failed) {
        fprintf(stderr, "capledger: %s: %s\n", path, strerror(errno));
        unlink(path);
        return -1;
    }
    return 0;
}

json_t *files_read_json(const char *path, size_t max_bytes)
{
    size_t len;
    char *text = files_read_all(path, max_bytes, &len);
    if (!text)
        return NULL;
    json_error_t error;
    /* NaN, Infinity and numbers beyond a double are not JSON: jansson refuses them here. */
    json_t *doc = json_load_bounded(text, len, JSON_REJECT_DUPLICATES, &error);
    free(text);
    if (!doc)
        fprintf(stderr, "capledger: %s:%d:%d: %s\n", path, error.line, error.column, error.text);
    return doc;
}

int files_key_create(const char *path, uint8_t pk[crypto_sign_PUBLICKEYBYTES])
{
    char pub_path[4096];
    if ((size_t)snprintf(pub_path, sizeof pub_path, "%s.pub", path) >= sizeof pub_path) {
        fprintf(stderr, "capledger: %s: path too long\n", path);
        return -1;
    }
    if (access(pub_path, F_OK) == 0) {
        fprintf(stderr, "capledger: %s: already exists\n", pub_path);
        return -1;
    }
    uint8_t seed[crypto_sign_SEEDBYTES], sk[crypto_sign_SECRETKEYBYTES];
    char seed_hex[2 * crypto_sign_SEEDBYTES + 2];
    randombytes_buf(seed, sizeof seed);
    crypto_sign_seed_keypair(pk, sk, seed);
    codec_hex_encode(seed, sizeof seed, seed_hex);
    strcat(seed_hex, "\n");
    int rc = write_new_file(path, seed_hex, 0600);
    sodium_memzero(seed, sizeof seed);
    sodium_memzero(sk, sizeof sk);
    sodium_memzero(seed_hex, sizeof seed_hex);
    if (rc != 0)
        return -1;
    char pub_text[CODEC_B64_LEN(crypto_sign_PUBLICKEYBYTES) + 2];
    codec_b64_encode(pk, crypto_sign_PUBLICKEYBYTES, pub_text, sizeof pub_text);
    strcat(pub_text, "\n");
    if (write_new_file(pub_path, pub_text, 0644) != 0) {
        unlink(path);
        return -1;
    }
    return 0;
}

int files_key_read(const char *path, uint8_t sk[crypto_sign_SECRETKEYBYTES])
{
    size_t len;
    char *text = files_read_all(path, 256, &len);
    if (!text)
        return -1;
    uint8_t seed[crypto_sign_SEEDBYTES], pk[crypto_sign_PUBLICKEYBYTES];
    /* The format is exactly 64 hex digits (keygen writes lower case) and a newline; tolerate a
     * missing newline (a key written by hand) but nothing else, so a wrong file is not
     * half-read. */
    if (len > 0 && text[len - 1] == '\n')
        text[--len] = '\0';
    size_t seed_len = 0;
    const char *end = NULL;
    int rc = len == 2 * sizeof seed &&
                     sodium_hex2bin(seed, sizeof seed, text, len, NULL, &seed_len, &end) == 0 &&
                     seed_len == sizeof seed && end == text + len
                 ? 0
                 : -1;
    sodium_memzero(text, len);
    free(text);
    if (rc != 0) {
        fprintf(stderr, "capledger: %s: not a key file (want 64 hex digits and a newline)\n", path);
        return -1;
    }
    crypto_sign_seed_keypair(pk, sk, seed);
    sodium_memzero(seed, sizeof seed);
    return 0;
}
