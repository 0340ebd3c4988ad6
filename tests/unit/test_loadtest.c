/* Load-test importers over every real vLLM, GenAI-Perf and MLPerf sample, their quirks, and
 * malformed input.
 *
 * Expected figures were read off the sample files (or computed with Python's json module over
 * them), independently of this code; each assertion names where its figure comes from. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/formats/loadtest.h"
#include "sample_text.h"

#define SWEEP "samples/vllm-bench/nerdalert_llmd_l40s_llama3.2-3b_rate-sweep_results.jsonl"
#define ASCEND "samples/vllm-bench/vllm_bench_serve_ascend_qwen2.5-vl-3b_rate1_failed1.json"
#define GENAI_CSV "samples/genai-perf/cloudai_dynamo_llama3.1-405b_profile_export_genai_perf.csv"
#define GENAI_STREAM                                                                               \
    "samples/genai-perf/perf_analyzer_issue298_genai-perf_trtllm_c100_streaming.json"
#define GENAI_PLAIN                                                                                \
    "samples/genai-perf/perf_analyzer_issue298_genai-perf_trtllm_c100_nonstreaming.json"
#define MLPERF_NVIDIA "samples/mlperf/nvidia_h200x8_llama2-70b-99_server_mlperf_log_summary.txt"
#define MLPERF_AMD "samples/mlperf/amd_8xmi300x_llama2-70b-99_server_mlperf_log_summary.txt"
#define MLPERF_DELL "samples/mlperf/dell_xe9680_h200x8_resnet50_server_mlperf_log_summary.txt"

static void assert_near(double got, double expected)
{
    assert_true(fabs(got - expected) <= 1e-9 * fmax(1, fabs(expected)));
}

static json_t *parse_text(enum loadtest_format f, const char *text, size_t len,
                          const struct loadtest_options *opt, struct problems *errs)
{
    return loadtest_parse(f, text, len, opt, errs);
}

static json_t *parse_sample(enum loadtest_format f, const char *rel,
                            const struct loadtest_options *opt, struct problems *errs)
{
    size_t len;
    char *text = sample_load(rel, &len);
    json_t *doc = parse_text(f, text, len, opt, errs);
    free(text);
    return doc;
}

static json_t *point(const json_t *doc, size_t i)
{
    json_t *p = json_array_get(json_object_get(doc, "load_points"), i);
    assert_non_null(p);
    return p;
}

static double num(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static const char *str(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    assert_true(json_is_string(v));
    return json_string_value(v);
}

/* nerdalert sweep, JSON Lines despite .json: 9 results (3 deployments x rates 10, 30, "inf").
 * Sorted by offered rate: the three 10s (lines 1, 4, 7), the three 30s (2, 5, 8), then the
 * saturated ones, whose offered = achieved = request_throughput: 31.183176225808488 (line 3),
 * 37.76400079389359 (line 6), 41.21716673334341 (line 9). completed = num_prompts everywhere
 * → error_rate 0. Only p99 percentiles: line 1 p99_ttft_ms 98.69780922984769,
 * p99_tpot_ms 15.793261194984588, median_ttft_ms 52.868896000063614. */
