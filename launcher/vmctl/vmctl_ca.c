/*
 * vmctl_ca.c - the cluster's certificate authority behind `vmctl ca init` and
 * `vmctl cert issue HOST`: an EC P-256 CA and host certificates that
 * vmd_tls.c accepts as both TLS client and server, so every link between
 * daemons is TLS 1.3 with both ends verified.  It implements no seed idea.
 * It uses OpenSSL's C API only, so no openssl command is needed on the
 * hosts.
 *
 * Every file is staged in a temporary file in the same directory and renamed
 * into place, so a crash never leaves half a key; without force a file is
 * linked into place instead, which fails rather than clobbers if another
 * vmctl got there first.  Key bytes are wiped from our buffers once written
 * or loaded (OpenBSD httpd).
 */
#include "vmctl_ca.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wire.h"
#include "wire_tls.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#define CA_DAYS (10 * 365 + 2)          /* ten years, leap days included */
/* Office clocks drift; a certificate issued on one host must already be
 * valid on a host whose clock is a little behind. */
#define CA_BACKDATE_SECS (60 * 60)

/* A file written to tmp, waiting to be moved to final. */
struct staged {
    char tmp[PATH_MAX];
    char final[PATH_MAX];
    int live;                           /* tmp exists on disk */
};

/* An OpenSSL failure: the reason of the newest queued error, or what. */
static int
fail_ssl(char *err, size_t errlen, const char *path, const char *what)
{
    unsigned long e = ERR_peek_last_error();
    const char *why = e != 0 ? ERR_reason_error_string(e) : NULL;

    ERR_clear_error();
    if (why != NULL)
        return wire_errf(err, errlen, -EIO, "%s: %s: %s", path, what, why);
    return wire_errf(err, errlen, -EIO, "%s: %s", path, what);
}

int
vmctl_host_name_ok(const char *name)
{
    size_t n, i, label = 0;

    if (name == NULL)
        return 0;
    n = strlen(name);
    if (n == 0 || n > 253)
        return 0;
    for (i = 0; i < n; i++) {
        char c = name[i];

        if (c == '.') {
            if (label == 0 || name[i - 1] == '-')
                return 0;
            label = 0;
            continue;
        }
        /* ASCII ranges, not isalnum(): the locale must not widen them. */
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-'))
            return 0;
        if (c == '-' && label == 0)
            return 0;
        if (++label > 63)
            return 0;
    }
    return label > 0 && name[n - 1] != '-';
}

static int
join(char *out, size_t cap, const char *dir, const char *name, char *err, size_t errlen)
{
    int n = snprintf(out, cap, "%s/%s", dir, name);

    if (n < 0 || (size_t)n >= cap)
        return wire_errf(err, errlen, -ENAMETOOLONG, "%s/%s: path too long", dir, name);
    return 0;
}

/*
 * Make dir (and missing parents) with mode 0700.  The directory holds the
 * CA key, so an existing one that group or others can enter is tightened.
 */
