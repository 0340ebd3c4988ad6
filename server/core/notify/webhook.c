#include "core/notify/webhook.h"

#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const WEBHOOK_EVENTS[] = {"drift", "log_integrity", NULL};

static int host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_';
}

const char *webhook_url_check(const char *url, struct webhook_url *out)
{
    struct webhook_url u = {0};
    size_t len = url ? strlen(url) : 0;
    if (len == 0)
        return "must be an http or https URL";
    if (len > WEBHOOK_URL_MAX)
        return "must be at most 2048 bytes";
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)url[i] <= 0x20 || (unsigned char)url[i] >= 0x7f)
            return "must be printable ASCII without spaces (percent-encode the rest)";
    const char *rest;
    if (strncasecmp(url, "https://", 8) == 0) {
        u.https = 1;
        rest = url + 8;
    } else if (strncasecmp(url, "http://", 7) == 0) {
        rest = url + 7;
    } else {
        return "only http and https URLs are accepted";
    }
    if (strchr(url, '#'))
        return "must not have a fragment";
    size_t auth_len = strcspn(rest, "/?");
    const char *auth_end = rest + auth_len;
    if (memchr(rest, '@', auth_len))
        return "must not carry a user name or password (user:password@)";
    const char *host = rest, *host_end, *port = NULL;
    if (*rest == '[') {
        const char *close = memchr(rest, ']', auth_len);
        if (!close || close == rest + 1)
            return "has an unterminated or empty IPv6 address";
        for (const char *c = rest + 1; c < close; c++)
            if (!(strchr("0123456789abcdefABCDEF:.", *c)))
                return "has an invalid IPv6 address";
        host = rest + 1;
        host_end = close;
        if (close + 1 < auth_end) {
            if (close[1] != ':')
                return "has text after the IPv6 address";
            port = close + 2;
        }
    } else {
        const char *colon = memchr(rest, ':', auth_len);
        host_end = colon ? colon : auth_end;
        if (colon)
            port = colon + 1;
        for (const char *c = host; c < host_end; c++)
            if (!host_char(*c))
                return "has an invalid host name";
    }
    size_t host_len = (size_t)(host_end - host);
    if (host_len == 0)
        return "has no host";
    if (host_len >= sizeof u.host)
        return "has a host name longer than 255 bytes";
    memcpy(u.host, host, host_len);
    u.port = u.https ? 443 : 80;
    if (port) {
        long p = 0;
        if (port == auth_end)
            return "has an empty port";
        for (const char *c = port; c < auth_end; c++) {
            if (*c < '0' || *c > '9' || c - port >= 5)
                return "has a port that is not a number from 1 to 65535";
            p = p * 10 + (*c - '0');
        }
        if (p < 1 || p > 65535)
            return "has a port that is not a number from 1 to 65535";
        u.port = (int)p;
    }
    u.path = auth_end;
    if (out)
        *out = u;
    return NULL;
}

void webhook_url_redact(const char *url, char *out, size_t size)
{
    if (size == 0)
        return;
    const char *scheme = strstr(url, "://");
    const char *auth = scheme ? scheme + 3 : url;
    size_t keep = (size_t)(auth - url) + strcspn(auth, "/?#");
    int more = url[keep] != '\0';
    if (keep > size - 1)
        keep = size - 1;
    memcpy(out, url, keep);
    out[keep] = '\0';
    if (more && keep + 4 < size) /* "/…" is 4 bytes in UTF-8 */
        memcpy(out + keep, "/\xe2\x80\xa6", 5);
}

void webhook_secret_new(char out[WEBHOOK_SECRET_LEN + 1])
{
    unsigned char raw[WEBHOOK_KEY_BYTES];
    randombytes_buf(raw, sizeof raw);
    memcpy(out, WEBHOOK_SECRET_PREFIX, 6);
    sodium_bin2base64(out + 6, WEBHOOK_SECRET_LEN + 1 - 6, raw, sizeof raw,
                      sodium_base64_VARIANT_ORIGINAL);
    sodium_memzero(raw, sizeof raw);
}

