/* The advance gate (core/ledger/gate.h): a complete advance passes, and each unmet condition,
 * alone, is named by its own problem at its own JSON Pointer with its exact words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include "core/ledger/gate.h"

#define SHA1 "1111111111111111111111111111111111111111111111111111111111111111"

static const char *const RECORD =
    "{\"decision\":\"advance\",\"owner\":\"ana\",\"accepted_by\":\"ben\","
    "\"chosen_option\":\"a100\",\"comparison_sha256\":[\"" SHA1 "\"],\"justification\":null}";
static const char *const CHECKLIST =
    "{\"covered\":true,\"items\":[{\"item\":\"workload and memory profile\",\"covered\":true,"
    "\"evidence\":[],\"missing\":[]},{\"item\":\"data and storage path\",\"covered\":true,"
    "\"evidence\":[],\"missing\":[]}]}";
static const char *const COMPARISON =
    "{\"sha256\":\"" SHA1 "\",\"stored\":true,\"result\":{\"winner\":\"a100\","
    "\"ranking\":[\"a100\",\"h100\"],\"options\":[{\"name\":\"a100\",\"feasible\":true,"
    "\"infeasible_reasons\":[]},{\"name\":\"h100\",\"feasible\":false,"
    "\"infeasible_reasons\":[\"memory\",\"deadline\"]}]}}";

struct fixture {
    json_t *record, *checklist, *comparison;
    struct problems p;
};

static json_t *parse(const char *text)
{
    json_error_t error;
    json_t *v = json_loads(text, 0, &error);
    if (!v)
        fail_msg("fixture does not parse: %s", error.text);
    return v;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    f->record = parse(RECORD);
    f->checklist = parse(CHECKLIST);
    f->comparison = parse(COMPARISON);
    problems_init(&f->p);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    json_decref(f->record);
    json_decref(f->checklist);
    json_decref(f->comparison);
    problems_free(&f->p);
    free(f);
    return 0;
}

static const struct problems *check(struct fixture *f)
{
    problems_free(&f->p);
    problems_init(&f->p);
    struct gate_facts g = {.record = f->record,
                           .checklist = f->checklist,
                           .comparison =
                               json_array_size(json_object_get(f->record, "comparison_sha256"))
                                   ? f->comparison
                                   : NULL};
    gate_check(&g, &f->p);
    return &f->p;
}

static void print_problems(const struct problems *p)
{
    for (size_t i = 0; i < p->count; i++)
        print_message("  %s: %s\n", p->items[i].pointer, p->items[i].message);
}

/* The problems are exactly these (pointer, message) pairs, in this order. */
static void assert_problems(const struct problems *p, size_t n, const char *const pairs[][2])
{
    if (p->total != n) {
        print_problems(p);
        fail_msg("%zu problems, expected %zu", p->total, n);
    }
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(p->items[i].pointer, pairs[i][0]);
        assert_string_equal(p->items[i].message, pairs[i][1]);
    }
}

static void test_complete_advance_passes(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(check(f)->total, 0);
}

static void test_uncovered_checklist_items(void **state)
{
    struct fixture *f = *state;
    json_t *items = json_object_get(f->checklist, "items");
    json_t *first = json_array_get(items, 0);
    json_object_set_new(first, "covered", json_false());
    json_object_set_new(first, "missing",
                        json_pack("[s, s]",
                                  "workload 'train' gives no "
                                  "target_units",
                                  "no option has a memory verdict"));
    json_t *second = json_array_get(items, 1);
    json_object_set_new(second, "covered", json_false());
    json_object_set_new(second, "missing", json_pack("[s]", "no dataset size"));
    const char *const want[][2] = {
        {"/record", "checklist item 'workload and memory profile' is not covered: workload "
                    "'train' gives no target_units; no option has a memory verdict"},
        {"/record", "checklist item 'data and storage path' is not covered: no dataset size"},
    };
    assert_problems(check(f), 2, want);
}

static void test_long_missing_text_is_cut_at_a_sentence(void **state)
{
    struct fixture *f = *state;
    json_t *first = json_array_get(json_object_get(f->checklist, "items"), 0);
    json_object_set_new(first, "covered", json_false());
    char sentence[1500];
    memset(sentence, 'x', sizeof sentence - 1);
    sentence[sizeof sentence - 1] = '\0';
    json_object_set_new(first, "missing", json_pack("[s, s]", sentence, sentence));
    const struct problems *p = check(f);
    assert_int_equal(p->total, 1);
    /* the second sentence does not fit in the problem's text: it is left out whole */
    assert_null(strstr(p->items[0].message, "; "));
    assert_non_null(strstr(p->items[0].message, sentence));
}

