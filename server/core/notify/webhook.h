/* Webhooks, the pure part: which URLs and events are accepted, the signing secret (shown once,
 * sealed at rest under a key derived from the server's key), the signature receivers check,
 * the bodies sent (JSON or Slack-compatible text) and the retry schedule.
 *
 * Signatures follow the Standard Webhooks scheme (https://www.standardwebhooks.com/): headers
 * webhook-id (the delivery id, the same on every retry: the receiver's idempotency key),
 * webhook-timestamp (Unix seconds of this attempt) and webhook-signature "v1,<base64>" where
 * the value is HMAC-SHA256(key, "<id>.<timestamp>.<body>") and key is the base64 part of the
 * secret "whsec_<base64 of 32 bytes>". Libraries for many languages verify it as is. */
#ifndef CAPLEDGER_CORE_WEBHOOK_H
#define CAPLEDGER_CORE_WEBHOOK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define WEBHOOK_URL_MAX 2048
#define WEBHOOK_SECRET_PREFIX "whsec_"
#define WEBHOOK_KEY_BYTES 32
#define WEBHOOK_SECRET_LEN (6 + 44)    /* "whsec_" + base64 (padded) of 32 bytes */
#define WEBHOOK_SIGNATURE_LEN (3 + 44) /* "v1," + base64 of 32 bytes */
#define WEBHOOK_SEALED_LEN (3 + 96)    /* "v1:" + base64 of nonce, MAC and key */
#define WEBHOOK_MAX_ATTEMPTS 12        /* then the delivery is given up ("failed") */
#define WEBHOOK_BACKOFF_CAP_S 3600.0   /* the longest wait between two attempts */

/* The events a webhook may subscribe to: alert kinds. NULL-terminated (the field table's
 * allowed values of `events`, h_webhooks.c). */
extern const char *const WEBHOOK_EVENTS[];

/* A URL capledger may post to, split into its parts. */
struct webhook_url {
    int https;
    char host[256];   /* a name or an IP literal (IPv6 without brackets) */
    int port;         /* 80 or 443 when not given */
    const char *path; /* points into the checked text: "/…" or "" */
};

/* Checks an absolute http(s) URL: at most WEBHOOK_URL_MAX bytes of printable ASCII, scheme
 * http or https (any other scheme refused), a host (name, IPv4 or bracketed IPv6), an optional
 * port 1–65535, no user:password@ part (a credential in a URL ends up in lists) and no
 * fragment. Returns NULL when acceptable (and fills *out when not NULL), else why not. */
const char *webhook_url_check(const char *url, struct webhook_url *out);

/* The URL with everything after the authority replaced by "/…" (for the audit trail: a
 * Slack-style URL carries its credential in the path). out gets at most size-1 bytes. */
void webhook_url_redact(const char *url, char *out, size_t size);

/* A new secret "whsec_…" (NUL-terminated) into out[WEBHOOK_SECRET_LEN + 1]. Caller memzeroes. */
void webhook_secret_new(char out[WEBHOOK_SECRET_LEN + 1]);
/* The HMAC key of a secret; 0 on success, -1 when the text is not a secret. */
int webhook_secret_key(const char *secret, unsigned char key[WEBHOOK_KEY_BYTES]);

/* Sealing at rest: the secret's key encrypted and authenticated (XSalsa20-Poly1305) under a
 * key derived from the server's Ed25519 secret key, as "v1:<base64 nonce‖box>". A database
 * dump alone does not give the secrets away; the key file does. 0 on success, -1 on failure
 * (open: a sealed text from another server key, or tampered with). */
int webhook_seal(const unsigned char server_sk[64], const unsigned char key[WEBHOOK_KEY_BYTES],
                 char out[WEBHOOK_SEALED_LEN + 1]);
int webhook_unseal(const unsigned char server_sk[64], const char *sealed,
                   unsigned char key[WEBHOOK_KEY_BYTES]);

/* "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>" into out[WEBHOOK_SIGNATURE_LEN + 1]. */
void webhook_sign(const unsigned char *key, size_t key_len, const char *id, long long timestamp,
                  const char *body, size_t body_len, char out[WEBHOOK_SIGNATURE_LEN + 1]);

