/* Job accounting: POST /runs (Slurm `sacct --parsable2` text, a JSON array of runs, or JSON
 * Lines) and GET /runs.
 *
 * An upload is streamed: the body is read in chunks, split into lines, parsed, and each valid
 * run goes to the store (store/runs.h), which writes it straight into `run` a batch at a time
 * after deciding on its key, so a re-upload counts duplicates and stores nothing twice; the
 * transaction commits only when the whole body was read. Memory stays at one chunk, one line
 * and one batch whatever the upload's size. Lines with faults are reported ({line, pointer,
 * message}, the first 1,000 and the total) while valid lines are kept; with ?atomic=true nothing is
 * kept if any line fails. An upload that yields no run and only faults is refused whole (422). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats/formats.h"
#include "core/formats/pgcopy.h"
#include "core/formats/run.h"
#include "core/formats/openb.h"
#include "core/formats/sacct.h"
#include "core/formats/textnum.h"
#include "core/jsonlimit.h"
#include "core/validate.h"
#include "http/resource.h"
#include "http/idempotency.h"
#include "http/runsof.h"
#include "http/upload.h"
#include "http/upload_sniff.h"
#include "store/runs.h"
#include "store/uploads.h"

#define RUNS_JSON_MAX_BYTES ((size_t)32 << 20)

static const char *const STATES[] = {"COMPLETED", "FAILED",    "CANCELLED",     "TIMEOUT",
                                     "PREEMPTED", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL",
                                     "DEADLINE",  NULL};

/* One upload in progress: where rows go and what came of the lines. */
struct runs_ingest {
    struct req *r;
    struct runs_upload *up;
    struct problems *errs; /* the upload's faulty lines (the driver's list) */
    const char *cluster;   /* ?cluster= (JSON runs may name their own) */
    long rejected_lines;
    long skipped;  /* jobs not finished */
    long steps;    /* job steps skipped */
    long lines;    /* input lines (or JSON array items) seen */
    long accepted; /* rows sent to COPY */
    int failed;    /* the store failed: stop */
    enum store_status fail_status;
    long deep_line; /* a JSON line nested past JSON_NEST_MAX: the upload is refused (400) */
    json_error_t deep_err;
    int answered; /* refused for want of the parsed-JSON budget (503, already answered) */
};

/* A parsed run: the caller's right to write its team, then the store. */
static void accept_run(struct runs_ingest *in, struct run *run, long lineno, const char *prefix)
{
    char ptr[64];
    if (!run->cluster[0] && in->cluster)
        snprintf(run->cluster, sizeof run->cluster, "%s", in->cluster);
    if (!run->cluster[0]) {
        problems_add_line(in->errs, lineno, 0, problems_pointer(ptr, sizeof ptr, prefix, "cluster"),
                          "a run needs its cluster (give ?cluster= for the whole upload)");
        in->rejected_lines++;
        return;
    }
    if (!principal_can_write_team(&in->r->who, run->team[0] ? run->team : NULL)) {
        problems_add_line(in->errs, lineno, 0, problems_pointer(ptr, sizeof ptr, prefix, "team"),
                          "team '%s' is not one of yours", run->team);
        in->rejected_lines++;
        return;
    }
    enum store_status st = store_runs_add(in->up, run);
    if (st == STORE_INVALID) {
        problems_add_line(in->errs, lineno, 0,
                          problems_pointer(ptr, sizeof ptr, prefix, "workload_class"),
                          "the upload's runs already carry %d distinct workload classes: split "
                          "the upload",
                          RUNS_LABELS_MAX);
        in->rejected_lines++;
        return;
    }
    if (st != STORE_OK) {
        in->failed = 1;
        in->fail_status = st;
        return;
    }
    in->accepted++;
}

/* The next line of the body that reads as text, until the body ends or the store failed (then
 * 0). A line fault counts as a line seen and rejected; a good line is not counted here (each
 * format counts what it reads as a line). */
