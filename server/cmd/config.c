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
    cfg->pool_size = atoi(env_or("CAPLEDGER_DB_POOL", "16"));
    cfg->threads = atoi(env_or("CAPLEDGER_THREADS", "32"));
    cfg->thread_stack_kb = atoi(env_or("CAPLEDGER_THREAD_STACK_KB", "1024"));
    if (cfg->thread_stack_kb < 256 || cfg->thread_stack_kb > 65536)
        cfg->thread_stack_kb = 1024;
    cfg->drift_sweep_s = atoi(env_or("CAPLEDGER_DRIFT_SWEEP_S", "60"));
    if (cfg->drift_sweep_s < 0 || cfg->drift_sweep_s > 86400)
        cfg->drift_sweep_s = 60;
    if (cfg->pool_size < 1 || cfg->pool_size > 256)
        cfg->pool_size = 16;
    if (cfg->threads < 2 || cfg->threads > 1024)
        cfg->threads = 32;
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
