/* capledger serve / migrate. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <civetweb.h>

#include "cmd/cmd.h"
#include "core/rowcache.h"
#include "cmd/config.h"
#include "cmd/files.h"
#include "cmd/threadstack.h"
#include "core/auth/password.h"
#include "http/cosign.h"
#include "http/deliver.h"
#include "http/http.h"
#include "store/alerts.h"
#include "store/ledger.h"
#include "store/partitions.h"
#include "store/users.h"

/* Loads the server's Ed25519 key, creating it (mode 0600, with KEY.pub beside it) when the
 * file does not exist yet: the first start of a new installation. */
static int load_or_create_key(const char *path, unsigned char sk[crypto_sign_SECRETKEYBYTES])
{
    if (access(path, F_OK) != 0 && errno == ENOENT) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = '\0';
            mkdir(dir, 0700);
        }
        uint8_t pk[crypto_sign_PUBLICKEYBYTES];
        if (files_key_create(path, pk) != 0)
            return -1;
        fprintf(stderr,
                "{\"level\":\"info\",\"msg\":\"created server signing key\",\"file\":\"%s\"}\n",
                path);
    }
    struct stat st;
    if (stat(path, &st) == 0 && (st.st_mode & 077))
        fprintf(stderr,
                "{\"level\":\"warn\",\"msg\":\"key file is readable by others\",\"file\":\"%s\"}\n",
                path);
    return files_key_read(path, sk);
}

/* First start: when there is no user at all and CAPLEDGER_ADMIN_PASSWORD is set, create the
 * admin with it, once. The variable is removed from the environment after use. */
static int bootstrap_admin(struct store *s)
{
    char *pw = config_env("CAPLEDGER_ADMIN_PASSWORD");
    if (!pw)
        return 0;
    int rc = 0;
    size_t len = strlen(pw);
    char hash[PASSWORD_HASH_BYTES];
    json_t *any = NULL;
    enum store_status st = store_json(s, "SELECT to_json(1) FROM app_user LIMIT 1", 0, NULL, &any);
    json_decref(any);
    if (st == STORE_OK)
        goto out; /* users exist: never touch the admin password again */
    if (st != STORE_NOT_FOUND) {
        fprintf(stderr, "capledger: cannot check for users: %s\n", store_status_name(st));
        rc = -1;
        goto out;
    }
    const char *broken = password_rule_broken(pw, len, "admin");
    if (broken) {
        fprintf(stderr, "capledger: CAPLEDGER_ADMIN_PASSWORD %s\n", broken);
        rc = -1;
        goto out;
    }
    if (password_hash(pw, len, hash) != 0) {
        fprintf(stderr, "capledger: out of memory hashing the admin password\n");
        rc = -1;
        goto out;
    }
    st = store_bootstrap_admin(s, hash);
    if (st == STORE_OK)
        fprintf(stderr, "{\"level\":\"info\",\"msg\":\"created the first user: admin\"}\n");
    else if (st != STORE_CONFLICT)
        rc = -1;
out:
    sodium_memzero(pw, len);
    unsetenv("CAPLEDGER_ADMIN_PASSWORD");
    sodium_memzero(hash, sizeof hash);
    return rc;
}

/* The stop of the background threads below: a flag and the condition they wait on (on the
 * monotonic clock), so a stop wakes them at once. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int stop;
} stopping = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void stopping_init(void)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&stopping.cond, &attr);
    pthread_condattr_destroy(&attr);
}

static void stopping_begin(void)
{
    pthread_mutex_lock(&stopping.mu);
    stopping.stop = 1;
    pthread_cond_broadcast(&stopping.cond);
    pthread_mutex_unlock(&stopping.mu);
}

/* Waits `seconds`, or less when the server stops; returns 1 when it stops. */
static int wait_or_stop(int seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += seconds;
    pthread_mutex_lock(&stopping.mu);
    while (!stopping.stop &&
           pthread_cond_timedwait(&stopping.cond, &stopping.mu, &until) != ETIMEDOUT) {
    }
    int stop = stopping.stop;
    pthread_mutex_unlock(&stopping.mu);
    return stop;
}

/* The background drift check: every interval_s, compare what happened since each decision with
 * its assumptions (store_alert_sweep). */
struct sweeper {
    pthread_t thread;
    struct store *store;
    int interval_s;
};

static void *sweeper_run(void *arg)
{
    struct sweeper *sw = arg;
    while (!wait_or_stop(sw->interval_s)) {
        struct audit_actor who = {.name = "system", .request_id = "drift-sweep"};
        int raised = 0;
        enum store_status st = store_alert_sweep(sw->store, &who, &raised);
        if (st != STORE_OK)
            fprintf(stderr,
                    "{\"level\":\"warn\",\"msg\":\"drift sweep failed\",\"status\":\"%s\"}\n",
                    store_status_name(st));
        else if (raised)
            fprintf(stderr, "{\"level\":\"info\",\"msg\":\"drift alerts raised\",\"count\":%d}\n",
                    raised);
    }
    return NULL;
}

