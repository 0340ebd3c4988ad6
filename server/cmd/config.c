#include "cmd/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

/* An integer variable within [lo, hi]; anything else (unset, not a number, out of range) is
 * the default. */
static int env_int(const char *name, int fallback, int lo, int hi)
{
    const char *v = getenv(name);
    char *end = NULL;
    long n = v && *v ? strtol(v, &end, 10) : fallback;
    if (v && *v && (*end || n < lo || n > hi))
        n = fallback;
    return (int)n;
}

/* Where CAPLEDGER_DATABASE_URL came from, for the message when it does not answer. */
static char env_file_path[4096];
static int database_url_from_file;

/* One shell word of a KEY=VALUE line as scripts/run writes it: bare characters, '…' quoted
 * runs and backslash escapes ('\'' inside single quotes). Returns 0, or -1 when malformed. */
static int shell_word(const char *s, char *out, size_t size)
{
    size_t n = 0;
    while (*s && *s != '\n' && *s != ' ' && *s != '\t' && *s != '#') {
        if (*s == '\'') {
            const char *end = strchr(s + 1, '\'');
            if (!end)
                return -1;
            for (s++; s < end; s++) {
                if (n + 1 >= size)
                    return -1;
                out[n++] = *s;
            }
            s++;
            continue;
        }
        if (*s == '\\' && s[1])
            s++;
        if (n + 1 >= size)
            return -1;
        out[n++] = *s++;
    }
    out[n] = '\0';
    return 0;
}

void config_env_file_apply(void)
{
    const char *dir = env_or("CAPLEDGER_VAR_DIR", "var");
    snprintf(env_file_path, sizeof env_file_path, "%s/capledger.env", dir);
    FILE *f = fopen(env_file_path, "r");
    if (!f)
        return;
    char line[8192], value[8192];
    while (fgets(line, sizeof line, f)) {
        char *s = line;
        if (strncmp(s, "export ", 7) == 0)
            s += 7;
        char *eq = strchr(s, '=');
        if (strncmp(s, "CAPLEDGER_", 10) != 0 || !eq || (size_t)(eq - s) > 64)
            continue;
        *eq = '\0';
        if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(s))
            continue;
        const char *now = getenv(s);
        if ((now && *now) || shell_word(eq + 1, value, sizeof value) != 0 || !value[0])
            continue; /* the environment wins over the file */
        if (setenv(s, value, 1) == 0 && strcmp(s, "CAPLEDGER_DATABASE_URL") == 0)
            database_url_from_file = 1;
    }
    fclose(f);
}

