/* capledger import KIND FILE — sends a tool's output file (sacct, nvidia-smi, vLLM, a price
 * sheet, …) to a running capledger over its HTTP API, so a cron job or a pipeline step needs only
 * the binary: no curl command line to get right, and the token never on a command line (ps shows
 * every process's arguments to every user), only in $CAPLEDGER_TOKEN or a file.
 *
 * The file is streamed in chunks: a regular file with the Content-Length from fstat, anything
 * else (standard input from a pipe, a FIFO) with chunked transfer encoding, so a month of sacct
 * output is never held in memory. The first chunk is read before the request starts because it
 * chooses the content type where a kind allows two (a JSON array or JSON Lines).
 *
 * Every request carries an Idempotency-Key (random unless given, and printed on stderr): after a
 * network failure the same command with --idempotency-key K gets the first reply again instead
 * of a second upload. Plain HTTP only (Civetweb's client without TLS): run it on the server's
 * host, or through a TLS tunnel or proxy. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <civetweb.h>
#include <jansson.h>
#include <sodium.h>

#include "cmd/cmd.h"
#include "cmd/config.h"
#include "cmd/files.h"
#include "cmd/import_client.h"
#include "cmd/import_live.h"
#include "cmd/termtext.h"
#include "core/duration.h"
#include "core/formats/formats.h"
#include "core/formats/telemetry.h"
#include "core/jsonlimit.h"

/* Bytes read from the file per write: large enough that framing and syscalls cost nothing next
 * to the server's parsing, small enough to keep the client's memory flat. */
#define IMPORT_CHUNK_BYTES ((size_t)64 << 10)
/* Replies are summaries (counts and the rejected lines, which the server caps); anything larger
 * is not a capledger reply. */
#define IMPORT_REPLY_MAX_BYTES ((size_t)64 << 20)
/* How long the server may take between the end of the upload and its reply: a million sacct
 * lines go through COPY in seconds, so ten minutes means the server is stuck. */
#define IMPORT_REPLY_TIMEOUT_MS (10 * 60 * 1000)
#define IMPORT_TOKEN_MAX 512
#define IMPORT_IDEM_KEY_MAX 255
#define IMPORT_DEFAULT_URL "http://127.0.0.1:8080"

/* How the body's content type is chosen. */
enum import_ctype {
    CT_CSV,           /* text/csv */
    CT_TEXT,          /* text/plain: the server detects the format from the content */
    CT_JSON_OR_LINES, /* '[' first → application/json, else application/x-ndjson */
    CT_JSON_OR_TEXT,  /* '{' or '[' first → application/json, else text/plain */
};

struct import_kind {
    const char *name;
    const char *path;       /* under the URL's base */
    const char *path_param; /* a --param that names a resource in the path (before path_tail) */
    const char *path_tail;
    enum import_ctype ctype;
    const char *help;
};

static const struct import_kind IMPORT_KINDS[] = {
    {"runs", "/api/v1/runs", NULL, NULL, CT_CSV,
     "sacct --parsable2 output → POST /api/v1/runs (text/csv); --param cluster=C, and team=T\n"
     "             (instead of Account), fields=A,B,… (no header line), tz=Z, atomic=true"},
    {"runs-json", "/api/v1/runs", NULL, NULL, CT_JSON_OR_LINES,
     "a JSON array of runs (application/json) or JSON Lines (application/x-ndjson),\n"
     "             told apart by the first character"},
    {"telemetry", "/api/v1/benchmarks/", "benchmark", "/telemetry", CT_TEXT,
     "nvidia-smi --format=csv, nvidia-smi dmon or DCGM exporter text →\n"
     "             POST /api/v1/benchmarks/ID/telemetry; needs --benchmark ID (format=, "
     "idle_below=)"},
    {"loadtest", "/api/v1/benchmarks/import", NULL, NULL, CT_JSON_OR_TEXT,
     "vLLM JSON/JSONL, GenAI-Perf CSV/JSON or an MLPerf summary → POST\n"
     "             /api/v1/benchmarks/import; --param format=vllm|genai-perf|mlperf "
     "workload_id=… offer_id=…"},
    {"offers", "/api/v1/offers", NULL, NULL, CT_CSV,
     "a CSV price sheet → POST /api/v1/offers (text/csv); with --format skypilot a\n"
     "             SkyPilot catalog vms.csv → POST /api/v1/offers/import (provider= from\n"
     "             --param provider=, else the file's directory or name: gcp/vms.csv, gcp_…)"},
};

