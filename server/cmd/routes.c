/* capledger routes: the route table with each route's roles (tests compare it with
 * api/openapi.yaml and with the role matrix). */
#include "cmd/cmd.h"
#include "http/http.h"

int cmd_routes(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    http_print_routes();
    return 0;
}
