#include "core/formats/telemetry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats/textnum.h"
#include "core/validate.h"

struct telemetry_field {
    const char *s;
    size_t len;
};

enum telemetry_unit { UNIT_NONE, UNIT_PERCENT, UNIT_MIB, UNIT_W };

/* The largest values a reading may have: above them it is not a GPU reading (a GPU draws at
 * most a few kW and holds at most a few hundred GiB), and sums of many of them stay finite. */
#define TELEMETRY_MAX_POWER_W 10000.0
#define TELEMETRY_MAX_MEMORY_MIB 16777216.0 /* 16 TiB */

static const double unit_max[] = {[UNIT_NONE] = 0,
                                  [UNIT_PERCENT] = 100,
                                  [UNIT_MIB] = TELEMETRY_MAX_MEMORY_MIB,
                                  [UNIT_W] = TELEMETRY_MAX_POWER_W};
static const char *const telemetry_unit_names[] = {"", "%", "MiB", "W"};

/* ---- nvidia-smi --query-gpu ---------------------------------------------------------------- */

enum smi_column {
    SMI_TIMESTAMP,
    SMI_INDEX,
    SMI_UUID,
    SMI_BUS_ID,
    SMI_NAME,
    SMI_UTIL,
    SMI_MEM_USED,
    SMI_MEM_TOTAL,
    SMI_POWER,
    SMI_POWER_AVG,
    SMI_POWER_INSTANT,
    SMI_MIG_MODE,
    SMI_COUNT
};

/* The query fields read, as the header prints them, with the alias --query-gpu also takes. */
static const struct smi_column_def {
    const char *name;
    const char *alias;
    enum telemetry_unit unit;
} smi_columns[SMI_COUNT] = {
    [SMI_TIMESTAMP] = {"timestamp", NULL, UNIT_NONE},
    [SMI_INDEX] = {"index", NULL, UNIT_NONE},
    [SMI_UUID] = {"uuid", "gpu_uuid", UNIT_NONE},
    [SMI_BUS_ID] = {"pci.bus_id", "gpu_bus_id", UNIT_NONE},
    [SMI_NAME] = {"name", "gpu_name", UNIT_NONE},
    [SMI_UTIL] = {"utilization.gpu", NULL, UNIT_PERCENT},
    [SMI_MEM_USED] = {"memory.used", NULL, UNIT_MIB},
    [SMI_MEM_TOTAL] = {"memory.total", NULL, UNIT_MIB},
    [SMI_POWER] = {"power.draw", NULL, UNIT_W},
    [SMI_POWER_AVG] = {"power.draw.average", NULL, UNIT_W},
    [SMI_POWER_INSTANT] = {"power.draw.instant", NULL, UNIT_W},
    [SMI_MIG_MODE] = {"mig.mode.current", NULL, UNIT_NONE},
};

/* ---- nvidia-smi dmon ----------------------------------------------------------------------- */

enum dmon_column { DMON_DATE, DMON_TIME, DMON_GPU, DMON_PWR, DMON_SM, DMON_FB, DMON_COUNT };
static const char *const dmon_columns[DMON_COUNT] = {"Date", "Time", "gpu", "pwr", "sm", "fb"};

/* ---- DCGM exporter ------------------------------------------------------------------------- */

enum dcgm_metric {
    DCGM_GR_ENGINE_ACTIVE,
    DCGM_SM_ACTIVE,
    DCGM_GPU_UTIL,
    DCGM_FB_USED,
    DCGM_FB_FREE,
    DCGM_FB_RESERVED,
    DCGM_POWER,
    DCGM_METRIC_COUNT
};

