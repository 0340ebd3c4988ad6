/* Offers. Documents are validated by h_offers.c; jsonb_populate_record spreads them over the
 * typed columns (named like the JSON fields). */
#include "store/offers.h"

#include <stdio.h>
#include <stdlib.h>

#include "store/uploads.h"

static const char *SQL_CREATE =
    "INSERT INTO offer SELECT * FROM jsonb_populate_record(NULL::offer, $1::jsonb || "
    "jsonb_build_object('id', gen_random_uuid(), 'created_by', $2::text, 'created_at', now())) "
    "RETURNING to_jsonb(offer)";

/* Input order is kept through WITH ORDINALITY; ids are drawn per row. */
static const char *SQL_CREATE_MANY =
    "WITH src AS (SELECT e, n, gen_random_uuid() AS id FROM jsonb_array_elements($1::jsonb) "
    "WITH ORDINALITY AS a(e, n)), "
    "ins AS (INSERT INTO offer SELECT (jsonb_populate_record(NULL::offer, src.e || "
    "jsonb_build_object('id', src.id, 'upload_id', $2::uuid, 'created_by', $3::text, "
    "'created_at', now()))).* FROM src RETURNING *) "
    "SELECT coalesce(json_agg(to_jsonb(ins) ORDER BY src.n), '[]') FROM ins JOIN src USING (id)";

/* An offer of a catalog also names the version that replaced it (NULL while current). */
static const char *SQL_GET =
    "SELECT to_jsonb(o) || jsonb_build_object('superseded_by', (SELECT n.id "
    "FROM offer n WHERE n.supersedes = o.id)) FROM offer o WHERE o.id = "
    "$1::uuid";

static const char *SQL_LIST =
    "SELECT coalesce(json_agg(j ORDER BY created_at, id), '[]') FROM ("
    "SELECT to_jsonb(o) AS j, o.created_at, o.id FROM offer o "
    "WHERE NOT EXISTS (SELECT 1 FROM offer n WHERE n.supersedes = o.id) "
    "AND ($1::text IS NULL OR o.purchase_option = $1) AND ($2::text IS NULL OR o.gpu_model = $2) "
    "AND ($3::text IS NULL OR o.provider = $3) "
    "AND ($9::text IS NULL OR starts_with(lower(coalesce(o.name, o.instance_type)), lower($9))) "
    "AND ($4::timestamptz IS NULL OR o.created_at >= $4::timestamptz) "
    "AND ($5::timestamptz IS NULL OR o.created_at < $5::timestamptz) "
    "AND ($6::timestamptz IS NULL OR (o.created_at, o.id) > ($6::timestamptz, $7::uuid)) "
    "ORDER BY o.created_at, o.id LIMIT $8::integer) t";

/* A catalog import: each document is matched with the current version of its key (catalog,
 * provider, region, instance_type, purchase_option). The same figures → unchanged (the
 * current id is answered); other figures → a new row with version + 1 superseding it; no
 * current → version 1. Callers hold the catalog lock, so versions do not race. */
static const char *SQL_IMPORT =
    "WITH src AS (SELECT a.e, a.n, gen_random_uuid() AS nid FROM jsonb_array_elements($1::jsonb) "
    "WITH ORDINALITY AS a(e, n)), "
    "m AS (SELECT s.e, s.n, s.nid, c.id AS cur_id, c.version AS cur_version, c.price_per_hour AS "
    "cur_price, (c.id IS NOT NULL AND c.price_per_hour = (s.e->>'price_per_hour')::float8 AND "
    "c.currency = s.e->>'currency' AND c.gpu_model = s.e->>'gpu_model' AND c.gpus_per_instance = "
    "(s.e->>'gpus_per_instance')::integer AND c.gpu_memory_gb = (s.e->>'gpu_memory_gb')::float8) "
    "AS same FROM src s LEFT JOIN LATERAL (SELECT o.id, o.version, o.price_per_hour, o.currency, "
    "o.gpu_model, o.gpus_per_instance, o.gpu_memory_gb FROM offer o WHERE o.catalog = "
    "s.e->>'catalog' AND o.provider = s.e->>'provider' AND o.region = s.e->>'region' AND "
    "o.instance_type = s.e->>'instance_type' AND o.purchase_option = s.e->>'purchase_option' "
    "ORDER BY o.version DESC LIMIT 1) c ON true), "
    "ins AS (INSERT INTO offer SELECT (jsonb_populate_record(NULL::offer, m.e || "
    "jsonb_build_object('id', m.nid, 'version', coalesce(m.cur_version, 0) + 1, 'supersedes', "
    "m.cur_id, 'upload_id', $2::uuid, 'created_by', $3::text, 'created_at', now()))).* FROM m "
    "WHERE NOT m.same RETURNING id) "
    "SELECT json_build_object('created', count(*) FILTER (WHERE m.cur_id IS NULL), 'updated', "
    "count(*) FILTER (WHERE m.cur_id IS NOT NULL AND NOT m.same), 'unchanged', count(*) FILTER "
    "(WHERE m.same), 'stored', (SELECT count(*) FROM ins), 'items', coalesce(json_agg("
    "json_build_object('id', CASE WHEN m.same THEN m.cur_id ELSE m.nid END, 'status', CASE WHEN "
    "m.same THEN 'unchanged' WHEN m.cur_id IS NULL THEN 'created' ELSE 'updated' END, 'version', "
    "CASE WHEN m.same THEN m.cur_version ELSE coalesce(m.cur_version, 0) + 1 END, 'supersedes', "
    "CASE WHEN NOT m.same THEN m.cur_id END, 'previous_price_per_hour', CASE WHEN NOT m.same THEN "
    "m.cur_price END, 'provider', m.e->'provider', 'region', m.e->'region', 'instance_type', "
    "m.e->'instance_type', 'purchase_option', m.e->'purchase_option', 'gpu_model', "
    "m.e->'gpu_model', 'gpus_per_instance', m.e->'gpus_per_instance', 'gpu_memory_gb', "
    "m.e->'gpu_memory_gb', 'price_per_hour', m.e->'price_per_hour', 'currency', m.e->'currency') "
    "ORDER BY m.n), '[]')) FROM m";

