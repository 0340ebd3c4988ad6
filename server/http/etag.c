/* Versioned rows and If-Match (RFC 9110 §13.1.1): the one ETag scheme of the API. See
 * internal.h. */
#include <stdio.h>
#include <string.h>

#include "http/internal.h"

int etag_matches(const char *if_match, const char *etag)
{
    char quoted[80];
    snprintf(quoted, sizeof quoted, "\"%s\"", etag);
    size_t want = strlen(quoted);
    for (const char *s = if_match; *s;) {
        s += strspn(s, " ,");
        size_t len = strcspn(s, ", ");
        if ((len == 1 && *s == '*') || (len == want && strncmp(s, quoted, len) == 0))
            return 1;
        s += len;
    }
    return 0;
}

long etag_row_version(const json_t *row)
{
    return (long)json_integer_value(json_object_get(row, "version"));
}

const char *etag_version(const json_t *row, char buf[ETAG_MAX])
{
    snprintf(buf, ETAG_MAX, "v%ld", etag_row_version(row));
    return buf;
}

void resp_versioned(struct req *r, int status, json_t *row_stolen)
{
    char etag[ETAG_MAX];
    etag_version(row_stolen, etag);
    resp_json_etag(r, status, row_stolen, etag);
}

void resp_read_versioned(struct req *r, json_t *row)
{
    if (row)
        resp_versioned(r, 200, row);
}

int etag_patch_body(struct req *r, struct problems *p)
{
    if (json_is_object(r->body))
        return 0;
    problems_add(p, "", "a merge patch must be a JSON object");
    resp_invalid(r, p, NULL);
    return -1;
}

int etag_required(struct req *r, const char *what)
{
    if (req_header(r, "If-Match"))
        return 0;
    resp_problem(r, 428, "precondition-required", "Precondition required",
                 "send If-Match with the ETag of the %s", what);
    return -1;
}

int etag_check(struct req *r, const json_t *row, const char *what)
{
    const char *header = req_header(r, "If-Match");
    char etag[ETAG_MAX];
    etag_version(row, etag);
    if (!header) {
        resp_problem(r, 428, "precondition-required", "Precondition required",
                     "send If-Match with the ETag of the %s (now \"%s\")", what, etag);
        return -1;
    }
    if (etag_matches(header, etag))
        return 0;
    resp_problem(r, 412, "precondition-failed", "Precondition failed",
                 "the %s changed since you read it (now ETag \"%s\"); read it again", what, etag);
    return -1;
}
