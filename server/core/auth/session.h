/* Browser sessions, the pure part: the session id, the CSRF token derived from it, reading the
 * session cookie out of a Cookie header, and the same-origin check for unsafe requests.
 *
 * The session id is 32 random bytes in base64url (43 characters); the server stores only its
 * SHA-256. The CSRF token is HMAC-SHA256(key = session id, "capledger csrf v1"): it needs no
 * storage, a page reload can ask for it again (GET /api/v1/me), and knowing it reveals nothing
 * about the session id. */
#ifndef CAPLEDGER_CORE_SESSION_H
#define CAPLEDGER_CORE_SESSION_H

#include <stddef.h>

#define SESSION_COOKIE_NAME "capledger_session"
#define SESSION_ID_TEXT_LEN 43   /* base64url of 32 bytes, unpadded */
#define SESSION_CSRF_TEXT_LEN 43 /* base64url of an HMAC-SHA256, unpadded */

/* Writes a new random session id into out. The caller sodium_memzero()s it after use. */
void session_id_new(char out[SESSION_ID_TEXT_LEN + 1]);
/* 1 when text has the shape of a session id (length and base64url alphabet). */
int session_id_shape_ok(const char *text);
/* The CSRF token bound to session_id. */
void session_csrf_token(const char *session_id, char out[SESSION_CSRF_TEXT_LEN + 1]);
/* 1 when given (a header value, may be NULL) equals the session's CSRF token; compared in
 * constant time. */
int session_csrf_ok(const char *session_id, const char *given);

/* Copies the value of the first cookie called name in a Cookie header into out. Returns 1
 * when found and it fits (out_size includes the NUL), else 0. */
int session_cookie_find(const char *cookie_header, const char *name, char *out, size_t out_size);

/* 1 when url (an Origin or Referer value: scheme://host[:port][/…]) is the same origin as
 * scheme ("http" or "https") with host_header (host[:port], as a Host header): same scheme,
 * host and port, a missing port being the scheme's default (http 80, https 443). "null",
 * other schemes and user-info are never the same. */
int session_origin_matches(const char *url, const char *host_header, const char *scheme);

/* 1 when the session cookie must carry Secure: the request came over TLS, or the public origin
 * (CAPLEDGER_PUBLIC_ORIGIN, may be NULL) is https — a TLS proxy in front, the hop to this
 * server plain HTTP. A browser then never sends the cookie over plain HTTP. */
int session_cookie_secure(int request_tls, const char *public_origin);

#endif
