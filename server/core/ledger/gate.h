/* The advance gate (docs/reviews.md): the conditions a decision
 * "advance" must meet before the log accepts it. Pure: the store gathers the facts (the
 * checklist over the record's citations, the first cited comparison) and appends the record
 * only when gate_check added no problem; tests/unit/test_gate.c covers every condition.
 *
 * Every unmet condition is its own problem, named by JSON Pointer into the request body
 * ({"record": ...}), so one 422 lists them all:
 *   - each checklist item not covered (/record, with its missing sentences joined by "; ");
 *   - no owner (/record/owner); no accepted_by (/record/accepted_by);
 *   - no comparison cited (/record/comparison_sha256) — then nothing about the option is asked;
 *   - no chosen_option (/record/chosen_option) — then nothing more is asked;
 *   - the chosen option infeasible in the first cited comparison (/record/chosen_option, with
 *     its infeasible_reasons);
 *   - the chosen option not the comparison's winner and no justification
 *     (/record/justification);
 *   - each typed assumption the checklist's typed_vs_evidence marks contradicted (its evidence
 *     value changes the winner) and no justification (/record/justification, naming it). */
#ifndef CAPLEDGER_CORE_GATE_H
#define CAPLEDGER_CORE_GATE_H

#include <jansson.h>

#include "core/problems.h"

/* What the gate is decided from. Every member is borrowed.
 * record: the decision record (validated by decision_validate).
 * checklist: checklist_decide's answer over the record's review and citations.
 * comparison: the first cited comparison, stored: {sha256, result: {options: [{name,
 *   feasible, infeasible_reasons}], winner?, ranking?}}; NULL when none is cited. */
struct gate_facts {
    const json_t *record;
    const json_t *checklist;
    const json_t *comparison;
};

/* Appends a problem to p for every unmet condition (none: the advance may be appended). */
void gate_check(const struct gate_facts *facts, struct problems *p);

/* A comparison result's winner: `winner`, else the first of `ranking`; NULL when neither. */
const char *gate_winner(const json_t *result);

#endif
