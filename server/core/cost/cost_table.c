/* A comparison document rendered for a terminal: one column per option with its figures and
 * breakdown, then ranking, flags, break-even and findings. It reads only the comparison
 * document (not the scenario), so a stored comparison renders the same way it was computed. */
#include "core/cost/cost.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cost/cost_findings.h"

struct strbuf {
    char *data;
    size_t len, cap;
    bool failed;
};

static void sb_printf(struct strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
    if (sb->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(sb->data ? sb->data + sb->len : NULL, sb->data ? sb->cap - sb->len : 0,
                          fmt, ap);
        va_end(ap);
        if (n < 0) {
            sb->failed = true;
            return;
        }
        if (sb->data && sb->len + (size_t)n < sb->cap) {
            sb->len += (size_t)n;
            return;
        }
        size_t cap = sb->cap ? sb->cap : 1024;
        while (cap <= sb->len + (size_t)n)
            cap *= 2;
        char *grown = realloc(sb->data, cap);
        if (!grown) {
            sb->failed = true;
            return;
        }
        sb->data = grown;
        sb->cap = cap;
    }
}

/* Display width of a UTF-8 string (code points; the names here have no wide characters). */
static size_t text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            w++;
    return w;
}

static void sb_pad(struct strbuf *sb, const char *text, size_t width, bool right)
{
    size_t w = text_width(text);
    size_t pad = w < width ? width - w : 0;
    if (right)
        sb_printf(sb, "%*s%s", (int)pad, "", text);
    else
        sb_printf(sb, "%s%*s", text, (int)pad, "");
}

#define LABEL_WIDTH 34

static void format_cell(const json_t *v, double scale, char *buf, size_t size)
{
    if (json_is_number(v))
        cost_format_number(json_number_value(v) * scale, buf, size);
    else if (json_is_string(v))
        snprintf(buf, size, "%s", json_string_value(v));
    else
        snprintf(buf, size, "—");
}

/* One row: the label, then the value at options[i]/group/key (group may be NULL) × scale.
 * Rows that no option has are left out. */
static void row(struct strbuf *sb, const json_t *options, size_t width, const char *label,
                const char *group, const char *key, double scale)
{
    size_t i;
    const json_t *opt;
    bool any = false;
    json_array_foreach(options, i, opt)
    {
        const json_t *holder = group ? json_object_get(opt, group) : opt;
        any = any || json_object_get(holder, key) != NULL;
    }
    if (!any)
        return;
    sb_pad(sb, label, LABEL_WIDTH, false);
    json_array_foreach(options, i, opt)
    {
        const json_t *holder = group ? json_object_get(opt, group) : opt;
        char cell[96];
        format_cell(json_object_get(holder, key), scale, cell, sizeof cell);
        sb_printf(sb, "  ");
        sb_pad(sb, cell, width, true);
    }
    sb_printf(sb, "\n");
}

/* A row of engine 2's by_demand_scenario_detail[scenario][key]; left out when absent. */
static void detail_row(struct strbuf *sb, const json_t *options, size_t width, const char *label,
                       const char *scenario, const char *key)
{
    size_t i;
    const json_t *opt;
    bool any = false;
    json_array_foreach(options, i, opt) any =
        any || json_object_get(
                   json_object_get(json_object_get(opt, "by_demand_scenario_detail"), scenario),
                   key) != NULL;
    if (!any)
        return;
    sb_pad(sb, label, LABEL_WIDTH, false);
    json_array_foreach(options, i, opt)
    {
        char cell[96];
        format_cell(
            json_object_get(
                json_object_get(json_object_get(opt, "by_demand_scenario_detail"), scenario), key),
            1, cell, sizeof cell);
        sb_printf(sb, "  ");
        sb_pad(sb, cell, width, true);
    }
    sb_printf(sb, "\n");
}

