/* Webhooks: where alerts reach owners (a chat channel, an incident tool).
 *
 * Owners and admins create, list, read and delete webhooks; owners see only their own, admins
 * every one. The signing secret is generated here, returned once in the reply that creates
 * the webhook (like API tokens: no Idempotency-Key replay, which would store it) and kept
 * sealed under a key derived from the server's key. Deliveries are queued in the transaction
 * that raises an alert (store_webhook_enqueue_tx) and posted by the background deliverer
 * (http/deliver.c); their state is read here.
 *
 * A webhook is an owner-level trust decision: the server will post to the URL an owner gives
 * (only http and https; see docs/webhooks.md for what is refused at connect time). */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "core/validate.h"
#include "core/formats/evfield.h"
#include "core/notify/webhook.h"
#include "http/resource.h"
#include "store/webhooks.h"

/* The caller's own webhooks, or every webhook for admins. */
static const char *scope(struct req *r)
{
    return r->who.role == ROLE_ADMIN ? NULL : r->who.username;
}

static const char *const WEBHOOK_FORMATS[] = {"json", "slack", NULL};

static const struct evfield WEBHOOK_EVENT[] = {
    {"event", EVF_ENUM, 0, 0, 0, 0, WEBHOOK_EVENTS, NULL},
    EVF_END,
};

static const struct evfield WEBHOOK_FIELDS[] = {
    {"url", EVF_TEXT, EVF_REQUIRED, 0, 0, WEBHOOK_URL_MAX + 1, NULL, NULL},
    {"format", EVF_ENUM, EVF_QUOTE, 0, 0, 0, WEBHOOK_FORMATS, NULL},
    {"description", EVF_TEXT, 0, 0, 0, 200, NULL, NULL},
    {"events", EVF_LIST, EVF_REQUIRED | EVF_MSG_ALL | EVF_UNIQUE, 1, 0, 8,
     EVF_WORDS("must list 1 to 8 events: drift, log_integrity"), WEBHOOK_EVENT},
    EVF_END,
};

static json_t *webhook_create_make(struct req *r, struct problems *p)
{
    json_t *made = NULL;
    json_t *out = NULL;
    char *events_json = NULL;
    char secret[WEBHOOK_SECRET_LEN + 1] = "", sealed[WEBHOOK_SEALED_LEN + 1] = "";
    unsigned char key[WEBHOOK_KEY_BYTES];
    if (!json_is_object(r->body)) {
        problems_add(p, "", "must be a JSON object {url, events, format, description}");
        goto out;
    }
    evfield_check(r->body, WEBHOOK_FIELDS, "", 0, NULL, p);
    const char *url = evfield_valid_string(r->body, "url", p);
    const char *why = url ? webhook_url_check(url, NULL) : NULL;
    if (why)
        problems_add(p, "/url", "%s", why);
    const char *format = evfield_valid_string(r->body, "format", p);
    if (!format)
        format = "json";
    const char *description = evfield_valid_string(r->body, "description", p);
    if (!description)
        description = "";
    json_t *events = json_object_get(r->body, "events");
    if (p->total)
        goto out;
    events_json = json_dumps(events, JSON_COMPACT);
    webhook_secret_new(secret);
    if (!events_json || webhook_secret_key(secret, key) != 0 ||
        webhook_seal(r->app->cfg->server_sk, key, sealed) != 0) {
        resp_problem(r, 500, "internal", "Internal error", "could not create the secret");
        goto out;
    }
    struct webhook_new w = {
        .user_id = r->who.user_id,
        .owner = r->who.username,
        .url = url,
        .events_json = events_json,
        .format = format,
        .description = description,
        .secret_sealed = sealed,
    };
    struct audit_actor who;
    enum store_status st = store_webhook_create(r->app->store, req_actor(r, &who), &w, &out);
    if (st == STORE_NOT_FOUND) {
        resp_problem(r, 409, "too-many-webhooks", "Too many webhooks",
                     "you have %d webhooks already: delete one first", WEBHOOKS_PER_USER);
        goto out;
    }
    if (st != STORE_OK) {
        resp_store_error(r, st, "webhook");
        goto out;
    }
    json_object_set_new(out, "secret", json_string(secret));
    made = out;
    out = NULL;
out:
    sodium_memzero(secret, sizeof secret);
    sodium_memzero(key, sizeof key);
    sodium_memzero(sealed, sizeof sealed);
    free(events_json);
    json_decref(out);
    return made;
}

static void webhook_create(struct req *r)
{
    resp_create(r, webhook_create_make);
}

