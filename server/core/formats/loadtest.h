/* Inference load-test results → the load points of docs/cost-model.md.
 *
 * Reads each tool's own output, whole (these files are small: one result per load level):
 *   - vLLM `benchmark_serving.py --save-result` / `vllm bench serve --save-result`: one result
 *     object, a JSON array of them, or JSON Lines (a sweep; a file named .json may be JSONL).
 *     The older `"request_goodput:"` key (with its colon) is read like `request_goodput`;
 *     `request_rate` may be the string "inf": the run was saturated, so the measured
 *     request_throughput is both offered and achieved, flagged `saturated`. Latencies
 *     `mean_/median_/std_/pNN_{ttft,tpot,itl,e2el}_ms` become `ttft_mean_ms`, `ttft_p50_ms`,
 *     `ttft_p99_ms`, `e2e_p99_ms`, … (`p99.9` → `p99_9`). error_rate is failed / (completed +
 *     failed), or (num_prompts − completed) / num_prompts when `failed` is absent.
 *   - GenAI-Perf `profile_export_genai_perf.csv` (a statistics block and a `Metric,Value`
 *     block; numbers with thousands separators are quoted, "1,146.31") or
 *     `profile_export_genai_perf.json` ({unit, avg, p25…p99, min, max, std} per metric, and the
 *     `input_config` echo). Its "inter token latency" is per request (latency − TTFT) / (OSL −
 *     1), which is what vLLM calls TPOT, so it becomes `tpot_*_ms`. In non-streaming runs
 *     time-to-first-token equals the request latency and is not kept. GenAI-Perf exports no
 *     error count: error_rate is left out (the cost model's default is 0), said in a warning.
 *     Offered load: input_config.request_rate when given; a concurrency run is closed-loop
 *     (offered = achieved); the CSV records neither (offered = achieved, `not_recorded`).
 *   - MLPerf loadgen `mlperf_log_summary.txt`: ns latencies → ms; Server: offered = "Scheduled
 *     samples per second" (else target_qps), achieved = "Completed samples per second" (with
 *     samples_per_query 1, as in Server runs, a sample is a request); Offline: saturated.
 *     An INVALID result is flagged `valid: false` and its point goes to
 *     `rejected_load_points`, never to `load_points`: it is never capacity.
 *
 * Output (new reference): {"tool", "valid", "saturated", "model", "load_points": [numbers
 * only, sorted by offered_rps], "results": [one per load point, same order: where it came from
 * (source_index, line for JSON Lines, offered_rps_source: requested | saturated | closed_loop |
 * scheduled | target_qps | not_recorded) and the tool's own metadata], "rejected_load_points":
 * [...], "warnings": [...]}. */
#ifndef CAPLEDGER_CORE_LOADTEST_H
#define CAPLEDGER_CORE_LOADTEST_H

#include <jansson.h>
#include <stddef.h>

#include "core/formats/formats.h"
#include "core/problems.h"

#define LOADTEST_MAX_POINTS 1000 /* docs/cost-model.md's limit per option */

/* LOADTEST_VLLM, LOADTEST_GENAI_PERF, LOADTEST_MLPERF: the list in core/formats/formats.h. */
enum loadtest_format { LOADTEST_UNKNOWN = 0, FORMATS_LOADTEST(FORMAT_ENUM) LOADTEST_FORMAT_END };

struct loadtest_options {
    /* vLLM sweeps mixing configurations (the --metadata keys, e.g. deployment=kvcache): keep
     * only results whose top-level string where_key equals where_value. NULL → keep all. */
    const char *where_key;
    const char *where_value;
};

/* A name of LOADTEST_FORMAT_NAMES → its format; anything else → LOADTEST_UNKNOWN. */
enum loadtest_format loadtest_format_from_name(const char *name);

/* Parses buf[0..len). Returns the document described above, or NULL when problems were added
 * (each with a JSON Pointer into the input, or a line for text formats). opt may be NULL. */
json_t *loadtest_parse(enum loadtest_format format, const char *buf, size_t len,
                       const struct loadtest_options *opt, struct problems *errs)
    __attribute__((warn_unused_result));

#endif
