/* Request and response helpers. Every reply is assembled in memory and written with a single
 * mg_write: with keep-alive, a reply written in pieces waits for the client's delayed ACK
 * (measured: 716 vs ~15,000 req/s). */
#include <ctype.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/cursor.h"
#include "core/formats/linebuf.h"
#include "core/jsonlimit.h"
#include "core/jcs.h"
#include "http/conns.h"
#include "http/internal.h"

/* A strict policy: the UI is same-origin files only, no inline script or style. */
static const char SECURITY_HEADERS[] =
    "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "X-Frame-Options: DENY\r\n"
    "Referrer-Policy: no-referrer\r\n"
    "Cross-Origin-Opener-Policy: same-origin\r\n";

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 204:
        return "No Content";
    case 304:
        return "Not Modified";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 409:
        return "Conflict";
    case 412:
        return "Precondition Failed";
    case 413:
        return "Content Too Large";
    case 415:
        return "Unsupported Media Type";
    case 422:
        return "Unprocessable Content";
    case 428:
        return "Precondition Required";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Status";
    }
}

int req_cors_allowed(struct req *r, const char *origin)
{
    const char *list = r->app->cfg->cors_origins;
    size_t len = origin ? strlen(origin) : 0;
    for (const char *s = list; s && *s && len;) {
        s += strspn(s, " ");
        size_t n = strcspn(s, " ");
        if (n == len && strncmp(s, origin, len) == 0)
            return 1;
        s += n;
    }
    return 0;
}

/* The status line and headers; len < 0: a chunked body. */
static FILE *reply_head(struct req *r, int status, const char *content_type, long long len,
                        const char *extra_headers, char **buf, size_t *buflen)
{
    FILE *out = open_memstream(buf, buflen);
    if (!out)
        return NULL;
    fprintf(out, "HTTP/1.1 %d %s\r\n", status, reason_phrase(status));
    if (content_type)
        fprintf(out, "Content-Type: %s\r\n", content_type);
    if (len < 0)
        fputs("Transfer-Encoding: chunked\r\n", out);
    else
        fprintf(out, "Content-Length: %lld\r\n", len);
    fprintf(out, "X-Request-Id: %s\r\n%s", r->request_id, SECURITY_HEADERS);
    /* API answers are not cached, unless the handler says how (immutable log tiles). */
    if ((strncmp(r->path, "/api/", 5) == 0 || strcmp(r->path, "/metrics") == 0) &&
        !(extra_headers && strstr(extra_headers, "Cache-Control:")))
        fputs("Cache-Control: no-store\r\n", out);
    if (extra_headers)
        fputs(extra_headers, out);
    const char *origin = req_header(r, "Origin");
    if (origin && req_cors_allowed(r, origin)) /* only configured origins, exactly */
        fprintf(out, "Access-Control-Allow-Origin: %s\r\nVary: Origin\r\n", origin);
    if (r->close || __atomic_load_n(&r->app->stopping, __ATOMIC_SEQ_CST)) {
        /* what follows cannot be trusted to be the next request, or the server is stopping */
        fputs("Connection: close\r\n", out);
        mg_disable_connection_keep_alive(r->conn);
    } else if (status == 413) {
        /* Civetweb reads and drops the rest of a framed body (a client still sending it gets
         * the reply instead of a reset); the guard ends that after CAPLEDGER_HEADER_TIMEOUT_MS. */
        fputs("Connection: close\r\n", out);
    }
    fputs("\r\n", out);
    return out;
}

