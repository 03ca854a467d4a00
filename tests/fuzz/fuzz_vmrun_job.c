/*
 * fuzz_vmrun_job.c - libFuzzer harness for the job-file loader
 * (lib/liquid/liq_opts.c, liq_opts_file): a job file as anyone
 * might write it, every key going through liq_opt_set as on the command
 * line.
 *
 * The input is the file's text, written to a scratch file (the loader
 * takes a path).  The loader must return 0 or -1 with its file:line
 * messages in err, terminated, and leave nothing allocated.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "liq_master.h"

#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct liq_opts o;
    char err[4096];
    const char *path = fuzz_scratch(data, size, ".job");

    if (path == NULL)
        return 0;
    memset(&o, 0, sizeof(o));
    liq_opts_defaults(&o);
    memset(err, 'X', sizeof(err));
    int rc = liq_opts_file(&o, path, err, sizeof(err));
    if (strnlen(err, sizeof(err)) == sizeof(err))
        abort();                /* err not terminated */
    if (rc != 0 && err[0] == '\0')
        abort();                /* refused without a word */
    return 0;
}