static void feasibility_row(struct strbuf *sb, const json_t *options, size_t width)
{
    size_t i;
    const json_t *opt;
    sb_pad(sb, "feasible", LABEL_WIDTH, false);
    json_array_foreach(options, i, opt)
    {
        char cell[128] = "yes";
        const json_t *reasons = json_object_get(opt, "infeasible_reasons");
        if (!json_is_true(json_object_get(opt, "feasible"))) {
            size_t n = 2; /* "no" */
            memcpy(cell, "no", 3);
            size_t k;
            const json_t *r;
            json_array_foreach(reasons, k, r)
            {
                if (n >= sizeof cell)
                    break;
                int w = snprintf(cell + n, sizeof cell - n, "%s%s", k ? "," : ": ",
                                 json_string_value(r) ? json_string_value(r) : "?");
                n += w > 0 ? (size_t)w : 0;
            }
        }
        sb_printf(sb, "  ");
        sb_pad(sb, cell, width, true);
    }
    sb_printf(sb, "\n");
}

static void name_list(struct strbuf *sb, const json_t *names, const char *sep)
{
    size_t i;
    const json_t *n;
    json_array_foreach(names, i, n)
        sb_printf(sb, "%s%s", i ? sep : "", json_string_value(n) ? json_string_value(n) : "?");
    if (json_array_size(names) == 0)
        sb_printf(sb, "none");
}

/* "/options/1/offer/price_per_hour" → "h100-on-demand offer/price_per_hour". */
static void input_label(const json_t *options, const char *pointer, char *buf, size_t size)
{
    unsigned long index;
    int used = 0;
    if (sscanf(pointer, "/options/%lu/%n", &index, &used) == 1 && used > 0) {
        const char *name =
            json_string_value(json_object_get(json_array_get(options, index), "name"));
        snprintf(buf, size, "%s %s", name ? name : "?", pointer + used);
    } else {
        snprintf(buf, size, "%s", pointer[0] == '/' ? pointer + 1 : pointer);
    }
}

static void flags_section(struct strbuf *sb, const json_t *comparison)
{
    const json_t *flags = json_object_get(comparison, "flags");
    const json_t *trap = json_object_get(flags, "hourly_price_trap");
    sb_printf(sb, "\nflags\n  hourly-price trap: ");
    if (json_is_object(trap)) {
        char ratio[48];
        cost_format_number(json_number_value(json_object_get(trap, "ratio")), ratio, sizeof ratio);
        const char *hourly = json_string_value(json_object_get(trap, "cheapest_hourly"));
        const char *outcome = json_string_value(json_object_get(trap, "cheapest_per_outcome"));
        sb_printf(sb,
                  "yes — %s is cheapest per GPU-hour, but %s is cheapest per outcome; %s costs "
                  "%s× as much per outcome\n",
                  hourly ? hourly : "?", outcome ? outcome : "?", hourly ? hourly : "?", ratio);
    } else {
        sb_printf(sb, "no\n");
    }
    sb_printf(sb, "  overhead dominates (useful work under half the cost): ");
    name_list(sb, json_object_get(flags, "overhead_dominates"), ", ");
    const json_t *sensitive = json_object_get(flags, "demand_sensitive");
    if (json_is_boolean(sensitive)) {
        sb_printf(sb, "\n  demand sensitive (winner changes between demand scenarios): %s",
                  json_is_true(sensitive) ? "yes" : "no");
        const json_t *winners = json_object_get(comparison, "winner_by_demand_scenario");
        const char *key;
        const json_t *w;
        bool first = true;
        json_object_foreach((json_t *)winners, key, w)
        {
            sb_printf(sb, "%s%s → %s", first ? " (" : ", ", key,
                      json_string_value(w) ? json_string_value(w) : "none");
            first = false;
        }
        if (!first)
            sb_printf(sb, ")");
    }
    sb_printf(sb, "\n");
}

