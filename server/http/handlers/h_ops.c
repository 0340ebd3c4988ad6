/* Operations endpoints: liveness, readiness, metrics and the API description. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/conns.h"
#include "http/internal.h"
#include "http/reads.h"
#include "store/changes.h"

static void healthz(struct req *r)
{
    resp_json(r, 200, json_pack("{s:s}", "status", "ok"));
}

/* Ready only when the database answers and every migration on disk is applied. */
static void readyz(struct req *r)
{
    char why[640] = ""; /* the log's evidence is up to 512 bytes */
    enum store_status st = store_ready(r->app->store, r->app->cfg->migrations_dir, why, sizeof why);
    if (st != STORE_OK) {
        resp_problem(r, 503, "not-ready", "Not ready", "%s", why[0] ? why : "database unavailable");
        return;
    }
    resp_json(r, 200, json_pack("{s:s}", "status", "ready"));
}

static void metrics(struct req *r)
{
    struct conns_counts conns;
    conns_counts(__atomic_load_n(&r->app->conns, __ATOMIC_ACQUIRE), &conns);
    char *text = metrics_render(r->app->metrics, r->app->store, &conns);
    if (text && (r->app->reads || r->app->rows)) {
        /* The standby's lag and where reads went, and the row cache, after the rest. */
        size_t len = 0;
        char *all = NULL;
        FILE *out = open_memstream(&all, &len);
        if (out) {
            fputs(text, out);
            reads_metrics(r->app->reads, out);
            if (r->app->rows)
                changes_metrics(r->app->changes, out);
            fclose(out);
            free(text);
            text = all;
        }
    }
    if (!text) {
        resp_problem(r, 503, "unavailable", "Service unavailable", "out of memory");
        return;
    }
    resp_bytes(r, 200, "text/plain; version=0.0.4; charset=utf-8", text, strlen(text), NULL);
    free(text);
}

static void openapi(struct req *r)
{
    FILE *f = fopen(r->app->cfg->openapi_path, "rb");
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = f ? open_memstream(&buf, &len) : NULL;
    char chunk[8192];
    size_t n;
    while (mem && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, n, mem);
    if (f)
        fclose(f);
    if (mem)
        fclose(mem);
    if (!buf) {
        resp_problem(r, 404, "not-found", "Not found", "the API description is not installed");
        return;
    }
    resp_bytes(r, 200, "application/yaml", buf, len, NULL);
    free(buf);
}

const struct route ops_routes[] = {
    {"GET", "/healthz", healthz, ROLES_ALL, 0, NULL, NULL},
    {"GET", "/readyz", readyz, ROLES_ALL, 0, NULL, NULL},
    {"GET", "/metrics", metrics, ROLES_ALL, 0, NULL, NULL},
    {"GET", "/api/v1/openapi.yaml", openapi, ROLES_ALL, 0, NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
