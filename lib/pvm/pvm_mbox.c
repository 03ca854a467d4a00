/*
 * pvm_mbox.c - the message mailbox: pvm_putinfo, pvm_recvinfo,
 * pvm_delinfo, pvm_getmboxinfo, and PVM 3.3's database calls pvm_insert,
 * pvm_lookup, pvm_delete, which PVM 3.4 keeps on top of the mailbox.
 * The master daemon holds the entries (daemon/vmd_mbox.c).
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What pvm_getmboxinfo handed out last; freed at the next call. */
static void
free_classes(void)
{
    for (int i = 0; i < pvm__ctx.nmbinfo; i++) {
        struct pvmmboxinfo *c = &pvm__ctx.mbinfo[i];
        free(c->mi_name);
        free(c->mi_indices);
        free(c->mi_owners);
        free(c->mi_flags);
    }
    free(pvm__ctx.mbinfo);
    pvm__ctx.mbinfo = NULL;
    pvm__ctx.nmbinfo = 0;
}

static int
mbox_call(int type, struct wire_wbuf *req, unsigned char **body, size_t *len)
{
    int rc = pvm__enroll();
    if (rc)
        return rc;
    return req->err ? req->err : pvm__request(type, req, body, len);
}

/* The owner word is filled in by our daemon; we send a placeholder. */
static void
begin(struct wire_wbuf *b)
{
    wire_wbuf_init(b);
    wire_put_u32(b, 0);
}

int
pvm_putinfo(char *name, int bufid, int flags)
{
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    const unsigned char *p;
    size_t plen;
    int rc;

    if (name == NULL || name[0] == '\0' || strlen(name) >= 256 || flags < 0)
        return pvm__err(-EINVAL, "pvm_putinfo");
    if (bufid <= 0)
        return pvm__err(-EINVAL, "pvm_putinfo");
    struct pvm__buf *b = pvm__buf_get(bufid);
    if (b == NULL)
        return pvm__err(PVM__ENOSUCHBUF, "pvm_putinfo");
    if ((rc = pvm__buf_flatten(b, &p, &plen)) != 0)
        return pvm__err(rc, "pvm_putinfo");
    begin(&req);
    wire_put_str(&req, name);
    wire_put_u32(&req, (uint32_t)flags);
    wire_put_u32(&req, (uint32_t)pvm__buf_encword(b));
    wire_put_bytes(&req, p, plen);
    rc = mbox_call(WIRE_T_MBOX_PUT, &req, &body, &len);
    wire_wbuf_free(&req);
    int32_t index = 0;
    if (rc == 0) {
        struct wire_rbuf r;
        wire_rbuf_init(&r, body, len);
        rc = wire_get_i32(&r, &index);
    }
    free(body);
    /* PvmExists and PvmDenied are answers here, as in PVM: returned quietly. */
    if (rc == -EEXIST)
        return PvmExists;
    if (rc == WIRE_EDENIED)
        return PvmDenied;
    return rc ? pvm__err(rc, "pvm_putinfo") : index;
}

int
pvm_recvinfo(char *name, int index, int flags)
{
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    int rc;

    if (name == NULL || index < 0 || flags < 0)
        return pvm__err(-EINVAL, "pvm_recvinfo");
    begin(&req);
    wire_put_str(&req, name);
    wire_put_i32(&req, index);
    wire_put_u32(&req, (uint32_t)flags);
    rc = mbox_call(WIRE_T_MBOX_GET, &req, &body, &len);
    wire_wbuf_free(&req);
    if (rc == WIRE_ENOTFOUND) {
        free(body);
        return PvmNotFound;
    }
    if (rc == WIRE_EDENIED) {
        free(body);
        return PvmDenied;
    }
    if (rc != 0) {
        free(body);
        return pvm__err(rc, "pvm_recvinfo");
    }
    struct wire_rbuf r;
    uint32_t owner, enc;
    int32_t idx;
    wire_rbuf_init(&r, body, len);
    if (wire_get_u32(&r, &owner) || wire_get_u32(&r, &enc) || wire_get_i32(&r, &idx)) {
        free(body);
        return pvm__err(WIRE_EFRAME, "pvm_recvinfo");
    }
    struct pvm__buf *b;
    pvm__ctx.mb_lastindex = idx;
    rc = pvm__buf_adopt((int)enc, body + r.pos, r.len - r.pos, r.len - r.pos, 1, &b);
    free(body);
    if (rc != 0)
        return pvm__err(rc, "pvm_recvinfo");
    struct pvmminfo mi;
    memset(&mi, 0, sizeof(mi));
    mi.src = (int)owner;
    mi.dst = pvm__ctx.mytid;
    pvm__buf_set_info(b, &mi);
    /* PVM 3.4.6 also makes it the receive buffer (mbox.c unpacks at once);
     * the previous one is left to the program, as pvm_setrbuf leaves it. */
    pvm__ctx.rbuf = b;
    b->unpacking = 1;
    return b->id;
}