static void test_vllm_sweep_jsonl(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    json_t *doc = parse_sample(LOADTEST_VLLM, SWEEP, NULL, &errs);
    assert_non_null(doc);
    assert_int_equal(errs.total, 0);
    assert_string_equal(str(doc, "tool"), "vllm");
    assert_true(json_is_true(json_object_get(doc, "saturated")));
    assert_string_equal(str(doc, "model"), "meta-llama/Llama-3.2-3B-Instruct");
    assert_int_equal(json_array_size(json_object_get(doc, "load_points")), 9);
    static const double offered[] = {
        10, 10, 10, 30, 30, 30, 31.183176225808488, 37.76400079389359, 41.21716673334341};
    static const long lines[] = {1, 4, 7, 2, 5, 8, 3, 6, 9};
    json_t *results = json_object_get(doc, "results");
    for (size_t i = 0; i < 9; i++) {
        assert_near(num(point(doc, i), "offered_rps"), offered[i]);
        assert_near(num(point(doc, i), "error_rate"), 0);
        json_t *r = json_array_get(results, i);
        assert_int_equal(json_integer_value(json_object_get(r, "line")), lines[i]);
        assert_int_equal(json_is_true(json_object_get(r, "saturated")), i >= 6);
    }
    assert_near(num(point(doc, 8), "achieved_rps"), 41.21716673334341);
    assert_string_equal(str(json_array_get(results, 8), "offered_rps_source"), "saturated");
    assert_string_equal(str(json_array_get(results, 8), "request_rate"), "inf");
    assert_near(num(point(doc, 0), "achieved_rps"), 8.369432347779671);
    assert_near(num(point(doc, 0), "ttft_p99_ms"), 98.69780922984769);
    assert_near(num(point(doc, 0), "tpot_p99_ms"), 15.793261194984588);
    assert_near(num(point(doc, 0), "ttft_p50_ms"), 52.868896000063614);
    assert_null(json_object_get(point(doc, 0), "ttft_p95_ms")); /* not in the file */
    /* "request_goodput:" is null here: no goodput figure */
    assert_null(json_object_get(json_array_get(results, 0), "goodput_rps"));
    /* two offered rates repeat: one warning each */
    assert_int_equal(json_array_size(json_object_get(doc, "warnings")), 2);
    json_decref(doc);

    /* one configuration of the sweep: deployment = kvcache (lines 7, 8, 9) */
    const struct loadtest_options kv = {.where_key = "deployment", .where_value = "kvcache"};
    doc = parse_sample(LOADTEST_VLLM, SWEEP, &kv, &errs);
    assert_non_null(doc);
    assert_int_equal(json_array_size(json_object_get(doc, "load_points")), 3);
    assert_near(num(point(doc, 0), "achieved_rps"), 8.338023992028779);
    assert_near(num(point(doc, 2), "offered_rps"), 41.21716673334341);
    assert_int_equal(json_array_size(json_object_get(doc, "warnings")), 0);
    json_decref(doc);
    const struct loadtest_options none = {.where_key = "deployment", .where_value = "gpu-direct"};
    assert_null(parse_sample(LOADTEST_VLLM, SWEEP, &none, &errs));
    assert_string_equal(errs.items[0].message, "no result has deployment = gpu-direct");
    problems_free(&errs);
}

/* The sweep as one JSON array, and its saturated point alone; a goodput with the colon key. */
static void test_vllm_array_and_goodput_colon_key(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    const char *array =
        "[{\"request_rate\": \"inf\", \"request_throughput\": 12.5, \"completed\": 90, "
        "\"num_prompts\": 100, \"request_goodput:\": 11.0, \"p99.9_e2el_ms\": 900, "
        "\"mean_e2el_ms\": 400},\n {\"request_rate\": 4, \"request_throughput\": 3.9, "
        "\"completed\": 100, \"num_prompts\": 100}]";
    json_t *doc = parse_text(LOADTEST_VLLM, array, strlen(array), NULL, &errs);
    assert_non_null(doc);
    assert_near(num(point(doc, 0), "offered_rps"), 4);
    assert_near(num(point(doc, 1), "offered_rps"), 12.5);
    assert_near(num(point(doc, 1), "error_rate"), 0.1); /* (100 - 90) / 100 */
    assert_near(num(point(doc, 1), "e2e_p99_9_ms"), 900);
    assert_near(num(point(doc, 1), "e2e_mean_ms"), 400);
    json_t *r = json_array_get(json_object_get(doc, "results"), 1);
    assert_near(num(r, "goodput_rps"), 11);
    assert_int_equal(json_integer_value(json_object_get(r, "source_index")), 0);
    json_decref(doc);
    problems_free(&errs);
}

/* vllm bench serve (newer schema): completed 199, failed 1 → error_rate 1/200; request_rate
 * 1.0 → offered 1; request_throughput 0.9733236714351853; p99_ttft_ms 113.88637554366143. */
static void test_vllm_bench_serve_with_failure(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    json_t *doc = parse_sample(LOADTEST_VLLM, ASCEND, NULL, &errs);
    assert_non_null(doc);
    assert_int_equal(errs.total, 0);
    assert_false(json_is_true(json_object_get(doc, "saturated")));
    assert_near(num(point(doc, 0), "offered_rps"), 1);
    assert_near(num(point(doc, 0), "achieved_rps"), 0.9733236714351853);
    assert_near(num(point(doc, 0), "error_rate"), 1.0 / 200);
    assert_near(num(point(doc, 0), "ttft_p99_ms"), 113.88637554366143);
    assert_near(num(point(doc, 0), "itl_p99_ms"), 38.25465443544089);
    json_t *r = json_array_get(json_object_get(doc, "results"), 0);
    assert_int_equal(json_integer_value(json_object_get(r, "failed")), 1);
    assert_near(num(r, "duration_s"), 204.45408433000557);
    assert_string_equal(str(doc, "model"), "./Qwen2.5-VL-3B-Instruct");
    json_decref(doc);
    problems_free(&errs);
}

