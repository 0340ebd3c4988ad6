/* Binary COPY rows of runs, class resolution, and the usage rollups summed in the server
 * (core/formats/pgcopy.h, run.h, runrollup.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "core/formats/pgcopy.h"
#include "core/formats/run.h"
#include "core/formats/runrollup.h"
#include "core/qwhist.h"

static const char UPLOAD[] = "0b8f2c0a-54f1-4ce8-ad43-1f13546d4ff7";

static void make_run(struct run *r, const char *id, const char *team, int64_t sub, int64_t start,
                     int64_t end, double gpus)
{
    run_clear(r);
    assert_true(run_set_text(r->cluster, "fox", 3));
    assert_true(run_set_text(r->external_id, id, strlen(id)));
    if (team)
        assert_true(run_set_text(r->team, team, strlen(team)));
    assert_true(run_set_text(r->partition, "gpu", 3));
    r->submitted_at_s = sub;
    r->has_submitted = true;
    r->started_at_s = start;
    r->has_started = start >= 0;
    r->ended_at_s = end;
    r->has_ended = true;
    r->gpus = gpus;
    r->state = RUN_STATE_COMPLETED;
}

static uint64_t be(const char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | (unsigned char)p[i];
    return v;
}

static void test_binary_fields(void **state)
{
    (void)state;
    struct pgcopy_buf b;
    pgcopy_init(&b);
    pgcopy_bin_header(&b);
    assert_int_equal(b.len, 19);
    assert_memory_equal(b.data, "PGCOPY\n\377\r\n\0", 11);
    pgcopy_reset(&b);
    pgcopy_bin_row(&b, 3);
    pgcopy_bin_text(&b, "ab");
    pgcopy_bin_null(&b);
    pgcopy_bin_text(&b, NULL);
    assert_int_equal(b.len, 2 + 6 + 4 + 4);
    assert_int_equal(be(b.data, 2), 3);
    assert_int_equal(be(b.data + 2, 4), 2);
    assert_memory_equal(b.data + 6, "ab", 2);
    assert_int_equal(be(b.data + 8, 4), 0xffffffffu);
    pgcopy_reset(&b);
    /* 2000-01-01T00:00:01Z is 1,000,000 µs after PostgreSQL's epoch */
    pgcopy_bin_time_s(&b, 946684801, true);
    assert_int_equal(be(b.data, 4), 8);
    assert_int_equal(be(b.data + 4, 8), 1000000);
    pgcopy_reset(&b);
    pgcopy_bin_time_s(&b, 946684800 - 1, true); /* before 2000: negative */
    assert_int_equal((int64_t)be(b.data + 4, 8), -1000000);
    pgcopy_reset(&b);
    pgcopy_bin_double(&b, 1.5);
    double d;
    uint64_t bits = be(b.data + 4, 8);
    memcpy(&d, &bits, sizeof d);
    assert_true(d == 1.5);
    pgcopy_reset(&b);
    pgcopy_bin_double(&b, NAN);
    assert_int_equal(be(b.data, 4), 0xffffffffu);
    pgcopy_reset(&b);
    assert_true(pgcopy_bin_uuid(&b, UPLOAD));
    assert_int_equal(be(b.data, 4), 16);
    assert_int_equal((unsigned char)b.data[4], 0x0b);
    assert_int_equal((unsigned char)b.data[19], 0xf7);
    pgcopy_reset(&b);
    assert_false(pgcopy_bin_uuid(&b, "0b8f2c0a-54f1-4ce8-ad43-1f13546d4ff"));
    assert_false(pgcopy_bin_uuid(&b, "0b8f2c0a-54f1-4ce8-ad43-1f13546d4ff7x"));
    assert_false(pgcopy_bin_uuid(&b, "0b8f2c0a+54f1-4ce8-ad43-1f13546d4ff7"));
    assert_int_equal(b.len, 0);
    pgcopy_bin_trailer(&b);
    assert_int_equal(be(b.data, 2), 0xffff);
    assert_true(pgcopy_ok(&b));
    pgcopy_free(&b);
}

static void test_run_row(void **state)
{
    (void)state;
    struct run r;
    make_run(&r, "42", "vision", 1735689600, 1735689700, 1735693300, 2);
    struct pgcopy_buf b;
    pgcopy_init(&b);
    assert_true(run_copy_binary(&r, "production", UPLOAD, &b));
    assert_true(pgcopy_ok(&b));
    assert_int_equal(be(b.data, 2), RUN_BINARY_FIELDS);
    /* id: 0 until set, then the id given, big-endian */
    assert_int_equal(be(b.data + 2, 4), 8);
    assert_int_equal(be(b.data + 6, 8), 0);
    run_copy_binary_set_id(b.data, INT64_C(0x0102030405060708));
    assert_int_equal(be(b.data + 2, 4), 8);
    assert_int_equal(be(b.data + 6, 8), INT64_C(0x0102030405060708));
    /* cluster, external_id, team, user (NULL), class */
    size_t at = 14;
    const char *want[] = {"fox", "42", "vision", NULL, "production", "gpu", NULL};
    for (size_t i = 0; i < 7; i++) {
        uint64_t n = be(b.data + at, 4);
        at += 4;
        if (!want[i]) {
            assert_int_equal(n, 0xffffffffu);
            continue;
        }
        assert_int_equal(n, strlen(want[i]));
        assert_memory_equal(b.data + at, want[i], n);
        at += n;
    }
    /* three times, gpus, state, exit code (NULL), utilization (NULL), upload id, then wckey,
     * comment, job name and workload (NULL) */
    assert_int_equal(b.len, at + 3 * 12 + 12 + 4 + 9 + 4 + 4 + 20 + 4 * 4);
    assert_false(run_copy_binary(&r, NULL, "not-a-uuid", &b));
    pgcopy_free(&b);
}

