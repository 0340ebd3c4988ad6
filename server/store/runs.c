/* Job accounting runs: streamed straight into run, batch by batch (see store/runs.h). */
#include "store/runs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats/pgcopy.h"
#include "core/formats/run.h"
#include "core/formats/runrollup.h"
#include "core/validate.h"
#include "store/uploads.h"

#define RUNS_BATCH_ROWS 16384
#define RUNS_BATCH_BYTES ((size_t)4 << 20)
#define RUNS_ROLLUP_GROUPS_MAX 8192 /* groups kept before an upsert mid-upload */
#define RUNS_CLUSTERS_CACHED 64
#define RUNS_SEND_CHUNK ((size_t)64 << 10)
#define RUNS_KEY_SAVEPOINTS_MAX 64 /* batches whose keys may go in by COPY (copy_keys) */
#define RUNS_CLUSTER_LOCK_WAIT "30s"
#define RUNS_LABELS_SLOTS (2 * RUNS_LABELS_MAX)

/* The upload's lock on a cluster's keys (0110_run_ingest_direct.sql), then its class map. */
static const char *SQL_CLUSTER =
    "SELECT json_build_object('locked', capledger_run_cluster_lock($1, $2::interval), 'default', "
    "(SELECT default_class FROM cluster WHERE name = $1), 'parts', (SELECT "
    "json_agg(json_build_object('partition', partition, 'gpu_model', gpu_model, 'class', "
    "workload_class)) FROM cluster_partition WHERE cluster = $1))";

/* The batch's keys (distinct within the batch) that run_key does not hold go in; the answer is
 * the ordinals of those it held (duplicates). A plain INSERT, no ON CONFLICT: the upload holds
 * each of its clusters' locks, so no other transaction adds keys of them meanwhile (and if one
 * did, the unique index would fail this upload rather than store a run twice). */
static const char *SQL_KEYS =
    "WITH u AS MATERIALIZED (SELECT u0.i, u0.c, u0.e, EXISTS (SELECT 1 FROM run_key k WHERE "
    "k.cluster = u0.c AND k.external_id = u0.e) AS dup FROM unnest($1::text[], $2::text[]) WITH "
    "ORDINALITY AS u0(c, e, i)), "
    "ins AS (INSERT INTO run_key (cluster, external_id) SELECT c, e FROM u WHERE NOT dup) "
    "SELECT coalesce(json_agg(i ORDER BY i), '[]') FROM u WHERE dup";

static const char *SQL_COPY_KEYS = "COPY run_key (cluster, external_id) FROM STDIN (FORMAT binary)";

/* The first id of a block of $1 ids only this upload uses (0111_run_fewer_writes.sql). */
static const char *SQL_IDS = "SELECT to_json(capledger_run_ids($1::integer))";

static const char *SQL_COPY_RUN = "COPY run (" RUN_BINARY_COLUMNS ") FROM STDIN (FORMAT binary)";

/* The usage rollups (0061) and queue-wait histograms (0062) gain the aggregated rows computed
 * by the server (core/formats/runrollup.h), in key order (concurrent uploads lock rows in one
 * order). */
#define ROLLUP_ADD                                                                                 \
    "runs = d.runs + EXCLUDED.runs, gpu_runs = d.gpu_runs + EXCLUDED.gpu_runs, gh_runs = "         \
    "d.gh_runs + EXCLUDED.gh_runs, never_started = d.never_started + EXCLUDED.never_started, gh "  \
    "= "                                                                                           \
    "d.gh + EXCLUDED.gh, qw_sum = d.qw_sum + EXCLUDED.qw_sum, qw_n = d.qw_n + EXCLUDED.qw_n, "     \
    "util_sum = d.util_sum + EXCLUDED.util_sum, util_n = d.util_n + EXCLUDED.util_n"