int webhook_secret_key(const char *secret, unsigned char key[WEBHOOK_KEY_BYTES])
{
    size_t n = 0;
    if (!secret || strlen(secret) != WEBHOOK_SECRET_LEN || strncmp(secret, "whsec_", 6) != 0)
        return -1;
    if (sodium_base642bin(key, WEBHOOK_KEY_BYTES, secret + 6, WEBHOOK_SECRET_LEN - 6, NULL, &n,
                          NULL, sodium_base64_VARIANT_ORIGINAL) != 0 ||
        n != WEBHOOK_KEY_BYTES)
        return -1;
    return 0;
}

/* The sealing key: BLAKE2b keyed by the server key's seed, for this one purpose. */
static void sealing_key(const unsigned char server_sk[64],
                        unsigned char k[crypto_secretbox_KEYBYTES])
{
    static const char context[] = "capledger webhook secrets v1";
    crypto_generichash(k, crypto_secretbox_KEYBYTES, (const unsigned char *)context,
                       sizeof context - 1, server_sk, 32);
}

enum { SEALED_RAW = crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES + WEBHOOK_KEY_BYTES };

int webhook_seal(const unsigned char server_sk[64], const unsigned char key[WEBHOOK_KEY_BYTES],
                 char out[WEBHOOK_SEALED_LEN + 1])
{
    unsigned char k[crypto_secretbox_KEYBYTES], raw[SEALED_RAW];
    sealing_key(server_sk, k);
    randombytes_buf(raw, crypto_secretbox_NONCEBYTES);
    int rc =
        crypto_secretbox_easy(raw + crypto_secretbox_NONCEBYTES, key, WEBHOOK_KEY_BYTES, raw, k);
    memcpy(out, "v1:", 3);
    sodium_bin2base64(out + 3, WEBHOOK_SEALED_LEN + 1 - 3, raw, sizeof raw,
                      sodium_base64_VARIANT_ORIGINAL);
    sodium_memzero(k, sizeof k);
    return rc == 0 ? 0 : -1;
}

int webhook_unseal(const unsigned char server_sk[64], const char *sealed,
                   unsigned char key[WEBHOOK_KEY_BYTES])
{
    unsigned char k[crypto_secretbox_KEYBYTES], raw[SEALED_RAW];
    size_t n = 0;
    if (!sealed || strlen(sealed) != WEBHOOK_SEALED_LEN || strncmp(sealed, "v1:", 3) != 0 ||
        sodium_base642bin(raw, sizeof raw, sealed + 3, WEBHOOK_SEALED_LEN - 3, NULL, &n, NULL,
                          sodium_base64_VARIANT_ORIGINAL) != 0 ||
        n != sizeof raw)
        return -1;
    sealing_key(server_sk, k);
    int rc = crypto_secretbox_open_easy(key, raw + crypto_secretbox_NONCEBYTES,
                                        sizeof raw - crypto_secretbox_NONCEBYTES, raw, k);
    sodium_memzero(k, sizeof k);
    return rc == 0 ? 0 : -1;
}

void webhook_sign(const unsigned char *key, size_t key_len, const char *id, long long timestamp,
                  const char *body, size_t body_len, char out[WEBHOOK_SIGNATURE_LEN + 1])
{
    crypto_auth_hmacsha256_state st;
    unsigned char mac[crypto_auth_hmacsha256_BYTES];
    char ts[24];
    int n = snprintf(ts, sizeof ts, "%lld", timestamp);
    crypto_auth_hmacsha256_init(&st, key, key_len);
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)id, strlen(id));
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)".", 1);
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)ts, (unsigned long long)n);
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)".", 1);
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)body, body_len);
    crypto_auth_hmacsha256_final(&st, mac);
    memcpy(out, "v1,", 3);
    sodium_bin2base64(out + 3, WEBHOOK_SIGNATURE_LEN + 1 - 3, mac, sizeof mac,
                      sodium_base64_VARIANT_ORIGINAL);
    sodium_memzero(&st, sizeof st);
}

static const char *str_or(const json_t *obj, const char *key, const char *fallback)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s && *s ? s : fallback;
}

