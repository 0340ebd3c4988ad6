/* Rows in PostgreSQL COPY text format, built in a growable buffer.
 *
 * Bulk uploads go to the database through COPY ... FROM STDIN (row-by-row inserts cap near
 * 5k rows/s; COPY reaches 200-330k). The readers render each parsed row here; the HTTP layer
 * hands the bytes to libpq. Fields are separated by tabs, rows end with LF, NULL is \N, and
 * backslash, tab, LF, CR (and the other C0 escapes COPY knows) are backslash-escaped.
 *
 * Errors are sticky: appends after an allocation failure do nothing and pgcopy_ok() says so,
 * so a row is rendered with straight-line code and checked once. */
#ifndef CAPLEDGER_CORE_PGCOPY_H
#define CAPLEDGER_CORE_PGCOPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pgcopy_buf {
    char *data; /* owned; not NUL-terminated */
    size_t len;
    size_t cap;
    bool oom;
};

void pgcopy_init(struct pgcopy_buf *b);
void pgcopy_free(struct pgcopy_buf *b);
/* Empties the buffer, keeping its memory (and clearing a sticky failure). */
void pgcopy_reset(struct pgcopy_buf *b);
/* false when an append ran out of memory since the last reset. */
bool pgcopy_ok(const struct pgcopy_buf *b) __attribute__((warn_unused_result));

/* Field separator and row terminator. */
void pgcopy_tab(struct pgcopy_buf *b);
void pgcopy_end_row(struct pgcopy_buf *b);
/* A text field, escaped; NULL → \N. */
void pgcopy_text(struct pgcopy_buf *b, const char *s);
/* A number in its shortest round-trip form; NaN → \N. */
void pgcopy_double(struct pgcopy_buf *b, double v);
/* RFC 3339 UTC timestamp (milliseconds shown only when non-zero); present false → \N. */
void pgcopy_time_ms(struct pgcopy_buf *b, int64_t epoch_ms, bool present);

#endif
