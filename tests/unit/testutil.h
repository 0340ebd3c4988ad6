/* Small helpers shared by the cmocka unit tests: reading vector files in place and hex. */
#ifndef CAPLEDGER_TESTUTIL_H
#define CAPLEDGER_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a whole file into a NUL-terminated malloc'd buffer; NULL when it cannot be read. */
static inline char *testutil_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown) {
                free(buf);
                buf = NULL;
            } else {
                buf = grown;
            }
        }
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}

/* Decodes hex (whitespace ignored) into out; returns the byte count or -1 on a bad digit. */
static inline long testutil_unhex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = 0;
    int half = -1;
    for (const char *c = hex; *c; c++) {
        int v;
        if (*c >= '0' && *c <= '9')
            v = *c - '0';
        else if (*c >= 'a' && *c <= 'f')
            v = *c - 'a' + 10;
        else if (*c >= 'A' && *c <= 'F')
            v = *c - 'A' + 10;
        else if (*c == ' ' || *c == '\n' || *c == '\r' || *c == '\t')
            continue;
        else
            return -1;
        if (half < 0) {
            half = v;
        } else {
            if (n == cap)
                return -1;
            out[n++] = (uint8_t)(half << 4 | v);
            half = -1;
        }
    }
    return half < 0 ? (long)n : -1;
}

#endif
