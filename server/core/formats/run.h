/* A run: one job accounting record (docs/evidence.md "Job accounting"), as stored in the runs
 * table.
 *
 * Readers of job accounting outputs (core/formats/sacct.c) and the JSON body of POST /runs both
 * produce this plain struct; run_check holds the validation they share, and run_copy_line renders a
 * row for PostgreSQL COPY. Text fields live in fixed arrays so that a million-row upload parses
 * with no allocation per row; "" means null for the optional ones. */
#ifndef CAPLEDGER_CORE_RUN_H
#define CAPLEDGER_CORE_RUN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/formats/pgcopy.h"
#include "core/problems.h"

#define RUN_TEXT_MAX 128     /* bytes with the NUL: text fields hold at most 127 bytes */
#define RUN_EXIT_CODE_MAX 24 /* "4294967295:4294967295" */
#define RUN_GPUS_MAX 1e6     /* more GPUs than any cluster has: a unit mistake */

enum run_state {
    RUN_STATE_UNSET = 0,
    RUN_STATE_COMPLETED,
    RUN_STATE_FAILED,
    RUN_STATE_CANCELLED,
    RUN_STATE_TIMEOUT,
    RUN_STATE_PREEMPTED,
    RUN_STATE_NODE_FAIL,
    RUN_STATE_OUT_OF_MEMORY,
    RUN_STATE_BOOT_FAIL,
    RUN_STATE_DEADLINE,
};

struct run {
    char external_id[RUN_TEXT_MAX]; /* required */
    char cluster[RUN_TEXT_MAX];     /* JSON only; a sacct upload names it in ?cluster= */
    char team[RUN_TEXT_MAX];
    char user[RUN_TEXT_MAX];
    char workload_class[RUN_TEXT_MAX]; /* "" → classed at upload (?class=, the cluster's map) */
    char partition[RUN_TEXT_MAX];      /* raw: sacct Partition (else QOS), openb qos */
    char gpu_model[RUN_TEXT_MAX];      /* sacct typed gres (gres/gpu:a100_80=4 → a100_80) */
    /* How a workload recognises its runs (docs/evidence.md "Runs belong to workloads"): sacct
     * WCKey, Comment and JobName; JSON wckey, comment, job_name and workload */
    char wckey[RUN_TEXT_MAX];
    char comment[RUN_TEXT_MAX];
    char job_name[RUN_TEXT_MAX];
    char workload[RUN_TEXT_MAX];
    int64_t submitted_at_s; /* epoch seconds (a fraction in JSON input is dropped) */
    int64_t started_at_s;
    int64_t ended_at_s;
    bool has_submitted, has_started, has_ended;
    double gpus; /* may be fractional (shared or MIG GPUs) */
    enum run_state state;
    char exit_code[RUN_EXIT_CODE_MAX]; /* "0:0" (exit status:signal) */
    double gpu_utilization;            /* 0..1; NAN = unknown */
};

/* "COMPLETED" …; NULL for RUN_STATE_UNSET. */
const char *run_state_name(enum run_state s);
/* Exact upper-case name of a final state → true and *out. */
bool run_state_parse(const char *s, size_t len, enum run_state *out);

/* Sets every field to null/zero (gpu_utilization NAN). */
void run_clear(struct run *r);

/* Copies s[0..len) into a RUN_TEXT_MAX field; false when it does not fit. */
bool run_set_text(char dst[RUN_TEXT_MAX], const char *s, size_t len)
    __attribute__((warn_unused_result));

/* Checks what every run must satisfy: an external id and a state, gpus in [0, RUN_GPUS_MAX],
 * started >= submitted, ended >= started (ended >= submitted when it never started),
 * gpu_utilization in [0, 1], exit_code "N:M". Each fault is added with pointer
 * "<pointer_prefix>/<field>" and the given line (0 for JSON). Returns the number added. */
size_t run_check(const struct run *r, const char *pointer_prefix, long lineno,
                 struct problems *errs);

/* Validates one element of a POST /runs JSON array: the fields of docs/evidence.md's run, unknown
 * fields rejected, times RFC 3339 with an offset. obj is borrowed. Returns 0 when valid (out
 * filled), -1 when problems were added (each named "<pointer_prefix>/<field>"). */
int run_from_json(const json_t *obj, const char *pointer_prefix, struct run *out,
                  struct problems *errs) __attribute__((warn_unused_result));

/* The warnings of a runs upload (new reference, an array of {code, message}) from the runs
 * stored per class ({"production": 3, "unclassified": 2}): runs left without a class count
 * toward no class's evidence, and the warning says how to class them. cluster may be NULL. */
json_t *run_upload_warnings(const json_t *classes, const char *cluster);

/* The columns of run_copy_binary, in order (COPY run (…) FROM STDIN (FORMAT binary)). */
#define RUN_BINARY_COLUMNS                                                                         \
    "id, cluster, external_id, team, \"user\", workload_class, partition, gpu_model, "             \
    "submitted_at, "                                                                               \
    "started_at, ended_at, gpus, state, exit_code, gpu_utilization, upload_id, wckey, comment, "   \
    "job_name, workload"
#define RUN_BINARY_FIELDS 20

/* Appends one binary COPY row (after pgcopy_bin_header) in RUN_BINARY_COLUMNS order: id 0
 * (run_copy_binary_set_id gives the real one once the run is known to be stored), the run with
 * its cluster, the class it was given (klass, NULL: none) and upload_id (a UUID's text).
 * Returns false when upload_id is not a UUID; check pgcopy_ok(out) once after the rows. */
bool run_copy_binary(const struct run *r, const char *klass, const char *upload_id,
                     struct pgcopy_buf *out) __attribute__((warn_unused_result));
/* Sets the id of the row run_copy_binary appended at row (its first byte). */
void run_copy_binary_set_id(char *row, int64_t id);

#endif
