/* The figures of each replayed arrangement, the frontier, the recommendation and the backtest
 * (docs/whatif.md "Output", "Backtest"), and the resolved document's canonical bytes. */
#include "core/whatif/whatif_private.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/auth/secret.h"
#include "core/formats/run.h"
#include "core/formats/timefmt.h"
#include "core/jcs.h"

double whatif__quantile(const int64_t *sorted, size_t n, int k)
{
    if (n == 0)
        return NAN;
    /* rank k·(n−1)/100 = lo + rem/100 */
    uint64_t num = (uint64_t)k * (uint64_t)(n - 1);
    size_t lo = (size_t)(num / 100);
    uint64_t rem = num % 100;
    if (rem == 0 || lo + 1 >= n)
        return (double)sorted[lo];
    return (double)sorted[lo] + (double)rem / 100.0 * (double)(sorted[lo + 1] - sorted[lo]);
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static json_t *num_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* Sorts w[0..n) and returns {mean, p50, p90, p99}; *quantiles (when asked) the 101. */
static json_t *summary(int64_t *w, size_t n, json_t **quantiles)
{
    qsort(w, n, sizeof *w, cmp_i64);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (double)w[i];
    if (quantiles) {
        if (n == 0) {
            *quantiles = json_null();
        } else {
            *quantiles = json_array();
            for (int k = 0; k <= 100; k++)
                json_array_append_new(*quantiles, json_real(whatif__quantile(w, n, k)));
        }
    }
    return json_pack("{s:o, s:o, s:o, s:o}", "mean", num_or_null(n ? sum / (double)n : NAN), "p50",
                     num_or_null(whatif__quantile(w, n, 50)), "p90",
                     num_or_null(whatif__quantile(w, n, 90)), "p99",
                     num_or_null(whatif__quantile(w, n, 99)));
}

/* Figures of one arrangement besides the per-arrangement description. */
struct figures {
    double p90, cpcj, total;
    bool any_p90, any_cpcj;
    size_t unschedulable;
};

static json_t *arrangement_result(const struct whatif_jobs *j, const struct whatif_arrangement *a,
                                  const struct whatif_outcome *o, int64_t t0, int64_t horizon,
                                  int64_t *waits, struct figures *f)
{
    size_t replayed = 0, unsched = 0, overflowed = 0, completed = 0, not_replayed = 0;
    double pool_ms = 0, over_ms = 0; /* milli-GPU-seconds */
    double by_state[RUN_STATE_DEADLINE + 1] = {0};
    for (size_t i = 0; i < j->n; i++) {
        const struct whatif_job *job = &j->v[i];
        switch (o->where[i]) {
        case WHATIF_NOT_REPLAYED:
            not_replayed++;
            continue;
        case WHATIF_UNSCHEDULABLE:
            unsched++;
            continue;
        default:
            break;
        }
        int64_t rt = job->ended - job->started;
        waits[replayed++] = o->start[i] - job->submitted;
        if (o->where[i] == WHATIF_POOL) {
            pool_ms += (double)job->g * (double)rt;
        } else {
            overflowed++;
            over_ms += (double)job->g * (double)(rt + a->provisioning_delay_s);
        }
        completed += (job->flags & WHATIF_JOB_COMPLETED) != 0;
        by_state[j->state[i]] += (double)job->g / 1000.0 * (double)rt / 3600.0;
    }
    json_t *quantiles = NULL;
    json_t *wait = summary(waits, replayed, &quantiles);
    int64_t replay_end = o->replay_end - t0;
    int64_t owned = horizon > replay_end ? horizon : replay_end;
    double r_gpus = (double)a->pool_milli / 1000.0;
    double cost_pool = r_gpus * (double)owned * a->pool_price / 3600.0;
    double cost_over = a->overflow ? over_ms / 1000.0 * a->overflow_price / 3600.0 : 0;
    double total = cost_pool + cost_over;
    double util =
        a->pool_milli > 0 && owned > 0 ? pool_ms / ((double)a->pool_milli * (double)owned) : NAN;
    json_t *states = json_object();
    for (int s = RUN_STATE_COMPLETED; s <= RUN_STATE_DEADLINE; s++)
        if (by_state[s] > 0)
            json_object_set_new(states, run_state_name((enum run_state)s), json_real(by_state[s]));
    json_t *overflow = json_null();
    if (a->overflow)
        overflow = json_pack("{s:f, s:I, s:o, s:I}", "price_per_gpu_hour", a->overflow_price,
                             "after_wait_s", (json_int_t)a->after_wait_s, "max_gpus",
                             a->max_milli >= 0 ? json_real(a->max_gpus) : json_null(),
                             "provisioning_delay_s", (json_int_t)a->provisioning_delay_s);
    f->p90 = json_number_value(json_object_get(wait, "p90"));
    f->any_p90 = replayed > 0;
    f->total = total;
    f->any_cpcj = completed > 0;
    f->cpcj = completed ? total / (double)completed : NAN;
    f->unschedulable = unsched;
    return json_pack(
        "{s:s, s:f, s:f, s:s, s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:I, s:I, s:I, "
        "s:o, s:{s:f, s:f, s:f}, s:{s:f, s:f, s:f}, s:o, s:o}",
        "name", a->name, "pool_gpus", a->pool_gpus, "pool_price_per_gpu_hour", a->pool_price,
        "policy", a->policy == WHATIF_FIFO ? "fifo" : "easy_backfill", "backfill_depth",
        (json_int_t)a->backfill_depth, "overflow", overflow, "jobs", (json_int_t)j->n, "replayed",
        (json_int_t)replayed, "not_replayed", (json_int_t)not_replayed, "unschedulable",
        (json_int_t)unsched, "overflowed", (json_int_t)overflowed, "completed",
        (json_int_t)completed, "wait_s", wait, "wait_quantiles_s", quantiles, "horizon_s",
        (json_int_t)horizon, "replay_end_s", (json_int_t)replay_end, "owned_s", (json_int_t)owned,
        "pool_utilization", num_or_null(util), "gpu_hours", "pool", pool_ms / 1000.0 / 3600.0,
        "overflow", over_ms / 1000.0 / 3600.0, "pool_owned", r_gpus * (double)owned / 3600.0,
        "cost", "pool", cost_pool, "overflow", cost_over, "total", total, "cost_per_completed_job",
        num_or_null(f->cpcj), "gpu_hours_by_state", states);
}

/* {p50, p90, p99, mean} of the observed and the replayed waits of the jobs replayed in the
 * baseline, and their ratios. */
static json_t *backtest(const struct whatif_jobs *j, const struct whatif_arrangement *a,
                        const struct whatif_outcome *o, int64_t *w1, int64_t *w2)
{
    size_t n = 0;
    for (size_t i = 0; i < j->n; i++)
        if (o->where[i] == WHATIF_POOL || o->where[i] == WHATIF_OVERFLOW) {
            w1[n] = j->v[i].started - j->v[i].submitted;
            w2[n] = o->start[i] - j->v[i].submitted;
            n++;
        }
    json_t *q1 = NULL, *q2 = NULL;
    json_t *obs = summary(w1, n, &q1), *rep = summary(w2, n, &q2);
    json_t *ratio = json_object();
    static const char *const keys[] = {"p50", "p90", "p99", "mean"};
    for (size_t k = 0; k < 4; k++) {
        double x = json_number_value(json_object_get(obs, keys[k]));
        double y = json_number_value(json_object_get(rep, keys[k]));
        bool have = json_is_number(json_object_get(obs, keys[k])) && x != 0;
        json_object_set_new(ratio, keys[k], have ? json_real(y / x) : json_null());
    }
    return json_pack("{s:s, s:I, s:o, s:o, s:o, s:o, s:o}", "arrangement", a->name, "jobs",
                     (json_int_t)n, "observed", obs, "replayed", rep, "ratio", ratio,
                     "observed_quantiles_s", q1, "replayed_quantiles_s", q2);
}

json_t *whatif_run(const struct whatif_jobs *j, const struct whatif_plan *plan,
                   const char *input_sha256)
{
    int64_t t0 = INT64_MAX, last_end = INT64_MIN;
    size_t never = 0, no_end = 0, no_gpus = 0;
    for (size_t i = 0; i < j->n; i++) {
        const struct whatif_job *job = &j->v[i];
        if (job->submitted < t0)
            t0 = job->submitted;
        if ((job->flags & WHATIF_JOB_ENDED) && job->ended > last_end)
            last_end = job->ended;
        if (!(job->flags & WHATIF_JOB_STARTED))
            never++;
        else if (!(job->flags & WHATIF_JOB_ENDED))
            no_end++;
        else if (job->g == 0)
            no_gpus++;
    }
    int64_t horizon = j->n && last_end != INT64_MIN && last_end > t0 ? last_end - t0 : 0;
    int64_t *waits = malloc((j->n ? j->n : 1) * sizeof *waits);
    int64_t *waits2 = malloc((j->n ? j->n : 1) * sizeof *waits2);
    struct figures f[WHATIF_MAX_ARRANGEMENTS];
    json_t *arr = json_array(), *bt = json_null();
    json_t *doc = NULL;
    if (!waits || !waits2 || !arr)
        goto out;
    for (size_t k = 0; k < plan->n; k++) {
        struct whatif_outcome o;
        if (whatif_replay_one(j, &plan->a[k], &o) != 0)
            goto out;
        json_t *one = arrangement_result(j, &plan->a[k], &o, t0, horizon, waits, &f[k]);
        if ((int)k == plan->baseline) {
            json_decref(bt);
            bt = backtest(j, &plan->a[k], &o, waits, waits2);
        }
        whatif_outcome_free(&o);
        if (!one || json_array_append_new(arr, one) != 0)
            goto out;
    }
    json_t *frontier = json_array();
    for (size_t k = 0; k < plan->n; k++) {
        if (f[k].unschedulable || !f[k].any_p90 || !f[k].any_cpcj)
            continue;
        bool beaten = false;
        for (size_t m = 0; m < plan->n && !beaten; m++) {
            if (m == k || f[m].unschedulable || !f[m].any_p90 || !f[m].any_cpcj)
                continue;
            beaten = f[m].p90 <= f[k].p90 && f[m].cpcj <= f[k].cpcj &&
                     (f[m].p90 < f[k].p90 || f[m].cpcj < f[k].cpcj);
        }
        if (!beaten)
            json_array_append_new(frontier, json_string(plan->a[k].name));
    }
    int best = -1;
    for (size_t k = 0; k < plan->n; k++) {
        if (f[k].unschedulable)
            continue;
        if (plan->has_target && (!f[k].any_p90 || f[k].p90 > plan->wait_p90_max_s))
            continue;
        if (best < 0 || f[k].total < f[best].total)
            best = (int)k;
    }
    char first[TIMEFMT_UTC_LEN];
    if (j->n)
        timefmt_format_utc_ms(t0 * 1000, first);
    doc = json_pack(
        "{s:s, s:s, s:o, s:I, s:I, s:{s:I, s:I, s:I}, s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:o}",
        "engine_version", WHATIF_ENGINE_VERSION, "input_sha256", input_sha256, "currency",
        plan->currency[0] ? json_string(plan->currency) : json_null(), "jobs", (json_int_t)j->n,
        "not_replayed", (json_int_t)(never + no_end + no_gpus), "not_replayed_by_reason",
        "never_started", (json_int_t)never, "no_end", (json_int_t)no_end, "no_gpus",
        (json_int_t)no_gpus, "first_submitted_at", j->n ? json_string(first) : json_null(),
        "horizon_s", (json_int_t)horizon, "wait_p90_max_s",
        plan->has_target ? json_real(plan->wait_p90_max_s) : json_null(), "arrangements", arr,
        "frontier", frontier, "recommended",
        best >= 0 ? json_string(plan->a[best].name) : json_null(), "baseline",
        plan->baseline >= 0 ? json_string(plan->a[plan->baseline].name) : json_null(), "backtest",
        bt);
    arr = NULL;
    bt = NULL;
out:
    json_decref(arr);
    json_decref(bt);
    free(waits);
    free(waits2);
    return doc;
}

json_t *whatif_replay_document(const json_t *doc, struct problems *errs)
{
    struct whatif_plan *plan = malloc(sizeof *plan);
    struct whatif_jobs jobs;
    whatif_jobs_init(&jobs);
    json_t *result = NULL;
    if (!plan) {
        problems_add(errs, "", "out of memory while reading the document");
        return NULL;
    }
    if (whatif_plan_parse(doc, plan, errs) != 0)
        goto out;
    const json_t *arr = json_object_get(doc, "jobs");
    if (!arr) {
        problems_add(errs, "/jobs",
                     "is required: the jobs to replay, inline (the API also "
                     "takes a selection of stored runs)");
        goto out;
    }
    if (whatif_jobs_from_json(arr, &jobs, errs) != 0)
        goto out;
    char sha[JCS_SHA256_HEX];
    if (jcs_sha256_hex(doc, sha) != 0) {
        problems_add(errs, "", "the document cannot be canonicalized (RFC 8785)");
        goto out;
    }
    result = whatif_run(&jobs, plan, sha);
    if (!result)
        problems_add(errs, "", "out of memory while replaying");
out:
    whatif_jobs_free(&jobs);
    free(plan);
    return result;
}

/* ---- the resolved document's bytes ---- */

struct buf {
    char *p;
    size_t len, cap;
    bool oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static json_t *time_or_null(bool has, int64_t s)
{
    char t[TIMEFMT_UTC_LEN];
    return has ? json_string(timefmt_format_utc_ms(s * 1000, t)) : json_null();
}

/* Jobs [from, to) as inline objects, canonical, without the enclosing brackets. */
static int put_jobs(struct buf *b, const struct whatif_jobs *j, size_t from, size_t to)
{
    json_t *arr = json_array();
    if (!arr)
        return -1;
    for (size_t i = from; i < to; i++) {
        const struct whatif_job *job = &j->v[i];
        json_t *o =
            json_pack("{s:s, s:o, s:o, s:o, s:f, s:s}", "id", j->ids + job->id_off, "submitted_at",
                      time_or_null(true, job->submitted), "started_at",
                      time_or_null(job->flags & WHATIF_JOB_STARTED, job->started), "ended_at",
                      time_or_null(job->flags & WHATIF_JOB_ENDED, job->ended), "gpus", j->gpus[i],
                      "state", run_state_name((enum run_state)j->state[i]));
        if (!o || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            return -1;
        }
    }
    size_t n;
    char *bytes = jcs_serialize(arr, &n);
    json_decref(arr);
    if (!bytes)
        return -1;
    put(b, bytes + 1, n - 2);
    free(bytes);
    return 0;
}

/* The members of an object's canonical bytes, without the braces ("" for {}). */
static int put_members(struct buf *b, const json_t *obj, bool *any)
{
    size_t n;
    char *bytes = jcs_serialize(obj, &n);
    if (!bytes)
        return -1;
    if (n > 2) {
        if (*any)
            put(b, ",", 1);
        put(b, bytes + 1, n - 2);
        *any = true;
    }
    free(bytes);
    return 0;
}

#define JOBS_PER_BATCH 4096

char *whatif_resolved_jcs(const json_t *doc, const struct whatif_jobs *j, size_t *len, char hex[65])
{
    /* RFC 8785 orders members by their UTF-16 code units: those before "jobs", the jobs,
     * those after. */
    json_t *lo = json_object(), *hi = json_object();
    struct buf b = {0};
    int rc = -1;
    if (!lo || !hi)
        goto out;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)doc, key, v)
    {
        if (strcmp(key, "jobs") == 0)
            continue;
        /* keys of a valid document are ASCII: byte order is code-unit order */
        json_object_set(strcmp(key, "jobs") < 0 ? lo : hi, key, v);
    }
    bool any = false;
    put(&b, "{", 1);
    if (put_members(&b, lo, &any) != 0)
        goto out;
    put(&b, any ? ",\"jobs\":[" : "\"jobs\":[", any ? 9 : 8);
    for (size_t i = 0; i < j->n; i += JOBS_PER_BATCH) {
        if (i)
            put(&b, ",", 1);
        if (put_jobs(&b, j, i, i + JOBS_PER_BATCH < j->n ? i + JOBS_PER_BATCH : j->n) != 0)
            goto out;
    }
    put(&b, "]", 1);
    any = true;
    if (put_members(&b, hi, &any) != 0)
        goto out;
    put(&b, "}", 1);
    if (b.oom)
        goto out;
    secret_sha256_hex(b.p, b.len, hex);
    rc = 0;
out:
    json_decref(lo);
    json_decref(hi);
    if (rc != 0) {
        free(b.p);
        return NULL;
    }
    if (len)
        *len = b.len;
    return b.p;
}

