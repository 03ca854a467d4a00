/*
 * vmrun_main.c - the entry point of vmrun: one subcommand per run.  The
 * job commands are libliquid's master (liq_master.h) run as the program
 * "vmrun", whose workers are vmrun itself spawned as `vmrun worker`.
 */
#include "vmrun.h"
#include "wire.h"
#include "vmrun_farm.h"
#include "vmrun_trace.h"

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
            "  stencil    run a stencil job: benchmark, decompose, run, report\n"
            "  bench      only the host and ring benchmarks\n"
            "  advise     rank decompositions offline from given speeds, lambda and tau\n"
            "  farm       run a command once per item (range, file, grid) on the hosts\n"
            "  trace view draw a job's trace (stencil --trace) as an SVG timeline\n"
            "  analyze    a job's trace: its characteristics, the rules, hints for the next run\n"
            "  version    print the version\n"
            "  worker     (internal) a job's worker task, spawned by vmrun itself\n"
            "  farm-worker (internal) a farm's worker task, spawned by vmrun farm\n"
            "\n"
            "  Every command takes --help.  Exit status: 0 success, 1 failure, 2 bad usage.\n");
}

static int
vmrun_version(int argc, char **argv)
{
    int json = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: vmrun version [--json]\n  Print vmrun's version.\n");
            return VMRUN_EXIT_OK;
        }
        if (strcmp(argv[i], "--json") != 0) {
            fprintf(stderr, "vmrun version: unexpected argument '%s' (vmrun version --help)\n",
                    argv[i]);
            return VMRUN_EXIT_USAGE;
        }
        json = 1;
    }
    if (json)
        printf("{\"program\":\"vmrun\",\"version\":\"%s\"}\n", LIQUIDVM_VERSION);
    else
        printf("vmrun (LiquidVM) %s\n", LIQUIDVM_VERSION);
    return VMRUN_EXIT_OK;
}

/* The workers run this very executable (the hosts share it, or one
 * machine runs them all), by its absolute path, as `vmrun worker`. */
static const char *const vmrun_worker_argv[] = { "worker", NULL };

static int
vmrun_stencil(int argc, char **argv)
{
    static const struct liq_program prog = { "vmrun stencil", NULL, vmrun_worker_argv, NULL };

    return liq_stencil_main(&prog, argc, argv);
}

static int
vmrun_bench(int argc, char **argv)
{
    static const struct liq_program prog = { "vmrun bench", NULL, vmrun_worker_argv, NULL };

    return liq_bench_main(&prog, argc, argv);
}

static int
vmrun_worker(int argc, char **argv)
{
    return liq_builtin_worker("vmrun worker", argc, argv);
}

int
main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        { "stencil", vmrun_stencil },
        { "bench", vmrun_bench },
        { "advise", vmrun_advise_main },
        { "worker", vmrun_worker },
        { "farm", vmrun_farm_main },
        { "farm-worker", vmrun_farm_worker_main },
        { "version", vmrun_version },
        { "trace", vmrun_trace_main },
        { "analyze", vmrun_analyze_main },
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
    /* The workers' commands are vmrun's own: --help says so. */
    if ((strcmp(argv[1], "worker") == 0 || strcmp(argv[1], "farm-worker") == 0) && argc == 3 &&
        (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
        printf("usage: vmrun %s\n  Spawned by vmrun %s on the hosts as its worker; not run "
               "by hand.\n", argv[1], argv[1][0] == 'w' ? "stencil and vmrun bench" : "farm");
        return VMRUN_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (strcmp(argv[1], cmds[i].name) == 0)
            return wire_stdout_check("vmrun", cmds[i].fn(argc - 1, argv + 1));
    fprintf(stderr, "vmrun: unknown command '%s' (vmrun --help lists them)\n", argv[1]);
    return VMRUN_EXIT_USAGE;
}
