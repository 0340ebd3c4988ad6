/* The auditor's check of the decision log, in the order a reader would reason: whose key signs
 * the log, what it signed, whether each entry is what its approver signed, whether the entries
 * add up to the signed root, whether the cited comparisons are the ones hashed, and whether an
 * older view of the log is a prefix of this one. The first fault ends the check and is named. */
#include "core/ledger/bundle.h"

#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/cost/cost.h"
#include "core/ledger/decision.h"
#include "core/jcs.h"
#include "core/ledger/keylog.h"
#include "core/ledger/merkle.h"
#include "core/ledger/note.h"
#include "core/ledger/witness.h"
#include "core/formats/timefmt.h"

__attribute__((format(printf, 3, 4))) static int fail(char *why, size_t why_size, const char *fmt,
                                                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
    return 1;
}

/* An RFC 3339 time with an offset, to the nanosecond: epoch milliseconds from timefmt plus the
 * fraction's digits beyond the third, so that PostgreSQL's microseconds still order. */
struct instant {
    int64_t ms;
    int32_t sub_ms_ns;
};

static bool parse_instant(const char *s, struct instant *out)
{
    struct timefmt_fields f;
    if (!s || !timefmt_parse(s, strlen(s), &f) || !f.has_offset ||
        timefmt_resolve_ms(&f, NULL, NULL, &out->ms) != 0)
        return false;
    out->sub_ms_ns = 0;
    const char *dot = strchr(s, '.');
    if (dot) {
        int32_t scale = 100000; /* the fourth fraction digit is 100 µs */
        int digits = 0;
        for (const char *d = dot + 1; *d >= '0' && *d <= '9'; d++, digits++)
            if (digits >= 3 && scale > 0) {
                out->sub_ms_ns += (*d - '0') * scale;
                scale /= 10;
            }
    }
    return true;
}

static bool instant_not_before(struct instant a, struct instant b)
{
    return a.ms > b.ms || (a.ms == b.ms && a.sub_ms_ns >= b.sub_ms_ns);
}

/* Opens a checkpoint note with v and parses its body; the origin must be v's name. */
static int open_checkpoint(const char *what, const char *text, const struct note_verifier *v,
                           struct note_checkpoint *cp, char *why, size_t why_size)
{
    size_t text_len;
    int status = note_open(text, strlen(text), v, &text_len);
    if (status != NOTE_OK)
        return fail(why, why_size, "%s: %s", what, note_status_message(status));
    if (note_checkpoint_parse(text, text_len, cp) != 0)
        return fail(why, why_size, "%s: not a checkpoint body (origin, size, root)", what);
    if (strcmp(cp->origin, v->name) != 0)
        return fail(why, why_size, "%s: origin \"%s\" is not the log's \"%s\"", what, cp->origin,
                    v->name);
    return 0;
}

/* What the walk over the leaves carries from one leaf to the next. */
struct walk {
    const json_t *signer_keys, *comparisons;
    size_t pinned;     /* approver keys the auditor holds */
    json_t *approvers; /* key_id → {owner, public_key, pinned, enrolled, leaves} */
    struct keylog *keys;
    size_t legacy;      /* decision leaves before the log's first key event */
    json_t *decided;    /* decision id → its review id, of the leaves so far */
    json_t *superseded; /* decision id → the leaf that superseded it */
};

/* A review has one line of decisions: a decision supersedes only a decision an earlier leaf
 * holds, of its own review, that no other leaf superseded. */
static int check_line(struct walk *w, size_t index, const json_t *record, char *why,
                      size_t why_size)
{
    const char *id = jcs_text(json_object_get(record, "id"));
    const char *review = jcs_text(json_object_get(record, "review_id"));
    const char *sup = jcs_text(json_object_get(record, "supersedes"));
    if (!id || !review)
        return fail(why, why_size, "leaf %zu: the record has no id or review_id", index);
    if (json_object_get(w->decided, id))
        return fail(why, why_size, "leaf %zu: decision %s is already in an earlier leaf", index,
                    id);
    if (sup) {
        const char *of = json_string_value(json_object_get(w->decided, sup));
        const json_t *by = json_object_get(w->superseded, sup);
        if (!of)
            return fail(why, why_size, "leaf %zu: supersedes %s, which no earlier leaf holds",
                        index, sup);
        if (strcmp(of, review) != 0)
            return fail(why, why_size, "leaf %zu: supersedes %s, a decision of another review (%s)",
                        index, sup, of);
        if (by)
            return fail(why, why_size,
                        "leaf %zu: supersedes %s, which leaf %" JSON_INTEGER_FORMAT
                        " already superseded: the review's line forks",
                        index, sup, json_integer_value(by));
        json_object_set_new(w->superseded, sup, json_integer((json_int_t)index));
    }
    json_object_set_new(w->decided, id, json_string(review));
    return 0;
}

