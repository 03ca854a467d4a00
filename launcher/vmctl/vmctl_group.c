/*
 * vmctl_group.c - the console's view of dynamic groups: `vmctl groups`
 * lists every group of the VM with its members (instance and tid), from
 * the master's table (daemon/vmd_group.c); `vmctl ps` shows each task's
 * memberships through vmctl_groups_fetch and vmctl_groups_of.  PVM's
 * group server has these tables; no seed idea lives here.
 */
#include "vmctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GROUP_TIMEOUT_MS 10000

void
vmctl_groups_free(struct vmctl_group *g, int n)
{
    for (int i = 0; i < n; i++)
        free(g[i].members);
    free(g);
}

int
vmctl_groups_fetch(int fd, struct vmctl_group **out, int *nout)
{
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    int status, rc;
    struct vmctl_group *g = NULL;
    uint32_t n = 0;

    *out = NULL;
    *nout = 0;
    wire_wbuf_init(&req);
    wire_put_u32(&req, 0);
    wire_put_str(&req, "");
    rc = vmctl_request(fd, WIRE_T_GROUP_LIST, &req, GROUP_TIMEOUT_MS, &body, &len, &status);
    wire_wbuf_free(&req);
    if (rc == 0)
        rc = status;
    if (rc != 0) {
        free(body);
        return rc;
    }
    struct wire_rbuf r;
    wire_rbuf_init(&r, body, len);
    if ((rc = wire_get_u32(&r, &n)) != 0 || n > 65536)
        goto bad;
    if ((g = calloc(n ? n : 1, sizeof(*g))) == NULL) {
        rc = -ENOMEM;
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t frozen, size;
        if (wire_get_str(&r, g[i].name, sizeof(g[i].name)) || wire_get_u32(&r, &frozen) ||
            wire_get_u32(&r, &size) || size > 65536)
            goto bad;
        g[i].frozen = (int)frozen;
        g[i].size = (int)size;
        if ((g[i].members = calloc(size ? size : 1, sizeof(*g[i].members))) == NULL) {
            rc = -ENOMEM;
            goto done;
        }
        for (uint32_t k = 0; k < size; k++)
            if (wire_get_i32(&r, &g[i].members[k].inst) ||
                wire_get_u32(&r, &g[i].members[k].tid))
                goto bad;
    }
    *out = g;
    *nout = (int)n;
    free(body);
    return 0;
bad:
    rc = WIRE_EFRAME;
done:
    if (g)
        vmctl_groups_free(g, (int)n);
    free(body);
    return rc;
}

/* "name:inst,name:inst" for tid, or "" (always NUL-terminated). */
const char *
vmctl_groups_of(const struct vmctl_group *g, int n, uint32_t tid, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        for (int k = 0; k < g[i].size; k++) {
            if (g[i].members[k].tid != tid)
                continue;
            int w = snprintf(buf + used, cap - used, "%s%s:%d", used ? "," : "", g[i].name,
                             g[i].members[k].inst);
            if (w < 0 || (size_t)w >= cap - used) {
                buf[used] = '\0';
                return buf;
            }
            used += (size_t)w;
        }
    return buf;
}

int
vmctl_cmd_groups(struct vmctl *v, int argc, char **argv)
{
    static const char use[] = "usage: vmctl groups [--json]\n";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            v->json = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("%s  The dynamic groups of the VM (pvm_joingroup): name, size, whether\n"
                   "  frozen, and each member as instance:tid.  Nothing when there is none.\n",
                   use);
            return VMCTL_EXIT_OK;
        } else {
            return vmctl_usage_error("groups", "unexpected argument %s", argv[i]);
        }
    }
    int fd = vmctl_connect(v);
    if (fd < 0)
        return vmctl_fail(v, fd, "groups");
    struct vmctl_group *g;
    int n;
    int rc = vmctl_groups_fetch(fd, &g, &n);
    close(fd);
    if (rc != 0)
        return vmctl_fail(v, rc, "groups");
    if (v->json)
        printf("{\"groups\":[");
    else if (n > 0)
        printf("%-20s %5s %6s %s\n", "GROUP", "SIZE", "FROZEN", "MEMBERS");
    for (int i = 0; i < n; i++) {
        if (v->json) {
            printf("%s{\"name\":", i ? "," : "");
            wire_json_str(stdout, g[i].name);
            printf(",\"size\":%d,\"frozen\":%s,\"members\":[", g[i].size,
                   g[i].frozen ? "true" : "false");
            for (int k = 0; k < g[i].size; k++)
                printf("%s{\"inst\":%d,\"tid\":%u}", k ? "," : "", g[i].members[k].inst,
                       g[i].members[k].tid);
            printf("]}");
        } else {
            printf("%-20s %5d %6s", g[i].name, g[i].size, g[i].frozen ? "yes" : "no");
            for (int k = 0; k < g[i].size; k++)
                printf(" %d:t%x", g[i].members[k].inst, g[i].members[k].tid);
            printf("\n");
        }
    }
    if (v->json)
        printf("]}\n");
    vmctl_groups_free(g, n);
    return VMCTL_EXIT_OK;
}
