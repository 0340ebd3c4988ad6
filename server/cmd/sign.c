/* capledger sign --key FILE record.json — signs a decision record the way the browser does and
 * prints {record, signature}, ready to POST to /api/v1/decisions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/files.h"
#include "core/ledger/decision.h"
#include "core/jcs.h"

#define RECORD_MAX_BYTES (1u << 20)

static int usage(void)
{
    fprintf(stderr, "usage: capledger sign --key FILE record.json\n");
    return 2;
}

static void print_problems(const char *path, const struct problems *errs)
{
    for (size_t i = 0; i < errs->count; i++) {
        if (errs->items[i].line)
            fprintf(stderr, "capledger: %s:%ld:%ld: %s\n", path, errs->items[i].line,
                    errs->items[i].column, errs->items[i].message);
        else
            fprintf(stderr, "capledger: %s: %s: %s\n", path,
                    errs->items[i].pointer[0] ? errs->items[i].pointer : "/",
                    errs->items[i].message);
    }
    if (errs->total > errs->count)
        fprintf(stderr, "capledger: %s: %zu more problems\n", path, errs->total - errs->count);
}

int cmd_sign(int argc, char **argv)
{
    const char *key_path = NULL, *record_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--key") == 0 && i + 1 < argc)
            key_path = argv[++i];
        else if (argv[i][0] != '-' && !record_path)
            record_path = argv[i];
        else if (strcmp(argv[i], "-") == 0 && !record_path)
            record_path = argv[i];
        else
            return usage();
    }
    if (!key_path || !record_path)
        return usage();
    if (sodium_init() < 0) {
        fprintf(stderr, "capledger: libsodium failed to initialise\n");
        return 1;
    }
    int status = 1;
    uint8_t sk[crypto_sign_SECRETKEYBYTES];
    json_t *record = NULL, *out = NULL;
    char *text = NULL, *bytes = NULL;
    struct problems errs;
    problems_init(&errs);
    if (files_key_read(key_path, sk) != 0)
        goto done;
    size_t len;
    text = files_read_all(record_path, RECORD_MAX_BYTES, &len);
    if (!text)
        goto done;
    record = jcs_parse(text, len, &errs);
    if (!record) {
        print_problems(record_path, &errs);
        goto done;
    }
    char key_id[DECISION_KEY_ID_HEX_LEN + 1];
    decision_key_id(sk + crypto_sign_SEEDBYTES, key_id);
    json_t *given = json_is_object(record) ? json_object_get(record, "signer_key_id") : NULL;
    if (json_is_object(record) && !given)
        json_object_set_new(record, "signer_key_id", json_string(key_id));
    else if (given && (!json_is_string(given) || strcmp(json_string_value(given), key_id) != 0)) {
        fprintf(stderr, "capledger: %s: signer_key_id is not this key's %s\n", record_path, key_id);
        goto done;
    }
    /* Refuse here what the server would refuse, before anyone signs it. */
    if (decision_validate(record, "", &errs) > 0) {
        print_problems(record_path, &errs);
        goto done;
    }
    char signature[DECISION_SIGNATURE_B64_LEN + 1];
    if (decision_sign(record, sk, signature) != 0) {
        fprintf(stderr, "capledger: %s: cannot be canonicalized\n", record_path);
        goto done;
    }
    out = json_pack("{s:O, s:s}", "record", record, "signature", signature);
    bytes = out ? jcs_serialize(out, &len) : NULL;
    if (!bytes) {
        fprintf(stderr, "capledger: out of memory\n");
        goto done;
    }
    if (fwrite(bytes, 1, len, stdout) != len || fputc('\n', stdout) == EOF || fflush(stdout)) {
        perror("capledger: stdout");
        goto done;
    }
    status = 0;
done:
    sodium_memzero(sk, sizeof sk);
    free(bytes);
    free(text);
    json_decref(out);
    json_decref(record);
    problems_free(&errs);
    return status;
}
