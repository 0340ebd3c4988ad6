/* Throughput of the streaming readers on million-line uploads, as the HTTP layer will drive
 * them: 64 KiB chunks through core/linebuf, one reader call per line, one COPY row rendered
 * per record. Inputs are built in memory from the real samples (the Fox sacct GPU sample with
 * job ids renumbered, the NeSI nvidia-smi series with timestamps advanced) so the bytes look
 * like real uploads. Prints lines per CPU second (the machines are shared: wall time would
 * measure the neighbours) and how much parsing grew the peak RSS. Run by hand:
 *   build/bench_readers */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "core/formats/linebuf.h"
#include "core/formats/sacct.h"
#include "core/formats/telemetry.h"
#include "oracle/linebuf_stream.h"

#define LINES 1000000
#define CHUNK 65536

static char *load(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", CAPLEDGER_DATA_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
        exit(1);
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

/* CPU time of this process: the machines are shared, so wall time measures the neighbours. */
static double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct sacct_ctx {
    struct sacct_reader reader;
    struct pgcopy_buf copy;
    size_t copy_bytes;
};

static int sacct_fn(const struct linebuf_line *line, void *ctx, struct problems *errs)
{
    struct sacct_ctx *c = ctx;
    struct run run;
    if (sacct_feed_line(&c->reader, line->text, line->len, line->lineno, &run, errs) == SACCT_RUN) {
        /* the binary COPY row the server sends (store/runs.c), under an upload id */
        if (!run_copy_binary(&run, run.workload_class[0] ? run.workload_class : NULL,
                             "00000000-0000-0000-0000-000000000000", &c->copy))
            return -1;
        if (c->copy.len > CHUNK) { /* what the HTTP layer hands to PQputCopyData */
            c->copy_bytes += c->copy.len;
            pgcopy_reset(&c->copy);
        }
    }
    return 0;
}

struct telemetry_ctx {
    struct telemetry_reader reader;
    struct telemetry_summary summary;
    struct pgcopy_buf copy;
    size_t copy_bytes;
};

static int on_sample(const struct telemetry_sample *s, void *ctx)
{
    struct telemetry_ctx *c = ctx;
    telemetry_copy_line(s, &c->copy);
    if (c->copy.len > CHUNK) {
        c->copy_bytes += c->copy.len;
        pgcopy_reset(&c->copy);
    }
    return telemetry_summary_add(&c->summary, s);
}

static int telemetry_fn(const struct linebuf_line *l, void *ctx, struct problems *errs)
{
    struct telemetry_ctx *c = ctx;
    return telemetry_feed_line(&c->reader, l->text, l->len, l->lineno, errs);
}

int main(void)
{
    size_t len;
    char *sample = load("samples/sacct/sonar_fox_sacct_aP_noheader_gpu.txt", &len);
    /* only finished jobs' lines (the ones that become rows), renumbered */
    char *big = malloc((size_t)LINES * 400);
    size_t n = 0, lines = 0;
    while (lines < LINES) {
        for (char *line = sample; *line && lines < LINES;) {
            char *nl = strchr(line, '\n');
            size_t l = (size_t)(nl - line);
            if (memmem(line, l, "|COMPLETED|", 11) && !memchr(line, '.', 16) && l < 380) {
                char *bar = memchr(line, '|', l);
                char *bar2 = memchr(bar + 1, '|', l);
                n += (size_t)sprintf(big + n, "%zu|%zu", 3000000 + lines, 3000000 + lines);
                memcpy(big + n, bar2, (size_t)(nl - bar2) + 1);
                n += (size_t)(nl - bar2) + 1;
                lines++;
            }
            line = nl + 1;
        }
    }
    struct problems errs;
    problems_init(&errs);
    struct sacct_ctx sc;
    memset(&sc, 0, sizeof sc);
    pgcopy_init(&sc.copy);
    const struct sacct_options opt = {
        .fields = "JobID,JobIDRaw,User,Account,State,Start,End,AveCPU,AveDiskRead,AveDiskWrite,"
                  "AveRSS,AveVMSize,ElapsedRaw,ExitCode,Layout,MaxRSS,MaxVMSize,MinCPU,ReqCPUS,"
                  "ReqMem,ReqNodes,Reservation,Submit,Suspended,SystemCPU,TimelimitRaw,UserCPU,"
                  "NodeList,Partition,AllocTRES,Priority,JobName"};
    if (sacct_reader_init(&sc.reader, &opt, &errs) != 0)
        return 1;
    double rss0 = peak_rss_mb();
    double t0 = now_s();
    if (linebuf_stream(big, n, CHUNK, 0, sacct_fn, &sc, &errs) != 0)
        return 1;
    double t1 = now_s();
    printf("sacct parse grew the peak RSS by %.1f MB (input held: %.1f MB)\n", peak_rss_mb() - rss0,
           (double)n / 1e6);
    printf("sacct: %zu lines (%.1f MB) → %ld runs, %zu COPY bytes, %zu problems in %.3f CPU s: "
           "%.0f lines per CPU second\n",
           lines, (double)n / 1e6, sc.reader.counts.runs, sc.copy_bytes + sc.copy.len, errs.total,
           t1 - t0, (double)lines / (t1 - t0));
    pgcopy_free(&sc.copy);

    /* nvidia-smi: 8 GPUs x 125,000 timestamps */
    n = 0;
    n += (size_t)sprintf(big + n, "timestamp, index, utilization.gpu [%%], memory.used [MiB], "
                                  "memory.total [MiB], power.draw [W]\n");
    for (long i = 0; i < LINES; i++) {
        long s = i / 8;
        n += (size_t)sprintf(
            big + n,
            "2024/03/13 %02ld:%02ld:%02ld.836, %ld, %ld %%, %ld MiB, 81920 MiB, %ld.%02ld W\n",
            (s / 3600) % 24, (s / 60) % 60, s % 60, i % 8, (i * 37) % 101, (i * 7919) % 81920,
            60 + (i % 600), i % 100);
    }
    struct telemetry_ctx tc;
    memset(&tc, 0, sizeof tc);
    pgcopy_init(&tc.copy);
    const struct telemetry_options topt = {0};
    if (telemetry_summary_init(&tc.summary, 0.05) != 0 ||
        telemetry_reader_init(&tc.reader, TELEMETRY_NVIDIA_SMI, &topt, on_sample, &tc, &errs) != 0)
        return 1;
    rss0 = peak_rss_mb();
    t0 = now_s();
    if (linebuf_stream(big, n, CHUNK, 0, telemetry_fn, &tc, &errs) != 0)
        return 1;
    t1 = now_s();
    printf("nvidia-smi parse grew the peak RSS by %.1f MB\n", peak_rss_mb() - rss0);
    json_t *summary = telemetry_summary_json(&tc.summary);
    char *text = json_dumps(summary, JSON_COMPACT);
    printf("nvidia-smi: %d lines (%.1f MB) → %ld samples, %zu problems in %.3f CPU s: %.0f lines "
           "per CPU second\n"
           "summary: %s\n",
           LINES, (double)n / 1e6, tc.reader.samples, errs.total, t1 - t0,
           (double)LINES / (t1 - t0), text);
    free(text);
    json_decref(summary);
    telemetry_reader_free(&tc.reader);
    telemetry_summary_free(&tc.summary);
    pgcopy_free(&tc.copy);
    problems_free(&errs);
    free(big);
    free(sample);
    return 0;
}
