/* Streaming text uploads; see upload.h. */
#include "http/upload.h"

#include <stdlib.h>
#include <string.h>

#include "http/evidence.h"
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
    static const char *const true_false[] = {"true", "false", NULL};
    memset(up, 0, offsetof(struct upload_params, tz));
    up->atomic_on = ev_query(r, "atomic", EVQ_ENUM, true_false, up->atomic, sizeof up->atomic, p) &&
                    strcmp(up->atomic, "true") == 0;
    if (req_query_checked(r, "fields", up->fields, sizeof up->fields, p)) {
        if (!up->fields[0])
            problems_add(p, "?fields", "query parameter fields lists %s (" PROBLEMS_FIELDS_HINT ")",
                         fields_hint);
        else
            up->fields_p = up->fields;
    }
    if (!ev_query(r, "tz", EVQ_TEXT, NULL, up->tz_name, sizeof up->tz_name, p))
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
