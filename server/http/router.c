/* Civetweb glue and the declarative route table.
 *
 * One Civetweb handler takes every request. It assigns the request id, matches the route
 * table (404 for an unknown path, 405 with Allow for a known path and another method),
 * resolves who is asking, checks the route's declared roles (deny by default), reads and
 * parses a JSON body within the size limit, runs the handler, and writes one JSON access-log
 * line. Paths outside /api/ that match no route are static UI files. */
#include <dirent.h>
#include <pthread.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "core/auth/secret.h"
#include "core/auth/tokencache.h"
#include "core/httpframe.h"
#include "core/jcs.h"
#include "http/conns.h"
#include "http/resource.h"
#include "http/internal.h"
#include "core/rowcache.h"
#include "http/reads.h"
#include "store/changes.h"

/* Every handler file's table, in matching order. */
static const struct route *const route_tables[] = {
    ops_routes,       team_routes,      compute_routes, workload_routes, offer_routes,
    benchmark_routes, telemetry_routes, run_routes,     cluster_routes,  report_routes,
    upload_routes,    session_routes,   user_routes,    audit_routes,    review_routes,
    decision_routes,  log_routes,       alert_routes,   webhook_routes,  series_routes,
    class_routes,     whatif_routes};

/* Civetweb's request_timeout_ms: how long it waits for the headers, and within a body read for
 * the next bytes. The guard (http/conns.h) bounds the totals: header deadline, body rate. */
#define REQUEST_TIMEOUT_MS "10000"

#define TOKEN_CACHE_SLOTS 1024 /* direct-mapped: a pipeline rarely has more tokens in use */

struct http_server {
    struct mg_context *ctx;
    struct app app;
    struct http_config cfg;
    int in_flight; /* requests inside handle() (atomic) */
};

/* How long a stop waits for the requests in flight before it cancels their statements, and
 * then for them to answer. */
#define STOP_DRAIN_MS 10000
#define STOP_CANCEL_MS 2000

static struct conns *server_conns(const struct mg_connection *conn)
{
    struct http_server *srv = mg_get_user_data(mg_get_context(conn));
    return srv ? __atomic_load_n(&srv->app.conns, __ATOMIC_ACQUIRE) : NULL;
}

static int init_connection(const struct mg_connection *conn, void **conn_data)
{
    *conn_data = NULL;
    conns_opened(server_conns(conn));
    return 0;
}

static void connection_close(const struct mg_connection *conn)
{
    conns_closing(server_conns(conn));
}

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

size_t router_route_count(void)
{
    size_t n = 0;
    for (size_t t = 0; t < sizeof route_tables / sizeof route_tables[0]; t++)
        for (const struct route *rt = route_tables[t]; rt->method; rt++)
            n++;
    return n;
}

const struct route *router_route_at(size_t i)
{
    for (size_t t = 0; t < sizeof route_tables / sizeof route_tables[0]; t++)
        for (const struct route *rt = route_tables[t]; rt->method; rt++)
            if (i-- == 0)
                return rt;
    return NULL;
}

void http_print_routes(enum route_listing what)
{
    static const struct {
        unsigned bit;
        const char *name;
    } roles[] = {{ROLE_ANON, "anonymous"},
                 {ROLE_ADMIN, "admin"},
                 {ROLE_OWNER, "owner"},
                 {ROLE_TEAM, "team"},
                 {ROLE_AUDITOR, "auditor"}};
    for (size_t i = 0; i < router_route_count(); i++) {
        const struct route *rt = router_route_at(i);
        if (what == ROUTES_STANDBY) {
            if (rt->flags & ROUTE_STANDBY)
                printf("%s %s\n", rt->method, rt->pattern);
            continue;
        }
        printf("%s %s ", rt->method, rt->pattern);
        int first = 1;
        for (size_t k = 0; k < sizeof roles / sizeof roles[0]; k++)
            if (rt->roles & roles[k].bit) {
                printf("%s%s", first ? "" : ",", roles[k].name);
                first = 0;
            }
        printf("%s", first ? "none" : "");
        if (what == ROUTES_QUERY) {
            printf(" ");
            for (const char *q = rt->query ? rt->query : "-"; *q; q++)
                putchar(*q == ' ' ? ',' : *q);
        }
        printf("\n");
    }
}

