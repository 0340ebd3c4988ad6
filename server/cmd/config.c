/* Configuration: one table of every environment variable (name, type, range, default, doc)
 * in the style of PgBouncer's; `capledger config --help` prints it. */
#include "cmd/config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"

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
    const char *dir = config_env("CAPLEDGER_VAR_DIR") ? config_env("CAPLEDGER_VAR_DIR") : "var";
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
        const char *now = getenv(s); /* any CAPLEDGER_* the file names, known or not */
        if ((now && *now) || shell_word(eq + 1, value, sizeof value) != 0 || !value[0])
            continue; /* the environment wins over the file */
        if (setenv(s, value, 1) == 0 && strcmp(s, "CAPLEDGER_DATABASE_URL") == 0)
            database_url_from_file = 1;
    }
    fclose(f);
}

/* ---- the table: every environment variable capledger reads ---- */

enum config_type {
    CONFIG_TEXT,     /* any non-empty text */
    CONFIG_SECRET,   /* text never printed (config shows only whether it is set) */
    CONFIG_CONNINFO, /* a libpq conninfo or URL: printed with its password masked */
    CONFIG_INT,      /* a decimal integer within [min, max] */
    CONFIG_REAL,     /* a decimal number within [min, max] */
    CONFIG_FLAG,     /* 0 or 1 */
};

struct config_var {
    const char *name;
    enum config_type type;
    double min, max;      /* CONFIG_INT, CONFIG_REAL */
    const char *fallback; /* the default as text; NULL: unset */
    size_t offset;        /* where config_load puts it in struct config; NO_FIELD: read by a
                             command itself through config_env */
    const char *doc;
};

#define NO_FIELD ((size_t)-1)
#define FIELD(member) offsetof(struct config, member)

