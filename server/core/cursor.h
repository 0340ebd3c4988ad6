/* Opaque list cursors: the sort key of the last item returned, base64url-encoded so clients
 * treat it as a token. Decoding validates the encoding and bounds the length. */
#ifndef CAPLEDGER_CORE_CURSOR_H
#define CAPLEDGER_CORE_CURSOR_H

#include <stddef.h>

/* Returns a malloc'd cursor for key, or NULL when out of memory. */
char *cursor_encode(const char *key);
/* Decodes into buf; returns 0, or -1 when the cursor is not one of ours. */
int cursor_decode(const char *cursor, char *buf, size_t size) __attribute__((warn_unused_result));

#endif
