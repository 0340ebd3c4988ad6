/* A replay document read and checked (docs/whatif.md "Input"): the jobs, one at a time and
 * without a JSON tree of their own when they come from a selection, and the plan — the
 * arrangements with their sweeps expanded, the wait target and the baseline — through the field
 * tables every JSON body of the API goes through. Every fault is named by JSON Pointer. */
#include "core/whatif/whatif_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats/evfield.h"
#include "core/formats/run.h"
#include "core/formats/timefmt.h"
#include "core/jcs.h"

#define ID_MAX 255

void whatif_jobs_init(struct whatif_jobs *j)
{
    memset(j, 0, sizeof *j);
}

void whatif_jobs_free(struct whatif_jobs *j)
{
    free(j->v);
    free(j->ids);
    free(j->state);
    free(j->gpus);
    memset(j, 0, sizeof *j);
}

static int grow(struct whatif_jobs *j)
{
    size_t cap = j->cap ? j->cap * 2 : 1024;
    struct whatif_job *v = realloc(j->v, cap * sizeof *v);
    if (!v)
        return -1;
    j->v = v;
    uint8_t *st = realloc(j->state, cap);
    if (!st)
        return -1;
    j->state = st;
    double *g = realloc(j->gpus, cap * sizeof *g);
    if (!g)
        return -1;
    j->gpus = g;
    j->cap = cap;
    return 0;
}

int whatif_jobs_add(struct whatif_jobs *j, const char *id, size_t id_len, int64_t submitted,
                    bool has_started, int64_t started, bool has_ended, int64_t ended, double gpus,
                    const char *state, const char *ptr, struct problems *errs)
{
    char at[160];
    if (j->n >= WHATIF_MAX_JOBS) {
        if (j->n == WHATIF_MAX_JOBS)
            problems_add(errs, "/jobs",
                         "more than %d jobs: a replay takes at most %d (narrow the "
                         "selection's window or its team)",
                         WHATIF_MAX_JOBS, WHATIF_MAX_JOBS);
        return -1;
    }
    int bad = 0;
    if (id_len == 0 || id_len > ID_MAX || memchr(id, '\0', id_len)) {
        problems_add(errs, problems_pointer(at, sizeof at, ptr, "id"),
                     "must be a string of 1-%d bytes without NUL", ID_MAX);
        bad = 1;
    }
    enum run_state rs = RUN_STATE_UNSET;
    if (!state || !run_state_parse(state, strlen(state), &rs) || rs == RUN_STATE_UNSET) {
        problems_add(errs, problems_pointer(at, sizeof at, ptr, "state"),
                     "must be a run state: COMPLETED, FAILED, CANCELLED, TIMEOUT, PREEMPTED, "
                     "NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL or DEADLINE");
        bad = 1;
    }
    if (!(gpus >= 0 && gpus <= WHATIF_MAX_GPUS)) {
        problems_add(errs, problems_pointer(at, sizeof at, ptr, "gpus"),
                     "must be a number ≥ 0 and ≤ %g", WHATIF_MAX_GPUS);
        bad = 1;
    }
    if (has_started && started < submitted) {
        problems_add(errs, problems_pointer(at, sizeof at, ptr, "started_at"),
                     "job '%.*s' started before it was submitted", (int)(id_len > 64 ? 64 : id_len),
                     id);
        bad = 1;
    }
    if (has_started && has_ended && ended < started) {
        problems_add(errs, problems_pointer(at, sizeof at, ptr, "ended_at"),
                     "job '%.*s' ended before it started", (int)(id_len > 64 ? 64 : id_len), id);
        bad = 1;
    } else if (!has_started && has_ended && ended < submitted) {
        problems_add(errs, problems_pointer(at, sizeof at, ptr, "ended_at"),
                     "job '%.*s' ended before it was submitted", (int)(id_len > 64 ? 64 : id_len),
                     id);
        bad = 1;
    }
    if (bad)
        return -1;
    if (j->n == j->cap && grow(j) != 0)
        return -2;
    if (j->ids_len + id_len + 1 > j->ids_cap) {
        size_t cap = j->ids_cap ? j->ids_cap : 16384;
        while (cap < j->ids_len + id_len + 1)
            cap *= 2;
        char *ids = realloc(j->ids, cap);
        if (!ids)
            return -2;
        j->ids = ids;
        j->ids_cap = cap;
    }
    if (j->ids_len > UINT32_MAX - id_len - 1)
        return -2;
    struct whatif_job *job = &j->v[j->n];
    job->submitted = submitted;
    job->started = has_started ? started : 0;
    job->ended = has_ended ? ended : 0;
    job->g = (int64_t)floor(gpus * 1000 + 0.5);
    job->id_off = (uint32_t)j->ids_len;
    job->flags =
        (uint8_t)((has_started ? WHATIF_JOB_STARTED : 0) | (has_ended ? WHATIF_JOB_ENDED : 0) |
                  (rs == RUN_STATE_COMPLETED ? WHATIF_JOB_COMPLETED : 0));
    memcpy(j->ids + j->ids_len, id, id_len);
    j->ids[j->ids_len + id_len] = '\0';
    j->ids_len += id_len + 1;
    j->state[j->n] = (uint8_t)rs;
    j->gpus[j->n] = gpus;
    j->n++;
    return 0;
}

