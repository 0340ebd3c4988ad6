/* Reader of the Alibaba GPU cluster trace v2023 ("openb", ATC'23) pod list → runs.
 *
 * openb_pod_list_*.csv has one pod per line: name, cpu_milli, memory_mib, num_gpu, gpu_milli,
 * gpu_spec, qos, pod_phase, creation_time, deletion_time, scheduled_time. It fits the run
 * model: name → external_id; num_gpu × gpu_milli / 1000 → gpus (GPU-sharing pods hold a
 * fraction of one GPU: gpu_milli 460 → 0.46); qos (LS, BE, Burstable, Guaranteed) → the
 * raw partition (classed at upload, like a Slurm partition, by the cluster's map);
 * creation/scheduled/deletion → submitted/started/ended, which the trace gives in seconds from its
 * (undisclosed) start, so the caller names the epoch of that start. The trace has no user or team:
 * the team comes from the options.
 *
 * pod_phase is the phase when the pod was last seen, and every pod was then deleted:
 * Succeeded → COMPLETED, Failed → FAILED, Running → CANCELLED (deleted while running — for a
 * long-running LS service that is its normal end, but the run model has no closer state), and
 * Pending → CANCELLED with no start (deleted before it was scheduled). Incremental, one line at
 * a time, like core/formats/sacct.c. */
#ifndef CAPLEDGER_CORE_OPENB_H
#define CAPLEDGER_CORE_OPENB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/problems.h"
#include "core/formats/run.h"

struct openb_options {
    int64_t trace_start_s; /* epoch seconds of the trace's time 0 */
    const char *team;      /* every run's team; NULL → none */
};

enum openb_column {
    OPENB_NAME,
    OPENB_NUM_GPU,
    OPENB_GPU_MILLI,
    OPENB_QOS,
    OPENB_POD_PHASE,
    OPENB_CREATION,
    OPENB_DELETION,
    OPENB_SCHEDULED,
    OPENB_COL_COUNT
};

struct openb_reader {
    struct openb_options opt;
    int col[OPENB_COL_COUNT];
    int ncols;
    bool have_header;
    bool fatal;
    long runs, rejected;
};

enum openb_result { OPENB_RUN, OPENB_NOTHING, OPENB_REJECTED, OPENB_FATAL };

void openb_reader_init(struct openb_reader *r, const struct openb_options *opt);
/* The first line is the header (a missing column → problems naming it, OPENB_FATAL). */
enum openb_result openb_feed_line(struct openb_reader *r, const char *line, size_t len, long lineno,
                                  struct run *out, struct problems *errs)
    __attribute__((warn_unused_result));

#endif
