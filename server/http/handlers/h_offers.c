/* Offers: the capacity one can buy. A shared catalogue rather than team data: everyone signed
 * in reads it; owners (who run the capacity reviews) and admins (who run the platform) write
 * it. POST takes one JSON offer, a JSON array of offers, or a text/csv price sheet whose header
 * names offer fields; a sheet or array is stored whole or not at all (a price sheet is one
 * document: half of it would mislead), with every fault named by line and column (CSV) or
 * JSON Pointer (JSON). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/validate.h"
#include "core/formats/evfield.h"
#include "core/formats/formats.h"
#include "core/formats/skypilot.h"
#include "http/resource.h"
#include "http/idempotency.h"
#include "http/upload.h"
#include "store/offers.h"
#include "store/uploads.h"

#define OFFER_SHEET_MAX_ROWS 10000
#define OFFER_JSON_MAX_BYTES ((size_t)8 << 20)

static const char *const PURCHASE_OPTIONS[] = {"on_demand", "spot", "reserved", "committed", NULL};

static const struct evfield OFFER_FIELDS[] = {
    {"name", EVF_STRING, 0, 0, 0, 200, NULL, NULL},
    {"provider", EVF_STRING, EVF_REQUIRED, 0, 0, 100, NULL, NULL},
    {"region", EVF_STRING, EVF_REQUIRED, 0, 0, 100, NULL, NULL},
    {"instance_type", EVF_STRING, EVF_REQUIRED, 0, 0, 100, NULL, NULL},
    {"gpu_model", EVF_STRING, EVF_REQUIRED, 0, 0, 100, NULL, NULL},
    {"gpus_per_instance", EVF_INTEGER, EVF_REQUIRED, 1, 1024, 0, NULL, NULL},
    {"gpu_memory_gb", EVF_NUMBER, EVF_REQUIRED | EVF_MIN_EXCLUSIVE, 0, 100000, 0, NULL, NULL},
    {"purchase_option", EVF_ENUM, EVF_REQUIRED, 0, 0, 0, PURCHASE_OPTIONS, NULL},
    {"price_per_hour", EVF_NUMBER, EVF_REQUIRED, 0, EVF_NO_MAX, 0, NULL, NULL},
    {"currency", EVF_CURRENCY, EVF_REQUIRED, 0, 0, 0, NULL, NULL},
    {"term", EVF_STRING, 0, 0, 0, 16, NULL, NULL},
    {"reserved_utilization", EVF_NUMBER, EVF_MIN_EXCLUSIVE, 0, 1, 0, NULL, NULL},
    {"interruption_rate_per_hour", EVF_NUMBER, 0, 0, EVF_NO_MAX, 0, NULL, NULL},
    {"provisioning_delay_s", EVF_NUMBER, 0, 0, EVF_NO_MAX, 0, NULL, NULL},
    {"quota_gpus", EVF_INTEGER, 0, 0, 2147483647, 0, NULL, NULL},
    {"available", EVF_BOOL, 0, 0, 0, 0, NULL, NULL},
    {"storage_price_gb_month", EVF_NUMBER, 0, 0, EVF_NO_MAX, 0, NULL, NULL},
    {"egress_price_gb", EVF_NUMBER, 0, 0, EVF_NO_MAX, 0, NULL, NULL},
    {"orchestration_overhead", EVF_NUMBER, 0, 0, 100, 0, NULL, NULL},
    EVF_SERVER_FIELD("id"),
    EVF_SERVER_FIELD("catalog"),
    EVF_SERVER_FIELD("version"),
    EVF_SERVER_FIELD("supersedes"),
    EVF_SERVER_FIELD("superseded_by"),
    EVF_SERVER_FIELD("upload_id"),
    EVF_SERVER_FIELD("created_by"),
    EVF_SERVER_FIELD("created_at"),
    EVF_END,
};

/* "none", or a whole number of months or years: "1mo", "12mo", "1y", "3y". */
static int term_valid(const char *s)
{
    if (strcmp(s, "none") == 0)
        return 1;
    size_t digits = strspn(s, "0123456789");
    if (digits == 0 || digits > 3 || s[0] == '0')
        return 0;
    return strcmp(s + digits, "mo") == 0 || strcmp(s + digits, "y") == 0;
}