/* An RFC 3339 time with an offset, truncated to the second (floor: the fraction of a second
 * is dropped also before 1970). */
static int read_time(const json_t *v, int64_t *out)
{
    const char *s = jcs_text(v);
    struct timefmt_fields t;
    int64_t ms;
    if (!s || !timefmt_parse(s, strlen(s), &t) || !t.has_offset ||
        timefmt_resolve_ms(&t, NULL, NULL, &ms) != 0)
        return -1;
    *out = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    return 0;
}

struct named {
    const char *id;
    uint32_t index;
};

static int named_cmp(const void *a, const void *b)
{
    const struct named *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

int whatif__ids_unique(const struct whatif_jobs *j, struct problems *errs)
{
    struct named *by = malloc(j->n * sizeof *by);
    if (!by) {
        problems_add(errs, "", "out of memory while reading the jobs");
        return -1;
    }
    for (size_t k = 0; k < j->n; k++)
        by[k] = (struct named){j->ids + j->v[k].id_off, (uint32_t)k};
    qsort(by, j->n, sizeof *by, named_cmp);
    int dup = 0;
    for (size_t k = 1; k < j->n; k++)
        if (strcmp(by[k].id, by[k - 1].id) == 0) {
            char at[64];
            snprintf(at, sizeof at, "/jobs/%u/id", by[k].index);
            problems_add(errs, at, "the id '%.64s' is already the id of /jobs/%u", by[k].id,
                         by[k - 1].index);
            dup = 1;
        }
    free(by);
    return dup ? -1 : 0;
}

static const char *const JOB_MEMBERS[] = {"id",       "submitted_at", "started_at",
                                          "ended_at", "gpus",         "state"};

int whatif_jobs_from_json(const json_t *jobs, struct whatif_jobs *j, struct problems *errs)
{
    size_t before = errs->total;
    if (!json_is_array(jobs)) {
        problems_add(errs, "/jobs",
                     "must be an array of jobs {id, submitted_at, started_at, "
                     "ended_at, gpus, state}");
        return -1;
    }
    if (json_array_size(jobs) > WHATIF_MAX_JOBS) {
        problems_add(errs, "/jobs", "%zu jobs: a replay takes at most %d", json_array_size(jobs),
                     WHATIF_MAX_JOBS);
        return -1;
    }
    size_t i;
    json_t *o;
    json_array_foreach(jobs, i, o)
    {
        char ptr[64], at[96];
        problems_pointer_index(ptr, sizeof ptr, "/jobs", i);
        if (!json_is_object(o)) {
            problems_add(errs, ptr,
                         "a job must be an object {id, submitted_at, started_at, "
                         "ended_at, gpus, state}");
            continue;
        }
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)o, key, v)
        {
            size_t k = 0;
            while (k < sizeof JOB_MEMBERS / sizeof *JOB_MEMBERS && strcmp(key, JOB_MEMBERS[k]))
                k++;
            if (k == sizeof JOB_MEMBERS / sizeof *JOB_MEMBERS)
                problems_add(errs, problems_pointer(at, sizeof at, ptr, key), "unknown field");
        }
        const json_t *id = json_object_get(o, "id");
        if (!json_is_string(id)) {
            problems_add(errs, problems_pointer(at, sizeof at, ptr, "id"), "must be a string");
            continue;
        }
        int64_t t[3] = {0, 0, 0};
        bool has[3] = {false, false, false};
        int bad = 0;
        for (int k = 0; k < 3; k++) {
            const json_t *tv = json_object_get(o, JOB_MEMBERS[1 + k]);
            if ((!tv || json_is_null(tv)) && k > 0)
                continue;
            if (read_time(tv, &t[k]) != 0) {
                problems_add(errs, problems_pointer(at, sizeof at, ptr, JOB_MEMBERS[1 + k]),
                             k == 0 ? "is required: an RFC 3339 time with an offset, e.g. "
                                      "2025-01-31T12:00:00Z"
                                    : "must be an RFC 3339 time with an offset (e.g. "
                                      "2025-01-31T12:00:00Z) or null");
                bad = 1;
            }
            has[k] = true;
        }
        const json_t *gpus = json_object_get(o, "gpus");
        if (!json_is_number(gpus)) {
            problems_add(errs, problems_pointer(at, sizeof at, ptr, "gpus"),
                         "is required: a number ≥ 0");
            bad = 1;
        }
        const json_t *state = json_object_get(o, "state");
        if (bad)
            continue;
        int r =
            whatif_jobs_add(j, json_string_value(id), json_string_length(id), t[0], has[1], t[1],
                            has[2], t[2], json_number_value(gpus), jcs_text(state), ptr, errs);
        if (r == -2) {
            problems_add(errs, "", "out of memory while reading the jobs");
            return -1;
        }
        if (j->n >= WHATIF_MAX_JOBS && errs->total > before)
            break;
    }
    /* Ids name jobs (the queue's ties are broken by them; the API's ids are CLUSTER/EXTERNAL_ID):
     * one id, one job. */
    if (errs->total == before && j->n > 1 && whatif__ids_unique(j, errs) != 0)
        return -1;
    return errs->total == before ? 0 : -1;
}

