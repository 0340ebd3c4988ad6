/* Streaming text uploads; see upload.h. */
#include "http/upload.h"

#include <stdlib.h>
#include <string.h>

#include "http/resource.h"
#include "http/gate.h"
#include "http/idempotency.h"
#include "store/uploads.h"

static struct gate upload_gate =
    GATE_INIT(GATE_MAX_SLOTS, "too many uploads are in progress; retry shortly");

int upload_slot_enter(struct req *r)
{
    struct store_stats st;
    store_stats(r->app->store, &st);
    int slots = st.size / 4 < 1 ? 1 : st.size / 4;
    int got = gate_try_enter_within(&upload_gate, r->who.user_id, UPLOAD_PER_USER, slots);
    if (got == 0) {
        r->upload_slot = 1;
        r->large = 1;
        return 0;
    }
    if (got == -2)
        gate_reply_own_limit(r, UPLOAD_PER_USER);
    else
        gate_reply_busy(r, &upload_gate);
    return -1;
}

int upload_slot_enter_if_large(struct req *r)
{
    long long declared = r->ri->content_length;
    if (declared >= 0 && (size_t)declared <= r->app->cfg->max_body_bytes)
        return 0;
    return upload_slot_enter(r);
}

void upload_slot_leave(struct req *r)
{
    if (!r->upload_slot)
        return;
    r->upload_slot = 0;
    gate_leave_as(&upload_gate, r->who.user_id);
}

struct upload_stream *upload_stream_new(struct req *r, struct idem *idem, size_t max_line_bytes)
{
    struct upload_stream *u = malloc(sizeof *u);
    if (!u)
        return NULL;
    memset(u, 0, offsetof(struct upload_stream, chunk));
    u->r = r;
    u->idem = idem;
    u->limit = r->app->cfg->max_upload_bytes;
    linebuf_init(&u->lb, max_line_bytes);
    crypto_hash_sha256_init(&u->sha);
    /* A body declared longer than the limit is refused before a byte of it is read (and before
     * a client that sent Expect: 100-continue is invited to send it). */
    if (r->ri->content_length > 0 && (unsigned long long)r->ri->content_length > u->limit) {
        u->too_large = 1;
        u->eof = 1;
        linebuf_finish(&u->lb);
        r->close = 1;
    }
    return u;
}

void upload_stream_free(struct upload_stream *u)
{
    if (!u)
        return;
    linebuf_free(&u->lb);
    free(u);
}

/* Reads one chunk into the splitter; sets eof (and the fault flags) when there is no more. */
static void read_chunk(struct upload_stream *u)
{
    long n = req_read(u->r, u->chunk, sizeof u->chunk);
    if (n <= 0) {
        long long declared = u->r->ri->content_length;
        if (n < 0 || (declared > 0 && (long long)u->bytes < declared))
            u->read_failed = 1;
        u->eof = 1;
        linebuf_finish(&u->lb);
        return;
    }
    u->bytes += (size_t)n;
    if (u->bytes > u->limit) {
        u->too_large = 1;
        u->eof = 1;
        linebuf_finish(&u->lb);
        return;
    }
    crypto_hash_sha256_update(&u->sha, (const unsigned char *)u->chunk, (size_t)n);
    idem_update(u->idem, u->chunk, (size_t)n);
    if (linebuf_push(&u->lb, u->chunk, (size_t)n) != 0) {
        u->oom = 1;
        u->eof = 1;
        linebuf_finish(&u->lb);
    }
}

enum linebuf_status upload_next_line(struct upload_stream *u, struct linebuf_line *line)
{
    for (;;) {
        enum linebuf_status st = linebuf_pop(&u->lb, line);
        if (st != LINEBUF_NEED_MORE || u->eof)
            return (u->oom || u->too_large) ? LINEBUF_NEED_MORE : st;
        read_chunk(u);
    }
}

