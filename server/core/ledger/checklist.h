/* The seven-item evidence checklist of a review (docs/reviews.md),
 * decided from facts the store gathers: pure, so every item and every sentence it can write is
 * unit-tested without a database (tests/unit/test_checklist.c).
 *
 * Each item is covered when nothing is missing; for each thing missing it writes one sentence
 * a reader can act on, and it cites the ids of the evidence it rests on (workloads, benchmarks,
 * uploads, comparisons). A figure counts as measured only when it comes from a stored
 * benchmark the scenario named by id: numbers typed into a scenario are assumptions. */
#ifndef CAPLEDGER_CORE_CHECKLIST_H
#define CAPLEDGER_CORE_CHECKLIST_H

#include <jansson.h>

/* Fewest runs (or benchmark repetitions) that count as evidence of a failure rate or of a
 * cluster's queue waits. */
#define CHECKLIST_MIN_RUNS 20

/* What the checklist is decided from. Every member is borrowed.
 * workloads: the review's workloads, in its order: [{id, name, team, class, target_units?,
 *   memory_required_gb?, dataset_gb?, dataset_location?, team_runs (GPU runs of the team and
 *   class), team_run_uploads: [upload ids of those runs], benchmark_repetitions (summed over the
 *   workload's benchmarks), benchmarks: [their ids]}].
 * cited: the comparisons cited, first the one the decision rests on: [{sha256, stored (bool),
 *   workload_ids: [ids it answers for] (when stored), and for the first only: resolved (the
 *   resolved scenario), result}].
 * options: when the first cited comparison is stored (checklist_compared), one entry per option
 *   of its resolved scenario, in order: {name, benchmark_id (the stored benchmark the scenario
 *   named by id, or null), data_loading_s?, telemetry (bool: derived telemetry exists),
 *   telemetry_uploads: [ids], offer_name?, cluster_runs (started GPU runs of the option's or
 *   the offer's cluster), cluster_run_uploads: [ids]}; otherwise unused.
 * cited_by_caller: 1 when cited came with the request (a decision record), 0 when it is the
 *   latest stored comparison of the review's workloads (or empty: there is none).
 * unmapped_classes: the class labels of the workloads' teams' runs that no tier mapping names
 *   (their runs count as exploratory): [labels], or NULL.
 * typed_vs_evidence: contradiction_decide's list for the first cited comparison, or NULL. */
struct checklist_facts {
    const json_t *workloads;
    const json_t *cited;
    const json_t *options;
    int cited_by_caller;
    const json_t *unmapped_classes;
    const json_t *typed_vs_evidence;
};

/* The first cited comparison when it is stored (its options are then the checklist's to
 * check), else NULL. Borrowed from cited. */
const json_t *checklist_compared(const json_t *cited);

/* {covered (all seven), items: [{item, covered, status, evidence: [ids], missing: [sentences]}],
 * unmapped_classes: [labels], typed_vs_evidence: [...]} in the docs/reviews.md order; status is
 * "missing" (not covered), "contradicted" (covered, but a typed assumption of the item that the
 * evidence contradicts: it changes the winner), else "covered"; NULL only when out of memory. A
 * workload's runs are those of its team whose class label maps to the workload's class (its
 * tier); an unmapped label counts as exploratory, and the failure item names the unmapped
 * labels when it is not covered. */
json_t *checklist_decide(const struct checklist_facts *facts);

#endif
