/* Realised against predicted: see outcome.h. */
#include "core/ledger/outcome.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/drift.h"

/* The breakdown items billed as GPU time (cost-model.md; engine 2's "compute items"). */
static const char *const COMPUTE_ITEMS[] = {
    "useful",          "input_stall",        "other_idle", "setup", "checkpoint_and_interruption",
    "failed_attempts", "unused_reservation", NULL};

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

double outcome_predicted_compute(const json_t *option)
{
    const json_t *b = json_object_get(option, "breakdown");
    if (!json_is_object(b))
        return NAN;
    double compute = 0, per_run = 0;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)b, key, v)
    {
        if (!json_is_number(v))
            continue;
        for (size_t i = 0; COMPUTE_ITEMS[i]; i++)
            if (strcmp(key, COMPUTE_ITEMS[i]) == 0)
                compute += json_number_value(v);
        if (strcmp(key, "rejected_runs") != 0 && strcmp(key, "unserved") != 0)
            per_run += json_number_value(v);
    }
    /* rejected_runs = (1/a − 1) × the per-run items: the compute items' share of it */
    double rejected = num(b, "rejected_runs");
    if (!isnan(rejected) && rejected > 0 && per_run > 0)
        compute *= 1 + rejected / per_run;
    return compute;
}

static json_t *real_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static double per_completed(double cost, long long completed)
{
    return completed > 0 ? cost / (double)completed : NAN;
}

json_t *outcome_decide(const struct outcome_facts *f)
{
    const json_t *r = f->realised;
    long long runs = (long long)json_integer_value(json_object_get(r, "runs"));
    long long completed = (long long)json_integer_value(json_object_get(r, "completed"));
    double cost = num(r, "cost");
    double predicted = outcome_predicted_compute(f->option);
    double realised = per_completed(isnan(cost) ? 0 : cost, completed);
    if (isnan(cost))
        realised = NAN;

    /* the currency of the realised figure: the cluster maps' one, when they priced anything */
    const json_t *curs = json_object_get(r, "currencies");
    const char *rcur =
        json_array_size(curs) == 1 ? json_string_value(json_array_get(curs, 0)) : NULL;

    const char *verdict, *reason;
    char why[300];
    double error = NAN;
    if (!f->option || isnan(predicted) || predicted <= 0) {
        verdict = "not_comparable";
        reason = "the decision's comparison gives no compute cost for its option";
    } else if (runs < f->min_runs) {
        verdict = "too_few_runs";
        snprintf(why, sizeof why, "%lld runs since the decision; %lld are needed for a verdict",
                 runs, f->min_runs);
        reason = why;
    } else if (json_array_size(curs) > 1) {
        verdict = "not_comparable";
        reason = "the cluster maps price these runs in more than one currency";
    } else if (num(r, "unpriced_gpu_hours") > 0) {
        /* priced cost over every completed run would understate the cost per outcome */
        verdict = "not_comparable";
        snprintf(why, sizeof why,
                 "%lld runs (%.4g GPU-hours) ran on partitions no cluster map prices, so the cost "
                 "per completed run is not known: map their partitions to offers "
                 "(PUT /api/v1/clusters/{name})",
                 (long long)json_integer_value(json_object_get(r, "unpriced_runs")),
                 num(r, "unpriced_gpu_hours"));
        reason = why;
        realised = NAN;
    } else if (!rcur || isnan(cost)) {
        verdict = "not_comparable";
        reason = "no cluster map prices these runs: map their partitions to offers "
                 "(PUT /api/v1/clusters/{name})";
    } else if (!f->currency || strcmp(rcur, f->currency) != 0) {
        verdict = "not_comparable";
        snprintf(why, sizeof why, "the runs are priced in %s, the prediction in %s", rcur,
                 f->currency ? f->currency : "no currency");
        reason = why;
    } else if (completed == 0) {
        verdict = "no_completed_run";
        snprintf(why, sizeof why,
                 "%lld runs since the decision and none completed: every outcome is still owed",
                 runs);
        reason = why;
    } else {
        error = realised / predicted - 1;
        bool over = error > f->threshold;
        verdict = over ? "drift" : "within";
        snprintf(why, sizeof why,
                 "realised %.4g %s per completed run over %lld runs (%lld completed) is %.1f%% %s "
                 "the predicted compute cost %.4g; the threshold is %.0f%%",
                 realised, rcur, runs, completed, fabs(error) * 100, error >= 0 ? "over" : "under",
                 predicted, f->threshold * 100);
        reason = why;
    }

    json_t *months = json_array();
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(r, "months"), i, m)
    {
        long long mc = (long long)json_integer_value(json_object_get(m, "completed"));
        double mcost = num(m, "cost"), munpriced = num(m, "unpriced_gpu_hours");
        double mper = munpriced > 0 ? NAN : per_completed(mcost, mc);
        json_array_append_new(
            months, json_pack("{s:O, s:O, s:O, s:O, s:o, s:o, s:o}", "month",
                              json_object_get(m, "month"), "runs", json_object_get(m, "runs"),
                              "completed", json_object_get(m, "completed"), "gpu_hours",
                              json_object_get(m, "gpu_hours"), "cost", real_or_null(mcost),
                              "unpriced_gpu_hours", json_real(munpriced > 0 ? munpriced : 0),
                              "cost_per_completed", real_or_null(mper)));
    }
    json_t *pred = json_pack(
        "{s:o, s:o, s:o, s:o}", "option",
        f->option ? json_incref(json_object_get(f->option, "name")) : json_null(), "currency",
        f->currency ? json_string(f->currency) : json_null(), "expected_cost_per_outcome",
        real_or_null(num(f->option, "expected_cost_per_outcome")), "compute_cost_per_outcome",
        real_or_null(predicted));
    json_t *real = json_pack(
        "{s:I, s:I, s:o, s:o, s:o, s:o, s:O, s:o, s:o}", "runs", (json_int_t)runs, "completed",
        (json_int_t)completed, "gpu_hours", real_or_null(num(r, "gpu_hours")), "cost",
        real_or_null(cost), "currency", rcur ? json_string(rcur) : json_null(),
        "cost_per_completed", real_or_null(realised), "unpriced_runs",
        json_object_get(r, "unpriced_runs") ? json_object_get(r, "unpriced_runs") : json_null(),
        "unpriced_gpu_hours", real_or_null(num(r, "unpriced_gpu_hours")), "months", months);
    return json_pack("{s:o, s:o, s:o, s:f, s:I, s:s, s:s}", "predicted", pred, "realised", real,
                     "error", real_or_null(error), "threshold", f->threshold, "min_runs",
                     (json_int_t)f->min_runs, "verdict", verdict, "reason", reason);
}