void resp_bytes(struct req *r, int status, const char *content_type, const char *body, size_t len,
                const char *extra_headers)
{
    if (r->status) /* already answered: a handler bug, keep the first reply */
        return;
    /* A client that asked Expect: 100-continue and was not invited has not sent its body:
     * answer without reading it (draining would invite it, up to the upload limit), and end
     * the connection, in case it sends the body anyway. */
    if (!r->continued) {
        const char *expect = mg_get_header(r->conn, "Expect");
        if (expect && strcasecmp(expect, "100-continue") == 0 && r->ri->content_length != 0)
            r->close = 1;
    }
    if (r->before_reply)
        r->before_reply(r, status, r->before_reply_ctx);
    int head_only = strcmp(r->method, "HEAD") == 0;
    char *buf = NULL;
    size_t buflen = 0;
    FILE *out = reply_head(r, status, content_type, (long long)len, extra_headers, &buf, &buflen);
    if (!out)
        return;
    if (!head_only && len)
        fwrite(body, 1, len, out);
    fclose(out);
    mg_write(r->conn, buf, buflen);
    free(buf);
    r->status = status;
    r->bytes_out = len;
}

/* Streamed replies: the body goes out in chunks of up to STREAM_CHUNK bytes. */
#define STREAM_CHUNK 65536

struct resp_stream {
    struct req *r;
    char *buf;
    size_t used;
    int head_only;
    int broken;
};

struct resp_stream *resp_stream_begin(struct req *r, int status, const char *content_type)
{
    if (r->status)
        return NULL;
    struct resp_stream *s = calloc(1, sizeof *s);
    char *head = NULL;
    size_t head_len = 0;
    FILE *out = s ? reply_head(r, status, content_type, -1, NULL, &head, &head_len) : NULL;
    if (!out || !(s->buf = malloc(STREAM_CHUNK))) {
        if (out)
            fclose(out);
        free(head);
        if (s)
            free(s->buf);
        free(s);
        return NULL;
    }
    fclose(out);
    s->r = r;
    s->head_only = strcmp(r->method, "HEAD") == 0;
    if (mg_write(r->conn, head, head_len) <= 0)
        s->broken = 1;
    free(head);
    r->status = status;
    return s;
}

static int stream_flush(struct resp_stream *s)
{
    if (s->used && !s->broken && !s->head_only &&
        mg_send_chunk(s->r->conn, s->buf, (unsigned)s->used) <= 0)
        s->broken = 1;
    s->used = 0;
    return s->broken ? -1 : 0;
}

int resp_stream_write(struct resp_stream *s, const char *bytes, size_t len)
{
    s->r->bytes_out += len;
    while (len && !s->broken) {
        size_t n = STREAM_CHUNK - s->used < len ? STREAM_CHUNK - s->used : len;
        memcpy(s->buf + s->used, bytes, n);
        s->used += n;
        bytes += n;
        len -= n;
        if (s->used == STREAM_CHUNK)
            stream_flush(s);
    }
    return s->broken ? -1 : 0;
}

void resp_stream_end(struct resp_stream *s, int complete)
{
    if (complete && stream_flush(s) == 0 && !s->head_only)
        mg_send_chunk(s->r->conn, "", 0); /* the last chunk */
    if (!complete || s->broken) {
        /* No last chunk: the client sees a body cut short, never a complete-looking one. */
        s->r->close = 1;
        mg_disable_connection_keep_alive(s->r->conn);
    }
    free(s->buf);
    free(s);
}

static void resp_json_headers(struct req *r, int status, json_t *body, const char *ctype,
                              const char *extra)
{
    /* RFC 8785 number and string forms: shortest round-trip numbers (0.76, not jansson's
     * 0.76000000000000001), members in the document's order. jansson's own dump is the
     * fallback for what JCS refuses (a string holding NUL). */
    size_t len = 0;
    char *text = jcs_dump(body, &len);
    if (!text) {
        text = json_dumps(body, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(17));
        len = text ? strlen(text) : 0;
    }
    json_decref(body);
    if (!text) {
        resp_bytes(r, 500, "application/problem+json", "{\"status\":500}", 14, NULL);
        return;
    }
    resp_bytes(r, status, ctype, text, len, extra);
    free(text);
}

void resp_json(struct req *r, int status, json_t *body_stolen)
{
    resp_json_headers(r, status, body_stolen, "application/json", NULL);
}