/* The report entry of key_id, made on first use. */
static json_t *approver(struct walk *w, const char *key_id, const char *public_key)
{
    json_t *a = json_object_get(w->approvers, key_id);
    if (!a) {
        a = json_pack("{s:s, s:b, s:n, s:n, s:[]}", "public_key", public_key, "pinned", 0, "owner",
                      "enrolled", "leaves");
        json_object_set_new(w->approvers, key_id, a);
    }
    return a;
}

/* Step 3 for a key event leaf (doc parsed and canonical). */
static int check_key_event(struct walk *w, size_t index, const struct keylog_event *ev, char *why,
                           size_t why_size)
{
    char what[512];
    if (keylog_apply(w->keys, index, ev, what, sizeof what) != 0)
        return fail(why, why_size, "leaf %zu: %s", index, what);
    if (ev->kind == KEYLOG_ENROL) {
        json_t *a = approver(w, ev->key_id, ev->public_key);
        json_object_set_new(a, "owner", json_string(ev->owner));
        json_object_set_new(a, "enrolled", json_integer((json_int_t)index));
    }
    return 0;
}

/* Step 3 for one leaf: its bytes are in leaf[0..len). */
static int check_leaf(struct walk *w, size_t index, const uint8_t *leaf, size_t len, char *why,
                      size_t why_size)
{
    const json_t *signer_keys = w->signer_keys, *comparisons = w->comparisons;
    int rc = 1;
    json_t *doc = jcs_parse((const char *)leaf, len, NULL);
    char *canonical = NULL;
    if (!doc) {
        fail(why, why_size, "leaf %zu: not valid JSON", index);
        goto out;
    }
    size_t canonical_len;
    canonical = jcs_serialize(doc, &canonical_len);
    if (!canonical || canonical_len != len || memcmp(canonical, leaf, len) != 0) {
        fail(why, why_size, "leaf %zu: not in RFC 8785 canonical form", index);
        goto out;
    }
    struct keylog_event ev;
    char what[512];
    if (keylog_event_parse(doc, &ev, what, sizeof what) != 0) {
        fail(why, why_size, "leaf %zu: %s", index, what);
        goto out;
    }
    if (ev.kind != KEYLOG_DECISION) {
        rc = check_key_event(w, index, &ev, why, why_size);
        goto out;
    }
    json_t *record = json_object_get(doc, "record");
    const char *signature = jcs_text(json_object_get(doc, "signature"));
    const char *public_key = jcs_text(json_object_get(doc, "public_key"));
    const char *received_at = jcs_text(json_object_get(doc, "received_at"));
    if (!json_is_object(doc) || json_object_size(doc) != 4 || !json_is_object(record) ||
        !signature || !public_key || !received_at) {
        fail(why, why_size,
             "leaf %zu: not {record, signature, public_key, received_at} with a record object",
             index);
        goto out;
    }
    const char *key_id = jcs_text(json_object_get(record, "signer_key_id"));
    uint8_t pk[crypto_sign_PUBLICKEYBYTES + 1];
    char computed_id[DECISION_KEY_ID_HEX_LEN + 1];
    if (codec_b64_decode(public_key, strlen(public_key), pk, sizeof pk) !=
        crypto_sign_PUBLICKEYBYTES) {
        fail(why, why_size, "leaf %zu: public_key is not base64 of 32 bytes", index);
        goto out;
    }
    decision_key_id(pk, computed_id);
    if (!key_id || strcmp(key_id, computed_id) != 0) {
        fail(why, why_size, "leaf %zu: signer_key_id is not the SHA-256 of its public key", index);
        goto out;
    }
    json_t *listed = json_object_get(signer_keys, key_id);
    if (!json_is_object(listed)) {
        fail(why, why_size, "leaf %zu: signer key %s is not in signer_keys", index, key_id);
        goto out;
    }
    const char *listed_pk = jcs_text(json_object_get(listed, "public_key"));
    if (!listed_pk || strcmp(listed_pk, public_key) != 0) {
        fail(why, why_size, "leaf %zu: public key differs from signer_keys[%s]", index, key_id);
        goto out;
    }
    if (decision_verify(record, signature, public_key) != 0) {
        fail(why, why_size, "leaf %zu: approver signature does not verify", index);
        goto out;
    }
    if (check_line(w, index, record, why, why_size) != 0)
        goto out;
    if (keylog_events(w->keys) == 0) {
        w->legacy++;
    } else if (keylog_may_sign(w->keys, key_id, public_key, what, sizeof what) != 0) {
        fail(why, why_size, "leaf %zu: %s", index, what);
        goto out;
    }
    const char *owner = keylog_owner(w->keys, key_id);
    if (!owner)
        owner = jcs_text(json_object_get(listed, "owner"));
    json_t *seen = json_object_get(w->approvers, key_id);
    if (w->pinned && !json_is_true(json_object_get(seen, "pinned"))) {
        fail(why, why_size,
             "leaf %zu: signed by key %s (of \"%s\"), which is not one of the approver keys you "
             "hold",
             index, key_id, owner ? owner : "?");
        goto out;
    }
    seen = approver(w, key_id, public_key);
    if (json_is_null(json_object_get(seen, "owner")) && owner)
        json_object_set_new(seen, "owner", json_string(owner));
    json_array_append_new(json_object_get(seen, "leaves"), json_integer((json_int_t)index));
    struct instant received, revoked;
    if (!parse_instant(received_at, &received)) {
        fail(why, why_size, "leaf %zu: received_at is not an RFC 3339 time", index);
        goto out;
    }
    json_t *revoked_at = json_object_get(listed, "revoked_at");
    if (revoked_at && !json_is_null(revoked_at)) {
        if (!parse_instant(jcs_text(revoked_at), &revoked)) {
            fail(why, why_size, "signer_keys[%s]: revoked_at is not an RFC 3339 time", key_id);
            goto out;
        }
        if (instant_not_before(received, revoked)) {
            fail(why, why_size, "leaf %zu: signed with key %s, revoked at %s, received at %s",
                 index, key_id, json_string_value(revoked_at), received_at);
            goto out;
        }
    }
    json_t *cited = json_object_get(record, "comparison_sha256");
    for (size_t i = 0; i < json_array_size(cited); i++) {
        const char *hash = jcs_text(json_array_get(cited, i));
        if (!hash || !json_object_get(comparisons, hash)) {
            fail(why, why_size, "leaf %zu: cited comparison %s is not in the bundle", index,
                 hash ? hash : "(not a string)");
            goto out;
        }
    }
    rc = 0;
out:
    free(canonical);
    json_decref(doc);
    return rc;
}

