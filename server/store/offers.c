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

static const char *SQL_GET = "SELECT to_jsonb(o) FROM offer o WHERE o.id = $1::uuid";

static const char *SQL_LIST =
    "SELECT coalesce(json_agg(j ORDER BY created_at, id), '[]') FROM ("
    "SELECT to_jsonb(o) AS j, o.created_at, o.id FROM offer o "
    "WHERE ($1::text IS NULL OR o.purchase_option = $1) AND ($2::text IS NULL OR o.gpu_model = $2) "
    "AND ($3::text IS NULL OR o.provider = $3) "
    "AND ($9::text IS NULL OR starts_with(lower(coalesce(o.name, o.instance_type)), lower($9))) "
    "AND ($4::timestamptz IS NULL OR o.created_at >= $4::timestamptz) "
    "AND ($5::timestamptz IS NULL OR o.created_at < $5::timestamptz) "
    "AND ($6::timestamptz IS NULL OR (o.created_at, o.id) > ($6::timestamptz, $7::uuid)) "
    "ORDER BY o.created_at, o.id LIMIT $8::integer) t";

enum store_status store_offer_create(struct store *s, const struct audit_actor *who,
                                     const json_t *doc, json_t **out)
{
    char *text = store_doc_text(doc);
    if (!text)
        return STORE_ERROR;
    const char *p[] = {text, who->name};
    enum store_status st = store_write_audited(s, who, "offer.create", SQL_CREATE, 2, p, out);
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
        store_upload_with(s, who, upload, SQL_CREATE_MANY, 3, p, "offer.import", out);
    free(text);
    return st;
}

enum store_status store_offer_get(struct store *s, const char *id, json_t **out)
{
    const char *p[] = {id};
    return store_json1(s, SQL_GET, 1, p, out);
}

enum store_status store_offer_list(struct store *s, const struct evlist_query *q, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", q->limit);
    const char *p[] = {q->purchase_option, q->gpu_model, q->provider, q->from, q->to,
                       q->after_at,        q->after_id,  lim,         q->q};
    return store_json1(s, SQL_LIST, 9, p, out);
}
