/*
 * pvm_pingpong - a PVM program for the integration tests, written only
 * against pvm3.h: a server echoes every message back to its sender; a
 * client sends numbered messages of doubles, checks every echo (contents
 * and order), then stops the server.
 *
 *   pvm_pingpong server              prints its tid, serves until tag 99
 *   pvm_pingpong client TID N SIZE   N round trips of SIZE doubles
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
server(void)
{
    int me = pvm_mytid();
    if (me < 0)
        return 1;
    printf("t%x\n", me);
    fflush(stdout);
    for (;;) {
        int buf = pvm_recv(-1, -1);
        int len, tag, src;
        if (buf < 0 || pvm_bufinfo(buf, &len, &tag, &src) < 0)
            return 1;
        if (tag == 99)
            break;
        int seq, n;
        pvm_upkint(&seq, 1, 1);
        pvm_upkint(&n, 1, 1);
        double *d = malloc(sizeof(double) * (size_t)(n ? n : 1));
        pvm_upkdouble(d, n, 1);
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&seq, 1, 1);
        pvm_pkint(&n, 1, 1);
        pvm_pkdouble(d, n, 1);
        free(d);
        if (pvm_send(src, tag + 1) < 0)
            return 1;
    }
    pvm_exit();
    return 0;
}

static int
client(int peer, int rounds, int size)
{
    int me = pvm_mytid(), rc = 1;
    if (me < 0)
        return 1;
    double *d = malloc(sizeof(double) * (size_t)(size ? size : 1));
    double *e = malloc(sizeof(double) * (size_t)(size ? size : 1));
    if (d == NULL || e == NULL)
        goto out;
    /* Send every message first, then read the echoes: order is checked
     * across many messages in flight, not one at a time. */
    for (int seq = 0; seq < rounds; seq++) {
        for (int i = 0; i < size; i++)
            d[i] = seq * 1e6 + i + 0.25;
        pvm_initsend(seq % 2 ? PvmDataRaw : PvmDataDefault);
        pvm_pkint(&seq, 1, 1);
        pvm_pkint(&size, 1, 1);
        pvm_pkdouble(d, size, 1);
        if (pvm_send(peer, 10) < 0)
            goto out;
    }
    for (int seq = 0; seq < rounds; seq++) {
        int s, n, len, tag, src;
        int buf = pvm_recv(peer, 11);
        if (buf < 0 || pvm_bufinfo(buf, &len, &tag, &src) < 0 || src != peer || tag != 11)
            goto out;
        pvm_upkint(&s, 1, 1);
        pvm_upkint(&n, 1, 1);
        if (s != seq || n != size) {
            fprintf(stderr, "echo %d: got seq %d size %d\n", seq, s, n);
            goto out;
        }
        pvm_upkdouble(e, n, 1);
        for (int i = 0; i < size; i++)
            if (e[i] != seq * 1e6 + i + 0.25) {
                fprintf(stderr, "echo %d: item %d differs\n", seq, i);
                goto out;
            }
    }
    /* Nothing else is waiting: a non-blocking receive finds nothing. */
    if (pvm_nrecv(-1, -1) != 0)
        goto out;
    pvm_initsend(PvmDataDefault);
    pvm_send(peer, 99);
    printf("ok t%x <-> t%x: %d messages of %d doubles\n", me, peer, rounds, size);
    rc = 0;
out:
    free(d);
    free(e);
    pvm_exit();
    return rc;
}

int
main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "server") == 0)
        return server();
    if (argc == 5 && strcmp(argv[1], "client") == 0)
        return client((int)strtol(argv[2] + (argv[2][0] == 't'), NULL, 16), atoi(argv[3]),
                      atoi(argv[4]));
    fprintf(stderr, "usage: pvm_pingpong server | client TID N SIZE\n");
    return 2;
}
