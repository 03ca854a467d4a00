/*
 * liq_ckfile.c - the checkpoint file (liq_ckfile.h has its layout; issue
 * 26, "--checkpoint DIR" and "--resume DIR"): encode its header, decode
 * and check a whole file, write it atomically, read it back.  It trusts
 * nothing it reads: every length is checked against the bytes there are
 * before anything is allocated or copied, and both the header and the
 * data carry an XXH64 (our own, so libliquid needs no crypto library; it
 * is there to catch damage, not forgery).
 */
#include "liq_ckfile.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const unsigned char ckf_magic[8] = { 'L', 'I', 'Q', 'C', 'K', 'P', 'T', 0 };
static const uint32_t ckf_order = 0x01020304u;

/* ---- XXH64 (Yann Collet's xxHash, the 64-bit variant) ---- */

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static inline uint64_t
rotl(uint64_t x, int r)
{
    return x << r | x >> (64 - r);
}

static inline uint64_t
rd64(const unsigned char *p)
{
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline uint32_t
rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t
xround(uint64_t acc, uint64_t in)
{
    acc += in * P2;
    return rotl(acc, 31) * P1;
}

static inline uint64_t
xmerge(uint64_t acc, uint64_t v)
{
    acc ^= xround(0, v);
    return acc * P1 + P4;
}

uint64_t
liq_xxh64(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data, *end = p + len;
    uint64_t h;

    if (len >= 32) {
        uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;

        for (; end - p >= 32; p += 32) {
            v1 = xround(v1, rd64(p));
            v2 = xround(v2, rd64(p + 8));
            v3 = xround(v3, rd64(p + 16));
            v4 = xround(v4, rd64(p + 24));
        }
        h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
        h = xmerge(h, v1);
        h = xmerge(h, v2);
        h = xmerge(h, v3);
        h = xmerge(h, v4);
    } else {
        h = seed + P5;
    }
    h += (uint64_t)len;
    for (; end - p >= 8; p += 8)
        h = rotl(h ^ xround(0, rd64(p)), 27) * P1 + P4;
    if (end - p >= 4) {
        h = rotl(h ^ (uint64_t)rd32(p) * P1, 23) * P2 + P3;
        p += 4;
    }
    for (; p < end; p++)
        h = rotl(h ^ *p * P5, 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    return h ^ h >> 32;
}

/* ---- the header ---- */

static void
wr32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> 8 * i);
}

static void
wr64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> 8 * i);
}

size_t
liq_ckfile_points(const struct liq_ckfile *f)
{
    return (size_t)f->n[0] * (size_t)f->n[1] * (size_t)f->n[2];
}

static int
ckf_valid(const struct liq_ckfile *f)
{
    for (int a = 0; a < 3; a++)
        if (f->n[a] < 1 || f->n[a] > LIQ_CKF_AXIS_MAX)
            return 0;
    return f->iter > 0 && f->ck_iters > 0 && f->nstate >= 1 && f->nstate <= LIQ_CKF_STATE_MAX &&
           memchr(f->desc, '\0', sizeof(f->desc)) != NULL;
}

static size_t
ckf_hlen(size_t d)
{
    return (LIQ_CKF_HDR + d + 7) & ~(size_t)7;
}

long
liq_ckfile_header(const struct liq_ckfile *f, unsigned char *buf, size_t len)
{
    size_t d, h;
    uint64_t data;

    if (!ckf_valid(f))
        return -EINVAL;
    d = strlen(f->desc);
    h = ckf_hlen(d);
    if (len < h)
        return -EINVAL;
    data = (uint64_t)liq_ckfile_points(f) * (uint64_t)f->nstate * sizeof(double);
    memset(buf, 0, h);
    memcpy(buf, ckf_magic, 8);
    wr32(buf + 8, LIQ_CKF_VERSION);
    wr32(buf + 12, (uint32_t)h);
    wr32(buf + 16, (uint32_t)f->iter);
    wr32(buf + 20, (uint32_t)f->ck_iters);
    wr32(buf + 24, (uint32_t)f->nstate);
    for (int a = 0; a < 3; a++)
        wr32(buf + 28 + 4 * a, (uint32_t)f->n[a]);
    wr32(buf + 40, (uint32_t)d);
    memcpy(buf + 44, &ckf_order, 4);
    wr64(buf + 48, h + data);
    wr64(buf + 56, liq_xxh64(f->v, (size_t)data, 0));
    memcpy(buf + LIQ_CKF_HDR, f->desc, d);
    wr64(buf + 72, liq_xxh64(buf, h, 0));
    return (long)h;
}

/*
 * The header of a file of fsize bytes from its first len bytes (all of it,
 * or at least its header): out's fields, or -EPROTO with why.  Nothing is
 * allocated from a length before the header's checksum vouches for it.
 */
static int
ckf_head(const unsigned char *p, size_t len, uint64_t fsize, const char *name,
         struct liq_ckfile *out, uint32_t *hp, char *why, size_t whylen)
{
    unsigned char hdr[LIQ_CKF_HDR], *copy;
    uint32_t order, h, d;
    uint64_t total, data, sum;

