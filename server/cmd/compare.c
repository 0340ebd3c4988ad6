/* capledger compare FILE.json [--format json|table] [--engine 1|2] — the cost engine offline: a
 * scenario in,
 * its comparison out (docs/cost-model.md), so a platform owner can answer "what does one completed
 * result really cost" from a file kept in git, without a server. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/files.h"
#include "core/cost/cost.h"
#include "core/jcs.h"
#include "core/jsonlimit.h"

/* Scenarios are hand-written or exported documents; 64 options × 1,000 load points fit well. */
#define COMPARE_MAX_INPUT_BYTES (32u << 20)

static int compare_usage(void)
{
    fprintf(stderr, "usage: capledger compare FILE.json [--format json|table] [--engine 1|2]   "
                    "(FILE may be - for standard input; the engine: the file's \"engine\", else "
                    "2)\n");
    return 2;
}

/* Indented JSON in the document's own member order, with numbers in their shortest
 * round-trip form (RFC 8785's), not jansson's %.17g ("0.90000000000000002"). */
void cmd_print_pretty(FILE *out, const json_t *v, int indent)
{
    char number[JCS_NUMBER_MAX];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (json_object_size(v) == 0) {
            fputs("{}", out);
            return;
        }
        fputs("{\n", out);
        const char *key;
        const json_t *member;
        size_t i = 0;
        json_object_foreach((json_t *)v, key, member)
        {
            json_t *name = json_string(key);
            char *quoted = name ? json_dumps(name, JSON_ENCODE_ANY) : NULL;
            fprintf(out, "%*s%s: ", indent + 2, "", quoted ? quoted : "\"\"");
            free(quoted);
            json_decref(name);
            cmd_print_pretty(out, member, indent + 2);
            fputs(++i < json_object_size(v) ? ",\n" : "\n", out);
        }
        fprintf(out, "%*s}", indent, "");
        return;
    }
    case JSON_ARRAY: {
        if (json_array_size(v) == 0) {
            fputs("[]", out);
            return;
        }
        fputs("[\n", out);
        for (size_t i = 0; i < json_array_size(v); i++) {
            fprintf(out, "%*s", indent + 2, "");
            cmd_print_pretty(out, json_array_get(v, i), indent + 2);
            fputs(i + 1 < json_array_size(v) ? ",\n" : "\n", out);
        }
        fprintf(out, "%*s]", indent, "");
        return;
    }
    case JSON_STRING: {
        char *quoted = json_dumps(v, JSON_ENCODE_ANY);
        fputs(quoted ? quoted : "\"\"", out);
        free(quoted);
        return;
    }
    case JSON_INTEGER:
    case JSON_REAL:
        /* the engine never emits NaN or infinities (they become null) */
        fputs(jcs_format_double(json_number_value(v), number) < 0 ? "null" : number, out);
        return;
    case JSON_TRUE:
        fputs("true", out);
        return;
    case JSON_FALSE:
        fputs("false", out);
        return;
    case JSON_NULL:
        fputs("null", out);
        return;
    }
}

int cmd_finish_stdout(void)
{
    if (ferror(stdout) || fflush(stdout) != 0) {
        perror("capledger: stdout");
        return 1;
    }
    return 0;
}

int cmd_compare(int argc, char **argv)
{
    const char *path = NULL;
    bool table = false;
    int engine = 0;
    for (int i = 1; i < argc; i++) {
        const char *format = NULL, *engine_arg = NULL;
        if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
            format = argv[++i];
        else if (strncmp(argv[i], "--format=", 9) == 0)
            format = argv[i] + 9;
        else if (strcmp(argv[i], "--engine") == 0 && i + 1 < argc)
            engine_arg = argv[++i];
        else if (strncmp(argv[i], "--engine=", 9) == 0)
            engine_arg = argv[i] + 9;
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return compare_usage();
        else if (!path)
            path = argv[i];
        else
            return compare_usage();
        if (engine_arg) {
            if (strcmp(engine_arg, "1") != 0 && strcmp(engine_arg, "2") != 0)
                return compare_usage();
            engine = engine_arg[0] - '0';
        }
        if (format && strcmp(format, "table") == 0)
            table = true;
        else if (format && strcmp(format, "json") != 0)
            return compare_usage();
    }
    if (!path)
        return compare_usage();

    json_t *scenario = files_read_json(path, COMPARE_MAX_INPUT_BYTES);
    if (!scenario)
        return 1;
    struct problems errs;
    problems_init(&errs);
    if (json_is_object(scenario) && cost_stored_references(scenario, &errs) > 0) {
        fprintf(stderr,
                "capledger: %s names stored records by id, and stored ids only resolve on the "
                "server:\n",
                path);
        for (size_t i = 0; i < errs.count; i++)
            fprintf(stderr, "  %s: %s\n", errs.items[i].pointer, errs.items[i].message);
        fprintf(stderr, "  Compute it on the server (POST /api/v1/compare, or store it with POST "
                        "/api/v1/scenarios and POST /api/v1/scenarios/{id}/comparisons), or put "
                        "the records' fields in the file instead of their ids.\n");
        problems_free(&errs);
        json_decref(scenario);
        return 1;
    }
    json_t *comparison = cost_compare_engine(scenario, engine, &errs);
    json_decref(scenario);
    if (!comparison) {
        fprintf(stderr, "capledger: %s: the scenario is not valid (%zu problem%s):\n", path,
                errs.total, errs.total == 1 ? "" : "s");
        for (size_t i = 0; i < errs.count; i++)
            fprintf(stderr, "  %s: %s\n", errs.items[i].pointer[0] ? errs.items[i].pointer : "/",
                    errs.items[i].message);
        if (errs.total > errs.count)
            fprintf(stderr, "  … and %zu more\n", errs.total - errs.count);
        problems_free(&errs);
        return 1;
    }
    problems_free(&errs);
    if (!table) {
        cmd_print_pretty(stdout, comparison, 0);
        fputc('\n', stdout);
        json_decref(comparison);
        return cmd_finish_stdout();
    }
    char *out = cost_format_table(comparison);
    json_decref(comparison);
    if (!out) {
        fprintf(stderr, "capledger: out of memory\n");
        return 1;
    }
    fputs(out, stdout);
    free(out);
    return cmd_finish_stdout();
}
