/* Telemetry readers and summary over every real nvidia-smi, dmon and DCGM sample, their
 * variants (noheader, aliases, several scrapes, time zones), and malformed input.
 *
 * Expected figures were worked out by hand or with Python from the sample files, independently
 * of this code: duty = utilization / 100 (or the DCGM ratio), memory GiB = MiB / 1024, and
 * percentiles as PostgreSQL's percentile_cont:
 *   def pc(v, p): v = sorted(v); r = p*(len(v)-1); lo = int(r); hi = min(lo+1, len(v)-1)
 *                 return v[lo] + (r-lo)*(v[hi]-v[lo]) */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/formats/telemetry.h"
#include "sample_text.h"
#include "oracle/linebuf_stream.h"

#define SMI "samples/nvidia-smi/"
#define DMON "samples/nvidia-smi-dmon/"
#define DCGM "samples/dcgm/"
#define NESI SMI "nesi_a100_nounits_l5_timeseries.csv"
#define BPYTOP SMI "bpytop_issue26_2gpu_mixed_units.csv"
#define MIG SMI "nvidia_gpu_exporter_h100-mig_590.48.01_load_query-gpu.csv"
#define H200 DMON "nvidia_gpu_exporter_h200_590.48.01_load_dmon_c5.txt"
#define DEEPSPEECH DMON "deepspeech_issue178_dmon_s_pucvmet_4gpu_oldformat.txt"
#define MISALIGNED DMON "dmon_i0_misaligned_enc100.txt"
#define LKE DCGM "lke_rtx4000ada_k8s_podlabels_dcgm-exporter_metrics.prom"
#define UPCLOUD DCGM "upcloud_uks_l40s_dcgm-exporter_metrics.prom"

struct collected {
    struct telemetry_reader reader;
    struct telemetry_summary summary;
    struct pgcopy_buf copy;
    struct telemetry_sample first;
    long samples;
    int status; /* telemetry_feed_line / finish failure */
    json_t *json;
};

static int collect_sample(const struct telemetry_sample *s, void *ctx)
{
    struct collected *c = ctx;
    if (c->samples++ == 0)
        c->first = *s;
    telemetry_copy_line(s, &c->copy);
    return telemetry_summary_add(&c->summary, s);
}

static int collect_line(const struct linebuf_line *l, void *ctx, struct problems *errs)
{
    struct collected *c = ctx;
    c->status = telemetry_feed_line(&c->reader, l->text, l->len, l->lineno, errs);
    return c->status;
}

static void collect_text(struct collected *c, const char *text, size_t len,
                         enum telemetry_format format, const struct telemetry_options *opt,
                         double idle_below, size_t chunk, struct problems *errs)
{
    memset(c, 0, sizeof *c);
    pgcopy_init(&c->copy);
    assert_int_equal(telemetry_summary_init(&c->summary, idle_below), 0);
    c->status = telemetry_reader_init(&c->reader, format, opt, collect_sample, c, errs);
    if (c->status == 0 && linebuf_stream(text, len, chunk, 0, collect_line, c, errs) == 0)
        c->status = telemetry_finish(&c->reader, errs);
    assert_true(pgcopy_ok(&c->copy));
    c->json = telemetry_summary_json(&c->summary);
    assert_non_null(c->json);
}

static void collect_sample_file(struct collected *c, const char *rel,
                                const struct telemetry_options *opt, struct problems *errs)
{
    size_t len;
    char *text = sample_load(rel, &len);
    collect_text(c, text, len, telemetry_detect_format(text, len), opt,
                 TELEMETRY_DEFAULT_IDLE_BELOW, 101, errs);
    free(text);
}

static void collected_free(struct collected *c)
{
    telemetry_reader_free(&c->reader);
    telemetry_summary_free(&c->summary);
    pgcopy_free(&c->copy);
    json_decref(c->json);
}

