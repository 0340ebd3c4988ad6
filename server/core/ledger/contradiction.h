/* Typed against evidence, before anyone signs (docs/reviews.md "Typed against evidence"): the
 * assumptions a comparison's scenario types by hand that the stored evidence also gives, side
 * by side, with the gap and whether the evidence value changes the winner. Pure: the store
 * gathers the evidence figures; contradiction_evaluate recomputes the comparison with each
 * (cost_compare) and decides. tests/unit/test_contradiction.c.
 *
 * Checked: the scenario's assumptions.failure_probability (and an option's inline benchmark
 * failure_probability), against the failed share of the attempts among the GPU runs of the
 * review's workloads' teams and classes; an option's inline benchmark queue_wait_s, against the
 * mean wait of the started GPU runs of its cluster. A figure of a stored benchmark (measured) or
 * resolved from *_from (docs/evidence.md) is evidence already and is not checked. */
#ifndef CAPLEDGER_CORE_CONTRADICTION_H
#define CAPLEDGER_CORE_CONTRADICTION_H

#include <jansson.h>

/* Fewest runs whose figure counts as evidence against a typed one (the checklist's bar). */
#define CONTRADICTION_MIN_RUNS 20

/* The candidates: every typed assumption the evidence also gives.
 * resolved: the comparison's resolved scenario. options: the checklist's per-option facts (in
 *   order: {benchmark_id (stored) or null, ...}). evidence: {failure: {attempts, failed,
 *   uploads: [ids]}, queue: [{runs, mean_s, uploads} per option, in order]}.
 * Returns [{assumption (JSON Pointer into the scenario), field, option (name or null), item
 * (the checklist item it belongs to), typed, evidence, runs, uploads}] (new reference). */
json_t *contradiction_candidates(const json_t *resolved, const json_t *options,
                                 const json_t *evidence);

/* A copy of resolved with the candidate's evidence value at its pointer (new reference), to be
 * recomputed; NULL when out of memory. */
json_t *contradiction_scenario(const json_t *resolved, const json_t *candidate);

/* Decides each candidate given the winner of the comparison as stored (winner) and, in
 * winners_after (same order), the winner of its recomputation (a string, or null when the
 * recomputation failed or has no feasible option): adds to each {gap (evidence − typed, relative
 * to max(|typed|, floor)), winner, winner_with_evidence, changes_winner, contradicted}. A
 * candidate is contradicted when its evidence value makes another option the winner, or leaves
 * none (winners_after null while winner is not: with every attempt failed, say, no option
 * computes). Returns the list (new reference). */
json_t *contradiction_decide(const json_t *candidates, const char *winner,
                             const json_t *winners_after);

/* The whole verdict from the facts: the candidates, the stored scenario and each candidate's
 * scenario recomputed with cost_compare (only when there is a candidate), decided as above.
 * Returns the decided list (new reference), NULL when out of memory. */
json_t *contradiction_evaluate(const json_t *resolved, const json_t *options,
                               const json_t *evidence);

#endif
