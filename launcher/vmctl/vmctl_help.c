/*
 * vmctl_help.c - one line and the syntax of every console verb, in the
 * form of PVM 3.4's console (`help`, `help VERB`), the --help answer
 * of the verbs added for issue 29, and every verb's report of bad usage
 * ("vmctl: VERB: why" and its syntax).  No seed idea; it calls nothing of
 * vmctl, so the console and the verbs both call down into it.
 */
#include "vmctl.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

struct verb_help {
    const char *name, *what, *syntax;
};

static const struct verb_help verbs[] = {
    { "add", "Add hosts to virtual machine",
      "add HOST... [--vmd PATH] [--speed N] [--address IP] [--port N] [--home DIR]\n"
      "             [--spawn-path DIR]... [--no-send-certs] [--json]" },
    { "alias", "Define/list command aliases",
      "alias [--json] [NAME [COMMAND [ARGS...]]]\n"
      "         (the console's session only; aliases expand the first word of a line)" },
    { "conf", "List virtual machine configuration", "conf [--json]" },
    { "delete", "Delete hosts from virtual machine", "delete HOST... [--json]" },
    { "echo", "Echo arguments", "echo [--json] [ARG...]" },
    { "export", "Add environment variables to spawn export list",
      "export [--json] [NAME...]\n"
      "         (the list is PVM_EXPORT; spawn passes the variables it names to tasks)" },
    { "getopt", "Display PVM options for the console task", "getopt [--json] [OPTION]" },
    { "groups", "List the dynamic groups and their members", "groups [--json]" },
    { "halt", "Stop every daemon and leave the console", "halt [--json]" },
    { "help", "Print helpful information about a command", "help [COMMAND]" },
    { "id", "Print console task id", "id [--json]" },
    { "jobs", "Display list of running jobs",
      "jobs [-l] [--json]\n"
      "Options:  -l   give long listing (host and tid of each running task)" },
    { "kill", "Terminate tasks", "kill TID... [--json]   (TID: hex, t40002 or 40002)" },
    { "mstat", "Show status of hosts", "mstat HOST... [--json]" },
    { "names", "List message mailbox names", "names [--json] [PATTERN]   (* and ? match)" },
    { "ps", "List tasks",
      "ps [-a] [-l] [--json]\n"
      "Options:  -a   all hosts (default is the daemon's own)\n"
      "          -l   long listing, which it always is (HOST TID PTID PID FLAG COMMAND)" },
    { "pstat", "Show status of tasks", "pstat TID... [--json]" },
    { "put", "Add entry to message mailbox",
      "put [--json] NAME VALUE [FLAGS]\n"
      "         FLAGS: a number, or persistent,multi,overwrite joined by commas" },
    { "quit", "Exit console; the virtual machine goes on", "quit" },
    { "reset", "Kill all tasks but those that set PvmNoReset", "reset [--json]" },
    { "setenv", "Display or set environment variables", "setenv [--json] [NAME [VALUE...]]" },
    { "setopt", "Set PVM options - for the console task *only*!",
      "setopt [--json] OPTION VALUE" },
    { "sig", "Send signal to task", "sig SIGNUM TID... [--json]   (SIGNUM: 1..64)" },
    { "spawn", "Spawn task",
      "spawn [-N | -n N] [-h HOST | -a ARCH] [-o | ->] [-@[DIR]] [--json] PROGRAM [ARGS...]\n"
      "         -o (or ->): the tasks' output comes to the console, as a job\n"
      "         -@: trace them (and what they spawn) into DIR, default $LIQUIDVM_HOME/trace" },
    { "status", "Say whether the virtual machine runs", "status [--json]" },
    { "trace", "Set/display trace event mask",
      "trace [--json]\n"
      "         trace [+] NAME...\n"
      "         trace - NAME...\n"
      "         trace [+] *\n"
      "         trace - *\n"
      "         trace xpvm (default mask for XPVM display)\n"
      "         The mask goes to tasks spawned with -@ (PVMTMASK); a traced task\n"
      "         records every kind of event, and none if the mask is clear" },
    { "unalias", "Undefine command alias", "unalias NAME..." },
    { "unexport", "Remove environment variables from spawn export list",
      "unexport [--json] NAME..." },
    { "version", "Show the version", "version [--json]" },
};

#define NVERBS (sizeof(verbs) / sizeof(verbs[0]))

void
vmctl_help_list(FILE *fp)
{
    fprintf(fp, "help        Print helpful information about a command\n"
                "Syntax:  help [ command ]\nCommands are:\n");
    for (size_t i = 0; i < NVERBS; i++)
        fprintf(fp, "  %-10s  %s\n", verbs[i].name, verbs[i].what);
    fprintf(fp, "Any command also takes --help, and --json where it prints data.\n");
}

int
vmctl_help_verb(FILE *fp, const char *name)
{
    for (size_t i = 0; i < NVERBS; i++)
        if (strcmp(verbs[i].name, name) == 0) {
            fprintf(fp, "%-10s  %s\nSyntax:  %s\n", verbs[i].name, verbs[i].what,
                    verbs[i].syntax);
            return 0;
        }
    return -ENOENT;
}

int
vmctl_help_usage(const char *name, int bad)
{
    vmctl_help_verb(bad ? stderr : stdout, name);
    return bad ? VMCTL_EXIT_USAGE : VMCTL_EXIT_OK;
}

/* The command being run, whose --json (given before the verb or among its
 * words so far) makes a usage error a JSON object on stdout as well; and
 * whether it printed a failure as JSON. */
static const struct vmctl *usage_of;
static int json_failed;

void
vmctl_usage_for(const struct vmctl *v)
{
    usage_of = v;
    json_failed = 0;
}

int
vmctl_json_failed(void)
{
    return json_failed;
}

void
vmctl_json_fail(const struct vmctl *v, const char *msg, const char *code)
{
    if (v == NULL || !v->json)
        return;
    printf("{\"ok\":false,\"error\":");
    wire_json_str(stdout, msg);
    printf(",\"code\":\"%s\"}\n", code);
    fflush(stdout);
    json_failed = 1;
}

int
vmctl_usage_error(const char *verb, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    int n = snprintf(msg, sizeof(msg), "%s: ", verb);

    va_start(ap, fmt);
    vsnprintf(msg + (n > 0 && (size_t)n < sizeof(msg) ? n : 0),
              sizeof(msg) - (n > 0 && (size_t)n < sizeof(msg) ? (size_t)n : 0), fmt, ap);
    va_end(ap);
    fprintf(stderr, "vmctl: %s\n", msg);
    vmctl_json_fail(usage_of, msg, "EINVAL");
    for (size_t i = 0; i < NVERBS; i++)
        if (strcmp(verbs[i].name, verb) == 0) {
            fprintf(stderr, "Syntax:  %s\n", verbs[i].syntax);
            return VMCTL_EXIT_USAGE;
        }
    /* start, ca and cert: the shell's alone, with their own --help. */
    fprintf(stderr, "(vmctl %s --help gives its usage)\n", verb);
    return VMCTL_EXIT_USAGE;
}

int
vmctl_verb_options(struct vmctl *v, int *argc, char **argv, int leading)
{
    int n = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        int opt = !leading || n == 1;
        if (opt && strcmp(a, "--json") == 0) {
            v->json = 1;
        } else if (opt && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
            return vmctl_help_usage(argv[0], 0);
        } else {
            argv[n++] = argv[i];
        }
    }
    argv[n] = NULL;
    *argc = n;
    return -1;
}