/* ---- the plan: arrangements, sweeps, wait target, baseline ---- */

static const char *const POLICIES[] = {"easy_backfill", "fifo", NULL};

/* An offer as the cost engine takes it: price_per_hour / gpus_per_instance is the price of one
 * GPU-hour. A stored offer's other fields are accepted (a resolved stored offer carries them)
 * and change no figure of a replay. */
static const struct evfield OFFER_FIELDS[] = {
    {"price_per_hour", EVF_NUMBER, EVF_REQUIRED, 0, EVF_NO_MAX, 0, NULL, NULL},
    {"gpus_per_instance", EVF_NUMBER, EVF_REQUIRED | EVF_MIN_EXCLUSIVE, 0, 1e6, 0, NULL, NULL},
    {"currency", EVF_CURRENCY, 0, 0, 0, 0, NULL, NULL},
    {"id", EVF_UUID, 0, 0, 0, 0, NULL, NULL},
    {"name", EVF_TEXT, 0, 0, 0, 200, NULL, NULL},
    {"gpu_model", EVF_TEXT, 0, 0, 0, 200, NULL, NULL},
    {"purchase_option", EVF_TEXT, 0, 0, 0, 64, NULL, NULL},
    {"provider", EVF_TEXT, 0, 0, 0, 200, NULL, NULL},
    {"region", EVF_TEXT, 0, 0, 0, 200, NULL, NULL},
    {"instance_type", EVF_TEXT, 0, 0, 0, 200, NULL, NULL},
    {"source", EVF_TEXT, 0, 0, 0, 2000, NULL, NULL},
    {"notes", EVF_TEXT, 0, 0, 0, 2000, NULL, NULL},
    {"gpu_memory_gb", EVF_NUMBER, 0, 0, EVF_NO_MAX, 0, NULL, NULL},
    {"reserved_utilization", EVF_NUMBER, 0, 0, 1, 0, NULL, NULL},
    {"interruption_rate_per_hour", EVF_NUMBER, 0, 0, EVF_NO_MAX, 0, NULL, NULL},
    {"provisioning_delay_s", EVF_NUMBER, 0, 0, EVF_NO_MAX, 0, NULL, NULL},
    {"quota_gpus", EVF_NUMBER, 0, 0, EVF_NO_MAX, 0, NULL, NULL},
    {"available", EVF_BOOL, 0, 0, 0, 0, NULL, NULL},
    {"storage_price_gb_month", EVF_NUMBER, 0, 0, EVF_NO_MAX, 0, NULL, NULL},
    {"egress_price_gb", EVF_NUMBER, 0, 0, EVF_NO_MAX, 0, NULL, NULL},
    {"orchestration_overhead", EVF_NUMBER, 0, 0, EVF_NO_MAX, 0, NULL, NULL},
    EVF_END,
};

