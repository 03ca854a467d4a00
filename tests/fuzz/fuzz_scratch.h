/*
 * fuzz_scratch.h - for harnesses whose loader reads a file: the input in a
 * scratch file of this process (TMPDIR or /tmp), removed at exit.  A
 * header, since every fuzz_*.c here is a harness of its own.
 */
#ifndef LIQUIDVM_FUZZ_SCRATCH_H
#define LIQUIDVM_FUZZ_SCRATCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_scratch_path[256];

static void
fuzz_scratch_remove(void)
{
    if (fuzz_scratch_path[0])
        unlink(fuzz_scratch_path);
}

/* The input's path, or NULL when it could not be written.  suffix: ".conf", ".job". */
static const char *
fuzz_scratch(const uint8_t *data, size_t size, const char *suffix)
{
    FILE *fp;

    if (fuzz_scratch_path[0] == '\0') {
        const char *dir = getenv("TMPDIR");

        snprintf(fuzz_scratch_path, sizeof(fuzz_scratch_path), "%s/lvm-fuzz.%ld%s",
                 dir && dir[0] ? dir : "/tmp", (long)getpid(), suffix);
        atexit(fuzz_scratch_remove);
    }
    if ((fp = fopen(fuzz_scratch_path, "wb")) == NULL)
        return NULL;
    if (size && fwrite(data, 1, size, fp) != size) {
        fclose(fp);
        return NULL;
    }
    return fclose(fp) == 0 ? fuzz_scratch_path : NULL;
}

#endif