/* Step 5 for one comparison. */
static int check_comparison(const char *key, const json_t *entry, char *why, size_t why_size)
{
    const json_t *scenario = json_object_get(entry, "scenario");
    const json_t *result = json_object_get(entry, "result");
    char hex[65];
    if (!json_is_object(result))
        return fail(why, why_size, "comparison %s: no result object", key);
    if (jcs_sha256_hex(result, hex) != 0)
        return fail(why, why_size, "comparison %s: result cannot be canonicalized", key);
    if (strcmp(hex, key) != 0)
        return fail(why, why_size, "comparison %s: its result hashes to %s", key, hex);
    const char *input_sha256 = jcs_text(json_object_get(result, "input_sha256"));
    if (input_sha256) {
        if (!scenario || jcs_sha256_hex(scenario, hex) != 0 || strcmp(hex, input_sha256) != 0)
            return fail(why, why_size,
                        "comparison %s: its scenario does not hash to the result's input_sha256",
                        key);
    }
    return 0;
}

/* Fills approvers with the pinned keys {public_key, pinned: true, owner: null, leaves: []}. */
static int pin_approvers(const struct bundle_trust *trust, json_t *approvers, char *why,
                         size_t why_size)
{
    for (size_t i = 0; i < trust->approver_count; i++) {
        const char *b64 = trust->approvers[i];
        uint8_t pk[crypto_sign_PUBLICKEYBYTES + 1];
        if (!b64 || codec_b64_decode(b64, strlen(b64), pk, sizeof pk) != crypto_sign_PUBLICKEYBYTES)
            return fail(why, why_size,
                        "approver key %zu: not the base64 of a 32-byte Ed25519 public key", i + 1);
        char key_id[DECISION_KEY_ID_HEX_LEN + 1];
        decision_key_id(pk, key_id);
        json_object_set_new(approvers, key_id,
                            json_pack("{s:s, s:b, s:n, s:n, s:[]}", "public_key", b64, "pinned", 1,
                                      "owner", "enrolled", "leaves"));
    }
    return 0;
}

