#include "http/deliver.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/notify/webhook.h"
#include "store/webhooks.h"

#define IDLE_POLL_MS 500

/* A dispatcher claims deliveries only for idle workers (store_webhook_claim keeps one in
 * flight per destination and per owner, across instances), so nothing waits in memory behind a
 * slow receiver; the workers post them. One worker is kept for log-integrity alerts: the others
 * take at most threads - 1 other deliveries at once. */
struct deliverer {
    struct deliver_config cfg;
    pthread_t dispatcher;
    pthread_t *workers;
    int started; /* workers running */
    pthread_mutex_t mu;
    pthread_cond_t work;  /* a job was queued, or stop */
    pthread_cond_t freed; /* a worker finished a job, or stop */
    json_t *queue;        /* claimed jobs no worker has taken yet */
    int busy;             /* jobs taken or queued */
    int busy_ordinary;    /* of which not log-integrity alerts */
    volatile sig_atomic_t stop;
};

/* One attempt's connection guard: what the opensocket callback refused, if anything. */
struct attempt {
    struct deliverer *d;
    char refused[200];
    size_t received; /* bytes of the reply's body */
};

static curl_socket_t open_guarded(void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
    struct attempt *at = clientp;
    const char *why = NULL;
    if (purpose != CURLSOCKTYPE_IPCXN)
        why = "not an IP connection";
    else if (a->family == AF_INET)
        why = webhook_addr_refused(
            4, (const unsigned char *)&((const struct sockaddr_in *)&a->addr)->sin_addr,
            at->d->cfg.deny_private);
    else if (a->family == AF_INET6)
        why = webhook_addr_refused(
            6, (const unsigned char *)&((const struct sockaddr_in6 *)&a->addr)->sin6_addr,
            at->d->cfg.deny_private);
    else
        why = "not an IP address";
    if (why) {
        snprintf(at->refused, sizeof at->refused, "refused to connect: %s", why);
        return CURL_SOCKET_BAD;
    }
    return socket(a->family, a->socktype, a->protocol);
}

#define REPLY_MAX_BYTES 65536

/* The reply is read and dropped (never stored or shown); past REPLY_MAX_BYTES the transfer is
 * cut (the status is known by then). */
static size_t discard(char *ptr, size_t size, size_t n, void *userdata)
{
    (void)ptr;
    struct attempt *at = userdata;
    at->received += size * n;
    return at->received > REPLY_MAX_BYTES ? 0 : size * n;
}

/* Abandons the transfer when the server stops. */
static int progress(void *clientp, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    return ((struct attempt *)clientp)->d->stop ? 1 : 0;
}

