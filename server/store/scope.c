/* The caller's team scope; see scope.h. */
#include "store/scope.h"

#include <stdlib.h>

void team_scope_init(struct team_scope *s, int all, const json_t *teams)
{
    s->all = all;
    s->teams = all ? NULL : teams;
    s->param = NULL;
    if (!all && teams)
        s->param = json_dumps(teams, JSON_COMPACT);
}

void team_scope_free(struct team_scope *s)
{
    free(s->param);
    s->param = NULL;
}

const char *team_scope_param(const struct team_scope *s)
{
    if (!s || s->all)
        return "null";
    return s->param ? s->param : "[]";
}