/* `offers --format skypilot` (a catalog format): a price catalog, imported as offer versions. */
static const struct import_kind OFFERS_CATALOG = {
    "offers", "/api/v1/offers/import", NULL, NULL, CT_CSV, NULL};

/* The clouds of skypilot-catalog, to name the provider from a catalog's path. */
static const char *const CATALOG_CLOUDS[] = {
    "aws",  "azure",  "gcp",        "lambda",     "ibm",        "oci",
    "scp",  "runpod", "fluidstack", "cudo",       "paperspace", "do",
    "vast", "nebius", "hyperbolic", "kubernetes", NULL};

/* The cloud a catalog path names: its directory (…/gcp/vms.csv) or the start of its file name
 * up to '_' or '-' (gcp_vms_v7.csv). NULL when neither is a known cloud. */
static const char *catalog_provider(const char *path)
{
    const char *base = strrchr(path, '/');
    const char *name = base ? base + 1 : path;
    for (int i = 0; CATALOG_CLOUDS[i]; i++) {
        size_t n = strlen(CATALOG_CLOUDS[i]);
        if (strncmp(name, CATALOG_CLOUDS[i], n) == 0 && (name[n] == '_' || name[n] == '-'))
            return CATALOG_CLOUDS[i];
        if (base && (size_t)(base - path) >= n && strncmp(base - n, CATALOG_CLOUDS[i], n) == 0 &&
            (base - n == path || base[-(long)n - 1] == '/'))
            return CATALOG_CLOUDS[i];
    }
    return NULL;
}

static void import_help(FILE *out)
{
    fprintf(out,
            "usage: capledger import KIND FILE [--url URL] [--token-file F] [--param k=v]...\n"
            "                        [--format F]\n"
            "                        [--idempotency-key K]\n\n"
            "Sends FILE (- for standard input) to a running capledger and prints its JSON reply.\n"
            "Exit 0 on a 2xx reply, 1 on a 4xx/5xx reply or a connection failure (the problem and\n"
            "each faulty line or field on stderr), 2 on a usage error.\n\nKIND:\n");
    for (size_t i = 0; i < sizeof IMPORT_KINDS / sizeof IMPORT_KINDS[0]; i++)
        fprintf(out, "  %-10s %s\n", IMPORT_KINDS[i].name, IMPORT_KINDS[i].help);
    fprintf(out,
            "\noptions:\n"
            "  --url URL            the server (plain http:// only — no TLS: use it on the\n"
            "                       server's host or through a tunnel); default $CAPLEDGER_URL,\n"
            "                       else " IMPORT_DEFAULT_URL "\n"
            "  --token-file F       the API token is the first line of F; without it,\n"
            "                       $CAPLEDGER_TOKEN (never an argument: ps would show it)\n"
            "  --param k=v          a query parameter, URL-encoded (repeatable)\n"
            "  --format F           offers: skypilot or csv; other kinds: the same as\n"
            "                       --param format=F\n"
            "  --idempotency-key K  reuse the key printed by an attempt that failed on the\n"
            "                       network: the server then answers its first reply again\n"
            "                       instead of storing the upload twice\n"
            "  --benchmark ID       telemetry: the same as --param benchmark=ID\n\n"
            "Live DCGM telemetry (no FILE):\n"
            "  capledger import telemetry --from-url http://HOST:9400/metrics --benchmark ID\n"
            "                            [--every 15s] [--for 10m]\n"
            "  scrapes the exporter every --every (default 15s; at least 1s) for --for (default:\n"
            "  until SIGINT/SIGTERM) and uploads each scrape with ?format=dcgm&at=<its time>.\n"
            "  Durations: 500ms, 15s, 10m, 1h, 2d, or sums like 1h30m. A scrape is capped at\n"
            "  8 MiB and 10 s (or the interval if shorter); a failed scrape is retried within its "
            "interval, a failed\n"
            "  upload is kept and retried with backoff (same Idempotency-Key, so never stored\n"
            "  twice). Each reply is one JSON line on stdout; stderr names every scrape or\n"
            "  upload that failed and ends with a summary. Exit 0 when every scrape was stored,\n"
            "  1 otherwise (2 on a usage error).\n\n"
            "A regular file is sent with its size as Content-Length; standard input and other\n"
            "streams with chunked transfer encoding. Neither is held in memory whole.\n");
}

