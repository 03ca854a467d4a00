/*
 * liq_master_bench.c - the benchmarks of a job alone (`vmrun bench`): the
 * speed probe on every worker and the ring of seed 001 fitted to lambda and
 * tau (liq_vm.c runs them), and their figures as text and JSON, which a
 * job's own report (liq_master.c) shares.
 */
#include "liq_master.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "wire.h"

void
liq_bench_print(FILE *fp, const struct liq_vm *vm)
{
    fprintf(fp, "hosts (updates/s under current load, %d worker%s each):\n",
            vm->host[0].count, vm->host[0].count == 1 ? "" : "s");
    for (int h = 0; h < vm->nhosts; h++)
        fprintf(fp, "  %-16s %10.2f Mupdates/s   cache %.0f KiB\n", vm->host[h].name,
                vm->host[h].speed / 1e6, vm->host[h].cache / 1024);
    if (vm->ringn < 2) {
        fprintf(fp, "ring: one worker, no network term\n");
        return;
    }
    fprintf(fp, "ring of %d (median round):", vm->ringn);
    for (int z = 0; z < LIQ_RING_SIZES; z++)
        fprintf(fp, "  %d B %.1f us", vm->ring_bytes[z], vm->ring_s[z] * 1e6);
    fprintf(fp, "\nlambda %.1f us/message, tau %.3f ns/byte (%s, %s)\n", vm->lambda * 1e6,
            vm->tau * 1e9, vm->net == DECOMP_NET_SHARED ? "shared" : "switched",
            vm->fit_ok ? "weighted least squares" : "fit not physical: two-point estimate");
}

void
liq_bench_json(FILE *fp, const struct liq_vm *vm)
{
    fprintf(fp, "\"hosts\":[");
    for (int h = 0; h < vm->nhosts; h++) {
        fprintf(fp, "%s{\"name\":", h ? "," : "");
        wire_json_str(fp, vm->host[h].name);
        fprintf(fp, ",\"workers\":%d,\"updates_per_s\":%.6g,\"cache_bytes\":%.0f,\"tids\":[",
                vm->host[h].count, vm->host[h].speed, vm->host[h].cache);
        for (int i = 0; i < vm->host[h].count; i++)
            fprintf(fp, "%s%d", i ? "," : "", liq_vm_tid(vm, vm->host[h].first + i));
        fprintf(fp, "]}");
    }
    fprintf(fp, "],\"ring\":{\"members\":%d,\"network\":\"%s\",\"sizes\":[", vm->ringn,
            vm->net == DECOMP_NET_SHARED ? "shared" : "switched");
    for (int z = 0; vm->ringn >= 2 && z < LIQ_RING_SIZES; z++)
        fprintf(fp, "%s{\"bytes\":%d,\"median_s\":%.6g}", z ? "," : "", vm->ring_bytes[z],
                vm->ring_s[z]);
    fprintf(fp, "],\"lambda_s\":%.6g,\"tau_s_per_byte\":%.6g,\"r2\":%.4f,\"fit\":\"%s\"}",
            vm->lambda, vm->tau, vm->r2,
            vm->ringn < 2 ? "none" : vm->fit_ok ? "weighted-least-squares" : "two-point");
}


static const char *const bench_synopsis[] = {
    "[--grid N|NXxNYxNZ] [--kernel jacobi|rbgs] [--quanta Q]",
    "[--hosts NAME,...] [--tasks-per-host T] [--network shared|switched]",
    "[--probe-seconds S] [--json FILE] [--quiet]",
    NULL
};

static const char bench_text[] =
    "\n"
    "  Only the benchmarks of `vmrun stencil`: every worker runs the tiled kernel on a\n"
    "  box the size of one quantum of the grid (updates/s under the current load),\n"
    "  then one worker per host passes 8 B .. 1 MB messages around a ring and the\n"
    "  round times are fitted to lambda (s/message) and tau (s/byte), seed 001.\n"
    "\n"
    "  Exit status: 0 measured, 1 the VM or a worker failed, 2 bad options.\n";

static const char *const bench_opts[] = {
    "grid", "kernel", "quanta", "hosts", "tasks-per-host", "network", "probe-seconds", "json",
    "quiet", NULL
};

int
liq_bench_main(const struct liq_program *prog, int argc, char **argv)
{
    struct liq_opts o;
    struct liq_vm vm;
    struct liq_geom g;
    int rc, ext[3], failed = 1;

    liq_opts_defaults(&o);
    if ((rc = liq_opts_parse(&o, prog->name, argc, argv, bench_opts)) != 0) {
        if (rc < 0) {
            liq_opts_usage(stdout, prog->name, bench_synopsis, bench_text);
            return LIQ_EXIT_OK;
        }
        return rc;
    }
    if (o.json[0] != '\0' && strcmp(o.json, "-") != 0) {
        char why[600];

        if (liq_writable(o.json, "--json", why, sizeof(why)) != 0) {
            fprintf(stderr, "%s: %s\n", prog->name, why);
            return LIQ_EXIT_USAGE;
        }
    }
    if (liq_vm_start(&vm, &o, prog) == 0) {
        if (liq_geom_make(&g, o.n, vm.nhosts * o.quanta) != 0) {
            liq_vm_stop(&vm, 1);
            liq_vm_free(&vm);
            fprintf(stderr, "%s: the grid cannot be cut into %d quanta\n", prog->name,
                    vm.nhosts * o.quanta);
            return LIQ_EXIT_USAGE;
        }
        liq_geom_max_extent(&g, ext);
        failed = liq_vm_bench(&vm, ext, o.kernel, o.probe_seconds,
                                liq_opts_halo(&o, &g, NULL, 0, 0)) != 0;
    }
    liq_vm_stop(&vm, failed);
    if (failed) {
        fprintf(stderr, "%s: %s\n", prog->name, vm.why);
        if (vm.usage) {
            liq_vm_free(&vm);
            return LIQ_EXIT_USAGE;
        }
    } else {
        if (!o.quiet && strcmp(o.json, "-") != 0)
            liq_bench_print(stdout, &vm);
        if (o.json[0] != '\0') {
            FILE *fp = liq_report_open(prog->name, "--json", o.json);

            if (fp == NULL) {
                failed = 1;
            } else {
                fputc('{', fp);
                liq_bench_json(fp, &vm);
                fputs("}\n", fp);
                failed = liq_report_close(prog->name, "--json", o.json, fp) != 0;
            }
        }
    }
    liq_vm_free(&vm);
    return failed ? LIQ_EXIT_FAIL : LIQ_EXIT_OK;
}
