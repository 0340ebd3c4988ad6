/* Migrations runner: db/migrations/NNNN_name.sql applied in order (each number once), each in a
 * transaction, recorded with its SHA-256. A changed applied file stops the start (the schema on
 * disk no longer describes the database). pg_advisory_lock serialises concurrent starters. */
#include "store/store.h"
#include "store/store_private.h"

#include <dirent.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIGRATION_LOCK_KEY "7302948812364311"

struct migration {
    char name[256];
    char *sql;
    char sha256[65];
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct migration *)a)->name, ((const struct migration *)b)->name);
}

static int is_migration_name(const char *n)
{
    size_t len = strlen(n);
    if (len < 10 || len >= 256 || strcmp(n + len - 4, ".sql") != 0)
        return 0;
    for (int i = 0; i < 4; i++)
        if (n[i] < '0' || n[i] > '9')
            return 0;
    return n[4] == '_';
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    char chunk[8192];
    size_t n;
    while (mem && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, n, mem);
    fclose(f);
    if (mem)
        fclose(mem);
    return buf;
}

static void free_migrations(struct migration *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(m[i].sql);
    free(m);
}

/* Loads every migration file of dir, sorted; NULL with why filled on failure. */
static struct migration *load_migrations(const char *dir, size_t *count, char *why, size_t why_size)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(why, why_size, "cannot open migrations directory %s", dir);
        return NULL;
    }
    struct migration *m = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_migration_name(e->d_name))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            struct migration *grown = realloc(m, cap * sizeof *m);
            if (!grown)
                break;
            m = grown;
        }
        struct migration *it = &m[n];
        memset(it, 0, sizeof *it);
        snprintf(it->name, sizeof it->name, "%s", e->d_name);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        it->sql = read_file(path);
        if (!it->sql) {
            snprintf(why, why_size, "cannot read %s", path);
            closedir(d);
            free_migrations(m, n);
            return NULL;
        }
        unsigned char digest[crypto_hash_sha256_BYTES];
        crypto_hash_sha256(digest, (const unsigned char *)it->sql, strlen(it->sql));
        sodium_bin2hex(it->sha256, sizeof it->sha256, digest, sizeof digest);
        n++;
    }
    closedir(d);
    if (n == 0) {
        snprintf(why, why_size, "no migrations in %s", dir);
        free(m);
        return NULL;
    }
    qsort(m, n, sizeof *m, by_name);
    for (size_t i = 1; i < n; i++)
        if (memcmp(m[i - 1].name, m[i].name, 4) == 0) {
            snprintf(why, why_size,
                     "migrations %s and %s share the number %.4s: each migration needs a "
                     "number of its own",
                     m[i - 1].name, m[i].name, m[i].name);
            free_migrations(m, n);
            return NULL;
        }
    *count = n;
    return m;
}

/* Files renamed after databases recorded them under the old name (two files were numbered
 * 0040); same content, so the recorded SHA-256 still holds. Applied before anything else, under
 * the migration lock, so such a database is not migrated twice. */
static const struct {
    const char *was, *now;
} renamed[] = {
    {"0040_telemetry_once.sql", "0039_telemetry_once.sql"},
};

static const char *SQL_CREATE_TABLE = "CREATE TABLE IF NOT EXISTS schema_migrations ("
                                      " name text PRIMARY KEY, sha256 text NOT NULL,"
                                      " applied_at timestamptz NOT NULL DEFAULT now())";
static const char *SQL_RECORD = "INSERT INTO schema_migrations (name, sha256) VALUES ($1, $2)";

static enum store_status applied_sha(struct store_conn *c, const char *name, char out[65])
{
    json_t *row = NULL;
    const char *p[] = {name};
    enum store_status st = store_json_tx(
        c, "SELECT to_json(sha256) FROM schema_migrations WHERE name = $1", STORE_ARGS(p), &row);
    if (st == STORE_OK) {
        snprintf(out, 65, "%s", json_string_value(row) ? json_string_value(row) : "");
        json_decref(row);
    }
    return st;
}

