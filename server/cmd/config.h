/* Configuration from the environment, shared by the subcommands: one table (config.c) of
 * every CAPLEDGER_* variable with its type, range, default and meaning. */
#ifndef CAPLEDGER_CMD_CONFIG_H
#define CAPLEDGER_CMD_CONFIG_H

#include "store/store.h"

struct config {
    const char *database_url;
    const char *database_url_source; /* "the environment", the env file's path, or the default */
    const char *read_database_url;   /* NULL: reports read the primary */
    int read_wait_ms;                /* reads wait this long for the standby (http/reads.h) */
    const char *listen;
    const char *static_dir;
    const char *migrations_dir;
    const char *openapi_path;
    const char *key_file;
    const char *log_origin;
    int pool_size;
    int threads;
    int thread_stack_kb; /* every thread's stack, Civetweb's workers included */
    int conn_reserve;    /* http_config's namesakes */
    int max_conns_per_address;
    int header_timeout_ms;
    int body_min_bytes_per_s;
    int send_timeout_ms;
    int send_min_bytes_per_s;
    const char *public_origin;   /* NULL: the request's scheme and Host */
    const char *cors_origins;    /* NULL: no cross-origin access */
    int session_idle_s;          /* browser session idle expiry */
    int log_public;              /* the log's public face without credentials */
    int signing_fresh_s;         /* step-up window for enrolling a signing key */
    int token_cache_ms;          /* how long a resolved API token is reused */
    int row_cache_slots;         /* rows kept by the row cache (0: none) */
    int row_cache_mb;            /* its byte budget, MiB */
    int drift_sweep_s;           /* 0: no background drift check */
    int partitions_ahead;        /* months after the current one with partitions made */
    int retention_months;        /* 0: keep runs and samples for ever */
    int usage_exact_max;         /* the usage report's exact percentiles up to this many waits */
    double webhook_timeout_s;    /* one delivery attempt */
    double webhook_retry_base_s; /* the first backoff step */
    int webhook_deny_private;    /* refuse loopback and private addresses too */
    int webhook_threads;         /* webhook deliveries posted at once */
    const char *witnesses;       /* "VKEY URL, …": witnesses the log asks to cosign */
    double witness_timeout_s;    /* one add-checkpoint request */
    double witness_retry_max_s;  /* the longest wait between attempts */
};

/* Reads $CAPLEDGER_VAR_DIR/capledger.env (default var/capledger.env), which scripts/run writes
 * while it serves (CAPLEDGER_DATABASE_URL of its private cluster, CAPLEDGER_URL), and sets each
 * CAPLEDGER_* variable it names that the environment does not already set: so commands run
 * from the project directory reach the same database and server as scripts/run. */
void config_env_file_apply(void);
/* Fills cfg from the environment through the table in config.c (defaults for what is unset).
 * Returns 0, or -1 after naming on stderr each variable set to a value outside its type or
 * range: commands then refuse to start (exit 2) rather than run on a value nobody chose. */
int config_load(struct config *cfg) __attribute__((warn_unused_result));
/* A variable of the table that a command reads itself (CAPLEDGER_URL, CAPLEDGER_TOKEN, ...):
 * getenv's value, NULL when unset or empty. Asking for a name not in the table aborts, so every
 * variable is declared there and listed by `capledger config --help`. */
char *config_env(const char *name);
/* Opens the store and applies migrations; NULL (message printed) on failure. */
struct store *config_open_store(const struct config *cfg, int migrate);
/* The end of a command that creates a record: prints it (compact JSON) and returns 0 on
 * STORE_OK; else says why on stderr (an existing name, invalid_why for STORE_INVALID when
 * given) and returns 1. */
int config_report_created(enum store_status st, const json_t *row, const char *what,
                          const char *name, const char *invalid_why);
/* Reads a password from standard input (first line, without the newline) into a malloc'd
 * buffer; NULL on error. Caller sodium_memzero()s and frees it. */
char *config_read_password(size_t *len);

#endif
