/*
 * vmctl_dispatch.c - the table of vmctl's commands and the one function
 * that runs a command line's words through it. The shell (vmctl_main.c)
 * and the console (vmctl_console.c) both dispatch here, so the table sits
 * below them and neither depends on the other. It implements no seed idea:
 * it holds PVM's console verbs (add, delete, conf, halt, spawn, ps, kill,
 * sig, reset, pstat, mstat, alias, unalias, echo, export, unexport,
 * setenv, getopt, setopt, id, jobs, names, put, trace) beside LiquidVM's
 * own (start, ca, cert, status, groups, version), and says which of them
 * only the shell may run.
 */
#include "vmctl.h"

#include <string.h>

static const struct vmctl_command commands[] = {
    /* start, ca and cert act on this machine's files and processes, not on
     * a running VM, so the console refuses them. */
    { "start", vmctl_cmd_start, 1 },     { "ca", vmctl_cmd_ca, 1 },
    { "cert", vmctl_cmd_cert, 1 },       { "add", vmctl_cmd_add, 0 },
    { "delete", vmctl_cmd_delete, 0 },   { "conf", vmctl_cmd_conf, 0 },
    { "halt", vmctl_cmd_halt, 0 },       { "status", vmctl_cmd_status, 0 },
    { "version", vmctl_cmd_version, 0 }, { "spawn", vmctl_cmd_spawn, 0 },
    { "ps", vmctl_cmd_ps, 0 },           { "kill", vmctl_cmd_kill, 0 },
    { "sig", vmctl_cmd_sig, 0 },         { "reset", vmctl_cmd_reset, 0 },
    { "pstat", vmctl_cmd_pstat, 0 },     { "mstat", vmctl_cmd_mstat, 0 },
    { "groups", vmctl_cmd_groups, 0 },
    /* PVM's console verbs about the console itself (issue 29). */
    { "alias", vmctl_cmd_alias, 0 },     { "unalias", vmctl_cmd_unalias, 0 },
    { "echo", vmctl_cmd_echo, 0 },       { "export", vmctl_cmd_export, 0 },
    { "unexport", vmctl_cmd_unexport, 0 }, { "setenv", vmctl_cmd_setenv, 0 },
    { "getopt", vmctl_cmd_getopt, 0 },   { "setopt", vmctl_cmd_setopt, 0 },
    { "id", vmctl_cmd_id, 0 },           { "jobs", vmctl_cmd_jobs, 0 },
    { "names", vmctl_cmd_names, 0 },     { "put", vmctl_cmd_put, 0 },
    { "trace", vmctl_cmd_trace, 0 },
};

const struct vmctl_command *
vmctl_command_find(const char *name)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    return NULL;
}

int
vmctl_dispatch(struct vmctl *v, int argc, char **argv)
{
    const struct vmctl_command *c = vmctl_command_find(argv[0]);

    char msg[512];
    int rc;

    vmctl_usage_for(v);
    if (c == NULL) {
        /* Inside the console the list is its own help. */
        snprintf(msg, sizeof(msg), "unknown command '%.200s' (%s lists them)", argv[0],
                 v->console ? "help" : "vmctl --help");
        fprintf(stderr, "vmctl: %s\n", msg);
        vmctl_json_fail(v, msg, "EINVAL");
        return VMCTL_EXIT_USAGE;
    }
    rc = c->fn(v, argc, argv);
    /* Bad usage a verb told only in words (its usage on stderr): with
     * --json, stdout still has its one object. */
    if (rc == VMCTL_EXIT_USAGE && !vmctl_json_failed()) {
        snprintf(msg, sizeof(msg), "%.200s: bad usage (vmctl %.200s --help)", argv[0], argv[0]);
        vmctl_json_fail(v, msg, "EINVAL");
    }
    return rc;
}
