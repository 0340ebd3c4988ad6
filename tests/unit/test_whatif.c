/* The what-if replay (core/whatif/whatif.h) against docs/whatif.md: each rule of the replay on a
 * history small enough to work out by hand (the expected waits are derived in the comments),
 * the figures, sweeps and their names, the frontier, the recommendation, the backtest, every
 * refusal with its JSON Pointer, and the resolved document's bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/formats/openb.h"
#include "core/formats/linebuf.h"
#include "core/jcs.h"
#include "core/whatif/whatif.h"
#include "sample_text.h"
#include "oracle/linebuf_stream.h"

/* cmocka 1.1 has no assert_double_equal */
#define assert_double_equal(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

#define T0 1735689600 /* 2025-01-01T00:00:00Z */

static json_t *time_at(long s)
{
    char buf[40];
    time_t t = (time_t)(T0 + s);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return json_string(buf);
}

/* A job submitted at sub, started at start (−1: never), ended at end (−1: no end), seconds
 * from T0. */
static json_t *job(const char *id, long sub, long start, long end, double gpus, const char *state)
{
    return json_pack("{s:s, s:o, s:o, s:o, s:f, s:s}", "id", id, "submitted_at", time_at(sub),
                     "started_at", start < 0 ? json_null() : time_at(start), "ended_at",
                     end < 0 ? json_null() : time_at(end), "gpus", gpus, "state", state);
}

/* A job that ran for rt seconds right at its submission (observed wait 0). */
static json_t *ran(const char *id, long sub, long rt, double gpus)
{
    return job(id, sub, sub, sub + rt, gpus, "COMPLETED");
}

static json_t *offer(double price_per_hour, double gpus_per_instance)
{
    return json_pack("{s:f, s:f, s:s}", "price_per_hour", price_per_hour, "gpus_per_instance",
                     gpus_per_instance, "currency", "USD");
}

static json_t *pool(const char *name, double r, const char *policy)
{
    return json_pack("{s:s, s:f, s:o, s:s}", "name", name, "pool_gpus", r, "pool_offer",
                     offer(2, 1), "policy", policy);
}

static json_t *with_overflow(json_t *a, long after_wait_s, double max_gpus, long delay)
{
    json_t *ov = json_pack("{s:o, s:I, s:I}", "offer", offer(3, 1), "after_wait_s",
                           (json_int_t)after_wait_s, "provisioning_delay_s", (json_int_t)delay);
    if (max_gpus >= 0)
        json_object_set_new(ov, "max_gpus", json_real(max_gpus));
    json_object_set_new(a, "overflow", ov);
    return a;
}

static json_t *doc_of(json_t *jobs, json_t *arrangements)
{
    return json_pack("{s:o, s:o}", "jobs", jobs, "arrangements", arrangements);
}

static json_t *replay_ok(json_t *doc)
{
    struct problems p;
    problems_init(&p);
    json_t *r = whatif_replay_document(doc, &p);
    for (size_t i = 0; i < p.count; i++)
        fprintf(stderr, "unexpected problem %s: %s\n", p.items[i].pointer, p.items[i].message);
    assert_non_null(r);
    problems_free(&p);
    json_decref(doc);
    return r;
}

/* The problems of an invalid document; the first must be at `pointer`. */
static void refused(json_t *doc, const char *pointer, const char *words)
{
    struct problems p;
    problems_init(&p);
    json_t *r = whatif_replay_document(doc, &p);
    assert_null(r);
    assert_true(p.count >= 1);
    int found = 0;
    for (size_t i = 0; i < p.count; i++)
        if (strcmp(p.items[i].pointer, pointer) == 0 &&
            (!words || strstr(p.items[i].message, words)))
            found = 1;
    if (!found)
        for (size_t i = 0; i < p.count; i++)
            fprintf(stderr, "problem %s: %s\n", p.items[i].pointer, p.items[i].message);
    assert_true(found);
    problems_free(&p);
    json_decref(doc);
}

static const json_t *arrangement(const json_t *result, size_t i)
{
    return json_array_get(json_object_get(result, "arrangements"), i);
}

