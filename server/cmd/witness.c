/* capledger witness — a C2SP tlog-witness an audit office runs on its own machine:
 *
 *   capledger witness key --name NAME --key FILE
 *       prints the witness's verifier key (give it to the log's operator and to auditors)
 *   capledger witness serve --name NAME --key FILE --log VKEY [--log VKEY…] --state FILE
 *                           [--listen ADDR]
 *       answers POST /add-checkpoint (c2sp.org/tlog-witness): cosigns a checkpoint of a log
 *       it knows (--log: the log's note verifier key) only after a consistency proof from the
 *       size it last cosigned; a fork or a rollback is refused (409), a bad proof too (422).
 *
 * The key file is `capledger keygen`'s (the Ed25519 seed in hex). The state file holds, per
 * log origin, the size and root last cosigned; it is rewritten (write, fsync, rename) before a
 * cosignature is answered, under one lock, so two requests cannot roll it back.
 *
 * Sized like the main server (http/conns.h guards both): WITNESS_THREADS workers, a request's
 * headers due within WITNESS_HEADER_TIMEOUT_MS, at most WITNESS_PER_ADDRESS connections per
 * client address, a reserve of free workers kept by shedding clients slow to send, and a body
 * that must keep coming — so slow clients cannot stall the cosignatures a log waits for. */
#include <civetweb.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/files.h"
#include "core/ledger/codec.h"
#include "core/ledger/witness.h"
#include "http/conns.h"
#include "http/http.h"

#define WITNESS_MAX_LOGS 16
#define WITNESS_MAX_BODY (64u << 10)
#define WITNESS_THREADS 32
#define WITNESS_RESERVE 8
#define WITNESS_PER_ADDRESS 8
#define WITNESS_HEADER_TIMEOUT_MS 5000
#define WITNESS_BODY_MIN_RATE 1024
#define WITNESS_SEND_TIMEOUT_MS 10000

struct witness {
    struct conns *conns; /* set once the port is known */
    struct witness_key key;
    uint8_t sk[crypto_sign_SECRETKEYBYTES];
    struct note_verifier logs[WITNESS_MAX_LOGS];
    struct witness_state states[WITNESS_MAX_LOGS];
    size_t nlogs;
    const char *state_path;
    pthread_mutex_t lock;
};

static int usage(void)
{
    fprintf(stderr, "usage: capledger witness key --name NAME --key FILE\n"
                    "       capledger witness serve --name NAME --key FILE --log VKEY "
                    "[--log VKEY…] --state FILE [--listen ADDR]\n");
    return 2;
}

/* Writes every log's state: "<origin> <size> <base64 root>\n" per line, then renames. */
static int save_state(struct witness *w)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", w->state_path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    for (size_t i = 0; i < w->nlogs; i++) {
        char root[CODEC_B64_LEN(MERKLE_HASH_BYTES) + 1];
        codec_b64_encode(w->states[i].root, MERKLE_HASH_BYTES, root, sizeof root);
        fprintf(f, "%s %" PRIu64 " %s\n", w->logs[i].name, w->states[i].size, root);
    }
    int rc = fflush(f) == 0 && fsync(fileno(f)) == 0 ? 0 : -1;
    if (fclose(f) != 0)
        rc = -1;
    return rc == 0 ? rename(tmp, w->state_path) : -1;
}

static int load_state(struct witness *w)
{
    for (size_t i = 0; i < w->nlogs; i++) {
        w->states[i].size = 0;
        merkle_root(NULL, 0, w->states[i].root);
    }
    FILE *f = fopen(w->state_path, "r");
    if (!f)
        return errno == ENOENT ? 0 : -1;
    char origin[NOTE_NAME_MAX + 1], root[128];
    uint64_t size;
    int rc = 0;
    while (fscanf(f, "%255s %" SCNu64 " %127s", origin, &size, root) == 3) {
        for (size_t i = 0; i < w->nlogs; i++) {
            if (strcmp(origin, w->logs[i].name) != 0)
                continue;
            uint8_t r[MERKLE_HASH_BYTES + 1];
            if (codec_b64_decode(root, strlen(root), r, sizeof r) != MERKLE_HASH_BYTES)
                rc = -1;
            w->states[i].size = size;
            memcpy(w->states[i].root, r, MERKLE_HASH_BYTES);
        }
    }
    fclose(f);
    return rc;
}

static void reply(struct mg_connection *conn, int status, const char *type, const char *body)
{
    mg_printf(conn,
              "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
              "Cache-Control: no-store\r\n\r\n%s",
              status, mg_get_response_code_text(conn, status), type, strlen(body), body);
}

static struct conns *guard_of(const struct mg_connection *conn)
{
    struct witness *w = mg_get_user_data(mg_get_context(conn));
    return w ? __atomic_load_n(&w->conns, __ATOMIC_ACQUIRE) : NULL;
}