static const struct evfield OVERFLOW_FIELDS[] = {
    {"offer", EVF_OBJECT, EVF_REQUIRED | EVF_MSG_ALL, 0, 0, 0,
     EVF_WORDS("is required: the offer {price_per_hour, gpus_per_instance, currency} that prices "
               "the overflow's GPU-hours"),
     OFFER_FIELDS},
    {"after_wait_s", EVF_INTEGER, EVF_REQUIRED, 0, WHATIF_MAX_SECONDS, 0, NULL, NULL},
    {"max_gpus", EVF_NUMBER, 0, 0, WHATIF_MAX_GPUS, 0, NULL, NULL},
    {"provisioning_delay_s", EVF_INTEGER, 0, 0, WHATIF_MAX_SECONDS, 0, NULL, NULL},
    EVF_END,
};

static const struct evfield SWEEP_FIELDS[] = {
    {"from", EVF_NUMBER, EVF_REQUIRED, 0, WHATIF_MAX_GPUS, 0, NULL, NULL},
    {"to", EVF_NUMBER, EVF_REQUIRED, 0, WHATIF_MAX_GPUS, 0, NULL, NULL},
    {"step", EVF_NUMBER, EVF_REQUIRED | EVF_MIN_EXCLUSIVE | EVF_MSG_ALL, 0, WHATIF_MAX_GPUS, 0,
     EVF_WORDS("is required: a number > 0 (GPUs between two pool sizes of the sweep)"), NULL},
    EVF_END,
};

/* pool_gpus is a number or a sweep object: one table for each. */
#define ARRANGEMENT_COMMON                                                                         \
    {"name", EVF_STRING, EVF_REQUIRED, 0, 0, 120, NULL, NULL},                                     \
        {"pool_offer", EVF_OBJECT, EVF_REQUIRED, 0, 0, 0, NULL, OFFER_FIELDS},                     \
        {"overflow", EVF_OBJECT, 0, 0, 0, 0, NULL, OVERFLOW_FIELDS},                               \
        {"policy", EVF_ENUM, EVF_QUOTE, 0, 0, 0, POLICIES, NULL},                                  \
    {                                                                                              \
        "backfill_depth", EVF_INTEGER, 0, 0, WHATIF_MAX_BACKFILL_DEPTH, 0, NULL, NULL              \
    }

static const struct evfield ARRANGEMENT_FIELDS[] = {
    ARRANGEMENT_COMMON,
    {"pool_gpus", EVF_NUMBER, EVF_REQUIRED | EVF_MSG_ALL, 0, WHATIF_MAX_GPUS, 0,
     EVF_WORDS("is required: the GPUs owned, a number ≥ 0 and ≤ 1000000, or a sweep {from, to, "
               "step}"),
     NULL},
    EVF_END,
};

