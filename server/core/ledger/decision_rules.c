/* Rules over stored decisions (decision_rules.h). */
#include "core/ledger/decision_rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/ledger/decision.h"
#include "core/jcs.h"
#include "core/ledger/keylog.h"

static const char *text_of(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s && *s ? s : NULL;
}

void decision_check_references(const json_t *record, const json_t *facts, struct problems *p)
{
    const json_t *review = json_object_get(facts, "review");
    if (!json_is_object(review))
        problems_add(p, "/record/review_id", "no review with this id");
    const json_t *sup = json_object_get(facts, "supersedes");
    if (text_of(record, "supersedes")) {
        if (!json_is_object(sup))
            problems_add(p, "/record/supersedes", "no earlier decision with this id");
        else if (json_is_object(review) &&
                 !json_equal(json_object_get(sup, "review_id"), json_object_get(review, "id")))
            problems_add(p, "/record/supersedes",
                         "names a decision of another review: a decision supersedes only "
                         "earlier decisions of its own review");
        else if (json_is_string(json_object_get(sup, "superseded_by")))
            problems_add(p, "/record/supersedes",
                         "that decision is already superseded by %s: supersede the latest one",
                         json_string_value(json_object_get(sup, "superseded_by")));
    }
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(facts, "comparisons"), i, c)
    {
        if (!json_is_true(json_object_get(c, "stored"))) {
            char ptr[64];
            snprintf(ptr, sizeof ptr, "/record/comparison_sha256/%zu", i);
            problems_add(p, ptr, "no stored comparison has this hash");
        }
    }
    const char *chosen = text_of(record, "chosen_option");
    const json_t *first = json_array_get(json_object_get(facts, "comparisons"), 0);
    if (chosen && !first)
        problems_add(p, "/record/chosen_option",
                     "names an option but the record cites no comparison");
    if (chosen && json_is_true(json_object_get(first, "stored"))) {
        int found = 0;
        json_t *opt;
        json_array_foreach(json_object_get(json_object_get(first, "result"), "options"), i, opt)
            found |= text_of(opt, "name") && strcmp(text_of(opt, "name"), chosen) == 0;
        if (!found)
            problems_add(p, "/record/chosen_option",
                         "'%s' is not an option of the first cited comparison", chosen);
    }
}

json_t *decision_view_b64(const char *b64)
{
    size_t b64_len = b64 ? strlen(b64) : 0;
    uint8_t *bytes = b64 ? malloc(b64_len / 4 * 3 + 1) : NULL;
    long len = bytes ? codec_b64_decode(b64, b64_len, bytes, b64_len / 4 * 3 + 1) : -1;
    json_t *view = len >= 0 ? decision_view(bytes, (size_t)len) : NULL;
    free(bytes);
    return view;
}

/* The owner an enrolment leaf (base64) names for key_id, or "" when it is not one. */
static void enrolled_owner(const char *b64, const char *key_id, char *out, size_t size)
{
    out[0] = '\0';
    size_t b64_len = b64 ? strlen(b64) : 0;
    uint8_t *bytes = b64 ? malloc(b64_len / 4 * 3 + 1) : NULL;
    long len = bytes ? codec_b64_decode(b64, b64_len, bytes, b64_len / 4 * 3 + 1) : -1;
    json_t *doc = len >= 0 ? jcs_parse((const char *)bytes, (size_t)len, NULL) : NULL;
    free(bytes);
    struct keylog_event ev;
    char why[256];
    if (doc && keylog_event_parse(doc, &ev, why, sizeof why) == 0 && ev.kind == KEYLOG_ENROL &&
        key_id && strcmp(ev.key_id, key_id) == 0)
        snprintf(out, size, "%s", ev.owner);
    json_decref(doc);
}

void decision_bind_to_leaf(json_t *row, char *fault, size_t size)
{
    const char *id = text_of(row, "id") ? text_of(row, "id") : "?";
    long long index = (long long)json_integer_value(json_object_get(row, "leaf_index"));
    json_t *view = decision_view_b64(text_of(row, "leaf"));
    const char *bad = view ? decision_view_mismatch(row, view) : NULL;
    char owner[256];
    enrolled_owner(text_of(row, "enrol_leaf"), text_of(row, "signer_key_id"), owner, sizeof owner);
    if (!view)
        snprintf(fault, size, "decision %s: leaf %lld is not a decision leaf", id, index);
    else if (bad)
        snprintf(fault, size, "decision %s: the stored row's %s differs from leaf %lld", id, bad,
                 index);
    else if (!text_of(row, "signer") || strcmp(owner, text_of(row, "signer")) != 0)
        snprintf(fault, size,
                 "decision %s: the stored signer is not the owner the log enrolled its key for",
                 id);
    const char *successor = text_of(row, "superseded_by");
    if (!fault[0] && successor) {
        json_t *next = decision_view_b64(text_of(row, "successor_leaf"));
        if (!next || !json_equal(json_object_get(next, "supersedes"), json_object_get(row, "id")) ||
            !json_equal(json_object_get(next, "id"), json_object_get(row, "superseded_by")))
            snprintf(fault, size,
                     "decision %s: superseded_by names %s, whose leaf does not supersede it", id,
                     successor);
        json_decref(next);
    }
    if (!fault[0])
        json_object_update(row, view);
    json_object_del(row, "leaf");
    json_object_del(row, "enrol_leaf");
    json_object_del(row, "successor_leaf");
    json_decref(view);
}