static int import_usage(const char *why)
{
    fprintf(stderr, "capledger import: %s\n", why);
    fprintf(stderr, "usage: capledger import KIND FILE [--url URL] [--token-file F] [--param "
                    "k=v]... [--idempotency-key K]\n"
                    "       capledger import telemetry --from-url URL --benchmark ID [--every "
                    "15s] [--for 10m]\n"
                    "       (capledger import --help for KINDs)\n");
    return 2;
}

/* Accepts "--name VALUE" and "--name=VALUE". Returns the value and advances *i, or NULL. */
static const char *option_value(int argc, char **argv, int *i, const char *name, int *missing)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

static int parse_args(int argc, char **argv, struct import_args *a)
{
    const char *positional[2];
    int n_positional = 0;
    /* + format=dcgm (--from-url), or format=skypilot and provider= (offers --format) */
    a->params = calloc((size_t)argc + 2, sizeof *a->params);
    if (!a->params)
        return import_usage("out of memory");
    for (int i = 1; i < argc; i++) {
        int missing = 0;
        const char *v;
        if ((v = option_value(argc, argv, &i, "--url", &missing)))
            a->url = v;
        else if ((v = option_value(argc, argv, &i, "--token-file", &missing)))
            a->token_file = v;
        else if ((v = option_value(argc, argv, &i, "--idempotency-key", &missing)))
            a->idem_key = v;
        else if ((v = option_value(argc, argv, &i, "--format", &missing)))
            a->format = v;
        else if ((v = option_value(argc, argv, &i, "--from-url", &missing)))
            a->from_url = v;
        else if ((v = option_value(argc, argv, &i, "--every", &missing))) {
            a->every_text = v;
            if (!duration_parse_ms(v, &a->every_ms) || a->every_ms < 1000) {
                fprintf(stderr,
                        "capledger import: --every '%s' is not a duration of at least 1s "
                        "(e.g. 15s, 1m, 1h30m)\n",
                        v);
                return 2;
            }
        } else if ((v = option_value(argc, argv, &i, "--for", &missing))) {
            a->for_text = v;
            if (!duration_parse_ms(v, &a->for_ms)) {
                fprintf(stderr,
                        "capledger import: --for '%s' is not a duration (e.g. 10m, 1h, 2d; at "
                        "most 366d)\n",
                        v);
                return 2;
            }
        } else if ((v = option_value(argc, argv, &i, "--benchmark", &missing))) {
            if (!v[0] || a->benchmark_param) {
                fprintf(stderr, "capledger import: --benchmark needs one ID\n");
                return 2;
            }
            size_t n = strlen(v) + sizeof "benchmark=";
            if (!(a->benchmark_param = malloc(n)))
                return import_usage("out of memory");
            snprintf(a->benchmark_param, n, "benchmark=%s", v);
            a->params[a->n_params++] = a->benchmark_param;
        } else if ((v = option_value(argc, argv, &i, "--param", &missing))) {
            const char *eq = strchr(v, '=');
            if (!eq || eq == v) {
                fprintf(stderr, "capledger import: --param '%s' is not k=v\n", v);
                return 2;
            }
            a->params[a->n_params++] = v;
        } else if (missing) {
            fprintf(stderr, "capledger import: %s needs a value\n", argv[i]);
            return 2;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "capledger import: unknown option '%s'\n", argv[i]);
            return import_usage("see the options below");
        } else if (n_positional == 2) {
            return import_usage("too many arguments (KIND FILE)");
        } else {
            positional[n_positional++] = argv[i];
        }
    }
    if (a->from_url && n_positional != 1)
        return import_usage("--from-url takes the place of FILE: capledger import telemetry "
                            "--from-url URL --benchmark ID");
    if (!a->from_url && (a->every_ms || a->for_ms))
        return import_usage("--every and --for go with --from-url");
    if (!a->from_url && n_positional != 2)
        return import_usage("KIND and FILE are required");
    for (size_t k = 0; k < sizeof IMPORT_KINDS / sizeof IMPORT_KINDS[0]; k++)
        if (strcmp(positional[0], IMPORT_KINDS[k].name) == 0)
            a->kind = &IMPORT_KINDS[k];
    if (!a->kind) {
        fprintf(stderr, "capledger import: unknown KIND '%s'\n", positional[0]);
        return import_usage("KIND is runs, runs-json, telemetry, loadtest or offers");
    }
    if (a->benchmark_param && strcmp(a->kind->name, "telemetry") != 0)
        return import_usage("--benchmark goes with KIND telemetry");
    size_t n_bench = 0;
    for (size_t k = 0; k < a->n_params; k++)
        n_bench += strncmp(a->params[k], "benchmark=", 10) == 0;
    if (a->benchmark_param && n_bench > 1)
        return import_usage("give the benchmark once: --benchmark ID or --param benchmark=ID");
    if (a->format && strcmp(a->kind->name, "offers") == 0 && !a->from_url) {
        if (format_find(OFFERS_FORMAT_NAMES, a->format) == OFFERS_SKYPILOT) {
            static char provider[64], format[32];
            int given = 0;
            for (size_t i = 0; i < a->n_params; i++)
                given |= strncmp(a->params[i], "provider=", 9) == 0;
            const char *cloud = given ? NULL : catalog_provider(positional[1]);
            if (!given && !cloud) {
                fprintf(stderr,
                        "capledger import: '%s' does not name its cloud (a directory "
                        "or file name such as gcp/vms.csv or lambda_vms.csv): add "
                        "--param provider=NAME\n",
                        positional[1]);
                return 2;
            }
            a->kind = &OFFERS_CATALOG;
            snprintf(format, sizeof format, "format=%s", a->format);
            a->params[a->n_params++] = format;
            if (cloud) {
                snprintf(provider, sizeof provider, "provider=%s", cloud);
                a->params[a->n_params++] = provider;
            }
        } else if (strcmp(a->format, "csv") != 0) {
            return import_usage("offers take --format csv (a price sheet, the default) or "
                                "--format skypilot (a SkyPilot vms.csv)");
        }
    } else if (a->format) {
        static char format[128];
        if (strlen(a->format) > 100)
            return import_usage("--format is too long");
        snprintf(format, sizeof format, "format=%s", a->format);
        a->params[a->n_params++] = format;
    }
    if (a->from_url) {
        if (strcmp(a->kind->name, "telemetry") != 0)
            return import_usage("--from-url scrapes a DCGM exporter: KIND telemetry only");
        if (a->idem_key)
            return import_usage("--idempotency-key is for one upload; --from-url draws a key per "
                                "scrape (and reuses it when it retries)");
        static char dcgm[32];
        snprintf(dcgm, sizeof dcgm, "format=%s", TELEMETRY_FORMAT_NAMES[TELEMETRY_DCGM - 1]);
        int has_format = 0;
        for (size_t k = 0; k < a->n_params; k++) {
            if (strncmp(a->params[k], "at=", 3) == 0)
                return import_usage("--from-url sets at= itself (each scrape's time)");
            if (strncmp(a->params[k], "format=", 7) == 0) {
                if (strcmp(a->params[k], dcgm) != 0)
                    return import_usage("--from-url reads DCGM exporter text: format=dcgm");
                has_format = 1;
            }
        }
        if (!has_format)
            a->params[a->n_params++] = dcgm;
        if (!a->every_ms) {
            a->every_ms = 15000;
            a->every_text = "15s";
        }
        a->file = a->from_url;
    } else {
        a->file = positional[1];
    }
    if (!a->url) {
        const char *env = config_env("CAPLEDGER_URL");
        a->url = env ? env : IMPORT_DEFAULT_URL;
    }
    if (a->idem_key) {
        size_t n = strlen(a->idem_key);
        int visible = n >= 1 && n <= IMPORT_IDEM_KEY_MAX;
        for (size_t k = 0; visible && k < n; k++)
            visible = a->idem_key[k] > 0x20 && a->idem_key[k] < 0x7f;
        if (!visible)
            return import_usage("--idempotency-key is 1-255 visible ASCII characters");
    }
    return 0;
}