/* One offer: the field table plus the rules between fields. columns: CSV columns or NULL. */
static void offer_check(const json_t *doc, const char *prefix, long line, const long *columns,
                        struct problems *p)
{
    char ptr[300];
    evfield_check(doc, OFFER_FIELDS, prefix, line, columns, p);
    if (!json_is_object(doc))
        return;
    const char *term = json_string_value(json_object_get(doc, "term"));
    if (term && !term_valid(term))
        problems_add_line(p, line, columns ? columns[evfield_index(OFFER_FIELDS, "term")] : 0,
                          problems_pointer(ptr, sizeof ptr, prefix, "term"),
                          "must be none, or a number of months or years (1mo, 1y, 3y)");
    const char *option = json_string_value(json_object_get(doc, "purchase_option"));
    json_t *u = json_object_get(doc, "reserved_utilization");
    if (u && !json_is_null(u) && option &&
        (strcmp(option, "on_demand") == 0 || strcmp(option, "spot") == 0))
        problems_add_line(
            p, line, columns ? columns[evfield_index(OFFER_FIELDS, "reserved_utilization")] : 0,
            problems_pointer(ptr, sizeof ptr, prefix, "reserved_utilization"),
            "applies to reserved or committed offers only");
}

/* POST /offers: one offer, or a JSON array of offers or a price sheet stored whole. */
struct offers_state {
    json_t *doc;  /* a JSON body: one offer or an array */
    json_t *docs; /* the offers of an array or a sheet */
    struct csv_row row;
};

static int offers_read_json(struct upload *u)
{
    struct offers_state *o = u->state;
    struct req *r = u->r;
    struct problems *p = &u->errs;
    o->doc = req_parse_json(r, u->body, u->bytes);
    if (!o->doc)
        return -1;
    if (json_is_array(o->doc)) {
        size_t i;
        json_t *item;
        char prefix[32];
        if (json_array_size(o->doc) == 0 || json_array_size(o->doc) > OFFER_SHEET_MAX_ROWS)
            problems_add(p, "", "an array of offers holds 1 to %d offers", OFFER_SHEET_MAX_ROWS);
        json_array_foreach(o->doc, i, item)
        {
            snprintf(prefix, sizeof prefix, "/%zu", i);
            offer_check(item, prefix, 0, NULL, p);
        }
        o->docs = json_incref(o->doc);
    } else {
        offer_check(o->doc, "", 0, NULL, p);
    }
    if (p->total) {
        resp_invalid(r, p, NULL);
        return -1;
    }
    u->accepted = 1;
    return 0;
}

static json_t *offers_finish(struct upload *u, json_t *rec, int *status)
{
    struct offers_state *o = u->state;
    struct req *r = u->r;
    struct audit_actor who;
    json_t *out = NULL;
    *status = 201;
    if (!o->docs) { /* one offer: no upload record */
        enum store_status st = store_offer_create(r->app->store, req_actor(r, &who), o->doc, &out);
        return req_stored(r, st, out, "offer");
    }
    json_object_set_new(rec, "lines", json_integer(u->stream ? u->stream->lb.lineno : 0));
    json_object_set_new(rec, "inserted", json_integer((json_int_t)json_array_size(o->docs)));
    enum store_status st =
        store_offer_create_many(r->app->store, req_actor(r, &who), o->docs, rec, &out);
    if (!req_stored(r, st, out, "offer"))
        return NULL;
    return json_pack("{s:s, s:I, s:o}", "id", u->id, "inserted", (json_int_t)json_array_size(out),
                     "items", out);
}

/* Maps the header cells to fields: columns[field index] = 1-based column. Returns the map of
 * each CSV column to its field index in col_field (-1: none). */