static const struct config_var VARS[] = {
    {"CAPLEDGER_DATABASE_URL", CONFIG_CONNINFO, 0, 0, "dbname=capledger", FIELD(database_url),
     "libpq conninfo or URL of the database (else what $CAPLEDGER_VAR_DIR/capledger.env says)"},
    {"CAPLEDGER_READ_DATABASE_URL", CONFIG_CONNINFO, 0, 0, NULL, FIELD(read_database_url),
     "optional hot standby: reports and read-only GETs read from it when it has replayed the "
     "caller's writes (else the primary)"},
    {"CAPLEDGER_READ_WAIT_MS", CONFIG_INT, 0, 5000, "100", FIELD(read_wait_ms),
     "serve: how long a read waits for the standby to replay the caller's writes, ms (then it "
     "reads the primary)"},
    {"CAPLEDGER_VAR_DIR", CONFIG_TEXT, 0, 0, "var", NO_FIELD,
     "where scripts/run keeps its cluster, key and capledger.env (read by every command)"},
    {"CAPLEDGER_LISTEN", CONFIG_TEXT, 0, 0, "127.0.0.1:8080", FIELD(listen),
     "serve: address and port (--listen)"},
    {"CAPLEDGER_STATIC_DIR", CONFIG_TEXT, 0, 0, "static", FIELD(static_dir),
     "serve: the UI files (--static-dir)"},
    {"CAPLEDGER_MIGRATIONS_DIR", CONFIG_TEXT, 0, 0, "db/migrations", FIELD(migrations_dir),
     "the migration files"},
    {"CAPLEDGER_OPENAPI", CONFIG_TEXT, 0, 0, "api/openapi.yaml", FIELD(openapi_path),
     "serve: the file served at /api/v1/openapi.yaml"},
    {"CAPLEDGER_KEY_FILE", CONFIG_TEXT, 0, 0, "var/server.key", FIELD(key_file),
     "serve: the log's Ed25519 key (created with mode 0600 on first start)"},
    {"CAPLEDGER_LOG_ORIGIN", CONFIG_TEXT, 0, 0, "localhost/capledger", FIELD(log_origin),
     "serve: the log's origin line (kept from the first start)"},
    {"CAPLEDGER_ADMIN_PASSWORD", CONFIG_SECRET, 0, 0, NULL, NO_FIELD,
     "serve, first start only: creates the user admin when there is no user"},
    {"CAPLEDGER_DB_POOL", CONFIG_INT, 1, 256, "16", FIELD(pool_size),
     "maximum PostgreSQL connections per process"},
    {"CAPLEDGER_THREADS", CONFIG_INT, 8, 1024, "256", FIELD(threads),
     "serve: worker threads, one per open connection"},
    {"CAPLEDGER_THREAD_STACK_KB", CONFIG_INT, 256, 65536, "1024", FIELD(thread_stack_kb),
     "serve: stack of every thread, Civetweb's workers included, KiB"},
    {"CAPLEDGER_HEADER_TIMEOUT_MS", CONFIG_INT, 500, 600000, "10000", FIELD(header_timeout_ms),
     "serve: a request's line and headers must arrive within this, ms (else 408)"},
    {"CAPLEDGER_BODY_MIN_RATE", CONFIG_INT, 0, 1073741824, "4096", FIELD(body_min_bytes_per_s),
     "serve: bytes/s a body must average after its first 10 s (0: no floor)"},
    {"CAPLEDGER_SEND_TIMEOUT_MS", CONFIG_INT, 500, 600000, "10000", FIELD(send_timeout_ms),
     "serve: a reply whose client reads none of it for this long, ms, is ended"},
    {"CAPLEDGER_SEND_MIN_RATE", CONFIG_INT, 0, 1073741824, "4096", FIELD(send_min_bytes_per_s),
     "serve: bytes/s a client must read a pending reply at, averaged after "
     "CAPLEDGER_SEND_TIMEOUT_MS (0: no floor)"},
    {"CAPLEDGER_MAX_CONNS_PER_ADDRESS", CONFIG_INT, 0, 1024, "64", FIELD(max_conns_per_address),
     "serve: open connections per client address (0: no bound, e.g. behind a proxy)"},
    {"CAPLEDGER_CONN_RESERVE", CONFIG_INT, 1, 512, "32", FIELD(conn_reserve),
     "serve: workers kept free by closing clients slow to send headers (at most threads/2)"},
    {"CAPLEDGER_PUBLIC_ORIGIN", CONFIG_TEXT, 0, 0, NULL, FIELD(public_origin),
     "serve: https://host[:port] as browsers reach it behind a TLS proxy (same-origin check; "
     "https: the session cookie is Secure)"},
    {"CAPLEDGER_CORS_ORIGINS", CONFIG_TEXT, 0, 0, NULL, FIELD(cors_origins),
     "serve: space-separated origins allowed cross-origin (none when unset)"},
    {"CAPLEDGER_SESSION_IDLE_S", CONFIG_INT, 1, 86400, "1800", FIELD(session_idle_s),
     "serve: browser session idle expiry, seconds"},
    {"CAPLEDGER_LOG_PUBLIC", CONFIG_FLAG, 0, 1, "1", FIELD(log_public),
     "serve: the log's checkpoint, key, hash tiles and proofs are readable without credentials, "
     "so monitors and witnesses can follow it (entries stay behind auth; 0: auditors, owners and "
     "admins only)"},
    {"CAPLEDGER_SIGNING_FRESH_LOGIN_S", CONFIG_INT, 0, 3600, "300", FIELD(signing_fresh_s),
     "serve: a browser session signed in this recently may enrol a signing key without its "
     "password again, seconds (0: always ask; API tokens always give it)"},
    {"CAPLEDGER_TOKEN_CACHE_MS", CONFIG_INT, 0, 1000, "1000", FIELD(token_cache_ms),
     "serve: a resolved API token is reused this long, ms; a revocation elsewhere takes at most "
     "this (0: never)"},
    {"CAPLEDGER_ROW_CACHE", CONFIG_INT, 0, 1048576, "4096", FIELD(row_cache_slots),
     "serve: rows read by id kept in memory (workloads), each forgotten when PostgreSQL notifies "
     "its change; a read uses them once every write the caller must see is applied (0: no "
     "cache)"},
    {"CAPLEDGER_ROW_CACHE_MB", CONFIG_INT, 1, 4096, "16", FIELD(row_cache_mb),
     "serve: the most row text the row cache holds, MiB"},
    {"CAPLEDGER_DRIFT_SWEEP_S", CONFIG_INT, 0, 86400, "60", FIELD(drift_sweep_s),
     "serve: seconds between background drift checks (0: none)"},
    {"CAPLEDGER_PARTITIONS_AHEAD", CONFIG_INT, 1, 120, "3", FIELD(partitions_ahead),
     "serve: months after the current one whose run and telemetry partitions exist (checked at "
     "start and hourly)"},
    {"CAPLEDGER_RETENTION_MONTHS", CONFIG_INT, 0, 1200, "0", FIELD(retention_months),
     "serve: drop run and telemetry months that ended this many whole months before the "
     "current one (0: keep everything)"},
    {"CAPLEDGER_USAGE_EXACT_MAX", CONFIG_INT, 0, 2000000000, "200000", FIELD(usage_exact_max),
     "serve: the usage report's queue-wait percentiles are exact up to this many waits selected, "
     "else from the histogram (within 1 %)"},
    {"CAPLEDGER_WEBHOOK_TIMEOUT_S", CONFIG_REAL, 0.1, 300, "10", FIELD(webhook_timeout_s),
     "serve: one webhook delivery attempt, connecting included, seconds"},
    {"CAPLEDGER_WEBHOOK_RETRY_BASE_S", CONFIG_REAL, 0.01, 3600, "15", FIELD(webhook_retry_base_s),
     "serve: the first wait after a failed delivery (it doubles), seconds"},
    {"CAPLEDGER_WEBHOOK_THREADS", CONFIG_INT, 2, 64, "4", FIELD(webhook_threads),
     "serve: webhook deliveries posted at once (one kept for log-integrity alerts; at most one "
     "per destination and per owner)"},
    {"CAPLEDGER_WEBHOOK_DENY_PRIVATE", CONFIG_FLAG, 0, 1, "0", FIELD(webhook_deny_private),
     "serve: 1 = webhooks may not reach loopback or private addresses either"},
    {"CAPLEDGER_WITNESSES", CONFIG_TEXT, 0, 0, NULL, FIELD(witnesses),
     "serve: witnesses to cosign each checkpoint, \"VKEY URL, VKEY URL\" (docs/auditors.md)"},
    {"CAPLEDGER_WITNESS_TIMEOUT_S", CONFIG_REAL, 0.1, 300, "5", FIELD(witness_timeout_s),
     "serve: one add-checkpoint request to a witness, seconds"},
    {"CAPLEDGER_WITNESS_RETRY_MAX_S", CONFIG_REAL, 0.1, 3600, "60", FIELD(witness_retry_max_s),
     "serve: the longest wait between attempts to reach a witness (it doubles), seconds"},
    {"CAPLEDGER_URL", CONFIG_TEXT, 0, 0, "http://127.0.0.1:8080", NO_FIELD,
     "import: the server to send to (else what capledger.env says)"},
    {"CAPLEDGER_TOKEN", CONFIG_SECRET, 0, 0, NULL, NO_FIELD,
     "import: the API token (or --token-file)"},
    {"CAPLEDGER_VERIFIER_KEY", CONFIG_TEXT, 0, 0, NULL, NO_FIELD,
     "verify: the log's verifier key (or --key)"},
};
#define VAR_COUNT (sizeof VARS / sizeof VARS[0])

