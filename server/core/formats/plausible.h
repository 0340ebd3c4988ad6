/* Plausibility of uploaded telemetry against the benchmark it is attached to.
 *
 * While an upload is read, every sample is added to a small accumulator (constant memory:
 * the first few GPU model names, memory extremes, counts); at the end the accumulator is
 * compared with the benchmark's offer and the warnings are listed, each {code, message,
 * refuses}. A warning that refuses (the telemetry is of another GPU than the offer's) makes
 * the upload a 422 unless the caller forces it, which is then recorded.
 *
 * Codes:
 *   gpu_model_mismatch   a GPU model name in the telemetry is not the offer's (refuses)
 *   memory_mismatch      the GPUs' total memory differs from the offer's by more than 12 %
 *                        (refuses)
 *   memory_over_offer    the samples used more memory than the offer's GPU has (refuses)
 *   memory_over_total    samples report more memory used than the GPU's total (impossible)
 *   mig                  samples of MIG instances or of GPUs in MIG mode: say what that means
 *                        for the duty cycle
 *   gpu_unchecked        the telemetry names no GPU model and no memory total (dmon): its fit
 *                        with the offer could not be checked
 *   no_duty_cycle        no sample has a duty cycle (nothing to derive it from) */
#ifndef CAPLEDGER_CORE_PLAUSIBLE_H
#define CAPLEDGER_CORE_PLAUSIBLE_H

#include <jansson.h>
#include <stdbool.h>

#include "core/formats/telemetry.h"

#define PLAUSIBLE_MAX_MODELS 4
/* Relative difference of total GPU memory tolerated between telemetry (GiB, as the driver
 * reports: an 80 GB H100 shows 79.6 GiB) and an offer (GB, as sold: an L40S "48 GB" shows 45). */
#define PLAUSIBLE_MEMORY_TOLERANCE 0.12

struct plausible_telemetry {
    char models[PLAUSIBLE_MAX_MODELS][TELEMETRY_MODEL_MAX];
    int nmodels;
    double memory_total_min_gb, memory_total_max_gb, memory_used_max_gb; /* NAN until seen */
    long samples, with_duty, over_total, mig, mig_with_duty;
    long first_over_total_gpu_len;
    char first_over_total_gpu[TELEMETRY_GPU_MAX];
};

void plausible_telemetry_init(struct plausible_telemetry *p);
void plausible_telemetry_add(struct plausible_telemetry *p, const struct telemetry_sample *s);

/* 1 when the GPU name a tool printed ("NVIDIA A100-SXM4-80GB", "GeForce GTX 1080 Ti") is of the
 * offer's model ("A100-80GB", "H100", "L40S"): the offer's model family — its first word with
 * a digit that is not a memory size — appears in the name, compared without case, spaces or
 * punctuation ("RTX6000" in "Quadro RTX 6000"). Memory sizes are compared from the telemetry's
 * totals, not from names. */
bool plausible_model_matches(const char *offer_model, const char *name);

/* The warnings (new reference, an array of {code, message, refuses}) for an upload to a
 * benchmark on an offer of offer_model with offer_memory_gb per GPU (NULL / NAN: unknown). */
json_t *plausible_telemetry_warnings(const struct plausible_telemetry *p, const char *offer_model,
                                     double offer_memory_gb);

/* 1 when a warning of the array refuses the upload. */
bool plausible_refuses(const json_t *warnings);

#endif