/* GenAI-Perf CSV (CloudAI): TTFT avg "1,146.31", p99 "3,457.97", p50 640.07; Request Latency
 * p95 "9,046.58"; Inter Token Latency p99 35.23 → tpot; Request Throughput 1.50; Request Count
 * 40; Output Token Throughput 261.25; ISL avg "3,000.05". The CSV records no rate. */
static void test_genai_perf_csv(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    json_t *doc = parse_sample(LOADTEST_GENAI_PERF, GENAI_CSV, NULL, &errs);
    assert_non_null(doc);
    assert_int_equal(errs.total, 0);
    json_t *p = point(doc, 0);
    assert_near(num(p, "achieved_rps"), 1.5);
    assert_near(num(p, "offered_rps"), 1.5);
    assert_near(num(p, "ttft_mean_ms"), 1146.31);
    assert_near(num(p, "ttft_p99_ms"), 3457.97);
    assert_near(num(p, "ttft_p50_ms"), 640.07);
    assert_near(num(p, "e2e_p95_ms"), 9046.58);
    assert_near(num(p, "tpot_p99_ms"), 35.23);
    assert_near(num(p, "ttst_p90_ms"), 34.88);
    assert_null(json_object_get(p, "error_rate"));
    json_t *r = json_array_get(json_object_get(doc, "results"), 0);
    assert_near(num(r, "completed"), 40);
    assert_near(num(r, "output_throughput"), 261.25);
    assert_near(num(r, "input_tokens_per_request_mean"), 3000.05);
    assert_string_equal(str(r, "offered_rps_source"), "not_recorded");
    json_decref(doc);

    /* the CRLF that real genai-perf writes reads the same */
    size_t len;
    char *text = sample_load(GENAI_CSV, &len);
    char *crlf = malloc(len * 2);
    assert_non_null(crlf);
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n')
            crlf[n++] = '\r';
        crlf[n++] = text[i];
    }
    doc = parse_text(LOADTEST_GENAI_PERF, crlf, n, NULL, &errs);
    assert_non_null(doc);
    assert_near(num(point(doc, 0), "e2e_p95_ms"), 9046.58);
    json_decref(doc);
    free(crlf);
    free(text);
    problems_free(&errs);
}

/* GenAI-Perf JSON, streaming, concurrency 100: request_throughput.avg 17.222547659562533 (a
 * closed-loop run: offered = achieved); time_to_first_token.p99 425.02943662;
 * inter_token_latency.p99 2.2631232999999997 → tpot; OSL avg 2565.855 against
 * output_tokens_mean 500 → the 5x bug warning. */
static void test_genai_perf_json_streaming(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    json_t *doc = parse_sample(LOADTEST_GENAI_PERF, GENAI_STREAM, NULL, &errs);
    assert_non_null(doc);
    assert_int_equal(errs.total, 0);
    json_t *p = point(doc, 0);
    assert_near(num(p, "achieved_rps"), 17.222547659562533);
    assert_near(num(p, "offered_rps"), 17.222547659562533);
    assert_near(num(p, "ttft_p99_ms"), 425.02943662);
    assert_near(num(p, "tpot_p99_ms"), 2.2631232999999997);
    assert_near(num(p, "e2e_p50_ms"), 5778.654798);
    json_t *r = json_array_get(json_object_get(doc, "results"), 0);
    assert_string_equal(str(r, "offered_rps_source"), "closed_loop");
    assert_int_equal(json_integer_value(json_object_get(r, "concurrency")), 100);
    assert_near(num(r, "output_tokens_per_request_mean"), 2565.855);
    assert_string_equal(str(doc, "model"), "ensemble");
    json_t *w = json_object_get(doc, "warnings");
    assert_int_equal(json_array_size(w), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(w, 0), "code")),
                        "output_length");
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(w, 0), "message")),
                           "5.1x the 500 requested"));
    json_decref(doc);
    problems_free(&errs);
}

/* Non-streaming: no inter_token_latency, and time_to_first_token equals request_latency, so
 * no ttft_* is kept; request_latency.p99 6156.11159006; throughput 21.621765653636075. */
