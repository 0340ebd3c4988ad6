/* gzip content coding (gzip.h). */
#include "core/gzip.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* The q-value of one element's parameters (";q=0.5"); 1 when none, -1 when malformed. */
static double qvalue(const char *params, const char *end)
{
    double q = 1;
    const char *p = params;
    while (p < end) {
        while (p < end && (*p == ';' || *p == ' ' || *p == '\t'))
            p++;
        if (p >= end)
            break;
        if (end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
            /* qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ) */
            p += 2;
            if (p >= end || (*p != '0' && *p != '1'))
                return -1;
            int whole = *p++ - '0';
            double frac = 0, scale = 0.1;
            if (p < end && *p == '.') {
                p++;
                for (int digits = 0; p < end && *p >= '0' && *p <= '9'; digits++, p++) {
                    if (digits == 3 || (whole == 1 && *p != '0'))
                        return -1;
                    frac += (*p - '0') * scale;
                    scale /= 10;
                }
            }
            q = whole + frac;
            while (p < end && (*p == ' ' || *p == '\t'))
                p++;
            if (p < end && *p != ';')
                return -1;
        } else {
            while (p < end && *p != ';') /* another parameter: ignored */
                p++;
        }
    }
    return q;
}

int gzip_accepted(const char *accept_encoding)
{
    if (!accept_encoding)
        return 0;
    double gzip_q = -1, any_q = -1;
    const char *p = accept_encoding;
    while (*p) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        const char *t = p;
        while (t < end && (*t == ' ' || *t == '\t'))
            t++;
        const char *te = t;
        while (te < end && *te != ';' && *te != ' ' && *te != '\t')
            te++;
        size_t n = (size_t)(te - t);
        double q = qvalue(te, end);
        if ((n == 4 && strncasecmp(t, "gzip", 4) == 0) ||
            (n == 6 && strncasecmp(t, "x-gzip", 6) == 0))
            gzip_q = q > gzip_q ? q : gzip_q;
        else if (n == 1 && *t == '*')
            any_q = q;
        p = *end ? end + 1 : end;
    }
    return gzip_q >= 0 ? gzip_q > 0 : any_q > 0;
}

int gzip_compress(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    /* windowBits 15 + 16: a gzip wrapper (RFC 1952) around the deflate stream */
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    size_t cap = deflateBound(&z, (uLong)len);
    uint8_t *buf = malloc(cap ? cap : 1);
    if (!buf) {
        deflateEnd(&z);
        return -1;
    }
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)len;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    size_t produced = cap - z.avail_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(buf);
        return -1;
    }
    *out = buf;
    *out_len = produced;
    return 0;
}
