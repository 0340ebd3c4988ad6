/* Refusing a whole upload (422) with the likely mistake named: the upload's first bytes are
 * sniffed (core/formats/sniff.h) when the body starts, and a refusal of the whole file says
 * "this looks like Slurm sacct output: upload it as job accounting (POST /api/v1/runs)" in its
 * detail and as "looks_like": {upload, format, what} beside resp_invalid's errors, so API users
 * and the web UI (which names its own form) get the same guess. */
#ifndef CAPLEDGER_HTTP_UPLOAD_SNIFF_H
#define CAPLEDGER_HTTP_UPLOAD_SNIFF_H

#include <stddef.h>

#include "core/formats/sniff.h"
#include "http/internal.h"

struct upload_guess {
    int mismatch; /* the head looks like another upload's input */
    struct sniff s;
    char msg[256];
};

/* Sniffs head[0..len) against the upload being made (expected, and for a load test the
 * ?format= asked for, or NULL). */
void upload_guess(struct upload_guess *g, const char *head, size_t len, enum sniff_upload expected,
                  const char *expected_format);

/* resp_invalid(r, p, detail), unless g names a mismatch: then the detail is its sentence and the
 * problem carries looks_like. g may be NULL. */
void upload_refuse(struct req *r, const struct problems *p, const char *detail,
                   const struct upload_guess *g);

#endif