static double fig(const json_t *a, const char *path)
{
    char copy[128];
    snprintf(copy, sizeof copy, "%s", path);
    const json_t *v = a;
    for (char *tok = strtok(copy, "/"); tok; tok = strtok(NULL, "/"))
        v = json_is_array(v) ? json_array_get(v, (size_t)atoi(tok)) : json_object_get(v, tok);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

/* Wait of job `id` in arrangement k, recomputed from the per-job outcome. */
static long wait_of(json_t *doc, size_t k, const char *id)
{
    struct problems p;
    problems_init(&p);
    struct whatif_plan *plan = malloc(sizeof *plan);
    struct whatif_jobs j;
    whatif_jobs_init(&j);
    assert_int_equal(whatif_plan_parse(doc, plan, &p), 0);
    assert_int_equal(whatif_jobs_from_json(json_object_get(doc, "jobs"), &j, &p), 0);
    struct whatif_outcome o;
    assert_int_equal(whatif_replay_one(&j, &plan->a[k], &o), 0);
    long w = -1;
    for (size_t i = 0; i < j.n; i++)
        if (strcmp(j.ids + j.v[i].id_off, id) == 0)
            w = o.where[i] == WHATIF_POOL || o.where[i] == WHATIF_OVERFLOW
                    ? (long)(o.start[i] - j.v[i].submitted)
                    : -(long)o.where[i] - 1; /* -2 not replayed … -4 unschedulable */
    whatif_outcome_free(&o);
    whatif_jobs_free(&j);
    free(plan);
    problems_free(&p);
    return w;
}

/* Ties: the queue is ordered by (submitted_at, id as a string), not by the input order. */
static void test_ties_by_id(void **state)
{
    (void)state;
    json_t *d =
        doc_of(json_pack("[o, o, o]", ran("b", 0, 10, 1), ran("a", 0, 10, 1), ran("a2", 0, 10, 1)),
               json_pack("[o]", pool("p", 1, "fifo")));
    assert_int_equal(wait_of(d, 0, "a"), 0);
    assert_int_equal(wait_of(d, 0, "a2"), 10);
    assert_int_equal(wait_of(d, 0, "b"), 20);
    json_decref(d);
}

/* FIFO stops at the first job that does not fit; EASY backfills a short job that ends by the
 * head's shadow time, and not a long one that would take the head's GPUs.
 * Pool 4: A(2 GPUs, 100 s) at 0, B(4, 10 s) at 1, C(1, 50 s) at 2, D(1, 200 s) at 3.
 * FIFO: B waits for A (100 → wait 99), C and D start when B ends at 110 (108, 107).
 * EASY: B's shadow time is 100 with extra 2 + 2 − 4 = 0; C ends at 52 ≤ 100: starts at 2 (0);
 * D would run past 100 with no extra: waits; B at 100; D at 110 (107). */
static json_t *fifo_easy_doc(void)
{
    return doc_of(json_pack("[o, o, o, o]", ran("A", 0, 100, 2), ran("B", 1, 10, 4),
                            ran("C", 2, 50, 1), ran("D", 3, 200, 1)),
                  json_pack("[o, o]", pool("fifo", 4, "fifo"), pool("easy", 4, "easy_backfill")));
}

static void test_fifo_and_easy(void **state)
{
    (void)state;
    json_t *d = fifo_easy_doc();
    assert_int_equal(wait_of(d, 0, "A"), 0);
    assert_int_equal(wait_of(d, 0, "B"), 99);
    assert_int_equal(wait_of(d, 0, "C"), 108);
    assert_int_equal(wait_of(d, 0, "D"), 107);
    assert_int_equal(wait_of(d, 1, "B"), 99);
    assert_int_equal(wait_of(d, 1, "C"), 0);
    assert_int_equal(wait_of(d, 1, "D"), 107);
    json_decref(d);
}

/* Backfill through `extra`: pool 4, A(2, 100 s) at 0, B(3, 10 s) at 1: S = 100 and extra =
 * 2 + 2 − 3 = 1. C(1, 1000 s) at 2 runs far past S but fits in extra: starts at 2 (extra → 0).
 * D(1, 1000 s) at 3: F = 1 but extra is now 0 (recomputed: 1 + 2 − 3): waits; B starts at 100,
 * D when B ends at 110 (wait 107). With backfill_depth 0 nothing backfills: C waits until A
 * ends at 100, when B starts and C, now the head, fits the GPU left (wait 98). */
static void test_backfill_extra(void **state)
{
    (void)state;
    json_t *d = doc_of(
        json_pack("[o, o, o, o]", ran("A", 0, 100, 2), ran("B", 1, 10, 3), ran("C", 2, 1000, 1),
                  ran("D", 3, 1000, 1)),
        json_pack("[o, o]", pool("easy", 4, "easy_backfill"), pool("nodepth", 4, "easy_backfill")));
    json_object_set_new(json_array_get(json_object_get(d, "arrangements"), 1), "backfill_depth",
                        json_integer(0));
    assert_int_equal(wait_of(d, 0, "C"), 0);
    assert_int_equal(wait_of(d, 0, "B"), 99);
    assert_int_equal(wait_of(d, 0, "D"), 107);
    assert_int_equal(wait_of(d, 1, "C"), 98);
    json_decref(d);
}

/* A job that fits F and ends exactly at the shadow time backfills (now + runtime ≤ S). */
static void test_backfill_ends_at_shadow(void **state)
{
    (void)state;
    json_t *d =
        doc_of(json_pack("[o, o, o]", ran("A", 0, 100, 2), ran("B", 0, 10, 4), ran("C", 0, 100, 2)),
               json_pack("[o]", pool("easy", 4, "easy_backfill")));
    /* queue order A, B, C: A starts; B blocked, S = 100, extra = 2 + 2 − 4 = 0; C ends at
     * 0 + 100 = S: starts. */
    assert_int_equal(wait_of(d, 0, "C"), 0);
    assert_int_equal(wait_of(d, 0, "B"), 100);
    json_decref(d);
}

/* Overflow after W with a provisioning delay: pool 1, A and B (1 GPU, 100 s and 10 s) at 0.
 * B's wait reaches W = 30 at 30 (an event of its own): it leaves for overflow and starts at
 * 30 + 5. Its overflow cost: 1 GPU × (10 + 5) s at 3 per GPU-hour. */
static void test_overflow_after_wait(void **state)
{
    (void)state;
    json_t *d = doc_of(json_pack("[o, o]", ran("A", 0, 100, 1), ran("B", 0, 10, 1)),
                       json_pack("[o]", with_overflow(pool("p", 1, "fifo"), 30, -1, 5)));
    assert_int_equal(wait_of(d, 0, "B"), 35);
    json_t *r = replay_ok(d);
    const json_t *a = arrangement(r, 0);
    assert_int_equal((int)fig(a, "overflowed"), 1);
    assert_double_equal(fig(a, "cost/overflow"), 15.0 * 3 / 3600, 1e-12);
    assert_double_equal(fig(a, "gpu_hours/overflow"), 15.0 / 3600, 1e-12);
    /* the pool is owned for the window (0 … 100): 1 GPU × 100 s × 2 per hour */
    assert_double_equal(fig(a, "cost/pool"), 100.0 * 2 / 3600, 1e-12);
    assert_int_equal((int)fig(a, "replay_end_s"), 100);
    json_decref(r);
}

/* max_gpus: pool 1, overflow of 1 GPU after W = 0. A, B, C (1 GPU, 100 s) at 0: A in the pool,
 * B on overflow at once, C finds the overflow full, is skipped, and at 100 (both end) the pass
 * comes before admission: C starts in the pool (wait 100). D (2 GPUs) is larger than the pool
 * and than max_gpus: unschedulable. E (2 GPUs) in a second arrangement with max_gpus 2 goes to
 * overflow at its submission, whatever W. */
static void test_overflow_max_gpus(void **state)
{
    (void)state;
    json_t *d = doc_of(json_pack("[o, o, o, o]", ran("A", 0, 100, 1), ran("B", 0, 100, 1),
                                 ran("C", 0, 100, 1), ran("D", 0, 100, 2)),
                       json_pack("[o, o]", with_overflow(pool("one", 1, "fifo"), 0, 1, 0),
                                 with_overflow(pool("two", 1, "fifo"), 1000, 2, 0)));
    assert_int_equal(wait_of(d, 0, "A"), 0);
    assert_int_equal(wait_of(d, 0, "B"), 0);
    assert_int_equal(wait_of(d, 0, "C"), 100);
    assert_int_equal(wait_of(d, 0, "D"), -4);
    assert_int_equal(wait_of(d, 1, "D"), 0);
    json_t *r = replay_ok(d);
    assert_int_equal((int)fig(arrangement(r, 0), "unschedulable"), 1);
    assert_int_equal((int)fig(arrangement(r, 1), "unschedulable"), 0);
    /* an arrangement with an unschedulable job is neither on the frontier nor recommended */
    assert_string_equal(json_string_value(json_object_get(r, "recommended")), "two");
    json_t *frontier = json_object_get(r, "frontier");
    assert_int_equal(json_array_size(frontier), 1);
    assert_string_equal(json_string_value(json_array_get(frontier, 0)), "two");
    json_decref(r);
}

/* A skipped overflow job is retried when overflow GPUs are freed, and later ones may go first:
 * overflow max 2, W 0, pool 0. A(2, 50 s) at 0 takes it; B(2, 10 s) at 1 is skipped; C(…)
 * no: everything is larger than the pool (R = 0), so each is admitted at submission when it
 * fits. B goes at 50 (wait 49). */
static void test_overflow_retry(void **state)
{
    (void)state;
    json_t *d =
        doc_of(json_pack("[o, o, o]", ran("A", 0, 50, 2), ran("B", 1, 10, 2), ran("C", 2, 10, 0.5)),
               json_pack("[o]", with_overflow(pool("burst", 0, "fifo"), 0, 2.5, 0)));
    assert_int_equal(wait_of(d, 0, "A"), 0);
    assert_int_equal(wait_of(d, 0, "B"), 49);
    /* C (0.5 GPU) fits beside A (2 + 0.5 ≤ 2.5): skipping B does not block it */
    assert_int_equal(wait_of(d, 0, "C"), 0);
    json_t *r = replay_ok(d);
    assert_true(json_is_null(json_object_get(arrangement(r, 0), "pool_utilization")));
    json_decref(r);
}

/* Larger than the pool without overflow: unschedulable, and counted. */
static void test_larger_than_pool(void **state)
{
    (void)state;
    json_t *r = replay_ok(doc_of(json_pack("[o, o]", ran("big", 0, 10, 8), ran("s", 0, 10, 1)),
                                 json_pack("[o]", pool("p", 4, "easy_backfill"))));
    const json_t *a = arrangement(r, 0);
    assert_int_equal((int)fig(a, "unschedulable"), 1);
    assert_int_equal((int)fig(a, "replayed"), 1);
    assert_true(json_is_null(json_object_get(r, "recommended")));
    json_decref(r);
}

/* Left out and counted: never started, no end, no GPUs (milli-GPUs 0: 0.0004 rounds to 0). */
static void test_not_replayed(void **state)
{
    (void)state;
    json_t *r = replay_ok(doc_of(json_pack("[o, o, o, o, o]", job("n", 0, -1, 50, 1, "CANCELLED"),
                                           job("e", 0, 5, -1, 1, "FAILED"), ran("z", 0, 10, 0.0004),
                                           ran("z0", 0, 10, 0), ran("ok", 10, 10, 0.0005)),
                                 json_pack("[o]", pool("p", 1, "fifo"))));
    assert_int_equal((int)fig(r, "jobs"), 5);
    assert_int_equal((int)fig(r, "not_replayed"), 4);
    assert_int_equal((int)fig(r, "not_replayed_by_reason/never_started"), 1);
    assert_int_equal((int)fig(r, "not_replayed_by_reason/no_end"), 1);
    assert_int_equal((int)fig(r, "not_replayed_by_reason/no_gpus"), 2);
    const json_t *a = arrangement(r, 0);
    assert_int_equal((int)fig(a, "replayed"), 1);
    assert_int_equal((int)fig(a, "not_replayed"), 4);
    /* the window runs to the last observed completion, 50 (the never-started one) */
    assert_int_equal((int)fig(a, "horizon_s"), 50);
    json_decref(r);
}

/* A job of runtime 0 completes in a further round at the same instant: the next job starts
 * then, without waiting. */
static void test_zero_runtime_round(void **state)
{
    (void)state;
    json_t *d = doc_of(json_pack("[o, o]", ran("a", 0, 0, 1), ran("b", 0, 10, 1)),
                       json_pack("[o]", pool("p", 1, "fifo")));
    assert_int_equal(wait_of(d, 0, "a"), 0);
    assert_int_equal(wait_of(d, 0, "b"), 0);
    json_decref(d);
}

/* Figures: pool 2 GPUs at 4 per 2-GPU instance (2 per GPU-hour); one 1-GPU job of an hour. */
static void test_figures(void **state)
{
    (void)state;
    json_t *a0 =
        json_pack("{s:s, s:i, s:o}", "name", "p", "pool_gpus", 2, "pool_offer", offer(4, 2));
    json_t *r = replay_ok(
        doc_of(json_pack("[o, o]", ran("a", 0, 3600, 1), job("f", 0, 0, 1800, 1, "FAILED")),
               json_pack("[o]", a0)));
    const json_t *a = arrangement(r, 0);
    assert_int_equal((int)fig(a, "owned_s"), 3600);
    assert_double_equal(fig(a, "pool_utilization"), (3600.0 + 1800) / (2 * 3600), 1e-12);
    assert_double_equal(fig(a, "cost/pool"), 4.0, 1e-12);
    assert_double_equal(fig(a, "cost/total"), 4.0, 1e-12);
    /* one COMPLETED job: the failed one costs too but completes nothing */
    assert_double_equal(fig(a, "cost_per_completed_job"), 4.0, 1e-12);
    assert_double_equal(fig(a, "gpu_hours_by_state/FAILED"), 0.5, 1e-12);
    assert_double_equal(fig(a, "gpu_hours/pool"), 1.5, 1e-12);
    assert_string_equal(json_string_value(json_object_get(r, "currency")), "USD");
    json_decref(r);
}

/* Quantiles interpolate between ranks (percentile_cont): waits 0, 10, 20, 30 → p50 15, p90 27. */
static void test_quantiles(void **state)
{
    (void)state;
    json_t *r = replay_ok(doc_of(json_pack("[o, o, o, o]", ran("a", 0, 10, 1), ran("b", 0, 10, 1),
                                           ran("c", 0, 10, 1), ran("d", 0, 10, 1)),
                                 json_pack("[o]", pool("p", 1, "fifo"))));
    const json_t *a = arrangement(r, 0);
    assert_double_equal(fig(a, "wait_s/p50"), 15, 1e-12);
    assert_double_equal(fig(a, "wait_s/p90"), 27, 1e-12);
    assert_double_equal(fig(a, "wait_s/p99"), 29.7, 1e-12);
    assert_double_equal(fig(a, "wait_s/mean"), 15, 1e-12);
    assert_int_equal(json_array_size(json_object_get(a, "wait_quantiles_s")), 101);
    assert_double_equal(fig(a, "wait_quantiles_s/0"), 0, 0);
    assert_double_equal(fig(a, "wait_quantiles_s/100"), 30, 0);
    assert_double_equal(fig(a, "wait_quantiles_s/1"), 0.3, 1e-12);
    json_decref(r);
}

/* Sweeps: NAME@R with R in its shortest form; from + i·step, not a running sum. */
static void test_sweep_names(void **state)
{
    (void)state;
    json_t *a = json_pack("{s:s, s:{s:f, s:f, s:f}, s:o}", "name", "own", "pool_gpus", "from", 1.0,
                          "to", 2.0, "step", 0.5, "pool_offer", offer(2, 1));
    json_t *b = json_pack("{s:s, s:{s:f, s:f, s:f}, s:o}", "name", "tenth", "pool_gpus", "from",
                          0.0, "to", 0.3, "step", 0.1, "pool_offer", offer(2, 1));
    json_t *r = replay_ok(doc_of(json_pack("[o]", ran("a", 0, 10, 1)), json_pack("[o, o]", a, b)));
    const char *want[] = {"own@1",
                          "own@1.5",
                          "own@2",
                          "tenth@0",
                          "tenth@0.1",
                          "tenth@0.2",
                          "tenth@0.30000000000000004"};
    json_t *arr = json_object_get(r, "arrangements");
    assert_int_equal(json_array_size(arr), 7);
    for (size_t i = 0; i < 7; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(arr, i), "name")),
                            want[i]);
    /* R = 0: no pool, no utilization, and the 1-GPU job is unschedulable without overflow */
    assert_true(json_is_null(json_object_get(json_array_get(arr, 3), "pool_utilization")));
    assert_int_equal((int)fig(json_array_get(arr, 3), "unschedulable"), 1);
    /* 0.1 GPU rounds to 100 milli-GPUs: the job is larger than that pool too */
    assert_int_equal((int)fig(json_array_get(arr, 4), "unschedulable"), 1);
    json_decref(r);
}

