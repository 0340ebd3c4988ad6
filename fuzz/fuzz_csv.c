/* Fuzz target for core/csv: the first byte picks the delimiter (',' or ';') and the cell kind;
 * the rest is one line. A line that splits must split again to the same cells after each cell
 * is written back quoted (RFC 4180 round trip, reusing the row's scratch space); a refusal must
 * name a column in 1..CSV_MAX_CELLS + 1; every cell converts to a JSON value or to nothing. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats/csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes the row back with every cell quoted; returns a malloc'd line of *len bytes. */
static char *quote_row(const struct csv_row *row, char delim, size_t *len)
{
    size_t cap = 1;
    for (size_t c = 0; c < row->n; c++)
        cap += 2 * row->len[c] + 3;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t c = 0; c < row->n; c++) {
        if (c > 0)
            out[k++] = delim;
        out[k++] = '"';
        for (size_t i = 0; i < row->len[c]; i++) {
            if (row->cell[c][i] == '"')
                out[k++] = '"';
            out[k++] = row->cell[c][i];
        }
        out[k++] = '"';
    }
    *len = k;
    return out;
}

static int same_cells(const struct csv_row *a, char **cells, const size_t *lens, size_t n)
{
    if (a->n != n)
        return 0;
    for (size_t c = 0; c < n; c++)
        if (a->len[c] != lens[c] || memcmp(a->cell[c], cells[c], lens[c]) != 0)
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t mode = data[0];
    char delim = (mode & 1) ? ';' : ',';
    enum csv_cell_kind kind = (enum csv_cell_kind)((mode >> 1) & 3);
    const char *line = (const char *)data + 1;
    size_t len = size - 1;

    struct csv_row row;
    csv_row_init(&row);
    long bad = 0;
    if (csv_split(&row, line, len, delim, &bad) != 0) {
        if (bad < 1 || bad > CSV_MAX_CELLS + 1)
            abort();
        csv_row_free(&row);
        return 0;
    }
    size_t total = 0;
    char *cells[CSV_MAX_CELLS];
    size_t lens[CSV_MAX_CELLS], n = row.n;
    for (size_t c = 0; c < n; c++) {
        if (row.cell[c][row.len[c]] != '\0')
            abort();
        total += row.len[c];
        cells[c] = malloc(row.len[c] + 1);
        if (!cells[c])
            abort();
        memcpy(cells[c], row.cell[c], row.len[c]);
        lens[c] = row.len[c];
        json_t *v = csv_cell_json(row.cell[c], row.len[c], kind);
        if (json_is_real(v) && !isfinite(json_real_value(v)))
            abort();
        if (kind == CSV_CELL_TEXT && v && !json_is_string(v))
            abort();
        json_decref(v);
    }
    if (total + (n - 1) > len) /* the delimiters between cells are not in any cell */
        abort();

    size_t qlen;
    char *quoted = quote_row(&row, delim, &qlen);
    if (quoted) {
        if (csv_split(&row, quoted, qlen, delim, &bad) != 0 || !same_cells(&row, cells, lens, n))
            abort();
        free(quoted);
    }
    for (size_t c = 0; c < n; c++)
        free(cells[c]);
    csv_row_free(&row);
    return 0;
}
