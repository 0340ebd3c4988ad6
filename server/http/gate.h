/* Counting semaphores bounding expensive work per process: password hashing (memory) and the
 * cost engine (CPU). Work that cannot get a slot within its wait answers 503 with Retry-After
 * instead of tying up every worker thread. Statically initialised: no start-up call. */
#ifndef CAPLEDGER_HTTP_GATE_H
#define CAPLEDGER_HTTP_GATE_H

#include <pthread.h>

#define GATE_MAX_SLOTS 16

struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_REALTIME */
    int in_use;
    int slots;                        /* at most GATE_MAX_SLOTS for gate_try_enter_as */
    const char *busy_detail;          /* the 503's detail */
    char holders[GATE_MAX_SLOTS][40]; /* gate_try_enter_as: who holds each slot ("" free) */
};

#define GATE_INIT(n, detail)                                                                       \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, (n), (detail),                     \
        {                                                                                          \
            {                                                                                      \
                0                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

/* Takes a slot, waiting up to timeout_ms. Returns 0 with the slot held, -1 on timeout. */
int gate_enter(struct gate *g, int timeout_ms) __attribute__((warn_unused_result));
void gate_leave(struct gate *g);

/* Takes a slot for holder (a user id) without waiting: 0 with the slot held, -1 when every
 * slot is taken, -2 when holder already holds per_holder slots. Give it back with
 * gate_leave_as. */
int gate_try_enter_as(struct gate *g, const char *holder, int per_holder)
    __attribute__((warn_unused_result));
void gate_leave_as(struct gate *g, const char *holder);
/* gate_try_enter_as with at most slots of the gate's (a bound known only at run time). */
int gate_try_enter_within(struct gate *g, const char *holder, int per_holder, int slots)
    __attribute__((warn_unused_result));

struct req;
/* Answers 503 problem+json with Retry-After: 1, for when gate_enter timed out. */
void gate_reply_busy(struct req *r, const struct gate *g);
/* Answers 429 problem+json with Retry-After: 1: the caller already has work running. */
void gate_reply_own_limit(struct req *r, int per_holder);

#endif
