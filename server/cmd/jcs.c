/* capledger jcs FILE.json — prints the RFC 8785 canonical bytes of a JSON document, so an
 * auditor can see exactly what was hashed or signed. */
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "cmd/files.h"
#include "core/jcs.h"

#define JCS_MAX_INPUT_BYTES (64u << 20)

int cmd_jcs(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: capledger jcs FILE.json   (FILE may be - for standard input)\n");
        return 2;
    }
    size_t len;
    char *text = files_read_all(argv[1], JCS_MAX_INPUT_BYTES, &len);
    if (!text)
        return 1;
    struct problems errs;
    problems_init(&errs);
    json_t *doc = jcs_parse(text, len, &errs);
    free(text);
    if (!doc) {
        if (errs.count)
            fprintf(stderr, "capledger: %s:%ld:%ld: %s\n", argv[1], errs.items[0].line,
                    errs.items[0].column, errs.items[0].message);
        else
            fprintf(stderr, "capledger: %s: out of memory\n", argv[1]);
        problems_free(&errs);
        return 1;
    }
    problems_free(&errs);
    size_t out_len;
    char *out = jcs_serialize(doc, &out_len);
    json_decref(doc);
    if (!out) {
        fprintf(stderr, "capledger: %s: cannot be canonicalized\n", argv[1]);
        return 1;
    }
    int status = fwrite(out, 1, out_len, stdout) == out_len && fflush(stdout) == 0 ? 0 : 1;
    if (status)
        perror("capledger: stdout");
    free(out);
    return status;
}