static const struct dcgm_metric_def {
    const char *name;
    double max; /* values above are refused: ratios 1, percentages 100 */
} dcgm_metrics[DCGM_METRIC_COUNT] = {
    [DCGM_GR_ENGINE_ACTIVE] = {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", 1},
    [DCGM_SM_ACTIVE] = {"DCGM_FI_PROF_SM_ACTIVE", 1},
    [DCGM_GPU_UTIL] = {"DCGM_FI_DEV_GPU_UTIL", 100},
    [DCGM_FB_USED] = {"DCGM_FI_DEV_FB_USED", TELEMETRY_MAX_MEMORY_MIB},
    [DCGM_FB_FREE] = {"DCGM_FI_DEV_FB_FREE", TELEMETRY_MAX_MEMORY_MIB},
    [DCGM_FB_RESERVED] = {"DCGM_FI_DEV_FB_RESERVED", TELEMETRY_MAX_MEMORY_MIB},
    [DCGM_POWER] = {"DCGM_FI_DEV_POWER_USAGE", TELEMETRY_MAX_POWER_W},
};

struct telemetry_dcgm_gpu {
    char key[TELEMETRY_GPU_MAX];
    char model[TELEMETRY_MODEL_MAX];
    bool mig;
    double value[DCGM_METRIC_COUNT];
    unsigned seen; /* bit per metric */
};

/* The labels of a DCGM line that identify its GPU. */
struct dcgm_labels {
    char uuid[TELEMETRY_GPU_MAX];
    char gpu[16];
    char hostname[TELEMETRY_GPU_MAX];
    char instance[16];               /* GPU_I_ID: a MIG instance */
    char model[TELEMETRY_MODEL_MAX]; /* modelName */
};

/* ---- shared ------------------------------------------------------------------------------- */

/* A text a sample keeps (a GPU's id, name or host) must be text: no control characters (ESC
 * sequences would reach terminals and logs through warnings and summaries; core/validate.h).
 * Appends the problem for line/column and returns false otherwise. */
static bool sample_text_ok(const char *s, size_t len, const char *what, long lineno, int column,
                           struct problems *errs)
{
    char why[160];
    if (!text_fault(s, len, 0, why, sizeof why))
        return true;
    problems_add_line(errs, lineno, column, NULL, "%s: %s", what, why);
    return false;
}

enum telemetry_format telemetry_format_from_name(const char *name)
{
    return (enum telemetry_format)format_find(TELEMETRY_FORMAT_NAMES, name);
}

const char *telemetry_format_name(enum telemetry_format f)
{
    return f > TELEMETRY_UNKNOWN && f < TELEMETRY_FORMAT_END ? TELEMETRY_FORMAT_NAMES[f - 1]
                                                             : "unknown";
}

static bool telemetry_starts_with(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

enum telemetry_format telemetry_detect_format(const char *buf, size_t len)
{
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
        buf += 3;
        len -= 3;
    }
    while (len > 0 && (*buf == ' ' || *buf == '\t' || *buf == '\r' || *buf == '\n')) {
        buf++;
        len--;
    }
    const char *nl = memchr(buf, '\n', len);
    size_t first = nl ? (size_t)(nl - buf) : len;
    if (telemetry_starts_with(buf, first, "# HELP ") ||
        telemetry_starts_with(buf, first, "# TYPE ") ||
        telemetry_starts_with(buf, first, "DCGM_FI_"))
        return TELEMETRY_DCGM;
    if (first > 0 && buf[0] == '#') {
        /* dmon: "# gpu   pwr …" or, with -o DT, "#Date       Time        gpu …" */
        const char *t = buf + 1;
        size_t tlen = first - 1;
        textnum_trim(&t, &tlen);
        if (telemetry_starts_with(t, tlen, "gpu ") || telemetry_starts_with(t, tlen, "Date ") ||
            telemetry_starts_with(t, tlen, "Time "))
            return TELEMETRY_DMON;
        return TELEMETRY_UNKNOWN;
    }
    if (memchr(buf, ',', first))
        return TELEMETRY_NVIDIA_SMI;
    return TELEMETRY_UNKNOWN;
}

static void telemetry_sample_clear(struct telemetry_sample *s)
{
    memset(s, 0, sizeof *s);
    s->duty_cycle = s->sm_active = s->memory_used_gb = s->memory_total_gb = s->power_w = NAN;
}

static bool telemetry_set_gpu(struct telemetry_sample *s, const char *id, size_t len)
{
    if (len == 0 || len >= TELEMETRY_GPU_MAX)
        return false;
    memcpy(s->gpu, id, len);
    s->gpu[len] = '\0';
    return true;
}

static int telemetry_deliver(struct telemetry_reader *r, const struct telemetry_sample *s)
{
    if (r->on_sample(s, r->ctx) != 0) {
        r->fatal = true;
        return -1;
    }
    r->samples++;
    return 0;
}

/* Splits on sep (',' for CSV; 0 for runs of blanks); returns the field count, which may exceed
 * max (then only max fields are stored). */
static int telemetry_split(const char *s, size_t len, char sep, struct telemetry_field *f, int max)
{
    int n = 0;
    size_t i = 0;
    if (sep) {
        for (;;) {
            const char *end = memchr(s + i, sep, len - i);
            size_t flen = end ? (size_t)(end - (s + i)) : len - i;
            if (n < max) {
                f[n].s = s + i;
                f[n].len = flen;
                textnum_trim(&f[n].s, &f[n].len);
            }
            n++;
            if (!end)
                return n;
            i += flen + 1;
        }
    }
    while (i < len) {
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i == len)
            break;
        size_t start = i;
        while (i < len && s[i] != ' ' && s[i] != '\t')
            i++;
        if (n < max)
            f[n] = (struct telemetry_field){s + start, i - start};
        n++;
    }
    return n;
}

/* ---- nvidia-smi reading -------------------------------------------------------------------- */

static int smi_lookup(const char *name, size_t len)
{
    for (int c = 0; c < SMI_COUNT; c++)
        if (textnum_equals_word(name, len, smi_columns[c].name) ||
            (smi_columns[c].alias && textnum_equals_word(name, len, smi_columns[c].alias)))
            return c;
    return -1;
}

/* Columns from the header line ("memory.used [MiB]") or the query list ("memory.used"). */
static int smi_set_columns(struct telemetry_reader *r, const char *s, size_t len, long lineno,
                           struct problems *errs)
{
    struct telemetry_field f[TELEMETRY_MAX_COLUMNS];
    int n = telemetry_split(s, len, ',', f, TELEMETRY_MAX_COLUMNS);
    r->fatal = true;
    if (n > TELEMETRY_MAX_COLUMNS) {
        problems_add_line(errs, lineno, 0, NULL, "more than %d columns", TELEMETRY_MAX_COLUMNS);
        return -1;
    }
    for (int c = 0; c < SMI_COUNT; c++)
        r->col[c] = -1;
    r->ncols = n;
    for (int i = 0; i < n; i++) {
        const char *name = f[i].s;
        size_t nlen = f[i].len;
        const char *unit = NULL;
        size_t ulen = 0;
        const char *bracket = memchr(name, '[', nlen);
        if (bracket && name[nlen - 1] == ']') {
            unit = bracket + 1;
            ulen = (size_t)(name + nlen - 1 - unit);
            nlen = (size_t)(bracket - name);
            textnum_trim(&name, &nlen);
        }
        int c = smi_lookup(name, nlen);
        if (c < 0 || r->col[c] >= 0)
            continue;
        r->col[c] = i;
        r->unit[c] = (int)smi_columns[c].unit;
        if (unit && smi_columns[c].unit != UNIT_NONE &&
            !textnum_equals_word(unit, ulen, telemetry_unit_names[smi_columns[c].unit])) {
            problems_add_line(errs, lineno, i + 1, NULL, "%s is in %.*s; nvidia-smi reports %s",
                              smi_columns[c].name, (int)ulen, unit,
                              telemetry_unit_names[smi_columns[c].unit]);
            return -1;
        }
    }
    if (r->col[SMI_UTIL] < 0 && r->col[SMI_MEM_USED] < 0 && r->col[SMI_POWER] < 0 &&
        r->col[SMI_POWER_AVG] < 0 && r->col[SMI_POWER_INSTANT] < 0) {
        problems_add_line(
            errs, lineno, 0, NULL, "no utilization.gpu, memory.used or power.draw column%s",
            r->opt.fields ? " in the query list"
                          : " (a noheader file needs its --query-gpu list: " PROBLEMS_FIELDS_HINT
                            ")");
        return -1;
    }
    r->have_header = true;
    r->fatal = false;
    return 0;
}

