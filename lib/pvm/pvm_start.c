/*
 * pvm_start.c - pvm_start_pvmd: start a virtual machine from a program.
 *
 * LiquidVM's master is started by `vmctl start`, which also makes the
 * cluster CA and the host's certificate when the home has none; so this
 * runs vmctl, found beside libpvm3 (the bin directory next to the lib
 * directory it was loaded from, as `make install` lays them out, and as
 * build/lib and build/bin are) or else along PATH.  The VM is the one of
 * LIQUIDVM_HOME (default ~/.liquidvm), the same home the library enrolls
 * with.  As in PVM 3.4.6:
 *
 *   - a VM running already: PvmDupHost (the caller is then enrolled in it);
 *   - else the master is started and the call returns once it is ready for
 *     work, and the caller is enrolled in it;
 *   - a hostfile argument: the hosts it lists are added (`vmctl add`); with
 *     block != 0 the call returns once every one was added or failed,
 *     else it returns at once and they are added in the background.
 *
 * Arguments: PVM's pvmd options are understood where LiquidVM has them:
 * -nNAME is the master's name (--name), -d<mask> (debug) is ignored; -c
 * FILE, --name NAME, --listen ADDR and --local N pass to `vmctl start` as
 * they are; any other word is a hostfile.  A hostfile line names a host in
 * its first word; blank lines, '#' comments, '*' (defaults) and '&' (hosts
 * not to start) lines are skipped; PVM's per-host options are not read
 * (LiquidVM's come from vmd.conf's hosts list).  Errors: PvmDupHost,
 * PvmBadParam (an unknown option, an unreadable hostfile), PvmCantStart
 * (vmctl failed), PvmSysErr.
 */
#include "pvm_int.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define START_ARGS_MAX 64
#define START_HOSTS_MAX 256

/*
 * The host names of a PVM hostfile's text into names[] (pointers into
 * text, which is cut in place); their number, at most max.
 */
int
pvm__hostfile_names(char *text, char **names, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        line += strspn(line, " \t\r");
        if (*line == '\0' || *line == '#' || *line == '*' || *line == '&')
            continue;
        line[strcspn(line, " \t\r#")] = '\0';
        if (n < max)
            names[n++] = line;
    }
    return n;
}

/* vmctl beside our lib directory's bin, else "vmctl" (PATH). */
static void
vmctl_path(char *out, size_t cap)
{
    Dl_info info;
    if (dladdr((void *)pvm_start_pvmd, &info) && info.dli_fname && info.dli_fname[0] == '/') {
        char dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "%s", info.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = '\0';
            if (snprintf(out, cap, "%s/../bin/vmctl", dir) < (int)cap && access(out, X_OK) == 0)
                return;
        }
    }
    snprintf(out, cap, "vmctl");
}

/* Run argv with stdin and stdout on /dev/null (its errors go to our
 * stderr); detach: do not wait (a grandchild that init reaps).  0 if it
 * exited 0, WIRE_ECANTSTART if not, or -errno. */
static int
run(char **argv, int detach)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        if (detach && fork() != 0)
            _exit(0);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : WIRE_ECANTSTART;
}

/* 1 if a is a vmctl start option that takes a value. */
static int
takes_value(const char *a)
{
    return strcmp(a, "-c") == 0 || strcmp(a, "--name") == 0 || strcmp(a, "--listen") == 0 ||
           strcmp(a, "--local") == 0;
}

/* PVM's arguments into vmctl start's (out, from out[*n] on) and the
 * hostfile's path. */
static int
translate(int argc, char **argv, char **out, int *n, const char **hostfile)
{
    for (int i = 0; i < argc; i++) {
        char *a = argv[i];
        if (a == NULL || *n > START_ARGS_MAX - 4)
            return -EINVAL;
        if (strncmp(a, "-d", 2) == 0 && a[2] != '\0') {
            continue;
        } else if (strncmp(a, "-n", 2) == 0 && a[2] != '\0') {
            out[(*n)++] = "--name";
            out[(*n)++] = a + 2;
        } else if (takes_value(a) && i + 1 < argc) {
            out[(*n)++] = a;
            out[(*n)++] = argv[++i];
        } else if (a[0] == '-' || *hostfile != NULL) {
            return -EINVAL;
        } else {
            *hostfile = a;
        }
    }
    out[*n] = NULL;
    return 0;
}

/* The hostfile's text (malloc'ed) into *text, its hosts into add[] from
 * add[*n] on. */
static int
read_hostfile(const char *path, char **text, char **add, int *n)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -EINVAL;
    char *buf = pvm__malloc(65536 + 1);
    size_t len = buf ? fread(buf, 1, 65536, f) : 0;
    fclose(f);
    if (buf == NULL)
        return -ENOMEM;
    buf[len] = '\0';
    *text = buf;
    *n += pvm__hostfile_names(buf, add + *n, START_HOSTS_MAX);
    add[*n] = NULL;
    return 0;
}

int
pvm_start_pvmd(int argc, char **argv, int block)
{
    char vmctl[PATH_MAX], *text = NULL;
    char *start[START_ARGS_MAX + 1], *add[START_HOSTS_MAX + 4];
    const char *hostfile = NULL;
    int n = 0, nadd = 0, rc;

    if (argc < 0 || (argc > 0 && argv == NULL))
        return pvm__err(-EINVAL, "pvm_start_pvmd");
    if ((rc = pvm__enroll()) == 0)
        return pvm__err(WIRE_EDUPHOST, "pvm_start_pvmd");
    if (rc != WIRE_ENOVM)
        return pvm__err(rc, "pvm_start_pvmd");
    vmctl_path(vmctl, sizeof(vmctl));
    start[n++] = vmctl;
    start[n++] = "--json";
    start[n++] = "start";
    add[nadd++] = vmctl;
    add[nadd++] = "--json";
    add[nadd++] = "add";
    if ((rc = translate(argc, argv, start, &n, &hostfile)) != 0 ||
        (hostfile && (rc = read_hostfile(hostfile, &text, add, &nadd)) != 0) ||
        (rc = run(start, 0)) != 0)
        goto out;
    /* Hosts that fail to start are PVM's per-host affair, not the call's. */
    if (nadd > 3)
        run(add, !block);
    rc = pvm__enroll();
out:
    free(text);
    return rc ? pvm__err(rc, "pvm_start_pvmd") : PvmOk;
}