static int
ensure_dir(const char *dir, char *err, size_t errlen)
{
    char path[PATH_MAX];
    struct stat st;
    size_t n = strlen(dir), i;

    if (n == 0)
        return wire_errf(err, errlen, -EINVAL, "empty certificate directory");
    if (n >= sizeof(path))
        return wire_errf(err, errlen, -ENAMETOOLONG, "%s: path too long", dir);
    memcpy(path, dir, n + 1);
    for (i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        path[i] = '\0';
        if (mkdir(path, 0700) < 0 && errno != EEXIST)
            return wire_errf(err, errlen, -errno, "%s: cannot create: %s", path, strerror(errno));
        if (i < n)
            path[i] = '/';
    }
    if (stat(dir, &st) < 0)
        return wire_errf(err, errlen, -errno, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return wire_errf(err, errlen, -ENOTDIR, "%s: not a directory", dir);
    if ((st.st_mode & 07777) != 0700 && chmod(dir, 0700) < 0)
        return wire_errf(err, errlen, -errno, "%s: cannot make it mode 0700: %s", dir,
                    strerror(errno));
    return 0;
}

static int
exists(const char *path)
{
    struct stat st;

    return lstat(path, &st) == 0;
}

/* Write buf to a new temporary file beside final, with mode, synced. */
static int
stage(struct staged *s, const char *dir, const char *name, const void *buf, size_t len,
      mode_t mode, char *err, size_t errlen)
{
    const char *p = buf;
    int fd, rc;

    s->live = 0;
    rc = join(s->final, sizeof(s->final), dir, name, err, errlen);
    if (rc < 0)
        return rc;
    if (snprintf(s->tmp, sizeof(s->tmp), "%s/.%s.XXXXXX", dir, name) >= (int)sizeof(s->tmp))
        return wire_errf(err, errlen, -ENAMETOOLONG, "%s: path too long", s->final);
    /* mkostemp creates the file 0600, so a key is never readable by others,
     * not even for a moment. */
    fd = mkostemp(s->tmp, O_CLOEXEC);
    if (fd < 0)
        return wire_errf(err, errlen, -errno, "%s: cannot create: %s", s->tmp, strerror(errno));
    s->live = 1;
    if (fchmod(fd, mode) < 0)
        goto bad;
    while (len > 0) {
        ssize_t w = write(fd, p, len);

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            goto bad;
        p += w;
        len -= (size_t)w;
    }
    if (fsync(fd) < 0)
        goto bad;
    if (close(fd) < 0) {
        fd = -1;
        goto bad;
    }
    return 0;
bad:
    rc = -errno;
    if (fd >= 0)
        close(fd);
    unlink(s->tmp);
    s->live = 0;
    return wire_errf(err, errlen, rc, "%s: cannot write: %s", s->tmp, strerror(-rc));
}

static void
unstage(struct staged *s)
{
    if (s->live)
        unlink(s->tmp);
    s->live = 0;
}

/*
 * Move the staged files into place, key first.  Without force, link() refuses
 * an existing file atomically, and files placed before a refusal are removed,
 * so the pair appears whole or not at all.  With force, a failure between the
 * two renames (rare: same directory) leaves the new key beside the old
 * certificate, which vmd_tls_ctx_new() refuses as a mismatch.
 */
static int
commit(struct staged *s, size_t n, int force, const char *dir, char *err, size_t errlen)
{
    size_t i, j;
    int rc = 0, fd;

    for (i = 0; i < n; i++) {
        int placed = 0;

        if (force) {
            placed = rename(s[i].tmp, s[i].final) == 0;
        } else if (link(s[i].tmp, s[i].final) == 0) {
            placed = 1;
            unlink(s[i].tmp);
        } else if (errno == EPERM || errno == EOPNOTSUPP || errno == ENOSYS) {
            /* A file system without hard links: rename, trusting the check
             * made before the keys were generated. */
            if (exists(s[i].final))
                errno = EEXIST;
            else
                placed = rename(s[i].tmp, s[i].final) == 0;
        }
        if (placed) {
            s[i].live = 0;
            continue;
        }
        rc = -errno;
        if (rc == -EEXIST)
            wire_errf(err, errlen, rc, "%s: exists (--force replaces it)", s[i].final);
        else
            wire_errf(err, errlen, rc, "%s: %s", s[i].final, strerror(-rc));
        if (!force)
            for (j = 0; j < i; j++)
                unlink(s[j].final);
        return rc;
    }
    /* Make the renames durable; the files themselves were synced. */
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    return 0;
}

static EVP_PKEY *
new_key(void)
{
    return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

/* A random 128-bit serial: unique without keeping a counter.  BIGNUMs are
 * unsigned, so the DER encoding is positive (17 bytes at most, under the
 * 20 of RFC 5280). */
static int
set_random_serial(X509 *x)
{
    unsigned char b[16];
    BIGNUM *bn;
    int ok;

    if (RAND_bytes(b, sizeof(b)) != 1)
        return 0;
    bn = BN_bin2bn(b, sizeof(b), NULL);
    if (bn == NULL)
        return 0;
    ok = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
    BN_free(bn);
    return ok;
}

static int
add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX v3;
    X509_EXTENSION *ext;
    int ok;

    X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
    ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    if (ext == NULL)
        return 0;
    ok = X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    return ok;
}

/*
 * A v3 certificate for key, named cn, valid ten years.  issuer and ikey are
 * NULL for the self-signed CA.
 */
static X509 *
make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *ikey)
{
    X509 *x = X509_new();
    X509_NAME *name;
    char san[300];
    int ok;

    if (x == NULL)
        return NULL;
    name = X509_get_subject_name(x);
    ok = X509_set_version(x, X509_VERSION_3) && set_random_serial(x) &&
         X509_gmtime_adj(X509_getm_notBefore(x), -CA_BACKDATE_SECS) != NULL &&
         X509_time_adj_ex(X509_getm_notAfter(x), CA_DAYS, 0, NULL) != NULL &&
         X509_set_pubkey(x, key) &&
         (issuer != NULL ||
          X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"LiquidVM",
                                     -1, -1, 0)) &&
         X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1,
                                    0) &&
         X509_set_issuer_name(x, issuer != NULL ? X509_get_subject_name(issuer) : name);
    if (ok && issuer == NULL) {
        ok = add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") &&
             add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") &&
             add_ext(x, x, NID_subject_key_identifier, "hash");
    } else if (ok) {
        /* The caller checked cn with vmctl_host_name_ok(), so it cannot
         * smuggle a second entry into the SAN list. */
        snprintf(san, sizeof(san), "DNS:%s", cn);
        ok = add_ext(x, issuer, NID_basic_constraints, "critical,CA:FALSE") &&
             add_ext(x, issuer, NID_key_usage, "critical,digitalSignature") &&
             add_ext(x, issuer, NID_ext_key_usage, "serverAuth,clientAuth") &&
             add_ext(x, issuer, NID_subject_alt_name, san) &&
             add_ext(x, issuer, NID_subject_key_identifier, "hash") &&
             add_ext(x, issuer, NID_authority_key_identifier, "keyid:always");
    }
    if (ok)
        ok = X509_sign(x, issuer != NULL ? ikey : key, EVP_sha256()) > 0;
    if (!ok) {
        X509_free(x);
        return NULL;
    }
    return x;
}

