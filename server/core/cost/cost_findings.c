/* Findings: short sentences that say, for one option, where its cost goes and what would
 * lower it, with the numbers that justify it. They are derived from the breakdown only (no
 * judgement the figures do not support), for the UI and for decision records. */
#include "core/cost/cost_findings.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Items under this share of an option's cost are not worth a sentence. */
#define FINDING_MIN_SHARE 0.10
/* At most this many sentences about breakdown items per option. */
#define FINDING_MAX_ITEMS 3

void cost_format_number(double x, char *buf, size_t size)
{
    if (!isfinite(x)) {
        snprintf(buf, size, "n/a");
        return;
    }
    double mag = fabs(x);
    if (mag >= 1e15 || (mag > 0 && mag < 1e-4)) {
        snprintf(buf, size, "%.4g", x);
        return;
    }
    /* Four significant digits below 1,000; whole numbers with separators above. */
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.4g", x);
    if (fabs(strtod(tmp, NULL)) < 1000) {
        snprintf(buf, size, "%s", tmp);
        return;
    }
    snprintf(tmp, sizeof tmp, "%.0f", fabs(x));
    size_t digits = strlen(tmp), n = 0;
    char out[96];
    if (x < 0)
        out[n++] = '-';
    for (size_t i = 0; i < digits; i++) {
        if (i > 0 && (digits - i) % 3 == 0)
            out[n++] = ',';
        out[n++] = tmp[i];
    }
    out[n] = '\0';
    snprintf(buf, size, "%s", out);
}

/* "half the cost" or "21% of this option's cost". */
static void share_phrase(double share, char *buf, size_t size)
{
    if (share >= 0.475 && share < 0.525)
        snprintf(buf, size, "half the cost");
    else
        snprintf(buf, size, "%.0f%% of this option's cost", 100 * share);
}

