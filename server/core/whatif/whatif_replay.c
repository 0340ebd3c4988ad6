/* The replay of one arrangement (docs/whatif.md "The replay"): an event loop over whole
 * seconds and milli-GPUs. Rounds at an instant: completions (pool and overflow), arrivals, one
 * scheduling pass, overflow admission; a further round at the same instant while jobs end at
 * it (a runtime of 0).
 *
 * Data structures, so a million jobs replay in seconds: the queue and the jobs larger than the
 * pool are doubly linked lists in queue order (removal from the middle when a job backfills or
 * leaves for overflow); running pool jobs and overflow jobs are binary min-heaps on their end;
 * EASY's shadow time walks the running pool jobs in end order without sorting them (a second
 * heap over positions of the first enumerates its k smallest in O(k log k)).
 *
 * Two shortcuts, each exact:
 * - A pass is skipped when nothing it reads changed since the last one and that one started
 *   nothing (no completion in the pool, no job left the queue, no arrival within the head and
 *   the backfill window): the shadow time, `extra` and the window are then the same, and a later
 *   `now` only makes `now + runtime ≤ S` harder.
 * - Overflow admission retries the jobs it skipped (max_gpus reached) only when overflow GPUs
 *   were freed since: the GPUs in use only grew otherwise, so they would be skipped again. */
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

/* The jobs that take part, in queue order (submitted, id), and the replay's state. */
struct sim {
    const struct whatif_arrangement *a;
    size_t n;
    const int64_t *sub, *rt, *g;
    int64_t *start;
    uint8_t *where;
    int32_t *prev, *next;
    int32_t qhead, qtail, elig; /* the pool's queue; elig: its first job not yet W old */
    int32_t bhead, btail, bnew; /* jobs larger than the pool, waiting for overflow */
    size_t qlen;
    struct heap pool, over;
    int32_t *aux; /* positions into pool.e, for the shadow time */
    int64_t free, ov_used;
    bool dirty, ov_freed;
};

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
    heap_push(&s->pool, now + s->rt[r], r);
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
        if (s->bnew < 0)
            s->bnew = r;
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
 * pool jobs in order of their end. */
static void shadow(struct sim *s, int64_t need, int64_t *S, int64_t *extra)
{
    int64_t avail = s->free;
    size_t na = 0;
    const struct entry *e = s->pool.e;
    if (s->pool.n)
        s->aux[na++] = 0;
    bool found = false;
    while (na) {
        /* pop the smallest position from aux (a min-heap on e[pos]) */
        int32_t pos = s->aux[0];
        int32_t last = s->aux[--na];
        size_t i = 0;
        for (;;) {
            size_t c = 2 * i + 1;
            if (c >= na)
                break;
            if (c + 1 < na && before(&e[s->aux[c + 1]], &e[s->aux[c]]))
                c++;
            if (!before(&e[s->aux[c]], &e[last]))
                break;
            s->aux[i] = s->aux[c];
            i = c;
        }
        if (na)
            s->aux[i] = last;
        if (found && e[pos].end > *S)
            break;
        avail += s->g[e[pos].rank];
        if (!found && avail >= need) {
            found = true;
            *S = e[pos].end;
        }
        for (int32_t c = 2 * pos + 1; c <= 2 * pos + 2; c++) {
            if ((size_t)c >= s->pool.n)
                break;
            size_t k = na++;
            while (k > 0) {
                size_t p = (k - 1) / 2;
                if (!before(&e[c], &e[s->aux[p]]))
                    break;
                s->aux[k] = s->aux[p];
                k = p;
            }
            s->aux[k] = c;
        }
    }
    *extra = avail - need;
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
    return true;
}

static void admission(struct sim *s, int64_t now)
{
    const struct whatif_arrangement *a = s->a;
    if (!a->overflow)
        return;
    int32_t fresh = s->elig; /* the first job that may become W old now */
    while (s->elig >= 0 && now - s->sub[s->elig] >= a->after_wait_s)
        s->elig = s->next[s->elig];
    int32_t x, y;
    if (s->ov_freed || a->max_milli < 0) {
        x = s->qhead;
        y = s->bhead;
    } else {
        x = fresh;
        y = s->bnew;
    }
    int32_t xend = s->elig;
    s->ov_freed = false;
    s->bnew = -1;
    if (x == xend)
        x = -1;
    while (x >= 0 || y >= 0) {
        if (y < 0 || (x >= 0 && x < y)) {
            int32_t nx = s->next[x];
            if (admit(s, x, now)) {
                queue_remove(s, x);
                s->dirty = true;
            }
            x = nx == xend ? -1 : nx;
        } else {
            int32_t ny = s->next[y];
            if (admit(s, y, now))
                list_remove(s, &s->bhead, &s->btail, y);
            y = ny;
        }
    }
}

/* One round at `now`: completions, arrivals (first round only), the pass, admission. */
static void round_at(struct sim *s, int64_t now, size_t *arrived)
{
    while (s->pool.n && s->pool.e[0].end <= now) {
        struct entry e = heap_pop(&s->pool);
        s->free += s->g[e.rank];
        s->dirty = true;
    }
    while (s->over.n && s->over.e[0].end <= now) {
        struct entry e = heap_pop(&s->over);
        s->ov_used -= s->g[e.rank];
        s->ov_freed = true;
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
    int32_t *links = malloc(3 * m * sizeof *links);
    struct entry *heaps = malloc(2 * m * sizeof *heaps);
    out->where = calloc(j->n ? j->n : 1, 1);
    out->start = calloc(j->n ? j->n : 1, sizeof *out->start);
    int rc = -1;
    if (!ord || !cols || !start || !where || !links || !heaps || !out->where || !out->start)
        goto done;
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
        .aux = links + 2 * m,
        .qhead = -1,
        .qtail = -1,
        .elig = -1,
        .bhead = -1,
        .btail = -1,
        .bnew = -1,
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
    free(heaps);
    if (rc != 0)
        whatif_outcome_free(out);
    return rc;
}
