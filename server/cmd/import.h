/* capledger import: the pieces the file upload (import.c) and the live DCGM scrape
 * (import_live.c) share. */
#ifndef CAPLEDGER_CMD_IMPORT_H
#define CAPLEDGER_CMD_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include <civetweb.h>
#include <jansson.h>

/* Bytes read from the file per write: large enough that framing and syscalls cost nothing next
 * to the server's parsing, small enough to keep the client's memory flat. */
#define IMPORT_CHUNK_BYTES ((size_t)64 << 10)
/* Replies are summaries (counts and the rejected lines, which the server caps); anything larger
 * is not a capledger reply. */
#define IMPORT_REPLY_MAX_BYTES ((size_t)64 << 20)
/* How long the server may take between the end of the upload and its reply: a million sacct
 * lines go through COPY in seconds, so ten minutes means the server is stuck. */
#define IMPORT_REPLY_TIMEOUT_MS (10 * 60 * 1000)
#define IMPORT_TOKEN_MAX 512
#define IMPORT_IDEM_KEY_MAX 255
#define IMPORT_DEFAULT_URL "http://127.0.0.1:8080"

/* How the body's content type is chosen. */
enum import_ctype {
    CT_CSV,           /* text/csv */
    CT_TEXT,          /* text/plain: the server detects the format from the content */
    CT_JSON_OR_LINES, /* '[' first → application/json, else application/x-ndjson */
    CT_JSON_OR_TEXT,  /* '{' or '[' first → application/json, else text/plain */
};

struct import_kind {
    const char *name;
    const char *path;       /* under the URL's base */
    const char *path_param; /* a --param that names a resource in the path (before path_tail) */
    const char *path_tail;
    enum import_ctype ctype;
    const char *help;
};

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
/* The request target (base + the kind's path + the query), malloc'd; NULL after printing why
 * (exit status in *status). */
char *import_build_target(const struct import_args *a, const struct import_url *u, int *status);
/* Writes all of buf. 0 or -1. */
int import_write_all(struct mg_connection *conn, const char *buf, size_t len);
/* Prints a problem's errors[] or a reply's rejected[] on stderr, one per line. */
void import_print_faults(const json_t *list);
/* The live scrape loop: a->from_url every a->every_ms → POST target&at=… Returns the exit
 * status; zeroes token. Civetweb's library is initialised by the caller. */
int import_live(const struct import_args *a, const struct import_url *server, const char *target,
                char *token);

#endif
