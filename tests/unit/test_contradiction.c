/* Typed against evidence (core/ledger/contradiction.h): which typed assumptions are candidates,
 * the scenario recomputed with the evidence value, the verdict; and the gate and checklist
 * reading it (core/ledger/gate.h, checklist.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "core/ledger/checklist.h"
#include "core/ledger/contradiction.h"
#include "core/ledger/gate.h"
#include "core/problems.h"

static json_t *load(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    assert_non_null(v);
    return v;
}

/* option 0 from a stored benchmark (measured), option 1 typed, option 2 typed with *_from */
static const char *const RESOLVED =
    "{\"assumptions\":{\"failure_probability\":0.05},\"options\":["
    "{\"name\":\"stored\",\"benchmark\":{\"failure_probability\":0.02,\"queue_wait_s\":600}},"
    "{\"name\":\"typed\",\"benchmark\":{\"failure_probability\":0.01,\"queue_wait_s\":60}},"
    "{\"name\":\"from\",\"benchmark\":{\"failure_probability\":0.3,\"source\":{\"evidence_from\":"
    "{\"failure_probability\":{}}}}}]}";
static const char *const OPTIONS =
    "[{\"benchmark_id\":\"11111111-1111-4111-8111-111111111111\"},{\"benchmark_id\":null},"
    "{\"benchmark_id\":null}]";

static void test_candidates(void **state)
{
    (void)state;
    json_t *resolved = load(RESOLVED), *options = load(OPTIONS);
    json_t *ev = load("{\"failure\":{\"attempts\":200,\"failed\":50,\"uploads\":[\"u1\"]},"
                      "\"queue\":[{\"runs\":30,\"mean_s\":900},{\"runs\":30,\"mean_s\":1200},"
                      "{\"runs\":5,\"mean_s\":7}]}");
    json_t *c = contradiction_candidates(resolved, options, ev);
    /* the assumption, option 1's q and its queue wait; not the stored option, not the *_from */
    assert_int_equal(json_array_size(c), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(c, 0), "assumption")),
                        "/assumptions/failure_probability");
    assert_true(fabs(json_real_value(json_object_get(json_array_get(c, 0), "evidence")) - 0.25) <
                1e-12);
    assert_string_equal(json_string_value(json_object_get(json_array_get(c, 1), "assumption")),
                        "/options/1/benchmark/failure_probability");
    assert_string_equal(json_string_value(json_object_get(json_array_get(c, 2), "field")),
                        "queue_wait_s");
    assert_string_equal(json_string_value(json_object_get(json_array_get(c, 2), "item")),
                        "queue and provisioning delay");
    /* the scenario recomputed with the evidence value at the pointer, the rest as it was */
    json_t *sc = contradiction_scenario(resolved, json_array_get(c, 1));
    json_t *b = json_object_get(json_array_get(json_object_get(sc, "options"), 1), "benchmark");
    assert_true(fabs(json_real_value(json_object_get(b, "failure_probability")) - 0.25) < 1e-12);
    assert_true(fabs(json_number_value(json_object_get(json_object_get(sc, "assumptions"),
                                                       "failure_probability")) -
                     0.05) < 1e-12);
    json_decref(sc);
    json_decref(c);
    /* fewer than CONTRADICTION_MIN_RUNS: no evidence, no candidate */
    json_object_set_new(json_object_get(ev, "failure"), "attempts", json_integer(19));
    json_object_set_new(json_array_get(json_object_get(ev, "queue"), 1), "runs", json_integer(19));
    c = contradiction_candidates(resolved, options, ev);
    assert_int_equal(json_array_size(c), 0);
    json_decref(c);
    json_decref(ev);
    json_decref(resolved);
    json_decref(options);
}

