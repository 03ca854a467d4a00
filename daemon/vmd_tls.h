/*
 * vmd_tls.h - a TLS 1.3 engine over memory BIOs that knows nothing of libuv
 * (STYLE.md 5.5).  The glue (vmd_peer.c) feeds it ciphertext read from the
 * socket and writes out whatever vmd_tls_take() returns after *every* call.
 * Two engines can be wired back to back in a test.
 *
 * Context: the daemon's loop thread only; no global state of our own.
 *
 * Policy lives in vmd_tls_ctx_new() alone: TLS 1.3 minimum, verification on
 * both sides (a peer without a certificate fails), the cluster CA as the only
 * trust anchor, key files readable by others refused, key bytes wiped after
 * loading.  If expected_name is given, the peer certificate must name it
 * (X509_check_host) or the handshake fails with WIRE_ENAME.
 *
 * Errors are the negative codes of wire.h: WIRE_ENOCERT, WIRE_EBADCERT,
 * WIRE_ENAME, WIRE_ENOTLS (the bytes are not TLS 1.3), WIRE_ETLS (any other
 * TLS failure), -ENOMEM, -EINVAL.  vmd_tls_error() gives a one-line reason
 * for the log.  After a negative return the engine is dead: take() may still
 * return an alert to send, then the caller closes the connection.
 */
#ifndef LIQUIDVM_VMD_TLS_H
#define LIQUIDVM_VMD_TLS_H

#include <stddef.h>
#include <sys/types.h>

struct vmd_tls_ctx;
struct vmd_tls;

enum vmd_tls_role { VMD_TLS_CLIENT, VMD_TLS_SERVER };

/* Plaintext that arrived, valid only during the call. */
typedef void (*vmd_tls_plain_cb)(void *arg, const void *buf, size_t len);

/*
 * Load the CA, this host's certificate and key.  On failure returns a
 * negative code and writes "path: reason" into err.
 */
int vmd_tls_ctx_new(const char *ca_path, const char *cert_path, const char *key_path,
                    struct vmd_tls_ctx **out, char *err, size_t errlen);
void vmd_tls_ctx_free(struct vmd_tls_ctx *ctx);
/* SHA-256 fingerprint of our own certificate, 64 lowercase hex digits. */
const char *vmd_tls_ctx_fingerprint(const struct vmd_tls_ctx *ctx);

/* expected_name may be NULL (a server that learns the name from the cert). */
struct vmd_tls *vmd_tls_new(struct vmd_tls_ctx *ctx, enum vmd_tls_role role,
                            const char *expected_name, vmd_tls_plain_cb on_plain, void *arg);
void vmd_tls_free(struct vmd_tls *tls);

/*
 * Pass ciphertext from the network.  Drives the handshake and delivers any
 * plaintext through on_plain (possibly several calls).  Returns 0 to go on,
 * 1 when the peer closed TLS in order (close_notify), or a negative code.
 */
int vmd_tls_feed(struct vmd_tls *tls, const void *cipher, size_t len);
/* A client starts the handshake with this (feed(NULL, 0) does the same). */
int vmd_tls_start(struct vmd_tls *tls);

/*
 * Encrypt plaintext.  Before the handshake completes it is queued and sent
 * when it does.  Writes that fit in one record together are gathered and
 * sealed by the next take() (or a larger write), so a frame's header and
 * body written apart share a record.  Returns 0 or a negative code.  The
 * bytes are copied or encrypted before it returns.
 */
int vmd_tls_write(struct vmd_tls *tls, const void *plain, size_t len);

/* Send close_notify (then take() and close). */
void vmd_tls_shutdown(struct vmd_tls *tls);

/*
 * Ciphertext waiting to go to the network: returns its length and a
 * malloc'ed buffer in *out that the caller frees, 0 if none, -ENOMEM.
 */
ssize_t vmd_tls_take(struct vmd_tls *tls, char **out);

int vmd_tls_handshake_done(const struct vmd_tls *tls);
/* The peer certificate's common name once the handshake is done, else NULL. */
const char *vmd_tls_peer_name(const struct vmd_tls *tls);
/* SHA-256 fingerprint of the peer certificate (hex), else NULL. */
const char *vmd_tls_peer_fingerprint(const struct vmd_tls *tls);
/* Why the last negative return happened, for the log.  Never NULL. */
const char *vmd_tls_error(const struct vmd_tls *tls);

#endif