static void test_class_resolution(void **state)
{
    (void)state;
    json_t *v = json_pack("{s:s, s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:n}, {s:s, "
                          "s:s, s:s}]}",
                          "default", "exploratory", "parts", "partition", "gpu", "gpu_model",
                          "a100", "class", "production", "partition", "gpu", "gpu_model", "",
                          "class", "exploratory", "partition", "dbg", "gpu_model", "h100", "class",
                          "partition", "dbg", "gpu_model", "", "class", "production");
    struct run_classmap m;
    assert_int_equal(run_classmap_from_json(v, &m), 0);
    json_decref(v);
    assert_int_equal(m.n, 4);
    struct run r;
    make_run(&r, "1", NULL, 0, 0, 1, 1);
    /* by partition with any model: the run has no model */
    assert_string_equal(run_class_resolve(NULL, &r, &m), "exploratory");
    assert_true(run_set_text(r.gpu_model, "a100", 4));
    assert_string_equal(run_class_resolve(NULL, &r, &m), "production");
    assert_true(run_set_text(r.gpu_model, "v100", 4)); /* no entry for the model */
    assert_string_equal(run_class_resolve(NULL, &r, &m), "exploratory");
    /* an entry without a class is passed over */
    assert_true(run_set_text(r.partition, "dbg", 3));
    assert_true(run_set_text(r.gpu_model, "h100", 4));
    assert_string_equal(run_class_resolve(NULL, &r, &m), "production");
    /* no entry at all: the cluster's default; no partition: the default too */
    assert_true(run_set_text(r.partition, "cpu", 3));
    assert_string_equal(run_class_resolve(NULL, &r, &m), "exploratory");
    r.partition[0] = '\0';
    assert_string_equal(run_class_resolve(NULL, &r, &m), "exploratory");
    /* the run's own class, then ?class= over everything */
    assert_true(run_set_text(r.workload_class, "production", 10));
    assert_string_equal(run_class_resolve(NULL, &r, &m), "production");
    assert_string_equal(run_class_resolve("exploratory", &r, &m), "exploratory");
    run_classmap_free(&m);
    r.workload_class[0] = '\0';
    assert_null(run_class_resolve(NULL, &r, NULL));
    /* a cluster without a default */
    v = json_pack("{s:n, s:n}", "default", "parts");
    assert_int_equal(run_classmap_from_json(v, &m), 0);
    assert_null(run_class_resolve(NULL, &r, &m));
    run_classmap_free(&m);
    json_decref(v);
    assert_int_equal(run_classmap_from_json(json_null(), &m), -1);
    /* labels are the team's own, kept as given (issue 21: LS, BE, Burstable, Guaranteed) */
    v = json_pack("{s:s, s:[{s:s, s:s, s:s}]}", "default", "Burstable", "parts", "partition", "p",
                  "gpu_model", "", "class", "LS");
    assert_int_equal(run_classmap_from_json(v, &m), 0);
    assert_true(run_set_text(r.partition, "p", 1));
    assert_string_equal(run_class_resolve(NULL, &r, &m), "LS");
    r.partition[0] = '\0';
    assert_string_equal(run_class_resolve(NULL, &r, &m), "Burstable");
    assert_true(run_set_text(r.workload_class, "Guaranteed", 10));
    assert_string_equal(run_class_resolve(NULL, &r, &m), "Guaranteed");
    assert_string_equal(run_class_resolve("BE", &r, &m), "BE");
    run_classmap_free(&m);
    json_decref(v);
}

static void test_days_and_months(void **state)
{
    (void)state;
    assert_int_equal(rollup_day_start(1735689600 + 86399), 1735689600);
    assert_int_equal(rollup_day_start(-1), -86400);
    /* 2025-02-14 → 2025-02-01; 2024-12-31T23:59:59Z → 2024-12-01; 1969-12-31 → 1969-12-01 */
    assert_int_equal(rollup_month_start(1739491200), 1738368000);
    assert_int_equal(rollup_month_start(1735689599), 1733011200);
    assert_int_equal(rollup_month_start(-1), -2678400);
    /* a leap day */
    assert_int_equal(rollup_month_start(1709164800), 1706745600);
}

static json_t *find(json_t *list, const char *field, const char *value)
{
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o)
    {
        const char *s = json_string_value(json_object_get(o, field));
        if ((!value && json_is_null(json_object_get(o, field))) ||
            (s && value && !strcmp(s, value)))
            return o;
    }
    return NULL;
}

