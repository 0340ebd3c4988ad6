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
#include "http/evidence.h"
#include "http/idempotency.h"
#include "http/upload.h"
#include "http/upload_sniff.h"
#include "store/benchmarks.h"
#include "store/offers.h"
#include "store/telemetry.h"
#include "store/uploads.h"

#define TELEMETRY_COPY_BATCH_BYTES ((size_t)256 << 10)
#define TELEMETRY_DETECT_BYTES 4096

static const char *const FORMATS[] = {"nvidia-smi", "dmon", "dcgm", NULL};

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
    char format[16], idle[32], force[8], at[TIMEFMT_UTC_LEN];
    const char *format_p, *at_p;
    int force_on;
    int64_t at_ms;
    double idle_below;
    struct upload_params up;
};

/* Returns 0, or -1 when the database could not be asked about ?tz= (503). */
static int read_params(struct req *r, struct tele_params *q, struct problems *p)
{
    q->format_p = ev_query(r, "format", EVQ_ENUM, FORMATS, q->format, sizeof q->format, p);
    q->force_on = ev_query(r, "force", EVQ_BOOL, NULL, q->force, sizeof q->force, p) &&
                  strcmp(q->force, "true") == 0;
    q->at_p = ev_query(r, "at", EVQ_TIME, NULL, q->at, sizeof q->at, p);
    struct timefmt_fields at;
    if (q->at_p && (!timefmt_parse(q->at_p, strlen(q->at_p), &at) ||
                    timefmt_resolve_ms(&at, NULL, NULL, &q->at_ms) != 0))
        q->at_p = NULL; /* cannot happen: ev_query normalised it */
    if (q->at_p && q->format_p && strcmp(q->format_p, "dcgm") != 0)
        problems_add(p, "?at",
                     "query parameter at (the scrape time) applies to format=dcgm only: "
                     "nvidia-smi and dmon print their own timestamps");
    q->idle_below = TELEMETRY_DEFAULT_IDLE_BELOW;
    if (ev_query(r, "idle_below", EVQ_TEXT, NULL, q->idle, sizeof q->idle, p) &&
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

static void telemetry_upload(struct req *r)
{
    struct idem idem;
    struct problems p, errs;
    problems_init(&p);
    problems_init(&errs);
    struct tele_params q;
    struct tele_ingest in;
    memset(&in, 0, sizeof in);
    pgcopy_init(&in.copy);
    int summary_ready = 0, reader_ready = 0;
    struct telemetry_reader rd;
    struct upload_stream *u = NULL;
    json_t *bench = NULL, *rec = NULL, *derived = NULL, *summary = NULL, *warnings = NULL;
    char ct[96];
    if (idem_begin_stream(r, &idem) == IDEM_ANSWERED)
        goto out;
    bench = ev_readable_benchmark(r, r->params[0]);
    if (!bench) {
        goto out;
    }
    const char *team = json_string_value(json_object_get(bench, "team"));
    if (!principal_can_write_team(&r->who, team)) {
        ev_forbidden_team(r, team);
        goto out;
    }
    req_content_type(r, ct, sizeof ct);
    if (strcmp(ct, "text/csv") != 0 && strcmp(ct, "text/plain") != 0) {
        resp_problem(r, 415, "unsupported-media-type", "Unsupported media type",
                     "send telemetry as text/csv or text/plain (the tool's own output), not '%s'",
                     ct[0] ? ct : "(none)");
        goto out;
    }
    if (read_params(r, &q, &p) != 0) {
        resp_store_error(r, STORE_UNAVAILABLE, "time zone");
        goto out;
    }
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    u = upload_stream_new(r, &idem, 0);
    if (!u || telemetry_summary_init(&in.summary, q.idle_below) != 0) {
        resp_problem(r, 503, "unavailable", "Service unavailable", "out of memory");
        goto out;
    }
    summary_ready = 1;
    plausible_telemetry_init(&in.plaus);
    enum telemetry_format format = TELEMETRY_UNKNOWN;
    /* What the file looks like, for a refusal of the whole file (a sacct file sent here). */
    struct upload_guess guess;
    {
        const char *head;
        size_t head_len;
        upload_peek(u, SNIFF_DETECT_BYTES, &head, &head_len);
        upload_guess(&guess, head, head_len, SNIFF_TELEMETRY, NULL);
        format = q.format_p ? telemetry_format_from_name(q.format_p)
                            : telemetry_detect_format(head, head_len);
    }
    if (format != TELEMETRY_UNKNOWN && format != TELEMETRY_DCGM && q.at_p) {
        upload_drain(u);
        if (upload_reply_transport_fault(u))
            goto out;
        problems_add(&p, "?at",
                     "query parameter at (the scrape time) applies to dcgm-exporter text only, "
                     "and this upload reads as %s",
                     telemetry_format_name(format));
        resp_invalid(r, &p, NULL);
        goto out;
    }
    if (format == TELEMETRY_UNKNOWN) {
        upload_drain(u);
        if (upload_reply_transport_fault(u))
            goto out;
        problems_add_line(&p, 1, 0, "",
                          "not nvidia-smi --format=csv, nvidia-smi dmon or dcgm-exporter "
                          "output (name the format with ?format= if it is)");
        upload_refuse(r, &p, NULL, &guess);
        goto out;
    }
    struct telemetry_options opt = {
        .fields = q.up.fields_p,
        .local_to_utc = q.up.has_tz ? upload_tz_local_to_utc : NULL,
        .tz_ctx = q.up.has_tz ? &q.up.tz : NULL,
        .has_at = q.at_p != NULL,
        .at_ms = q.at_ms,
    };
    if (telemetry_reader_init(&rd, format, &opt, on_sample, &in, &errs) != 0) {
        upload_drain(u);
        upload_refuse(r, &errs, NULL, &guess);
        goto out;
    }
    reader_ready = 1;
    char *id = in.upload_id;
    store_new_uuid(in.upload_id);
    snprintf(in.benchmark_id, sizeof in.benchmark_id, "%s", r->params[0]);
    if (upload_slot_enter(r) != 0) {
        upload_drain(u);
        goto out;
    }
    enum store_status st = store_telemetry_begin(r->app->store, &in.up);
    if (st != STORE_OK) {
        upload_drain(u);
        resp_store_error(r, st, "telemetry");
        goto out;
    }
    struct linebuf_line line;
    int fatal = 0;
    while (!in.failed && !fatal && upload_next_text_line(u, &line, &errs, NULL))
        fatal = telemetry_feed_line(&rd, line.text, line.len, line.lineno, &errs) != 0;
    if (!fatal && !in.failed)
        fatal = telemetry_finish(&rd, &errs) != 0;
    upload_drain(u);
    if (upload_reply_transport_fault(u))
        goto out;
    problems_place_whole_input(&errs, 1); /* where the reader gave up */
    if (!in.failed)
        (void)flush_copy(&in);
    if (in.failed) {
        resp_problem(r, 503, "unavailable", "Service unavailable",
                     "the upload could not be stored (database or memory); retry");
        goto out;
    }
    if (fatal || (in.samples == 0 && errs.total) || (q.up.atomic_on && errs.total)) {
        upload_refuse(r, &errs,
                      fatal ? "The telemetry cannot be read: see errors."
                            : "Lines of the telemetry have faults; nothing was stored.",
                      fatal || in.samples == 0 ? &guess : NULL);
        goto out;
    }
    if (in.samples == 0) {
        problems_add_line(&errs, u->lb.lineno > 0 ? u->lb.lineno : 1, 0, "",
                          "the upload holds no telemetry sample");
        upload_refuse(r, &errs, NULL, &guess);
        goto out;
    }
    warnings = telemetry_warnings(r, bench, &in.plaus, q.force_on);
    if (!warnings)
        goto out; /* answered */
    if (plausible_refuses(warnings) && !q.force_on) {
        struct problems refused;
        problems_init(&refused);
        size_t wi;
        json_t *w;
        json_array_foreach(warnings, wi, w) if (json_is_true(json_object_get(w, "refuses")))
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
        goto out;
    }
    summary = telemetry_summary_json(&in.summary);
    char sha[65];
    upload_digest_hex(u, sha);
    rec = ev_upload_record(r, id, "telemetry", team, telemetry_format_name(format), u->bytes, sha);
    if (!summary || !rec) {
        resp_problem(r, 503, "unavailable", "Service unavailable", "out of memory");
        goto out;
    }
    json_object_set_new(rec, "benchmark_id", json_string(r->params[0]));
    json_object_set_new(rec, "lines", json_integer(u->lb.lineno));
    json_object_set_new(rec, "rejected_total", json_integer((json_int_t)errs.total));
    json_object_set_new(rec, "summary", json_incref(summary));
    json_object_set_new(rec, "warnings", json_incref(warnings));
    json_t *params = json_pack("{s:f, s:b}", "idle_below", q.idle_below, "force", q.force_on);
    if (q.at_p)
        json_object_set_new(params, "at", json_string(q.at_p));
    upload_params_json(&q.up, params);
    json_object_set_new(rec, "params", params);
    struct audit_actor who;
    struct upload_tx *up = in.up;
    in.up = NULL;
    st = store_telemetry_finish(up, req_actor(r, &who), rec, r->params[0], &derived);
    if (st != STORE_OK) {
        resp_store_error(r, st, "telemetry");
        goto out;
    }
    json_t *rejected = ev_rejected_json(&errs);
    idem_reply(r, &idem, 201,
               json_pack("{s:s, s:s, s:s, s:I, s:O, s:O, s:O, s:O, s:O, s:o, s:I}", "id", id,
                         "benchmark_id", r->params[0], "format", telemetry_format_name(format),
                         "samples", (json_int_t)in.samples, "inserted",
                         json_object_get(rec, "inserted"), "duplicates",
                         json_object_get(rec, "duplicates"), "warnings", warnings, "summary",
                         summary, "derived", derived, "rejected", rejected, "rejected_total",
                         (json_int_t)errs.total));
out:
    store_upload_tx_abort(in.up);
    if (reader_ready)
        telemetry_reader_free(&rd);
    if (summary_ready)
        telemetry_summary_free(&in.summary);
    upload_stream_free(u);
    idem_end(r, &idem);
    json_decref(bench);
    json_decref(rec);
    json_decref(derived);
    json_decref(summary);
    json_decref(warnings);
    pgcopy_free(&in.copy);
    problems_free(&p);
    problems_free(&errs);
}

static void telemetry_list(struct req *r)
{
    json_t *bench = ev_readable_benchmark(r, r->params[0]);
    if (!bench)
        return;
    struct evlist_query q = {.benchmark_id = r->params[0]};
    ev_list(r, &q, "telemetry", NULL, store_telemetry_list);
    json_decref(bench);
}

const struct route telemetry_routes[] = {
    {"GET", "/api/v1/benchmarks/{id}/telemetry", telemetry_list, ROLES_USERS, ROUTE_STANDBY,
     "limit cursor from to"},
    {"POST", "/api/v1/benchmarks/{id}/telemetry", telemetry_upload, ROLE_OWNER | ROLE_TEAM,
     ROUTE_STREAM_BODY, "format idle_below fields tz atomic force at"},
    {NULL, NULL, NULL, 0, 0, NULL},
};