static const char *SQL_ROLLUP =
    "WITH g AS (SELECT day, team, workload_class, cluster, partition, gpu_model, state, runs, "
    "gpu_runs, gh_runs, never_started, gh, CASE WHEN qw_n > 0 THEN round(qw_sum, 6) ELSE 0 END AS "
    "qw_sum, qw_n, util_sum, util_n "
    /* as the rebuild's coalesce(sum(extract(epoch …)), 0): scale 6, or 0 without waits */
    "FROM json_to_recordset($1::json) AS x(day timestamptz, team text, "
    "workload_class text, cluster text, partition text, gpu_model text, state text, runs bigint, "
    "gpu_runs bigint, gh_runs bigint, never_started bigint, gh double precision, qw_sum numeric, "
    "qw_n bigint, util_sum double precision, util_n bigint)), "
    "day_up AS (INSERT INTO run_usage_day AS d SELECT * FROM g ORDER BY 1, 2, 3, 4, 5, 6, 7 "
    "ON CONFLICT (day, team, workload_class, cluster, partition, gpu_model, state) DO UPDATE "
    "SET " ROLLUP_ADD " RETURNING 1), "
    "month_up AS (INSERT INTO run_usage_month AS d SELECT date_trunc('month', day, 'UTC'), team, "
    "workload_class, cluster, partition, gpu_model, state, sum(runs), sum(gpu_runs), "
    "sum(gh_runs), sum(never_started), sum(gh), sum(qw_sum), sum(qw_n), sum(util_sum), "
    "sum(util_n) FROM g GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7 "
    "ON CONFLICT (month, team, workload_class, cluster, partition, gpu_model, state) DO UPDATE "
    "SET " ROLLUP_ADD " RETURNING 1), "
    "hq AS (SELECT * FROM json_to_recordset($2::json) AS x(month timestamptz, team text, "
    "workload_class text, cluster text, state text, bucket integer, n bigint)), "
    "qh AS (INSERT INTO run_qw_hist AS h SELECT * FROM hq ORDER BY 1, 2, 3, 4, 5, 6 "
    "ON CONFLICT (month, team, workload_class, cluster, state, bucket) DO UPDATE SET n = h.n + "
    "EXCLUDED.n RETURNING 1), "
    "qa AS (INSERT INTO run_qw_hist_all AS h SELECT team, workload_class, cluster, state, bucket, "
    "sum(n) FROM hq GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5 ON CONFLICT (team, "
    "workload_class, cluster, state, bucket) DO UPDATE SET n = h.n + EXCLUDED.n RETURNING 1), "
    /* the upload's own GPU runs per month, team, class and cluster (0111) */
    "up AS (INSERT INTO run_usage_upload AS d SELECT $3::uuid, date_trunc('month', day, 'UTC'), "
    "team, workload_class, cluster, sum(gpu_runs), sum(qw_n) FROM g GROUP BY 2, 3, 4, 5 ORDER BY "
    "2, 3, 4, 5 ON CONFLICT (upload_id, month, team, workload_class, cluster) DO UPDATE SET "
    "gpu_runs = d.gpu_runs + EXCLUDED.gpu_runs, qw_n = d.qw_n + EXCLUDED.qw_n RETURNING 1) "
    "SELECT json_build_array((SELECT count(*) FROM day_up), (SELECT count(*) FROM month_up), "
    "(SELECT count(*) FROM qh), (SELECT count(*) FROM qa), (SELECT count(*) FROM up))";

#define RUN_JSON(r)                                                                                \
    "json_build_object('id', " r ".id::text, 'cluster', " r ".cluster, 'external_id', " r          \
    ".external_id, 'team', " r ".team, 'user', " r ".\"user\", 'workload_class', " r               \
    ".workload_class, 'partition', " r ".partition, 'gpu_model', " r ".gpu_model, "                \
    "'submitted_at', " r ".submitted_at, 'started_at', " r ".started_at, "                         \
    "'ended_at', " r ".ended_at, 'gpus', " r ".gpus, 'state', " r ".state, 'exit_code', " r        \
    ".exit_code, 'gpu_utilization', " r ".gpu_utilization, 'upload_id', " r ".upload_id, "         \
    "'wckey', " r ".wckey, 'comment', " r ".comment, 'job_name', " r ".job_name, 'workload', " r   \
    ".workload)"

