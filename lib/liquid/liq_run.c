/*
 * liq_run.c - liquid_run: a program's own stencil as its job's master
 * (liq_stencil_main with the description) or, spawned by that master with
 * LIQ_WORKER_ARG and its options' values, as one of the job's workers.
 */
#include "liq_master.h"
#include "liq_ukern.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    liq_user_spec = lq;
    return liq_worker_main();
}

int
liq_builtin_worker(const char *who, int argc, char **argv)
{
    static struct liq_ukern k;
    struct liquid *lq;
    int kernel = -1, have_seed = 0;
    uint64_t seed = 0;

    for (int i = 1; i < argc; i++) {
        char *end;

        if (strcmp(argv[i], "kernel=jacobi") == 0 || strcmp(argv[i], "kernel=rbgs") == 0) {
            kernel = argv[i][7] == 'r';
        } else if (strncmp(argv[i], "seed=", 5) == 0 && argv[i][5] >= '0' && argv[i][5] <= '9') {
            errno = 0;
            seed = strtoull(argv[i] + 5, &end, 10);
            have_seed = errno == 0 && *end == '\0';
            if (!have_seed)
                kernel = -2;
        } else {
            kernel = -2;
        }
        if (kernel == -2) {
            fprintf(stderr, "%s: unexpected argument '%s'; the job's master spawns this\n", who,
                    argv[i]);
            return LIQ_EXIT_USAGE;
        }
    }
    if (argc == 1)
        return liq_worker_main(); /* vmrun bench's probe: the built-in kernels */
    if (kernel < 0 || !have_seed) {
        fprintf(stderr, "%s: takes kernel=jacobi|rbgs and seed=N; the job's master spawns it\n",
                who);
        return LIQ_EXIT_USAGE;
    }
    if ((lq = liquid_new(kernel ? "rbgs" : "jacobi")) == NULL ||
        liq_ukern_describe(lq, &k, kernel, seed) != 0) {
        fprintf(stderr, "%s: %s\n", who, lq != NULL ? liquid_error(lq) : "out of memory");
        return LIQ_EXIT_FAIL;
    }
    liq_user_spec = lq;
    return liq_worker_main();
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
    return liq_stencil_main(&prog, argc, argv);
}
