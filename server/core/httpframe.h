/* Message framing checks of an HTTP/1.1 request (RFC 9112 §6): the headers that decide where a
 * body ends must be unambiguous, or a proxy in front and this server could disagree about it
 * and a request hidden in a body would be executed (request smuggling). */
#ifndef CAPLEDGER_CORE_HTTPFRAME_H
#define CAPLEDGER_CORE_HTTPFRAME_H

#include <stddef.h>

struct httpframe_header {
    const char *name;
    const char *value;
};

/* NULL when the request's framing is unambiguous; else why not (a static string). version is
 * the request line's ("1.0", "1.1"; NULL: 1.1). Refused: Content-Length together with
 * Transfer-Encoding, Content-Length repeated (even with equal values) or not 1–18 decimal
 * digits, Transfer-Encoding repeated or other than "chunked", and Transfer-Encoding in a
 * request of any version but 1.1 (RFC 9112 §6.1: an HTTP/1.0 request carrying it must be
 * treated as faulty framing — a 1.0 intermediary may not have understood it), and
 * Content-Type repeated (the body's reader and the checks must read the same one). */
const char *httpframe_refusal(const char *version, const struct httpframe_header *headers,
                              size_t count);

#endif
