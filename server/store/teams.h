/* Teams: workload teams own evidence; members see only their teams' data. */
#ifndef CAPLEDGER_STORE_TEAMS_H
#define CAPLEDGER_STORE_TEAMS_H

#include "store/audit.h"
#include "store/store.h"

/* *out: {id, name, created_at}. STORE_CONFLICT when the name exists. */
enum store_status store_team_create(struct store *s, const struct audit_actor *who,
                                    const char *name, json_t **out) STORE_MUSTCHECK;
/* *out: array ordered by name, at most limit items after the name `after` (NULL: from the start).
 */
enum store_status store_team_list(struct store *s, const char *after, int limit,
                                  json_t **out) STORE_MUSTCHECK;
enum store_status store_team_get(struct store *s, const char *id_or_name,
                                 json_t **out) STORE_MUSTCHECK;

#endif
