/* The cost-per-outcome engine: a scenario document in, a comparison document out, exactly as
 * docs/cost-model.md defines them (that file is the contract; this header only says
 * how to call the engine).
 *
 * Pure and thread-safe: no I/O, no global mutable state; every call allocates what it needs
 * and frees it before returning, so any number of threads may compare at once.
 *
 * Monte Carlo (batch kinds). The generator is xoshiro256** (Blackman & Vigna 2018); its 256-bit
 * state is filled by four successive outputs of splitmix64 started at the scenario's `seed`.
 * Option i of the scenario uses that generator advanced by i calls of xoshiro's jump() (2^128
 * steps each), so an option's trials depend only on the seed and its own position, never on
 * the other options. Uniform doubles are the top 53 bits × 2^-53; normal draws are Box–Muller
 * (two uniforms per draw, the second output discarded); exponentials are −ln(1 − U). The same
 * scenario, seed and engine_version therefore give the same bytes on one machine; across
 * machines libm may differ in the last bit, which is why recomputation compares figures to a
 * relative tolerance (cost_compare_results) rather than bytes.
 *
 * To keep every trial's work bounded (a spot option may need e^20 attempts per checkpoint
 * segment before it becomes infeasible), a sum of more than COST_MC_EXACT_TERMS independent,
 * identically distributed terms — checkpoint segments, lost partial segments, restarts, failed
 * attempts, queue waits — is drawn as one normal variate with the sum's exact mean and variance
 * (clamped at its smallest possible value); smaller sums are simulated term by term. Counts
 * (interruptions per segment, failed attempts) are always drawn exactly, as geometric variates.
 * Throughput is drawn once per trial; the number of checkpoint segments stays the closed form's
 * and the segment length follows the drawn throughput. */
#ifndef CAPLEDGER_CORE_COST_H
#define CAPLEDGER_CORE_COST_H

#include <jansson.h>
#include <stddef.h>

#include "core/problems.h"

/* Recorded in every comparison; changes whenever a figure for the same input could change.
 * Two engines live side by side (docs/cost-model.md): engine 1 exactly as it was, for every
 * comparison it made, and engine 2, which new comparisons use unless the scenario says
 * "engine": 1. A stored comparison is recomputed with the engine its engine_version names. */
#define COST_ENGINE_1_VERSION "capledger-cost/1.0.0"
#define COST_ENGINE_2_VERSION "capledger-cost/2.0.0"
#define COST_ENGINE_VERSION COST_ENGINE_2_VERSION /* what new comparisons use */
#define COST_ENGINE_DEFAULT 2

/* Limits of docs/cost-model.md; beyond them the scenario is refused (422). */
#define COST_MAX_OPTIONS 64
#define COST_MAX_LOAD_POINTS 1000
#define COST_MAX_TRIALS 1000000
#define COST_MAX_HORIZON_HOURS 8784
#define COST_MAX_DEMAND_SCENARIOS 64
/* The work one comparison may ask for: options × Monte Carlo trials (about 1.5 s of one core,
 * break-even included). Beyond it the scenario is refused at /assumptions/trials. */
#define COST_MAX_OPTION_TRIALS 2000000
/* Engine 2: trials × planned_outcomes_per_month at most this (both fields named beyond it). Each
 * trial's work stays bounded whatever V and the acceptance rate are (counts of many outcomes or
 * runs are drawn as one normal variate, sums of many runs as their floor plus one gamma variate:
 * cost_mc.c), so options × trials above stays the budget. */
#define COST_MAX_OUTCOME_TRIALS 20000000
#define COST_MAX_PLANNED_OUTCOMES 10000
/* Every number of a scenario without a narrower upper bound is at most this: far beyond any
 * real price, size or rate, and small enough that the engine's products stay finite. */
#define COST_MAX_VALUE 1e15

/* Sums of more i.i.d. terms than this are drawn as one normal variate (see above). */
#define COST_MC_EXACT_TERMS 8

/* Validates the whole scenario (borrowed) and computes its comparison. On success returns a
 * new reference to the comparison document and leaves errs untouched. When the scenario is
 * invalid returns NULL after appending every problem found, each with its JSON Pointer, to errs
 * (the caller answers 422). Returns NULL with a problem at pointer "" when memory runs out.
 * The caller must have parsed the body with JSON_REJECT_DUPLICATES (NaN, Infinity and numbers
 * beyond a double are already refused by the parser: 400). */
json_t *cost_compare(const json_t *scenario, struct problems *errs)
    __attribute__((warn_unused_result));
/* As cost_compare with the engine forced (1 or 2; 0: the scenario's own "engine", else
 * COST_ENGINE_DEFAULT): recomputing a stored comparison uses the engine that made it. A
 * scenario that names another engine than the one forced is refused at /engine. */
json_t *cost_compare_engine(const json_t *scenario, int engine, struct problems *errs)
    __attribute__((warn_unused_result));
json_t *cost_charts_engine(const json_t *scenario, int engine, struct problems *errs)
    __attribute__((warn_unused_result));
/* The engine (1 or 2) an engine_version string names ("capledger-cost/2.0.0" → 2); 0 when it
 * names none this build knows. */
int cost_engine_of_version(const char *engine_version);
/* What charts of the same comparison need and the comparison itself leaves out (so stored
 * comparisons and their hashes stay as they are): {engine_version, input_sha256, options:
 * [{name, cost_per_outcome_percentiles: [p1..p99] (batch, Monte Carlo; null otherwise),
 * replicas_by_profile_hour: [..] (inference, at the expected demand; null otherwise)}]}. The
 * same scenario, seed and engine give the percentiles of exactly the trials the comparison's
 * quantiles came from. NULL with problems as cost_compare. */
json_t *cost_charts(const json_t *scenario, struct problems *errs)
    __attribute__((warn_unused_result));

/* Validation alone (what cost_compare does first): returns 0 when the scenario is valid, else
 * -1 with every problem appended to errs. */
int cost_validate(const json_t *scenario, struct problems *errs)
    __attribute__((warn_unused_result));

/* Stored scenarios (POST /scenarios) may name a stored workload, benchmark or offer by id (a
 * string where the engine takes an object); only the server resolves them. Appends one problem
 * per such reference to p (pointer and id) and returns their number (0: self-contained). */
int cost_stored_references(const json_t *scenario, struct problems *p);

/* Renders a comparison document (borrowed) as a terminal table: per option the figures and
 * breakdown, then findings, flags, ranking and break-even. Returns a malloc'd NUL-terminated
 * string the caller frees, or NULL when memory runs out or the document is not a comparison. */
char *cost_format_table(const json_t *comparison) __attribute__((warn_unused_result));

/* Compares two comparison documents (borrowed) figure by figure, as an auditor's recompute
 * does: numbers within rel_tol of each other (relative to the larger magnitude; both zero is
 * equal), every string, boolean, null, array length and object key set identical. The
 * top-level `engine_version` is not compared (callers check it themselves and report a
 * difference as a warning). Returns 0 when they agree; 1 when they differ, with the JSON
 * Pointer of the first difference, then ": ", then both values, written into where
 * (truncated to where_size; where may be NULL). */
int cost_compare_results(const json_t *a, const json_t *b, double rel_tol, char *where,
                         size_t where_size) __attribute__((warn_unused_result));

#endif
