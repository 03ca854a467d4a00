/*
 * pvm_direct - a PVM program for the direct-route tests (PvmRouteDirect),
 * written only against pvm3.h and POSIX.
 *
 *   pvm_direct echo ROUTE                 prints its tid; echoes every message
 *                                         to its sender (tag + 1) until tag 99
 *   pvm_direct client TID N ROUTE         N messages of mixed sizes to an echo
 *                                         server, a window of 8 in flight;
 *                                         checks every echo (order, contents)
 *   pvm_direct sink NSENDERS ROUTE        prints its tid; takes numbered
 *                                         messages from several senders and
 *                                         checks each sender's order
 *   pvm_direct send TID N ROUTE           N numbered messages to a sink
 *   pvm_direct hog TID BYTES              small round trips until the link is
 *                                         up, then BYTES-byte messages to TID
 *                                         until TID's exit notice comes
 *   pvm_direct idle DIR BYTES             prints its tid; learns the hog's
 *                                         from its first message and watches
 *                                         it (pvm_notify PvmTaskExit); small
 *                                         round trips until the link is
 *                                         up; once DIR/read exists reads two
 *                                         BYTES-byte messages ("got 2", and
 *                                         its peak memory "peak_kb N"), then
 *                                         nothing until DIR/finish exists;
 *                                         exits 0 once the exit notice comes
 *   pvm_direct absorb                     prints its tid; see burst
 *   pvm_direct burst TID exit|return      three 700 kB messages to an absorb
 *                                         task, then ends at once (pvm_exit
 *                                         or return from main): none is cut
 *   pvm_direct watch TID                  pvm_notify(PvmTaskExit) on TID;
 *                                         exits 0 when the notice comes
 *
 * ROUTE is direct (PvmRouteDirect), allow (PvmAllowDirect) or dont
 * (PvmDontRoute).  Programs print "fds N": what pvm_getfds returns at the
 * end (1: the daemon only; more: listeners and links), and a task with a
 * TCP listener prints "port P" (the stranger test dials it).
 */
#include <pvm3.h>

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TAG_FDS 50
#define TAG_NOTIFY 77
#define TAG_DONE 98
#define TAG_STOP 99

/* Sizes in bytes, cycled: empty, tiny, below and above one TLS record,
 * above the staging buffer, 1 MB and 3 MB. */
static const int sizes[] = { 0, 4, 100, 4000, 16400, 70000, 1 << 20, 3 << 20, 8, 12 };
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

