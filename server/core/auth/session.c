#include "core/auth/session.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char CSRF_CONTEXT[] = "capledger csrf v1";

static int is_b64url(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

void session_id_new(char out[SESSION_ID_TEXT_LEN + 1])
{
    unsigned char raw[32];
    randombytes_buf(raw, sizeof raw);
    sodium_bin2base64(out, SESSION_ID_TEXT_LEN + 1, raw, sizeof raw,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    sodium_memzero(raw, sizeof raw);
}

int session_id_shape_ok(const char *text)
{
    if (strlen(text) != SESSION_ID_TEXT_LEN)
        return 0;
    for (const char *c = text; *c; c++)
        if (!is_b64url(*c))
            return 0;
    return 1;
}

void session_csrf_token(const char *session_id, char out[SESSION_CSRF_TEXT_LEN + 1])
{
    unsigned char mac[crypto_auth_hmacsha256_BYTES];
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, (const unsigned char *)session_id, strlen(session_id));
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)CSRF_CONTEXT,
                                  sizeof CSRF_CONTEXT - 1);
    crypto_auth_hmacsha256_final(&st, mac);
    sodium_bin2base64(out, SESSION_CSRF_TEXT_LEN + 1, mac, sizeof mac,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    sodium_memzero(&st, sizeof st);
    sodium_memzero(mac, sizeof mac);
}

int session_csrf_ok(const char *session_id, const char *given)
{
    if (!given || strlen(given) != SESSION_CSRF_TEXT_LEN)
        return 0;
    char want[SESSION_CSRF_TEXT_LEN + 1];
    session_csrf_token(session_id, want);
    int same = sodium_memcmp(want, given, SESSION_CSRF_TEXT_LEN) == 0;
    sodium_memzero(want, sizeof want);
    return same;
}

int session_cookie_find(const char *cookie_header, const char *name, char *out, size_t out_size)
{
    size_t name_len = strlen(name);
    const char *p = cookie_header;
    while (p && *p) {
        while (*p == ' ' || *p == '\t' || *p == ';')
            p++;
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > name_len && strncmp(p, name, name_len) == 0 && p[name_len] == '=') {
            const char *value = p + name_len + 1;
            size_t value_len = len - name_len - 1;
            while (value_len > 0 && (value[value_len - 1] == ' ' || value[value_len - 1] == '\t'))
                value_len--;
            if (value_len + 1 > out_size)
                return 0;
            memcpy(out, value, value_len);
            out[value_len] = '\0';
            return 1;
        }
        p = end;
    }
    return 0;
}

/* Splits "host[:port]" or "[v6]:port" (len bytes at s) into host and port; a missing port
 * becomes default_port. Returns 0, or -1 when malformed. */
static int split_authority(const char *s, size_t len, const char **host, size_t *host_len,
                           long *port, long default_port)
{
    const char *colon = NULL;
    if (len == 0)
        return -1;
    if (s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (!close)
            return -1;
        *host = s;
        *host_len = (size_t)(close - s) + 1;
        if (*host_len < len) {
            if (close[1] != ':')
                return -1;
            colon = close + 1;
        }
    } else {
        colon = memchr(s, ':', len);
        *host = s;
        *host_len = colon ? (size_t)(colon - s) : len;
    }
    if (*host_len == 0)
        return -1;
    if (!colon) {
        *port = default_port;
        return 0;
    }
    const char *digits = colon + 1;
    size_t ndigits = len - (size_t)(digits - s);
    if (ndigits == 0 || ndigits > 5)
        return -1;
    long v = 0;
    for (size_t i = 0; i < ndigits; i++) {
        if (digits[i] < '0' || digits[i] > '9')
            return -1;
        v = v * 10 + (digits[i] - '0');
    }
    if (v < 1 || v > 65535)
        return -1;
    *port = v;
    return 0;
}

int session_origin_matches(const char *url, const char *host_header, const char *scheme)
{
    long default_port;
    const char *rest;
    if (!url || !host_header || !scheme)
        return 0;
    if (strncasecmp(url, "http://", 7) == 0 && strcmp(scheme, "http") == 0) {
        default_port = 80;
        rest = url + 7;
    } else if (strncasecmp(url, "https://", 8) == 0 && strcmp(scheme, "https") == 0) {
        default_port = 443;
        rest = url + 8;
    } else {
        return 0;
    }
    size_t auth_len = strcspn(rest, "/?#");
    if (memchr(rest, '@', auth_len))
        return 0;
    const char *oh, *hh;
    size_t oh_len, hh_len;
    long oport, hport;
    if (split_authority(rest, auth_len, &oh, &oh_len, &oport, default_port) != 0 ||
        split_authority(host_header, strlen(host_header), &hh, &hh_len, &hport, default_port) != 0)
        return 0;
    return oh_len == hh_len && strncasecmp(oh, hh, oh_len) == 0 && oport == hport;
}

int session_cookie_secure(int request_tls, const char *public_origin)
{
    return request_tls || (public_origin && strncasecmp(public_origin, "https://", 8) == 0);
}
