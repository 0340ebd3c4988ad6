/* Slow and idle clients. Civetweb runs one worker thread per connection, so a client that
 * trickles its request headers holds a worker for as long as it likes (request_timeout_ms
 * bounds only each read). The guard's own thread looks at the process's sockets on the
 * listening port and ends, by shutting the socket down:
 *   - a connection that has not sent a whole request within header_timeout_ms of its start
 *     (or of its previous reply, when kept alive) — with a 408 when it never sent one;
 *   - when fewer than `reserve` workers are free, connections waiting for headers for at least
 *     a second (a real client sends them at once), longest first, until the reserve is free;
 *   - connections of an address beyond max_per_address (the newest first, 503 + Retry-After);
 *   - a request whose handler is waiting for its body when, over its first 10 s or more, the
 *     body has come slower than body_min_bytes_per_s (408) — Civetweb's read would otherwise
 *     wait as long as a byte trickles in now and then. Progress is the kernel's count of bytes
 *     received on the socket (TCP_INFO), so a handler blocked in one read is measured too;
 *   - a connection whose replies are not being read (slow_read): bytes wait in its send queue
 *     (SIOCOUTQ) and the peer has acknowledged none of them for send_timeout_ms, or, after that
 *     long, fewer than send_min_bytes_per_s on average since the queue last was empty
 *     (TCP_INFO tcpi_bytes_acked). Civetweb's send would otherwise wait for ever (its
 *     request_timeout_ms does not end a blocked write), and a client pipelining requests for a
 *     large reply and reading nothing holds a worker per connection. The socket is reset
 *     (SO_LINGER 0, then shutdown): the blocked send fails at once, the worker closes it, and
 *     the queued replies are dropped instead of lingering in the kernel;
 *   - when the reserve is short, connections whose replies have not been read for 0.5 s go
 *     before those waiting for headers, the longest-stalled first.
 * A request being handled is never touched otherwise. */
#ifndef CAPLEDGER_HTTP_CONNS_H
#define CAPLEDGER_HTTP_CONNS_H

struct conns_config {
    int threads;              /* Civetweb's num_threads */
    int reserve;              /* workers kept free by shedding clients that are slow to send */
    int max_per_address;      /* 0: no bound */
    int header_timeout_ms;    /* a request's headers must have arrived by then */
    int body_min_bytes_per_s; /* 0: no floor */
    int send_timeout_ms;      /* a pending reply not read for this long ends the connection */
    int send_min_bytes_per_s; /* 0: no floor */
    int listen_port;          /* our sockets among the process's descriptors */
};

struct conns_counts {
    long workers_in_use; /* connections Civetweb has handed out */
    long shed_timeout, shed_pressure, shed_address, shed_slow_body,
        shed_slow_read; /* since start */
};

struct conns;

struct conns *conns_start(const struct conns_config *cfg);
void conns_stop(struct conns *g);

/* From Civetweb's callbacks: a worker took a connection / is closing it (the socket is still
 * open during conns_closing: the guard never shuts a descriptor that is being reused). */
void conns_opened(struct conns *g);
void conns_closing(struct conns *g);
/* Around each request handler, with the client's address and port. */
void conns_request_begins(struct conns *g, const char *addr, int port);
void conns_request_ends(struct conns *g, const char *addr, int port);
/* Around each read of a request body (req_read). */
void conns_body_reading(struct conns *g, const char *addr, int port, int reading);

void conns_counts(struct conns *g, struct conns_counts *out);

#endif