static int
route_of(const char *s)
{
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

/* The byte at offset i of message seq from sender src. */
static unsigned char
pattern(int src, int seq, int i)
{
    return (unsigned char)(src * 7 + seq * 31 + i * 13 + (i >> 8));
}

static int
nfds(void)
{
    int *fds;

    return pvm_getfds(&fds);
}

static void
report_fds(void)
{
    int *fds, n = pvm_getfds(&fds);

    printf("fds %d\n", n);
    for (int i = 0; i < n; i++) {
        struct sockaddr_in sa;
        socklen_t len = sizeof(sa);
        int listening = 0;
        socklen_t ll = sizeof(listening);
        if (getsockname(fds[i], (struct sockaddr *)&sa, &len) == 0 && sa.sin_family == AF_INET &&
            getsockopt(fds[i], SOL_SOCKET, SO_ACCEPTCONN, &listening, &ll) == 0 && listening)
            printf("port %d\n", ntohs(sa.sin_port));
    }
    fflush(stdout);
}

/* Pack seq, size and size bytes of the pattern. */
static int
pack(int me, int seq, int size, unsigned char *buf)
{
    for (int i = 0; i < size; i++)
        buf[i] = pattern(me, seq, i);
    pvm_initsend(seq % 3 == 0 ? PvmDataRaw : PvmDataDefault);
    pvm_pkint(&seq, 1, 1);
    pvm_pkint(&size, 1, 1);
    return pvm_pkbyte((char *)buf, size, 1);
}

/* Unpack and check what pack() made for (owner, seq); 0 if right. */
static int
check(int owner, int want_seq, unsigned char *buf, int cap)
{
    int seq, size;

    if (pvm_upkint(&seq, 1, 1) < 0 || pvm_upkint(&size, 1, 1) < 0)
        return -1;
    if (seq != want_seq || size < 0 || size > cap) {
        fprintf(stderr, "from t%x: got seq %d size %d, wanted seq %d\n", owner, seq, size,
                want_seq);
        return -1;
    }
    if (pvm_upkbyte((char *)buf, size, 1) < 0)
        return -1;
    for (int i = 0; i < size; i++)
        if (buf[i] != pattern(owner, seq, i)) {
            fprintf(stderr, "from t%x: seq %d byte %d differs\n", owner, seq, i);
            return -1;
        }
    return 0;
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
    for (;;) {
        int len, tag, src, buf = pvm_recv(-1, -1);
        if (buf < 0 || pvm_bufinfo(buf, &len, &tag, &src) < 0)
            return 1;
        if (tag == TAG_STOP)
            break;
        if (tag == TAG_FDS) {
            int n = nfds();
            pvm_initsend(PvmDataDefault);
            pvm_pkint(&n, 1, 1);
            if (pvm_send(src, TAG_FDS) < 0)
                return 1;
            continue;
        }
        /* The message goes back as it came: the receive buffer is sent. */
        pvm_setsbuf(buf);
        pvm_setrbuf(0);
        if (pvm_send(src, tag + 1) < 0)
            return 1;
        pvm_freebuf(buf);
        pvm_setsbuf(0);
    }
    report_fds();
    pvm_exit();
    return 0;
}

static int
client(int peer, int n, int route)
{
    int me = pvm_mytid(), rc = 1, sent = 0, got = 0;
    unsigned char *buf = malloc((size_t)(3 << 20));

    if (me < 0 || buf == NULL)
        return 1;
    pvm_setopt(PvmRoute, route);
    while (got < n) {
        /* Keep a window in flight, so the switch to the link happens with
         * messages on their way both ways. */
        while (sent < n && sent - got < 8) {
            if (pack(me, sent, sizes[sent % NSIZES], buf) < 0 || pvm_send(peer, 10) < 0)
                goto out;
            sent++;
        }
        int b = pvm_recv(peer, 11), len, tag, src;
        if (b < 0 || pvm_bufinfo(b, &len, &tag, &src) < 0 || src != peer)
            goto out;
        if (check(me, got, buf, 3 << 20) != 0)
            goto out;
        got++;
    }
    if (pvm_nrecv(-1, -1) != 0)
        goto out;
    report_fds();
    /* The server's count while both still run (after, it sees our exit). */
    int pfds;
    pvm_initsend(PvmDataDefault);
    if (pvm_send(peer, TAG_FDS) < 0 || pvm_recv(peer, TAG_FDS) < 0 || pvm_upkint(&pfds, 1, 1) < 0)
        goto out;
    printf("peer fds %d\n", pfds);
    pvm_initsend(PvmDataDefault);
    pvm_send(peer, TAG_STOP);
    printf("ok t%x <-> t%x: %d messages\n", me, peer, n);
    rc = 0;
out:
    free(buf);
    pvm_exit();
    return rc;
}

struct sender {
    int tid, next, done;
};

static int
sink(int nsenders, int route)
{
    int me = pvm_mytid(), finished = 0, total = 0;
    struct sender *s = calloc((size_t)nsenders, sizeof(*s));
    unsigned char *buf = malloc((size_t)(3 << 20));

    if (me < 0 || s == NULL || buf == NULL)
        return 1;
    pvm_setopt(PvmRoute, route);
    printf("t%x\n", me);
    fflush(stdout);
    while (finished < nsenders) {
        int len, tag, src, i, b = pvm_recv(-1, -1);
        if (b < 0 || pvm_bufinfo(b, &len, &tag, &src) < 0)
            return 1;
        for (i = 0; i < nsenders && s[i].tid != 0 && s[i].tid != src; i++)
            ;
        if (i == nsenders) {
            fprintf(stderr, "sink: more senders than %d\n", nsenders);
            return 1;
        }
        s[i].tid = src;
        if (tag == TAG_DONE) {
            int n;
            pvm_upkint(&n, 1, 1);
            if (n != s[i].next) {
                fprintf(stderr, "sink: t%x says %d sent, %d came\n", src, n, s[i].next);
                return 1;
            }
            s[i].done = 1;
            finished++;
            continue;
        }
        if (s[i].done || check(src, s[i].next, buf, 3 << 20) != 0)
            return 1;
        s[i].next++;
        total++;
    }
    for (int i = 0; i < nsenders; i++) {
        pvm_initsend(PvmDataDefault);
        pvm_send(s[i].tid, TAG_STOP);
    }
    report_fds();
    printf("ok sink: %d messages from %d senders, each in order\n", total, nsenders);
    free(s);
    free(buf);
    pvm_exit();
    return 0;
}

static int
sender(int peer, int n, int route)
{
    int me = pvm_mytid();
    unsigned char *buf = malloc((size_t)(3 << 20));

    if (me < 0 || buf == NULL)
        return 1;
    pvm_setopt(PvmRoute, route);
    /* A direct sender goes on past n until it has sent 50 messages with its
     * link made, so the switch happens mid-stream whatever the timing. */
    int seq, linked = -1;
    for (seq = 0; seq < 100000; seq++) {
        if (linked < 0 && route == PvmRouteDirect && nfds() >= 3)
            linked = seq;
        if (seq >= n && (route != PvmRouteDirect || (linked >= 0 && seq - linked >= 50)))
            break;
        /* Smaller sizes: many senders share the sink's memory. */
        if (pack(me, seq, sizes[seq % NSIZES] / 4, buf) < 0 || pvm_send(peer, 10) < 0)
            return 1;
        /* Enter the library's wait now and then, as programs do: a link
         * comes up while messages are on their way. */
        if (seq % 16 == 0 && pvm_probe(-1, -1) < 0)
            return 1;
    }
    /* While the sink still runs: after, it may have closed the link. */
    report_fds();
    printf("sent %d, link from %d\n", seq, linked);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&seq, 1, 1);
    if (pvm_send(peer, TAG_DONE) < 0 || pvm_recv(peer, TAG_STOP) < 0)
        return 1;
    free(buf);
    pvm_exit();
    return 0;
}

