/* capledger routes: the route table with each route's roles (tests compare it with
 * api/openapi.yaml and with the role matrix). */
#include "cmd/cmd.h"
#include "http/http.h"

#include <stdio.h>
#include <string.h>

int cmd_routes(int argc, char **argv)
{
    int with_query = argc == 2 && strcmp(argv[1], "--query") == 0;
    if (argc > 2 || (argc == 2 && !with_query)) {
        fprintf(stderr, "usage: capledger routes [--query]\n");
        return 2;
    }
    http_print_routes(with_query);
    return 0;
}
