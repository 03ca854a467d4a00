/*
 * pvm_host.c - the virtual machine seen from a task: pvm_config,
 * pvm_mstat, pvm_addhosts, pvm_delhosts, pvm_halt, pvm_archcode,
 * pvm_version, pvm_getfds.  The daemon answers with the same requests
 * vmctl uses (lib/wire/wire.h), relaying to the master what changes the VM.
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
host_info_free(struct pvmhostinfo *hi, int n)
{
    for (int i = 0; i < n; i++) {
        free(hi[i].hi_name);
        free(hi[i].hi_arch);
    }
    free(hi);
}

/* Fetch the hosts that are up into a new array *out of *nout entries. */
static int
host_table(struct pvmhostinfo **out, int *nout)
{
    unsigned char *body;
    size_t len;
    int rc = pvm__enroll();
    if (rc)
        return rc;
    if ((rc = pvm__request(WIRE_T_REQ_CONF, NULL, &body, &len)) != 0) {
        free(body);
        return rc;
    }
    struct wire_rbuf r;
    uint32_t serial, n;
    char master[256];
    wire_rbuf_init(&r, body, len);
    if ((rc = wire_get_u32(&r, &serial)) || (rc = wire_get_str(&r, master, sizeof(master))) ||
        (rc = wire_get_u32(&r, &n)) || n > WIRE_TID_MAX_HOSTS) {
        free(body);
        return rc ? rc : WIRE_EFRAME;
    }
    struct pvmhostinfo *hinfo = calloc(n ? n : 1, sizeof(struct pvmhostinfo));
    int nhinfo = 0;
    if (hinfo == NULL) {
        free(body);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t tid, port, speed;
        char name[256], addr[64], arch[16], state[16];
        if ((rc = wire_get_u32(&r, &tid)) || (rc = wire_get_str(&r, name, sizeof(name))) ||
            (rc = wire_get_str(&r, addr, sizeof(addr))) || (rc = wire_get_u32(&r, &port)) ||
            (rc = wire_get_str(&r, arch, sizeof(arch))) || (rc = wire_get_u32(&r, &speed)) ||
            (rc = wire_get_str(&r, state, sizeof(state))))
            break;
        if (strcmp(state, "up") != 0)
            continue;
        struct pvmhostinfo *hi = &hinfo[nhinfo++];
        hi->hi_tid = (int)tid;
        hi->hi_name = strdup(name);
        hi->hi_arch = strdup(arch);
        hi->hi_speed = (int)speed;
        hi->hi_dsig = pvm__dsig();
        if (hi->hi_name == NULL || hi->hi_arch == NULL) {
            rc = -ENOMEM;
            break;
        }
    }
    free(body);
    if (rc) {
        host_info_free(hinfo, nhinfo);
        return rc;
    }
    *out = hinfo;
    *nout = nhinfo;
    return 0;
}

int
pvm__host_name(int dtid, char *name, size_t cap)
{
    unsigned char *body;
    size_t len;
    struct wire_rbuf r;
    uint32_t serial, n;
    char master[256];
    int rc = pvm__enroll();

    if (rc)
        return rc;
    if ((rc = pvm__request(WIRE_T_REQ_CONF, NULL, &body, &len)) != 0) {
        free(body);
        return rc;
    }
    wire_rbuf_init(&r, body, len);
    rc = -ENOENT;
    if (wire_get_u32(&r, &serial) || wire_get_str(&r, master, sizeof(master)) ||
        wire_get_u32(&r, &n))
        n = 0;
    for (uint32_t i = 0; i < n && n <= WIRE_TID_MAX_HOSTS; i++) {
        uint32_t tid, port, speed;
        char hname[256], addr[64], arch[16], state[16];

        if (wire_get_u32(&r, &tid) || wire_get_str(&r, hname, sizeof(hname)) ||
            wire_get_str(&r, addr, sizeof(addr)) || wire_get_u32(&r, &port) ||
            wire_get_str(&r, arch, sizeof(arch)) || wire_get_u32(&r, &speed) ||
            wire_get_str(&r, state, sizeof(state)))
            break;
        if ((int)tid == dtid) {
            snprintf(name, cap, "%s", hname);
            rc = 0;
            break;
        }
    }
    free(body);
    return rc;
}

int
pvm_config(int *nhost, int *narch, struct pvmhostinfo **hostp)
{
    struct pvmhostinfo *hinfo;
    int n, rc = host_table(&hinfo, &n);
    if (rc)
        return pvm__err(rc, "pvm_config");
    /* The previous answer stays valid until this one is ready, as in PVM. */
    host_info_free(pvm__ctx.hinfo, pvm__ctx.nhinfo);
    pvm__ctx.hinfo = hinfo;
    pvm__ctx.nhinfo = n;
    int archs = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= strcmp(hinfo[i].hi_arch, hinfo[j].hi_arch) == 0;
        archs += !seen;
    }
    if (nhost)
        *nhost = n;
    if (narch)
        *narch = archs;
    if (hostp)
        *hostp = hinfo;
    return PvmOk;
}

