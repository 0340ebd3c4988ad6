/* The slow-client guard (see conns.h). */
#include "http/conns.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <stddef.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/problems.h"

#define CONNS_TICK_MS 200
#define CONNS_PRESSURE_MIN_WAIT_S 1.0
#define CONNS_BODY_GRACE_S 10.0       /* a body's rate is judged after this long */
#define CONNS_PRESSURE_STALL_S 0.5    /* short of workers: replies unread this long go first */
#define CONNS_PRESSURE_BODY_S 2.0     /* short of workers: bodies judged after this long */
#define CONNS_PRESSURE_BODY_FACTOR 16 /* ... and shed when slower than this × the body floor */

/* One client socket on the listening port, as last seen by the guard's scan. */
struct sock {
    int fd;
    char addr[64];
    int port;
    double first_seen;      /* monotonic seconds */
    double idle_since;      /* first_seen, or the end of its last request */
    int requests;           /* requests begun on it */
    int busy;               /* in a request handler now */
    double busy_since;      /* when the guard saw the current request */
    uint64_t bytes_at_busy; /* bytes received on the socket then */
    double out_since;       /* when its send queue was seen non-empty after being empty; 0 */
    uint64_t acked_at_out;  /* bytes the peer had acknowledged then */
    uint64_t acked;         /* bytes acknowledged at the last scan */
    double acked_moved;     /* last scan that saw acked advance (or the queue fill) */
    double body_rate;       /* bytes/s of the body so far while its handler reads it; -1 */
    int seen;               /* mark for the scan */
    int shut;               /* already shut down */
};

/* A request in progress or just finished, reported by the handler before the scan sees it. */
struct mark {
    char addr[64];
    int port;
    int busy;
    int begun;   /* requests begun */
    int reading; /* the handler is waiting for body bytes */
    double at;   /* when the last one began or ended */
};

struct conns {
    struct conns_config cfg;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int stop;
    struct sock *socks;
    size_t nsocks, capsocks;
    struct mark *marks;
    size_t nmarks, capmarks;
    struct conns_counts counts;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int sockaddr_text(const struct sockaddr_storage *sa, char *addr, size_t size, int *port)
{
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        *port = ntohs(in->sin_port);
        return inet_ntop(AF_INET, &in->sin_addr, addr, (socklen_t)size) ? 0 : -1;
    }
    if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        *port = ntohs(in6->sin6_port);
        return inet_ntop(AF_INET6, &in6->sin6_addr, addr, (socklen_t)size) ? 0 : -1;
    }
    return -1;
}

/* The peer of fd when it is a connected socket accepted on our port. */
static int our_peer(const struct conns *g, int fd, char *addr, size_t size, int *port)
{
    struct sockaddr_storage local, peer;
    socklen_t ll = sizeof local, pl = sizeof peer;
    int local_port;
    char local_addr[64];
    if (getsockname(fd, (struct sockaddr *)&local, &ll) != 0 ||
        sockaddr_text(&local, local_addr, sizeof local_addr, &local_port) != 0 ||
        local_port != g->cfg.listen_port)
        return -1;
    if (getpeername(fd, (struct sockaddr *)&peer, &pl) != 0)
        return -1; /* the listening socket itself */
    return sockaddr_text(&peer, addr, size, port);
}

static struct mark *find_mark(struct conns *g, const char *addr, int port)
{
    for (size_t i = 0; i < g->nmarks; i++)
        if (g->marks[i].port == port && strcmp(g->marks[i].addr, addr) == 0)
            return &g->marks[i];
    return NULL;
}

static void set_mark(struct conns *g, const char *addr, int port, int busy)
{
    pthread_mutex_lock(&g->lock);
    struct mark *m = find_mark(g, addr, port);
    if (!m && g->nmarks == g->capmarks) {
        size_t cap = g->capmarks ? g->capmarks * 2 : 64;
        struct mark *grown = realloc(g->marks, cap * sizeof *grown);
        if (grown) {
            g->marks = grown;
            g->capmarks = cap;
        }
    }
    if (!m && g->nmarks < g->capmarks) {
        m = &g->marks[g->nmarks++];
        memset(m, 0, sizeof *m);
        snprintf(m->addr, sizeof m->addr, "%s", addr);
        m->port = port;
    }
    if (m) {
        m->busy = busy;
        m->begun += busy;
        m->at = now_s();
    }
    pthread_mutex_unlock(&g->lock);
}

