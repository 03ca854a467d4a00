/*
 * vmctl_console.c - `vmctl` with no command: an interactive console with
 * PVM's console verbs and line editing (libedit), or, when standard input
 * is not a terminal, the same verbs read line by line for scripts. It
 * implements no seed idea, only PVM's console. It reads and splits lines,
 * expands aliases and runs each through the command table of
 * vmctl_dispatch.c, refusing the verbs that table marks as the shell's.
 * The session (vmctl_session.c) lasts as long as the console; on a
 * terminal, history is kept in $LIQUIDVM_HOME/vmctl_history and the jobs'
 * output is printed as it arrives, above the line being typed.
 */
#include "vmctl.h"

#include <editline/readline.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Split a line into words at blanks; "..." and '...' hold blanks (the
 * quotes go), so put and echo can take a value with spaces. */
static int
split(char *line, char **argv, int max)
{
    int n = 0;
    char *r = line, *w = line;

    while (n < max - 1) {
        while (*r == ' ' || *r == '\t' || *r == '\r' || *r == '\n')
            r++;
        if (*r == '\0')
            break;
        argv[n++] = w;
        char quote = 0;
        for (; *r && (quote || !strchr(" \t\r\n", *r)); r++) {
            if (!quote && (*r == '"' || *r == '\''))
                quote = *r;
            else if (quote && *r == quote)
                quote = 0;
            else
                *w++ = *r;
        }
        if (*r)
            r++;
        *w++ = '\0';
    }
    argv[n] = NULL;
    return n;
}

enum line_status { LINE_READ, LINE_END, LINE_TOO_LONG, LINE_NOMEM };

/* The line libedit's callback interface handed over, and whether it has. */
static char *typed_line;
static int typed_done;
static int at_prompt;           /* a prompt and typed text are on the screen */

static void
on_line(char *line)
{
    typed_line = line;
    typed_done = 1;
}

/* Output that arrives while a line is typed: clear the prompt first, and
 * draw it again with the typed text after (vmctl_session_poll). */
static void
clear_prompt(void)
{
    if (at_prompt)
        printf("\r\033[K");
}

/* A line from the terminal with libedit, while the session's jobs may
 * print: stdin and the session's task connection are watched together. */
