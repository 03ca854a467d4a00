/*
 * wire_tls.h - the cluster's TLS policy, one place for every end of a
 * link: the daemons' links to each other (daemon/vmd_tls.c) and the tasks'
 * direct links (lib/pvm/pvm_linkio.c).
 *
 * Who may include it: daemon/ and lib/.  It reads the CA, certificate and
 * key files and nothing else; no global state.
 */
#ifndef LIQUIDVM_WIRE_TLS_H
#define LIQUIDVM_WIRE_TLS_H

#include <stddef.h>

#include <openssl/ssl.h>

/*
 * A context for either role: TLS 1.3 only; both sides must show a
 * certificate that chains to the CA file, the only trust anchor; our own
 * certificate must chain to it too; the key file must not be readable by
 * group or others (checked on the open descriptor) and its bytes are wiped
 * after loading; no session resumption or tickets; only the chain in
 * cert_path is sent.  Returns 0 with *out set, or -errno, -EACCES (key mode),
 * -ENOMEM, WIRE_ETLS (no TLS 1.3) or WIRE_ECONF (a bad file), with the
 * reason in err ("path: what").
 */
int wire_tls_ctx_new(const char *ca_path, const char *cert_path, const char *key_path,
                     SSL_CTX **out, char *err, size_t errlen);

/* The largest key file read, plus one. */
#define WIRE_KEY_FILE_MAX (64 * 1024)
/* The one reader of private key files (the daemon's, the library's, vmctl
 * ca's): the bytes of fd into a buffer of WIRE_KEY_FILE_MAX bytes
 * allocated here, which the caller wipes whole and frees.  0 with *out and
 * *len set, -ENOMEM, -EFBIG (WIRE_KEY_FILE_MAX bytes or more) or -errno. */
int wire_key_read(int fd, char **out, size_t *len);

/*
 * Empty this thread's OpenSSL error queue before an SSL_ call whose
 * SSL_get_error matters.  OpenSSL 3's ERR_clear_error resets every slot of
 * the queue even when it is empty (0.4 us, against 0.05 us to look first):
 * four per round trip were 1.5-2.5 us of a 15-17 us direct round trip
 * between hosts (docs/performance.md).
 */
void wire_tls_clear_errors(void);

#endif