static void test_owner_and_acceptor(void **state)
{
    struct fixture *f = *state;
    json_object_del(f->record, "owner");
    json_object_set_new(f->record, "accepted_by", json_string(""));
    const char *const want[][2] = {
        {"/record/owner", "an advance names its owner"},
        {"/record/accepted_by", "an advance names the person accepting the next stage"},
    };
    assert_problems(check(f), 2, want);
}

static void test_no_comparison_cited(void **state)
{
    struct fixture *f = *state;
    json_object_set_new(f->record, "comparison_sha256", json_array());
    /* with no comparison nothing is asked of the option, not even that one is named */
    json_object_del(f->record, "chosen_option");
    const char *const want[][2] = {
        {"/record/comparison_sha256", "an advance cites the comparison it rests on"},
    };
    assert_problems(check(f), 1, want);
}

static void test_no_chosen_option(void **state)
{
    struct fixture *f = *state;
    json_object_set_new(f->record, "chosen_option", json_null());
    const char *const want[][2] = {
        {"/record/chosen_option", "an advance names the option it advances"},
    };
    assert_problems(check(f), 1, want);
}

static void test_infeasible_option(void **state)
{
    struct fixture *f = *state;
    json_object_set_new(f->record, "chosen_option", json_string("h100"));
    json_object_set_new(f->record, "justification", json_string("policy"));
    const char *const want[][2] = {
        {"/record/chosen_option",
         "option 'h100' is infeasible in comparison " SHA1 " (memory, deadline)"},
    };
    assert_problems(check(f), 1, want);
    /* no reasons given */
    json_t *h100 =
        json_array_get(json_object_get(json_object_get(f->comparison, "result"), "options"), 1);
    json_object_set_new(h100, "infeasible_reasons", json_array());
    const char *const want2[][2] = {
        {"/record/chosen_option",
         "option 'h100' is infeasible in comparison " SHA1 " (no reason given)"},
    };
    assert_problems(check(f), 1, want2);
}

static void test_not_the_winner_needs_a_justification(void **state)
{
    struct fixture *f = *state;
    json_t *result = json_object_get(f->comparison, "result");
    json_t *h100 = json_array_get(json_object_get(result, "options"), 1);
    json_object_set_new(h100, "feasible", json_true());
    json_object_set_new(f->record, "chosen_option", json_string("h100"));
    const char *const want[][2] = {
        {"/record/justification", "option 'h100' is not the winner ('a100') of comparison " SHA1
                                  ": a justification is required"},
    };
    assert_problems(check(f), 1, want);
    json_object_set_new(f->record, "justification", json_string("cheaper support contract"));
    assert_int_equal(check(f)->total, 0);
}

static void test_no_winner_at_all(void **state)
{
    struct fixture *f = *state;
    json_t *result = json_object_get(f->comparison, "result");
    json_object_del(result, "winner");
    json_object_set_new(result, "ranking", json_array());
    const char *const want[][2] = {
        {"/record/justification",
         "option 'a100' is not the winner of comparison " SHA1 ": a justification is required"},
    };
    assert_problems(check(f), 1, want);
}

static void test_every_condition_at_once(void **state)
{
    struct fixture *f = *state;
    json_t *first = json_array_get(json_object_get(f->checklist, "items"), 0);
    json_object_set_new(first, "covered", json_false());
    json_object_set_new(first, "missing", json_pack("[s]", "m"));
    json_object_del(f->record, "owner");
    json_object_del(f->record, "accepted_by");
    json_object_set_new(f->record, "chosen_option", json_string("h100"));
    const char *const want[][2] = {
        {"/record", "checklist item 'workload and memory profile' is not covered: m"},
        {"/record/owner", "an advance names its owner"},
        {"/record/accepted_by", "an advance names the person accepting the next stage"},
        {"/record/chosen_option",
         "option 'h100' is infeasible in comparison " SHA1 " (memory, deadline)"},
        {"/record/justification", "option 'h100' is not the winner ('a100') of comparison " SHA1
                                  ": a justification is required"},
    };
    assert_problems(check(f), 5, want);
}

static void test_winner(void **state)
{
    (void)state;
    json_t *r = parse("{\"winner\":\"a\",\"ranking\":[\"b\"]}");
    assert_string_equal(gate_winner(r), "a");
    json_object_set_new(r, "winner", json_null());
    assert_string_equal(gate_winner(r), "b");
    json_object_set_new(r, "winner", json_string(""));
    assert_string_equal(gate_winner(r), "b");
    json_object_set_new(r, "ranking", json_array());
    assert_null(gate_winner(r));
    assert_null(gate_winner(NULL));
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_complete_advance_passes),
        T(test_uncovered_checklist_items),
        T(test_long_missing_text_is_cut_at_a_sentence),
        T(test_owner_and_acceptor),
        T(test_no_comparison_cited),
        T(test_no_chosen_option),
        T(test_infeasible_option),
        T(test_not_the_winner_needs_a_justification),
        T(test_no_winner_at_all),
        T(test_every_condition_at_once),
        T(test_winner),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
