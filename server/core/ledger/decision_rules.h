/* Rules over stored decisions that decide an outcome, pure so that they are unit-tested without
 * PostgreSQL (the store gathers the facts, these decide):
 *
 *  - the references a decision record makes must exist and fit (its review, the decision it
 *    supersedes, its cited comparisons, the chosen option);
 *  - a decision served from the database must be bound to its log leaf (every served member is
 *    the leaf's, the signer is the owner the log enrolled the key for, a successor's leaf
 *    supersedes it). */
#ifndef CAPLEDGER_CORE_DECISION_RULES_H
#define CAPLEDGER_CORE_DECISION_RULES_H

#include <jansson.h>
#include <stddef.h>

#include "core/problems.h"

/* Appends to p (pointers under /record) every reference of record that the stored facts do not
 * support. facts: {"review": the review's row {id, …} or null, "supersedes": the superseded
 * decision's row {review_id, superseded_by} or null, "comparisons": [{stored: bool, result:
 * the comparison document} per record.comparison_sha256, in order]}. */
void decision_check_references(const json_t *record, const json_t *facts, struct problems *p);

/* decision_view (decision.h) of a leaf given as standard base64; NULL when it is not a
 * decision leaf (or not base64). */
json_t *decision_view_b64(const char *leaf_b64) __attribute__((warn_unused_result));

/* Binds a stored decision row to its leaf. row: the row as the API would serve it, with the
 * helper members leaf (its leaf, base64), enrol_leaf (the enrolment leaf of its signer's key)
 * and successor_leaf (the leaf of the decision named by superseded_by, if any). On success the
 * served members are replaced by the leaf's and fault is left ""; else fault names the first
 * difference (the row is then not to be served). The helper members are removed either way. */
void decision_bind_to_leaf(json_t *row, char *fault, size_t size);

#endif