/* Keeps the text printable ASCII (it is stored and shown) and at most 480 bytes. */
static void clean_error(char *s)
{
    size_t i = 0;
    for (; s[i] && i < 480; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
            s[i] = '?';
    s[i] = '\0';
}

/* Posts one claimed delivery; returns the HTTP status (0: none), fills error and says how the
 * attempt ended below HTTP (*t). */
static long post_one(struct deliverer *d, const json_t *job, char *error, size_t error_size,
                     enum webhook_transport *t)
{
    *t = WEBHOOK_T_OTHER;
    const char *id = json_string_value(json_object_get(job, "id"));
    const char *url = json_string_value(json_object_get(job, "url"));
    const char *body = json_string_value(json_object_get(job, "body"));
    unsigned char key[WEBHOOK_KEY_BYTES];
    error[0] = '\0';
    if (!id || !url || !body || webhook_url_check(url, NULL)) {
        snprintf(error, error_size, "the stored delivery is unusable");
        return 0;
    }
    if (webhook_unseal(d->cfg.server_sk, json_string_value(json_object_get(job, "secret_sealed")),
                       key) != 0) {
        snprintf(error, error_size,
                 "the webhook's secret was sealed under another server key: recreate the "
                 "webhook");
        return 0;
    }
    long long now = (long long)time(NULL);
    char sig[WEBHOOK_SIGNATURE_LEN + 1], h_id[96], h_ts[64], h_sig[96], h_idem[96], h_ua[96];
    webhook_sign(key, sizeof key, id, now, body, strlen(body), sig);
    sodium_memzero(key, sizeof key);
    snprintf(h_id, sizeof h_id, "webhook-id: %s", id);
    snprintf(h_ts, sizeof h_ts, "webhook-timestamp: %lld", now);
    snprintf(h_sig, sizeof h_sig, "webhook-signature: %s", sig);
    snprintf(h_idem, sizeof h_idem, "Idempotency-Key: %s", id);
    snprintf(h_ua, sizeof h_ua, "User-Agent: %s", d->cfg.user_agent);

    struct attempt at = {.d = d};
    char curl_error[CURL_ERROR_SIZE] = "";
    long status = 0;
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = NULL;
    const char *lines[] = {
        "Content-Type: application/json", h_id, h_ts, h_sig, h_idem, h_ua, "Expect:"};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        struct curl_slist *more = curl_slist_append(hdr, lines[i]);
        if (!more)
            break;
        hdr = more;
    }
    if (!h || !hdr) {
        snprintf(error, error_size, "out of memory");
        goto out;
    }
    long timeout_ms = (long)(d->cfg.timeout_s * 1000);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_PROXY, ""); /* the address guard must see the receiver */
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &at);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_guarded);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, &at);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &at);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_error);
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (rc == CURLE_WRITE_ERROR && at.received > REPLY_MAX_BYTES)
        rc = CURLE_OK; /* a long reply, cut: its status stands */
    if (at.refused[0])
        snprintf(error, error_size, "%s", at.refused);
    else if (rc == CURLE_ABORTED_BY_CALLBACK)
        snprintf(error, error_size, "interrupted: the server was stopping");
    else if (rc != CURLE_OK)
        snprintf(error, error_size, "%s", curl_error[0] ? curl_error : curl_easy_strerror(rc));
    else if (status >= 300 && status < 400)
        snprintf(error, error_size, "HTTP %ld (redirects are not followed)", status);
    else if (status < 200 || status >= 300)
        snprintf(error, error_size, "HTTP %ld", status);
    if (at.refused[0])
        *t = WEBHOOK_T_ADDRESS_REFUSED;
    else if (rc == CURLE_OK)
        *t = WEBHOOK_T_REPLIED;
    else if (rc == CURLE_COULDNT_CONNECT)
        *t = WEBHOOK_T_CONN_REFUSED;
    else if (rc == CURLE_OPERATION_TIMEDOUT)
        *t = WEBHOOK_T_TIMEOUT;
    if (rc != CURLE_OK)
        status = 0;
out:
    curl_slist_free_all(hdr);
    if (h)
        curl_easy_cleanup(h);
    clean_error(error);
    return status;
}

static int is_urgent(const json_t *job)
{
    const char *event = json_string_value(json_object_get(job, "event"));
    return event && strcmp(event, "log_integrity") == 0;
}

/* Posts one job and records its outcome (core/notify/webhook.h decides what it means). */
static void deliver_one(struct deliverer *d, const json_t *job)
{
    char error[512];
    enum webhook_transport t;
    long status = post_one(d, job, error, sizeof error, &t);
    int attempts = (int)json_integer_value(json_object_get(job, "attempts"));
    enum webhook_verdict v = webhook_verdict(t, status, attempts);
    if (d->stop && v != WEBHOOK_DELIVERED)
        v = WEBHOOK_RETRY; /* abandoned: tried again, not judged */
    double retry =
        d->stop ? 0 : webhook_backoff_s(attempts, d->cfg.retry_base_s, randombytes_random());
    const char *id = json_string_value(json_object_get(job, "id"));
    struct webhook_result res = {
        .id = id,
        .lease = json_string_value(json_object_get(job, "lease")),
        .verdict = v == WEBHOOK_DELIVERED ? "delivered"
                   : v == WEBHOOK_GIVE_UP ? "failed"
                                          : "failing",
        .http_status = (int)status,
        .error = v == WEBHOOK_DELIVERED ? NULL : error,
        .retry_s = retry,
        .max_attempts = WEBHOOK_MAX_ATTEMPTS,
        .destination = json_string_value(json_object_get(job, "destination")),
        .breaker_failure = !d->stop && webhook_breaker_counts(t),
    };
    enum store_status st = store_webhook_result(d->cfg.store, &res);
    fprintf(stderr,
            "{\"level\":\"%s\",\"msg\":\"webhook delivery\",\"delivery\":\"%s\","
            "\"attempt\":%d,\"status\":%ld,\"delivered\":%s,\"verdict\":\"%s\"%s}\n",
            v == WEBHOOK_DELIVERED ? "info" : "warn", id ? id : "", attempts, status,
            v == WEBHOOK_DELIVERED ? "true" : "false", res.verdict,
            st == STORE_OK ? "" : ",\"recorded\":false");
}