/* A cell: NAN when nvidia-smi says it has no value; false after a problem. */
static bool smi_value(const struct telemetry_reader *r, int c, const struct telemetry_field *f,
                      long lineno, double *out, struct problems *errs)
{
    *out = NAN;
    const char *s = f->s;
    size_t len = f->len;
    if (len == 0 || s[0] == '[' || textnum_equals_word(s, len, "N/A"))
        return true;
    const char *unit = NULL;
    size_t ulen = 0;
    for (size_t i = len; i > 0; i--) {
        if (s[i - 1] == ' ') {
            unit = s + i;
            ulen = len - i;
            len = i - 1;
            textnum_trim(&s, &len);
            break;
        }
    }
    const char *expected = telemetry_unit_names[smi_columns[c].unit];
    if (unit && !textnum_equals_word(unit, ulen, expected)) {
        problems_add_line(errs, lineno, r->col[c] + 1, NULL, "%s: unit '%.*s', expected '%s'",
                          smi_columns[c].name, (int)ulen, unit, expected);
        return false;
    }
    double v;
    if (!textnum_parse_double(s, len, &v) || v < 0 || v > unit_max[smi_columns[c].unit]) {
        problems_add_line(errs, lineno, r->col[c] + 1, NULL,
                          "%s: '%.*s' is not a valid value (0 to %g %s)", smi_columns[c].name,
                          (int)f->len, f->s, unit_max[smi_columns[c].unit], expected);
        return false;
    }
    *out = v;
    return true;
}

static int smi_feed(struct telemetry_reader *r, const char *line, size_t len, long lineno,
                    struct problems *errs)
{
    if (!r->have_header)
        return smi_set_columns(r, line, len, lineno, errs);
    struct telemetry_field f[TELEMETRY_MAX_COLUMNS];
    int n = telemetry_split(line, len, ',', f, TELEMETRY_MAX_COLUMNS);
    if (n != r->ncols) {
        problems_add_line(errs, lineno, n > r->ncols ? r->ncols + 1 : n, NULL,
                          "%d fields where the %s has %d", n,
                          r->opt.fields ? "query list" : "header", r->ncols);
        r->rejected++;
        return 0;
    }
    struct telemetry_sample s;
    telemetry_sample_clear(&s);
    bool ok = true;
    double util = NAN, used = NAN, total = NAN, power = NAN;
    if (r->col[SMI_UTIL] >= 0)
        ok &= smi_value(r, SMI_UTIL, &f[r->col[SMI_UTIL]], lineno, &util, errs);
    if (r->col[SMI_MEM_USED] >= 0)
        ok &= smi_value(r, SMI_MEM_USED, &f[r->col[SMI_MEM_USED]], lineno, &used, errs);
    if (r->col[SMI_MEM_TOTAL] >= 0)
        ok &= smi_value(r, SMI_MEM_TOTAL, &f[r->col[SMI_MEM_TOTAL]], lineno, &total, errs);
    static const enum smi_column power_columns[] = {SMI_POWER, SMI_POWER_AVG, SMI_POWER_INSTANT};
    for (size_t i = 0; i < 3 && isnan(power); i++)
        if (r->col[power_columns[i]] >= 0)
            ok &= smi_value(r, (int)power_columns[i], &f[r->col[power_columns[i]]], lineno, &power,
                            errs);
    int c;
    if ((c = r->col[SMI_TIMESTAMP]) >= 0 && f[c].len > 0) {
        struct timefmt_fields t;
        if (!timefmt_parse(f[c].s, f[c].len, &t) ||
            timefmt_resolve_ms(&t, r->opt.local_to_utc, r->opt.tz_ctx, &s.ts_ms) != 0) {
            problems_add_line(errs, lineno, c + 1, NULL, "timestamp: '%.*s' is not a time",
                              (int)f[c].len, f[c].s);
            ok = false;
        } else {
            s.has_ts = true;
        }
    }
    static const enum smi_column id_columns[] = {SMI_UUID, SMI_BUS_ID, SMI_INDEX, SMI_NAME};
    for (size_t i = 0; i < 4; i++)
        if ((c = r->col[id_columns[i]]) >= 0)
            ok &= sample_text_ok(f[c].s, f[c].len, i == 3 ? "name" : "GPU id", lineno, c + 1, errs);
    if (!ok) {
        r->rejected++;
        return 0;
    }
    bool have_id = false;
    for (size_t i = 0; i < 4 && !have_id; i++) {
        c = r->col[id_columns[i]];
        if (c >= 0 && f[c].len > 0 && f[c].s[0] != '[')
            have_id = telemetry_set_gpu(&s, f[c].s, f[c].len);
    }
    if (!have_id)
        strcpy(s.gpu, "0"); /* no identity column: a single GPU */
    if ((c = r->col[SMI_NAME]) >= 0 && f[c].len > 0 && f[c].s[0] != '[' &&
        f[c].len < sizeof s.model) {
        memcpy(s.model, f[c].s, f[c].len);
        s.model[f[c].len] = '\0';
    }
    if ((c = r->col[SMI_MIG_MODE]) >= 0)
        s.mig = textnum_equals_word(f[c].s, f[c].len, "Enabled");
    if (!ok) {
        r->rejected++;
        return 0;
    }
    if (!isnan(util)) {
        s.duty_cycle = util / 100;
        s.duty_source = TELEMETRY_DUTY_GPU_UTIL;
    }
    s.memory_used_gb = used / 1024;
    s.memory_total_gb = total / 1024;
    s.power_w = power;
    return telemetry_deliver(r, &s);
}

