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

#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct conf c;
    struct conf_diag d;
    const char *path = fuzz_scratch(data, size, ".conf");

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
