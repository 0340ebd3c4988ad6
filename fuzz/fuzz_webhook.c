/* Fuzz target for core/notify/webhook: the URL check every webhook passes and the redaction the
 * audit trail records. An accepted URL is printable ASCII of at most WEBHOOK_URL_MAX bytes, has
 * scheme http or https, a host of 1-255 bytes without '@', '/', '?' or '#', a port in 1..65535,
 * and a path that is a suffix of the input starting with '/' or '?' (or empty); redacting never
 * overflows and keeps a prefix of the URL. Bodies of any alert text are valid JSON. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/notify/webhook.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *url = malloc(size + 1);
    if (!url)
        return 0;
    memcpy(url, data, size);
    url[size] = '\0';
    size = strlen(url); /* the API hands over C strings: text ends at the first NUL */
    struct webhook_url u;
    const char *why = webhook_url_check(url, &u);
    if (!why) {
        size_t n = strlen(url);
        if (n != size || n > WEBHOOK_URL_MAX)
            abort();
        if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0)
            abort();
        size_t h = strlen(u.host);
        if (h == 0 || h > 255 || strpbrk(u.host, "@/?# "))
            abort();
        if (u.port < 1 || u.port > 65535)
            abort();
        if (u.path < url || u.path > url + n || (*u.path && *u.path != '/' && *u.path != '?'))
            abort();
    }
    char small[24], big[300];
    webhook_url_redact(url, small, sizeof small);
    webhook_url_redact(url, big, sizeof big);
    if (strlen(small) >= sizeof small || strlen(big) >= sizeof big)
        abort();
    size_t keep = strlen(big);
    if (keep >= 4 && strcmp(big + keep - 4, "/\xe2\x80\xa6") == 0)
        keep -= 4; /* what follows the authority became "/…" */
    if (strncmp(big, url, keep) != 0)
        abort();
    json_t *alert = json_pack("{s:s, s:s}", "message", url, "id", "x");
    if (alert) {
        char *body = webhook_body("slack", "drift", alert);
        json_t *back = body ? json_loads(body, 0, NULL) : NULL;
        if (body && !back)
            abort();
        json_decref(back);
        free(body);
        json_decref(alert);
    }
    free(url);
    return 0;
}
