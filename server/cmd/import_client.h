/* The client side that both import paths share: `capledger import KIND FILE` (import.c, which
 * parses the arguments and uploads a file) and the live DCGM scrape (import_live.c, which
 * import.c starts for --from-url): the parsed arguments, the server's URL, percent-encoding,
 * writing a request, and printing a reply's faults. */
#ifndef CAPLEDGER_CMD_IMPORT_CLIENT_H
#define CAPLEDGER_CMD_IMPORT_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <civetweb.h>
#include <jansson.h>

struct import_kind; /* import.c: the kinds the command knows */

struct import_args {
    const struct import_kind *kind;
    const char *file;
    const char *url;
    const char *token_file;
    const char *idem_key;
    const char *format;  /* --format */
    const char **params; /* argv entries "k=v" (and up to two the options add) */
    size_t n_params;
    /* --from-url: scrape a DCGM exporter every every_ms for for_ms (0: until stopped) */
    const char *from_url;
    int64_t every_ms, for_ms;
    const char *every_text, *for_text; /* as given */
    char *benchmark_param;             /* "benchmark=ID" from --benchmark ID, owned */
};

/* The parts of an http:// URL that a request needs. */
struct import_url {
    char authority[300]; /* host[:port] as written, for the Host header */
    char host[256];      /* without brackets, for connect */
    int port;
    const char *base; /* the path prefix, without its trailing '/' */
    size_t base_len;
};

/* Parses an http://HOST[:PORT][/PREFIX] URL given by flag (named in errors). 0, or 2 after
 * printing why. */
int import_parse_url(const char *url, const char *flag, struct import_url *u);
/* Appends s percent-encoded (everything but RFC 3986 unreserved); out has 3 * len bytes. */
size_t import_percent_encode(char *out, const char *s, size_t len);
/* Writes all of buf. 0 or -1. */
int import_write_all(struct mg_connection *conn, const char *buf, size_t len);
/* Prints a problem's errors[] or a reply's rejected[] on stderr, one per line. */
void import_print_faults(const json_t *list);
#endif
