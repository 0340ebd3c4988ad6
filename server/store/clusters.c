/* Clusters and their partition maps. */
#include "store/clusters.h"

#include <stdio.h>
#include <stdlib.h>

#include "store/uploads.h"

#define CLUSTER_JSON(c)                                                                            \
    "jsonb_build_object('name', " c ".name, 'default_class', " c ".default_class, "                \
    "'description', " c ".description, 'version', " c ".version, 'updated_by_name', " c            \
    ".updated_by_name, 'created_at', " c ".created_at, 'updated_at', " c ".updated_at, "           \
    "'partitions', (SELECT coalesce(jsonb_agg(jsonb_build_object('partition', cp.partition, "      \
    "'gpu_model', nullif(cp.gpu_model, ''), 'workload_class', cp.workload_class, 'offer_id', "     \
    "cp.offer_id, 'price_per_gpu_hour', o.price_per_hour / o.gpus_per_instance, 'currency', "      \
    "o.currency, 'capacity_gpus', cp.capacity_gpus) ORDER BY cp.partition, cp.gpu_model), '[]') "  \
    "FROM cluster_partition cp "                                                                   \
    "LEFT JOIN offer o ON o.id = cp.offer_id WHERE cp.cluster = " c ".name))"

/* One statement: upsert the cluster, drop the partitions no longer listed, upsert the rest.
 * (The input has no two entries with the same partition and GPU model: checked before.) */
static const char *SQL_PUT =
    "WITH x AS (SELECT e.partition, coalesce(e.gpu_model, '') AS gpu_model, e.workload_class, "
    "e.offer_id, e.capacity_gpus FROM jsonb_to_recordset(coalesce($3::jsonb -> 'partitions', "
    "'[]')) AS e(partition text, gpu_model text, workload_class text, offer_id uuid, "
    "capacity_gpus double precision)), "
    "c AS (INSERT INTO cluster (name, default_class, description, updated_by_name) VALUES ($1, "
    "$3::jsonb ->> 'default_class', $3::jsonb ->> 'description', $2) ON CONFLICT (name) DO "
    "UPDATE SET default_class = EXCLUDED.default_class, description = EXCLUDED.description, "
    "version = cluster.version + 1, updated_by_name = EXCLUDED.updated_by_name, updated_at = "
    "now() RETURNING *), "
    "d AS (DELETE FROM cluster_partition cp WHERE cp.cluster = $1 AND NOT EXISTS (SELECT 1 "
    "FROM x WHERE x.partition = cp.partition AND x.gpu_model = cp.gpu_model)), "
    "i AS (INSERT INTO cluster_partition (cluster, partition, gpu_model, workload_class, "
    "offer_id, capacity_gpus) SELECT $1, partition, gpu_model, workload_class, offer_id, "
    "capacity_gpus FROM x ON CONFLICT (cluster, partition, gpu_model) DO UPDATE SET "
    "workload_class = EXCLUDED.workload_class, offer_id = EXCLUDED.offer_id, capacity_gpus = "
    "EXCLUDED.capacity_gpus) "
    "SELECT jsonb_build_object('id', c.name, 'name', c.name, 'version', c.version, "
    "'partitions', (SELECT count(*) FROM x)) FROM c";

/* Offers named by the map that do not exist, and entries priced in another currency than the
 * rest of the cluster maps (the other clusters' currency first, else this map's first). */
