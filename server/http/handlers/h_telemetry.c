/* GPU telemetry of a benchmark: POST /benchmarks/{id}/telemetry streams nvidia-smi
 * `--query-gpu … --format=csv`, `nvidia-smi dmon` or dcgm-exporter text (detected from the
 * first bytes, or named by ?format=) into the telemetry table with COPY, and answers
 * {id, samples, inserted, duplicates, summary, derived}: a sample already stored for the
 * benchmark (same GPU and timestamp) is counted, not stored again. The summary is computed on the
 * fly (constant memory); the benchmark's duty cycle and memory peak, when the benchmark did not
 * give them, are derived from all its samples into a separate table (benchmarks themselves are
 * immutable). GET /benchmarks/{id}/telemetry lists the uploads with their summaries.
 *
 * ?at=TIME (dcgm only) is the scrape time of lines without a Prometheus timestamp, which the
 * DCGM exporter never prints: `capledger import telemetry --from-url` sends each scrape with it,
 * so every sample has a time and a retried scrape is counted as duplicates, not stored twice. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats/pgcopy.h"
#include "core/formats/plausible.h"
#include "core/formats/telemetry.h"
#include "core/formats/textnum.h"
#include "core/validate.h"
#include "http/resource.h"
#include "http/idempotency.h"
#include "http/upload.h"
#include "http/upload_sniff.h"
#include "store/benchmarks.h"
#include "store/offers.h"
#include "store/telemetry.h"
#include "store/uploads.h"

#define TELEMETRY_COPY_BATCH_BYTES ((size_t)256 << 10)
#define TELEMETRY_DETECT_BYTES 4096

struct tele_ingest {
    struct upload_tx *up;
    struct pgcopy_buf copy;
    struct telemetry_summary summary;
    struct plausible_telemetry plaus;
    char upload_id[37], benchmark_id[37]; /* the first two columns of every COPY row */
    long samples;
    int failed; /* the store or memory failed: stop */
};

static int flush_copy(struct tele_ingest *in)
{
    if (!pgcopy_ok(&in->copy) ||
        (in->copy.len && store_upload_tx_send(in->up, in->copy.data, in->copy.len) != STORE_OK)) {
        in->failed = 1;
        return -1;
    }
    pgcopy_reset(&in->copy);
    return 0;
}

/* The reader's callback: one sample → the summary and a COPY row. Non-zero stops reading. */
static int on_sample(const struct telemetry_sample *s, void *ctx)
{
    struct tele_ingest *in = ctx;
    if (telemetry_summary_add(&in->summary, s) != 0) {
        in->failed = 1;
        return -1;
    }
    plausible_telemetry_add(&in->plaus, s);
    pgcopy_text(&in->copy, in->upload_id);
    pgcopy_tab(&in->copy);
    pgcopy_text(&in->copy, in->benchmark_id);
    pgcopy_tab(&in->copy);
    telemetry_copy_line(s, &in->copy);
    in->samples++;
    if (in->copy.len >= TELEMETRY_COPY_BATCH_BYTES)
        return flush_copy(in);
    return 0;
}

struct tele_params {
    char format[16], idle[32], at[TIMEFMT_UTC_LEN];
    const char *format_p, *at_p;
    int force_on;
    int64_t at_ms;
    double idle_below;
    struct upload_params up;
};

/* Returns 0, or -1 when the database could not be asked about ?tz= (503). */
static int read_params(struct req *r, struct tele_params *q, struct problems *p)
{
    q->format_p =
        res_query(r, "format", RQ_ENUM, TELEMETRY_FORMAT_NAMES, q->format, sizeof q->format, p);
    q->force_on = res_query_bool(r, "force", p);
    q->at_p = res_query(r, "at", RQ_TIME, NULL, q->at, sizeof q->at, p);
    struct timefmt_fields at;
    if (q->at_p && (!timefmt_parse(q->at_p, strlen(q->at_p), &at) ||
                    timefmt_resolve_ms(&at, NULL, NULL, &q->at_ms) != 0))
        q->at_p = NULL; /* cannot happen: res_query normalised it */
    if (q->at_p && q->format_p && telemetry_format_from_name(q->format_p) != TELEMETRY_DCGM)
        problems_add(p, "?at",
                     "query parameter at (the scrape time) applies to format=dcgm only: "
                     "nvidia-smi and dmon print their own timestamps");
    q->idle_below = TELEMETRY_DEFAULT_IDLE_BELOW;
    if (res_query(r, "idle_below", RQ_TEXT, NULL, q->idle, sizeof q->idle, p) &&
        (!textnum_parse_double(q->idle, strlen(q->idle), &q->idle_below) ||
         !(q->idle_below > 0 && q->idle_below <= 1)))
        problems_add(p, "?idle_below", "query parameter idle_below is a duty cycle in (0, 1]");
    return upload_params_read(r, &q->up, "the --query-gpu fields", p);
}

