/* Helpers the review, decision, log and alert handlers share (h_reviews.c defines them). */
#ifndef CAPLEDGER_HTTP_H_REVIEWS_H
#define CAPLEDGER_HTTP_H_REVIEWS_H

#include "http/internal.h"

/* Parses ?name= as a non-negative integer (at most 2^53 - 1) into *out. Returns 1 when present
 * and valid, 0 when absent; -1 after appending a problem naming the parameter. */
int review_query_index(struct req *r, const char *name, long long *out, struct problems *p);

#endif
