/* capledger routes: the route table with each route's roles, its query parameters, or the
 * reads the standby may answer (tests compare it with api/openapi.yaml and the role matrix). */
#include "cmd/cmd.h"
#include "http/http.h"

#include <stdio.h>
#include <string.h>

int cmd_routes(int argc, char **argv)
{
    enum route_listing what = ROUTES_ROLES;
    if (argc == 2 && strcmp(argv[1], "--query") == 0)
        what = ROUTES_QUERY;
    else if (argc == 2 && strcmp(argv[1], "--standby") == 0)
        what = ROUTES_STANDBY;
    else if (argc != 1) {
        fprintf(stderr, "usage: capledger routes [--query | --standby]\n");
        return 2;
    }
    http_print_routes(what);
    return 0;
}
