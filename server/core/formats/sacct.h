/* Reader of Slurm `sacct --parsable2` (`-P`) and `--parsable` (`-p`, a trailing '|') output.
 *
 * Incremental: the caller feeds one complete line at a time (core/formats/linebuf.c splits a
 * streamed body) and gets a struct run per finished job, so an upload of a million lines is parsed
 * in constant memory and each run can go straight into COPY. The header line (or, for
 * `--noheader`, the `-o` field list given in the options) fixes the columns.
 *
 * Mapping (docs/evidence.md "Job accounting"): JobIDRaw, else JobID → external_id; Account → team
 * unless a team is given or mapped; User; Partition (else QOS) → workload_class unless mapped;
 * Submit, Start
 * (`Unknown`/`None` → null), End; State normalised (`CANCELLED by 1234` → CANCELLED, a
 * truncation '+' dropped); ExitCode; GPUs from AllocTRES (`gres/gpu=8`, `gres/gpu:h100=8`;
 * when typed and plain keys both appear the plain one is the total, else typed counts add up;
 * older AllocGRES `gpu:k80:2` when AllocTRES is absent; neither → 0).
 *
 * Job steps (`123.batch`, `123.0`, `123.extern`) are skipped unless include_steps; jobs not
 * finished (PENDING, RUNNING, REQUEUED, SUSPENDED and the other transient states Slurm prints:
 * CONFIGURING, COMPLETING, RESIZING, STOPPED, SIGNALING, STAGE_OUT, REQUEUE_FED, REQUEUE_HOLD,
 * RESV_DEL_HOLD) are counted as unfinished. A JobName (or other free-text) last column may
 * contain '|': the rest of the line is its value. */
#ifndef CAPLEDGER_CORE_SACCT_H
#define CAPLEDGER_CORE_SACCT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/problems.h"
#include "core/formats/run.h"
#include "core/formats/timefmt.h"

#define SACCT_MAX_COLUMNS 256

struct sacct_options {
    const char *fields; /* `--noheader` files: the `-o` list ("JobID,State,…"); NULL → header */
    const char *team;   /* ?team=: every run's team instead of Account */
    bool include_steps; /* ?steps=true */
    /* Times without an offset are local to the upload's zone (?tz=); NULL → UTC. */
    timefmt_local_to_utc_fn local_to_utc;
    void *tz_ctx;
    /* Optional mappings (may be NULL): a name, or NULL to keep Account / Partition-or-QOS. The
     * returned string is borrowed until the call returns. */
    const char *(*map_team)(const char *account, void *ctx);
    const char *(*map_class)(const char *partition, const char *qos, void *ctx);
    void *map_ctx;
};

enum sacct_column {
    SACCT_COL_JOBID,
    SACCT_COL_JOBIDRAW,
    SACCT_COL_STATE,
    SACCT_COL_SUBMIT,
    SACCT_COL_START,
    SACCT_COL_END,
    SACCT_COL_ACCOUNT,
    SACCT_COL_USER,
    SACCT_COL_PARTITION,
    SACCT_COL_QOS,
    SACCT_COL_EXITCODE,
    SACCT_COL_ALLOCTRES,
    SACCT_COL_ALLOCGRES,
    SACCT_COL_WCKEY,
    SACCT_COL_COMMENT,
    SACCT_COL_JOBNAME,
    SACCT_COL_COUNT
};

struct sacct_counts {
    long runs;       /* finished jobs returned as SACCT_RUN */
    long steps;      /* job steps skipped (include_steps false) */
    long unfinished; /* jobs not finished: docs/evidence.md's `skipped` */
    long rejected;   /* lines with problems */
};

struct sacct_reader {
    struct sacct_options opt;
    int col[SACCT_COL_COUNT]; /* index of each known column in a line, -1 when absent */
    int ncols;
    bool have_columns;
    bool trailing_pipe;  /* the header ended in '|' (`-p`) */
    bool free_text_last; /* the last column may contain '|' */
    bool fatal;          /* the columns are unusable: every line is refused */
    struct sacct_counts counts;
};

enum sacct_result {
    SACCT_RUN,        /* *out holds a valid finished job */
    SACCT_NOTHING,    /* the header line or a blank line */
    SACCT_STEP,       /* a job step, skipped */
    SACCT_UNFINISHED, /* a job not finished, skipped */
    SACCT_REJECTED,   /* problems were added for this line; go on with the next */
    SACCT_FATAL,      /* the header (or field list) lacks a required column: stop */
};

/* Copies the options (the strings they point to must outlive the reader). With opt->fields
 * the columns are known at once: a required column missing → problems naming it, -1. */
int sacct_reader_init(struct sacct_reader *r, const struct sacct_options *opt,
                      struct problems *errs) __attribute__((warn_unused_result));

/* One line without its line ending; lineno is 1-based, for problems. out is overwritten. */
enum sacct_result sacct_feed_line(struct sacct_reader *r, const char *line, size_t len, long lineno,
                                  struct run *out, struct problems *errs)
    __attribute__((warn_unused_result));

/* The GPU type of an AllocTRES value: "gres/gpu:a100_80=4,gres/gpu=4" → "a100_80"; "" when the
 * GPUs are untyped or of two types. */
void sacct_tres_gpu_model(const char *tres, size_t len, char model[RUN_TEXT_MAX]);
/* GPUs of an AllocTRES value ("billing=28,cpu=24,gres/gpu:a100_80=1,gres/gpu=1,mem=256G").
 * false when a gres/gpu count is not a number. */
bool sacct_tres_gpus(const char *tres, size_t len, double *gpus)
    __attribute__((warn_unused_result));

#endif
