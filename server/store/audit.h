/* The audit trail: one row per write. */
#ifndef CAPLEDGER_STORE_AUDIT_H
#define CAPLEDGER_STORE_AUDIT_H

#include "core/problems.h"
#include "store/store.h"

struct audit_actor {
    const char *user_id;  /* NULL when unknown */
    const char *name;     /* username, or "system" */
    const char *token_id; /* NULL unless authenticated by API token */
    const char *request_id;
    const char *idem_claim; /* the nonce of the Idempotency-Key claim the request holds, or NULL */
};

/* Records a write inside the caller's transaction. A write under an Idempotency-Key claim
 * (who->idem_claim) holds the claim to its commit; STORE_UNAVAILABLE when a retry settled the
 * claim meanwhile (the caller rolls back). */
enum store_status store_audit_record_tx(struct store_conn *c, const struct audit_actor *who,
                                        const char *action, const char *target_id,
                                        const json_t *change) STORE_MUSTCHECK;
/* Newest first; before_id: the last id seen (NULL from the newest). */
enum store_status store_audit_list(struct store *s, const char *before_id, int limit,
                                   json_t **out) STORE_MUSTCHECK;

/* Runs a write that returns one JSON row (…RETURNING json_build_object(…)) and records it in
 * the audit trail in the same transaction: either both happen or neither. The audit target
 * is the row's "id" (or "sha256" for content-addressed records); the change is the row. */
enum store_status store_write_audited(struct store *s, const struct audit_actor *who,
                                      const char *action, const char *sql, int nparams,
                                      const char *const *params, json_t **out) STORE_MUSTCHECK;

/* A check of references run inside the write's transaction, before the write: it appends a
 * problem per bad reference to p. */
struct audit_check {
    enum store_status (*fn)(struct store_conn *c, const json_t *doc, struct problems *p);
    const json_t *doc;
    struct problems *p;
    /* Optional: run after the write, in its transaction, with the written row (anything but
     * STORE_OK rolls the write back). */
    enum store_status (*then)(struct store_conn *c, const json_t *row, void *ctx);
    void *ctx;
};

/* store_write_audited with a check first (fn may be NULL; STORE_INVALID, nothing written,
 * when it appended problems) and an optional step after the write. check may be NULL. */
enum store_status store_write_audited_checked(struct store *s, const struct audit_actor *who,
                                              const char *action, const struct audit_check *check,
                                              const char *sql, int nparams,
                                              const char *const *params,
                                              json_t **out) STORE_MUSTCHECK;

#endif