static void webhook_list(struct req *r)
{
    struct page pg;
    if (page_begin(r, &pg, PAGE_AT_ID, NULL) != 0)
        return;
    json_t *items = NULL;
    enum store_status st =
        store_webhook_list(r->app->store, scope(r), pg.after_at, pg.after_id, pg.fetch, &items);
    page_reply_fetched(r, &pg, st, items, "created_at", "webhooks");
}

/* The webhook when the caller may see it; else answers 404 and returns NULL. */
static json_t *readable_webhook(struct req *r)
{
    json_t *row = NULL;
    enum store_status st = uuid_valid(r->params[0])
                               ? store_webhook_get(r->app->store, r->params[0], scope(r), &row)
                               : STORE_NOT_FOUND;
    return req_stored(r, st, row, "webhook");
}

static void webhook_get(struct req *r)
{
    json_t *row = readable_webhook(r);
    if (row)
        resp_json(r, 200, row);
}

static void webhook_delete(struct req *r)
{
    struct audit_actor who;
    enum store_status st =
        uuid_valid(r->params[0])
            ? store_webhook_delete(r->app->store, req_actor(r, &who), r->params[0], scope(r))
            : STORE_NOT_FOUND;
    if (st != STORE_OK) {
        resp_store_error(r, st, "webhook");
        return;
    }
    resp_bytes(r, 204, NULL, NULL, 0, NULL);
}

static void webhook_deliveries(struct req *r)
{
    struct page pg;
    json_t *hook = NULL;
    if (page_begin(r, &pg, PAGE_AT_ID, NULL) != 0)
        goto out;
    hook = readable_webhook(r);
    if (!hook)
        goto out;
    json_t *items = NULL;
    enum store_status st = store_webhook_deliveries(r->app->store, r->params[0], pg.after_at,
                                                    pg.after_id, pg.fetch, &items);
    page_reply_fetched(r, &pg, st, items, "created_at", "deliveries");
out:
    json_decref(hook);
}

/* A test message, delivered like an alert: the way to check a URL and a receiver's
 * signature check before an alert depends on them. */
static void webhook_ping(struct req *r)
{
    json_t *hook = NULL, *out = NULL, *msg = NULL;
    char *body = NULL;
    if (r->body && !(json_is_object(r->body) && json_object_size(r->body) == 0)) {
        struct problems p;
        problems_init(&p);
        problems_add(&p, "", "must be empty or {}");
        resp_invalid(r, &p, NULL);
        problems_free(&p);
        return;
    }
    hook = readable_webhook(r);
    if (!hook)
        return;
    msg = json_pack("{s:s, s:s, s:O?}", "id", r->params[0], "message",
                    "a test message from capledger: this webhook is set up", "events",
                    json_object_get(hook, "events"));
    body =
        msg ? webhook_body(json_string_value(json_object_get(hook, "format")), "ping", msg) : NULL;
    if (!body) {
        resp_problem(r, 500, "internal", "Internal error", "could not build the test message");
        goto out;
    }
    struct audit_actor who;
    enum store_status st =
        store_webhook_ping(r->app->store, req_actor(r, &who), r->params[0], body, &out);
    if (st == STORE_NOT_FOUND) {
        resp_problem(r, 409, "too-many-pings", "Too many test messages",
                     "%d test messages to the webhooks of this webhook's owner are still waiting "
                     "to be delivered",
                     WEBHOOK_PINGS_WAITING);
        goto out;
    }
    if (st != STORE_OK) {
        resp_store_error(r, st, "webhook");
        goto out;
    }
    resp_json(r, 202, out);
    out = NULL;
out:
    free(body);
    json_decref(msg);
    json_decref(out);
    json_decref(hook);
}

const struct route webhook_routes[] = {
    {"GET", "/api/v1/webhooks", webhook_list, ROLE_OWNER | ROLE_ADMIN, 0, "limit cursor", NULL},
    {"POST", "/api/v1/webhooks", webhook_create, ROLE_OWNER | ROLE_ADMIN, ROUTE_JSON_BODY, NULL,
     NULL},
    {"GET", "/api/v1/webhooks/{id}", webhook_get, ROLE_OWNER | ROLE_ADMIN, 0, NULL, NULL},
    {"DELETE", "/api/v1/webhooks/{id}", webhook_delete, ROLE_OWNER | ROLE_ADMIN, 0, NULL, NULL},
    {"GET", "/api/v1/webhooks/{id}/deliveries", webhook_deliveries, ROLE_OWNER | ROLE_ADMIN, 0,
     "limit cursor", NULL},
    {"POST", "/api/v1/webhooks/{id}/ping", webhook_ping, ROLE_OWNER | ROLE_ADMIN,
     ROUTE_JSON_BODY | ROUTE_OPTIONAL_BODY, NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
