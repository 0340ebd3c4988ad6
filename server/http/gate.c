#include "http/gate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http/internal.h"

int gate_enter(struct gate *g, int timeout_ms)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    pthread_mutex_lock(&g->mu);
    while (g->in_use >= g->slots && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&g->cv, &g->mu, &deadline);
    int got = g->in_use < g->slots;
    if (got)
        g->in_use++;
    pthread_mutex_unlock(&g->mu);
    return got ? 0 : -1;
}

void gate_leave(struct gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->in_use--;
    pthread_cond_signal(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

int gate_try_enter_as(struct gate *g, const char *holder, int per_holder)
{
    return gate_try_enter_within(g, holder, per_holder, g->slots);
}

int gate_try_enter_within(struct gate *g, const char *holder, int per_holder, int slots)
{
    int rc = -1, mine = 0, free_slot = -1;
    if (slots > g->slots)
        slots = g->slots;
    pthread_mutex_lock(&g->mu);
    for (int i = 0; i < g->slots && i < GATE_MAX_SLOTS; i++) {
        if (!g->holders[i][0])
            free_slot = free_slot < 0 ? i : free_slot;
        else
            mine += strcmp(g->holders[i], holder) == 0;
    }
    if (mine >= per_holder)
        rc = -2;
    else if (free_slot >= 0 && g->in_use < slots) {
        snprintf(g->holders[free_slot], sizeof g->holders[free_slot], "%s", holder);
        g->in_use++;
        rc = 0;
    }
    pthread_mutex_unlock(&g->mu);
    return rc;
}

void gate_leave_as(struct gate *g, const char *holder)
{
    pthread_mutex_lock(&g->mu);
    for (int i = 0; i < g->slots && i < GATE_MAX_SLOTS; i++)
        if (strcmp(g->holders[i], holder) == 0) {
            g->holders[i][0] = '\0';
            g->in_use--;
            break;
        }
    pthread_cond_signal(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

void gate_reply_own_limit(struct req *r, int per_holder)
{
    char detail[160];
    snprintf(detail, sizeof detail,
             "you already have %d comparison%s running; send this one when %s finished", per_holder,
             per_holder == 1 ? "" : "s", per_holder == 1 ? "it has" : "one has");
    json_t *p = json_pack("{s:s, s:s, s:i, s:s}", "type", PROBLEM_TYPE_BASE "too-many-requests",
                          "title", "Too many requests", "status", 429, "detail", detail);
    char *text = p ? json_dumps(p, JSON_COMPACT) : NULL;
    if (text)
        resp_bytes(r, 429, "application/problem+json", text, strlen(text), "Retry-After: 1\r\n");
    free(text);
    json_decref(p);
}

void gate_reply_busy(struct req *r, const struct gate *g)
{
    json_t *p = json_pack("{s:s, s:s, s:i, s:s}", "type", PROBLEM_TYPE_BASE "busy", "title",
                          "Service busy", "status", 503, "detail", g->busy_detail);
    char *text = p ? json_dumps(p, JSON_COMPACT) : NULL;
    if (text)
        resp_bytes(r, 503, "application/problem+json", text, strlen(text), "Retry-After: 1\r\n");
    free(text);
    json_decref(p);
}
