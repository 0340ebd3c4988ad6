/* HTTP layer: public interface of layer 3 (used by main.c only). */
#ifndef CAPLEDGER_HTTP_H
#define CAPLEDGER_HTTP_H

#include <stddef.h>

#include "store/store.h"

struct http_config {
    const char *listen;             /* "127.0.0.1:8080" */
    const char *static_dir;         /* UI files */
    const char *migrations_dir;     /* for /readyz */
    const char *openapi_path;       /* api/openapi.yaml, served at /api/v1/openapi.yaml */
    const char *log_origin;         /* log origin line */
    const unsigned char *server_sk; /* 64-byte Ed25519 secret key (libsodium layout) */
    size_t max_body_bytes;          /* JSON bodies */
    size_t max_upload_bytes;        /* streamed uploads */
    int threads;
    int conn_reserve;          /* workers kept free by shedding slow clients (http/conns.h) */
    int max_conns_per_address; /* 0: no bound */
    int header_timeout_ms;     /* the request line and headers must arrive within this */
    int body_min_bytes_per_s;  /* after the first 10 s a body must average at least this */
    int send_timeout_ms;       /* a reply not read at all for this long ends its connection */
    int send_min_bytes_per_s;  /* after send_timeout_ms a pending reply must drain this fast */
    const char *public_origin; /* "https://host[:port]" browsers use, behind a TLS proxy; NULL:
                                  the request's own scheme and Host */
    const char *cors_origins;  /* space-separated origins allowed cross-origin; NULL: none */
    int session_idle_s;        /* browser sessions end after this many seconds unused */
    int signing_fresh_s;       /* a session signed in this recently enrols a key without password */
    int log_public;            /* ROUTE_LOG_PUBLIC routes answer anyone (else auditors, owners and
                                  admins) */
    int token_cache_ms;        /* a resolved API token is reused this long (0-1000; 0: never) */
    int usage_exact_max;       /* the usage report's percentiles are exact up to this many waits */
    struct store *read_store;  /* optional hot standby for reports and read-only GETs (NULL:
                                  the primary) */
    int read_wait_ms;          /* how long a read waits for the standby to replay the caller's
                                  writes before it goes to the primary */
    int row_cache_slots;       /* rows kept by the row cache (0: no cache) */
    int row_cache_mb;          /* the most row text it holds, MiB */
};

struct http_server;

/* Starts listening; NULL with why filled when it cannot. The store is borrowed. */
struct http_server *http_start(const struct http_config *cfg, struct store *store, char *why,
                               size_t why_size) __attribute__((warn_unused_result));
/* Stops accepting, waits for in-flight requests, frees the server. */
void http_stop(struct http_server *srv);
struct mg_context;
/* mg_stop without Civetweb's wait of up to two seconds for its listener to look at the stop
 * flag: returns once in-flight requests are answered and the context is freed. */
void http_stop_civetweb(struct mg_context *ctx);
/* Call once at start, before threads: glibc's malloc keeps at most a few arenas (not 8 per
 * core), and allocations of 1 MiB and more are mappings of their own, returned when freed. The
 * router returns what a large request freed (malloc_trim) after it. */
void http_malloc_setup(void);

/* The stack size Civetweb's worker threads really got (the smallest seen; 0 before any). */
size_t http_worker_stack_bytes(void);

/* For the request-path fuzz target (fuzz/fuzz_request.c): a server that never listens, and
 * one request through it on a connection the caller's mg_* functions understand. */
struct mg_connection;
struct http_server *http_server_detached(const struct http_config *cfg, struct store *store);
int http_server_handle(struct http_server *srv, struct mg_connection *conn);

/* Route table introspection (for the OpenAPI and role-matrix tests). ROUTES_ROLES: one line per
 * route, "METHOD PATTERN role,role,…" ("none" when a route declares no role and so never
 * serves); ROUTES_QUERY adds the query parameters it takes (names joined by commas, "-" for
 * none); ROUTES_STANDBY: "METHOD PATTERN" of each read the hot standby may answer (which can
 * answer 503 when the primary's position cannot be asked). */
enum route_listing { ROUTES_ROLES, ROUTES_QUERY, ROUTES_STANDBY };
void http_print_routes(enum route_listing what);

#endif
