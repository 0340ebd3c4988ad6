/* SkyPilot vms.csv → offers. See skypilot.h. */
#include "core/formats/skypilot.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats/textnum.h"

#define SKY_BUCKETS 8192
#define SKY_KEY_MAX 32

/* ---- GpuInfo: a Python literal, read without recursion ---- */

struct gi_frame {
    char type;             /* '{' or '[' */
    int state;             /* 0 key/value or close, 1 ':', 2 value, 3 ',' or close */
    char key[SKY_KEY_MAX]; /* dict: the key of the value being read ("" if too long) */
    size_t index;          /* list: the values started so far */
};

struct gi_reader {
    struct gi_frame f[SKYPILOT_GPUINFO_MAX_DEPTH];
    size_t depth;
    struct skypilot_gpuinfo *out;
};

static bool key_is(const struct gi_frame *f, const char *k)
{
    return f->type == '{' && strcmp(f->key, k) == 0;
}

/* Inside Gpus[0] (frame depth - 1 is its dict)? */
static bool in_first_gpu(const struct gi_reader *g, size_t dict_depth)
{
    return dict_depth == 3 && key_is(&g->f[0], "Gpus") && g->f[1].type == '[' &&
           g->f[1].index == 1 && g->f[2].type == '{';
}

static void gi_number(struct gi_reader *g, double v)
{
    if (g->depth == 1 && key_is(&g->f[0], "TotalGpuMemoryInMiB"))
        g->out->total_mib = v;
    else if (in_first_gpu(g, g->depth) && key_is(&g->f[2], "Count"))
        g->out->count = v;
    else if (g->depth == 4 && in_first_gpu(g, 3) && key_is(&g->f[2], "MemoryInfo") &&
             key_is(&g->f[3], "SizeInMiB"))
        g->out->memory_mib = v;
}

static void gi_string(struct gi_reader *g, const char *s, size_t n)
{
    if (in_first_gpu(g, g->depth) && key_is(&g->f[2], "Name") && n <= SKYPILOT_NAME_MAX) {
        memcpy(g->out->name, s, n);
        g->out->name[n] = '\0';
    }
}

/* A value begins in the innermost frame: checks that one may, and counts list entries. */
static int gi_value_begins(struct gi_reader *g, const char **why)
{
    if (g->depth == 0)
        return 0;
    struct gi_frame *f = &g->f[g->depth - 1];
    if (f->type == '{' ? f->state != 2 : f->state != 0) {
        *why = f->type == '{' && f->state == 0 ? "a key must be a quoted string"
                                               : "a value where ',' or a closing bracket belongs";
        return -1;
    }
    if (f->type == '[') {
        f->index++;
        if (g->depth == 2 && key_is(&g->f[0], "Gpus"))
            g->out->gpu_kinds++;
    }
    f->state = 3;
    return 0;
}

