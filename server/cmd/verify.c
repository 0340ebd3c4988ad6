/* capledger verify BUNDLE.json [--previous-checkpoint FILE] [--recompute] — the auditor's
 * offline check of an audit bundle (core/ledger/bundle.c does the checking; this reads the files).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/files.h"
#include "core/ledger/bundle.h"
#include "core/ledger/jcs.h"

#define BUNDLE_MAX_BYTES (1u << 30)
#define CHECKPOINT_MAX_BYTES (1u << 16)
#define RECOMPUTE_REL_TOL 1e-9 /* LEDGER.md */

static int usage(void)
{
    fprintf(stderr,
            "usage: capledger verify BUNDLE.json [--previous-checkpoint FILE] [--recompute]\n");
    return 2;
}

static void print_notice(void *ctx, const char *message)
{
    (void)ctx;
    fprintf(stderr, "capledger verify: note: %s\n", message);
}

int cmd_verify(int argc, char **argv)
{
    const char *bundle_path = NULL, *previous_path = NULL;
    int recompute = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--previous-checkpoint") == 0 && i + 1 < argc)
            previous_path = argv[++i];
        else if (strcmp(argv[i], "--recompute") == 0)
            recompute = 1;
        else if ((argv[i][0] != '-' || strcmp(argv[i], "-") == 0) && !bundle_path)
            bundle_path = argv[i];
        else
            return usage();
    }
    if (!bundle_path)
        return usage();
    if (sodium_init() < 0) {
        fprintf(stderr, "capledger: libsodium failed to initialise\n");
        return 1;
    }
    int status = 1;
    char *text = NULL, *previous = NULL;
    json_t *bundle = NULL;
    struct problems errs;
    problems_init(&errs);
    size_t len;
    text = files_read_all(bundle_path, BUNDLE_MAX_BYTES, &len);
    if (!text)
        goto done;
    bundle = jcs_parse(text, len, &errs);
    if (!bundle) {
        fprintf(stderr, "capledger verify: %s:%ld:%ld: %s\n", bundle_path,
                errs.count ? errs.items[0].line : 0, errs.count ? errs.items[0].column : 0,
                errs.count ? errs.items[0].message : "out of memory");
        goto done;
    }
    if (previous_path && !(previous = files_read_all(previous_path, CHECKPOINT_MAX_BYTES, NULL)))
        goto done;
    char why[1024];
    if (bundle_verify(bundle, previous, why, sizeof why) != 0) {
        fprintf(stderr, "capledger verify: FAILED: %s\n", why);
        goto done;
    }
    if (recompute &&
        bundle_recompute(bundle, RECOMPUTE_REL_TOL, print_notice, NULL, why, sizeof why) != 0) {
        fprintf(stderr, "capledger verify: FAILED: %s\n", why);
        goto done;
    }
    printf("verified: checkpoint signed by %s; %zu leaves, every approver signature and "
           "comparison hash checked%s%s\n",
           json_string_value(json_object_get(bundle, "origin")),
           json_array_size(json_object_get(bundle, "leaves")),
           previous ? "; the previous checkpoint is a prefix" : "",
           recompute ? "; every comparison recomputed within 1e-9" : "");
    status = 0;
done:
    json_decref(bundle);
    free(previous);
    free(text);
    problems_free(&errs);
    return status;
}
