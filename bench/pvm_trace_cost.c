/*
 * pvm_trace_cost - what tracing a PVM task costs per event (issue 27, at
 * most 3 % of a run), without a virtual machine: recording (a traced
 * call's begin and its message's end: two clock reads, a counter lookup,
 * two stores; lib/pvm/pvm_trace.c) and formatting at the end
 * (pvm__trace_json into /dev/null, 1 MB buffer as at exit).  Prints CPU
 * ns per traced call and per event.
 *
 *   pvm_trace_cost [CALLS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pvm_int.h"

/* CPU time: on a shared machine, wall time counts the others' work too. */
static double
now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
    int calls = argc > 1 ? atoi(argv[1]) : 1000000;
    char dir[] = "/tmp/pvm_trace_cost.XXXXXX";
    struct pvm__tinfo ti;
    double t0, t1, t2;
    FILE *fp;

    if (calls <= 0 || mkdtemp(dir) == NULL)
        return 2;
    /* A task that has a tid but no daemon: the host's name is not asked. */
    setenv("LIQUIDVM_TRACE", dir, 1);
    setenv("LIQUIDVM_HOME", dir, 1);
    setenv("LIQUIDVM_TRACE_EVENTS", "4000000", 1);
    pvm__ctx.mytid = 0x40001;
    pvm__ctx.autoerr = 0;
    if (!pvm__tracing()) {
        fprintf(stderr, "pvm_trace_cost: tracing did not start\n");
        return 1;
    }
    t0 = now();
    for (int i = 0; i < calls; i++) {
        int64_t b = pvm__trace_begin();

        pvm__trace_msg(i & 1 ? PVM__TEV_RECV : PVM__TEV_SEND, PVM__TC_SEND, b, 0x40002 + (i & 7),
                       i & 3, 0, 64);
    }
    t1 = now();
    memset(&ti, 0, sizeof(ti));
    ti.tid = 0x40001;
    ti.program = "pvm_trace_cost";
    ti.hostname = "host0";
    ti.path = "0";
    ti.why = "bench";
    if ((fp = fopen("/dev/null", "w")) == NULL)
        return 1;
    setvbuf(fp, NULL, _IOFBF, 1 << 20);
    /* The events recorded: pvm__ctx.tr's, through the exit hook's path. */
    pvm__trace_json(fp, &ti, pvm__trace_events(&ti.dropped), pvm__trace_nevents());
    fclose(fp);
    t2 = now();
    printf("pvm_trace_cost: %d traced calls, %d events (compute spans and messages)\n", calls,
           pvm__trace_nevents());
    printf("  recording  %7.1f ns per traced call\n", (t1 - t0) * 1e9 / calls);
    printf("  formatting %7.1f ns per event (at the end)\n",
           (t2 - t1) * 1e9 / pvm__trace_nevents());
    pvm__ctx.tr_state = -1; /* nothing to write at exit */
    rmdir(dir);
    return 0;
}