static void test_decide_and_gate(void **state)
{
    (void)state;
    json_t *cands = load("[{\"assumption\":\"/options/1/benchmark/failure_probability\","
                         "\"field\":\"failure_probability\",\"option\":\"typed\","
                         "\"item\":\"failure and rerun rate\",\"typed\":0.01,\"evidence\":0.25,"
                         "\"runs\":200},{\"assumption\":\"/options/1/benchmark/queue_wait_s\","
                         "\"field\":\"queue_wait_s\",\"option\":\"typed\",\"item\":\"queue and "
                         "provisioning delay\",\"typed\":30,\"evidence\":90,\"runs\":40}]");
    json_t *after = load("[\"stored\", \"typed\"]");
    json_t *d = contradiction_decide(cands, "typed", after);
    json_t *q = json_array_get(d, 0), *w = json_array_get(d, 1);
    assert_true(json_is_true(json_object_get(q, "changes_winner")));
    assert_true(json_is_true(json_object_get(q, "contradicted")));
    assert_true(fabs(json_real_value(json_object_get(q, "gap")) - 24) < 1e-12);
    assert_false(json_is_true(json_object_get(w, "contradicted")));
    /* a wait's gap is relative to at least 60 s: (90 − 30) / 60 */
    assert_true(fabs(json_real_value(json_object_get(w, "gap")) - 1) < 1e-12);

    /* the checklist marks the item contradicted (still covered) */
    json_t *workloads = load("[]");
    struct checklist_facts f = {.workloads = workloads, .cited = NULL, .typed_vs_evidence = d};
    json_t *cl = checklist_decide(&f);
    size_t i;
    json_t *it;
    json_array_foreach(json_object_get(cl, "items"), i, it)
    {
        const char *name = json_string_value(json_object_get(it, "item"));
        const char *status = json_string_value(json_object_get(it, "status"));
        if (json_is_true(json_object_get(it, "covered")))
            assert_string_equal(status, strcmp(name, "failure and rerun rate") == 0 ? "contradicted"
                                                                                    : "covered");
        else
            assert_string_equal(status, "missing");
    }
    assert_int_equal(json_array_size(json_object_get(cl, "typed_vs_evidence")), 2);

    /* the gate: without a justification, one problem naming the assumption; with one, none */
    json_t *checklist =
        json_pack("{s:b, s:[], s:O}", "covered", 1, "items", "typed_vs_evidence", d);
    json_t *record = load("{\"decision\":\"advance\",\"owner\":\"ana\",\"accepted_by\":\"ben\","
                          "\"chosen_option\":\"typed\",\"comparison_sha256\":[\"x\"]}");
    json_t *cmp = load("{\"sha256\":\"x\",\"result\":{\"winner\":\"typed\",\"options\":[{\"name\":"
                       "\"typed\",\"feasible\":true}]}}");
    struct gate_facts g = {.record = record, .checklist = checklist, .comparison = cmp};
    struct problems p;
    problems_init(&p);
    gate_check(&g, &p);
    assert_int_equal(p.total, 1);
    assert_string_equal(p.items[0].pointer, "/record/justification");
    const char *msg = p.items[0].message;
    assert_non_null(strstr(msg, "/options/1/benchmark/failure_probability (option 'typed')"));
    assert_non_null(strstr(msg, "'stored' wins instead of 'typed'"));
    problems_free(&p);
    json_object_set_new(record, "justification", json_string("a data bug, fixed"));
    problems_init(&p);
    gate_check(&g, &p);
    assert_int_equal(p.total, 0);
    problems_free(&p);

    json_decref(record);
    json_decref(cmp);
    json_decref(checklist);
    json_decref(cl);
    json_decref(workloads);
    json_decref(d);
    json_decref(after);
    json_decref(cands);
}

/* Evidence with which no option can win (every attempt failed: a failure probability of 1 is no
 * scenario the engine computes, or no option stays feasible) contradicts the typed figure more
 * than any other winner would: contradicted, and the gate names it. */
static void test_no_winner_with_evidence(void **state)
{
    (void)state;
    json_t *cands = load("[{\"assumption\":\"/options/1/benchmark/failure_probability\","
                         "\"field\":\"failure_probability\",\"option\":\"typed\",\"item\":"
                         "\"failure and rerun rate\",\"typed\":0.01,\"evidence\":1,\"runs\":"
                         "55}]");
    json_t *after = load("[null]");
    json_t *d = contradiction_decide(cands, "typed", after);
    json_t *q = json_array_get(d, 0);
    assert_true(json_is_null(json_object_get(q, "winner_with_evidence")));
    assert_true(json_is_true(json_object_get(q, "changes_winner")));
    assert_true(json_is_true(json_object_get(q, "contradicted")));
    json_t *checklist =
        json_pack("{s:b, s:[], s:O}", "covered", 1, "items", "typed_vs_evidence", d);
    json_t *record = load("{\"decision\":\"advance\",\"owner\":\"ana\",\"accepted_by\":\"ben\","
                          "\"chosen_option\":\"typed\",\"comparison_sha256\":[\"x\"]}");
    json_t *cmp = load("{\"sha256\":\"x\",\"result\":{\"winner\":\"typed\",\"options\":[{\"name\":"
                       "\"typed\",\"feasible\":true}]}}");
    struct gate_facts g = {.record = record, .checklist = checklist, .comparison = cmp};
    struct problems p;
    problems_init(&p);
    gate_check(&g, &p);
    assert_int_equal(p.total, 1);
    assert_string_equal(p.items[0].pointer, "/record/justification");
    assert_non_null(strstr(p.items[0].message, "no option wins"));
    problems_free(&p);
    /* no stored winner to begin with (the recomputation of the comparison itself failed):
     * nothing is known to change */
    json_t *none = contradiction_decide(cands, NULL, after);
    assert_false(json_is_true(json_object_get(json_array_get(none, 0), "contradicted")));
    json_decref(none);
    json_decref(record);
    json_decref(cmp);
    json_decref(checklist);
    json_decref(d);
    json_decref(after);
    json_decref(cands);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_candidates),
        cmocka_unit_test(test_decide_and_gate),
        cmocka_unit_test(test_no_winner_with_evidence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
