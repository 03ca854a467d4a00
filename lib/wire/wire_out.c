/*
 * wire_out.c - output that must not be lost in silence: a report or a
 * result file whose write failed (a full disk, /dev/full, a closed pipe)
 * is an error, and a tool whose standard output could not be written
 * exits 1, as coreutils' close_stdout does.
 */
#include "wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
