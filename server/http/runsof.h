/* Runs belong to workloads (docs/evidence.md "Runs belong to workloads"): the ?workload= a
 * runs list or a report narrows to, read once and checked the same way everywhere. */
#ifndef CAPLEDGER_HTTP_RUNSOF_H
#define CAPLEDGER_HTTP_RUNSOF_H

#include <jansson.h>

#include "core/problems.h"

struct req;

/* The workload id names, as {"team": …, "match": runs_match} (new reference), when it exists,
 * the caller may read it and it says how its runs are recognised; else a problem on ptr ("no
 * workload with this id" — another team's is not revealed — or "names no runs_match") and
 * NULL. *unavailable is set when the database could not be asked (then no problem is added). */
json_t *runsof_workload(struct req *r, const char *id, const char *ptr, struct problems *p,
                        int *unavailable);

#endif
