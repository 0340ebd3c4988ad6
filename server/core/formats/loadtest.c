#include "core/formats/loadtest.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/formats/linebuf.h"
#include "core/formats/textnum.h"
#include "core/jsonlimit.h"

#define LT_KEY_MAX 64

/* The document being built; points and results are parallel until the final sort. */
struct lt_doc {
    const char *tool;
    json_t *points;   /* load points: numbers only */
    json_t *results;  /* per point: origin and tool metadata */
    json_t *rejected; /* points that must never be capacity (MLPerf INVALID) */
    json_t *warnings;
    bool valid;
    bool saturated;
    json_t *model; /* the one model of every result; JSON null when they differ or none */
    bool model_mixed;
};

enum loadtest_format loadtest_format_from_name(const char *name)
{
    return (enum loadtest_format)format_find(LOADTEST_FORMAT_NAMES, name);
}

static bool lt_doc_init(struct lt_doc *d, const char *tool)
{
    memset(d, 0, sizeof *d);
    d->tool = tool;
    d->valid = true;
    d->points = json_array();
    d->results = json_array();
    d->rejected = json_array();
    d->warnings = json_array();
    return d->points && d->results && d->rejected && d->warnings;
}

static void lt_doc_free(struct lt_doc *d)
{
    json_decref(d->points);
    json_decref(d->results);
    json_decref(d->rejected);
    json_decref(d->warnings);
    json_decref(d->model);
}

/* A warning {code, message}: the code for programs and tests, the message for people. */
static void lt_warn(struct lt_doc *d, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void lt_warn(struct lt_doc *d, const char *code, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_array_append_new(d->warnings, json_pack("{s:s, s:s}", "code", code, "message", buf));
}

static void lt_note_model(struct lt_doc *d, const char *model)
{
    if (!model || d->model_mixed)
        return;
    if (!d->model) {
        d->model = json_string(model);
    } else if (strcmp(json_string_value(d->model), model) != 0) {
        d->model_mixed = true;
        json_decref(d->model);
        d->model = NULL;
    }
}

/* "p50", "p99", "p99_9" for a percentile (dots are awkward in field names). */
static void lt_percentile_stat(char *buf, size_t size, double pct)
{
    if (pct == floor(pct)) {
        snprintf(buf, size, "p%d", (int)pct);
        return;
    }
    snprintf(buf, size, "p%g", pct);
    for (char *c = buf; *c; c++)
        if (*c == '.')
            *c = '_';
}

/* A statistic's name as a tool spells it → ours: avg/mean → mean, median → p50, min, max,
 * std, pNN / pNN.N → pNN / pNN_N. false when it is not a statistic. */
static bool lt_stat_name(const char *s, size_t len, char *out, size_t size)
{
    if (textnum_equals_word(s, len, "avg") || textnum_equals_word(s, len, "mean")) {
        snprintf(out, size, "mean");
    } else if (textnum_equals_word(s, len, "median")) {
        snprintf(out, size, "p50");
    } else if (textnum_equals_word(s, len, "min") || textnum_equals_word(s, len, "max") ||
               textnum_equals_word(s, len, "std")) {
        snprintf(out, size, "%.*s", (int)len, s);
        for (char *c = out; *c; c++)
            *c = (char)tolower((unsigned char)*c);
    } else {
        double pct;
        if (len < 2 || (s[0] != 'p' && s[0] != 'P') ||
            !textnum_parse_double(s + 1, len - 1, &pct) || pct <= 0 || pct >= 100)
            return false;
        lt_percentile_stat(out, size, pct);
    }
    return true;
}

static void lt_set_number(json_t *obj, const char *key, double v)
{
    json_object_set_new(obj, key, json_real(v));
}

/* Appends a point and its result record (both stolen). */
static void lt_add(struct lt_doc *d, json_t *point, json_t *result)
{
    json_array_append_new(d->points, point);
    json_array_append_new(d->results, result);
}

struct lt_order {
    double offered;
    size_t index;
};

static int lt_order_cmp(const void *a, const void *b)
{
    const struct lt_order *x = a, *y = b;
    if (x->offered != y->offered)
        return x->offered < y->offered ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Sorts the points by offered_rps (results follow), warns about equal offered rates, and
 * assembles the output document. */
static json_t *lt_finish(struct lt_doc *d)
{
    size_t n = json_array_size(d->points);
    struct lt_order *order = calloc(n ? n : 1, sizeof *order);
    json_t *points = json_array(), *results = json_array();
    json_t *out = NULL;
    if (!order || !points || !results)
        goto done;
    for (size_t i = 0; i < n; i++)
        order[i] = (struct lt_order){
            json_number_value(json_object_get(json_array_get(d->points, i), "offered_rps")), i};
    qsort(order, n, sizeof *order, lt_order_cmp);
    for (size_t i = 0; i < n; i++) {
        json_array_append(points, json_array_get(d->points, order[i].index));
        json_array_append(results, json_array_get(d->results, order[i].index));
    }
    for (size_t i = 0, run; i < n; i += run) {
        for (run = 1; i + run < n && order[i + run].offered == order[i].offered; run++)
            ;
        if (run > 1)
            lt_warn(d, "repeated_offered_rps",
                    "offered_rps %g appears %zu times: the results are of different "
                    "configurations (choose one with where_key/where_value) or repeats",
                    order[i].offered, run);
    }
    out =
        json_pack("{ss sb sb sO sO sO sO sO}", "tool", d->tool, "valid", d->valid, "saturated",
                  d->saturated, "model", d->model ? d->model : json_null(), "load_points", points,
                  "results", results, "rejected_load_points", d->rejected, "warnings", d->warnings);
done:
    free(order);
    json_decref(points);
    json_decref(results);
    return out;
}

/* ---- vLLM ---------------------------------------------------------------------------------- */

/* A number field of a result: NAN when absent or null; a problem when it is something else. */
static double lt_json_number(const json_t *obj, const char *key, const char *prefix, long line,
                             struct problems *errs, bool *ok)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return NAN;
    if (!json_is_number(v)) {
        char ptr[256];
        problems_add_line(errs, line, 0, problems_pointer(ptr, sizeof ptr, prefix, key),
                          "%s must be a number", key);
        *ok = false;
        return NAN;
    }
    if (!(fabs(json_number_value(v)) <= JSON_NUMBER_MAX_ABS)) {
        char ptr[256];
        problems_add_line(errs, line, 0, problems_pointer(ptr, sizeof ptr, prefix, key),
                          "%s must be between -%.0f and %.0f", key, JSON_NUMBER_MAX_ABS,
                          JSON_NUMBER_MAX_ABS);
        *ok = false;
        return NAN;
    }
    return json_number_value(v);
}

static const char *const vllm_metrics[][2] = {
    {"ttft", "ttft"}, {"tpot", "tpot"}, {"itl", "itl"}, {"e2el", "e2e"}};

/* Copies "<stat>_<metric>_ms" latencies into the point. */
static void vllm_latencies(const json_t *obj, json_t *point)
{
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)obj, key, value)
    {
        size_t len = strlen(key);
        const char *us = strchr(key, '_');
        if (!json_is_number(value) || len < 4 || strcmp(key + len - 3, "_ms") != 0 || !us)
            continue;
        for (size_t m = 0; m < sizeof vllm_metrics / sizeof *vllm_metrics; m++) {
            size_t mlen = strlen(vllm_metrics[m][0]);
            char stat[16], name[LT_KEY_MAX];
            if ((size_t)(key + len - 3 - (us + 1)) != mlen ||
                memcmp(us + 1, vllm_metrics[m][0], mlen) != 0 ||
                !lt_stat_name(key, (size_t)(us - key), stat, sizeof stat))
                continue;
            snprintf(name, sizeof name, "%s_%s_ms", vllm_metrics[m][1], stat);
            lt_set_number(point, name, json_number_value(value));
        }
    }
}

