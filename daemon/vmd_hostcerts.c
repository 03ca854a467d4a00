/*
 * vmd_hostcerts.c - the master's side of handing a new host its
 * certificates (issue 33; the daemon's side is vmd_certs.c).  When the
 * daemon a hoststart command started says "vmd need-certs", the master
 * reads the cluster CA certificate and the host's certificate and key from
 * its own certificate directory (vmctl add issues them there if the CA key
 * is at hand, or `vmctl cert issue HOST` made them) and writes them into the
 * command's standard input: for the default hoststart, the ssh session
 * itself, so the key never crosses any other connection.
 *
 * The key file is read as the TLS loader reads keys: a regular file of ours,
 * not a link, that neither group nor others can read.  The caller wipes the
 * bundle once written (vmd_hostcerts_wipe).
 */
#define LOG_TAG "hoststart"
#include "log.h"
#include "vmd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HOSTCERTS_FILE_MAX (64 * 1024)

/* The master's file for host: tmpl with %h expanded, relative to its home. */
static int
host_file(struct vmd *vmd, const char *tmpl, const char *host, char *out, size_t cap)
{
    char *e = conf_expand(tmpl, host);
    if (e == NULL)
        return -ENOMEM;
    int n = e[0] == '/' ? snprintf(out, cap, "%s", e) : snprintf(out, cap, "%s/%s", vmd->home, e);
    free(e);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* Append the file at path to buf at *len; a key must be ours alone. */
static int
append_file(const char *path, int is_key, char *buf, size_t cap, size_t *len, size_t *flen)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = 0;
    if (fstat(fd, &st) != 0)
        rc = -errno;
    else if (!S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > HOSTCERTS_FILE_MAX)
        rc = -EINVAL;
    else if (is_key && ((st.st_mode & 077) != 0 || st.st_uid != getuid()))
        rc = -EACCES;
    else if (*len + (size_t)st.st_size > cap)
        rc = -EMSGSIZE;
    size_t got = 0;
    while (rc == 0 && got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + *len + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            rc = r < 0 ? -errno : -EIO;
        else
            got += (size_t)r;
    }
    close(fd);
    if (rc == 0) {
        *len += got;
        *flen = got;
    }
    return rc;
}

int
vmd_hostcerts_bundle(struct vmd *vmd, const char *host, char **out, size_t *outlen, char *err,
                     size_t errcap)
{
    char paths[3][4096];
    size_t flen[3], len = 0, cap = 3 * HOSTCERTS_FILE_MAX;
    int rc;

    *out = NULL;
    vmd_strlcpy(paths[0], vmd->tls_ca, sizeof(paths[0]));
    if ((rc = host_file(vmd, vmd->conf.tls_cert, host, paths[1], sizeof(paths[1]))) != 0 ||
        (rc = host_file(vmd, vmd->conf.tls_key, host, paths[2], sizeof(paths[2]))) != 0)
        return rc;
    char *files = malloc(cap), *bundle = NULL;
    if (files == NULL)
        return -ENOMEM;
    for (int i = 0; i < 3 && rc == 0; i++)
        if ((rc = append_file(paths[i], i == 2, files, cap, &len, &flen[i])) != 0)
            snprintf(errcap ? err : NULL, errcap, "%s: %s%s", paths[i], wire_strerror(rc),
                     rc == -ENOENT ? " (run `vmctl cert issue HOST` where the CA key is, "
                                     "or vmctl add there)" : "");
    if (rc == 0 && (bundle = malloc(len + 96)) == NULL)
        rc = -ENOMEM;
    if (rc == 0) {
        int n = snprintf(bundle, 96, "vmd certs ca=%zu cert=%zu key=%zu\n", flen[0], flen[1],
                         flen[2]);
        memcpy(bundle + n, files, len);
        *out = bundle;
        *outlen = (size_t)n + len;
    }
    explicit_bzero(files, len);
    free(files);
    return rc;
}

void
vmd_hostcerts_wipe(char *bundle, size_t len)
{
    if (bundle) {
        explicit_bzero(bundle, len);
        free(bundle);
    }
}
