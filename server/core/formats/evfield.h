/* Declarative field tables: the one validator of every JSON body the API takes (workloads,
 * offers, benchmarks, clusters, reviews, artifacts, scenarios, teams, users, tokens, webhooks,
 * decisions, alerts, sessions and signing keys).
 *
 * Each resource describes its fields once — name, type, bounds, enumeration, whether required —
 * and that one table drives validation of a JSON body (every fault named by JSON Pointer), the
 * conversion of a CSV price-sheet cell into the same JSON value (so CSV and JSON share one
 * validator, and a CSV fault is named by line and column), and the list of fields a PATCH may
 * touch. The field names are the public ones of docs/cost-model.md and docs/evidence.md; the
 * database columns carry the same names, so a validated object goes to PostgreSQL as one JSON
 * parameter (jsonb_populate_record) without a per-field binding to drift out of step. */
#ifndef CAPLEDGER_CORE_EVFIELD_H
#define CAPLEDGER_CORE_EVFIELD_H

#include <jansson.h>
#include <stddef.h>

#include "core/problems.h"

enum evfield_type {
    EVF_STRING,  /* text, 1..max_len bytes (max_len 0 → 200), no NUL */
    EVF_NAME,    /* [a-z][a-z0-9_]{0,31}: a unit or identifier-like word */
    EVF_ENUM,    /* one of values[] */
    EVF_NUMBER,  /* a finite JSON number within [min, max] (ends exclusive by flag) */
    EVF_INTEGER, /* a JSON integer within [min, max] */
    EVF_BOOL,
    EVF_TIME,     /* RFC 3339 with an offset */
    EVF_UUID,     /* canonical UUID text */
    EVF_CURRENCY, /* ISO 4217 style: three upper-case letters */
    EVF_OBJECT,   /* an object checked against sub[] */
    EVF_ARRAY,    /* an array (at most max_len items) of objects checked against sub[] */
    EVF_TEXT,     /* a string of at most max_len bytes, no NUL; "" only when not required */
    EVF_DATE,     /* a calendar date YYYY-MM-DD */
    EVF_LIST,     /* an array (at most max_len items) of values each checked against sub[0] */
    EVF_ANY,      /* an object, checked elsewhere (e.g. a signed record): presence and kind only */
    EVF_HANDLE,   /* a team or user name: 1-64 of [A-Za-z0-9._-], starting with a letter or digit */
    EVF_LABEL,    /* a workload class label (core/validate.h class_label_fault) */
};

enum evfield_flag {
    EVF_REQUIRED = 1u << 0,
    EVF_MIN_EXCLUSIVE = 1u << 1, /* value > min rather than >= min */
    EVF_MAX_EXCLUSIVE = 1u << 2, /* value < max rather than <= max */
    EVF_EXTRA_MS = 1u << 3,      /* EVF_OBJECT/ARRAY items: also allow "<name>_ms" numbers >= 0 */
    EVF_SERVER = 1u << 4,        /* set by the server: shown, never accepted from a client */
    EVF_MSG_ALL = 1u << 5,       /* every fault of the value (absence included) is its msg */
    EVF_UNIQUE = 1u << 6,        /* EVF_LIST: no string item twice (case-insensitive) */
    EVF_QUOTE = 1u << 7,         /* EVF_ENUM: the message quotes the values ('a', 'b') */
    EVF_SECRET = 1u << 8,        /* EVF_TEXT: any character but NUL (passwords: never shown) */
};

/* Text (EVF_STRING, EVF_TEXT) is refused when it holds control characters (core/validate.h
 * text_fault): a field of at most EVF_LINE_MAX bytes is one line (names, titles, labels); a
 * longer one is free text (notes, questions, descriptions), where line feeds and tabs are
 * allowed. EVF_SECRET fields (passwords) take any character but NUL. */
#define EVF_LINE_MAX 200

/* A number field with no narrower bound above (EVF_NO_MAX) is still at most EVF_CEILING: far
 * beyond any real price, size or rate, exact as a double, and printed by PostgreSQL as a
 * number every JSON reader here takes back (1e20 came back as a 21-digit integer). */
#define EVF_NO_MAX 1e300
#define EVF_CEILING 1e15

/* A field's own wording, for a type other than EVF_ENUM: msg is the text of a format fault
 * (EVF_HANDLE, EVF_DATE, EVF_UUID, a number's range) and, for EVF_LIST/EVF_ARRAY, of a fault of
 * the array itself (not an array, too few or too many items); with EVF_MSG_ALL the text of every
 * fault of the value. item_msg (EVF_ARRAY): the text for an item that is not an object. */
#define EVF_WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A member only the server sets (refused in a request, EVF_SERVER), and the row that ends every
 * table. */
#define EVF_SERVER_FIELD(name)                                                                     \
    {                                                                                              \
        name, EVF_STRING, EVF_SERVER, 0, 0, 0, NULL, NULL                                          \
    }
#define EVF_END                                                                                    \
    {                                                                                              \
        NULL, 0, 0, 0, 0, 0, NULL, NULL                                                            \
    }

struct evfield {
    const char *name;
    enum evfield_type type;
    unsigned flags;
    double min, max; /* numbers: bounds (use EVF_NO_MAX for none above); EVF_LIST: min items */
    size_t max_len;  /* strings (bytes), arrays (items) */
    /* EVF_ENUM: the values, NULL-terminated; any other type: NULL, or EVF_WORDS(msg[, item]) */
    const char *const *values;
    const struct evfield *sub; /* EVF_OBJECT / EVF_ARRAY items, terminated by {NULL};
                                  EVF_LIST: the one item field sub[0] */
};

/* Checks obj against fields: unknown and server-set members rejected, required ones present,
 * every value of the right type and range. null counts as absent. Each fault is appended as
 * "<prefix>/<field>[/…]" with the given line (0 for JSON bodies); when columns is given, it holds
 * for each field of the table its 1-based CSV column (0 when not in the sheet). */
void evfield_check(const json_t *obj, const struct evfield *fields, const char *prefix, long line,
                   const long *columns, struct problems *p);

/* The two halves of evfield_check, for a PATCH whose members are checked as given and whose
 * values are checked once merged: members of obj not in the table (or set by the server), and
 * the values of the table's fields in obj. */
void evfield_check_members(const json_t *obj, const struct evfield *fields, const char *prefix,
                           struct problems *p);
void evfield_check_values(const json_t *obj, const struct evfield *fields, const char *prefix,
                          struct problems *p);

/* After a check of obj at the top of a body: obj's member name when it is a string and no
 * problem names "/name", else NULL (borrowed). */
const char *evfield_valid_string(const json_t *obj, const char *name, const struct problems *p);

/* The field named name in the table, or NULL. */
const struct evfield *evfield_find(const struct evfield *fields, const char *name);
/* Index of name in the table, or -1. */
int evfield_index(const struct evfield *fields, const char *name);

/* Converts a CSV cell to the JSON value the field expects: numbers and integers parsed
 * strictly, booleans from true/false/yes/no/1/0, anything else as a string. An empty cell is
 * absent: NULL is returned. A cell that does not convert is returned as a JSON string, so the
 * validator then names it with the field's type. New reference. */
json_t *evfield_from_cell(const struct evfield *f, const char *cell, size_t len);

/* RFC 7396 JSON merge patch of target by patch (both borrowed); returns a new value. */
json_t *evfield_merge_patch(const json_t *target, const json_t *patch);

/* A new object holding, for every client field of the table, obj's value or null: the shape a
 * PATCH merges into and the database row is populated from. obj borrowed. */
json_t *evfield_project(const json_t *obj, const struct evfield *fields);

#endif