/* ---- dmon reading -------------------------------------------------------------------------- */

static int dmon_feed(struct telemetry_reader *r, const char *line, size_t len, long lineno,
                     struct problems *errs)
{
    struct telemetry_field f[TELEMETRY_MAX_COLUMNS];
    if (line[0] == '#') {
        int n = telemetry_split(line + 1, len - 1, 0, f, TELEMETRY_MAX_COLUMNS);
        int gpu = -1;
        for (int i = 0; i < n && i < TELEMETRY_MAX_COLUMNS; i++)
            if (textnum_equals_word(f[i].s, f[i].len, "gpu"))
                gpu = i;
        if (gpu < 0)
            return 0; /* the units line ("# Idx W C …") or another comment */
        if (n > TELEMETRY_MAX_COLUMNS) {
            problems_add_line(errs, lineno, 0, NULL, "more than %d columns", TELEMETRY_MAX_COLUMNS);
            r->fatal = true;
            return -1;
        }
        for (int c = 0; c < DMON_COUNT; c++) {
            r->col[c] = -1;
            for (int i = 0; i < n && r->col[c] < 0; i++)
                if (textnum_equals_word(f[i].s, f[i].len, dmon_columns[c]))
                    r->col[c] = i;
        }
        r->ncols = n;
        r->have_header = true;
        return 0;
    }
    if (!r->have_header) {
        problems_add_line(errs, lineno, 0, NULL, "data before the '# gpu …' header line");
        r->rejected++;
        return 0;
    }
    int n = telemetry_split(line, len, 0, f, TELEMETRY_MAX_COLUMNS);
    if (n != r->ncols) {
        problems_add_line(errs, lineno, n > r->ncols ? r->ncols + 1 : n, NULL,
                          "%d fields where the header has %d", n, r->ncols);
        r->rejected++;
        return 0;
    }
    struct telemetry_sample s;
    telemetry_sample_clear(&s);
    double v[DMON_COUNT];
    static const double dmon_max[DMON_COUNT] = {
        0, 0, 0, TELEMETRY_MAX_POWER_W, 100, TELEMETRY_MAX_MEMORY_MIB};
    bool ok = true;
    for (int c = DMON_PWR; c < DMON_COUNT; c++) {
        v[c] = NAN;
        int i = r->col[c];
        if (i < 0 || (f[i].len == 1 && f[i].s[0] == '-'))
            continue;
        if (!textnum_parse_double(f[i].s, f[i].len, &v[c]) || v[c] < 0 || v[c] > dmon_max[c]) {
            problems_add_line(errs, lineno, i + 1, NULL,
                              "%s: '%.*s' is not a valid value (0 to %g)", dmon_columns[c],
                              (int)f[i].len, f[i].s, dmon_max[c]);
            ok = false;
        }
    }
    int gi = r->col[DMON_GPU];
    if (gi >= 0 && !sample_text_ok(f[gi].s, f[gi].len, "gpu", lineno, gi + 1, errs)) {
        r->rejected++;
        return 0;
    }
    if (gi < 0 || !telemetry_set_gpu(&s, f[gi].s, f[gi].len))
        strcpy(s.gpu, "0");
    int di = r->col[DMON_DATE], ti = r->col[DMON_TIME];
    if (di >= 0 && ti >= 0) {
        /* -o DT: "20240313" and "07:04:28" */
        char iso[32];
        struct timefmt_fields t;
        bool good = f[di].len == 8 && f[ti].len == 8;
        if (good) {
            snprintf(iso, sizeof iso, "%.4s-%.2s-%.2sT%.8s", f[di].s, f[di].s + 4, f[di].s + 6,
                     f[ti].s);
            good = timefmt_parse(iso, strlen(iso), &t) &&
                   timefmt_resolve_ms(&t, r->opt.local_to_utc, r->opt.tz_ctx, &s.ts_ms) == 0;
        }
        if (!good) {
            problems_add_line(errs, lineno, di + 1, NULL, "'%.*s %.*s' is not a date and time",
                              (int)f[di].len, f[di].s, (int)f[ti].len, f[ti].s);
            ok = false;
        }
        s.has_ts = good;
    }
    if (!ok) {
        r->rejected++;
        return 0;
    }
    if (!isnan(v[DMON_SM])) {
        s.duty_cycle = v[DMON_SM] / 100;
        s.duty_source = TELEMETRY_DUTY_GPU_UTIL;
    }
    s.power_w = v[DMON_PWR];
    s.memory_used_gb = v[DMON_FB] / 1024; /* dmon's "MB" are MiB */
    return telemetry_deliver(r, &s);
}

/* ---- DCGM reading -------------------------------------------------------------------------- */

static bool dcgm_name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
}

/* Copies a label value (escapes \\ \" \n undone) into dst when it fits; returns false when the
 * value is malformed. *i is left after the closing quote. */