static const struct config_var *config_var(const char *name)
{
    for (size_t i = 0; i < VAR_COUNT; i++)
        if (strcmp(VARS[i].name, name) == 0)
            return &VARS[i];
    return NULL;
}

char *config_env(const char *name)
{
    if (!config_var(name)) {
        fprintf(stderr, "capledger: internal error: %s is not in the configuration table\n", name);
        abort();
    }
    char *v = getenv(name);
    return v && *v ? v : NULL;
}

static const char *type_name(const struct config_var *v)
{
    static const char *const names[] = {"text", "secret", "conninfo", "integer", "number", "0|1"};
    return names[v->type];
}

/* The range as text ("1..256"), "" for text. */
static const char *range_text(const struct config_var *v, char *buf, size_t size)
{
    buf[0] = '\0';
    if (v->type == CONFIG_INT) /* whole numbers in full: 1048576, not 1.04858e+06 */
        snprintf(buf, size, "%.0f..%.0f", v->min, v->max);
    else if (v->type == CONFIG_REAL)
        snprintf(buf, size, "%g..%g", v->min, v->max);
    return buf;
}

/* Parses text as v's type into the field at dst. Returns 0, or -1 with why written. */
static int parse_value(const struct config_var *v, const char *text, void *dst, char *why,
                       size_t why_size)
{
    char range[64];
    char *end = NULL;
    errno = 0;
    int numeric = v->type == CONFIG_INT || v->type == CONFIG_REAL || v->type == CONFIG_FLAG;
    if (numeric && !(text[0] >= '0' && text[0] <= '9') && text[0] != '-' && text[0] != '.') {
        snprintf(why, why_size, "must be %s",
                 v->type == CONFIG_FLAG ? "0 or 1" : "a decimal number");
        return -1;
    }
    switch (v->type) {
    case CONFIG_TEXT:
    case CONFIG_SECRET:
    case CONFIG_CONNINFO:
        *(const char **)dst = text;
        return 0;
    case CONFIG_INT: {
        long n = strtol(text, &end, 10);
        if (errno || end == text || *end || (double)n < v->min || (double)n > v->max) {
            snprintf(why, why_size, "must be an integer in %s", range_text(v, range, sizeof range));
            return -1;
        }
        *(int *)dst = (int)n;
        return 0;
    }
    case CONFIG_REAL: {
        double d = strtod(text, &end);
        if (errno || end == text || *end || !(d >= v->min && d <= v->max)) {
            snprintf(why, why_size, "must be a number in %s", range_text(v, range, sizeof range));
            return -1;
        }
        *(double *)dst = d;
        return 0;
    }
    case CONFIG_FLAG:
        if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0) {
            snprintf(why, why_size, "must be 0 or 1");
            return -1;
        }
        *(int *)dst = text[0] == '1';
        return 0;
    }
    return -1;
}