void resp_json_etag(struct req *r, int status, json_t *body_stolen, const char *etag)
{
    char extra[160];
    snprintf(extra, sizeof extra, "ETag: \"%s\"\r\n", etag);
    resp_json_headers(r, status, body_stolen, "application/json", extra);
}

static json_t *problem_new(int status, const char *slug, const char *title, const char *detail)
{
    char type[160];
    snprintf(type, sizeof type, PROBLEM_TYPE_BASE "%s", slug);
    return json_pack("{s:s, s:s, s:i, s:s}", "type", type, "title", title, "status", status,
                     "detail", detail ? detail : title);
}

__attribute__((format(printf, 6, 0))) static void resp_problem_v(struct req *r, int status,
                                                                 const char *type_slug,
                                                                 const char *title, json_t *members,
                                                                 const char *detail_fmt, va_list ap)
{
    char detail[512];
    vsnprintf(detail, sizeof detail, detail_fmt, ap);
    /* A detail may quote the request (a Content-Type, a path): bytes that are not UTF-8 become
     * '?', or no JSON string could hold it (fuzz_request: a 0xA4 in Content-Type gave 500). */
    size_t len = strlen(detail);
    for (size_t at = 0; (at += linebuf_utf8_check((unsigned char *)detail + at, len - at)) < len;)
        detail[at++] = '?';
    json_t *p = problem_new(status, type_slug, title, detail);
    if (members)
        json_object_update(p, members);
    json_decref(members);
    /* The database out of reach is transient: say when to retry (HAProxy and clients do). */
    const char *extra =
        status == 503 && strcmp(type_slug, "unavailable") == 0 ? "Retry-After: 1\r\n" : NULL;
    resp_json_headers(r, status, p, "application/problem+json", extra);
}

void resp_json_error(struct req *r, const json_error_t *err, long line)
{
    long at_line = line ? line : err->line;
    if (json_error_code(err) == json_error_out_of_memory)
        resp_problem(r, 413, "too-large", "JSON too large to parse",
                     "%s (the value that starts at line %ld, column %d)", err->text, at_line,
                     err->column);
    else if (json_error_code(err) == json_error_null_character) {
        /* Valid JSON, refused for what it holds: U+0000 would end the string for every C
         * reader after the parser (docs/ledger-format.md, docs/api-rules.md). */
        struct problems p;
        problems_init(&p);
        problems_add_line(&p, at_line, err->column, "",
                          "holds U+0000 (\\u0000) in a string: no field accepts it");
        resp_invalid(r, &p, "U+0000 is not accepted in any string: see errors.");
        problems_free(&p);
    } else if (json_error_code(err) == json_error_stack_overflow)
        resp_problem(r, 400, "too-deep", "JSON nested too deeply",
                     "arrays and objects may nest at most %d levels; line %ld, column %d goes "
                     "deeper",
                     JSON_NEST_MAX, at_line, err->column);
    else
        resp_problem(r, 400, "malformed-json", "Malformed JSON",
                     "the body is not valid JSON: %s at line %ld, column %d", err->text, at_line,
                     err->column);
}

void resp_body_unreadable(struct req *r)
{
    r->close = 1;
    resp_problem(r, 400, "body-unreadable", "Body unreadable",
                 "the request body ended before its declared length, its chunked framing is "
                 "malformed, or it came too slowly (after %zu bytes)",
                 r->body_read);
}

/* The parsed-JSON budget of the process (req_json_load). */
static pthread_mutex_t json_budget_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t json_budget_cv = PTHREAD_COND_INITIALIZER;
static size_t json_budget_used;

