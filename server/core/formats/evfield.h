/* Declarative field tables for the evidence resources (workloads, offers, benchmarks).
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
};

enum evfield_flag {
    EVF_REQUIRED = 1u << 0,
    EVF_MIN_EXCLUSIVE = 1u << 1, /* value > min rather than >= min */
    EVF_MAX_EXCLUSIVE = 1u << 2, /* value < max rather than <= max */
    EVF_EXTRA_MS = 1u << 3,      /* EVF_OBJECT/ARRAY items: also allow "<name>_ms" numbers >= 0 */
    EVF_SERVER = 1u << 4,        /* set by the server: shown, never accepted from a client */
};

/* A number field with no narrower bound above (EVF_NO_MAX) is still at most EVF_CEILING: far
 * beyond any real price, size or rate, exact as a double, and printed by PostgreSQL as a
 * number every JSON reader here takes back (1e20 came back as a 21-digit integer). */
#define EVF_NO_MAX 1e300
#define EVF_CEILING 1e15

struct evfield {
    const char *name;
    enum evfield_type type;
    unsigned flags;
    double min, max;           /* numbers: bounds (use EVF_NO_MAX for none above) */
    size_t max_len;            /* strings (bytes), arrays (items) */
    const char *const *values; /* EVF_ENUM, NULL-terminated */
    const struct evfield *sub; /* EVF_OBJECT / EVF_ARRAY items, terminated by {NULL} */
};

/* Checks obj against fields: unknown and server-set members rejected, required ones present,
 * every value of the right type and range. null counts as absent. Each fault is appended as
 * "<prefix>/<field>[/…]" with the given line (0 for JSON bodies); when columns is given, it holds
 * for each field of the table its 1-based CSV column (0 when not in the sheet). */
void evfield_check(const json_t *obj, const struct evfield *fields, const char *prefix, long line,
                   const long *columns, struct problems *p);

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