static const char *SQL_LIST = "SELECT coalesce(json_agg(" RUN_JSON(
    "r") " ORDER BY r.id), '[]') FROM ("
         "SELECT * FROM run x "
         "WHERE ($1::jsonb = 'null'::jsonb OR x.team IN (SELECT "
         "jsonb_array_elements_text($1::jsonb))) "
         "AND ($2::text IS NULL OR x.team = $2) AND ($3::text IS NULL OR x.workload_class = $3) "
         "AND ($4::text IS NULL OR x.state = $4) AND ($5::text IS NULL OR x.cluster = $5) "
         "AND ($6::uuid IS NULL OR x.upload_id = $6::uuid) "
         "AND ($7::timestamptz IS NULL OR x.submitted_at >= $7::timestamptz) "
         "AND ($8::timestamptz IS NULL OR x.submitted_at < $8::timestamptz) "
         "AND ($9::bigint IS NULL OR x.id > $9::bigint) "
         "AND ($11::uuid IS NULL OR EXISTS (SELECT 1 FROM workload w WHERE w.id = $11::uuid AND "
         "w.team = x.team AND capledger_run_of(w.runs_match, x.wckey, x.comment, x.job_name, "
         "x.workload))) ORDER BY x.id LIMIT $10::integer) r";

struct runs_cluster {
    char *name;
    struct run_classmap map;
};

struct batch_row {
    size_t off, len; /* its binary COPY row in the batch's buffer */
    struct rollup_ref ref;
    int label;      /* its class: an index of the upload's labels, or -1 (unclassified) */
    long key;       /* its index in the batch's keys; -1: a repeat of an earlier line */
    size_t key_off; /* cluster (NUL-terminated) then external_id, in keytext */
    bool dup;
};

struct runs_upload {
    struct upload_tx *tx;
    const char *klass; /* ?class=, or NULL */
    char klass_given[CLASS_LABEL_MAX + 1];
    char *label[RUNS_LABELS_MAX]; /* the class labels of the upload's runs, as given */
    long label_runs[RUNS_LABELS_MAX];
    size_t nlabels;
    uint16_t label_slot[RUNS_LABELS_SLOTS]; /* index + 1; 0 empty */
    char upload_id[37];
    struct runs_cluster clusters[RUNS_CLUSTERS_CACHED];
    size_t nclusters;
    struct pgcopy_buf rows;    /* the batch's binary rows */
    struct pgcopy_buf keytext; /* the batch's keys, cluster NUL external_id NUL */
    struct pgcopy_buf arr_c;   /* the keys as two array literals */
    struct pgcopy_buf arr_e;
    struct batch_row *row;
    size_t nrow;
    long *keyrow; /* key index → row */
    size_t nkeys;
    uint32_t *slot; /* the batch's keys: row index + 1, 0 empty */
    size_t nslots;
    struct rollup *agg;
    struct pgcopy_buf send; /* the previous batch's stored rows, being COPYed */
    size_t send_off;        /* how much of it went to libpq */
    bool copying;
    bool fast_keys; /* no key of this upload was found stored yet: copy_keys */
    int savepoints;
    bool contended; /* a cluster's lock: waited too long for it, or a deadlock over two */
    long staged, inserted, unclassified;
};

static struct store_conn *conn(struct runs_upload *u)
{
    return store_upload_tx_conn(u->tx);
}

static enum store_status copy_finish(struct runs_upload *u);

enum store_status store_runs_begin(struct store *s, const char *upload_id, const char *klass,
                                   struct runs_upload **out)
{
    *out = NULL;
    struct runs_upload *u = calloc(1, sizeof *u);
    if (!u)
        return STORE_UNAVAILABLE;
    snprintf(u->upload_id, sizeof u->upload_id, "%s", upload_id);
    if (klass) {
        snprintf(u->klass_given, sizeof u->klass_given, "%s", klass);
        u->klass = u->klass_given;
    }
    pgcopy_init(&u->rows);
    pgcopy_init(&u->keytext);
    pgcopy_init(&u->arr_c);
    pgcopy_init(&u->arr_e);
    pgcopy_init(&u->send);
    u->nslots = 2 * RUNS_BATCH_ROWS;
    u->fast_keys = true;
    u->row = calloc(RUNS_BATCH_ROWS, sizeof *u->row);
    u->keyrow = calloc(RUNS_BATCH_ROWS, sizeof *u->keyrow);
    u->slot = calloc(u->nslots, sizeof *u->slot);
    u->agg = rollup_new();
    if (!u->row || !u->keyrow || !u->slot || !u->agg) {
        store_runs_abort(u);
        return STORE_UNAVAILABLE;
    }
    /* The key probe must be an index scan whatever the statistics say: planned while run_key
     * was small (a new store, or just after a TRUNCATE), a sequential scan per key made an
     * upload quadratic (200,000 rows: minutes). Only this transaction's plans are affected. */
    enum store_status st = store_upload_tx_begin(s, "SET LOCAL enable_seqscan = off", NULL, &u->tx);
    if (st != STORE_OK) {
        store_runs_abort(u);
        return st;
    }
    *out = u;
    return STORE_OK;
}