    memset(out, 0, sizeof(*out));
    if (len < LIQ_CKF_HDR || memcmp(p, ckf_magic, 8) != 0)
        return wire_errf(why, whylen, -EPROTO, "%s: not a liquid checkpoint (%s)", name,
                       len < LIQ_CKF_HDR ? "shorter than its header" : "no LIQCKPT magic");
    if (rd32(p + 8) != LIQ_CKF_VERSION)
        return wire_errf(why, whylen, -EPROTO, "%s: checkpoint version %u, this program reads %d",
                       name, rd32(p + 8), LIQ_CKF_VERSION);
    memcpy(&order, p + 44, 4);
    if (order != ckf_order)
        return wire_errf(why, whylen, -EPROTO,
                       "%s: written on a machine of another byte order", name);
    h = rd32(p + 12);
    d = rd32(p + 40);
    if (d >= LIQ_CKF_DESC_MAX || h != ckf_hlen(d))
        return wire_errf(why, whylen, -EPROTO, "%s: damaged (header length %u, description %u)",
                       name, h, d);
    if (h > len)
        return wire_errf(why, whylen, -EPROTO, "%s: truncated: %llu bytes, shorter than its "
                       "header (%u)", name, (unsigned long long)fsize, h);
    /* The header's own hash, over its bytes with the hash's as zeros. */
    if ((copy = malloc(h)) == NULL)
        return wire_errf(why, whylen, -ENOMEM, "%s: out of memory", name);
    memcpy(copy, p, h);
    memset(copy + 72, 0, 8);
    sum = liq_xxh64(copy, h, 0);
    free(copy);
    if (sum != rd64(p + 72))
        return wire_errf(why, whylen, -EPROTO, "%s: damaged (its header's checksum is wrong)",
                       name);
    memcpy(hdr, p, sizeof(hdr));
    out->iter = (int)rd32(hdr + 16);
    out->ck_iters = (int)rd32(hdr + 20);
    out->nstate = (int)rd32(hdr + 24);
    for (int a = 0; a < 3; a++)
        out->n[a] = (int)rd32(hdr + 28 + 4 * a);
    memcpy(out->desc, p + LIQ_CKF_HDR, d);
    out->desc[d] = '\0';
    if (!ckf_valid(out) || strlen(out->desc) != d)
        return wire_errf(why, whylen, -EPROTO, "%s: damaged (iteration %d, %d state boxes, grid "
                       "%dx%dx%d)", name, out->iter, out->nstate, out->n[0], out->n[1], out->n[2]);
    data = (uint64_t)liq_ckfile_points(out) * (uint64_t)out->nstate * sizeof(double);
    total = rd64(hdr + 48);
    if (total != h + data)
        return wire_errf(why, whylen, -EPROTO, "%s: damaged (its length field says %llu bytes, "
                       "its grid %llu)", name, (unsigned long long)total,
                       (unsigned long long)(h + data));
    if (fsize != total)
        return wire_errf(why, whylen, -EPROTO, "%s: %s: %llu bytes, its header says %llu", name,
                       fsize < total ? "truncated" : "bytes after its end",
                       (unsigned long long)fsize, (unsigned long long)total);
    *hp = h;
    return 0;
}

int
liq_ckfile_decode(const unsigned char *p, size_t len, const char *name, struct liq_ckfile *out,
                  char *why, size_t whylen)
{
    uint32_t h = 0;
    size_t data;
    int rc;

    if ((rc = ckf_head(p, len, len, name, out, &h, why, whylen)) != 0)
        return rc;
    data = len - h;
    if (liq_xxh64(p + h, data, 0) != rd64(p + 56))
        return wire_errf(why, whylen, -EPROTO, "%s: damaged (the checksum of its %zu bytes of "
                       "field is wrong)", name, data);
    if ((out->v = malloc(data)) == NULL)
        return wire_errf(why, whylen, -ENOMEM, "%s: out of memory for %zu bytes", name, data);
    memcpy(out->v, p + h, data);
    return 0;
}

/* ---- the file ---- */

static int
write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = write(fd, p, len > ((size_t)1 << 30) ? (size_t)1 << 30 : len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int
liq_ckfile_write(const char *dir, const struct liq_ckfile *f, size_t *bytes, char *why,
                 size_t whylen)
{
    char path[4096], tmp[4096];
    unsigned char *hdr = malloc(ckf_hlen(LIQ_CKF_DESC_MAX));
    long h;
    int fd = -1, dfd = -1, rc;
    size_t data = liq_ckfile_points(f) * (size_t)f->nstate * sizeof(double);

    if (hdr == NULL)
        return wire_errf(why, whylen, -ENOMEM, "out of memory");
    if ((h = liq_ckfile_header(f, hdr, ckf_hlen(LIQ_CKF_DESC_MAX))) < 0) {
        rc = wire_errf(why, whylen, -EINVAL, "a checkpoint of iteration %d is not valid",
                     f->iter);
        goto done;
    }
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, LIQ_CKF_NAME) >= sizeof(path) ||
        (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, LIQ_CKF_NAME) >= sizeof(tmp)) {
        rc = wire_errf(why, whylen, -ENAMETOOLONG, "%s: name too long", dir);
        goto done;
    }
    /* The old file stays whole until the new one is: rename replaces it
     * in one step, and only after the new bytes are on the disk. */
    rc = 0;
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0 ||
        (rc = write_all(fd, hdr, (size_t)h)) != 0 || (rc = write_all(fd, f->v, data)) != 0 ||
        fsync(fd) != 0) {
        if (rc == 0)
            rc = -errno;
        rc = wire_errf(why, whylen, rc, "cannot write %s: %s", tmp, strerror(-rc));
        goto done;
    }
    if (close(fd) != 0) {
        fd = -1;
        rc = wire_errf(why, whylen, -errno, "cannot write %s: %s", tmp, strerror(errno));
        goto done;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        rc = wire_errf(why, whylen, -errno, "cannot rename %s to %s: %s", tmp, path,
                     strerror(errno));
        goto done;
    }
    /* The rename itself is durable once the directory is synced. */
    if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
        (void)fsync(dfd);
    if (bytes != NULL)
        *bytes = (size_t)h + data;
    rc = 0;
