/* The caller's team scope: which teams' rows a read may return. Computed once per request from
 * the principal (http/auth.c principal_scope), passed to every store read that scopes by team,
 * and bound into their SQL by team_scope_param alone. */
#ifndef CAPLEDGER_STORE_SCOPE_H
#define CAPLEDGER_STORE_SCOPE_H

#include <jansson.h>

struct team_scope {
    int all;             /* every team (owners, auditors, admins) */
    const json_t *teams; /* when !all: the team names the caller may read (borrowed; NULL: none) */
    char *param;         /* the rendered parameter (owned; team_scope_init sets it) */
};

/* all, or else the teams (borrowed: they must outlive the scope). */
void team_scope_init(struct team_scope *s, int all, const json_t *teams);
/* Frees what init rendered; a zeroed scope (no team) is fine too. */
void team_scope_free(struct team_scope *s);

/* The scope as the store's queries bind it: "null" for every team (also for s == NULL, the
 * server's own reads), else a JSON array of names; "[]" when nothing could be rendered, so a
 * failure shows nothing rather than everything. */
const char *team_scope_param(const struct team_scope *s);

#endif