void store_runs_abort(struct runs_upload *u)
{
    if (!u)
        return;
    long ignored;
    /* the rollback below discards the COPY whatever this answers */
    if (u->copying && store_copy_end(conn(u), "upload cancelled", &ignored) != STORE_OK)
        u->copying = false;
    store_upload_tx_abort(u->tx);
    for (size_t i = 0; i < u->nclusters; i++) {
        free(u->clusters[i].name);
        run_classmap_free(&u->clusters[i].map);
    }
    pgcopy_free(&u->rows);
    pgcopy_free(&u->keytext);
    pgcopy_free(&u->arr_c);
    pgcopy_free(&u->arr_e);
    pgcopy_free(&u->send);
    for (size_t i = 0; i < u->nlabels; i++)
        free(u->label[i]);
    free(u->row);
    free(u->keyrow);
    free(u->slot);
    rollup_free(u->agg);
    free(u);
    /* The router returns the batch's memory after the request (req_memory_end). */
}

/* A lock wait past RUNS_CLUSTER_LOCK_WAIT (55P03) is a busy cluster, and a deadlock (40P01:
 * two uploads taking two clusters' locks in opposite orders, one rolled back) a contention,
 * not a fault: retryable (503), see store_runs_contended. */
static enum store_status busy(struct runs_upload *u, enum store_status st)
{
    const char *state = store_last_sqlstate(conn(u));
    if ((st == STORE_ERROR && strcmp(state, "55P03") == 0) ||
        (st == STORE_CONFLICT && strcmp(state, "40P01") == 0)) {
        u->contended = true;
        return STORE_UNAVAILABLE;
    }
    return st;
}

bool store_runs_contended(const struct runs_upload *u)
{
    return u && u->contended;
}

/* The cluster's class map, after taking its lock (first time in this upload). */
static enum store_status cluster_of(struct runs_upload *u, const char *name,
                                    const struct run_classmap **out)
{
    for (size_t i = 0; i < u->nclusters; i++) {
        if (strcmp(u->clusters[i].name, name) == 0) {
            *out = &u->clusters[i].map;
            return STORE_OK;
        }
    }
    if (u->nclusters == RUNS_CLUSTERS_CACHED) { /* forget them: their locks stay held */
        for (size_t i = 0; i < u->nclusters; i++) {
            free(u->clusters[i].name);
            run_classmap_free(&u->clusters[i].map);
        }
        u->nclusters = 0;
    }
    const char *p[] = {name, RUNS_CLUSTER_LOCK_WAIT};
    json_t *v = NULL;
    enum store_status st = copy_finish(u); /* the connection takes no query during a COPY */
    if (st == STORE_OK)
        st = busy(u, store_json_tx(conn(u), SQL_CLUSTER, STORE_ARGS(p), &v));
    if (st != STORE_OK)
        return st;
    struct runs_cluster *c = &u->clusters[u->nclusters];
    int bad = run_classmap_from_json(v, &c->map);
    json_decref(v);
    if (bad || !(c->name = strdup(name))) {
        if (!bad)
            run_classmap_free(&c->map);
        return STORE_UNAVAILABLE;
    }
    u->nclusters++;
    *out = &c->map;
    return STORE_OK;
}

/* One element of a text[] literal: quoted, with backslash and double quote escaped. */
static void array_elem(struct pgcopy_buf *b, const char *s, bool first)
{
    char q = '"';
    if (!first) {
        char comma = ',';
        pgcopy_append(b, &comma, 1);
    }
    pgcopy_append(b, &q, 1);
    const char *run = s;
    for (const char *p = s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            pgcopy_append(b, run, (size_t)(p - run));
            char esc = '\\';
            pgcopy_append(b, &esc, 1);
            run = p;
        }
    }
    pgcopy_append(b, run, strlen(run));
    pgcopy_append(b, &q, 1);
}

