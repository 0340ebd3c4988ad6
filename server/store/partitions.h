/* Time partitions of runs and telemetry samples (db/migrations/0060_partition_by_month.sql):
 * months made ahead, the default partition split into months, retention by dropping months. */
#ifndef CAPLEDGER_STORE_PARTITIONS_H
#define CAPLEDGER_STORE_PARTITIONS_H

#include <stddef.h>

#include "store/store.h"

/* Makes the partitions of the current UTC month and the `ahead` next ones, moves rows of the
 * default partitions into months up to then, and with retention_months > 0 drops the months
 * that ended that many whole months before the current one began (and older default rows).
 * One instance at a time: *out is {skipped: true} when another holds the maintenance lock, else
 * {created: [names], dropped: [names], deleted_default_rows}. On failure, why gets
 * PostgreSQL's SQLSTATE and message (for the log) and nothing is changed. */
enum store_status store_partitions_maintain(struct store *s, int ahead, int retention_months,
                                            json_t **out, char *why,
                                            size_t why_size) STORE_MUSTCHECK;

#endif