static void test_genai_perf_json_non_streaming(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    json_t *doc = parse_sample(LOADTEST_GENAI_PERF, GENAI_PLAIN, NULL, &errs);
    assert_non_null(doc);
    assert_int_equal(errs.total, 0);
    json_t *p = point(doc, 0);
    assert_near(num(p, "achieved_rps"), 21.621765653636075);
    assert_near(num(p, "e2e_p99_ms"), 6156.11159006);
    assert_null(json_object_get(p, "ttft_p99_ms"));
    assert_null(json_object_get(p, "tpot_p99_ms"));
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(doc, "warnings"), 0), "message")),
                        "not streaming: time to first token is the whole response and is not "
                        "kept");
    json_decref(doc);
    problems_free(&errs);
}

/* MLPerf Server, NVIDIA H200 llama2-70b: Scheduled 101.25, Completed 100.35 samples/s; ns →
 * ms: 99.00 percentile first token 452744202 ns = 452.744202 ms; 99.00 percentile time to
 * output token 146040006 ns; 99.90 percentile latency 132503046236 ns; ttft_latency 2e9 ns. */
static void test_mlperf_nvidia_server(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    json_t *doc = parse_sample(LOADTEST_MLPERF, MLPERF_NVIDIA, NULL, &errs);
    assert_non_null(doc);
    assert_int_equal(errs.total, 0);
    assert_true(json_is_true(json_object_get(doc, "valid")));
    json_t *p = point(doc, 0);
    assert_near(num(p, "offered_rps"), 101.25);
    assert_near(num(p, "achieved_rps"), 100.35);
    assert_near(num(p, "ttft_p99_ms"), 452.744202);
    assert_near(num(p, "tpot_p99_ms"), 146.040006);
    assert_near(num(p, "e2e_p99_9_ms"), 132503.046236);
    assert_near(num(p, "e2e_p50_ms"), 31107.282906);
    assert_near(num(p, "ttft_mean_ms"), 198.269106);
    json_t *r = json_array_get(json_object_get(doc, "results"), 0);
    assert_near(num(json_object_get(r, "constraints"), "ttft_ms"), 2000);
    assert_near(num(json_object_get(r, "constraints"), "tpot_ms"), 200);
    assert_near(num(r, "output_throughput"), 29228.22);
    assert_string_equal(str(r, "sut_name"), "llama2-70b-Server-SUT");
    assert_string_equal(str(r, "offered_rps_source"), "scheduled");
    assert_int_equal(json_integer_value(json_object_get(r, "warnings")), 0);
    json_decref(doc);
    problems_free(&errs);
}

/* AMD MI300X: target_qps 73.5 (fractional), Scheduled 73.66, Completed 71.74. Dell resnet50
 * (non-LLM): one latency family only, 9 warnings, p99 12893547 ns. */
static void test_mlperf_amd_and_dell(void **state)
{
    (void)state;
    struct problems errs;
    problems_init(&errs);
    json_t *doc = parse_sample(LOADTEST_MLPERF, MLPERF_AMD, NULL, &errs);
    assert_non_null(doc);
    assert_near(num(point(doc, 0), "offered_rps"), 73.66);
    assert_near(num(point(doc, 0), "achieved_rps"), 71.74);
    json_t *r = json_array_get(json_object_get(doc, "results"), 0);
    assert_near(num(r, "target_qps"), 73.5);
    assert_string_equal(str(r, "sut_name"), "PySUT");
    json_decref(doc);

    doc = parse_sample(LOADTEST_MLPERF, MLPERF_DELL, NULL, &errs);
    assert_non_null(doc);
    assert_int_equal(errs.total, 0);
    json_t *p = point(doc, 0);
    assert_near(num(p, "offered_rps"), 630239.5);
    assert_near(num(p, "achieved_rps"), 630225.9);
    assert_near(num(p, "e2e_p99_ms"), 12.893547);
    assert_null(json_object_get(p, "ttft_p99_ms"));
    r = json_array_get(json_object_get(doc, "results"), 0);
    assert_int_equal(json_integer_value(json_object_get(r, "warnings")), 9);
    assert_near(num(json_object_get(r, "constraints"), "latency_ms"), 15);
    /* "9 warnings encountered" is said, not only counted */
    json_t *w = json_array_get(json_object_get(doc, "warnings"), 0);
    assert_string_equal(json_string_value(json_object_get(w, "code")), "mlperf_warnings");
    assert_non_null(strstr(json_string_value(json_object_get(w, "message")), "9 warnings"));
    json_decref(doc);
    problems_free(&errs);
}