/* The plausibility warnings of the upload against the benchmark's offer (new reference); with
 * force, the refusing ones are marked overridden. NULL after answering 503. */
static json_t *telemetry_warnings(struct req *r, const json_t *bench,
                                  const struct plausible_telemetry *plaus, int force)
{
    json_t *offer = NULL;
    const char *offer_id = json_string_value(json_object_get(bench, "offer_id"));
    enum store_status st =
        offer_id ? store_offer_get(r->app->store, offer_id, &offer) : STORE_NOT_FOUND;
    if (st != STORE_OK && st != STORE_NOT_FOUND) {
        resp_store_error(r, st, "offer");
        return NULL;
    }
    json_t *mem = json_object_get(offer, "gpu_memory_gb");
    json_t *list =
        plausible_telemetry_warnings(plaus, json_string_value(json_object_get(offer, "gpu_model")),
                                     json_is_number(mem) ? json_number_value(mem) : NAN);
    json_decref(offer);
    if (!list) {
        resp_problem(r, 503, "unavailable", "Service unavailable", "out of memory");
        return NULL;
    }
    size_t i;
    json_t *w;
    json_array_foreach(list, i, w) if (force && json_is_true(json_object_get(w, "refuses")))
        json_object_set_new(w, "overridden", json_true());
    return list;
}

/* One telemetry upload: its parameters, the benchmark, the reader and what it read. */
struct tele_upload {
    struct tele_params q;
    struct tele_ingest in;
    struct telemetry_reader rd;
    int summary_ready, reader_ready;
    enum telemetry_format format;
    json_t *bench, *derived, *summary, *warnings;
};

static int tele_params(struct upload *u)
{
    struct tele_upload *t = u->state;
    struct req *r = u->r;
    pgcopy_init(&t->in.copy);
    t->bench = res_readable_benchmark(r, r->params[0]);
    if (!t->bench)
        return -1;
    u->team = json_string_value(json_object_get(t->bench, "team"));
    if (!principal_can_write_team(&r->who, u->team)) {
        res_forbidden_team(r, u->team);
        return -1;
    }
    if (read_params(r, &t->q, &u->errs) != 0) {
        resp_store_error(r, STORE_UNAVAILABLE, "time zone");
        return -1;
    }
    u->atomic = t->q.up.atomic_on;
    return 0;
}

