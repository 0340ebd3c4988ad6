/* Workload class labels and their tiers: see store/classes.h. */
#include "store/classes.h"

#include <stdio.h>
#include <string.h>

/* Run counts per label from the monthly rollup (0061), for the teams in scope ($1). */
#define LABEL_RUNS                                                                                 \
    "lr AS (SELECT x.workload_class AS label, sum(x.runs)::bigint AS runs FROM run_usage_month x " \
    "WHERE x.workload_class IS NOT NULL AND ($1::jsonb = 'null'::jsonb OR x.team IN (SELECT "      \
    "jsonb_array_elements_text($1::jsonb))) GROUP BY 1) "

static const char *SQL_LIST =
    "WITH " LABEL_RUNS ", um AS (SELECT lr.* FROM lr WHERE NOT EXISTS (SELECT 1 FROM "
    "workload_class_tier t WHERE t.label = lr.label)) "
    "SELECT json_build_object('items', (SELECT coalesce(json_agg(json_build_object('label', "
    "t.label, 'tier', t.tier, 'version', t.version, 'updated_by_name', t.updated_by_name, "
    "'updated_at', t.updated_at, 'runs', coalesce(lr.runs, 0)) ORDER BY t.label), '[]') FROM "
    "workload_class_tier t LEFT JOIN lr ON lr.label = t.label), "
    "'unmapped', (SELECT coalesce(json_agg(json_build_object('label', u.label, 'runs', u.runs) "
    "ORDER BY u.runs DESC, u.label), '[]') FROM (SELECT * FROM um ORDER BY runs DESC, label "
    "LIMIT $2::integer) u), 'unmapped_total', (SELECT count(*) FROM um))";

/* The built-in labels keep their own tier; any other is created or re-mapped. */
static const char *SQL_PUT =
    "INSERT INTO workload_class_tier AS t (label, tier, updated_by_name) VALUES ($1, $2, $3) "
    "ON CONFLICT (label) DO UPDATE SET tier = EXCLUDED.tier, version = t.version + 1, "
    "updated_by_name = EXCLUDED.updated_by_name, updated_at = now() "
    "WHERE t.label NOT IN ('exploratory', 'production') OR t.tier = EXCLUDED.tier "
    "RETURNING json_build_object('label', t.label, 'tier', t.tier, 'version', t.version, "
    "'updated_by_name', t.updated_by_name, 'updated_at', t.updated_at)";

enum store_status store_classes_list(struct store *s, const struct team_scope *scope, json_t **out)
{
    char max[16];
    snprintf(max, sizeof max, "%d", CLASSES_UNMAPPED_MAX);
    const char *p[] = {team_scope_param(scope), max};
    return store_json(s, SQL_LIST, STORE_ARGS(p), out);
}

enum store_status store_class_put(struct store *s, const struct audit_actor *who, const char *label,
                                  const char *tier, json_t **out)
{
    const char *p[] = {label, tier, who->name};
    enum store_status st =
        store_write_audited(s, who, "workload_class.put", SQL_PUT, STORE_ARGS(p), out);
    return st == STORE_NOT_FOUND ? STORE_CONFLICT : st;
}
