/* Whole-upload refusals that name the likely mistake (upload_sniff.h). */
#include "http/upload_sniff.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static const char *upload_slug(enum sniff_upload u)
{
    switch (u) {
    case SNIFF_RUNS:
        return "runs";
    case SNIFF_TELEMETRY:
        return "telemetry";
    case SNIFF_LOADTEST:
        return "loadtest";
    case SNIFF_OFFERS:
        return "offers";
    case SNIFF_NONE:
        break;
    }
    return "";
}

void upload_guess(struct upload_guess *g, const char *head, size_t len, enum sniff_upload expected,
                  const char *expected_format)
{
    memset(g, 0, sizeof *g);
    g->mismatch =
        sniff_mismatch(head, len, expected, expected_format, &g->s, g->msg, sizeof g->msg);
}

void upload_refuse(struct req *r, const struct problems *p, const char *detail,
                   const struct upload_guess *g)
{
    if (!g || !g->mismatch) {
        resp_invalid(r, p, detail);
        return;
    }
    char sentence[300];
    snprintf(sentence, sizeof sentence, "%c%s.",
             g->msg[0] >= 'a' && g->msg[0] <= 'z' ? g->msg[0] - 32 : g->msg[0], g->msg + 1);
    json_t *members = json_pack("{s:o, s:I, s:{s:s, s:s, s:s, s:s}}", "errors",
                                problems_errors_json(p), "error_count", (json_int_t)p->total,
                                "looks_like", "upload", upload_slug(g->s.upload), "format",
                                g->s.format, "what", g->s.what, "message", g->msg);
    resp_problem_with(r, 422, "invalid", "Invalid input", members, "%s", sentence);
}
