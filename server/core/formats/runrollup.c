#include "core/formats/runrollup.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats/timefmt.h"
#include "core/qwhist.h"

/* A copy of the label, or NULL for none; *bad set when memory ran out. */
static char *label_dup(const json_t *v, int *bad)
{
    const char *s = json_string_value(v);
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        *bad = 1;
    return d;
}

void run_classmap_free(struct run_classmap *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->e[i].partition);
        free(m->e[i].gpu_model);
        free(m->e[i].klass);
    }
    free(m->default_class);
    free(m->e);
    memset(m, 0, sizeof *m);
}

int run_classmap_from_json(const json_t *v, struct run_classmap *m)
{
    memset(m, 0, sizeof *m);
    const json_t *parts = json_object_get(v, "parts");
    if (!json_is_object(v) || (parts && !json_is_null(parts) && !json_is_array(parts)))
        return -1;
    int bad = 0;
    m->default_class = label_dup(json_object_get(v, "default"), &bad);
    if (bad)
        return -1;
    size_t n = json_is_array(parts) ? json_array_size(parts) : 0;
    if (n == 0)
        return 0;
    m->e = calloc(n, sizeof *m->e);
    if (!m->e) {
        run_classmap_free(m);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *p = json_array_get(parts, i);
        const char *part = json_string_value(json_object_get(p, "partition"));
        const char *model = json_string_value(json_object_get(p, "gpu_model"));
        if (!part || !model) {
            run_classmap_free(m);
            return -1;
        }
        struct run_classmap_entry *e = &m->e[m->n++];
        e->partition = strdup(part);
        e->gpu_model = strdup(model);
        e->klass = label_dup(json_object_get(p, "class"), &bad);
        if (!e->partition || !e->gpu_model || bad) {
            run_classmap_free(m);
            return -1;
        }
    }
    return 0;
}

static const char *map_class(const struct run_classmap *m, const char *partition, const char *model)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->e[i].partition, partition) == 0 && strcmp(m->e[i].gpu_model, model) == 0)
            return m->e[i].klass;
    return NULL;
}

const char *run_class_resolve(const char *upload_class, const struct run *r,
                              const struct run_classmap *m)
{
    if (upload_class)
        return upload_class;
    if (r->workload_class[0])
        return r->workload_class;
    if (!m)
        return NULL;
    const char *k = NULL;
    /* a run without a partition (NULL) matches no entry; one without a model (NULL) matches
     * only the entries for any model */
    if (r->partition[0] && r->gpu_model[0])
        k = map_class(m, r->partition, r->gpu_model);
    if (!k && r->partition[0])
        k = map_class(m, r->partition, "");
    return k ? k : m->default_class;
}

/* ---- days and months ---- */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t rollup_day_start(int64_t s)
{
    return floor_div(s, 86400) * 86400;
}

int64_t rollup_month_start(int64_t s)
{
    /* civil_from_days (H. Hinnant) */
    int64_t z = floor_div(s, 86400) + 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    if (m <= 2)
        y++;
    return timefmt_days_from_civil((int)y, (int)m, 1) * 86400;
}

/* ---- groups ---- */

enum { F_TEAM, F_CLASS, F_CLUSTER, F_PARTITION, F_MODEL, F_STATE, F_COUNT };

struct group {
    bool hist;
    int64_t t; /* day (usage) or month (histogram) */
    int bucket;
    char *f[F_COUNT]; /* NULL = SQL NULL; histograms have no partition or model */
    int64_t runs, gpu_runs, gh_runs, never_started, qw_n, util_n, qw_sum;
    double gh, util_sum;
    uint64_t hash;
};

struct rollup {
    struct group *g;
    size_t n, cap;
    uint32_t *slot; /* index + 1; 0 = empty */
    size_t nslots;
};

struct rollup *rollup_new(void)
{
    return calloc(1, sizeof(struct rollup));
}

void rollup_clear(struct rollup *t)
{
    for (size_t i = 0; i < t->n; i++)
        for (int k = 0; k < F_COUNT; k++)
            free(t->g[i].f[k]);
    t->n = 0;
    if (t->slot)
        memset(t->slot, 0, t->nslots * sizeof *t->slot);
}

void rollup_free(struct rollup *t)
{
    if (!t)
        return;
    rollup_clear(t);
    free(t->g);
    free(t->slot);
    free(t);
}

size_t rollup_groups(const struct rollup *t)
{
    return t->n;
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= UINT64_C(1099511628211);
    }
    return h;
}

static uint64_t key_hash(bool hist, int64_t t, int bucket, const char *const f[F_COUNT])
{
    uint64_t h = UINT64_C(14695981039346656037);
    unsigned char kind = hist ? 1 : 0;
    h = mix(h, &kind, 1);
    h = mix(h, &t, sizeof t);
    h = mix(h, &bucket, sizeof bucket);
    for (int k = 0; k < F_COUNT; k++) {
        unsigned char null = f[k] ? 0 : 1;
        h = mix(h, &null, 1);
        if (f[k])
            h = mix(h, f[k], strlen(f[k]) + 1);
    }
    return h;
}

static bool same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool key_equal(const struct group *g, bool hist, int64_t t, int bucket,
                      const char *const f[F_COUNT])
{
    if (g->hist != hist || g->t != t || g->bucket != bucket)
        return false;
    for (int k = 0; k < F_COUNT; k++)
        if (!same_text(g->f[k], f[k]))
            return false;
    return true;
}

static int grow_slots(struct rollup *t)
{
    size_t n = t->nslots ? t->nslots * 2 : 1024;
    uint32_t *s = calloc(n, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = (size_t)t->g[i].hash & (n - 1);
        while (s[j])
            j = (j + 1) & (n - 1);
        s[j] = (uint32_t)(i + 1);
    }
    free(t->slot);
    t->slot = s;
    t->nslots = n;
    return 0;
}