/* The format, from ?format= or the first bytes, and the reader for it. */
static int tele_open(struct upload *u)
{
    struct tele_upload *t = u->state;
    struct req *r = u->r;
    if (telemetry_summary_init(&t->in.summary, t->q.idle_below) != 0) {
        resp_problem(r, 503, "unavailable", "Service unavailable", "out of memory");
        return -1;
    }
    t->summary_ready = 1;
    plausible_telemetry_init(&t->in.plaus);
    /* What the file looks like, for a refusal of the whole file (a sacct file sent here). */
    const char *head;
    size_t head_len;
    upload_peek(u->stream, SNIFF_DETECT_BYTES, &head, &head_len);
    upload_guess(&u->guess, head, head_len, SNIFF_TELEMETRY, NULL);
    t->format = t->q.format_p ? telemetry_format_from_name(t->q.format_p)
                              : telemetry_detect_format(head, head_len);
    if (t->format != TELEMETRY_UNKNOWN && t->format != TELEMETRY_DCGM && t->q.at_p) {
        if (upload_body_end(u) != 0)
            return -1;
        problems_add(&u->errs, "?at",
                     "query parameter at (the scrape time) applies to dcgm-exporter text only, "
                     "and this upload reads as %s",
                     telemetry_format_name(t->format));
        resp_invalid(r, &u->errs, NULL);
        return -1;
    }
    if (t->format == TELEMETRY_UNKNOWN) {
        if (upload_body_end(u) != 0)
            return -1;
        problems_add_line(&u->errs, 1, 0, "",
                          "not nvidia-smi --format=csv, nvidia-smi dmon or dcgm-exporter "
                          "output (name the format with ?format= if it is)");
        upload_refuse(r, &u->errs, NULL, &u->guess);
        return -1;
    }
    u->format = telemetry_format_name(t->format);
    struct telemetry_options opt = {
        .fields = t->q.up.fields_p,
        .local_to_utc = t->q.up.has_tz ? upload_tz_local_to_utc : NULL,
        .tz_ctx = t->q.up.has_tz ? &t->q.up.tz : NULL,
        .has_at = t->q.at_p != NULL,
        .at_ms = t->q.at_ms,
    };
    if (telemetry_reader_init(&t->rd, t->format, &opt, on_sample, &t->in, &u->errs) != 0) {
        upload_drain(u->stream);
        upload_refuse(r, &u->errs, NULL, &u->guess);
        return -1;
    }
    t->reader_ready = 1;
    return 0;
}

static enum store_status tele_begin(struct upload *u)
{
    struct tele_upload *t = u->state;
    snprintf(t->in.upload_id, sizeof t->in.upload_id, "%s", u->id);
    snprintf(t->in.benchmark_id, sizeof t->in.benchmark_id, "%s", u->r->params[0]);
    return store_telemetry_begin(u->r->app->store, &t->in.up);
}

static int tele_read(struct upload *u)
{
    struct tele_upload *t = u->state;
    struct linebuf_line line;
    while (!t->in.failed && !u->fatal && upload_next_text_line(u->stream, &line, &u->errs, NULL))
        u->fatal = telemetry_feed_line(&t->rd, line.text, line.len, line.lineno, &u->errs) != 0;
    if (!u->fatal && !t->in.failed)
        u->fatal = telemetry_finish(&t->rd, &u->errs) != 0;
    return 0;
}

static int tele_settle(struct upload *u)
{
    struct tele_upload *t = u->state;
    problems_place_whole_input(&u->errs, 1); /* where the reader gave up */
    if (!t->in.failed)
        (void)flush_copy(&t->in);
    if (t->in.failed) {
        resp_problem(u->r, 503, "unavailable", "Service unavailable",
                     "the upload could not be stored (database or memory); retry");
        return -1;
    }
    u->accepted = t->in.samples;
    return 0;
}

static int tele_empty(struct upload *u)
{
    long lineno = u->stream->lb.lineno;
    problems_add_line(&u->errs, lineno > 0 ? lineno : 1, 0, "",
                      "the upload holds no telemetry sample");
    return 1;
}

