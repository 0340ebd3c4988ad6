/* Durations as people type them on a command line: "15s", "10m", "1h", "1h30m", "500ms" — one
 * or more <digits><unit> parts, units ms, s, m, h, d, the parts summed. No sign, no fraction, no
 * spaces, no bare number (is "15" seconds or minutes?). Pure: the CLI's --every and --for. */
#ifndef CAPLEDGER_CORE_DURATION_H
#define CAPLEDGER_CORE_DURATION_H

#include <stdbool.h>
#include <stdint.h>

#define DURATION_MAX_MS ((int64_t)366 * 24 * 3600 * 1000) /* a year and a day */

/* True, with *ms set, when all of s is a duration in (0, DURATION_MAX_MS]. */
bool duration_parse_ms(const char *s, int64_t *ms) __attribute__((warn_unused_result));

#endif
