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

void config_load(struct config *cfg)
{
    cfg->database_url = env_or("CAPLEDGER_DATABASE_URL", "dbname=capledger");
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
    cfg->drift_sweep_s = env_int("CAPLEDGER_DRIFT_SWEEP_S", 60, 0, 86400);
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
