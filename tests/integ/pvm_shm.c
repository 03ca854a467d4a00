/*
 * pvm_shm - a PVM program for the shared-memory tests (issue 31): tasks of
 * one host exchange messages through rings in shared memory, under the
 * default route and PvmRouteDirect.  Written only against pvm3.h and
 * POSIX; a ring shows as a "pvm-ring" mapping in /proc/self/maps, which
 * the programs count and print ("rings N").
 *
 *   pvm_shm echo ROUTE            prints its tid; echoes every message to
 *                                 its sender (tag + 1) in the message's own
 *                                 context, until tag 99; then the rings it
 *                                 mapped after its last echo
 *   pvm_shm client TID N ROUTE    N messages of 0 B to 3 MB, alternating
 *                                 between context 0 and a new context, a
 *                                 window of 8 in flight (some routed by the
 *                                 daemons while the link and the ring come
 *                                 up); takes each echo with pvm_recv,
 *                                 pvm_trecv or pvm_probe + pvm_nrecv in
 *                                 turn and checks order and bytes; checks
 *                                 that probe and nrecv see no message of
 *                                 another context
 *   pvm_shm holder                prints its tid; learns the watcher's from
 *                                 its first message, pings it until both
 *                                 rings exist, then sends 50 numbered
 *                                 messages and one of 8 MB, printing "big"
 *                                 first (the test kills it in that send)
 *   pvm_shm watcher TID DIR       watches TID (pvm_notify PvmTaskExit),
 *                                 answers its pings, then waits for DIR/read
 *                                 and takes everything: the 50 in order,
 *                                 nothing of the 8 MB message, and the exit
 *                                 notice last
 *
 * ROUTE is direct (PvmRouteDirect), allow (PvmAllowDirect, the default) or
 * dont (PvmDontRoute).  Exit status 0 when every check passed.
 */
#include <pvm3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "pvm_ext.h"

#define TAG_HELLO 1
#define TAG_PING 2
#define TAG_PONG 3
#define TAG_ENOUGH 4
#define TAG_CTX 5
#define TAG_SMALL 10
#define TAG_BIG 20
#define TAG_NOTIFY 77
#define TAG_STOP 99
#define NSMALL 50
#define BIG (8 << 20)

static const int sizes[] = { 0, 4, 100, 4000, 70000, 600000, 1 << 20, 3 << 20, 8, 12 };
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))
/* The client's routes "small" and "burst": messages of at most SMALL_MAX
 * bytes, and with "burst" a hint before each send that they come in
 * bursts of BURST bytes (pvm__link_burst, the liquid runtime's ghosts). */
#define SMALL_MAX 70000
#define BURST (12 << 20)
static int small_only, burst;

static int
size_of(int seq)
{
    int size = sizes[seq % NSIZES];

    return small_only && size > SMALL_MAX ? SMALL_MAX : size;
}

static int
route_of(const char *s)
{
    small_only = strcmp(s, "small") == 0 || strcmp(s, "burst") == 0;
    burst = strcmp(s, "burst") == 0;
    if (strcmp(s, "direct") == 0)
        return PvmRouteDirect;
    if (strcmp(s, "dont") == 0)
        return PvmDontRoute;
    return PvmAllowDirect;
}

static int
parse_tid(const char *s)
{
    return (int)strtol(s + (s[0] == 't'), NULL, 16);
}

/* Rings this process maps now; *kb, if given, their size in KB. */
static int
rings_kb(long *kb)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long lo, hi;
    int n = 0;

    if (f == NULL)
        return -1;
    if (kb != NULL)
        *kb = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "pvm-ring") != NULL) {
            n++;
            if (kb != NULL && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
                *kb += (long)((hi - lo) >> 10);
        }
    fclose(f);
    return n;
}

static int
rings(void)
{
    return rings_kb(NULL);
}

static unsigned char
pattern(int seq, int i)
{
    return (unsigned char)(seq * 31 + i * 13 + (i >> 8));
}