static double figure(const struct collected *c, const char *key)
{
    json_t *v = json_object_get(c->json, key);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static bool is_null(const struct collected *c, const char *key)
{
    json_t *v = json_object_get(c->json, key);
    assert_non_null(v);
    return json_is_null(v);
}

#define assert_near(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static void test_detect_format(void **state)
{
    (void)state;
    static const struct {
        const char *rel;
        enum telemetry_format format;
    } cases[] = {{NESI, TELEMETRY_NVIDIA_SMI}, {BPYTOP, TELEMETRY_NVIDIA_SMI},
                 {MIG, TELEMETRY_NVIDIA_SMI},  {H200, TELEMETRY_DMON},
                 {DEEPSPEECH, TELEMETRY_DMON}, {MISALIGNED, TELEMETRY_DMON},
                 {LKE, TELEMETRY_DCGM},        {UPCLOUD, TELEMETRY_DCGM}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t len;
        char *text = sample_load(cases[i].rel, &len);
        assert_int_equal(telemetry_detect_format(text, len), cases[i].format);
        free(text);
    }
    assert_int_equal(telemetry_detect_format("#Date       Time        gpu   pwr\n", 35),
                     TELEMETRY_DMON);
    assert_int_equal(telemetry_detect_format("\xEF\xBB\xBF\n2024/03/13 07:04:28.836, 0\n", 31),
                     TELEMETRY_NVIDIA_SMI);
    assert_int_equal(telemetry_detect_format("hello world\n", 12), TELEMETRY_UNKNOWN);
    assert_int_equal(telemetry_detect_format("", 0), TELEMETRY_UNKNOWN);
    assert_int_equal(telemetry_format_from_name("dcgm"), TELEMETRY_DCGM);
    assert_int_equal(telemetry_format_from_name("csv"), TELEMETRY_UNKNOWN);
}

/* NeSI A100 `nounits` series: utilization.gpu 0,0,28,32,30,26,0 at 5 s steps from
 * 07:04:28.836 to 07:04:58.849; memory.used max 80257 MiB; memory.total 81920 MiB.
 * mean 116/700 = 0.165714…; pc p10/p50/p90 = 0, 0.26, 0.308; idle (< 0.05) 3 of 7;
 * longest idle stretch: 07:04:28.836 → next busy sample 07:04:38.839 = 10.003 s, 2 samples. */
static void test_nesi_nounits_series(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct collected c;
    const struct telemetry_options opt = {0};
    collect_sample_file(&c, NESI, &opt, &errs);
    assert_int_equal(errs.total, 0);
    assert_int_equal(c.status, 0);
    assert_near(figure(&c, "samples"), 7);
    assert_near(figure(&c, "gpus"), 1);
    assert_string_equal(json_string_value(json_object_get(c.json, "first_ts")),
                        "2024-03-13T07:04:28.836Z");
    assert_string_equal(json_string_value(json_object_get(c.json, "last_ts")),
                        "2024-03-13T07:04:58.849Z");
    assert_near(figure(&c, "time_span_s"), 30.013);
    assert_near(figure(&c, "duty_cycle_mean"), 116.0 / 700);
    assert_near(figure(&c, "duty_cycle_p10"), 0);
    assert_near(figure(&c, "duty_cycle_p50"), 0.26);
    assert_near(figure(&c, "duty_cycle_p90"), 0.308);
    assert_near(figure(&c, "memory_peak_gb"), 80257.0 / 1024);
    assert_near(figure(&c, "memory_total_gb"), 80);
    assert_near(figure(&c, "idle_fraction"), 3.0 / 7);
    assert_near(figure(&c, "longest_idle_s"), 10.003);
    assert_near(figure(&c, "longest_idle_samples"), 2);
    assert_true(is_null(&c, "power_mean_w"));
    const char *row = "2024-03-13T07:04:28.836Z\t0\t0\t0\t80\t\\N\n";
    assert_memory_equal(c.copy.data, row, strlen(row));
    collected_free(&c);
    problems_free(&errs);
}

/* The same series without its header line (`noheader`), the query list given instead; and
 * the host's zone UTC+13 (Pacific/Auckland in March) turns 07:04:28.836 into 18:04:28.836Z
 * of the day before. */
static int auckland_summer(const struct tm *local, void *ctx, int64_t *epoch_s)
{
    (void)ctx;
    *epoch_s =
        timefmt_days_from_civil(local->tm_year + 1900, local->tm_mon + 1, local->tm_mday) * 86400 +
        local->tm_hour * 3600 + local->tm_min * 60 + local->tm_sec - 13 * 3600;
    return 0;
}

static void test_nesi_noheader_and_time_zone(void **state)
{
    (void)state;
    size_t len;
    char *text = sample_load(NESI, &len);
    const char *body = strchr(text, '\n') + 1;
    struct problems errs;
    problems_init(&errs);
    struct collected c;
    const struct telemetry_options opt = {
        .fields = "timestamp,utilization.gpu,utilization.memory,memory.used,memory.total",
        .local_to_utc = auckland_summer};
    collect_text(&c, body, len - (size_t)(body - text), TELEMETRY_NVIDIA_SMI, &opt,
                 TELEMETRY_DEFAULT_IDLE_BELOW, 13, &errs);
    assert_int_equal(errs.total, 0);
    assert_near(figure(&c, "samples"), 7);
    assert_near(figure(&c, "duty_cycle_p90"), 0.308);
    assert_string_equal(json_string_value(json_object_get(c.json, "first_ts")),
                        "2024-03-12T18:04:28.836Z");
    collected_free(&c);
    free(text);
    problems_free(&errs);
}

/* bpytop issue #26: a GTX 1080 Ti (36 %, 2856/11175 MiB, 106.56 W) and a GTX 1060 (0 %,
 * 4/6078 MiB, 5.68 W), told apart by name (no uuid or index column); units in the values. */
static void test_bpytop_two_gpus_units_in_values(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct collected c;
    const struct telemetry_options opt = {0};
    collect_sample_file(&c, BPYTOP, &opt, &errs);
    assert_int_equal(errs.total, 0);
    assert_near(figure(&c, "samples"), 2);
    assert_near(figure(&c, "gpus"), 2);
    assert_string_equal(c.first.gpu, "GeForce GTX 1080 Ti");
    assert_near(figure(&c, "duty_cycle_mean"), 0.18);
    assert_near(figure(&c, "memory_peak_gb"), 2856.0 / 1024);
    assert_near(figure(&c, "memory_total_gb"), 11175.0 / 1024);
    assert_near(figure(&c, "power_mean_w"), (106.56 + 5.68) / 2);
    assert_near(figure(&c, "idle_fraction"), 0.5);
    assert_true(is_null(&c, "time_span_s"));
    assert_true(is_null(&c, "longest_idle_s")); /* no timestamps: only a sample count */
    assert_near(figure(&c, "longest_idle_samples"), 1);
    collected_free(&c);

    /* noheader, with the query's aliases (gpu_name, clocks.gr) as the user typed them */
    size_t len;
    char *text = sample_load(BPYTOP, &len);
    const char *body = strchr(text, '\n') + 1;
    const struct telemetry_options aliases = {
        .fields = "gpu_name,fan.speed,memory.total,memory.used,utilization.gpu,"
                  "temperature.gpu,power.draw,clocks.gr,clocks.mem"};
    collect_text(&c, body, len - (size_t)(body - text), TELEMETRY_NVIDIA_SMI, &aliases,
                 TELEMETRY_DEFAULT_IDLE_BELOW, 64, &errs);
    assert_int_equal(errs.total, 0);
    assert_near(figure(&c, "gpus"), 2);
    assert_near(figure(&c, "power_mean_w"), (106.56 + 5.68) / 2);
    collected_free(&c);
    free(text);
    problems_free(&errs);
}

/* H100 under MIG: 212 columns, utilization.gpu [N/A] (MIG hides it) → no duty cycle at all;
 * memory.used 11125 MiB, memory.total 81559 MiB, power.draw 433.78 W; masked uuid. */
static void test_h100_mig_query_gpu(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct collected c;
    const struct telemetry_options opt = {0};
    collect_sample_file(&c, MIG, &opt, &errs);
    assert_int_equal(errs.total, 0);
    assert_int_equal(c.reader.ncols, 212);
    assert_near(figure(&c, "samples"), 1);
    assert_near(figure(&c, "samples_with_duty_cycle"), 0);
    assert_true(is_null(&c, "duty_cycle_mean"));
    assert_true(is_null(&c, "idle_fraction"));
    assert_string_equal(c.first.gpu, "GPU-00000000-0000-0000-0000-000000000000");
    assert_near(figure(&c, "memory_peak_gb"), 11125.0 / 1024);
    assert_near(figure(&c, "memory_total_gb"), 81559.0 / 1024);
    assert_near(figure(&c, "power_mean_w"), 433.78);
    assert_string_equal(json_string_value(json_object_get(c.json, "first_ts")),
                        "2026-07-14T09:00:44.579Z");
    const char *row = "2026-07-14T09:00:44.579Z\tGPU-00000000-0000-0000-0000-000000000000\t\\N\t"
                      "10.8642578125\t79.6474609375\t433.78\n";
    assert_int_equal(c.copy.len, strlen(row));
    assert_memory_equal(c.copy.data, row, c.copy.len);
    collected_free(&c);
    problems_free(&errs);
}

/* dmon, new layout (H200): 5 rows, sm 100 each, pwr 630 628 629 632 630 → mean 629.8; no fb
 * column (no -s m) → no memory; trailing spaces on every line. */
static void test_dmon_h200(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct collected c;
    const struct telemetry_options opt = {0};
    collect_sample_file(&c, H200, &opt, &errs);
    assert_int_equal(errs.total, 0);
    assert_near(figure(&c, "samples"), 5);
    assert_near(figure(&c, "gpus"), 1);
    assert_near(figure(&c, "duty_cycle_mean"), 1);
    assert_near(figure(&c, "duty_cycle_p10"), 1);
    assert_near(figure(&c, "power_mean_w"), 629.8);
    assert_near(figure(&c, "idle_fraction"), 0);
    assert_true(is_null(&c, "memory_peak_gb"));
    collected_free(&c);
    problems_free(&errs);
}

/* dmon, old layout with -s pucvmet (DeepSpeech #178): 4 GPUs in one sample; sm 25 18 24 18 →
 * mean 0.2125, pc p10/p50/p90 0.18, 0.21, 0.247; fb max 11660 MB; pwr 111 111 112 86 → 105;
 * sbecc/dbecc are '-'. */
static void test_dmon_old_format_four_gpus(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct collected c;
    const struct telemetry_options opt = {0};
    collect_sample_file(&c, DEEPSPEECH, &opt, &errs);
    assert_int_equal(errs.total, 0);
    assert_near(figure(&c, "samples"), 4);
    assert_near(figure(&c, "gpus"), 4);
    assert_near(figure(&c, "duty_cycle_mean"), 0.2125);
    assert_near(figure(&c, "duty_cycle_p10"), 0.18);
    assert_near(figure(&c, "duty_cycle_p50"), 0.21);
    assert_near(figure(&c, "duty_cycle_p90"), 0.247);
    assert_near(figure(&c, "memory_peak_gb"), 11660.0 / 1024);
    assert_near(figure(&c, "power_mean_w"), 105);
    collected_free(&c);
    problems_free(&errs);
}

/* dmon whose values are wider than its header (fixed-width parsing would fail): 11 rows, sm
 * 7 8 8 8 7 7 7 7 7 7 7 → mean 80/1100, pc p10/p50/p90 0.07 0.07 0.08; pwr four 62s and seven
 * 63s → 689/11. With idle_below 0.075 the 7 % rows are idle: 8 of 11, the last 7 in a row. */
static void test_dmon_misaligned(void **state)
{
    (void)state;
    size_t len;
    char *text = sample_load(MISALIGNED, &len);
    struct problems errs;
    problems_init(&errs);
    struct collected c;
    const struct telemetry_options opt = {0};
    collect_text(&c, text, len, TELEMETRY_DMON, &opt, TELEMETRY_DEFAULT_IDLE_BELOW, 3, &errs);
    assert_int_equal(errs.total, 0);
    assert_near(figure(&c, "samples"), 11);
    assert_near(figure(&c, "duty_cycle_mean"), 80.0 / 1100);
    assert_near(figure(&c, "duty_cycle_p10"), 0.07);
    assert_near(figure(&c, "duty_cycle_p50"), 0.07);
    assert_near(figure(&c, "duty_cycle_p90"), 0.08);
    assert_near(figure(&c, "power_mean_w"), 689.0 / 11);
    assert_near(figure(&c, "idle_fraction"), 0);
    collected_free(&c);
    collect_text(&c, text, len, TELEMETRY_DMON, &opt, 0.075, 3, &errs);
    assert_near(figure(&c, "idle_fraction"), 8.0 / 11);
    assert_near(figure(&c, "longest_idle_samples"), 7);
    assert_true(is_null(&c, "longest_idle_s"));
    collected_free(&c);
    free(text);
    problems_free(&errs);
}

/* dmon -o DT: Date and Time columns give timestamps. */
static void test_dmon_with_date_and_time(void **state)
{
    (void)state;
    const char *text = "#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem\n"
                       "#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %\n"
                       " 20250101   23:59:58      0     70     40      -      0      0\n"
                       " 20250101   23:59:59      0     71     40      -      1      0\n"
                       " 20250102   00:00:00      0    300     41      -     90     30\n";
    struct problems errs;
    problems_init(&errs);
    struct collected c;
    const struct telemetry_options opt = {0};
    collect_text(&c, text, strlen(text), telemetry_detect_format(text, strlen(text)), &opt,
                 TELEMETRY_DEFAULT_IDLE_BELOW, 17, &errs);
    assert_int_equal(errs.total, 0);
    assert_near(figure(&c, "samples"), 3);
    assert_near(figure(&c, "time_span_s"), 2);
    assert_near(figure(&c, "longest_idle_s"), 2);
    assert_near(figure(&c, "longest_idle_samples"), 2);
    collected_free(&c);
    problems_free(&errs);
}

/* DCGM on Kubernetes (RTX 4000 Ada): GR_ENGINE_ACTIVE 0.004656 is the duty cycle, not
 * DEV_GPU_UTIL 0; FB used 1 MiB, total 1 + 20015 + 457 = 20473 MiB; power 40.979 W. */
static void test_dcgm_lke_prefers_gr_engine_active(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct collected c;
    const struct telemetry_options opt = {0};
    collect_sample_file(&c, LKE, &opt, &errs);
    assert_int_equal(errs.total, 0);
    assert_near(figure(&c, "samples"), 1);
    assert_string_equal(c.first.gpu, "GPU-a8394b51-c086-568a-9f1a-c1e1c934c44c");
    assert_int_equal(c.first.duty_source, TELEMETRY_DUTY_GR_ENGINE_ACTIVE);
    assert_near(c.first.duty_cycle, 0.004656);
    assert_near(figure(&c, "duty_cycle_mean"), 0.004656);
    assert_near(figure(&c, "duty_cycle_p50"), 0.005); /* the histogram's 0.001 steps */
    assert_near(figure(&c, "memory_peak_gb"), 1.0 / 1024);
    assert_near(figure(&c, "memory_total_gb"), 20473.0 / 1024);
    assert_near(figure(&c, "power_mean_w"), 40.979);
    assert_near(figure(&c, "idle_fraction"), 1);
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(c.json, "duty_cycle_source"), "gr_engine_active")),
                     1);
    const char *row = "\\N\tGPU-a8394b51-c086-568a-9f1a-c1e1c934c44c\t0.004656\t0.0009765625\t"
                      "19.9931640625\t40.979\n";
    assert_int_equal(c.copy.len, strlen(row));
    assert_memory_equal(c.copy.data, row, c.copy.len);
    collected_free(&c);
    problems_free(&errs);
}

