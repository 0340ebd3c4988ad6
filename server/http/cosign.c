#include "http/cosign.h"

#include <curl/curl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ledger/codec.h"
#include "core/ledger/witness.h"
#include "store/alerts.h"
#include "store/ledger.h"

#define MAX_WITNESSES 16
#define POLL_MS 200
#define RESPONSE_MAX (16u << 10)

struct target {
    struct witness_key key;
    char vkey[NOTE_NAME_MAX + 128];
    char url[1024];
    int attempts;
    double next_attempt; /* monotonic seconds */
};

struct cosigner {
    struct cosign_config cfg;
    struct target targets[MAX_WITNESSES];
    size_t n;
    pthread_t thread;
    volatile sig_atomic_t stop;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct buffer {
    char data[RESPONSE_MAX + 1];
    size_t len;
};

static size_t collect(char *ptr, size_t size, size_t n, void *userdata)
{
    struct buffer *b = userdata;
    size_t take = size * n;
    if (take > RESPONSE_MAX - b->len)
        return 0; /* too long: abort the transfer */
    memcpy(b->data + b->len, ptr, take);
    b->len += take;
    b->data[b->len] = '\0';
    return size * n;
}

static int progress(void *clientp, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    return ((struct cosigner *)clientp)->stop ? 1 : 0;
}

/* POSTs body to <url>/add-checkpoint; returns the HTTP status (0: no answer). */
static long post(struct cosigner *c, const struct target *t, const char *body, size_t len,
                 struct buffer *out)
{
    char url[1100];
    snprintf(url, sizeof url, "%s/add-checkpoint", t->url);
    out->len = 0;
    out->data[0] = '\0';
    long status = 0;
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: text/plain; charset=utf-8");
    if (!h || !hdr)
        goto done;
    long timeout_ms = (long)(c->cfg.timeout_s * 1000);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
done:
    curl_slist_free_all(hdr);
    if (h)
        curl_easy_cleanup(h);
    return status;
}

static void backoff(struct cosigner *c, struct target *t, const char *what)
{
    t->attempts++;
    double delay = fmin(c->cfg.retry_max_s, 0.25 * pow(2, t->attempts < 20 ? t->attempts : 20));
    t->next_attempt = now_s() + delay;
    fprintf(stderr,
            "{\"level\":\"warn\",\"msg\":\"witness\",\"witness\":\"%s\",\"error\":\"%s\","
            "\"retry_in_s\":%.2f}\n",
            t->key.name, what, delay);
}

static void handle_answer(struct cosigner *c, struct target *t, long long size, long long known,
                          const char *note, long status, const struct buffer *answer);

/* A witness that refuses the log's checkpoint because of what it cosigned before (409 with a
 * larger size, or 422: the proof does not verify against its view) saw another history of this
 * log: not a hiccup to retry quietly, but evidence of a fork. Logged with the checkpoint, and
 * a log_integrity alert for owners and admins (one per witness, size and answer). */
static void refused(struct cosigner *c, struct target *t, long long size, const char *note,
                    const char *why)
{
    const char *nl = strchr(note, '\n');
    int origin_len = nl ? (int)(nl - note) : (int)strlen(note);
    char message[512];
    snprintf(message, sizeof message,
             "Witness %s refused checkpoint %lld of %.*s: %s: it saw a different history of "
             "this log. Compare the witness's state with the log's checkpoints: either the log "
             "was rewound or forked, or the witness was shown another log under this key.",
             t->key.name, size, origin_len, note, why);
    json_t *line = json_pack("{s:s, s:s, s:s, s:s}", "level", "error", "msg",
                             "a witness refused the log's checkpoint", "evidence", message,
                             "checkpoint", note);
    char *text = line ? json_dumps(line, JSON_COMPACT) : NULL;
    if (text)
        fprintf(stderr, "%s\n", text);
    free(text);
    json_decref(line);
    if (store_alert_log_integrity_message(c->cfg.store, message) != STORE_OK)
        fprintf(stderr, "{\"level\":\"error\",\"msg\":\"cannot record the log alert\"}\n");
    backoff(c, t, "it refused the checkpoint: it saw a different history of this log");
}

/* One round for one witness: brings it to the latest checkpoint when it is behind. */
static void push(struct cosigner *c, struct target *t, const json_t *head)
{
    long long size = (long long)json_integer_value(json_object_get(head, "tree_size"));
    const char *note = json_string_value(json_object_get(head, "signed_note"));
    long long known = 0;
    if (!note || store_log_witness_size(c->cfg.store, t->vkey, &known) != STORE_OK)
        return;
    if (known >= size)
        return;
    uint8_t proof[WITNESS_MAX_PROOF][MERKLE_HASH_BYTES];
    size_t proof_len = 0;
    if (known > 0) {
        json_t *p = NULL;
        if (store_log_consistency(c->cfg.store, known, size, &p) != STORE_OK) {
            backoff(c, t, "no consistency proof from the size it cosigned");
            return;
        }
        size_t i;
        json_t *h;
        json_array_foreach(json_object_get(p, "hashes"), i, h)
        {
            if (proof_len < WITNESS_MAX_PROOF &&
                codec_hex_decode_exact(json_string_value(h), proof[proof_len], MERKLE_HASH_BYTES) ==
                    0)
                proof_len++;
        }
        json_decref(p);
    }
    size_t len = 0;
    char *body = witness_request((uint64_t)known, (const uint8_t(*)[MERKLE_HASH_BYTES])proof,
                                 proof_len, note, &len);
    struct buffer *answer = malloc(sizeof *answer);
    long status = body && answer ? post(c, t, body, len, answer) : 0;
    free(body);
    if (!answer) {
        backoff(c, t, "out of memory");
        return;
    }
    handle_answer(c, t, size, known, note, status, answer);
    free(answer);
}

/* What the witness answered to the request for the checkpoint `note` of `size`. */
static void handle_answer(struct cosigner *c, struct target *t, long long size, long long known,
                          const char *note, long status, const struct buffer *answer)
{
    if (status == 200) {
        /* The answer's lines, after the note, must verify as t's cosignature. */
        size_t note_len = strlen(note);
        char *full = malloc(note_len + answer->len + 1);
        uint64_t ts = 0;
        const char *line = strstr(answer->data, "\xe2\x80\x94 ");
        int ok = 0;
        if (full) {
            memcpy(full, note, note_len);
            memcpy(full + note_len, answer->data, answer->len + 1);
            ok = witness_cosignature_verify(full, note_len + answer->len, &t->key, &ts) == 0;
        }
        free(full);
        /* Store only the line that verifies. */
        char mine[512] = "";
        for (; ok && line; line = strstr(line + 1, "\xe2\x80\x94 ")) {
            const char *nl = strchr(line, '\n');
            size_t n = nl ? (size_t)(nl - line + 1) : 0;
            if (!n || n >= sizeof mine)
                continue;
            char *one = malloc(note_len + n + 1);
            if (!one)
                break;
            memcpy(one, note, note_len);
            memcpy(one + note_len, line, n);
            one[note_len + n] = '\0';
            int good = witness_cosignature_verify(one, note_len + n, &t->key, NULL) == 0;
            free(one);
            if (good) {
                memcpy(mine, line, n);
                mine[n] = '\0';
                break;
            }
        }
        if (!mine[0]) {
            backoff(c, t, "its answer holds no valid cosignature by its key");
            return;
        }
        if (store_log_cosigned(c->cfg.store, t->vkey, size, mine) != STORE_OK) {
            backoff(c, t, "cannot store the cosignature");
            return;
        }
        t->attempts = 0;
        t->next_attempt = 0;
    } else if (status == 409) {
        /* The size it last cosigned: start from there (a witness ahead of the log is a fork
         * it saw, and only an operator can settle it). */
        uint64_t theirs = 0;
        int read = witness_conflict_size(answer->data, answer->len, &theirs) == 0;
        if (read && theirs > (uint64_t)size) {
            char why[96];
            snprintf(why, sizeof why, "it answered 409, having cosigned size %" PRIu64, theirs);
            refused(c, t, size, note, why);
        } else if (!read ||
                   store_log_witness_seen(c->cfg.store, t->vkey, (long long)theirs) != STORE_OK ||
                   (long long)theirs == known)
            backoff(c, t, "it refused the checkpoint (409): it cosigned another view of the log");
    } else if (status == 422) {
        refused(c, t, size, note,
                "it answered 422: the consistency proof from the size it cosigned does not "
                "verify against its view");
    } else {
        char what[160];
        snprintf(what, sizeof what, status ? "it answered %ld" : "no answer", status);
        backoff(c, t, what);
    }
}

static void *run(void *arg)
{
    struct cosigner *c = arg;
    while (!c->stop) {
        json_t *head = NULL;
        if (store_log_head_note(c->cfg.store, &head) == STORE_OK) {
            for (size_t i = 0; i < c->n && !c->stop; i++)
                if (now_s() >= c->targets[i].next_attempt)
                    push(c, &c->targets[i], head);
            json_decref(head);
        }
        struct timespec ts = {0, POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* Parses CAPLEDGER_WITNESSES into c->targets; 0, or -1 with *why set. */
static int parse_witnesses(struct cosigner *c, const char *witnesses, char *why, size_t why_size)
{
    char *list = strdup(witnesses);
    if (!list) {
        snprintf(why, why_size, "out of memory");
        return -1;
    }
    int rc = 0;
    char *save = NULL;
    for (char *entry = strtok_r(list, ",", &save); entry; entry = strtok_r(NULL, ",", &save)) {
        while (*entry == ' ')
            entry++;
        char *space = strchr(entry, ' ');
        if (!*entry)
            continue;
        struct target *t = &c->targets[c->n];
        if (c->n == MAX_WITNESSES || !space) {
            snprintf(why, why_size,
                     "CAPLEDGER_WITNESSES: each entry is \"VKEY URL\" (at most %d entries, "
                     "separated by commas)",
                     MAX_WITNESSES);
            rc = -1;
            break;
        }
        *space = '\0';
        char *url = space + 1;
        while (*url == ' ')
            url++;
        size_t ul = strlen(url);
        while (ul && (url[ul - 1] == ' ' || url[ul - 1] == '/'))
            url[--ul] = '\0';
        if (witness_key_parse(entry, &t->key) != 0 || strlen(entry) >= sizeof t->vkey ||
            (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) ||
            ul >= sizeof t->url) {
            snprintf(why, why_size,
                     "CAPLEDGER_WITNESSES: \"%.80s\" is not a witness verifier key (type 0x04) "
                     "followed by an http(s) URL",
                     entry);
            rc = -1;
            break;
        }
        snprintf(t->vkey, sizeof t->vkey, "%s", entry);
        snprintf(t->url, sizeof t->url, "%s", url);
        c->n++;
    }
    free(list);
    return rc;
}

int cosign_check(const char *witnesses, char *why, size_t why_size)
{
    why[0] = '\0';
    if (!witnesses || !*witnesses)
        return 0;
    struct cosigner *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(why, why_size, "out of memory");
        return -1;
    }
    int rc = parse_witnesses(c, witnesses, why, why_size);
    free(c);
    return rc;
}

struct cosigner *cosign_start(const struct cosign_config *cfg, char *why, size_t why_size)
{
    why[0] = '\0';
    if (!cfg->witnesses || !*cfg->witnesses)
        return NULL;
    struct cosigner *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    c->cfg = *cfg;
    if (c->cfg.timeout_s <= 0)
        c->cfg.timeout_s = 5;
    if (c->cfg.retry_max_s <= 0)
        c->cfg.retry_max_s = 60;
    if (parse_witnesses(c, cfg->witnesses, why, why_size) != 0 || c->n == 0) {
        free(c);
        return NULL;
    }
    if (pthread_create(&c->thread, NULL, run, c) != 0) {
        snprintf(why, why_size, "cannot start the witness thread");
        free(c);
        return NULL;
    }
    return c;
}

void cosign_stop(struct cosigner *c)
{
    if (!c)
        return;
    c->stop = 1;
    pthread_join(c->thread, NULL);
    free(c);
}