/*
 * Small messages each way until both ends hold a link (the asker: daemon,
 * listener and link; the other: daemon and link) for two rounds in a row,
 * so both have checked it; the big messages then take the link.  The
 * asker ends it with a 2.
 */
static int
handshake(int peer, int asker)
{
    int v, rounds = 0;

    for (int i = 0; i < 500; i++) {
        if (asker) {
            v = nfds() >= 3;
            pvm_initsend(PvmDataDefault);
            pvm_pkint(&v, 1, 1);
            if (pvm_send(peer, 20) < 0 || pvm_recv(peer, 20) < 0 || pvm_upkint(&v, 1, 1) < 0)
                return -1;
            rounds = v && nfds() >= 3 ? rounds + 1 : 0;
            if (rounds == 2) {
                v = 2;
                pvm_initsend(PvmDataDefault);
                pvm_pkint(&v, 1, 1);
                return pvm_send(peer, 20) < 0 ? -1 : 0;
            }
        } else {
            if (pvm_recv(peer, 20) < 0 || pvm_upkint(&v, 1, 1) < 0)
                return -1;
            if (v == 2)
                return 0;
            v = nfds() >= 2;
            pvm_initsend(PvmDataDefault);
            pvm_pkint(&v, 1, 1);
            if (pvm_send(peer, 20) < 0)
                return -1;
        }
    }
    fprintf(stderr, "no link after 500 rounds\n");
    return -1;
}

static int
hog(int peer, int bytes)
{
    char *buf = calloc(1, (size_t)bytes);

    if (pvm_mytid() < 0 || buf == NULL)
        return 1;
    pvm_setopt(PvmRoute, PvmRouteDirect);
    pvm_notify(PvmTaskExit, TAG_NOTIFY, 1, &peer);
    /* Who we are, for the idle task, which did not know. */
    pvm_initsend(PvmDataDefault);
    if (pvm_send(peer, 21) < 0 || handshake(peer, 1) != 0)
        return 1;
    report_fds();
    for (int i = 0;; i++) {
        printf("sending %d\n", i);
        fflush(stdout);
        if (pvm_psend(peer, 30, buf, bytes, PVM_BYTE) < 0)
            break;
        /* Its reader died: the daemon's exit notice must come, not a hang. */
        if (pvm_nrecv(-1, TAG_NOTIFY) > 0) {
            printf("ok hog: t%x exited\n", peer);
            fflush(stdout);
            free(buf);
            pvm_exit();
            return 0;
        }
    }
    free(buf);
    return 1;
}

/* This process's peak resident memory in kB (VmHWM), or -1. */
static long
peak_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");

    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "VmHWM: %ld", &kb) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kb;
}

/* Wait until the file DIR/NAME exists. */
static void
wait_file(const char *dir, const char *name)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    while (access(path, F_OK) != 0)
        usleep(20000);
}

static int
idle(const char *dir, int bytes)
{
    int me = pvm_mytid(), len, tag, src, b, peer;

    if (me < 0)
        return 1;
    pvm_setopt(PvmRoute, PvmAllowDirect);
    printf("t%x\n", me);
    fflush(stdout);
    if ((b = pvm_recv(-1, 21)) < 0 || pvm_bufinfo(b, &len, &tag, &peer) < 0)
        return 1;
    pvm_notify(PvmTaskExit, TAG_NOTIFY, 1, &peer);
    if (handshake(peer, 0) != 0)
        return 1;
    report_fds();
    /* Two whole messages: the link works (after any stranger knocked). */
    wait_file(dir, "read");
    for (int i = 0; i < 2; i++) {
        if ((b = pvm_recv(peer, 30)) < 0 || pvm_bufinfo(b, &len, &tag, &src) < 0 || len != bytes)
            return 1;
    }
    /* What a receive read ahead of the two: a frame or two, not a queue
     * of the hog's messages (its sends outpace our reads). */
    printf("got 2\npeak_kb %ld\n", peak_kb());
    fflush(stdout);
    /* Then nothing is read: the sender blocks inside a message. */
    wait_file(dir, "finish");
    for (;;) {
        if ((b = pvm_recv(-1, -1)) < 0 || pvm_bufinfo(b, &len, &tag, &src) < 0)
            return 1;
        if (tag == TAG_NOTIFY) {
            printf("ok idle: exit notice for t%x\n", peer);
            pvm_exit();
            return 0;
        }
        if (tag != 30 || src != peer || len != bytes)
            return 1;
    }
}

