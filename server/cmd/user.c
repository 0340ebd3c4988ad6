/* capledger user add NAME --role owner|team|auditor|admin [--team TEAM]...: creates a user with
 * the password read from standard input (first line), checked against the same rules as the
 * API. Only the argon2id hash reaches the database; the password is wiped after use.
 *
 * capledger user disable NAME | enable NAME | reset-password NAME < password: the account's
 * lifecycle, as POST /api/v1/users/{name}/disable, /enable and /password do it. Disabling
 * revokes the user's signing keys as key events of the decision log, which this command signs
 * with the server's key (CAPLEDGER_KEY_FILE): run it on the server's host. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/config.h"
#include "cmd/files.h"
#include "core/auth/password.h"
#include "core/validate.h"
#include "store/ledger.h"
#include "store/users.h"

static int usage(void)
{
    fprintf(stderr, "usage: capledger user add USERNAME --role owner|team|auditor|admin "
                    "[--team TEAM]... < password\n"
                    "       capledger user disable USERNAME\n"
                    "       capledger user enable USERNAME\n"
                    "       capledger user reset-password USERNAME < password\n");
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

static int user_add(int argc, char **argv)
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

/* Opens the decision log as the server does (its key, its state file, the checks at start),
 * so that the key events of a disable are appended and signed like the server's own. */
static int open_log(const struct config *cfg, struct store *s,
                    unsigned char sk[crypto_sign_SECRETKEYBYTES])
{
    char why[512] = "out of memory";
    if (files_key_read(cfg->key_file, sk) != 0) {
        fprintf(stderr, "capledger: disabling revokes the user's signing keys in the log, "
                        "signed with the server's key: run this on the server's host "
                        "(CAPLEDGER_KEY_FILE)\n");
        return -1;
    }
    size_t len = strlen(cfg->key_file) + sizeof ".state";
    char *state = malloc(len);
    if (state)
        snprintf(state, len, "%s.state", cfg->key_file);
    int rc = state ? store_log_state_open(s, state, why, sizeof why) : -1;
    free(state);
    if (rc == 0 && store_log_init(s, cfg->log_origin, sk, why, sizeof why) != STORE_OK)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "capledger: %s\n", why);
    return rc;
}

/* disable, enable and reset-password: one user, by name. */
static int user_change(const char *verb, const char *name)
{
    int rc = 1;
    unsigned char sk[crypto_sign_SECRETKEYBYTES];
    char hash[PASSWORD_HASH_BYTES] = "";
    char *password = NULL;
    size_t len = 0;
    json_t *row = NULL;
    struct store *s = NULL;
    struct audit_actor who = {.name = "cli", .request_id = "cli"};
    if (sodium_init() < 0)
        goto out;
    if (strcmp(verb, "reset-password") == 0) {
        password = config_read_password(&len);
        if (!password) {
            fprintf(stderr, "capledger: give the new password on standard input\n");
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
    }
    struct config cfg;
    if (config_load(&cfg) != 0) {
        rc = 2;
        goto out;
    }
    s = config_open_store(&cfg, 1);
    if (!s)
        goto out;
    enum store_status st;
    if (strcmp(verb, "disable") == 0) {
        if (open_log(&cfg, s, sk) != 0)
            goto out;
        st = store_user_disable(s, &who, name, sk, &row);
    } else if (strcmp(verb, "enable") == 0) {
        st = store_user_enable(s, &who, name, &row);
    } else {
        st = store_user_password_set(s, &who, name, hash, &row);
    }
    if (st == STORE_NOT_FOUND)
        fprintf(stderr, "capledger: no user named '%s'\n", name);
    else
        rc = config_report_created(st, row, "user", name, NULL);
out:
    sodium_memzero(sk, sizeof sk);
    sodium_memzero(hash, sizeof hash);
    if (password) {
        sodium_memzero(password, len);
        free(password);
    }
    json_decref(row);
    if (s)
        store_close(s);
    return rc;
}

int cmd_user(int argc, char **argv)
{
    if (argc == 3 && (strcmp(argv[1], "disable") == 0 || strcmp(argv[1], "enable") == 0 ||
                      strcmp(argv[1], "reset-password") == 0)) {
        if (!team_name_valid(argv[2])) {
            fprintf(stderr, "capledger: no user named '%s'\n", argv[2]);
            return 1;
        }
        return user_change(argv[1], argv[2]);
    }
    return user_add(argc, argv);
}