static const struct evfield ARRANGEMENT_SWEEP_FIELDS[] = {
    ARRANGEMENT_COMMON,
    {"pool_gpus", EVF_OBJECT, EVF_REQUIRED, 0, 0, 0, NULL, SWEEP_FIELDS},
    EVF_END,
};

/* The members but `jobs` (whose items the caller reads) and `arrangements` (one table per
 * item, below). */
static const struct evfield DOCUMENT_FIELDS[] = {
    {"selection", EVF_ANY, 0, 0, 0, 0, NULL, NULL},
    {"wait_p90_max_s", EVF_NUMBER, 0, 0, WHATIF_MAX_WAIT_TARGET, 0, NULL, NULL},
    {"baseline", EVF_STRING, 0, 0, 0, 160, NULL, NULL},
    {"name", EVF_TEXT, 0, 0, 0, 200, NULL, NULL},
    {"description", EVF_TEXT, 0, 0, 0, 2000, NULL, NULL},
    EVF_END,
};

static double per_gpu_hour(const json_t *offer)
{
    return json_number_value(json_object_get(offer, "price_per_hour")) /
           json_number_value(json_object_get(offer, "gpus_per_instance"));
}

static int64_t milli(double gpus)
{
    return (int64_t)floor(gpus * 1000 + 0.5);
}

/* The offer's currency agrees with the plan's (the first one named). */
/* price_per_hour / gpus_per_instance, the price of a GPU-hour, is a number the figures can carry
 * (a price over a vanishing gpus_per_instance is not). */
static void check_gpu_hour(const json_t *offer, const char *ptr, struct problems *errs)
{
    double p = per_gpu_hour(offer);
    if (isfinite(p) && p <= 1e15)
        return;
    char at[160];
    problems_add(errs, problems_pointer(at, sizeof at, ptr, "gpus_per_instance"),
                 "price_per_hour / gpus_per_instance is the price of a GPU-hour: at most 1e15, "
                 "here %g",
                 p);
}

static void check_currency(struct whatif_plan *plan, const json_t *offer, const char *ptr,
                           struct problems *errs)
{
    const char *cur = json_string_value(json_object_get(offer, "currency"));
    if (!cur || strlen(cur) != 3)
        return;
    if (!plan->currency[0]) {
        memcpy(plan->currency, cur, 4);
    } else if (strcmp(plan->currency, cur) != 0) {
        char at[160];
        problems_add(errs, problems_pointer(at, sizeof at, ptr, "currency"),
                     "is %s, but another offer of this replay is priced in %s: one currency", cur,
                     plan->currency);
    }
}