/* Slack's mrkdwn treats &, < and > specially: they must be escaped in text. */
static void slack_escape(const char *in, char *out, size_t size)
{
    size_t o = 0;
    for (; *in && o + 6 < size; in++) {
        const char *rep = *in == '&' ? "&amp;" : *in == '<' ? "&lt;" : *in == '>' ? "&gt;" : NULL;
        if (rep) {
            size_t n = strlen(rep);
            memcpy(out + o, rep, n);
            o += n;
        } else {
            out[o++] = *in;
        }
    }
    out[o] = '\0';
}

char *webhook_body(const char *format, const char *event, const json_t *alert)
{
    json_t *doc = NULL;
    char type[64];
    int ping = strcmp(event, "ping") == 0;
    snprintf(type, sizeof type, ping ? "%s" : "alert.%s", event);
    if (strcmp(format, "json") == 0) {
        doc = json_pack("{s:s, s:O}", "type", type, "alert", alert);
    } else if (strcmp(format, "slack") == 0) {
        char message[2200], text[2600];
        slack_escape(str_or(alert, "message", "(no message)"), message, sizeof message);
        const char *review = str_or(alert, "review_id", NULL);
        if (ping)
            snprintf(text, sizeof text, "capledger test message (webhook %s): %s",
                     str_or(alert, "id", "?"), message);
        else if (review)
            snprintf(text, sizeof text, "capledger %s alert (review %s, alert %s): %s",
                     strcmp(event, "log_integrity") == 0 ? "log integrity" : event, review,
                     str_or(alert, "id", "?"), message);
        else
            snprintf(text, sizeof text, "capledger %s alert (alert %s): %s",
                     strcmp(event, "log_integrity") == 0 ? "log integrity" : event,
                     str_or(alert, "id", "?"), message);
        doc = json_pack("{s:s}", "text", text);
    }
    if (!doc)
        return NULL;
    char *body = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(doc);
    return body;
}

/* Cloud metadata services outside link-local, refused like 169.254.0.0/16: Alibaba Cloud's
 * 100.100.100.200 and Azure's WireServer 168.63.129.16 (IPv4); AWS's IMDS fd00:ec2::254 (IPv6).
 * docs/webhooks.md lists the same. */
static const unsigned char META4[][4] = {{100, 100, 100, 200}, {168, 63, 129, 16}};
static const unsigned char META6[][16] = {
    {0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54}};

static const char *v4_refused(const unsigned char *a, int deny_private)
{
    for (size_t i = 0; i < sizeof META4 / sizeof *META4; i++)
        if (memcmp(a, META4[i], 4) == 0)
            return "a cloud metadata address";
    if (a[0] == 0)
        return "an unspecified address (0.0.0.0/8)";
    if (a[0] == 169 && a[1] == 254)
        return "a link-local address (169.254.0.0/16, where cloud metadata services answer)";
    if (a[0] >= 224)
        return "a multicast, reserved or broadcast address";
    if (!deny_private)
        return NULL;
    if (a[0] == 127)
        return "a loopback address (CAPLEDGER_WEBHOOK_DENY_PRIVATE is set)";
    if (a[0] == 10 || (a[0] == 172 && (a[1] & 0xf0) == 16) || (a[0] == 192 && a[1] == 168) ||
        (a[0] == 100 && (a[1] & 0xc0) == 64))
        return "a private address (CAPLEDGER_WEBHOOK_DENY_PRIVATE is set)";
    return NULL;
}

/* The IPv4 address an IPv6 address carries, or NULL: IPv4-mapped ::ffff:a.b.c.d, IPv4-
 * translated ::ffff:0:a.b.c.d, IPv4-compatible ::a.b.c.d (not :: or ::1), NAT64 64:ff9b::/96
 * and 64:ff9b:1::/48 (the last 32 bits), 6to4 2002:aabb:ccdd::/48. A packet to any of them can
 * reach that IPv4 address (through the kernel, a NAT64 gateway or a 6to4 relay). */