/* Step 2 for witnesses: how many of the keys held cosigned the checkpoint. */
static int check_witnesses(const struct bundle_trust *trust, const char *checkpoint, json_t *seen,
                           char *why, size_t why_size)
{
    size_t cosigned = 0;
    for (size_t i = 0; i < trust->witness_count; i++) {
        struct witness_key k;
        if (!trust->witnesses[i] || witness_key_parse(trust->witnesses[i], &k) != 0)
            return fail(why, why_size, "witness key %zu: not a witness verifier key", i + 1);
        uint64_t t = 0;
        int verdict = witness_cosignature_verify(checkpoint, strlen(checkpoint), &k, &t);
        if (verdict == WITNESS_COSIG_FORGED)
            return fail(why, why_size,
                        "checkpoint: it carries a cosignature line of witness %s (the key you "
                        "hold) whose signature does not verify: a forged cosignature rejects the "
                        "note",
                        k.name);
        int ok = verdict == 0;
        cosigned += ok ? 1u : 0u;
        json_object_set_new(seen, k.name, ok ? json_integer((json_int_t)t) : json_null());
    }
    if (cosigned < trust->quorum)
        return fail(why, why_size,
                    "checkpoint: %zu of the %zu witnesses you hold cosigned it, fewer than the "
                    "quorum of %zu",
                    cosigned, trust->witness_count, trust->quorum);
    return 0;
}

/* Steps 1–2 up to the checkpoint: the auditor's key, and the bundle's copy compared with it. */
static int trusted_verifier(const struct bundle_trust *trust, const char *vkey, const char *origin,
                            struct note_verifier *v, char *why, size_t why_size)
{
    if (!trust || !trust->verifier_key)
        return fail(why, why_size,
                    "no verifier key to check against: the bundle's own verifier_key proves "
                    "nothing, since whoever made the bundle chose it");
    if (note_verifier_parse(trust->verifier_key, v) != NOTE_OK)
        return fail(why, why_size, "the verifier key you hold: %s",
                    note_status_message(NOTE_BAD_VERIFIER));
    struct note_verifier named;
    if (note_verifier_parse(vkey, &named) != NOTE_OK)
        return fail(why, why_size, "verifier_key: %s", note_status_message(NOTE_BAD_VERIFIER));
    if (strcmp(named.name, v->name) != 0 ||
        memcmp(named.public_key, v->public_key, sizeof named.public_key) != 0)
        return fail(why, why_size,
                    "verifier_key: the bundle names %s, not the verifier key you hold (%s): "
                    "its checkpoint is not your log's",
                    vkey, trust->verifier_key);
    if (strcmp(v->name, origin) != 0)
        return fail(why, why_size, "verifier_key: names \"%s\", not the origin \"%s\"", v->name,
                    origin);
    return 0;
}

struct bundle_check {
    const struct bundle_trust *trust;
    const json_t *comparisons;
    struct note_verifier v;
    struct note_checkpoint cp;
    json_t *witnesses;
    struct walk w;
    struct merkle_frontier frontier; /* of the leaves so far: O(log n) hashes */
    uint64_t n;                      /* leaves checked so far */
    /* --previous-checkpoint: opened at the start, judged at the end (step 6, in its turn) */
    struct note_checkpoint old;
    int old_status; /* 0 when it opened */
    char old_why[512];
    bool old_root_seen;
    uint8_t old_root[MERKLE_HASH_BYTES]; /* MTH of the first old.size leaves */
    uint8_t *leaf;
    size_t leaf_cap;
};

void bundle_check_free(struct bundle_check *c)
{
    if (!c)
        return;
    json_decref(c->witnesses);
    json_decref(c->w.approvers);
    json_decref(c->w.decided);
    json_decref(c->w.superseded);
    keylog_free(c->w.keys);
    free(c->leaf);
    free(c);
}

