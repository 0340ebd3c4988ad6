#include "core/formats/run.h"

#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/formats/timefmt.h"
#include "core/validate.h"

static const char *const run_state_names[] = {
    [RUN_STATE_COMPLETED] = "COMPLETED",         [RUN_STATE_FAILED] = "FAILED",
    [RUN_STATE_CANCELLED] = "CANCELLED",         [RUN_STATE_TIMEOUT] = "TIMEOUT",
    [RUN_STATE_PREEMPTED] = "PREEMPTED",         [RUN_STATE_NODE_FAIL] = "NODE_FAIL",
    [RUN_STATE_OUT_OF_MEMORY] = "OUT_OF_MEMORY", [RUN_STATE_BOOT_FAIL] = "BOOT_FAIL",
    [RUN_STATE_DEADLINE] = "DEADLINE",
};
#define RUN_STATE_COUNT (sizeof run_state_names / sizeof run_state_names[0])

const char *run_state_name(enum run_state s)
{
    return (size_t)s < RUN_STATE_COUNT ? run_state_names[s] : NULL;
}

bool run_state_parse(const char *s, size_t len, enum run_state *out)
{
    for (size_t i = 1; i < RUN_STATE_COUNT; i++) {
        if (strlen(run_state_names[i]) == len && memcmp(run_state_names[i], s, len) == 0) {
            *out = (enum run_state)i;
            return true;
        }
    }
    return false;
}

void run_clear(struct run *r)
{
    memset(r, 0, sizeof *r);
    r->gpu_utilization = NAN;
}

bool run_set_text(char dst[RUN_TEXT_MAX], const char *s, size_t len)
{
    if (len >= RUN_TEXT_MAX)
        return false;
    memcpy(dst, s, len);
    dst[len] = '\0';
    return true;
}

/* "N:M" with N and M decimal (sacct's exit status and terminating signal). */
static bool run_exit_code_valid(const char *s)
{
    size_t a = strspn(s, "0123456789");
    if (a == 0 || a > 10 || s[a] != ':')
        return false;
    size_t b = strspn(s + a + 1, "0123456789");
    return b > 0 && b <= 10 && s[a + 1 + b] == '\0';
}

size_t run_check(const struct run *r, const char *prefix, long lineno, struct problems *errs)
{
    size_t before = errs->total;
    char ptr[256];
#define RUN_FAULT(field, ...)                                                                      \
    problems_add_line(errs, lineno, 0, problems_pointer(ptr, sizeof ptr, prefix, field),           \
                      __VA_ARGS__)
    if (r->external_id[0] == '\0')
        RUN_FAULT("external_id", "a run needs a job id");
    if (r->state == RUN_STATE_UNSET)
        RUN_FAULT("state", "a run needs a final state");
    if (!(r->gpus >= 0 && r->gpus <= RUN_GPUS_MAX))
        RUN_FAULT("gpus", "gpus must be between 0 and %g", RUN_GPUS_MAX);
    if (!r->has_submitted)
        RUN_FAULT("submitted_at", "a run needs its submission time");
    if (!r->has_ended)
        RUN_FAULT("ended_at", "a finished run needs its end time");
    if (r->has_started && r->has_submitted && r->started_at_s < r->submitted_at_s)
        RUN_FAULT("started_at", "started before it was submitted");
    if (r->has_ended && r->has_started && r->ended_at_s < r->started_at_s)
        RUN_FAULT("ended_at", "ended before it started");
    if (r->has_ended && !r->has_started && r->has_submitted && r->ended_at_s < r->submitted_at_s)
        RUN_FAULT("ended_at", "ended before it was submitted");
    if (!isnan(r->gpu_utilization) && !(r->gpu_utilization >= 0 && r->gpu_utilization <= 1))
        RUN_FAULT("gpu_utilization", "gpu_utilization is a fraction in [0, 1]");
    if (r->exit_code[0] && !run_exit_code_valid(r->exit_code))
        RUN_FAULT("exit_code", "exit_code must read N:M (exit status:signal)");
    /* the rule of every text field, whichever format the run came in (sacct, openb, JSON) */
    static const struct {
        const char *name;
        size_t offset;
    } texts[] = {
#define RUN_TEXT_FIELD(f) {#f, offsetof(struct run, f)}
        RUN_TEXT_FIELD(external_id), RUN_TEXT_FIELD(cluster),        RUN_TEXT_FIELD(team),
        RUN_TEXT_FIELD(user),        RUN_TEXT_FIELD(workload_class), RUN_TEXT_FIELD(partition),
        RUN_TEXT_FIELD(gpu_model),   RUN_TEXT_FIELD(wckey),          RUN_TEXT_FIELD(comment),
        RUN_TEXT_FIELD(job_name),    RUN_TEXT_FIELD(workload),
#undef RUN_TEXT_FIELD
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        const char *t = (const char *)r + texts[i].offset;
        char why[128];
        if (text_fault(t, strlen(t), 0, why, sizeof why))
            RUN_FAULT(texts[i].name, "%s", why);
    }
#undef RUN_FAULT
    return errs->total - before;
}

