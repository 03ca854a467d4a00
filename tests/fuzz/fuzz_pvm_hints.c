/*
 * fuzz_pvm_hints.c - libFuzzer harness for the hints file libpvm3 reads
 * (issue 27; lib/pvm/pvm_hints.c, pvm__hints_parse over libconfig): a
 * hints file as anyone might have edited it, or another file named by
 * mistake.  The parser must return 0 with hints pvm__hints_free empties,
 * or -EINVAL with a terminated "file:line: what" (or -ENOMEM); a crash, a
 * leak of ours or undefined behaviour is a bug.
 *
 * Seeds (corpus/pvm_hints/): what vmrun analyze --hints writes, every
 * setting and kind of task entry, and malformed ones (unknown settings,
 * wrong types, bad task paths, a NUL, @include, syntax errors, numbers
 * beyond every range, deep nesting).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pvm_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pvm__hints h;
    char err[512];

    memset(err, 'X', sizeof(err));
    int rc = pvm__hints_parse((const char *)data, size, "fuzz.hints", &h, err, sizeof(err));
    if (rc == 0) {
        if (h.ntask < 0 || (h.ntask > 0 && h.task == NULL))
            abort();
        for (int i = 0; i < h.ntask; i++)
            if (strnlen(h.task[i].path, sizeof(h.task[i].path)) == 0 ||
                strnlen(h.task[i].path, sizeof(h.task[i].path)) == sizeof(h.task[i].path))
                abort();        /* a task without a terminated path */
        pvm__hints_free(&h);
        if (h.task != NULL || h.ntask != 0)
            abort();
    } else if (rc == -EINVAL) {
        if (strnlen(err, sizeof(err)) == sizeof(err) || strncmp(err, "fuzz.hints:", 11) != 0)
            abort();            /* refused without its file:line */
    } else if (rc != -ENOMEM) {
        abort();
    }
    return 0;
}
