/*
 * fuzz_pvm_unpack.c - libFuzzer harness for libpvm3's unpacking functions on
 * a received buffer (lib/pvm/pvm_pack.c, pvm_buf.c): what a task does with
 * a message body that a hostile or broken sender built.
 *
 * Input: byte 0 picks the sender's encoding word (XDR, our raw layout, an
 * alien one), byte 1 how many unpack calls to make, then that many op
 * bytes (which call, how many items, what stride), then the body.  The body
 * becomes the receive buffer (pvm__buf_adopt, as a frame from the daemon
 * does) and the calls run in order, each into a buffer that holds what the
 * body could possibly give.  A string the caller's buffer is told to hold
 * ("%Ns") must come back terminated; pvm_upkstr's result must be a string
 * within the body's length.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pvm3.h"
#include "pvm_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
one_op(uint8_t op, size_t blen, void *out, size_t outcap)
{
    int nitem = (op >> 4) + 1;
    int stride = (op & 0x08) ? 2 : 1;
    char *s = out;

    /* Every array below has room for nitem * stride elements of 16 bytes. */
    (void)outcap;
    switch (op & 0x07) {
    case 0: pvm_upkbyte(out, nitem, stride); break;
    case 1: pvm_upkint(out, nitem, stride); break;
    case 2: pvm_upkdouble(out, nitem, stride); break;
    case 3: pvm_upkshort(out, nitem, stride); break;
    case 4: pvm_upkdcplx(out, nitem, stride); break;
    case 5:
        if (pvm_upkstr(s) == PvmOk && strnlen(s, blen + 1) > blen)
            abort();            /* not terminated within what was sent */
        break;
    case 6:
        if (pvm_unpackf("%*s", nitem, s) == PvmOk && strnlen(s, (size_t)nitem) >= (size_t)nitem)
            abort();            /* "%Ns" must fit N bytes with its NUL */
        break;
    default:
        pvm_unpackf("%d %hd %ld %lf %c", (int *)out, (short *)out, (long *)out,
                    (double *)out, s);
        break;
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int words[4] = { PVM__ENCWORD_XDR, 0, 0x7, 0x40000 };
    struct pvm__buf *b;

    if (size < 2)
        return 0;
    int encword = (data[0] & 3) == 1 ? pvm__dsig() : words[data[0] & 3];
    size_t nops = data[1] % 32;
    if (size < 2 + nops)
        return 0;
    const uint8_t *ops = data + 2;
    const uint8_t *body = ops + nops;
    size_t blen = size - 2 - nops;
    if (pvm__buf_adopt(encword, (unsigned char *)(uintptr_t)body, blen, blen, 1, &b) != 0)
        return 0;
    pvm_setopt(PvmAutoErr, 0);
    int old = pvm_setrbuf(b->id);
    size_t outcap = blen + 16 * 16 * 2 + 1;
    char *out = malloc(outcap);
    if (out != NULL) {
        for (size_t i = 0; i < nops; i++) {
            memset(out, 'X', outcap);
            one_op(ops[i], blen, out, outcap);
        }
        free(out);
    }
    pvm_setrbuf(old > 0 ? old : 0);
    pvm_freebuf(b->id);
    return 0;
}
