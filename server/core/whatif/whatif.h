/* The what-if replay: a team's own job history replayed under candidate capacity arrangements
 * (a pool of R owned GPUs, overflow to another offer after a wait), exactly as docs/whatif.md
 * defines it (that file is the contract; this header only says how to call the replay).
 *
 * Whole seconds and milli-GPUs throughout, so the replay is deterministic: the same document
 * gives the same figures on every machine, and an independent implementation of the contract
 * gives them too. Pure and thread-safe: no I/O, no global mutable state.
 *
 * Two ways in. The CLI (and an inline API body) hands a whole document, jobs inline, to
 * whatif_replay_document. The API resolves a job selection from the stored runs itself: it
 * streams them into a struct whatif_jobs with whatif_jobs_add (no JSON tree per job), validates
 * the rest of the document with whatif_plan_parse, hashes the resolved document with
 * whatif_resolved_jcs (the canonical bytes of the same document with the jobs inline, without
 * ever building them as one tree) and replays with whatif_run. */
#ifndef CAPLEDGER_CORE_WHATIF_H
#define CAPLEDGER_CORE_WHATIF_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/problems.h"

/* Recorded in every result; changes whenever a figure for the same input could change. */
#define WHATIF_ENGINE_VERSION "capledger-whatif/1.0.0"

#define WHATIF_MAX_JOBS 2000000
#define WHATIF_MAX_ARRANGEMENTS 64
#define WHATIF_DEFAULT_BACKFILL_DEPTH 500
#define WHATIF_MAX_BACKFILL_DEPTH 100000
/* Bounds beyond which a figure is a unit mistake and the arithmetic would stop being exact. */
#define WHATIF_MAX_GPUS 1e6     /* a job's gpus, a pool's R, an overflow's max_gpus */
#define WHATIF_MAX_SECONDS 1e10 /* after_wait_s, provisioning_delay_s (317 years) */
#define WHATIF_MAX_WAIT_TARGET 1e10

/* One job of the history, times in epoch seconds (truncated). */
struct whatif_job {
    int64_t submitted, started, ended;
    int64_t g;       /* milli-GPUs: ⌊gpus·1000 + 0.5⌋ */
    uint32_t id_off; /* into whatif_jobs.ids */
    uint8_t flags;   /* WHATIF_JOB_* */
};
#define WHATIF_JOB_STARTED 1u
#define WHATIF_JOB_ENDED 2u
#define WHATIF_JOB_COMPLETED 4u /* state COMPLETED */

/* The jobs of one replay, grown by whatif_jobs_add (ids kept in one arena, NUL-terminated). */
struct whatif_jobs {
    struct whatif_job *v;
    size_t n, cap;
    char *ids;
    size_t ids_len, ids_cap;
    /* Kept for the resolved document (whatif_resolved_jcs): the run state of each job and its
     * gpus as given. */
    uint8_t *state;
    double *gpus;
};

void whatif_jobs_init(struct whatif_jobs *j);
void whatif_jobs_free(struct whatif_jobs *j);
/* Adds one job: id (1-255 bytes), times in epoch seconds (has_started / has_ended false for a
 * null), gpus ≥ 0 and ≤ WHATIF_MAX_GPUS, state a run state name ("COMPLETED", …). Faults
 * (ended before started, started before submitted, a bad state or gpus) are appended under ptr
 * (e.g. "/jobs/12") and return -1; more than WHATIF_MAX_JOBS jobs is a problem at "/jobs".
 * Returns -2 when memory runs out. */
int whatif_jobs_add(struct whatif_jobs *j, const char *id, size_t id_len, int64_t submitted,
                    bool has_started, int64_t started, bool has_ended, int64_t ended, double gpus,
                    const char *state, const char *ptr, struct problems *errs)
    __attribute__((warn_unused_result));
/* Reads an inline `jobs` array ([{id, submitted_at, started_at, ended_at, gpus, state}]) into j.
 * Every fault appended with its JSON Pointer (under "/jobs"). Returns 0 or -1. */
int whatif_jobs_from_json(const json_t *jobs, struct whatif_jobs *j, struct problems *errs)
    __attribute__((warn_unused_result));

enum whatif_policy { WHATIF_EASY_BACKFILL = 0, WHATIF_FIFO = 1 };