/* A project file given by its default relative path (db/migrations, static, api/openapi.yaml)
 * when the command runs outside the project directory: found beside the binary instead, as
 * scripts/run builds it (<project>/build/capledger → <project>/<path>). Values set in the
 * environment are left as they are. */
static const char *beside_binary(const char *name, const char *path, char *buf, size_t size)
{
    if (config_env(name) || path[0] == '/' || access(path, F_OK) == 0)
        return path;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return path;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return path;
    *slash = '\0'; /* <project>/build */
    if (snprintf(buf, size, "%s/../%s", exe, path) >= (int)size || access(buf, F_OK) != 0)
        return path;
    return buf;
}

int config_load(struct config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    int bad = 0;
    for (size_t i = 0; i < VAR_COUNT; i++) {
        const struct config_var *v = &VARS[i];
        if (v->offset == NO_FIELD)
            continue;
        const char *set = config_env(v->name);
        const char *text = set ? set : v->fallback;
        if (!text)
            continue; /* an optional value left unset: NULL */
        char why[128];
        if (parse_value(v, text, (char *)cfg + v->offset, why, sizeof why) != 0) {
            /* Defaults always parse: only a value from the environment can be refused. */
            fprintf(stderr, "capledger: %s='%s' is refused: it %s (default %s)\n", v->name, text,
                    why, v->fallback ? v->fallback : "unset");
            bad = 1;
        }
    }
    static char migrations[4200], static_dir[4200], openapi[4200];
    if (cfg->migrations_dir)
        cfg->migrations_dir = beside_binary("CAPLEDGER_MIGRATIONS_DIR", cfg->migrations_dir,
                                            migrations, sizeof migrations);
    if (cfg->static_dir)
        cfg->static_dir =
            beside_binary("CAPLEDGER_STATIC_DIR", cfg->static_dir, static_dir, sizeof static_dir);
    if (cfg->openapi_path)
        cfg->openapi_path =
            beside_binary("CAPLEDGER_OPENAPI", cfg->openapi_path, openapi, sizeof openapi);
    cfg->database_url_source = database_url_from_file ? env_file_path
                               : config_env("CAPLEDGER_DATABASE_URL")
                                   ? "the environment"
                                   : "the default: CAPLEDGER_DATABASE_URL is not set";
    return bad ? -1 : 0;
}

/* A conninfo as printed: the password of "postgresql://user:PASSWORD@host" or of
 * "password=PASSWORD" replaced by "***". */
static void print_conninfo(const char *name, const char *text)
{
    char out[4096]; /* each mask grows the text by 3 bytes at most: room is left for both */
    if (strlen(text) > 3000) {
        printf("%s=(set, %zu bytes: too long to show)\n", name, strlen(text));
        return;
    }
    snprintf(out, sizeof out, "%s", text);
    char *scheme = strstr(out, "://");
    char *at = scheme ? strchr(scheme, '@') : NULL;
    char *colon = at ? memchr(scheme + 3, ':', (size_t)(at - scheme - 3)) : NULL;
    if (colon) {
        memmove(colon + 4, at, strlen(at) + 1);
        memcpy(colon + 1, "***", 3);
    }
    char *pw = strstr(out, "password=");
    if (pw) {
        char *value = pw + 9, *end = value + strcspn(value, " &");
        memmove(value + 3, end, strlen(end) + 1);
        memcpy(value, "***", 3);
    }
    printf("%s=%s\n", name, out);
}

static void config_help(FILE *out)
{
    fprintf(out, "capledger reads these environment variables (an empty value is unset). Commands\n"
                 "refuse to start when one is set to a value outside its type or range.\n\n");
    for (size_t i = 0; i < VAR_COUNT; i++) {
        const struct config_var *v = &VARS[i];
        char range[64];
        fprintf(out, "%-32s %-8s %-12s default %s\n    %s\n", v->name, type_name(v),
                range_text(v, range, sizeof range), v->fallback ? v->fallback : "unset", v->doc);
    }
}

int cmd_config(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        config_help(stdout);
        return 0;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: capledger config [--help]\n");
        return 2;
    }
    struct config cfg;
    int rc = config_load(&cfg) == 0 ? 0 : 2;
    for (size_t i = 0; i < VAR_COUNT; i++) {
        const struct config_var *v = &VARS[i];
        const char *set = config_env(v->name);
        if (set && v->type == CONFIG_CONNINFO)
            print_conninfo(v->name, set);
        else if (set)
            printf("%s=%s\n", v->name, v->type == CONFIG_SECRET ? "(secret, set)" : set);
        else if (v->fallback)
            printf("%s=%s  # default\n", v->name, v->fallback);
        else
            printf("# %s is unset\n", v->name);
    }
    return rc;
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
