/* Shared between the replay's own files only. */
#ifndef CAPLEDGER_CORE_WHATIF_PRIVATE_H
#define CAPLEDGER_CORE_WHATIF_PRIVATE_H

#include "core/whatif/whatif.h"

/* A problem per job whose id another job already has; 0 when every id is unique. */
int whatif__ids_unique(const struct whatif_jobs *j, struct problems *errs);

/* Quantile k/100 (k = 0 … 100) of sorted[0..n) with linear interpolation between ranks, as
 * PostgreSQL's percentile_cont: rank k·(n−1)/100, computed exactly in integers. */
double whatif__quantile(const int64_t *sorted, size_t n, int k);

#endif
