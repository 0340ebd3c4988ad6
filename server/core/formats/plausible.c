/* Plausibility of telemetry against an offer; see plausible.h. */
#include "core/formats/plausible.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void plausible_telemetry_init(struct plausible_telemetry *p)
{
    memset(p, 0, sizeof *p);
    p->memory_total_min_gb = p->memory_total_max_gb = p->memory_used_max_gb = NAN;
}

static double fmin_nan(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : fmin(a, b);
}

static double fmax_nan(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : fmax(a, b);
}

void plausible_telemetry_add(struct plausible_telemetry *p, const struct telemetry_sample *s)
{
    p->samples++;
    if (!isnan(s->duty_cycle))
        p->with_duty++;
    if (s->mig) {
        p->mig++;
        if (!isnan(s->duty_cycle))
            p->mig_with_duty++;
    }
    p->memory_total_min_gb = fmin_nan(p->memory_total_min_gb, s->memory_total_gb);
    p->memory_total_max_gb = fmax_nan(p->memory_total_max_gb, s->memory_total_gb);
    p->memory_used_max_gb = fmax_nan(p->memory_used_max_gb, s->memory_used_gb);
    if (!isnan(s->memory_used_gb) && !isnan(s->memory_total_gb) &&
        s->memory_used_gb > s->memory_total_gb * (1 + 1e-9)) {
        if (p->over_total++ == 0)
            snprintf(p->first_over_total_gpu, sizeof p->first_over_total_gpu, "%s", s->gpu);
    }
    if (!s->model[0])
        return;
    for (int i = 0; i < p->nmodels; i++)
        if (strcmp(p->models[i], s->model) == 0)
            return;
    if (p->nmodels < PLAUSIBLE_MAX_MODELS)
        memcpy(p->models[p->nmodels++], s->model, sizeof p->models[0]);
}

/* Upper-case letters and digits of s, into out. */
static void squeeze(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (; s && *s && n + 1 < size; s++)
        if (isalnum((unsigned char)*s))
            out[n++] = (char)toupper((unsigned char)*s);
    out[n] = '\0';
}

bool plausible_model_matches(const char *offer_model, const char *name)
{
    char seen[TELEMETRY_MODEL_MAX * 2];
    squeeze(name, seen, sizeof seen);
    /* the family is the offer's first word with a digit that is not a memory size ("80GB");
     * the memory itself is compared with the telemetry's totals, not the name */
    char family[64] = "";
    const char *s = offer_model;
    while (s && *s) {
        while (*s && !isalnum((unsigned char)*s))
            s++;
        size_t len = 0;
        while (s[len] && isalnum((unsigned char)s[len]))
            len++;
        if (!len)
            break;
        char word[64];
        snprintf(word, sizeof word, "%.*s", (int)len, s);
        squeeze(word, word, sizeof word);
        size_t wl = strlen(word);
        int digits = strcspn(word, "0123456789") < wl;
        int memory =
            wl > 2 && strcmp(word + wl - 2, "GB") == 0 && strspn(word, "0123456789") == wl - 2;
        if (digits && !memory && !family[0])
            snprintf(family, sizeof family, "%s", word);
        s += len;
    }
    if (!family[0]) /* no model number to compare ("NVIDIA"): say nothing */
        return true;
    return strstr(seen, family) != NULL;
}

static void warn(json_t *list, const char *code, bool refuses, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void warn(json_t *list, const char *code, bool refuses, const char *fmt, ...)
{
    char buf[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_array_append_new(
        list, json_pack("{s:s, s:s, s:b}", "code", code, "message", buf, "refuses", refuses));
}

json_t *plausible_telemetry_warnings(const struct plausible_telemetry *p, const char *offer_model,
                                     double offer_memory_gb)
{
    json_t *list = json_array();
    if (!list)
        return NULL;
    for (int i = 0; offer_model && i < p->nmodels; i++)
        if (!plausible_model_matches(offer_model, p->models[i]))
            warn(list, "gpu_model_mismatch", true,
                 "the telemetry is of a %s, but the benchmark's offer is a %s: it does not "
                 "measure this benchmark",
                 p->models[i], offer_model);
    if (offer_memory_gb > 0 && !isnan(p->memory_total_max_gb)) {
        double lo = p->memory_total_min_gb, hi = p->memory_total_max_gb;
        double worst = fabs(hi - offer_memory_gb) > fabs(lo - offer_memory_gb) ? hi : lo;
        if (fabs(worst - offer_memory_gb) > PLAUSIBLE_MEMORY_TOLERANCE * offer_memory_gb)
            warn(list, "memory_mismatch", true,
                 "the GPUs report %.1f GiB of memory in total, but the benchmark's offer has %g "
                 "GB per GPU: the telemetry is of another GPU",
                 worst, offer_memory_gb);
    }
    if (offer_memory_gb > 0 && !isnan(p->memory_used_max_gb) &&
        p->memory_used_max_gb > offer_memory_gb * (1 + PLAUSIBLE_MEMORY_TOLERANCE))
        warn(list, "memory_over_offer", true,
             "the samples use up to %.1f GiB of GPU memory, more than the %g GB the benchmark's "
             "offer has: they cannot come from it (and would make its memory peak infeasible)",
             p->memory_used_max_gb, offer_memory_gb);
    if (p->over_total)
        warn(list, "memory_over_total", false,
             "%ld sample%s report more memory used than the GPU's total (first: GPU %s): "
             "impossible values, kept as sent",
             p->over_total, p->over_total == 1 ? "" : "s", p->first_over_total_gpu);
    if (p->mig && p->mig_with_duty < p->mig)
        warn(list, "mig", false,
             "%ld sample%s come from GPUs in MIG mode, where nvidia-smi and the utilization "
             "counters print no utilization ([N/A]): no duty cycle can be measured from them. "
             "Export DCGM_FI_PROF_GR_ENGINE_ACTIVE per MIG instance (dcgm-exporter, label "
             "GPU_I_ID) to measure it",
             p->mig - p->mig_with_duty, p->mig - p->mig_with_duty == 1 ? "" : "s");
    else if (p->mig)
        warn(list, "mig", false,
             "%ld sample%s are of MIG instances: each instance counts as one GPU, so the duty "
             "cycle and memory figures are per instance, not per physical GPU",
             p->mig, p->mig == 1 ? "" : "s");
    if (offer_model && p->samples && !p->nmodels && isnan(p->memory_total_max_gb))
        warn(list, "gpu_unchecked", false,
             "the telemetry names no GPU model and no memory total (nvidia-smi dmon prints "
             "neither): whether it was measured on the benchmark's %s could not be checked",
             offer_model);
    if (p->samples && !p->with_duty && !p->mig)
        warn(list, "no_duty_cycle", false,
             "no sample has a utilization or activity figure: the benchmark's duty cycle cannot "
             "be derived from this upload");
    return list;
}

bool plausible_refuses(const json_t *warnings)
{
    size_t i;
    json_t *w;
    json_array_foreach(warnings, i, w) if (json_is_true(json_object_get(w, "refuses"))) return true;
    return false;
}
