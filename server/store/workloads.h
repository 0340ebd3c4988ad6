/* Workload profiles: the scenario `workload` of docs/cost-model.md plus the rest of the profile
 * (docs/evidence.md). Documents are validated by the HTTP layer (h_workloads.c) and stored as typed
 * columns named like the JSON fields; rows come back as that JSON, with id, version,
 * created_by, created_at and updated_at. */
#ifndef CAPLEDGER_STORE_WORKLOADS_H
#define CAPLEDGER_STORE_WORKLOADS_H

#include "store/audit.h"
#include "store/evlist.h"
#include "store/store.h"

/* doc: a validated object of client fields (borrowed). STORE_CONFLICT: (team, name) exists;
 * STORE_INVALID: the team does not exist. */
enum store_status store_workload_create(struct store *s, const struct audit_actor *who,
                                        const json_t *doc, json_t **out) STORE_MUSTCHECK;
enum store_status store_workload_get(struct store *s, const char *id, json_t **out) STORE_MUSTCHECK;
/* Filters used: scope (the visible teams), team, kind, class, created from/to. */
enum store_status store_workload_list(struct store *s, const struct evlist_query *q,
                                      json_t **out) STORE_MUSTCHECK;
/* Replaces every client field with doc's (nulls clear) when the row is still at
 * expected_version; version goes up by one. STORE_NOT_FOUND when the id is gone or the version
 * moved on (the caller read it a moment ago: a concurrent update, i.e. 412). */
enum store_status store_workload_update(struct store *s, const struct audit_actor *who,
                                        const char *id, long expected_version, const json_t *doc,
                                        json_t **out) STORE_MUSTCHECK;

#endif
