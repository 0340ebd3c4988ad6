/* The HTTP layer's private interface: the request object, response helpers, the route table
 * and the roles every route declares. Handlers (h_*.c) include this; nothing above does. */
#ifndef CAPLEDGER_HTTP_INTERNAL_H
#define CAPLEDGER_HTTP_INTERNAL_H

#include <civetweb.h>
#include <jansson.h>
#include <stdint.h>

#include "core/problems.h"
#include "http/http.h"
#include "store/scope.h"
#include "store/audit.h"
#include "store/store.h"

/* Roles a route may allow. Deny by default: a route whose roles are 0 never serves. */
enum role_bit {
    ROLE_ANON = 1u << 0, /* no credentials at all */
    ROLE_ADMIN = 1u << 1,
    ROLE_OWNER = 1u << 2,
    ROLE_TEAM = 1u << 3,
    ROLE_AUDITOR = 1u << 4,
};
#define ROLES_USERS (ROLE_ADMIN | ROLE_OWNER | ROLE_TEAM | ROLE_AUDITOR)
#define ROLES_ALL (ROLE_ANON | ROLES_USERS)
/* Who reads the log's entries (and its public face when CAPLEDGER_LOG_PUBLIC=0). */
#define ROLES_LOG_READERS (ROLE_ADMIN | ROLE_OWNER | ROLE_AUDITOR)

/* Route flags. */
enum route_flag {
    ROUTE_JSON_BODY = 1u << 0,     /* body read and parsed as JSON before the handler runs */
    ROUTE_STREAM_BODY = 1u << 1,   /* the handler reads the body itself (uploads) */
    ROUTE_OPTIONAL_BODY = 1u << 2, /* with ROUTE_JSON_BODY: an empty body is allowed */
    ROUTE_NO_SESSION = 1u << 3,    /* the session cookie is ignored (signing in replaces it) */
    ROUTE_ROW_CACHE = 1u << 4,     /* a GET by id that reads through the row cache (req_row):
                                      its misses read the primary, never the standby */
    /* The pattern's last {param}, at its end, takes the rest of the path: one or more non-empty
     * segments, slashes included (a tlog-tiles tile path: ".../tile/{level}/{index}" matches
     * ".../tile/0/x001/x234/067.p/8" with index "x001/x234/067.p/8"). */
    ROUTE_PATH_TAIL = 1u << 5,
    /* The log's public face (checkpoint, key, hash tiles, proofs: hashes and signatures, no
     * decision content), declared for every caller so monitors and witnesses can follow the log;
     * with CAPLEDGER_LOG_PUBLIC=0 only auditors, owners and admins. */
    ROUTE_LOG_PUBLIC = 1u << 6,
    /* A pure read the hot standby may answer (evidence, comparisons, decisions, reports) once it
     * has replayed the caller's writes (http/reads.h). Sessions, tokens, users, signing keys,
     * the log, the audit bundle, webhooks and alerts never carry it: they read the primary. */
    ROUTE_STANDBY = 1u << 7,
};

struct principal {
    unsigned role;    /* one role_bit; ROLE_ANON when unauthenticated */
    char user_id[40]; /* uuid text, "" when anonymous */
    char username[128];
    char token_id[40];   /* set when authenticated by API token */
    char session_id[80]; /* hashed session id (hex) when authenticated by cookie */
    json_t *teams;       /* array of team names (owned), NULL for anonymous */
    int via_cookie;
    long signed_in_s; /* by cookie: seconds since the sign-in that started the session */
};

struct app {
    struct store *store;
    struct store *read_store; /* reports: a replica when configured, else the same as store */
    struct reads *reads;      /* read routing to the standby (http/reads.h); NULL: none */
    const struct http_config *cfg;
    struct metrics *metrics;
    struct conns *conns;        /* the slow-client guard (http/conns.h); NULL when not listening */
    struct token_cache *tokens; /* resolved API tokens, fresh for token_cache_ms (core/auth) */
    struct rowcache *rows;      /* rows read by id (core/rowcache.h); NULL: none */
    struct changes *changes;    /* keeps rows true to the primary (store/changes.h) */
    int stopping; /* set by http_stop (atomic): new requests get 503, replies say Connection: close
                   */
};

struct reads;
struct req;
typedef void (*handler_fn)(struct req *r);