/* The recommendation: lowest total cost among arrangements with nothing unschedulable and a p90
 * wait within the target; the frontier: not beaten on both p90 and cost per completed job. */
static void test_recommendation_and_frontier(void **state)
{
    (void)state;
    /* Three 1-GPU jobs of 100 s at 0. One GPU: waits 0, 100, 200 (p90 180), cost 300 s × 2/h.
     * Two GPUs: waits 0, 0, 100 (p90 80), cost 2 × 200 s. Three: all 0, cost 3 × 100 s. */
    json_t *a = json_pack("{s:s, s:{s:i, s:i, s:i}, s:o, s:s}", "name", "own", "pool_gpus", "from",
                          1, "to", 3, "step", 1, "pool_offer", offer(2, 1), "policy", "fifo");
    json_t *d = doc_of(
        json_pack("[o, o, o]", ran("a", 0, 100, 1), ran("b", 0, 100, 1), ran("c", 0, 100, 1)),
        json_pack("[o]", a));
    json_object_set_new(d, "wait_p90_max_s", json_integer(100));
    json_t *r = replay_ok(d);
    assert_double_equal(fig(arrangement(r, 0), "wait_s/p90"), 180, 1e-12);
    assert_double_equal(fig(arrangement(r, 1), "wait_s/p90"), 80, 1e-12);
    assert_double_equal(fig(arrangement(r, 2), "wait_s/p90"), 0, 1e-12);
    /* costs: 300·1, 200·2, 100·3 GPU-seconds owned → own@1 and own@3 tie at 300, own@2 400 */
    assert_double_equal(fig(arrangement(r, 0), "cost/total"), 300.0 * 2 / 3600, 1e-12);
    assert_double_equal(fig(arrangement(r, 1), "cost/total"), 400.0 * 2 / 3600, 1e-12);
    /* within 100 s: own@2 (400) and own@3 (300): own@3 */
    assert_string_equal(json_string_value(json_object_get(r, "recommended")), "own@3");
    /* own@3 beats both others on p90 at a cost ≤ theirs: the frontier is own@3 alone */
    json_t *frontier = json_object_get(r, "frontier");
    assert_int_equal(json_array_size(frontier), 1);
    assert_string_equal(json_string_value(json_array_get(frontier, 0)), "own@3");
    json_decref(r);

    /* A target nothing meets: null. Without a target: the cheapest, ties in input order. */
    a = json_pack("{s:s, s:{s:i, s:i, s:i}, s:o, s:s}", "name", "own", "pool_gpus", "from", 1, "to",
                  3, "step", 2, "pool_offer", offer(2, 1), "policy", "fifo");
    d = doc_of(
        json_pack("[o, o, o]", ran("a", 0, 100, 1), ran("b", 0, 100, 1), ran("c", 0, 100, 1)),
        json_pack("[o]", a));
    json_t *d2 = json_deep_copy(d);
    json_object_set_new(d, "wait_p90_max_s", json_real(-0.0 + 0.0));
    json_object_set_new(
        json_object_get(json_array_get(json_object_get(d, "arrangements"), 0), "pool_gpus"), "to",
        json_integer(1));
    r = replay_ok(d);
    assert_true(json_is_null(json_object_get(r, "recommended")));
    json_decref(r);
    r = replay_ok(d2);
    assert_string_equal(json_string_value(json_object_get(r, "recommended")), "own@1");
    json_decref(r);
}

