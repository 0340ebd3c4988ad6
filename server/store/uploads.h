/* Upload records: one per upload (runs, telemetry, price sheets, load-test imports), written in
 * the same transaction as the data it brought, so a decision can cite the upload's id. */
#ifndef CAPLEDGER_STORE_UPLOADS_H
#define CAPLEDGER_STORE_UPLOADS_H

#include <stdint.h>

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

/* *known = whether PostgreSQL's zone database has the IANA zone name. */
enum store_status store_tz_known(struct store *s, const char *name, int *known) STORE_MUSTCHECK;
/* The UTC epoch of the start of a local hour in zone; *exists = 0 when that local hour does
 * not exist there (skipped by a daylight-saving change). */
enum store_status store_tz_local_hour(struct store *s, const char *zone, int year, int month,
                                      int day, int hour, int64_t *epoch_s,
                                      int *exists) STORE_MUSTCHECK;

#endif
