/*
 * vmctl_mbox.c - the console's mailbox verbs, as PVM 3.4's console has
 * them: names (list the entries, pvm_getmboxinfo) and put (add an entry,
 * pvm_putinfo).  No seed idea.  The master keeps the mailbox
 * (daemon/vmd_mbox.c); vmctl speaks its WIRE_T_MBOX_* frames as an
 * enrolled task, like libpvm3's lib/pvm/pvm_mbox.c.
 *
 * put packs its value as pvm_pkstr does in PvmDataDefault (XDR: the length
 * with its NUL, then the bytes padded to 4), so a program reads it with
 * pvm_recvinfo and pvm_upkstr.  An entry goes when its owner leaves the VM
 * unless it is PvmMboxPersistent: in the console the owner is the
 * console's task, which lasts for the session; a one-shot `vmctl put`
 * leaves at once, so it always adds PvmMboxPersistent.
 */
#include "vmctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MBOX_TIMEOUT_MS 60000
#define MB_PERSISTENT 1
#define MB_MULTI 2
#define MB_OVERWRITE 4
#define PVM_ENCWORD_XDR 0x10000000

/* PVM's names pattern (* and ? as in a shell) as the daemon's anchored
 * extended regular expression. */
static int
glob_to_regex(const char *glob, char *out, size_t cap)
{
    size_t n = 0;
    if (glob[0] == '\0' || strcmp(glob, "*") == 0)
        return snprintf(out, cap, "*") >= (int)cap ? -ENAMETOOLONG : 0;
    out[n++] = '^';
    for (const char *p = glob; *p; p++) {
        if (n + 4 >= cap)
            return -ENAMETOOLONG;
        if (*p == '*') {
            out[n++] = '.';
            out[n++] = '*';
        } else if (*p == '?') {
            out[n++] = '.';
        } else {
            if (strchr("\\^$.|+()[]{}", *p))
                out[n++] = '\\';
            out[n++] = *p;
        }
    }
    out[n++] = '$';
    out[n] = '\0';
    return 0;
}

/* One request on a task connection of the session, or of our own. */
static int
mbox_request(struct vmctl *v, int type, struct wire_wbuf *req, unsigned char **body,
             size_t *len)
{
    int fd, shared, status;
    uint32_t tid;
    int rc = vmctl_task_open(v, &fd, &tid, &shared);
    *body = NULL;
    if (rc != 0)
        return rc;
    rc = vmctl_request(fd, type, req, MBOX_TIMEOUT_MS, body, len, &status);
    vmctl_task_close(fd, shared);
    return rc ? rc : status;
}

/* The classes of a WIRE_T_MBOX_LIST reply, printed as PVM's console does. */
static int
names_print(const struct vmctl *v, const unsigned char *body, size_t len)
{
    struct wire_rbuf r;
    uint32_t n;
    wire_rbuf_init(&r, body, len);
    if (wire_get_u32(&r, &n) != 0)
        return WIRE_EFRAME;
    if (v->json)
        printf("{\"names\":[");
    for (uint32_t i = 0; i < n; i++) {
        char name[256];
        uint32_t ne;
        if (wire_get_str(&r, name, sizeof(name)) || wire_get_u32(&r, &ne))
            return WIRE_EFRAME;
        if (v->json) {
            printf("%s{\"name\":", i ? "," : "");
            wire_json_str(stdout, name);
            printf(",\"entries\":[");
        } else {
            printf("<%s>:\n", name);
        }
        for (uint32_t k = 0; k < ne; k++) {
            int32_t index;
            uint32_t owner, flags;
            if (wire_get_i32(&r, &index) || wire_get_u32(&r, &owner) || wire_get_u32(&r, &flags))
                return WIRE_EFRAME;
            if (v->json)
                printf("%s{\"index\":%d,\"owner\":%u,\"flags\":%u}", k ? "," : "", index, owner,
                       flags);
            else if (owner)
                printf("\tindex=%d owner=t%x flags=0x%x\n", index, owner, flags);
            else        /* persistent, its owner gone */
                printf("\tindex=%d owner=0 flags=0x%x\n", index, flags);
        }
        printf(v->json ? "]}" : "\n");
    }
    if (v->json)
        printf("]}\n");
    return 0;
}