struct bundle_check *bundle_check_begin(const json_t *members, long long leaf_count,
                                        const struct bundle_trust *trust, char *why,
                                        size_t why_size)
{
    const char *origin = jcs_text(json_object_get(members, "origin"));
    const char *vkey = jcs_text(json_object_get(members, "verifier_key"));
    const char *checkpoint = jcs_text(json_object_get(members, "checkpoint"));
    const json_t *signer_keys = json_object_get(members, "signer_keys");
    const json_t *comparisons = json_object_get(members, "comparisons");
    if (!origin || !vkey || !checkpoint || leaf_count < 0 || !json_is_object(signer_keys) ||
        !json_is_object(comparisons)) {
        fail(why, why_size,
             "bundle: needs origin, verifier_key, checkpoint (strings), leaves (array), "
             "signer_keys and comparisons (objects)");
        return NULL;
    }
    struct bundle_check *c = calloc(1, sizeof *c);
    if (!c) {
        fail(why, why_size, "out of memory");
        return NULL;
    }
    c->trust = trust;
    c->comparisons = comparisons;

    /* 1.–2. */
    if (trusted_verifier(trust, vkey, origin, &c->v, why, why_size) != 0 ||
        open_checkpoint("checkpoint", checkpoint, &c->v, &c->cp, why, why_size) != 0)
        goto fault;
    if (!(c->witnesses = json_object())) {
        fail(why, why_size, "out of memory");
        goto fault;
    }
    if (check_witnesses(trust, checkpoint, c->witnesses, why, why_size) != 0)
        goto fault;
    if (c->cp.size != (uint64_t)leaf_count) {
        fail(why, why_size,
             "leaves: the checkpoint covers %" PRIu64 " leaves but the bundle has %lld%s",
             c->cp.size, leaf_count,
             c->cp.size > (uint64_t)leaf_count ? " (a leaf is missing)" : "");
        goto fault;
    }

    /* 3. is bundle_check_leaf's, one leaf at a time. */
    c->w = (struct walk){.signer_keys = signer_keys,
                         .comparisons = comparisons,
                         .pinned = trust->approver_count,
                         .approvers = json_object(),
                         .keys = keylog_new(),
                         .decided = json_object(),
                         .superseded = json_object()};
    if (!c->w.approvers || !c->w.keys || !c->w.decided || !c->w.superseded) {
        fail(why, why_size, "out of memory");
        goto fault;
    }
    if (pin_approvers(trust, c->w.approvers, why, why_size) != 0)
        goto fault;
    if (trust->previous_checkpoint)
        c->old_status = open_checkpoint("previous checkpoint", trust->previous_checkpoint, &c->v,
                                        &c->old, c->old_why, sizeof c->old_why);
    return c;
fault:
    bundle_check_free(c);
    return NULL;
}

int bundle_check_leaf(struct bundle_check *c, const char *b64, size_t b64_len, char *why,
                      size_t why_size)
{
    size_t i = (size_t)c->n;
    if (c->n >= c->cp.size)
        return fail(why, why_size, "leaf %zu: more leaves than the checkpoint covers", i);
    size_t cap = b64_len / 4 * 3 + 1;
    if (b64 && cap > c->leaf_cap) {
        uint8_t *grown = realloc(c->leaf, cap);
        if (!grown)
            return fail(why, why_size, "out of memory");
        c->leaf = grown;
        c->leaf_cap = cap;
    }
    /* A string holding U+0000 is not base64 either (codec refuses it, as jcs_text does). */
    long len = b64 ? codec_b64_decode(b64, b64_len, c->leaf, cap) : -1;
    if (len < 0)
        return fail(why, why_size, "leaf %zu: not a base64 string", i);
    uint8_t hash[MERKLE_HASH_BYTES];
    merkle_leaf_hash(c->leaf, (size_t)len, hash);
    merkle_frontier_append(&c->frontier, c->n, hash);
    c->n++;
    if (c->trust->previous_checkpoint && c->old_status == 0 && c->old.size == c->n) {
        merkle_frontier_root(&c->frontier, c->old_root);
        c->old_root_seen = true;
    }
    return check_leaf(&c->w, i, c->leaf, (size_t)len, why, why_size);
}

