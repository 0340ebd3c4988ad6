/* Idempotency-Key handling shared by every POST; see idempotency.h. */
#include "http/idempotency.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/auth/secret.h"
#include "core/jcs.h"
#include "http/resource.h"

#include "store/idempotency.h"

static void digest_start(struct req *r, struct idem *ctx)
{
    crypto_hash_sha256_init(&ctx->sha);
    /* The media type too: it decides how the same bytes are read. */
    char head[1024], type[96];
    req_content_type(r, type, sizeof type);
    int n = snprintf(head, sizeof head, "%s %s\n%s?%s\n", r->method, r->path, type,
                     r->query ? r->query : "");
    size_t len = n < 0 ? 0 : (size_t)n < sizeof head ? (size_t)n : sizeof head - 1;
    crypto_hash_sha256_update(&ctx->sha, (const unsigned char *)head, len);
    if (n >= (int)sizeof head && r->query) /* long queries: hash the rest too */
        crypto_hash_sha256_update(&ctx->sha, (const unsigned char *)r->query, strlen(r->query));
    ctx->hashing = 1;
}

/* The digest of what was hashed so far, leaving the hash open. */
static void digest_peek(const struct idem *ctx, char hex[65])
{
    crypto_hash_sha256_state copy = ctx->sha;
    unsigned char sum[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_final(&copy, sum);
    sodium_bin2hex(hex, 65, sum, sizeof sum);
}

static void digest_hex(struct idem *ctx, char hex[65])
{
    unsigned char sum[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_final(&ctx->sha, sum);
    sodium_bin2hex(hex, 65, sum, sizeof sum);
    ctx->hashing = 0;
}

void idem_update(struct idem *ctx, const void *data, size_t len)
{
    if (ctx && ctx->hashing && len)
        crypto_hash_sha256_update(&ctx->sha, data, len);
}

/* Reads the header; returns 0 when absent, 1 when a valid key was copied, -1 after a 422. */
static int read_key(struct req *r, struct idem *ctx)
{
    const char *key = req_header(r, "Idempotency-Key");
    if (!key)
        return 0;
    size_t len = strlen(key);
    int ok = len >= 1 && len <= IDEM_KEY_MAX && r->who.user_id[0];
    for (size_t i = 0; ok && i < len; i++)
        ok = key[i] > 0x20 && key[i] < 0x7f;
    if (!ok) {
        struct problems p;
        problems_init(&p);
        problems_add(&p, "", "header Idempotency-Key must be 1-%d visible ASCII characters",
                     IDEM_KEY_MAX);
        resp_invalid(r, &p, NULL);
        problems_free(&p);
        return -1;
    }
    memcpy(ctx->key, key, len + 1);
    snprintf(ctx->route, sizeof ctx->route, "%s %s", r->method, r->path);
    return 1;
}

static void replay(struct req *r, const json_t *existing)
{
    const char *text = json_string_value(json_object_get(existing, "response"));
    int status = (int)json_integer_value(json_object_get(existing, "status"));
    resp_bytes(r, status, "application/json", text ? text : "", text ? strlen(text) : 0,
               "Idempotency-Replayed: true\r\n");
}

/* The earlier request with the key committed its write, but its instance stopped before the
 * reply was kept (store_idem_claim): say what was written; writing it again is what the key
 * exists to prevent. */
static void answer_lost(struct req *r, const json_t *existing)
{
    const char *text = json_string_value(json_object_get(existing, "response"));
    json_t *what = text ? json_loads(text, 0, NULL) : NULL;
    const char *action = json_string_value(json_object_get(what, "action"));
    const char *target = json_string_value(json_object_get(what, "target_id"));
    resp_problem_with(r, 409, "idempotency-reply-lost", "Reply lost",
                      json_pack("{s:s?, s:s?}", "action", action, "target_id", target),
                      "the request first sent with this Idempotency-Key was stored (%s%s%s) but "
                      "the instance that stored it stopped before replying; it is not done again "
                      "— read the stored result instead",
                      action ? action : "a write", target ? " of " : "", target ? target : "");
    json_decref(what);
}

/* Decides from an earlier row: the same request → its reply (or "reply lost"), else 409. */
static void answer_existing(struct req *r, struct idem *ctx, const json_t *existing)
{
    const char *route = json_string_value(json_object_get(existing, "route"));
    const char *sha = json_string_value(json_object_get(existing, "body_sha256"));
    char hex[65];
    digest_hex(ctx, hex);
    int same_route = route && strcmp(route, ctx->route) == 0;
    /* a lost upload's digest was never known: only its route can be compared */
    if (same_route && json_is_true(json_object_get(existing, "reply_lost")) &&
        (!sha || strcmp(sha, hex) == 0)) {
        answer_lost(r, existing);
        return;
    }
    if (!same_route || !sha || strcmp(sha, hex) != 0) {
        resp_problem(r, 409, "idempotency-key-reused", "Idempotency key reused",
                     "this Idempotency-Key was used for a different request; use a new key");
        return;
    }
    replay(r, existing);
}

/* Another request holds the key and has not answered: its claim is pending, or it claimed the
 * key a moment ago (existing null: committed after this statement's snapshot). */
static int in_flight(const json_t *row)
{
    if (json_is_true(json_object_get(row, "claimed")))
        return 0;
    const json_t *existing = json_object_get(row, "existing");
    return !json_is_object(existing) || json_is_null(json_object_get(existing, "status"));
}

#define IDEM_WAIT_TRIES 15 /* × IDEM_WAIT_STEP_MS: at most 1.5 s */
#define IDEM_WAIT_STEP_MS 100

/* Claims the key. Returns IDEM_PROCEED with ctx->active set, or IDEM_ANSWERED; *existing
 * receives a completed earlier row (new reference) for the caller to compare. */
static enum idem_step claim(struct req *r, struct idem *ctx, const char *body_sha256,
                            json_t **existing)
{
    json_t *row = NULL;
    *existing = NULL;
    secret_random_hex(ctx->nonce, sizeof ctx->nonce);
    const struct idem_claim c = {.user_id = r->who.user_id,
                                 .key = ctx->key,
                                 .route = ctx->route,
                                 .nonce = ctx->nonce,
                                 .body_sha256 = body_sha256,
                                 .own_retries = ctx->own_retries};
    enum store_status st = store_idem_claim(r->app->store, &c, &row);
    /* The same key still in flight (a retry that a proxy sent to another instance while the
     * first was finishing): wait a little for its answer before saying so. */
    for (int waited = 0; st == STORE_OK && waited < IDEM_WAIT_TRIES && in_flight(row); waited++) {
        json_decref(row);
        row = NULL;
        struct timespec pause = {0, IDEM_WAIT_STEP_MS * 1000000L};
        nanosleep(&pause, NULL);
        st = store_idem_claim(r->app->store, &c, &row);
    }
    if (st != STORE_OK) {
        json_decref(row);
        resp_store_error(r, st, "idempotency key");
        return IDEM_ANSWERED;
    }
    if (json_is_true(json_object_get(row, "claimed"))) {
        ctx->active = 1;
        /* the audit rows of its writes carry it */
        memcpy(r->idem_claim, ctx->nonce, sizeof ctx->nonce);
        json_decref(row);
        return IDEM_PROCEED;
    }
    json_t *prev = json_object_get(row, "existing");
    if (!json_is_object(prev) || json_is_null(json_object_get(prev, "status"))) {
        resp_problem(r, 409, "idempotency-in-progress", "Request in progress",
                     "a request with this Idempotency-Key is still being processed (waited "
                     "1.5 s for it); retry later");
        json_decref(row);
        return IDEM_ANSWERED;
    }
    *existing = json_incref(prev);
    json_decref(row);
    return IDEM_PROCEED;
}

/* streamed: the body has not been read (it is hashed as the handler reads it, or here when an
 * earlier request with the key completed); else the parsed JSON body is hashed now. */
static void drain_sink(void *ctx, const char *data, size_t len)
{
    idem_update(ctx, data, len);
}

static enum idem_step begin(struct req *r, struct idem *ctx, int streamed, int own_retries)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->own_retries = own_retries;
    int k = read_key(r, ctx);
    if (k <= 0)
        return k < 0 ? IDEM_ANSWERED : IDEM_PROCEED;
    digest_start(r, ctx);
    if (!streamed && r->body) {
        char *text = json_dumps(r->body, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY |
                                             JSON_REAL_PRECISION(17));
        if (text) {
            idem_update(ctx, text, strlen(text));
            free(text);
        }
    }
    char body_sha[65];
    if (!streamed)
        digest_peek(ctx, body_sha);
    json_t *existing = NULL;
    if (claim(r, ctx, streamed ? NULL : body_sha, &existing) == IDEM_ANSWERED)
        return IDEM_ANSWERED;
    if (!existing)
        return IDEM_PROCEED;
    /* A completed earlier request: hash this whole body to tell a retry from a reuse. */
    if (streamed)
        req_drain(r, drain_sink, ctx);
    answer_existing(r, ctx, existing);
    json_decref(existing);
    return IDEM_ANSWERED;
}

enum idem_step idem_begin(struct req *r, struct idem *ctx)
{
    return begin(r, ctx, 0, 0);
}

enum idem_step idem_begin_own_retries(struct req *r, struct idem *ctx)
{
    return begin(r, ctx, 0, 1);
}

enum idem_step idem_begin_stream(struct req *r, struct idem *ctx)
{
    return begin(r, ctx, 1, 0);
}

void idem_reply(struct req *r, struct idem *ctx, int status, json_t *body_stolen)
{
    /* JCS number forms (98.32, not 98.319999999999993), members in the document's order: the
     * same bytes as resp_json, so a replay is indistinguishable from the first reply. */
    char *text = jcs_dump(body_stolen, NULL);
    json_decref(body_stolen);
    if (!text) {
        resp_problem(r, 500, "internal", "Internal error", "out of memory (request id %s)",
                     r->request_id);
        return;
    }
    if (ctx->active && status < 500) {
        char hex[65];
        digest_hex(ctx, hex);
        if (store_idem_complete(r->app->store, r->who.user_id, ctx->key, ctx->nonce, hex, status,
                                text) == STORE_OK)
            ctx->stored = 1;
    }
    r->idem_claim[0] = '\0'; /* answered: a later write of the request is no longer the claim's */
    resp_bytes(r, status, "application/json", text, strlen(text), NULL);
    free(text);
}

void idem_end(struct req *r, struct idem *ctx)
{
    if (ctx->active && !ctx->stored &&
        store_idem_release(r->app->store, r->who.user_id, ctx->key, ctx->nonce) != STORE_OK)
        fprintf(stderr,
                "{\"level\":\"warn\",\"msg\":\"idempotency claim not released\","
                "\"request_id\":\"%s\"}\n",
                r->request_id);
    ctx->active = 0;
    r->idem_claim[0] = '\0';
}

void idem_create(struct req *r, create_fn make)
{
    struct idem idem;
    struct problems p;
    problems_init(&p);
    if (idem_begin(r, &idem) == IDEM_PROCEED) {
        json_t *row = make(r, &p);
        if (row)
            idem_reply(r, &idem, 201, row);
        else if (!r->status)
            resp_invalid(r, &p, NULL);
    }
    idem_end(r, &idem);
    problems_free(&p);
}