void conns_request_begins(struct conns *g, const char *addr, int port)
{
    if (g)
        set_mark(g, addr, port, 1);
}

void conns_request_ends(struct conns *g, const char *addr, int port)
{
    if (g)
        set_mark(g, addr, port, 0);
}

void conns_body_reading(struct conns *g, const char *addr, int port, int reading)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->lock);
    struct mark *m = find_mark(g, addr, port);
    if (m)
        m->reading = reading;
    pthread_mutex_unlock(&g->lock);
}

/* Bytes received on a TCP socket since it opened (0 when unknown). */
static uint64_t bytes_received(int fd)
{
    struct tcp_info info;
    socklen_t len = sizeof info;
    memset(&info, 0, sizeof info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received)
        return 0;
    return info.tcpi_bytes_received;
}

/* Bytes waiting in the socket's send queue (sent and unacknowledged, or not sent yet) and bytes
 * the peer has acknowledged since the socket opened. -1 when unknown. */
static int send_state(int fd, uint64_t *queued, uint64_t *acked)
{
    int outq = 0;
    struct tcp_info info;
    socklen_t len = sizeof info;
    memset(&info, 0, sizeof info);
    if (ioctl(fd, SIOCOUTQ, &outq) != 0 || outq < 0 ||
        getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof info.tcpi_bytes_acked)
        return -1;
    *queued = (uint64_t)outq;
    *acked = info.tcpi_bytes_acked;
    return 0;
}

/* Follows a socket's send queue (scan). */
static void track_send(struct sock *s, double now)
{
    uint64_t queued, acked;
    if (send_state(s->fd, &queued, &acked) != 0 || queued == 0) {
        s->out_since = 0;
        return;
    }
    if (s->out_since == 0) {
        s->out_since = s->acked_moved = now;
        s->acked_at_out = s->acked = acked;
        return;
    }
    if (acked != s->acked) {
        s->acked = acked;
        s->acked_moved = now;
    }
}

/* 1 when the socket's replies are not read fast enough: nothing acknowledged for the send
 * timeout, or less than the floor on average once the queue has been full that long. */
static int send_too_slow(const struct conns *g, const struct sock *s, double now)
{
    if (s->out_since == 0 || g->cfg.send_timeout_ms <= 0)
        return 0;
    double timeout = g->cfg.send_timeout_ms / 1000.0, took = now - s->out_since;
    if (now - s->acked_moved > timeout)
        return 1;
    return g->cfg.send_min_bytes_per_s > 0 && took > timeout &&
           (double)(s->acked - s->acked_at_out) < took * g->cfg.send_min_bytes_per_s;
}

void conns_opened(struct conns *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->lock);
    g->counts.workers_in_use++;
    int short_of_workers = g->cfg.threads - g->counts.workers_in_use < g->cfg.reserve;
    pthread_mutex_unlock(&g->lock);
    if (short_of_workers)
        pthread_cond_signal(&g->wake);
}

void conns_closing(struct conns *g)
{
    if (!g)
        return;
    /* Taking the lock waits for a scan in progress: the socket is closed after this returns,
     * so the guard never shuts a descriptor number that a new connection reuses. */
    pthread_mutex_lock(&g->lock);
    g->counts.workers_in_use--;
    pthread_mutex_unlock(&g->lock);
}

void conns_counts(struct conns *g, struct conns_counts *out)
{
    memset(out, 0, sizeof *out);
    if (!g)
        return;
    pthread_mutex_lock(&g->lock);
    *out = g->counts;
    pthread_mutex_unlock(&g->lock);
}