static bool vllm_result(struct lt_doc *d, const json_t *obj, const char *prefix, size_t index,
                        long line, struct problems *errs)
{
    char ptr[256];
    if (!json_is_object(obj)) {
        problems_add_line(errs, line, 0, prefix, "a vLLM result must be a JSON object");
        return false;
    }
    bool ok = true;
    double achieved = lt_json_number(obj, "request_throughput", prefix, line, errs, &ok);
    double completed = lt_json_number(obj, "completed", prefix, line, errs, &ok);
    double failed = lt_json_number(obj, "failed", prefix, line, errs, &ok);
    double prompts = lt_json_number(obj, "num_prompts", prefix, line, errs, &ok);
    double duration = lt_json_number(obj, "duration", prefix, line, errs, &ok);
    if (!ok)
        return false;
    if (!(achieved > 0)) {
        problems_add_line(errs, line, 0,
                          problems_pointer(ptr, sizeof ptr, prefix, "request_throughput"),
                          "request_throughput must be a positive number (requests/s)");
        return false;
    }
    const json_t *rate = json_object_get(obj, "request_rate");
    double offered = achieved;
    const char *source = "not_recorded";
    bool saturated = false;
    if (json_is_number(rate) && json_number_value(rate) > 0) {
        offered = json_number_value(rate);
        source = "requested";
    } else if (json_is_string(rate) && (strcasecmp(json_string_value(rate), "inf") == 0 ||
                                        strcasecmp(json_string_value(rate), "infinity") == 0)) {
        saturated = true;
        source = "saturated";
    } else if (rate && !json_is_null(rate)) {
        problems_add_line(errs, line, 0, problems_pointer(ptr, sizeof ptr, prefix, "request_rate"),
                          "request_rate must be a positive number or \"inf\"");
        return false;
    }
    json_t *point = json_object(), *result = json_object();
    if (!point || !result) {
        json_decref(point);
        json_decref(result);
        return false;
    }
    lt_set_number(point, "offered_rps", offered);
    lt_set_number(point, "achieved_rps", achieved);
    if (!isnan(completed) && !isnan(failed) && completed + failed > 0)
        lt_set_number(point, "error_rate", failed / (completed + failed));
    else if (!isnan(completed) && prompts > 0 && prompts >= completed)
        lt_set_number(point, "error_rate", (prompts - completed) / prompts);
    vllm_latencies(obj, point);
    d->saturated |= saturated;

    json_object_set_new(result, "source_index", json_integer((json_int_t)index));
    if (line > 0)
        json_object_set_new(result, "line", json_integer(line));
    json_object_set_new(result, "offered_rps_source", json_string(source));
    json_object_set_new(result, "saturated", json_boolean(saturated));
    if (rate)
        json_object_set(result, "request_rate", (json_t *)rate);
    static const char *const copied[] = {"date",
                                         "backend",
                                         "label",
                                         "model_id",
                                         "tokenizer_id",
                                         "num_prompts",
                                         "completed",
                                         "failed",
                                         "max_concurrency",
                                         "burstiness",
                                         "total_input_tokens",
                                         "total_output_tokens",
                                         "output_throughput",
                                         "total_token_throughput",
                                         "max_output_tokens_per_s",
                                         "max_concurrent_requests"};
    for (size_t i = 0; i < sizeof copied / sizeof *copied; i++) {
        json_t *v = json_object_get(obj, copied[i]);
        if (v)
            json_object_set(result, copied[i], v);
    }
    if (!isnan(duration))
        lt_set_number(result, "duration_s", duration);
    /* the older key carries a colon: "request_goodput:" */
    const json_t *goodput = json_object_get(obj, "request_goodput");
    if (!goodput)
        goodput = json_object_get(obj, "request_goodput:");
    if (json_is_number(goodput))
        lt_set_number(result, "goodput_rps", json_number_value(goodput));
    const json_t *model = json_object_get(obj, "model_id");
    if (!json_is_string(model))
        model = json_object_get(obj, "model");
    lt_note_model(d, json_is_string(model) ? json_string_value(model) : NULL);
    lt_add(d, point, result);
    return true;
}