static int
echo(int route)
{
    int me = pvm_mytid();

    if (me < 0)
        return 1;
    pvm_setopt(PvmRoute, route);
    printf("t%x\n", me);
    fflush(stdout);
    /* The client's first message names its second context. */
    int ctx[2] = { pvm_getcontext(), 0 }, k = 0, nrings = 0;
    if (pvm_recv(-1, TAG_CTX) < 0 || pvm_upkint(&ctx[1], 1, 1) < 0)
        return 1;
    for (;; k++) {
        struct pvmminfo mi;
        struct timeval tmo = { 0, 2000 };
        int buf;

        /* Each context in turn; a receive sees only the current one. */
        pvm_setcontext(ctx[k % 2]);
        if ((buf = pvm_trecv(-1, -1, &tmo)) == 0)
            continue;
        if (buf < 0 || pvm_getminfo(buf, &mi) < 0)
            return 1;
        if (mi.tag == TAG_STOP)
            break;
        /* Back in the message's own context (the current one). */
        pvm_setsbuf(buf);
        pvm_setrbuf(0);
        if (pvm_send(mi.src, mi.tag + 1) < 0)
            return 1;
        /*
         * Counted now, outside the library: the client waits for this
         * echo, so the link is up.  After its STOP the client may have
         * exited and the library unmapped the rings before we looked.
         */
        nrings = rings();
        pvm_freebuf(buf);
        pvm_setsbuf(0);
    }
    printf("rings %d\n", nrings);
    pvm_exit();
    return 0;
}

static int
send_one(int peer, int seq, unsigned char *buf)
{
    int size = size_of(seq);

    for (int i = 0; i < size; i++)
        buf[i] = pattern(seq, i);
    if (burst)
        pvm__link_burst(peer, BURST, BURST / SMALL_MAX);
    pvm_initsend(seq % 3 == 0 ? PvmDataRaw : PvmDataDefault);
    pvm_pkint(&seq, 1, 1);
    pvm_pkint(&size, 1, 1);
    pvm_pkbyte((char *)buf, size, 1);
    return pvm_send(peer, 10);
}

/* Take the echo of seq in the current context, one receive call or another. */
static int
take(int peer, int seq, unsigned char *buf)
{
    struct timeval tmo = { 30, 0 };
    int b, s, size;

    switch (seq % 3) {
    case 0:
        b = pvm_recv(peer, 11);
        break;
    case 1:
        b = pvm_trecv(peer, 11, &tmo);
        break;
    default:
        while ((b = pvm_probe(peer, 11)) == 0)
            ;
        if (b > 0 && pvm_nrecv(peer, 11) != b)
            b = -1;
        break;
    }
    if (b <= 0 || pvm_upkint(&s, 1, 1) < 0 || pvm_upkint(&size, 1, 1) < 0 || s != seq ||
        size != size_of(seq) || pvm_upkbyte((char *)buf, size, 1) < 0) {
        fprintf(stderr, "echo of %d: wrong message (bufid %d)\n", seq, b);
        return -1;
    }
    for (int i = 0; i < size; i++)
        if (buf[i] != pattern(seq, i)) {
            fprintf(stderr, "echo of %d: byte %d differs\n", seq, i);
            return -1;
        }
    return 0;
}

static int
client(int peer, int n, int route)
{
    unsigned char *buf = malloc((size_t)(3 << 20));
    int me = pvm_mytid(), ctx[2], sent = 0, got = 0, rc = 1;

    if (me < 0 || buf == NULL)
        return 1;
    pvm_setopt(PvmRoute, route);
    ctx[0] = pvm_getcontext();
    ctx[1] = pvm_newcontext();
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&ctx[1], 1, 1);
    if (pvm_send(peer, TAG_CTX) < 0)
        goto out;
    while (got < n) {
        while (sent < n && sent - got < 8) {
            pvm_setcontext(ctx[sent % 2]);
            if (send_one(peer, sent, buf) < 0)
                goto out;
            sent++;
        }
        pvm_setcontext(ctx[got % 2]);
        if (take(peer, got, buf) != 0)
            goto out;
        got++;
    }
    /* One echo waits in the new context: context 0 sees nothing. */
    pvm_setcontext(ctx[1]);
    if (send_one(peer, 1, buf) < 0)
        goto out;
    pvm_setcontext(ctx[0]);
    struct timeval tmo = { 0, 300000 };
    if (pvm_trecv(peer, 11, &tmo) != 0 || pvm_probe(-1, -1) != 0 || pvm_nrecv(-1, -1) != 0) {
        fprintf(stderr, "context 0 saw a message of another context\n");
        goto out;
    }
    pvm_setcontext(ctx[1]);
    if (take(peer, 1, buf) != 0)
        goto out;
    long kb;
    printf("rings %d\n", rings_kb(&kb));
    printf("ring_kb %ld\n", kb);
    pvm_initsend(PvmDataDefault);
    pvm_send(peer, TAG_STOP);
    pvm_setcontext(ctx[0]);
    pvm_send(peer, TAG_STOP);
    printf("ok t%x <-> t%x: %d messages\n", me, peer, n);
    rc = 0;
