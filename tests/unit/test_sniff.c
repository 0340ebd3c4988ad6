/* Upload content sniffing: every real sample file of tests/data/samples is recognised as the
 * upload it belongs to, and a file sent to the wrong upload names its real one (issue 23: a
 * sacct file sent as telemetry, an MLPerf log sent as vLLM). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/formats/formats.h"
#include "core/formats/sniff.h"
#include "sample_text.h"
#include "oracle/format_names.h"

struct expect {
    const char *file;
    enum sniff_upload upload;
    const char *format;
};

static const struct expect SAMPLES[] = {
    {"samples/sacct/cluster_utils_issue87_sacct_parsable2.txt", SNIFF_RUNS, "sacct"},
    {"samples/sacct/sonar_fox_sacct_aP_noheader_2024.txt", SNIFF_RUNS, "sacct"},
    {"samples/sacct/sonar_fox_sacct_aP_noheader_gpu.txt", SNIFF_RUNS, "sacct"},
    {"samples/nvidia-smi/bpytop_issue26_2gpu_mixed_units.csv", SNIFF_TELEMETRY, "nvidia-smi"},
    {"samples/nvidia-smi/nesi_a100_nounits_l5_timeseries.csv", SNIFF_TELEMETRY, "nvidia-smi"},
    {"samples/nvidia-smi/nvidia_gpu_exporter_h100-mig_590.48.01_load_query-gpu.csv",
     SNIFF_TELEMETRY, "nvidia-smi"},
    {"samples/nvidia-smi-dmon/deepspeech_issue178_dmon_s_pucvmet_4gpu_oldformat.txt",
     SNIFF_TELEMETRY, "dmon"},
    {"samples/nvidia-smi-dmon/nvidia_gpu_exporter_h200_590.48.01_load_dmon_c5.txt", SNIFF_TELEMETRY,
     "dmon"},
    {"samples/dcgm/upcloud_uks_l40s_dcgm-exporter_metrics.prom", SNIFF_TELEMETRY, "dcgm"},
    {"samples/dcgm/lke_rtx4000ada_k8s_podlabels_dcgm-exporter_metrics.prom", SNIFF_TELEMETRY,
     "dcgm"},
    {"samples/vllm-bench/nerdalert_llmd_l40s_llama3.2-3b_rate-sweep_results.jsonl", SNIFF_LOADTEST,
     "vllm"},
    {"samples/vllm-bench/vllm_bench_serve_ascend_qwen2.5-vl-3b_rate1_failed1.json", SNIFF_LOADTEST,
     "vllm"},
    {"samples/genai-perf/cloudai_dynamo_llama3.1-405b_profile_export_genai_perf.csv",
     SNIFF_LOADTEST, "genai-perf"},
    {"samples/genai-perf/perf_analyzer_issue298_genai-perf_trtllm_c100_streaming.json",
     SNIFF_LOADTEST, "genai-perf"},
    {"samples/mlperf/nvidia_h200x8_llama2-70b-99_server_mlperf_log_summary.txt", SNIFF_LOADTEST,
     "mlperf"},
    {"samples/mlperf/amd_8xmi300x_llama2-70b-99_server_mlperf_log_summary.txt", SNIFF_LOADTEST,
     "mlperf"},
    {"samples/skypilot-catalog/lambda_vms_v7_excerpt.csv", SNIFF_OFFERS, "skypilot"},
    {"samples/skypilot-catalog/gcp_vms_v7_excerpt.csv", SNIFF_OFFERS, "skypilot"},
};

static void every_sample_is_recognised(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof SAMPLES / sizeof SAMPLES[0]; i++) {
        size_t len;
        char *text = sample_load(SAMPLES[i].file, &len);
        struct sniff s = sniff_content(text, len < SNIFF_DETECT_BYTES ? len : SNIFF_DETECT_BYTES);
        if (s.upload != SAMPLES[i].upload || strcmp(s.format, SAMPLES[i].format) != 0)
            fail_msg("%s: got upload %d format %s", SAMPLES[i].file, (int)s.upload, s.format);
        /* On its own upload there is nothing to say. */
        char msg[256];
        assert_int_equal(
            sniff_mismatch(text, len, SAMPLES[i].upload, SAMPLES[i].format, NULL, msg, sizeof msg),
            0);
        assert_string_equal(msg, "");
        free(text);
    }
}

static void sacct_sent_as_telemetry_names_job_accounting(void **state)
{
    (void)state;
    size_t len;
    char *text = sample_load("samples/sacct/sonar_fox_sacct_aP_noheader_gpu.txt", &len);
    char msg[256];
    struct sniff s;
    assert_int_equal(sniff_mismatch(text, len, SNIFF_TELEMETRY, NULL, &s, msg, sizeof msg), 1);
    assert_int_equal(s.upload, SNIFF_RUNS);
    assert_string_equal(msg, "this looks like Slurm sacct output: upload it as job accounting "
                             "(POST /api/v1/runs)");
    free(text);
}