static void break_even_section(struct strbuf *sb, const json_t *comparison)
{
    const json_t *options = json_object_get(comparison, "options");
    const json_t *list = json_object_get(comparison, "break_even");
    sb_printf(sb, "\nbreak-even (the value at which the expected-cost winner changes)\n");
    if (json_array_size(list) == 0)
        sb_printf(sb, "  none: no input changes the winner within 10× either way\n");
    size_t i;
    const json_t *be;
    json_array_foreach(list, i, be)
    {
        char label[256], now[48], at[48];
        const char *pointer = json_string_value(json_object_get(be, "input"));
        input_label(options, pointer ? pointer : "?", label, sizeof label);
        cost_format_number(json_number_value(json_object_get(be, "current")), now, sizeof now);
        cost_format_number(json_number_value(json_object_get(be, "flips_at")), at, sizeof at);
        const char *winner = json_string_value(json_object_get(be, "new_winner"));
        sb_printf(sb, "  ");
        sb_pad(sb, label, 52, false);
        sb_printf(sb, " %12s → %-12s %s wins\n", now, at, winner ? winner : "?");
    }
}

static void findings_section(struct strbuf *sb, const json_t *options)
{
    sb_printf(sb, "\nfindings\n");
    size_t i;
    const json_t *opt;
    json_array_foreach(options, i, opt)
    {
        const char *name = json_string_value(json_object_get(opt, "name"));
        sb_printf(sb, "  %s\n", name ? name : "?");
        size_t k;
        const json_t *f;
        json_array_foreach(json_object_get(opt, "findings"), k, f)
            sb_printf(sb, "    - %s\n", json_string_value(f) ? json_string_value(f) : "");
    }
}