/* The request target: base + the kind's path (with the path parameter) + the query. Returns a
 * malloc'd string, or NULL after printing why (exit status in *status). */
static char *import_build_target(const struct import_args *a, const struct import_url *u,
                                 int *status)
{
    const struct import_kind *k = a->kind;
    size_t need = u->base_len + strlen(k->path) + (k->path_tail ? strlen(k->path_tail) : 0) + 2;
    for (size_t i = 0; i < a->n_params; i++)
        need += 3 * strlen(a->params[i]) + 1;
    const char *path_value = NULL;
    if (k->path_param) {
        size_t name_len = strlen(k->path_param);
        for (size_t i = 0; i < a->n_params; i++)
            if (strncmp(a->params[i], k->path_param, name_len) == 0 &&
                a->params[i][name_len] == '=')
                path_value = a->params[i] + name_len + 1;
        if (!path_value || !path_value[0]) {
            fprintf(stderr,
                    "capledger import: %s needs --%s ID (or --param %s=ID; it goes in the "
                    "path)\n",
                    k->name, k->path_param, k->path_param);
            *status = import_usage("missing parameter");
            return NULL;
        }
    }
    char *t = malloc(need);
    if (!t) {
        fprintf(stderr, "capledger import: out of memory\n");
        *status = 1;
        return NULL;
    }
    size_t n = 0;
    memcpy(t + n, u->base, u->base_len);
    n += u->base_len;
    memcpy(t + n, k->path, strlen(k->path));
    n += strlen(k->path);
    if (path_value) {
        n += import_percent_encode(t + n, path_value, strlen(path_value));
        memcpy(t + n, k->path_tail, strlen(k->path_tail));
        n += strlen(k->path_tail);
    }
    char sep = '?';
    for (size_t i = 0; i < a->n_params; i++) {
        const char *p = a->params[i], *eq = strchr(p, '=');
        if (path_value && p + strlen(k->path_param) == eq &&
            strncmp(p, k->path_param, (size_t)(eq - p)) == 0)
            continue;
        t[n++] = sep;
        sep = '&';
        n += import_percent_encode(t + n, p, (size_t)(eq - p));
        t[n++] = '=';
        n += import_percent_encode(t + n, eq + 1, strlen(eq + 1));
    }
    t[n] = '\0';
    return t;
}