/* ---- the track record ---- */

struct tally {
    const char *name;
    long long decisions, scored, within;
    double *errors;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_tally(const void *a, const void *b)
{
    return strcmp(((const struct tally *)a)->name, ((const struct tally *)b)->name);
}

/* The tally named name in t[0..*n), added when new (t has room for every outcome). */
static struct tally *tally_of(struct tally *t, size_t *n, const char *name, size_t cap)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(t[i].name, name) == 0)
            return &t[i];
    struct tally *x = &t[(*n)++];
    memset(x, 0, sizeof *x);
    x->name = name;
    x->errors = calloc(cap ? cap : 1, sizeof *x->errors);
    return x->errors ? x : NULL;
}

static void tally_add(struct tally *x, const json_t *o)
{
    const char *v = json_string_value(json_object_get(o, "verdict"));
    x->decisions++;
    bool within = v && strcmp(v, "within") == 0, drift = v && strcmp(v, "drift") == 0;
    const json_t *e = json_object_get(o, "error");
    if ((within || drift) && json_is_number(e)) {
        x->errors[x->scored++] = json_number_value(e);
        x->within += within;
    }
}

static json_t *tallies_json(struct tally *t, size_t n, const char *key)
{
    qsort(t, n, sizeof *t, cmp_tally);
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        double median = NAN;
        if (t[i].scored) {
            qsort(t[i].errors, (size_t)t[i].scored, sizeof(double), cmp_double);
            size_t k = (size_t)t[i].scored;
            median = k % 2 ? t[i].errors[k / 2] : (t[i].errors[k / 2 - 1] + t[i].errors[k / 2]) / 2;
        }
        json_array_append_new(
            list, json_pack("{s:s, s:I, s:I, s:I, s:o, s:o}", key, t[i].name, "decisions",
                            (json_int_t)t[i].decisions, "scored", (json_int_t)t[i].scored,
                            "within_threshold", (json_int_t)t[i].within, "share_within_threshold",
                            t[i].scored ? json_real((double)t[i].within / (double)t[i].scored)
                                        : json_null(),
                            "median_error", real_or_null(median)));
    }
    return list;
}

int outcome_drift_metric(const json_t *outcome, struct drift_metric *m, double *rel)
{
    const char *verdict = json_string_value(json_object_get(outcome, "verdict"));
    if (!verdict || strcmp(verdict, "drift") != 0)
        return -1;
    const json_t *real = json_object_get(outcome, "realised");
    const json_t *pred = json_object_get(outcome, "predicted");
    *m = (struct drift_metric){
        .name = "cost_per_outcome",
        .label = "realised compute cost per completed run",
        .unit = "",
        .floor = 1e-9,
        .known = 1,
        .assumed = num(pred, "compute_cost_per_outcome"),
        .observed = num(real, "cost_per_completed"),
        .samples = (long long)num(real, "runs"),
        .basis = "runs of the review's workloads since the decision",
        .evidence_key = "run_uploads",
        .threshold = num(outcome, "threshold"),
    };
    *rel = num(outcome, "error");
    return 0;
}

json_t *outcome_track_record(const json_t *outcomes)
{
    size_t cap = json_array_size(outcomes), nteams = 0, nowners = 0;
    size_t team_cap = 0, i, k;
    const json_t *o, *t;
    json_array_foreach(outcomes, i, o) team_cap += json_array_size(json_object_get(o, "teams"));
    struct tally *owners = calloc(cap ? cap : 1, sizeof *owners);
    struct tally *teams = calloc(team_cap ? team_cap : 1, sizeof *teams);
    json_t *out = NULL;
    if (!owners || !teams)
        goto done;
    json_array_foreach(outcomes, i, o)
    {
        const char *signer = json_string_value(json_object_get(o, "signer"));
        struct tally *x = tally_of(owners, &nowners, signer ? signer : "", cap);
        if (!x)
            goto done;
        tally_add(x, o);
        json_array_foreach(json_object_get(o, "teams"), k, t)
        {
            if (!json_is_string(t))
                continue;
            struct tally *y = tally_of(teams, &nteams, json_string_value(t), cap);
            if (!y)
                goto done;
            tally_add(y, o);
        }
    }
    out = json_pack("{s:o, s:o}", "owners", tallies_json(owners, nowners, "owner"), "teams",
                    tallies_json(teams, nteams, "team"));
done:
    for (size_t j = 0; owners && j < nowners; j++)
        free(owners[j].errors);
    for (size_t j = 0; teams && j < nteams; j++)
        free(teams[j].errors);
    free(owners);
    free(teams);
    return out;
}
