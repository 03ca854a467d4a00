/*
 * vmctl_main.c - the entry point of vmctl: global options, then one
 * command through the table of vmctl_dispatch.c, or the interactive
 * console when there is none. It implements no seed idea; it is the top of
 * vmctl's layers, and nothing calls into it.
 */
#include "vmctl.h"

#include <stdlib.h>
#include <string.h>

static void
usage(FILE *fp)
{
    fprintf(fp,
            "usage: vmctl [--home DIR] [--host NAME] [--json] [COMMAND [ARGS...]]\n"
            "\n"
            "  The LiquidVM console.  Without a command it reads commands interactively.\n"
            "\n"
            "  ca init                   create the cluster CA in LIQUIDVM_HOME/certs\n"
            "  cert issue HOST           issue a host certificate signed by the CA\n"
            "  start [-c FILE]           start the master daemon; return when it is ready\n"
            "  start --local N           a VM of N daemons on this machine (host0...)\n"
            "  add HOST...               add hosts (runs hoststart on each)\n"
            "  delete HOST...            remove hosts\n"
            "  conf                      list the hosts\n"
            "  status                    does a VM run here? (exit 1 if not)\n"
            "  halt                      stop every daemon\n"
            "  version                   print the version\n"
            "  spawn [-N] [-h HOST] [-o] [-@] PROG [ARGS]  start PVM tasks (-o: show their output)\n"
            "  ps [-a] [-l]              the tasks of this host (-a: of every host), as PVM's ps -l\n"
            "  kill TID...               kill tasks\n"
            "  sig SIGNUM TID...         send tasks a signal\n"
            "  reset                     kill every task of the VM (but PvmNoReset ones)\n"
            "  pstat TID...              is the task running?\n"
            "  mstat HOST...             is the host in the VM?\n"
            "  groups                    the dynamic groups and their members\n"
            "  names [PATTERN]           the mailbox's entries;  put NAME VALUE [FLAGS]  add one\n"
            "  id                        the tid of vmctl's task\n"
            "  echo, getopt, setenv, export, alias   show what a console session would use\n"
            "  setopt, unexport, unalias, jobs       (the console's session only)\n"
            "  trace [+|-] [NAME...|*]   the trace mask spawn -@ gives its tasks\n"
            "  help [COMMAND]            a command's syntax, as the console's help\n"
            "\n"
            "  --home DIR    the VM's state directory (default $LIQUIDVM_HOME or ~/.liquidvm)\n"
            "  --host NAME   talk to the daemon NAME of this home instead of the master\n"
            "  --json        machine-readable output: one JSON object per command\n"
            "  -c FILE       configuration file for start (see vmd.conf(5))\n"
            "\n"
            "  Every command takes --help.  Exit status: 0 success, 1 failure, 2 bad usage.\n");
}

/* Bad usage of vmctl itself: stderr, and a JSON object with --json. */
static int main_usage(const struct vmctl *v, const char *fmt, const char *arg)
    __attribute__((format(printf, 2, 0)));

static int
main_usage(const struct vmctl *v, const char *fmt, const char *arg)
{
    char msg[512];

    snprintf(msg, sizeof(msg), fmt, arg);
    fprintf(stderr, "vmctl: %s\n", msg);
    vmctl_json_fail(v, msg, "EINVAL");
    return VMCTL_EXIT_USAGE;
}

int
main(int argc, char **argv)
{
    struct vmctl v;
    int i;

    memset(&v, 0, sizeof(v));
    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return VMCTL_EXIT_OK;
        } else if (strcmp(a, "--json") == 0) {
            v.json = 1;
        } else if (strcmp(a, "--version") == 0) {
            return vmctl_cmd_version(&v, 0, NULL);
        } else if (strcmp(a, "--home") == 0 || strcmp(a, "--host") == 0 ||
                   strcmp(a, "-c") == 0) {
            char *dst = a[2] == 'h' && a[4] == 'm' ? v.home : a[1] == 'c' ? v.conf_file : v.host;
            size_t cap = dst == v.host ? sizeof(v.host) : sizeof(v.home);
            if (i + 1 == argc)
                return main_usage(&v, "%s needs a value (vmctl --help)", a);
            if (strlen(argv[i + 1]) >= cap || argv[i + 1][0] == '\0')
                return main_usage(&v, "%s: value empty or too long", a);
            strcpy(dst, argv[++i]);
        } else {
            return main_usage(&v, "unknown option %.200s (vmctl --help)", a);
        }
    }
    if (vmctl_home_init(&v) != 0) {
        fprintf(stderr, "vmctl: set LIQUIDVM_HOME or HOME\n");
        return VMCTL_EXIT_USAGE;
    }
    if (i == argc)
        return wire_stdout_check("vmctl", vmctl_console(&v));
    /* help VERB is the console's; from the shell too. */
    if (strcmp(argv[i], "help") == 0) {
        if (i + 1 == argc || strcmp(argv[i + 1], "--help") == 0 ||
            strcmp(argv[i + 1], "-h") == 0)
            return usage(stdout), VMCTL_EXIT_OK;
        if (vmctl_help_verb(stdout, argv[i + 1]) != 0)
            return main_usage(&v, "help: %.200s is no command (vmctl --help lists them)",
                              argv[i + 1]);
        return VMCTL_EXIT_OK;
    }
    return wire_stdout_check("vmctl", vmctl_dispatch(&v, argc - i, argv + i));
}