static int init_connection(const struct mg_connection *conn, void **conn_data)
{
    *conn_data = NULL;
    conns_opened(guard_of(conn));
    return 0;
}

static void connection_close(const struct mg_connection *conn)
{
    conns_closing(guard_of(conn));
}

static int add_checkpoint(struct mg_connection *conn, void *data);

/* Every request, known path or not, is counted as handled by the guard. */
static int handle(struct mg_connection *conn, void *data)
{
    const struct mg_request_info *ri = mg_get_request_info(conn);
    struct conns *g = guard_of(conn);
    conns_request_begins(g, ri->remote_addr, ri->remote_port);
    int status;
    if (strcmp(ri->local_uri ? ri->local_uri : "", "/add-checkpoint") == 0) {
        status = add_checkpoint(conn, data);
    } else {
        reply(conn, 404, "text/plain", "not found\n");
        status = 404;
    }
    conns_request_ends(g, ri->remote_addr, ri->remote_port);
    return status;
}

static int add_checkpoint(struct mg_connection *conn, void *data)
{
    struct witness *w = data;
    const struct mg_request_info *ri = mg_get_request_info(conn);
    struct conns *g = guard_of(conn);
    if (strcmp(ri->request_method, "POST") != 0) {
        reply(conn, 405, "text/plain", "POST only\n");
        return 405;
    }
    char *body = malloc(WITNESS_MAX_BODY + 1);
    size_t len = 0;
    int n;
    conns_body_reading(g, ri->remote_addr, ri->remote_port, 1);
    while (body && len < WITNESS_MAX_BODY &&
           (n = mg_read(conn, body + len, WITNESS_MAX_BODY - len)) > 0)
        len += (size_t)n;
    conns_body_reading(g, ri->remote_addr, ri->remote_port, 0);
    if (!body || len >= WITNESS_MAX_BODY) {
        free(body);
        reply(conn, 413, "text/plain", "request too large\n");
        return 413;
    }
    body[len] = '\0';
    /* The log the checkpoint names: its origin is the first line after the blank line. */
    const char *cp = strstr(body, "\n\n");
    size_t log = w->nlogs;
    for (size_t i = 0; cp && i < w->nlogs; i++) {
        size_t nl = strlen(w->logs[i].name);
        if (strncmp(cp + 2, w->logs[i].name, nl) == 0 && cp[2 + nl] == '\n')
            log = i;
    }
    if (log == w->nlogs) {
        free(body);
        reply(conn, cp ? 404 : 400, "text/plain", cp ? "unknown log\n" : "malformed request\n");
        return cp ? 404 : 400;
    }
    pthread_mutex_lock(&w->lock);
    struct witness_verdict v;
    witness_check(body, len, &w->logs[log], &w->states[log], &v);
    char *line = NULL;
    int status = v.status;
    if (status == 200) {
        struct witness_state before = w->states[log];
        w->states[log].size = v.cp.size;
        memcpy(w->states[log].root, v.cp.root, MERKLE_HASH_BYTES);
        if (save_state(w) != 0) {
            w->states[log] = before;
            status = 500;
        } else {
            line = witness_cosign(&w->key, w->sk, v.checkpoint, v.body_len, (uint64_t)time(NULL));
            status = line ? 200 : 500;
        }
    }
    uint64_t known = w->states[log].size;
    pthread_mutex_unlock(&w->lock);
    if (status == 409 || status == 422) {
        /* The evidence, written before the answer: the refused checkpoint's signed note as it was
         * sent (public data). */
        json_t *ev = json_pack("{s:s, s:s, s:s, s:i, s:s, s:I, s:s%}", "level", "warn", "msg",
                               "refused a checkpoint", "origin", w->logs[log].name, "status",
                               status, "why", v.why, "cosigned_size", (json_int_t)known,
                               "checkpoint", cp + 2, strlen(cp + 2));
        char *text = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
        if (text)
            fprintf(stderr, "%s\n", text);
        else /* not UTF-8: the note cannot be a JSON string */
            fprintf(stderr,
                    "{\"level\":\"warn\",\"msg\":\"refused a checkpoint\",\"status\":%d,"
                    "\"cosigned_size\":%" PRIu64 ",\"checkpoint\":null}\n",
                    status, known);
        free(text);
        json_decref(ev);
    }
    if (status == 200) {
        reply(conn, 200, "text/plain; charset=utf-8", line);
    } else if (status == 409) {
        char size[32];
        snprintf(size, sizeof size, "%" PRIu64 "\n", known);
        reply(conn, 409, "text/x.tlog.size", size);
    } else {
        char text[300];
        snprintf(text, sizeof text, "%s\n", status == 500 ? "cannot record the state" : v.why);
        reply(conn, status, "text/plain", text);
    }
    free(line);
    free(body);
    return status;
}