static uint64_t key_hash(const char *cluster, const char *id)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (const char *p = cluster; *p; p++)
        h = (h ^ (unsigned char)*p) * UINT64_C(1099511628211);
    h = (h ^ 0xff) * UINT64_C(1099511628211);
    for (const char *p = id; *p; p++)
        h = (h ^ (unsigned char)*p) * UINT64_C(1099511628211);
    return h;
}

/* The batch's keys as two text[] literals. */
static void key_arrays(struct runs_upload *u)
{
    char open = '{', close = '}', nul = '\0';
    pgcopy_reset(&u->arr_c);
    pgcopy_reset(&u->arr_e);
    pgcopy_append(&u->arr_c, &open, 1);
    pgcopy_append(&u->arr_e, &open, 1);
    const char *k = u->keytext.data;
    for (size_t i = 0; i < u->nkeys; i++) {
        size_t n = strlen(k);
        array_elem(&u->arr_c, k, i == 0);
        array_elem(&u->arr_e, k + n + 1, i == 0);
        k += n + 1 + strlen(k + n + 1) + 1;
    }
    pgcopy_append(&u->arr_c, &close, 1);
    pgcopy_append(&u->arr_e, &close, 1);
    pgcopy_append(&u->arr_c, &nul, 1);
    pgcopy_append(&u->arr_e, &nul, 1);
}

/* Probes run_key for each of the batch's keys and inserts those it lacks; marks the others. */
static enum store_status probe_keys(struct runs_upload *u)
{
    key_arrays(u);
    if (!pgcopy_ok(&u->arr_c) || !pgcopy_ok(&u->arr_e))
        return STORE_UNAVAILABLE;
    json_t *dups = NULL;
    const char *p[] = {u->arr_c.data, u->arr_e.data};
    enum store_status st = store_json_tx(conn(u), SQL_KEYS, STORE_ARGS(p), &dups);
    if (st != STORE_OK)
        return st;
    size_t i;
    json_t *v;
    json_array_foreach(dups, i, v)
    {
        json_int_t k = json_integer_value(v) - 1;
        if (k >= 0 && (size_t)k < u->nkeys)
            u->row[u->keyrow[k]].dup = true;
    }
    json_decref(dups);
    return STORE_OK;
}

/* The optimistic way: COPY the batch's keys into run_key inside a savepoint. When every key is
 * new (a first upload of new runs) that is all (*decided): no probe, no array to parse. A key
 * already there fails the COPY (23505): back to the savepoint, and this batch and the rest of
 * the upload go the probing way (a re-upload, an overlapping file). Each batch that went in
 * keeps a subtransaction, so at most RUNS_KEY_SAVEPOINTS_MAX (64) batches go this way (past 64 a
 * backend's subtransactions overflow its snapshot cache, which slows every other backend). */
static enum store_status copy_keys(struct runs_upload *u, bool *decided)
{
    *decided = false;
    pgcopy_reset(&u->arr_c);
    pgcopy_bin_header(&u->arr_c);
    const char *k = u->keytext.data;
    for (size_t i = 0; i < u->nkeys; i++) {
        size_t n = strlen(k);
        pgcopy_bin_row(&u->arr_c, 2);
        pgcopy_bin_text(&u->arr_c, k);
        pgcopy_bin_text(&u->arr_c, k + n + 1);
        k += n + 1 + strlen(k + n + 1) + 1;
    }
    pgcopy_bin_trailer(&u->arr_c);
    if (!pgcopy_ok(&u->arr_c))
        return STORE_UNAVAILABLE;
    enum store_status st = store_exec_tx(conn(u), "SAVEPOINT runs_keys", 0, NULL, NULL);
    if (st != STORE_OK)
        return st;
    u->savepoints++;
    long copied = 0;
    st = store_copy_begin(conn(u), SQL_COPY_KEYS);
    if (st == STORE_OK) {
        st = store_copy_send(conn(u), u->arr_c.data, u->arr_c.len);
        if (st == STORE_OK)
            st = store_copy_end(conn(u), NULL, &copied);
        else if (store_copy_end(conn(u), "upload failed", &copied) != STORE_OK)
            copied = 0; /* the upload fails and rolls back whole */
    }
    if (st == STORE_OK) {
        *decided = true;
        return store_exec_tx(conn(u), "RELEASE SAVEPOINT runs_keys", 0, NULL, NULL);
    }
    if (strcmp(store_last_sqlstate(conn(u)), "23505") != 0)
        return st;
    u->fast_keys = false;
    st = store_exec_tx(conn(u), "ROLLBACK TO SAVEPOINT runs_keys", 0, NULL, NULL);
    if (st == STORE_OK)
        st = store_exec_tx(conn(u), "RELEASE SAVEPOINT runs_keys", 0, NULL, NULL);
    return st;
}

