#include "core/formats/sacct.h"

#include <string.h>
#include <strings.h>

#include "core/formats/textnum.h"

/* Column names as sacct prints them (matched case-insensitively, `%width` suffixes dropped). */
static const char *const sacct_column_names[SACCT_COL_COUNT] = {
    [SACCT_COL_JOBID] = "JobID",         [SACCT_COL_JOBIDRAW] = "JobIDRaw",
    [SACCT_COL_STATE] = "State",         [SACCT_COL_SUBMIT] = "Submit",
    [SACCT_COL_START] = "Start",         [SACCT_COL_END] = "End",
    [SACCT_COL_ACCOUNT] = "Account",     [SACCT_COL_USER] = "User",
    [SACCT_COL_PARTITION] = "Partition", [SACCT_COL_QOS] = "QOS",
    [SACCT_COL_EXITCODE] = "ExitCode",   [SACCT_COL_ALLOCTRES] = "AllocTRES",
    [SACCT_COL_ALLOCGRES] = "AllocGRES", [SACCT_COL_WCKEY] = "WCKey",
    [SACCT_COL_COMMENT] = "Comment",     [SACCT_COL_JOBNAME] = "JobName",
};

/* Free-text columns: when one is last, '|' inside its value is data, not a separator. */
static const char *const sacct_free_text_columns[] = {
    "JobName", "Comment", "AdminComment", "SystemComment", "Constraints", "WorkDir", "SubmitLine"};

/* States of jobs that have not finished: counted, never stored. */
static const char *const sacct_unfinished_states[] = {
    "PENDING", "RUNNING",   "REQUEUED",  "SUSPENDED",   "CONFIGURING",  "COMPLETING",   "RESIZING",
    "STOPPED", "SIGNALING", "STAGE_OUT", "REQUEUE_FED", "REQUEUE_HOLD", "RESV_DEL_HOLD"};

struct sacct_field {
    const char *s;
    size_t len;
};

static bool sacct_name_is(const char *s, size_t len, const char *name)
{
    const char *pct = memchr(s, '%', len); /* "JobName%30" */
    if (pct)
        len = (size_t)(pct - s);
    return textnum_equals_word(s, len, name);
}

/* Learns the columns from a header line or from the -o list (separator '|' or ','). */
static int sacct_set_columns(struct sacct_reader *r, const char *s, size_t len, char sep,
                             long lineno, struct problems *errs)
{
    for (int c = 0; c < SACCT_COL_COUNT; c++)
        r->col[c] = -1;
    r->ncols = 0;
    r->trailing_pipe = sep == '|' && len > 0 && s[len - 1] == '|';
    if (r->trailing_pipe)
        len--;
    const char *last_name = s;
    size_t last_len = 0;
    size_t pos = 0;
    while (pos <= len) {
        const char *end = memchr(s + pos, sep, len - pos);
        size_t flen = end ? (size_t)(end - (s + pos)) : len - pos;
        const char *name = s + pos;
        textnum_trim(&name, &flen);
        if (r->ncols == SACCT_MAX_COLUMNS) {
            problems_add_line(errs, lineno, r->ncols + 1, NULL, "more than %d columns",
                              SACCT_MAX_COLUMNS);
            r->fatal = true;
            return -1;
        }
        for (int c = 0; c < SACCT_COL_COUNT; c++) {
            if (!sacct_name_is(name, flen, sacct_column_names[c]))
                continue;
            if (r->col[c] >= 0) { /* which of the two would be the run's? */
                problems_add_line(errs, lineno, r->ncols + 1, NULL,
                                  "column %s appears twice (columns %d and %d)",
                                  sacct_column_names[c], r->col[c] + 1, r->ncols + 1);
                r->fatal = true;
                return -1;
            }
            r->col[c] = r->ncols;
        }
        last_name = name;
        last_len = flen;
        r->ncols++;
        if (!end)
            break;
        pos = (size_t)(end - s) + 1;
    }
    r->free_text_last = false;
    for (size_t i = 0; i < sizeof sacct_free_text_columns / sizeof *sacct_free_text_columns; i++)
        if (sacct_name_is(last_name, last_len, sacct_free_text_columns[i]))
            r->free_text_last = true;
    r->have_columns = true;
    size_t before = errs->total;
    /* Say why when the "header" is evidently something else. */
    const char *hint = "";
    if (!r->opt.fields && !memchr(s, '|', len) && memchr(s, ',', len))
        hint = " (the header has no '|': sacct --parsable2 separates fields with '|')";
    else if (!r->opt.fields && len > 0 && s[0] >= '0' && s[0] <= '9')
        hint = " (line 1 looks like data: a file without a header line needs its -o "
               "list: " PROBLEMS_FIELDS_HINT ")";
    if (r->col[SACCT_COL_JOBID] < 0 && r->col[SACCT_COL_JOBIDRAW] < 0)
        problems_add_line(errs, lineno, 0, "/external_id", "missing column JobIDRaw or JobID%s",
                          hint);
    static const enum sacct_column required[] = {SACCT_COL_STATE, SACCT_COL_SUBMIT, SACCT_COL_START,
                                                 SACCT_COL_END};
    static const char *const required_pointer[] = {"/state", "/submitted_at", "/started_at",
                                                   "/ended_at"};
    for (size_t i = 0; i < sizeof required / sizeof *required; i++)
        if (r->col[required[i]] < 0)
            problems_add_line(errs, lineno, 0, required_pointer[i], "missing column %s%s",
                              sacct_column_names[required[i]], hint);
    r->fatal = errs->total != before;
    return r->fatal ? -1 : 0;
}

