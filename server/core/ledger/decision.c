#include "core/ledger/decision.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/codec.h"
#include "core/jcs.h"
#include "core/formats/timefmt.h"
#include "core/jsonlimit.h"
#include "core/validate.h"

uint8_t *decision_message(const json_t *record, size_t *len)
{
    size_t body_len;
    char *body = jcs_serialize(record, &body_len);
    if (!body)
        return NULL;
    size_t ctx_len = strlen(DECISION_CONTEXT);
    uint8_t *msg = malloc(ctx_len + body_len);
    if (msg) {
        memcpy(msg, DECISION_CONTEXT, ctx_len);
        memcpy(msg + ctx_len, body, body_len);
        *len = ctx_len + body_len;
    }
    free(body);
    return msg;
}

void decision_key_id(const uint8_t public_key[crypto_sign_PUBLICKEYBYTES],
                     char out[DECISION_KEY_ID_HEX_LEN + 1])
{
    uint8_t digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(digest, public_key, crypto_sign_PUBLICKEYBYTES);
    codec_hex_encode(digest, sizeof digest, out);
}

int decision_sign(const json_t *record, const uint8_t secret_key[crypto_sign_SECRETKEYBYTES],
                  char out[DECISION_SIGNATURE_B64_LEN + 1])
{
    size_t len;
    uint8_t *msg = decision_message(record, &len);
    if (!msg)
        return -1;
    uint8_t sig[crypto_sign_BYTES];
    crypto_sign_detached(sig, NULL, msg, len, secret_key);
    free(msg);
    codec_b64_encode(sig, sizeof sig, out, DECISION_SIGNATURE_B64_LEN + 1);
    return 0;
}

int decision_verify(const json_t *record, const char *signature_b64, const char *public_key_b64)
{
    uint8_t sig[crypto_sign_BYTES + 1], pk[crypto_sign_PUBLICKEYBYTES + 1];
    if (!signature_b64 || !public_key_b64 ||
        codec_b64_decode(signature_b64, strlen(signature_b64), sig, sizeof sig) !=
            crypto_sign_BYTES ||
        codec_b64_decode(public_key_b64, strlen(public_key_b64), pk, sizeof pk) !=
            crypto_sign_PUBLICKEYBYTES)
        return -1;
    size_t len;
    uint8_t *msg = decision_message(record, &len);
    if (!msg)
        return -1;
    int rc = crypto_sign_verify_detached(sig, msg, len, pk) == 0 ? 0 : -1;
    free(msg);
    return rc;
}

char *decision_leaf(const json_t *record, const char *signature_b64, const char *public_key_b64,
                    const char *received_at, size_t *len)
{
    /* json_pack's "O" takes a new reference: the record stays the caller's. */
    json_t *leaf = json_pack("{s:O, s:s, s:s, s:s}", "record", record, "signature", signature_b64,
                             "public_key", public_key_b64, "received_at", received_at);
    if (!leaf)
        return NULL;
    char *bytes = jcs_serialize(leaf, len);
    json_decref(leaf);
    return bytes;
}

/* ---- validation --------------------------------------------------------------------------- */

enum field_kind {
    F_UUID,          /* UUID text */
    F_UUID_OR_NULL,  /* UUID text or null */
    F_ID,            /* non-empty string or positive integer (an id of another resource) */
    F_DECISION,      /* advance | revise | stop */
    F_TEXT_OR_NULL,  /* string or null */
    F_TEXT_ARRAY,    /* array of strings */
    F_ID_ARRAY,      /* array of non-empty strings or positive integers */
    F_SHA256_ARRAY,  /* array of 64 lower-case hex strings */
    F_COST_OR_NULL,  /* {amount: decimal string, currency, period} or null */
    F_TIMESTAMP_UTC, /* RFC 3339 with Z */
    F_KEY_ID,        /* 64 lower-case hex */
};