static bool dcgm_label_value(const char *s, size_t len, size_t *i, char *dst, size_t cap,
                             bool *too_long)
{
    size_t n = 0;
    for (; *i < len; (*i)++) {
        char c = s[*i];
        if (c == '"') {
            (*i)++;
            if (dst)
                dst[n < cap ? n : cap - 1] = '\0';
            return true;
        }
        if (c == '\\') {
            if (++*i == len)
                return false;
            c = s[*i] == 'n' ? '\n' : s[*i];
        }
        if (dst) {
            if (n + 1 < cap)
                dst[n++] = c;
            else
                *too_long = true;
        }
    }
    return false;
}

/* Parses one exposition line into its metric name, GPU labels, value and timestamp. Returns 0,
 * or the 1-based column of the fault. */
static long dcgm_parse(const char *s, size_t len, struct telemetry_field *name,
                       struct dcgm_labels *labels, double *value, bool *has_ts, int64_t *ts_ms,
                       bool *too_long)
{
    size_t i = 0;
    memset(labels, 0, sizeof *labels);
    while (i < len && dcgm_name_char(s[i], i == 0))
        i++;
    if (i == 0)
        return 1;
    *name = (struct telemetry_field){s, i};
    if (i < len && s[i] == '{') {
        i++;
        for (;;) {
            while (i < len && (s[i] == ' ' || s[i] == ','))
                i++;
            if (i < len && s[i] == '}') {
                i++;
                break;
            }
            size_t k = i;
            while (i < len && dcgm_name_char(s[i], i == k) && s[i] != ':')
                i++;
            if (i == k || i + 1 >= len || s[i] != '=' || s[i + 1] != '"')
                return (long)i + 1;
            size_t klen = i - k;
            i += 2;
            char *dst = NULL;
            size_t cap = 0;
            if (klen == 4 && memcmp(s + k, "UUID", 4) == 0)
                dst = labels->uuid, cap = sizeof labels->uuid;
            else if (klen == 3 && memcmp(s + k, "gpu", 3) == 0)
                dst = labels->gpu, cap = sizeof labels->gpu;
            else if (klen == 8 && memcmp(s + k, "Hostname", 8) == 0)
                dst = labels->hostname, cap = sizeof labels->hostname;
            else if (klen == 8 && memcmp(s + k, "GPU_I_ID", 8) == 0)
                dst = labels->instance, cap = sizeof labels->instance;
            else if (klen == 9 && memcmp(s + k, "modelName", 9) == 0)
                dst = labels->model, cap = sizeof labels->model;
            if (!dcgm_label_value(s, len, &i, dst, cap, too_long))
                return (long)i + 1;
        }
    }
    struct telemetry_field tok[3];
    int n = telemetry_split(s + i, len - i, 0, tok, 3);
    if (n < 1 || n > 2)
        return (long)i + 1;
    if (textnum_equals_word(tok[0].s, tok[0].len, "NaN") ||
        textnum_equals_word(tok[0].s, tok[0].len, "+Inf") ||
        textnum_equals_word(tok[0].s, tok[0].len, "-Inf"))
        *value = NAN;
    else if (!textnum_parse_double(tok[0].s, tok[0].len, value))
        return (long)(tok[0].s - s) + 1;
    *has_ts = n == 2;
    if (*has_ts && !textnum_parse_int64(tok[1].s, tok[1].len, ts_ms))
        return (long)(tok[1].s - s) + 1;
    return 0;
}

static int dcgm_flush(struct telemetry_reader *r)
{
    int rc = 0;
    for (size_t g = 0; g < r->npending && rc == 0; g++) {
        const struct telemetry_dcgm_gpu *p = &r->pending[g];
        struct telemetry_sample s;
        telemetry_sample_clear(&s);
        memcpy(s.gpu, p->key, sizeof s.gpu);
        memcpy(s.model, p->model, sizeof s.model);
        s.mig = p->mig;
        s.has_ts = r->dcgm_has_ts || r->opt.has_at;
        s.ts_ms = r->dcgm_has_ts ? r->dcgm_ts_ms : r->opt.at_ms;
#define DCGM_HAS(m) (p->seen & (1u << (m)) && !isnan(p->value[m]))
        if (DCGM_HAS(DCGM_GR_ENGINE_ACTIVE)) {
            s.duty_cycle = p->value[DCGM_GR_ENGINE_ACTIVE];
            s.duty_source = TELEMETRY_DUTY_GR_ENGINE_ACTIVE;
        } else if (DCGM_HAS(DCGM_SM_ACTIVE)) {
            s.duty_cycle = p->value[DCGM_SM_ACTIVE];
            s.duty_source = TELEMETRY_DUTY_SM_ACTIVE;
        } else if (DCGM_HAS(DCGM_GPU_UTIL)) {
            s.duty_cycle = p->value[DCGM_GPU_UTIL] / 100;
            s.duty_source = TELEMETRY_DUTY_GPU_UTIL;
        }
        if (DCGM_HAS(DCGM_SM_ACTIVE))
            s.sm_active = p->value[DCGM_SM_ACTIVE];
        if (DCGM_HAS(DCGM_FB_USED)) {
            s.memory_used_gb = p->value[DCGM_FB_USED] / 1024;
            if (DCGM_HAS(DCGM_FB_FREE))
                s.memory_total_gb =
                    (p->value[DCGM_FB_USED] + p->value[DCGM_FB_FREE] +
                     (DCGM_HAS(DCGM_FB_RESERVED) ? p->value[DCGM_FB_RESERVED] : 0)) /
                    1024;
        }
        if (DCGM_HAS(DCGM_POWER))
            s.power_w = p->value[DCGM_POWER];
#undef DCGM_HAS
        rc = telemetry_deliver(r, &s);
    }
    if (r->npending > 0 && !r->dcgm_has_ts && r->opt.has_at)
        r->dcgm_at_used = true;
    r->npending = 0;
    return rc;
}

