/* capledger whatif FILE.json [--json] — the what-if replay offline (docs/whatif.md): a job
 * history and candidate capacity arrangements in, the replay's table (or, with --json, its
 * result document) out. A stored replay's resolved document (GET /api/v1/whatif/{sha256}/input)
 * replays here to the same figures and the same input_sha256. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/files.h"
#include "core/jsonlimit.h"
#include "core/whatif/whatif.h"

/* 2,000,000 jobs of about 170 bytes each, and room for hand-written indentation. */
#define WHATIF_MAX_INPUT_BYTES (768u << 20)

static int whatif_usage(void)
{
    fprintf(stderr, "usage: capledger whatif FILE.json [--json]   (FILE may be - for standard "
                    "input)\n");
    return 2;
}

int cmd_whatif(int argc, char **argv)
{
    const char *path = NULL;
    bool as_json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            as_json = true;
        else if ((argv[i][0] == '-' && argv[i][1] != '\0') || path)
            return whatif_usage();
        else
            path = argv[i];
    }
    if (!path)
        return whatif_usage();
    json_t *doc = files_read_json(path, WHATIF_MAX_INPUT_BYTES);
    if (!doc)
        return 1;
    struct problems errs;
    problems_init(&errs);
    json_t *selection = json_object_get(doc, "jobs");
    if (json_is_object(selection)) {
        fprintf(stderr,
                "capledger: %s: /jobs is a selection of stored runs, which only the server "
                "resolves: POST it to /api/v1/whatif, or put the jobs inline (GET "
                "/api/v1/whatif/{sha256}/input gives a stored replay's jobs).\n",
                path);
        json_decref(doc);
        return 1;
    }
    json_t *result = whatif_replay_document(doc, &errs);
    json_decref(doc);
    if (!result) {
        fprintf(stderr, "capledger: %s: the replay document is not valid (%zu problem%s):\n", path,
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
    if (as_json) {
        cmd_print_pretty(stdout, result, 0);
        fputc('\n', stdout);
    } else {
        char *out = whatif_format_table(result);
        if (!out) {
            json_decref(result);
            fprintf(stderr, "capledger: out of memory\n");
            return 1;
        }
        fputs(out, stdout);
        free(out);
    }
    json_decref(result);
    return cmd_finish_stdout();
}