/* The API token: the first line of --token-file, else $CAPLEDGER_TOKEN (an explicit option
 * wins over the environment). Returns 0, else the exit status after printing why. The caller
 * sodium_memzero()s token. */
static int read_token(const char *token_file, char token[IMPORT_TOKEN_MAX + 1])
{
    size_t len = 0;
    char *text = NULL;
    const char *src;
    if (token_file) {
        text = files_read_all(token_file, 64 << 10, &len);
        if (!text)
            return 1;
        src = text;
    } else {
        src = config_env("CAPLEDGER_TOKEN");
        if (!src) {
            fprintf(stderr, "capledger import: no API token: set CAPLEDGER_TOKEN or pass "
                            "--token-file F (capledger token create USER mints one)\n");
            return 2;
        }
    }
    size_t n = strcspn(src, "\r\n");
    while (n > 0 && (src[n - 1] == ' ' || src[n - 1] == '\t'))
        n--;
    int ok = n > 0 && n <= IMPORT_TOKEN_MAX;
    for (size_t i = 0; ok && i < n; i++)
        ok = src[i] > 0x20 && src[i] < 0x7f; /* nothing that could end the header line */
    if (ok) {
        memcpy(token, src, n);
        token[n] = '\0';
    }
    if (text) {
        sodium_memzero(text, len);
        free(text);
    }
    if (!ok) {
        fprintf(stderr, "capledger import: the token (%s) is not 1-%d visible ASCII characters\n",
                token_file ? token_file : "CAPLEDGER_TOKEN", IMPORT_TOKEN_MAX);
        return 2;
    }
    return 0;
}