/*
 * burst: with the link up, waits for "go", sends three 700 kB messages and
 * ends at once (pvm_exit, or a plain return from main when how is
 * "return").  absorb: says "go", then only after a while sends small
 * messages the burst task never reads (they reach a socket that is
 * closing) and reads the three messages whole.
 */
static int
burst(int peer, const char *how, int size)
{
    int me = pvm_mytid();
    unsigned char *buf = malloc((size_t)size);

    if (me < 0 || buf == NULL)
        return 1;
    pvm_setopt(PvmRoute, PvmRouteDirect);
    pvm_initsend(PvmDataDefault);
    if (pvm_send(peer, 21) < 0 || handshake(peer, 1) != 0 || pvm_recv(peer, 41) < 0)
        return 1;
    for (int seq = 0; seq < 3; seq++)
        if (pack(me, seq, size, buf) < 0 || pvm_send(peer, 42) < 0)
            return 1;
    free(buf);
    printf("sent 3\n");
    fflush(stdout);
    if (strcmp(how, "return") != 0)
        pvm_exit();
    return 0;
}

static int
absorb(void)
{
    int me = pvm_mytid(), len, tag, peer, b;
    unsigned char *buf = malloc((size_t)(3 << 20));
    char small[4000] = { 0 };

    if (me < 0 || buf == NULL)
        return 1;
    printf("t%x\n", me);
    fflush(stdout);
    if ((b = pvm_recv(-1, 21)) < 0 || pvm_bufinfo(b, &len, &tag, &peer) < 0 ||
        handshake(peer, 0) != 0)
        return 1;
    pvm_initsend(PvmDataDefault);
    if (pvm_send(peer, 41) < 0)
        return 1;
    /* The three fit in the sockets' buffers: the burst task ends while its
     * kernel still holds the tail, and then these reach its socket. */
    usleep(500000);
    for (int i = 0; i < 20; i++)
        if (pvm_psend(peer, 40, small, (int)sizeof(small), PVM_BYTE) < 0)
            return 1;
    for (int seq = 0; seq < 3; seq++)
        if (pvm_recv(peer, 42) < 0 || check(peer, seq, buf, 3 << 20) != 0)
            return 1;
    printf("ok absorb: 3 whole messages from t%x\n", peer);
    free(buf);
    pvm_exit();
    return 0;
}

/* pvm_notify(PvmTaskExit) on tid, then wait for the notice. */
static int
watch(int tid)
{
    int me = pvm_mytid(), who = 0;

    if (me < 0 || pvm_notify(PvmTaskExit, TAG_NOTIFY, 1, &tid) < 0)
        return 1;
    printf("t%x watching t%x\n", me, tid);
    fflush(stdout);
    if (pvm_recv(-1, TAG_NOTIFY) < 0 || pvm_upkint(&who, 1, 1) < 0 || who != tid)
        return 1;
    printf("ok exit notice for t%x\n", who);
    pvm_exit();
    return 0;
}

int
main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && strcmp(argv[1], "echo") == 0)
        return echo(route_of(argv[2]));
    if (argc == 5 && strcmp(argv[1], "client") == 0)
        return client(parse_tid(argv[2]), atoi(argv[3]), route_of(argv[4]));
    if (argc == 4 && strcmp(argv[1], "sink") == 0)
        return sink(atoi(argv[2]), route_of(argv[3]));
    if (argc == 5 && strcmp(argv[1], "send") == 0)
        return sender(parse_tid(argv[2]), atoi(argv[3]), route_of(argv[4]));
    if (argc == 4 && strcmp(argv[1], "hog") == 0)
        return hog(parse_tid(argv[2]), atoi(argv[3]));
    if (argc == 4 && strcmp(argv[1], "burst") == 0)
        return burst(parse_tid(argv[2]), argv[3], 700000);
    if (argc == 2 && strcmp(argv[1], "absorb") == 0)
        return absorb();
    if (argc == 3 && strcmp(argv[1], "watch") == 0)
        return watch(parse_tid(argv[2]));
    if (argc == 4 && strcmp(argv[1], "idle") == 0)
        return idle(argv[2], atoi(argv[3]));
    fprintf(stderr, "usage: see the comment at the top of pvm_direct.c\n");
    return 2;
}