/* DCGM idle L40S: GR_ENGINE_ACTIVE 0.000000; FB 0 used, 45459 free, 608 reserved; 35.686 W. */
static void test_dcgm_upcloud_idle(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct collected c;
    const struct telemetry_options opt = {0};
    collect_sample_file(&c, UPCLOUD, &opt, &errs);
    assert_int_equal(errs.total, 0);
    assert_near(figure(&c, "samples"), 1);
    assert_near(figure(&c, "duty_cycle_mean"), 0);
    assert_near(figure(&c, "memory_peak_gb"), 0);
    assert_near(figure(&c, "memory_total_gb"), 46067.0 / 1024);
    assert_near(figure(&c, "power_mean_w"), 35.686);
    collected_free(&c);
    problems_free(&errs);
}

/* Several scrapes of both DCGM samples, appended as `curl >> file` would: each scrape ends when
 * a metric repeats for a GPU → 3 samples of each GPU, 2 GPUs. Then timestamps. */
static void test_dcgm_several_scrapes(void **state)
{
    (void)state;
    size_t a_len, b_len;
    char *a = sample_load(LKE, &a_len), *b = sample_load(UPCLOUD, &b_len);
    size_t len = 3 * (a_len + b_len);
    char *text = malloc(len);
    assert_non_null(text);
    for (size_t i = 0; i < 3; i++) {
        memcpy(text + i * (a_len + b_len), a, a_len);
        memcpy(text + i * (a_len + b_len) + a_len, b, b_len);
    }
    struct problems errs;
    problems_init(&errs);
    struct collected c;
    const struct telemetry_options opt = {0};
    collect_text(&c, text, len, TELEMETRY_DCGM, &opt, TELEMETRY_DEFAULT_IDLE_BELOW, 4096, &errs);
    assert_int_equal(errs.total, 0);
    assert_near(figure(&c, "samples"), 6);
    assert_near(figure(&c, "gpus"), 2);
    assert_near(figure(&c, "longest_idle_samples"), 3);
    collected_free(&c);

    const char *stamped = "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"n1\"} 0 1700000000000\n"
                          "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",Hostname=\"n1\"} 50 1700000000000\n"
                          "DCGM_FI_PROF_SM_ACTIVE{gpu=\"1\",Hostname=\"n1\"} 0.4 1700000000000\n"
                          "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"n1\"} 0 1700000015000\n"
                          "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",Hostname=\"n1\"} 60 1700000015000\n"
                          "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"n1\"} 70 1700000030000\n";
    collect_text(&c, stamped, strlen(stamped), TELEMETRY_DCGM, &opt, TELEMETRY_DEFAULT_IDLE_BELOW,
                 50, &errs);
    assert_int_equal(errs.total, 0);
    assert_near(figure(&c, "samples"), 5);
    assert_near(figure(&c, "gpus"), 2);
    assert_string_equal(c.first.gpu, "n1/0");
    assert_near(figure(&c, "time_span_s"), 30);
    assert_near(figure(&c, "longest_idle_s"), 30); /* n1/0 idle from 0 s until busy at 30 s */
    /* gpu 1: SM_ACTIVE 0.4 preferred to GPU_UTIL 50 %; later 0.6 from GPU_UTIL */
    assert_near(figure(&c, "duty_cycle_mean"), (0 + 0.4 + 0 + 0.6 + 0.7) / 5);
    json_t *src = json_object_get(c.json, "duty_cycle_source");
    assert_int_equal(json_integer_value(json_object_get(src, "sm_active")), 1);
    assert_int_equal(json_integer_value(json_object_get(src, "gpu_util")), 4);
    collected_free(&c);
    free(text);
    free(a);
    free(b);
    problems_free(&errs);
}