/* The body posted for an alert of kind `event`, malloc'd: format "json" gives
 * {"type": "alert.<event>", "alert": {…the alert…}} ("ping": {"type": "ping", "alert": {id:
 * the webhook, message}}, a test message); "slack" gives {"text": "…"}, one line a
 * person reads in a chat channel (Slack, Mattermost and Rocket.Chat incoming webhooks accept
 * it). NULL when out of memory or the format is unknown. */
char *webhook_body(const char *format, const char *event, const json_t *alert);

/* Whether the deliverer may connect to an address (family 4 with 4 bytes, or 6 with 16, in
 * network order): NULL when it may, else why not. Always refused: unspecified, link-local
 * (169.254.0.0/16 and fe80::/10, where cloud metadata services answer), the metadata services
 * elsewhere (100.100.100.200, 168.63.129.16, fd00:ec2::254), multicast and broadcast. With
 * deny_private also loopback, RFC 1918, carrier-grade NAT (100.64.0.0/10), unique-local
 * (fc00::/7), site-local (fec0::/10) and Teredo (2001::/32). An IPv6 address that carries an
 * IPv4 one (IPv4-mapped, -translated and -compatible, NAT64 64:ff9b::/96 and 64:ff9b:1::/48,
 * 6to4 2002::/16) is judged as that IPv4 address. */
const char *webhook_addr_refused(int family, const unsigned char *addr, int deny_private);

/* Seconds to wait after the attempts-th failed attempt (1-based): exponential from base_s,
 * doubling, capped at WEBHOOK_BACKOFF_CAP_S, with "equal jitter" — a uniform draw in
 * [d/2, d) from rnd — so receivers that failed together are not retried together. */
double webhook_backoff_s(int attempts, double base_s, uint32_t rnd);

/* ---- delivery policy: what an attempt's outcome means, and the destination's breaker ---- */

/* How an attempt ended below HTTP. */
enum webhook_transport {
    WEBHOOK_T_REPLIED,         /* a reply came: judge its status */
    WEBHOOK_T_ADDRESS_REFUSED, /* the address guard refused the receiver's address */
    WEBHOOK_T_CONN_REFUSED,    /* nothing listens there (connection refused) */
    WEBHOOK_T_TIMEOUT,         /* no connection, or no reply, within the attempt's time */
    WEBHOOK_T_OTHER,           /* DNS, TLS, a reset connection, the server stopping, … */
};

enum webhook_verdict {
    WEBHOOK_DELIVERED, /* a 2xx */
    WEBHOOK_RETRY,     /* retried after webhook_backoff_s (until WEBHOOK_MAX_ATTEMPTS) */
    WEBHOOK_GIVE_UP,   /* a permanent refusal: failed now, not retried */
};

#define WEBHOOK_CONN_REFUSED_GIVE_UP 3 /* attempts refused in a row before giving up */

/* The verdict on the attempts-th attempt (1-based): 2xx delivered; 4xx other than 408 and 429,
 * and an address the guard refuses, are permanent (retrying changes nothing); a connection
 * refused WEBHOOK_CONN_REFUSED_GIVE_UP times is too; everything else is retried. */
enum webhook_verdict webhook_verdict(enum webhook_transport t, long http_status, int attempts);

/* The breaker of a destination (scheme://host:port of a webhook's URL, whoever owns it): it
 * counts attempts in a row that ended in a timeout or with no connection; from
 * WEBHOOK_BREAKER_FAILURES on, the destination is not tried for webhook_breaker_open_s seconds
 * (WEBHOOK_BREAKER_OPEN_S, doubling with each further failure, at most WEBHOOK_BREAKER_OPEN_MAX_S);
 * after that one trial attempt goes out (one in flight per destination), and any reply closes
 * the breaker again. Deliveries waiting on an open breaker use no attempt. */
#define WEBHOOK_BREAKER_FAILURES 3
#define WEBHOOK_BREAKER_OPEN_S 60.0
#define WEBHOOK_BREAKER_OPEN_MAX_S 3600.0

/* 1 when this outcome counts against the destination's breaker. */
int webhook_breaker_counts(enum webhook_transport t);
/* Seconds the breaker stays open after `failures` counted failures in a row (0: closed). */
double webhook_breaker_open_s(int failures);

#endif
