/*
 * pvm_timing_floor.c - the floor under bench/pvm_timing: the same round
 * trips (N bytes out, 4 bytes back) between two processes over a plain
 * TCP connection and over TLS 1.3 with the cluster's policy
 * (wire_tls_ctx_new), with no PVM library and no daemon in between.  Run
 * one end in each network namespace (bench/pvm_timing.sh --floor does) to
 * see how much of a LiquidVM round trip is the network and the cipher.
 *
 *   pvm_timing_floor -s [-t CA CERT KEY] [OPTIONS] ADDR PORT
 *   pvm_timing_floor -c [-t CA CERT KEY] [OPTIONS] [-r REPS] [-C REPS] [--json] ADDR PORT
 *
 * Options (both ends take the same): -b SOCKBUF sets SO_SNDBUF/SO_RCVBUF
 * (else the kernel tunes them); -W BYTES gathers TLS records and sends them
 * in writes of up to BYTES (else one send per 16 KB record, as OpenSSL's
 * socket BIO does); -A BYTES reads ahead into a buffer of BYTES; -S SIZE
 * times that message size only.
 *
 * The client prints a median per size, and the CPU time (user and system)
 * each end spent per round trip: the client's is the sender's cost of N
 * bytes, the server's the receiver's.  They are taken over -C REPS more
 * round trips per size (default 100) after the timed ones: the client
 * asks the server for its CPU clock (in host byte order: both ends run
 * on one machine) before and after them.  Exit status: 0 ok, 1 failure,
 * 2 usage.
 */
#include "wire_tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

static const int sizes[] = { 4, 100, 1000, 10000, 100000, 1000000 };
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))
#define MAXSIZE 1000000

/* FLOOR_WBUF: a BIO that gathers TLS records and sends them in big writes. */
static unsigned char *wb;
static size_t wb_len, wb_cap;
static int wb_flush(int fd);

struct end {
    int fd;
    SSL *ssl;
};

static double
now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* A request for the server's CPU clock instead of a message length. */
#define CPU_ASK 0xffffffffu

static double
cpu_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static int
put(struct end *e, const void *p, size_t n)
{
    while (n > 0) {
        ssize_t k;

        if (e->ssl != NULL) {
            size_t w;
            if (SSL_write_ex(e->ssl, p, n, &w) != 1)
                return -1;
            if (wb != NULL && wb_flush(e->fd) != 0)
                return -1;
            k = (ssize_t)w;
        } else if ((k = send(e->fd, p, n, MSG_NOSIGNAL)) < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p = (const char *)p + k;
        n -= (size_t)k;
    }
    return 0;
}

static int
get(struct end *e, void *p, size_t n)
{
    while (n > 0) {
        ssize_t k;

        if (e->ssl != NULL) {
            size_t r;
            if (SSL_read_ex(e->ssl, p, n, &r) != 1)
                return -1;
            k = (ssize_t)r;
        } else if ((k = recv(e->fd, p, n, 0)) <= 0) {
            if (k < 0 && errno == EINTR)
                continue;
            return -1;
        }
        p = (char *)p + k;
        n -= (size_t)k;
    }
    return 0;
}


static int
wb_flush(int fd)
{
    size_t off = 0;

    while (off < wb_len) {
        ssize_t k = send(fd, wb + off, wb_len - off, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        off += (size_t)k;
    }
    wb_len = 0;
    return 0;
}

static int
bw_write(BIO *b, const char *buf, int len)
{
    int fd = (int)(intptr_t)BIO_get_data(b);

    if (wb_len + (size_t)len > wb_cap && wb_flush(fd) != 0)
        return -1;
    if ((size_t)len > wb_cap) {
        ssize_t k = send(fd, buf, (size_t)len, MSG_NOSIGNAL);
        return k < 0 ? -1 : (int)k;
    }
    memcpy(wb + wb_len, buf, (size_t)len);
    wb_len += (size_t)len;
    return len;
}

static int
bw_read(BIO *b, char *buf, int len)
{
    ssize_t k = recv((int)(intptr_t)BIO_get_data(b), buf, (size_t)len, 0);
    return k < 0 ? -1 : (int)k;
}

static long
bw_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)num;
    (void)ptr;
    if (cmd == BIO_CTRL_FLUSH)
        return wb_flush((int)(intptr_t)BIO_get_data(b)) == 0;
    return 0;
}

