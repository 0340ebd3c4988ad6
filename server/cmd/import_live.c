/* capledger import telemetry --from-url URL --every 15s --for 10m --benchmark ID: scrapes a
 * DCGM exporter (Prometheus text) on a schedule and uploads each scrape to
 * POST /api/v1/benchmarks/ID/telemetry?format=dcgm&at=TIME, for teams that cannot export files.
 *
 * The exporter prints no timestamps, so each upload names its scrape's time (?at=, taken when
 * the GET is sent): every sample has a time, and the server's (benchmark, GPU, timestamp)
 * uniqueness makes a retried upload harmless. Each scrape is uploaded on its own with its own
 * Idempotency-Key, reused on every retry of that upload.
 *
 * The scrape is a libcurl GET (a total timeout: a stalled or dripping exporter cannot hold the
 * schedule); the uploads use Civetweb's client as `capledger import FILE` does.
 *
 * Failures: a scrape that fails (connection, timeout, non-200) is retried within its interval
 * (one over 8 MiB is not), then reported on stderr and counted. An upload that fails on the network
 * or with 408/409/429/5xx stays queued (in order, memory bounded) and is retried with exponential
 * backoff; 401/403/404 stop the run (nothing later could succeed); any other 4xx is that
 * scrape's refusal, reported with the problem. SIGINT/SIGTERM stop scraping, the queue gets a
 * last few tries, and a summary is printed. Exit 0 when every scrape was stored, else 1. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <civetweb.h>
#include <curl/curl.h>
#include <jansson.h>
#include <sodium.h>

#include "cmd/import_client.h"
#include "cmd/import_live.h"
#include "cmd/termtext.h"
#include "core/formats/timefmt.h"
#include "core/jsonlimit.h"
#include "core/problems.h"

#define LIVE_SCRAPE_MAX_BYTES ((size_t)8 << 20)
#define LIVE_SCRAPE_TIMEOUT_MS 10000 /* at most; never more than the interval */
#define LIVE_UPLOAD_TIMEOUT_MS 30000
#define LIVE_SCRAPE_TRIES 3
#define LIVE_BACKOFF_FIRST_MS 500
#define LIVE_BACKOFF_MAX_MS 30000
#define LIVE_QUEUE_MAX_BYTES ((size_t)256 << 20)
#define LIVE_FINAL_TRIES 4 /* per queued upload once scraping has stopped */

static volatile sig_atomic_t live_stop;

static void live_on_signal(int sig)
{
    (void)sig;
    live_stop++;
}

static int64_t mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int64_t wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Sleeps until the monotonic time, in slices so that a signal ends it promptly. */
static void sleep_until(int64_t when_ms, int stop_level)
{
    for (;;) {
        int64_t left = when_ms - mono_ms();
        if (left <= 0 || live_stop > stop_level)
            return;
        if (left > 100)
            left = 100;
        struct timespec t = {.tv_sec = 0, .tv_nsec = (long)left * 1000000};
        nanosleep(&t, NULL);
    }
}

struct scrape {
    long seq;      /* 1-based scrape number */
    int64_t at_ms; /* wall-clock time the GET was sent */
    char *body;
    size_t len;
    char key[33];    /* Idempotency-Key of its upload */
    int tries;       /* uploads attempted */
    int final_tries; /* of those, after scraping stopped */
    int64_t next_ms; /* monotonic: not before */
    struct scrape *next;
};

struct live {
    const struct import_args *a;
    const struct import_url *server;
    struct import_url exporter;
    const char *target;
    const char *token;
    struct scrape *head, *tail;
    size_t queued_bytes, queued;
    long scrapes, scrape_failed, uploaded, refused, lost, retried, skipped;
    long long samples, inserted, duplicates;
    int fatal;
    int final;      /* scraping has stopped: the queue's last tries */
    int64_t end_ms; /* the end of --for (monotonic), INT64_MAX without it */
};

static void scrape_free(struct scrape *s)
{
    if (s) {
        free(s->body);
        free(s);
    }
}

/* Reads the reply body into a malloc'd buffer of at most cap bytes, by the monotonic deadline.
 * Returns it (NUL-terminated, length in *len) or NULL with why in err. */
