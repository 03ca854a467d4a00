/*
 * vmctl_console.c - `vmctl` with no command: an interactive console with
 * PVM's console verbs and line editing (libedit), or, when standard input
 * is not a terminal, the same verbs read line by line for scripts.
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

int
vmctl_console(struct vmctl *v)
{
    int tty = isatty(STDIN_FILENO);
    int last = VMCTL_EXIT_OK;
    char *line;
    char buf[8192];

    v->console = 1;
    if (tty) {
        printf("LiquidVM console %s; type help for the commands\n", LIQUIDVM_VERSION);
        using_history();
    }
    for (;;) {
        if (tty) {
            line = readline("vmctl> ");
            if (line == NULL) {
                printf("\n");
                break;
            }
        } else {
            if (fgets(buf, sizeof(buf), stdin) == NULL)
                break;
            if (strchr(buf, '\n') == NULL && !feof(stdin)) {
                fprintf(stderr, "vmctl: line too long; ignored\n");
                int c;
                while ((c = getchar()) != '\n' && c != EOF)
                    ;
                last = VMCTL_EXIT_USAGE;
                continue;
            }
            line = strdup(buf);
            if (line == NULL)
                return VMCTL_EXIT_FAIL;
        }
        if (tty && line[0])
            add_history(line);
        char *argv[256];
        int argc = split(line, argv, 256);
        int json = v->json;
        if (argc == 0) {
            free(line);
            continue;
        }
        if (strcmp(argv[0], "quit") == 0 || strcmp(argv[0], "exit") == 0) {
            free(line);
            break;
        }
        if (strcmp(argv[0], "help") == 0 || strcmp(argv[0], "?") == 0) {
            printf("%s", console_help);
            last = VMCTL_EXIT_OK;
        } else if (strcmp(argv[0], "start") == 0 || strcmp(argv[0], "ca") == 0 ||
                   strcmp(argv[0], "cert") == 0) {
            fprintf(stderr, "vmctl: %s is not a console command; run `vmctl %s` from the shell\n",
                    argv[0], argv[0]);
            last = VMCTL_EXIT_USAGE;
        } else {
            last = vmctl_dispatch(v, argc, argv);
        }
        v->json = json;
        fflush(stdout);
        int halted = strcmp(argv[0], "halt") == 0 && last == VMCTL_EXIT_OK;
        free(line);
        if (halted)
            break;
    }
    return tty ? VMCTL_EXIT_OK : last;
}
