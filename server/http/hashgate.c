/* A counting semaphore over a mutex and a condition variable: statically initialised, so no
 * start-up call is needed. The process has one gate because memory is one per process. */
#include "http/hashgate.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http/internal.h"

static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER; /* CLOCK_REALTIME */
static int gate_in_use;

int hashgate_enter(int timeout_ms)
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
    pthread_mutex_lock(&gate_mu);
    while (gate_in_use >= HASHGATE_SLOTS && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&gate_cv, &gate_mu, &deadline);
    int got = gate_in_use < HASHGATE_SLOTS;
    if (got)
        gate_in_use++;
    pthread_mutex_unlock(&gate_mu);
    return got ? 0 : -1;
}

void hashgate_leave(void)
{
    pthread_mutex_lock(&gate_mu);
    gate_in_use--;
    pthread_cond_signal(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

void hashgate_reply_busy(struct req *r)
{
    json_t *p = json_pack("{s:s, s:s, s:i, s:s}", "type", "https://capledger.dev/problems/busy",
                          "title", "Service busy", "status", 503, "detail",
                          "too many passwords are being checked at once; retry shortly");
    char *text = p ? json_dumps(p, JSON_COMPACT) : NULL;
    if (text)
        resp_bytes(r, 503, "application/problem+json", text, strlen(text), "Retry-After: 1\r\n");
    free(text);
    json_decref(p);
}
