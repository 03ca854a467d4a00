/*
 * fuzz_trace_json.c - libFuzzer harness for the trace reader (issue 27):
 * launcher/vmrun/vmrun_json.c's JSON parser, vmrun_tload's reading of a
 * stencil job's Chrome Trace Event file, and what reads the result --
 * `vmrun analyze FILE --json` (grain, flows, load windows, the rules) and
 * `vmrun trace view FILE --svg` -- on a trace as anyone might have edited it.
 *
 * The input is the file's text.  The parser sees it straight from memory
 * and must return 0 with a tree vmrun_json_free empties, or an error with
 * its message; then it goes to a scratch file (vmrun_tload takes a path)
 * and through both subcommands, whose output goes to /dev/null.  Exit codes
 * are theirs to choose; a crash, a leak or undefined behaviour is a bug.
 *
 * Seeds (corpus/trace_json/): real traces of `vmrun stencil --trace` (the
 * three scenarios of bench/paradise.sh) cut to the first events of each
 * kind per lane, flows kept in pairs, and malformed ones (truncated,
 * fields missing or of the wrong type, numbers out of every range, flows
 * without their other end, deep nesting, bad escapes); and PVM task traces
 * (lib/pvm/pvm_trace.c, LIQUIDVM_TRACE), which vmrun analyze reads with
 * vmrun_panalyze.c: master1's and a slave1's of one run, and a malformed
 * one (flow ids too long, a tid that is no number, odd hints).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmrun_json.h"
#include "vmrun_trace.h"

#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    struct vmrun_json j;
    char err[256];
    const char *path;

    if (!quiet) {
        /* The subcommands print their analysis: not wanted at a million runs. */
        if (freopen("/dev/null", "w", stdout) == NULL)
            abort();
        quiet = 1;
    }
    memset(err, 'X', sizeof(err));
    int rc = vmrun_json_parse((const char *)data, size, &j, err, sizeof(err));
    if (rc == 0) {
        vmrun_json_free(&j);
        if (j.n != 0 || j.v != NULL || j.str != NULL)
            abort();            /* not emptied */
    } else if (strnlen(err, sizeof(err)) == sizeof(err) || err[0] == '\0') {
        abort();                /* refused without a terminated word */
    }
    if ((path = fuzz_scratch(data, size, ".json")) == NULL)
        return 0;
    char *an[] = { "analyze", (char *)path, "--json", NULL };
    char *view[] = { "trace", "view", (char *)path, "--svg", "/dev/null", NULL };

    vmrun_analyze_main(3, an);
    vmrun_trace_main(5, view);
    fflush(stdout);
    return 0;
}
