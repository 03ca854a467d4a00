/*
 * gbench - times pvm_barrier and a 1 MB pvm_bcast among N tasks, written
 * only against pvm3.h so that the same source runs on LiquidVM and on
 * PVM 3.4.6 (bench/groups.sh builds it for both).
 *
 *   gbench N [BARRIERS] [BCASTS]
 *
 * Started from the shell it joins group "gbench" and spawns N-1 copies of
 * itself (default placement: spread over the hosts).  Instance 0 prints
 * "barrier_us X" (mean of BARRIERS barriers of all N) and "bcast_us Y"
 * (mean time from pvm_bcast of 1 MB until every other member acknowledged
 * receiving all of it), and where the members ran: "hosts H" (how many
 * hosts) and "per_host a,b,..." (members per host, most first).  Exit
 * status 0 on success.
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define MB (1 << 20)
#define TAG_DATA 11
#define TAG_ACK 12

static double
now_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec * 1e6 + tv.tv_usec;
}

int
main(int argc, char **argv)
{
    static char g[] = "gbench";
    int n = argc > 1 ? atoi(argv[1]) : 16;
    int nbar = argc > 2 ? atoi(argv[2]) : 200;
    int nbc = argc > 3 ? atoi(argv[3]) : 20;
    int tids[256], me;
    char *buf;

    if (n < 2 || n > 256 || nbar < 1 || nbc < 1 || (buf = malloc(MB)) == NULL)
        return 2;
    if (pvm_mytid() < 0 || (me = pvm_joingroup(g)) < 0)
        return 1;
    if (pvm_parent() == PvmNoParent) {
        char a1[16], a2[16], a3[16];
        char *args[] = { a1, a2, a3, NULL };
        char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
        snprintf(a1, sizeof(a1), "%d", n);
        snprintf(a2, sizeof(a2), "%d", nbar);
        snprintf(a3, sizeof(a3), "%d", nbc);
        if (pvm_spawn(prog, args, PvmTaskDefault, "", n - 1, tids) != n - 1) {
            fprintf(stderr, "gbench: spawn failed\n");
            return 1;
        }
    }
    /* Everyone joined and is ready. */
    if (pvm_barrier(g, n) < 0 || pvm_barrier(g, n) < 0)
        return 1;
    double t0 = now_us();
    for (int i = 0; i < nbar; i++)
        if (pvm_barrier(g, n) < 0)
            return 1;
    double bar = (now_us() - t0) / nbar;

    memset(buf, me, MB);
    double bc = 0;
    for (int i = 0; i < nbc + 1; i++) {
        /* Iteration 0 warms up (buffers, links) and is not counted. */
        if (pvm_barrier(g, n) < 0)
            return 1;
        double t = now_us();
        if (me == 0) {
            pvm_initsend(PvmDataRaw);
            pvm_pkbyte(buf, MB, 1);
            if (pvm_bcast(g, TAG_DATA) < 0)
                return 1;
            for (int k = 1; k < n; k++)
                if (pvm_recv(-1, TAG_ACK) < 0)
                    return 1;
            if (i > 0)
                bc += now_us() - t;
        } else {
            int bytes;
            if (pvm_recv(-1, TAG_DATA) < 0 || pvm_bufinfo(pvm_getrbuf(), &bytes, NULL, NULL) < 0 ||
                bytes != MB || pvm_upkbyte(buf, MB, 1) < 0 || buf[MB - 1] != 0)
                return 1;
            pvm_initsend(PvmDataDefault);
            pvm_send(pvm_gettid(g, 0), TAG_ACK);
        }
    }
    if (me == 0) {
        int host[256], cnt[256], nh = 0;
        for (int k = 0; k < n; k++) {
            int h = pvm_tidtohost(pvm_gettid(g, k)), j;
            for (j = 0; j < nh && host[j] != h; j++)
                ;
            if (j == nh) {
                host[nh] = h;
                cnt[nh++] = 0;
            }
            cnt[j]++;
        }
        /* Most first, so that the line does not depend on host ids. */
        for (int a = 0; a < nh; a++)
            for (int b = a + 1; b < nh; b++)
                if (cnt[b] > cnt[a]) {
                    int t = cnt[a];
                    cnt[a] = cnt[b];
                    cnt[b] = t;
                }
        printf("tasks %d\nhosts %d\nper_host ", n, nh);
        for (int a = 0; a < nh; a++)
            printf("%s%d", a ? "," : "", cnt[a]);
        printf("\nbarrier_us %.1f\nbcast_us %.1f\n", bar, bc / nbc);
        fflush(stdout);
    }
    pvm_barrier(g, n);
    pvm_lvgroup(g);
    pvm_exit();
    free(buf);
    return 0;
}