static char *read_body(struct mg_connection *conn, size_t cap, int64_t deadline, size_t *len,
                       char *err, size_t err_len)
{
    size_t have = 0, room = 1 << 16;
    char *buf = malloc(room + 1);
    if (!buf) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    for (;;) {
        if (have == room) {
            if (room > cap) {
                snprintf(err, err_len, "the reply is larger than %zu MiB", cap >> 20);
                free(buf);
                return NULL;
            }
            char *grown = realloc(buf, room * 2 + 1);
            if (!grown) {
                snprintf(err, err_len, "out of memory");
                free(buf);
                return NULL;
            }
            buf = grown;
            room *= 2;
        }
        int n = mg_read(conn, buf + have, room - have);
        if (n < 0) {
            snprintf(err, err_len, "the reply was cut short");
            free(buf);
            return NULL;
        }
        if (n == 0)
            break;
        have += (size_t)n;
        if (have > cap) {
            snprintf(err, err_len, "the reply is larger than %zu MiB", cap >> 20);
            free(buf);
            return NULL;
        }
        if (mono_ms() > deadline) {
            snprintf(err, err_len, "the reply took longer than the timeout");
            free(buf);
            return NULL;
        }
    }
    buf[have] = '\0';
    *len = have;
    return buf;
}

struct scrape_buf {
    char *data;
    size_t len, cap;
    int too_big;
};

static size_t scrape_write(char *ptr, size_t size, size_t n, void *ctx)
{
    struct scrape_buf *b = ctx;
    size_t len = size * n;
    if (b->len + len > LIVE_SCRAPE_MAX_BYTES) {
        b->too_big = 1;
        return 0; /* aborts the transfer */
    }
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1 << 16;
        while (cap < b->len + len + 1)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown)
            return 0;
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, ptr, len);
    b->len += len;
    b->data[b->len] = '\0';
    return len;
}

/* One GET of the exporter, with libcurl: its total timeout bounds a stalled or dripping
 * exporter (Civetweb's client only times out each read). Returns the body (malloc'd) or NULL
 * with why in err; *permanent when trying again cannot help (too large). */
static char *scrape_once(struct live *l, int timeout_ms, size_t *len, int *permanent, char *err,
                         size_t err_len)
{
    struct scrape_buf b = {0};
    char cerr[CURL_ERROR_SIZE] = "";
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    char agent[64];
    snprintf(agent, sizeof agent, "capledger/%s", CAPLEDGER_VERSION);
    struct curl_slist *hdr = curl_slist_append(NULL, "Accept: text/plain");
    curl_easy_setopt(h, CURLOPT_URL, l->a->from_url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_PROXY, ""); /* as the uploads: straight to the exporter */
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(h, CURLOPT_USERAGENT, agent);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, scrape_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    CURLcode rc = curl_easy_perform(h);
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    curl_slist_free_all(hdr);
    if (b.too_big) {
        snprintf(err, err_len, "%s sent more than %zu MiB", l->exporter.authority,
                 LIVE_SCRAPE_MAX_BYTES >> 20);
        *permanent = 1;
    } else if (rc == CURLE_OPERATION_TIMEDOUT) {
        snprintf(err, err_len, "%s did not send the whole scrape within %d ms",
                 l->exporter.authority, timeout_ms);
    } else if (rc != CURLE_OK) {
        snprintf(err, err_len, "%s: %s", l->exporter.authority,
                 cerr[0] ? cerr : curl_easy_strerror(rc));
    } else if (code != 200) {
        snprintf(err, err_len, "%s answered HTTP %ld", l->exporter.authority, code);
    } else {
        *len = b.len;
        return b.data ? b.data : calloc(1, 1);
    }
    free(b.data);
    return NULL;
}

/* Queues a new scrape (taking body); the oldest are dropped, counted and reported when the
 * queue would pass its memory bound. */
static void enqueue(struct live *l, struct scrape *s)
{
    while (l->head && l->queued_bytes + s->len > LIVE_QUEUE_MAX_BYTES) {
        struct scrape *old = l->head;
        l->head = old->next;
        if (!l->head)
            l->tail = NULL;
        l->queued_bytes -= old->len;
        l->queued--;
        l->lost++;
        fprintf(stderr,
                "capledger import: scrape %ld dropped unsent: %zu MiB of scrapes wait for the "
                "server\n",
                old->seq, LIVE_QUEUE_MAX_BYTES >> 20);
        scrape_free(old);
    }
    if (l->tail)
        l->tail->next = s;
    else
        l->head = s;
    l->tail = s;
    l->queued_bytes += s->len;
    l->queued++;
}