/* The record's fields, one row each, so the spec and the code can be read side by side. */
static const struct {
    const char *name;
    enum field_kind kind;
    bool required;
} fields[] = {
    {"id", F_UUID, true},
    {"review_id", F_ID, true},
    {"decision", F_DECISION, true},
    {"chosen_option", F_TEXT_OR_NULL, false},
    {"comparison_sha256", F_SHA256_ARRAY, true},
    {"evidence", F_ID_ARRAY, true},
    {"question", F_TEXT_OR_NULL, false},
    {"baseline", F_TEXT_OR_NULL, false},
    {"assumptions", F_TEXT_ARRAY, false},
    {"unresolved_questions", F_TEXT_ARRAY, false},
    {"residual_exposure", F_TEXT_OR_NULL, false},
    {"expected_operating_cost", F_COST_OR_NULL, false},
    {"next_authority_boundary", F_TEXT_OR_NULL, false},
    {"owner", F_TEXT_OR_NULL, false},
    {"accepted_by", F_TEXT_OR_NULL, false},
    {"justification", F_TEXT_OR_NULL, false},
    {"supersedes", F_UUID_OR_NULL, false},
    {"created_at", F_TIMESTAMP_UTC, true},
    {"signer_key_id", F_KEY_ID, true},
};

#define POINTER_MAX 512

/* Anywhere in the record: no reals (amounts are decimal strings), integers JavaScript can hold
 * exactly — a browser signs what JSON.parse gave it. */
static void check_values(const json_t *v, const char *ptr, int depth, struct problems *errs,
                         size_t *added)
{
    char child[POINTER_MAX];
    if (depth > JSON_NEST_MAX) {
        problems_add(errs, ptr, "nested deeper than %d levels", JSON_NEST_MAX);
        (*added)++;
    } else if (json_is_real(v)) {
        problems_add(errs, ptr, "floating-point numbers are not allowed (use a decimal string)");
        (*added)++;
    } else if (json_is_string(v)) {
        char why[128]; /* free text (a rationale) may hold line feeds, no other control */
        if (text_fault(json_string_value(v), json_string_length(v), 1, why, sizeof why)) {
            problems_add(errs, ptr, "%s", why);
            (*added)++;
        }
    } else if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i > DECISION_MAX_SAFE_INTEGER || i < -DECISION_MAX_SAFE_INTEGER) {
            problems_add(errs, ptr, "integer outside ±(2^53 − 1)");
            (*added)++;
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            check_values(json_array_get(v, i), problems_pointer_index(child, sizeof child, ptr, i),
                         depth + 1, errs, added);
    } else if (json_is_object(v)) {
        /* A member name holding U+0000 (which jcs_parse accepts) would compare, as a C
         * string, equal to its part before the NUL: refused, so that no record carries a
         * member that reads as another. */
        for (void *it = json_object_iter((json_t *)v); it;
             it = json_object_iter_next((json_t *)v, it)) {
            const char *key = json_object_iter_key(it);
            if (strlen(key) != json_object_iter_key_len(it)) {
                problems_add(errs, problems_pointer(child, sizeof child, ptr, key),
                             "member names may not hold U+0000");
                (*added)++;
                continue;
            }
            check_values(json_object_iter_value(it),
                         problems_pointer(child, sizeof child, ptr, key), depth + 1, errs, added);
        }
    }
}

static bool is_id(const json_t *v)
{
    return (json_is_string(v) && json_string_length(v) > 0) ||
           (json_is_integer(v) && json_integer_value(v) > 0);
}

/* RFC 3339 in UTC as capledger writes it: YYYY-MM-DDTHH:MM:SS, an optional fraction, 'Z'. */
static bool is_timestamp_utc(const char *s)
{
    size_t n = strlen(s);
    if (n < 20 || s[10] != 'T' || s[n - 1] != 'Z' || s[4] != '-')
        return false;
    struct timefmt_fields f;
    return timefmt_parse(s, n, &f);
}