int req_json_reserve(struct req *r, size_t cost)
{
    if (cost > JSON_PARSE_MAX)
        cost = JSON_PARSE_MAX;
    if (cost <= REQ_JSON_FREE || cost <= r->json_reserved)
        return 0;
    size_t more = cost - r->json_reserved;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += REQ_JSON_WAIT_MS / 1000;
    until.tv_nsec += (long)(REQ_JSON_WAIT_MS % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&json_budget_mu);
    int timed_out = 0;
    while (json_budget_used + more > REQ_JSON_TOTAL && !timed_out)
        timed_out = pthread_cond_timedwait(&json_budget_cv, &json_budget_mu, &until) != 0;
    int got = json_budget_used + more <= REQ_JSON_TOTAL;
    if (got)
        json_budget_used += more;
    pthread_mutex_unlock(&json_budget_mu);
    if (!got) {
        resp_problem(r, 503, "unavailable", "Service unavailable",
                     "too much JSON is being parsed at once (this document needs about %zu MiB "
                     "of the server's %zu MiB); retry shortly",
                     (cost + ((size_t)1 << 20) - 1) >> 20, REQ_JSON_TOTAL >> 20);
        return -1;
    }
    r->json_reserved = cost;
    r->large = 1;
    return 0;
}

json_t *req_json_load(struct req *r, const char *buf, size_t len, size_t flags, json_error_t *err)
{
    size_t cost = json_parse_cost(buf, len, (flags & JSON_DISABLE_EOF_CHECK) != 0);
    if (cost > JSON_PARSE_MAX) /* refused by the budget, after the nesting check */
        return json_load_budget(buf, len, flags, JSON_PARSE_MAX, err);
    if (req_json_reserve(r, cost) != 0)
        return NULL;
    return json_load_bounded(buf, len, flags, err);
}

/* glibc's allocator, not a sanitizer's: there malloc_trim was the first call into glibc's
 * malloc, made on a worker thread, which attached that thread to the main arena uncounted; two
 * such threads exiting then failed glibc's assertion "attached_threads > 0" at stop. */
#if defined(__SANITIZE_ADDRESS__)
#define GLIBC_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GLIBC_MALLOC 0
#endif
#endif
#ifndef GLIBC_MALLOC
#define GLIBC_MALLOC 1
#endif

void req_memory_end(struct req *r)
{
    if (r->json_reserved) {
        pthread_mutex_lock(&json_budget_mu);
        json_budget_used -= r->json_reserved;
        pthread_cond_broadcast(&json_budget_cv);
        pthread_mutex_unlock(&json_budget_mu);
        r->json_reserved = 0;
    }
#if GLIBC_MALLOC
    /* What a large request freed stays in its arena's free lists (glibc returns only the top of
     * a heap by itself): give the pages back. */
    if (r->large || r->body_read > ((size_t)1 << 20))
        malloc_trim(0);
#endif
}