/* ?at=: a scrape without Prometheus timestamps takes the scrape time; a line's own timestamp
 * wins; a second un-timestamped scrape in the same upload stops the reader (its samples would
 * otherwise all share the one time and be counted as duplicates). */
static void test_dcgm_at_scrape_time(void **state)
{
    (void)state;
    size_t a_len;
    char *a = sample_load(LKE, &a_len);
    struct problems errs;
    problems_init(&errs);
    struct collected c;
    const struct telemetry_options opt = {.has_at = true, .at_ms = 1764816300250};
    collect_text(&c, a, a_len, TELEMETRY_DCGM, &opt, TELEMETRY_DEFAULT_IDLE_BELOW, 97, &errs);
    assert_int_equal(c.status, 0);
    assert_int_equal(errs.total, 0);
    assert_int_equal(c.samples, 1);
    assert_true(c.first.has_ts);
    assert_true(c.first.ts_ms == 1764816300250);
    assert_near(c.first.duty_cycle, 0.004656);
    const char *row = "2025-12-04T02:45:00.250Z\tGPU-a8394b51";
    assert_memory_equal(c.copy.data, row, strlen(row));
    collected_free(&c);

    const char *mixed = "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"n1\"} 10 1700000000000\n"
                        "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",Hostname=\"n1\"} 20\n";
    collect_text(&c, mixed, strlen(mixed), TELEMETRY_DCGM, &opt, TELEMETRY_DEFAULT_IDLE_BELOW, 50,
                 &errs);
    assert_int_equal(c.status, 0);
    assert_int_equal(errs.total, 0);
    assert_int_equal(c.samples, 2);
    assert_true(c.first.ts_ms == 1700000000000);
    assert_near(figure(&c, "time_span_s"), (1764816300250.0 - 1700000000000.0) / 1000);
    collected_free(&c);

    size_t two_len = 2 * a_len;
    char *two = malloc(two_len);
    assert_non_null(two);
    memcpy(two, a, a_len);
    memcpy(two + a_len, a, a_len);
    collect_text(&c, two, two_len, TELEMETRY_DCGM, &opt, TELEMETRY_DEFAULT_IDLE_BELOW, 4096, &errs);
    assert_int_not_equal(c.status, 0);
    assert_int_equal(errs.total, 1);
    assert_non_null(strstr(errs.items[0].message, "second scrape"));
    assert_true(errs.items[0].line > (long)30);
    collected_free(&c);
    free(two);
    free(a);
    problems_free(&errs);
}