enum store_status store_migrate(struct store *s, const char *dir, char *why, size_t why_size)
{
    size_t n = 0;
    struct migration *m = load_migrations(dir, &n, why, why_size);
    if (!m)
        return STORE_ERROR;
    struct store_conn *c = store_acquire(s, 5000);
    if (!c) {
        snprintf(why, why_size, "database unavailable");
        free_migrations(m, n);
        return STORE_UNAVAILABLE;
    }
    const char *lock[] = {MIGRATION_LOCK_KEY};
    enum store_status st =
        store_exec_tx(c, "SELECT pg_advisory_lock($1::bigint)", STORE_ARGS(lock), NULL);
    if (st == STORE_OK)
        st = store_exec_tx(c, SQL_CREATE_TABLE, 0, NULL, NULL);
    for (size_t i = 0; st == STORE_OK && i < sizeof renamed / sizeof renamed[0]; i++) {
        const char *p[] = {renamed[i].was, renamed[i].now};
        st = store_exec_tx(c, "UPDATE schema_migrations SET name = $2 WHERE name = $1",
                           STORE_ARGS(p), NULL);
    }
    for (size_t i = 0; st == STORE_OK && i < n; i++) {
        char sha[65];
        enum store_status have = applied_sha(c, m[i].name, sha);
        if (have == STORE_OK) {
            if (strcmp(sha, m[i].sha256) != 0) {
                snprintf(why, why_size,
                         "migration %s was changed after it was applied (recorded sha256 %.12s…, "
                         "file %.12s…): add a new migration instead",
                         m[i].name, sha, m[i].sha256);
                st = STORE_CONFLICT;
            }
            continue;
        }
        if (have != STORE_NOT_FOUND) {
            st = have;
            break;
        }
        st = store_begin(c);
        if (st == STORE_OK)
            st = store__exec_script(c, m[i].sql);
        if (st == STORE_OK) {
            const char *p[] = {m[i].name, m[i].sha256};
            st = store_exec_tx(c, SQL_RECORD, STORE_ARGS(p), NULL);
        }
        if (st == STORE_OK)
            st = store_commit(c);
        if (st != STORE_OK) {
            snprintf(why, why_size, "migration %s failed: %s", m[i].name, store_last_error(c));
            store_rollback(c);
        } else {
            fprintf(stderr, "{\"level\":\"info\",\"msg\":\"migration applied\",\"name\":\"%s\"}\n",
                    m[i].name);
        }
    }
    if (st != STORE_OK && !why[0])
        snprintf(why, why_size, "%s", store_last_error(c));
    enum store_status unlock =
        store_exec_tx(c, "SELECT pg_advisory_unlock($1::bigint)", STORE_ARGS(lock), NULL);
    (void)unlock; /* the lock also ends with the session if this fails */
    store_release(s, c);
    free_migrations(m, n);
    return st;
}

enum store_status store_ready(struct store *s, const char *dir, char *why, size_t why_size)
{
    char evidence[512];
    if (store_log_fault(s, evidence, sizeof evidence)) {
        snprintf(why, why_size, "the decision log is inconsistent: %s", evidence);
        return STORE_UNAVAILABLE;
    }
    size_t n = 0;
    struct migration *m = load_migrations(dir, &n, why, why_size);
    if (!m)
        return STORE_ERROR;
    json_t *count = NULL;
    enum store_status st =
        store_json(s, "SELECT to_json(count(*)) FROM schema_migrations", 0, NULL, &count);
    if (st == STORE_OK) {
        if (json_integer_value(count) < (json_int_t)n) {
            snprintf(why, why_size, "%lld of %zu migrations applied",
                     (long long)json_integer_value(count), n);
            st = STORE_NOT_FOUND;
        }
        json_decref(count);
    } else {
        snprintf(why, why_size, "database unavailable");
    }
    free_migrations(m, n);
    return st;
}