static int add_sentence(json_t *findings, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int add_sentence(json_t *findings, const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    int rc = json_array_append_new(findings, json_string(text));
    free(text);
    return rc;
}

#define NUM(var, x)                                                                                \
    char var[48];                                                                                  \
    cost_format_number((x), var, sizeof var)

/* Indices of the largest non-useful items with a share of at least FINDING_MIN_SHARE, largest
 * first; returns how many. */
static int largest_items(const double *items, int count, int useful, double total, int *out)
{
    int n = 0;
    bool used[32] = {false};
    while (n < FINDING_MAX_ITEMS) {
        int best = -1;
        for (int i = 0; i < count; i++)
            if (i != useful && !used[i] && isfinite(items[i]) &&
                (best < 0 || items[i] > items[best]))
                best = i;
        if (best < 0 || !(items[best] >= FINDING_MIN_SHARE * total))
            break;
        used[best] = true;
        out[n++] = best;
    }
    return n;
}

static int memory_sentence(json_t *findings, const struct cost_option *opt, double headroom)
{
    NUM(need, opt->bench.memory_peak_gb);
    NUM(have, opt->offer.gpu_memory_gb);
    NUM(room, 100 * headroom);
    NUM(usable, opt->offer.gpu_memory_gb * (1 - headroom));
    return add_sentence(findings,
                        "does not fit: it needs %s GB per GPU and %s GB less %s%% headroom "
                        "leaves %s GB",
                        need, have, room, usable);
}

static int common_reasons(json_t *findings, const struct cost_option *opt, unsigned reasons,
                          double gpus_at_peak, double headroom)
{
    if ((reasons & COST_REASON_MEMORY) && memory_sentence(findings, opt, headroom) != 0)
        return -1;
    if (reasons & COST_REASON_QUOTA) {
        NUM(gpus, gpus_at_peak);
        NUM(quota, opt->offer.quota_gpus);
        if (add_sentence(findings, "needs %s GPUs at once but the quota is %s GPUs", gpus, quota) !=
            0)
            return -1;
    }
    if ((reasons & COST_REASON_SUPPLY) &&
        add_sentence(findings, "the offer is marked unavailable: no capacity can be bought") != 0)
        return -1;
    if ((reasons & COST_REASON_OUT_OF_RANGE) &&
        add_sentence(findings, "its figures are too large to represent: check the units of "
                               "the inputs") != 0)
        return -1;
    return 0;
}

static int batch_item_sentence(json_t *findings, const struct cost_scenario *sc,
                               const struct cost_option *opt, const struct cost_batch_result *r,
                               int item, const char *share)
{
    const struct cost_benchmark *b = &opt->bench;
    switch (item) {
    case COST_B_INPUT_STALL:
        return add_sentence(findings, "input stalls are %s: stage the dataset next to the GPUs",
                            share);
    case COST_B_OTHER_IDLE: {
        NUM(duty, 100 * b->gpu_duty_cycle);
        return add_sentence(findings,
                            "idle GPU time other than input stalls is %s: the duty cycle is "
                            "%s%%, so profile the step for host-side work",
                            share, duty);
    }
    case COST_B_SETUP: {
        NUM(setup, b->setup_s);
        return add_sentence(findings,
                            "setup is %s: %s s per attempt; keep images and environments warm",
                            share, setup);
    }
    case COST_B_CHECKPOINT: {
        NUM(interval, r->interval_s);
        if (r->interruption_rate_per_s > 0) {
            NUM(rate, r->interruption_rate_per_s * 3600);
            return add_sentence(findings,
                                "checkpoints and interruptions are %s: %s interruptions per "
                                "hour against a %s s checkpoint interval",
                                share, rate, interval);
        }
        NUM(writes, r->segments);
        NUM(write, b->checkpoint_write_s);
        return add_sentence(findings,
                            "checkpoint writes are %s: %s writes of %s s; write asynchronously "
                            "or less often",
                            share, writes, write);
    }
    case COST_B_FAILED: {
        NUM(q, 100 * r->failure_probability);
        NUM(f, 100 * sc->assumptions.failure_progress_fraction);
        return add_sentence(findings,
                            "failed attempts are %s: a %s%% failure rate reruns the setup and "
                            "about %s%% of the run each time",
                            share, q, f);
    }
    case COST_B_UNUSED_RESERVATION: {
        NUM(u, 100 * r->paid_utilization);
        NUM(factor, 1 / r->paid_utilization);
        return add_sentence(findings,
                            "unused reservation is %s: at %s%% utilisation each used hour costs "
                            "%s× the price",
                            share, u, factor);
    }
    case COST_B_ORCHESTRATION: {
        NUM(o, 100 * opt->offer.orchestration_overhead);
        return add_sentence(findings, "orchestration overhead is %s (%s%% of compute)", share, o);
    }
    case COST_B_STORAGE: {
        if (sc->engine >= 2) {
            NUM(ckpt, sc->workload.checkpoint_gb * sc->workload.checkpoints_kept);
            NUM(months, sc->assumptions.retention_months);
            NUM(data, r->stored_dataset_gb);
            NUM(volume, sc->assumptions.planned_outcomes);
            return add_sentence(findings,
                                "storage is %s: %s GB of checkpoints kept for %s month(s) per "
                                "run, and a month of %s GB of dataset shared by %s outcome(s)",
                                share, ckpt, months, data, volume);
        }
        NUM(gb,
            sc->workload.checkpoint_gb * sc->workload.checkpoints_kept + sc->workload.dataset_gb);
        NUM(months, sc->assumptions.retention_months);
        return add_sentence(findings, "storage is %s: %s GB kept for %s month(s)", share, gb,
                            months);
    }
    case COST_B_TRANSFER: {
        if (sc->engine >= 2) {
            NUM(gb, r->read_gb);
            return add_sentence(findings,
                                "data transfer is %s: %s GB of egress per useful result; keep "
                                "the data where the GPUs are, or stage a copy once a month",
                                share, gb);
        }
        NUM(gb, b->transfer_gb);
        return add_sentence(findings,
                            "data transfer is %s: %s GB of egress; keep the data in "
                            "the provider's region",
                            share, gb);
    }
    case COST_B_ENGINEER_WAIT: {
        double queue_part = r->queue_s / (1 - r->failure_probability);
        if (queue_part >= r->billed_s) {
            NUM(queue, r->queue_s);
            return add_sentence(findings, "engineer wait is %s: the %s s queue dominates", share,
                                queue);
        }
        NUM(hours, r->billed_s / 3600);
        return add_sentence(findings,
                            "engineer wait is %s: the %s h run itself keeps the engineer waiting",
                            share, hours);
    }
    case COST_B_REJECTED_RUNS: {
        NUM(pct, 100 * r->acceptance);
        NUM(runs, 1 / r->acceptance);
        return add_sentence(findings,
                            "rejected runs are %s: %s%% of completed runs reach the target "
                            "quality, so each useful result pays for %s runs",
                            share, pct, runs);
    }
    default:
        return 0;
    }
}

int cost_findings_batch(const struct cost_scenario *sc, const struct cost_option *opt,
                        const struct cost_batch_result *r, unsigned reasons, json_t *findings)
{
    if (common_reasons(findings, opt, reasons, r->gpus_at_peak, sc->assumptions.memory_headroom) !=
        0)
        return -1;
    if ((reasons & COST_REASON_INTERRUPTIONS) && r->runs &&
        add_sentence(findings, "too many of its slower throughput draws cannot finish between "
                               "interruptions to give a reliable cost: checkpoint more often") != 0)
        return -1;
    if (reasons & COST_REASON_INTERRUPTIONS && !r->runs) {
        NUM(rate, r->interruption_rate_per_s * 3600);
        NUM(segment, r->interval_s + opt->bench.checkpoint_write_s);
        NUM(restart, opt->bench.restart_s);
        return add_sentence(findings,
                            "cannot finish between interruptions: %s per hour against %s s "
                            "segments and %s s restarts; checkpoint more often",
                            rate, segment, restart);
    }
    if (!r->runs)
        return 0;
    double useful_share = r->breakdown[COST_B_USEFUL] / r->total;
    if (useful_share < 0.5 && add_sentence(findings, "only %.0f%% of the cost is useful GPU work",
                                           100 * useful_share) != 0)
        return -1;
    int items[FINDING_MAX_ITEMS];
    int n =
        largest_items(r->breakdown, COST_B_ITEMS_OF(sc->engine), COST_B_USEFUL, r->total, items);
    for (int k = 0; k < n; k++) {
        char share[64];
        share_phrase(r->breakdown[items[k]] / r->total, share, sizeof share);
        if (batch_item_sentence(findings, sc, opt, r, items[k], share) != 0)
            return -1;
    }
    return 0;
}

static int inference_item_sentence(json_t *findings, const struct cost_scenario *sc,
                                   const struct cost_inference_result *r, int item,
                                   const char *share)
{
    const struct cost_service *svc = &sc->service;
    switch (item) {
    case COST_I_IDLE_CAPACITY: {
        NUM(util, 100 * r->utilization);
        return add_sentence(findings,
                            "idle capacity is %s: only %s%% of replica-hours serve demand; "
                            "autoscale or share a pool",
                            share, util);
    }
    case COST_I_SPARES: {
        NUM(spares, svc->spares);
        return add_sentence(findings, "spare replicas are %s: %s kept up every hour", share,
                            spares);
    }
    case COST_I_REVIEW: {
        NUM(each, svc->review_cost_per_request);
        return add_sentence(findings, "human review is %s: %s %s per request", share, each,
                            sc->currency);
    }
    case COST_I_RETRIES: {
        NUM(pct, 100 * svc->retry_rate);
        return add_sentence(findings, "retries are %s: %s%% of requests are sent again", share,
                            pct);
    }
    case COST_I_COLD_STARTS: {
        NUM(cold, svc->cold_start_s);
        return add_sentence(findings,
                            "cold starts are %s: %s s per replica added; scale earlier or keep "
                            "a warm pool",
                            share, cold);
    }
    case COST_I_INTERRUPTIONS:
        return add_sentence(findings, "replacing interrupted replicas is %s", share);
    case COST_I_UNUSED_RESERVATION:
        return add_sentence(findings, "unused reservation is %s", share);
    case COST_I_ORCHESTRATION:
        return add_sentence(findings, "orchestration overhead is %s", share);
    case COST_I_UNSERVED: {
        NUM(pct, 100 * (1 - r->slo_attainment));
        return add_sentence(findings, "unserved requests are %s: %s%% of demand is shed", share,
                            pct);
    }
    default:
        return 0;
    }
}

int cost_findings_inference(const struct cost_scenario *sc, const struct cost_option *opt,
                            const struct cost_inference_result *r, unsigned reasons,
                            double gpus_at_peak, json_t *findings)
{
    const struct cost_service *svc = &sc->service;
    if (common_reasons(findings, opt, reasons, gpus_at_peak, svc->memory_headroom) != 0)
        return -1;
    NUM(target, svc->slo_target_ms);
    if (!isfinite(r->capacity_rps)) {
        NUM(max_err, 100 * svc->max_error_rate);
        return add_sentence(findings,
                            "no load point meets %s ≤ %s ms with at most %s%% errors: measure "
                            "lower loads",
                            svc->slo_metric, target, max_err);
    }
    NUM(capacity, r->capacity_rps);
    if (sc->engine >= 2 && svc->slo_count > 1) {
        char all[512] = "";
        for (size_t m = 0; m < svc->slo_count; m++) {
            NUM(t, svc->slo_targets_ms[m]);
            size_t len = strlen(all);
            snprintf(all + len, sizeof all - len, "%s%s ≤ %s ms", m ? " and " : "",
                     svc->slo_metrics[m], t);
        }
        if (add_sentence(findings, "one replica serves %s requests/s within %s", capacity, all) !=
            0)
            return -1;
    } else if (add_sentence(findings, "one replica serves %s requests/s within %s ≤ %s ms",
                            capacity, svc->slo_metric, target) != 0) {
        return -1;
    }
    if (reasons & COST_REASON_SLO_CAPACITY) {
        NUM(floor, 100 * svc->min_slo_attainment);
        if (add_sentence(findings,
                         "cannot hold the SLO under every demand scenario: below %s%% of demand "
                         "served within it in at least one (slo_capacity_scenarios names them)",
                         floor) != 0)
            return -1;
    }
    if (!r->runs)
        return 0;
    int items[FINDING_MAX_ITEMS];
    int n =
        largest_items(r->breakdown, COST_I_ITEMS_OF(sc->engine), COST_I_USEFUL, r->total, items);
    for (int k = 0; k < n; k++) {
        char share[64];
        share_phrase(r->breakdown[items[k]] / r->total, share, sizeof share);
        if (inference_item_sentence(findings, sc, r, items[k], share) != 0)
            return -1;
    }
    return 0;
}
