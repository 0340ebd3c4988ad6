/* Prometheus metrics: requests by route and status, a latency histogram per route, pool
 * gauges and database error counters. One mutex; the critical section is a few adds. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/conns.h"
#include "http/internal.h"

static const double BUCKETS[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                 0.1,   0.25,   0.5,   1,    2.5,   5};
#define NBUCKETS (sizeof BUCKETS / sizeof BUCKETS[0])
#define STATUS_SLOTS 16

struct route_metrics {
    int status[STATUS_SLOTS];
    unsigned long long count[STATUS_SLOTS];
    unsigned long long bucket[NBUCKETS + 1];
    unsigned long long observations;
    double seconds_sum;
};

struct metrics {
    pthread_mutex_t lock;
    size_t nroutes; /* the last slot collects unrouted requests (404s, static files) */
    const struct route *(*route_at)(size_t i); /* names the others */
    struct route_metrics *routes;
};

struct metrics *metrics_new(const struct route *(*route_at)(size_t i), size_t nroutes)
{
    struct metrics *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->routes = calloc(nroutes, sizeof *m->routes);
    if (!m->routes) {
        free(m);
        return NULL;
    }
    m->nroutes = nroutes;
    m->route_at = route_at;
    pthread_mutex_init(&m->lock, NULL);
    return m;
}

void metrics_free(struct metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->lock);
    free(m->routes);
    free(m);
}

void metrics_observe(struct metrics *m, size_t route_index, int status, double seconds)
{
    if (!m)
        return;
    if (route_index >= m->nroutes)
        route_index = m->nroutes - 1;
    pthread_mutex_lock(&m->lock);
    struct route_metrics *rm = &m->routes[route_index];
    for (int i = 0; i < STATUS_SLOTS; i++) {
        if (rm->status[i] == status || rm->status[i] == 0) {
            rm->status[i] = status;
            rm->count[i]++;
            break;
        }
    }
    size_t b = 0;
    while (b < NBUCKETS && seconds > BUCKETS[b])
        b++;
    rm->bucket[b]++;
    rm->observations++;
    rm->seconds_sum += seconds;
    pthread_mutex_unlock(&m->lock);
}

static const char *route_label(const struct metrics *m, size_t i, char *buf, size_t size)
{
    const struct route *rt = i + 1 < m->nroutes ? m->route_at(i) : NULL;
    if (!rt)
        snprintf(buf, size, "method=\"any\",route=\"(unrouted)\"");
    else
        snprintf(buf, size, "method=\"%s\",route=\"%s\"", rt->method, rt->pattern);
    return buf;
}

char *metrics_render(struct metrics *m, struct store *store, const struct conns_counts *conns)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        return NULL;
    char label[256];
    pthread_mutex_lock(&m->lock);
    fputs("# HELP capledger_http_requests_total HTTP requests by route and status.\n"
          "# TYPE capledger_http_requests_total counter\n",
          out);
    for (size_t i = 0; i < m->nroutes; i++)
        for (int s = 0; s < STATUS_SLOTS && m->routes[i].status[s]; s++)
            fprintf(out, "capledger_http_requests_total{%s,status=\"%d\"} %llu\n",
                    route_label(m, i, label, sizeof label), m->routes[i].status[s],
                    m->routes[i].count[s]);
    fputs("# HELP capledger_http_request_duration_seconds Request latency by route.\n"
          "# TYPE capledger_http_request_duration_seconds histogram\n",
          out);
    for (size_t i = 0; i < m->nroutes; i++) {
        struct route_metrics *rm = &m->routes[i];
        if (!rm->observations)
            continue;
        route_label(m, i, label, sizeof label);
        unsigned long long cumulative = 0;
        for (size_t b = 0; b < NBUCKETS; b++) {
            cumulative += rm->bucket[b];
            fprintf(out, "capledger_http_request_duration_seconds_bucket{%s,le=\"%g\"} %llu\n",
                    label, BUCKETS[b], cumulative);
        }
        fprintf(out, "capledger_http_request_duration_seconds_bucket{%s,le=\"+Inf\"} %llu\n", label,
                rm->observations);
        fprintf(out, "capledger_http_request_duration_seconds_sum{%s} %.6f\n", label,
                rm->seconds_sum);
        fprintf(out, "capledger_http_request_duration_seconds_count{%s} %llu\n", label,
                rm->observations);
    }
    pthread_mutex_unlock(&m->lock);
    struct store_stats st;
    store_stats(store, &st);
    fprintf(out,
            "# HELP capledger_db_pool_connections Database pool connections by state.\n"
            "# TYPE capledger_db_pool_connections gauge\n"
            "capledger_db_pool_connections{state=\"in_use\"} %d\n"
            "capledger_db_pool_connections{state=\"idle\"} %d\n"
            "# HELP capledger_db_pool_size Maximum pool connections.\n"
            "# TYPE capledger_db_pool_size gauge\n"
            "capledger_db_pool_size %d\n"
            "# HELP capledger_db_errors_total Database errors (unreachable, failed queries).\n"
            "# TYPE capledger_db_errors_total counter\n"
            "capledger_db_errors_total %llu\n"
            "# HELP capledger_db_connects_total Connections opened (first and after a break).\n"
            "# TYPE capledger_db_connects_total counter\n"
            "capledger_db_connects_total %llu\n",
            st.in_use, st.idle, st.size, (unsigned long long)st.db_errors,
            (unsigned long long)st.reconnects);
    if (conns)
        fprintf(out,
                "# HELP capledger_http_workers_in_use Connections a worker thread holds now.\n"
                "# TYPE capledger_http_workers_in_use gauge\n"
                "capledger_http_workers_in_use %ld\n"
                "# HELP capledger_http_connections_shed_total Connections the server ended: "
                "headers not sent in time, workers short, an address over its bound, a body "
                "trickled in, replies not read.\n"
                "# TYPE capledger_http_connections_shed_total counter\n"
                "capledger_http_connections_shed_total{reason=\"header_timeout\"} %ld\n"
                "capledger_http_connections_shed_total{reason=\"worker_reserve\"} %ld\n"
                "capledger_http_connections_shed_total{reason=\"per_address\"} %ld\n"
                "capledger_http_connections_shed_total{reason=\"slow_body\"} %ld\n"
                "capledger_http_connections_shed_total{reason=\"slow_read\"} %ld\n",
                conns->workers_in_use, conns->shed_timeout, conns->shed_pressure,
                conns->shed_address, conns->shed_slow_body, conns->shed_slow_read);
    fclose(out);
    return buf;
}
