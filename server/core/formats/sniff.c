/* Upload content sniffing (sniff.h). Each rule looks at the first line, or at the member names
 * near the start of a JSON document, for what only that tool writes. */
#include "core/formats/sniff.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Is needle within hay[0..len) (bytes, case-sensitive)? */
static int has(const char *hay, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0 || n > len)
        return n == 0;
    for (size_t i = 0; i + n <= len; i++)
        if (hay[i] == needle[0] && memcmp(hay + i, needle, n) == 0)
            return 1;
    return 0;
}

/* The same, ASCII case-insensitive. */
static int has_ci(const char *hay, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0 || n > len)
        return n == 0;
    for (size_t i = 0; i + n <= len; i++) {
        size_t k = 0;
        while (k < n && tolower((unsigned char)hay[i + k]) == tolower((unsigned char)needle[k]))
            k++;
        if (k == n)
            return 1;
    }
    return 0;
}

static size_t count(const char *s, size_t len, char c)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += s[i] == c;
    return n;
}

/* A Slurm job id as sacct prints it: digits, then optional _array / .step parts. */
static int job_id_like(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len && isdigit((unsigned char)s[i]))
        i++;
    if (i == 0)
        return 0;
    return i == len || s[i] == '|' || s[i] == '_' || s[i] == '.' || s[i] == '+';
}

/* "2024/05/01 10:00:00.123, …": the timestamp nvidia-smi --format=csv starts its rows with. */
static int smi_timestamp_like(const char *s, size_t len)
{
    return len >= 19 && isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[3]) &&
           s[4] == '/' && s[7] == '/' && s[10] == ' ' && s[13] == ':' && s[16] == ':';
}

static struct sniff make(enum sniff_upload u, const char *format, const char *what)
{
    struct sniff s = {u, format, what};
    return s;
}

struct sniff sniff_content(const char *head, size_t len)
{
    if (!head)
        return make(SNIFF_NONE, "", "");
    if (len >= 3 && memcmp(head, "\xEF\xBB\xBF", 3) == 0) {
        head += 3;
        len -= 3;
    }
    while (len > 0 && isspace((unsigned char)*head)) {
        head++;
        len--;
    }
    if (len > SNIFF_DETECT_BYTES)
        len = SNIFF_DETECT_BYTES;
    const char *nl = memchr(head, '\n', len);
    size_t first = nl ? (size_t)(nl - head) : len;