/* Time partitions (store_partitions_maintain): at start, then every hour. A failure is logged
 * and retried an hour later; uploads never wait for it (rows no partition covers go to the
 * default partition). */
struct maintainer {
    pthread_t thread;
    struct store *store;
    int ahead;
    int retention_months;
};

static void partitions_maintain(struct maintainer *m)
{
    json_t *done = NULL;
    char why[512];
    enum store_status st =
        store_partitions_maintain(m->store, m->ahead, m->retention_months, &done, why, sizeof why);
    if (st != STORE_OK) {
        json_t *line =
            json_pack("{s:s, s:s, s:s, s:s}", "level", "warn", "msg",
                      "partition maintenance failed", "status", store_status_name(st), "why", why);
        char *text = line ? json_dumps(line, JSON_COMPACT) : NULL;
        fprintf(stderr, "%s\n", text ? text : "{\"level\":\"warn\"}");
        free(text);
        json_decref(line);
        return;
    }
    json_t *created = json_object_get(done, "created");
    json_t *dropped = json_object_get(done, "dropped");
    if (json_array_size(created) || json_array_size(dropped)) {
        json_t *line = json_pack("{s:s, s:s, s:O, s:O}", "level", "info", "msg", "partitions",
                                 "created", created, "dropped", dropped);
        char *text = line ? json_dumps(line, JSON_COMPACT) : NULL;
        if (text)
            fprintf(stderr, "%s\n", text);
        free(text);
        json_decref(line);
    }
    json_decref(done);
}

static void *maintainer_run(void *arg)
{
    struct maintainer *m = arg;
    while (!wait_or_stop(3600))
        partitions_maintain(m);
    return NULL;
}