/* A decimal amount: optional minus, digits, optional fraction ("128450.00"). */
static bool is_decimal(const char *s)
{
    if (*s == '-')
        s++;
    if (!(*s >= '0' && *s <= '9'))
        return false;
    while (*s >= '0' && *s <= '9')
        s++;
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

static bool is_currency(const char *s)
{
    return strlen(s) == 3 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z' &&
           s[2] >= 'A' && s[2] <= 'Z';
}

/* Checks the elements of an array field with pred, naming each bad element. */
static void check_elements(const json_t *v, const char *ptr, bool (*pred)(const json_t *),
                           const char *what, struct problems *errs, size_t *added)
{
    char child[POINTER_MAX];
    for (size_t i = 0; i < json_array_size(v); i++)
        if (!pred(json_array_get(v, i))) {
            problems_add(errs, problems_pointer_index(child, sizeof child, ptr, i), "must be %s",
                         what);
            (*added)++;
        }
}

static bool is_text(const json_t *v)
{
    return json_is_string(v);
}

static bool is_sha256(const json_t *v)
{
    return json_is_string(v) && lower_hex_valid(json_string_value(v), 64);
}

static void check_cost(const json_t *v, const char *ptr, struct problems *errs, size_t *added)
{
    static const char *const members[] = {"amount", "currency", "period"};
    char child[POINTER_MAX];
    const char *key;
    json_t *member;
    json_object_foreach((json_t *)v, key, member)
    {
        if (strcmp(key, "amount") && strcmp(key, "currency") && strcmp(key, "period")) {
            problems_add(errs, problems_pointer(child, sizeof child, ptr, key), "unknown field");
            (*added)++;
        }
    }
    for (size_t i = 0; i < 3; i++) {
        json_t *m = json_object_get(v, members[i]);
        const char *s = json_string_value(m);
        const char *problem = NULL;
        if (!m)
            problem = "is required";
        else if (!s)
            problem = "must be a string";
        else if (i == 0 && !is_decimal(s))
            problem = "must be a decimal string such as \"128450.00\"";
        else if (i == 1 && !is_currency(s))
            problem = "must be an ISO 4217 code such as \"USD\"";
        else if (i == 2 && *s == '\0')
            problem = "must not be empty";
        if (problem) {
            problems_add(errs, problems_pointer(child, sizeof child, ptr, members[i]), "%s",
                         problem);
            (*added)++;
        }
    }
}

static void check_field(const json_t *v, enum field_kind kind, const char *ptr,
                        struct problems *errs, size_t *added)
{
    const char *s = json_string_value(v);
    const char *problem = NULL;
    switch (kind) {
    case F_UUID_OR_NULL:
        if (json_is_null(v))
            break;
        /* fall through */
    case F_UUID:
        if (!s || !uuid_valid(s))
            problem = "must be a UUID";
        break;
    case F_ID:
        if (!is_id(v))
            problem = "must be a non-empty string or a positive integer";
        break;
    case F_DECISION:
        if (!s || (strcmp(s, "advance") && strcmp(s, "revise") && strcmp(s, "stop")))
            problem = "must be one of advance, revise, stop";
        break;
    case F_TEXT_OR_NULL:
        if (!s && !json_is_null(v))
            problem = "must be a string or null";
        break;
    case F_TEXT_ARRAY:
    case F_ID_ARRAY:
    case F_SHA256_ARRAY:
        if (!json_is_array(v))
            problem = "must be an array";
        else if (kind == F_TEXT_ARRAY)
            check_elements(v, ptr, is_text, "a string", errs, added);
        else if (kind == F_ID_ARRAY)
            check_elements(v, ptr, is_id, "a non-empty string or a positive integer", errs, added);
        else
            check_elements(v, ptr, is_sha256, "a SHA-256 in 64 lower-case hex digits", errs, added);
        break;
    case F_COST_OR_NULL:
        if (json_is_object(v))
            check_cost(v, ptr, errs, added);
        else if (!json_is_null(v))
            problem = "must be an object {amount, currency, period} or null";
        break;
    case F_TIMESTAMP_UTC:
        if (!s || !is_timestamp_utc(s))
            problem = "must be an RFC 3339 UTC time such as \"2025-09-12T14:06:12Z\"";
        break;
    case F_KEY_ID:
        if (!s || !lower_hex_valid(s, DECISION_KEY_ID_HEX_LEN))
            problem = "must be the SHA-256 of the public key in 64 lower-case hex digits";
        break;
    }
    if (problem) {
        problems_add(errs, ptr, "%s", problem);
        (*added)++;
    }
}

size_t decision_validate(const json_t *record, const char *prefix, struct problems *errs)
{
    size_t added = 0;
    const char *root = prefix ? prefix : "";
    char ptr[POINTER_MAX];
    if (!json_is_object(record)) {
        problems_add(errs, root, "must be an object");
        return 1;
    }
    const size_t nfields = sizeof fields / sizeof fields[0];
    const char *key;
    json_t *member;
    json_object_foreach((json_t *)record, key, member)
    {
        size_t f = 0;
        while (f < nfields && strcmp(fields[f].name, key) != 0)
            f++;
        if (f == nfields) {
            problems_add(errs, problems_pointer(ptr, sizeof ptr, root, key), "unknown field");
            added++;
        }
    }
    for (size_t f = 0; f < nfields; f++) {
        json_t *v = json_object_get(record, fields[f].name);
        problems_pointer(ptr, sizeof ptr, root, fields[f].name);
        if (!v) {
            if (fields[f].required) {
                problems_add(errs, ptr, "is required");
                added++;
            }
            continue;
        }
        check_field(v, fields[f].kind, ptr, errs, &added);
    }
    check_values(record, root, 0, errs, &added);
    if (!added) {
        /* The leaf (record, signature, public key, received_at) must fit one C2SP entry
         * bundle entry: the record's canonical form leaves room for the rest. */
        size_t len = 0;
        char *canon = jcs_serialize(record, &len);
        if (canon && len > DECISION_RECORD_MAX) {
            problems_add(errs, root,
                         "is %zu bytes in canonical form (RFC 8785); a decision record may be "
                         "at most %u, so that its log leaf fits a C2SP tlog-tiles entry bundle "
                         "(shorten the rationale or the evidence list)",
                         len, (unsigned)DECISION_RECORD_MAX);
            added++;
        }
        free(canon);
    }
    return added;
}

/* ---- the API's view, from the leaf ------------------------------------------------------ */

/* A UUID member in its canonical lower-case text (as PostgreSQL prints uuid); others as are. */
static void lower_uuid(json_t *view, const char *member)
{
    const char *s = json_string_value(json_object_get(view, member));
    if (!s || !uuid_valid(s))
        return;
    char lower[37];
    for (size_t i = 0; i < 36; i++)
        lower[i] = (char)tolower((unsigned char)s[i]);
    lower[36] = '\0';
    json_object_set_new(view, member, json_string(lower));
}

json_t *decision_view(const uint8_t *leaf, size_t len)
{
    json_t *doc = jcs_parse((const char *)leaf, len, NULL);
    const json_t *record = json_object_get(doc, "record");
    const json_t *signature = json_object_get(doc, "signature");
    const json_t *received_at = json_object_get(doc, "received_at");
    json_t *view = NULL;
    if (json_is_object(record) && json_is_string(signature) && json_is_string(received_at) &&
        !json_object_get(doc, "kind")) {
        const json_t *chosen = json_object_get(record, "chosen_option");
        const json_t *supersedes = json_object_get(record, "supersedes");
        view = json_pack("{s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O}", "id",
                         json_object_get(record, "id"), "review_id",
                         json_object_get(record, "review_id"), "decision",
                         json_object_get(record, "decision"), "chosen_option",
                         chosen ? chosen : json_null(), "comparison_sha256",
                         json_object_get(record, "comparison_sha256"), "supersedes",
                         supersedes ? supersedes : json_null(), "signer_key_id",
                         json_object_get(record, "signer_key_id"), "received_at", received_at,
                         "record", record, "signature", signature);
        lower_uuid(view, "id");
        lower_uuid(view, "review_id");
        lower_uuid(view, "supersedes");
    }
    json_decref(doc);
    return view;
}

const char *decision_view_mismatch(const json_t *row, const json_t *view)
{
    static const char *const members[] = {
        "id",         "review_id",     "decision",    "chosen_option", "comparison_sha256",
        "supersedes", "signer_key_id", "received_at", "record",        "signature",
    };
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
        const json_t *a = json_object_get(row, members[i]), *b = json_object_get(view, members[i]);
        if (!a || !b || !json_equal(a, b))
            return members[i];
    }
    return NULL;
}
