/*
 * vmctl_console.c - `vmctl` with no command: an interactive console with
 * PVM's console verbs and line editing (libedit), or, when standard input
 * is not a terminal, the same verbs read line by line for scripts. It
 * implements no seed idea, only PVM's console. It reads and splits lines
 * and runs each through the command table of vmctl_dispatch.c, refusing the
 * verbs that table marks as the shell's.
 */
#include "vmctl.h"

#include <editline/readline.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char console_help[] =
    "Commands:\n"
    "  add HOST...      add hosts to the virtual machine\n"
    "  delete HOST...   remove hosts from the virtual machine\n"
    "  conf             list the hosts of the virtual machine\n"
    "  status           say whether the virtual machine runs\n"
    "  halt             stop every daemon and leave the console\n"
    "  help             this text\n"
    "  version          print the version\n"
    "  spawn [-N] [-h HOST] [-o] PROG [ARGS]   start PVM tasks (-o: show their output)\n"
    "  ps [-a]          the tasks of this host (-a: every host)\n"
    "  kill TID...      kill tasks;  sig SIGNUM TID...  signal them;  reset  kill all\n"
    "  pstat TID...     is the task running?  mstat HOST...  is the host in the VM?\n"
    "  groups           the dynamic groups and their members (ps shows each task's)\n"
    "  quit             leave the console; the virtual machine goes on\n"
    "Any command also takes --json.\n";

/* Split a line into words at blanks; quotes are not needed for host names. */
static int
split(char *line, char **argv, int max)
{
    int n = 0;
    for (char *save = NULL, *w = strtok_r(line, " \t\r\n", &save); w && n < max - 1;
         w = strtok_r(NULL, " \t\r\n", &save))
        argv[n++] = w;
    argv[n] = NULL;
    return n;
}

enum line_status { LINE_READ, LINE_END, LINE_TOO_LONG, LINE_NOMEM };

/* The next line into *out (malloc'ed). A script's line longer than the
 * buffer is skipped whole rather than run in pieces, which could run a
 * different command than the one written. */
static enum line_status
read_line(int tty, char **out)
{
    char buf[8192];

    if (tty) {
        *out = readline("vmctl> ");
        if (*out == NULL) {
            printf("\n");
            return LINE_END;
        }
        if ((*out)[0])
            add_history(*out);
        return LINE_READ;
    }
    if (fgets(buf, sizeof(buf), stdin) == NULL)
        return LINE_END;
    if (strchr(buf, '\n') == NULL && !feof(stdin)) {
        fprintf(stderr, "vmctl: line too long; ignored\n");
        int c;
        while ((c = getchar()) != '\n' && c != EOF)
            ;
        return LINE_TOO_LONG;
    }
    *out = strdup(buf);
    return *out != NULL ? LINE_READ : LINE_NOMEM;
}

/* One console line's words, other than quit: help is the console's own. */
static int
run_words(struct vmctl *v, int argc, char **argv)
{
    const struct vmctl_command *c;

    if (strcmp(argv[0], "help") == 0 || strcmp(argv[0], "?") == 0) {
        printf("%s", console_help);
        return VMCTL_EXIT_OK;
    }
    c = vmctl_command_find(argv[0]);
    if (c != NULL && c->shell_only) {
        fprintf(stderr, "vmctl: %s is not a console command; run `vmctl %s` from the shell\n",
                argv[0], argv[0]);
        return VMCTL_EXIT_USAGE;
    }
    return vmctl_dispatch(v, argc, argv);
}

int
vmctl_console(struct vmctl *v)
{
    int tty = isatty(STDIN_FILENO);
    int last = VMCTL_EXIT_OK;

    v->console = 1;
    if (tty) {
        printf("LiquidVM console %s; type help for the commands\n", LIQUIDVM_VERSION);
        using_history();
    }
    for (;;) {
        char *line = NULL;
        enum line_status st = read_line(tty, &line);
        if (st == LINE_END)
            break;
        if (st == LINE_NOMEM)
            return VMCTL_EXIT_FAIL;
        if (st == LINE_TOO_LONG) {
            last = VMCTL_EXIT_USAGE;
            continue;
        }
        char *argv[256];
        int argc = split(line, argv, 256);
        if (argc == 0) {
            free(line);
            continue;
        }
        if (strcmp(argv[0], "quit") == 0 || strcmp(argv[0], "exit") == 0) {
            free(line);
            break;
        }
        /* --json on one line must not stick to the lines after it. */
        int json = v->json;
        last = run_words(v, argc, argv);
        v->json = json;
        fflush(stdout);
        int halted = strcmp(argv[0], "halt") == 0 && last == VMCTL_EXIT_OK;
        free(line);
        if (halted)
            break;
    }
    return tty ? VMCTL_EXIT_OK : last;
}