/*
 * Stage key (0600) and cert (0644) as base.key and base.pem.  The PEM of the
 * key is wiped from memory once it is on disk.
 */
static int
stage_pair(struct staged s[2], const char *dir, const char *base, EVP_PKEY *key, X509 *x,
           char *err, size_t errlen)
{
    char name[300];
    /* secmem: a buffer that grows is wiped, not just freed, as it moves. */
    BIO *kb = BIO_new(BIO_s_secmem()), *cb = BIO_new(BIO_s_mem());
    char *kp = NULL, *cp = NULL;
    long kn = 0, cn = 0;
    int rc;

    s[0].live = s[1].live = 0;
    if (kb == NULL || cb == NULL) {
        rc = wire_errf(err, errlen, -ENOMEM, "%s: out of memory", dir);
        goto done;
    }
    if (!PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL) ||
        !PEM_write_bio_X509(cb, x)) {
        rc = fail_ssl(err, errlen, dir, "cannot encode key or certificate");
        goto done;
    }
    kn = BIO_get_mem_data(kb, &kp);
    cn = BIO_get_mem_data(cb, &cp);
    snprintf(name, sizeof(name), "%s.key", base);
    rc = stage(&s[0], dir, name, kp, (size_t)kn, 0600, err, errlen);
    if (rc == 0) {
        snprintf(name, sizeof(name), "%s.pem", base);
        rc = stage(&s[1], dir, name, cp, (size_t)cn, 0644, err, errlen);
    }
