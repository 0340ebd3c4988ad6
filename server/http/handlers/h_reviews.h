/* Helpers the review, decision, log and alert handlers share (h_reviews.c defines them). */
#ifndef CAPLEDGER_HTTP_H_REVIEWS_H
#define CAPLEDGER_HTTP_H_REVIEWS_H

#include "http/internal.h"

/* The ETag of a versioned row: "v<version>" (quoted by resp_json_etag). */
void review_etag(const json_t *row, char *buf, size_t size);

/* Checks If-Match against the row's ETag. Returns 0 when it matches; else answers 428 (no
 * If-Match) or 412 (stale) for `what` and returns -1. "*" matches any. */
int review_if_match(struct req *r, const json_t *row, const char *what);

/* Parses ?name= as a non-negative integer (at most 2^53 - 1) into *out. Returns 1 when present
 * and valid, 0 when absent; -1 after appending a problem naming the parameter. */
int review_query_index(struct req *r, const char *name, long long *out, struct problems *p);

#endif