int skypilot_gpuinfo_parse(const char *s, size_t len, struct skypilot_gpuinfo *out,
                           size_t *bad_offset, const char **why)
{
    memset(out, 0, sizeof *out);
    struct gi_reader g = {.depth = 0, .out = out};
    size_t i = 0;
    bool done = false;
    *why = NULL;
    if (len > SKYPILOT_GPUINFO_MAX_BYTES) {
        *bad_offset = SKYPILOT_GPUINFO_MAX_BYTES;
        *why = "longer than 4096 bytes";
        return -1;
    }
    while (i < len) {
        char c = s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            i++;
            continue;
        }
        *bad_offset = i;
        if (done) {
            *why = "text after the closing '}'";
            return -1;
        }
        struct gi_frame *f = g.depth ? &g.f[g.depth - 1] : NULL;
        if (c == '{' || c == '[') {
            if (g.depth == 0 && c != '{') {
                *why = "GpuInfo must be a dict ({...})";
                return -1;
            }
            if (gi_value_begins(&g, why) != 0)
                return -1;
            if (g.depth == SKYPILOT_GPUINFO_MAX_DEPTH) {
                *why = "nested deeper than 8 levels";
                return -1;
            }
            struct gi_frame *n = &g.f[g.depth++];
            n->type = c;
            n->state = 0;
            n->key[0] = '\0';
            n->index = 0;
            i++;
        } else if (c == '}' || c == ']') {
            if (!f || f->type != (c == '}' ? '{' : '[') || (f->state != 0 && f->state != 3)) {
                *why = "a closing bracket that does not match";
                return -1;
            }
            g.depth--;
            i++;
            if (g.depth == 0)
                done = true;
        } else if (c == ':') {
            if (!f || f->type != '{' || f->state != 1) {
                *why = "':' where none belongs";
                return -1;
            }
            f->state = 2;
            i++;
        } else if (c == ',') {
            if (!f || f->state != 3) {
                *why = "',' where none belongs";
                return -1;
            }
            f->state = 0;
            i++;
        } else if (c == '\'' || c == '"') {
            if (!f) {
                *why = "GpuInfo must be a dict ({...})";
                return -1;
            }
            /* The string's text, unescaped into buf (kept up to its size). */
            char buf[SKYPILOT_NAME_MAX + 1];
            size_t n = 0, j = i + 1;
            bool closed = false;
            while (j < len) {
                char d = s[j];
                if (d == c) {
                    closed = true;
                    break;
                }
                if (d == '\\') {
                    if (j + 1 >= len)
                        break;
                    d = s[++j];
                }
                if (n < sizeof buf)
                    buf[n] = d;
                n++;
                j++;
            }
            if (!closed) {
                *why = "a string without its closing quote";
                return -1;
            }
            if (f->type == '{' && f->state == 0) {
                if (n < SKY_KEY_MAX) {
                    memcpy(f->key, buf, n);
                    f->key[n] = '\0';
                } else {
                    f->key[0] = '\0';
                }
                f->state = 1;
            } else {
                if (gi_value_begins(&g, why) != 0)
                    return -1;
                if (n <= SKYPILOT_NAME_MAX)
                    gi_string(&g, buf, n);
            }
            i = j + 1;
        } else if (c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9')) {
            size_t j = i;
            while (j < len && j - i < 40 && strchr("+-.0123456789eE", s[j]) && s[j] != '\0')
                j++;
            double v;
            if (!f || !textnum_parse_double(s + i, j - i, &v)) {
                *why = "not a number";
                return -1;
            }
            if (gi_value_begins(&g, why) != 0)
                return -1;
            gi_number(&g, v);
            i = j;
        } else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) {
            size_t j = i;
            while (j < len && ((s[j] >= 'A' && s[j] <= 'Z') || (s[j] >= 'a' && s[j] <= 'z')))
                j++;
            bool word = (j - i == 4 && memcmp(s + i, "True", 4) == 0) ||
                        (j - i == 5 && memcmp(s + i, "False", 5) == 0) ||
                        (j - i == 4 && memcmp(s + i, "None", 4) == 0);
            if (!f || !word) {
                *why = "a word other than True, False or None";
                return -1;
            }
            if (gi_value_begins(&g, why) != 0)
                return -1;
            i = j;
        } else {
            *why = "a character a Python literal of dicts, lists, strings and numbers has not";
            return -1;
        }
    }
    if (!done) {
        *bad_offset = len;
        *why = g.depth ? "ends before its closing bracket" : "empty";
        return -1;
    }
    return 0;
}

/* ---- GCP machine families and known memory ---- */

/* "<prefix><N>g" → N (1..64), else 0. */
static int family_count(const char *t, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(t, prefix, n) != 0)
        return 0;
    const char *d = t + n;
    size_t digits = strspn(d, "0123456789");
    if (digits == 0 || digits > 2 || d[0] == '0' || strcmp(d + digits, "g") != 0)
        return 0;
    int v = atoi(d);
    return v <= 64 ? v : 0;
}

bool skypilot_implied_gpu(const char *instance_type, const char **model, int *count,
                          double *memory_gb)
{
    static const struct {
        const char *prefix, *model;
        double memory_gb;
    } FAMILIES[] = {
        {"a2-highgpu-", "A100", 40}, {"a2-megagpu-", "A100", 40}, {"a2-ultragpu-", "A100-80GB", 80},
        {"a3-highgpu-", "H100", 80}, {"a3-edgegpu-", "H100", 80},
    };
    for (size_t i = 0; i < sizeof FAMILIES / sizeof FAMILIES[0]; i++) {
        int n = family_count(instance_type, FAMILIES[i].prefix);
        if (n) {
            *model = FAMILIES[i].model;
            *count = n;
            *memory_gb = FAMILIES[i].memory_gb;
            return true;
        }
    }
    return false;
}