/* The backtest compares the observed waits with the baseline's replayed ones. */
static void test_backtest(void **state)
{
    (void)state;
    /* observed waits 10 and 30; the replay on 2 GPUs starts both at once (0, 0) */
    json_t *d = doc_of(json_pack("[o, o]", job("a", 0, 10, 110, 1, "COMPLETED"),
                                 job("b", 0, 30, 130, 1, "COMPLETED")),
                       json_pack("[o, o]", pool("actual", 2, "fifo"), pool("half", 1, "fifo")));
    json_object_set_new(d, "baseline", json_string("half"));
    json_t *r = replay_ok(d);
    const json_t *bt = json_object_get(r, "backtest");
    assert_string_equal(json_string_value(json_object_get(bt, "arrangement")), "half");
    assert_double_equal(fig(bt, "observed/p50"), 20, 1e-12);
    assert_double_equal(fig(bt, "observed/mean"), 20, 1e-12);
    /* on 1 GPU: a at 0, b at 100 → replayed waits 0 and 100 */
    assert_double_equal(fig(bt, "replayed/p50"), 50, 1e-12);
    assert_double_equal(fig(bt, "ratio/p50"), 2.5, 1e-12);
    assert_double_equal(fig(bt, "ratio/p90"), 90.0 / 28, 1e-12);
    assert_int_equal(json_array_size(json_object_get(bt, "observed_quantiles_s")), 101);
    json_decref(r);
    /* observed all 0: ratios null */
    d = doc_of(json_pack("[o]", ran("a", 0, 10, 1)), json_pack("[o]", pool("p", 1, "fifo")));
    json_object_set_new(d, "baseline", json_string("p"));
    r = replay_ok(d);
    assert_true(json_is_null(
        json_object_get(json_object_get(json_object_get(r, "backtest"), "ratio"), "p50")));
    json_decref(r);
}