int sacct_reader_init(struct sacct_reader *r, const struct sacct_options *opt,
                      struct problems *errs)
{
    memset(r, 0, sizeof *r);
    r->opt = *opt;
    for (int c = 0; c < SACCT_COL_COUNT; c++)
        r->col[c] = -1;
    if (opt->fields)
        return sacct_set_columns(r, opt->fields, strlen(opt->fields), ',', 0, errs);
    return 0;
}

/* The next comma-separated item of s[0..len) from *pos (advanced past it); NULL at the end. */
static const char *sacct_next_item(const char *s, size_t len, size_t *pos, size_t *item_len)
{
    if (*pos >= len)
        return NULL;
    const char *item = s + *pos;
    const char *comma = memchr(item, ',', len - *pos);
    *item_len = comma ? (size_t)(comma - item) : len - *pos;
    *pos += *item_len + 1;
    return item;
}

bool sacct_tres_gpus(const char *tres, size_t len, double *gpus)
{
    double plain = -1, typed = 0;
    size_t pos = 0, ilen;
    const char *item;
    while ((item = sacct_next_item(tres, len, &pos, &ilen))) {
        const char *eq = memchr(item, '=', ilen);
        if (!eq)
            continue;
        size_t klen = (size_t)(eq - item);
        bool is_plain = klen == 8 && memcmp(item, "gres/gpu", 8) == 0;
        bool is_typed = klen > 9 && memcmp(item, "gres/gpu:", 9) == 0;
        if (!is_plain && !is_typed)
            continue;
        double count;
        if (!textnum_parse_double(eq + 1, ilen - klen - 1, &count) || count < 0)
            return false;
        if (is_plain)
            plain = count;
        else
            typed += count;
    }
    *gpus = plain >= 0 ? plain : typed;
    return true;
}

void sacct_tres_gpu_model(const char *tres, size_t len, char model[RUN_TEXT_MAX])
{
    model[0] = '\0';
    size_t pos = 0, ilen;
    const char *item;
    while ((item = sacct_next_item(tres, len, &pos, &ilen))) {
        const char *eq = memchr(item, '=', ilen);
        size_t klen = eq ? (size_t)(eq - item) : ilen;
        if (klen <= 9 || memcmp(item, "gres/gpu:", 9) != 0)
            continue;
        if (model[0] && (strlen(model) != klen - 9 || memcmp(model, item + 9, klen - 9) != 0)) {
            model[0] = '\0'; /* two GPU types in one job: no single model */
            return;
        }
        if (!model[0] && !run_set_text(model, item + 9, klen - 9))
            model[0] = '\0';
    }
}

/* Older AllocGRES: "gpu:2", "gpu:k80:2", "gpu:k80:2(IDX:0-1)", comma-separated. */
static bool sacct_gres_gpus(const char *gres, size_t len, double *gpus)
{
    double total = 0;
    size_t pos = 0, ilen;
    const char *item;
    while ((item = sacct_next_item(gres, len, &pos, &ilen))) {
        const char *paren = memchr(item, '(', ilen);
        if (paren)
            ilen = (size_t)(paren - item);
        if (ilen < 4 || memcmp(item, "gpu:", 4) != 0)
            continue;
        const char *colon = item + ilen;
        while (colon > item && colon[-1] != ':')
            colon--;
        double count;
        if (!textnum_parse_double(colon, (size_t)(item + ilen - colon), &count) || count < 0)
            return false;
        total += count;
    }
    *gpus = total;
    return true;
}

/* Splits a data line into r->ncols fields; returns how many the line had. */
static int sacct_split(const struct sacct_reader *r, const char *s, size_t len,
                       struct sacct_field *f)
{
    int n = 0;
    size_t pos = 0;
    for (;;) {
        const char *end = memchr(s + pos, '|', len - pos);
        bool rest = n == r->ncols - 1 && r->free_text_last;
        if (rest || !end) {
            if (n < r->ncols)
                f[n] = (struct sacct_field){s + pos, len - pos};
            return n + 1;
        }
        if (n < r->ncols)
            f[n] = (struct sacct_field){s + pos, (size_t)(end - (s + pos))};
        n++;
        pos = (size_t)(end - s) + 1;
    }
}

