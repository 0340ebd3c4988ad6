/* The replay of one arrangement (docs/whatif.md "The replay"): an event loop over whole
 * seconds and milli-GPUs. Rounds at an instant: completions (pool and overflow), arrivals, one
 * scheduling pass, overflow admission; a further round at the same instant while jobs end at
 * it (a runtime of 0).
 *
 * Data structures, so a million jobs replay in seconds whatever their shape: the queue and the
 * jobs larger than the pool are doubly linked lists in queue order (removal from the middle when
 * a job backfills or leaves for overflow); running pool jobs and overflow jobs are binary
 * min-heaps on their end. The running pool jobs are also a treap in (end, queue rank) order
 * with the GPUs of each subtree, so EASY's shadow time and `extra` are two descents, not a walk
 * over every running job (thousands of small jobs beside a head that needs the whole pool made
 * every pass walk them all). With a max_gpus, the jobs overflow may take (queued W or longer,
 * or larger than the pool) are also the leaves of a min-tree of their GPUs over queue ranks, so
 * admission finds the next one that fits in O(log n) instead of walking a queue of jobs that do
 * not fit at every event.
 *
 * Two shortcuts, each exact:
 * - A pass is skipped when nothing it reads changed since the last one and that one started
 *   nothing (no completion in the pool, no job left the queue, no arrival within the head and
 *   the backfill window): the shadow time, `extra` and the window are then the same, and a later
 *   `now` only makes `now + runtime ≤ S` harder.
 */
#include "core/whatif/whatif_private.h"

#include <stdlib.h>
#include <string.h>

struct entry {
    int64_t end;
    int32_t rank;
};

struct heap {
    struct entry *e;
    size_t n;
};

static bool before(const struct entry *a, const struct entry *b)
{
    return a->end < b->end || (a->end == b->end && a->rank < b->rank);
}

static void heap_push(struct heap *h, int64_t end, int32_t rank)
{
    size_t i = h->n++;
    struct entry x = {end, rank};
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(&x, &h->e[p]))
            break;
        h->e[i] = h->e[p];
        i = p;
    }
    h->e[i] = x;
}

static struct entry heap_pop(struct heap *h)
{
    struct entry top = h->e[0], x = h->e[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && before(&h->e[c + 1], &h->e[c]))
            c++;
        if (!before(&h->e[c], &x))
            break;
        h->e[i] = h->e[c];
        i = c;
    }
    if (h->n)
        h->e[i] = x;
    return top;
}

/* The running pool jobs in (end, rank) order, each subtree with the sum of its GPUs. Nodes are
 * job ranks; priorities a fixed hash of the rank (the shape never changes a figure). */
struct treap {
    int32_t *l, *r;
    int64_t *sum;
    int32_t root;
};

/* The overflow candidates' GPUs by rank (INT32_MAX: not a candidate); leaves at size + rank. */
struct mintree {
    int32_t *v;
    size_t size;
};

/* The jobs that take part, in queue order (submitted, id), and the replay's state. */
struct sim {
    const struct whatif_arrangement *a;
    size_t n;
    const int64_t *sub, *rt, *g;
    int64_t *start;
    uint8_t *where;
    int32_t *prev, *next;
    int32_t qhead, qtail, elig; /* the pool's queue; elig: its first job not yet W old */
    int32_t bhead, btail;       /* jobs larger than the pool, waiting for overflow */
    size_t qlen;
    struct heap pool, over;
    struct treap run;    /* the running pool jobs, for the shadow time */
    struct mintree cand; /* with a max_gpus: the jobs overflow may take */
    int64_t *end;        /* a running pool job's end */
    int64_t free, ov_used;
    bool dirty;
};

static uint32_t prio(int32_t x)
{
    uint32_t h = (uint32_t)x * 0x9E3779B1u;
    h ^= h >> 15;
    h *= 0x85EBCA77u;
    h ^= h >> 13;
    return h;
}