enum run_json_kind { RUN_JSON_TEXT, RUN_JSON_TIME, RUN_JSON_NUMBER, RUN_JSON_STATE };

/* The JSON fields of a run: name, kind, whether it must be present, whether null is allowed,
 * where the value goes in struct run and, for times, where its presence flag goes. */
#define RUN_NO_FLAG SIZE_MAX
static const struct run_json_field {
    const char *name;
    enum run_json_kind kind;
    bool required;
    bool nullable;
    size_t offset;
    size_t present_offset;
    size_t text_cap;
} run_json_fields[] = {
#define RUN_TEXT(name, required, nullable, cap)                                                    \
    {                                                                                              \
#name, RUN_JSON_TEXT, required, nullable, offsetof(struct run, name), RUN_NO_FLAG, cap     \
    }
#define RUN_TIME(name, flag, required, nullable)                                                   \
    {                                                                                              \
#name, RUN_JSON_TIME, required, nullable, offsetof(struct run, name##_s),                  \
            offsetof(struct run, flag), 0                                                          \
    }
    RUN_TEXT(external_id, true, false, RUN_TEXT_MAX),
    RUN_TEXT(cluster, false, false, RUN_TEXT_MAX),
    RUN_TEXT(team, false, true, RUN_TEXT_MAX),
    RUN_TEXT(user, false, true, RUN_TEXT_MAX),
    RUN_TEXT(workload_class, false, true, RUN_TEXT_MAX),
    RUN_TEXT(partition, false, true, RUN_TEXT_MAX),
    RUN_TEXT(gpu_model, false, true, RUN_TEXT_MAX),
    RUN_TEXT(wckey, false, true, RUN_TEXT_MAX),
    RUN_TEXT(comment, false, true, RUN_TEXT_MAX),
    RUN_TEXT(job_name, false, true, RUN_TEXT_MAX),
    RUN_TEXT(workload, false, true, RUN_TEXT_MAX),
    RUN_TIME(submitted_at, has_submitted, true, false),
    RUN_TIME(started_at, has_started, false, true),
    RUN_TIME(ended_at, has_ended, true, false),
    {"gpus", RUN_JSON_NUMBER, false, false, offsetof(struct run, gpus), RUN_NO_FLAG, 0},
    {"state", RUN_JSON_STATE, true, false, offsetof(struct run, state), RUN_NO_FLAG, 0},
    RUN_TEXT(exit_code, false, true, RUN_EXIT_CODE_MAX),
    {"gpu_utilization", RUN_JSON_NUMBER, false, true, offsetof(struct run, gpu_utilization),
     RUN_NO_FLAG, 0},
#undef RUN_TEXT
#undef RUN_TIME
};
#define RUN_JSON_FIELD_COUNT (sizeof run_json_fields / sizeof run_json_fields[0])

/* Reads one present field; adds a problem and returns false when its value is wrong. */
static bool run_json_read(const struct run_json_field *f, const json_t *v, struct run *r,
                          const char *ptr, struct problems *errs)
{
    void *target = (char *)r + f->offset;
    bool *present =
        f->present_offset == RUN_NO_FLAG ? NULL : (bool *)((char *)r + f->present_offset);
    if (json_is_null(v)) {
        if (!f->nullable)
            problems_add(errs, ptr, "%s may not be null", f->name);
        return f->nullable;
    }
    switch (f->kind) {
    case RUN_JSON_TEXT: {
        if (!json_is_string(v)) {
            problems_add(errs, ptr, "%s must be a string", f->name);
            return false;
        }
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);
        size_t cap = f->text_cap;
        if (len >= cap || memchr(s, '\0', len)) {
            problems_add(errs, ptr, "%s must be at most %zu bytes, without NUL", f->name, cap - 1);
            return false;
        }
        const char *label_fault =
            f->offset == offsetof(struct run, workload_class) ? class_label_fault(s, len) : NULL;
        if (label_fault) { /* the team's own label, kept as given: never an empty or odd one */
            problems_add(errs, ptr, "workload_class %s", label_fault);
            return false;
        }
        memcpy(target, s, len + 1);
        return true;
    }
    case RUN_JSON_TIME: {
        struct timefmt_fields t;
        int64_t ms;
        if (!json_is_string(v) || !timefmt_parse(json_string_value(v), json_string_length(v), &t) ||
            !t.has_offset || timefmt_resolve_ms(&t, NULL, NULL, &ms) != 0) {
            problems_add(errs, ptr, "%s must be an RFC 3339 time with an offset", f->name);
            return false;
        }
        /* floor to whole seconds, also before 1970 */
        *(int64_t *)target = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
        *present = true;
        return true;
    }
    case RUN_JSON_NUMBER:
        if (!json_is_number(v)) {
            problems_add(errs, ptr, "%s must be a number", f->name);
            return false;
        }
        *(double *)target = json_number_value(v);
        return true;
    case RUN_JSON_STATE:
        if (!json_is_string(v) ||
            !run_state_parse(json_string_value(v), json_string_length(v), target)) {
            problems_add(errs, ptr,
                         "state must be one of COMPLETED, FAILED, CANCELLED, TIMEOUT, PREEMPTED, "
                         "NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE");
            return false;
        }
        return true;
    }
    return false;
}