/* Refusals, each named by its JSON Pointer. */
static void test_refusals(void **state)
{
    (void)state;
    json_t *jobs1 = json_pack("[o]", ran("a", 0, 10, 1));
    /* negative R */
    refused(doc_of(json_deep_copy(jobs1), json_pack("[o]", pool("p", -1, "fifo"))),
            "/arrangements/0/pool_gpus", NULL);
    /* an overflow without an offer */
    json_t *a = pool("p", 1, "fifo");
    json_object_set_new(a, "overflow", json_pack("{s:i}", "after_wait_s", 10));
    refused(doc_of(json_deep_copy(jobs1), json_pack("[o]", a)), "/arrangements/0/overflow/offer",
            "offer");
    /* an overflow without after_wait_s */
    a = pool("p", 1, "fifo");
    json_object_set_new(a, "overflow", json_pack("{s:o}", "offer", offer(3, 1)));
    refused(doc_of(json_deep_copy(jobs1), json_pack("[o]", a)),
            "/arrangements/0/overflow/after_wait_s", NULL);
    /* a step of 0 */
    a = json_pack("{s:s, s:{s:i, s:i, s:i}, s:o}", "name", "own", "pool_gpus", "from", 1, "to", 3,
                  "step", 0, "pool_offer", offer(2, 1));
    refused(doc_of(json_deep_copy(jobs1), json_pack("[o]", a)), "/arrangements/0/pool_gpus/step",
            NULL);
    /* 65 arrangements after expansion: a sweep of 64 and one more */
    a = json_pack("{s:s, s:{s:i, s:i, s:i}, s:o}", "name", "own", "pool_gpus", "from", 1, "to", 64,
                  "step", 1, "pool_offer", offer(2, 1));
    refused(doc_of(json_deep_copy(jobs1), json_pack("[o, o]", a, pool("x", 1, "fifo"))),
            "/arrangements", "64");
    /* … and a sweep of a billion sizes is refused without being made */
    a = json_pack("{s:s, s:{s:i, s:i, s:f}, s:o}", "name", "own", "pool_gpus", "from", 0, "to",
                  1000000, "step", 1e-6, "pool_offer", offer(2, 1));
    refused(doc_of(json_deep_copy(jobs1), json_pack("[o]", a)), "/arrangements", "64");
    /* 64 exactly is fine */
    a = json_pack("{s:s, s:{s:i, s:i, s:i}, s:o}", "name", "own", "pool_gpus", "from", 1, "to", 64,
                  "step", 1, "pool_offer", offer(2, 1));
    json_decref(replay_ok(doc_of(json_deep_copy(jobs1), json_pack("[o]", a))));
    /* two arrangements of one name */
    refused(doc_of(json_deep_copy(jobs1),
                   json_pack("[o, o]", pool("p", 1, "fifo"), pool("p", 2, "fifo"))),
            "/arrangements/1/name", NULL);
    /* a baseline naming nothing */
    json_t *d = doc_of(json_deep_copy(jobs1), json_pack("[o]", pool("p", 1, "fifo")));
    json_object_set_new(d, "baseline", json_string("q"));
    refused(d, "/baseline", NULL);
    /* a time without an offset; ended before started; an unknown policy; an unknown field */
    json_t *j = ran("a", 0, 10, 1);
    json_object_set_new(j, "submitted_at", json_string("2025-01-01T00:00:00"));
    refused(doc_of(json_pack("[o]", j), json_pack("[o]", pool("p", 1, "fifo"))),
            "/jobs/0/submitted_at", "offset");
    refused(doc_of(json_pack("[o, o]", ran("ok", 0, 1, 1), job("bad", 0, 10, 5, 1, "COMPLETED")),
                   json_pack("[o]", pool("p", 1, "fifo"))),
            "/jobs/1/ended_at", "bad");
    refused(doc_of(json_deep_copy(jobs1), json_pack("[o]", pool("p", 1, "lifo"))),
            "/arrangements/0/policy", NULL);
    d = doc_of(json_deep_copy(jobs1), json_pack("[o]", pool("p", 1, "fifo")));
    json_object_set_new(d, "arrangment", json_true());
    refused(d, "/arrangment", "unknown");
    /* two jobs of one id; a job without a state; no arrangements; offers in two currencies */
    refused(doc_of(json_pack("[o, o]", ran("a", 0, 1, 1), ran("a", 5, 1, 1)),
                   json_pack("[o]", pool("p", 1, "fifo"))),
            "/jobs/1/id", NULL);
    j = ran("a", 0, 10, 1);
    json_object_del(j, "state");
    refused(doc_of(json_pack("[o]", j), json_pack("[o]", pool("p", 1, "fifo"))), "/jobs/0/state",
            NULL);
    refused(doc_of(json_deep_copy(jobs1), json_array()), "/arrangements", NULL);
    a = with_overflow(pool("p", 1, "fifo"), 0, -1, 0);
    json_object_set_new(json_object_get(json_object_get(a, "overflow"), "offer"), "currency",
                        json_string("EUR"));
    refused(doc_of(json_deep_copy(jobs1), json_pack("[o]", a)),
            "/arrangements/0/overflow/offer/currency", "one currency");
    json_decref(jobs1);
}