static bool key_before(const struct sim *s, int32_t a, int32_t b)
{
    return s->end[a] < s->end[b] || (s->end[a] == s->end[b] && a < b);
}

static int64_t tsum(const struct sim *s, int32_t t)
{
    return t < 0 ? 0 : s->run.sum[t];
}

static void tfix(struct sim *s, int32_t t)
{
    s->run.sum[t] = s->g[t] + tsum(s, s->run.l[t]) + tsum(s, s->run.r[t]);
}

/* Splits t into the nodes before key x (*a) and the others (*b). */
static void tsplit(struct sim *s, int32_t t, int32_t x, int32_t *a, int32_t *b)
{
    if (t < 0) {
        *a = *b = -1;
        return;
    }
    if (key_before(s, t, x)) {
        tsplit(s, s->run.r[t], x, &s->run.r[t], b);
        tfix(s, t);
        *a = t;
    } else {
        tsplit(s, s->run.l[t], x, a, &s->run.l[t]);
        tfix(s, t);
        *b = t;
    }
}

static int32_t tmerge(struct sim *s, int32_t a, int32_t b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    if (prio(a) > prio(b)) {
        s->run.r[a] = tmerge(s, s->run.r[a], b);
        tfix(s, a);
        return a;
    }
    s->run.l[b] = tmerge(s, a, s->run.l[b]);
    tfix(s, b);
    return b;
}

static void tinsert(struct sim *s, int32_t x)
{
    int32_t a, b;
    s->run.l[x] = s->run.r[x] = -1;
    tfix(s, x);
    tsplit(s, s->run.root, x, &a, &b);
    s->run.root = tmerge(s, tmerge(s, a, x), b);
}

static int32_t tremove_at(struct sim *s, int32_t t, int32_t x)
{
    if (t == x)
        return tmerge(s, s->run.l[t], s->run.r[t]);
    if (key_before(s, x, t))
        s->run.l[t] = tremove_at(s, s->run.l[t], x);
    else
        s->run.r[t] = tremove_at(s, s->run.r[t], x);
    tfix(s, t);
    return t;
}

static void mt_set(struct sim *s, int32_t r, int32_t v)
{
    if (!s->cand.v)
        return;
    size_t i = s->cand.size + (size_t)r;
    s->cand.v[i] = v;
    for (i /= 2; i >= 1; i /= 2) {
        int32_t a = s->cand.v[2 * i], b = s->cand.v[2 * i + 1];
        s->cand.v[i] = a < b ? a : b;
    }
}

/* The first rank ≥ pos whose GPUs are at most cap, or -1. */
static int32_t mt_first(const struct sim *s, size_t node, size_t lo, size_t hi, size_t pos,
                        int64_t cap)
{
    if (hi <= pos || s->cand.v[node] > cap)
        return -1;
    if (hi - lo == 1)
        return (int32_t)lo;
    size_t mid = lo + (hi - lo) / 2;
    int32_t r = mt_first(s, 2 * node, lo, mid, pos, cap);
    return r >= 0 ? r : mt_first(s, 2 * node + 1, mid, hi, pos, cap);
}

static void list_append(struct sim *s, int32_t *head, int32_t *tail, int32_t r)
{
    s->prev[r] = *tail;
    s->next[r] = -1;
    if (*tail >= 0)
        s->next[*tail] = r;
    else
        *head = r;
    *tail = r;
}

static void list_remove(struct sim *s, int32_t *head, int32_t *tail, int32_t r)
{
    if (s->prev[r] >= 0)
        s->next[s->prev[r]] = s->next[r];
    else
        *head = s->next[r];
    if (s->next[r] >= 0)
        s->prev[s->next[r]] = s->prev[r];
    else
        *tail = s->prev[r];
}

static void queue_remove(struct sim *s, int32_t r)
{
    if (s->elig == r)
        s->elig = s->next[r];
    list_remove(s, &s->qhead, &s->qtail, r);
    s->qlen--;
}