/* An INVALID summary (the NVIDIA file with its verdict changed): valid false, no load point,
 * the figures kept under rejected_load_points. */
static void test_mlperf_invalid_is_never_capacity(void **state)
{
    (void)state;
    size_t len;
    char *text = sample_load(MLPERF_NVIDIA, &len);
    char *verdict = strstr(text, "Result is : VALID");
    assert_non_null(verdict);
    size_t head = (size_t)(verdict - text) + strlen("Result is : ");
    char *invalid = malloc(len + 8);
    assert_non_null(invalid);
    memcpy(invalid, text, head);
    memcpy(invalid + head, "IN", 2);
    memcpy(invalid + head + 2, text + head, len - head);
    struct problems errs;
    problems_init(&errs);
    json_t *doc = parse_text(LOADTEST_MLPERF, invalid, len + 2, NULL, &errs);
    assert_non_null(doc);
    assert_false(json_is_true(json_object_get(doc, "valid")));
    assert_int_equal(json_array_size(json_object_get(doc, "load_points")), 0);
    json_t *rejected = json_array_get(json_object_get(doc, "rejected_load_points"), 0);
    assert_string_equal(str(rejected, "result"), "INVALID");
    assert_near(num(json_object_get(rejected, "load_point"), "achieved_rps"), 100.35);
    json_decref(doc);
    free(invalid);
    free(text);
    problems_free(&errs);
}

static void expect_problem(enum loadtest_format f, const char *text, long line, const char *pointer,
                           const char *message)
{
    struct problems errs;
    problems_init(&errs);
    json_t *doc = parse_text(f, text, strlen(text), NULL, &errs);
    assert_null(doc);
    assert_true(errs.count >= 1);
    assert_int_equal(errs.items[0].line, line);
    assert_string_equal(errs.items[0].pointer, pointer);
    assert_string_equal(errs.items[0].message, message);
    problems_free(&errs);
}

