/* A parsed run as one line of text, for tests and fuzz targets that compare what a reader
 * parsed with a sample's expected rows: the columns external_id, team, user, workload_class,
 * partition, gpu_model, submitted_at, started_at, ended_at, gpus, state, exit_code,
 * gpu_utilization in PostgreSQL's COPY text form (times RFC 3339 UTC, \N for null). The server
 * itself stores runs through binary COPY (run_copy_binary). Built only into tests. */
#ifndef CAPLEDGER_TESTS_ORACLE_RUN_TEXT_H
#define CAPLEDGER_TESTS_ORACLE_RUN_TEXT_H

#include "core/formats/pgcopy.h"
#include "core/formats/run.h"

/* Appends the row; check pgcopy_ok(out) once after the rows. */
void run_copy_line(const struct run *r, struct pgcopy_buf *out);

#endif