#define DCGM_TS_MAX_MS 253402300799999LL

static int dcgm_feed(struct telemetry_reader *r, const char *line, size_t len, long lineno,
                     struct problems *errs)
{
    if (line[0] == '#')
        return 0;
    struct telemetry_field name;
    struct dcgm_labels labels;
    double value = NAN;
    bool has_ts = false, too_long = false;
    int64_t ts_ms = 0;
    long bad = dcgm_parse(line, len, &name, &labels, &value, &has_ts, &ts_ms, &too_long);
    if (bad) {
        problems_add_line(errs, lineno, bad, NULL, "not a Prometheus metric line");
        r->rejected++;
        return 0;
    }
    /* A sample time RFC 3339 can write (timefmt would clamp anything else to its ends, and
     * PostgreSQL refuses what lies before its epoch range): 1970 to the end of 9999. */
    if (has_ts && (ts_ms < 0 || ts_ms > DCGM_TS_MAX_MS)) {
        problems_add_line(errs, lineno, 0, NULL,
                          "the timestamp %lld is not milliseconds since 1970 from 0 to %lld "
                          "(9999-12-31T23:59:59.999Z)",
                          (long long)ts_ms, (long long)DCGM_TS_MAX_MS);
        r->rejected++;
        return 0;
    }
    int m = -1;
    for (int k = 0; k < DCGM_METRIC_COUNT && m < 0; k++)
        if (textnum_equals_word(name.s, name.len, dcgm_metrics[k].name))
            m = k;
    if (m < 0)
        return 0; /* a metric the summary does not use */
    char key[TELEMETRY_GPU_MAX];
    int klen;
    if (labels.uuid[0])
        klen = snprintf(key, sizeof key, "%s%s%s", labels.uuid, labels.instance[0] ? "/" : "",
                        labels.instance);
    else if (labels.gpu[0])
        klen =
            snprintf(key, sizeof key, "%s%s%s%s%s", labels.hostname, labels.hostname[0] ? "/" : "",
                     labels.gpu, labels.instance[0] ? "/" : "", labels.instance);
    else
        return 0; /* not about a GPU */
    const char *const texts[] = {labels.uuid, labels.gpu, labels.hostname, labels.instance,
                                 labels.model};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (!sample_text_ok(texts[i], strlen(texts[i]), "GPU label", lineno, 0, errs)) {
            r->rejected++;
            return 0;
        }
    if (too_long || klen >= (int)sizeof key) {
        problems_add_line(errs, lineno, 0, NULL, "GPU labels longer than %d bytes",
                          TELEMETRY_GPU_MAX - 1);
        r->rejected++;
        return 0;
    }
    if (!isnan(value) && (value < 0 || value > dcgm_metrics[m].max)) {
        problems_add_line(errs, lineno, 0, NULL, "%s = %g is outside [0, %g]", dcgm_metrics[m].name,
                          value, dcgm_metrics[m].max);
        r->rejected++;
        return 0;
    }
    if (r->npending > 0 && (has_ts != r->dcgm_has_ts || (has_ts && ts_ms != r->dcgm_ts_ms)))
        if (dcgm_flush(r) != 0)
            return -1;
    struct telemetry_dcgm_gpu *p = NULL;
    for (size_t g = 0; g < r->npending && !p; g++)
        if (strcmp(r->pending[g].key, key) == 0)
            p = &r->pending[g];
    if (p && (p->seen & (1u << m))) { /* the metric again for this GPU: a new scrape */
        if (dcgm_flush(r) != 0)
            return -1;
        p = NULL;
    }
    if (!p && r->npending == 0 && !has_ts && r->dcgm_at_used) {
        problems_add_line(errs, lineno, 0, NULL,
                          "%s starts a second scrape without timestamps, but ?at= is the time "
                          "of one scrape: send each scrape on its own, or with its timestamps",
                          dcgm_metrics[m].name);
        r->fatal = true;
        return -1;
    }
    if (!p) {
        if (r->npending == TELEMETRY_MAX_GPUS_PER_SCRAPE) {
            problems_add_line(errs, lineno, 0, NULL, "more than %d GPUs in one scrape",
                              TELEMETRY_MAX_GPUS_PER_SCRAPE);
            r->rejected++;
            return 0;
        }
        if (r->npending == r->pending_cap) {
            size_t cap = r->pending_cap ? r->pending_cap * 2 : 8;
            struct telemetry_dcgm_gpu *grown = realloc(r->pending, cap * sizeof *grown);
            if (!grown) {
                r->fatal = true;
                return -1;
            }
            r->pending = grown;
            r->pending_cap = cap;
        }
        p = &r->pending[r->npending++];
        memset(p, 0, sizeof *p);
        memcpy(p->key, key, (size_t)klen + 1);
        memcpy(p->model, labels.model, sizeof p->model);
        p->mig = labels.instance[0] != '\0';
        r->dcgm_has_ts = has_ts;
        r->dcgm_ts_ms = ts_ms;
    }
    p->value[m] = value;
    p->seen |= 1u << m;
    return 0;
}

/* ---- reader -------------------------------------------------------------------------------- */

