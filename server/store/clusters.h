/* Clusters: per partition (and GPU model) the workload class of its runs and the offer that
 * prices its GPU-hours. Runs are classed by this map at upload; reports price by it. */
#ifndef CAPLEDGER_STORE_CLUSTERS_H
#define CAPLEDGER_STORE_CLUSTERS_H

#include "core/problems.h"
#include "store/audit.h"
#include "store/store.h"

/* Creates or replaces cluster `name` from doc {default_class?, description?, partitions: [{
 * partition, gpu_model?, workload_class?, offer_id?, capacity_gpus?}]} (validated by the caller;
 * borrowed). Every offer must exist and all offers of all cluster maps must share one currency:
 * else STORE_INVALID with a problem per bad entry (pointer /partitions/N/offer_id) in p, nothing
 * written. *out: the cluster as store_cluster_get renders it. */
enum store_status store_cluster_put(struct store *s, const struct audit_actor *who,
                                    const char *name, const json_t *doc, struct problems *p,
                                    json_t **out) STORE_MUSTCHECK;
/* {name, default_class, description, version, updated_by_name, created_at, updated_at,
 * partitions: [{partition, gpu_model, workload_class, offer_id, price_per_gpu_hour, currency,
 * capacity_gpus}]}
 */
enum store_status store_cluster_get(struct store *s, const char *name,
                                    json_t **out) STORE_MUSTCHECK;
/* Clusters ordered by name, at most limit after the name `after` (NULL: from the start). */
enum store_status store_cluster_list(struct store *s, const char *after, int limit,
                                     json_t **out) STORE_MUSTCHECK;

#endif