/* Reads until want bytes or end of input. Returns the count, or -1 (errno set). */
static ssize_t read_full(int fd, char *buf, size_t want)
{
    size_t got = 0;
    while (got < want) {
        ssize_t n = read(fd, buf + got, want - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

static const char *content_type(enum import_ctype rule, const char *start, size_t len)
{
    size_t i = 0;
    if (len >= 3 && memcmp(start, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < len && (start[i] == ' ' || start[i] == '\t' || start[i] == '\r' || start[i] == '\n'))
        i++;
    char first = i < len ? start[i] : '\0';
    switch (rule) {
    case CT_CSV:
        return "text/csv";
    case CT_TEXT:
        return "text/plain";
    case CT_JSON_OR_LINES:
        return first == '[' ? "application/json" : "application/x-ndjson";
    case CT_JSON_OR_TEXT:
        return first == '{' || first == '[' ? "application/json" : "text/plain";
    }
    return "application/octet-stream";
}

/* Frames data as one chunk of chunked transfer encoding in out (room for data + 16). */
static size_t frame_chunk(char *out, const char *data, size_t len)
{
    int head = snprintf(out, 16, "%zx\r\n", len);
    memmove(out + head, data, len);
    memcpy(out + head + len, "\r\n", 2);
    return (size_t)head + len + 2;
}

/* One request in flight: the input, the connection, and the wire buffer that carries the
 * header (with the token) and each chunk; everything is released by send_cleanup. */
struct sender {
    int fd;
    int chunked;
    long long length; /* Content-Length when not chunked */
    char *wire;
    size_t wire_cap;
    struct mg_connection *conn;
};

static void send_cleanup(struct sender *s)
{
    if (s->wire) {
        sodium_memzero(s->wire, s->wire_cap);
        free(s->wire);
    }
    if (s->conn)
        mg_close_connection(s->conn);
    if (s->fd >= 0)
        close(s->fd);
}

/* Sends the request: header and first chunk in one write (no Nagle wait between them), then
 * the rest of the file. Returns 0 when all was sent, 1 when the connection closed part-way (the
 * server may have answered — 401, 413 — before reading everything, so the caller still reads a
 * reply), or -1 after printing why. */
static int send_request(struct sender *s, const struct import_args *a, const char *target,
                        const struct import_url *u, const char *token, const char *idem_key)
{
    size_t header_cap = strlen(target) + strlen(u->authority) + IMPORT_TOKEN_MAX + 1024;
    s->wire_cap = header_cap + IMPORT_CHUNK_BYTES + 16;
    s->wire = malloc(s->wire_cap);
    if (!s->wire) {
        fprintf(stderr, "capledger import: out of memory\n");
        return -1;
    }
    /* The first chunk is read into the body slot right after the longest possible header. */
    char *chunk = s->wire + header_cap + 16;
    size_t want = IMPORT_CHUNK_BYTES;
    if (!s->chunked && (long long)want > s->length)
        want = (size_t)s->length;
    ssize_t got = read_full(s->fd, chunk, want);
    if (got < 0) {
        fprintf(stderr, "capledger import: %s: %s\n", a->file, strerror(errno));
        return -1;
    }
    const char *ctype = content_type(a->kind->ctype, chunk, (size_t)got);
    char length_line[64];
    if (s->chunked)
        snprintf(length_line, sizeof length_line, "Transfer-Encoding: chunked");
    else
        snprintf(length_line, sizeof length_line, "Content-Length: %lld", s->length);
    int h = snprintf(s->wire, header_cap,
                     "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: capledger/%s\r\n"
                     "Authorization: Bearer %s\r\nIdempotency-Key: %s\r\nContent-Type: %s\r\n"
                     "Accept: application/json\r\n%s\r\nConnection: close\r\n\r\n",
                     target, u->authority, CAPLEDGER_VERSION, token, idem_key, ctype, length_line);
    if (h < 0 || (size_t)h >= header_cap) {
        fprintf(stderr, "capledger import: request header too long\n");
        return -1;
    }
    size_t out = (size_t)h, header_len = (size_t)h;
    long long sent = 0;
    char ebuf[256] = "";
    s->conn = mg_connect_client(u->host, u->port, 0, ebuf, sizeof ebuf);
    if (!s->conn) {
        fprintf(stderr, "capledger import: cannot connect to %s:%d: %s\n", u->host, u->port,
                ebuf[0] ? ebuf : "connection failed");
        return -1;
    }
    for (;;) {
        if (s->chunked && got > 0)
            out += frame_chunk(s->wire + out, chunk, (size_t)got);
        else if (got > 0) {
            memmove(s->wire + out, chunk, (size_t)got);
            out += (size_t)got;
        }
        sent += got;
        int last = got == 0 || (!s->chunked && sent >= s->length);
        if (last && s->chunked) {
            memcpy(s->wire + out, "0\r\n\r\n", 5);
            out += 5;
        }
        int cut = import_write_all(s->conn, s->wire, out) != 0;
        /* The header (and the token in it) is on the wire or lost; no copy stays in memory. */
        if (header_len > 0)
            sodium_memzero(s->wire, header_len);
        header_len = 0;
        out = 0;
        if (cut)
            return 1;
        if (last)
            break;
        want = IMPORT_CHUNK_BYTES;
        if (!s->chunked && (long long)want > s->length - sent)
            want = (size_t)(s->length - sent);
        chunk = s->wire + 16;
        got = read_full(s->fd, chunk, want);
        if (got < 0) {
            fprintf(stderr, "capledger import: %s: %s\n", a->file, strerror(errno));
            return -1;
        }
        if (got == 0 && !s->chunked) {
            fprintf(stderr,
                    "capledger import: %s shrank while it was being sent (%lld of %lld "
                    "bytes)\n",
                    a->file, sent, s->length);
            return -1;
        }
    }
    return 0;
}

/* Prints the reply on stdout and what went wrong (or what was rejected) on stderr. Returns the
 * exit status. */
static int report_reply(const struct mg_response_info *ri, const char *body, size_t len)
{
    term_write(stdout, body, len, 1);
    if (len > 0 && body[len - 1] != '\n')
        putchar('\n');
    fflush(stdout);
    for (int i = 0; i < ri->num_headers; i++)
        if (strcasecmp(ri->http_headers[i].name, "Idempotency-Replayed") == 0)
            fprintf(stderr, "capledger import: the server replayed its first reply to this "
                            "Idempotency-Key (nothing stored twice)\n");
    json_t *doc = json_load_bounded(body, len, 0, NULL);
    int ok = ri->status_code >= 200 && ri->status_code < 300;
    if (ok) {
        const json_t *rejected = json_object_get(doc, "rejected");
        if (json_array_size(rejected) > 0) {
            const json_t *total = json_object_get(doc, "rejected_total");
            fprintf(stderr, "capledger import: %lld line(s) rejected:\n",
                    json_is_integer(total) ? (long long)json_integer_value(total)
                                           : (long long)json_array_size(rejected));
            import_print_faults(rejected);
        }
    } else {
        const char *title = json_string_value(json_object_get(doc, "title"));
        const char *detail = json_string_value(json_object_get(doc, "detail"));
        fprintf(stderr, "capledger import: HTTP %d ", ri->status_code);
        term_puts(stderr, title ? title : ri->status_text, "");
        if (detail) {
            fputs(": ", stderr);
            term_puts(stderr, detail, "");
        }
        fputc('\n', stderr);
        import_print_faults(json_object_get(doc, "errors"));
    }
    json_decref(doc);
    return ok ? 0 : 1;
}

/* Waits for the reply and reports it. Returns the exit status. */
static int receive_reply(struct mg_connection *conn, const struct import_url *u)
{
    char ebuf[256] = "";
    if (mg_get_response(conn, ebuf, sizeof ebuf, IMPORT_REPLY_TIMEOUT_MS) < 0) {
        fprintf(stderr, "capledger import: no reply from %s: %s\n", u->authority,
                ebuf[0] ? ebuf : "connection closed");
        return 1;
    }
    const struct mg_response_info *ri = mg_get_response_info(conn);
    if (!ri) {
        fprintf(stderr, "capledger import: no reply from %s\n", u->authority);
        return 1;
    }
    size_t cap = 1 << 16, len = 0;
    char *body = malloc(cap);
    int n = 0;
    while (body && (n = mg_read(conn, body + len, cap - len)) > 0) {
        len += (size_t)n;
        if (len == cap) {
            char *grown = cap < IMPORT_REPLY_MAX_BYTES ? realloc(body, cap * 2) : NULL;
            if (!grown) {
                free(body);
                body = NULL;
            } else {
                body = grown;
                cap *= 2;
            }
        }
    }
    if (!body) {
        fprintf(stderr, "capledger import: the reply from %s is larger than %zu bytes\n",
                u->authority, IMPORT_REPLY_MAX_BYTES);
        return 1;
    }
    int status = report_reply(ri, body, len);
    if (n < 0 && status == 0) {
        fprintf(stderr, "capledger import: the reply from %s was cut short\n", u->authority);
        status = 1;
    }
    free(body);
    return status;
}

int cmd_import(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            import_help(stdout);
            return 0;
        }
    struct import_args a = {0};
    struct import_url u;
    struct sender s = {.fd = -1};
    char token[IMPORT_TOKEN_MAX + 1] = "";
    char idem_key[IMPORT_IDEM_KEY_MAX + 1];
    char *target = NULL;
    int library_up = 0;
    int status = parse_args(argc, argv, &a);
    if (status != 0)
        goto out;
    if ((status = import_parse_url(a.url, "--url", &u)) != 0)
        goto out;
    struct import_url exporter;
    if (a.from_url && (status = import_parse_url(a.from_url, "--from-url", &exporter)) != 0)
        goto out; /* at once, before the token is read */
    if (!(target = import_build_target(&a, &u, &status)))
        goto out;
    status = 1;
    if (sodium_init() < 0) {
        fprintf(stderr, "capledger import: libsodium failed to initialise\n");
        goto out;
    }
    if ((status = read_token(a.token_file, token)) != 0)
        goto out;
    if (a.from_url) {
        signal(SIGPIPE, SIG_IGN);
        mg_init_library(0);
        library_up = 1;
        status = import_live(&a, &u, target, token);
        goto out;
    }
    status = 1;
    s.fd = strcmp(a.file, "-") == 0 ? dup(STDIN_FILENO) : open(a.file, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (s.fd < 0 || fstat(s.fd, &st) != 0) {
        fprintf(stderr, "capledger import: %s: %s\n", a.file, strerror(errno));
        goto out;
    }
    if (S_ISDIR(st.st_mode)) {
        fprintf(stderr, "capledger import: %s: is a directory\n", a.file);
        goto out;
    }
    /* A regular file (also standard input redirected from one) has a known length from here
     * on; a pipe or terminal does not, and goes chunked. */
    off_t at = S_ISREG(st.st_mode) ? lseek(s.fd, 0, SEEK_CUR) : -1;
    s.chunked = at < 0;
    s.length = s.chunked ? -1 : (long long)(st.st_size - at);
    if (a.idem_key) {
        snprintf(idem_key, sizeof idem_key, "%s", a.idem_key);
    } else {
        unsigned char random[16];
        randombytes_buf(random, sizeof random);
        sodium_bin2hex(idem_key, sizeof idem_key, random, sizeof random);
        fprintf(stderr,
                "capledger import: Idempotency-Key: %s (after a network failure, retry "
                "with --idempotency-key %s)\n",
                idem_key, idem_key);
    }
    /* A server that answers early and closes must not kill us with SIGPIPE before its answer
     * is read. */
    signal(SIGPIPE, SIG_IGN);
    mg_init_library(0);
    library_up = 1;
    int sent = send_request(&s, &a, target, &u, token, idem_key);
    sodium_memzero(token, sizeof token);
    if (sent < 0)
        goto out;
    status = receive_reply(s.conn, &u);
    if (sent == 1 && status != 0)
        fprintf(stderr,
                "capledger import: the connection to %s closed before all of %s was "
                "sent\n",
                u.authority, a.file);
out:
    sodium_memzero(token, sizeof token);
    send_cleanup(&s);
    if (library_up)
        mg_exit_library();
    free(target);
    free(a.params);
    free(a.benchmark_param);
    return status;
}