static bool vllm_keep(const json_t *obj, const struct loadtest_options *opt)
{
    if (!opt || !opt->where_key)
        return true;
    const json_t *v = json_object_get(obj, opt->where_key);
    return json_is_string(v) && opt->where_value &&
           strcmp(json_string_value(v), opt->where_value) == 0;
}

static json_t *vllm_parse(const char *buf, size_t len, const struct loadtest_options *opt,
                          struct problems *errs)
{
    struct lt_doc d;
    if (!lt_doc_init(&d, "vllm")) {
        lt_doc_free(&d);
        return NULL;
    }
    size_t before = errs->total, off = 0, index = 0, kept = 0, values = 0;
    long line = 1;
    bool array_seen = false;
    while (errs->total == before) {
        while (off < len &&
               (buf[off] == ' ' || buf[off] == '\t' || buf[off] == '\r' || buf[off] == '\n'))
            line += buf[off++] == '\n';
        if (off == len)
            break;
        json_error_t e;
        json_t *v =
            json_load_budget(buf + off, len - off, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES,
                             JSON_PARSE_MAX, &e);
        if (!v) {
            problems_add_line(errs, line + e.line - 1, e.line == 1 ? 0 : e.column, "",
                              "not JSON: %s", e.text);
            break;
        }
        long value_line = line;
        for (size_t i = 0; i < (size_t)e.position && off + i < len; i++)
            line += buf[off + i] == '\n';
        off += (size_t)e.position;
        values++;
        if (json_is_array(v)) {
            array_seen = true;
            size_t i;
            json_t *item;
            json_array_foreach(v, i, item)
            {
                char prefix[32];
                problems_pointer_index(prefix, sizeof prefix, "", i);
                if (vllm_keep(item, opt)) {
                    kept++;
                    (void)vllm_result(&d, item, prefix, i, 0, errs);
                }
            }
        } else {
            char prefix[32];
            problems_pointer_index(prefix, sizeof prefix, "", index);
            if (vllm_keep(v, opt)) {
                kept++;
                (void)vllm_result(&d, v, prefix, index, value_line, errs);
            }
            index++;
        }
        json_decref(v);
        if (json_array_size(d.points) > LOADTEST_MAX_POINTS) {
            problems_add(errs, "", "more than %d results", LOADTEST_MAX_POINTS);
            break;
        }
    }
    if (errs->total == before && array_seen && values > 1)
        problems_add(errs, "", "a JSON array of results must be the whole document");
    if (errs->total == before && kept == 0 && opt && opt->where_key)
        problems_add(errs, "", "no result has %s = %s", opt->where_key,
                     opt->where_value ? opt->where_value : "(null)");
    else if (errs->total == before && kept == 0)
        problems_add(errs, "", "no result");
    json_t *out = errs->total == before ? lt_finish(&d) : NULL;
    lt_doc_free(&d);
    return out;
}

