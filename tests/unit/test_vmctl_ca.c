/*
 * test_vmctl_ca.c - the cluster CA of launcher/vmctl/vmctl_ca.c: files and modes,
 * refusals, and certificates that OpenSSL itself verifies against the CA.
 * Each test works in its own directory under one mkdtemp() root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "vmctl_ca.h"

static char root[PATH_MAX];

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int
setup_root(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "/tmp/test_vmctl_ca.XXXXXX");
    return mkdtemp(root) != NULL ? 0 : -1;
}

static int
teardown_root(void **state)
{
    (void)state;
    return nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* dir/file into out, which holds PATH_MAX bytes. */
static char *
path_in(char *out, const char *dir, const char *file)
{
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, file);

    assert_true(n > 0 && n < PATH_MAX);
    return out;
}

/* A fresh directory path for one test; not created. */
static const char *
dir_for(const char *name, char *buf, size_t cap)
{
    assert_true(cap >= PATH_MAX);
    return path_in(buf, root, name);
}

static mode_t
mode_of(const char *dir, const char *file)
{
    char path[PATH_MAX];
    struct stat st;

    path_in(path, dir, file);
    assert_int_equal(stat(path, &st), 0);
    return st.st_mode & 07777;
}

static X509 *
read_cert(const char *dir, const char *file)
{
    char path[PATH_MAX];
    FILE *f;
    X509 *x;

    path_in(path, dir, file);
    f = fopen(path, "r");
    assert_non_null(f);
    x = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    assert_non_null(x);
    return x;
}

static EVP_PKEY *
read_key(const char *dir, const char *file)
{
    char path[PATH_MAX];
    FILE *f;
    EVP_PKEY *k;

    path_in(path, dir, file);
    f = fopen(path, "r");
    assert_non_null(f);
    k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    assert_non_null(k);
    return k;
}

/* X509_verify_cert of leaf under the CA in ca_dir, for one TLS purpose. */
static int
verify_under(const char *ca_dir, X509 *leaf, int purpose)
{
    X509 *ca = read_cert(ca_dir, "ca.pem");
    X509_STORE *store = X509_STORE_new();
    X509_STORE_CTX *sc = X509_STORE_CTX_new();
    int ok;

    assert_non_null(store);
    assert_non_null(sc);
    assert_int_equal(X509_STORE_add_cert(store, ca), 1);
    assert_int_equal(X509_STORE_CTX_init(sc, store, leaf, NULL), 1);
    X509_STORE_CTX_set_purpose(sc, purpose);
    ok = X509_verify_cert(sc);
    X509_STORE_CTX_free(sc);
    X509_STORE_free(store);
    X509_free(ca);
    ERR_clear_error();
    return ok;
}

static void
test_vmctl_ca_init_creates_private_dir_and_key(void **state)
{
    char d[PATH_MAX], err[256] = "";

    (void)state;
    /* A missing parent is created too, with the same mode. */
    dir_for("init/certs", d, sizeof(d));
    assert_int_equal(vmctl_ca_init(d, 0, err, sizeof(err)), 0);
    assert_int_equal(mode_of(d, "."), 0700);
    assert_int_equal(mode_of(d, ".."), 0700);
    assert_int_equal(mode_of(d, "ca.key"), 0600);
    assert_int_equal(mode_of(d, "ca.pem"), 0644);
}

static void
test_vmctl_ca_init_tightens_an_open_existing_dir(void **state)
{
    char d[PATH_MAX], err[256] = "";

    (void)state;
    dir_for("open", d, sizeof(d));
    assert_int_equal(mkdir(d, 0755), 0);
    assert_int_equal(chmod(d, 0755), 0);
    assert_int_equal(vmctl_ca_init(d, 0, err, sizeof(err)), 0);
    assert_int_equal(mode_of(d, "."), 0700);
}

static void
test_vmctl_ca_init_leaves_no_temporary_files(void **state)
{
    char d[PATH_MAX], err[256] = "";
    struct dirent *e;
    DIR *dp;
    int n = 0;

    (void)state;
    dir_for("clean", d, sizeof(d));
    assert_int_equal(vmctl_ca_init(d, 0, err, sizeof(err)), 0);
    assert_int_equal(vmctl_cert_issue(d, "node1", 0, err, sizeof(err)), 0);
    dp = opendir(d);
    assert_non_null(dp);
    while ((e = readdir(dp)) != NULL) {
        if (e->d_name[0] == '.')
            assert_true(strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0);
        else
            n++;
    }
    closedir(dp);
    assert_int_equal(n, 4);
}

