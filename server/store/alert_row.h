/* The JSON of an alert row, as every alert query returns it (store/alerts.c, store/alert_sink.c;
 * private to the store). */
#ifndef CAPLEDGER_STORE_ALERT_ROW_H
#define CAPLEDGER_STORE_ALERT_ROW_H

#define ALERT_JSON                                                                                 \
    "json_build_object('id', a.id, 'kind', a.kind, 'review_id', a.review_id, "                     \
    "'decision_id', a.decision_id, 'owner', a.owner, 'metric', a.metric, 'assumed', a.assumed, "   \
    "'observed', a.observed, 'relative_change', a.relative_change, 'threshold', a.threshold, "     \
    "'sample_size', a.sample_size, 'evidence', a.evidence, 'message', a.message, "                 \
    "'status', a.status, 'note', a.note, 'version', a.version, 'created_at', a.created_at, "       \
    "'updated_at', a.updated_at, 'updated_by', a.updated_by)"

#endif