/* --name and --key, shared by both subcommands. */
static int load_key(const char *name, const char *key_path, struct witness *w)
{
    if (!name || !key_path)
        return usage();
    if (files_key_read(key_path, w->sk) != 0)
        return 1;
    if (witness_key_init(&w->key, name, w->sk + crypto_sign_SEEDBYTES) != 0) {
        fprintf(stderr, "capledger witness: --name '%s' is not a valid key name\n", name);
        return 2;
    }
    return 0;
}

int cmd_witness(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    const char *name = NULL, *key_path = NULL, *state = NULL, *listen = "127.0.0.1:9100";
    static struct witness w;
    memset(&w, 0, sizeof w);
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
            name = argv[++i];
        else if (strcmp(argv[i], "--key") == 0 && i + 1 < argc)
            key_path = argv[++i];
        else if (strcmp(argv[i], "--state") == 0 && i + 1 < argc)
            state = argv[++i];
        else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc)
            listen = argv[++i];
        else if (strcmp(argv[i], "--log") == 0 && i + 1 < argc) {
            if (w.nlogs == WITNESS_MAX_LOGS ||
                note_verifier_parse(argv[++i], &w.logs[w.nlogs]) != NOTE_OK) {
                fprintf(stderr, "capledger witness: --log needs a log's note verifier key "
                                "(GET /api/v1/log/key)\n");
                return 2;
            }
            w.nlogs++;
        } else
            return usage();
    }
    if (sodium_init() < 0)
        return 1;
    int rc = load_key(name, key_path, &w);
    if (rc != 0)
        return rc;
    if (strcmp(argv[1], "key") == 0) {
        char *text = witness_key_text(&w.key);
        sodium_memzero(w.sk, sizeof w.sk);
        if (!text)
            return 1;
        printf("%s\n", text);
        free(text);
        return 0;
    }
    if (strcmp(argv[1], "serve") != 0 || !state || w.nlogs == 0) {
        sodium_memzero(w.sk, sizeof w.sk);
        return usage();
    }
    w.state_path = state;
    if (load_state(&w) != 0) {
        fprintf(stderr, "capledger witness: cannot read the state file %s\n", state);
        sodium_memzero(w.sk, sizeof w.sk);
        return 1;
    }
    pthread_mutex_init(&w.lock, NULL);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    char threads[16];
    snprintf(threads, sizeof threads, "%d", WITNESS_THREADS);
    const char *options[] = {"listening_ports",
                             listen,
                             "num_threads",
                             threads,
                             "request_timeout_ms",
                             "10000",
                             "enable_keep_alive",
                             "yes",
                             "keep_alive_timeout_ms",
                             "5000",
                             "max_request_size",
                             "16384",
                             NULL};
    char why[256] = "";
    struct mg_callbacks callbacks;
    memset(&callbacks, 0, sizeof callbacks);
    callbacks.init_connection = init_connection;
    callbacks.connection_close = connection_close;
    struct mg_init_data init = {
        .callbacks = &callbacks, .user_data = &w, .configuration_options = options};
    struct mg_error_data err = {.text = why, .text_buffer_size = sizeof why};
    struct mg_context *ctx = mg_start2(&init, &err);
    if (!ctx) {
        fprintf(stderr, "capledger witness: cannot listen on %s: %s\n", listen, why);
        sodium_memzero(w.sk, sizeof w.sk);
        return 1;
    }
    mg_set_request_handler(ctx, "/", handle, &w);
    struct mg_server_port port;
    struct conns_config guard = {
        .threads = WITNESS_THREADS,
        .reserve = WITNESS_RESERVE,
        .max_per_address = WITNESS_PER_ADDRESS,
        .header_timeout_ms = WITNESS_HEADER_TIMEOUT_MS,
        .body_min_bytes_per_s = WITNESS_BODY_MIN_RATE,
        .send_timeout_ms = WITNESS_SEND_TIMEOUT_MS,
        .send_min_bytes_per_s = WITNESS_BODY_MIN_RATE,
    };
    struct conns *conns = NULL;
    if (mg_get_server_ports(ctx, 1, &port) == 1) {
        guard.listen_port = port.port;
        conns = conns_start(&guard);
    }
    if (!conns) {
        fprintf(stderr, "capledger witness: cannot start the connection guard\n");
        mg_stop(ctx);
        sodium_memzero(w.sk, sizeof w.sk);
        return 1;
    }
    __atomic_store_n(&w.conns, conns, __ATOMIC_RELEASE);
    char *text = witness_key_text(&w.key);
    fprintf(stderr,
            "{\"level\":\"info\",\"msg\":\"witness listening\",\"listen\":\"%s\",\"key\":\"%s\","
            "\"logs\":%zu}\n",
            listen, text ? text : "", w.nlogs);
    free(text);
    int sig = 0;
    sigwait(&stop, &sig);
    http_stop_civetweb(ctx);
    conns_stop(conns);
    pthread_mutex_destroy(&w.lock);
    sodium_memzero(w.sk, sizeof w.sk);
    return 0;
}