done:
    if (kp != NULL)
        OPENSSL_cleanse(kp, (size_t)kn);
    BIO_free(kb);
    BIO_free(cb);
    if (rc < 0) {
        unstage(&s[0]);
        unstage(&s[1]);
    }
    return rc;
}

/* Refuse to start work whose result could not be put in place. */
static int
check_free(const char *dir, const char *base, int force, char *err, size_t errlen)
{
    static const char *const ext[] = { ".key", ".pem" };
    char name[300], path[PATH_MAX];
    size_t i;
    int rc;

    if (force)
        return 0;
    for (i = 0; i < 2; i++) {
        snprintf(name, sizeof(name), "%s%s", base, ext[i]);
        rc = join(path, sizeof(path), dir, name, err, errlen);
        if (rc < 0)
            return rc;
        if (exists(path))
            return wire_errf(err, errlen, -EEXIST, "%s: exists (use force to replace it)", path);
    }
    return 0;
}

int
vmctl_ca_init(const char *dir, int force, char *err, size_t errlen)
{
    struct staged s[2] = { { .live = 0 }, { .live = 0 } };
    EVP_PKEY *key = NULL;
    X509 *x = NULL;
    int rc;

    if (dir == NULL)
        return wire_errf(err, errlen, -EINVAL, "no certificate directory");
    rc = ensure_dir(dir, err, errlen);
    if (rc == 0)
        rc = check_free(dir, "ca", force, err, errlen);
    if (rc < 0)
        return rc;
    key = new_key();
    if (key == NULL) {
        rc = fail_ssl(err, errlen, dir, "cannot generate the CA key");
        goto done;
    }
    x = make_cert(key, "LiquidVM cluster CA", NULL, NULL);
    if (x == NULL) {
        rc = fail_ssl(err, errlen, dir, "cannot make the CA certificate");
        goto done;
    }
    rc = stage_pair(s, dir, "ca", key, x, err, errlen);
    if (rc == 0)
        rc = commit(s, 2, force, dir, err, errlen);
done:
    unstage(&s[0]);
    unstage(&s[1]);
    X509_free(x);
    EVP_PKEY_free(key);
    return rc;
}

/* Read a key file into memory (wire_key_read); the caller wipes and frees it. */
static int
slurp(const char *path, char **out, size_t *outlen, char *err, size_t errlen)
{
    int fd, rc;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return wire_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
    rc = wire_key_read(fd, out, outlen);
    close(fd);
    if (rc == -EFBIG)
        return wire_errf(err, errlen, rc, "%s: larger than %d bytes", path, WIRE_KEY_FILE_MAX - 1);
    if (rc != 0)
        return wire_errf(err, errlen, rc, "%s: %s", path, strerror(-rc));
    return 0;
}

/* vmctl writes keys without a passphrase; one that has a passphrase fails
 * here rather than stopping at OpenSSL's terminal prompt. */
static int
no_passphrase(char *buf, int size, int rwflag, void *arg)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)arg;
    return -1;
}

