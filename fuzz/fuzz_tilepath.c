/* Fuzz target for core/ledger/tile's C2SP tlog-tiles path parsers (tile_path_parse, and
 * tile_path_read, which the HTTP routes use): an accepted path names a level 0..7 or "entries"
 * (tile_path_read: 0..63 or "entries"), a width 1..256, and is canonical — tile_path writes it
 * back as exactly the input; the two agree; a refused path names one part. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/tile.h"
#include "oracle/tile_path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 128)
        return 0;
    char text[129];
    memcpy(text, data, size);
    text[size] = '\0';
    unsigned level;
    uint64_t index;
    size_t width;
    unsigned rlevel = 0;
    uint64_t rindex = 0;
    size_t rwidth = 0;
    enum tile_path_part part = tile_path_read(text, &rlevel, &rindex, &rwidth);
    if (part != TILE_PATH_OK && !tile_path_part_name(part)[0])
        abort();
    if (part == TILE_PATH_OK &&
        ((rlevel > TILE_LEVEL_MAX && rlevel != TILE_ENTRIES) || rwidth == 0 || rwidth > TILE_WIDTH))
        abort();
    /* tile_in_tree never overflows: any size, any parsed tile. */
    if (part == TILE_PATH_OK && rlevel >= TILE_LEVELS && rlevel != TILE_ENTRIES &&
        tile_in_tree(UINT64_MAX, rlevel, rindex, rwidth))
        abort();
    if (tile_path_parse(text, &level, &index, &width) != 0) {
        if (part == TILE_PATH_OK && (rlevel < TILE_LEVELS || rlevel == TILE_ENTRIES))
            abort();
        return 0;
    }
    if (part != TILE_PATH_OK || rlevel != level || rindex != index || rwidth != width)
        abort();
    if ((level >= TILE_LEVELS && level != TILE_ENTRIES) || width == 0 || width > TILE_WIDTH)
        abort();
    char back[96];
    int n = tile_path(level, index, width, back, sizeof back);
    /* A NUL inside the input ends the parsed text: compare with what was parsed. */
    if (n < 5 || strcmp(back + 5, text) != 0)
        abort();
    return 0;
}
