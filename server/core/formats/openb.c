#include "core/formats/openb.h"

#include <string.h>

#include "core/formats/textnum.h"

#define OPENB_MAX_COLUMNS 32

static const char *const openb_column_names[OPENB_COL_COUNT] = {
    [OPENB_NAME] = "name",
    [OPENB_NUM_GPU] = "num_gpu",
    [OPENB_GPU_MILLI] = "gpu_milli",
    [OPENB_QOS] = "qos",
    [OPENB_POD_PHASE] = "pod_phase",
    [OPENB_CREATION] = "creation_time",
    [OPENB_DELETION] = "deletion_time",
    [OPENB_SCHEDULED] = "scheduled_time",
};

static const struct {
    const char *phase;
    enum run_state state;
    bool started; /* a pod in this phase had been scheduled */
} openb_phases[] = {
    {"Succeeded", RUN_STATE_COMPLETED, true},
    {"Failed", RUN_STATE_FAILED, true},
    {"Running", RUN_STATE_CANCELLED, true},
    {"Pending", RUN_STATE_CANCELLED, false},
};

struct openb_field {
    const char *s;
    size_t len;
};

void openb_reader_init(struct openb_reader *r, const struct openb_options *opt)
{
    memset(r, 0, sizeof *r);
    r->opt = *opt;
}

static int openb_split(const char *s, size_t len, struct openb_field *f)
{
    int n = 0;
    size_t i = 0;
    for (;;) {
        const char *comma = memchr(s + i, ',', len - i);
        size_t flen = comma ? (size_t)(comma - (s + i)) : len - i;
        if (n < OPENB_MAX_COLUMNS)
            f[n] = (struct openb_field){s + i, flen};
        n++;
        if (!comma)
            return n;
        i += flen + 1;
    }
}

/* Seconds from the trace start → epoch seconds; an empty cell is absent. */
static bool openb_time(const struct openb_reader *r, enum openb_column c,
                       const struct openb_field *f, long lineno, int64_t *epoch_s, bool *present,
                       struct problems *errs)
{
    int64_t offset;
    f += r->col[c];
    *present = false;
    if (f->len == 0)
        return true;
    if (!textnum_parse_int64(f->s, f->len, &offset) || offset < 0 ||
        offset > INT64_MAX / 2 - r->opt.trace_start_s) {
        problems_add_line(errs, lineno, r->col[c] + 1, NULL,
                          "%s: '%.*s' is not a number of seconds", openb_column_names[c],
                          (int)f->len, f->s);
        return false;
    }
    *epoch_s = r->opt.trace_start_s + offset;
    *present = true;
    return true;
}

enum openb_result openb_feed_line(struct openb_reader *r, const char *line, size_t len, long lineno,
                                  struct run *out, struct problems *errs)
{
    if (r->fatal)
        return OPENB_FATAL;
    if (len == 0)
        return OPENB_NOTHING;
    struct openb_field f[OPENB_MAX_COLUMNS];
    if (memchr(line, '"', len)) {
        problems_add_line(errs, lineno, 0, NULL, "quoted fields do not occur in this trace");
        r->rejected++;
        return r->have_header ? OPENB_REJECTED : (r->fatal = true, OPENB_FATAL);
    }
    int n = openb_split(line, len, f);
    if (!r->have_header) {
        r->fatal = true;
        if (n > OPENB_MAX_COLUMNS) {
            problems_add_line(errs, lineno, 0, NULL, "more than %d columns", OPENB_MAX_COLUMNS);
            return OPENB_FATAL;
        }
        for (int c = 0; c < OPENB_COL_COUNT; c++) {
            r->col[c] = -1;
            for (int i = 0; i < n && r->col[c] < 0; i++)
                if (textnum_equals_word(f[i].s, f[i].len, openb_column_names[c]))
                    r->col[c] = i;
            if (r->col[c] < 0)
                problems_add_line(errs, lineno, 0, NULL, "missing column %s",
                                  openb_column_names[c]);
        }
        r->ncols = n;
        r->have_header = true;
        r->fatal = false;
        for (int c = 0; c < OPENB_COL_COUNT; c++)
            r->fatal |= r->col[c] < 0;
        return r->fatal ? OPENB_FATAL : OPENB_NOTHING;
    }
    if (n != r->ncols) {
        problems_add_line(errs, lineno, n > r->ncols ? r->ncols + 1 : n, NULL,
                          "%d fields where the header has %d", n, r->ncols);
        r->rejected++;
        return OPENB_REJECTED;
    }
    run_clear(out);
    size_t before = errs->total;
    const struct openb_field *name = &f[r->col[OPENB_NAME]];
    if (!run_set_text(out->external_id, name->s, name->len))
        problems_add_line(errs, lineno, r->col[OPENB_NAME] + 1, "/external_id",
                          "longer than %d bytes", RUN_TEXT_MAX - 1);
    const struct openb_field *qos = &f[r->col[OPENB_QOS]];
    if (!run_set_text(out->partition, qos->s, qos->len))
        problems_add_line(errs, lineno, r->col[OPENB_QOS] + 1, "/partition", "longer than %d bytes",
                          RUN_TEXT_MAX - 1);
    if (r->opt.team && !run_set_text(out->team, r->opt.team, strlen(r->opt.team)))
        problems_add_line(errs, lineno, 0, "/team", "longer than %d bytes", RUN_TEXT_MAX - 1);