int upload_next_text_line(struct upload_stream *u, struct linebuf_line *line, struct problems *p,
                          long *faults)
{
    enum linebuf_status ls;
    while ((ls = upload_next_line(u, line)) != LINEBUF_NEED_MORE) {
        if (ls == LINEBUF_LINE)
            return 1;
        linebuf_report(&u->lb, ls, line, p);
        if (faults)
            (*faults)++;
    }
    return 0;
}

void upload_peek(struct upload_stream *u, size_t want, const char **data, size_t *len)
{
    while (!u->eof && u->lb.len - u->lb.start < want)
        read_chunk(u);
    *data = u->lb.buf ? u->lb.buf + u->lb.start : "";
    *len = u->lb.buf ? u->lb.len - u->lb.start : 0;
}

void upload_drain(struct upload_stream *u)
{
    while (!u->eof) {
        long n = req_read(u->r, u->chunk, sizeof u->chunk);
        if (n <= 0) {
            u->eof = 1;
            break;
        }
        u->bytes += (size_t)n;
        crypto_hash_sha256_update(&u->sha, (const unsigned char *)u->chunk, (size_t)n);
        idem_update(u->idem, u->chunk, (size_t)n);
        if (u->bytes > u->limit) {
            u->too_large = 1;
            u->eof = 1;
        }
    }
}