/* The resolved document's bytes are the canonical bytes of the same document as one tree, and
 * the CLI's input_sha256 (over the document) is their hash. */
static void test_resolved_bytes(void **state)
{
    (void)state;
    json_t *d =
        doc_of(json_pack("[o, o, o]", ran("b\"\\é", 0, 10, 0.25),
                         job("n", 5, -1, 9, 2, "CANCELLED"), job("e", 7, 8, -1, 1, "FAILED")),
               json_pack("[o]", pool("p", 1, "fifo")));
    json_object_set_new(d, "wait_p90_max_s", json_real(60.5));
    json_object_set_new(d, "selection", json_pack("{s:s}", "team", "vision"));
    struct problems p;
    problems_init(&p);
    struct whatif_jobs j;
    whatif_jobs_init(&j);
    assert_int_equal(whatif_jobs_from_json(json_object_get(d, "jobs"), &j, &p), 0);
    size_t n1, n2;
    char h1[65], h2[65];
    char *a = whatif_resolved_jcs(d, &j, &n1, h1);
    char *b = jcs_serialize_sha256(d, &n2, h2);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1);
    assert_string_equal(h1, h2);
    json_t *r = whatif_replay_document(d, &p);
    assert_string_equal(json_string_value(json_object_get(r, "input_sha256")), h1);
    /* without any member before or after "jobs" */
    json_t *only = json_pack("{s:O}", "jobs", json_object_get(d, "jobs"));
    free(a);
    free(b);
    a = whatif_resolved_jcs(only, &j, &n1, h1);
    b = jcs_serialize_sha256(only, &n2, h2);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1);
    free(a);
    free(b);
    json_decref(only);
    json_decref(r);
    whatif_jobs_free(&j);
    problems_free(&p);
    json_decref(d);
}

