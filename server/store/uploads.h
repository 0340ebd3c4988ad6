/* Upload records: one per upload (runs, telemetry, price sheets, load-test imports), written in
 * the same transaction as the data it brought, so a decision can cite the upload's id. */
#ifndef CAPLEDGER_STORE_UPLOADS_H
#define CAPLEDGER_STORE_UPLOADS_H

#include <stdint.h>

#include "store/audit.h"
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
/* Uploads visible to the caller: q->scope scopes by team (uploads without a team are
 * visible to their uploader, q->user_id); filters team, kind (q->kind), created
 * from/to. Newest last, keyset on (created_at, id). */
enum store_status store_upload_list(struct store *s, const struct evlist_query *q,
                                    json_t **out) STORE_MUSTCHECK;

/* In one transaction: inserts the upload record rec (borrowed), runs sql (which returns one
 * JSON value, into *out), records `action` in the audit trail (target: the result's "id" when
 * it has one, else the upload's; change: the result), commits. For small uploads whose rows
 * fit one statement (price sheets, load-test imports). */
enum store_status store_upload_with(struct store *s, const struct audit_actor *who,
                                    const json_t *rec, const char *sql, int nparams,
                                    const char *const *params, const char *action,
                                    json_t **out) STORE_MUSTCHECK;

/* A bulk upload in progress: one connection inside a transaction, with COPY streaming rows
 * into a table. Runs and telemetry use it; the upload record and its audit row are written
 * by store_upload_tx_commit in the same transaction as the rows. */
struct upload_tx;

/* Checks out a connection, BEGINs, runs setup_sql (may be NULL: e.g. a CREATE TEMP TABLE),
 * then starts copy_sql (may be NULL: the caller runs its own statements and COPYs on
 * store_upload_tx_conn). *out is NULL on failure. */
enum store_status store_upload_tx_begin(struct store *s, const char *setup_sql,
                                        const char *copy_sql,
                                        struct upload_tx **out) STORE_MUSTCHECK;
/* Sends COPY text rows (whole rows only). */
enum store_status store_upload_tx_send(struct upload_tx *u, const char *data,
                                       size_t len) STORE_MUSTCHECK;
/* Ends COPY; *rows gets the rows copied. The connection then takes more statements. */
enum store_status store_upload_tx_end_copy(struct upload_tx *u, long *rows) STORE_MUSTCHECK;
/* The transaction's connection (after end_copy) for the caller's own statements. */
struct store_conn *store_upload_tx_conn(struct upload_tx *u);
/* Inserts the upload record rec (borrowed), audits `action` with change (borrowed, may be
 * NULL: then the record itself), commits, releases and frees u whatever the result. */
enum store_status store_upload_tx_commit(struct upload_tx *u, const struct audit_actor *who,
                                         const json_t *rec, const char *action,
                                         const json_t *change) STORE_MUSTCHECK;
/* Aborts COPY, rolls back, releases and frees u. NULL is allowed. */
void store_upload_tx_abort(struct upload_tx *u);

/* *known = whether PostgreSQL's zone database has the IANA zone name. */
enum store_status store_tz_known(struct store *s, const char *name, int *known) STORE_MUSTCHECK;
/* The UTC epoch of the start of a local hour in zone; *exists = 0 when that local hour does
 * not exist there (skipped by a daylight-saving change). */
enum store_status store_tz_local_hour(struct store *s, const char *zone, int year, int month,
                                      int day, int hour, int64_t *epoch_s,
                                      int *exists) STORE_MUSTCHECK;

#endif
