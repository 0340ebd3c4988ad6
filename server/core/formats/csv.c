/* CSV line splitting and cell conversion; see csv.h. */
#include "core/formats/csv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/formats/textnum.h"

void csv_row_init(struct csv_row *row)
{
    memset(row, 0, sizeof *row);
}

void csv_row_free(struct csv_row *row)
{
    free(row->scratch);
    memset(row, 0, sizeof *row);
}

int csv_split(struct csv_row *row, const char *line, size_t len, char delim, long *bad_column)
{
    /* Unescaping only shrinks a cell, and each cell gains one NUL: len + cells bytes suffice. */
    size_t need = len + CSV_MAX_CELLS + 1;
    if (need > row->cap) {
        char *grown = realloc(row->scratch, need);
        if (!grown) {
            *bad_column = 1;
            return -1;
        }
        row->scratch = grown;
        row->cap = need;
    }
    char *out = row->scratch;
    size_t i = 0;
    row->n = 0;
    for (;;) {
        if (row->n == CSV_MAX_CELLS) {
            *bad_column = CSV_MAX_CELLS + 1;
            return -1;
        }
        char *start = out;
        if (i < len && line[i] == '"') {
            i++;
            for (;;) {
                if (i >= len) {
                    *bad_column = (long)row->n + 1; /* unterminated quote */
                    return -1;
                }
                if (line[i] == '"') {
                    if (i + 1 < len && line[i + 1] == '"') {
                        *out++ = '"';
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                *out++ = line[i++];
            }
            if (i < len && line[i] != delim) {
                *bad_column = (long)row->n + 1; /* text after the closing quote */
                return -1;
            }
        } else {
            while (i < len && line[i] != delim)
                *out++ = line[i++];
        }
        *out++ = '\0';
        row->cell[row->n] = start;
        row->len[row->n] = (size_t)(out - start - 1);
        row->n++;
        if (i >= len)
            return 0;
        i++; /* the delimiter */
    }
}

json_t *csv_cell_json(const char *cell, size_t len, enum csv_cell_kind kind)
{
    textnum_trim(&cell, &len);
    if (len == 0)
        return NULL;
    if (kind == CSV_CELL_NUMBER || kind == CSV_CELL_INTEGER) {
        int64_t i;
        double d;
        if (textnum_parse_int64(cell, len, &i))
            return json_integer((json_int_t)i);
        if (kind == CSV_CELL_NUMBER && textnum_parse_double(cell, len, &d))
            return json_real(d);
    } else if (kind == CSV_CELL_BOOL) {
        static const char *const yes[] = {"true", "yes", "1"}, *const no[] = {"false", "no", "0"};
        for (size_t k = 0; k < sizeof yes / sizeof yes[0]; k++) {
            if (textnum_equals_word(cell, len, yes[k]))
                return json_true();
            if (textnum_equals_word(cell, len, no[k]))
                return json_false();
        }
    }
    return json_stringn(cell, len);
}