/* The Alibaba trace under a sweep: every pod is accounted for in every arrangement, and more
 * GPUs never make the p90 wait worse under FIFO with no overflow… which is not a law of
 * scheduling, so this checks only what is: replayed + unschedulable + not_replayed = jobs, and
 * the biggest pool leaves no job unschedulable that fits it. */
struct collect {
    struct openb_reader reader;
    struct whatif_jobs jobs;
};

static int collect_line(const struct linebuf_line *l, void *ctx, struct problems *errs)
{
    struct collect *c = ctx;
    struct run run;
    enum openb_result res = openb_feed_line(&c->reader, l->text, l->len, l->lineno, &run, errs);
    if (res == OPENB_FATAL)
        return 1;
    if (res != OPENB_RUN)
        return 0;
    char ptr[32];
    snprintf(ptr, sizeof ptr, "/jobs/%ld", l->lineno);
    return whatif_jobs_add(&c->jobs, run.external_id, strlen(run.external_id), run.submitted_at_s,
                           run.has_started, run.started_at_s, true, run.ended_at_s, run.gpus,
                           run_state_name(run.state), ptr, errs) == 0
               ? 0
               : 1;
}

static void test_openb_sweep(void **state)
{
    (void)state;
    size_t len;
    char *text = sample_load("traces/alibaba-gpu-v2023/openb_pod_list_default.csv", &len);
    struct collect c;
    struct openb_options opt = {.trace_start_s = 1672531200, .team = NULL};
    openb_reader_init(&c.reader, &opt);
    whatif_jobs_init(&c.jobs);
    struct problems p;
    problems_init(&p);
    assert_int_equal(linebuf_stream(text, len, 8192, 0, collect_line, &c, &p), 0);
    assert_int_equal(c.jobs.n, 8152);
    json_t *plan_doc =
        json_pack("{s:[{s:s, s:{s:i, s:i, s:i}, s:o}]}", "arrangements", "name", "own", "pool_gpus",
                  "from", 100, "to", 6300, "step", 200, "pool_offer", offer(2, 1));
    struct whatif_plan *plan = malloc(sizeof *plan);
    assert_int_equal(whatif_plan_parse(plan_doc, plan, &p), 0);
    assert_int_equal(plan->n, 32);
    json_t *r = whatif_run(&c.jobs, plan, "0");
    assert_non_null(r);
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(r, "arrangements"), i, a)
    {
        assert_int_equal((int)fig(a, "replayed") + (int)fig(a, "unschedulable") +
                             (int)fig(a, "not_replayed"),
                         8152);
    }
    /* 897 pods never started (Pending); no pod takes more than 8 GPUs */
    assert_int_equal((int)fig(r, "not_replayed_by_reason/never_started"), 897);
    assert_int_equal((int)fig(arrangement(r, 31), "unschedulable"), 0);
    json_decref(r);
    json_decref(plan_doc);
    free(plan);
    whatif_jobs_free(&c.jobs);
    problems_free(&p);
    free(text);
}

/* A per-GPU-hour price that is not a finite number (a price over a vanishing
 * gpus_per_instance) is refused at the offer, not reported as running out of memory. */
static void test_price_not_finite(void **state)
{
    (void)state;
    json_t *a = pool("p", 1, "fifo");
    json_object_set_new(a, "pool_offer", offer(1e15, 1e-300));
    refused(doc_of(json_pack("[o]", ran("a", 0, 10, 1)), json_pack("[o]", a)),
            "/arrangements/0/pool_offer/gpus_per_instance", "GPU-hour");
    a = with_overflow(pool("p", 1, "fifo"), 0, -1, 0);
    json_object_set_new(json_object_get(a, "overflow"), "offer", offer(1e15, 1e-300));
    refused(doc_of(json_pack("[o]", ran("a", 0, 10, 1)), json_pack("[o]", a)),
            "/arrangements/0/overflow/offer/gpus_per_instance", "GPU-hour");
}

/* The server's work bound counts EASY's backfill window: each pass may look at backfill_depth
 * jobs, so 100,000 jobs under a window of 100,000 are far more than 100,000 under 500. */
static void test_work_counts_backfill_depth(void **state)
{
    (void)state;
    struct problems p;
    problems_init(&p);
    struct whatif_plan *plan = malloc(sizeof *plan);
    json_t *d = doc_of(json_array(), json_pack("[o]", pool("p", 4, "easy_backfill")));
    assert_int_equal(whatif_plan_parse(d, plan, &p), 0);
    assert_int_equal(whatif_check_work(1000000, plan, &p), 0);
    /* the largest selection, once, fits the bound (about 3 s); twice does not */
    assert_int_equal(whatif_check_work(2000000, plan, &p), 0);
    json_t *two = doc_of(json_array(), json_pack("[o, o]", pool("p", 4, "easy_backfill"),
                                                 pool("q", 8, "easy_backfill")));
    struct whatif_plan *plan2 = malloc(sizeof *plan2);
    assert_int_equal(whatif_plan_parse(two, plan2, &p), 0);
    assert_int_equal(whatif_check_work(2000000, plan2, &p), -1);
    assert_int_equal(p.total, 1);
    problems_free(&p);
    problems_init(&p);
    json_decref(two);
    free(plan2);
    plan->a[0].backfill_depth = WHATIF_MAX_BACKFILL_DEPTH;
    assert_int_equal(whatif_check_work(100000, plan, &p), -1);
    assert_string_equal(p.items[0].pointer, "/arrangements");
    /* a window longer than the history costs no more than the history */
    assert_int_equal(whatif_check_work(2000, plan, &p), 0);
    /* FIFO looks at the head only */
    plan->a[0].policy = WHATIF_FIFO;
    assert_int_equal(whatif_check_work(1000000, plan, &p), 0);
    json_decref(d);
    free(plan);
    problems_free(&p);
}