void http_malloc_setup(void)
{
#if GLIBC_MALLOC
    /* glibc makes up to 8 arenas per core as threads contend, each keeping what its threads
     * freed: the server's memory grew with the host's cores and with the threads that ever
     * served a large request (26 catalog imports: 1.4 GiB kept). A few arenas, and large
     * blocks (request bodies, parse tables) as mappings of their own that go back when freed
     * (setting the threshold also stops glibc raising it after each such free). */
    mallopt(M_ARENA_MAX, 4);
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

json_t *req_parse_json(struct req *r, const char *buf, size_t len)
{
    json_error_t err;
    json_t *doc = req_json_load(r, buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
    if (!doc) {
        if (!r->status)
            resp_json_error(r, &err, 0);
        return NULL;
    }
    struct problems p;
    problems_init(&p);
    if (json_numbers_check(doc, "", &p)) {
        resp_invalid(r, &p, "A number is beyond ±(2^53 − 1): see errors.");
        json_decref(doc);
        doc = NULL;
    }
    problems_free(&p);
    return doc;
}

void resp_problem(struct req *r, int status, const char *type_slug, const char *title,
                  const char *detail_fmt, ...)
{
    va_list ap;
    va_start(ap, detail_fmt);
    resp_problem_v(r, status, type_slug, title, NULL, detail_fmt, ap);
    va_end(ap);
}

void resp_problem_with(struct req *r, int status, const char *type_slug, const char *title,
                       json_t *members_stolen, const char *detail_fmt, ...)
{
    va_list ap;
    va_start(ap, detail_fmt);
    resp_problem_v(r, status, type_slug, title, members_stolen, detail_fmt, ap);
    va_end(ap);
}

json_t *problems_errors_json(const struct problems *p)
{
    json_t *errors = json_array();
    for (size_t i = 0; i < p->count; i++) {
        json_t *e =
            json_pack("{s:s, s:s}", "pointer", p->items[i].pointer, "message", p->items[i].message);
        if (p->items[i].line)
            json_object_set_new(e, "line", json_integer(p->items[i].line));
        if (p->items[i].column)
            json_object_set_new(e, "column", json_integer(p->items[i].column));
        json_array_append_new(errors, e);
    }
    return errors;
}

void resp_invalid(struct req *r, const struct problems *p, const char *detail)
{
    json_t *body = problem_new(422, "invalid", "Invalid input",
                               detail ? detail : "The input has invalid fields: see errors.");
    json_object_set_new(body, "errors", problems_errors_json(p));
    json_object_set_new(body, "error_count", json_integer((json_int_t)p->total));
    resp_json_headers(r, 422, body, "application/problem+json", NULL);
}

void resp_log_inconsistent(struct req *r)
{
    resp_problem(r, 503, "log-inconsistent", "The decision log is inconsistent",
                 "the stored log contradicts itself (see the server log and the alert sent to "
                 "owners and admins): nothing was appended, and nothing will be until an operator "
                 "has restored it");
}

void resp_store_error(struct req *r, enum store_status st, const char *what)
{
    switch (st) {
    case STORE_NOT_FOUND:
        resp_problem(r, 404, "not-found", "Not found", "%s not found", what);
        return;
    case STORE_CONFLICT:
        resp_problem(r, 409, "conflict", "Conflict", "%s conflicts with an existing record", what);
        return;
    case STORE_INVALID:
        resp_problem(r, 422, "invalid", "Invalid input",
                     "%s refers to a record that does not "
                     "exist or breaks a constraint",
                     what);
        return;
    case STORE_UNAVAILABLE:
        resp_problem(r, 503, "unavailable", "Service unavailable",
                     "the database is unreachable; retry shortly");
        return;
    case STORE_ACTOR_GONE:
        resp_problem(r, 401, "unauthenticated", "Authentication failed",
                     "your account was disabled, or this API token revoked; nothing was written");
        return;
    default:
        resp_problem(r, 500, "internal", "Internal error",
                     "an internal error occurred (request id %s)", r->request_id);
    }
}

const char *req_header(struct req *r, const char *name)
{
    return mg_get_header(r->conn, name);
}

long req_read(struct req *r, char *buf, size_t size)
{
    /* RFC 9110 §10.1.1: a client that sent Expect: 100-continue waits for an interim 100
     * before the body (curl: one second, then it sends anyway). Civetweb sends it only for the
     * bodies it reads itself, so the first read of a handler's body does. */
    if (!r->continued) {
        r->continued = 1;
        const char *expect = mg_get_header(r->conn, "Expect");
        if (expect && strcasecmp(expect, "100-continue") == 0 && r->status == 0 &&
            r->ri->http_version && strcmp(r->ri->http_version, "1.1") == 0 &&
            mg_write(r->conn, "HTTP/1.1 100 Continue\r\n\r\n", 25) != 25)
            r->close = 1;
    }
    /* While the handler waits here the guard measures the body's rate (http/conns.h): a body
     * trickled in is cut off there, and this read then fails. */
    struct conns *guard = __atomic_load_n(&r->app->conns, __ATOMIC_ACQUIRE);
    conns_body_reading(guard, r->ri->remote_addr, r->ri->remote_port, 1);
    int n = mg_read(r->conn, buf, size);
    conns_body_reading(guard, r->ri->remote_addr, r->ri->remote_port, 0);
    if (n < 0) {
        r->close = 1; /* a broken chunk or a dropped connection: nothing more to read here */
        return -1;
    }
    r->body_read += (size_t)n;
    return n;
}

#define DRAIN_CHUNK_BYTES 65536

void req_drain(struct req *r, void (*sink)(void *ctx, const char *data, size_t len), void *ctx)
{
    /* On the heap: Civetweb's worker threads have small stacks. */
    char *buf = malloc(DRAIN_CHUNK_BYTES);
    size_t limit = r->app->cfg->max_upload_bytes, total = 0;
    long n;
    while (buf && total <= limit && (n = req_read(r, buf, DRAIN_CHUNK_BYTES)) > 0) {
        if (sink)
            sink(ctx, buf, (size_t)n);
        total += (size_t)n;
    }
    free(buf);
}

/* 1 when what follows the media type is nothing, or well-formed parameters (name=token or
 * name="quoted") whose charset, if any (charset*, RFC 2231, counts), is UTF-8 or its subset
 * US-ASCII: the only text the readers decode. Anything else (a second type, a comment, a bare
 * name) is 0. */
static int type_params_read_as_utf8(const char *p)
{
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            return 1;
        if (*p != ';')
            return 0;
        p++;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            return 1;
        const char *name = p;
        p += strcspn(p, "=; \t,\"");
        size_t nlen = (size_t)(p - name);
        while (isspace((unsigned char)*p))
            p++;
        if (*p != '=' || nlen == 0)
            return 0;
        p++;
        while (isspace((unsigned char)*p))
            p++;
        const char *value = p;
        size_t vlen;
        if (*p == '"') {
            const char *end = strchr(++value, '"');
            if (!end)
                return 0;
            vlen = (size_t)(end - value);
            p = end + 1;
        } else {
            vlen = strcspn(p, "; \t,\"");
            p += vlen;
            if (vlen == 0)
                return 0;
        }
        if (nlen >= 7 && strncasecmp(name, "charset", 7) == 0 &&
            !((vlen == 5 && strncasecmp(value, "utf-8", 5) == 0) ||
              (vlen == 4 && strncasecmp(value, "utf8", 4) == 0) ||
              (vlen == 8 && strncasecmp(value, "us-ascii", 8) == 0)))
            return 0;
    }
}

const char *req_content_type(struct req *r, char *buf, size_t size)
{
    const char *ct = req_header(r, "Content-Type");
    size_t i = 0;
    if (ct)
        for (; ct[i] && ct[i] != ';' && !isspace((unsigned char)ct[i]) && i + 1 < size; i++)
            buf[i] = (char)tolower((unsigned char)ct[i]);
    buf[i] = '\0';
    /* Another charset, or more than one type ("text/plain , text/csv"): the whole header, which
     * no route takes, so its refusal (415) quotes what was sent. */
    if (ct && !type_params_read_as_utf8(ct + i)) {
        for (i = 0; ct[i] && i + 1 < size; i++)
            buf[i] = (char)tolower((unsigned char)ct[i]);
        buf[i] = '\0';
    }
    return buf;
}

const struct audit_actor *req_actor(struct req *r, struct audit_actor *who)
{
    who->user_id = r->who.user_id[0] ? r->who.user_id : NULL;
    who->name = r->who.username[0] ? r->who.username : "anonymous";
    who->token_id = r->who.token_id[0] ? r->who.token_id : NULL;
    who->request_id = r->request_id;
    who->idem_claim = r->idem_claim[0] ? r->idem_claim : NULL;
    return who;
}

void resp_stored(struct req *r, enum store_status st, json_t *row, const char *what)
{
    if (st == STORE_OK) {
        resp_json(r, 200, row);
        return;
    }
    json_decref(row);
    resp_store_error(r, st, what);
}

json_t *req_stored(struct req *r, enum store_status st, json_t *row, const char *what)
{
    if (st == STORE_OK)
        return row;
    json_decref(row);
    resp_store_error(r, st, what);
    return NULL;
}

void resp_create(struct req *r, create_fn make)
{
    struct problems p;
    problems_init(&p);
    json_t *row = make(r, &p);
    if (row)
        resp_json(r, 201, row);
    else if (!r->status)
        resp_invalid(r, &p, NULL);
    problems_free(&p);
}