/* Matches path against pattern segment by segment; {name} captures one non-empty segment. With
 * ROUTE_PATH_TAIL (tail), the pattern's last {name}, which must end it, captures the rest of
 * the path instead: one or more non-empty segments with their slashes ("x001/x234/067.p/8"),
 * for resources named by a path of their own (C2SP tlog-tiles). */
static int match_pattern(const char *pattern, const char *path, int tail, char **params,
                         int *nparams)
{
    int n = 0;
    const char *p = pattern, *s = path;
    while (*p && *s) {
        if (*p == '{') {
            const char *close = strchr(p, '}');
            if (!close || n >= MAX_PATH_PARAMS)
                goto fail;
            size_t len = strlen(s);
            if (tail && close[1] == '\0') {
                /* The rest of the path, without an empty segment ("a//b", a trailing "/"). */
                if (s[0] == '/' || strstr(s, "//") || s[len - 1] == '/')
                    goto fail;
            } else {
                const char *end = strchr(s, '/');
                len = end ? (size_t)(end - s) : len;
            }
            if (len == 0)
                goto fail;
            params[n++] = strndup(s, len);
            p = close + 1;
            s += len;
            continue;
        }
        if (*p != *s)
            goto fail;
        p++;
        s++;
    }
    if (*p || *s)
        goto fail;
    *nparams = n;
    return 1;
fail:
    for (int i = 0; i < n; i++) {
        free(params[i]);
        params[i] = NULL;
    }
    return 0;
}

