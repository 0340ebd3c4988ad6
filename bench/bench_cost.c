/* Speed of the cost engine. Engine 1 on its training example: Monte Carlo trials per second,
 * closed-form evaluations per second (batch and inference), and the whole comparison (default
 * 20,000 trials × 4 options, break-even search, findings, document) per call. Engine 2 (issue
 * 20's target: under 2 s on one core): a Monte Carlo of 20,000 trials × 30 planned outcomes a
 * month for 8 options (engine 2's training example, its four options twice), the seconds and
 * trials per second, and the whole comparison of it.
 * Times are CPU seconds of this one thread. Run by hand:
 * build/bench_cost [CPU seconds per measurement, default 1]. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/cost/cost.h"
#include "core/cost/cost_batch.h"
#include "core/cost/cost_inference.h"
#include "core/cost/cost_mc.h"
#include "core/cost/cost_scenario.h"

/* CPU time of this process: the machine is shared, and wall time would measure the others. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static json_t *load(const char *path)
{
    json_error_t error;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &error);
    if (!doc)
        fprintf(stderr, "%s:%d:%d: %s\n", path, error.line, error.column, error.text);
    return doc;
}

/* Engine 2's Monte Carlo of every option once: seconds and trials (of V outcomes each) per s. */
static int bench_monte_carlo2(const struct cost_scenario *sc)
{
    struct cost_batch_result cf[COST_MAX_OPTIONS];
    for (size_t i = 0; i < sc->option_count; i++)
        cost_batch_eval(sc, &sc->assumptions, &sc->options[i], &cf[i]);
    double start = now_s();
    size_t trials = 0;
    for (size_t i = 0; i < sc->option_count; i++) {
        struct cost_mc_result mc;
        if (!cf[i].runs)
            continue;
        if (cost_mc_run2(sc, i, &cf[i], false, &mc) != 0)
            return -1;
        trials += sc->trials;
    }
    double elapsed = now_s() - start;
    printf("engine 2 monte carlo: %zu options x %zu trials x %g planned outcomes in %.3f CPU s = "
           "%.3g trials/s (%.3g outcomes/s; target: under 2 s)\n",
           sc->option_count, sc->trials, sc->assumptions.planned_outcomes, elapsed,
           (double)trials / elapsed, (double)trials * sc->assumptions.planned_outcomes / elapsed);
    return 0;
}

/* Engine 2's training example with V = 30 and its options twice (8 options). */
static json_t *engine2_bench_scenario(void)
{
    json_t *doc = load(CAPLEDGER_DATA_DIR "/spec/example-training-v2.json");
    if (!doc)
        return NULL;
    json_t *as = json_object_get(doc, "assumptions");
    json_object_set_new(as, "planned_outcomes_per_month", json_integer(30));
    json_object_set_new(as, "trials", json_integer(20000));
    json_t *options = json_object_get(doc, "options");
    size_t n = json_array_size(options);
    for (size_t i = 0; i < n; i++) {
        json_t *copy = json_deep_copy(json_array_get(options, i));
        char name[160];
        snprintf(name, sizeof name, "%s-copy", json_string_value(json_object_get(copy, "name")));
        json_object_set_new(copy, "name", json_string(name));
        json_array_append_new(options, copy);
    }
    return doc;
}

static int bench_monte_carlo(const struct cost_scenario *sc, double budget_s)
{
    struct cost_batch_result cf[COST_MAX_OPTIONS];
    for (size_t i = 0; i < sc->option_count; i++)
        cost_batch_eval(sc, &sc->assumptions, &sc->options[i], &cf[i]);
    double start = now_s(), elapsed;
    size_t trials = 0;
    do {
        for (size_t i = 0; i < sc->option_count; i++) {
            struct cost_mc_result mc;
            if (!cf[i].runs)
                continue;
            if (cost_mc_run(sc, i, &cf[i], false, &mc) != 0)
                return -1;
            trials += sc->trials;
        }
        elapsed = now_s() - start;
    } while (elapsed < budget_s);
    printf("monte carlo: %zu trials in %.3f CPU s = %.3g trials/s (incl. quantile selection)\n",
           trials, elapsed, (double)trials / elapsed);
    return 0;
}