static int next_line(struct runs_ingest *in, struct upload_stream *u, struct linebuf_line *line)
{
    if (in->failed)
        return 0;
    long faults = 0;
    int more = upload_next_text_line(u, line, in->errs, &faults);
    in->lines += faults;
    in->rejected_lines += faults;
    return more;
}

/* What a line reader made of one line, in the words both text formats share. */
enum line_outcome { LINE_RUN, LINE_REJECTED, LINE_FATAL, LINE_NOTHING };
typedef enum line_outcome (*line_feed)(void *reader, const struct linebuf_line *line,
                                       struct run *run, struct problems *errs);

/* A line format's upload: every line through feed; returns 0, or -1 when the reader found the
 * whole file unreadable (its header: 422 to send). */
static int ingest_lines(struct runs_ingest *in, struct upload_stream *u, line_feed feed,
                        void *reader)
{
    struct linebuf_line line;
    struct run run;
    while (next_line(in, u, &line)) {
        in->lines++;
        switch (feed(reader, &line, &run, in->errs)) {
        case LINE_RUN:
            accept_run(in, &run, line.lineno, "");
            break;
        case LINE_REJECTED:
            in->rejected_lines++;
            break;
        case LINE_FATAL:
            return -1;
        case LINE_NOTHING:
            break;
        }
    }
    return 0;
}

/* sacct text (a step or an unfinished job is nothing to store). */
static enum line_outcome sacct_line(void *reader, const struct linebuf_line *line, struct run *run,
                                    struct problems *errs)
{
    switch (sacct_feed_line(reader, line->text, line->len, line->lineno, run, errs)) {
    case SACCT_RUN:
        return LINE_RUN;
    case SACCT_REJECTED:
        return LINE_REJECTED;
    case SACCT_FATAL:
        return LINE_FATAL;
    case SACCT_STEP:
    case SACCT_UNFINISHED:
    case SACCT_NOTHING:
        break;
    }
    return LINE_NOTHING;
}

static int ingest_sacct(struct runs_ingest *in, struct upload_stream *u,
                        const struct sacct_options *opt)
{
    struct sacct_reader rd;
    if (sacct_reader_init(&rd, opt, in->errs) != 0 || ingest_lines(in, u, sacct_line, &rd) != 0)
        return -1;
    in->skipped = rd.counts.unfinished;
    in->steps = rd.counts.steps;
    return 0;
}

/* The Alibaba GPU trace's pod list (openb_pod_list_*.csv): times relative to ?trace_start=. */
static enum line_outcome openb_line(void *reader, const struct linebuf_line *line, struct run *run,
                                    struct problems *errs)
{
    switch (openb_feed_line(reader, line->text, line->len, line->lineno, run, errs)) {
    case OPENB_RUN:
        return LINE_RUN;
    case OPENB_REJECTED:
        return LINE_REJECTED;
    case OPENB_FATAL:
        return LINE_FATAL;
    case OPENB_NOTHING:
        break;
    }
    return LINE_NOTHING;
}

static int ingest_openb(struct runs_ingest *in, struct upload_stream *u,
                        const struct openb_options *opt)
{
    struct openb_reader rd;
    openb_reader_init(&rd, opt);
    return ingest_lines(in, u, openb_line, &rd);
}

/* JSON Lines: one run object per line. */
static void ingest_ndjson(struct runs_ingest *in, struct upload_stream *u)
{
    struct linebuf_line line;
    struct run run;
    while (next_line(in, u, &line)) {
        size_t len = line.len;
        const char *text = line.text;
        textnum_trim(&text, &len);
        if (len == 0)
            continue;
        in->lines++;
        json_error_t err;
        /* Within the parse budget like any JSON body: a 1 MiB line of [{},{},…] parsed with
         * 78 MiB, four such uploads at once +306 MiB. A line over JSON_PARSE_MAX is a faulty
         * line naming both figures. */
        json_t *obj = req_json_load(in->r, text, len, JSON_REJECT_DUPLICATES, &err);
        if (!obj && in->r->status) {
            in->answered = 1;
            return;
        }
        if (!obj && json_error_code(&err) == json_error_stack_overflow) {
            in->deep_line = line.lineno;
            in->deep_err = err;
            return;
        }
        size_t before = in->errs->total;
        if (!obj)
            problems_add_line(in->errs, line.lineno, err.column, "", "not a JSON object: %s",
                              err.text);
        else if (run_from_json(obj, "", &run, in->errs) == 0)
            accept_run(in, &run, line.lineno, "");
        /* run_from_json's problems carry no line: name it */
        problems_default_line(in->errs, before, line.lineno);
        if (in->errs->total > before)
            in->rejected_lines++;
        json_decref(obj);
    }
}

