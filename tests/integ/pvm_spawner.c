/*
 * pvm_spawner - spawn N copies of a PVM program with pvm_spawn, catch
 * their output (pvm_catchout), wait for them all to exit (pvm_notify
 * PvmTaskExit), and report.  Written only against pvm3.h.
 *
 *   pvm_spawner [-n N] [-h HOST | -a ARCH] [-x] PROGRAM [ARGS...]
 *   -x  also kill the tasks with pvm_kill once spawned (tests kill + notify)
 * Prints "spawned N: tids..." and the children's output (a child's BEGIN
 * line may come first, as under PVM), then "all exited".
 * Exit 0 if all N started and exited, 1 otherwise.
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
    int n = 1, flags = PvmTaskDefault, kill_them = 0, c;
    char *where = NULL;
    while ((c = getopt(argc, argv, "+n:h:a:x")) != -1) {
        switch (c) {
        case 'n': n = atoi(optarg); break;
        case 'h': flags = PvmTaskHost; where = optarg; break;
        case 'a': flags = PvmTaskArch; where = optarg; break;
        case 'x': kill_them = 1; break;
        default: return 2;
        }
    }
    if (optind >= argc || n < 1 || n > 256)
        return 2;
    if (pvm_mytid() < 0)
        return 1;
    pvm_catchout(stdout);
    int tids[256];
    int got = pvm_spawn(argv[optind], argv + optind + 1, flags, where, n, tids);
    printf("spawned %d:", got);
    for (int i = 0; i < n; i++)
        printf(" %s%x", tids[i] > 0 ? "t" : "err", tids[i] > 0 ? tids[i] : -tids[i]);
    printf("\n");
    fflush(stdout);
    if (got != n) {
        pvm_exit();
        return 1;
    }
    if (pvm_notify(PvmTaskExit, 777, n, tids) < 0)
        return 1;
    if (kill_them)
        for (int i = 0; i < n; i++)
            if (pvm_kill(tids[i]) < 0)
                return 1;
    int left = n;
    while (left > 0) {
        int who;
        if (pvm_recv(-1, 777) < 0 || pvm_upkint(&who, 1, 1) < 0)
            return 1;
        left--;
    }
    /* Lines still in flight from the last children. */
    struct timeval tv = { 0, 200000 };
    pvm_trecv(-1, 999999, &tv);
    printf("all exited\n");
    pvm_exit();
    return 0;
}