static void *worker_run(void *arg)
{
    struct deliverer *d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->stop && json_array_size(d->queue) == 0)
            pthread_cond_wait(&d->work, &d->mu);
        if (d->stop)
            break;
        json_t *job = json_incref(json_array_get(d->queue, 0));
        json_array_remove(d->queue, 0);
        pthread_mutex_unlock(&d->mu);
        deliver_one(d, job);
        pthread_mutex_lock(&d->mu);
        d->busy--;
        if (!is_urgent(job))
            d->busy_ordinary--;
        json_decref(job);
        pthread_cond_signal(&d->freed);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* Waits up to ms for a worker to finish (or stop). Called with mu held. */
static void wait_freed(struct deliverer *d, int ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    if (!d->stop)
        pthread_cond_timedwait(&d->freed, &d->mu, &until);
}

static void *dispatch_run(void *arg)
{
    struct deliverer *d = arg;
    double lease_s = d->cfg.timeout_s + 30;
    pthread_mutex_lock(&d->mu);
    while (!d->stop) {
        int idle = d->started - d->busy;
        int ordinary = d->started - 1 - d->busy_ordinary;
        if (idle <= 0) {
            wait_freed(d, IDLE_POLL_MS);
            continue;
        }
        pthread_mutex_unlock(&d->mu);
        json_t *jobs = NULL;
        enum store_status st =
            store_webhook_claim(d->cfg.store, lease_s, idle, ordinary > 0 ? ordinary : 0, &jobs);
        pthread_mutex_lock(&d->mu);
        if (st != STORE_OK) {
            if (st != STORE_UNAVAILABLE)
                fprintf(stderr,
                        "{\"level\":\"warn\",\"msg\":\"webhook claim failed\",\"status\":\"%s\"}\n",
                        store_status_name(st));
            wait_freed(d, 1000);
            continue;
        }
        size_t i;
        json_t *job;
        json_array_foreach(jobs, i, job)
        {
            json_array_append(d->queue, job);
            d->busy++;
            if (!is_urgent(job))
                d->busy_ordinary++;
        }
        if (json_array_size(jobs) > 0)
            pthread_cond_broadcast(&d->work);
        else
            wait_freed(d, IDLE_POLL_MS);
        json_decref(jobs);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

static void stop_threads(struct deliverer *d, int dispatching)
{
    pthread_mutex_lock(&d->mu);
    d->stop = 1;
    pthread_cond_broadcast(&d->work);
    pthread_cond_broadcast(&d->freed);
    pthread_mutex_unlock(&d->mu);
    if (dispatching)
        pthread_join(d->dispatcher, NULL);
    for (int i = 0; i < d->started; i++)
        pthread_join(d->workers[i], NULL);
}

struct deliverer *deliver_start(const struct deliver_config *cfg)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "capledger: cannot initialise libcurl for webhooks\n");
        return NULL;
    }
    struct deliverer *d = calloc(1, sizeof *d);
    if (!d) {
        curl_global_cleanup();
        return NULL;
    }
    d->cfg = *cfg;
    if (!(d->cfg.timeout_s > 0))
        d->cfg.timeout_s = 10;
    if (!(d->cfg.retry_base_s > 0))
        d->cfg.retry_base_s = 15;
    if (!d->cfg.user_agent)
        d->cfg.user_agent = "capledger";
    if (d->cfg.threads < 2)
        d->cfg.threads = 2;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->work, NULL);
    pthread_cond_init(&d->freed, NULL);
    d->queue = json_array();
    d->workers = calloc((size_t)d->cfg.threads, sizeof *d->workers);
    int ok = d->queue && d->workers;
    for (; ok && d->started < d->cfg.threads; d->started++)
        if (pthread_create(&d->workers[d->started], NULL, worker_run, d) != 0)
            break;
    ok = ok && d->started >= 2 && pthread_create(&d->dispatcher, NULL, dispatch_run, d) == 0;
    if (!ok) {
        fprintf(stderr, "capledger: cannot start the webhook deliverer\n");
        stop_threads(d, 0);
        json_decref(d->queue);
        free(d->workers);
        free(d);
        curl_global_cleanup();
        return NULL;
    }
    return d;
}

void deliver_stop(struct deliverer *d)
{
    if (!d)
        return;
    stop_threads(d, 1);
    json_decref(d->queue); /* claimed, never posted: their leases run out and they are retried */
    free(d->workers);
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->work);
    pthread_cond_destroy(&d->freed);
    free(d);
    curl_global_cleanup();
}
