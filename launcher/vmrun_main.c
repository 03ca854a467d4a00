/*
 * vmrun_main.c - the entry point of vmrun: one subcommand per run.
 */
#include "vmrun.h"

#include <stdio.h>
#include <string.h>

static void
vmrun_usage(FILE *fp)
{
    fprintf(fp,
            "usage: vmrun COMMAND [OPTIONS]\n"
            "\n"
            "  Run 3D stencil jobs on the LiquidVM virtual machine.\n"
            "\n"
            "  advise     rank decompositions offline from given speeds, lambda and tau\n"
            "  version    print the version\n"
            "\n"
            "  Every command takes --help.  Exit status: 0 success, 1 failure, 2 bad usage.\n");
}

static int
vmrun_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("vmrun (LiquidVM) %s\n", LIQUIDVM_VERSION);
    return VMRUN_EXIT_OK;
}

int
main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        { "advise", vmrun_advise_main },
        { "version", vmrun_version },
    };

    if (argc < 2) {
        vmrun_usage(stderr);
        return VMRUN_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        vmrun_usage(stdout);
        return VMRUN_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0)
        return vmrun_version(argc - 1, argv + 1);
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (strcmp(argv[1], cmds[i].name) == 0)
            return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "vmrun: unknown command '%s' (vmrun --help lists them)\n", argv[1]);
    return VMRUN_EXIT_USAGE;
}