int telemetry_reader_init(struct telemetry_reader *r, enum telemetry_format format,
                          const struct telemetry_options *opt, telemetry_sample_fn on_sample,
                          void *ctx, struct problems *errs)
{
    memset(r, 0, sizeof *r);
    r->format = format;
    r->opt = *opt;
    r->on_sample = on_sample;
    r->ctx = ctx;
    for (size_t c = 0; c < sizeof r->col / sizeof *r->col; c++)
        r->col[c] = -1;
    if (format == TELEMETRY_UNKNOWN) {
        problems_add(errs, NULL, "unknown telemetry format (nvidia-smi, dmon or dcgm)");
        r->fatal = true;
        return -1;
    }
    if (format == TELEMETRY_NVIDIA_SMI && opt->fields)
        return smi_set_columns(r, opt->fields, strlen(opt->fields), 0, errs);
    return 0;
}

void telemetry_reader_free(struct telemetry_reader *r)
{
    free(r->pending);
    r->pending = NULL;
    r->npending = r->pending_cap = 0;
}

int telemetry_feed_line(struct telemetry_reader *r, const char *line, size_t len, long lineno,
                        struct problems *errs)
{
    if (r->fatal)
        return -1;
    const char *t = line;
    size_t tlen = len;
    textnum_trim(&t, &tlen);
    if (tlen == 0)
        return 0;
    switch (r->format) {
    case TELEMETRY_NVIDIA_SMI:
        return smi_feed(r, t, tlen, lineno, errs);
    case TELEMETRY_DMON:
        return dmon_feed(r, t, tlen, lineno, errs);
    case TELEMETRY_DCGM:
        return dcgm_feed(r, t, tlen, lineno, errs);
    default:
        return -1;
    }
}

int telemetry_finish(struct telemetry_reader *r, struct problems *errs)
{
    if (r->fatal)
        return -1;
    if (r->format == TELEMETRY_DCGM)
        return dcgm_flush(r);
    if (!r->have_header && r->format == TELEMETRY_NVIDIA_SMI) {
        problems_add(errs, NULL, "no header line");
        return -1;
    }
    return 0;
}

void telemetry_copy_line(const struct telemetry_sample *s, struct pgcopy_buf *out)
{
    pgcopy_time_ms(out, s->ts_ms, s->has_ts);
    pgcopy_tab(out);
    pgcopy_text(out, s->gpu);
    pgcopy_tab(out);
    pgcopy_double(out, s->duty_cycle);
    pgcopy_tab(out);
    pgcopy_double(out, s->memory_used_gb);
    pgcopy_tab(out);
    pgcopy_double(out, s->memory_total_gb);
    pgcopy_tab(out);
    pgcopy_double(out, s->power_w);
    pgcopy_end_row(out);
}

/* ---- summary ------------------------------------------------------------------------------- */

struct telemetry_gpu_state {
    char key[TELEMETRY_GPU_MAX]; /* "" = free slot */
    bool in_idle;
    bool idle_ts_known;
    long idle_count;
    int64_t idle_start_ms;
};

int telemetry_summary_init(struct telemetry_summary *s, double idle_below)
{
    memset(s, 0, sizeof *s);
    if (!(idle_below > 0 && idle_below <= 1))
        return -1;
    s->idle_below = idle_below;
    s->all_ts = true;
    s->memory_peak_gb = s->memory_total_gb = NAN;
    return 0;
}

void telemetry_summary_free(struct telemetry_summary *s)
{
    free(s->gpus);
    s->gpus = NULL;
    s->gpu_count = s->gpu_cap = 0;
}

static uint64_t telemetry_hash(const char *key)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)key; *c; c++)
        h = (h ^ *c) * 1099511628211ull;
    return h;
}

static struct telemetry_gpu_state *telemetry_gpu_slot(struct telemetry_gpu_state *table, size_t cap,
                                                      const char *key)
{
    size_t i = (size_t)telemetry_hash(key) & (cap - 1);
    while (table[i].key[0] && strcmp(table[i].key, key) != 0)
        i = (i + 1) & (cap - 1);
    return &table[i];
}

/* The GPU's state, added when new; NULL when out of memory or over the GPU limit. */
static struct telemetry_gpu_state *telemetry_gpu_find(struct telemetry_summary *s, const char *key)
{
    if (s->gpu_cap) {
        struct telemetry_gpu_state *slot = telemetry_gpu_slot(s->gpus, s->gpu_cap, key);
        if (slot->key[0])
            return slot;
    }
    if (s->gpu_count == TELEMETRY_SUMMARY_MAX_GPUS)
        return NULL;
    if ((s->gpu_count + 1) * 2 > s->gpu_cap) { /* keep the table at most half full */
        size_t cap = s->gpu_cap ? s->gpu_cap * 2 : 16;
        struct telemetry_gpu_state *table = calloc(cap, sizeof *table);
        if (!table)
            return NULL;
        for (size_t i = 0; i < s->gpu_cap; i++)
            if (s->gpus[i].key[0])
                *telemetry_gpu_slot(table, cap, s->gpus[i].key) = s->gpus[i];
        free(s->gpus);
        s->gpus = table;
        s->gpu_cap = cap;
    }
    struct telemetry_gpu_state *slot = telemetry_gpu_slot(s->gpus, s->gpu_cap, key);
    memcpy(slot->key, key, strlen(key) + 1);
    s->gpu_count++;
    return slot;
}

static void telemetry_idle_end(struct telemetry_summary *s, const struct telemetry_gpu_state *g,
                               bool has_ts, int64_t ts_ms)
{
    if (g->idle_ts_known && has_ts && ts_ms - g->idle_start_ms > s->longest_idle_ms)
        s->longest_idle_ms = ts_ms - g->idle_start_ms;
}