static void sheet_header(const struct csv_row *row, long line, long *columns, int *col_field,
                         struct problems *p)
{
    for (size_t c = 0; c < row->n; c++) {
        int f = evfield_index(OFFER_FIELDS, row->cell[c]);
        col_field[c] = -1;
        if (f < 0 || (OFFER_FIELDS[f].flags & EVF_SERVER)) {
            problems_add_line(p, line, (long)c + 1, "",
                              "'%.60s' is not an offer field (the header names offer fields, "
                              "comma-separated)",
                              row->cell[c]);
        } else if (columns[f]) {
            problems_add_line(p, line, (long)c + 1, "", "column '%s' appears twice", row->cell[c]);
        } else {
            columns[f] = (long)c + 1;
            col_field[c] = f;
        }
    }
    for (int f = 0; OFFER_FIELDS[f].name; f++) {
        char ptr[64];
        if ((OFFER_FIELDS[f].flags & EVF_REQUIRED) && !columns[f])
            problems_add_line(p, line, 0,
                              problems_pointer(ptr, sizeof ptr, "", OFFER_FIELDS[f].name),
                              "the header has no column %s", OFFER_FIELDS[f].name);
    }
}

/* The next non-empty line of a CSV body (line faults reported to p and passed over), split
 * into row: 1; -1 when the line does not split (the problem added to p); 0 when the body is
 * over. */
static int next_csv_row(struct upload_stream *u, struct linebuf_line *line, struct csv_row *row,
                        struct problems *p)
{
    while (upload_next_text_line(u, line, p, NULL)) {
        if (line->len == 0)
            continue;
        long bad = 0;
        if (csv_split(row, line->text, line->len, ',', &bad) == 0)
            return 1;
        problems_add_line(p, line->lineno, bad, "",
                          "unterminated quote, text after a closing quote, or more than %d cells",
                          CSV_MAX_CELLS);
        return -1;
    }
    return 0;
}

static int offers_read_csv(struct upload *u)
{
    struct offers_state *o = u->state;
    struct problems *p = &u->errs;
    long columns[sizeof OFFER_FIELDS / sizeof OFFER_FIELDS[0]] = {0};
    int col_field[CSV_MAX_CELLS];
    size_t ncols = 0;
    int have_header = 0;
    if (!(o->docs = json_array())) {
        resp_problem(u->r, 503, "unavailable", "Service unavailable", "out of memory");
        return -1;
    }
    struct linebuf_line line;
    int got;
    while ((got = next_csv_row(u->stream, &line, &o->row, p)) != 0) {
        if (got < 0) {
            if (!have_header)
                break;
            continue;
        }
        if (!have_header) {
            have_header = 1;
            ncols = o->row.n;
            sheet_header(&o->row, line.lineno, columns, col_field, p);
            if (p->total)
                break;
            continue;
        }
        if (o->row.n != ncols) {
            problems_add_line(p, line.lineno, (long)(o->row.n < ncols ? o->row.n + 1 : ncols + 1),
                              "", "%zu cells where the header has %zu", o->row.n, ncols);
            continue;
        }
        if (json_array_size(o->docs) >= OFFER_SHEET_MAX_ROWS) {
            problems_add_line(p, line.lineno, 0, "", "a price sheet holds at most %d offers",
                              OFFER_SHEET_MAX_ROWS);
            break;
        }
        json_t *doc = json_object();
        for (size_t c = 0; c < o->row.n; c++) {
            json_t *v =
                evfield_from_cell(&OFFER_FIELDS[col_field[c]], o->row.cell[c], o->row.len[c]);
            if (v)
                json_object_set_new(doc, OFFER_FIELDS[col_field[c]].name, v);
        }
        offer_check(doc, "", line.lineno, columns, p);
        json_array_append_new(o->docs, doc);
    }
    if (!have_header && !p->total)
        problems_add_line(p, 1, 0, "", "the price sheet is empty: it needs a header line");
    else if (!p->total && json_array_size(o->docs) == 0)
        problems_add_line(p, 2, 0, "", "the price sheet has a header but no offers");
    u->accepted = (long)json_array_size(o->docs);
    return 0;
}

static int offers_read(struct upload *u)
{
    return u->stream ? offers_read_csv(u) : offers_read_json(u);
}

static void offers_abort(struct upload *u)
{
    struct offers_state *o = u->state;
    json_decref(o->doc);
    json_decref(o->docs);
    csv_row_free(&o->row);
}