/* Takes one scrape: up to LIVE_SCRAPE_TRIES GETs, all before the next tick or the end of
 * --for, whichever comes first. */
static void take_scrape(struct live *l, int64_t next_tick)
{
    if (next_tick > l->end_ms)
        next_tick = l->end_ms;
    long seq = ++l->scrapes;
    char err[1024] = "";
    for (int attempt = 1; attempt <= LIVE_SCRAPE_TRIES && !live_stop; attempt++) {
        int64_t left = next_tick - mono_ms();
        int timeout = (int)(left < LIVE_SCRAPE_TIMEOUT_MS ? left : LIVE_SCRAPE_TIMEOUT_MS);
        if (timeout < 200 && next_tick < l->end_ms)
            timeout = 200; /* an interval overrun by an upload: one short try still */
        if (timeout < 1)
            timeout = 1;
        int64_t at = wall_ms();
        size_t len = 0;
        int permanent = 0;
        char *body = scrape_once(l, timeout, &len, &permanent, err, sizeof err);
        if (body) {
            struct scrape *s = calloc(1, sizeof *s);
            if (!s) {
                free(body);
                snprintf(err, sizeof err, "out of memory");
                break;
            }
            s->seq = seq;
            s->at_ms = at;
            s->body = body;
            s->len = len;
            unsigned char random[16];
            randombytes_buf(random, sizeof random);
            sodium_bin2hex(s->key, sizeof s->key, random, sizeof random);
            s->next_ms = 0;
            enqueue(l, s);
            return;
        }
        int64_t pause = 250LL << (attempt - 1);
        if (!permanent && attempt < LIVE_SCRAPE_TRIES && mono_ms() + pause + 200 < next_tick) {
            fprintf(stderr, "capledger import: scrape %ld: %s; trying again\n", seq, err);
            sleep_until(mono_ms() + pause, 0);
        } else {
            break;
        }
    }
    l->scrape_failed++;
    fprintf(stderr, "capledger import: scrape %ld failed: %s (%ld of %ld scrapes failed)\n", seq,
            err[0] ? err : "stopped", l->scrape_failed, l->scrapes);
}

/* Whether a problem+json reply is of type PROBLEM_TYPE_BASE slug. */
static int problem_is(const json_t *doc, const char *slug)
{
    const char *type = json_string_value(json_object_get(doc, "type"));
    size_t n = strlen(PROBLEM_TYPE_BASE);
    return type && strncmp(type, PROBLEM_TYPE_BASE, n) == 0 && strcmp(type + n, slug) == 0;
}

enum upload_outcome { UP_STORED, UP_RETRY, UP_REFUSED, UP_FATAL };

