/* GPU telemetry readers and the per-benchmark telemetry summary.
 *
 * Three tools' own outputs are read, each fed one complete line at a time (core/formats/linebuf.c
 * splits a streamed body), so a million-line upload is read in constant memory:
 *   - `nvidia-smi --query-gpu=… --format=csv[,noheader][,nounits]`: one line per GPU per
 *     query; units in the header (`memory.used [MiB]`) and repeated in the values
 *     (`81559 MiB`); `[N/A]`, `[Not Supported]`, `[Requested functionality has been
 *     deprecated]` read as unknown; with `noheader` the query list is given in the options
 *     (aliases such as gpu_name, gpu_uuid, gpu_bus_id are understood). The timestamp column
 *     (`2024/03/13 07:04:28.836`) is the host's local time: converted with the callback.
 *   - `nvidia-smi dmon [-s …] [-o DT]`: a `# gpu pwr …` header and a `# Idx W …` units line
 *     (repeated now and then); the columns depend on -s and on the driver (old `temp` vs
 *     `gtemp mtemp`, `jpg ofa`), values can be wider than their header, so lines are split on
 *     whitespace and matched to the header by position; `-` is unknown. With `-o DT` the Date
 *     and Time columns give timestamps; Time alone (no date) gives none.
 *   - dcgm-exporter Prometheus text: one metric per line; the lines of one scrape are gathered
 *     per GPU (UUID label, with GPU_I_ID for a MIG instance; else Hostname and gpu) and become
 *     one sample per GPU when the scrape ends (a metric repeats for a GPU, the Prometheus
 *     timestamp changes, or the input ends). PROF_* fields are 0–1 ratios, DEV_GPU_UTIL 0–100.
 *
 * Duty cycle, in [0, 1]: DCGM_FI_PROF_GR_ENGINE_ACTIVE when present, else PROF_SM_ACTIVE, else
 * the utilization counter (DEV_GPU_UTIL, nvidia-smi utilization.gpu, dmon sm — all the same
 * NVML "GPU busy" percentage) / 100. Memory is in GiB (2^30 bytes; the *_gb names follow the
 * API, and GPU memory is sold in these units: an "80 GB" H100 reports 81559 MiB = 79.6 GiB).
 * DCGM's total memory is FB_USED + FB_FREE + FB_RESERVED. */
#ifndef CAPLEDGER_CORE_TELEMETRY_H
#define CAPLEDGER_CORE_TELEMETRY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/formats/formats.h"
#include "core/formats/pgcopy.h"
#include "core/problems.h"
#include "core/formats/timefmt.h"

#define TELEMETRY_GPU_MAX 128              /* bytes of a GPU identity, with the NUL */
#define TELEMETRY_MODEL_MAX 64             /* bytes of a GPU model name, with the NUL */
#define TELEMETRY_MAX_COLUMNS 512          /* nvidia-smi can print 212 query fields */
#define TELEMETRY_MAX_GPUS_PER_SCRAPE 1024 /* DCGM: GPUs gathered before a scrape ends */
#define TELEMETRY_SUMMARY_MAX_GPUS 65536
#define TELEMETRY_DEFAULT_IDLE_BELOW 0.05
/* The duty-cycle series of a benchmark (GET /benchmarks/{id}/telemetry/series): at most this
 * many points (equal time buckets), idle stretches listed when they last at least
 * TELEMETRY_SERIES_DEFAULT_IDLE_MIN_S seconds (unless ?idle_min_s= says otherwise), the first
 * TELEMETRY_SERIES_MAX_STRETCHES of them. */
#define TELEMETRY_SERIES_DEFAULT_POINTS 300
#define TELEMETRY_SERIES_MAX_POINTS 2000
#define TELEMETRY_SERIES_DEFAULT_IDLE_MIN_S 10
#define TELEMETRY_SERIES_MAX_STRETCHES 200
#define TELEMETRY_DUTY_BINS 1001 /* summary histogram: duty cycle in steps of 0.001 */

/* TELEMETRY_NVIDIA_SMI (--query-gpu --format=csv), TELEMETRY_DMON, TELEMETRY_DCGM: the list in
 * core/formats/formats.h. */
enum telemetry_format {
    TELEMETRY_UNKNOWN = 0,
    FORMATS_TELEMETRY(FORMAT_ENUM) TELEMETRY_FORMAT_END
};

enum telemetry_duty_source {
    TELEMETRY_DUTY_NONE = 0,
    TELEMETRY_DUTY_GR_ENGINE_ACTIVE,
    TELEMETRY_DUTY_SM_ACTIVE,
    TELEMETRY_DUTY_GPU_UTIL,
};

/* One GPU at one moment. Unknown numbers are NAN. */
struct telemetry_sample {
    int64_t ts_ms; /* epoch milliseconds, when has_ts */
    bool has_ts;
    char gpu[TELEMETRY_GPU_MAX]; /* UUID, else PCI bus id, else index, else name, else "0" */
    double duty_cycle;           /* 0..1 */
    enum telemetry_duty_source duty_source;
    double sm_active;       /* 0..1, DCGM PROF_SM_ACTIVE only */
    double memory_used_gb;  /* GiB */
    double memory_total_gb; /* GiB */
    double power_w;
    char model[TELEMETRY_MODEL_MAX]; /* nvidia-smi name, DCGM modelName; "" when not printed */
    bool mig;                        /* a MIG instance, or a GPU in MIG mode */
};

/* The COPY column order of telemetry_copy_line (the caller adds its benchmark id). */
#define TELEMETRY_COPY_COLUMNS "ts, gpu, duty_cycle, memory_used_gb, memory_total_gb, power_w"

