/* GPU telemetry attached to benchmarks: samples streamed with COPY, one upload record per
 * upload carrying the summary, and the figures derived for the benchmark. */
#ifndef CAPLEDGER_STORE_TELEMETRY_H
#define CAPLEDGER_STORE_TELEMETRY_H

#include "store/audit.h"
#include "store/evlist.h"
#include "store/store.h"
#include "store/uploads.h"

/* The COPY column order: upload_id, benchmark_id, then core/formats/telemetry.h's
 * TELEMETRY_COPY_COLUMNS. Send rows with store_upload_tx_send. */
enum store_status store_telemetry_begin(struct store *s, struct upload_tx **out) STORE_MUSTCHECK;
/* Ends COPY; stores the staged samples not already stored (a sample is identified by
 * benchmark, GPU and timestamp; one without a timestamp is a duplicate when an earlier upload to
 * the benchmark had the same body_sha256); when some were added, derives the benchmark's duty
 * cycle (mean over all its samples) and memory peak (maximum) into benchmark_derived for those
 * of the two the benchmark did not give itself. Sets rec's inserted and duplicates, writes the
 * upload record rec and the audit row; commits. *derived (new reference; JSON null when the
 * benchmark has none) is {gpu_duty_cycle, memory_peak_gb, telemetry_upload_id (the last upload
 * that added samples), telemetry_upload_ids (all of them, in order), updated_at}. u is freed
 * whatever the result. */
enum store_status store_telemetry_finish(struct upload_tx *u, const struct audit_actor *who,
                                         json_t *rec, const char *benchmark_id,
                                         json_t **derived) STORE_MUSTCHECK;
/* The telemetry uploads of benchmark q->benchmark_id (records with their summaries), keyset on
 * (created_at, id). */
enum store_status store_telemetry_list(struct store *s, const struct evlist_query *q,
                                       json_t **out) STORE_MUSTCHECK;

#endif