/* Sends one queued scrape. */
static enum upload_outcome upload_one(struct live *l, struct scrape *s, char *err, size_t err_len)
{
    char at[TIMEFMT_UTC_LEN], enc[3 * TIMEFMT_UTC_LEN];
    timefmt_format_utc_ms(s->at_ms, at);
    enc[import_percent_encode(enc, at, strlen(at))] = '\0';
    size_t header_cap = strlen(l->target) + strlen(l->server->authority) + 2048;
    char *header = malloc(header_cap);
    if (!header) {
        snprintf(err, err_len, "out of memory");
        return UP_RETRY;
    }
    int h = snprintf(header, header_cap,
                     "POST %s%cat=%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: capledger/%s\r\n"
                     "Authorization: Bearer %s\r\nIdempotency-Key: %s\r\n"
                     "Content-Type: text/plain\r\nAccept: application/json\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     l->target, strchr(l->target, '?') ? '&' : '?', enc, l->server->authority,
                     CAPLEDGER_VERSION, l->token, s->key, s->len);
    enum upload_outcome out = UP_RETRY;
    char ebuf[256] = "";
    struct mg_connection *conn = NULL;
    char *body = NULL;
    if (h < 0 || (size_t)h >= header_cap) {
        snprintf(err, err_len, "request header too long");
        out = UP_FATAL;
        goto done;
    }
    conn = mg_connect_client(l->server->host, l->server->port, 0, ebuf, sizeof ebuf);
    if (!conn) {
        snprintf(err, err_len, "cannot connect to %s: %s", l->server->authority,
                 ebuf[0] ? ebuf : "connection failed");
        goto done;
    }
    /* A server that answers early (401, 413) may close before all is sent: read its reply. */
    int cut = import_write_all(conn, header, (size_t)h) != 0;
    sodium_memzero(header, header_cap);
    if (!cut)
        cut = import_write_all(conn, s->body, s->len) != 0;
    if (mg_get_response(conn, ebuf, sizeof ebuf, LIVE_UPLOAD_TIMEOUT_MS) < 0) {
        snprintf(err, err_len, "no reply from %s: %s", l->server->authority,
                 ebuf[0] ? ebuf : (cut ? "connection closed while sending" : "connection closed"));
        goto done;
    }
    const struct mg_response_info *ri = mg_get_response_info(conn);
    size_t len = 0;
    body = ri ? read_body(conn, (size_t)64 << 20, mono_ms() + LIVE_UPLOAD_TIMEOUT_MS, &len, err,
                          err_len)
              : NULL;
    if (!ri || !body) {
        if (!ri)
            snprintf(err, err_len, "no reply from %s", l->server->authority);
        goto done;
    }
    int code = ri->status_code;
    json_t *doc = json_load_bounded(body, len, 0, NULL);
    if (code == 201 || code == 200) {
        char *line = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
        term_puts(stdout, line ? line : body, "");
        putchar('\n');
        fflush(stdout);
        free(line);
        l->samples += json_integer_value(json_object_get(doc, "samples"));
        l->inserted += json_integer_value(json_object_get(doc, "inserted"));
        l->duplicates += json_integer_value(json_object_get(doc, "duplicates"));
        size_t wi;
        const json_t *w;
        json_array_foreach(json_object_get(doc, "warnings"), wi, w)
        {
            fprintf(stderr, "capledger import: scrape %ld: warning ", s->seq);
            term_puts(stderr, json_string_value(json_object_get(w, "code")), "");
            fputs(": ", stderr);
            term_puts(stderr, json_string_value(json_object_get(w, "message")), "");
            fputc('\n', stderr);
        }
        const json_t *rejected = json_object_get(doc, "rejected");
        if (json_array_size(rejected) > 0) {
            fprintf(stderr, "capledger import: scrape %ld: %lld line(s) rejected:\n", s->seq,
                    (long long)json_integer_value(json_object_get(doc, "rejected_total")));
            import_print_faults(rejected);
        }
        out = UP_STORED;
    } else if (code == 409 && problem_is(doc, "idempotency-reply-lost")) {
        /* an earlier attempt of this scrape was stored by an instance that stopped before it
         * replied: stored, its counts unknown (retrying would only get this answer again) */
        fprintf(stderr,
                "capledger import: scrape %ld (at=%s): stored as upload %s by an instance that "
                "stopped before replying; its counts are not known\n",
                s->seq, at, json_string_value(json_object_get(doc, "target_id")));
        out = UP_STORED;
    } else {
        const char *title = json_string_value(json_object_get(doc, "title"));
        const char *detail = json_string_value(json_object_get(doc, "detail"));
        char title_safe[256], detail_safe[1024];
        snprintf(err, err_len, "HTTP %d %s%s%s", code,
                 term_text(title_safe, sizeof title_safe, title), detail ? ": " : "",
                 term_text(detail_safe, sizeof detail_safe, detail));
        if (code == 408 || code == 409 || code == 429 || code >= 500) {
            out = UP_RETRY;
        } else {
            out = code == 401 || code == 403 || code == 404 ? UP_FATAL : UP_REFUSED;
            fprintf(stderr, "capledger import: scrape %ld (at=%s) refused: %s\n", s->seq, at, err);
            import_print_faults(json_object_get(doc, "errors"));
        }
    }
    json_decref(doc);
done:
    free(body);
    if (conn)
        mg_close_connection(conn);
    sodium_memzero(header, header_cap);
    free(header);
    return out;
}

/* Uploads queued scrapes in order while the server takes them; stops at the first that must
 * wait (its backoff) so that the server sees the scrapes in time order. */