int run_from_json(const json_t *obj, const char *prefix, struct run *out, struct problems *errs)
{
    char ptr[256];
    size_t before = errs->total;
    run_clear(out);
    if (!json_is_object(obj)) {
        problems_add(errs, prefix, "a run must be a JSON object");
        return -1;
    }
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)obj, key, value)
    {
        problems_pointer(ptr, sizeof ptr, prefix, key);
        const struct run_json_field *f = NULL;
        for (size_t i = 0; i < RUN_JSON_FIELD_COUNT && !f; i++)
            if (strcmp(run_json_fields[i].name, key) == 0)
                f = &run_json_fields[i];
        if (!f) {
            problems_add(errs, ptr, "unknown field");
            continue;
        }
        (void)run_json_read(f, value, out, ptr, errs);
    }
    for (size_t i = 0; i < RUN_JSON_FIELD_COUNT; i++) {
        if (run_json_fields[i].required && !json_object_get(obj, run_json_fields[i].name))
            problems_add(errs, problems_pointer(ptr, sizeof ptr, prefix, run_json_fields[i].name),
                         "%s is required", run_json_fields[i].name);
    }
    if (errs->total == before)
        run_check(out, prefix, 0, errs);
    return errs->total == before ? 0 : -1;
}

static const char *opt_text(const char *s)
{
    return s[0] ? s : NULL;
}

bool run_copy_binary(const struct run *r, const char *klass, const char *upload_id,
                     struct pgcopy_buf *out)
{
    pgcopy_bin_row(out, RUN_BINARY_FIELDS);
    pgcopy_bin_int8(out, 0);
    pgcopy_bin_text(out, r->cluster);
    pgcopy_bin_text(out, r->external_id);
    pgcopy_bin_text(out, opt_text(r->team));
    pgcopy_bin_text(out, opt_text(r->user));
    pgcopy_bin_text(out, klass);
    pgcopy_bin_text(out, opt_text(r->partition));
    pgcopy_bin_text(out, opt_text(r->gpu_model));
    pgcopy_bin_time_s(out, r->submitted_at_s, r->has_submitted);
    pgcopy_bin_time_s(out, r->started_at_s, r->has_started);
    pgcopy_bin_time_s(out, r->ended_at_s, r->has_ended);
    pgcopy_bin_double(out, r->gpus);
    pgcopy_bin_text(out, run_state_name(r->state));
    pgcopy_bin_text(out, opt_text(r->exit_code));
    pgcopy_bin_double(out, r->gpu_utilization);
    bool ok = pgcopy_bin_uuid(out, upload_id);
    pgcopy_bin_text(out, opt_text(r->wckey));
    pgcopy_bin_text(out, opt_text(r->comment));
    pgcopy_bin_text(out, opt_text(r->job_name));
    pgcopy_bin_text(out, opt_text(r->workload));
    return ok;
}

void run_copy_binary_set_id(char *row, int64_t id)
{
    pgcopy_bin_set_int8(row + 2, id); /* after the field count */
}

json_t *run_upload_warnings(const json_t *classes, const char *cluster)
{
    json_t *list = json_array();
    json_int_t n = json_integer_value(json_object_get(classes, "unclassified"));
    if (list && n > 0) {
        char msg[400];
        snprintf(msg, sizeof msg,
                 "%lld run%s have no workload class and count toward no class's evidence: give "
                 "?class= (--param class= with capledger import), or map the partitions of "
                 "cluster '%s' (PUT /api/v1/clusters/%s) before uploading",
                 (long long)n, n == 1 ? "" : "s", cluster ? cluster : "(per run)",
                 cluster ? cluster : "NAME");
        json_array_append_new(list,
                              json_pack("{s:s, s:s}", "code", "unclassified", "message", msg));
    }
    return list;
}