/* ---- GenAI-Perf ---------------------------------------------------------------------------- */

/* Rows of the statistics block (label without its unit → our metric; latency or a per-request
 * figure kept in the result). */
static const struct genai_row {
    const char *label;
    const char *json_key;
    const char *metric;
    bool latency;
} genai_rows[] = {
    {"Time To First Token", "time_to_first_token", "ttft", true},
    {"Time To Second Token", "time_to_second_token", "ttst", true},
    {"Request Latency", "request_latency", "e2e", true},
    {"Inter Token Latency", "inter_token_latency", "tpot", true},
    {"Output Sequence Length", "output_sequence_length", "output_tokens_per_request", false},
    {"Input Sequence Length", "input_sequence_length", "input_tokens_per_request", false},
};

/* ms per unit of a latency. */
static double genai_ms_per(const char *unit, size_t len)
{
    if (textnum_equals_word(unit, len, "ms"))
        return 1;
    if (textnum_equals_word(unit, len, "s") || textnum_equals_word(unit, len, "sec"))
        return 1000;
    if (textnum_equals_word(unit, len, "us"))
        return 1e-3;
    if (textnum_equals_word(unit, len, "ns"))
        return 1e-6;
    return NAN;
}

/* The figure's statistics for one metric: latencies into the point, others' mean in result. */
static void genai_add_stat(json_t *point, json_t *result, const struct genai_row *row,
                           const char *stat, double v, double ms_per)
{
    char name[LT_KEY_MAX];
    if (row->latency) {
        snprintf(name, sizeof name, "%s_%s_ms", row->metric, stat);
        lt_set_number(point, name, v * ms_per);
    } else if (strcmp(stat, "mean") == 0) {
        snprintf(name, sizeof name, "%s_mean", row->metric);
        lt_set_number(result, name, v);
    }
}

/* Common end of both GenAI-Perf forms. */
static json_t *genai_finish(struct lt_doc *d, json_t *point, json_t *result, double achieved,
                            double offered, const char *source, bool streaming_known,
                            bool streaming, double osl_requested, struct problems *errs)
{
    if (!(achieved > 0)) {
        problems_add(errs, "", "no positive request throughput (Request Throughput)");
        json_decref(point);
        json_decref(result);
        return NULL;
    }
    json_object_set_new(point, "offered_rps", json_real(isnan(offered) ? achieved : offered));
    json_object_set_new(point, "achieved_rps", json_real(achieved));
    /* keep offered/achieved first for readers of the JSON: move latencies after them */
    json_t *ordered = json_pack("{sO sO}", "offered_rps", json_object_get(point, "offered_rps"),
                                "achieved_rps", json_object_get(point, "achieved_rps"));
    json_object_update_missing(ordered, point);
    json_decref(point);
    if (streaming_known && !streaming) {
        char key[LT_KEY_MAX];
        const char *k;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(ordered, tmp, k, v)
        {
            snprintf(key, sizeof key, "%s", k);
            if (strncmp(key, "ttft_", 5) == 0)
                json_object_del(ordered, key);
        }
        lt_warn(d, "not_streaming",
                "not streaming: time to first token is the whole response and is not kept");
    }
    double osl = json_number_value(json_object_get(result, "output_tokens_per_request_mean"));
    if (osl_requested > 0 && osl > 2 * osl_requested)
        lt_warn(d, "output_length",
                "output sequence length averages %g tokens, %.1fx the %g requested (the GenAI-Perf "
                "24.11-24.12 streaming bug): token throughputs are suspect",
                osl, osl / osl_requested, osl_requested);
    else if (osl_requested > 0 && osl < 0.5 * osl_requested)
        lt_warn(d, "output_length",
                "output sequence length averages %g tokens, %.2fx the %g requested (responses "
                "stopped early): per-request figures do not describe the requested workload",
                osl, osl / osl_requested, osl_requested);
    lt_warn(d, "no_error_count", "GenAI-Perf exports no error count: error_rate is not known");
    json_object_set_new(result, "source_index", json_integer(0));
    json_object_set_new(result, "offered_rps_source", json_string(source));
    json_object_set_new(result, "saturated", json_false());
    lt_add(d, ordered, result);
    return lt_finish(d);
}

/* The document, the point and its result record of a GenAI-Perf export (one load point). */
static bool genai_begin(struct lt_doc *d, json_t **point, json_t **result)
{
    *point = json_object();
    *result = json_object();
    if (lt_doc_init(d, "genai-perf") && *point && *result)
        return true;
    lt_doc_free(d);
    json_decref(*point);
    json_decref(*result);
    return false;
}

struct csv_cell {
    char text[64];
};

/* One CSV record (RFC 4180 quoting) starting at *pos; cells beyond max are dropped. Returns the
 * cell count, -1 for an unterminated quote. *line counts the newlines consumed. */