/* Memory per GPU (GiB) of models whose rows may come without GpuInfo; 0 when unknown. */
static double known_memory_gb(const char *model)
{
    static const struct {
        const char *model;
        double gb;
    } KNOWN[] = {{"A100", 40}, {"A100-80GB", 80}, {"H100", 80}, {"L4", 24}, {"T4", 16},
                 {"V100", 16}, {"P100", 16},      {"P4", 8},    {"K80", 12}};
    for (size_t i = 0; i < sizeof KNOWN / sizeof KNOWN[0]; i++)
        if (strcmp(KNOWN[i].model, model) == 0)
            return KNOWN[i].gb;
    return 0;
}

/* ---- the reader ---- */

static const char *const COLUMN_NAMES[SKY_COLUMNS] = {
    "InstanceType", "AcceleratorName",  "AcceleratorCount", "Price",
    "Region",       "AvailabilityZone", "GpuInfo",          "SpotPrice"};
static const bool COLUMN_REQUIRED[SKY_COLUMNS] = {true, true,  true,  true,
                                                  true, false, false, false};

void skypilot_reader_init(struct skypilot_reader *r)
{
    memset(r, 0, sizeof *r);
}

void skypilot_reader_free(struct skypilot_reader *r)
{
    free(r->offers);
    free(r->buckets);
    memset(r, 0, sizeof *r);
}

static int read_header(struct skypilot_reader *r, const struct csv_row *row, long line,
                       struct problems *p)
{
    size_t before = p->total;
    for (size_t c = 0; c < row->n; c++) {
        const char *cell = row->cell[c];
        size_t len = row->len[c];
        textnum_trim(&cell, &len);
        for (int k = 0; k < SKY_COLUMNS; k++) {
            if (strlen(COLUMN_NAMES[k]) != len || memcmp(COLUMN_NAMES[k], cell, len) != 0)
                continue;
            if (r->column[k])
                problems_add_line(p, line, (long)c + 1, "", "column %s appears twice",
                                  COLUMN_NAMES[k]);
            else
                r->column[k] = (long)c + 1;
        }
    }
    for (int k = 0; k < SKY_COLUMNS; k++)
        if (COLUMN_REQUIRED[k] && !r->column[k])
            problems_add_line(p, line, 0, "",
                              "the header has no column %s (a SkyPilot vms.csv names "
                              "InstanceType, AcceleratorName, AcceleratorCount, Price, Region "
                              "and optionally AvailabilityZone, GpuInfo, SpotPrice)",
                              COLUMN_NAMES[k]);
    r->cells = row->n;
    r->have_header = true;
    return p->total == before ? 0 : -1;
}

/* The trimmed cell of column k ("" when the header has none). */
static const char *cell_of(const struct skypilot_reader *r, const struct csv_row *row, int k,
                           size_t *len)
{
    if (!r->column[k]) {
        *len = 0;
        return "";
    }
    const char *s = row->cell[r->column[k] - 1];
    *len = row->len[r->column[k] - 1];
    textnum_trim(&s, len);
    return s;
}

/* A name cell into dst; false (with a fault) when too long or not printable. */
static bool copy_name(char dst[SKYPILOT_NAME_MAX + 1], const char *s, size_t n, long line,
                      long column, const char *what, struct problems *p)
{
    if (n > SKYPILOT_NAME_MAX) {
        problems_add_line(p, line, column, "", "%s is longer than %d characters", what,
                          SKYPILOT_NAME_MAX);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
            problems_add_line(p, line, column, "", "%s holds a control character", what);
            return false;
        }
    memcpy(dst, s, n);
    dst[n] = '\0';
    return true;
}

