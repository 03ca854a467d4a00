/*
 * fuzz_ckfile.c - libFuzzer harness for the checkpoint file reader (issue
 * 26, lib/liquid/liq_ckfile.c): what `--resume DIR` reads, from a file
 * anyone might have cut short, edited or swapped.
 *
 * The input is the file's bytes.  liq_ckfile_decode sees them straight
 * from memory and must either refuse them with a terminated message and
 * nothing allocated, or accept them with a header that holds together
 * (lengths that match the input, a NUL-ended description) and values that
 * are all there; an accepted file is then encoded again and must give the
 * same header bytes.  The same bytes then go to a scratch directory's
 * checkpoint.lqc for liq_ckfile_read, which must agree with the decoder.
 * A crash, a leak or undefined behaviour is a bug.
 *
 * Seeds (corpus/ckfile/, make_seeds.py): small well-formed files of one and
 * two state boxes and an empty description, and damaged ones (a bit of the
 * field flipped, truncated, a header alone, bytes after the end).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "liq_ckfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[64];

static void
scratch_remove(void)
{
    char path[128];

    snprintf(path, sizeof(path), "%s/%s", scratch, LIQ_CKF_NAME);
    unlink(path);
    rmdir(scratch);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct liq_ckfile f, g;
    char why[256], path[128];
    unsigned char hdr[LIQ_CKF_HDR + LIQ_CKF_DESC_MAX + 8];
    int rc, rc2;
    FILE *fp;

    memset(why, 'X', sizeof(why));
    rc = liq_ckfile_decode(data, size, "fuzz", &f, why, sizeof(why));
    if (rc != 0) {
        if (f.v != NULL || strnlen(why, sizeof(why)) == sizeof(why) || why[0] == '\0')
            abort();            /* refused, but with memory or without a message */
    } else {
        size_t pts = liq_ckfile_points(&f), bytes = pts * (size_t)f.nstate * sizeof(double);
        long h = liq_ckfile_header(&f, hdr, sizeof(hdr));
        volatile double sum = 0;

        if (h <= 0 || (size_t)h + bytes != size || memcmp(hdr, data, (size_t)h) != 0)
            abort();            /* accepted bytes that do not encode back */
        for (size_t i = 0; i < pts * (size_t)f.nstate; i++)
            sum += f.v[i];      /* every value there (ASan) */
        (void)sum;
    }
    if (scratch[0] == '\0') {
        const char *dir = getenv("TMPDIR");

        snprintf(scratch, sizeof(scratch), "%s/lvm-fuzz-ck.XXXXXX", dir && dir[0] ? dir : "/tmp");
        if (mkdtemp(scratch) == NULL)
            abort();
        atexit(scratch_remove);
    }
    snprintf(path, sizeof(path), "%s/%s", scratch, LIQ_CKF_NAME);
    if ((fp = fopen(path, "wb")) == NULL)
        abort();
    if (size > 0 && fwrite(data, 1, size, fp) != size)
        abort();
    fclose(fp);
    rc2 = liq_ckfile_read(scratch, &g, why, sizeof(why));
    if ((rc == 0) != (rc2 == 0))
        abort();                /* the file and the memory read differently */
    if (rc == 0 && (g.iter != f.iter || memcmp(g.v, f.v, liq_ckfile_points(&f) *
                                                         (size_t)f.nstate * sizeof(double)) != 0))
        abort();
    liq_ckfile_free(&g);
    liq_ckfile_free(&f);
    return 0;
}