static void
test_vmctl_ca_init_refuses_to_overwrite_without_force(void **state)
{
    char d[PATH_MAX], err[256] = "";
    X509 *before, *again, *after;

    (void)state;
    dir_for("again", d, sizeof(d));
    assert_int_equal(vmctl_ca_init(d, 0, err, sizeof(err)), 0);
    before = read_cert(d, "ca.pem");
    err[0] = '\0';
    assert_int_equal(vmctl_ca_init(d, 0, err, sizeof(err)), -EEXIST);
    assert_non_null(strstr(err, "ca."));
    again = read_cert(d, "ca.pem");
    assert_int_equal(X509_cmp(before, again), 0);

    assert_int_equal(vmctl_ca_init(d, 1, err, sizeof(err)), 0);
    after = read_cert(d, "ca.pem");
    assert_int_not_equal(X509_cmp(before, after), 0);
    assert_int_equal(mode_of(d, "ca.key"), 0600);
    X509_free(before);
    X509_free(again);
    X509_free(after);
}

static void
test_vmctl_ca_init_refuses_when_only_the_key_exists(void **state)
{
    char d[PATH_MAX], path[PATH_MAX], err[256] = "";
    FILE *f;

    (void)state;
    dir_for("keyonly", d, sizeof(d));
    assert_int_equal(mkdir(d, 0700), 0);
    path_in(path, d, "ca.key");
    f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(vmctl_ca_init(d, 0, err, sizeof(err)), -EEXIST);
}

static void
test_vmctl_cert_issue_without_ca_fails_with_enoent(void **state)
{
    char d[PATH_MAX], err[256] = "";

    (void)state;
    dir_for("noca", d, sizeof(d));
    assert_int_equal(vmctl_cert_issue(d, "node1", 0, err, sizeof(err)), -ENOENT);
    assert_true(strlen(err) > 0);
    assert_int_equal(mkdir(d, 0700), 0);
    assert_int_equal(vmctl_cert_issue(d, "node1", 0, err, sizeof(err)), -ENOENT);
}

static void
test_vmctl_cert_issue_refuses_bad_host_names(void **state)
{
    char d[PATH_MAX], err[256], long_name[301], long_label[70];
    const char *bad[] = { "", "-x", "a..b", "a/b", long_name, ".a", "a.", "a-.b", "a b",
                          "a\nb", long_label, "ca" };
    size_t i;

    (void)state;
    memset(long_name, 'a', 300);
    long_name[300] = '\0';
    memset(long_label, 'b', 64);
    long_label[64] = '\0';
    dir_for("badnames", d, sizeof(d));
    assert_int_equal(vmctl_ca_init(d, 0, err, sizeof(err)), 0);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        assert_int_equal(vmctl_cert_issue(d, bad[i], 0, err, sizeof(err)), -EINVAL);
        assert_true(strlen(err) > 0);
        assert_null(strchr(err, '\n'));
    }
    assert_int_equal(vmctl_cert_issue(d, NULL, 0, err, sizeof(err)), -EINVAL);
}

static void
test_vmctl_host_name_ok_accepts_dns_names(void **state)
{
    char label63[64], name253[254];
    size_t i;

    (void)state;
    memset(label63, 'c', 63);
    label63[63] = '\0';
    /* 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 */
    for (i = 0; i < 253; i++)
        name253[i] = (i % 64 == 63) ? '.' : 'd';
    name253[253] = '\0';
    assert_true(vmctl_host_name_ok("node1"));
    assert_true(vmctl_host_name_ok("a"));
    assert_true(vmctl_host_name_ok("ws-12.lab.example"));
    assert_true(vmctl_host_name_ok("10.0.0.1"));
    assert_true(vmctl_host_name_ok(label63));
    assert_true(vmctl_host_name_ok(name253));
    name253[252] = '\0';
    name253[251] = '.';
    assert_false(vmctl_host_name_ok(name253));
    assert_false(vmctl_host_name_ok("x-"));
    assert_false(vmctl_host_name_ok("a_b"));
    assert_false(vmctl_host_name_ok(NULL));
}

