/* What an upload looks like, from its first bytes: which tool wrote it and so which upload
 * route reads it. The upload handlers ask when they refuse a whole file (422), so the reply
 * names the likely mistake ("this looks like Slurm sacct output: upload it as job accounting")
 * instead of the parser's symptom; the web UI shows the same sentence with its form's name.
 * Pure: no I/O; a guess, never a refusal of its own. */
#ifndef CAPLEDGER_CORE_FORMATS_SNIFF_H
#define CAPLEDGER_CORE_FORMATS_SNIFF_H

#include <stddef.h>

/* The upload routes, by what they read. */
enum sniff_upload {
    SNIFF_NONE = 0,  /* not recognised */
    SNIFF_RUNS,      /* POST /api/v1/runs: job accounting */
    SNIFF_TELEMETRY, /* POST /api/v1/benchmarks/{id}/telemetry */
    SNIFF_LOADTEST,  /* POST /api/v1/benchmarks/import */
    SNIFF_OFFERS,    /* POST /api/v1/offers (price sheet) or /offers/import (SkyPilot) */
};

struct sniff {
    enum sniff_upload upload;
    const char *format; /* the route's ?format= value ("sacct", "nvidia-smi", "vllm", …) */
    const char *what;   /* "Slurm sacct output", "an MLPerf log summary", … */
};

/* SNIFF_DETECT_BYTES of the head are plenty (the first line or two, a JSON document's first
 * members). Never fails: upload SNIFF_NONE when nothing matched. */
#define SNIFF_DETECT_BYTES 4096
struct sniff sniff_content(const char *head, size_t len);

/* "job accounting", "GPU telemetry", "a load test", "a price sheet"; "" for SNIFF_NONE. */
const char *sniff_upload_name(enum sniff_upload u);
/* "POST /api/v1/runs", …; "" for SNIFF_NONE. */
const char *sniff_upload_route(enum sniff_upload u);

/* When head looks like the input of another upload than `expected` (or, for a load test, of
 * another tool than `expected_format`, which may be NULL): fills *out, writes "this looks like
 * Slurm sacct output: upload it as job accounting (POST /api/v1/runs)" into msg and returns 1;
 * else returns 0 and msg is "". */
int sniff_mismatch(const char *head, size_t len, enum sniff_upload expected,
                   const char *expected_format, struct sniff *out, char *msg, size_t cap);

#endif