int bundle_check_end(struct bundle_check *c, json_t *report, char *why, size_t why_size)
{
    /* 4. */
    if (c->n != c->cp.size)
        return fail(why, why_size,
                    "leaves: the checkpoint covers %" PRIu64 " leaves but the bundle has %" PRIu64,
                    c->cp.size, c->n);
    uint8_t root[MERKLE_HASH_BYTES];
    merkle_frontier_root(&c->frontier, root);
    if (memcmp(root, c->cp.root, MERKLE_HASH_BYTES) != 0)
        return fail(why, why_size,
                    "checkpoint: the root over the %" PRIu64 " leaves does not match", c->n);

    /* 5. */
    const char *key;
    json_t *entry;
    json_object_foreach((json_t *)c->comparisons, key, entry)
    {
        if (check_comparison(key, entry, why, why_size) != 0)
            return 1;
    }

    /* 6. The old tree is a prefix of this one: the root of the first old.size leaves is the
     * old root (what a consistency proof built from these leaves would show; the root of all
     * of them was checked in 4). */
    if (c->trust->previous_checkpoint) {
        if (c->old_status != 0)
            return fail(why, why_size, "%s", c->old_why);
        if (c->old.size > c->n)
            return fail(why, why_size,
                        "previous checkpoint: size %" PRIu64 " is larger than the log's %" PRIu64,
                        c->old.size, c->n);
        bool prefix;
        if (c->old.size == 0) {
            /* Nothing to prove from the empty tree; its root must be the empty hash. */
            uint8_t empty[MERKLE_HASH_BYTES];
            merkle_root(NULL, 0, empty);
            prefix = memcmp(c->old.root, empty, MERKLE_HASH_BYTES) == 0;
        } else {
            prefix = c->old_root_seen && memcmp(c->old.root, c->old_root, MERKLE_HASH_BYTES) == 0;
        }
        if (!prefix)
            return fail(why, why_size,
                        "previous checkpoint: its tree of size %" PRIu64
                        " is not a prefix of the log (history was rewritten)",
                        c->old.size);
    }
    if (report) {
        json_object_set(report, "witnesses", c->witnesses);
        json_object_set(report, "approvers", c->w.approvers);
        json_object_set_new(report, "legacy_decisions", json_integer((json_int_t)c->w.legacy));
    }
    return 0;
}

int bundle_recompute(const json_t *bundle, double rel_tol, bundle_notice_fn notice, void *ctx,
                     char *why, size_t why_size)
{
    const json_t *comparisons = json_object_get(bundle, "comparisons");
    if (!json_is_object(comparisons))
        return fail(why, why_size, "bundle: comparisons must be an object");
    const char *key;
    json_t *entry;
    json_object_foreach((json_t *)comparisons, key, entry)
    {
        const json_t *stored = json_object_get(entry, "result");
        const char *stored_version = json_string_value(json_object_get(stored, "engine_version"));
        /* Recomputed with the engine that made it (docs/cost-model.md keeps both); a version
         * this build does not know is recomputed with the current engine, and said so. */
        int engine = cost_engine_of_version(stored_version);
        struct problems errs;
        problems_init(&errs);
        json_t *fresh = cost_compare_engine(json_object_get(entry, "scenario"), engine, &errs);
        if (!fresh) {
            fail(why, why_size, "comparison %s: the engine refuses its scenario: %s%s%s", key,
                 errs.count ? errs.items[0].pointer : "", errs.count ? " " : "",
                 errs.count ? errs.items[0].message : "out of memory");
            problems_free(&errs);
            return 1;
        }
        problems_free(&errs);
        const char *fresh_version = json_string_value(json_object_get(fresh, "engine_version"));
        if (notice &&
            (!stored_version || !fresh_version || strcmp(stored_version, fresh_version) != 0)) {
            char message[512];
            snprintf(message, sizeof message,
                     "comparison %s: stored by engine %s, recomputed with %s", key,
                     stored_version ? stored_version : "(none recorded)",
                     fresh_version ? fresh_version : "?");
            notice(ctx, message);
        }
        char where[512];
        int differ = cost_compare_results(stored, fresh, rel_tol, where, sizeof where);
        json_decref(fresh);
        if (differ)
            return fail(why, why_size, "comparison %s: recomputed figures differ at %s", key,
                        where);
    }
    return 0;
}