/* Expands one valid arrangement object (index i) into plan->a; -1 past the limit. */
static int expand(struct whatif_plan *plan, const json_t *o, size_t i, struct problems *errs)
{
    struct whatif_arrangement base;
    memset(&base, 0, sizeof base);
    base.source = i;
    base.pool_price = per_gpu_hour(json_object_get(o, "pool_offer"));
    const char *policy = json_string_value(json_object_get(o, "policy"));
    base.policy = policy && strcmp(policy, "fifo") == 0 ? WHATIF_FIFO : WHATIF_EASY_BACKFILL;
    const json_t *depth = json_object_get(o, "backfill_depth");
    base.backfill_depth =
        json_is_integer(depth) ? (int64_t)json_integer_value(depth) : WHATIF_DEFAULT_BACKFILL_DEPTH;
    const json_t *ov = json_object_get(o, "overflow");
    base.max_milli = -1;
    if (json_is_object(ov)) {
        base.overflow = true;
        base.overflow_price = per_gpu_hour(json_object_get(ov, "offer"));
        base.after_wait_s = (int64_t)json_integer_value(json_object_get(ov, "after_wait_s"));
        const json_t *mx = json_object_get(ov, "max_gpus");
        if (json_is_number(mx)) {
            base.max_gpus = json_number_value(mx);
            base.max_milli = milli(base.max_gpus);
        }
        const json_t *pd = json_object_get(ov, "provisioning_delay_s");
        base.provisioning_delay_s = json_is_integer(pd) ? (int64_t)json_integer_value(pd) : 0;
    }
    const char *name = json_string_value(json_object_get(o, "name"));
    const json_t *pool = json_object_get(o, "pool_gpus");
    char ptr[64];
    problems_pointer_index(ptr, sizeof ptr, "/arrangements", i);
    if (json_is_number(pool)) {
        if (plan->n >= WHATIF_MAX_ARRANGEMENTS)
            return -1;
        struct whatif_arrangement *a = &plan->a[plan->n++];
        *a = base;
        snprintf(a->name, sizeof a->name, "%s", name);
        a->pool_gpus = json_number_value(pool);
        a->pool_milli = milli(a->pool_gpus);
        return 0;
    }
    double from = json_number_value(json_object_get(pool, "from"));
    double to = json_number_value(json_object_get(pool, "to"));
    double step = json_number_value(json_object_get(pool, "step"));
    if (to < from) {
        char at[96];
        snprintf(at, sizeof at, "%s/pool_gpus/to", ptr);
        problems_add(errs, at, "must be ≥ from (%.17g): the sweep would be empty", from);
        return 0;
    }
    for (size_t k = 0;; k++) {
        double r = from + (double)k * step;
        if (!(r <= to + 1e-9))
            break;
        if (plan->n >= WHATIF_MAX_ARRANGEMENTS)
            return -1;
        struct whatif_arrangement *a = &plan->a[plan->n++];
        *a = base;
        char num[JCS_NUMBER_MAX];
        if (jcs_format_double(r, num) < 0)
            snprintf(num, sizeof num, "%.17g", r);
        snprintf(a->name, sizeof a->name, "%s@%s", name, num);
        a->pool_gpus = r;
        a->pool_milli = milli(r);
    }
    return 0;
}

