/* Figure-by-figure comparison of two comparison documents, for auditors recomputing a stored
 * comparison: libm may differ in the last bits between machines, so numbers are compared to a
 * relative tolerance and everything else exactly. */
#include "core/cost/cost.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/jsonlimit.h"
#include "core/problems.h"

#define DIFF_POINTER_MAX 1024

static void describe(const json_t *v, char *buf, size_t size)
{
    if (json_is_number(v))
        snprintf(buf, size, "%.17g", json_number_value(v));
    else if (json_is_string(v))
        snprintf(buf, size, "\"%.60s\"", json_string_value(v));
    else if (json_is_null(v))
        snprintf(buf, size, "null");
    else if (json_is_boolean(v))
        snprintf(buf, size, "%s", json_is_true(v) ? "true" : "false");
    else if (json_is_array(v))
        snprintf(buf, size, "an array of %zu", json_array_size(v));
    else if (json_is_object(v))
        snprintf(buf, size, "an object");
    else
        snprintf(buf, size, "missing");
}

static int report(const char *pointer, const json_t *a, const json_t *b, char *where,
                  size_t where_size)
{
    if (where && where_size) {
        char va[96], vb[96];
        describe(a, va, sizeof va);
        describe(b, vb, sizeof vb);
        snprintf(where, where_size, "%s: %s vs %s", pointer[0] ? pointer : "/", va, vb);
    }
    return 1;
}

static bool numbers_agree(double x, double y, double rel_tol)
{
    if (x == y)
        return true;
    return fabs(x - y) <= rel_tol * fmax(fabs(x), fabs(y));
}

static int walk(const json_t *a, const json_t *b, double rel_tol, const char *pointer, int depth,
                char *where, size_t where_size)
{
    if (json_is_number(a) && json_is_number(b))
        return numbers_agree(json_number_value(a), json_number_value(b), rel_tol)
                   ? 0
                   : report(pointer, a, b, where, where_size);
    if (!a || !b || json_typeof(a) != json_typeof(b) || depth > JSON_NEST_MAX)
        return report(pointer, a, b, where, where_size);
    char child[DIFF_POINTER_MAX];
    switch (json_typeof(a)) {
    case JSON_STRING:
        return strcmp(json_string_value(a), json_string_value(b)) == 0
                   ? 0
                   : report(pointer, a, b, where, where_size);
    case JSON_ARRAY: {
        if (json_array_size(a) != json_array_size(b))
            return report(pointer, a, b, where, where_size);
        for (size_t i = 0; i < json_array_size(a); i++) {
            problems_pointer_index(child, sizeof child, pointer, i);
            if (walk(json_array_get(a, i), json_array_get(b, i), rel_tol, child, depth + 1, where,
                     where_size))
                return 1;
        }
        return 0;
    }
    case JSON_OBJECT: {
        const char *key;
        const json_t *va;
        json_object_foreach((json_t *)a, key, va)
        {
            if (depth == 0 && strcmp(key, "engine_version") == 0)
                continue; /* callers report a different engine as a warning */
            problems_pointer(child, sizeof child, pointer, key);
            if (walk(va, json_object_get(b, key), rel_tol, child, depth + 1, where, where_size))
                return 1;
        }
        json_object_foreach((json_t *)b, key, va) if (!json_object_get(a, key))
        {
            problems_pointer(child, sizeof child, pointer, key);
            return report(child, NULL, va, where, where_size);
        }
        return 0;
    }
    default: /* true, false, null: the types already agree */
        return 0;
    }
}

int cost_compare_results(const json_t *a, const json_t *b, double rel_tol, char *where,
                         size_t where_size)
{
    if (where && where_size)
        where[0] = '\0';
    return walk(a, b, rel_tol, "", 0, where, where_size);
}
