/* Reports: GET /reports/usage (job accounting by team, workload class, cluster and state:
 * GPU hours, failure rates, queue-wait percentiles, cost when the runs can be priced from
 * offers) and GET /reports/idle (idle time from telemetry summaries, per benchmark and per
 * team). Team members see their teams' figures only; owners, auditors and admins see all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/validate.h"
#include "http/resource.h"
#include "http/runsof.h"
#include "store/offers.h"
#include "store/outcome.h"
#include "store/reports.h"

#define USAGE_MAX_PRICED_CLUSTERS 64

/* ?group_by=team,workload_class: each name once, from the four names of docs/evidence.md. */
static void parse_group_by(struct req *r, struct usage_query *q, struct problems *p)
{
    char raw[256];
    if (!res_query(r, "group_by", RQ_RAW, NULL, raw, sizeof raw, p))
        return;
    char *save = NULL;
    for (char *tok = strtok_r(raw, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int *flag = strcmp(tok, "team") == 0             ? &q->by_team
                    : strcmp(tok, "workload_class") == 0 ? &q->by_class
                    : strcmp(tok, "cluster") == 0        ? &q->by_cluster
                    : strcmp(tok, "state") == 0          ? &q->by_state
                                                         : NULL;
        if (!flag)
            problems_add(p, "?group_by",
                         "group_by names team, workload_class, cluster or state, not '%.40s'", tok);
        else if (*flag)
            problems_add(p, "?group_by", "group_by names '%s' twice", tok);
        else
            *flag = 1;
    }
}

/* Checks an offer id used for pricing; keeps the first currency seen in currency. */
static void check_price_offer(struct req *r, const char *id, const char *pointer, char currency[8],
                              int *unavailable, struct problems *p)
{
    json_t *o = NULL;
    enum store_status st =
        uuid_valid(id) ? store_offer_get(r->app->store, id, &o) : STORE_NOT_FOUND;
    if (st == STORE_NOT_FOUND) {
        problems_add(p, pointer, "no offer with id '%.40s'", id);
    } else if (st != STORE_OK) {
        *unavailable = 1;
    } else {
        const char *cur = json_string_value(json_object_get(o, "currency"));
        if (!currency[0])
            snprintf(currency, 8, "%s", cur);
        else if (strcmp(currency, cur) != 0)
            problems_add(p, pointer, "prices must share one currency: %s and %s", currency, cur);
    }
    json_decref(o);
}

/* ?offer_id= (every cluster) and ?cluster_offers=a:<id>,b:<id> → the query's pricing. */
static json_t *parse_pricing(struct req *r, struct usage_query *q, char *offer_id,
                             size_t offer_id_size, char currency[8], int *unavailable,
                             struct problems *p)
{
    json_t *map = NULL;
    q->default_offer_id = res_query(r, "offer_id", RQ_UUID, NULL, offer_id, offer_id_size, p);
    if (q->default_offer_id)
        check_price_offer(r, offer_id, "?offer_id", currency, unavailable, p);
    char raw[4096];
    if (!res_query(r, "cluster_offers", RQ_RAW, NULL, raw, sizeof raw, p))
        return NULL;
    map = json_object();
    char *save = NULL;
    for (char *tok = strtok_r(raw, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(tok, ':');
        if (!colon || colon == tok || json_object_size(map) >= USAGE_MAX_PRICED_CLUSTERS) {
            problems_add(p, "?cluster_offers",
                         "cluster_offers reads cluster:offer_id,… (at most %d clusters)",
                         USAGE_MAX_PRICED_CLUSTERS);
            break;
        }
        *colon = '\0';
        check_price_offer(r, colon + 1, "?cluster_offers", currency, unavailable, p);
        json_object_set_new(map, tok, json_string(colon + 1));
    }
    return map;
}

static void usage_report(struct req *r)
{
    struct problems p;
    problems_init(&p);
    struct usage_query q;
    memset(&q, 0, sizeof q);
    char from[40], to[40], offer_id[40], currency[8] = "", team[128];
    char *map_text = NULL, *of_text = NULL, workload[40];
    json_t *out = NULL, *of = NULL;
    int unavailable = 0;
    q.from = res_query(r, "from", RQ_TIME, NULL, from, sizeof from, &p);
    q.to = res_query(r, "to", RQ_TIME, NULL, to, sizeof to, &p);
    q.team = res_query(r, "team", RQ_TEXT, NULL, team, sizeof team, &p);
    parse_group_by(r, &q, &p);
    json_t *map = parse_pricing(r, &q, offer_id, sizeof offer_id, currency, &unavailable, &p);
    if (!unavailable && res_query(r, "workload", RQ_UUID, NULL, workload, sizeof workload, &p) &&
        (of = runsof_workload(r, workload, "?workload", &p, &unavailable)) != NULL)
        q.workload_json = of_text = json_dumps(of, JSON_COMPACT);
    if (unavailable) {
        resp_store_error(r, STORE_UNAVAILABLE, "offers");
        goto out;
    }
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    if (map)
        map_text = json_dumps(map, JSON_COMPACT);
    q.scope = &r->scope;
    q.cluster_offers_json = map_text;
    q.currency = currency[0] ? currency : NULL;
    q.exact_max = r->app->cfg->usage_exact_max;
    enum store_status st = store_report_usage(r->app->read_store, &q, &out);
    if (st != STORE_OK) {
        resp_store_error(r, st, "usage report");
        goto out;
    }
    json_object_set_new(out, "from", q.from ? json_string(from) : json_null());
    json_object_set_new(out, "to", q.to ? json_string(to) : json_null());
    resp_json(r, 200, out);
    out = NULL;
out:
    json_decref(map);
    json_decref(out);
    json_decref(of);
    free(map_text);
    free(of_text);
    problems_free(&p);
}

static void idle_report(struct req *r)
{
    struct problems p;
    problems_init(&p);
    char team[128], from[40], to[40];
    json_t *out = NULL;
    const char *team_p = res_query(r, "team", RQ_TEXT, NULL, team, sizeof team, &p);
    const char *from_p = res_query(r, "from", RQ_TIME, NULL, from, sizeof from, &p);
    const char *to_p = res_query(r, "to", RQ_TIME, NULL, to, sizeof to, &p);
    if (p.total) {
        resp_invalid(r, &p, NULL);
        goto out;
    }
    enum store_status st =
        store_report_idle(r->app->read_store, &r->scope, team_p, from_p, to_p, &out);
    resp_stored(r, st, out, "idle report");
    out = NULL;
out:
    json_decref(out);
    problems_free(&p);
}

/* The track record of decisions (docs/reviews.md "The track record"). */
static void decisions_report(struct req *r)
{
    json_t *out = NULL;
    char fault[512] = "";
    enum store_status st =
        store_decisions_track_record(r->app->store, &r->scope, fault, sizeof fault, &out);
    if (st == STORE_OK && fault[0]) {
        resp_problem(r, 500, "log-integrity", "A decision differs from the log",
                     "%s: the stored copy was changed outside capledger; owners and admins were "
                     "alerted",
                     fault);
        return;
    }
    resp_stored(r, st, out, "track record");
}

const struct route report_routes[] = {
    {"GET", "/api/v1/reports/usage", usage_report, ROLES_USERS, ROUTE_STANDBY,
     "group_by team from to offer_id cluster_offers workload", NULL},
    {"GET", "/api/v1/reports/idle", idle_report, ROLES_USERS, ROUTE_STANDBY, "team from to", NULL},
    {"GET", "/api/v1/reports/decisions", decisions_report, ROLES_USERS, 0, NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
