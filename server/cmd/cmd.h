/* Subcommands of the capledger binary. Each returns the process exit status
 * (0 success, 1 failure of the work, 2 usage error). */
#ifndef CAPLEDGER_CMD_H
#define CAPLEDGER_CMD_H

int cmd_serve(int argc, char **argv);
int cmd_migrate(int argc, char **argv);
int cmd_jcs(int argc, char **argv);
int cmd_keygen(int argc, char **argv);
int cmd_sign(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_token(int argc, char **argv);
int cmd_user(int argc, char **argv);
int cmd_team(int argc, char **argv);
int cmd_routes(int argc, char **argv);
int cmd_formats(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_witness(int argc, char **argv);
int cmd_whatif(int argc, char **argv);

#include <jansson.h>
#include <stdio.h>

/* Indented JSON in the document's own member order, numbers in their shortest round-trip form
 * (compare and whatif print their documents so). */
void cmd_print_pretty(FILE *out, const json_t *v, int indent);
/* Flushes standard output: 0, or 1 after saying why it failed. */
int cmd_finish_stdout(void);

#endif