    /* MLPerf LoadGen: the summary's banner, or the detail log's :::MLLOG lines. */
    if (has(head, len, "MLPerf Results Summary") || has(head, first, ":::MLLOG"))
        return make(SNIFF_LOADTEST, "mlperf", "an MLPerf LoadGen log");
    /* JSON documents: by the member names each tool writes. */
    if (head[0] == '{' || head[0] == '[') {
        if (has(head, len, "\"request_throughput\"") && has(head, len, "\"avg\""))
            return make(SNIFF_LOADTEST, "genai-perf",
                        "GenAI-Perf output (profile_export_genai_perf.json)");
        if (has(head, len, "\"num_prompts\"") || has(head, len, "\"request_rate\"") ||
            (has(head, len, "\"backend\"") && has(head, len, "\"completed\"")))
            return make(SNIFF_LOADTEST, "vllm", "vLLM benchmark_serving results");
        if (has(head, len, "\"submitted_at\"") || has(head, len, "\"external_id\""))
            return make(SNIFF_RUNS, "json", "job accounting records (JSON runs)");
        if (has(head, len, "\"price_per_hour\"") && has(head, len, "\"gpus_per_instance\""))
            return make(SNIFF_OFFERS, "json", "offers (a price sheet as JSON)");
        return make(SNIFF_NONE, "", "");
    }
    /* DCGM exporter (Prometheus text) and nvidia-smi dmon (a '#' header naming gpu). */
    if ((first >= 7 && (memcmp(head, "# HELP ", 7) == 0 || memcmp(head, "# TYPE ", 7) == 0)) ||
        (first >= 8 && memcmp(head, "DCGM_FI_", 8) == 0))
        return make(SNIFF_TELEMETRY, "dcgm", "DCGM exporter metrics");
    if (head[0] == '#' &&
        (has_ci(head, first, " gpu ") || has(head, first, "#Date") || has(head, first, "# gpu")))
        return make(SNIFF_TELEMETRY, "dmon", "nvidia-smi dmon output");
    /* sacct --parsable2: '|' separated, a header naming JobID or rows starting with a job id.
     * Checked before any comma rule: AllocTRES holds commas. */
    if (count(head, first, '|') >= 2 &&
        (has_ci(head, first, "JobID") || has_ci(head, first, "JobIDRaw") ||
         job_id_like(head, first)))
        return make(SNIFF_RUNS, "sacct", "Slurm sacct output");
    /* GenAI-Perf's CSV export. */
    if (first >= 10 && memcmp(head, "Metric,avg", 10) == 0)
        return make(SNIFF_LOADTEST, "genai-perf",
                    "GenAI-Perf output (profile_export_genai_perf.csv)");
    /* Offers: a SkyPilot catalog (vms.csv) or a price sheet with the offer fields as columns. */
    if (has(head, first, "InstanceType") && has(head, first, "AcceleratorName"))
        return make(SNIFF_OFFERS, "skypilot", "a SkyPilot catalog (vms.csv)");
    if (has(head, first, "price_per_hour") && has(head, first, "gpu_model"))
        return make(SNIFF_OFFERS, "csv", "a price sheet (offers CSV)");
    /* nvidia-smi --query-gpu … --format=csv: its header names query fields, or rows start with
     * its timestamp. */
    if (count(head, first, ',') >= 1 &&
        (has(head, first, "utilization.gpu") || has(head, first, "memory.used") ||
         has(head, first, "pci.bus_id") || has(head, first, "power.draw") ||
         smi_timestamp_like(head, first)))
        return make(SNIFF_TELEMETRY, "nvidia-smi", "nvidia-smi --query-gpu CSV output");
    return make(SNIFF_NONE, "", "");
}

const char *sniff_upload_name(enum sniff_upload u)
{
    switch (u) {
    case SNIFF_RUNS:
        return "job accounting";
    case SNIFF_TELEMETRY:
        return "GPU telemetry of a benchmark";
    case SNIFF_LOADTEST:
        return "a load test";
    case SNIFF_OFFERS:
        return "a price sheet";
    case SNIFF_NONE:
        break;
    }
    return "";
}

const char *sniff_upload_route(enum sniff_upload u)
{
    switch (u) {
    case SNIFF_RUNS:
        return "POST /api/v1/runs";
    case SNIFF_TELEMETRY:
        return "POST /api/v1/benchmarks/{id}/telemetry";
    case SNIFF_LOADTEST:
        return "POST /api/v1/benchmarks/import";
    case SNIFF_OFFERS:
        return "POST /api/v1/offers";
    case SNIFF_NONE:
        break;
    }
    return "";
}

int sniff_mismatch(const char *head, size_t len, enum sniff_upload expected,
                   const char *expected_format, struct sniff *out, char *msg, size_t cap)
{
    struct sniff s = sniff_content(head, len);
    if (out)
        *out = s;
    if (cap)
        msg[0] = '\0';
    if (s.upload == SNIFF_NONE)
        return 0;
    if (s.upload == expected) {
        /* The right route, another tool: only load tests name theirs (?format=). */
        if (expected != SNIFF_LOADTEST || !expected_format || !*expected_format ||
            strcmp(expected_format, s.format) == 0)
            return 0;
        if (cap)
            snprintf(msg, cap, "this looks like %s: upload it as a load test with format %s",
                     s.what, s.format);
        return 1;
    }
    if (cap)
        snprintf(msg, cap, "this looks like %s: upload it as %s (%s)", s.what,
                 sniff_upload_name(s.upload), sniff_upload_route(s.upload));
    return 1;
}