/* Percentiles from the 1001-bin histogram stay within 0.0005 of percentile_cont. */
static void test_summary_quantisation_and_memory(void **state)
{
    (void)state;
    struct telemetry_summary s;
    assert_int_equal(telemetry_summary_init(&s, TELEMETRY_DEFAULT_IDLE_BELOW), 0);
    struct telemetry_sample x = {
        .duty_cycle = 0, .memory_used_gb = NAN, .memory_total_gb = NAN, .power_w = NAN};
    const long n = 1000000;
    for (long i = 0; i < n; i++) {
        /* a deterministic spread over [0, 1]: exact percentile_cont of i/(n-1) is p */
        x.duty_cycle = (double)((i * 7919) % n) / (double)(n - 1);
        snprintf(x.gpu, sizeof x.gpu, "%ld", i % 8);
        assert_int_equal(telemetry_summary_add(&s, &x), 0);
    }
    json_t *j = telemetry_summary_json(&s);
    assert_non_null(j);
    const char *keys[] = {"duty_cycle_p10", "duty_cycle_p50", "duty_cycle_p90"};
    const double exact[] = {0.1, 0.5, 0.9};
    for (int i = 0; i < 3; i++)
        assert_true(fabs(json_number_value(json_object_get(j, keys[i])) - exact[i]) <= 0.0005);
    assert_true(fabs(json_number_value(json_object_get(j, "duty_cycle_mean")) - 0.5) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(j, "gpus")), 8);
    assert_int_equal(s.gpu_cap, 16); /* O(GPUs) memory after a million samples */
    json_decref(j);
    telemetry_summary_free(&s);
    assert_int_equal(telemetry_summary_init(&s, 0), -1);
    assert_int_equal(telemetry_summary_init(&s, 1.5), -1);
}