/* One catalog import at a time: the versions of a key are numbered in order. */
static const char *SQL_CATALOG_LOCK =
    "SELECT pg_advisory_xact_lock(hashtext('capledger.offer_catalog'))";

enum store_status store_offer_import(struct store *s, const struct audit_actor *who,
                                     const json_t *docs, const json_t *upload, json_t **out)
{
    *out = NULL;
    char *text = store_doc_text(docs);
    if (!text)
        return STORE_ERROR;
    const char *upload_id = json_string_value(json_object_get(upload, "id"));
    const char *p[] = {text, upload_id, who->name};
    struct store_conn *c = store_acquire(s, 2000);
    if (!c) {
        free(text);
        return STORE_UNAVAILABLE;
    }
    json_t *result = NULL;
    enum store_status st = store_begin(c);
    if (st == STORE_OK)
        st = store_exec_tx(c, SQL_CATALOG_LOCK, 0, NULL, NULL);
    if (st == STORE_OK)
        st = store_json_tx(c, SQL_IMPORT, STORE_ARGS(p), &result);
    if (st == STORE_OK) {
        /* The upload row after the offers (their upload_id is checked at commit), so that it
         * records what was stored: new offers and versions, and the unchanged ones. */
        json_t *rec = json_copy((json_t *)upload);
        if (rec && json_object_set(rec, "inserted", json_object_get(result, "stored")) == 0 &&
            json_object_set(rec, "duplicates", json_object_get(result, "unchanged")) == 0)
            st = store_upload_insert_tx(c, rec, NULL);
        else
            st = STORE_ERROR;
        json_decref(rec);
    }
    if (st == STORE_OK) {
        /* The audit row keeps the counts; the offers are in the upload's rows. */
        json_t *change = json_pack("{s:O, s:O, s:O}", "created", json_object_get(result, "created"),
                                   "updated", json_object_get(result, "updated"), "unchanged",
                                   json_object_get(result, "unchanged"));
        st = change ? store_audit_record_tx(c, who, "offer.import_catalog", upload_id, change)
                    : STORE_ERROR;
        json_decref(change);
    }
    if (st == STORE_OK)
        st = store_commit(c);
    if (st != STORE_OK) {
        store_rollback(c);
        json_decref(result);
        result = NULL;
    }
    store_release(s, c);
    free(text);
    *out = result;
    return st;
}

enum store_status store_offer_create(struct store *s, const struct audit_actor *who,
                                     const json_t *doc, json_t **out)
{
    char *text = store_doc_text(doc);
    if (!text)
        return STORE_ERROR;
    const char *p[] = {text, who->name};
    enum store_status st =
        store_write_audited(s, who, "offer.create", SQL_CREATE, STORE_ARGS(p), out);
    free(text);
    return st;
}

enum store_status store_offer_create_many(struct store *s, const struct audit_actor *who,
                                          const json_t *docs, const json_t *upload, json_t **out)
{
    *out = NULL;
    char *text = store_doc_text(docs);
    if (!text)
        return STORE_ERROR;
    const char *p[] = {text, json_string_value(json_object_get(upload, "id")), who->name};
    enum store_status st =
        store_upload_with(s, who, upload, SQL_CREATE_MANY, STORE_ARGS(p), "offer.import", out);
    free(text);
    return st;
}

enum store_status store_offer_get(struct store *s, const char *id, json_t **out)
{
    const char *p[] = {id};
    return store_json(s, SQL_GET, STORE_ARGS(p), out);
}

enum store_status store_offer_list(struct store *s, const struct evlist_query *q, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", q->limit);
    const char *p[] = {q->purchase_option, q->gpu_model, q->provider, q->from, q->to,
                       q->after_at,        q->after_id,  lim,         q->q};
    return store_json(s, SQL_LIST, STORE_ARGS(p), out);
}
