/* Request framing checks (see httpframe.h). */
#include "core/httpframe.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

const char *httpframe_refusal(const char *version, const struct httpframe_header *headers,
                              size_t count)
{
    const char *length = NULL, *encoding = NULL, *type = NULL;
    for (size_t i = 0; i < count; i++) {
        const char *name = headers[i].name ? headers[i].name : "";
        const char *value = headers[i].value ? headers[i].value : "";
        if (strcasecmp(name, "Content-Length") == 0) {
            if (length)
                return "Content-Length is given more than once";
            length = value;
        } else if (strcasecmp(name, "Transfer-Encoding") == 0) {
            if (encoding)
                return "Transfer-Encoding is given more than once";
            encoding = value;
        } else if (strcasecmp(name, "Content-Type") == 0) {
            if (type) /* the body's reader and the checks must read the same one */
                return "Content-Type is given more than once";
            type = value;
        }
    }
    if (encoding && version && strcmp(version, "1.1") != 0)
        return "Transfer-Encoding is not allowed in an HTTP/1.0 request";
    if (length && encoding)
        return "Content-Length and Transfer-Encoding must not both be given";
    if (encoding && strcasecmp(encoding, "chunked") != 0)
        return "the only transfer coding accepted is chunked";
    if (length) {
        size_t digits = 0;
        for (const char *c = length; *c; c++, digits++)
            if (*c < '0' || *c > '9')
                return "Content-Length must be a decimal number";
        if (digits == 0 || digits > 18)
            return "Content-Length must be 1 to 18 decimal digits";
    }
    return NULL;
}