void config_load(struct config *cfg)
{
    cfg->database_url = env_or("CAPLEDGER_DATABASE_URL", "dbname=capledger");
    cfg->database_url_source =
        database_url_from_file ? env_file_path
        : getenv("CAPLEDGER_DATABASE_URL") && *getenv("CAPLEDGER_DATABASE_URL")
            ? "the environment"
            : "the default: CAPLEDGER_DATABASE_URL is not set";
    cfg->read_database_url = env_or("CAPLEDGER_READ_DATABASE_URL", NULL);
    cfg->listen = env_or("CAPLEDGER_LISTEN", "127.0.0.1:8080");
    cfg->static_dir = env_or("CAPLEDGER_STATIC_DIR", "static");
    cfg->migrations_dir = env_or("CAPLEDGER_MIGRATIONS_DIR", "db/migrations");
    cfg->openapi_path = env_or("CAPLEDGER_OPENAPI", "api/openapi.yaml");
    cfg->key_file = env_or("CAPLEDGER_KEY_FILE", "var/server.key");
    cfg->log_origin = env_or("CAPLEDGER_LOG_ORIGIN", "localhost/capledger");
    cfg->pool_size = env_int("CAPLEDGER_DB_POOL", 16, 1, 256);
    cfg->threads = env_int("CAPLEDGER_THREADS", 256, 8, 1024);
    cfg->thread_stack_kb = env_int("CAPLEDGER_THREAD_STACK_KB", 1024, 256, 65536);
    cfg->conn_reserve = env_int("CAPLEDGER_CONN_RESERVE", cfg->threads / 8, 1, cfg->threads / 2);
    cfg->max_conns_per_address = env_int("CAPLEDGER_MAX_CONNS_PER_ADDRESS", 64, 0, 1024);
    cfg->header_timeout_ms = env_int("CAPLEDGER_HEADER_TIMEOUT_MS", 10000, 500, 600000);
    cfg->body_min_bytes_per_s = env_int("CAPLEDGER_BODY_MIN_RATE", 4096, 0, 1 << 30);
    cfg->public_origin = env_or("CAPLEDGER_PUBLIC_ORIGIN", NULL);
    cfg->cors_origins = env_or("CAPLEDGER_CORS_ORIGINS", NULL);
    cfg->drift_sweep_s = env_int("CAPLEDGER_DRIFT_SWEEP_S", 60, 0, 86400);
    cfg->webhook_timeout_s = atof(env_or("CAPLEDGER_WEBHOOK_TIMEOUT_S", "10"));
    if (!(cfg->webhook_timeout_s >= 0.1 && cfg->webhook_timeout_s <= 300))
        cfg->webhook_timeout_s = 10;
    cfg->webhook_retry_base_s = atof(env_or("CAPLEDGER_WEBHOOK_RETRY_BASE_S", "15"));
    if (!(cfg->webhook_retry_base_s >= 0.01 && cfg->webhook_retry_base_s <= 3600))
        cfg->webhook_retry_base_s = 15;
    cfg->webhook_deny_private = strcmp(env_or("CAPLEDGER_WEBHOOK_DENY_PRIVATE", "0"), "1") == 0;
}

struct store *config_open_store(const struct config *cfg, int migrate)
{
    struct store *s = store_open(cfg->database_url, cfg->pool_size);
    if (!s) {
        fprintf(stderr, "capledger: out of memory\n");
        return NULL;
    }
    if (!migrate)
        return s;
    char why[512] = "";
    enum store_status st = store_migrate(s, cfg->migrations_dir, why, sizeof why);
    if (st == STORE_UNAVAILABLE && store_probe(cfg->database_url, why, sizeof why) != STORE_OK) {
        fprintf(stderr,
                "capledger: cannot reach the database %s (from %s):\n  %s\n"
                "  scripts/run writes its database to %s while it serves: start scripts/run "
                "(or run this from the project directory, or set CAPLEDGER_VAR_DIR to its var/), "
                "or set CAPLEDGER_DATABASE_URL to the libpq conninfo the server uses.\n",
                cfg->database_url, cfg->database_url_source, why,
                env_file_path[0] ? env_file_path : "var/capledger.env");
        store_close(s);
        return NULL;
    }
    if (st != STORE_OK) {
        fprintf(stderr, "capledger: migrations: %s\n", why[0] ? why : store_status_name(st));
        store_close(s);
        return NULL;
    }
    return s;
}

char *config_read_password(size_t *len)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) {
        free(line);
        return NULL;
    }
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    *len = (size_t)n;
    return line;
}

int config_report_created(enum store_status st, const json_t *row, const char *what,
                          const char *name, const char *invalid_why)
{
    if (st == STORE_OK) {
        char *text = json_dumps(row, JSON_COMPACT);
        if (text)
            printf("%s\n", text);
        free(text);
        return 0;
    }
    if (st == STORE_CONFLICT)
        fprintf(stderr, "capledger: a %s named '%s' already exists\n", what, name);
    else if (st == STORE_INVALID && invalid_why)
        fprintf(stderr, "capledger: %s\n", invalid_why);
    else
        fprintf(stderr, "capledger: %s\n", store_status_name(st));
    return 1;
}
