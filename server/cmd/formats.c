/* capledger formats: each upload kind's ?format= values, one kind a line ("KIND NAME…"), from
 * the table in core/formats/formats.h (a test compares them with api/openapi.yaml and the UI). */
#include "cmd/cmd.h"
#include "core/formats/formats.h"

#include <stdio.h>

int cmd_formats(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "usage: capledger formats\n");
        return 2;
    }
    for (const struct format_kind *k = FORMAT_KINDS; k->kind; k++) {
        printf("%s", k->kind);
        for (const char *const *n = k->names; *n; n++)
            printf(" %s", *n);
        printf("\n");
    }
    return cmd_finish_stdout();
}
