/* The audit trail, newest first: auditors and admins. */
#include <string.h>

#include "http/internal.h"

static int digits_only(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 18) /* fits a bigint */
        return 0;
    return strspn(s, "0123456789") == n;
}

static void audit_list(struct req *r)
{
    char before_buf[64];
    const char *before = NULL;
    int limit = req_limit(r);
    if (limit < 0 || req_cursor(r, before_buf, sizeof before_buf, &before) != 0)
        return;
    if (before && !digits_only(before)) {
        struct problems p;
        problems_init(&p);
        problems_add(&p, "", "query parameter cursor is not a cursor this server issued");
        resp_invalid(r, &p, NULL);
        problems_free(&p);
        return;
    }
    json_t *items = NULL;
    enum store_status st = store_audit_list(r->app->store, before, limit + 1, &items);
    if (st != STORE_OK) {
        resp_store_error(r, st, "audit events");
        return;
    }
    resp_page(r, items, limit, "id");
}

const struct route audit_routes[] = {
    {"GET", "/api/v1/audit/events", audit_list, ROLE_AUDITOR | ROLE_ADMIN, 0},
    {NULL, NULL, NULL, 0, 0},
};