static struct sock *find_sock(struct conns *g, int fd)
{
    for (size_t i = 0; i < g->nsocks; i++)
        if (g->socks[i].fd == fd)
            return &g->socks[i];
    return NULL;
}

/* Refreshes the socket table from /proc/self/fd. Called with the lock held. */
static void scan(struct conns *g, double now)
{
    for (size_t i = 0; i < g->nsocks; i++)
        g->socks[i].seen = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    int dfd = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end || end == e->d_name || fd == dfd)
            continue;
        char addr[64];
        int port;
        if (our_peer(g, (int)fd, addr, sizeof addr, &port) != 0)
            continue;
        struct sock *s = find_sock(g, (int)fd);
        if (!s || s->port != port || strcmp(s->addr, addr) != 0) { /* new, or fd reused */
            if (!s && g->nsocks == g->capsocks) {
                size_t cap = g->capsocks ? g->capsocks * 2 : 256;
                struct sock *grown = realloc(g->socks, cap * sizeof *grown);
                if (!grown)
                    continue;
                g->socks = grown;
                g->capsocks = cap;
            }
            if (!s)
                s = &g->socks[g->nsocks++];
            memset(s, 0, sizeof *s);
            s->fd = (int)fd;
            snprintf(s->addr, sizeof s->addr, "%s", addr);
            s->port = port;
            s->first_seen = s->idle_since = now;
        }
        s->seen = 1;
        track_send(s, now);
        struct mark *m = find_mark(g, addr, port);
        if (m) {
            if (m->busy && (!s->busy || m->begun != s->requests)) { /* a new request */
                s->busy_since = now;
                s->bytes_at_busy = bytes_received(s->fd);
            }
            s->requests = m->begun;
            s->busy = m->busy;
            if (!m->busy)
                s->idle_since = m->at > s->idle_since ? m->at : s->idle_since;
        }
    }
    closedir(d);
    /* Drop what is gone, and the marks of sockets that are gone. */
    size_t k = 0;
    for (size_t i = 0; i < g->nsocks; i++)
        if (g->socks[i].seen)
            g->socks[k++] = g->socks[i];
    g->nsocks = k;
    k = 0;
    for (size_t i = 0; i < g->nmarks; i++) {
        int live = g->marks[i].busy;
        for (size_t j = 0; j < g->nsocks && !live; j++)
            live = g->socks[j].port == g->marks[i].port &&
                   strcmp(g->socks[j].addr, g->marks[i].addr) == 0;
        if (live || now - g->marks[i].at < 1.0)
            g->marks[k++] = g->marks[i];
    }
    g->nmarks = k;
}

/* The replies sent before shutting a socket that never sent a whole request. */
struct canned {
    char text[512];
    size_t len;
};
static struct canned reply_408, reply_503, reply_408_body, reply_503_body;

static void canned_set(struct canned *c, const char *status_line, const char *extra, int status,
                       const char *slug, const char *title, const char *detail)
{
    char body[320];
    int blen = snprintf(body, sizeof body,
                        "{\"type\":\"" PROBLEM_TYPE_BASE "%s\",\"title\":\"%s\","
                        "\"status\":%d,\"detail\":\"%s\"}",
                        slug, title, status, detail);
    int n = snprintf(c->text, sizeof c->text,
                     "HTTP/1.1 %s\r\nContent-Type: application/problem+json\r\n%s"
                     "Connection: close\r\nContent-Length: %d\r\n\r\n%s",
                     status_line, extra, blen, body);
    c->len = n > 0 && (size_t)n < sizeof c->text ? (size_t)n : 0;
}

/* Ends a socket whose replies are not read: reset on close (SO_LINGER 0), so what is queued
 * is dropped rather than kept in the kernel for a peer that never reads it, and shut down, so
 * a worker blocked in a send gets an error at once. Called with the lock held. */
static void shed_reader(struct conns *g, struct sock *s)
{
    char addr[64];
    int port;
    if (s->shut || our_peer(g, s->fd, addr, sizeof addr, &port) != 0 || port != s->port ||
        strcmp(addr, s->addr) != 0)
        return;
    struct linger now = {.l_onoff = 1, .l_linger = 0};
    (void)setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &now, sizeof now);
    shutdown(s->fd, SHUT_RDWR);
    s->shut = 1;
    g->counts.shed_slow_read++;
}

