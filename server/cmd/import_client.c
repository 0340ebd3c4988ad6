/* The client side that both import paths share (see cmd/import_client.h). */
#include "cmd/import_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/termtext.h"

int import_parse_url(const char *url, const char *flag, struct import_url *u)
{
    /* A space, CR or LF would end the request line or start a header of every request sent
     * there; the URL is not echoed, its bytes could do the same to a terminal or a log. */
    for (const char *c = url; *c; c++)
        if ((unsigned char)*c <= 0x20 || *c == 0x7f) {
            fprintf(stderr,
                    "capledger import: %s: the URL must not contain spaces or control "
                    "characters\n",
                    flag);
            return 2;
        }
    if (strncasecmp(url, "https://", 8) == 0) {
        fprintf(stderr,
                "capledger import: %s: only plain http:// is supported (no TLS in this "
                "client); use a tunnel or run it on the server's host\n",
                url);
        return 2;
    }
    if (strncasecmp(url, "http://", 7) != 0) {
        fprintf(stderr, "capledger import: %s '%s' is not an http:// URL\n", flag, url);
        return 2;
    }
    const char *auth = url + 7;
    size_t auth_len = strcspn(auth, "/");
    if (auth_len == 0 || auth_len >= sizeof u->authority || strpbrk(url, "?#") ||
        memchr(auth, '@', auth_len)) {
        fprintf(stderr, "capledger import: %s '%s': want http://HOST[:PORT][/PREFIX]\n", flag, url);
        return 2;
    }
    memcpy(u->authority, auth, auth_len);
    u->authority[auth_len] = '\0';
    const char *host = u->authority, *port = NULL;
    size_t host_len;
    if (host[0] == '[') {
        const char *close = strchr(host, ']');
        if (!close || (close[1] != '\0' && close[1] != ':')) {
            fprintf(stderr, "capledger import: %s '%s': bad IPv6 address\n", flag, url);
            return 2;
        }
        host++;
        host_len = (size_t)(close - host);
        port = close[1] == ':' ? close + 2 : NULL;
    } else {
        const char *colon = strchr(host, ':');
        host_len = colon ? (size_t)(colon - host) : strlen(host);
        port = colon ? colon + 1 : NULL;
    }
    memcpy(u->host, host, host_len);
    u->host[host_len] = '\0';
    u->port = 80;
    if (port) {
        char *end;
        long p = strtol(port, &end, 10);
        if (*port == '\0' || *end != '\0' || p < 1 || p > 65535 || host_len == 0) {
            fprintf(stderr, "capledger import: %s '%s': bad port\n", flag, url);
            return 2;
        }
        u->port = (int)p;
    }
    u->base = auth + auth_len;
    u->base_len = strlen(u->base);
    while (u->base_len > 0 && u->base[u->base_len - 1] == '/')
        u->base_len--;
    return 0;
}

/* Appends s percent-encoded (RFC 3986: everything but unreserved characters). out has room. */
size_t import_percent_encode(char *out, const char *s, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~') {
            out[n++] = (char)c;
        } else {
            out[n++] = '%';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    return n;
}

/* Writes all of buf; mg_write may stop short on a slow socket. Returns 0 or -1. */
int import_write_all(struct mg_connection *conn, const char *buf, size_t len)
{
    while (len > 0) {
        int n = mg_write(conn, buf, len);
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* One entry of a problem's errors[] or a reply's rejected[]: "line L col C POINTER: MESSAGE". */
void import_print_faults(const json_t *list)
{
    size_t i;
    const json_t *e;
    json_array_foreach(list, i, e)
    {
        const json_t *line = json_object_get(e, "line"), *col = json_object_get(e, "column");
        const char *pointer = json_string_value(json_object_get(e, "pointer"));
        const char *message = json_string_value(json_object_get(e, "message"));
        fputs("  ", stderr);
        if (json_is_integer(line))
            fprintf(stderr, "line %lld ", (long long)json_integer_value(line));
        if (json_is_integer(col))
            fprintf(stderr, "column %lld ", (long long)json_integer_value(col));
        term_puts(stderr, pointer, "");
        fputs(": ", stderr);
        term_puts(stderr, message, "(no message)");
        fputc('\n', stderr);
    }
}