static void start_pool(struct sim *s, int32_t r, int64_t now)
{
    queue_remove(s, r);
    s->start[r] = now;
    s->where[r] = WHATIF_POOL;
    s->free -= s->g[r];
    s->end[r] = now + s->rt[r];
    heap_push(&s->pool, s->end[r], r);
    tinsert(s, r);
    mt_set(s, r, INT32_MAX);
}

static void arrive(struct sim *s, int32_t r)
{
    const struct whatif_arrangement *a = s->a;
    if (s->g[r] > a->pool_milli) {
        if (!a->overflow || (a->max_milli >= 0 && s->g[r] > a->max_milli)) {
            s->where[r] = WHATIF_UNSCHEDULABLE;
            return;
        }
        list_append(s, &s->bhead, &s->btail, r);
        mt_set(s, r, (int32_t)s->g[r]);
        return;
    }
    int64_t window = a->policy == WHATIF_FIFO ? 0 : a->backfill_depth;
    if ((int64_t)s->qlen <= window)
        s->dirty = true;
    list_append(s, &s->qhead, &s->qtail, r);
    s->qlen++;
    if (s->elig < 0)
        s->elig = r;
}

/* EASY's shadow time of a head that needs `need` and the `extra` GPUs beside it: the running
 * pool jobs in order of their end (then rank). The head does not fit, so need > free, and every
 * running job's GPUs and the free ones make the pool: the shadow time exists. */
static void shadow(struct sim *s, int64_t need, int64_t *S, int64_t *extra)
{
    /* the first node in key order at which free + the GPUs up to it reach need */
    int64_t want = need - s->free;
    int32_t t = s->run.root, at = -1;
    while (t >= 0) {
        int64_t left = tsum(s, s->run.l[t]);
        if (left >= want) {
            t = s->run.l[t];
        } else if (left + s->g[t] >= want) {
            at = t;
            break;
        } else {
            want -= left + s->g[t];
            t = s->run.r[t];
        }
    }
    *S = at >= 0 ? s->end[at] : 0;
    /* every running job ending at or before S */
    int64_t upto = 0;
    t = s->run.root;
    while (t >= 0) {
        if (s->end[t] <= *S) {
            upto += tsum(s, s->run.l[t]) + s->g[t];
            t = s->run.r[t];
        } else {
            t = s->run.l[t];
        }
    }
    *extra = s->free + upto - need;
}

static void pass(struct sim *s, int64_t now)
{
    if (!s->dirty || s->free <= 0 || s->qhead < 0)
        return;
    s->dirty = false;
    bool started = false;
    while (s->qhead >= 0 && s->g[s->qhead] <= s->free) {
        start_pool(s, s->qhead, now);
        started = true;
    }
    if (s->a->policy == WHATIF_EASY_BACKFILL && s->qhead >= 0 && s->free > 0) {
        int64_t S = 0, extra = 0;
        shadow(s, s->g[s->qhead], &S, &extra);
        int32_t r = s->next[s->qhead];
        for (int64_t k = 0; k < s->a->backfill_depth && r >= 0 && s->free > 0; k++) {
            int32_t nx = s->next[r];
            if (s->g[r] <= s->free) {
                if (now + s->rt[r] <= S) {
                    start_pool(s, r, now);
                    started = true;
                } else if (s->g[r] <= extra) {
                    extra -= s->g[r];
                    start_pool(s, r, now);
                    started = true;
                }
            }
            r = nx;
        }
    }
    if (started)
        s->dirty = true;
}

static bool admit(struct sim *s, int32_t r, int64_t now)
{
    const struct whatif_arrangement *a = s->a;
    if (a->max_milli >= 0 && s->ov_used + s->g[r] > a->max_milli)
        return false;
    s->ov_used += s->g[r];
    s->start[r] = now + a->provisioning_delay_s;
    s->where[r] = WHATIF_OVERFLOW;
    heap_push(&s->over, s->start[r] + s->rt[r], r);
    mt_set(s, r, INT32_MAX);
    return true;
}

