/* Content coding for replies: whether a client takes gzip (RFC 9110 §12.5.3) and gzip
 * compression of a whole body (RFC 1952, through zlib). Used for the log's entry bundles, which
 * C2SP tlog-tiles asks logs to serve compressed. Pure. */
#ifndef CAPLEDGER_CORE_GZIP_H
#define CAPLEDGER_CORE_GZIP_H

#include <stddef.h>
#include <stdint.h>

/* Whether an Accept-Encoding header value (NULL: none sent) accepts gzip: a "gzip" or "x-gzip"
 * coding, else "*", with a q-value above 0 (absent means 1). Malformed parameters count as
 * not accepting. */
int gzip_accepted(const char *accept_encoding);

/* in[0..len) gzip-compressed into a malloc'd *out (length *out_len). Returns 0, or -1 when
 * memory runs out (out untouched). */
int gzip_compress(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
    __attribute__((warn_unused_result));

#endif
