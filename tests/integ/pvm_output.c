/*
 * pvm_output - spawned tasks' output as PVM 3.4 delivers it, for
 * test_pvm_output.sh (run on LiquidVM and on real PVM 3.4.6).  Written
 * only against pvm3.h.
 *
 *   pvm_output catch N [bare]   pvm_catchout(stdout) (PvmShowTids 0 with
 *                               "bare"), spawn N children, pvm_exit at once
 *   pvm_output catchat H1 H2    pvm_catchout(stdout), one child on host H1
 *                               whose grandchild runs on host H2, pvm_exit
 *                               at once
 *   pvm_output leave            pvm_catchout(stdout), one child that
 *                               prints a line a second later, and leave
 *                               at once without pvm_exit
 *   pvm_output code N           PvmOutputTid = itself, PvmOutputCode 33:
 *                               print its tid, then every output message
 *                               (the parent tid after spawned and begin)
 *                               until all 2N tasks have ended
 *
 * Each child prints a line, spawns a grandchild (whose output comes to the
 * same place: PvmOutputTid is inherited), prints a last line without its
 * newline and leaves; each grandchild prints a line.
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CODE 33

static char self[] = "pvm_output";

/* n tasks of role, on host at (any host if NULL; its child's host: next). */
static int
spawn_at(char *role, int n, char *at, char *next)
{
    char *args[] = { role, next, NULL }, any[] = "";
    int tids[64];

    return pvm_spawn(self, args, at ? PvmTaskHost : PvmTaskDefault, at ? at : any, n, tids);
}

static int
spawn(char *role, int n)
{
    return spawn_at(role, n, NULL, NULL);
}

int
main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    char child[] = "child", grand[] = "grand";
    int n = argc > 2 ? atoi(argv[2]) : 1;

    if (strcmp(mode, "child") == 0) {
        printf("child line 1\n");
        fflush(stdout);
        spawn_at(grand, 1, argc > 2 ? argv[2] : NULL, NULL);
        printf("child last (no newline)");
        fflush(stdout);
        pvm_exit();
        return 0;
    }
    if (strcmp(mode, "grand") == 0) {
        printf("grand line\n");
        fflush(stdout);
        pvm_exit();
        return 0;
    }
    if (strcmp(mode, "late") == 0) {
        sleep(1);
        printf("late line\n");
        fflush(stdout);
        pvm_exit();
        return 0;
    }
    if (strcmp(mode, "leave") == 0) {
        char late[] = "late";

        if (pvm_mytid() < 0)
            return 1;
        pvm_catchout(stdout);
        printf("parent spawned %d\n", spawn(late, 1));
        fflush(stdout);
        _exit(0);
    }
    if (strcmp(mode, "catchat") == 0 && argc == 4) {
        if (pvm_mytid() < 0)
            return 1;
        pvm_catchout(stdout);
        printf("parent spawned %d\n", spawn_at(child, 1, argv[2], argv[3]));
        fflush(stdout);
        pvm_exit();
        printf("parent after exit\n");
        return 0;
    }
    if (n < 1 || n > 16 || (strcmp(mode, "catch") != 0 && strcmp(mode, "code") != 0)) {
        fprintf(stderr, "usage: pvm_output catch|code N [bare] | catchat HOST1 HOST2 | leave\n");
        return 2;
    }
    if (pvm_mytid() < 0)
        return 1;
    if (strcmp(mode, "catch") == 0) {
        pvm_catchout(stdout);
        if (argc > 3 && strcmp(argv[3], "bare") == 0)
            pvm_setopt(PvmShowTids, 0);
        printf("parent spawned %d\n", spawn(child, n));
        fflush(stdout);
        pvm_exit();
        printf("parent after exit\n");
        return 0;
    }
    pvm_setopt(PvmOutputTid, pvm_mytid());
    pvm_setopt(PvmOutputCode, CODE);
    printf("parent is t%x\n", pvm_mytid());
    printf("parent spawned %d\n", spawn(child, n));
    for (int ended = 0; ended < 2 * n;) {
        struct timeval tmout = { 30, 0 };
        int b = pvm_trecv(-1, CODE, &tmout), len, tag, src, tid, count;
        char data[4096];

        if (b <= 0) {
            printf("timeout after %d ended\n", ended);
            pvm_exit();
            return 1;
        }
        pvm_bufinfo(b, &len, &tag, &src);
        pvm_upkint(&tid, 1, 1);
        pvm_upkint(&count, 1, 1);
        if (count > 0 && count < (int)sizeof(data))
            pvm_upkbyte(data, count, 1);
        printf("out t%x %d ", tid, count);
        if (count == -2 || count == -1) {
            int ptid = 0;
            if (pvm_upkint(&ptid, 1, 1) < 0)
                printf("no parent tid");
            else
                printf("ptid t%x", ptid);
        }
        for (int i = 0; i < count && i < (int)sizeof(data); i++)
            fputs(data[i] == '\n' ? "\\n" : (char[]){ data[i], '\0' }, stdout);
        printf("\n");
        ended += count == 0;
    }
    pvm_exit();
    printf("parent done\n");
    return 0;
}