/* One arrangement after sweeps are expanded. */
struct whatif_arrangement {
    char name[160];
    int64_t pool_milli; /* R in milli-GPUs */
    double pool_gpus;   /* R as given (or as the sweep made it) */
    double pool_price;  /* per GPU-hour: price_per_hour / gpus_per_instance */
    enum whatif_policy policy;
    int64_t backfill_depth;
    bool overflow;
    double overflow_price; /* per GPU-hour */
    int64_t after_wait_s;  /* W */
    int64_t max_milli;     /* max_gpus in milli-GPUs, or -1 (none) */
    double max_gpus;
    int64_t provisioning_delay_s;
    size_t source; /* index of the arrangement in the document it was expanded from */
};

/* The document without its jobs: arrangements expanded, the wait target and the baseline. */
struct whatif_plan {
    struct whatif_arrangement a[WHATIF_MAX_ARRANGEMENTS];
    size_t n;
    bool has_target;
    double wait_p90_max_s;
    int baseline;     /* index into a, or -1 */
    char currency[4]; /* "" when no offer names one */
};

/* Validates everything of the document but `jobs` (which the caller reads: inline with
 * whatif_jobs_from_json, or from a selection) and expands sweeps. Every fault appended with its
 * JSON Pointer. Returns 0 or -1. Unknown members are refused, except `jobs` and `selection`
 * (what a resolved document records about where its jobs came from). */
int whatif_plan_parse(const json_t *doc, struct whatif_plan *plan, struct problems *errs)
    __attribute__((warn_unused_result));

/* The work one replay may ask of a server's engine slot: jobs × arrangements (about 3 s of one
 * core at the slowest measured, 1.0 s per 1,000,000 jobs under EASY, bench/bench_whatif.c): the
 * largest selection (WHATIF_MAX_JOBS) once, or the Alibaba trace under a sweep of 64; an EASY
 * arrangement counted once more for every WHATIF_DEFAULT_BACKFILL_DEPTH jobs its window looks
 * at beyond the first (up to the number of jobs). The CLI has no such bound. */
#define WHATIF_MAX_JOB_REPLAYS 3000000
/* A problem at /arrangements when n jobs under the plan's arrangements exceed it; 0 or -1. */
int whatif_check_work(size_t n, const struct whatif_plan *plan, struct problems *errs);

/* Replays the jobs under every arrangement of the plan and builds the result document
 * (docs/whatif.md "Output"), with input_sha256 as given. New reference, or NULL when memory
 * runs out. */
json_t *whatif_run(const struct whatif_jobs *jobs, const struct whatif_plan *plan,
                   const char *input_sha256) __attribute__((warn_unused_result));

/* The whole replay of a document with inline jobs: validation (NULL after appending every
 * problem), input_sha256 over its RFC 8785 bytes, the replay and its result. */
json_t *whatif_replay_document(const json_t *doc, struct problems *errs)
    __attribute__((warn_unused_result));

/* The RFC 8785 bytes of the resolved document: doc (borrowed; its own `jobs` member, if any, is
 * left out) with `jobs` set to the jobs of j as inline objects {id, submitted_at, started_at,
 * ended_at, gpus, state} (times as whole-second UTC "…Z", null where absent), in j's order.
 * The same bytes jcs_serialize gives for that document built as one tree. Writes the lower-case
 * hex SHA-256 into hex. malloc'd (length in *len), NULL when memory runs out or doc cannot be
 * canonicalized. */
char *whatif_resolved_jcs(const json_t *doc, const struct whatif_jobs *j, size_t *len, char hex[65])
    __attribute__((warn_unused_result));

/* The per-job outcome of one arrangement's replay (for tests and the benchmark). Arrays are
 * indexed by job (j's order); where: 0 not replayed, 1 pool, 2 overflow, 3 unschedulable;
 * start: epoch seconds of the replayed start (pool, or overflow with its provisioning delay). */
struct whatif_outcome {
    uint8_t *where;
    int64_t *start;
    int64_t replay_end; /* epoch seconds of the last replayed completion (or the first submit) */
};
enum { WHATIF_NOT_REPLAYED = 0, WHATIF_POOL = 1, WHATIF_OVERFLOW = 2, WHATIF_UNSCHEDULABLE = 3 };
/* Replays arrangement a over j; out's arrays are allocated (free with whatif_outcome_free).
 * Returns 0, or -1 when memory runs out. */
int whatif_replay_one(const struct whatif_jobs *j, const struct whatif_arrangement *a,
                      struct whatif_outcome *out) __attribute__((warn_unused_result));
void whatif_outcome_free(struct whatif_outcome *out);

/* A result document (borrowed) as a terminal table and a plain sentence per arrangement.
 * malloc'd, NULL when memory runs out or doc is not a result. */
char *whatif_format_table(const json_t *result) __attribute__((warn_unused_result));

#endif