static void test_malformed_corpus(void **state)
{
    (void)state;
    expect_problem(LOADTEST_VLLM, "{\"request_throughput\": 1}\n{\"request_rate\": 2,", 2, "",
                   "not JSON: string or '}' expected near end of file");
    expect_problem(LOADTEST_VLLM, "{\"request_rate\": \"fast\", \"request_throughput\": 1}", 1,
                   "/0/request_rate", "request_rate must be a positive number or \"inf\"");
    expect_problem(LOADTEST_VLLM, "[{\"request_throughput\": \"9\"}]", 0, "/0/request_throughput",
                   "request_throughput must be a number");
    expect_problem(LOADTEST_VLLM, "\n{\"completed\": 0, \"request_throughput\": 0}", 2,
                   "/0/request_throughput",
                   "request_throughput must be a positive number (requests/s)");
    expect_problem(LOADTEST_VLLM, "[1, 2]", 0, "/0", "a vLLM result must be a JSON object");
    expect_problem(LOADTEST_VLLM, "   ", 0, "", "no result");
    expect_problem(LOADTEST_VLLM, "{\"a\": 1, \"a\": 2}", 1, "",
                   "not JSON: duplicate object key near '\"a\"'");
    expect_problem(LOADTEST_GENAI_PERF, "Metric,avg\nRequest Latency (ms),\"1,2\n", 2, "",
                   "unterminated quoted field");
    expect_problem(LOADTEST_GENAI_PERF, "Metric,avg,p99\nRequest Latency (ms),12\n", 2, "",
                   "2 fields where the block's header has 3");
    expect_problem(LOADTEST_GENAI_PERF, "Metric,avg\nRequest Latency (ms),fast\n", 2, "",
                   "'fast' is not a number");
    expect_problem(LOADTEST_GENAI_PERF, "Metric,avg\nRequest Latency (fortnights),1\n", 2, "",
                   "unknown time unit in 'Request Latency (fortnights)'");
    /* wrong delimiter: "Metric;avg;p99" is one cell, not the block header */
    expect_problem(LOADTEST_GENAI_PERF, "Metric;avg;p99\n", 1, "",
                   "a row before its block's Metric header");
    expect_problem(LOADTEST_GENAI_PERF, "Metric,Value\nRequest Count (count),4\n", 0, "",
                   "no positive request throughput (Request Throughput)");
    expect_problem(LOADTEST_GENAI_PERF, "{\"request_latency\": {\"avg\": 3}}", 0,
                   "/request_latency", "unknown or missing time unit");
    expect_problem(LOADTEST_MLPERF, "Scenario : Server\nResult is : VALID\n", 0, "",
                   "no positive samples-per-second figures for scenario Server");
    expect_problem(LOADTEST_MLPERF,
                   "Scenario : Server\nResult is : VALID\nCompleted samples per second : lots\n", 3,
                   "", "Completed samples per second: 'lots' is not a number");
    expect_problem(LOADTEST_MLPERF, "Scenario : SingleStream\nResult is : VALID\n", 0, "",
                   "scenario SingleStream has no throughput at a load (Server or Offline do)");
    expect_problem(LOADTEST_MLPERF, "hello\n", 0, "",
                   "not an MLPerf summary: no 'Result is' or 'Scenario' line");

    /* truncated files: each sample cut in half gives problems, never a document or a crash */
    const char *samples[][2] = {
        {SWEEP, "v"}, {ASCEND, "v"}, {GENAI_STREAM, "g"}, {GENAI_PLAIN, "g"}, {MLPERF_NVIDIA, "m"}};
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
        size_t len;
        char *text = sample_load(samples[i][0], &len);
        enum loadtest_format f = samples[i][1][0] == 'v'   ? LOADTEST_VLLM
                                 : samples[i][1][0] == 'g' ? LOADTEST_GENAI_PERF
                                                           : LOADTEST_MLPERF;
        struct problems errs;
        problems_init(&errs);
        json_t *doc = parse_text(f, text, len / 2, NULL, &errs);
        if (f == LOADTEST_VLLM && i == 0) {
            /* JSONL cut mid-line: the whole lines before it are not enough — refused at the cut */
            assert_null(doc);
            assert_int_equal(errs.items[0].line, 5);
        } else if (f == LOADTEST_MLPERF) {
            /* the first half holds the verdict and throughputs: it still reads */
            assert_non_null(doc);
        } else {
            assert_null(doc);
            assert_true(errs.count > 0);
        }
        json_decref(doc);
        problems_free(&errs);
        free(text);
    }

    /* binary garbage, invalid UTF-8 and a 10 MB line: problems, no crash */
    unsigned char garbage[4096];
    uint32_t x = 1234567u;
    for (size_t i = 0; i < sizeof garbage; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        garbage[i] = (unsigned char)x;
    }
    const size_t big = 10u << 20;
    char *huge = malloc(big + 1);
    assert_non_null(huge);
    memset(huge, '9', big);
    huge[0] = '[';
    huge[big] = '\0';
    const char *inputs[] = {(const char *)garbage, "{\"request_throughput\": 1, \"x\": \"\xC3(\"}",
                            huge};
    const size_t lens[] = {sizeof garbage, 35, big};
    for (int f = LOADTEST_VLLM; f <= LOADTEST_MLPERF; f++)
        for (size_t i = 0; i < 3; i++) {
            struct problems errs;
            problems_init(&errs);
            json_t *doc = parse_text((enum loadtest_format)f, inputs[i], lens[i], NULL, &errs);
            assert_null(doc);
            assert_true(errs.count > 0);
            problems_free(&errs);
        }
    free(huge);
    expect_problem(LOADTEST_VLLM, "{\"request_throughput\": 1, \"x\": \"\xC3(\"}", 1, "",
                   "line 1 is not valid UTF-8 at byte 33");
    expect_problem(LOADTEST_MLPERF, "Scenario : Server\nSUT name : a\xFF\n", 2, "",
                   "line 2 is not valid UTF-8 at byte 13");
    struct problems errs;
    problems_init(&errs);
    assert_null(parse_text(LOADTEST_UNKNOWN, "{}", 2, NULL, &errs));
    assert_int_equal(loadtest_format_from_name("genai-perf"), LOADTEST_GENAI_PERF);
    assert_int_equal(loadtest_format_from_name("locust"), LOADTEST_UNKNOWN);
    problems_free(&errs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vllm_sweep_jsonl),
        cmocka_unit_test(test_vllm_array_and_goodput_colon_key),
        cmocka_unit_test(test_vllm_bench_serve_with_failure),
        cmocka_unit_test(test_genai_perf_csv),
        cmocka_unit_test(test_genai_perf_json_streaming),
        cmocka_unit_test(test_genai_perf_json_non_streaming),
        cmocka_unit_test(test_mlperf_nvidia_server),
        cmocka_unit_test(test_mlperf_amd_and_dell),
        cmocka_unit_test(test_mlperf_invalid_is_never_capacity),
        cmocka_unit_test(test_malformed_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