/* CPU seconds of one replay of j under the document's first arrangement. */
static double replay_seconds(const struct whatif_jobs *j, json_t *arrangements,
                             struct whatif_outcome *o)
{
    struct problems p;
    problems_init(&p);
    struct whatif_plan *plan = malloc(sizeof *plan);
    json_t *d = doc_of(json_array(), arrangements);
    assert_int_equal(whatif_plan_parse(d, plan, &p), 0);
    clock_t t = clock();
    assert_int_equal(whatif_replay_one(j, &plan->a[0], o), 0);
    double s = (double)(clock() - t) / CLOCKS_PER_SEC;
    json_decref(d);
    free(plan);
    problems_free(&p);
    return s;
}

static void add_job(struct whatif_jobs *j, const char *id, long sub, long rt, double gpus)
{
    struct problems p;
    problems_init(&p);
    assert_int_equal(whatif_jobs_add(j, id, strlen(id), T0 + sub, true, T0 + sub, true,
                                     T0 + sub + rt, gpus, "COMPLETED", "/jobs/0", &p),
                     0);
    problems_free(&p);
}

/* Hostile shapes that made one replay quadratic (a server's engine slot held for hours):
 * - overflow full (max_gpus) with a long queue of jobs that have waited W: every event walked
 *   the whole queue to find none fits;
 * - many small jobs running beside a head that needs the whole pool: every pass walked every
 *   running job for the head's shadow time.
 * Each is replayed well under a second now (tens of seconds before), with the schedule the
 * contract gives. */
static void test_hostile_shapes_fast(void **state)
{
    (void)state;
    char id[32];
    /* 1. pool 1, overflow max 1 after W 0; 100,000 jobs of 1 GPU and 1 s at 0: each second
     *    one starts in the pool and the next on overflow, so job k starts at ⌊k/2⌋. */
    struct whatif_jobs j;
    whatif_jobs_init(&j);
    const long n1 = 100000;
    for (long k = 0; k < n1; k++) {
        snprintf(id, sizeof id, "j%07ld", k);
        add_job(&j, id, 0, 1, 1);
    }
    struct whatif_outcome o;
    double s =
        replay_seconds(&j, json_pack("[o]", with_overflow(pool("p", 1, "fifo"), 0, 1, 0)), &o);
    for (long k = 0; k < n1; k += 9999) {
        assert_int_equal(o.start[k] - (T0 + 0), k / 2);
        assert_int_equal(o.where[k], k % 2 ? WHATIF_OVERFLOW : WHATIF_POOL);
    }
    whatif_outcome_free(&o);
    whatif_jobs_free(&j);
    fprintf(stderr, "overflow full, long queue: %.3f s\n", s);
    assert_true(s < 3.0);

    /* 2. pool of T + 1 milli-GPUs; T jobs of 1 milli-GPU running from 0 until 10^6 + i; a head
     *    H at 1 needing the whole pool (shadow time 10^6 + T − 1, extra 0); K jobs of 1
     *    milli-GPU and 1 s behind it backfill one after the other on the one free milli-GPU
     *    (each ends long before the shadow time): s_k starts at 1 + k. */
    whatif_jobs_init(&j);
    const long T = 30000, K = 30000;
    for (long i = 0; i < T; i++) {
        snprintf(id, sizeof id, "a%07ld", i);
        add_job(&j, id, 0, 1000000 + i, 0.001);
    }
    add_job(&j, "h", 1, 1, (double)(T + 1) / 1000);
    for (long k = 0; k < K; k++) {
        snprintf(id, sizeof id, "s%07ld", k);
        add_job(&j, id, 1, 1, 0.001);
    }
    json_t *a = pool("p", (double)(T + 1) / 1000, "easy_backfill");
    s = replay_seconds(&j, json_pack("[o]", a), &o);
    assert_int_equal(o.start[T] - T0, 1000000 + T - 1); /* H at the shadow time */
    for (long k = 0; k < K; k += 997)
        assert_int_equal(o.start[T + 1 + k] - T0, 1 + k);
    whatif_outcome_free(&o);
    whatif_jobs_free(&j);
    fprintf(stderr, "head of the whole pool beside many small jobs: %.3f s\n", s);
    assert_true(s < 3.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ties_by_id),
        cmocka_unit_test(test_fifo_and_easy),
        cmocka_unit_test(test_backfill_extra),
        cmocka_unit_test(test_backfill_ends_at_shadow),
        cmocka_unit_test(test_overflow_after_wait),
        cmocka_unit_test(test_overflow_max_gpus),
        cmocka_unit_test(test_overflow_retry),
        cmocka_unit_test(test_larger_than_pool),
        cmocka_unit_test(test_not_replayed),
        cmocka_unit_test(test_zero_runtime_round),
        cmocka_unit_test(test_figures),
        cmocka_unit_test(test_quantiles),
        cmocka_unit_test(test_sweep_names),
        cmocka_unit_test(test_recommendation_and_frontier),
        cmocka_unit_test(test_backtest),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_resolved_bytes),
        cmocka_unit_test(test_openb_sweep),
        cmocka_unit_test(test_price_not_finite),
        cmocka_unit_test(test_work_counts_backfill_depth),
        cmocka_unit_test(test_hostile_shapes_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