static const char *SQL_CHECK =
    "WITH e AS (SELECT i - 1 AS i, (v ->> 'offer_id')::uuid AS offer_id FROM "
    "jsonb_array_elements(coalesce($1::jsonb -> 'partitions', '[]')) WITH ORDINALITY a(v, i) "
    "WHERE v ->> 'offer_id' IS NOT NULL), "
    "eo AS (SELECT e.i, e.offer_id, o.currency FROM e LEFT JOIN offer o ON o.id = e.offer_id), "
    "others AS (SELECT DISTINCT o.currency FROM cluster_partition cp JOIN offer o ON o.id = "
    "cp.offer_id WHERE cp.cluster <> $2), "
    "want AS (SELECT coalesce((SELECT min(currency) FROM others), (SELECT currency FROM eo "
    "WHERE currency IS NOT NULL ORDER BY i LIMIT 1)) AS currency) "
    "SELECT jsonb_build_object('missing', (SELECT coalesce(jsonb_agg(i ORDER BY i), '[]') FROM "
    "eo WHERE currency IS NULL), 'currency', (SELECT currency FROM want), 'other_currency', "
    "(SELECT coalesce(jsonb_agg(jsonb_build_object('i', i, 'currency', eo.currency) ORDER BY "
    "i), '[]') FROM eo, want WHERE eo.currency <> want.currency))";

static const char *SQL_GET = "SELECT " CLUSTER_JSON("c") " FROM cluster c WHERE c.name = $1";

static const char *SQL_LIST =
    "SELECT coalesce(jsonb_agg(" CLUSTER_JSON("c") " ORDER BY c.name), '[]') FROM (SELECT * FROM "
                                                   "cluster WHERE $1::text IS NULL OR name > $1 "
                                                   "ORDER BY name LIMIT $2::integer) c";

/* wrapped: {name, map} */
static enum store_status check_map(struct store_conn *c, const json_t *wrapped, struct problems *p)
{
    char *text = store_doc_text(json_object_get(wrapped, "map"));
    if (!text)
        return STORE_ERROR;
    const char *name = json_string_value(json_object_get(wrapped, "name"));
    const char *params[] = {text, name};
    json_t *res = NULL;
    enum store_status st = store_json_tx(c, SQL_CHECK, STORE_ARGS(params), &res);
    free(text);
    if (st != STORE_OK)
        return st;
    char ptr[64];
    size_t k;
    json_t *v;
    json_array_foreach(json_object_get(res, "missing"), k, v)
    {
        snprintf(ptr, sizeof ptr, "/partitions/%lld/offer_id", (long long)json_integer_value(v));
        problems_add(p, ptr, "no offer has this id");
    }
    const char *want = json_string_value(json_object_get(res, "currency"));
    json_array_foreach(json_object_get(res, "other_currency"), k, v)
    {
        snprintf(ptr, sizeof ptr, "/partitions/%lld/offer_id",
                 (long long)json_integer_value(json_object_get(v, "i")));
        problems_add(p, ptr,
                     "this offer is priced in %s; the cluster maps price in %s (one currency, so "
                     "the usage report can add the costs up)",
                     json_string_value(json_object_get(v, "currency")), want ? want : "?");
    }
    json_decref(res);
    return STORE_OK;
}

enum store_status store_cluster_put(struct store *s, const struct audit_actor *who,
                                    const char *name, const json_t *doc, struct problems *p,
                                    json_t **out)
{
    *out = NULL;
    json_t *checked = json_pack("{s:s, s:O}", "name", name, "map", doc);
    char *text = store_doc_text(doc);
    if (!checked || !text) {
        json_decref(checked);
        free(text);
        return STORE_ERROR;
    }
    struct audit_check check = {.fn = check_map, .doc = checked, .p = p};
    const char *params[] = {name, who->name, text};
    json_t *row = NULL;
    enum store_status st = store_write_audited_checked(s, who, "cluster.put", &check, SQL_PUT,
                                                       STORE_ARGS(params), &row);
    json_decref(checked);
    free(text);
    json_decref(row);
    if (st == STORE_OK)
        st = store_cluster_get(s, name, out);
    return st;
}

enum store_status store_cluster_get(struct store *s, const char *name, json_t **out)
{
    const char *p[] = {name};
    return store_json(s, SQL_GET, STORE_ARGS(p), out);
}

enum store_status store_cluster_list(struct store *s, const char *after, int limit, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", limit);
    const char *p[] = {after, lim};
    return store_json(s, SQL_LIST, STORE_ARGS(p), out);
}