static void test_rollup(void **state)
{
    (void)state;
    struct rollup *t = rollup_new();
    assert_non_null(t);
    struct run a, b, c, d;
    int64_t day = 1735689600;
    make_run(&a, "1", "vision", day + 10, day + 70, day + 3670, 2);   /* wait 60, 2 GPU-hours */
    make_run(&b, "2", "vision", day + 20, day + 20, day + 1820, 0.5); /* wait 0, 0.25 */
    b.gpu_utilization = 0.5;
    make_run(&c, "3", NULL, day + 30, -1, day + 40, 1);             /* never started */
    make_run(&d, "4", "vision", day + 40, day + 100, day + 200, 0); /* no GPUs */
    struct rollup_ref ra, rb, rc, rd, ra2;
    assert_int_equal(rollup_prepare(t, &a, "production", &ra), 0);
    assert_int_equal(rollup_prepare(t, &b, "production", &rb), 0);
    assert_int_equal(rollup_prepare(t, &c, NULL, &rc), 0);
    assert_int_equal(rollup_prepare(t, &d, "production", &rd), 0);
    assert_int_equal(rollup_prepare(t, &a, "production", &ra2), 0); /* a duplicate: not added */
    assert_int_equal(ra.day_group, rb.day_group);
    assert_int_equal(ra.day_group, rd.day_group);
    assert_int_not_equal(ra.day_group, rc.day_group);
    assert_int_not_equal(ra.hist_group, rb.hist_group); /* buckets of 60 s and 0 s */
    assert_int_equal(rc.hist_group, -1);
    assert_int_equal(rd.hist_group, -1);
    assert_int_equal(rollup_groups(t), 4);
    rollup_add(t, &ra);
    rollup_add(t, &rb);
    rollup_add(t, &rc);
    rollup_add(t, &rd);
    json_t *days = rollup_day_json(t);
    assert_int_equal(json_array_size(days), 2);
    json_t *g = find(days, "team", "vision");
    assert_string_equal(json_string_value(json_object_get(g, "day")), "2025-01-01T00:00:00Z");
    assert_string_equal(json_string_value(json_object_get(g, "cluster")), "fox");
    assert_string_equal(json_string_value(json_object_get(g, "partition")), "gpu");
    assert_true(json_is_null(json_object_get(g, "gpu_model")));
    assert_string_equal(json_string_value(json_object_get(g, "state")), "COMPLETED");
    assert_int_equal(json_integer_value(json_object_get(g, "runs")), 3);
    assert_int_equal(json_integer_value(json_object_get(g, "gpu_runs")), 2);
    assert_int_equal(json_integer_value(json_object_get(g, "gh_runs")), 2);
    assert_int_equal(json_integer_value(json_object_get(g, "never_started")), 0);
    assert_true(json_real_value(json_object_get(g, "gh")) == 2.0 + 0.25);
    assert_int_equal(json_integer_value(json_object_get(g, "qw_sum")), 60);
    assert_int_equal(json_integer_value(json_object_get(g, "qw_n")), 2);
    assert_true(json_real_value(json_object_get(g, "util_sum")) == 0.5);
    assert_int_equal(json_integer_value(json_object_get(g, "util_n")), 1);
    g = find(days, "team", NULL);
    assert_true(json_is_null(json_object_get(g, "workload_class")));
    assert_int_equal(json_integer_value(json_object_get(g, "never_started")), 1);
    assert_int_equal(json_integer_value(json_object_get(g, "qw_n")), 0);
    assert_true(json_real_value(json_object_get(g, "gh")) == 0);
    json_decref(days);
    json_t *hist = rollup_hist_json(t);
    assert_int_equal(json_array_size(hist), 2);
    size_t i;
    json_t *h;
    json_array_foreach(hist, i, h)
    {
        assert_string_equal(json_string_value(json_object_get(h, "month")), "2025-01-01T00:00:00Z");
        assert_int_equal(json_integer_value(json_object_get(h, "n")), 1);
        int k = (int)json_integer_value(json_object_get(h, "bucket"));
        assert_true(k == qwhist_bucket(60) || k == QWHIST_ZERO);
    }
    json_decref(hist);
    rollup_clear(t);
    assert_int_equal(rollup_groups(t), 0);
    days = rollup_day_json(t);
    assert_int_equal(json_array_size(days), 0);
    json_decref(days);
    /* many groups: the table grows */
    for (int n = 0; n < 5000; n++) {
        struct run x;
        make_run(&x, "x", "vision", day + (int64_t)n * 86400, day + (int64_t)n * 86400 + 5,
                 day + (int64_t)n * 86400 + 10, 1);
        struct rollup_ref rx;
        assert_int_equal(rollup_prepare(t, &x, NULL, &rx), 0);
        rollup_add(t, &rx);
    }
    assert_int_equal(rollup_groups(t), 5000 + 165); /* the days, and one bucket per month */
    rollup_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binary_fields),    cmocka_unit_test(test_run_row),
        cmocka_unit_test(test_class_resolution), cmocka_unit_test(test_days_and_months),
        cmocka_unit_test(test_rollup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