static bool sacct_is_null_time(const struct sacct_field *f)
{
    return f->len == 0 || textnum_equals_word(f->s, f->len, "Unknown") ||
           textnum_equals_word(f->s, f->len, "None");
}

/* Reads a time column into (*epoch_s, *present); false after adding a problem. */
static bool sacct_time(const struct sacct_reader *r, const struct sacct_field *f, bool nullable,
                       const char *pointer, long lineno, int column, int64_t *epoch_s,
                       bool *present, struct problems *errs)
{
    *present = false;
    if (sacct_is_null_time(f)) {
        if (!nullable)
            problems_add_line(errs, lineno, column, pointer, "'%.*s' is not a time", (int)f->len,
                              f->s);
        return nullable;
    }
    struct timefmt_fields t;
    int64_t ms;
    if (!timefmt_parse(f->s, f->len, &t)) {
        problems_add_line(errs, lineno, column, pointer, "'%.*s' is not a time", (int)f->len, f->s);
        return false;
    }
    if (timefmt_resolve_ms(&t, r->opt.local_to_utc, r->opt.tz_ctx, &ms) != 0) {
        problems_add_line(errs, lineno, column, pointer, "'%.*s' does not exist in the time zone",
                          (int)f->len, f->s);
        return false;
    }
    *epoch_s = ms / 1000;
    *present = true;
    return true;
}

static bool sacct_text(char dst[RUN_TEXT_MAX], const struct sacct_field *f, const char *pointer,
                       long lineno, int column, struct problems *errs)
{
    if (run_set_text(dst, f->s, f->len))
        return true;
    problems_add_line(errs, lineno, column, pointer, "longer than %d bytes", RUN_TEXT_MAX - 1);
    return false;
}

static bool sacct_in_list(const char *s, size_t len, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(list[i]) == len && memcmp(list[i], s, len) == 0)
            return true;
    return false;
}

enum sacct_result sacct_feed_line(struct sacct_reader *r, const char *line, size_t len, long lineno,
                                  struct run *out, struct problems *errs)
{
    if (r->fatal)
        return SACCT_FATAL;
    {
        const char *t = line;
        size_t tlen = len;
        textnum_trim(&t, &tlen);
        if (tlen == 0)
            return SACCT_NOTHING;
    }
    if (!r->have_columns)
        return sacct_set_columns(r, line, len, '|', lineno, errs) == 0 ? SACCT_NOTHING
                                                                       : SACCT_FATAL;
    struct sacct_field f[SACCT_MAX_COLUMNS];
    if (len > 0 && line[len - 1] == '|' && (r->trailing_pipe || r->opt.fields)) {
        /* `-p`: one trailing '|'. With a -o list we cannot see the header, so a line with one
         * field too many that ends in '|' is taken to be `-p` output. */
        int probe = sacct_split(r, line, len, f);
        if (r->trailing_pipe || probe == r->ncols + 1)
            len--;
    }
    int n = sacct_split(r, line, len, f);
    if (n != r->ncols) {
        problems_add_line(errs, lineno, n > r->ncols ? r->ncols + 1 : n, NULL,
                          "%d fields where the %s has %d", n,
                          r->opt.fields ? "field list" : "header", r->ncols);
        r->counts.rejected++;
        return SACCT_REJECTED;
    }
    for (int i = 0; i < n; i++)
        textnum_trim(&f[i].s, &f[i].len);

    run_clear(out);
    size_t before = errs->total;
    int c_raw = r->col[SACCT_COL_JOBIDRAW], c_id = r->col[SACCT_COL_JOBID];
    int c_job = c_raw >= 0 && f[c_raw].len > 0 ? c_raw : c_id >= 0 ? c_id : c_raw;
    const struct sacct_field *job = &f[c_job];
    if (memchr(job->s, '.', job->len) && !r->opt.include_steps) {
        r->counts.steps++;
        return SACCT_STEP;
    }
    (void)sacct_text(out->external_id, job, "/external_id", lineno, c_job + 1, errs);

    /* State: the first word, without sacct's truncation '+' */
    int c_state = r->col[SACCT_COL_STATE];
    const char *st = f[c_state].s;
    size_t st_len = f[c_state].len;
    const char *space = memchr(st, ' ', st_len);
    if (space)
        st_len = (size_t)(space - st);
    if (st_len > 0 && st[st_len - 1] == '+')
        st_len--;
    if (sacct_in_list(st, st_len, sacct_unfinished_states,
                      sizeof sacct_unfinished_states / sizeof *sacct_unfinished_states)) {
        r->counts.unfinished++;
        return SACCT_UNFINISHED;
    }
    if (!run_state_parse(st, st_len, &out->state))
        problems_add_line(errs, lineno, c_state + 1, "/state", "unknown state '%.*s'",
                          (int)f[c_state].len, f[c_state].s);