static void
test_vmctl_cert_issued_verifies_against_ca_and_names_host(void **state)
{
    char d[PATH_MAX], err[256] = "";
    X509 *x, *ca;
    EVP_PKEY *k;
    X509_NAME *subj;
    char cn[256];
    GENERAL_NAMES *san;
    const GENERAL_NAME *g;
    BASIC_CONSTRAINTS *bc;
    EXTENDED_KEY_USAGE *eku;
    const ASN1_STRING *dns;

    (void)state;
    dir_for("issue", d, sizeof(d));
    assert_int_equal(vmctl_ca_init(d, 0, err, sizeof(err)), 0);
    assert_int_equal(vmctl_cert_issue(d, "node-7.lab", 0, err, sizeof(err)), 0);
    assert_int_equal(mode_of(d, "node-7.lab.key"), 0600);
    assert_int_equal(mode_of(d, "node-7.lab.pem"), 0644);

    x = read_cert(d, "node-7.lab.pem");
    ca = read_cert(d, "ca.pem");
    k = read_key(d, "node-7.lab.key");
    assert_int_equal(X509_check_private_key(x, k), 1);
    assert_int_equal(X509_get_version(x), X509_VERSION_3);
    assert_int_equal(verify_under(d, x, X509_PURPOSE_SSL_SERVER), 1);
    assert_int_equal(verify_under(d, x, X509_PURPOSE_SSL_CLIENT), 1);
    assert_int_equal(X509_check_issued(ca, x), X509_V_OK);

    subj = X509_get_subject_name(x);
    assert_true(X509_NAME_get_text_by_NID(subj, NID_commonName, cn, sizeof(cn)) > 0);
    assert_string_equal(cn, "node-7.lab");
    san = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
    assert_non_null(san);
    assert_int_equal(sk_GENERAL_NAME_num(san), 1);
    g = sk_GENERAL_NAME_value(san, 0);
    assert_int_equal(g->type, GEN_DNS);
    dns = g->d.dNSName;
    assert_int_equal(ASN1_STRING_length(dns), (int)strlen("node-7.lab"));
    assert_memory_equal(ASN1_STRING_get0_data(dns), "node-7.lab", strlen("node-7.lab"));
    GENERAL_NAMES_free(san);
    assert_int_equal(X509_check_host(x, "node-7.lab", 0, 0, NULL), 1);
    assert_int_not_equal(X509_check_host(x, "node-8.lab", 0, 0, NULL), 1);

    bc = X509_get_ext_d2i(x, NID_basic_constraints, NULL, NULL);
    assert_non_null(bc);
    assert_false(bc->ca);
    BASIC_CONSTRAINTS_free(bc);
    eku = X509_get_ext_d2i(x, NID_ext_key_usage, NULL, NULL);
    assert_non_null(eku);
    assert_int_equal(sk_ASN1_OBJECT_num(eku), 2);
    EXTENDED_KEY_USAGE_free(eku);
    assert_true(X509_get_extended_key_usage(x) & XKU_SSL_SERVER);
    assert_true(X509_get_extended_key_usage(x) & XKU_SSL_CLIENT);
    /* Ten years, give or take the leap days and the backdating. */
    {
        int days = 0, secs = 0;

        assert_int_equal(ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(x),
                                        X509_get0_notAfter(x)), 1);
        assert_in_range(days, 3650, 3653);
    }

    bc = X509_get_ext_d2i(ca, NID_basic_constraints, NULL, NULL);
    assert_non_null(bc);
    assert_true(bc->ca);
    BASIC_CONSTRAINTS_free(bc);
    assert_int_equal(X509_check_ca(ca), 1);
    assert_int_equal(X509_check_ca(x), 0);

    X509_free(x);
    X509_free(ca);
    EVP_PKEY_free(k);
}

