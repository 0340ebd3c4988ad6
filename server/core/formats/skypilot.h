/* SkyPilot's price catalogs (`vms.csv` of skypilot-org/skypilot-catalog) read into offers.
 *
 * The columns are found by name in the header (the clouds order them differently; columns we
 * do not use are ignored). Each GPU row gives an on-demand offer (Price) and, where SpotPrice
 * is not empty, a spot offer. Prices are per instance-hour, in USD. The GPU model is
 * AcceleratorName, else the `GpuInfo` name, else implied by a GCP machine family (a2-highgpu-Ng
 * = N× A100 40 GB, a2-megagpu-16g = 16× A100 40 GB, a2-ultragpu-Ng = N× A100-80GB,
 * a3-highgpu-Ng and a3-edgegpu-Ng = N× H100 80 GB). The memory per GPU (GiB) is GpuInfo's
 * MemoryInfo.SizeInMiB / 1024, else known for the implied and a few common models.
 *
 * GpuInfo is a Python literal (single-quoted strings, True/False/None), read by a bounded,
 * non-recursive reader: at most SKYPILOT_GPUINFO_MAX_DEPTH nested containers and
 * SKYPILOT_GPUINFO_MAX_BYTES bytes. It is never evaluated.
 *
 * Rows of one (region, instance type, purchase option) — one per availability zone — collapse
 * into one offer at the lowest price of the region's zones (the price SkyPilot would pay when
 * it picks the cheapest zone of a region); `zones` counts them. CPU-only rows (no accelerator)
 * rows whose GPU count is fractional, and accelerators whose memory per GPU is known neither
 * from GpuInfo nor here (TPUs, Inferentia, …) are skipped and counted, never refused. */
#ifndef CAPLEDGER_CORE_SKYPILOT_H
#define CAPLEDGER_CORE_SKYPILOT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/formats/csv.h"
#include "core/problems.h"

#define SKYPILOT_GPUINFO_MAX_DEPTH 8
#define SKYPILOT_GPUINFO_MAX_BYTES 4096
#define SKYPILOT_NAME_MAX 100
#define SKYPILOT_MAX_OFFERS 20000
#define SKYPILOT_UNKNOWN_MODELS_KEPT 16

struct skypilot_gpuinfo {
    char name[SKYPILOT_NAME_MAX + 1]; /* Gpus[0].Name, "" when absent */
    double count;                     /* Gpus[0].Count, 0 when absent */
    double memory_mib;                /* Gpus[0].MemoryInfo.SizeInMiB, 0 when absent */
    double total_mib;                 /* TotalGpuMemoryInMiB, 0 when absent */
    size_t gpu_kinds;                 /* entries of Gpus */
};

/* Reads one GpuInfo literal s[0..len). Returns 0, or -1 with *bad_offset (0-based byte) and a
 * static reason in *why. */
int skypilot_gpuinfo_parse(const char *s, size_t len, struct skypilot_gpuinfo *out,
                           size_t *bad_offset, const char **why)
    __attribute__((warn_unused_result));

/* The GPU a GCP machine type implies (the catalog leaves AcceleratorName empty for it):
 * true with model, count and memory per GPU (GiB) set, else false. */
bool skypilot_implied_gpu(const char *instance_type, const char **model, int *count,
                          double *memory_gb);

enum skypilot_column {
    SKY_INSTANCE_TYPE,
    SKY_ACCELERATOR_NAME,
    SKY_ACCELERATOR_COUNT,
    SKY_PRICE,
    SKY_REGION,
    SKY_ZONE,
    SKY_GPUINFO,
    SKY_SPOT_PRICE,
    SKY_COLUMNS
};

struct skypilot_offer {
    char instance_type[SKYPILOT_NAME_MAX + 1];
    char region[SKYPILOT_NAME_MAX + 1];
    char gpu_model[SKYPILOT_NAME_MAX + 1];
    int spot; /* 0: on_demand, 1: spot */
    int gpus;
    double gpu_memory_gb;
    double price; /* the lowest of the region's zones */
    long zones;   /* rows collapsed into it */
    long line;    /* the first row's line */
    size_t next;  /* hash chain (index + 1; 0 ends) */
};

struct skypilot_reader {
    long column[SKY_COLUMNS]; /* 1-based column of each, 0 when absent */
    size_t cells;             /* cells of the header */
    bool have_header;
    long rows, gpu_rows, skipped_cpu_only, skipped_fractional, skipped_unpriced;
    long skipped_unknown_memory; /* accelerators whose memory neither GpuInfo nor we know */
    char unknown_models[SKYPILOT_UNKNOWN_MODELS_KEPT][SKYPILOT_NAME_MAX + 1]; /* the first ones */
    size_t n_unknown_models;
    struct skypilot_offer *offers;
    size_t n, cap;
    size_t *buckets; /* index + 1 of the first offer of the chain; 0 empty */
    size_t nbuckets;
};

void skypilot_reader_init(struct skypilot_reader *r);
void skypilot_reader_free(struct skypilot_reader *r);

/* One CSV line, already split (the first is the header). Faults go to p with line and column.
 * Returns 0, or -1 when reading cannot go on (a bad header, no memory, too many offers). */
int skypilot_feed(struct skypilot_reader *r, const struct csv_row *row, long line,
                  struct problems *p) __attribute__((warn_unused_result));

/* The offers read, as documents of POST /offers plus `catalog` ("skypilot"), in the order
 * their first row appeared (on-demand before spot). provider and currency are copied. NULL
 * without memory. */
json_t *skypilot_offers_json(const struct skypilot_reader *r, const char *provider,
                             const char *currency) __attribute__((warn_unused_result));

#endif
