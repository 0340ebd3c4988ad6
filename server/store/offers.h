/* Capacity offers: the scenario `offer` of docs/cost-model.md plus provider, region,
 * instance_type, term and an optional name. A shared catalogue (not team data), append-only:
 * a price change is a new offer, so a comparison citing an offer id stays reproducible. */
#ifndef CAPLEDGER_STORE_OFFERS_H
#define CAPLEDGER_STORE_OFFERS_H

#include "store/audit.h"
#include "store/evlist.h"
#include "store/store.h"

/* One offer from a validated document (borrowed). */
enum store_status store_offer_create(struct store *s, const struct audit_actor *who,
                                     const json_t *doc, json_t **out) STORE_MUSTCHECK;
/* A price sheet: every document of docs (a validated array, borrowed) and the upload record
 * upload (the columns of table upload; its id is the offers' upload_id) in one transaction
 * with one audit row. *out: the offers in input order. */
enum store_status store_offer_create_many(struct store *s, const struct audit_actor *who,
                                          const json_t *docs, const json_t *upload,
                                          json_t **out) STORE_MUSTCHECK;
/* A price catalog (documents with `catalog` set, validated; borrowed) as offer versions, with
 * the upload record upload, in one transaction: a key's current version is kept when its
 * figures are the same, else superseded by a new version (the old row stays, readable by id).
 * The upload row gets inserted = the offers stored, duplicates = the unchanged ones.
 * *out: {created, updated, unchanged, stored, items: [{id, status, version, supersedes,
 * previous_price_per_hour, …}]} in input order. */
enum store_status store_offer_import(struct store *s, const struct audit_actor *who,
                                     const json_t *docs, const json_t *upload,
                                     json_t **out) STORE_MUSTCHECK;
/* Any version, with superseded_by (NULL while current). */
enum store_status store_offer_get(struct store *s, const char *id, json_t **out) STORE_MUSTCHECK;
/* Current offers only (none supersedes them). Filters: provider, gpu_model, purchase_option,
 * created from/to. */
enum store_status store_offer_list(struct store *s, const struct evlist_query *q,
                                   json_t **out) STORE_MUSTCHECK;

#endif
