/* CSV cells for line-oriented uploads (offer price sheets).
 *
 * csv_split splits ONE line (the caller's line splitter, core/linebuf, has already removed the
 * line ending and refused NUL bytes and invalid UTF-8) into cells with RFC 4180 quoting: a cell
 * that starts with '"' runs to the matching quote, "" inside it is one quote, and the delimiter
 * inside quotes is text. A quoted cell may not span lines, because the caller streams line by
 * line and a quote left open would swallow the rest of the upload into one cell. Bytes are
 * copied as they are (a NUL or a non-UTF-8 byte passed in is kept, and counted in len).
 *
 * csv_cell_json turns one cell into the JSON value a field of the given kind expects, so a CSV
 * sheet and a JSON body go through the same validator. It does not judge the value: a cell that
 * is not a number for a number field stays a string, and the validator names it.
 *
 * The GenAI-Perf reader (core/formats/loadtest.c) has its own record reader: it reads a whole file,
 * where a quoted cell may hold newlines, and keeps only short cells. */
#ifndef CAPLEDGER_CORE_CSV_H
#define CAPLEDGER_CORE_CSV_H

#include <jansson.h>
#include <stddef.h>

#define CSV_MAX_CELLS 256

struct csv_row {
    size_t n;                        /* cells in the last line split */
    const char *cell[CSV_MAX_CELLS]; /* point into scratch; NUL-terminated */
    size_t len[CSV_MAX_CELLS];       /* bytes of each cell, without its NUL */
    char *scratch;                   /* owned; reused by the next split */
    size_t cap;
};

void csv_row_init(struct csv_row *row);
/* Frees the scratch space; the row may be split into again after csv_row_init. */
void csv_row_free(struct csv_row *row);

/* Splits line[0..len) on delim into row (the cells stay valid until the next split or free).
 * An empty line is one empty cell; "a," is two cells, the second empty. Returns 0, or -1 with
 * *bad_column (1-based cell number) set for an unterminated quote, text after a closing quote,
 * more than CSV_MAX_CELLS cells (column CSV_MAX_CELLS + 1), or no memory (column 1). */
int csv_split(struct csv_row *row, const char *line, size_t len, char delim, long *bad_column)
    __attribute__((warn_unused_result));

enum csv_cell_kind {
    CSV_CELL_TEXT,    /* always a string */
    CSV_CELL_INTEGER, /* an int64 when the cell is one, else the string */
    CSV_CELL_NUMBER,  /* an int64, else a finite double, else the string */
    CSV_CELL_BOOL,    /* true/yes/1, false/no/0 (any case), else the string */
};

/* The cell's JSON value (a new reference) after trimming spaces and tabs: NULL for an empty
 * cell (an absent field), or for text jansson refuses (invalid UTF-8). */
json_t *csv_cell_json(const char *cell, size_t len, enum csv_cell_kind kind)
    __attribute__((warn_unused_result));

#endif
