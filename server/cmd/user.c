/* capledger user add NAME --role owner|team|auditor|admin [--team TEAM]...: creates a user with
 * the password read from standard input (first line), checked against the same rules as the
 * API. Only the argon2id hash reaches the database; the password is wiped after use. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/config.h"
#include "core/auth/password.h"
#include "core/validate.h"
#include "store/users.h"

static int usage(void)
{
    fprintf(stderr, "usage: capledger user add USERNAME --role owner|team|auditor|admin "
                    "[--team TEAM]... < password\n");
    return 2;
}

/* Parses the arguments after "add"; *teams gets a new array. Returns 0, or 2 after usage. */
static int parse_args(int argc, char **argv, const char **name, const char **role, json_t *teams)
{
    if (argc < 3 || strcmp(argv[1], "add") != 0)
        return usage();
    *name = argv[2];
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--role") == 0 && i + 1 < argc)
            *role = argv[++i];
        else if (strcmp(argv[i], "--team") == 0 && i + 1 < argc)
            json_array_append_new(teams, json_string(argv[++i]));
        else
            return usage();
    }
    if (!*role)
        return usage();
    if (!team_name_valid(*name)) {
        fprintf(stderr, "capledger: the username must be 1-64 letters, digits, '.', '_' or '-', "
                        "starting with a letter or digit\n");
        return 2;
    }
    if (!user_role_valid(*role)) {
        fprintf(stderr, "capledger: --role must be owner, team, auditor or admin\n");
        return 2;
    }
    if (strcmp(*role, "team") == 0 && json_array_size(teams) == 0) {
        fprintf(stderr, "capledger: a team member needs at least one --team\n");
        return 2;
    }
    return 0;
}

int cmd_user(int argc, char **argv)
{
    const char *name = NULL, *role = NULL;
    json_t *teams = json_array(), *row = NULL;
    char hash[PASSWORD_HASH_BYTES] = "";
    char *password = NULL;
    size_t len = 0;
    struct store *s = NULL;
    int rc = parse_args(argc, argv, &name, &role, teams);
    if (rc != 0)
        goto out;
    rc = 1;
    if (sodium_init() < 0)
        goto out;
    password = config_read_password(&len);
    if (!password) {
        fprintf(stderr, "capledger: give the password on standard input\n");
        goto out;
    }
    const char *rule = password_rule_broken(password, len, name);
    if (rule) {
        fprintf(stderr, "capledger: the password %s\n", rule);
        goto out;
    }
    if (password_hash(password, len, hash) != 0) {
        fprintf(stderr, "capledger: out of memory hashing the password\n");
        goto out;
    }
    struct config cfg;
    if (config_load(&cfg) != 0)
        return 2;
    s = config_open_store(&cfg, 1);
    if (!s)
        goto out;
    struct audit_actor who = {.name = "cli", .request_id = "cli"};
    enum store_status st = store_user_create(s, &who, name, role, hash, teams, &row);
    rc = config_report_created(st, row, "user", name,
                               "a --team names no existing team (create it first: capledger team "
                               "add NAME)");
out:
    if (password) {
        sodium_memzero(password, len);
        free(password);
    }
    sodium_memzero(hash, sizeof hash);
    json_decref(row);
    json_decref(teams);
    if (s)
        store_close(s);
    return rc;
}