/* The index of the group with this key, made when missing; -1 out of memory. */
static long intern(struct rollup *t, bool hist, int64_t tm, int bucket,
                   const char *const f[F_COUNT])
{
    if ((t->n + 1) * 2 > t->nslots && grow_slots(t) != 0)
        return -1;
    uint64_t h = key_hash(hist, tm, bucket, f);
    size_t j = (size_t)h & (t->nslots - 1);
    while (t->slot[j]) {
        struct group *g = &t->g[t->slot[j] - 1];
        if (g->hash == h && key_equal(g, hist, tm, bucket, f))
            return (long)(t->slot[j] - 1);
        j = (j + 1) & (t->nslots - 1);
    }
    if (t->n >= UINT32_MAX - 1)
        return -1;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        struct group *g = realloc(t->g, cap * sizeof *g);
        if (!g)
            return -1;
        t->g = g;
        t->cap = cap;
    }
    struct group *g = &t->g[t->n];
    memset(g, 0, sizeof *g);
    g->hist = hist;
    g->t = tm;
    g->bucket = bucket;
    g->hash = h;
    for (int k = 0; k < F_COUNT; k++) {
        if (f[k] && !(g->f[k] = strdup(f[k]))) {
            for (int i = 0; i < k; i++)
                free(g->f[i]);
            return -1;
        }
    }
    t->slot[j] = (uint32_t)(t->n + 1);
    return (long)t->n++;
}

static const char *opt(const char *s)
{
    return s[0] ? s : NULL;
}

int rollup_prepare(struct rollup *t, const struct run *r, const char *klass, struct rollup_ref *ref)
{
    const char *f[F_COUNT] = {opt(r->team),      klass,
                              r->cluster,        opt(r->partition),
                              opt(r->gpu_model), run_state_name(r->state)};
    long d = intern(t, false, rollup_day_start(r->submitted_at_s), 0, f);
    if (d < 0)
        return -1;
    ref->day_group = (uint32_t)d;
    ref->hist_group = -1;
    ref->util = r->gpu_utilization;
    /* gpus * extract(epoch FROM ended_at - started_at) / 3600, in float8 */
    ref->gh = r->has_started ? r->gpus * (double)(r->ended_at_s - r->started_at_s) / 3600 : 0;
    ref->qw_s = 0;
    ref->gpu_run = r->gpus > 0;
    ref->started = r->has_started;
    if (r->has_started && r->gpus > 0) {
        ref->qw_s = r->started_at_s - r->submitted_at_s;
        const char *hf[F_COUNT] = {opt(r->team), klass, r->cluster,
                                   NULL,         NULL,  run_state_name(r->state)};
        long h = intern(t, true, rollup_month_start(r->submitted_at_s),
                        qwhist_bucket((double)ref->qw_s), hf);
        if (h < 0)
            return -1;
        ref->hist_group = (int32_t)h;
    }
    return 0;
}

void rollup_add(struct rollup *t, const struct rollup_ref *ref)
{
    struct group *g = &t->g[ref->day_group];
    g->runs++;
    if (ref->gpu_run)
        g->gpu_runs++;
    if (!ref->started)
        g->never_started++;
    g->gh += ref->gh;
    if (ref->gh > 0)
        g->gh_runs++;
    if (!isnan(ref->util)) {
        g->util_sum += ref->util;
        g->util_n++;
    }
    if (ref->hist_group >= 0) {
        g->qw_sum += ref->qw_s;
        g->qw_n++;
        t->g[ref->hist_group].runs++;
    }
}

static json_t *text_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *emit(const struct rollup *t, bool hist)
{
    json_t *list = json_array();
    if (!list)
        return NULL;
    for (size_t i = 0; i < t->n; i++) {
        const struct group *g = &t->g[i];
        if (g->hist != hist || g->runs == 0)
            continue;
        char when[TIMEFMT_UTC_LEN];
        timefmt_format_utc_ms(g->t * 1000, when);
        json_t *o;
        if (hist)
            o = json_pack("{s:s, s:o, s:o, s:o, s:o, s:i, s:I}", "month", when, "team",
                          text_or_null(g->f[F_TEAM]), "workload_class", text_or_null(g->f[F_CLASS]),
                          "cluster", text_or_null(g->f[F_CLUSTER]), "state",
                          text_or_null(g->f[F_STATE]), "bucket", g->bucket, "n",
                          (json_int_t)g->runs);
        else
            o = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:f, s:I, s:I, "
                          "s:f, s:I}",
                          "day", when, "team", text_or_null(g->f[F_TEAM]), "workload_class",
                          text_or_null(g->f[F_CLASS]), "cluster", text_or_null(g->f[F_CLUSTER]),
                          "partition", text_or_null(g->f[F_PARTITION]), "gpu_model",
                          text_or_null(g->f[F_MODEL]), "state", text_or_null(g->f[F_STATE]), "runs",
                          (json_int_t)g->runs, "gpu_runs", (json_int_t)g->gpu_runs, "gh_runs",
                          (json_int_t)g->gh_runs, "never_started", (json_int_t)g->never_started,
                          "gh", g->gh, "qw_sum", (json_int_t)g->qw_sum, "qw_n", (json_int_t)g->qw_n,
                          "util_sum", g->util_sum, "util_n", (json_int_t)g->util_n);
        if (!o || json_array_append_new(list, o) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

json_t *rollup_day_json(const struct rollup *t)
{
    return emit(t, false);
}

json_t *rollup_hist_json(const struct rollup *t)
{
    return emit(t, true);
}
