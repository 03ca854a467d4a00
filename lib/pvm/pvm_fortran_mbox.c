/*
 * pvm_fortran_mbox.c - libfpvm3 (pvm_fortran.h): the message mailbox,
 * message contexts and message handlers.
 *
 * pvmfgetmboxinfo returns one class per call from a snapshot taken at the
 * start of a cycle (info -1 on entry starts a new one); past the last class
 * info is PvmNotFound and the next call starts over.
 *
 * A message handler is called by libpvm3 as int handler(int mid); a
 * Fortran handler is `integer function h(mid)`, which takes mid by
 * reference.  Each pvmfaddmhf takes one of PVM__FMHF_MAX small C
 * trampolines, which knows its slot and calls that slot's Fortran function;
 * pvmfdelmhf frees the slot.
 */
#include "pvm_fortran.h"

#include <stdlib.h>
#include <string.h>

#include "pvm3.h"

void
pvmfputinfo_(char *name, int *bufid, int *flags, int *index, size_t name_len)
{
    char *n;
    int rc = pvm__fstr_in(name, name_len, &n);

    if (rc < 0) {
        *index = rc;
        return;
    }
    *index = pvm_putinfo(n, *bufid, *flags);
    free(n);
}

void
pvmfrecvinfo_(char *name, int *index, int *flags, int *bufid, size_t name_len)
{
    char *n;
    int rc = pvm__fstr_in(name, name_len, &n);

    if (rc < 0) {
        *bufid = rc;
        return;
    }
    *bufid = pvm_recvinfo(n, *index, *flags);
    free(n);
}

void
pvmfdelinfo_(char *name, int *index, int *flags, int *info, size_t name_len)
{
    char *n;
    int rc = pvm__fstr_in(name, name_len, &n);

    if (rc < 0) {
        *info = rc;
        return;
    }
    *info = pvm_delinfo(n, *index, *flags);
    free(n);
}

/* pvmfgetmboxinfo's snapshot: each class's name and entries. */
static struct {
    int n, next;
    struct pvm__fclass { char *name; int nent; int *v; } *c;   /* v: indices, owners, flags */
} pvm__fmbox;

static void
pvm__fmbox_reset(void)
{
    int i;

    for (i = 0; i < pvm__fmbox.n; i++) {
        free(pvm__fmbox.c[i].name);
        free(pvm__fmbox.c[i].v);
    }
    free(pvm__fmbox.c);
    memset(&pvm__fmbox, 0, sizeof pvm__fmbox);
}

static int
pvm__fmbox_load(char *pattern)
{
    struct pvmmboxinfo *cl = NULL;
    int n = 0, i, j, rc = pvm_getmboxinfo(pattern, &n, &cl);

    if (rc < 0)
        return rc;
    if (n <= 0)
        return PvmNotFound;
    pvm__fmbox.c = calloc((size_t)n, sizeof *pvm__fmbox.c);
    if (pvm__fmbox.c == NULL)
        return PvmNoMem;
    pvm__fmbox.n = n;
    for (i = 0; i < n; i++) {
        struct pvm__fclass *c = &pvm__fmbox.c[i];
        int k = cl[i].mi_nentries > 0 ? cl[i].mi_nentries : 0;

        c->nent = k;
        c->name = strdup(cl[i].mi_name ? cl[i].mi_name : "");
        c->v = malloc(3 * sizeof(int) * (size_t)(k ? k : 1));
        if (c->name == NULL || c->v == NULL) {
            pvm__fmbox_reset();
            return PvmNoMem;
        }
        for (j = 0; j < k; j++) {
            c->v[j] = cl[i].mi_indices[j];
            c->v[k + j] = cl[i].mi_owners[j];
            c->v[2 * k + j] = cl[i].mi_flags[j];
        }
    }
    return 0;
}