static void expect_one(const struct problems *errs, long line, long column, const char *message)
{
    assert_int_equal(errs->count, 1);
    assert_int_equal(errs->items[0].line, line);
    assert_int_equal(errs->items[0].column, column);
    assert_string_equal(errs->items[0].message, message);
}

static void run_text(const char *text, enum telemetry_format format,
                     const struct telemetry_options *opt, struct problems *errs,
                     struct collected *c)
{
    problems_free(errs);
    problems_init(errs);
    collect_text(c, text, strlen(text), format, opt, TELEMETRY_DEFAULT_IDLE_BELOW, 7, errs);
}

static void test_malformed_corpus(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct collected c;
    const struct telemetry_options opt = {0};

    run_text("timestamp, memory.used [GiB]\n2024/01/01 00:00:00, 3\n", TELEMETRY_NVIDIA_SMI, &opt,
             &errs, &c);
    assert_int_equal(c.status, -1);
    expect_one(&errs, 1, 2, "memory.used is in GiB; nvidia-smi reports MiB");
    collected_free(&c);

    run_text("utilization.gpu [%], memory.used [MiB]\n50 %, 3 GiB\n150 %, 4 MiB\n7 %, 4 MiB\n",
             TELEMETRY_NVIDIA_SMI, &opt, &errs, &c);
    assert_int_equal(errs.count, 2);
    assert_int_equal(errs.items[0].line, 2);
    assert_int_equal(errs.items[0].column, 2);
    assert_string_equal(errs.items[0].message, "memory.used: unit 'GiB', expected 'MiB'");
    assert_int_equal(errs.items[1].line, 3);
    assert_string_equal(errs.items[1].message,
                        "utilization.gpu: '150 %' is not a valid value (0 to 100 %)");
    assert_near(figure(&c, "samples"), 1); /* the good line is kept */
    collected_free(&c);

    /* readings no GPU gives (issue 9: 2e23 W, 1e308 W summed to infinity) are refused */
    run_text(
        "power.draw [W], memory.used [MiB]\n2e23 W, 10 MiB\n1e308 W, 10 MiB\n300 W, 1e300 MiB\n"
        "700 W, 80000 MiB\n",
        TELEMETRY_NVIDIA_SMI, &opt, &errs, &c);
    assert_int_equal(errs.count, 3);
    assert_int_equal(errs.items[0].line, 2);
    assert_int_equal(errs.items[0].column, 1);
    assert_int_equal(errs.items[2].line, 4);
    assert_int_equal(errs.items[2].column, 2);
    assert_near(figure(&c, "samples"), 1);
    collected_free(&c);
    run_text("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\"} 2e23\n", TELEMETRY_DCGM, &opt,
             &errs, &c);
    assert_int_equal(errs.count, 1);
    collected_free(&c);

    /* wrong delimiter: a semicolon "CSV" has no known column */
    run_text("timestamp; utilization.gpu [%]\n2024/01/01 00:00:00; 5\n", TELEMETRY_NVIDIA_SMI, &opt,
             &errs, &c);
    assert_int_equal(c.status, -1);
    expect_one(&errs, 1, 0,
               "no utilization.gpu, memory.used or power.draw column (a noheader file needs its "
               "--query-gpu list: ?fields=A,B,… in the API, the \"Columns\" field of the upload "
               "form, --param fields=A,B,… of capledger import)");
    collected_free(&c);

    /* truncated: the last line stops after two of the five fields */
    run_text("timestamp, utilization.gpu [%], utilization.memory [%], memory.used [MiB], "
             "memory.total [MiB]\n2024/03/13 07:04:28.836, 0, 0, 0, 81920\n2024/03/13 07:04:33",
             TELEMETRY_NVIDIA_SMI, &opt, &errs, &c);
    expect_one(&errs, 3, 1, "1 fields where the header has 5");
    collected_free(&c);

    run_text("    0   111\n# gpu pwr sm\n# Idx W %\n 0 12 x\n 0 12 5 9\n 0 - 5\n", TELEMETRY_DMON,
             &opt, &errs, &c);
    assert_int_equal(errs.count, 3);
    assert_string_equal(errs.items[0].message, "data before the '# gpu …' header line");
    assert_int_equal(errs.items[1].line, 4);
    assert_int_equal(errs.items[1].column, 3);
    assert_string_equal(errs.items[1].message, "sm: 'x' is not a valid value (0 to 100)");
    assert_string_equal(errs.items[2].message, "4 fields where the header has 3");
    assert_near(figure(&c, "samples"), 1);
    collected_free(&c);

    run_text("# HELP x\nDCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\"} 1.5\n"
             "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\" 5\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} five\n"
             "9bad 1\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\",note=\"a \\\"quoted\\\" }\"} 40 17 extra\n"
             "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",note=\"a \\\"quoted\\\" }\"} 40\n",
             TELEMETRY_DCGM, &opt, &errs, &c);
    assert_int_equal(errs.count, 5);
    assert_string_equal(errs.items[0].message,
                        "DCGM_FI_PROF_GR_ENGINE_ACTIVE = 1.5 is outside [0, 1]");
    assert_int_equal(errs.items[1].line, 3);
    assert_int_equal(errs.items[1].column, 30); /* the '5' where a label or '}' belongs */
    assert_int_equal(errs.items[2].column, 31);
    assert_int_equal(errs.items[3].column, 1);
    assert_int_equal(errs.items[4].line, 6);
    assert_near(figure(&c, "samples"), 1);
    assert_near(figure(&c, "duty_cycle_mean"), 0.4);
    collected_free(&c);

    /* binary garbage, invalid UTF-8 and a 10 MB line through each reader */
    unsigned char garbage[8192];
    uint32_t x = 88172645u;
    for (size_t i = 0; i < sizeof garbage; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        garbage[i] = (unsigned char)x;
    }
    const size_t big = 10u << 20;
    char *huge = malloc(big + 64);
    assert_non_null(huge);
    const char *head = "# gpu pwr sm\n";
    memcpy(huge, head, strlen(head));
    memset(huge + strlen(head), '7', big);
    memcpy(huge + strlen(head) + big, "\n 0 1 2\n", 8);
    for (int f = TELEMETRY_NVIDIA_SMI; f <= TELEMETRY_DCGM; f++) {
        problems_free(&errs);
        problems_init(&errs);
        collect_text(&c, (const char *)garbage, sizeof garbage, (enum telemetry_format)f, &opt,
                     TELEMETRY_DEFAULT_IDLE_BELOW, 333, &errs);
        assert_true(errs.total > 0);
        for (size_t i = 0; i < errs.count; i++)
            assert_true(errs.items[i].line > 0 || f == TELEMETRY_NVIDIA_SMI);
        collected_free(&c);
    }
    problems_free(&errs);
    problems_init(&errs);
    collect_text(&c, huge, strlen(head) + big + 8, TELEMETRY_DMON, &opt,
                 TELEMETRY_DEFAULT_IDLE_BELOW, 65536, &errs);
    expect_one(&errs, 2, 0, "line 2 is longer than 1048576 bytes");
    assert_near(figure(&c, "samples"), 1);
    collected_free(&c);
    free(huge);

    run_text("# gpu pwr sm\n 0 1 \xE9t\xE9\n 0 1 2\n", TELEMETRY_DMON, &opt, &errs, &c);
    expect_one(&errs, 2, 6, "line 2 is not valid UTF-8 at byte 6");
    collected_free(&c);

    /* a query list naming nothing readable is refused at once */
    problems_free(&errs);
    problems_init(&errs);
    struct telemetry_reader r;
    const struct telemetry_options bad_fields = {.fields = "fan.speed,temperature.gpu"};
    assert_int_equal(
        telemetry_reader_init(&r, TELEMETRY_NVIDIA_SMI, &bad_fields, collect_sample, NULL, &errs),
        -1);
    assert_int_equal(errs.count, 1);
    telemetry_reader_free(&r);
    problems_free(&errs);
}