/* Load the CA certificate and key from dir and check they belong together. */
static int
load_ca(const char *dir, X509 **xout, EVP_PKEY **kout, char *err, size_t errlen)
{
    char cpath[PATH_MAX], kpath[PATH_MAX];
    char *kbuf = NULL;
    size_t klen = 0;
    BIO *b = NULL;
    FILE *f = NULL;
    X509 *x = NULL;
    EVP_PKEY *k = NULL;
    int rc;

    if ((rc = join(cpath, sizeof(cpath), dir, "ca.pem", err, errlen)) < 0 ||
        (rc = join(kpath, sizeof(kpath), dir, "ca.key", err, errlen)) < 0)
        return rc;
    if (!exists(cpath) || !exists(kpath))
        return wire_errf(err, errlen, -ENOENT, "%s: no CA here (run vmctl ca init first)", dir);
    f = fopen(cpath, "re");
    if (f == NULL)
        return wire_errf(err, errlen, -errno, "%s: %s", cpath, strerror(errno));
    x = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    if (x == NULL) {
        ERR_clear_error();
        return wire_errf(err, errlen, -EBADMSG, "%s: not a PEM certificate", cpath);
    }
    rc = slurp(kpath, &kbuf, &klen, err, errlen);
    if (rc < 0)
        goto done;
    b = BIO_new_mem_buf(kbuf, (int)klen);
    if (b == NULL) {
        rc = wire_errf(err, errlen, -ENOMEM, "%s: out of memory", kpath);
        goto done;
    }
    k = PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL);
    if (k == NULL) {
        ERR_clear_error();
        rc = wire_errf(err, errlen, -EBADMSG, "%s: not an unencrypted PEM private key", kpath);
        goto done;
    }
    if (X509_check_private_key(x, k) != 1) {
        ERR_clear_error();
        rc = wire_errf(err, errlen, -EBADMSG, "%s: does not match %s", kpath, cpath);
        goto done;
    }
    *xout = x;
    *kout = k;
    x = NULL;
    k = NULL;
done:
    BIO_free(b);
    if (kbuf != NULL) {
        OPENSSL_cleanse(kbuf, WIRE_KEY_FILE_MAX);
        free(kbuf);
    }
    EVP_PKEY_free(k);
    X509_free(x);
    return rc;
}

/* name as it may go into a message: cut short, control bytes replaced. */
static const char *
printable(const char *name, char *out, size_t cap)
{
    size_t i;

    if (name == NULL)
        return "(null)";
    for (i = 0; name[i] != '\0' && i + 4 < cap; i++)
        out[i] = (unsigned char)name[i] < 0x20 || (unsigned char)name[i] > 0x7e ? '?' : name[i];
    if (name[i] != '\0') {
        memcpy(out + i, "...", 3);
        i += 3;
    }
    out[i] = '\0';
    return out;
}

int
vmctl_cert_issue(const char *dir, const char *host, int force, char *err, size_t errlen)
{
    struct staged s[2] = { { .live = 0 }, { .live = 0 } };
    char shown[72];
    X509 *ca = NULL, *x = NULL;
    EVP_PKEY *cakey = NULL, *key = NULL;
    int rc;

    if (dir == NULL)
        return wire_errf(err, errlen, -EINVAL, "no certificate directory");
    if (!vmctl_host_name_ok(host))
        return wire_errf(err, errlen, -EINVAL,
                    "\"%s\": not a host name (1-253 characters of A-Z a-z 0-9 . -, "
                    "labels of 1-63 not starting or ending with -)",
                    printable(host, shown, sizeof(shown)));
    /* ca.pem and ca.key are the CA's own files. */
    if (strcmp(host, "ca") == 0)
        return wire_errf(err, errlen, -EINVAL, "ca: reserved for the CA's own files");
    rc = load_ca(dir, &ca, &cakey, err, errlen);
    if (rc == 0)
        rc = ensure_dir(dir, err, errlen);
    if (rc == 0)
        rc = check_free(dir, host, force, err, errlen);
    if (rc < 0)
        goto done;
    key = new_key();
    if (key == NULL) {
        rc = fail_ssl(err, errlen, dir, "cannot generate a key");
        goto done;
    }
    x = make_cert(key, host, ca, cakey);
    if (x == NULL) {
        rc = fail_ssl(err, errlen, dir, "cannot make the certificate");
        goto done;
    }
    rc = stage_pair(s, dir, host, key, x, err, errlen);
    if (rc == 0)
        rc = commit(s, 2, force, dir, err, errlen);
done:
    unstage(&s[0]);
    unstage(&s[1]);
    X509_free(x);
    EVP_PKEY_free(key);
    X509_free(ca);
    EVP_PKEY_free(cakey);
    return rc;
}