int cmd_serve(int argc, char **argv)
{
    /* Block the stop signals first, before any thread starts (so only sigwait below sees them)
     * and before the start-up work (a stop during it ends the start cleanly, exit 0). */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    struct config cfg;
    if (config_load(&cfg) != 0)
        return 2;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc)
            cfg.listen = argv[++i];
        else if (strcmp(argv[i], "--static-dir") == 0 && i + 1 < argc)
            cfg.static_dir = argv[++i];
        else {
            fprintf(stderr, "usage: capledger serve [--listen ADDR:PORT] [--static-dir DIR]\n");
            return 2;
        }
    }
    if (sodium_init() < 0)
        return 1;
    http_malloc_setup();
    if (cfg.public_origin && strncmp(cfg.public_origin, "http://", 7) != 0 &&
        strncmp(cfg.public_origin, "https://", 8) != 0) {
        fprintf(stderr, "capledger: CAPLEDGER_PUBLIC_ORIGIN must be http://HOST[:PORT] or "
                        "https://HOST[:PORT]\n");
        return 2;
    }
    size_t room = rowcache_row_room((size_t)cfg.row_cache_slots, (size_t)cfg.row_cache_mb << 20);
    if (cfg.row_cache_slots > 0 && room < ROWCACHE_ROOM_MIN) {
        fprintf(stderr,
                "capledger: CAPLEDGER_ROW_CACHE_MB=%d leaves %zu bytes a row for "
                "CAPLEDGER_ROW_CACHE=%d rows (at least %d needed, or nothing would be cached): "
                "raise CAPLEDGER_ROW_CACHE_MB or lower CAPLEDGER_ROW_CACHE\n",
                cfg.row_cache_mb, room, cfg.row_cache_slots, ROWCACHE_ROOM_MIN);
        return 2;
    }
    char witnesses_why[256];
    if (cosign_check(cfg.witnesses, witnesses_why, sizeof witnesses_why) != 0) {
        fprintf(stderr, "capledger: %s\n", witnesses_why);
        return 2;
    }
    threadstack_set_min((size_t)cfg.thread_stack_kb << 10);
    if (cfg.conn_reserve > cfg.threads / 2)
        cfg.conn_reserve = cfg.threads / 2;
    signal(SIGPIPE, SIG_IGN);

    static unsigned char sk[crypto_sign_SECRETKEYBYTES];
    if (load_or_create_key(cfg.key_file, sk) != 0)
        return 1;
    struct store *store = config_open_store(&cfg, 1);
    if (!store)
        return 1;
    char log_why[512];
    /* The largest checkpoint this server signed or observed, kept beside its key, outside the
     * database (docs/auditors.md: what a rewound database cannot hide). */
    size_t state_len = strlen(cfg.key_file) + sizeof ".state";
    char *state_path = malloc(state_len);
    if (state_path)
        snprintf(state_path, state_len, "%s.state", cfg.key_file);
    snprintf(log_why, sizeof log_why, "out of memory");
    int state_rc =
        state_path ? store_log_state_open(store, state_path, log_why, sizeof log_why) : -1;
    free(state_path);
    if (state_rc != 0) {
        fprintf(stderr, "capledger: %s\n", log_why);
        store_close(store);
        return 1;
    }
    if (store_log_init(store, cfg.log_origin, sk, log_why, sizeof log_why) != STORE_OK) {
        fprintf(stderr, "capledger: %s\n", log_why);
        store_close(store);
        return 1;
    }
    if (bootstrap_admin(store) != 0) {
        store_close(store);
        return 1;
    }
    struct http_config hc = {
        .listen = cfg.listen,
        .static_dir = cfg.static_dir,
        .migrations_dir = cfg.migrations_dir,
        .openapi_path = cfg.openapi_path,
        .log_origin = cfg.log_origin,
        .server_sk = sk,
        .max_body_bytes = 1u << 20,
        .max_upload_bytes = (size_t)1 << 30,
        .threads = cfg.threads,
        .conn_reserve = cfg.conn_reserve,
        .max_conns_per_address = cfg.max_conns_per_address,
        .header_timeout_ms = cfg.header_timeout_ms,
        .body_min_bytes_per_s = cfg.body_min_bytes_per_s,
        .send_timeout_ms = cfg.send_timeout_ms,
        .send_min_bytes_per_s = cfg.send_min_bytes_per_s,
        .public_origin = cfg.public_origin,
        .cors_origins = cfg.cors_origins,
        .session_idle_s = cfg.session_idle_s,
        .signing_fresh_s = cfg.signing_fresh_s,
        .log_public = cfg.log_public,
        .token_cache_ms = cfg.token_cache_ms,
        .row_cache_slots = cfg.row_cache_slots,
        .row_cache_mb = cfg.row_cache_mb,
        .usage_exact_max = cfg.usage_exact_max,
    };
    /* Reports and read-only GETs may read from a hot standby; it is never migrated (it follows
     * the primary). */
    struct store *replica =
        cfg.read_database_url ? store_open(cfg.read_database_url, cfg.pool_size) : NULL;
    hc.read_store = replica;
    hc.read_wait_ms = cfg.read_wait_ms;
    /* Before listening, so a server that answers has this month's partitions and its retention
     * applied. */
    struct maintainer mt = {
        .store = store, .ahead = cfg.partitions_ahead, .retention_months = cfg.retention_months};
    partitions_maintain(&mt);
    mg_init_library(0);
    char why[256] = "";
    struct http_server *srv = http_start(&hc, store, why, sizeof why);
    if (!srv) {
        fprintf(stderr, "capledger: cannot serve on %s: %s\n", cfg.listen, why);
        store_close(replica);
        store_close(store);
        return 1;
    }
    fprintf(stderr,
            "{\"level\":\"info\",\"msg\":\"listening\",\"listen\":\"%s\",\"version\":\"%s\","
            "\"threads\":%d,\"worker_stack_bytes\":%zu}\n",
            cfg.listen, CAPLEDGER_VERSION, cfg.threads, http_worker_stack_bytes());
    stopping_init();
    int maintaining = pthread_create(&mt.thread, NULL, maintainer_run, &mt) == 0;
    struct sweeper sw = {.store = store, .interval_s = cfg.drift_sweep_s};
    int sweeping = sw.interval_s > 0 && pthread_create(&sw.thread, NULL, sweeper_run, &sw) == 0;
    struct deliver_config dc = {
        .store = store,
        .server_sk = sk,
        .timeout_s = cfg.webhook_timeout_s,
        .retry_base_s = cfg.webhook_retry_base_s,
        .deny_private = cfg.webhook_deny_private,
        .threads = cfg.webhook_threads,
        .user_agent = "capledger/" CAPLEDGER_VERSION " (webhooks)",
    };
    struct deliverer *deliverer = deliver_start(&dc);
    struct cosign_config cc = {.store = store,
                               .witnesses = cfg.witnesses,
                               .timeout_s = cfg.witness_timeout_s,
                               .retry_max_s = cfg.witness_retry_max_s};
    char cosign_why[256];
    struct cosigner *cosigner = cosign_start(&cc, cosign_why, sizeof cosign_why);
    if (!cosigner && cosign_why[0])
        fprintf(stderr, "{\"level\":\"error\",\"msg\":\"no witnesses\",\"why\":\"%s\"}\n",
                cosign_why);
    int sig = 0;
    sigwait(&stop, &sig);
    cosign_stop(cosigner);
    deliver_stop(deliverer);
    stopping_begin();
    if (maintaining)
        pthread_join(mt.thread, NULL);
    if (sweeping)
        pthread_join(sw.thread, NULL);
    fprintf(stderr, "{\"level\":\"info\",\"msg\":\"stopping\",\"signal\":%d}\n", sig);
    http_stop(srv); /* stop accepting, finish in-flight requests */
    store_close(replica);
    store_close(store);
    mg_exit_library();
    sodium_memzero(sk, sizeof sk);
    fprintf(stderr, "{\"level\":\"info\",\"msg\":\"stopped\"}\n");
    return 0;
}

int cmd_migrate(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "usage: capledger migrate\n");
        return 2;
    }
    if (sodium_init() < 0)
        return 1;
    struct config cfg;
    if (config_load(&cfg) != 0)
        return 2;
    struct store *s = config_open_store(&cfg, 1);
    if (!s)
        return 1;
    store_close(s);
    fprintf(stderr, "migrations applied\n");
    return 0;
}
