/*
 * fuzz_conf_load.c - libFuzzer harness for the configuration loader
 * (conf/conf_load.c over libconfig): vmd.conf as anyone might write it.
 *
 * The input is the file's text, written to a scratch file of this process
 * (conf_load takes a path, as the daemon does).  Whatever it holds, the
 * loader must return 0 or an error with its file:line diagnostics, and
 * conf_free must leave nothing behind.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[256];

static void
scratch_remove(void)
{
    if (scratch[0])
        unlink(scratch);
}

/* The input in a scratch file of this process (TMPDIR or /tmp, removed at exit). */
static const char *
fuzz_scratch(const uint8_t *data, size_t size)
{
    if (scratch[0] == '\0') {
        const char *dir = getenv("TMPDIR");
        snprintf(scratch, sizeof(scratch), "%s/lvm-fuzz.%ld.conf", dir && dir[0] ? dir : "/tmp",
                 (long)getpid());
        atexit(scratch_remove);
    }
    FILE *fp = fopen(scratch, "wb");
    if (fp == NULL)
        return NULL;
    if (size && fwrite(data, 1, size, fp) != size) {
        fclose(fp);
        return NULL;
    }
    return fclose(fp) == 0 ? scratch : NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct conf c;
    struct conf_diag d;
    const char *path = fuzz_scratch(data, size);

    if (path == NULL)
        return 0;
    memset(&d, 0, sizeof(d));
    conf_defaults(&c);
    int rc = conf_load(path, &c, &d);
    if (rc != 0 && d.nerrors == 0 && d.text[0] == '\0')
        abort();                /* an error nobody is told about */
    if (strnlen(d.text, sizeof(d.text)) == sizeof(d.text))
        abort();
    conf_free(&c);
    return 0;
}