int whatif_plan_parse(const json_t *doc, struct whatif_plan *plan, struct problems *errs)
{
    memset(plan, 0, sizeof *plan);
    plan->baseline = -1;
    size_t before = errs->total;
    if (!json_is_object(doc)) {
        problems_add(errs, "",
                     "a replay document must be a JSON object {jobs, arrangements, "
                     "wait_p90_max_s, baseline}");
        return -1;
    }
    json_t *top = json_copy((json_t *)doc);
    if (!top) {
        problems_add(errs, "", "out of memory while reading the document");
        return -1;
    }
    json_object_del(top, "jobs");
    json_object_del(top, "arrangements");
    evfield_check(top, DOCUMENT_FIELDS, "", 0, NULL, errs);
    json_decref(top);
    const json_t *jobs = json_object_get(doc, "jobs");
    if (jobs && !json_is_null(jobs) && !json_is_array(jobs))
        problems_add(errs, "/jobs",
                     "must be an array of jobs {id, submitted_at, started_at, "
                     "ended_at, gpus, state}");
    json_t *arr = json_object_get(doc, "arrangements");
    if (!json_is_array(arr)) {
        problems_add(errs, "/arrangements", "is required: an array of 1 to %d arrangements",
                     WHATIF_MAX_ARRANGEMENTS);
    } else {
        if (json_array_size(arr) == 0)
            problems_add(errs, "/arrangements", "name at least one arrangement");
        if (json_array_size(arr) > WHATIF_MAX_ARRANGEMENTS)
            problems_add(errs, "/arrangements", "%zu arrangements: at most %d",
                         json_array_size(arr), WHATIF_MAX_ARRANGEMENTS);
    }
    if (errs->total > before)
        return -1;
    size_t i;
    json_t *o;
    bool over = false;
    json_array_foreach(arr, i, o)
    {
        char ptr[64];
        problems_pointer_index(ptr, sizeof ptr, "/arrangements", i);
        if (!json_is_object(o)) {
            problems_add(errs, ptr,
                         "an arrangement must be an object {name, pool_gpus, "
                         "pool_offer, overflow, policy, backfill_depth}");
            continue;
        }
        size_t had = errs->total;
        const json_t *ov = json_object_get(o, "overflow");
        evfield_check(o,
                      json_is_object(json_object_get(o, "pool_gpus")) ? ARRANGEMENT_SWEEP_FIELDS
                                                                      : ARRANGEMENT_FIELDS,
                      ptr, 0, NULL, errs);
        if (errs->total > had)
            continue;
        char at[96];
        check_currency(plan, json_object_get(o, "pool_offer"),
                       problems_pointer(at, sizeof at, ptr, "pool_offer"), errs);
        check_gpu_hour(json_object_get(o, "pool_offer"), at, errs);
        if (json_is_object(ov)) {
            snprintf(at, sizeof at, "%s/overflow/offer", ptr);
            check_currency(plan, json_object_get(ov, "offer"), at, errs);
            check_gpu_hour(json_object_get(ov, "offer"), at, errs);
        }
        if (!over && expand(plan, o, i, errs) != 0)
            over = true;
    }
    if (over) {
        /* Count them all for the message (a sweep of a billion sizes is counted, not made). */
        problems_add(errs, "/arrangements",
                     "more than %d arrangements once the sweeps are expanded: at most %d",
                     WHATIF_MAX_ARRANGEMENTS, WHATIF_MAX_ARRANGEMENTS);
    }
    if (errs->total > before)
        return -1;
    for (size_t a = 0; a < plan->n; a++)
        for (size_t b = 0; b < a; b++)
            if (strcmp(plan->a[a].name, plan->a[b].name) == 0) {
                char at[96];
                snprintf(at, sizeof at, "/arrangements/%zu/name", plan->a[a].source);
                problems_add(errs, at,
                             "'%s' names two arrangements (the other from "
                             "/arrangements/%zu)",
                             plan->a[a].name, plan->a[b].source);
                b = a;
            }
    const json_t *target = json_object_get(doc, "wait_p90_max_s");
    if (json_is_number(target)) {
        plan->has_target = true;
        plan->wait_p90_max_s = json_number_value(target);
    }
    const char *baseline = json_string_value(json_object_get(doc, "baseline"));
    if (baseline) {
        for (size_t a = 0; a < plan->n && plan->baseline < 0; a++)
            if (strcmp(plan->a[a].name, baseline) == 0)
                plan->baseline = (int)a;
        if (plan->baseline < 0)
            problems_add(errs, "/baseline",
                         "names no arrangement: '%.160s' (a swept one is "
                         "named NAME@R)",
                         baseline);
    }
    return errs->total > before ? -1 : 0;
}

/* One arrangement's share of the work: its jobs, times how much longer than the default an EASY
 * pass may look behind the head (each pass looks at up to backfill_depth queued jobs, and there
 * are about as many passes as jobs: 100,000 jobs under a window of 100,000 took minutes). */
static double work_of(size_t n, const struct whatif_arrangement *a)
{
    double look = a->policy == WHATIF_EASY_BACKFILL ? (double)a->backfill_depth : 0;
    if (look > (double)n)
        look = (double)n;
    double factor = look / WHATIF_DEFAULT_BACKFILL_DEPTH;
    return (double)n * (factor > 1 ? factor : 1);
}

int whatif_check_work(size_t n, const struct whatif_plan *plan, struct problems *errs)
{
    double work = 0;
    for (size_t k = 0; k < plan->n; k++)
        work += work_of(n, &plan->a[k]);
    if (work <= WHATIF_MAX_JOB_REPLAYS)
        return 0;
    problems_add(errs, "/arrangements",
                 "%zu jobs × %zu arrangements is more than a server replays at once (%d jobs × "
                 "arrangements, an arrangement counted once more for every %d of its "
                 "backfill_depth beyond the first): sweep fewer pool sizes per request or a "
                 "shorter backfill_depth, or narrow the selection, or replay the resolved "
                 "document offline with capledger whatif",
                 n, plan->n, WHATIF_MAX_JOB_REPLAYS, WHATIF_DEFAULT_BACKFILL_DEPTH);
    return -1;
}
