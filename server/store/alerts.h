/* Drift alerts: evidence gathered after a decision (job accounting, new benchmarks) that departs
 * from the assumptions of the comparison the decision rests on. */
#ifndef CAPLEDGER_STORE_ALERTS_H
#define CAPLEDGER_STORE_ALERTS_H

#include "store/audit.h"
#include "store/store.h"

/* Fewest GPU runs since a decision that give an observed failure rate, utilisation or queue
 * delay (the same bar as the checklist's). */
#define ALERT_MIN_RUNS 20

/* For each review whose latest decision is not `stop` and cites a comparison, compares what
 * happened since the decision with the assumptions of the decision's option (the chosen one,
 * else the winner) in that comparison's resolved scenario:
 *   failure_rate           share of GPU runs of the review workloads' teams and classes, not
 *                          COMPLETED (at least ALERT_MIN_RUNS runs) vs the option's or the
 *                          scenario's failure_probability;
 *   gpu_utilization        their mean gpu_utilization (at least ALERT_MIN_RUNS runs that
 *                          report it), else the mean duty cycle of new benchmarks, vs the
 *                          benchmark's gpu_duty_cycle (default 1);
 *   queue_wait_s           their mean wait from submission to start (at least ALERT_MIN_RUNS
 *                          started runs) vs the benchmark's queue_wait_s, else the offer's
 *                          provisioning_delay_s, else 0;
 *   throughput_units_per_s the mean throughput of succeeded, unsuperseded benchmarks of the
 *                          review's workloads (on the option's stored offer when the scenario
 *                          named one) created since the decision, vs the benchmark's.
 * A relative departure |observed − assumed| / max(|assumed|, floor) beyond the review's
 * drift_threshold (floors: 0.01 for fractions, 60 s for queue waits) raises one alert per
 * decision and metric, addressed to the review's owner, and marks a decided review
 * 'needs decision' — all in one transaction per alert, audited. *raised counts new alerts. */
enum store_status store_alert_sweep(struct store *s, const struct audit_actor *who,
                                    int *raised) STORE_MUSTCHECK;

/* An alert of kind log_integrity for every enabled owner and admin, its message naming the
 * evidence (once per addressee and message). */
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