static void
test_vmctl_cert_issue_refuses_to_overwrite_without_force(void **state)
{
    char d[PATH_MAX], err[256] = "";
    X509 *a, *b;

    (void)state;
    dir_for("reissue", d, sizeof(d));
    assert_int_equal(vmctl_ca_init(d, 0, err, sizeof(err)), 0);
    assert_int_equal(vmctl_cert_issue(d, "node1", 0, err, sizeof(err)), 0);
    a = read_cert(d, "node1.pem");
    assert_int_equal(vmctl_cert_issue(d, "node1", 0, err, sizeof(err)), -EEXIST);
    assert_int_equal(vmctl_cert_issue(d, "node1", 1, err, sizeof(err)), 0);
    b = read_cert(d, "node1.pem");
    assert_int_not_equal(X509_cmp(a, b), 0);
    X509_free(a);
    X509_free(b);
}

static void
test_vmctl_ca_two_inits_make_different_cas(void **state)
{
    char d1[PATH_MAX], d2[PATH_MAX], err[256] = "";
    X509 *ca1, *ca2, *host1;
    EVP_PKEY *k1, *k2;

    (void)state;
    dir_for("two1", d1, sizeof(d1));
    dir_for("two2", d2, sizeof(d2));
    assert_int_equal(vmctl_ca_init(d1, 0, err, sizeof(err)), 0);
    assert_int_equal(vmctl_ca_init(d2, 0, err, sizeof(err)), 0);
    ca1 = read_cert(d1, "ca.pem");
    ca2 = read_cert(d2, "ca.pem");
    k1 = read_key(d1, "ca.key");
    k2 = read_key(d2, "ca.key");
    assert_int_not_equal(EVP_PKEY_eq(k1, k2), 1);
    assert_int_not_equal(ASN1_INTEGER_cmp(X509_get0_serialNumber(ca1),
                                          X509_get0_serialNumber(ca2)), 0);
    /* The serial is 128 random bits: at least 15 of its 16 bytes are used
     * (one leading zero byte in 256 runs). */
    assert_in_range(ASN1_STRING_length(X509_get0_serialNumber(ca1)), 15, 17);
    assert_int_equal(verify_under(d1, ca1, X509_PURPOSE_ANY), 1);

    assert_int_equal(vmctl_cert_issue(d1, "node1", 0, err, sizeof(err)), 0);
    host1 = read_cert(d1, "node1.pem");
    assert_int_equal(verify_under(d1, host1, X509_PURPOSE_SSL_SERVER), 1);
    assert_int_equal(verify_under(d2, host1, X509_PURPOSE_SSL_SERVER), 0);
    X509_free(ca1);
    X509_free(ca2);
    X509_free(host1);
    EVP_PKEY_free(k1);
    EVP_PKEY_free(k2);
}

static void
test_vmctl_cert_issue_refuses_a_corrupt_ca(void **state)
{
    char d[PATH_MAX], path[PATH_MAX], err[256] = "";
    FILE *f;

    (void)state;
    dir_for("corrupt", d, sizeof(d));
    assert_int_equal(vmctl_ca_init(d, 0, err, sizeof(err)), 0);
    path_in(path, d, "ca.pem");
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("not a certificate\n", f);
    fclose(f);
    err[0] = '\0';
    assert_true(vmctl_cert_issue(d, "node1", 0, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "ca.pem"));
    path_in(path, d, "node1.key");
    assert_int_not_equal(access(path, F_OK), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vmctl_ca_init_creates_private_dir_and_key),
        cmocka_unit_test(test_vmctl_ca_init_tightens_an_open_existing_dir),
        cmocka_unit_test(test_vmctl_ca_init_leaves_no_temporary_files),
        cmocka_unit_test(test_vmctl_ca_init_refuses_to_overwrite_without_force),
        cmocka_unit_test(test_vmctl_ca_init_refuses_when_only_the_key_exists),
        cmocka_unit_test(test_vmctl_cert_issue_without_ca_fails_with_enoent),
        cmocka_unit_test(test_vmctl_cert_issue_refuses_bad_host_names),
        cmocka_unit_test(test_vmctl_host_name_ok_accepts_dns_names),
        cmocka_unit_test(test_vmctl_cert_issued_verifies_against_ca_and_names_host),
        cmocka_unit_test(test_vmctl_cert_issue_refuses_to_overwrite_without_force),
        cmocka_unit_test(test_vmctl_ca_two_inits_make_different_cas),
        cmocka_unit_test(test_vmctl_cert_issue_refuses_a_corrupt_ca),
    };

    return cmocka_run_group_tests_name("vmctl_ca", tests, setup_root, teardown_root);
}
