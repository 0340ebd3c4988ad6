/* 90-day reviews, their artifacts, and the seven-item evidence checklist (docs/reviews.md)
 * that the decision gate applies. */
#ifndef CAPLEDGER_STORE_REVIEWS_H
#define CAPLEDGER_STORE_REVIEWS_H

#include "core/problems.h"
#include "store/audit.h"
#include "store/evlist.h"
#include "store/store.h"

/* A review as the API shows it: {id, title, question, workload_ids, owner, started_on, status,
 * drift_threshold, day, current_phase, phases: [{phase, title, first_day, last_day, starts_on,
 * ends_on, current}], version, created_by, created_at, updated_at}. */

/* doc: validated {title, question, workload_ids, owner, started_on[, drift_threshold]}.
 * References are checked here: an owner that is not a user with role owner, or a workload id
 * that does not exist, is appended to p under its JSON Pointer and STORE_INVALID returned
 * (nothing written). */
enum store_status store_review_create(struct store *s, const struct audit_actor *who,
                                      const json_t *doc, struct problems *p,
                                      json_t **out) STORE_MUSTCHECK;
/* scope: the caller's team scope (all = every review; else only reviews with a
 * workload of one of those teams). STORE_NOT_FOUND when absent or not visible. */
enum store_status store_review_get(struct store *s, const char *id, const struct team_scope *scope,
                                   json_t **out) STORE_MUSTCHECK;
/* q: scope, state (?status=), team (?owner=), keyset after_at/after_id, limit. */
enum store_status store_review_list(struct store *s, const struct evlist_query *q,
                                    json_t **out) STORE_MUSTCHECK;
/* doc: the whole merged, validated review; applied only when the stored version is
 * expected_version (else STORE_CONFLICT: the handler answers 412). References checked as in
 * create. */
enum store_status store_review_update(struct store *s, const struct audit_actor *who,
                                      const char *id, long expected_version, const json_t *doc,
                                      struct problems *p, json_t **out) STORE_MUSTCHECK;

/* Artifacts: {id, review_id, title, phase, contributor, due_on, representative_inputs,
 * baseline, status, evidence: [ids], exercised: [{condition, exercised, outcome}], version,
 * created_by, created_at, updated_at}. doc is validated by the caller; evidence ids that name
 * no benchmark, upload or stored comparison are appended to p as /evidence/<i> and
 * STORE_INVALID returned. */
/* For team members: a problem at prefix/N for each id of ids (evidence) the member may not see
 * (scope: their teams; user_id: theirs), worded as for an unknown id. */
enum store_status store_evidence_foreign(struct store *s, const json_t *ids,
                                         const struct team_scope *scope, const char *user_id,
                                         const char *prefix, struct problems *p) STORE_MUSTCHECK;
/* For a team member reading an artifact of a review shared with other teams: removes from its
 * `evidence` the ids the caller's teams may not see, and sets `evidence_hidden` to how many were
 * removed (*hidden too; the artifact is left alone when none are). */
enum store_status store_evidence_hide_foreign(struct store *s, json_t *artifact,
                                              const struct team_scope *scope, const char *user_id,
                                              size_t *hidden);

/* For a team member reading a decision of a review shared with other teams: in the signed
 * record's `evidence` and `comparison_sha256` (and the row's copy of the latter), each id the
 * caller's teams may not see becomes the string "hidden" (the positions stay), and the
 * decision row gets `evidence_hidden`, how
 * many (*hidden too; the row is left alone when none are). The record as shown then no longer
 * verifies against its signature: the full record is in the log's entries and audit bundles. */
enum store_status store_decision_hide_foreign(struct store *s, json_t *decision,
                                              const struct team_scope *scope, const char *user_id,
                                              size_t *hidden);

enum store_status store_artifact_create(struct store *s, const struct audit_actor *who,
                                        const char *review_id, const json_t *doc,
                                        struct problems *p, json_t **out) STORE_MUSTCHECK;
enum store_status store_artifact_list(struct store *s, const char *review_id,
                                      json_t **out) STORE_MUSTCHECK;
enum store_status store_artifact_get(struct store *s, const char *review_id, const char *id,
                                     json_t **out) STORE_MUSTCHECK;
enum store_status store_artifact_update(struct store *s, const struct audit_actor *who,
                                        const char *review_id, const char *id,
                                        long expected_version, const json_t *doc,
                                        struct problems *p, json_t **out) STORE_MUSTCHECK;

/* Appends "<prefix>/<i>: names no benchmark, upload or stored comparison" to p for each id of
 * the array ids that is none of those. Runs on c (inside the caller's transaction). */
enum store_status store_evidence_check(struct store_conn *c, const json_t *ids, const char *prefix,
                                       struct problems *p) STORE_MUSTCHECK;

/* The checklist of review_id against the comparisons cited (array of sha256 hex; the first is
 * the one the decision rests on). cited NULL: the latest stored comparison of the review's
 * workloads, if any. *out: {review_id, comparison_sha256 (the first cited, or null), covered
 * (all seven), items: [{item, covered, evidence: [ids], missing: [sentences]}]} in the
 * docs/reviews.md order, decided by checklist_decide (core/ledger/checklist.h) from the facts this
 * gathers. scope: the caller's team scope (NULL or all: every team): only the
 * workloads, comparisons, benchmarks and runs of those teams count, so a team member's checklist
 * never rests on, or names, another team's evidence. Runs on c. STORE_NOT_FOUND when the
 * review does not exist. */
enum store_status store_review_checklist_tx(struct store_conn *c, const char *review_id,
                                            const json_t *cited, const struct team_scope *scope,
                                            json_t **out) STORE_MUSTCHECK;
/* The same on a pooled connection. */
enum store_status store_review_checklist(struct store *s, const char *review_id,
                                         const json_t *cited, const struct team_scope *scope,
                                         json_t **out) STORE_MUSTCHECK;

#endif
