/* capledger — entry point: dispatches to subcommands through one declarative table. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/config.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;
    const char *summary;
};

static const struct command commands[] = {
    {"serve", cmd_serve, "serve", "run the HTTP server (configuration from CAPLEDGER_* variables)"},
    {"migrate", cmd_migrate, "migrate", "apply db/migrations to CAPLEDGER_DATABASE_URL"},
    {"jcs", cmd_jcs, "jcs FILE.json", "print the RFC 8785 canonical bytes of a JSON document"},
    {"keygen", cmd_keygen, "keygen FILE", "new Ed25519 key: FILE (seed, mode 0600) and FILE.pub"},
    {"sign", cmd_sign, "sign --key FILE record.json",
     "sign a decision record: {record, signature}"},
    {"verify", cmd_verify,
     "verify BUNDLE.json --key VKEY [--approvers F] [--witness VKEY]... [--quorum N] "
     "[--previous-checkpoint F] [--recompute]",
     "audit a bundle offline; exit 0 only when everything verifies"},
    {"witness", cmd_witness,
     "witness key|serve --name NAME --key FILE [--log VKEY]... [--state FILE] [--listen ADDR]",
     "a C2SP tlog-witness: cosigns the log's checkpoints after a consistency proof"},
    {"routes", cmd_routes, "routes [--query | --standby]",
     "list the HTTP routes, the roles and query parameters of each, or the standby's reads"},
    {"formats", cmd_formats, "formats",
     "list each upload kind's evidence formats (?format= values)"},
    {"token", cmd_token, "token create USERNAME [--label L] [--expires-in-days N]",
     "mint an API token (printed once)"},
    {"team", cmd_team, "team add NAME", "create a workload team"},
    {"user", cmd_user,
     "user add NAME --role R [--team T]... <password | disable|enable NAME | "
     "reset-password NAME <password",
     "create a user (password from standard input), close or reopen an account, set a password"},
    {"compare", cmd_compare, "compare FILE.json [--format json|table]",
     "compare capacity options by cost per useful outcome (offline)"},
    {"whatif", cmd_whatif, "whatif FILE.json [--json]",
     "replay a job history under capacity arrangements (offline)"},
    {"config", cmd_config, "config [--help]",
     "print the CAPLEDGER_* settings; --help: each one's type, range, default"},
    {"import", cmd_import, "import KIND FILE [--param k=v]...",
     "send a tool's output (sacct, nvidia-smi, vLLM, …) to a server"},
};

static void usage(FILE *out)
{
    fprintf(out, "capledger %s — cost per useful GPU outcome, and a signed record of decisions\n\n",
            CAPLEDGER_VERSION);
    fprintf(out, "usage: capledger COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-44s %s\n", commands[i].usage, commands[i].summary);
    fprintf(out, "  %-44s %s\n  %-44s %s\n", "--version", "print the version", "--help",
            "print this help");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("capledger %s\n", CAPLEDGER_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    config_env_file_apply();
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "capledger: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
