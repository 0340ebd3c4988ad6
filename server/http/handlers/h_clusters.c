/* Clusters: GET /clusters, GET /clusters/{name} (everyone signed in) and PUT /clusters/{name}
 * (owners): per partition (and GPU model) of a cluster, the workload class of its runs and the
 * offer that prices its GPU-hours. A PUT replaces the whole map; runs uploaded afterwards are
 * classed by it, and the usage report prices GPU-hours by it. */
#include <stdio.h>
#include <string.h>

#include "core/formats/evfield.h"
#include "http/internal.h"
#include "http/page.h"
#include "store/clusters.h"

#define CLUSTER_MAX_PARTITIONS 1000

static const struct evfield PARTITION_FIELDS[] = {
    {"partition", EVF_STRING, EVF_REQUIRED, 0, 0, 127, NULL, NULL},
    {"gpu_model", EVF_STRING, 0, 0, 0, 127, NULL, NULL},
    {"workload_class", EVF_LABEL, 0, 0, 0, 0, NULL, NULL},
    {"offer_id", EVF_UUID, 0, 0, 0, 0, NULL, NULL},
    /* the GPUs the partition holds: the baseline a what-if backtest replays (docs/whatif.md) */
    {"capacity_gpus", EVF_NUMBER, 0, 0, 1e6, 0, NULL, NULL},
    EVF_END,
};

static const struct evfield CLUSTER_FIELDS[] = {
    {"default_class", EVF_LABEL, 0, 0, 0, 0, NULL, NULL},
    {"description", EVF_STRING, 0, 0, 0, 2000, NULL, NULL},
    {"partitions", EVF_ARRAY, EVF_REQUIRED, 0, 0, CLUSTER_MAX_PARTITIONS, NULL, PARTITION_FIELDS},
    EVF_END,
};

/* A cluster name as runs carry it (?cluster= of an upload): 1-127 bytes. */
static int cluster_name_ok(const char *name)
{
    size_t len = strlen(name);
    return len >= 1 && len <= 127;
}

/* What evfield cannot say: each entry classes, prices or records capacity (or several), and
 * names a (partition, GPU model) once. */
static void check_entries(const json_t *partitions, struct problems *p)
{
    size_t i, j;
    json_t *e, *f;
    char ptr[64];
    json_array_foreach(partitions, i, e)
    {
        if (!json_is_object(e))
            continue;
        snprintf(ptr, sizeof ptr, "/partitions/%zu", i);
        json_t *klass = json_object_get(e, "workload_class"),
               *offer = json_object_get(e, "offer_id"), *cap = json_object_get(e, "capacity_gpus");
        if ((!klass || json_is_null(klass)) && (!offer || json_is_null(offer)) &&
            (!cap || json_is_null(cap)))
            problems_add(p, ptr, "give a workload_class, an offer_id, a capacity_gpus, or several");
        const char *part = json_string_value(json_object_get(e, "partition"));
        const char *gpu = json_string_value(json_object_get(e, "gpu_model"));
        for (j = 0; j < i && part; j++) {
            f = json_array_get(partitions, j);
            const char *p2 = json_string_value(json_object_get(f, "partition"));
            const char *g2 = json_string_value(json_object_get(f, "gpu_model"));
            if (p2 && strcmp(p2, part) == 0 && strcmp(g2 ? g2 : "", gpu ? gpu : "") == 0) {
                problems_add(p, ptr, "partition '%s'%s%s is already mapped at /partitions/%zu",
                             part, gpu ? " with gpu_model " : "", gpu ? gpu : "", j);
                break;
            }
        }
    }
}

static void cluster_put(struct req *r)
{
    struct problems p;
    problems_init(&p);
    json_t *out = NULL;
    const char *name = r->params[0];
    if (!cluster_name_ok(name)) {
        resp_problem(r, 404, "not-found", "Not found", "a cluster name is 1-127 bytes");
        goto out;
    }
    if (!json_is_object(r->body)) {
        problems_add(&p, "", "a cluster is a JSON object {default_class, description, partitions}");
        resp_invalid(r, &p, NULL);
        goto out;
    }
    evfield_check(r->body, CLUSTER_FIELDS, "", 0, NULL, &p);
    check_entries(json_object_get(r->body, "partitions"), &p);
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    struct audit_actor who;
    enum store_status st =
        store_cluster_put(r->app->store, req_actor(r, &who), name, r->body, &p, &out);
    if (st == STORE_INVALID && p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    resp_stored(r, st, out, "cluster");
    out = NULL;
out:
    json_decref(out);
    problems_free(&p);
}

static void cluster_get(struct req *r)
{
    json_t *c = NULL;
    enum store_status st = cluster_name_ok(r->params[0])
                               ? store_cluster_get(r->app->store, r->params[0], &c)
                               : STORE_NOT_FOUND;
    resp_stored(r, st, c, "cluster");
}

static void cluster_list(struct req *r)
{
    page_list(r, PAGE_TEXT, store_cluster_list, "clusters", "name");
}

const struct route cluster_routes[] = {
    {"GET", "/api/v1/clusters", cluster_list, ROLES_USERS, ROUTE_STANDBY, "limit cursor", NULL},
    {"GET", "/api/v1/clusters/{name}", cluster_get, ROLES_USERS, ROUTE_STANDBY, NULL, NULL},
    {"PUT", "/api/v1/clusters/{name}", cluster_put, ROLE_OWNER, ROUTE_JSON_BODY, NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