static enum line_status
read_tty_line(struct vmctl_session *s, char **out)
{
    typed_done = 0;
    typed_line = NULL;
    rl_callback_handler_install("vmctl> ", on_line);
    at_prompt = 1;
    while (!typed_done) {
        struct pollfd p[2] = { { .fd = STDIN_FILENO, .events = POLLIN },
                               { .fd = s->fd, .events = POLLIN } };
        if (poll(p, s->fd >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (s->fd >= 0 && p[1].revents && vmctl_session_poll(s, 0) > 0 && s->printed)
            rl_forced_update_display();
        if (p[0].revents)
            rl_callback_read_char();
    }
    rl_callback_handler_remove();
    at_prompt = 0;
    if (!typed_done || typed_line == NULL) {
        printf("\n");
        return LINE_END;
    }
    *out = typed_line;
    if ((*out)[0])
        add_history(*out);
    return LINE_READ;
}

/* The next line into *out (malloc'ed). A script's line longer than the
 * buffer is skipped whole rather than run in pieces, which could run a
 * different command than the one written. */
static enum line_status
read_line(struct vmctl_session *s, int tty, char **out)
{
    char buf[8192];

    if (tty)
        return read_tty_line(s, out);
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

/* help, or help VERB: the console's own. */
static int
help(int argc, char **argv)
{
    if (argc < 2) {
        vmctl_help_list(stdout);
        return VMCTL_EXIT_OK;
    }
    if (vmctl_help_verb(stdout, argv[1]) != 0) {
        fprintf(stderr, "vmctl: help: %s is no command (help lists them)\n", argv[1]);
        return VMCTL_EXIT_USAGE;
    }
    return VMCTL_EXIT_OK;
}

/* One console line's words, other than quit: help is the console's own,
 * and an alias's words take the place of the first word (once: an alias
 * naming another alias is not expanded again, so none can loop). */
static int
run_words(struct vmctl *v, int argc, char **argv)
{
    const struct vmctl_alias *a = vmctl_alias_find(v->sess, argv[0]);
    char text[1024];
    char *words[256];

    if (a != NULL) {
        snprintf(text, sizeof(text), "%s", a->text);
        int n = split(text, words, 256);
        for (int i = 1; i < argc && n < 255; i++)
            words[n++] = argv[i];
        words[n] = NULL;
        if (n == 0)
            return VMCTL_EXIT_OK;
        argc = n;
        argv = words;
    }
    if (strcmp(argv[0], "help") == 0 || strcmp(argv[0], "?") == 0)
        return help(argc, argv);
    const struct vmctl_command *c = vmctl_command_find(argv[0]);
    if (c != NULL && c->shell_only) {
        fprintf(stderr, "vmctl: %s is not a console command; run `vmctl %s` from the shell\n",
                argv[0], argv[0]);
        return VMCTL_EXIT_USAGE;
    }
    return vmctl_dispatch(v, argc, argv);
}

/* The history file: per user, in the VM's home ($LIQUIDVM_HOME or ~/.liquidvm). */
static void
history_path(const struct vmctl *v, char *out, size_t cap)
{
    snprintf(out, cap, "%s/vmctl_history", v->home);
}

/* The worse of two exit statuses: bad usage (2) over failure (1) over
 * success (0). */
static int
worse(int a, int b)
{
    return a > b ? a : b;
}

/* Run one line; 1 when the console should end after it. */
static int
run_line(struct vmctl *v, char *line, int *last)
{
    char *argv[256];
    int argc = split(line, argv, 256);
    if (argc == 0)
        return 0;
    if (strcmp(argv[0], "quit") == 0 || strcmp(argv[0], "exit") == 0) {
        if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
            *last = vmctl_help_usage("quit", 0);
            return 0;
        }
        return 1;
    }
    /* --json on one line must not stick to the lines after it. */
    int json = v->json;
    *last = run_words(v, argc, argv);
    v->json = json;
    fflush(stdout);
    return strcmp(argv[0], "halt") == 0 && *last == VMCTL_EXIT_OK;
}

int
vmctl_console(struct vmctl *v)
{
    int tty = isatty(STDIN_FILENO);
    /* A script's exit status is the worst of its lines': one failed
     * command among many is not lost to those that ran after it. */
    int last = VMCTL_EXIT_OK, worst = VMCTL_EXIT_OK, end = 0;
    char hist[4200];

    v->console = 1;
    if ((v->sess = vmctl_session_new(tty)) == NULL)
        return VMCTL_EXIT_FAIL;
    history_path(v, hist, sizeof(hist));
    if (tty) {
        printf("LiquidVM console %s; type help for the commands\n", LIQUIDVM_VERSION);
        using_history();
        stifle_history(1000);
        read_history(hist);
        v->sess->before_print = clear_prompt;
    }
    while (!end) {
        char *line = NULL;
        enum line_status st = read_line(v->sess, tty, &line);
        if (st == LINE_END)
            break;
        if (st == LINE_NOMEM) {
            worst = worse(worst, VMCTL_EXIT_FAIL);
            break;
        }
        if (st == LINE_TOO_LONG) {
            worst = worse(worst, VMCTL_EXIT_USAGE);
            continue;
        }
        last = VMCTL_EXIT_OK;
        end = run_line(v, line, &last);
        worst = worse(worst, last);
        free(line);
        /* Output of jobs that came while the line ran. */
        vmctl_session_poll(v->sess, 0);
        if (tty)
            write_history(hist);
    }
    vmctl_session_free(v->sess);
    v->sess = NULL;
    return tty ? VMCTL_EXIT_OK : worst;
}