static void set_request_id(struct req *r)
{
    const char *given = req_header(r, "X-Request-Id");
    size_t len = given ? strlen(given) : 0;
    int ok = len > 0 && len < sizeof r->request_id;
    for (size_t i = 0; ok && i < len; i++) {
        char c = given[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '-' || c == '_' || c == '.' || c == ':';
    }
    if (ok) {
        memcpy(r->request_id, given, len + 1);
        return;
    }
    secret_random_hex(r->request_id, 33); /* 32 hex digits */
}

static int is_json_type(const char *ct)
{
    return strcmp(ct, "application/json") == 0 || strcmp(ct, "application/merge-patch+json") == 0;
}

/* Reads and parses the JSON body. Returns 0, or -1 after answering 400/413/415. */
static int read_json_body(struct req *r)
{
    size_t limit = r->app->cfg->max_body_bytes;
    long long declared = r->ri->content_length;
    char ct[96];
    req_content_type(r, ct, sizeof ct);
    if (declared <= 0 && !ct[0] && (r->route->flags & ROUTE_OPTIONAL_BODY))
        return 0;
    if (!is_json_type(ct)) {
        resp_problem(r, 415, "unsupported-media-type", "Unsupported media type",
                     "this endpoint takes application/json, not '%s'", ct[0] ? ct : "(none)");
        return -1;
    }
    if (declared > (long long)limit) {
        resp_problem(r, 413, "too-large", "Body too large",
                     "the body is %lld bytes; the limit is %zu", declared, limit);
        return -1;
    }
    char *buf = malloc(limit + 1);
    if (!buf) {
        resp_problem(r, 503, "unavailable", "Service unavailable", "out of memory");
        return -1;
    }
    size_t len = 0;
    long n;
    while (len <= limit && (n = req_read(r, buf + len, limit + 1 - len)) > 0)
        len += (size_t)n;
    if (n < 0) {
        free(buf);
        resp_body_unreadable(r);
        return -1;
    }
    if (len > limit) {
        free(buf);
        resp_problem(r, 413, "too-large", "Body too large", "the limit is %zu bytes", limit);
        return -1;
    }
    if (len == 0 && (r->route->flags & ROUTE_OPTIONAL_BODY)) {
        free(buf);
        return 0;
    }
    r->body = req_parse_json(r, buf, len);
    free(buf);
    if (!r->body)
        return -1;
    return 0;
}

static void access_log(struct req *r, size_t route_index)
{
    double ms = (monotonic_s() - r->started) * 1000.0;
    char ts[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* Route pattern rather than the raw path: ids and query strings stay out of the log. */
    json_t *line =
        json_pack("{s:s, s:s, s:s, s:i, s:f, s:s, s:I, s:s}", "ts", ts, "method", r->method,
                  "route", r->route ? r->route->pattern : "(static)", "status", r->status,
                  "duration_ms", ms, "request_id", r->request_id, "bytes", (json_int_t)r->bytes_out,
                  "actor", r->who.username[0] ? r->who.username : "-");
    char *text = json_dumps(line, JSON_COMPACT | JSON_REAL_PRECISION(6));
    if (text) {
        fprintf(stderr, "%s\n", text);
        free(text);
    }
    json_decref(line);
    metrics_observe(r->app->metrics, route_index, r->status, ms / 1000.0);
}

/* The path and the decoded query must be UTF-8 text without control characters: every handler
 * passes them on to PostgreSQL, which refuses invalid UTF-8 (SQLSTATE 22021), and to logs. */
static int text_ok(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return 0;
    return jcs_utf8_valid(s, len);
}

/* 1 when s holds a percent-encoded NUL: decoded, it would end the path early (a C string), so
 * "/app.css%00.js" would name /app.css. Civetweb's own decoding (decode_url) is off for that
 * reason: handle() decodes the path and keeps it encoded when it holds a NUL. */
static int encoded_nul(const char *s)
{
    for (; s && (s = strchr(s, '%')) != NULL; s++)
        if (s[1] == '0' && s[2] == '0')
            return 1;
    return 0;
}

static int uri_ok(struct req *r)
{
    if (encoded_nul(r->path) || encoded_nul(r->query))
        return 0;
    if (!text_ok(r->path, strlen(r->path)))
        return 0;
    if (!r->query)
        return 1;
    size_t len = strlen(r->query);
    char *decoded = malloc(len + 1);
    int n = decoded ? mg_url_decode(r->query, (int)len, decoded, (int)len + 1, 1) : -1;
    int ok = n >= 0 && text_ok(decoded, (size_t)n);
    free(decoded);
    return ok;
}

/* A CORS preflight from a configured origin (CAPLEDGER_CORS_ORIGINS): 204 naming the path's
 * methods and the request headers the API reads. Returns 0 (nothing sent) for any other
 * OPTIONS request, which then gets the 405 of a method the path does not have. */
static int cors_preflight(struct req *r, const char *allow)
{
    const char *origin = req_header(r, "Origin");
    if (!origin || !req_header(r, "Access-Control-Request-Method") || !req_cors_allowed(r, origin))
        return 0;
    char extra[512];
    snprintf(extra, sizeof extra,
             "Access-Control-Allow-Methods: %s\r\n"
             "Access-Control-Allow-Headers: Authorization, Content-Type, If-Match, "
             "Idempotency-Key, X-Request-Id\r\nAccess-Control-Max-Age: 600\r\n",
             allow);
    resp_bytes(r, 204, NULL, NULL, 0, extra);
    return 1;
}

/* Refuses ambiguous framing (request smuggling) with 400, and ends the connection: what
 * follows the headers cannot be trusted to be this request's body or the next request. */
static int framing_ok(struct req *r)
{
    struct httpframe_header headers[64];
    size_t n = 0;
    for (int i = 0; i < r->ri->num_headers && n < sizeof headers / sizeof headers[0]; i++, n++) {
        headers[n].name = r->ri->http_headers[i].name;
        headers[n].value = r->ri->http_headers[i].value;
    }
    const char *why = httpframe_refusal(r->ri->http_version, headers, n);
    if (!why)
        return 1;
    r->close = 1;
    resp_problem(r, 400, "bad-framing", "Ambiguous message framing", "%s", why);
    return 0;
}

/* 1 when name (len bytes) is one of the space-separated names of list. */
static int name_listed(const char *list, const char *name, size_t len)
{
    for (const char *s = list; s && *s;) {
        s += strspn(s, " ");
        size_t n = strcspn(s, " ");
        if (n && n == len && strncmp(s, name, len) == 0)
            return 1;
        s += n;
    }
    return 0;
}

/* 1 when a parameter decoded as name appears in query before the segment at `at`. */
static int query_named_before(const char *query, const char *at, const char *name)
{
    for (const char *s = query; s < at;) {
        size_t seg = strcspn(s, "&"), nlen = strcspn(s, "=&");
        char other[128];
        int n = nlen ? mg_url_decode(s, (int)nlen, other, (int)sizeof other, 1) : -1;
        if (n >= 0 && strcmp(other, name) == 0)
            return 1;
        s += seg;
        if (*s == '&')
            s++;
    }
    return 0;
}

/* Refuses query parameters the route does not declare: 422 naming each (pointer "?name"),
 * and any given twice or without a name (the first would silently win). A declared name must
 * be written as is and have a value: the reader (http/query.c, Civetweb's mg_get_var) matches
 * names as written and needs "name=", so "?at%6Fmic=true" or a bare "?atomic" would pass here
 * and then be read as absent.
 * A streamed body is read and dropped first, so the client is not cut off mid-upload. Returns
 * 0 when every name is declared. */
static int check_query_names(struct req *r)
{
    if (!r->query || !*r->query)
        return 0;
    struct problems p;
    problems_init(&p);
    for (const char *s = r->query; *s;) {
        size_t seg = strcspn(s, "&");
        size_t nlen = strcspn(s, "=&");
        char name[128];
        int n = nlen ? mg_url_decode(s, (int)nlen, name, (int)sizeof name, 1) : 0;
        if (seg && !nlen) {
            problems_add(&p, "?", "a query parameter without a name");
        } else if (nlen && n >= 0 && name_listed(r->route->query, name, (size_t)n) &&
                   query_named_before(r->query, s, name)) {
            char ptr[140];
            snprintf(ptr, sizeof ptr, "?%s", name);
            problems_add(&p, ptr,
                         "is given more than once: give each parameter once (a list is "
                         "comma-separated where the route takes one)");
        } else if (nlen && n >= 0 && name_listed(r->route->query, name, (size_t)n) &&
                   (memchr(s, '%', nlen) || memchr(s, '+', nlen))) {
            char ptr[140];
            snprintf(ptr, sizeof ptr, "?%s", name);
            problems_add(&p, ptr, "the parameter's name must be written as is, not encoded");
        } else if (nlen && n >= 0 && name_listed(r->route->query, name, (size_t)n) && nlen == seg) {
            char ptr[140];
            snprintf(ptr, sizeof ptr, "?%s", name);
            problems_add(&p, ptr, "has no value: write %s=VALUE", name);
        } else if (nlen && (n < 0 || !name_listed(r->route->query, name, (size_t)n))) {
            char ptr[140];
            snprintf(ptr, sizeof ptr, "?%s", n < 0 ? "(too long)" : name);
            if (!r->route->query)
                problems_add(&p, ptr, "unknown query parameter: %s %s takes none", r->method,
                             r->route->pattern);
            else
                problems_add(&p, ptr, "unknown query parameter: %s %s takes %s", r->method,
                             r->route->pattern, r->route->query);
        }
        s += seg;
        if (*s == '&')
            s++;
    }
    int refused = p.total > 0;
    if (refused) {
        if (r->route->flags & (ROUTE_STREAM_BODY | ROUTE_JSON_BODY))
            req_drain(r, NULL, NULL);
        resp_invalid(r, &p,
                     "The request has query parameters this route does not take: see errors.");
    }
    problems_free(&p);
    return refused ? -1 : 0;
}

static void dispatch(struct req *r, size_t *route_index)
{
    char allow[128] = "";
    size_t total = router_route_count();
    *route_index = total; /* "no route" slot */
    if (!framing_ok(r))
        return;
    if (!uri_ok(r)) {
        resp_problem(r, 400, "bad-uri", "Bad request",
                     "the path and query must be UTF-8 text without control characters");
        return;
    }
    for (size_t i = 0; i < total; i++) {
        const struct route *rt = router_route_at(i);
        char *params[MAX_PATH_PARAMS] = {0};
        int np = 0;
        if (!match_pattern(rt->pattern, r->path, (rt->flags & ROUTE_PATH_TAIL) != 0, params, &np))
            continue;
        int same = strcmp(rt->method, r->method) == 0 ||
                   (strcmp(r->method, "HEAD") == 0 && strcmp(rt->method, "GET") == 0);
        if (!same) {
            if (strlen(allow) + strlen(rt->method) + 3 < sizeof allow) {
                if (allow[0])
                    strcat(allow, ", ");
                strcat(allow, rt->method);
            }
            for (int k = 0; k < np; k++)
                free(params[k]);
            continue;
        }
        r->route = rt;
        *route_index = i;
        memcpy(r->params, params, sizeof params);
        r->nparams = np;
        break;
    }
    if (!r->route && allow[0] && strcmp(r->method, "OPTIONS") == 0 && cors_preflight(r, allow))
        return;
    if (!r->route) {
        if (allow[0]) {
            char extra[160];
            snprintf(extra, sizeof extra, "Allow: %s\r\n", allow);
            json_t *p =
                json_pack("{s:s, s:s, s:i, s:s}", "type", PROBLEM_TYPE_BASE "method-not-allowed",
                          "title", "Method not allowed", "status", 405, "detail", allow);
            char *text = json_dumps(p, JSON_COMPACT);
            resp_bytes(r, 405, "application/problem+json", text, strlen(text), extra);
            free(text);
            json_decref(p);
            return;
        }
        if (strncmp(r->path, "/api/", 5) != 0 &&
            (strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0) && static_serve(r))
            return;
        resp_problem(r, 404, "not-found", "Not found", "no resource at %s", r->path);
        return;
    }
    if (auth_resolve(r) != 0)
        return;
    principal_scope(&r->who, &r->scope);
    unsigned roles = r->route->roles;
    if ((r->route->flags & ROUTE_LOG_PUBLIC) && !r->app->cfg->log_public)
        roles &= ROLES_LOG_READERS;
    if (!(roles & r->who.role)) {
        if (r->who.role == ROLE_ANON)
            resp_problem(r, 401, "unauthenticated", "Authentication required",
                         "send Authorization: Bearer <token> or log in");
        else
            resp_problem(r, 403, "forbidden", "Forbidden", "your role may not %s %s", r->method,
                         r->route->pattern);
        return;
    }
    if (check_query_names(r) != 0)
        return;
    if ((r->route->flags & ROUTE_JSON_BODY) && read_json_body(r) != 0)
        return;
    struct reads *reads = r->app->reads;
    if (!reads) {
        r->route->handler(r);
    } else if (strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0) {
        /* A read-only GET the standby may answer: the handler sees the chosen database as
         * its store (a copy of app for this request alone). A row-cache route reads the
         * primary on a miss: a row from the standby could be older than the cache's applied
         * position (http/reads.h: req_row). */
        struct app *shared = r->app;
        struct app local = *shared;
        if ((r->route->flags & (ROUTE_STANDBY | ROUTE_ROW_CACHE)) == ROUTE_STANDBY &&
            strcmp(r->route->method, "GET") == 0)
            local.store = reads_choose(reads);
        else
            local.store = shared->store;
        if (local.store) {
            local.read_store = local.store;
            r->app = &local;
            r->route->handler(r);
            r->app = shared;
        } else {
            resp_store_error(r, STORE_UNAVAILABLE, NULL);
        }
    } else {
        reads_write_begins(reads, r);
        r->route->handler(r);
        reads_write_ends(reads, r);
    }
    if (!r->status)
        resp_problem(r, 500, "internal", "Internal error", "no response (request id %s)",
                     r->request_id);
}

static int handle(struct mg_connection *conn, void *cbdata)
{
    struct http_server *srv = cbdata;
    struct req r;
    memset(&r, 0, sizeof r);
    r.started = monotonic_s();
    r.conn = conn;
    r.ri = mg_get_request_info(conn);
    r.app = &srv->app;
    r.method = r.ri->request_method;
    /* Civetweb leaves the path encoded (decode_url "no"); decoded here, unless it decodes to a
     * NUL, which uri_ok then refuses. */
    const char *raw_path = r.ri->local_uri ? r.ri->local_uri : "/";
    size_t raw_len = strlen(raw_path);
    char *path = malloc(raw_len + 1);
    int path_len = path ? mg_url_decode(raw_path, (int)raw_len, path, (int)raw_len + 1, 0) : -1;
    r.path = path_len >= 0 && !memchr(path, 0, (size_t)path_len) ? path : raw_path;
    r.query = r.ri->query_string;
    r.who.role = ROLE_ANON;
    set_request_id(&r);
    struct conns *guard = __atomic_load_n(&srv->app.conns, __ATOMIC_ACQUIRE);
    conns_request_begins(guard, r.ri->remote_addr, r.ri->remote_port);
    size_t route_index = 0;
    __atomic_add_fetch(&srv->in_flight, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&srv->app.stopping, __ATOMIC_SEQ_CST)) {
        route_index = router_route_count(); /* the "no route" slot, as dispatch sets it */
        r.close = 1;                        /* its body, if any, is not read */
        resp_problem(&r, 503, "unavailable", "Service unavailable",
                     "the server is stopping: retry (another instance, or this one restarted)");
    } else {
        dispatch(&r, &route_index);
    }
    access_log(&r, route_index);
    __atomic_sub_fetch(&srv->in_flight, 1, __ATOMIC_SEQ_CST);
    conns_request_ends(guard, r.ri->remote_addr, r.ri->remote_port);
    for (int i = 0; i < r.nparams; i++)
        free(r.params[i]);
    json_decref(r.body);
    team_scope_free(&r.scope);
    principal_clear(&r.who);
    free(path);
    req_memory_end(&r);
    return r.status ? r.status : 500;
}

/* The smallest worker stack seen, measured in each worker as it starts (logged at start). */
static size_t worker_stack_min;
static pthread_mutex_t worker_stack_lock = PTHREAD_MUTEX_INITIALIZER;

static void *init_thread(const struct mg_context *ctx, int thread_type)
{
    (void)ctx;
    pthread_attr_t attr;
    size_t size = 0;
    if (thread_type == 1 && pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstacksize(&attr, &size);
        pthread_attr_destroy(&attr);
        pthread_mutex_lock(&worker_stack_lock);
        if (!worker_stack_min || size < worker_stack_min)
            worker_stack_min = size;
        pthread_mutex_unlock(&worker_stack_lock);
    }
    return NULL;
}

size_t http_worker_stack_bytes(void)
{
    pthread_mutex_lock(&worker_stack_lock);
    size_t v = worker_stack_min;
    pthread_mutex_unlock(&worker_stack_lock);
    return v;
}

static int log_message(const struct mg_connection *conn, const char *message)
{
    (void)conn;
    json_t *line =
        json_pack("{s:s, s:s, s:s}", "level", "warn", "msg", "civetweb", "detail", message);
    char *text = json_dumps(line, JSON_COMPACT);
    if (text)
        fprintf(stderr, "%s\n", text);
    free(text);
    json_decref(line);
    return 1;
}

struct http_server *http_server_detached(const struct http_config *cfg, struct store *store)
{
    struct http_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return NULL;
    srv->cfg = *cfg;
    srv->app.store = store;
    srv->app.read_store = cfg->read_store ? cfg->read_store : store;
    struct store *replica = cfg->read_store && cfg->read_store != store ? cfg->read_store : NULL;
    if (replica || cfg->row_cache_slots > 0) {
        srv->app.reads = reads_new(store, replica, cfg->read_wait_ms);
        if (!srv->app.reads) {
            free(srv);
            return NULL;
        }
    }
    srv->app.cfg = &srv->cfg;
    srv->app.metrics = metrics_new(router_route_at, router_route_count() + 1);
    srv->app.tokens = token_cache_new(TOKEN_CACHE_SLOTS, cfg->token_cache_ms);
    return srv;
}

int http_server_handle(struct http_server *srv, struct mg_connection *conn)
{
    return handle(conn, srv);
}

/* Civetweb calls this once the context exists and before any request is processed: mg_start2
 * already listens then, so routes installed after it returns would leave a window in which a
 * connection met Civetweb's own text/plain 404. The context is Civetweb's heap object, handed
 * over const only by the callback's signature. */
static void init_context(const struct mg_context *ctx)
{
    mg_set_request_handler((struct mg_context *)(uintptr_t)ctx, "/", handle, mg_get_user_data(ctx));
}

/* What http_server_detached and http_start made, beside Civetweb's context. */
static void server_free(struct http_server *srv)
{
    conns_stop(srv->app.conns);
    changes_stop(srv->app.changes);
    rowcache_free(srv->app.rows);
    metrics_free(srv->app.metrics);
    reads_free(srv->app.reads);
    token_cache_free(srv->app.tokens);
    free(srv);
}

struct http_server *http_start(const struct http_config *cfg, struct store *store, char *why,
                               size_t why_size)
{
    /* A list's filters are declared in its res_list_kind and its query parameters in its
     * route; the router refuses undeclared ones before the handler runs, so they must agree. */
    for (size_t i = 0; i < router_route_count(); i++) {
        const struct route *rt = router_route_at(i);
        if (rt->handler == res_list_route && res_list_route_check(rt, why, why_size) != 0)
            return NULL;
    }
    struct http_server *srv = http_server_detached(cfg, store);
    if (!srv) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    if (cfg->row_cache_slots > 0) {
        /* before the first request: the cache is filled only while its listener runs */
        srv->app.rows = rowcache_new((size_t)cfg->row_cache_slots, (size_t)cfg->row_cache_mb << 20);
        int standby = srv->app.read_store != store;
        srv->app.changes = srv->app.rows ? changes_start(store, srv->app.rows, standby) : NULL;
        if (!srv->app.changes) {
            rowcache_free(srv->app.rows);
            srv->app.rows = NULL;
        }
    }
    char threads[16];
    snprintf(threads, sizeof threads, "%d", cfg->threads > 0 ? cfg->threads : 32);
    /* No document_root: static files go through static.c, so Civetweb itself never lists
     * directories, runs CGI or serves anything we did not route. */
    const char *options[] = {"listening_ports", cfg->listen, "num_threads", threads, "tcp_nodelay",
                             "1", "enable_keep_alive", "yes", "keep_alive_timeout_ms", "5000",
                             "request_timeout_ms", REQUEST_TIMEOUT_MS, "enable_directory_listing",
                             "no",
                             /* no CORS unless configured: Civetweb would otherwise answer
                              * every preflight itself with "*" (http/router.c: cors) */
                             "access_control_allow_origin", "", "access_control_allow_methods", "",
                             "access_control_allow_headers", "", "max_request_size", "16384",
                             /* the path is decoded by handle(): a %00 must not end it early */
                             "decode_url", "no", NULL};
    struct mg_callbacks callbacks;
    memset(&callbacks, 0, sizeof callbacks);
    callbacks.log_message = log_message;
    callbacks.init_thread = init_thread;
    callbacks.init_connection = init_connection;
    callbacks.connection_close = connection_close;
    callbacks.init_context = init_context;
    struct mg_init_data init = {
        .callbacks = &callbacks, .user_data = srv, .configuration_options = options};
    struct mg_error_data err = {.text = why, .text_buffer_size = why_size};
    srv->ctx = mg_start2(&init, &err);
    if (!srv->ctx) {
        server_free(srv);
        return NULL;
    }
    struct mg_server_port port;
    if (mg_get_server_ports(srv->ctx, 1, &port) != 1) {
        snprintf(why, why_size, "cannot read the listening port");
        http_stop(srv);
        return NULL;
    }
    struct conns_config guard = {
        .threads = cfg->threads,
        .reserve = cfg->conn_reserve,
        .max_per_address = cfg->max_conns_per_address,
        .header_timeout_ms = cfg->header_timeout_ms,
        .body_min_bytes_per_s = cfg->body_min_bytes_per_s,
        .send_timeout_ms = cfg->send_timeout_ms,
        .send_min_bytes_per_s = cfg->send_min_bytes_per_s,
        .listen_port = port.port,
    };
    struct conns *conns = conns_start(&guard);
    if (!conns) {
        snprintf(why, why_size, "cannot start the connection guard");
        http_stop(srv);
        return NULL;
    }
    __atomic_store_n(&srv->app.conns, conns, __ATOMIC_RELEASE); /* set once the port is known */
    for (int waited = 0; waited < 100 && !http_worker_stack_bytes(); waited++) {
        struct timespec pause = {0, 10 * 1000 * 1000}; /* the workers measure as they start */
        nanosleep(&pause, NULL);
    }
    return srv;
}

static void *stop_run(void *ctx)
{
    mg_stop(ctx); /* closes the listener, then waits for worker threads to finish */
    return NULL;
}

/* Wakes Civetweb's master thread out of its wait for a connection: it looks at its stop flag
 * only between waits of two seconds. Shutting a listening socket down ends the wait at once
 * (Linux: the socket closes, poll reports it); the master thread then sees the flag, closes the
 * socket itself and stops the workers. The process's only listening sockets are Civetweb's. */
static void wake_listeners(void)
{
    DIR *fds = opendir("/proc/self/fd");
    if (!fds)
        return;
    for (struct dirent *e; (e = readdir(fds)) != NULL;) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        int listening = 0;
        socklen_t len = sizeof listening;
        if (*end || end == e->d_name || fd == dirfd(fds))
            continue;
        if (getsockopt((int)fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening)
            shutdown((int)fd, SHUT_RDWR);
    }
    closedir(fds);
}

void http_stop_civetweb(struct mg_context *ctx)
{
    /* mg_stop sets the stop flag at once, then waits for the master thread: on a thread of its
     * own, so that this one can wake the master thread after the flag is set. Without the
     * thread, the old wait (up to two seconds) is all that is lost. */
    pthread_t stopper;
    if (pthread_create(&stopper, NULL, stop_run, ctx) == 0) {
        struct timespec pause = {0, 5 * 1000 * 1000};
        nanosleep(&pause, NULL);
        wake_listeners();
        pthread_join(stopper, NULL);
    } else {
        mg_stop(ctx);
    }
}

/* Waits up to ms for the requests in flight to end; returns how many are left. */
static int wait_in_flight(struct http_server *srv, int ms)
{
    int left;
    for (int waited = 0;
         (left = __atomic_load_n(&srv->in_flight, __ATOMIC_SEQ_CST)) > 0 && waited < ms;
         waited += 5) {
        struct timespec pause = {0, 5 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    return left;
}

void http_stop(struct http_server *srv)
{
    if (!srv)
        return;
    /* Requests in flight finish (a body half sent is still read) while new ones are answered
     * 503 with Retry-After and Connection: close, for at most STOP_DRAIN_MS; then Civetweb
     * stops, which cuts any request still running. */
    __atomic_store_n(&srv->app.stopping, 1, __ATOMIC_SEQ_CST);
    int left = wait_in_flight(srv, STOP_DRAIN_MS);
    if (left > 0) {
        /* A handler waiting on the database (a lock, a long query) would hold mg_stop for as
         * long: its statement is cancelled, so its transaction rolls back and it answers. */
        int asked = store_cancel_running(srv->app.store);
        if (srv->app.read_store != srv->app.store)
            asked += store_cancel_running(srv->app.read_store);
        fprintf(stderr,
                "{\"level\":\"warn\",\"msg\":\"stopping with requests still running\","
                "\"requests\":%d,\"statements_cancelled\":%d}\n",
                left, asked);
        wait_in_flight(srv, STOP_CANCEL_MS);
    }
    http_stop_civetweb(srv->ctx);
    server_free(srv);
}