/* ---- the table ---- */

static void putf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct buf *b, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    put(b, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* "14 min", "3.2 h", "45 s" */
static const char *duration(double s, char *buf, size_t size)
{
    if (!isfinite(s))
        snprintf(buf, size, "-");
    else if (s < 120)
        snprintf(buf, size, "%.0f s", s);
    else if (s < 7200)
        snprintf(buf, size, "%.0f min", s / 60);
    else if (s < 172800)
        snprintf(buf, size, "%.1f h", s / 3600);
    else
        snprintf(buf, size, "%.1f d", s / 86400);
    return buf;
}

static double num(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The plain sentence of one arrangement: "Owning 48 GPUs and bursting after 20 min to the
 * overflow offer: p90 wait 14 min, 71 % busy, 38.20 USD per completed job". */
static void sentence(struct buf *b, const json_t *a, const char *currency)
{
    char d1[32], d2[32];
    const json_t *ov = json_object_get(a, "overflow");
    double r = num(a, "pool_gpus", NULL);
    putf(b, "Owning %g GPU%s", r, r == 1 ? "" : "s");
    if (json_is_object(ov))
        putf(b, " and bursting after %s to the overflow offer",
             duration(num(ov, "after_wait_s", NULL), d1, sizeof d1));
    else
        putf(b, " and no burst");
    putf(b, ": p90 wait %s", duration(num(a, "wait_s", "p90"), d2, sizeof d2));
    double util = num(a, "pool_utilization", NULL);
    if (isfinite(util))
        putf(b, ", %.0f %% busy", util * 100);
    double cpcj = num(a, "cost_per_completed_job", NULL);
    if (isfinite(cpcj))
        putf(b, ", %.2f %s per completed job", cpcj, currency);
    size_t unsched = (size_t)num(a, "unschedulable", NULL);
    if (unsched)
        putf(b, "; %zu job%s never run%s", unsched, unsched == 1 ? "" : "s",
             unsched == 1 ? "s" : "");
}

char *whatif_format_table(const json_t *result)
{
    const json_t *arr = json_object_get(result, "arrangements");
    if (!json_is_array(arr))
        return NULL;
    const char *cur = json_string_value(json_object_get(result, "currency"));
    if (!cur)
        cur = "";
    struct buf b = {0};
    putf(&b,
         "What-if replay of %lld jobs (%lld not replayed: never started, no end or no GPUs) "
         "over %s\n\n",
         (long long)num(result, "jobs", NULL), (long long)num(result, "not_replayed", NULL),
         duration(num(result, "horizon_s", NULL), (char[32]){0}, 32));
    putf(&b, "%-24s %9s %9s %9s %9s %6s %8s %7s %12s %12s\n", "arrangement", "GPUs", "p50 wait",
         "p90 wait", "p99 wait", "busy", "overflow", "unsched", "cost", "per job");
    size_t i;
    const json_t *a = NULL;
    json_array_foreach(arr, i, a)
    {
        char w1[32], w2[32], w3[32], busy[16], cost[32], per[32];
        double util = num(a, "pool_utilization", NULL);
        double cpcj = num(a, "cost_per_completed_job", NULL);
        snprintf(busy, sizeof busy, isfinite(util) ? "%.0f%%" : "-", util * 100);
        snprintf(cost, sizeof cost, "%.2f", num(a, "cost", "total"));
        snprintf(per, sizeof per, isfinite(cpcj) ? "%.2f" : "-", cpcj);
        putf(&b, "%-24.24s %9g %9s %9s %9s %6s %8lld %7lld %12s %12s\n",
             json_string_value(json_object_get(a, "name")), num(a, "pool_gpus", NULL),
             duration(num(a, "wait_s", "p50"), w1, sizeof w1),
             duration(num(a, "wait_s", "p90"), w2, sizeof w2),
             duration(num(a, "wait_s", "p99"), w3, sizeof w3), busy,
             (long long)num(a, "overflowed", NULL), (long long)num(a, "unschedulable", NULL), cost,
             per);
    }
    const json_t *frontier = json_object_get(result, "frontier");
    putf(&b, "\nfrontier (cost per completed job against p90 wait):");
    json_array_foreach(frontier, i, a) putf(&b, " %s", json_string_value(a));
    putf(&b, "%s\n", json_array_size(frontier) ? "" : " none");
    const char *rec = json_string_value(json_object_get(result, "recommended"));
    double target = num(result, "wait_p90_max_s", NULL);
    char t[32];
    if (rec) {
        const json_t *chosen = NULL;
        json_array_foreach(arr, i, a)
        {
            const char *name = json_string_value(json_object_get(a, "name"));
            if (!chosen && name && strcmp(name, rec) == 0)
                chosen = a;
        }
        putf(&b, "recommended%s%s: %s\n  ", isfinite(target) ? " within a p90 wait of " : "",
             isfinite(target) ? duration(target, t, sizeof t) : "", rec);
        if (chosen)
            sentence(&b, chosen, cur);
        putf(&b, "\n");
    } else {
        putf(&b, "recommended: none (no arrangement runs every job%s)\n",
             isfinite(target) ? " within the p90 wait target" : "");
    }
    const json_t *bt = json_object_get(result, "backtest");
    if (json_is_object(bt)) {
        char o1[32], o2[32], r1[32], r2[32];
        putf(&b,
             "backtest against %s (%lld jobs): observed p50 %s, p90 %s; replayed p50 %s, "
             "p90 %s\n",
             json_string_value(json_object_get(bt, "arrangement")),
             (long long)num(bt, "jobs", NULL), duration(num(bt, "observed", "p50"), o1, 32),
             duration(num(bt, "observed", "p90"), o2, 32),
             duration(num(bt, "replayed", "p50"), r1, 32),
             duration(num(bt, "replayed", "p90"), r2, 32));
    }
    putf(&b, "\nA replay cannot know the demand that never arrived because the queue was long: "
             "jobs not submitted under the old capacity are not in the history.\n");
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