static const unsigned char *v6_embedded_v4(const unsigned char *a)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const unsigned char translated[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    static const unsigned char nat64_local[6] = {0, 0x64, 0xff, 0x9b, 0, 1};
    static const unsigned char zero[12] = {0};
    if (memcmp(a, mapped, 12) == 0 || memcmp(a, translated, 12) == 0 || memcmp(a, nat64, 12) == 0 ||
        memcmp(a, nat64_local, 6) == 0)
        return a + 12;
    if (memcmp(a, zero, 12) == 0 && !(a[12] == 0 && a[13] == 0 && a[14] == 0 && a[15] <= 1))
        return a + 12;
    if (a[0] == 0x20 && a[1] == 0x02)
        return a + 2;
    return NULL;
}

const char *webhook_addr_refused(int family, const unsigned char *a, int deny_private)
{
    static const unsigned char zero[16] = {0};
    if (family == 4)
        return v4_refused(a, deny_private);
    if (family != 6)
        return "not an IP address";
    for (size_t i = 0; i < sizeof META6 / sizeof *META6; i++)
        if (memcmp(a, META6[i], 16) == 0)
            return "a cloud metadata address";
    const unsigned char *v4 = v6_embedded_v4(a);
    if (v4)
        return v4_refused(v4, deny_private);
    if (memcmp(a, zero, 16) == 0)
        return "an unspecified address (::)";
    if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
        return "a link-local address (fe80::/10)";
    if (a[0] == 0xff)
        return "a multicast address";
    if (!deny_private)
        return NULL;
    if (memcmp(a, zero, 15) == 0 && a[15] == 1)
        return "a loopback address (CAPLEDGER_WEBHOOK_DENY_PRIVATE is set)";
    if ((a[0] & 0xfe) == 0xfc)
        return "a unique-local address (CAPLEDGER_WEBHOOK_DENY_PRIVATE is set)";
    if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)
        return "a site-local address (fec0::/10; CAPLEDGER_WEBHOOK_DENY_PRIVATE is set)";
    if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0 && a[3] == 0)
        return "a Teredo address (2001::/32, an IPv4 tunnel; CAPLEDGER_WEBHOOK_DENY_PRIVATE is "
               "set)";
    return NULL;
}

double webhook_backoff_s(int attempts, double base_s, uint32_t rnd)
{
    if (attempts < 1)
        attempts = 1;
    if (!(base_s > 0))
        base_s = 1;
    double d = base_s * ldexp(1.0, attempts > 40 ? 40 : attempts - 1);
    if (d > WEBHOOK_BACKOFF_CAP_S)
        d = WEBHOOK_BACKOFF_CAP_S;
    return d / 2 + d / 2 * ((double)rnd / 4294967296.0);
}

enum webhook_verdict webhook_verdict(enum webhook_transport t, long http_status, int attempts)
{
    switch (t) {
    case WEBHOOK_T_REPLIED:
        if (http_status >= 200 && http_status < 300)
            return WEBHOOK_DELIVERED;
        if (http_status >= 400 && http_status < 500 && http_status != 408 && http_status != 429)
            return WEBHOOK_GIVE_UP;
        return WEBHOOK_RETRY;
    case WEBHOOK_T_ADDRESS_REFUSED:
        return WEBHOOK_GIVE_UP;
    case WEBHOOK_T_CONN_REFUSED:
        return attempts >= WEBHOOK_CONN_REFUSED_GIVE_UP ? WEBHOOK_GIVE_UP : WEBHOOK_RETRY;
    case WEBHOOK_T_TIMEOUT:
    case WEBHOOK_T_OTHER:
    default:
        return WEBHOOK_RETRY;
    }
}

int webhook_breaker_counts(enum webhook_transport t)
{
    return t == WEBHOOK_T_TIMEOUT || t == WEBHOOK_T_CONN_REFUSED;
}

double webhook_breaker_open_s(int failures)
{
    if (failures < WEBHOOK_BREAKER_FAILURES)
        return 0;
    int doublings = failures - WEBHOOK_BREAKER_FAILURES;
    double s = WEBHOOK_BREAKER_OPEN_S * ldexp(1.0, doublings > 20 ? 20 : doublings);
    return s > WEBHOOK_BREAKER_OPEN_MAX_S ? WEBHOOK_BREAKER_OPEN_MAX_S : s;
}