static int genai_csv_record(const char *s, size_t len, size_t *pos, struct csv_cell *cells, int max,
                            long *line)
{
    int n = 0;
    size_t k = 0;
    bool quoted = false, any = false;
    while (*pos < len) {
        char c = s[(*pos)++];
        if (quoted) {
            if (c == '"' && *pos < len && s[*pos] == '"') {
                (*pos)++;
            } else if (c == '"') {
                quoted = false;
                continue;
            } else if (c == '\n') {
                (*line)++;
            }
        } else if (c == '"') {
            quoted = true;
            any = true;
            continue;
        } else if (c == ',' || c == '\n' || c == '\r') {
            if (c == '\r' && *pos < len && s[*pos] == '\n')
                (*pos)++;
            if (n < max)
                cells[n].text[k] = '\0';
            n++;
            k = 0;
            if (c != ',') {
                (*line)++;
                return any || n > 1 ? n : 0;
            }
            continue;
        } else if (c != ' ' || k > 0) {
            any = true;
        }
        if (n < max && k + 1 < sizeof cells[0].text)
            cells[n].text[k++] = c;
    }
    if (quoted)
        return -1;
    if (n < max)
        cells[n].text[k] = '\0';
    n++;
    return any || n > 1 ? n : 0;
}

/* "1,146.31" → 1146.31: thousands separators are only allowed between digits. */
static bool genai_number(const char *s, double *out)
{
    char digits[64];
    size_t n = 0, len = strlen(s);
    for (size_t i = 0; i < len && n + 1 < sizeof digits; i++) {
        if (s[i] == ',' && i > 0 && i + 1 < len && isdigit((unsigned char)s[i - 1]) &&
            isdigit((unsigned char)s[i + 1]))
            continue;
        digits[n++] = s[i];
    }
    const char *t = digits;
    size_t tlen = n;
    textnum_trim(&t, &tlen);
    return textnum_parse_double(t, tlen, out);
}

/* Splits "Time To First Token (ms)" into label and unit. */
static void genai_label(const char *cell, size_t *label_len, const char **unit, size_t *unit_len)
{
    size_t len = strlen(cell);
    const char *open = strrchr(cell, '(');
    *unit = NULL;
    *unit_len = 0;
    *label_len = len;
    if (open && len > 0 && cell[len - 1] == ')') {
        *unit = open + 1;
        *unit_len = (size_t)(cell + len - 1 - *unit);
        *label_len = (size_t)(open - cell);
        while (*label_len > 0 && cell[*label_len - 1] == ' ')
            (*label_len)--;
    }
}

static json_t *genai_csv_parse(const char *buf, size_t len, struct problems *errs)
{
    struct lt_doc d;
    json_t *point, *result;
    if (!genai_begin(&d, &point, &result))
        return NULL;
    enum { MAXC = 32 };
    struct csv_cell cells[MAXC];
    char stats[MAXC][16];
    int nstats = 0;
    double achieved = NAN;
    size_t before = errs->total, pos = 0;
    long line = 1;
    while (pos < len && errs->total == before) {
        long at = line;
        int n = genai_csv_record(buf, len, &pos, cells, MAXC, &line);
        if (n < 0) {
            problems_add_line(errs, at, 0, "", "unterminated quoted field");
            break;
        }
        if (n == 0) {
            nstats = 0; /* a blank line ends a block */
            continue;
        }
        if (n > MAXC) {
            problems_add_line(errs, at, MAXC + 1, "", "more than %d columns", MAXC);
            break;
        }
        if (strcmp(cells[0].text, "Metric") == 0) {
            nstats = n;
            for (int i = 1; i < n; i++) {
                if (strcmp(cells[i].text, "Value") == 0)
                    snprintf(stats[i], sizeof stats[i], "value");
                else if (!lt_stat_name(cells[i].text, strlen(cells[i].text), stats[i],
                                       sizeof stats[i]))
                    problems_add_line(errs, at, i + 1, "", "unknown statistic '%s'", cells[i].text);
            }
            continue;
        }
        if (nstats == 0) {
            problems_add_line(errs, at, 1, "", "a row before its block's Metric header");
            break;
        }
        if (n != nstats) {
            problems_add_line(errs, at, n < nstats ? n : nstats + 1, "",
                              "%d fields where the block's header has %d", n, nstats);
            break;
        }
        size_t label_len, unit_len;
        const char *unit;
        genai_label(cells[0].text, &label_len, &unit, &unit_len);
        double values[MAXC];
        for (int i = 1; i < n; i++) {
            if (!genai_number(cells[i].text, &values[i]))
                problems_add_line(errs, at, i + 1, "", "'%s' is not a number", cells[i].text);
            else if (!(fabs(values[i]) <= JSON_NUMBER_MAX_ABS))
                problems_add_line(errs, at, i + 1, "", "'%s' is beyond ±%.0f", cells[i].text,
                                  JSON_NUMBER_MAX_ABS);
        }
        if (errs->total != before)
            break;
        const struct genai_row *row = NULL;
        for (size_t r = 0; r < sizeof genai_rows / sizeof *genai_rows && !row; r++)
            if (strlen(genai_rows[r].label) == label_len &&
                strncasecmp(cells[0].text, genai_rows[r].label, label_len) == 0)
                row = &genai_rows[r];
        if (row) {
            double ms_per = row->latency ? genai_ms_per(unit, unit_len) : 1;
            if (isnan(ms_per)) {
                problems_add_line(errs, at, 1, "", "unknown time unit in '%s'", cells[0].text);
                break;
            }
            for (int i = 1; i < n; i++)
                genai_add_stat(point, result, row, stats[i], values[i], ms_per);
        } else if (strcmp(stats[1], "value") == 0) {
            if (strncasecmp(cells[0].text, "Request Throughput", label_len) == 0 && label_len == 18)
                achieved = values[1];
            else if (strncasecmp(cells[0].text, "Request Count", label_len) == 0 && label_len == 13)
                lt_set_number(result, "completed", values[1]);
            else if (strncasecmp(cells[0].text, "Output Token Throughput", label_len) == 0 &&
                     label_len == 23)
                lt_set_number(result, "output_throughput", values[1]);
        }
    }
    json_t *out = NULL;
    if (errs->total == before)
        out = genai_finish(&d, point, result, achieved, NAN, "not_recorded", false, true, 0, errs);
    else {
        json_decref(point);
        json_decref(result);
    }
    lt_doc_free(&d);
    return out;
}