int
pvm_delinfo(char *name, int index, int flags)
{
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    if (name == NULL || index < 0)
        return pvm__err(-EINVAL, "pvm_delinfo");
    begin(&req);
    wire_put_str(&req, name);
    wire_put_i32(&req, index);
    wire_put_u32(&req, (uint32_t)flags);
    int rc = mbox_call(WIRE_T_MBOX_DEL, &req, &body, &len);
    wire_wbuf_free(&req);
    free(body);
    if (rc == WIRE_ENOTFOUND)
        return PvmNotFound;
    if (rc == WIRE_EDENIED)
        return PvmDenied;
    return rc ? pvm__err(rc, "pvm_delinfo") : PvmOk;
}

int
pvm_getmboxinfo(char *pattern, int *nclasses, struct pvmmboxinfo **classes)
{
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    begin(&req);
    wire_put_str(&req, pattern ? pattern : "*");
    int rc = mbox_call(WIRE_T_MBOX_LIST, &req, &body, &len);
    wire_wbuf_free(&req);
    if (rc != 0) {
        free(body);
        return pvm__err(rc, "pvm_getmboxinfo");
    }
    free_classes();
    struct wire_rbuf r;
    uint32_t n;
    wire_rbuf_init(&r, body, len);
    if ((rc = wire_get_u32(&r, &n)) != 0 || n > 65536 ||
        (pvm__ctx.mbinfo = calloc(n ? n : 1, sizeof(struct pvmmboxinfo))) == NULL) {
        free(body);
        return pvm__err(rc ? rc : -ENOMEM, "pvm_getmboxinfo");
    }
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        struct pvmmboxinfo *c = &pvm__ctx.mbinfo[i];
        char name[256];
        uint32_t ne;
        if ((rc = wire_get_str(&r, name, sizeof(name))) || (rc = wire_get_u32(&r, &ne)) ||
            ne > 65536)
            break;
        c->mi_name = strdup(name);
        c->mi_indices = calloc(ne ? ne : 1, sizeof(int));
        c->mi_owners = calloc(ne ? ne : 1, sizeof(int));
        c->mi_flags = calloc(ne ? ne : 1, sizeof(int));
        pvm__ctx.nmbinfo++;
        if (!c->mi_name || !c->mi_indices || !c->mi_owners || !c->mi_flags) {
            rc = -ENOMEM;
            break;
        }
        c->mi_nentries = (int)ne;
        for (uint32_t k = 0; k < ne && rc == 0; k++) {
            int32_t idx;
            uint32_t owner, fl;
            if ((rc = wire_get_i32(&r, &idx)) || (rc = wire_get_u32(&r, &owner)) ||
                (rc = wire_get_u32(&r, &fl)))
                break;
            c->mi_indices[k] = idx;
            c->mi_owners[k] = (int)owner;
            c->mi_flags[k] = (int)fl;
        }
    }
    free(body);
    if (rc != 0)
        return pvm__err(rc, "pvm_getmboxinfo");
    if (nclasses)
        *nclasses = pvm__ctx.nmbinfo;
    if (classes)
        *classes = pvm__ctx.mbinfo;
    return PvmOk;
}

/*
 * PVM 3.3's database: an int under <name, req>.  req -1 takes any free
 * index (returned); pvm_lookup with req -1 finds the first.
 */
int
pvm_insert(char *name, int req, int data)
{
    if (req < -1 || req >= (int)PvmMboxMaxDirectIndex)
        return pvm__err(-EINVAL, "pvm_insert");
    /* A taken <name, index> is PvmDupEntry, never replaced nor moved on. */
    if (req >= 0) {
        int b = pvm_recvinfo(name, req, PvmMboxDefault);

        if (b >= 0) {
            pvm_freebuf(b);
            return PvmDupEntry;
        }
        if (b != PvmNotFound)
            return b;
    }
    int sb = pvm_mkbuf(PvmDataDefault);
    if (sb < 0)
        return sb;
    int old = pvm_setsbuf(sb);
    pvm_pkint(&data, 1, 1);
    int flags = req < 0 ? PvmMboxMultiInstance
                        : (req << PvmMboxDirectIndexShift) | PvmMboxMultiInstance;
    int rc = pvm_putinfo(name, sb, flags);
    pvm_setsbuf(old);
    pvm_freebuf(sb);
    return rc == PvmExists ? PvmDupEntry : rc;
}

int
pvm_lookup(char *name, int req, int *data)
{
    if (req < -1)
        return pvm__err(-EINVAL, "pvm_lookup");
    int b = pvm_recvinfo(name, req < 0 ? 0 : req, req < 0 ? PvmMboxFirstAvail : PvmMboxDefault);
    if (b < 0)
        return b == PvmNotFound ? PvmNoEntry : b;
    int rb = pvm_setrbuf(b);
    int rc = data ? pvm_upkint(data, 1, 1) : 0;
    pvm_setrbuf(rb);
    pvm_freebuf(b);
    if (rc < 0)
        return rc;
    return pvm__ctx.mb_lastindex;
}

int
pvm_delete(char *name, int req)
{
    if (req < 0)
        return pvm__err(-EINVAL, "pvm_delete");
    int rc = pvm_delinfo(name, req, 0);
    return rc == PvmNotFound ? PvmNoEntry : rc;
}