/* Ends a socket: an optional reply, then shutdown (Civetweb's read returns at once and the
 * worker closes it). The peer is checked again first. Called with the lock held. */
static void shed(struct conns *g, struct sock *s, const struct canned *reply, int always)
{
    char addr[64];
    int port;
    if (s->shut || our_peer(g, s->fd, addr, sizeof addr, &port) != 0 || port != s->port ||
        strcmp(addr, s->addr) != 0)
        return;
    if (reply && (always || !s->requests) && reply->len)
        (void)send(s->fd, reply->text, reply->len, MSG_NOSIGNAL | MSG_DONTWAIT);
    shutdown(s->fd, SHUT_RDWR);
    s->shut = 1;
}

static int by_idle_since(const void *a, const void *b)
{
    const struct sock *x = *(struct sock *const *)a, *y = *(struct sock *const *)b;
    return (x->idle_since > y->idle_since) - (x->idle_since < y->idle_since);
}

/* Slowest body first. */
static int by_body_rate(const void *a, const void *b)
{
    const struct sock *x = *(struct sock *const *)a, *y = *(struct sock *const *)b;
    return (x->body_rate > y->body_rate) - (x->body_rate < y->body_rate);
}

/* Replies unread longest first. */
static int by_acked_moved(const void *a, const void *b)
{
    const struct sock *x = *(struct sock *const *)a, *y = *(struct sock *const *)b;
    return (x->acked_moved > y->acked_moved) - (x->acked_moved < y->acked_moved);
}

static void enforce(struct conns *g, double now)
{
    scan(g, now);
    double timeout = g->cfg.header_timeout_ms / 1000.0;
    struct sock **waiting = calloc(g->nsocks ? g->nsocks : 1, sizeof *waiting);
    if (!waiting)
        return;
    struct sock **stalled = calloc(g->nsocks ? g->nsocks : 1, sizeof *stalled);
    if (!stalled) {
        free(waiting);
        return;
    }
    struct sock **slowbodies = calloc(g->nsocks ? g->nsocks : 1, sizeof *slowbodies);
    if (!slowbodies) {
        free(waiting);
        free(stalled);
        return;
    }
    size_t nwaiting = 0, nstalled = 0, nslowbodies = 0;
    for (size_t i = 0; i < g->nsocks; i++) {
        struct sock *s = &g->socks[i];
        if (!s->shut && send_too_slow(g, s, now)) {
            shed_reader(g, s);
            continue;
        }
        if (!s->shut && s->out_since != 0 && now - s->acked_moved >= CONNS_PRESSURE_STALL_S)
            stalled[nstalled++] = s;
        s->body_rate = -1;
        if (s->busy && !s->shut && g->cfg.body_min_bytes_per_s > 0) {
            struct mark *m = find_mark(g, s->addr, s->port);
            double took = now - s->busy_since;
            double got = (double)(bytes_received(s->fd) - s->bytes_at_busy);
            if (m && m->reading && took > CONNS_BODY_GRACE_S &&
                got < took * g->cfg.body_min_bytes_per_s) {
                shed(g, s, &reply_408_body, 1); /* the handler's read fails: it answers no more */
                g->counts.shed_slow_body++;
            } else if (m && m->reading && took >= CONNS_PRESSURE_BODY_S) {
                s->body_rate = got / took;
                if (s->body_rate < (double)CONNS_PRESSURE_BODY_FACTOR * g->cfg.body_min_bytes_per_s)
                    slowbodies[nslowbodies++] = s;
            }
        }
        if (s->busy || s->shut)
            continue;
        if (now - s->idle_since > timeout) {
            shed(g, s, &reply_408, 0);
            g->counts.shed_timeout++;
            continue;
        }
        waiting[nwaiting++] = s;
    }
    /* One address beyond its bound: its newest waiting connections go first. */
    if (g->cfg.max_per_address > 0) {
        qsort(waiting, nwaiting, sizeof *waiting, by_idle_since);
        for (size_t i = nwaiting; i-- > 0;) {
            struct sock *s = waiting[i];
            int same = 0;
            for (size_t j = 0; j < g->nsocks; j++)
                same += !g->socks[j].shut && strcmp(g->socks[j].addr, s->addr) == 0;
            if (same > g->cfg.max_per_address) {
                shed(g, s, &reply_503, 0);
                g->counts.shed_address++;
            }
        }
    }
    /* Short of free workers: the longest-waiting go, oldest first. */
    long in_use = 0;
    for (size_t i = 0; i < g->nsocks; i++)
        in_use += !g->socks[i].shut;
    long limit = g->cfg.threads - g->cfg.reserve;
    /* First the connections whose replies have not been read for half a second (a client
     * reading its replies acknowledges them within a round trip), the longest-stalled first. */
    qsort(stalled, nstalled, sizeof *stalled, by_acked_moved);
    for (size_t i = 0; i < nstalled && in_use > limit; i++) {
        if (stalled[i]->shut)
            continue;
        shed_reader(g, stalled[i]);
        in_use--;
    }
    qsort(waiting, nwaiting, sizeof *waiting, by_idle_since);
    for (size_t i = 0; i < nwaiting && in_use > limit; i++) {
        struct sock *s = waiting[i];
        if (s->shut || now - s->idle_since < CONNS_PRESSURE_MIN_WAIT_S)
            continue;
        shed(g, s, &reply_408, 0);
        g->counts.shed_pressure++;
        in_use--;
    }
    /* Still short: bodies trickling in above the floor but far below a real upload's rate
     * (CONNS_PRESSURE_BODY_FACTOR × the floor), slowest first — else a few hundred of them,
     * each just above the floor, would hold every worker for a whole 1 GiB upload. */
    qsort(slowbodies, nslowbodies, sizeof *slowbodies, by_body_rate);
    for (size_t i = 0; i < nslowbodies && in_use > limit; i++) {
        if (slowbodies[i]->shut)
            continue;
        shed(g, slowbodies[i], &reply_503_body, 1);
        g->counts.shed_slow_body++;
        in_use--;
    }
    free(waiting);
    free(stalled);
    free(slowbodies);
}