static json_t *genai_json_parse(const char *buf, size_t len, struct problems *errs)
{
    json_error_t e;
    json_t *doc = json_load_budget(buf, len, JSON_REJECT_DUPLICATES, JSON_PARSE_MAX, &e);
    if (!json_is_object(doc)) {
        problems_add_line(errs, doc ? 1 : e.line, doc ? 0 : e.column, "",
                          doc ? "a GenAI-Perf export must be a JSON object" : "not JSON: %s",
                          e.text);
        json_decref(doc);
        return NULL;
    }
    struct lt_doc d;
    json_t *point, *result;
    if (!genai_begin(&d, &point, &result)) {
        json_decref(doc);
        return NULL;
    }
    size_t before = errs->total;
    char ptr[256];
    for (size_t r = 0; r < sizeof genai_rows / sizeof *genai_rows; r++) {
        const struct genai_row *row = &genai_rows[r];
        json_t *m = json_object_get(doc, row->json_key);
        if (!m)
            continue;
        json_t *unit = json_object_get(m, "unit");
        double ms_per = 1;
        if (row->latency) {
            ms_per = json_is_string(unit)
                         ? genai_ms_per(json_string_value(unit), json_string_length(unit))
                         : NAN;
            if (isnan(ms_per)) {
                problems_add(errs, problems_pointer(ptr, sizeof ptr, "", row->json_key),
                             "unknown or missing time unit");
                continue;
            }
        }
        const char *k;
        json_t *v;
        json_object_foreach(m, k, v)
        {
            char stat[16];
            if (json_is_number(v) && lt_stat_name(k, strlen(k), stat, sizeof stat))
                genai_add_stat(point, result, row, stat, json_number_value(v), ms_per);
        }
    }
    double achieved =
        json_number_value(json_object_get(json_object_get(doc, "request_throughput"), "avg"));
    double tokens =
        json_number_value(json_object_get(json_object_get(doc, "output_token_throughput"), "avg"));
    if (tokens > 0)
        lt_set_number(result, "output_throughput", tokens);
    json_t *count = json_object_get(json_object_get(doc, "request_count"), "avg");
    if (json_is_number(count))
        lt_set_number(result, "completed", json_number_value(count));
    json_t *config = json_object_get(doc, "input_config");
    json_t *rate = json_object_get(config, "request_rate");
    json_t *concurrency = json_object_get(config, "concurrency");
    json_t *streaming = json_object_get(config, "streaming");
    double offered = NAN;
    const char *source = "not_recorded";
    if (json_is_number(rate) && json_number_value(rate) > 0) {
        offered = json_number_value(rate);
        source = "requested";
    } else if (json_is_integer(concurrency) && json_integer_value(concurrency) > 0) {
        source = "closed_loop";
        json_object_set(result, "concurrency", concurrency);
    }
    json_t *model = json_array_get(json_object_get(config, "model"), 0);
    lt_note_model(&d, json_is_string(model) ? json_string_value(model) : NULL);
    if (json_is_boolean(streaming))
        json_object_set(result, "streaming", streaming);
    json_t *out = NULL;
    if (errs->total == before)
        out = genai_finish(&d, point, result, achieved, offered, source, json_is_boolean(streaming),
                           json_is_true(streaming),
                           json_number_value(json_object_get(config, "output_tokens_mean")), errs);
    else {
        json_decref(point);
        json_decref(result);
    }
    lt_doc_free(&d);
    json_decref(doc);
    return out;
}

/* ---- MLPerf -------------------------------------------------------------------------------- */

