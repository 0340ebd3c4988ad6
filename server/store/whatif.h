/* What-if replays (docs/whatif.md): the job selection streamed from the stored runs, the
 * capacity a cluster records, and stored replays named by the SHA-256 of their result. */
#ifndef CAPLEDGER_STORE_WHATIF_H
#define CAPLEDGER_STORE_WHATIF_H

#include "store/audit.h"
#include "store/scope.h"
#include "store/store.h"

/* Which stored runs a replay takes: team required; the others narrow when not NULL (from, to:
 * RFC 3339, submitted_at in [from, to)). */
struct store_whatif_selection {
    const char *team, *cluster, *partition, *workload_class, *from, *to;
};

/* Streams the selected runs to fn, one row at a time, in queue order (submitted_at, then
 * CLUSTER/EXTERNAL_ID as bytes): values id (CLUSTER/EXTERNAL_ID), submitted, started (NULL:
 * never), ended (epoch seconds, truncated), gpus, state. fn returns non-zero to stop (the rest
 * is never sent). Nothing but the row in hand is held. */
enum store_status store_whatif_jobs(struct store *s, const struct store_whatif_selection *sel,
                                    store_row_fn fn, void *ctx) STORE_MUSTCHECK;

/* The GPUs the cluster records for the partition (NULL: every partition), summed over its
 * GPU models: STORE_NOT_FOUND when no entry records a capacity_gpus. */
enum store_status store_cluster_capacity(struct store *s, const char *cluster,
                                         const char *partition, double *gpus) STORE_MUSTCHECK;

/* Stores a replay for team (idempotent on sha256; the team's link is added once). *out: {sha256,
 * input_sha256, engine_version, jobs, team, selection, created_by, created_at, created (bool)}. */
enum store_status store_whatif_put(struct store *s, const struct audit_actor *who,
                                   const char *sha256, const char *input_sha256,
                                   const char *engine_version, size_t jobs, const char *team,
                                   const json_t *selection, const char *resolved_jcs,
                                   const char *result_jcs, json_t **out) STORE_MUSTCHECK;
/* A stored replay the scope may see: the row above with `result`. */
enum store_status store_whatif_get(struct store *s, const char *sha256,
                                   const struct team_scope *scope, json_t **out) STORE_MUSTCHECK;
/* Its resolved document, the bytes input_sha256 hashes (malloc'd, *len bytes). */
enum store_status store_whatif_input(struct store *s, const char *sha256,
                                     const struct team_scope *scope, char **bytes,
                                     size_t *len) STORE_MUSTCHECK;

#endif