done:
    if (dfd >= 0)
        close(dfd);
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    free(hdr);
    return rc;
}

int
liq_ckfile_read(const char *dir, struct liq_ckfile *out, char *why, size_t whylen)
{
    char path[4096];
    struct stat sb;
    unsigned char *buf = NULL;
    size_t got = 0;
    int fd, rc;

    memset(out, 0, sizeof(*out));
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, LIQ_CKF_NAME) >= sizeof(path))
        return wire_errf(why, whylen, -ENAMETOOLONG, "%s: name too long", dir);
    if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
        rc = -errno;
        if (rc == -ENOENT)
            return wire_errf(why, whylen, rc, "%s: no checkpoint there (no %s)", dir,
                           LIQ_CKF_NAME);
        return wire_errf(why, whylen, rc, "cannot read %s: %s", path, strerror(-rc));
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        rc = wire_errf(why, whylen, -EPROTO, "%s: not a regular file", path);
        goto done;
    }
    /* A file that is not a checkpoint, or not whole, is refused from its
     * header before its size is trusted with an allocation. */
    {
        unsigned char head[LIQ_CKF_HDR + LIQ_CKF_DESC_MAX + 8];
        ssize_t n = pread(fd, head, sizeof(head), 0);
        uint32_t h;

        if (n < 0) {
            rc = wire_errf(why, whylen, -errno, "cannot read %s: %s", path, strerror(errno));
            goto done;
        }
        if ((rc = ckf_head(head, (size_t)n, (uint64_t)sb.st_size, path, out, &h, why,
                           whylen)) != 0)
            goto done;
    }
    if ((buf = malloc(sb.st_size > 0 ? (size_t)sb.st_size : 1)) == NULL) {
        rc = wire_errf(why, whylen, -ENOMEM, "%s: out of memory for %lld bytes", path,
                     (long long)sb.st_size);
        goto done;
    }
    while (got < (size_t)sb.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)sb.st_size - got);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = wire_errf(why, whylen, -errno, "cannot read %s: %s", path, strerror(errno));
            goto done;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    rc = liq_ckfile_decode(buf, got, path, out, why, whylen);
done:
    free(buf);
    close(fd);
    return rc;
}

/* The value of the line "key value" in desc, as a pointer and length. */
static const char *
desc_get(const char *desc, const char *key, size_t *len)
{
    size_t k = strlen(key);

    for (const char *l = desc; *l != '\0';) {
        const char *e = strchr(l, '\n');
        size_t n = e != NULL ? (size_t)(e - l) : strlen(l);

        if (n > k && strncmp(l, key, k) == 0 && l[k] == ' ') {
            *len = n - k - 1;
            return l + k + 1;
        }
        l += n + (e != NULL);
    }
    return NULL;
}

int
liq_ckfile_same_job(const char *have, const char *want, char *why, size_t whylen)
{
    /* Every key of either, this job's first: the first that differs is named. */
    for (int pass = 0; pass < 2; pass++) {
        const char *src = pass == 0 ? want : have;

        for (const char *l = src; *l != '\0';) {
            const char *e = strchr(l, '\n'), *sp, *a, *b;
            size_t n = e != NULL ? (size_t)(e - l) : strlen(l), la = 0, lb = 0;
            char key[64];

            sp = memchr(l, ' ', n);
            if (sp != NULL && (size_t)(sp - l) < sizeof(key)) {
                memcpy(key, l, (size_t)(sp - l));
                key[sp - l] = '\0';
                a = desc_get(have, key, &la);
                b = desc_get(want, key, &lb);
                if (a == NULL || b == NULL || la != lb || memcmp(a, b, la) != 0)
                    return wire_errf(why, whylen, -1, "the checkpoint is of another job: %s "
                                   "%.*s there, %.*s here", key, a ? (int)la : 6,
                                   a ? a : "(none)", b ? (int)lb : 6, b ? b : "(none)");
            }
            l += n + (e != NULL);
        }
    }
    return 0;
}

void
liq_ckfile_free(struct liq_ckfile *f)
{
    free(f->v);
    f->v = NULL;
}