static void bench_batch_closed_form(const struct cost_scenario *sc, double budget_s)
{
    double start = now_s(), elapsed, sink = 0;
    size_t evaluations = 0;
    do {
        for (int k = 0; k < 1000; k++)
            for (size_t i = 0; i < sc->option_count; i++) {
                struct cost_batch_result r;
                cost_batch_eval(sc, &sc->assumptions, &sc->options[i], &r);
                sink += r.runs ? r.total : 0;
                evaluations++;
            }
        elapsed = now_s() - start;
    } while (elapsed < budget_s);
    printf("batch closed form: %.3g option evaluations/s (checksum %.6g)\n",
           (double)evaluations / elapsed, sink / (double)evaluations);
}

static void bench_inference_closed_form(const struct cost_scenario *sc, double budget_s)
{
    double capacity[COST_MAX_OPTIONS];
    for (size_t i = 0; i < sc->option_count; i++)
        capacity[i] = cost_inference_capacity(&sc->service, &sc->options[i].bench);
    double start = now_s(), elapsed, sink = 0;
    size_t evaluations = 0;
    do {
        for (int k = 0; k < 100; k++)
            for (size_t i = 0; i < sc->option_count; i++) {
                struct cost_inference_result r;
                cost_inference_eval(sc, &sc->options[i], capacity[i], 1.0, &r);
                sink += r.runs ? r.cost_per_outcome : 0;
                evaluations++;
            }
        elapsed = now_s() - start;
    } while (elapsed < budget_s);
    printf("inference closed form (%g-hour horizon): %.3g option evaluations/s (checksum %.6g)\n",
           sc->service.horizon_hours, (double)evaluations / elapsed, sink / (double)evaluations);
}

static int bench_compare(const char *label, const json_t *scenario, int engine, double budget_s)
{
    double start = now_s(), elapsed, slowest = 0;
    size_t calls = 0;
    do {
        struct problems errs;
        problems_init(&errs);
        double t0 = now_s();
        json_t *result = cost_compare_engine(scenario, engine, &errs);
        double took = now_s() - t0;
        slowest = took > slowest ? took : slowest;
        problems_free(&errs);
        if (!result)
            return -1;
        json_decref(result);
        calls++;
        elapsed = now_s() - start;
    } while (elapsed < budget_s);
    printf("cost_compare (%s): %.1f ms per call on average, %.1f ms the slowest, over %zu calls\n",
           label, 1e3 * elapsed / (double)calls, 1e3 * slowest, calls);
    return 0;
}

int main(int argc, char **argv)
{
    double budget_s = argc > 1 ? atof(argv[1]) : 1.0;
    if (!(budget_s > 0))
        budget_s = 1.0;
    json_t *training = load(CAPLEDGER_DATA_DIR "/spec/example-training.json");
    json_t *inference = load(CAPLEDGER_DATA_DIR "/spec/example-inference.json");
    if (!training || !inference)
        return 1;
    struct problems errs;
    problems_init(&errs);
    struct cost_scenario batch_sc, inference_sc;
    if (cost_scenario_parse(training, 1, &batch_sc, &errs) != 0 ||
        cost_scenario_parse(inference, 1, &inference_sc, &errs) != 0) {
        fprintf(stderr, "the spec examples do not validate\n");
        return 1;
    }
    printf("training example: %zu options, %zu trials each\n", batch_sc.option_count,
           batch_sc.trials);
    int rc = bench_monte_carlo(&batch_sc, budget_s);
    bench_batch_closed_form(&batch_sc, budget_s);
    bench_inference_closed_form(&inference_sc, budget_s);
    if (rc == 0)
        rc = bench_compare("engine 1, training example, 20,000 trials x 4 options", training, 1,
                           budget_s);
    if (rc == 0)
        rc = bench_compare("engine 1, inference example", inference, 1, budget_s);
    json_t *month = engine2_bench_scenario();
    struct cost_scenario month_sc;
    if (!month || cost_scenario_parse(month, 2, &month_sc, &errs) != 0) {
        fprintf(stderr, "engine 2's bench scenario does not validate\n");
        rc = -1;
    } else {
        if (rc == 0)
            rc = bench_monte_carlo2(&month_sc);
        if (rc == 0)
            rc = bench_compare("engine 2, 20,000 trials x 30 outcomes x 8 options, break-even "
                               "included",
                               month, 2, budget_s);
        cost_scenario_free(&month_sc);
    }
    json_decref(month);
    cost_scenario_free(&batch_sc);
    cost_scenario_free(&inference_sc);
    problems_free(&errs);
    json_decref(training);
    json_decref(inference);
    return rc == 0 ? 0 : 1;
}