struct route {
    const char *method;
    const char *pattern; /* "/api/v1/teams/{id}" */
    handler_fn handler;
    unsigned roles;
    unsigned flags;
    /* The query parameters the route takes, space-separated ("limit cursor team"); NULL: none.
     * The router refuses any other (422 naming each) before the handler runs, so a misspelt
     * filter never silently widens or narrows an answer; api/openapi.yaml declares the same
     * (tests/integration/openapi.test.mjs compares them with `capledger routes --query`). */
    const char *query;
    /* What a generic handler serves: a list route's `const struct res_list_kind *` for
     * res_list_route (http/resource.h); NULL otherwise. */
    const void *data;
};

#define MAX_PATH_PARAMS 4

struct req {
    struct mg_connection *conn;
    const struct mg_request_info *ri;
    struct app *app;
    const struct route *route;
    const char *method;
    const char *path;
    const char *query; /* may be NULL */
    char request_id[64];
    char idem_claim[33]; /* the nonce of the Idempotency-Key claim this request holds, or "" */
    char *params[MAX_PATH_PARAMS]; /* path parameters in pattern order (owned) */
    int nparams;
    json_t *body; /* parsed JSON body (owned) when ROUTE_JSON_BODY */
    struct principal who;
    struct team_scope scope; /* the teams who may read: set with who, freed with the request */
    int status;              /* status sent, 0 until a response is written */
    int close; /* the connection ends after the reply (framing fault, unread or broken body) */
    size_t bytes_out;
    double started;    /* seconds, monotonic */
    size_t body_read;  /* body bytes read so far */
    int continued;     /* an Expect: 100-continue was looked at (answered on the first read) */
    int reads_pending; /* a write of this user is counted in flight (http/reads.h) */
    int upload_slot;   /* holds an upload slot (http/upload.h) */
    /* Called once, just before the reply is written (its status given); NULL: nothing. The
     * upload driver (http/upload.h) gives its slot back here and drops a refused body. */
    void (*before_reply)(struct req *r, int status, void *ctx);
    void *before_reply_ctx;
    size_t json_reserved; /* bytes of the parsed-JSON budget this request holds (req_json_load) */
    int large;            /* took an upload slot or parsed a large document: trim after it */
};

/* Route tables of each handler file, joined by router.c. Terminated by a {NULL} entry. */
extern const struct route ops_routes[];
extern const struct route team_routes[];
extern const struct route compute_routes[];
extern const struct route session_routes[];
extern const struct route user_routes[];
extern const struct route audit_routes[];
extern const struct route workload_routes[];
extern const struct route offer_routes[];
extern const struct route benchmark_routes[];
extern const struct route run_routes[];
extern const struct route cluster_routes[];
extern const struct route class_routes[];
extern const struct route telemetry_routes[];
extern const struct route report_routes[];
extern const struct route upload_routes[];
extern const struct route review_routes[];
extern const struct route decision_routes[];
extern const struct route log_routes[];
extern const struct route alert_routes[];
extern const struct route webhook_routes[];
extern const struct route series_routes[];
extern const struct route whatif_routes[];

/* ----- responses (each writes the whole reply in one mg_write) ----- */
void resp_json(struct req *r, int status, json_t *body_stolen);
void resp_json_etag(struct req *r, int status, json_t *body_stolen, const char *etag);
/* A reply whose body is written as it is made (Transfer-Encoding: chunked): begin sends the
 * status and headers (NULL when out of memory or already answered), write buffers and sends
 * chunks (returns -1 once the client is gone), end sends the last chunk when complete, or
 * else closes the connection without it so that the client sees the body cut short. */
struct resp_stream;
struct resp_stream *resp_stream_begin(struct req *r, int status, const char *content_type);
int resp_stream_write(struct resp_stream *s, const char *bytes, size_t len);
void resp_stream_end(struct resp_stream *s, int complete);
void resp_bytes(struct req *r, int status, const char *content_type, const char *body, size_t len,
                const char *extra_headers);
/* RFC 9457 problem+json. type_slug becomes PROBLEM_TYPE_BASE "<slug>". */
void resp_problem(struct req *r, int status, const char *type_slug, const char *title,
                  const char *detail_fmt, ...) __attribute__((format(printf, 5, 6)));