static int
bw_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

static void
usage(void)
{
    fprintf(stderr, "usage: pvm_timing_floor -s|-c [-t CA CERT KEY] [-b SOCKBUF] [-W BYTES] "
                    "[-A BYTES] [-S SIZE] [-r REPS] [-C REPS] [--json] ADDR PORT\n");
    exit(2);
}

int
main(int argc, char **argv)
{
    const char *ca = NULL, *cert = NULL, *key = NULL, *addr = NULL;
    int server = -1, reps = 200, json = 0, sockbuf = 0, port = 0, one = 1, i, s;
    int wbuf = 0, rbuf = 0, only = 0, cpureps = 100, printed = 0;
    struct sockaddr_in sa = { .sin_family = AF_INET };
    struct end e = { -1, NULL };
    SSL_CTX *ctx = NULL;
    char why[256];
    unsigned char *buf;
    double *rt;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-s") == 0)
            server = 1;
        else if (strcmp(argv[i], "-c") == 0)
            server = 0;
        else if (strcmp(argv[i], "-t") == 0 && i + 3 < argc) {
            ca = argv[++i];
            cert = argv[++i];
            key = argv[++i];
        } else if (strcmp(argv[i], "-b") == 0 && i + 1 < argc)
            sockbuf = atoi(argv[++i]);
        else if (strcmp(argv[i], "-W") == 0 && i + 1 < argc)
            wbuf = atoi(argv[++i]);
        else if (strcmp(argv[i], "-A") == 0 && i + 1 < argc)
            rbuf = atoi(argv[++i]);
        else if (strcmp(argv[i], "-S") == 0 && i + 1 < argc)
            only = atoi(argv[++i]);
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "-C") == 0 && i + 1 < argc)
            cpureps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (addr == NULL)
            addr = argv[i];
        else if (port == 0)
            port = atoi(argv[i]);
        else
            usage();
    }
    if (server < 0 || addr == NULL || port <= 0 || port > 65535 || reps < 1 || cpureps < 1)
        usage();
    sa.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
        usage();
    buf = calloc(1, MAXSIZE + 4);
    rt = calloc((size_t)reps, sizeof(*rt));
    if (buf == NULL || rt == NULL)
        return 1;
    if (ca != NULL && wire_tls_ctx_new(ca, cert, key, &ctx, why, sizeof(why)) != 0) {
        fprintf(stderr, "pvm_timing_floor: %s\n", why);
        return 1;
    }
    if (server) {
        int l = socket(AF_INET, SOCK_STREAM, 0);

        setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(l, 1) != 0 ||
            (e.fd = accept(l, NULL, NULL)) < 0) {
            perror("pvm_timing_floor: listen");
            return 1;
        }
        close(l);
    } else {
        e.fd = socket(AF_INET, SOCK_STREAM, 0);
        for (i = 0; i < 100; i++) {
            if (connect(e.fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
                break;
            close(e.fd);
            e.fd = socket(AF_INET, SOCK_STREAM, 0);
            usleep(50000);
        }
        if (i == 100) {
            perror("pvm_timing_floor: connect");
            return 1;
        }
    }
    setsockopt(e.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (sockbuf > 0) {
        setsockopt(e.fd, SOL_SOCKET, SO_SNDBUF, &sockbuf, sizeof(sockbuf));
        setsockopt(e.fd, SOL_SOCKET, SO_RCVBUF, &sockbuf, sizeof(sockbuf));
    }
    if (ctx != NULL) {
        if (rbuf > 0) {
            SSL_CTX_set_read_ahead(ctx, 1);
            SSL_CTX_set_default_read_buffer_len(ctx, (size_t)rbuf);
        }
        e.ssl = SSL_new(ctx);
        if (wbuf > 0) {
            BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "wbuf");
            BIO *b;

            wb_cap = (size_t)wbuf;
            if ((wb = malloc(wb_cap)) == NULL || m == NULL)
                return 1;
            BIO_meth_set_write(m, bw_write);
            BIO_meth_set_read(m, bw_read);
            BIO_meth_set_ctrl(m, bw_ctrl);
            BIO_meth_set_create(m, bw_create);
            b = BIO_new(m);
            BIO_set_data(b, (void *)(intptr_t)e.fd);
            SSL_set_bio(e.ssl, b, b);
        } else {
            SSL_set_fd(e.ssl, e.fd);
        }
        if ((server ? SSL_accept(e.ssl) : SSL_connect(e.ssl)) != 1) {
            fprintf(stderr, "pvm_timing_floor: TLS handshake failed\n");
            ERR_print_errors_fp(stderr);
            return 1;
        }
    }
    if (server) {
        uint32_t n;

        /* Each message is a 4-byte length and that many bytes; answer 4.
         * CPU_ASK instead of a length: answer our CPU clock (8 bytes). */
        while (get(&e, &n, 4) == 0) {
            if (n == CPU_ASK) {
                double c = cpu_s();

                if (put(&e, &c, sizeof(c)) != 0)
                    break;
                continue;
            }
            if (n > MAXSIZE || get(&e, buf, n) != 0 || put(&e, &n, 4) != 0)
                break;
        }
        return 0;
    }
    if (json)
        printf("{\"impl\":\"%s\",\"results\":[", ctx ? "TLS" : "TCP");
    for (s = 0; s < NSIZES; s++) {
        uint32_t n = (uint32_t)sizes[s];

        if (only > 0 && only != sizes[s])
            continue;

        for (i = -3; i < reps; i++) {
            double t0 = now_us();

            memcpy(buf, &n, 4);
            if (put(&e, buf, n + 4) != 0 || get(&e, buf, 4) != 0) {
                fprintf(stderr, "pvm_timing_floor: connection lost\n");
                return 1;
            }
            if (i >= 0)
                rt[i] = now_us() - t0;
        }
        /* The CPU each end spends per round trip, over cpureps more. */
        double c0 = cpu_s(), s0, s1, c1;
        uint32_t ask = CPU_ASK;

        if (put(&e, &ask, 4) != 0 || get(&e, &s0, sizeof(s0)) != 0) {
            fprintf(stderr, "pvm_timing_floor: connection lost\n");
            return 1;
        }
        for (i = 0; i < cpureps; i++) {
            memcpy(buf, &n, 4);
            if (put(&e, buf, n + 4) != 0 || get(&e, buf, 4) != 0) {
                fprintf(stderr, "pvm_timing_floor: connection lost\n");
                return 1;
            }
        }
        if (put(&e, &ask, 4) != 0 || get(&e, &s1, sizeof(s1)) != 0) {
            fprintf(stderr, "pvm_timing_floor: connection lost\n");
            return 1;
        }
        c1 = cpu_s();
        double snd = (c1 - c0) * 1e6 / cpureps, rcv = (s1 - s0) * 1e6 / cpureps;

        qsort(rt, (size_t)reps, sizeof(*rt), cmp_double);
        if (json)
            printf("%s{\"bytes\":%d,\"median_us\":%.1f,\"send_cpu_us\":%.1f,\"recv_cpu_us\":%.1f}",
                   printed++ ? "," : "", sizes[s], rt[reps / 2], snd, rcv);
        else
            printf("%s %9d B  median %9.1f us  min %9.1f us  CPU per round trip: sender %.1f us, "
                   "receiver %.1f us\n", ctx ? "TLS" : "TCP", sizes[s], rt[reps / 2], rt[0], snd, rcv);
    }
    if (json)
        printf("]}\n");
    if (e.ssl)
        SSL_shutdown(e.ssl);
    close(e.fd);
    return 0;
}
