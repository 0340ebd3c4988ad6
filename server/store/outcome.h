/* Realised against predicted (core/ledger/outcome.h): the facts of one decision gathered from
 * the log, its review, its comparison and the runs of the review's workloads since it, decided
 * by outcome_decide. */
#ifndef CAPLEDGER_STORE_OUTCOME_H
#define CAPLEDGER_STORE_OUTCOME_H

#include "store/scope.h"
#include "store/store.h"

/* Runs needed for a verdict (the drift check's bar). */
#define OUTCOME_MIN_RUNS 20

/* *out: outcome_decide's answer with {decision_id, review_id, owner, decision, received_at,
 * hidden_workloads (the review's workloads of teams outside scope, left out of the figures),
 * window: {from, until} (until: when a later decision superseded it, else null), workloads:
 * [{id, name, team, matched_by: runs_match|team_and_class}], run_uploads: [the first 20 ids]}.
 * The runs: of each of the review's workloads, its team's runs its runs_match recognises (a
 * workload without one: its team's runs whose class label maps to its class), submitted in the
 * window, priced by the cluster maps (partition and GPU model, then partition). The decision is
 * read as store_decision_get reads it (fault set, *out NULL, when its row differs from its
 * leaf); scope as there (STORE_NOT_FOUND for a decision the caller may not see). */
enum store_status store_decision_outcome(struct store *s, const char *decision_id,
                                         const struct team_scope *scope, char *fault,
                                         size_t fault_size, json_t **out) STORE_MUSTCHECK;

/* The most decisions the track record reads (the latest first kept). */
#define OUTCOME_TRACK_MAX 200

/* The track record (core/ledger/outcome.h outcome_track_record) over the decisions of the
 * reviews the caller may see, each scored as store_decision_outcome scores it (teams: those of
 * the review's workloads the caller may see), with {decisions: [{decision_id, review_id, signer,
 * decision, received_at, verdict, error}], truncated}. fault as store_decision_get's. */
enum store_status store_decisions_track_record(struct store *s, const struct team_scope *scope,
                                               char *fault, size_t fault_size,
                                               json_t **out) STORE_MUSTCHECK;

#endif
