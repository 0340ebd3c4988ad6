/* Configuration from the environment, shared by the subcommands. */
#ifndef CAPLEDGER_CMD_CONFIG_H
#define CAPLEDGER_CMD_CONFIG_H

#include "store/store.h"

struct config {
    const char *database_url;
    const char *read_database_url; /* NULL: reports read the primary */
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
    int drift_sweep_s; /* 0: no background drift check */
};

void config_load(struct config *cfg);
/* Opens the store and applies migrations; NULL (message printed) on failure. */
struct store *config_open_store(const struct config *cfg, int migrate);
/* Reads a password from standard input (first line, without the newline) into a malloc'd
 * buffer; NULL on error. Caller sodium_memzero()s and frees it. */
char *config_read_password(size_t *len);

#endif