static json_t *tele_finish(struct upload *u, json_t *rec, int *status)
{
    struct tele_upload *t = u->state;
    struct req *r = u->r;
    t->warnings = telemetry_warnings(r, t->bench, &t->in.plaus, t->q.force_on);
    if (!t->warnings)
        return NULL; /* answered */
    if (plausible_refuses(t->warnings) && !t->q.force_on) {
        struct problems refused;
        problems_init(&refused);
        size_t wi;
        json_t *w;
        json_array_foreach(t->warnings, wi, w) if (json_is_true(json_object_get(w, "refuses")))
            problems_add(&refused, "", "%s: %s", json_string_value(json_object_get(w, "code")),
                         json_string_value(json_object_get(w, "message")));
        /* "overridable": the query parameter that stores it all the same (a form names its
         * own check box instead). */
        resp_problem_with(r, 422, "invalid", "Invalid input",
                          json_pack("{s:o, s:I, s:s}", "errors", problems_errors_json(&refused),
                                    "error_count", (json_int_t)refused.total, "overridable",
                                    "force"),
                          "The telemetry does not fit the benchmark's offer: see errors. Nothing "
                          "was stored. If it is right all the same, send it again with "
                          "?force=true (the override is recorded with the upload).");
        problems_free(&refused);
        return NULL;
    }
    t->summary = telemetry_summary_json(&t->in.summary);
    if (!t->summary) {
        resp_problem(r, 503, "unavailable", "Service unavailable", "out of memory");
        return NULL;
    }
    json_object_set_new(rec, "benchmark_id", json_string(r->params[0]));
    json_object_set_new(rec, "lines", json_integer(u->stream->lb.lineno));
    json_object_set_new(rec, "rejected_total", json_integer((json_int_t)u->errs.total));
    json_object_set_new(rec, "summary", json_incref(t->summary));
    json_object_set_new(rec, "warnings", json_incref(t->warnings));
    json_t *params = json_pack("{s:f, s:b}", "idle_below", t->q.idle_below, "force", t->q.force_on);
    if (t->q.at_p)
        json_object_set_new(params, "at", json_string(t->q.at_p));
    upload_params_json(&t->q.up, params);
    json_object_set_new(rec, "params", params);
    struct audit_actor who;
    struct upload_tx *up = t->in.up;
    t->in.up = NULL;
    enum store_status st =
        store_telemetry_finish(up, req_actor(r, &who), rec, r->params[0], &t->derived);
    if (st != STORE_OK) {
        resp_store_error(r, st, "telemetry");
        return NULL;
    }
    *status = 201;
    return json_pack("{s:s, s:s, s:s, s:I, s:O, s:O, s:O, s:O, s:O, s:o, s:I}", "id", u->id,
                     "benchmark_id", r->params[0], "format", u->format, "samples",
                     (json_int_t)t->in.samples, "inserted", json_object_get(rec, "inserted"),
                     "duplicates", json_object_get(rec, "duplicates"), "warnings", t->warnings,
                     "summary", t->summary, "derived", t->derived, "rejected",
                     res_rejected_json(&u->errs), "rejected_total", (json_int_t)u->errs.total);
}

static void tele_abort(struct upload *u)
{
    struct tele_upload *t = u->state;
    store_upload_tx_abort(t->in.up);
    if (t->reader_ready)
        telemetry_reader_free(&t->rd);
    if (t->summary_ready)
        telemetry_summary_free(&t->in.summary);
    json_decref(t->bench);
    json_decref(t->derived);
    json_decref(t->summary);
    json_decref(t->warnings);
    pgcopy_free(&t->in.copy);
}

static const struct upload_kind TELEMETRY_UPLOAD = {
    .kind = "telemetry",
    .types = {{"text/csv", UPLOAD_LINES, NULL}, {"text/plain", UPLOAD_LINES, NULL}},
    .types_hint = "send telemetry as text/csv or text/plain (the tool's own output)",
    .state_size = sizeof(struct tele_upload),
    .params = tele_params,
    .open = tele_open,
    .body = {.read = tele_read, .settle = tele_settle, .empty = tele_empty},
    .store = {.begin = tele_begin, .finish = tele_finish, .abort = tele_abort},
    .says = {.unreadable = "The telemetry cannot be read: see errors.",
             .faulty = "Lines of the telemetry have faults; nothing was stored."},
};

static void telemetry_upload(struct req *r)
{
    upload_run(r, &TELEMETRY_UPLOAD);
}

static void telemetry_list(struct req *r)
{
    json_t *bench = res_readable_benchmark(r, r->params[0]);
    if (!bench)
        return;
    struct evlist_query q = {.benchmark_id = r->params[0]};
    static const struct res_list_kind TELEMETRY = {"telemetry", store_telemetry_list, {{0}}};
    res_list(r, &q, &TELEMETRY);
    json_decref(bench);
}

const struct route telemetry_routes[] = {
    {"GET", "/api/v1/benchmarks/{id}/telemetry", telemetry_list, ROLES_USERS, ROUTE_STANDBY,
     "limit cursor from to", NULL},
    {"POST", "/api/v1/benchmarks/{id}/telemetry", telemetry_upload, ROLE_OWNER | ROLE_TEAM,
     ROUTE_STREAM_BODY, "format idle_below fields tz atomic force at", NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
