/* Fuzz target for the request headers a browser session depends on: the input, split at its
 * first newline, is a Cookie header and a Host header; the cookie parser, the session id shape
 * check, the CSRF comparison and the same-origin check all run on attacker-chosen bytes. */
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/auth/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        if (sodium_init() < 0)
            abort();
        ready = 1;
    }
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0'; /* headers are NUL-terminated strings: stop at the first NUL */
    char *host = strchr(text, '\n');
    if (host)
        *host++ = '\0';
    char value[SESSION_ID_TEXT_LEN + 1];
    if (session_cookie_find(text, SESSION_COOKIE_NAME, value, sizeof value) &&
        session_id_shape_ok(value)) {
        char csrf[SESSION_CSRF_TEXT_LEN + 1];
        session_csrf_token(value, csrf);
        if (!session_csrf_ok(value, csrf))
            abort();
        if (host && session_csrf_ok(value, host) && strcmp(host, csrf) != 0)
            abort();
    }
    /* Only http and https origins can match, and only the scheme asked for. */
    int same = session_origin_matches(text, host ? host : "", "http");
    int same_tls = session_origin_matches(text, host ? host : "", "https");
    if (same && host && strncasecmp(text, "http://", 7) != 0)
        abort();
    if (same_tls && host && strncasecmp(text, "https://", 8) != 0)
        abort();
    free(text);
    return 0;
}