out:
    free(buf);
    pvm_exit();
    return rc;
}

static int
holder(void)
{
    int me = pvm_mytid(), peer, seq, i;
    char *big = calloc(1, BIG);

    if (me < 0 || big == NULL)
        return 1;
    printf("t%x\n", me);
    fflush(stdout);
    if (pvm_recv(-1, TAG_HELLO) < 0 || pvm_bufinfo(pvm_getrbuf(), NULL, NULL, &peer) < 0)
        return 1;
    /* Round trips until our ring to the peer and its to us exist. */
    for (i = 0; i < 5000 && rings() < 2; i++) {
        pvm_initsend(PvmDataDefault);
        if (pvm_send(peer, TAG_PING) < 0 || pvm_recv(peer, TAG_PONG) < 0)
            return 1;
    }
    printf("rings %d\n", rings());
    pvm_initsend(PvmDataDefault);
    pvm_send(peer, TAG_ENOUGH);
    for (seq = 0; seq < NSMALL; seq++) {
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&seq, 1, 1);
        if (pvm_send(peer, TAG_SMALL) < 0)
            return 1;
    }
    printf("big\n");
    fflush(stdout);
    pvm_initsend(PvmDataRaw);
    pvm_pkbyte(big, BIG, 1);
    int rc = pvm_send(peer, TAG_BIG);
    printf("sent big: %d\n", rc);
    fflush(stdout);
    pause();
    return 0;
}

static int
watcher(int peer, const char *dir)
{
    char path[4096];
    int me = pvm_mytid(), small = 0, big = 0, tag, seq;

    if (me < 0)
        return 1;
    if (pvm_notify(PvmTaskExit, TAG_NOTIFY, 1, &peer) < 0)
        return 1;
    pvm_initsend(PvmDataDefault);
    if (pvm_send(peer, TAG_HELLO) < 0)
        return 1;
    for (;;) {
        int b = pvm_recv(peer, -1);
        if (b < 0 || pvm_bufinfo(b, NULL, &tag, NULL) < 0)
            return 1;
        if (tag == TAG_ENOUGH)
            break;
        pvm_initsend(PvmDataDefault);
        if (pvm_send(peer, TAG_PONG) < 0)
            return 1;
    }
    printf("rings %d\n", rings());
    fflush(stdout);
    /* Out of the library until the holder is dead. */
    snprintf(path, sizeof path, "%s/read", dir);
    while (access(path, F_OK) != 0)
        usleep(20000);
    for (;;) {
        int b = pvm_recv(-1, -1);
        if (b < 0 || pvm_bufinfo(b, NULL, &tag, NULL) < 0)
            return 1;
        if (tag == TAG_NOTIFY)
            break;
        if (tag == TAG_BIG) {
            big++;
            continue;
        }
        if (tag != TAG_SMALL || pvm_upkint(&seq, 1, 1) < 0 || seq != small) {
            fprintf(stderr, "message %d out of order (tag %d)\n", small, tag);
            return 1;
        }
        small++;
    }
    struct timeval tmo = { 0, 500000 };
    int after = pvm_trecv(-1, -1, &tmo);
    printf("small %d big %d after-notice %d\n", small, big, after > 0);
    pvm_exit();
    return small == NSMALL && big == 0 && after == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "echo") == 0)
        return echo(route_of(argv[2]));
    if (argc == 5 && strcmp(argv[1], "client") == 0)
        return client(parse_tid(argv[2]), atoi(argv[3]), route_of(argv[4]));
    if (argc == 2 && strcmp(argv[1], "holder") == 0)
        return holder();
    if (argc == 4 && strcmp(argv[1], "watcher") == 0)
        return watcher(parse_tid(argv[2]), argv[3]);
    fprintf(stderr, "usage: pvm_shm echo ROUTE | client TID N ROUTE | holder | "
                    "watcher TID DIR\n");
    return 2;
}
