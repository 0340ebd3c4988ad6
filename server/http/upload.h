/* Streaming text uploads: the body is read in 64 KiB chunks with req_read and split into lines
 * by core/linebuf, so memory stays at one chunk plus the longest line however large the
 * upload. The reader also counts bytes against the upload limit, computes the SHA-256 of the
 * body for the upload record, and feeds the Idempotency-Key digest.
 *
 * CSV lines are split into cells by core/csv (included here for the price-sheet handler). */
#ifndef CAPLEDGER_HTTP_UPLOAD_H
#define CAPLEDGER_HTTP_UPLOAD_H

#include <sodium.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/formats/csv.h"
#include "core/formats/linebuf.h"
#include "http/idempotency.h"
#include "http/internal.h"
#include "http/upload_sniff.h"

struct idem;

#define UPLOAD_CHUNK_BYTES 65536

struct upload_stream {
    struct req *r;
    struct idem *idem; /* may be NULL */
    struct linebuf lb;
    crypto_hash_sha256_state sha;
    size_t bytes;    /* body bytes read so far */
    size_t limit;    /* r->app->cfg->max_upload_bytes */
    int eof;         /* the body ended (or reading stopped) */
    int read_failed; /* the connection broke before the declared end */
    int too_large;   /* more than limit bytes: reading stopped */
    int oom;         /* the line buffer could not grow */
    char chunk[UPLOAD_CHUNK_BYTES];
};

/* A streamed upload that holds a database connection while its body arrives (runs,
 * telemetry), or a large body read whole (load-test outputs, catalogs, price sheets) takes an
 * upload slot first: at most a quarter of the pool (at least 1) at once,
 * and UPLOAD_PER_USER per user, so slow bodies cannot take every connection (a body may come
 * as slowly as CAPLEDGER_BODY_MIN_RATE allows: 1 GiB at 4 KiB/s lasts three days). Answers 503
 * (every slot busy) or 429 (the caller's own limit) with Retry-After and returns -1. The
 * upload driver (upload_run) takes it and gives it back before any reply is written. */
#define UPLOAD_PER_USER 2
int upload_slot_enter(struct req *r) __attribute__((warn_unused_result));
/* The same on a route whose bodies are mostly small (POST /offers): a slot only for a body
 * declared over the JSON body limit (1 MiB) or sent chunked (of unknown length). */
int upload_slot_enter_if_large(struct req *r) __attribute__((warn_unused_result));
void upload_slot_leave(struct req *r);

/* max_line_bytes 0 → linebuf's default (1 MiB). u is large: allocate it (upload_stream_new). */
struct upload_stream *upload_stream_new(struct req *r, struct idem *idem, size_t max_line_bytes);
void upload_stream_free(struct upload_stream *u);

/* The next line (or a line fault, see linebuf.h). LINEBUF_NEED_MORE means the body is over:
 * then check read_failed / too_large / oom. */
enum linebuf_status upload_next_line(struct upload_stream *u, struct linebuf_line *line)
    __attribute__((warn_unused_result));

/* Reads ahead (without consuming) until at least want bytes are buffered or the body ends,
 * and points *data at what is buffered: for guessing a format from the first bytes. */
/* The next line that reads as text, passing over line faults: each is reported to p (see
 * linebuf_report) and counted in *faults when faults is not NULL. Returns 1 with *line set, 0
 * when the body is over (then check read_failed / too_large / oom). */
int upload_next_text_line(struct upload_stream *u, struct linebuf_line *line, struct problems *p,
                          long *faults) __attribute__((warn_unused_result));

void upload_peek(struct upload_stream *u, size_t want, const char **data, size_t *len);

/* Reads the rest of the body without splitting it (after a fatal fault), hashing it. */
void upload_drain(struct upload_stream *u);

/* SHA-256 hex of everything read (call once, at the end). */
void upload_digest_hex(struct upload_stream *u, char hex[65]);

