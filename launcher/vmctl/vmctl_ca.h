/*
 * vmctl_ca.h - the cluster's certificate authority: `vmctl ca init` and
 * `vmctl cert issue HOST`, with OpenSSL's API (no openssl command needed).
 *
 * Files, all in dir (LIQUIDVM_HOME/certs by default), written atomically
 * (temp file + rename), keys mode 0600, the directory 0700:
 *   ca.pem, ca.key          the CA (EC P-256, self-signed, CA:TRUE)
 *   HOST.pem, HOST.key      a host certificate, CN=HOST and SAN DNS:HOST,
 *                           signed by the CA, usable as TLS client and server
 *
 * Returns 0, -EEXIST when the file exists and force is 0, -EINVAL for a host
 * name that is not a valid DNS label sequence, -ENOENT when the CA is missing,
 * or another negative code; err gets a one-line "path: reason".
 */
#ifndef LIQUIDVM_VMCTL_CA_H
#define LIQUIDVM_VMCTL_CA_H

#include <stddef.h>

int vmctl_ca_init(const char *dir, int force, char *err, size_t errlen);
int vmctl_cert_issue(const char *dir, const char *host, int force, char *err, size_t errlen);
/* 1 if name is a host name we accept: 1-253 chars of [A-Za-z0-9.-], no
 * leading '-' or '.', labels of at most 63. */
int vmctl_host_name_ok(const char *name);

#endif
