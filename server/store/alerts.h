/* Drift alerts: evidence gathered after a decision (job accounting, new benchmarks) that departs
 * from the assumptions of the comparison the decision rests on. */
#ifndef CAPLEDGER_STORE_ALERTS_H
#define CAPLEDGER_STORE_ALERTS_H

#include "store/audit.h"
#include "store/store.h"

/* For each review whose latest decision is not `stop` and cites a comparison: reads what was
 * observed since the decision (GPU runs of the review workloads' teams and classes, new
 * benchmarks) and the decision's option (the chosen one, else the winner) in that comparison's
 * resolved scenario, and raises an alert for each metric the drift rule finds departed
 * (core/ledger/drift.h: failure rate, utilisation, queue wait, throughput) and for a realised
 * cost per completed run past the prediction (core/ledger/outcome.h). One alert per decision and
 * metric, addressed to the review's owner; it marks a decided review 'needs decision' — all in
 * one transaction per alert, audited. *raised counts new alerts. */
enum store_status store_alert_sweep(struct store *s, const struct audit_actor *who,
                                    int *raised) STORE_MUSTCHECK;

/* (alert_sink.c) An alert of kind log_integrity for every enabled owner and admin, its message
 * naming the evidence (once per addressee and message). */
enum store_status store_alert_log_integrity(struct store *s, const char *evidence) STORE_MUSTCHECK;
/* The same alert with `message` as it is (for evidence that does not stop the log, such as a
 * witness refusing a checkpoint because it cosigned another history). */
enum store_status store_alert_log_integrity_message(struct store *s,
                                                    const char *message) STORE_MUSTCHECK;

/* Alerts: {id, kind, review_id, decision_id, owner, metric, assumed, observed,
 * relative_change, threshold, sample_size, evidence, message, status, note, version,
 * created_at, updated_at, updated_by}. Every filter NULL when not given. */
struct alert_query {
    const char *owner, *status, *review_id;
    const char *after_at, *after_id; /* keyset on (created_at, id) */
    int limit;
};
enum store_status store_alert_list(struct store *s, const struct alert_query *q,
                                   json_t **out) STORE_MUSTCHECK;
enum store_status store_alert_get(struct store *s, const char *id, json_t **out) STORE_MUSTCHECK;
/* Sets status (acknowledged|resolved) and note when the stored version is expected_version
 * (else STORE_CONFLICT). */
enum store_status store_alert_update(struct store *s, const struct audit_actor *who, const char *id,
                                     long expected_version, const char *status, const char *note,
                                     json_t **out) STORE_MUSTCHECK;

#endif
