/*
 * liq_run.c - liquid_run: a program's own stencil as its job's master
 * (liq_stencil_main with the description) or, spawned by that master with
 * LIQ_WORKER_ARG and its options' values, as one of the job's workers.
 */
#include "liq_master.h"

#include <stdio.h>
#include <string.h>

#include "wire.h"

/* The worker: the program's options as the master read them, then serve. */
static int
user_worker(struct liquid *lq, int argc, char **argv)
{
    char err[256];

    for (int i = 2; i < argc; i++) {
        char key[LIQUID_NAME_MAX], *eq = strchr(argv[i], '=');

        if (eq == NULL || (size_t)(eq - argv[i]) >= sizeof(key)) {
            fprintf(stderr, "%s %s: unexpected argument '%s'; the job's master spawns this\n",
                    lq->name, LIQ_WORKER_ARG, argv[i]);
            return LIQ_EXIT_USAGE;
        }
        memcpy(key, argv[i], (size_t)(eq - argv[i]));
        key[eq - argv[i]] = '\0';
        if (liq_user_opt_set(lq, key, eq + 1, err, sizeof(err)) != 0) {
            fprintf(stderr, "%s %s: %s\n", lq->name, LIQ_WORKER_ARG,
                    liq_user_opt_known(lq, key) ? err : "an option this program does not have");
            return LIQ_EXIT_USAGE;
        }
    }
    if (liq_user_check(lq) != 0) {
        fprintf(stderr, "%s\n", lq->err);
        return LIQ_EXIT_USAGE;
    }
    char who[LIQUID_NAME_MAX + 64];

    snprintf(who, sizeof(who), "%s %s", lq->name, LIQ_WORKER_ARG);
    liq_user_spec = lq;
    return liq_worker_main(who);
}

int
liquid_run(struct liquid *lq, int argc, char **argv)
{
    struct liq_program prog;

    if (lq == NULL) {
        fprintf(stderr, "liquid_run: no job description\n");
        return LIQ_EXIT_USAGE;
    }
    if (argc >= 2 && strcmp(argv[1], LIQ_WORKER_ARG) == 0)
        return user_worker(lq, argc, argv);
    memset(&prog, 0, sizeof(prog));
    prog.name = lq->name;
    prog.user = lq;
    lq->master = 1;
    liq_user_spec = lq;
    return wire_stdout_check(lq->name, liq_stencil_main(&prog, argc, argv));
}