    (void)sacct_time(r, &f[r->col[SACCT_COL_SUBMIT]], false, "/submitted_at", lineno,
                     r->col[SACCT_COL_SUBMIT] + 1, &out->submitted_at_s, &out->has_submitted, errs);
    (void)sacct_time(r, &f[r->col[SACCT_COL_START]], true, "/started_at", lineno,
                     r->col[SACCT_COL_START] + 1, &out->started_at_s, &out->has_started, errs);
    (void)sacct_time(r, &f[r->col[SACCT_COL_END]], true, "/ended_at", lineno,
                     r->col[SACCT_COL_END] + 1, &out->ended_at_s, &out->has_ended, errs);

    char account[RUN_TEXT_MAX] = "", partition[RUN_TEXT_MAX] = "", qos[RUN_TEXT_MAX] = "";
    int c;
    if ((c = r->col[SACCT_COL_ACCOUNT]) >= 0)
        (void)sacct_text(account, &f[c], "/team", lineno, c + 1, errs);
    if ((c = r->col[SACCT_COL_PARTITION]) >= 0)
        (void)sacct_text(partition, &f[c], "/partition", lineno, c + 1, errs);
    if ((c = r->col[SACCT_COL_QOS]) >= 0)
        (void)sacct_text(qos, &f[c], "/partition", lineno, c + 1, errs);
    if ((c = r->col[SACCT_COL_USER]) >= 0)
        (void)sacct_text(out->user, &f[c], "/user", lineno, c + 1, errs);
    /* what a workload recognises its runs by, when printed (-o WCKey,Comment,JobName) */
    if ((c = r->col[SACCT_COL_WCKEY]) >= 0)
        (void)sacct_text(out->wckey, &f[c], "/wckey", lineno, c + 1, errs);
    if ((c = r->col[SACCT_COL_COMMENT]) >= 0)
        (void)sacct_text(out->comment, &f[c], "/comment", lineno, c + 1, errs);
    if ((c = r->col[SACCT_COL_JOBNAME]) >= 0)
        (void)sacct_text(out->job_name, &f[c], "/job_name", lineno, c + 1, errs);

    const char *team = r->opt.team ? r->opt.team : account;
    if (!r->opt.team && r->opt.map_team) {
        const char *mapped = r->opt.map_team(account, r->opt.map_ctx);
        if (mapped)
            team = mapped;
    }
    if (!run_set_text(out->team, team, strlen(team)))
        problems_add_line(errs, lineno, 0, "/team", "team longer than %d bytes", RUN_TEXT_MAX - 1);
    /* The raw partition is kept; the class comes from the caller's map, else (at upload) from
     * ?class= or the cluster's partition map. */
    const char *raw = partition[0] ? partition : qos;
    if (!run_set_text(out->partition, raw, strlen(raw))) /* same capacity: always fits */
        out->partition[0] = '\0';
    const char *klass = r->opt.map_class ? r->opt.map_class(partition, qos, r->opt.map_ctx) : NULL;
    if (klass && !run_set_text(out->workload_class, klass, strlen(klass)))
        problems_add_line(errs, lineno, 0, "/workload_class", "class longer than %d bytes",
                          RUN_TEXT_MAX - 1);

    if ((c = r->col[SACCT_COL_EXITCODE]) >= 0) {
        if (f[c].len >= RUN_EXIT_CODE_MAX) {
            problems_add_line(errs, lineno, c + 1, "/exit_code", "'%.*s' is not an exit code",
                              (int)f[c].len, f[c].s);
        } else {
            memcpy(out->exit_code, f[c].s, f[c].len);
            out->exit_code[f[c].len] = '\0';
        }
    }

    if ((c = r->col[SACCT_COL_ALLOCTRES]) >= 0) {
        sacct_tres_gpu_model(f[c].s, f[c].len, out->gpu_model);
        if (!sacct_tres_gpus(f[c].s, f[c].len, &out->gpus))
            problems_add_line(errs, lineno, c + 1, "/gpus", "bad gres/gpu count in '%.*s'",
                              (int)f[c].len, f[c].s);
    } else if ((c = r->col[SACCT_COL_ALLOCGRES]) >= 0) {
        if (!sacct_gres_gpus(f[c].s, f[c].len, &out->gpus))
            problems_add_line(errs, lineno, c + 1, "/gpus", "bad gpu count in '%.*s'",
                              (int)f[c].len, f[c].s);
    }

    if (errs->total == before)
        run_check(out, "", lineno, errs);
    if (errs->total != before) {
        r->counts.rejected++;
        return SACCT_REJECTED;
    }
    r->counts.runs++;
    return SACCT_RUN;
}
