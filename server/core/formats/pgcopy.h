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

/* n raw bytes (no escaping). */
void pgcopy_append(struct pgcopy_buf *b, const char *s, size_t n);
/* Field separator and row terminator. */
void pgcopy_tab(struct pgcopy_buf *b);
void pgcopy_end_row(struct pgcopy_buf *b);
/* A text field, escaped; NULL → \N. */
void pgcopy_text(struct pgcopy_buf *b, const char *s);
/* A number in its shortest round-trip form; NaN → \N. */
void pgcopy_double(struct pgcopy_buf *b, double v);
/* RFC 3339 UTC timestamp (milliseconds shown only when non-zero); present false → \N. */
void pgcopy_time_ms(struct pgcopy_buf *b, int64_t epoch_ms, bool present);

/* COPY … (FORMAT binary): PostgreSQL then reads each value with its binary receive function
 * instead of parsing text (timestamptz and float8 input dominate a text COPY of runs). A stream
 * is the header, rows (a field count, then each field as a 32-bit big-endian length and its
 * bytes, or length -1 for NULL) and the trailer. */
void pgcopy_bin_header(struct pgcopy_buf *b);
void pgcopy_bin_trailer(struct pgcopy_buf *b);
/* Starts a row of nfields fields. */
void pgcopy_bin_row(struct pgcopy_buf *b, uint16_t nfields);
void pgcopy_bin_null(struct pgcopy_buf *b);
/* A text field (s NULL → NULL). */
void pgcopy_bin_text(struct pgcopy_buf *b, const char *s);
/* An int8 field. */
void pgcopy_bin_int8(struct pgcopy_buf *b, int64_t v);
/* Overwrites the value of an int8 field already appended; field points at its length word. */
void pgcopy_bin_set_int8(char *field, int64_t v);
/* A float8 field; NaN and infinities → NULL (as pgcopy_double). */
void pgcopy_bin_double(struct pgcopy_buf *b, double v);
/* A timestamptz field from epoch seconds; present false → NULL. */
void pgcopy_bin_time_s(struct pgcopy_buf *b, int64_t epoch_s, bool present);
/* A uuid field from its text form (36 characters, hex and hyphens); false (nothing appended)
 * when it is not one. */
bool pgcopy_bin_uuid(struct pgcopy_buf *b, const char *text) __attribute__((warn_unused_result));

#endif