void upload_digest_hex(struct upload_stream *u, char hex[65])
{
    unsigned char sum[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_final(&u->sha, sum);
    sodium_bin2hex(hex, 65, sum, sizeof sum);
}

int upload_reply_transport_fault(struct upload_stream *u)
{
    if (u->too_large)
        resp_problem(u->r, 413, "too-large", "Body too large", "the upload limit is %zu bytes",
                     u->limit);
    else if (u->read_failed)
        resp_body_unreadable(u->r);
    else if (u->oom)
        resp_problem(u->r, 503, "unavailable", "Service unavailable", "out of memory");
    else
        return 0;
    return 1;
}

int upload_tz_init(struct upload_tz *tz, struct store *store, const char *name)
{
    memset(tz, 0, sizeof *tz);
    size_t len = strlen(name);
    if (len == 0 || len >= sizeof tz->name)
        return -1;
    int known = 0;
    if (store_tz_known(store, name, &known) != STORE_OK)
        return -2;
    if (!known)
        return -1;
    memcpy(tz->name, name, len + 1);
    tz->store = store;
    return 0;
}

int upload_tz_local_to_utc(const struct tm *local, void *ctx, int64_t *epoch_s)
{
    struct upload_tz *tz = ctx;
    if (!tz->cached || tz->y != local->tm_year || tz->mo != local->tm_mon ||
        tz->d != local->tm_mday || tz->h != local->tm_hour) {
        int64_t start;
        int exists = 0;
        if (store_tz_local_hour(tz->store, tz->name, local->tm_year + 1900, local->tm_mon + 1,
                                local->tm_mday, local->tm_hour, &start, &exists) != STORE_OK ||
            !exists)
            return -1;
        tz->cached = 1;
        tz->y = local->tm_year;
        tz->mo = local->tm_mon;
        tz->d = local->tm_mday;
        tz->h = local->tm_hour;
        tz->hour_utc_s = start;
    }
    *epoch_s = tz->hour_utc_s + (int64_t)local->tm_min * 60 + local->tm_sec;
    return 0;
}

int upload_params_read(struct req *r, struct upload_params *up, const char *fields_hint,
                       struct problems *p)
{
    memset(up, 0, offsetof(struct upload_params, tz));
    up->atomic_on = res_query_bool(r, "atomic", p);
    if (res_query(r, "fields", RQ_RAW, NULL, up->fields, sizeof up->fields, p)) {
        if (!up->fields[0])
            problems_add(p, "?fields", "query parameter fields lists %s (" PROBLEMS_FIELDS_HINT ")",
                         fields_hint);
        else
            up->fields_p = up->fields;
    }
    if (!res_query(r, "tz", RQ_TEXT, NULL, up->tz_name, sizeof up->tz_name, p))
        return 0;
    int rc = upload_tz_init(&up->tz, r->app->store, up->tz_name);
    if (rc == -2)
        return -1;
    if (rc != 0)
        problems_add(p, "?tz", "query parameter tz must name an IANA time zone (Europe/Oslo)");
    up->has_tz = rc == 0;
    return 0;
}

void upload_params_json(const struct upload_params *up, json_t *params)
{
    if (up->fields_p)
        json_object_set_new(params, "fields", json_string(up->fields));
    if (up->has_tz)
        json_object_set_new(params, "tz", json_string(up->tz_name));
    json_object_set_new(params, "atomic", json_boolean(up->atomic_on));
}

/* The upload driver (upload.h: upload_run). */

/* Just before any reply (http/internal.h: before_reply): the slot is back before the client
 * can read the reply and send its next upload, and a refused upload's unread body is read and
 * dropped, so the reply is read as the answer to a whole request; not when the client still
 * waits for 100 Continue (the reply closes the connection) nor for a 413 (Civetweb drops the
 * rest of a framed body itself). */
static void before_reply(struct req *r, int status, void *ctx)
{
    (void)ctx;
    r->before_reply = NULL;
    upload_slot_leave(r);
    if (status >= 400 && status != 413 && !r->close)
        req_drain(r, NULL, NULL);
}

/* UPLOAD_WHOLE: the body, bounded by kind->whole_max, NUL-terminated in u->body. Returns 0, or
 * -1 after answering 413, 400 (the body ended early) or 503. */
static int read_whole(struct upload *u)
{
    struct req *r = u->r;
    size_t max = u->kind->whole_max;
    const char *what = u->kind->whole_what ? u->kind->whole_what : "JSON";
    long long declared = r->ri->content_length;
    if (declared > (long long)max) {
        resp_problem(r, 413, "too-large", "Body too large",
                     "the body is %lld bytes; the limit for %s is %zu", declared, what, max);
        return -1;
    }
    /* Grown as the body arrives (a declared length is taken at its word only up to the limit). */
    size_t cap = (declared > 0 ? (size_t)declared : 65536) + 1, len = 0;
    char *buf = malloc(cap);
    long n = 0;
    int oom = !buf;
    while (!oom) {
        if (len == cap) {
            if (cap > max)
                break; /* a byte past the limit: too large */
            size_t want = cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *more = realloc(buf, want);
            if (!more) {
                oom = 1;
                break;
            }
            buf = more;
            cap = want;
        }
        if ((n = req_read(r, buf + len, cap - len)) <= 0)
            break;
        idem_update(u->idem, buf + len, (size_t)n);
        len += (size_t)n;
    }
    u->body = buf;
    u->bytes = len;
    if (oom) {
        resp_problem(r, 503, "unavailable", "Service unavailable", "out of memory");
        return -1;
    }
    if (n < 0) {
        resp_body_unreadable(r);
        return -1;
    }
    if (len > max) {
        resp_problem(r, 413, "too-large", "Body too large", "the limit for %s is %zu bytes", what,
                     max);
        return -1;
    }
    buf[len] = '\0';
    unsigned char sum[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(sum, (const unsigned char *)buf, len);
    sodium_bin2hex(u->sha, sizeof u->sha, sum, sizeof sum);
    return 0;
}

int upload_body_end(struct upload *u)
{
    upload_drain(u->stream);
    if (upload_reply_transport_fault(u->stream))
        return -1;
    upload_digest_hex(u->stream, u->sha);
    u->bytes = u->stream->bytes;
    return 0;
}

static const struct upload_type *media_type(struct req *r, const struct upload_kind *kind)
{
    char ct[96];
    req_content_type(r, ct, sizeof ct);
    for (const struct upload_type *t = kind->types; t < kind->types + UPLOAD_TYPES_MAX && t->media;
         t++)
        if (strcmp(t->media, ct) == 0)
            return t;
    resp_problem(r, 415, "unsupported-media-type", "Unsupported media type", "%s, not '%s'",
                 kind->types_hint, ct[0] ? ct : "(none)");
    return NULL;
}

/* Steps 8 and 9 of upload.h: 0 when the upload is to be stored, -1 after refusing it. */
static int verdict(struct upload *u)
{
    const struct upload_kind *k = u->kind;
    const struct upload_guess *none = u->accepted == 0 ? &u->guess : NULL;
    if (u->fatal)
        upload_refuse(u->r, &u->errs, k->says.unreadable, &u->guess);
    else if (u->errs.total && (u->atomic || k->all_or_nothing))
        upload_refuse(u->r, &u->errs, k->says.faulty, none);
    else if (u->accepted == 0 && u->errs.total)
        upload_refuse(u->r, &u->errs, k->says.none_valid ? k->says.none_valid : k->says.faulty,
                      &u->guess);
    else if (u->accepted == 0 && k->body.empty && k->body.empty(u))
        upload_refuse(u->r, &u->errs, NULL, &u->guess);
    else
        return 0;
    return -1;
}

void upload_run(struct req *r, const struct upload_kind *kind)
{
    struct idem idem;
    struct upload up;
    memset(&up, 0, sizeof up);
    up.r = r;
    up.kind = kind;
    up.idem = &idem;
    problems_init(&up.errs);
    json_t *rec = NULL;
    r->before_reply = before_reply;
    r->before_reply_ctx = &up;
    if (idem_begin_stream(r, &idem) == IDEM_ANSWERED)
        goto out;
    if (!(up.type = media_type(r, kind)))
        goto out;
    up.format = up.type->format;
    if (kind->state_size && !(up.state = calloc(1, kind->state_size))) {
        resp_problem(r, 503, "unavailable", "Service unavailable", "out of memory");
        goto out;
    }
    if (kind->params && kind->params(&up) != 0)
        goto out;
    if (up.errs.total) {
        resp_invalid(r, &up.errs, NULL);
        goto out;
    }
    if (up.type->body == UPLOAD_LINES && !(up.stream = upload_stream_new(r, &idem, 0))) {
        resp_problem(r, 503, "unavailable", "Service unavailable", "out of memory");
        goto out;
    }
    if (kind->open && kind->open(&up) != 0)
        goto out;
    if ((kind->slot == UPLOAD_SLOT_ALWAYS ? upload_slot_enter(r) : upload_slot_enter_if_large(r)) !=
        0)
        goto out;
    store_new_uuid(up.id);
    enum store_status st = kind->store.begin ? kind->store.begin(&up) : STORE_OK;
    if (st != STORE_OK) {
        resp_store_error(r, st, kind->kind);
        goto out;
    }
    if (up.type->body == UPLOAD_WHOLE && read_whole(&up) != 0)
        goto out;
    if (kind->body.read(&up) != 0)
        goto out;
    if (up.stream && upload_body_end(&up) != 0)
        goto out;
    if ((kind->body.settle && kind->body.settle(&up) != 0) || verdict(&up) != 0)
        goto out;
    rec = res_upload_record(r, up.id, kind->kind, up.team, up.format, up.bytes, up.sha);
    if (!rec) {
        resp_problem(r, 503, "unavailable", "Service unavailable", "out of memory");
        goto out;
    }
    int status = 201;
    json_t *reply = kind->store.finish(&up, rec, &status);
    if (reply)
        idem_reply(r, &idem, status, reply);
out:
    if (kind->store.abort && (up.state || !kind->state_size))
        kind->store.abort(&up);
    free(up.state);
    free(up.body);
    upload_stream_free(up.stream);
    idem_end(r, &idem);
    json_decref(rec);
    problems_free(&up.errs);
    r->before_reply = NULL;
    upload_slot_leave(r);
}
