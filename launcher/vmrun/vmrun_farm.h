/*
 * vmrun_farm.h - `vmrun farm`: run one command per item (a range, the lines
 * of a file, the points of a grid) on the VM's hosts, scheduled by
 * Fractiling (lib/liquid/liq_fractile.h), one JSON line per item (issue 28).
 *
 * Who may include it: launcher/vmrun/vmrun_farm*.c and tests.  The files:
 *   vmrun_farm_items.c   the items, the command's check and placeholders,
 *                        JSON text (no PVM)
 *   vmrun_farm_exec.c    one item's run: fork/exec, pipes, timeout (no PVM)
 *   vmrun_farm_worker.c  `vmrun farm-worker`, the task that runs items
 *   vmrun_farm.c         `vmrun farm`, the master: options, items in
 *                        chunks, results, report
 * The VM session and the schedule (chunks, rates, lost hosts, reclaim)
 * are libliquid's, shared with liquid_farm() (lib/liquid/liq_farm.h).
 *
 * The protocol (PVM messages, default encoding):
 *   master -> worker  FARM_TAG_JOB    the command template, timeout, retries, cwd
 *                     FARM_TAG_CHUNK  chunk id, count, then per item: index,
 *                                     its text ({}), x, y, z
 *                     FARM_TAG_DROP   drop every item held, kill the running one
 *                     FARM_TAG_SHRINK chunk id, keep: drop the chunk's queued items
 *                                     from the keep-th on (another worker took them)
 *                     FARM_TAG_QUIT   exit
 *   worker -> master  FARM_TAG_ASK    work, please (at most one outstanding:
 *                                     sent when the worker starts its last
 *                                     queued item, so the next chunk is there
 *                                     when it finishes)
 *                     FARM_TAG_RESULT chunk id, index, exit, flags, signal,
 *                                     attempts, seconds, stdout, stderr
 */
#ifndef LIQUIDVM_VMRUN_FARM_H
#define LIQUIDVM_VMRUN_FARM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "liq_farm.h"

#define FARM_TAG_JOB      LIQ_FARM_TAG_JOB
#define FARM_TAG_CHUNK    LIQ_FARM_TAG_CHUNK
#define FARM_TAG_DROP     LIQ_FARM_TAG_DROP
#define FARM_TAG_QUIT     LIQ_FARM_TAG_QUIT
#define FARM_TAG_SHRINK   LIQ_FARM_TAG_SHRINK
#define FARM_TAG_ASK      LIQ_FARM_TAG_ASK
#define FARM_TAG_RESULT   LIQ_FARM_TAG_RESULT
#define FARM_TAG_EXITED   LIQ_FARM_TAG_EXITED

/* Bytes of an item's stdout and of its stderr kept; the rest is dropped
 * and the line says "stdout_truncated" / "stderr_truncated". */
#define FARM_OUTPUT_MAX 65536
/* Longest item text (a line of --items) and command line after expansion. */
#define FARM_ITEM_MAX 4096
/* An items file holds at most this many bytes. */
#define FARM_ITEMS_BYTES_MAX (1 << 30)
/* Range items are doubles, exact below 2^53. */
#define FARM_EXACT_MAX 9007199254740992.0
#define FARM_ARG_MAX 65536
/* The exit status recorded for an item killed at --timeout, as timeout(1). */
#define FARM_EXIT_TIMEOUT 124

/* Result flags. */
#define FARM_F_TIMEOUT 1
#define FARM_F_OUTTRUNC 2
#define FARM_F_ERRTRUNC 4
#define FARM_F_SIGNAL 8
#define FARM_F_NOEXEC 16 /* the command could not be started on that host */

/* ---- the items (vmrun_farm_items.c) ---- */

enum farm_kind { FARM_RANGE, FARM_ITEMS, FARM_GRID };

struct farm_items {
    enum farm_kind kind;
    uint64_t n;
    /* range: A, A+STEP, ... up to B, as seq(1); decimals: digits printed */
    double a, step;
    int decimals;
    /* items file: one malloc'ed string per item */
    char **text;
    /* grid */
    int g[3], dims;
    uint64_t *order;            /* the Morton walk: position -> linear index (grid only) */
};

/* Each parser: 0, or -1 with every error in err (for a file, "file:line:
 * what", one per line, up to a few). */
int farm_items_range(struct farm_items *it, const char *spec, char *err, size_t errlen);
int farm_items_file(struct farm_items *it, const char *path, char *err, size_t errlen);
int farm_items_grid(struct farm_items *it, const char *spec, char *err, size_t errlen);
void farm_items_free(struct farm_items *it);
/* The item at scheduling position p (a grid's Morton walk; else p itself). */
uint64_t farm_items_at(const struct farm_items *it, uint64_t p);
/* Item idx's text for {} and its coordinates for {x} {y} {z} (0 outside a grid). */
void farm_items_text(const struct farm_items *it, uint64_t idx, char *buf, size_t len,
                     int xyz[3]);
/* Item idx as a JSON value: a number (range), a string (file), [x,y(,z)] (grid). */
void farm_items_json(FILE *fp, const struct farm_items *it, uint64_t idx);

/* The command before it runs: COMMAND found (a path: executable; a name: on
 * PATH), placeholders that fit the items ({x} {y} only with --grid, {z} with
 * a 3D grid).  0, or -1 with why set. */
int farm_command_check(char *const *argv, int argc, enum farm_kind kind, int dims, char *why,
                       size_t len);
/* Does any argument hold a placeholder? (If none, the item is appended.) */
int farm_command_has_placeholder(char *const *argv, int argc);
/* One argument with {} {x} {y} {z} replaced.  0, or -1 if it would not fit. */
int farm_expand(const char *arg, const char *item, const int xyz[3], char *out, size_t len);

/* ---- one item's run (vmrun_farm_exec.c) ---- */

struct farm_run {
    int exit;               /* exit status; 128+signal; FARM_EXIT_TIMEOUT; 127 not started */
    int flags;              /* FARM_F_* */
    int sig;                /* the signal that ended it (FARM_F_SIGNAL) */
    double seconds;
    double cpu;             /* CPU seconds (user + system) of it and its waited-for children */
    char out[FARM_OUTPUT_MAX], err[FARM_OUTPUT_MAX];
    size_t outlen, errlen;
};

/*
 * Run argv (argv[0] looked up on PATH, no shell) in its own process group,
 * stdin /dev/null, stdout and stderr through pipes into r.  At timeout
 * seconds (<= 0: none) the group gets SIGTERM, then SIGKILL half a second
 * later.  check(arg) is called at least every 50 ms while it runs; when it
 * returns non-zero the group is killed and farm_exec returns 1 (dropped).
 * 0 when the command ran (whatever its exit), -1 when it could not be
 * forked (r->exit 127).
 */
int farm_exec(char *const *argv, double timeout, int (*check)(void *), void *arg,
              struct farm_run *r);

/* ---- subcommands ---- */
int vmrun_farm_main(int argc, char **argv);
int vmrun_farm_worker_main(int argc, char **argv);

#endif
