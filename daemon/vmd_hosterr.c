/*
 * vmd_hosterr.c - why an add failed, in words (issue 33).  `vmctl add`
 * shows one message per host that names the host and the step that failed:
 * ssh (refused, host key unknown, login refused), starting vmd (not found,
 * another LiquidVM version), the daemon's own start (certificates, the
 * clock), or the master's connection to it (a blocked port).  The facts are
 * the hoststart command's exit status and last stderr line, the daemon's
 * "vmd error:" line, or the link's error; nothing here does I/O.
 */
#include "vmd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int
has(const char *s, const char *what)
{
    return s && strstr(s, what) != NULL;
}

void
vmd_hosterr_exit(const char *host, const char *vmd_path, int status, const char *last,
                 char *msg, size_t cap)
{
    if (has(last, "Host key verification failed") || has(last, "REMOTE HOST IDENTIFICATION"))
        snprintf(msg, cap, "ssh to %s: the host key of %s is unknown or changed; check it and "
                 "add it to known_hosts (ssh %s once)", host, host, host);
    else if (has(last, "Connection refused"))
        snprintf(msg, cap, "ssh to %s: connection refused: is sshd running on %s?", host, host);
    else if (has(last, "Permission denied ("))
        snprintf(msg, cap, "ssh to %s: login refused (key authentication): %.120s", host, last);
    else if (has(last, "Could not resolve") || has(last, "No route to host") ||
             has(last, "timed out") || has(last, "Network is unreachable"))
        snprintf(msg, cap, "ssh to %s: cannot reach it: %.140s", host, last);
    else if (status == 127 || has(last, "not found") || has(last, "No such file"))
        snprintf(msg, cap, "start vmd on %s: vmd not found at %.100s on %s (give its path: "
                 "vmctl add --vmd, or vmd in hosts)", host, vmd_path, host);
    else if (status == 126 || has(last, "Permission denied"))
        snprintf(msg, cap, "start vmd on %s: %.100s is not executable there", host, vmd_path);
    else if (has(last, "unrecognized option") || has(last, "unknown option"))
        snprintf(msg, cap, "start vmd on %s: a different LiquidVM version there (its vmd does "
                 "not know this master's options): %.80s", host, last);
    else if (status == 255 && last && last[0])
        snprintf(msg, cap, "ssh to %s: %.180s", host, last);
    else if (last && last[0])
        snprintf(msg, cap, "start vmd on %s: exited (status %d) without a READY line: %.120s",
                 host, status, last);
    else
        snprintf(msg, cap, "start vmd on %s: exited (status %d) without a READY line", host,
                 status);
}

void
vmd_hosterr_daemon(const char *host, const char *what, char *msg, size_t cap)
{
    if (has(what, "version mismatch"))
        snprintf(msg, cap, "start vmd on %s: a different LiquidVM version there: %.160s", host,
                 what);
    else if (has(what, "not yet valid"))
        snprintf(msg, cap, "start vmd on %s: its clock is far off: the certificate is not yet "
                 "valid by %s's clock (set the clock, e.g. with NTP)", host, host);
    else if (has(what, "has expired"))
        snprintf(msg, cap, "start vmd on %s: the certificate has expired by %s's clock "
                 "(check its clock, or reissue the certificate)", host, host);
    else if (has(what, "certificates:"))
        snprintf(msg, cap, "certificates for %s: %.180s", host, what);
    else
        snprintf(msg, cap, "start vmd on %s: the daemon failed: %.180s", host, what);
}

void
vmd_hosterr_link(const struct vmd_host *h, int status, const char *why, char *msg, size_t cap)
{
    /* A blackhole or prohibit route fails connect() at once (EINVAL, EACCES). */
    if (status == -ECONNREFUSED || status == -ETIMEDOUT || status == -EHOSTUNREACH ||
        status == -ENETUNREACH || status == -EINVAL || status == -EACCES)
        snprintf(msg, cap, "connect to %s: its daemon listens on %s:%d, but the master cannot "
                 "reach that port (%s): a firewall may block it; open it, or choose one with "
                 "--port", h->name, h->address, h->port,
                 status == -EINVAL ? "no route will carry it" : wire_strerror(status));
    else
        snprintf(msg, cap, "connect to %s at %s:%d: %.150s", h->name, h->address, h->port,
                 why ? why : wire_strerror(status));
}