/* Answers the transport faults (400 body ended early, 413 too large, 503 out of memory);
 * returns 1 when one of them was answered. */
int upload_reply_transport_fault(struct upload_stream *u);

/* Local times of an IANA zone (?tz=) → UTC, for core/timefmt's callback. PostgreSQL's zone
 * database does the conversion (the C library's only per-zone interface is the process-wide
 * TZ variable, unsafe to change under other threads); the last local hour is cached, so a
 * sorted million-line upload needs about one query per hour of data it covers. */
struct upload_tz {
    struct store *store;
    char name[64];
    int cached;
    int y, mo, d, h;    /* the cached local hour */
    int64_t hour_utc_s; /* its start in UTC */
};

/* Returns 0 when name is a zone PostgreSQL knows, -1 when it is not, -2 when the database
 * could not be asked. */
int upload_tz_init(struct upload_tz *tz, struct store *store, const char *name)
    __attribute__((warn_unused_result));
/* timefmt_local_to_utc_fn with ctx = struct upload_tz *. */
int upload_tz_local_to_utc(const struct tm *local, void *ctx, int64_t *epoch_s);

/* The query parameters of every streamed upload: ?fields= (the tool's column list when its
 * output has no header line), ?tz= (the zone of times printed without an offset) and
 * ?atomic=true (nothing kept if any line fails). */
struct upload_params {
    char fields[4096], tz_name[64];
    const char *fields_p; /* NULL when not given */
    int has_tz, atomic_on;
    struct upload_tz tz;
};

/* Reads them, adding a problem for each bad one (fields_hint says what ?fields= lists), and
 * checks the zone with the database. Returns 0, or -1 when the database could not be asked
 * (answer 503). */
int upload_params_read(struct req *r, struct upload_params *up, const char *fields_hint,
                       struct problems *p) __attribute__((warn_unused_result));
/* Adds them to an upload record's params object (borrowed). */
void upload_params_json(const struct upload_params *up, json_t *params);

/* The upload driver: every streamed upload route is upload_run(r, &ITS_KIND), and the protocol
 * is written here once, in this order:
 *   1. Idempotency-Key claim (idem_begin_stream); a refused request's unread body is read and
 *      dropped before its reply (unless the client still waits for 100 Continue: then the
 *      connection closes), and the upload slot is back before any reply is written;
 *   2. the media type against the kind's types (415), which also say how the body is read;
 *   3. the kind's query parameters and references (kind->params: problems → 422);
 *   4. a stream of lines (kind->open may peek at the first bytes: format, sniffing);
 *   5. an upload slot (UPLOAD_PER_USER per user, a quarter of the pool: 429 / 503);
 *   6. the kind's store transaction (kind->store.begin);
 *   7. the body: lines through kind->body.read, or the whole body (bounded by whole_max: 413)
 *      for body.read to parse; then the rest is drained and the transport faults answered (400
 *      body ended early, 413, 503 out of memory);
 *   8. kind->body.settle (the store's or the reader's own fault, answered after the body);
 *   9. the verdict on faulty lines, in kind->says' words: the reader gave up (unreadable),
 *      faults under ?atomic=true or in an all-or-nothing kind (faulty), no record but faults
 *      (none_valid), nothing at all (kind->body.empty) — refused whole with upload_refuse,
 *      naming what the file looks like;
 *  10. the upload record (id, kind, team, format, bytes, SHA-256) and kind->store.finish,
 *      which stores it with the records and builds the reply, answered through the
 *      Idempotency-Key;
 *  11. kind->store.abort (always: rolls back what finish did not commit, frees the kind's
 *      state).
 * A kind's step answers itself (403, 404, 503, 400) only by the usual resp_* helpers and then
 * returns -1. */
enum upload_slot_rule {
    UPLOAD_SLOT_ALWAYS,   /* every upload holds a slot */
    UPLOAD_SLOT_IF_LARGE, /* only a body declared over the JSON limit or sent chunked */
};