/* "<prefix> … (ns)" latency keys, lower-cased, after the statistic is taken off. */
static const char *const mlperf_latency_suffixes[][2] = {
    {"latency (ns)", "e2e"},
    {"first token latency (ns)", "ttft"},
    {"time to output token (ns)", "tpot"},
};

/* Maps "50.00 percentile first token latency (ns)" or "mean latency (ns)" to "ttft_p50_ms". */
static bool mlperf_latency_key(const char *key, char *out, size_t size)
{
    char lower[128];
    size_t len = strlen(key);
    if (len >= sizeof lower)
        return false;
    for (size_t i = 0; i <= len; i++)
        lower[i] = (char)tolower((unsigned char)key[i]);
    char stat[16];
    const char *rest;
    const char *space = strchr(lower, ' ');
    if (!space)
        return false;
    if (strncmp(lower, "min ", 4) == 0 || strncmp(lower, "max ", 4) == 0 ||
        strncmp(lower, "mean ", 5) == 0) {
        snprintf(stat, sizeof stat, "%.*s", (int)(space - lower), lower);
        rest = space + 1;
    } else {
        double pct;
        if (strncmp(space, " percentile ", 12) != 0 ||
            !textnum_parse_double(lower, (size_t)(space - lower), &pct) || pct <= 0 || pct >= 100)
            return false;
        lt_percentile_stat(stat, sizeof stat, pct);
        rest = space + 12;
    }
    for (size_t i = 0; i < sizeof mlperf_latency_suffixes / sizeof *mlperf_latency_suffixes; i++)
        if (strcmp(rest, mlperf_latency_suffixes[i][0]) == 0) {
            snprintf(out, size, "%s_%s_ms", mlperf_latency_suffixes[i][1], stat);
            return true;
        }
    return false;
}

