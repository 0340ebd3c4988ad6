/* capledger team add NAME: creates a workload team (what `user add --team` and the evidence
 * routes name), recorded in the audit trail like the admin route POST /api/v1/teams. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/config.h"
#include "core/validate.h"
#include "store/teams.h"

int cmd_team(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "add") != 0) {
        fprintf(stderr, "usage: capledger team add NAME\n");
        return 2;
    }
    const char *name = argv[2];
    if (!team_name_valid(name)) {
        fprintf(stderr, "capledger: a team name is 1-64 letters, digits, '.', '_' or '-', "
                        "starting with a letter or digit\n");
        return 2;
    }
    struct config cfg;
    if (config_load(&cfg) != 0)
        return 2;
    struct store *s = config_open_store(&cfg, 1);
    if (!s)
        return 1;
    json_t *row = NULL;
    struct audit_actor who = {.name = "cli", .request_id = "cli"};
    enum store_status st = store_team_create(s, &who, name, &row);
    int rc = config_report_created(st, row, "team", name, NULL);
    json_decref(row);
    store_close(s);
    return rc;
}
