/* capledger token create NAME [--label L]: mints an API token for user NAME and prints it once.
 * Only its SHA-256 reaches the database. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/config.h"
#include "core/auth/secret.h"
#include "store/users.h"

int cmd_token(int argc, char **argv)
{
    const char *user = NULL, *label = "";
    int expires_in_days = 0;
    if (argc < 3 || strcmp(argv[1], "create") != 0)
        goto usage;
    user = argv[2];
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--label") == 0 && i + 1 < argc) {
            label = argv[++i];
        } else if (strcmp(argv[i], "--expires-in-days") == 0 && i + 1 < argc) {
            char *end = NULL;
            long days = strtol(argv[++i], &end, 10);
            if (*end || days < 1 || days > TOKEN_MAX_DAYS)
                goto usage;
            expires_in_days = (int)days;
        } else {
            goto usage;
        }
    }
    if (sodium_init() < 0)
        return 1;
    struct config cfg;
    if (config_load(&cfg) != 0)
        return 2;
    struct store *s = config_open_store(&cfg, 1);
    if (!s)
        return 1;
    char token[TOKEN_TEXT_LEN + 1], hash[65];
    secret_token_new(token);
    secret_sha256_hex(token, strlen(token), hash);
    struct audit_actor who = {.name = "cli", .request_id = "cli"};
    json_t *row = NULL;
    enum store_status st = store_token_create(s, &who, user, label, hash, expires_in_days, &row);
    int rc = 0;
    if (st == STORE_OK) {
        printf("%s\n", token);
        fprintf(stderr, "token %s created for %s; it is shown only this once\n",
                json_string_value(json_object_get(row, "id")), user);
    } else {
        fprintf(stderr, "capledger: %s\n",
                st == STORE_NOT_FOUND ? "no such user (or the user is disabled)"
                                      : store_status_name(st));
        rc = 1;
    }
    json_decref(row);
    sodium_memzero(token, sizeof token);
    store_close(s);
    return rc;
usage:
    fprintf(stderr,
            "usage: capledger token create USERNAME [--label LABEL] [--expires-in-days N]"
            " (N from 1 to %d)\n",
            TOKEN_MAX_DAYS);
    return 2;
}
