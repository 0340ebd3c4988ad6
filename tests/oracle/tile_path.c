/* Test oracle: tile paths written and read back (tile_path.h). */
#include "oracle/tile_path.h"

#include <stdio.h>
#include <string.h>

int tile_path(unsigned level, uint64_t index, size_t width, char *out, size_t size)
{
    char digits[32];
    int nd = snprintf(digits, sizeof digits, "%llu", (unsigned long long)index);
    /* Pad to a multiple of three digits, then one path element per group. */
    int groups = (nd + 2) / 3, pad = groups * 3 - nd;
    char padded[40];
    memset(padded, '0', (size_t)pad);
    memcpy(padded + pad, digits, (size_t)nd + 1);
    size_t at = 0;
    int w = level == TILE_ENTRIES ? snprintf(out, size, "tile/entries/")
                                  : snprintf(out, size, "tile/%u/", level);
    if (w < 0 || (size_t)w >= size)
        return -1;
    at = (size_t)w;
    for (int g = 0; g < groups; g++) {
        w = snprintf(out + at, size - at, "%s%.3s%s", g < groups - 1 ? "x" : "", padded + 3 * g,
                     g < groups - 1 ? "/" : "");
        if (w < 0 || (size_t)w >= size - at)
            return -1;
        at += (size_t)w;
    }
    if (width < TILE_WIDTH) {
        w = snprintf(out + at, size - at, ".p/%zu", width);
        if (w < 0 || (size_t)w >= size - at)
            return -1;
        at += (size_t)w;
    }
    return (int)at;
}

int tile_path_parse(const char *text, unsigned *level, uint64_t *index, size_t *width)
{
    unsigned l = 0;
    uint64_t n = 0;
    size_t w = 0;
    if (tile_path_read(text, &l, &n, &w) != TILE_PATH_OK || (l >= TILE_LEVELS && l != TILE_ENTRIES))
        return -1;
    *level = l;
    *index = n;
    *width = w;
    return 0;
}