static void admission(struct sim *s, int64_t now)
{
    const struct whatif_arrangement *a = s->a;
    if (!a->overflow)
        return;
    int32_t fresh = s->elig; /* the first job that may become W old now */
    while (s->elig >= 0 && now - s->sub[s->elig] >= a->after_wait_s) {
        mt_set(s, s->elig, (int32_t)s->g[s->elig]);
        s->elig = s->next[s->elig];
    }
    if (s->cand.v) {
        /* max_gpus: in queue order, each candidate that fits what overflow has left */
        size_t pos = 0;
        for (;;) {
            int64_t cap = a->max_milli - s->ov_used;
            int32_t r = cap > 0 ? mt_first(s, 1, 0, s->cand.size, pos, cap) : -1;
            if (r < 0)
                break;
            admit(s, r, now);
            if (s->g[r] > a->pool_milli) {
                list_remove(s, &s->bhead, &s->btail, r);
            } else {
                queue_remove(s, r);
                s->dirty = true;
            }
            pos = (size_t)r + 1;
        }
        return;
    }
    /* no max_gpus: every candidate goes at once, so only the new ones are left to take */
    for (int32_t x = fresh; x >= 0 && x != s->elig;) {
        int32_t nx = s->next[x];
        admit(s, x, now);
        queue_remove(s, x);
        s->dirty = true;
        x = nx;
    }
    for (int32_t y = s->bhead; y >= 0;) {
        int32_t ny = s->next[y];
        admit(s, y, now);
        list_remove(s, &s->bhead, &s->btail, y);
        y = ny;
    }
}

/* One round at `now`: completions, arrivals (first round only), the pass, admission. */
static void round_at(struct sim *s, int64_t now, size_t *arrived)
{
    while (s->pool.n && s->pool.e[0].end <= now) {
        struct entry e = heap_pop(&s->pool);
        s->free += s->g[e.rank];
        s->run.root = tremove_at(s, s->run.root, e.rank);
        s->dirty = true;
    }
    while (s->over.n && s->over.e[0].end <= now) {
        struct entry e = heap_pop(&s->over);
        s->ov_used -= s->g[e.rank];
    }
    if (arrived)
        while (*arrived < s->n && s->sub[*arrived] == now)
            arrive(s, (int32_t)(*arrived)++);
    pass(s, now);
    admission(s, now);
}

static void simulate(struct sim *s)
{
    size_t arrived = 0;
    const struct whatif_arrangement *a = s->a;
    for (;;) {
        int64_t t = INT64_MAX;
        if (arrived < s->n)
            t = s->sub[arrived];
        if (s->pool.n && s->pool.e[0].end < t)
            t = s->pool.e[0].end;
        if (s->over.n && s->over.e[0].end < t)
            t = s->over.e[0].end;
        if (a->overflow && s->elig >= 0 && s->sub[s->elig] + a->after_wait_s < t)
            t = s->sub[s->elig] + a->after_wait_s;
        if (t == INT64_MAX)
            break;
        round_at(s, t, &arrived);
        while ((s->pool.n && s->pool.e[0].end <= t) || (s->over.n && s->over.e[0].end <= t))
            round_at(s, t, NULL);
    }
}

struct order {
    int64_t sub;
    const char *id;
    uint32_t index;
};

static int order_cmp(const void *x, const void *y)
{
    const struct order *a = x, *b = y;
    if (a->sub != b->sub)
        return a->sub < b->sub ? -1 : 1;
    return strcmp(a->id, b->id);
}

void whatif_outcome_free(struct whatif_outcome *out)
{
    free(out->where);
    free(out->start);
    out->where = NULL;
    out->start = NULL;
}

