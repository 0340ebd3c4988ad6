/* Workload class labels and their tiers (db/migrations/0130_class_labels.sql): runs keep the
 * class label they carry or their cluster map gives, as given; owners map each label to a tier,
 * exploratory or production, which the review checklist and the drift check count runs by. A
 * label no mapping names counts as exploratory and is listed as unmapped. */
#ifndef CAPLEDGER_STORE_CLASSES_H
#define CAPLEDGER_STORE_CLASSES_H

#include "store/audit.h"
#include "store/scope.h"
#include "store/store.h"

/* The most unmapped labels the list names (the most runs first). */
#define CLASSES_UNMAPPED_MAX 1000

/* {items: [{label, tier, version, updated_by_name, updated_at, runs}] by label, unmapped:
 * [{label, runs}] (labels runs carry that no mapping names, the most runs first, at most
 * CLASSES_UNMAPPED_MAX), unmapped_total}; runs count the runs of the teams in scope. */
enum store_status store_classes_list(struct store *s, const struct team_scope *scope,
                                     json_t **out) STORE_MUSTCHECK;
/* Maps label (valid: core/validate.h) to tier (exploratory|production), audited; *out the
 * mapping. STORE_CONFLICT for a built-in label (exploratory, production) given another tier. */
enum store_status store_class_put(struct store *s, const struct audit_actor *who, const char *label,
                                  const char *tier, json_t **out) STORE_MUSTCHECK;

#endif