static json_t *mlperf_parse(const char *buf, size_t len, struct problems *errs)
{
    struct lt_doc d;
    json_t *point = json_object(), *result = json_object(), *constraints = json_object();
    if (!lt_doc_init(&d, "mlperf") || !point || !result || !constraints) {
        lt_doc_free(&d);
        json_decref(point);
        json_decref(result);
        json_decref(constraints);
        return NULL;
    }
    size_t before = errs->total, pos = 0;
    long line = 0;
    double completed = NAN, offline = NAN, scheduled = NAN, target = NAN;
    char scenario[128] = "", mode[128] = "", verdict[128] = "";
    while (pos < len) {
        line++;
        const char *s = buf + pos;
        const char *nl = memchr(s, '\n', len - pos);
        size_t slen = nl ? (size_t)(nl - s) : len - pos;
        pos += slen + 1;
        if (slen > 0 && s[slen - 1] == '\r')
            slen--;
        const char *colon = memchr(s, ':', slen);
        if (!colon) {
            long warnings;
            if (sscanf(s, "%ld warnings encountered", &warnings) == 1 && warnings >= 0)
                json_object_set_new(result, "warnings", json_integer(warnings));
            else if (slen >= 11 && strncmp(s, "No warnings", 11) == 0)
                json_object_set_new(result, "warnings", json_integer(0));
            continue;
        }
        const char *k = s, *v = colon + 1;
        size_t klen = (size_t)(colon - s), vlen = slen - klen - 1;
        textnum_trim(&k, &klen);
        textnum_trim(&v, &vlen);
        char key[128], value[128];
        if (klen == 0 || klen >= sizeof key || vlen >= sizeof value)
            continue;
        memcpy(key, k, klen);
        key[klen] = '\0';
        memcpy(value, v, vlen);
        value[vlen] = '\0';
        double num;
        bool is_num = textnum_parse_double(value, vlen, &num);
        char name[LT_KEY_MAX];
        if (strcmp(key, "Scenario") == 0) {
            snprintf(scenario, sizeof scenario, "%s", value);
        } else if (strcmp(key, "Mode") == 0) {
            snprintf(mode, sizeof mode, "%s", value);
        } else if (strcmp(key, "Result is") == 0) {
            snprintf(verdict, sizeof verdict, "%s", value);
        } else if (strcmp(key, "SUT name") == 0) {
            json_object_set_new(result, "sut_name", json_string(value));
        } else if (!is_num && vlen > 0 &&
                   (strstr(key, "per second") || strstr(key, "(ns)") || strstr(key, "(ms)") ||
                    strcmp(key, "target_qps") == 0)) {
            problems_add_line(errs, line, (long)(v - s) + 1, "", "%s: '%s' is not a number", key,
                              value);
        } else if (!is_num) {
            continue;
        } else if (strcmp(key, "Completed samples per second") == 0) {
            completed = num;
        } else if (strcmp(key, "Samples per second") == 0) {
            offline = num;
        } else if (strcmp(key, "Scheduled samples per second") == 0) {
            scheduled = num;
        } else if (strcmp(key, "target_qps") == 0) {
            target = num;
            lt_set_number(result, "target_qps", num);
        } else if (strcmp(key, "Completed tokens per second") == 0) {
            lt_set_number(result, "output_throughput", num);
        } else if (mlperf_latency_key(key, name, sizeof name)) {
            lt_set_number(point, name, num / 1e6);
        } else if (strcmp(key, "ttft_latency (ns)") == 0) {
            lt_set_number(constraints, "ttft_ms", num / 1e6);
        } else if (strcmp(key, "tpot_latency (ns)") == 0) {
            lt_set_number(constraints, "tpot_ms", num / 1e6);
        } else if (strcmp(key, "target_latency (ns)") == 0) {
            lt_set_number(constraints, "latency_ms", num / 1e6);
        } else if (strcmp(key, "samples_per_query") == 0) {
            lt_set_number(result, "samples_per_query", num);
        } else if (strcmp(key, "min_duration (ms)") == 0) {
            lt_set_number(result, "min_duration_s", num / 1000);
        }
    }
    double achieved = NAN, offered = NAN;
    const char *source = "scheduled";
    bool saturated = false;
    if (errs->total != before) {
        /* problems already name the lines */
    } else if (!verdict[0] || !scenario[0]) {
        problems_add(errs, "", "not an MLPerf summary: no 'Result is' or 'Scenario' line");
    } else if (mode[0] && strcmp(mode, "PerformanceOnly") != 0) {
        problems_add(errs, "", "mode %s has no performance figures (PerformanceOnly does)", mode);
    } else if (strcmp(scenario, "Server") == 0) {
        achieved = completed;
        offered = !isnan(scheduled) ? scheduled : target;
        if (isnan(scheduled))
            source = "target_qps";
    } else if (strcmp(scenario, "Offline") == 0) {
        achieved = offered = offline;
        saturated = true;
        source = "saturated";
    } else {
        problems_add(errs, "", "scenario %s has no throughput at a load (Server or Offline do)",
                     scenario);
    }
    if (errs->total == before && !(achieved > 0 && offered > 0))
        problems_add(errs, "", "no positive samples-per-second figures for scenario %s", scenario);
    json_t *out = NULL;
    if (errs->total == before) {
        json_t *ordered = json_pack("{sf sf}", "offered_rps", offered, "achieved_rps", achieved);
        json_object_update_missing(ordered, point);
        d.valid = strcmp(verdict, "VALID") == 0;
        d.saturated = saturated;
        json_object_set_new(result, "source_index", json_integer(0));
        json_object_set_new(result, "offered_rps_source", json_string(source));
        json_object_set_new(result, "saturated", json_boolean(saturated));
        json_object_set_new(result, "scenario", json_string(scenario));
        json_object_set_new(result, "result", json_string(verdict));
        json_object_set(result, "constraints", constraints);
        json_int_t nwarn = json_integer_value(json_object_get(result, "warnings"));
        if (nwarn > 0)
            lt_warn(&d, "mlperf_warnings",
                    "loadgen reported %lld warnings (mlperf_log_detail.txt lists them): the run "
                    "may not have met its settings, so check them before using its figures",
                    (long long)nwarn);
        if (d.valid) {
            lt_add(&d, ordered, result);
        } else {
            json_object_set_new(result, "load_point", ordered);
            json_array_append_new(d.rejected, result);
            lt_warn(&d, "mlperf_invalid",
                    "the result is %s: its figures are kept in rejected_load_points and are "
                    "never capacity",
                    verdict);
        }
        out = lt_finish(&d);
    } else {
        json_decref(result);
    }
    json_decref(point);
    json_decref(constraints);
    lt_doc_free(&d);
    return out;
}

json_t *loadtest_parse(enum loadtest_format format, const char *buf, size_t len,
                       const struct loadtest_options *opt, struct problems *errs)
{
    /* text in, text out: refuse bytes that are not UTF-8 (or NUL) before reading anything */
    size_t bad = linebuf_utf8_check((const unsigned char *)buf, len);
    if (bad < len) {
        long line = 1, column = 1;
        for (size_t i = 0; i < bad; i++, column++)
            if (buf[i] == '\n')
                line++, column = 0;
        problems_add_line(errs, line, column, "",
                          buf[bad] ? "line %ld is not valid UTF-8 at byte %ld"
                                   : "line %ld has a NUL byte at byte %ld",
                          line, column);
        return NULL;
    }
    size_t start = 0;
    while (start < len && isspace((unsigned char)buf[start]))
        start++;
    switch (format) {
    case LOADTEST_VLLM:
        return vllm_parse(buf, len, opt, errs);
    case LOADTEST_GENAI_PERF:
        return start < len && buf[start] == '{' ? genai_json_parse(buf, len, errs)
                                                : genai_csv_parse(buf, len, errs);
    case LOADTEST_MLPERF:
        return mlperf_parse(buf, len, errs);
    default:
        problems_add(errs, "", "unknown load-test format (vllm, genai-perf or mlperf)");
        return NULL;
    }
}