struct telemetry_options {
    const char *fields; /* nvidia-smi `noheader`: the --query-gpu list; NULL → a header line */
    timefmt_local_to_utc_fn local_to_utc; /* nvidia-smi / dmon local times; NULL → UTC */
    void *tz_ctx;
    /* DCGM: the scrape time (epoch ms) of lines without a Prometheus timestamp — the exporter
     * prints none, so a client that scrapes it on a schedule names the time with ?at=. Such an
     * upload then holds one scrape: a metric repeating for a GPU without a timestamp is a
     * problem that stops the reader (all of its samples would otherwise share the time). */
    bool has_at;
    int64_t at_ms;
};

/* Called for every sample; a non-zero return stops the reader (telemetry_feed_line → -1). */
typedef int (*telemetry_sample_fn)(const struct telemetry_sample *s, void *ctx);

struct telemetry_dcgm_gpu; /* private: a GPU's metrics gathered from the current scrape */

struct telemetry_reader {
    enum telemetry_format format;
    struct telemetry_options opt;
    telemetry_sample_fn on_sample;
    void *ctx;
    bool have_header;
    bool fatal;
    int ncols;
    int col[16];                        /* known columns → index in a line, -1 when absent */
    int unit[16];                       /* nvidia-smi: unit named in the header for that column */
    struct telemetry_dcgm_gpu *pending; /* DCGM: GPUs of the current scrape, owned */
    size_t npending, pending_cap;
    bool dcgm_has_ts; /* the current scrape's Prometheus timestamp */
    int64_t dcgm_ts_ms;
    bool dcgm_at_used; /* a scrape was stamped with opt.at_ms */
    long samples;      /* delivered to on_sample */
    long rejected;     /* lines with problems */
};

/* A name of TELEMETRY_FORMAT_NAMES → its format; anything else → TELEMETRY_UNKNOWN. */
enum telemetry_format telemetry_format_from_name(const char *name);
const char *telemetry_format_name(enum telemetry_format f);
/* Guesses the format from the first bytes of an upload (a few hundred are plenty). */
enum telemetry_format telemetry_detect_format(const char *buf, size_t len);

/* Copies the options (their strings must outlive the reader). With opt->fields (nvidia-smi
 * noheader) a query field that is not understood is a problem → -1. */
int telemetry_reader_init(struct telemetry_reader *r, enum telemetry_format format,
                          const struct telemetry_options *opt, telemetry_sample_fn on_sample,
                          void *ctx, struct problems *errs) __attribute__((warn_unused_result));
void telemetry_reader_free(struct telemetry_reader *r);

/* One line without its ending. A bad line adds problems (line, column) and is skipped: 0.
 * -1 when reading cannot go on: the callback stopped it, memory ran out, or the header is
 * unusable (a problem says why). */
int telemetry_feed_line(struct telemetry_reader *r, const char *line, size_t len, long lineno,
                        struct problems *errs) __attribute__((warn_unused_result));
/* End of input: delivers what a DCGM scrape still holds. 0, or -1 as above. */
int telemetry_finish(struct telemetry_reader *r, struct problems *errs)
    __attribute__((warn_unused_result));

/* Appends one COPY text row in TELEMETRY_COPY_COLUMNS order (\N for unknown). */
void telemetry_copy_line(const struct telemetry_sample *s, struct pgcopy_buf *out);

struct telemetry_gpu_state; /* private: per-GPU idle tracking */

/* Streaming summary of samples: O(GPUs) memory whatever the number of samples. Percentiles
 * come from a histogram of TELEMETRY_DUTY_BINS bins: each duty cycle is rounded to the nearest
 * 0.001 and the percentile is interpolated between order statistics as PostgreSQL's
 * percentile_cont does, so a reported p10/p50/p90 is within 0.0005 of the exact one. The mean
 * is exact. */
struct telemetry_summary {
    double idle_below;
    long samples;
    long samples_with_duty;
    long duty_by_source[4];
    uint32_t duty_hist[TELEMETRY_DUTY_BINS];
    double duty_sum;
    long idle_samples;
    bool any_ts, all_ts;
    int64_t first_ts_ms, last_ts_ms;
    double memory_peak_gb, memory_total_gb; /* NAN until seen */
    double power_sum_w;
    long power_samples;
    long longest_idle_samples;
    int64_t longest_idle_ms;
    struct telemetry_gpu_state *gpus; /* open-addressing table, owned */
    size_t gpu_count, gpu_cap;
};

/* idle_below: a sample with duty cycle under it is idle (API default 0.05); must be in (0, 1]. */
int telemetry_summary_init(struct telemetry_summary *s, double idle_below)
    __attribute__((warn_unused_result));
void telemetry_summary_free(struct telemetry_summary *s);
/* -1 when memory ran out or there are more than TELEMETRY_SUMMARY_MAX_GPUS GPUs. */
int telemetry_summary_add(struct telemetry_summary *s, const struct telemetry_sample *sample)
    __attribute__((warn_unused_result));
/* New reference: {samples, gpus, samples_with_duty_cycle, duty_cycle_source{…}, first_ts,
 * last_ts, time_span_s, duty_cycle_mean, duty_cycle_p10, duty_cycle_p50, duty_cycle_p90,
 * duty_cycle_resolution, memory_peak_gb, memory_total_gb, power_mean_w, idle_below,
 * idle_fraction, longest_idle_s, longest_idle_samples}; unknown figures are null. An idle
 * stretch is a run of consecutive idle samples of one GPU; in seconds it lasts from its first
 * idle sample to the GPU's next busy sample (or to its last idle sample when the input ends
 * idle); longest_idle_s is null unless every sample had a timestamp. NULL when out of memory. */
json_t *telemetry_summary_json(const struct telemetry_summary *s)
    __attribute__((warn_unused_result));

#endif
