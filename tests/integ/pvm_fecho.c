/*
 * pvm_fecho - the C peer of tests/integ/fortran_api.f90, written only
 * against pvm3.h.  Spawned by the Fortran program, it answers each message
 * of tag 1 from its sender with tag 2: it unpacks "int what, int n, then n
 * items of type what" with the C calls (what is a PVM_* type code, which
 * fpvm3.h's STRING..INTEGER8 equal; STRING travels as n bytes), and packs
 * back what, n, the items, and for numbers their sum as a double, so the
 * Fortran side checks both the bytes and C's reading of them.  Tag 99 ends
 * it.  Exit status 0 unless a C call fails.
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main(void)
{
    union { char b[4096]; short s[512]; int i[512]; long l[512]; float f[1024]; double d[512]; } u;
    int me = pvm_mytid();

    if (me < 0)
        return 1;
    for (;;) {
        int buf = pvm_recv(-1, -1), len, tag, src, what, n, k, rc = 0;
        double sum = 0;

        if (buf < 0 || pvm_bufinfo(buf, &len, &tag, &src) < 0)
            return 1;
        if (tag == 99)
            break;
        if (tag != 1 || pvm_upkint(&what, 1, 1) < 0 || pvm_upkint(&n, 1, 1) < 0 || n < 0 ||
            n > 256)
            return 1;
        switch (what) {
        case PVM_STR: case PVM_BYTE: rc = pvm_upkbyte(u.b, n, 1); break;
        case PVM_SHORT: rc = pvm_upkshort(u.s, n, 1); break;
        case PVM_INT: rc = pvm_upkint(u.i, n, 1); break;
        case PVM_FLOAT: rc = pvm_upkfloat(u.f, n, 1); break;
        case PVM_CPLX: rc = pvm_upkcplx(u.f, n, 1); break;
        case PVM_DOUBLE: rc = pvm_upkdouble(u.d, n, 1); break;
        case PVM_DCPLX: rc = pvm_upkdcplx(u.d, n, 1); break;
        case PVM_LONG: rc = pvm_upklong(u.l, n, 1); break;
        default: return 1;
        }
        if (rc < 0)
            return 1;
        for (k = 0; k < n; k++) {
            switch (what) {
            case PVM_STR: case PVM_BYTE: sum += (unsigned char)u.b[k]; break;
            case PVM_SHORT: sum += u.s[k]; break;
            case PVM_INT: sum += u.i[k]; break;
            case PVM_FLOAT: sum += u.f[k]; break;
            case PVM_CPLX: sum += u.f[2 * k] + u.f[2 * k + 1]; break;
            case PVM_DOUBLE: sum += u.d[k]; break;
            case PVM_DCPLX: sum += u.d[2 * k] + u.d[2 * k + 1]; break;
            case PVM_LONG: sum += (double)u.l[k]; break;
            }
        }
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&what, 1, 1);
        pvm_pkint(&n, 1, 1);
        switch (what) {
        case PVM_STR: case PVM_BYTE: pvm_pkbyte(u.b, n, 1); break;
        case PVM_SHORT: pvm_pkshort(u.s, n, 1); break;
        case PVM_INT: pvm_pkint(u.i, n, 1); break;
        case PVM_FLOAT: pvm_pkfloat(u.f, n, 1); break;
        case PVM_CPLX: pvm_pkcplx(u.f, n, 1); break;
        case PVM_DOUBLE: pvm_pkdouble(u.d, n, 1); break;
        case PVM_DCPLX: pvm_pkdcplx(u.d, n, 1); break;
        case PVM_LONG: pvm_pklong(u.l, n, 1); break;
        }
        pvm_pkdouble(&sum, 1, 1);
        if (pvm_send(src, 2) < 0)
            return 1;
    }
    pvm_exit();
    return 0;
}
