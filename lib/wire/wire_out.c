/*
 * wire_out.c - output that must not be lost in silence: a report or a
 * result file whose write failed (a full disk, /dev/full, a closed pipe)
 * is an error, and a tool whose standard output could not be written
 * exits 1, as coreutils' close_stdout does; and input files that are
 * files, never a fifo waited on.
 */
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *
wire_fopen_regular(const char *path)
{
    /* O_NONBLOCK: a fifo with no writer is refused below, not waited on. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    FILE *fp;

    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (fp = fdopen(fd, "r")) == NULL) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    return fp;
}

int
wire_out_close(FILE *fp)
{
    int bad = fflush(fp) != 0 ? errno : 0;

    if (bad == 0 && ferror(fp))
        bad = EIO;
    if (fp == stdout || fp == stderr)
        clearerr(fp);           /* told by the caller, once */
    else if (fclose(fp) != 0 && bad == 0)
        bad = errno;
    return bad != 0 ? -bad : 0;
}

int
wire_stdout_check(const char *who, int status)
{
    int rc = wire_out_close(stdout);

    /* A reader that went away (head) is not our failure. */
    if (rc == 0 || rc == -EPIPE)
        return status;
    fprintf(stderr, "%s: cannot write standard output: %s\n", who, strerror(-rc));
    return status == 0 ? 1 : status;
}