static size_t skip_space(const char *buf, size_t off, size_t len)
{
    while (off < len &&
           (buf[off] == ' ' || buf[off] == '\t' || buf[off] == '\r' || buf[off] == '\n'))
        off++;
    return off;
}

/* 400 for a fault at buf[at] (err's line and column count from there), placed in the body. */
static void json_fault_at(struct req *r, const char *buf, size_t at, json_error_t *err)
{
    long line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < at; i++)
        if (buf[i] == '\n') {
            line++;
            line_start = i + 1;
        }
    if (err->line <= 1)
        err->column += (int)(at - line_start);
    resp_json_error(r, err, line + (err->line > 1 ? err->line - 1 : 0));
}

/* A JSON array of runs: the body is kept (bounded: the driver reads it whole) and its runs are
 * parsed one at a time, so memory is the body and one run, not the whole tree (a 32 MiB array
 * of {} parsed whole took 2.5 GiB). Returns 0, or -1 after answering. */
static int ingest_json_array(struct runs_ingest *in, const char *buf, size_t len)
{
    struct req *r = in->r;
    size_t off = skip_space(buf, 0, len);
    if (off == len || buf[off] != '[') { /* not an array: its faults as a whole document */
        json_t *doc = req_parse_json(r, buf, len);
        if (!doc)
            return -1;
        json_decref(doc);
        problems_add(in->errs, "", "the body must be a JSON array of runs");
        in->rejected_lines++;
        return 0;
    }
    off = skip_space(buf, off + 1, len);
    int rc = 0;
    struct run run;
    char prefix[32];
    for (size_t i = 0; off < len && buf[off] != ']'; i++) {
        json_error_t err;
        json_t *item =
            req_json_load(r, buf + off, len - off,
                          JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
        if (!item) {
            if (!r->status)
                json_fault_at(r, buf, off, &err);
            rc = -1;
            break;
        }
        off = skip_space(buf, off + (size_t)err.position, len);
        if (!in->failed) {
            in->lines++;
            snprintf(prefix, sizeof prefix, "/%zu", i);
            size_t before = in->errs->total;
            if (json_numbers_check(item, prefix, in->errs) == 0 &&
                run_from_json(item, prefix, &run, in->errs) == 0)
                accept_run(in, &run, 0, prefix);
            else if (in->errs->total > before)
                in->rejected_lines++;
        }
        json_decref(item);
        if (off < len && buf[off] == ',')
            off = skip_space(buf, off + 1, len);
        else if (off >= len || buf[off] != ']')
            break;
    }
    if (rc == 0 && (off >= len || buf[off] != ']' ||
                    skip_space(buf, off + 1, len) != len)) { /* cut short, or text after it */
        json_error_t err = {.line = 1, .column = 1};
        snprintf(err.text, sizeof err.text,
                 off >= len ? "the array of runs ends early" : "',' or ']' expected");
        json_fault_at(r, buf, off < len && buf[off] == ']' ? off + 1 : off, &err);
        rc = -1;
    }
    return rc;
}

/* The upload's own query parameters, checked (plus upload_params: fields, tz, atomic). */
struct runs_params {
    char cluster[128], team[128], klass[CLASS_LABEL_MAX + 1], format[8], trace_start[40];
    const char *cluster_p, *team_p, *class_p, *format_p, *trace_start_p;
    int64_t trace_start_s;
    int steps_on;
    enum runs_format fmt; /* ?format= (RUNS_UNKNOWN: not given) */
    struct upload_params up;
};

/* Returns 0, or -1 when the database could not be asked about ?tz= (503). */
static int read_params(struct req *r, struct runs_params *q, struct problems *p)
{
    q->cluster_p = res_query(r, "cluster", RQ_TEXT, NULL, q->cluster, sizeof q->cluster, p);
    q->team_p = res_query(r, "team", RQ_TEXT, NULL, q->team, sizeof q->team, p);
    q->steps_on = res_query_bool(r, "steps", p);
    if (q->team_p && !team_name_valid(q->team))
        problems_add(p, "?team", "query parameter team is not a team name");
    q->class_p = res_query(r, "class", RQ_TEXT, NULL, q->klass, sizeof q->klass, p);
    const char *label_fault = q->class_p ? class_label_fault(q->klass, strlen(q->klass)) : NULL;
    if (label_fault)
        problems_add(p, "?class", "query parameter class (a workload class label) %s", label_fault);
    q->format_p =
        res_query(r, "format", RQ_ENUM, RUNS_FORMAT_NAMES, q->format, sizeof q->format, p);
    q->fmt =
        q->format_p ? (enum runs_format)format_find(RUNS_FORMAT_NAMES, q->format) : RUNS_UNKNOWN;
    q->trace_start_p =
        res_query(r, "trace_start", RQ_TIME, NULL, q->trace_start, sizeof q->trace_start, p);
    struct timefmt_fields tf;
    int64_t ms = 0;
    if (q->trace_start_p && timefmt_parse(q->trace_start, strlen(q->trace_start), &tf) &&
        timefmt_resolve_ms(&tf, NULL, NULL, &ms) == 0)
        q->trace_start_s = ms / 1000;
    int openb = q->fmt == RUNS_OPENB;
    if (openb && !q->trace_start_p && !p->total)
        problems_add(p, "?trace_start",
                     "query parameter trace_start (RFC 3339: the time the trace's second 0 "
                     "stands for) is required with format=openb");
    if (!openb && q->trace_start_p)
        problems_add(p, "?trace_start", "query parameter trace_start goes with format=openb");
    return upload_params_read(r, &q->up, "sacct's -o fields", p);
}

static json_t *params_json(const struct runs_params *q)
{
    json_t *o = json_object();
    if (q->cluster_p)
        json_object_set_new(o, "cluster", json_string(q->cluster));
    if (q->team_p)
        json_object_set_new(o, "team", json_string(q->team));
    json_object_set_new(o, "steps", json_boolean(q->steps_on));
    if (q->class_p)
        json_object_set_new(o, "class", json_string(q->klass));
    if (q->trace_start_p)
        json_object_set_new(o, "trace_start", json_string(q->trace_start));
    upload_params_json(&q->up, o);
    return o;
}

/* One runs upload: its parameters and what its lines gave. */
struct runs_state {
    struct runs_params q;
    struct runs_ingest in;
};

static int runs_params(struct upload *u)
{
    struct runs_state *s = u->state;
    struct runs_params *q = &s->q;
    struct req *r = u->r;
    s->in.r = r;
    s->in.errs = &u->errs;
    if (read_params(r, q, &u->errs) != 0) {
        resp_store_error(r, STORE_UNAVAILABLE, "time zone");
        return -1;
    }
    int is_text = strcmp(u->type->format, "sacct") == 0;
    if (is_text && !q->cluster_p)
        problems_add(&u->errs, "?cluster", "query parameter cluster is required for sacct output");
    if (!is_text && q->format_p)
        problems_add(&u->errs, "?format",
                     "query parameter format names a text format: send text/csv");
    if (u->errs.total)
        return 0;
    if (q->team_p && !principal_can_write_team(&r->who, q->team)) {
        res_forbidden_team(r, q->team);
        return -1;
    }
    s->in.cluster = q->cluster_p;
    u->team = q->team_p;
    u->atomic = q->up.atomic_on;
    if (is_text && q->format_p)
        u->format = q->format;
    return 0;
}

static enum store_status runs_begin(struct upload *u)
{
    struct runs_state *s = u->state;
    return store_runs_begin(u->r->app->store, u->id, s->q.class_p, &s->in.up);
}

static int runs_read(struct upload *u)
{
    struct runs_state *s = u->state;
    struct runs_params *q = &s->q;
    if (u->type->body == UPLOAD_WHOLE)
        return ingest_json_array(&s->in, u->body, u->bytes);
    if (strcmp(u->type->format, "ndjson") == 0) {
        ingest_ndjson(&s->in, u->stream);
        return s->in.answered ? -1 : 0;
    }
    if (q->fmt == RUNS_OPENB) {
        struct openb_options opt = {.trace_start_s = q->trace_start_s, .team = q->team_p};
        u->fatal = ingest_openb(&s->in, u->stream, &opt) != 0;
        return 0;
    }
    struct sacct_options opt = {
        .fields = q->up.fields_p,
        .team = q->team_p,
        .include_steps = q->steps_on,
        .local_to_utc = q->up.has_tz ? upload_tz_local_to_utc : NULL,
        .tz_ctx = q->up.has_tz ? &q->up.tz : NULL,
    };
    /* What a refused file looks like (telemetry sent here). */
    const char *head;
    size_t head_len;
    upload_peek(u->stream, SNIFF_DETECT_BYTES, &head, &head_len);
    upload_guess(&u->guess, head, head_len, SNIFF_RUNS, NULL);
    u->fatal = ingest_sacct(&s->in, u->stream, &opt) != 0;
    return 0;
}

static int runs_settle(struct upload *u)
{
    struct runs_state *s = u->state;
    struct req *r = u->r;
    if (s->in.deep_line) { /* an attack rather than a faulty line: nothing is kept */
        resp_json_error(r, &s->in.deep_err, s->in.deep_line);
        return -1;
    }
    if (s->in.failed) {
        if (store_runs_contended(s->in.up))
            resp_problem(r, 503, "unavailable", "Service unavailable",
                         "another upload is writing a cluster this upload names (or the two "
                         "waited for each other): nothing of this one was stored; retry shortly");
        else
            resp_store_error(r, s->in.fail_status, "runs");
        return -1;
    }
    u->accepted = s->in.accepted;
    return 0;
}

/* Nothing read at all (not even a job step or an unfinished job passed over): refused. */
static int runs_empty(struct upload *u)
{
    struct runs_state *s = u->state;
    if (s->in.skipped || s->in.steps)
        return 0;
    problems_add_line(&u->errs, s->in.lines > 0 ? s->in.lines : 1, 0, "",
                      "the upload holds no runs");
    return 1;
}

static json_t *runs_finish(struct upload *u, json_t *rec, int *status)
{
    struct runs_state *s = u->state;
    struct runs_ingest *in = &s->in;
    struct req *r = u->r;
    json_object_set_new(rec, "params", params_json(&s->q));
    json_object_set_new(rec, "lines", json_integer(in->lines));
    json_object_set_new(rec, "skipped", json_integer(in->skipped));
    json_object_set_new(rec, "rejected_total", json_integer((json_int_t)u->errs.total));
    long staged = 0, inserted = 0, duplicates = 0;
    json_t *classes = NULL;
    struct audit_actor who;
    struct runs_upload *up = in->up;
    in->up = NULL;
    enum store_status st =
        store_runs_finish(up, req_actor(r, &who), rec, &staged, &inserted, &duplicates, &classes);
    if (st != STORE_OK) {
        resp_store_error(r, st, "runs");
        return NULL;
    }
    *status = 201;
    return json_pack("{s:s, s:I, s:I, s:o, s:o, s:I, s:I, s:o, s:I, s:I, s:I}", "id", u->id,
                     "inserted", (json_int_t)inserted, "duplicates", (json_int_t)duplicates,
                     "classes", classes, "warnings", json_incref(json_object_get(rec, "warnings")),
                     "skipped", (json_int_t)in->skipped, "steps_skipped", (json_int_t)in->steps,
                     "rejected", res_rejected_json(&u->errs), "rejected_total",
                     (json_int_t)u->errs.total, "rejected_lines", (json_int_t)in->rejected_lines,
                     "lines", (json_int_t)in->lines);
}

static void runs_abort(struct upload *u)
{
    struct runs_state *s = u->state;
    store_runs_abort(s->in.up);
}

/* Runs: a text body is sacct unless ?format= names another. */
static const struct upload_kind RUNS_UPLOAD = {
    .kind = "runs",
    .types = {{"text/csv", UPLOAD_LINES, "sacct"},
              {"text/plain", UPLOAD_LINES, "sacct"},
              {"application/x-ndjson", UPLOAD_LINES, "ndjson"},
              {"application/jsonl", UPLOAD_LINES, "ndjson"},
              {"application/json", UPLOAD_WHOLE, "json"}},
    .types_hint = "send sacct --parsable2 output as text/csv, runs as application/json (an "
                  "array) or application/x-ndjson",
    .whole_max = RUNS_JSON_MAX_BYTES,
    .state_size = sizeof(struct runs_state),
    .params = runs_params,
    .body = {.read = runs_read, .settle = runs_settle, .empty = runs_empty},
    .store = {.begin = runs_begin, .finish = runs_finish, .abort = runs_abort},
    .says = {.unreadable = "The columns of this output cannot be read: see errors.",
             .faulty = "atomic=true and some lines have faults: nothing was stored.",
             .none_valid = "No line of the upload holds a valid run: nothing was stored."},
};

static void runs_upload(struct req *r)
{
    upload_run(r, &RUNS_UPLOAD);
}

static void runs_list(struct req *r)
{
    struct problems p;
    problems_init(&p);
    struct runs_query q = {0};
    char team[128], klass[128], state[32], cluster[128], upload[40], from[40], to[40], workload[40];
    json_t *of = NULL;
    struct page pg;
    json_t *items = NULL;
    if (page_begin(r, &pg, PAGE_SERIAL, &p) != 0)
        goto out;
    q.limit = pg.fetch;
    q.team = res_query(r, "team", RQ_TEXT, NULL, team, sizeof team, &p);
    q.workload_class = res_query(r, "class", RQ_TEXT, NULL, klass, sizeof klass, &p);
    q.state = res_query(r, "state", RQ_ENUM, STATES, state, sizeof state, &p);
    q.cluster = res_query(r, "cluster", RQ_TEXT, NULL, cluster, sizeof cluster, &p);
    q.upload_id = res_query(r, "upload", RQ_UUID, NULL, upload, sizeof upload, &p);
    q.from = res_query(r, "from", RQ_TIME, NULL, from, sizeof from, &p);
    q.to = res_query(r, "to", RQ_TIME, NULL, to, sizeof to, &p);
    int unavailable = 0;
    if (res_query(r, "workload", RQ_UUID, NULL, workload, sizeof workload, &p)) {
        of = runsof_workload(r, workload, "?workload", &p, &unavailable);
        q.workload_id = of ? workload : NULL;
    }
    if (unavailable) {
        resp_store_error(r, STORE_UNAVAILABLE, "workload");
        goto out;
    }
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    q.after_id = pg.after;
    q.scope = &r->scope;
    enum store_status st = store_runs_list(r->app->store, &q, &items);
    page_reply_fetched(r, &pg, st, items, "id", "runs");
    items = NULL;
out:
    json_decref(of);
    json_decref(items);
    problems_free(&p);
}

const struct route run_routes[] = {
    {"GET", "/api/v1/runs", runs_list, ROLES_USERS, ROUTE_STANDBY,
     "limit cursor team class state cluster upload from to workload", NULL},
    {"POST", "/api/v1/runs", runs_upload, ROLE_OWNER | ROLE_TEAM, ROUTE_STREAM_BODY,
     "cluster team class format trace_start steps fields tz atomic", NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