/* Attack pass: a DCGM timestamp outside 1970..9999 was clamped to 9999-12-31 (stored, altered)
 * or refused by PostgreSQL without a line; now the line is faulty, named, and the rest kept. */
static void test_dcgm_timestamp_range(void **state)
{
    (void)state;
    const char *text = "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\"} 50 99999999999999999\n"
                       "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\"} 50 -62135596800001\n"
                       "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\"} 50 253402300799999\n";
    struct problems errs;
    problems_init(&errs);
    struct collected c;
    const struct telemetry_options opt = {.has_at = false};
    collect_text(&c, text, strlen(text), TELEMETRY_DCGM, &opt, TELEMETRY_DEFAULT_IDLE_BELOW, 64,
                 &errs);
    assert_int_equal(errs.total, 2);
    assert_int_equal(errs.items[0].line, 1);
    assert_int_equal(errs.items[1].line, 2);
    assert_non_null(strstr(errs.items[0].message, "milliseconds since 1970"));
    assert_int_equal(c.samples, 1);
    assert_true(c.first.ts_ms == 253402300799999);
    collected_free(&c);
    problems_free(&errs);
}

/* A GPU's name, id or label holding control characters (a terminal escape in an nvidia-smi
 * name column) is a faulty line naming its column: never a sample (it would reach warnings,
 * summaries and terminals). */
