/* Fuzz target for core/ledger/tile's C2SP tlog-tiles path parser (tile_path_parse): an accepted
 * path names a level 0..7 or "entries", a width 1..256, and is canonical — tile_path writes it
 * back as exactly the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ledger/tile.h"

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
    if (tile_path_parse(text, &level, &index, &width) != 0)
        return 0;
    if ((level >= TILE_LEVELS && level != TILE_ENTRIES) || width == 0 || width > TILE_WIDTH)
        abort();
    char back[96];
    int n = tile_path(level, index, width, back, sizeof back);
    /* A NUL inside the input ends the parsed text: compare with what was parsed. */
    if (n < 5 || strcmp(back + 5, text) != 0)
        abort();
    return 0;
}