/* Mostly small bodies: a slot only for a large or chunked one. */
static const struct upload_kind OFFERS_UPLOAD = {
    .kind = "offers",
    .types = {{"application/json", UPLOAD_WHOLE, "json"}, {"text/csv", UPLOAD_LINES, "csv"}},
    .types_hint = "send an offer as application/json or a price sheet as text/csv",
    .slot = UPLOAD_SLOT_IF_LARGE,
    .whole_max = OFFER_JSON_MAX_BYTES,
    .state_size = sizeof(struct offers_state),
    .all_or_nothing = 1,
    .body = {.read = offers_read},
    .store = {.finish = offers_finish, .abort = offers_abort},
    .says = {.faulty = "The price sheet has faults (nothing was stored): see errors."},
};

static void offer_create(struct req *r)
{
    upload_run(r, &OFFERS_UPLOAD);
}

/* What a catalog read gave, for the reply and the upload record's summary. */
static json_t *catalog_counts(const struct skypilot_reader *sky, const char *provider)
{
    json_t *models = json_array();
    for (size_t i = 0; models && i < sky->n_unknown_models; i++)
        json_array_append_new(models, json_string(sky->unknown_models[i]));
    return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o*}", "format", "skypilot",
                     "provider", provider, "rows", (json_int_t)sky->rows, "gpu_rows",
                     (json_int_t)sky->gpu_rows, "offers", (json_int_t)sky->n, "skipped_cpu_only",
                     (json_int_t)sky->skipped_cpu_only, "skipped_fractional_gpus",
                     (json_int_t)sky->skipped_fractional, "skipped_unpriced",
                     (json_int_t)sky->skipped_unpriced, "skipped_unknown_memory",
                     (json_int_t)sky->skipped_unknown_memory, "unknown_memory_models", models);
}

/* ?provider=: the cloud the catalog prices (SkyPilot's file does not say): 1-100 of a-z 0-9 -
 * _ (aws, gcp, lambda, …). */
static int provider_valid(const char *s)
{
    size_t n = strlen(s);
    return n >= 1 && n <= 100 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-_") == n;
}

/* POST /offers/import?format=skypilot&provider=P[&currency=USD]: a SkyPilot vms.csv, streamed.
 * Nothing is stored unless every line reads; then each offer is created, kept (same figures)
 * or superseded by a new version (see store_offer_import). */
struct catalog_import {
    struct skypilot_reader sky;
    struct csv_row row;
    char fbuf[40], pbuf[128], cbuf[40];
    const char *provider, *currency;
    json_t *docs;
};