static void test_control_characters_in_gpu_texts(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    struct collected c;
    const struct telemetry_options opt = {.has_at = false};
    const char *smi = "timestamp, name, pci.bus_id, utilization.gpu [%]\n"
                      "2024/03/13 10:00:00.000, NVIDIA H100, 00000000:01:00.0, 50 %\n"
                      "2024/03/13 10:00:01.000, NV\x1b]0;pwn\x07H100, 00000000:01:00.0, 50 %\n"
                      "2024/03/13 10:00:02.000, NVIDIA H100, 0000\xc2\x9b"
                      "2J:01:00.0, 50 %\n";
    collect_text(&c, smi, strlen(smi), TELEMETRY_NVIDIA_SMI, &opt, TELEMETRY_DEFAULT_IDLE_BELOW, 64,
                 &errs);
    assert_int_equal(c.samples, 1);
    assert_int_equal(errs.total, 2);
    assert_int_equal(errs.items[0].line, 3);
    assert_int_equal(errs.items[0].column, 2);
    assert_non_null(strstr(errs.items[0].message, "name: "));
    assert_int_equal(errs.items[1].line, 4);
    assert_int_equal(errs.items[1].column, 3);
    collected_free(&c);
    problems_free(&errs);

    problems_init(&errs);
    const char *dcgm = "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",Hostname=\"n\x1b[2Jx\"} 50\n"
                       "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-2\",Hostname=\"node\"} 40\n";
    collect_text(&c, dcgm, strlen(dcgm), TELEMETRY_DCGM, &opt, TELEMETRY_DEFAULT_IDLE_BELOW, 64,
                 &errs);
    assert_int_equal(errs.total, 1);
    assert_int_equal(errs.items[0].line, 1);
    assert_non_null(strstr(errs.items[0].message, "GPU label: "));
    assert_int_equal(c.samples, 1);
    collected_free(&c);
    problems_free(&errs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_control_characters_in_gpu_texts),
        cmocka_unit_test(test_detect_format),
        cmocka_unit_test(test_nesi_nounits_series),
        cmocka_unit_test(test_nesi_noheader_and_time_zone),
        cmocka_unit_test(test_bpytop_two_gpus_units_in_values),
        cmocka_unit_test(test_h100_mig_query_gpu),
        cmocka_unit_test(test_dmon_h200),
        cmocka_unit_test(test_dmon_old_format_four_gpus),
        cmocka_unit_test(test_dmon_misaligned),
        cmocka_unit_test(test_dmon_with_date_and_time),
        cmocka_unit_test(test_dcgm_lke_prefers_gr_engine_active),
        cmocka_unit_test(test_dcgm_upcloud_idle),
        cmocka_unit_test(test_dcgm_several_scrapes),
        cmocka_unit_test(test_dcgm_at_scrape_time),
        cmocka_unit_test(test_dcgm_timestamp_range),
        cmocka_unit_test(test_summary_quantisation_and_memory),
        cmocka_unit_test(test_malformed_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