static void drain_queue(struct live *l)
{
    while (l->head && !l->fatal && l->head->next_ms <= mono_ms()) {
        struct scrape *s = l->head;
        char err[1024] = "";
        s->tries++;
        s->final_tries += l->final;
        enum upload_outcome o = upload_one(l, s, err, sizeof err);
        if (o == UP_RETRY) {
            int64_t wait = (int64_t)LIVE_BACKOFF_FIRST_MS << (s->tries - 1 < 6 ? s->tries - 1 : 6);
            if (wait > (l->final ? 2000 : LIVE_BACKOFF_MAX_MS))
                wait = l->final ? 2000 : LIVE_BACKOFF_MAX_MS;
            s->next_ms = mono_ms() + wait;
            l->retried++;
            fprintf(stderr,
                    "capledger import: upload of scrape %ld failed (try %d): %s; %zu scrape(s) "
                    "kept, next try in %lld ms\n",
                    s->seq, s->tries, err, l->queued, (long long)wait);
            return;
        }
        l->head = s->next;
        if (!l->head)
            l->tail = NULL;
        l->queued_bytes -= s->len;
        l->queued--;
        if (o == UP_STORED)
            l->uploaded++;
        else
            l->refused++;
        if (o == UP_FATAL) {
            l->fatal = 1;
            fprintf(stderr, "capledger import: stopping: %s\n", err);
        }
        scrape_free(s);
    }
}

int import_live(const struct import_args *a, const struct import_url *server, const char *target,
                char *token)
{
    struct live l = {.a = a, .server = server, .target = target, .token = token};
    if (import_parse_url(a->from_url, "--from-url", &l.exporter) != 0) {
        sodium_memzero(token, strlen(token));
        return 2;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "capledger import: libcurl failed to initialise\n");
        sodium_memzero(token, strlen(token));
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = live_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int64_t start = mono_ms();
    int64_t end = a->for_ms ? start + a->for_ms : INT64_MAX;
    l.end_ms = end;
    fprintf(stderr,
            "capledger import: scraping %s every %s %s%s into %s (SIGINT/SIGTERM sends what is "
            "left and stops)\n",
            a->from_url, a->every_text, a->for_ms ? "for " : "until stopped",
            a->for_ms ? a->for_text : "", server->authority);
    for (int64_t k = 0; !live_stop && !l.fatal; k++) {
        int64_t tick = start + k * a->every_ms;
        if (tick >= end)
            break;
        while (!live_stop && !l.fatal && mono_ms() < tick) {
            drain_queue(&l);
            int64_t wake = tick;
            if (l.head && l.head->next_ms > mono_ms() && l.head->next_ms < wake)
                wake = l.head->next_ms;
            sleep_until(wake, 0);
        }
        if (live_stop || l.fatal)
            break;
        /* Uploads (a slow server, retries) ran past whole intervals: those scrapes are not taken
         * late in a burst; they are skipped, and said. */
        int64_t late = mono_ms() - tick;
        if (late >= a->every_ms) {
            int64_t missed = late / a->every_ms;
            if (tick + missed * a->every_ms >= end)
                missed = (end - tick + a->every_ms - 1) / a->every_ms;
            l.skipped += (long)missed;
            fprintf(stderr,
                    "capledger import: %lld scheduled scrape(s) skipped: the uploads took "
                    "%lld ms\n",
                    (long long)missed, (long long)late);
            k += missed - 1;
            continue;
        }
        take_scrape(&l, tick + a->every_ms);
        drain_queue(&l);
    }
    /* Scraping is over: a few last tries for what waits, while the server takes it (a second
     * signal gives up at once). */
    l.final = 1;
    while (l.head && !l.fatal && live_stop < 2 && l.head->final_tries < LIVE_FINAL_TRIES) {
        sleep_until(l.head->next_ms, 1);
        if (live_stop >= 2)
            break;
        drain_queue(&l);
    }
    for (struct scrape *s = l.head, *n; s; s = n) {
        n = s->next;
        l.lost++;
        char at[TIMEFMT_UTC_LEN];
        fprintf(stderr, "capledger import: scrape %ld (at=%s) was never stored\n", s->seq,
                timefmt_format_utc_ms(s->at_ms, at));
        scrape_free(s);
    }
    sodium_memzero(token, strlen(token));
    curl_global_cleanup();
    fprintf(stderr,
            "capledger import: %ld scrape(s): %ld stored (%lld samples: %lld inserted, %lld "
            "duplicates), %ld failed to scrape, %ld refused, %ld lost; %ld upload retr%s; %ld "
            "skipped%s\n",
            l.scrapes, l.uploaded, l.samples, l.inserted, l.duplicates, l.scrape_failed, l.refused,
            l.lost, l.retried, l.retried == 1 ? "y" : "ies", l.skipped,
            live_stop ? " (stopped by a signal)" : "");
    return l.scrapes > 0 && l.uploaded == l.scrapes && l.skipped == 0 ? 0 : 1;
}
