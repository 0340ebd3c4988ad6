/* Typed against evidence: see contradiction.h. */
#include "core/ledger/contradiction.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cost/cost.h"
#include "core/ledger/gate.h"

static const char ITEM_FAILURE[] = "failure and rerun rate";
static const char ITEM_QUEUE[] = "queue and provisioning delay";

static int has_evidence_from(const json_t *bench, const char *figure)
{
    return json_object_get(json_object_get(json_object_get(bench, "source"), "evidence_from"),
                           figure) != NULL;
}

static void add(json_t *list, const char *pointer, const char *field, const json_t *option,
                const char *item, double typed, double evidence, json_int_t runs,
                const json_t *uploads)
{
    json_array_append_new(list, json_pack("{s:s, s:s, s:O, s:s, s:f, s:f, s:I, s:O}", "assumption",
                                          pointer, "field", field, "option",
                                          option ? option : json_null(), "item", item, "typed",
                                          typed, "evidence", evidence, "runs", runs, "uploads",
                                          uploads ? uploads : json_null()));
}

json_t *contradiction_candidates(const json_t *resolved, const json_t *options,
                                 const json_t *evidence)
{
    json_t *list = json_array();
    if (!list)
        return NULL;
    const json_t *fail = json_object_get(evidence, "failure");
    json_int_t attempts = json_integer_value(json_object_get(fail, "attempts"));
    json_int_t failed = json_integer_value(json_object_get(fail, "failed"));
    int fail_known = attempts >= CONTRADICTION_MIN_RUNS;
    double q = fail_known ? (double)failed / (double)attempts : NAN;
    const json_t *uploads = json_object_get(fail, "uploads");

    const json_t *typed_q =
        json_object_get(json_object_get(resolved, "assumptions"), "failure_probability");
    if (fail_known && json_is_number(typed_q))
        add(list, "/assumptions/failure_probability", "failure_probability", NULL, ITEM_FAILURE,
            json_number_value(typed_q), q, attempts, uploads);

    size_t i;
    const json_t *opt;
    json_array_foreach(json_object_get(resolved, "options"), i, opt)
    {
        const json_t *facts = json_array_get(options, i);
        if (json_is_string(json_object_get(facts, "benchmark_id")))
            continue; /* a stored benchmark: measured, not typed */
        const json_t *bench = json_object_get(opt, "benchmark");
        const json_t *name = json_object_get(opt, "name");
        char ptr[96];
        const json_t *bq = json_object_get(bench, "failure_probability");
        if (fail_known && json_is_number(bq) && !has_evidence_from(bench, "failure_probability")) {
            snprintf(ptr, sizeof ptr, "/options/%zu/benchmark/failure_probability", i);
            add(list, ptr, "failure_probability", name, ITEM_FAILURE, json_number_value(bq), q,
                attempts, uploads);
        }
        const json_t *qw = json_object_get(bench, "queue_wait_s");
        const json_t *ev = json_array_get(json_object_get(evidence, "queue"), i);
        json_int_t runs = json_integer_value(json_object_get(ev, "runs"));
        const json_t *mean = json_object_get(ev, "mean_s");
        if (json_is_number(qw) && runs >= CONTRADICTION_MIN_RUNS && json_is_number(mean) &&
            !has_evidence_from(bench, "queue_wait_quantiles_s")) {
            snprintf(ptr, sizeof ptr, "/options/%zu/benchmark/queue_wait_s", i);
            add(list, ptr, "queue_wait_s", name, ITEM_QUEUE, json_number_value(qw),
                json_number_value(mean), runs, json_object_get(ev, "uploads"));
        }
    }
    return list;
}

json_t *contradiction_scenario(const json_t *resolved, const json_t *candidate)
{
    json_t *copy = json_deep_copy(resolved);
    if (!copy)
        return NULL;
    const char *ptr = json_string_value(json_object_get(candidate, "assumption"));
    const char *field = json_string_value(json_object_get(candidate, "field"));
    double value = json_number_value(json_object_get(candidate, "evidence"));
    json_t *target = NULL;
    if (ptr && strncmp(ptr, "/assumptions/", 13) == 0) {
        target = json_object_get(copy, "assumptions");
    } else if (ptr && strncmp(ptr, "/options/", 9) == 0) {
        size_t i = (size_t)strtoul(ptr + 9, NULL, 10);
        target = json_object_get(json_array_get(json_object_get(copy, "options"), i), "benchmark");
    }
    if (json_is_object(target) && field)
        json_object_set_new(target, field, json_real(value));
    return copy;
}

json_t *contradiction_decide(const json_t *candidates, const char *winner,
                             const json_t *winners_after)
{
    json_t *out = json_deep_copy(candidates);
    if (!out)
        return NULL;
    size_t i;
    json_t *c;
    json_array_foreach(out, i, c)
    {
        double typed = json_number_value(json_object_get(c, "typed"));
        double ev = json_number_value(json_object_get(c, "evidence"));
        const char *field = json_string_value(json_object_get(c, "field"));
        double floor = field && strcmp(field, "queue_wait_s") == 0 ? 60 : 0.01;
        double gap = (ev - typed) / fmax(fabs(typed), floor);
        const char *after = json_string_value(json_array_get(winners_after, i));
        /* no winner with the evidence (no option computes or stays feasible: every attempt
         * failed, say) changes the winner as surely as another one would */
        int changes = winner && (!after || strcmp(winner, after) != 0);
        json_object_set_new(c, "gap", json_real(gap));
        json_object_set_new(c, "winner", winner ? json_string(winner) : json_null());
        json_object_set_new(c, "winner_with_evidence", after ? json_string(after) : json_null());
        json_object_set_new(c, "changes_winner", json_boolean(changes));
        json_object_set_new(c, "contradicted", json_boolean(changes));
    }
    return out;
}

/* The winner of a scenario recomputed, or null (new reference). */
static json_t *recomputed_winner(const json_t *scenario)
{
    struct problems p;
    problems_init(&p);
    json_t *result = scenario ? cost_compare(scenario, &p) : NULL;
    const char *w = result ? gate_winner(result) : NULL;
    json_t *out = w ? json_string(w) : json_null();
    json_decref(result);
    problems_free(&p);
    return out;
}

json_t *contradiction_evaluate(const json_t *resolved, const json_t *options,
                               const json_t *evidence)
{
    json_t *cands = contradiction_candidates(resolved, options, evidence);
    if (!cands)
        return NULL;
    json_t *after = json_array(), *before = NULL;
    if (json_array_size(cands)) {
        before = recomputed_winner(resolved);
        size_t i;
        json_t *cand;
        json_array_foreach(cands, i, cand)
        {
            json_t *sc = contradiction_scenario(resolved, cand);
            json_array_append_new(after, recomputed_winner(sc));
            json_decref(sc);
        }
    }
    json_t *out = contradiction_decide(cands, json_string_value(before), after);
    json_decref(cands);
    json_decref(after);
    json_decref(before);
    return out;
}
