/*
 * vmd_certs.c - a joining daemon takes its certificates from the master
 * through the hoststart channel (docs/architecture.md, Hosts; issue 33).
 *
 * Only at start-up, only with --take-certs (which the master's %v adds),
 * and only when one of this host's TLS files is missing: the daemon asks on
 * its standard output ("vmd need-certs name=HOST") and reads one bundle from
 * its standard input, which for the default hoststart is the ssh session the
 * master opened.  Nothing else is ever read: no socket, no other file.
 *
 *   vmd certs ca=N cert=N key=N\n   then N bytes of each, in that order
 *
 * Each missing file is written to a temporary file with its final mode (the
 * key 0600) and linked into place, so an existing file is never replaced and
 * a crash leaves no half key; a CA file already there must be the one the
 * master sent.  The key bytes are wiped from our buffer once written.  The
 * TLS loader then checks the whole set as for any other start.
 */
#define LOG_TAG "certs"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CERTS_FILE_MAX (64 * 1024)

static int
file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Read exactly n bytes from fd; -EPROTO on a short read. */
static int
read_full(int fd, char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -EPROTO;
        got += (size_t)r;
    }
    return 0;
}

/* The header line, one byte at a time so nothing after it is consumed. */
static int
read_header(int fd, size_t len[3])
{
    char line[128];
    size_t n = 0;
    for (;;) {
        int rc = read_full(fd, line + n, 1);
        if (rc != 0)
            return rc;
        if (line[n] == '\n')
            break;
        if (++n == sizeof(line) - 1)
            return -EPROTO;
    }
    line[n] = '\0';
    unsigned long a, b, c;
    if (sscanf(line, "vmd certs ca=%lu cert=%lu key=%lu", &a, &b, &c) != 3 || a == 0 ||
        b == 0 || c == 0 || a > CERTS_FILE_MAX || b > CERTS_FILE_MAX || c > CERTS_FILE_MAX)
        return -EPROTO;
    len[0] = a;
    len[1] = b;
    len[2] = c;
    return 0;
}

static int
mkdir_parent(const char *path)
{
    char dir[4096];
    if (vmd_strlcpy(dir, path, sizeof(dir)) != 0)
        return -ENAMETOOLONG;
    char *slash = strrchr(dir, '/');
    if (slash == NULL || slash == dir)
        return 0;
    *slash = '\0';
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* Write buf to path with mode, never over an existing file. */
static int
store(const char *path, const char *buf, size_t len, mode_t mode)
{
    char tmp[4200];
    int rc = mkdir_parent(path);
    if (rc != 0)
        return rc;
    if (snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return -errno;
    rc = 0;
    for (size_t off = 0; off < len && rc == 0;) {
        ssize_t w = write(fd, buf + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            rc = -errno;
        else
            off += (size_t)w;
    }
    if (rc == 0 && (fchmod(fd, mode) != 0 || fsync(fd) != 0))
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && link(tmp, path) != 0)
        rc = -errno;
    unlink(tmp);
    return rc;
}

/* An existing CA file must hold exactly what the master sent. */
static int
same_ca(const char *path, const char *buf, size_t len)
{
    char have[CERTS_FILE_MAX + 1];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, have, sizeof(have));
    close(fd);
    return n == (ssize_t)len && memcmp(have, buf, len) == 0;
}

static int
store_all(const char *const paths[3], const char *bundle, const size_t len[3], char *err,
          size_t errcap)
{
    static const mode_t modes[3] = { 0644, 0644, 0600 };
    const char *part = bundle;
    for (int i = 0; i < 3; part += len[i], i++) {
        int rc;
        if (file_exists(paths[i])) {
            if (i == 0 && !same_ca(paths[i], part, len[i])) {
                snprintf(err, errcap, "%s holds another CA's certificate than the master's; "
                         "move it away or add the host with --no-send-certs", paths[i]);
                return WIRE_EBADCERT;
            }
            continue;
        }
        if ((rc = store(paths[i], part, len[i], modes[i])) != 0) {
            snprintf(err, errcap, "cannot store %s: %s", paths[i], wire_strerror(rc));
            return rc;
        }
        log_info("stored %s, received from the master", paths[i]);
    }
    return 0;
}

int
vmd_certs_take(struct vmd *vmd, const char *ca, const char *cert, const char *key, char *err,
               size_t errcap)
{
    const char *const paths[3] = { ca, cert, key };
    size_t len[3];
    int rc;

    if (file_exists(ca) && file_exists(cert) && file_exists(key))
        return 0;
    printf("vmd need-certs name=%s\n", vmd->name);
    fflush(stdout);
    if ((rc = read_header(STDIN_FILENO, len)) != 0) {
        snprintf(err, errcap, "no certificates came from the master on standard input (%s)",
                 wire_strerror(rc));
        return rc;
    }
    size_t total = len[0] + len[1] + len[2];
    char *bundle = malloc(total);
    if (bundle == NULL)
        return -ENOMEM;
    if ((rc = read_full(STDIN_FILENO, bundle, total)) != 0)
        snprintf(err, errcap, "the certificates from the master were cut short");
    else
        rc = store_all(paths, bundle, len, err, errcap);
    /* The key was in there. */
    explicit_bzero(bundle, total);
    free(bundle);
    return rc;
}