/* The same with more members (e.g. the id a conflict names), merged into the problem. */
void resp_problem_with(struct req *r, int status, const char *type_slug, const char *title,
                       json_t *members_stolen, const char *detail_fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Parses a JSON body (duplicate keys refused, any value at the top): nested past
 * JSON_NEST_MAX → 400 too-deep, malformed → 400, a number beyond ±(2^53 − 1) → 422 naming its
 * pointer. Returns the document, or NULL after answering. */
json_t *req_parse_json(struct req *r, const char *buf, size_t len);
/* Every parse of a request's JSON goes through here: the document's cost (core/jsonlimit.h:
 * json_parse_cost, of the first value with JSON_DISABLE_EOF_CHECK) is refused past
 * JSON_PARSE_MAX (NULL, err's code json_error_out_of_memory: resp_json_error answers 413), and
 * a cost above REQ_JSON_FREE is held in the process's budget of REQ_JSON_TOTAL bytes of parsed
 * JSON until the request ends (a request holds the largest it parsed: its documents are parsed
 * one after another). When the budget stays full for REQ_JSON_WAIT_MS, answers 503 with
 * Retry-After and returns NULL with r->status set. Other faults: NULL with err set, nothing
 * answered. */
#define REQ_JSON_TOTAL ((size_t)160 << 20)
#define REQ_JSON_FREE ((size_t)256 << 10)
#define REQ_JSON_WAIT_MS 3000
json_t *req_json_load(struct req *r, const char *buf, size_t len, size_t flags, json_error_t *err);
/* Holds cost bytes of the budget for the rest of the request (for a parser in core that the
 * handler calls on the whole body); 0, or -1 after answering 503. */
int req_json_reserve(struct req *r, size_t cost) __attribute__((warn_unused_result));
/* At the end of a request (router): gives its budget back and, after a large one, returns
 * freed memory to the system (malloc_trim; not under AddressSanitizer). */
void req_memory_end(struct req *r);
/* 400 for JSON that failed to parse (json_load_bounded): "too-deep" naming the nesting limit,
 * else "malformed-json" with jansson's message. line, when not 0, replaces err's line (a line
 * of an upload). */
void resp_json_error(struct req *r, const json_error_t *err, long line);
/* After req_read failed: 400 (the body ended before its declared length, its chunked framing
 * is malformed, or the guard cut a trickled body off). The connection ends after it. */
void resp_body_unreadable(struct req *r);
/* 422 with every problem of the list as errors[{pointer, message[, line, column]}]. */
void resp_invalid(struct req *r, const struct problems *p, const char *detail);
/* errors[{pointer, message[, line, column]}] of the list, as resp_invalid writes them. */
json_t *problems_errors_json(const struct problems *p);
/* Maps a store status to the right problem (404/409/422/503/500). */
void resp_store_error(struct req *r, enum store_status st, const char *what);
/* The skeleton of a create route whose reply is not replayed (it shows a secret once): make(r,
 * p) returns the new row (answered 201) or NULL, having answered itself or put the faults in p
 * (answered 422). idem_create (http/idempotency.h) is the same with an Idempotency-Key. */
typedef json_t *(*create_fn)(struct req *r, struct problems *p);
void resp_create(struct req *r, create_fn make);
/* The end of a read: 200 with row (stolen) when st is STORE_OK, else resp_store_error. */
void resp_stored(struct req *r, enum store_status st, json_t *row_stolen, const char *what);
/* The row of a read the handler goes on with: row (stolen, handed back) when st is STORE_OK,
 * else NULL after freeing it and answering resp_store_error. */
json_t *req_stored(struct req *r, enum store_status st, json_t *row_stolen, const char *what);
/* 503, problem type log-inconsistent: this process found the decision log inconsistent and
 * appends nothing more (decisions and key events alike). */
void resp_log_inconsistent(struct req *r);

/* ----- request helpers ----- */
const char *req_header(struct req *r, const char *name);
/* Query parameters: res_query (http/resource.h), the one typed reader. */
/* Reads up to size bytes of the body; returns bytes read, 0 at the end, -1 on error. */
long req_read(struct req *r, char *buf, size_t size);
/* Reads and discards the rest of the body (at most the upload limit in all), handing each
 * piece to sink (may be NULL; the Idempotency-Key digest of a replayed upload). The upload
 * driver calls it before a fault reply (http/upload.h), so that every early answer is sent to
 * a client that has finished sending (not cut off mid-body). */
void req_drain(struct req *r, void (*sink)(void *ctx, const char *data, size_t len), void *ctx);
/* The content type without parameters, lower-cased into buf ("" when absent); the whole header
 * when its charset is not UTF-8 (or US-ASCII) or it holds more than one type, so no route takes it.
 */
const char *req_content_type(struct req *r, char *buf, size_t size);

/* ----- ETag and If-Match (etag.c) -----
 * A versioned row (workload, review, artifact, alert) has the strong ETag "v<version>"; a write
 * to it needs If-Match naming that tag (or "*"): 428 without one, 412 when it is stale. W/"v3"
 * is not accepted (a weak tag cannot guard a write). */
#define ETAG_MAX 32
/* 1 when an If-Match header value names etag (unquoted here) or is "*": a comma-separated
 * list of quoted entity tags (RFC 9110 §13.1.1). */
int etag_matches(const char *if_match, const char *etag);
/* The row's ETag, unquoted, into buf; returns buf. */
const char *etag_version(const json_t *row, char buf[ETAG_MAX]);
/* The row's version, the number its ETag names: what an update checked against If-Match
 * passes to the store (which refuses it if the row changed meanwhile). */
long etag_row_version(const json_t *row);
/* resp_json with the row's ETag. */
void resp_versioned(struct req *r, int status, json_t *row_stolen);
/* The end of a GET of a versioned row: 200 with its ETag; nothing when row is NULL (the read
 * answered already, e.g. 404). */
void resp_read_versioned(struct req *r, json_t *row_stolen);
/* 0 when the body of a PATCH is a JSON object (a merge patch); else answers 422 with the
 * problem added to p and returns -1. */
int etag_patch_body(struct req *r, struct problems *p);
/* Before the row is read: 0 when the request has If-Match, else answers 428 and returns -1. */
int etag_required(struct req *r, const char *what);
/* 0 when If-Match names the row's ETag; else answers 428 (none) or 412 (stale) naming `what`
 * and the current tag, and returns -1. */
int etag_check(struct req *r, const json_t *row, const char *what);
/* Fills who from the request's principal (borrowed strings) and returns it. */
const struct audit_actor *req_actor(struct req *r, struct audit_actor *who);

/* ----- metrics ----- */
/* Counters for the routes route_at(0 .. nroutes - 2) names (the router's table, handed in so
 * the metrics need not know the router) and a last slot for unrouted requests. */
struct metrics *metrics_new(const struct route *(*route_at)(size_t i), size_t nroutes);
void metrics_free(struct metrics *m);
void metrics_observe(struct metrics *m, size_t route_index, int status, double seconds);
struct conns_counts;
/* malloc'd Prometheus text; conns may be NULL (no guard). */
char *metrics_render(struct metrics *m, struct store *store, const struct conns_counts *conns);

/* ----- router ----- */
size_t router_route_count(void);
const struct route *router_route_at(size_t i);

/* ----- static files ----- */
/* Serves GET/HEAD of a file under static_dir; returns 0 when not found (nothing written). */
int static_serve(struct req *r);

/* ----- auth (auth.c) ----- */
/* Fills r->who from the bearer token or session cookie. Returns 0 when the request may go on
 * (anonymous included), or -1 after answering (401 for bad credentials, 403 for CSRF). */
int auth_resolve(struct req *r);
/* 1 when url (an Origin or Referer) is this server's origin: scheme, host and port equal to
 * CAPLEDGER_PUBLIC_ORIGIN when set, else to the request's own scheme and Host. */
int req_same_origin(struct req *r, const char *url);
/* 1 when origin is one of CAPLEDGER_CORS_ORIGINS (exact match); never without it. */
int req_cors_allowed(struct req *r, const char *origin);
/* Session lifetimes: absolute 12 h; idle: http_config.session_idle_s (CAPLEDGER_SESSION_IDLE_S). */
#define AUTH_SESSION_ABSOLUTE_S (12 * 3600)
/* Copies a well-formed session cookie value into buf (SESSION_ID_TEXT_LEN + 1 bytes); returns
 * 1 when there is one. The caller sodium_memzero()s buf. */
int auth_session_cookie(struct req *r, char *buf, size_t size);
/* "admin", "owner", "team", "auditor" or "anonymous" for a role_bit. */
const char *auth_role_name(unsigned role);
void principal_clear(struct principal *p);
/* Team scoping, used by every handler that touches team data (workloads, benchmarks,
 * telemetry, runs, scenarios). Reading: owners, auditors and admins read every team; team
 * members read their own teams. Writing: owners write for any team; team members for their
 * own teams; auditors and admins never write team data. */
int principal_can_read_team(const struct principal *p, const char *team);
int principal_can_write_team(const struct principal *p, const char *team);
/* The caller's team scope (every team unless a team member): the router fills r->scope so. */
void principal_scope(const struct principal *p, struct team_scope *out);

#endif
