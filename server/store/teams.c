/* Teams. */
#include "store/store.h"
#include "core/validate.h"
#include "store/teams.h"

#include <stdio.h>

static const char *SQL_CREATE =
    "INSERT INTO team (name) VALUES ($1) "
    "RETURNING json_build_object('id', id, 'name', name, 'created_at', created_at)";

/* Keyset pagination on name: $1 the last name seen (or NULL), $2 the page size + 1 so the
 * caller learns whether there is a next page without a second query. */
static const char *SQL_LIST =
    "SELECT coalesce(json_agg(json_build_object('id', id, 'name', name, "
    "'created_at', created_at) ORDER BY name), '[]') "
    "FROM (SELECT * FROM team WHERE $1::text IS NULL OR name > $1 ORDER BY name LIMIT $2) t";

static const char *SQL_GET_BY_ID =
    "SELECT json_build_object('id', id, 'name', name, 'created_at', created_at) "
    "FROM team WHERE id = $1::uuid";
static const char *SQL_GET_BY_NAME =
    "SELECT json_build_object('id', id, 'name', name, 'created_at', created_at) "
    "FROM team WHERE name = $1";

enum store_status store_team_create(struct store *s, const struct audit_actor *who,
                                    const char *name, json_t **out)
{
    const char *p[] = {name};
    return store_write_audited(s, who, "team.create", SQL_CREATE, STORE_ARGS(p), out);
}

enum store_status store_team_list(struct store *s, const char *after, int limit, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", limit);
    const char *p[] = {after, lim};
    return store_json(s, SQL_LIST, STORE_ARGS(p), out);
}

enum store_status store_team_get(struct store *s, const char *id_or_name, json_t **out)
{
    const char *p[] = {id_or_name};
    return store_json(s, uuid_valid(id_or_name) ? SQL_GET_BY_ID : SQL_GET_BY_NAME, STORE_ARGS(p),
                      out);
}
