/*
 * liq_ckfile.h - a job's checkpoint on disk (issue 26, "--checkpoint DIR"):
 * one file, DIR/LIQ_CKF_NAME, that holds everything a master needs to go
 * on with the job after its own death: the iteration, the job's
 * description (what makes its bits) and the state of the whole grid, every
 * state box of every point (what a quantum's move or in-memory copy
 * carries, liq_state_get), at that iteration.  The grid is stored whole,
 * not by quanta, so a job may resume on other hosts and quanta.
 *
 * Who may include it: lib/liquid/ (the master, liq_master_disk.c), the
 * unit test and the fuzz harness.  Pure except liq_ckfile_write/read,
 * which do blocking file I/O; reentrant; nothing is kept between calls.
 *
 * The file, all integers little-endian, doubles in the writer's byte order
 * (the order mark says which; a reader of another refuses the file):
 *
 *   offset  bytes  field
 *   0       8      magic "LIQCKPT\0"
 *   8       4      version (1)
 *   12      4      header length H: 80 + D rounded up to 8
 *   16      4      iteration the state is at (> 0)
 *   20      4      iterations between checkpoints of the job that wrote it
 *   24      4      state boxes S (1 .. LIQ_CKF_STATE_MAX)
 *   28      12     grid interior points per axis nx, ny, nz
 *   40      4      description length D (< LIQ_CKF_DESC_MAX)
 *   44      4      order mark: 0x01020304 as the writer's native uint32
 *   48      8      file length: H + S * nx * ny * nz * 8
 *   56      8      XXH64 of the data
 *   64      8      0
 *   72      8      XXH64 of the header (these 8 bytes as zeros) and description
 *   80      D      the description: "key value" lines (liq_md_describe)
 *   80+D    pad    zeros to H
 *   H       ...    the data: state box s, then z, then y, then x fastest
 *
 * Errors: 0 or a negative code with why (when non-NULL) holding a sentence
 * that names the file: -EINVAL bad arguments; -EPROTO not a checkpoint, or
 * a damaged or truncated one; -ENOENT no checkpoint in DIR; -ENOMEM; other
 * -errno from the file system.
 */
#ifndef LIQUIDVM_LIQ_CKFILE_H
#define LIQUIDVM_LIQ_CKFILE_H

#include <stddef.h>
#include <stdint.h>

#define LIQ_CKF_NAME "checkpoint.lqc"
#define LIQ_CKF_HDR 80
#define LIQ_CKF_VERSION 1
#define LIQ_CKF_DESC_MAX 4096
#define LIQ_CKF_STATE_MAX 64
#define LIQ_CKF_AXIS_MAX (1 << 20)

struct liq_ckfile {
    int iter;                   /* the iteration the state is at */
    int ck_iters;               /* iterations between checkpoints when it was written */
    int nstate;                 /* state boxes per point */
    int n[3];                   /* grid interior points per axis */
    char desc[LIQ_CKF_DESC_MAX];/* the job's description, NUL-ended */
    double *v;                  /* nstate * nx * ny * nz values; the struct owns them
                                 * after liq_ckfile_decode/read (liq_ckfile_free) */
};

/* XXH64 (xxHash's 64-bit hash, seed given) of len bytes. */
uint64_t liq_xxh64(const void *p, size_t len, uint64_t seed);
/* Points of the grid, and bytes of the data. */
size_t liq_ckfile_points(const struct liq_ckfile *f);
/* The header and description of f with the data's hash, into buf of len
 * bytes: its length H, or -EINVAL when f is not valid or buf too short. */
long liq_ckfile_header(const struct liq_ckfile *f, unsigned char *buf, size_t len);
/* A whole file's bytes into out (out->v allocated): 0, or -EPROTO /
 * -ENOMEM with why saying what is wrong ("name: ..." with name the file's
 * name for the messages). */
int liq_ckfile_decode(const unsigned char *p, size_t len, const char *name,
                      struct liq_ckfile *out, char *why, size_t whylen);
/* Write f as DIR/LIQ_CKF_NAME: into a temporary file beside it, synced,
 * then renamed over the old one (which stays whole until then) and the
 * directory synced.  *bytes: the file's length.  0 or -errno. */
int liq_ckfile_write(const char *dir, const struct liq_ckfile *f, size_t *bytes, char *why,
                     size_t whylen);
/* Read and check DIR/LIQ_CKF_NAME into out.  0, -ENOENT, -EPROTO, ... */
int liq_ckfile_read(const char *dir, struct liq_ckfile *out, char *why, size_t whylen);
/* Compare the descriptions of the job in a file (have) and of this one
 * (want): 0, or -1 with why naming the first key that differs. */
int liq_ckfile_same_job(const char *have, const char *want, char *why, size_t whylen);
void liq_ckfile_free(struct liq_ckfile *f);

#endif /* LIQUIDVM_LIQ_CKFILE_H */