void
pvmfgetmboxinfo_(char *pattern, char *name, int *nclasses, int *nentries, int *index,
                 int *owner, int *flags, int *info, size_t pattern_len, size_t name_len)
{
    struct pvm__fclass *c;
    char *p;
    int rc;

    if (*info == -1)
        pvm__fmbox_reset();
    if (pvm__fmbox.n == 0) {
        if ((rc = pvm__fstr_in(pattern, pattern_len, &p)) < 0) {
            *info = rc;
            return;
        }
        if (p[0] == '\0') {
            free(p);
            p = strdup("*");
            if (p == NULL) {
                *info = PvmNoMem;
                return;
            }
        }
        rc = pvm__fmbox_load(p);
        free(p);
        if (rc < 0) {
            *nclasses = 0;
            *info = rc;
            return;
        }
    }
    if (pvm__fmbox.next == pvm__fmbox.n) {
        pvm__fmbox_reset();
        *info = PvmNotFound;
        return;
    }
    c = &pvm__fmbox.c[pvm__fmbox.next++];
    *nclasses = pvm__fmbox.n;
    *nentries = c->nent;
    memcpy(index, c->v, sizeof(int) * (size_t)c->nent);
    memcpy(owner, c->v + c->nent, sizeof(int) * (size_t)c->nent);
    memcpy(flags, c->v + 2 * c->nent, sizeof(int) * (size_t)c->nent);
    *info = pvm__fstr_out(name, name_len, c->name);
}

void
pvmfnewcontext_(int *ctx)
{
    *ctx = pvm_newcontext();
}

void
pvmfsetcontext_(int *new_ctx, int *old_ctx)
{
    *old_ctx = pvm_setcontext(*new_ctx);
}

void
pvmfgetcontext_(int *ctx)
{
    *ctx = pvm_getcontext();
}

void
pvmffreecontext_(int *ctx, int *info)
{
    *info = pvm_freecontext(*ctx);
}

/* The handlers' slots: the Fortran function and the mhid it was given. */
#define PVM__FMHF_MAX 16
static struct {
    int (*func)(int *mid);
    int mhid;
} pvm__fmhf[PVM__FMHF_MAX];

static int
pvm__fmhf_call(int slot, int mid)
{
    int (*f)(int *) = pvm__fmhf[slot].func;

    return f ? f(&mid) : 0;
}

#define PVM__FMHF_TRAMP(i) \
    static int pvm__fmhf_##i(int mid) { return pvm__fmhf_call(i, mid); }
PVM__FMHF_TRAMP(0) PVM__FMHF_TRAMP(1) PVM__FMHF_TRAMP(2) PVM__FMHF_TRAMP(3)
PVM__FMHF_TRAMP(4) PVM__FMHF_TRAMP(5) PVM__FMHF_TRAMP(6) PVM__FMHF_TRAMP(7)
PVM__FMHF_TRAMP(8) PVM__FMHF_TRAMP(9) PVM__FMHF_TRAMP(10) PVM__FMHF_TRAMP(11)
PVM__FMHF_TRAMP(12) PVM__FMHF_TRAMP(13) PVM__FMHF_TRAMP(14) PVM__FMHF_TRAMP(15)

static int (*const pvm__fmhf_tramp[PVM__FMHF_MAX])(int) = {
    pvm__fmhf_0, pvm__fmhf_1, pvm__fmhf_2, pvm__fmhf_3, pvm__fmhf_4, pvm__fmhf_5,
    pvm__fmhf_6, pvm__fmhf_7, pvm__fmhf_8, pvm__fmhf_9, pvm__fmhf_10, pvm__fmhf_11,
    pvm__fmhf_12, pvm__fmhf_13, pvm__fmhf_14, pvm__fmhf_15,
};

/* mhid gets the handler's id, or PvmBadParam (no function) or PvmOutOfRes
 * (every slot taken), or what pvm_addmhf returns. */
void
pvmfaddmhf_(int *src, int *tag, int *ctx, int (*func)(int *mid), int *mhid)
{
    int i, rc;

    if (func == NULL) {
        *mhid = PvmBadParam;
        return;
    }
    for (i = 0; i < PVM__FMHF_MAX && pvm__fmhf[i].func != NULL; i++)
        ;
    if (i == PVM__FMHF_MAX) {
        *mhid = PvmOutOfRes;
        return;
    }
    pvm__fmhf[i].func = func;
    rc = pvm_addmhf(*src, *tag, *ctx, pvm__fmhf_tramp[i]);
    if (rc < 0)
        pvm__fmhf[i].func = NULL;
    else
        pvm__fmhf[i].mhid = rc;
    *mhid = rc;
}

void
pvmfdelmhf_(int *mhid, int *info)
{
    int i, rc = pvm_delmhf(*mhid);

    if (rc >= 0)
        for (i = 0; i < PVM__FMHF_MAX; i++)
            if (pvm__fmhf[i].func != NULL && pvm__fmhf[i].mhid == *mhid)
                pvm__fmhf[i].func = NULL;
    *info = rc;
}