    int64_t num_gpu, gpu_milli;
    const struct openb_field *ng = &f[r->col[OPENB_NUM_GPU]], *gm = &f[r->col[OPENB_GPU_MILLI]];
    if (!textnum_parse_int64(ng->s, ng->len, &num_gpu) || num_gpu < 0 || num_gpu > 1000000)
        problems_add_line(errs, lineno, r->col[OPENB_NUM_GPU] + 1, "/gpus",
                          "num_gpu: '%.*s' is not a GPU count", (int)ng->len, ng->s);
    else if (!textnum_parse_int64(gm->s, gm->len, &gpu_milli) || gpu_milli < 0 || gpu_milli > 1000)
        problems_add_line(errs, lineno, r->col[OPENB_GPU_MILLI] + 1, "/gpus",
                          "gpu_milli: '%.*s' is not in 0..1000", (int)gm->len, gm->s);
    else /* gpu_milli is the share of each GPU; 0 with GPUs would mean whole ones */
        out->gpus =
            num_gpu == 0 ? 0 : (double)num_gpu * (double)(gpu_milli ? gpu_milli : 1000) / 1000;

    const struct openb_field *phase = &f[r->col[OPENB_POD_PHASE]];
    bool started = false, known = false;
    for (size_t i = 0; i < sizeof openb_phases / sizeof *openb_phases && !known; i++)
        if (textnum_equals_word(phase->s, phase->len, openb_phases[i].phase)) {
            out->state = openb_phases[i].state;
            started = openb_phases[i].started;
            known = true;
        }
    if (!known)
        problems_add_line(errs, lineno, r->col[OPENB_POD_PHASE] + 1, "/state",
                          "unknown pod_phase '%.*s'", (int)phase->len, phase->s);

    (void)openb_time(r, OPENB_CREATION, f, lineno, &out->submitted_at_s, &out->has_submitted, errs);
    (void)openb_time(r, OPENB_SCHEDULED, f, lineno, &out->started_at_s, &out->has_started, errs);
    (void)openb_time(r, OPENB_DELETION, f, lineno, &out->ended_at_s, &out->has_ended, errs);
    if (known && started != out->has_started && errs->total == before)
        problems_add_line(errs, lineno, r->col[OPENB_SCHEDULED] + 1, "/started_at",
                          started ? "a %.*s pod needs its scheduled_time"
                                  : "a %.*s pod was never scheduled",
                          (int)phase->len, phase->s);
    if (errs->total == before)
        run_check(out, "", lineno, errs);
    if (errs->total != before) {
        r->rejected++;
        return OPENB_REJECTED;
    }
    r->runs++;
    return OPENB_RUN;
}
