/* Test oracle: C2SP tlog-tiles paths written and read back. The server only reads paths
 * (core/ledger/tile.h: tile_path_read); tests and the fuzz target render paths with tile_path
 * and check that reading gives back what was written. Built only into tests (CMake's
 * capledger_test_oracle). */
#ifndef CAPLEDGER_TESTS_ORACLE_TILE_PATH_H
#define CAPLEDGER_TESTS_ORACLE_TILE_PATH_H

#include <stddef.h>
#include <stdint.h>

#include "core/ledger/tile.h"

/* C2SP tlog-tiles path of tile (level, index) of width w ("tile/0/x001/234.p/7"; the ".p/<w>"
 * suffix only when w < 256), into out (size bytes; 64 is enough). Entry bundles use
 * level_name "entries" ("tile/entries/..."): pass level = TILE_ENTRIES. Returns the length, or
 * -1 when it does not fit. */
int tile_path(unsigned level, uint64_t index, size_t width, char *out, size_t size)
    __attribute__((warn_unused_result));

/* Parses the part of a tlog-tiles path after "tile/": "<L>/<N>" or "<L>/<N>.p/<W>", L a level
 * 0..TILE_LEVELS-1 or "entries", N in the spec's x-prefixed groups of three digits (every
 * group but the last written "xNNN"), W 1..255. Returns 0, or -1 for anything else (a
 * non-canonical encoding included: leading zeros, an empty group, a width of 256): the
 * server's reader (tile_path_read) limited to the levels a tree of this server has. */
int tile_path_parse(const char *text, unsigned *level, uint64_t *index, size_t *width)
    __attribute__((warn_unused_result));

#endif