/* Pushes the pending COPY of the previous batch as far as the socket takes, without waiting,
 * RUNS_SEND_CHUNK at a time (libpq's buffer grows to whatever is queued at once). */
static enum store_status copy_pump(struct runs_upload *u)
{
    while (u->copying && u->send_off < u->send.len) {
        int f = store_copy_flush(conn(u));
        if (f < 0)
            return STORE_UNAVAILABLE;
        if (f > 0)
            return STORE_OK;
        size_t n = u->send.len - u->send_off;
        if (n > RUNS_SEND_CHUNK)
            n = RUNS_SEND_CHUNK;
        enum store_status st = store_copy_send(conn(u), u->send.data + u->send_off, n);
        if (st != STORE_OK)
            return st;
        u->send_off += n;
    }
    return STORE_OK;
}

/* Sends the rest of the pending COPY (waiting now) and ends it. */
static enum store_status copy_finish(struct runs_upload *u)
{
    if (!u->copying)
        return STORE_OK;
    u->copying = false;
    long copied = 0;
    enum store_status st = store_copy_nonblocking(conn(u), false);
    while (st == STORE_OK && u->send_off < u->send.len) {
        size_t n = u->send.len - u->send_off;
        if (n > RUNS_SEND_CHUNK)
            n = RUNS_SEND_CHUNK;
        st = store_copy_send(conn(u), u->send.data + u->send_off, n);
        u->send_off += n;
    }
    if (st == STORE_OK)
        return store_copy_end(conn(u), NULL, &copied);
    if (store_copy_end(conn(u), "upload failed", &copied) != STORE_OK)
        copied = 0; /* the rollback that follows discards the COPY either way */
    return st;
}

/* Gives the batch's stored runs their ids, in line order, from one block of the sequence. */
static enum store_status assign_ids(struct runs_upload *u)
{
    size_t n = 0;
    for (size_t r = 0; r < u->nrow; r++)
        n += !u->row[r].dup;
    if (n == 0)
        return STORE_OK;
    char count[24];
    snprintf(count, sizeof count, "%zu", n);
    const char *p[] = {count};
    json_t *first = NULL;
    enum store_status st = store_json_tx(conn(u), SQL_IDS, STORE_ARGS(p), &first);
    json_int_t id = json_integer_value(first);
    json_decref(first);
    if (st != STORE_OK)
        return st;
    if (id <= 0)
        return STORE_UNAVAILABLE;
    for (size_t r = 0; r < u->nrow; r++)
        if (!u->row[r].dup)
            run_copy_binary_set_id(u->rows.data + u->row[r].off, (int64_t)id++);
    return STORE_OK;
}

/* Sends the batch: its new keys into run_key (after the previous batch's COPY ended), then
 * starts the COPY of the runs whose key went in, which the backend works through while the
 * server parses the next batch (copy_pump from store_runs_add). */