int telemetry_summary_add(struct telemetry_summary *s, const struct telemetry_sample *x)
{
    struct telemetry_gpu_state *g = telemetry_gpu_find(s, x->gpu[0] ? x->gpu : "0");
    if (!g)
        return -1;
    s->samples++;
    if (x->has_ts) {
        if (!s->any_ts || x->ts_ms < s->first_ts_ms)
            s->first_ts_ms = x->ts_ms;
        if (!s->any_ts || x->ts_ms > s->last_ts_ms)
            s->last_ts_ms = x->ts_ms;
        s->any_ts = true;
    } else {
        s->all_ts = false;
    }
    if (!isnan(x->memory_used_gb) && !(x->memory_used_gb <= s->memory_peak_gb))
        s->memory_peak_gb = x->memory_used_gb;
    if (!isnan(x->memory_total_gb) && !(x->memory_total_gb <= s->memory_total_gb))
        s->memory_total_gb = x->memory_total_gb;
    if (!isnan(x->power_w)) {
        s->power_sum_w += x->power_w;
        s->power_samples++;
    }
    if (isnan(x->duty_cycle) || x->duty_cycle < 0 || x->duty_cycle > 1)
        return 0; /* no duty cycle: neither idle nor busy, the stretch goes on */
    s->samples_with_duty++;
    s->duty_by_source[x->duty_source]++;
    s->duty_sum += x->duty_cycle;
    s->duty_hist[(size_t)lround(x->duty_cycle * (TELEMETRY_DUTY_BINS - 1))]++;
    if (x->duty_cycle < s->idle_below) {
        s->idle_samples++;
        if (!g->in_idle) {
            g->in_idle = true;
            g->idle_count = 0;
            g->idle_ts_known = x->has_ts;
            g->idle_start_ms = x->ts_ms;
        }
        if (++g->idle_count > s->longest_idle_samples)
            s->longest_idle_samples = g->idle_count;
        telemetry_idle_end(s, g, x->has_ts, x->ts_ms); /* an open stretch so far */
    } else if (g->in_idle) {
        telemetry_idle_end(s, g, x->has_ts, x->ts_ms);
        g->in_idle = false;
    }
    return 0;
}

/* The k-th smallest duty cycle (0-based), as its histogram bin value. */
static double telemetry_hist_value(const struct telemetry_summary *s, long k)
{
    long seen = 0;
    for (size_t b = 0; b < TELEMETRY_DUTY_BINS; b++) {
        seen += s->duty_hist[b];
        if (seen > k)
            return (double)b / (TELEMETRY_DUTY_BINS - 1);
    }
    return 1;
}

static double telemetry_percentile(const struct telemetry_summary *s, double p)
{
    double rank = p * (double)(s->samples_with_duty - 1);
    long lo = (long)floor(rank);
    long hi = lo + 1 < s->samples_with_duty ? lo + 1 : lo;
    double vlo = telemetry_hist_value(s, lo), vhi = telemetry_hist_value(s, hi);
    return vlo + (rank - (double)lo) * (vhi - vlo);
}

static json_t *telemetry_real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *telemetry_summary_json(const struct telemetry_summary *s)
{
    bool duty = s->samples_with_duty > 0;
    char first[TIMEFMT_UTC_LEN], last[TIMEFMT_UTC_LEN];
    timefmt_format_utc_ms(s->first_ts_ms, first);
    timefmt_format_utc_ms(s->last_ts_ms, last);
    json_t *sources =
        json_pack("{sI sI sI}", "gr_engine_active",
                  (json_int_t)s->duty_by_source[TELEMETRY_DUTY_GR_ENGINE_ACTIVE], "sm_active",
                  (json_int_t)s->duty_by_source[TELEMETRY_DUTY_SM_ACTIVE], "gpu_util",
                  (json_int_t)s->duty_by_source[TELEMETRY_DUTY_GPU_UTIL]);
    json_t *out = json_pack(
        "{sI sI sI so so so so sf sf}", "samples", (json_int_t)s->samples, "gpus",
        (json_int_t)s->gpu_count, "samples_with_duty_cycle", (json_int_t)s->samples_with_duty,
        "duty_cycle_source", sources, "first_ts", s->any_ts ? json_string(first) : json_null(),
        "last_ts", s->any_ts ? json_string(last) : json_null(), "time_span_s",
        s->any_ts ? json_real((double)(s->last_ts_ms - s->first_ts_ms) / 1000) : json_null(),
        "idle_below", s->idle_below, "duty_cycle_resolution", 1.0 / (TELEMETRY_DUTY_BINS - 1));
    if (!out)
        return NULL;
    const struct {
        const char *key;
        json_t *value;
    } figures[] = {
        {"duty_cycle_mean",
         duty ? json_real(s->duty_sum / (double)s->samples_with_duty) : json_null()},
        {"duty_cycle_p10", duty ? json_real(telemetry_percentile(s, 0.10)) : json_null()},
        {"duty_cycle_p50", duty ? json_real(telemetry_percentile(s, 0.50)) : json_null()},
        {"duty_cycle_p90", duty ? json_real(telemetry_percentile(s, 0.90)) : json_null()},
        {"memory_peak_gb", telemetry_real_or_null(s->memory_peak_gb)},
        {"memory_total_gb", telemetry_real_or_null(s->memory_total_gb)},
        {"power_mean_w",
         s->power_samples ? json_real(s->power_sum_w / (double)s->power_samples) : json_null()},
        {"idle_fraction",
         duty ? json_real((double)s->idle_samples / (double)s->samples_with_duty) : json_null()},
        {"longest_idle_s",
         duty && s->all_ts ? json_real((double)s->longest_idle_ms / 1000) : json_null()},
        {"longest_idle_samples", json_integer(s->longest_idle_samples)},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof figures / sizeof *figures; i++)
        ok &= json_object_set_new(out, figures[i].key, figures[i].value) == 0;
    if (!ok) {
        json_decref(out);
        return NULL;
    }
    return out;
}