static void mlperf_sent_as_vllm_names_the_tool(void **state)
{
    (void)state;
    size_t len;
    char *text = sample_load(
        "samples/mlperf/nvidia_h200x8_llama2-70b-99_server_mlperf_log_summary.txt", &len);
    char msg[256];
    assert_int_equal(sniff_mismatch(text, len, SNIFF_LOADTEST, "vllm", NULL, msg, sizeof msg), 1);
    assert_string_equal(msg, "this looks like an MLPerf LoadGen log: upload it as a load test "
                             "with format mlperf");
    /* Without a format named, the route is right and there is nothing to say. */
    assert_int_equal(sniff_mismatch(text, len, SNIFF_LOADTEST, NULL, NULL, msg, sizeof msg), 0);
    free(text);
}

static void telemetry_sent_as_runs_and_offers(void **state)
{
    (void)state;
    size_t len;
    char *text = sample_load("samples/nvidia-smi/nesi_a100_nounits_l5_timeseries.csv", &len);
    char msg[256];
    assert_int_equal(sniff_mismatch(text, len, SNIFF_RUNS, NULL, NULL, msg, sizeof msg), 1);
    assert_string_equal(msg, "this looks like nvidia-smi --query-gpu CSV output: upload it as GPU "
                             "telemetry of a benchmark (POST /api/v1/benchmarks/{id}/telemetry)");
    free(text);
    text = sample_load("samples/skypilot-catalog/lambda_vms_v7_excerpt.csv", &len);
    assert_int_equal(sniff_mismatch(text, len, SNIFF_TELEMETRY, NULL, NULL, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "a SkyPilot catalog"));
    free(text);
}

static void unknown_and_hostile_input_is_not_guessed(void **state)
{
    (void)state;
    const char *cases[] = {"",      "   \n\n",      "hello world\n", "a,b,c\n1,2,3\n", "{\"x\": 1}",
                           "|||\n", "\xEF\xBB\xBF", "#\n",           "[1,2,3]"};
    char msg[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sniff s = sniff_content(cases[i], strlen(cases[i]));
        assert_int_equal(s.upload, SNIFF_NONE);
        assert_int_equal(
            sniff_mismatch(cases[i], strlen(cases[i]), SNIFF_RUNS, NULL, NULL, msg, sizeof msg), 0);
    }
    assert_int_equal(sniff_content(NULL, 0).upload, SNIFF_NONE);
    /* A tiny buffer truncates the sentence, never overruns it. */
    char small[8];
    const char *sacct = "JobID|State|Submit\n1|COMPLETED|2024-01-01T00:00:00\n";
    assert_int_equal(
        sniff_mismatch(sacct, strlen(sacct), SNIFF_TELEMETRY, NULL, NULL, small, sizeof small), 1);
    assert_int_equal(strlen(small), sizeof small - 1);
}

/* The names the sniffer gives are ?format= values of the formats table (core/formats/formats.h),
 * each of its own upload kind. */
static void sniffed_formats_are_the_tables(void **state)
{
    (void)state;
    static const char *const KINDS[] = {[SNIFF_RUNS] = "runs",
                                        [SNIFF_TELEMETRY] = "telemetry",
                                        [SNIFF_LOADTEST] = "loadtest",
                                        [SNIFF_OFFERS] = "offers"};
    int seen[SNIFF_OFFERS + 1] = {0};
    for (size_t i = 0; i < sizeof SAMPLES / sizeof SAMPLES[0]; i++) {
        size_t len;
        char *text = sample_load(SAMPLES[i].file, &len);
        struct sniff s = sniff_content(text, len < SNIFF_DETECT_BYTES ? len : SNIFF_DETECT_BYTES);
        free(text);
        assert_true(s.upload > SNIFF_NONE && s.upload <= SNIFF_OFFERS);
        const char *const *names = format_names_of(KINDS[s.upload]);
        assert_non_null(names);
        if (format_find(names, s.format) == 0)
            fail_msg("%s: %s is not a %s format", SAMPLES[i].file, s.format, KINDS[s.upload]);
        seen[s.upload] = 1;
    }
    for (int u = SNIFF_RUNS; u <= SNIFF_OFFERS; u++)
        assert_true(seen[u]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_sample_is_recognised),
        cmocka_unit_test(sniffed_formats_are_the_tables),
        cmocka_unit_test(sacct_sent_as_telemetry_names_job_accounting),
        cmocka_unit_test(mlperf_sent_as_vllm_names_the_tool),
        cmocka_unit_test(telemetry_sent_as_runs_and_offers),
        cmocka_unit_test(unknown_and_hostile_input_is_not_guessed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