int
vmctl_cmd_names(struct vmctl *v, int argc, char **argv)
{
    char re[1024];
    int rc = vmctl_verb_options(v, &argc, argv, 0);
    if (rc >= 0)
        return rc;
    if (argc > 2)
        return vmctl_usage_error("names", "unexpected argument %s", argv[2]);
    if (glob_to_regex(argc == 2 ? argv[1] : "*", re, sizeof(re)) != 0)
        return vmctl_usage_error("names", "the pattern is too long");
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    wire_wbuf_init(&req);
    wire_put_u32(&req, 0);      /* the owner: our daemon fills it in */
    wire_put_str(&req, re);
    rc = mbox_request(v, WIRE_T_MBOX_LIST, &req, &body, &len);
    wire_wbuf_free(&req);
    if (rc == 0)
        rc = names_print(v, body, len);
    free(body);
    return rc ? vmctl_fail(v, rc, "names") : VMCTL_EXIT_OK;
}

/* FLAGS of put: a number, or names joined by commas. */
static int
parse_flags(const char *s, uint32_t *out)
{
    char *end, buf[256];
    long n = strtol(s, &end, 0);
    if (*s && *end == '\0')
        return n < 0 || n > 511 ? -EINVAL : (*out = (uint32_t)n, 0);
    if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
        return -EINVAL;
    *out = 0;
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (strcmp(w, "persistent") == 0)
            *out |= MB_PERSISTENT;
        else if (strcmp(w, "multi") == 0)
            *out |= MB_MULTI;
        else if (strcmp(w, "overwrite") == 0)
            *out |= MB_OVERWRITE;
        else
            return -EINVAL;
    }
    return 0;
}

int
vmctl_cmd_put(struct vmctl *v, int argc, char **argv)
{
    uint32_t flags = 0;
    int rc = vmctl_verb_options(v, &argc, argv, 0);
    if (rc >= 0)
        return rc;
    if (argc < 3)
        return vmctl_usage_error("put", "name a NAME and a VALUE");
    if (argc > 4)
        return vmctl_usage_error("put", "unexpected argument %s", argv[4]);
    if (argv[1][0] == '\0' || strlen(argv[1]) >= 256)
        return vmctl_usage_error("put", "a NAME has 1 to 255 characters");
    if (argc == 4 && parse_flags(argv[3], &flags) != 0)
        return vmctl_usage_error("put", "%s: FLAGS are a number 0..511 or names", argv[3]);
    if (v->sess == NULL)
        flags |= MB_PERSISTENT;
    /* The value as pvm_pkstr packs it in XDR. */
    struct wire_wbuf req;
    size_t n = strlen(argv[2]) + 1;
    static const unsigned char pad[4];
    wire_wbuf_init(&req);
    wire_put_u32(&req, 0);
    wire_put_str(&req, argv[1]);
    wire_put_u32(&req, flags);
    wire_put_u32(&req, PVM_ENCWORD_XDR);
    wire_put_u32(&req, (uint32_t)n);
    wire_put_bytes(&req, argv[2], n);
    if (n % 4)
        wire_put_bytes(&req, pad, 4 - n % 4);
    unsigned char *body;
    size_t len;
    rc = mbox_request(v, WIRE_T_MBOX_PUT, &req, &body, &len);
    wire_wbuf_free(&req);
    int32_t index = 0;
    if (rc == 0) {
        struct wire_rbuf r;
        wire_rbuf_init(&r, body, len);
        rc = wire_get_i32(&r, &index);
    }
    free(body);
    if (rc != 0)
        return vmctl_fail(v, rc, "put");
    if (v->json) {
        printf("{\"ok\":true,\"name\":");
        wire_json_str(stdout, argv[1]);
        printf(",\"index\":%d,\"flags\":%u}\n", index, flags);
    }
    return VMCTL_EXIT_OK;
}
