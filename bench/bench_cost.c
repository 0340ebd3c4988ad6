/* Speed of the cost engine on the spec's training example: Monte Carlo trials per second,
 * closed-form evaluations per second (batch and inference), and the whole comparison (default
 * 20,000 trials × 4 options, break-even search, findings, document) per call.
 * Times are CPU seconds of this one thread. Run by hand:
 * build/bench_cost [CPU seconds per measurement, default 1]. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/cost/cost.h"
#include "core/cost/cost_private.h"

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
            if (cost_mc_run(sc, i, &cf[i], &mc) != 0)
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

static int bench_compare(const char *label, const json_t *scenario, double budget_s)
{
    double start = now_s(), elapsed, slowest = 0;
    size_t calls = 0;
    do {
        struct problems errs;
        problems_init(&errs);
        double t0 = now_s();
        json_t *result = cost_compare(scenario, &errs);
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
    if (cost_scenario_parse(training, &batch_sc, &errs) != 0 ||
        cost_scenario_parse(inference, &inference_sc, &errs) != 0) {
        fprintf(stderr, "the spec examples do not validate\n");
        return 1;
    }
    printf("training example: %zu options, %zu trials each\n", batch_sc.option_count,
           batch_sc.trials);
    int rc = bench_monte_carlo(&batch_sc, budget_s);
    bench_batch_closed_form(&batch_sc, budget_s);
    bench_inference_closed_form(&inference_sc, budget_s);
    if (rc == 0)
        rc = bench_compare("training example, 20,000 trials x 4 options", training, budget_s);
    if (rc == 0)
        rc = bench_compare("inference example", inference, budget_s);
    cost_scenario_free(&batch_sc);
    cost_scenario_free(&inference_sc);
    problems_free(&errs);
    json_decref(training);
    json_decref(inference);
    return rc == 0 ? 0 : 1;
}
