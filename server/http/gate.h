/* Counting semaphores bounding expensive work per process: password hashing (memory) and the
 * cost engine (CPU). Work that cannot get a slot within its wait answers 503 with Retry-After
 * instead of tying up every worker thread. Statically initialised: no start-up call. */
#ifndef CAPLEDGER_HTTP_GATE_H
#define CAPLEDGER_HTTP_GATE_H

#include <pthread.h>

struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_REALTIME */
    int in_use;
    int slots;
    const char *busy_detail; /* the 503's detail */
};

#define GATE_INIT(n, detail)                                                                       \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, (n), (detail)                      \
    }

/* Takes a slot, waiting up to timeout_ms. Returns 0 with the slot held, -1 on timeout. */
int gate_enter(struct gate *g, int timeout_ms) __attribute__((warn_unused_result));
void gate_leave(struct gate *g);

struct req;
/* Answers 503 problem+json with Retry-After: 1, for when gate_enter timed out. */
void gate_reply_busy(struct req *r, const struct gate *g);

#endif