static int catalog_params(struct upload *u)
{
    struct catalog_import *c = u->state;
    struct problems *p = &u->errs;
    struct req *r = u->r;
    skypilot_reader_init(&c->sky);
    csv_row_init(&c->row);
    const char *format =
        res_query(r, "format", RQ_ENUM, OFFERS_FORMAT_NAMES, c->fbuf, sizeof c->fbuf, p);
    c->provider = res_query(r, "provider", RQ_TEXT, NULL, c->pbuf, sizeof c->pbuf, p);
    c->currency = res_query(r, "currency", RQ_TEXT, NULL, c->cbuf, sizeof c->cbuf, p);
    if (!format && !p->total)
        problems_add(p, "?format", "is required: format=skypilot (a SkyPilot catalog vms.csv)");
    if (!c->provider && !p->total)
        problems_add(p, "?provider",
                     "is required: the cloud the catalog prices (aws, gcp, lambda, …), which a "
                     "vms.csv does not name; --param provider=… of capledger import");
    else if (c->provider && !provider_valid(c->provider))
        problems_add(p, "?provider", "must be 1-100 of a-z, 0-9, '-' and '_'");
    if (!c->currency)
        c->currency = p->total ? NULL : "USD";
    if (c->currency &&
        (strlen(c->currency) != 3 || strspn(c->currency, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != 3))
        problems_add(p, "?currency", "must be an ISO 4217 code (three capital letters)");
    return 0;
}

static int catalog_read(struct upload *u)
{
    struct catalog_import *c = u->state;
    struct linebuf_line line;
    int stop = 0, got;
    while (!stop && (got = next_csv_row(u->stream, &line, &c->row, &u->errs)) != 0) {
        if (got < 0)
            stop = !c->sky.have_header;
        else if (skypilot_feed(&c->sky, &c->row, line.lineno, &u->errs) != 0)
            stop = 1;
    }
    /* Once the catalog is refused, the rest of its lines are read (counted) unexamined. */
    while (upload_next_line(u->stream, &line) != LINEBUF_NEED_MORE)
        continue;
    u->accepted = (long)c->sky.n;
    return 0;
}

static int catalog_settle(struct upload *u)
{
    struct catalog_import *c = u->state;
    if (!c->sky.have_header && !u->errs.total)
        problems_add_line(&u->errs, 1, 0, "", "the catalog is empty: it needs a header line");
    else if (!u->errs.total && c->sky.n == 0)
        problems_add_line(&u->errs, 2, 0, "", "the catalog has no GPU offers (%ld CPU-only rows)",
                          c->sky.skipped_cpu_only);
    return 0;
}

static json_t *catalog_finish(struct upload *u, json_t *rec, int *status)
{
    struct catalog_import *c = u->state;
    struct req *r = u->r;
    json_t *out = NULL;
    c->docs = skypilot_offers_json(&c->sky, c->provider, c->currency);
    if (!c->docs) {
        resp_problem(r, 503, "unavailable", "Service unavailable", "out of memory");
        return NULL;
    }
    json_object_set_new(rec, "lines", json_integer(u->stream->lb.lineno));
    json_object_set_new(rec, "skipped",
                        json_integer(c->sky.skipped_cpu_only + c->sky.skipped_fractional +
                                     c->sky.skipped_unpriced + c->sky.skipped_unknown_memory));
    json_object_set_new(rec, "summary", catalog_counts(&c->sky, c->provider));
    struct audit_actor who;
    enum store_status st =
        store_offer_import(r->app->store, req_actor(r, &who), c->docs, rec, &out);
    if (st != STORE_OK) {
        resp_store_error(r, st, "offer");
        return NULL;
    }
    json_object_set_new(out, "id", json_string(u->id));
    json_object_update(out, json_object_get(rec, "summary"));
    *status = json_integer_value(json_object_get(out, "stored")) > 0 ? 201 : 200;
    return out;
}

static void catalog_abort(struct upload *u)
{
    struct catalog_import *c = u->state;
    json_decref(c->docs);
    csv_row_free(&c->row);
    skypilot_reader_free(&c->sky);
}

static const struct upload_kind CATALOG_UPLOAD = {
    .kind = "offers",
    .types = {{"text/csv", UPLOAD_LINES, "skypilot"}},
    .types_hint = "send the catalog as text/csv",
    .state_size = sizeof(struct catalog_import),
    .all_or_nothing = 1,
    .params = catalog_params,
    .body = {.read = catalog_read, .settle = catalog_settle},
    .store = {.finish = catalog_finish, .abort = catalog_abort},
    .says = {.faulty = "The catalog has faults (nothing was stored): see errors."},
};

static void offer_import(struct req *r)
{
    upload_run(r, &CATALOG_UPLOAD);
}

static void offer_get(struct req *r)
{
    json_t *o = NULL;
    if (!uuid_valid(r->params[0])) {
        res_not_found(r, "offer");
        return;
    }
    enum store_status st = store_offer_get(r->app->store, r->params[0], &o);
    resp_stored(r, st, o, "offer");
}

static const struct res_list_kind OFFERS = {
    "offers",
    store_offer_list,
    {{"provider", RQ_TEXT, NULL, RES_FIELD(provider)},
     {"gpu_model", RQ_TEXT, NULL, RES_FIELD(gpu_model)},
     {"purchase_option", RQ_ENUM, PURCHASE_OPTIONS, RES_FIELD(purchase_option)},
     RES_FILTER_Q},
};

const struct route offer_routes[] = {
    {"GET", "/api/v1/offers", res_list_route, ROLES_USERS, ROUTE_STANDBY,
     "limit cursor from to provider gpu_model purchase_option q", &OFFERS},
    {"POST", "/api/v1/offers", offer_create, ROLE_OWNER | ROLE_ADMIN, ROUTE_STREAM_BODY, NULL,
     NULL},
    {"POST", "/api/v1/offers/import", offer_import, ROLE_OWNER | ROLE_ADMIN, ROUTE_STREAM_BODY,
     "format provider currency", NULL},
    {"GET", "/api/v1/offers/{id}", offer_get, ROLES_USERS, ROUTE_STANDBY, NULL, NULL},
    {NULL, NULL, NULL, 0, 0, NULL, NULL},
};