static enum store_status flush_batch(struct runs_upload *u)
{
    enum store_status st = copy_finish(u);
    if (st != STORE_OK || u->nrow == 0)
        return st;
    if (!pgcopy_ok(&u->rows) || !pgcopy_ok(&u->keytext))
        return STORE_UNAVAILABLE;
    bool decided = false;
    if (u->fast_keys && u->savepoints < RUNS_KEY_SAVEPOINTS_MAX) {
        st = copy_keys(u, &decided);
        if (st != STORE_OK)
            return st;
    }
    if (!decided) {
        st = probe_keys(u);
        if (st != STORE_OK)
            return st;
    }
    st = assign_ids(u);
    if (st != STORE_OK)
        return st;
    /* the stored rows, consecutive ones copied at once, between header and trailer */
    pgcopy_reset(&u->send);
    u->send_off = 0;
    pgcopy_bin_header(&u->send);
    size_t header = u->send.len, from = 0, to = 0;
    for (size_t r = 0; r <= u->nrow; r++) {
        if (r < u->nrow && !u->row[r].dup) {
            if (to != u->row[r].off) {
                pgcopy_append(&u->send, u->rows.data + from, to - from);
                from = u->row[r].off;
            }
            to = u->row[r].off + u->row[r].len;
        } else if (r == u->nrow) {
            pgcopy_append(&u->send, u->rows.data + from, to - from);
        }
    }
    bool any = u->send.len > header;
    pgcopy_bin_trailer(&u->send);
    if (!pgcopy_ok(&u->send))
        return STORE_UNAVAILABLE;
    for (size_t r = 0; r < u->nrow; r++) {
        const struct batch_row *b = &u->row[r];
        if (b->dup)
            continue;
        rollup_add(u->agg, &b->ref);
        u->inserted++;
        if (b->label < 0)
            u->unclassified++;
        else
            u->label_runs[b->label]++;
    }
    u->nrow = u->nkeys = 0;
    pgcopy_reset(&u->rows);
    pgcopy_reset(&u->keytext);
    memset(u->slot, 0, u->nslots * sizeof *u->slot);
    if (!any)
        return STORE_OK;
    st = store_copy_begin(conn(u), SQL_COPY_RUN);
    if (st != STORE_OK)
        return st;
    u->copying = true;
    st = store_copy_nonblocking(conn(u), true);
    if (st == STORE_OK)
        st = copy_pump(u);
    return st;
}

static enum store_status flush_rollups(struct runs_upload *u)
{
    enum store_status fin = copy_finish(u); /* the connection takes no query during a COPY */
    if (fin != STORE_OK)
        return fin;
    json_t *days = rollup_day_json(u->agg), *hist = rollup_hist_json(u->agg);
    char *dt = days ? store_doc_text(days) : NULL, *ht = hist ? store_doc_text(hist) : NULL;
    json_decref(days);
    json_decref(hist);
    enum store_status st = STORE_UNAVAILABLE;
    if (dt && ht) {
        const char *p[] = {dt, ht, u->upload_id};
        json_t *counts = NULL;
        st = store_json_tx(conn(u), SQL_ROLLUP, STORE_ARGS(p), &counts);
        json_decref(counts);
    }
    free(dt);
    free(ht);
    rollup_clear(u->agg);
    return st;
}

/* The index of the class label in the upload's table, added when new: STORE_INVALID when the
 * upload already holds RUNS_LABELS_MAX others (the run is refused, not stored without it). */
static enum store_status intern_label(struct runs_upload *u, const char *klass, int *index)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (const char *p = klass; *p; p++)
        h = (h ^ (unsigned char)*p) * UINT64_C(1099511628211);
    size_t j = (size_t)h % RUNS_LABELS_SLOTS;
    while (u->label_slot[j]) {
        if (strcmp(u->label[u->label_slot[j] - 1], klass) == 0) {
            *index = u->label_slot[j] - 1;
            return STORE_OK;
        }
        j = (j + 1) % RUNS_LABELS_SLOTS;
    }
    if (u->nlabels == RUNS_LABELS_MAX)
        return STORE_INVALID;
    if (!(u->label[u->nlabels] = strdup(klass)))
        return STORE_UNAVAILABLE;
    u->label_slot[j] = (uint16_t)(u->nlabels + 1);
    *index = (int)u->nlabels++;
    return STORE_OK;
}

