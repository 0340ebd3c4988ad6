/* Realised against predicted (docs/reviews.md "Realised against predicted"): what a decision's
 * runs cost per completed outcome since it was made, beside what its comparison predicted for
 * the chosen option, and whether the gap is a drift. Pure: the store gathers the facts
 * (store/outcome.c) and this decides; tests/unit/test_outcome.c covers every verdict.
 *
 * Like is compared with like. The realised figure is what job accounting can see: the GPU-hours
 * of the runs (gpus × (ended − started), every run that started, completed or not) priced by the
 * cluster maps, divided by the runs that COMPLETED. The predicted figure it is compared with is
 * the option's compute cost per outcome: the breakdown items billed as GPU time (useful,
 * input_stall, other_idle, setup, checkpoint_and_interruption, failed_attempts,
 * unused_reservation, and their share of rejected_runs), not orchestration, storage, transfer,
 * engineer wait or review, which no job accounting line carries. Both are reported. */
#ifndef CAPLEDGER_CORE_OUTCOME_H
#define CAPLEDGER_CORE_OUTCOME_H

#include <jansson.h>

/* The threshold when a review sets none: realised more than 20 % over the prediction. */
#define OUTCOME_DEFAULT_THRESHOLD 0.2

/* Every member is borrowed.
 * option: the decision's option in its comparison's result ({name, expected_cost_per_outcome,
 *   breakdown}), NULL when the comparison has none by that name.
 * currency: the comparison's.
 * realised: {runs, completed, gpu_hours, cost (priced GPU-hours), unpriced_runs,
 *   unpriced_gpu_hours, currencies: [of the prices used], months: [{month, runs, completed,
 *   gpu_hours, cost}]} over the runs of the review's workloads in the decision's window.
 * threshold: the review's outcome_threshold (> 0); min_runs: runs needed for a verdict. */
struct outcome_facts {
    const json_t *option;
    const char *currency;
    const json_t *realised;
    double threshold;
    long long min_runs;
};

/* The option's compute cost per outcome (see above); NAN when the option has no breakdown. */
double outcome_predicted_compute(const json_t *option);

/* {predicted: {option, currency, expected_cost_per_outcome, compute_cost_per_outcome},
 *  realised: {runs, completed, gpu_hours, cost, currency, cost_per_completed, unpriced_runs,
 *  unpriced_gpu_hours, months: [{month, runs, completed, gpu_hours, cost, cost_per_completed}]},
 *  error (realised / predicted compute − 1, or null), threshold, min_runs, verdict, reason}.
 * verdict: "within" (error ≤ threshold), "drift" (error > threshold, at least min_runs runs and
 * one completed), "too_few_runs", "no_completed_run" (min_runs runs, none completed: the
 * realised cost per outcome is unbounded, and no error is given), "not_comparable" (no
 * prediction, realised priced in another currency, or some GPU-hours priced by no map: the
 * priced cost over every completed run would understate it, so cost_per_completed is null).
 * NULL when out of memory. */
json_t *outcome_decide(const struct outcome_facts *f);

struct drift_metric;
/* The alert a drift of outcome_decide's answer raises, as a drift metric (core/ledger/drift.h):
 * "cost_per_outcome", the predicted compute cost per outcome assumed, the realised cost per
 * completed run observed over the runs counted, the outcome's own threshold; the signed error
 * in *rel. 0, or -1 (m untouched) when the verdict is not "drift". */
int outcome_drift_metric(const json_t *outcome, struct drift_metric *m, double *rel);

/* The track record (docs/reviews.md): from outcomes [{signer, teams: [..], verdict, error}, …]
 * (outcome_decide's answers with who signed and the teams of the review's workloads),
 * {owners: [{owner, decisions, scored, within_threshold, share_within_threshold,
 * median_error}], teams: [same with team]}, each sorted by name. scored counts the verdicts
 * within and drift (the others are not known yet); share_within_threshold = within / scored and
 * median_error the median of their errors (both null when none is scored). NULL when out of
 * memory. */
json_t *outcome_track_record(const json_t *outcomes);

#endif
