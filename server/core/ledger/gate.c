/* The advance gate: see gate.h. */
#include "core/ledger/gate.h"

#include <stdio.h>
#include <string.h>

static const char *text_of(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s && *s ? s : NULL;
}

/* The comparison's winner: `winner`, else the first of `ranking`. */
const char *gate_winner(const json_t *result)
{
    const char *w = text_of(result, "winner");
    return w ? w : json_string_value(json_array_get(json_object_get(result, "ranking"), 0));
}

void gate_check(const struct gate_facts *f, struct problems *p)
{
    const json_t *record = f->record;
    const json_t *cited = json_object_get(record, "comparison_sha256");
    size_t i, k;
    json_t *item, *m;
    json_array_foreach(json_object_get(f->checklist, "items"), i, item)
    {
        if (json_is_true(json_object_get(item, "covered")))
            continue;
        char text[2000] = "";
        size_t used = 0;
        json_array_foreach(json_object_get(item, "missing"), k, m)
        {
            int n = snprintf(text + used, sizeof text - used, "%s%s", k ? "; " : "",
                             json_string_value(m));
            if (n < 0 || (size_t)n >= sizeof text - used) {
                text[used] = '\0'; /* whole sentences only: drop the one cut short */
                break;
            }
            used += (size_t)n;
        }
        problems_add(p, "/record", "checklist item '%s' is not covered: %s",
                     json_string_value(json_object_get(item, "item")), text);
    }
    if (!text_of(record, "owner"))
        problems_add(p, "/record/owner", "an advance names its owner");
    if (!text_of(record, "accepted_by"))
        problems_add(p, "/record/accepted_by",
                     "an advance names the person accepting the next stage");
    if (!json_array_size(cited)) {
        problems_add(p, "/record/comparison_sha256", "an advance cites the comparison it rests on");
        return;
    }
    const json_t *first = f->comparison;
    const json_t *result = json_object_get(first, "result");
    const char *chosen = text_of(record, "chosen_option");
    const char *sha = text_of(first, "sha256") ? text_of(first, "sha256") : "";
    if (!chosen) {
        problems_add(p, "/record/chosen_option", "an advance names the option it advances");
        return;
    }
    json_t *opt;
    json_array_foreach(json_object_get(result, "options"), i, opt)
    {
        if (!text_of(opt, "name") || strcmp(text_of(opt, "name"), chosen) != 0)
            continue;
        if (!json_is_true(json_object_get(opt, "feasible"))) {
            char reasons[300] = "";
            json_t *r;
            json_array_foreach(json_object_get(opt, "infeasible_reasons"), k, r)
            {
                size_t used = strlen(reasons);
                snprintf(reasons + used, sizeof reasons - used, "%s%s", k ? ", " : "",
                         json_string_value(r) ? json_string_value(r) : "?");
            }
            problems_add(p, "/record/chosen_option",
                         "option '%s' is infeasible in comparison %s (%s)", chosen, sha,
                         reasons[0] ? reasons : "no reason given");
        }
    }
    /* a typed assumption the stored evidence contradicts (it changes the winner): signing it
     * needs a written justification, naming each (core/ledger/contradiction.h) */
    json_t *c;
    json_array_foreach(json_object_get(f->checklist, "typed_vs_evidence"), i, c)
    {
        if (!json_is_true(json_object_get(c, "contradicted")) || text_of(record, "justification"))
            continue;
        problems_add(p, "/record/justification",
                     "the typed assumption %s%s%s%s = %.6g is contradicted by the stored evidence "
                     "(%.6g over %lld runs), with which %s%s%s instead of '%s': a "
                     "justification is required",
                     text_of(c, "assumption") ? text_of(c, "assumption") : "?",
                     text_of(c, "option") ? " (option '" : "",
                     text_of(c, "option") ? text_of(c, "option") : "",
                     text_of(c, "option") ? "')" : "",
                     json_number_value(json_object_get(c, "typed")),
                     json_number_value(json_object_get(c, "evidence")),
                     (long long)json_integer_value(json_object_get(c, "runs")),
                     text_of(c, "winner_with_evidence") ? "'" : "no option wins",
                     text_of(c, "winner_with_evidence") ? text_of(c, "winner_with_evidence") : "",
                     text_of(c, "winner_with_evidence") ? "' wins" : "",
                     text_of(c, "winner") ? text_of(c, "winner") : "?");
    }
    const char *winner = gate_winner(result);
    if ((!winner || strcmp(winner, chosen) != 0) && !text_of(record, "justification"))
        problems_add(p, "/record/justification",
                     "option '%s' is not the winner%s%s%s of comparison %s: a justification is "
                     "required",
                     chosen, winner ? " ('" : "", winner ? winner : "", winner ? "')" : "", sha);
}
