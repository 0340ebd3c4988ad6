/* The witness pusher: a background thread (one per server instance) that sends each new
 * checkpoint of the log to the witnesses of CAPLEDGER_WITNESSES over the C2SP tlog-witness
 * protocol (POST <url>/add-checkpoint with a consistency proof from the size the witness last
 * cosigned), checks the cosignature line each answers against that witness's key, and stores
 * it (store/ledger.h: store_log_cosigned), so that GET /log/checkpoint and the audit bundle
 * carry it. A witness that is down or refuses is retried with exponential backoff; nothing
 * here ever runs inside a request, so a decision never waits for a witness. */
#ifndef CAPLEDGER_HTTP_COSIGN_H
#define CAPLEDGER_HTTP_COSIGN_H

#include "store/store.h"

struct cosign_config {
    struct store *store;
    const char *witnesses; /* "VKEY URL, VKEY URL, …" (CAPLEDGER_WITNESSES); NULL or "": none */
    double timeout_s;      /* one attempt (default 5) */
    double retry_max_s;    /* the longest backoff (default 60) */
};

struct cosigner;

/* Starts the thread when witnesses are configured; NULL when there are none. *why is set
 * (and NULL returned) when the list does not parse. */
struct cosigner *cosign_start(const struct cosign_config *cfg, char *why, size_t why_size);
void cosign_stop(struct cosigner *c);
/* Whether `witnesses` (CAPLEDGER_WITNESSES) parses: 0, or -1 with *why naming the variable.
 * serve checks it before anything starts, and refuses to start (exit 2) on a bad value. */
int cosign_check(const char *witnesses, char *why, size_t why_size);

#endif