static void *guard_run(void *arg)
{
    struct conns *g = arg;
    pthread_mutex_lock(&g->lock);
    while (!g->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += CONNS_TICK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&g->wake, &g->lock, &until);
        if (!g->stop)
            enforce(g, now_s());
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

struct conns *conns_start(const struct conns_config *cfg)
{
    struct conns *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->cfg = *cfg;
    canned_set(&reply_408, "408 Request Timeout", "", 408, "request-timeout", "Request timeout",
               "the request headers did not arrive in time");
    char slow[160];
    snprintf(slow, sizeof slow, "the body arrived slower than %d bytes per second",
             cfg->body_min_bytes_per_s);
    canned_set(&reply_408_body, "408 Request Timeout", "", 408, "request-timeout",
               "Request timeout", slow);
    canned_set(&reply_503_body, "503 Service Unavailable", "Retry-After: 5\r\n", 503, "server-busy",
               "Server busy",
               "the server is short of workers and this body is arriving too slowly");
    canned_set(&reply_503, "503 Service Unavailable", "Retry-After: 5\r\n", 503,
               "too-many-connections", "Too many connections",
               "this address holds too many connections");
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->wake, NULL);
    if (pthread_create(&g->thread, NULL, guard_run, g) != 0) {
        pthread_mutex_destroy(&g->lock);
        pthread_cond_destroy(&g->wake);
        free(g);
        return NULL;
    }
    return g;
}

void conns_stop(struct conns *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->lock);
    g->stop = 1;
    pthread_mutex_unlock(&g->lock);
    pthread_cond_signal(&g->wake);
    pthread_join(g->thread, NULL);
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->wake);
    free(g->socks);
    free(g->marks);
    free(g);
}