char *cost_format_table(const json_t *comparison)
{
    const json_t *options = json_object_get(comparison, "options");
    if (!json_is_array(options))
        return NULL;
    struct strbuf sb = {0};
    const char *kind = json_string_value(json_object_get(comparison, "kind"));
    const char *currency = json_string_value(json_object_get(comparison, "currency"));
    const char *version = json_string_value(json_object_get(comparison, "engine_version"));
    const char *sha = json_string_value(json_object_get(comparison, "input_sha256"));
    bool inference = kind && strcmp(kind, "inference") == 0;
    sb_printf(&sb, "%s comparison of %zu options, money in %s (engine %s", kind ? kind : "?",
              json_array_size(options), currency ? currency : "?", version ? version : "?");
    if (!inference) {
        char trials[48];
        cost_format_number(json_number_value(json_object_get(comparison, "trials")), trials,
                           sizeof trials);
        sb_printf(&sb, ", seed %" JSON_INTEGER_FORMAT ", %s trials",
                  json_integer_value(json_object_get(comparison, "seed")), trials);
    }
    sb_printf(&sb, ")\ninput sha256 %s\n\n", sha ? sha : "?");

    size_t width = 12, i;
    const json_t *opt;
    json_array_foreach(options, i, opt)
    {
        const char *name = json_string_value(json_object_get(opt, "name"));
        if (name && text_width(name) > width)
            width = text_width(name);
    }
    sb_pad(&sb, "", LABEL_WIDTH, false);
    json_array_foreach(options, i, opt)
    {
        const char *name = json_string_value(json_object_get(opt, "name"));
        sb_printf(&sb, "  ");
        sb_pad(&sb, name ? name : "?", width, true);
    }
    sb_printf(&sb, "\n");
    feasibility_row(&sb, options, width);
    row(&sb, options, width, "arrangement", NULL, "arrangement", 1);
    row(&sb, options, width, "price per GPU-hour", NULL, "price_per_gpu_hour", 1);
    row(&sb, options, width, "expected cost per outcome", NULL, "expected_cost_per_outcome", 1);
    row(&sb, options, width, "cash cost per outcome", NULL, "cash_cost_per_outcome", 1);
    char reliable[96];
    double q = json_number_value(json_object_get(comparison, "reliable_quantile"));
    const char *risk = json_string_value(json_object_get(comparison, "risk_measure"));
    const json_t *volume = json_object_get(comparison, "planned_outcomes_per_month");
    if (inference)
        snprintf(reliable, sizeof reliable, "reliable cost (worst demand)");
    else if (risk && strcmp(risk, "cvar") == 0)
        snprintf(reliable, sizeof reliable,
                 "reliable (worst %.0f%% of months, V=%" JSON_INTEGER_FORMAT ")", 100 * (1 - q),
                 json_integer_value(volume));
    else
        snprintf(reliable, sizeof reliable, "reliable cost (p%.0f)", 100 * q);
    row(&sb, options, width, reliable, NULL, "reliable_cost_per_outcome", 1);
    row(&sb, options, width, "  Monte Carlo CVaR", "cost_per_outcome_quantiles", "cvar", 1);
    row(&sb, options, width, "  Monte Carlo mean", "cost_per_outcome_quantiles", "mean", 1);
    row(&sb, options, width, "  Monte Carlo p50", "cost_per_outcome_quantiles", "p50", 1);
    row(&sb, options, width, "  Monte Carlo p99", "cost_per_outcome_quantiles", "p99", 1);
    row(&sb, options, width, "time to result (h)", NULL, "time_to_result_s", 1.0 / 3600);
    row(&sb, options, width, "  p90 (h)", "time_to_result_quantiles", "p90", 1.0 / 3600);
    row(&sb, options, width, "billed instance-hours", NULL, "billed_instance_hours", 1);
    row(&sb, options, width, "checkpoint interval (s)", NULL, "checkpoint_interval_s", 1);
    row(&sb, options, width, "capacity per replica (req/s)", NULL, "capacity_rps_per_replica", 1);
    row(&sb, options, width, "replica-hours", NULL, "replica_hours", 1);
    row(&sb, options, width, "utilisation", NULL, "utilization", 1);
    row(&sb, options, width, "total cost over the horizon", NULL, "expected_total_cost", 1);
    row(&sb, options, width, "per million output tokens", NULL, "cost_per_million_output_tokens",
        1);
    row(&sb, options, width, "SLO attainment", NULL, "slo_attainment", 1);
    row(&sb, options, width, "replicas at peak", NULL, "replicas_peak", 1);
    row(&sb, options, width, "restarts per run", NULL, "restarts_per_run", 1);
    const json_t *scenarios = json_object_get(json_array_get(options, 0), "by_demand_scenario");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)scenarios, key, v)
    {
        char label[96];
        snprintf(label, sizeof label, "demand '%s' per outcome", key);
        row(&sb, options, width, label, "by_demand_scenario", key, 1);
        snprintf(label, sizeof label, "  SLO attainment");
        detail_row(&sb, options, width, label, key, "slo_attainment");
        snprintf(label, sizeof label, "  replicas at peak");
        detail_row(&sb, options, width, label, key, "replicas_peak");
    }
    sb_printf(&sb, inference ? "breakdown over the horizon\n" : "breakdown per outcome\n");
    const json_t *breakdown = json_object_get(json_array_get(options, 0), "breakdown");
    json_object_foreach((json_t *)breakdown, key, v)
    {
        char label[96];
        snprintf(label, sizeof label, "  %s", key);
        row(&sb, options, width, label, "breakdown", key, 1);
    }

    const char *winner = json_string_value(json_object_get(comparison, "winner"));
    sb_printf(&sb, "\nranking by reliable cost: ");
    name_list(&sb, json_object_get(comparison, "ranking"), " < ");
    sb_printf(&sb, "\nwinner: %s", winner ? winner : "none (no feasible option)");
    const char *by_expected = json_string_value(json_object_get(comparison, "winner_by_expected"));
    if (by_expected && (!winner || strcmp(by_expected, winner) != 0))
        sb_printf(&sb, " (by expected cost: %s)", by_expected);
    sb_printf(&sb, "\n");
    const json_t *by_cash = json_object_get(comparison, "ranking_by_cash");
    if (json_is_array(by_cash)) {
        sb_printf(&sb, "ranking by cash (a paid reservation's compute is no new cash): ");
        name_list(&sb, by_cash, " < ");
        sb_printf(&sb, "\n");
    }
    flags_section(&sb, comparison);
    break_even_section(&sb, comparison);
    findings_section(&sb, options);
    if (sb.failed) {
        free(sb.data);
        return NULL;
    }
    return sb.data;
}
