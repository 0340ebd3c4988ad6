/* Upload records: one per upload (runs, telemetry, price sheets, load-test imports), written in
 * the same transaction as the data it brought, so a decision can cite the upload's id. */
#ifndef CAPLEDGER_STORE_UPLOADS_H
#define CAPLEDGER_STORE_UPLOADS_H

#include "store/evlist.h"
#include "store/store.h"

/* A fresh random (version 4) UUID as text: upload ids are chosen before the rows that refer
 * to them are streamed. */
void store_new_uuid(char out[37]);

/* JSON text of a document for a query parameter: RFC 8785 numbers (shortest round trip), so
 * 0.76 stays 0.76 in jsonb columns. malloc'd; NULL when v cannot be represented. */
char *store_doc_text(const json_t *v) STORE_MUSTCHECK;

/* Inserts the upload row described by rec (the columns of table upload, as JSON; borrowed),
 * inside the caller's transaction. *out (may be NULL) receives the stored row. */
enum store_status store_upload_insert_tx(struct store_conn *c, const json_t *rec,
                                         json_t **out) STORE_MUSTCHECK;
enum store_status store_upload_get(struct store *s, const char *id, json_t **out) STORE_MUSTCHECK;
/* Uploads visible to the caller: q->teams_json scopes by team (uploads without a team are
 * visible to their uploader, q->user_id); filters team, kind (q->kind), created
 * from/to. Newest last, keyset on (created_at, id). */
enum store_status store_upload_list(struct store *s, const struct evlist_query *q,
                                    json_t **out) STORE_MUSTCHECK;

#endif