static bool takes_part(const struct whatif_job *job)
{
    return (job->flags & WHATIF_JOB_STARTED) && (job->flags & WHATIF_JOB_ENDED) && job->g > 0;
}

int whatif_replay_one(const struct whatif_jobs *j, const struct whatif_arrangement *a,
                      struct whatif_outcome *out)
{
    memset(out, 0, sizeof *out);
    size_t n = 0;
    for (size_t i = 0; i < j->n; i++)
        n += takes_part(&j->v[i]);
    size_t m = n ? n : 1;
    struct order *ord = malloc(m * sizeof *ord);
    int64_t *cols = malloc(3 * m * sizeof *cols);
    int64_t *start = malloc(m * sizeof *start);
    uint8_t *where = calloc(m, 1);
    int32_t *links = malloc(4 * m * sizeof *links);
    int64_t *tree = malloc(2 * m * sizeof *tree);
    struct entry *heaps = malloc(2 * m * sizeof *heaps);
    /* the overflow candidates' min-tree, only when a max_gpus can make one wait */
    size_t size = 1;
    while (size < m)
        size *= 2;
    int32_t *cand = a->overflow && a->max_milli >= 0 ? malloc(2 * size * sizeof *cand) : NULL;
    out->where = calloc(j->n ? j->n : 1, 1);
    out->start = calloc(j->n ? j->n : 1, sizeof *out->start);
    int rc = -1;
    if (!ord || !cols || !start || !where || !links || !tree || !heaps || !out->where ||
        !out->start || (a->overflow && a->max_milli >= 0 && !cand))
        goto done;
    for (size_t i = 0; cand && i < 2 * size; i++)
        cand[i] = INT32_MAX;
    size_t k = 0;
    int64_t first = INT64_MAX;
    for (size_t i = 0; i < j->n; i++) {
        const struct whatif_job *job = &j->v[i];
        if (job->submitted < first)
            first = job->submitted;
        if (takes_part(job))
            ord[k++] = (struct order){job->submitted, j->ids + job->id_off, (uint32_t)i};
    }
    qsort(ord, n, sizeof *ord, order_cmp);
    int64_t *sub = cols, *rt = cols + m, *g = cols + 2 * m;
    for (size_t r = 0; r < n; r++) {
        const struct whatif_job *job = &j->v[ord[r].index];
        sub[r] = job->submitted;
        rt[r] = job->ended - job->started;
        g[r] = job->g;
    }
    struct sim s = {
        .a = a,
        .n = n,
        .sub = sub,
        .rt = rt,
        .g = g,
        .start = start,
        .where = where,
        .prev = links,
        .next = links + m,
        .run = {links + 2 * m, links + 3 * m, tree, -1},
        .cand = {cand, size},
        .end = tree + m,
        .qhead = -1,
        .qtail = -1,
        .elig = -1,
        .bhead = -1,
        .btail = -1,
        .pool = {heaps, 0},
        .over = {heaps + m, 0},
        .free = a->pool_milli,
    };
    simulate(&s);
    out->replay_end = first == INT64_MAX ? 0 : first;
    for (size_t r = 0; r < n; r++) {
        uint32_t i = ord[r].index;
        /* A job still waiting when nothing is left to happen cannot occur (an empty pool takes
         * any job that fits it; an empty overflow any within max_gpus); were it to, it is
         * counted unschedulable rather than given a start. */
        out->where[i] = where[r] ? where[r] : WHATIF_UNSCHEDULABLE;
        out->start[i] = start[r];
        if (where[r] == WHATIF_POOL || where[r] == WHATIF_OVERFLOW) {
            int64_t end = start[r] + rt[r];
            if (end > out->replay_end)
                out->replay_end = end;
        }
    }
    rc = 0;
done:
    free(ord);
    free(cols);
    free(start);
    free(where);
    free(links);
    free(tree);
    free(cand);
    free(heaps);
    if (rc != 0)
        whatif_outcome_free(out);
    return rc;
}
