/* The filters and keyset position shared by the evidence lists (workloads, offers, benchmarks,
 * uploads). Every field is NULL when not given; each list uses the ones that apply to it. */
#ifndef CAPLEDGER_STORE_EVLIST_H
#define CAPLEDGER_STORE_EVLIST_H

#include "store/scope.h"

struct evlist_query {
    const struct team_scope *scope; /* the caller's readable teams (NULL: all) */
    const char *user_id;            /* the caller (uploads: one's own uploads are always visible) */
    const char *team;               /* ?team= */
    const char *kind;               /* workloads: ?kind= */
    const char *class_;             /* workloads: ?class= */
    const char *workload_id;        /* benchmarks: ?workload= */
    const char *offer_id;           /* benchmarks: ?offer= */
    const char *benchmark_id;       /* telemetry uploads of one benchmark */
    const char *state;              /* benchmarks: ?outcome= */
    const char *provider, *gpu_model, *purchase_option; /* offers */
    const char *q; /* ?q=: a name prefix, any case (workloads, offers: the name; benchmarks: the
                      workload's or the offer's name) */
    const char *from, *to;           /* created_at (benchmarks: measured_at) in [from, to) */
    const char *after_at, *after_id; /* keyset: the last item of the previous page */
    int limit;                       /* page size + 1 */
};

#endif