/*
 * PvmOk for a host in the VM, PvmNoHost (an answer, as in PVM, not a
 * failure report) for one that is not; PvmBadParam for no name.  The array
 * pvm_config returned is left alone: a program may pass its hi_name.
 */
int
pvm_mstat(char *host)
{
    if (host == NULL || *host == 0)
        return pvm__err(-EINVAL, "pvm_mstat");
    struct pvmhostinfo *hinfo;
    int n, found = 0, rc = host_table(&hinfo, &n);
    if (rc)
        return pvm__err(rc, "pvm_mstat");
    for (int i = 0; i < n && !found; i++)
        found = strcmp(hinfo[i].hi_name, host) == 0;
    host_info_free(hinfo, n);
    return found ? PvmOk : PvmNoHost;
}

static int
hosts_change(int type, char **hosts, int nhost, int *infos, const char *fn)
{
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    int rc;

    if (hosts == NULL || nhost < 1 || nhost > WIRE_TID_MAX_HOSTS)
        return pvm__err(-EINVAL, fn);
    for (int i = 0; i < nhost; i++)
        if (hosts[i] == NULL)
            return pvm__err(-EINVAL, fn);
    if ((rc = pvm__enroll()) != 0)
        return pvm__err(rc, fn);
    wire_wbuf_init(&req);
    wire_put_u32(&req, (uint32_t)nhost);
    for (int i = 0; i < nhost; i++)
        wire_put_str(&req, hosts[i]);
    rc = pvm__request(type, &req, &body, &len);
    wire_wbuf_free(&req);
    struct wire_rbuf r;
    uint32_t n;
    int ok = 0;
    wire_rbuf_init(&r, body, len);
    if (len == 0 || wire_get_u32(&r, &n) != 0 || n != (uint32_t)nhost) {
        free(body);
        return pvm__err(rc ? rc : WIRE_EFRAME, fn);
    }
    for (uint32_t i = 0; i < n; i++) {
        char name[256], msg[256];
        int32_t st;
        uint32_t dtid;
        if (wire_get_str(&r, name, sizeof(name)) || wire_get_i32(&r, &st) ||
            wire_get_u32(&r, &dtid) || wire_get_str(&r, msg, sizeof(msg)))
            break;
        if (infos)
            infos[i] = st == 0 ? (int)dtid : pvm__errcode(st);
        ok += st == 0;
    }
    free(body);
    return ok;
}

int
pvm_addhosts(char **hosts, int nhost, int *infos)
{
    return hosts_change(WIRE_T_REQ_ADD, hosts, nhost, infos, "pvm_addhosts");
}

int
pvm_delhosts(char **hosts, int nhost, int *infos)
{
    return hosts_change(WIRE_T_REQ_DELETE, hosts, nhost, infos, "pvm_delhosts");
}

int
pvm_halt(void)
{
    unsigned char *body;
    size_t len;
    int rc = pvm__enroll();
    if (rc)
        return pvm__err(rc, "pvm_halt");
    rc = pvm__request(WIRE_T_REQ_HALT, NULL, &body, &len);
    free(body);
    /* The daemon may stop before it answers: that is the halt done. */
    if (rc == WIRE_ENOVM)
        rc = 0;
    return rc ? pvm__err(rc, "pvm_halt") : PvmOk;
}

int
pvm_archcode(char *arch)
{
    if (arch == NULL)
        return pvm__err(-EINVAL, "pvm_archcode");
    /* PVM answers with the architecture's data signature (0x408c41 for
     * LINUX64, checked against PVM 3.4.6), and PvmNotFound for an
     * architecture no host of the VM has (the man page's words). */
    if (strcmp(arch, "LINUX64") != 0)
        return pvm__err(PVM__ECODE(PvmNotFound), "pvm_archcode");
    return pvm__dsig();
}

char *
pvm_version(void)
{
    static char v[] = "3.4.6";
    return v;
}

int
pvm_getfds(int **fds)
{
    int rc = pvm__enroll();
    if (rc)
        return pvm__err(rc, "pvm_getfds");
    int *f, n = pvm__direct_fds(&f);
    if (n < 0)
        return pvm__err(n, "pvm_getfds");
    /* The daemon's socket first, then the listeners and direct links. */
    if (fds)
        *fds = f;
    return n;
}