enum store_status store_runs_add(struct runs_upload *u, const struct run *r)
{
    if (u->nrow >= RUNS_BATCH_ROWS) /* a batch that could not be sent: the upload failed */
        return STORE_ERROR;
    const struct run_classmap *map = NULL;
    enum store_status st = cluster_of(u, r->cluster, &map);
    if (st != STORE_OK)
        return st;
    struct batch_row *b = &u->row[u->nrow];
    memset(b, 0, sizeof *b);
    const char *klass = run_class_resolve(u->klass, r, map);
    b->label = -1;
    if (klass) {
        st = intern_label(u, klass, &b->label);
        if (st != STORE_OK)
            return st;
    }
    b->off = u->rows.len;
    if (!run_copy_binary(r, klass, u->upload_id, &u->rows))
        return STORE_ERROR;
    b->len = u->rows.len - b->off;
    if (rollup_prepare(u->agg, r, klass, &b->ref) != 0)
        return STORE_UNAVAILABLE;
    /* the first line of a key in the batch goes to run_key; a later one is a duplicate */
    uint64_t h = key_hash(r->cluster, r->external_id);
    size_t j = (size_t)h & (u->nslots - 1);
    b->key = -1;
    while (u->slot[j]) {
        const struct batch_row *o = &u->row[u->slot[j] - 1];
        const char *oc = u->keytext.data + o->key_off;
        if (strcmp(oc, r->cluster) == 0 && strcmp(oc + strlen(oc) + 1, r->external_id) == 0) {
            b->dup = true;
            break;
        }
        j = (j + 1) & (u->nslots - 1);
    }
    if (!b->dup) {
        b->key_off = u->keytext.len;
        pgcopy_append(&u->keytext, r->cluster, strlen(r->cluster) + 1);
        pgcopy_append(&u->keytext, r->external_id, strlen(r->external_id) + 1);
        if (!pgcopy_ok(&u->keytext))
            return STORE_UNAVAILABLE;
        b->key = (long)u->nkeys;
        u->keyrow[u->nkeys++] = (long)u->nrow;
        u->slot[j] = (uint32_t)(u->nrow + 1);
    }
    u->nrow++;
    u->staged++;
    if (u->copying && (u->nrow & 63) == 0) {
        st = copy_pump(u);
        if (st != STORE_OK)
            return st;
    }
    if (u->nrow == RUNS_BATCH_ROWS || u->rows.len >= RUNS_BATCH_BYTES) {
        st = flush_batch(u);
        if (st == STORE_OK && rollup_groups(u->agg) > RUNS_ROLLUP_GROUPS_MAX)
            st = flush_rollups(u);
    }
    return st;
}

enum store_status store_runs_finish(struct runs_upload *u, const struct audit_actor *who,
                                    json_t *rec, long *staged, long *inserted, long *duplicates,
                                    json_t **classes)
{
    *classes = NULL;
    *staged = *inserted = *duplicates = 0;
    const char *upload_id = json_string_value(json_object_get(rec, "id"));
    enum store_status st = flush_batch(u);
    if (st == STORE_OK)
        st = copy_finish(u);
    if (st == STORE_OK)
        st = flush_rollups(u);
    if (st != STORE_OK) {
        store_runs_abort(u);
        return st;
    }
    *staged = u->staged;
    *inserted = u->inserted;
    *duplicates = u->staged - u->inserted;
    json_t *cl = json_object();
    for (size_t i = 0; i < u->nlabels; i++)
        if (u->label_runs[i])
            json_object_set_new(cl, u->label[i], json_integer(u->label_runs[i]));
    if (u->unclassified)
        json_object_set_new(cl, "unclassified", json_integer(u->unclassified));
    *classes = cl;
    json_object_set_new(
        rec, "warnings",
        run_upload_warnings(*classes, json_string_value(json_object_get(
                                          json_object_get(rec, "params"), "cluster"))));
    json_object_set_new(rec, "inserted", json_integer(*inserted));
    json_object_set_new(rec, "duplicates", json_integer(*duplicates));
    json_t *change = json_pack("{s:s, s:I, s:I}", "upload_id", upload_id, "inserted",
                               (json_int_t)*inserted, "duplicates", (json_int_t)*duplicates);
    struct upload_tx *tx = u->tx;
    u->tx = NULL;
    store_runs_abort(u);
    st = store_upload_tx_commit(tx, who, rec, "runs.upload", change);
    json_decref(change);
    if (st != STORE_OK) { /* nothing stored: no classes to report */
        json_decref(*classes);
        *classes = NULL;
    }
    return st;
}

enum store_status store_runs_list(struct store *s, const struct runs_query *q, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", q->limit);
    const char *p[] = {team_scope_param(q->scope),
                       q->team,
                       q->workload_class,
                       q->state,
                       q->cluster,
                       q->upload_id,
                       q->from,
                       q->to,
                       q->after_id,
                       lim,
                       q->workload_id};
    return store_json(s, SQL_LIST, STORE_ARGS(p), out);
}