static uint64_t key_hash(const char *type, const char *region, int spot)
{
    uint64_t h = 1469598103934665603u;
    for (const char *s = type; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    h = (h ^ 0xffu) * 1099511628211u;
    for (const char *s = region; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return (h ^ (uint64_t)(spot + 1)) * 1099511628211u;
}

/* Adds the offer or lowers the price of the one with the same key. -1: stop reading. */
static int add_offer(struct skypilot_reader *r, const struct skypilot_offer *o, long column,
                     struct problems *p)
{
    if (!r->buckets) {
        r->buckets = calloc(SKY_BUCKETS, sizeof *r->buckets);
        if (!r->buckets) {
            problems_add_line(p, o->line, 0, "", "out of memory");
            return -1;
        }
        r->nbuckets = SKY_BUCKETS;
    }
    size_t b = (size_t)(key_hash(o->instance_type, o->region, o->spot) % r->nbuckets);
    for (size_t i = r->buckets[b]; i; i = r->offers[i - 1].next) {
        struct skypilot_offer *e = &r->offers[i - 1];
        if (e->spot != o->spot || strcmp(e->instance_type, o->instance_type) != 0 ||
            strcmp(e->region, o->region) != 0)
            continue;
        if (strcmp(e->gpu_model, o->gpu_model) != 0 || e->gpus != o->gpus ||
            e->gpu_memory_gb != o->gpu_memory_gb) {
            problems_add_line(p, o->line, column, "",
                              "%s in %s has %d× %s (%g GiB) here but %d× %s (%g GiB) on line %ld",
                              o->instance_type, o->region, o->gpus, o->gpu_model, o->gpu_memory_gb,
                              e->gpus, e->gpu_model, e->gpu_memory_gb, e->line);
            return 0;
        }
        if (o->price < e->price)
            e->price = o->price;
        e->zones++;
        return 0;
    }
    if (r->n >= SKYPILOT_MAX_OFFERS) {
        problems_add_line(p, o->line, 0, "", "a catalog gives at most %d offers",
                          SKYPILOT_MAX_OFFERS);
        return -1;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        struct skypilot_offer *n = realloc(r->offers, cap * sizeof *n);
        if (!n) {
            problems_add_line(p, o->line, 0, "", "out of memory");
            return -1;
        }
        r->offers = n;
        r->cap = cap;
    }
    r->offers[r->n] = *o;
    r->offers[r->n].zones = 1;
    r->offers[r->n].next = r->buckets[b];
    r->n++;
    r->buckets[b] = r->n;
    return 0;
}

/* A price cell: false (with a fault) when not a number ≥ 0. */
static bool read_price(const char *s, size_t n, long line, long column, const char *what,
                       double *out, struct problems *p)
{
    if (!textnum_parse_double(s, n, out) || *out < 0 || *out > 1e9) {
        problems_add_line(p, line, column, "", "%s '%.*s' is not a price per hour (a number ≥ 0)",
                          what, (int)(n > 40 ? 40 : n), s);
        return false;
    }
    return true;
}

int skypilot_feed(struct skypilot_reader *r, const struct csv_row *row, long line,
                  struct problems *p)
{
    if (!r->have_header)
        return read_header(r, row, line, p);
    if (row->n != r->cells) {
        problems_add_line(p, line, (long)(row->n < r->cells ? row->n + 1 : r->cells + 1), "",
                          "%zu cells where the header has %zu", row->n, r->cells);
        return 0;
    }
    r->rows++;
    size_t before = p->total;
    struct skypilot_offer o;
    memset(&o, 0, sizeof o);
    o.line = line;
    size_t n;
    const char *s;
    const long *col = r->column;

    s = cell_of(r, row, SKY_INSTANCE_TYPE, &n);
    if (n == 0)
        problems_add_line(p, line, col[SKY_INSTANCE_TYPE], "", "InstanceType is empty");
    else
        copy_name(o.instance_type, s, n, line, col[SKY_INSTANCE_TYPE], "InstanceType", p);
    s = cell_of(r, row, SKY_REGION, &n);
    if (n == 0)
        problems_add_line(p, line, col[SKY_REGION], "", "Region is empty");
    else
        copy_name(o.region, s, n, line, col[SKY_REGION], "Region", p);

    struct skypilot_gpuinfo gi;
    memset(&gi, 0, sizeof gi);
    s = cell_of(r, row, SKY_GPUINFO, &n);
    if (n) {
        size_t off = 0;
        const char *why = NULL;
        if (skypilot_gpuinfo_parse(s, n, &gi, &off, &why) != 0)
            problems_add_line(p, line, col[SKY_GPUINFO], "",
                              "GpuInfo is not a Python literal dict of GPUs: %s (at byte %zu)", why,
                              off + 1);
        else if (gi.gpu_kinds > 1)
            problems_add_line(p, line, col[SKY_GPUINFO], "",
                              "GpuInfo names %zu kinds of GPU: an offer has one", gi.gpu_kinds);
    }

    const char *implied_model = NULL;
    int implied_count = 0;
    double implied_gb = 0;
    bool implied = o.instance_type[0] && skypilot_implied_gpu(o.instance_type, &implied_model,
                                                              &implied_count, &implied_gb);
    const char *name = cell_of(r, row, SKY_ACCELERATOR_NAME, &n);
    size_t name_len = n;
    if (name_len)
        copy_name(o.gpu_model, name, name_len, line, col[SKY_ACCELERATOR_NAME], "AcceleratorName",
                  p);
    else if (gi.name[0])
        strcpy(o.gpu_model, gi.name);
    else if (implied)
        strcpy(o.gpu_model, implied_model);

    double count = 0;
    s = cell_of(r, row, SKY_ACCELERATOR_COUNT, &n);
    if (n) {
        if (!textnum_parse_double(s, n, &count) || !(count > 0) || count > 1024) {
            problems_add_line(p, line, col[SKY_ACCELERATOR_COUNT], "",
                              "AcceleratorCount '%.*s' is not a GPU count in (0, 1024]",
                              (int)(n > 40 ? 40 : n), s);
            count = 0;
        }
    } else if (gi.count > 0) {
        count = gi.count;
    } else if (implied && !name_len) {
        count = implied_count;
    }
    if (p->total != before)
        return 0;
    if (!o.gpu_model[0] && count == 0) {
        r->skipped_cpu_only++;
        return 0;
    }
    if (!o.gpu_model[0]) {
        problems_add_line(p, line, col[SKY_ACCELERATOR_NAME], "",
                          "AcceleratorCount is given but no GPU model (AcceleratorName, GpuInfo)");
        return 0;
    }
    if (count == 0) {
        problems_add_line(p, line, col[SKY_ACCELERATOR_COUNT], "",
                          "AcceleratorName is %s but AcceleratorCount is empty", o.gpu_model);
        return 0;
    }
    if (count < 1 || floor(count) != count) {
        r->skipped_fractional++;
        return 0;
    }
    o.gpus = (int)count;
    if (gi.memory_mib > 0)
        o.gpu_memory_gb = gi.memory_mib / 1024;
    else if (implied && strcmp(o.gpu_model, implied_model) == 0)
        o.gpu_memory_gb = implied_gb;
    else
        o.gpu_memory_gb = known_memory_gb(o.gpu_model);
    if (o.gpu_memory_gb > 100000) {
        problems_add_line(p, line, col[SKY_GPUINFO], "",
                          "GpuInfo gives %g GiB per GPU: more than 100000", o.gpu_memory_gb);
        return 0;
    }
    if (!(o.gpu_memory_gb > 0)) {
        /* Not a fault of the file (TPUs, Inferentia, models without GpuInfo): skipped, and the
         * model named so the reply says what was left out. */
        r->skipped_unknown_memory++;
        bool seen = false;
        for (size_t i = 0; i < r->n_unknown_models && !seen; i++)
            seen = strcmp(r->unknown_models[i], o.gpu_model) == 0;
        if (!seen && r->n_unknown_models < SKYPILOT_UNKNOWN_MODELS_KEPT)
            strcpy(r->unknown_models[r->n_unknown_models++], o.gpu_model);
        return 0;
    }

    double price = 0, spot = 0;
    const char *ps = cell_of(r, row, SKY_PRICE, &n);
    size_t pn = n;
    bool has_price = pn && read_price(ps, pn, line, col[SKY_PRICE], "Price", &price, p);
    const char *ss = cell_of(r, row, SKY_SPOT_PRICE, &n);
    size_t sn = n;
    bool has_spot = sn && read_price(ss, sn, line, col[SKY_SPOT_PRICE], "SpotPrice", &spot, p);
    if (p->total != before)
        return 0;
    r->gpu_rows++;
    if (!has_price && !has_spot) {
        r->skipped_unpriced++;
        return 0;
    }
    if (has_price) {
        o.spot = 0;
        o.price = price;
        if (add_offer(r, &o, col[SKY_PRICE], p) != 0)
            return -1;
    }
    if (has_spot) {
        o.spot = 1;
        o.price = spot;
        if (add_offer(r, &o, col[SKY_SPOT_PRICE], p) != 0)
            return -1;
    }
    return 0;
}

json_t *skypilot_offers_json(const struct skypilot_reader *r, const char *provider,
                             const char *currency)
{
    json_t *a = json_array();
    if (!a)
        return NULL;
    for (size_t i = 0; i < r->n; i++) {
        const struct skypilot_offer *o = &r->offers[i];
        json_t *d =
            json_pack("{s:s, s:s, s:s, s:s, s:i, s:f, s:s, s:f, s:s, s:s}", "provider", provider,
                      "region", o->region, "instance_type", o->instance_type, "gpu_model",
                      o->gpu_model, "gpus_per_instance", o->gpus, "gpu_memory_gb", o->gpu_memory_gb,
                      "purchase_option", o->spot ? "spot" : "on_demand", "price_per_hour", o->price,
                      "currency", currency, "catalog", "skypilot");
        if (!d || json_array_append_new(a, d) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}