enum upload_body {
    UPLOAD_LINES, /* streamed a line at a time (u->stream) */
    UPLOAD_WHOLE, /* read whole into u->body (at most whole_max bytes) */
};

/* One media type a kind takes and how its body is read; format names it in the record when
 * the kind does not decide it from the content. */
struct upload_type {
    const char *media;
    enum upload_body body;
    const char *format;
};

struct upload;

/* The most media types a kind takes. */
#define UPLOAD_TYPES_MAX 6

/* A kind's steps over the body (7–9 above): read turns it into records (u->accepted,
 * u->fatal, faults into u->errs; required), settle answers the store's or the reader's own
 * fault found after it (optional), empty adds the problem of an upload without a record and
 * returns 1 to refuse it (optional). read and settle return 0 to go on, -1 after answering. */
struct upload_body_steps {
    int (*read)(struct upload *u);
    int (*settle)(struct upload *u);
    int (*empty)(struct upload *u);
};

/* The kind's store trio: a transaction opened before the body (begin, optional), committed
 * with the upload record (finish: the reply and its status, or NULL after answering), rolled
 * back otherwise (abort: always called; it also frees the kind's state). */
struct upload_store {
    enum store_status (*begin)(struct upload *u);
    json_t *(*finish)(struct upload *u, json_t *rec, int *status);
    void (*abort)(struct upload *u);
};

/* The sentences that refuse a whole upload (step 9), each the 422's detail. */
struct upload_says {
    const char *unreadable; /* the reader gave up (u->fatal) */
    const char *faulty;     /* faulty lines refuse it (?atomic=true, or all_or_nothing) */
    const char *none_valid; /* no record was read and lines had faults (NULL: faulty) */
};

/* One upload kind, each fact stated once; a kind leaves out what it does not use and what is
 * the default: slot UPLOAD_SLOT_ALWAYS, whole_what "JSON". */
struct upload_kind {
    const char *kind; /* the upload record's kind: "telemetry", "runs", …; it also names the
                         resource in a store fault */
    struct upload_type types[UPLOAD_TYPES_MAX]; /* the media types it takes (the rest zero) */
    const char *types_hint; /* the 415 detail, before ", not '<the type sent>'" */
    enum upload_slot_rule slot;
    size_t whole_max;       /* UPLOAD_WHOLE: the most bytes */
    const char *whole_what; /* names such a body in its 413: "a load-test output" */
    size_t state_size;      /* the kind's own state (u->state), zeroed */
    int all_or_nothing;     /* any faulty line refuses the whole upload */
    /* Steps before the body (3 and 4 above), optional: 0 to go on, -1 after answering. */
    int (*params)(struct upload *u);
    int (*open)(struct upload *u);
    struct upload_body_steps body;
    struct upload_store store;
    struct upload_says says;
};

struct upload {
    struct req *r;
    const struct upload_kind *kind;
    const struct upload_type *type; /* the media type sent */
    struct idem *idem;
    void *state;                  /* the kind's (state_size bytes) */
    struct problems errs;         /* query parameters, then faulty lines */
    struct upload_stream *stream; /* UPLOAD_LINES */
    char *body;                   /* UPLOAD_WHOLE: NUL-terminated */
    size_t bytes;                 /* body bytes */
    char sha[65];                 /* their SHA-256 */
    char id[37];                  /* the upload's id */
    const char *team;             /* the record's team (NULL: none) */
    const char *format;           /* the record's format (type->format unless set) */
    int atomic;                   /* ?atomic=true */
    int fatal;                    /* the reader gave up */
    long accepted;                /* records read */
    struct upload_guess guess;    /* what the file looks like (upload_guess), for refusals */
};

void upload_run(struct req *r, const struct upload_kind *kind);

/* For a step that refuses the upload once it has seen the first bytes (kind->open): the rest
 * of the body is drained and a transport fault answered (returns -1, answered), else the
 * digest and size are set (0). The driver calls it after kind->body.read. */
int upload_body_end(struct upload *u) __attribute__((warn_unused_result));

#endif
