/*
 * vmrun_trace.c - `vmrun trace view FILE|DIR --svg OUT` (issue 27): a
 * stencil job's trace, or a directory of PVM task traces merged, as a
 * timeline in SVG, for a look without a browser -- a
 * lane per task grouped by host, compute spans (heavy regions darker),
 * waits for ghosts, moves and plans, the master's plans, messages as
 * lines from send to receipt, and the epochs as ticks.
 */
#include "vmrun_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TV_W 1400.0             /* drawing width */
#define TV_LEFT 170.0           /* room for the lanes' names */
#define TV_LANE 22.0
#define TV_TOP 40.0

static const char tv_usage[] =
    "usage: vmrun trace view FILE|DIR --svg OUT\n"
    "\n"
    "  Draw a stencil job's trace (vmrun stencil --trace FILE) as an SVG timeline:\n"
    "  a lane per task, grouped by host; compute (green, heavy regions darker),\n"
    "  waits for ghosts (red), for moves and plans (orange), moves (purple), the\n"
    "  master's plans (blue); messages as grey lines from send to receipt; epochs\n"
    "  as ticks.  DIR: the PVM task traces in it (LIQUIDVM_TRACE=DIR), merged:\n"
    "  compute between PVM calls (green), waits in receives (red), spawns (blue).\n";

static const char *
tv_colour(const struct vmrun_tspan *s)
{
    switch (s->kind) {
    case VT_COMPUTE: return s->heavy > 1 ? "#1b7837" : "#7fbf7b";
    case VT_WAIT_GHOST: return "#d73027";
    case VT_WAIT_MOVE:
    case VT_WAIT_PLAN:
    case VT_WAIT_VERDICT: return "#fc8d59";
    case VT_MIGRATE: return "#762a83";
    case VT_PLAN: return "#4575b4";
    case VT_SYNC: return "#999999";
    case VT_PVM_WAIT: return "#d73027";
    case VT_PVM_SPAWN: return "#4575b4";
    case VT_RECOVERY: return "#67001f";
    default: return NULL;
    }
}

static int
tv_write(FILE *fp, const struct vmrun_trace *t)
{
    int *row = calloc((size_t)(t->nlanes + 1), sizeof(int)), r = 0;
    double span = t->t_end > 0 ? t->t_end : 1, sx = (TV_W - TV_LEFT - 10) / span, height;

    if (row == NULL)
        return -1;
    /* Lanes in host order, the master first in its host. */
    for (int h = 0; h < t->nhosts; h++)
        for (int pass = 0; pass < 2; pass++)
            for (int l = 0; l < t->nlanes; l++)
                if (t->lanes[l].host == h && t->lanes[l].master == !pass)
                    row[l] = r++;
    height = TV_TOP + r * TV_LANE + 40;
    fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "font-family=\"sans-serif\" font-size=\"11\">\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            TV_W, height);
    fprintf(fp, "<text x=\"10\" y=\"18\" font-size=\"14\">%s: %dx%dx%d, %d iterations, %d "
                "workers, %.3f s traced (clocks within %.1f us)</text>\n",
            t->job.program, t->job.grid[0], t->job.grid[1], t->job.grid[2], t->job.iters,
            t->job.workers, span, t->residual_us);
    for (int l = 0; l < t->nlanes; l++) {
        double y = TV_TOP + row[l] * TV_LANE;

        fprintf(fp, "<text x=\"4\" y=\"%.1f\">%s %s</text>\n", y + 14,
                t->hosts[t->lanes[l].host].name, t->lanes[l].name);
        fprintf(fp, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
                TV_LEFT, y + TV_LANE - 1, TV_W - 10, y + TV_LANE - 1);
    }
    for (int i = 0; i < t->nspans; i++) {
        const struct vmrun_tspan *s = &t->spans[i];
        const char *c = tv_colour(s);
        double w = s->dur * sx;

        if (c == NULL)
            continue;
        fprintf(fp, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\"/>\n",
                TV_LEFT + s->t * sx, TV_TOP + row[s->lane] * TV_LANE + 3, w < 0.5 ? 0.5 : w,
                TV_LANE - 7, c);
    }
    for (int i = 0; i < t->nflows; i++) {
        const struct vmrun_tflow *f = &t->flows[i];

        fprintf(fp, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#555\" "
                    "stroke-opacity=\"0.5\" stroke-width=\"0.7\"/>\n",
                TV_LEFT + f->t0 * sx, TV_TOP + row[f->from] * TV_LANE + TV_LANE / 2,
                TV_LEFT + f->t1 * sx, TV_TOP + row[f->to] * TV_LANE + TV_LANE / 2);
    }
    for (int i = 0; i < t->nmarks; i++) {
        const struct vmrun_tmark *m = &t->marks[i];
        double x = TV_LEFT + m->t * sx, y = TV_TOP + row[m->lane] * TV_LANE;

        fprintf(fp, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"%s\" "
                    "stroke-width=\"1.5\"><title>%s</title></line>\n",
                x, y, x, y + TV_LANE, m->epoch >= 0 ? "black" : "#b2182b", m->name);
    }
    /* The time axis and the legend. */
    double y = TV_TOP + r * TV_LANE + 14;

    for (int k = 0; k <= 10; k++)
        fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.3g s</text>\n",
                TV_LEFT + k * span / 10 * sx, y, k * span / 10);
    fprintf(fp, "<text x=\"%.0f\" y=\"%.1f\">green compute (dark: heavy), red wait for ghosts, "
                "orange wait for a move, plan or verdict, purple move, blue the master's plan, "
                "dark red a recovery, lines messages, ticks epochs (red: reclaim, a lost "
                "worker)</text>\n</svg>\n",
            TV_LEFT, y + 18);
    free(row);
    return ferror(fp) ? -1 : 0;
}

int
vmrun_trace_main(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    struct vmrun_trace t;
    char err[512];
    FILE *fp;
    int rc;

    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(tv_usage, stdout);
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "view") != 0) {
        fputs(tv_usage, stderr);
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--svg") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--help") == 0) {
            fputs(tv_usage, stdout);
            return 0;
        } else if (argv[i][0] != '-' && in == NULL)
            in = argv[i];
        else {
            fprintf(stderr, "vmrun trace view: unexpected argument '%s'\n%s", argv[i], tv_usage);
            return 2;
        }
    }
    if (in == NULL || out == NULL) {
        fputs(tv_usage, stderr);
        return 2;
    }
    struct stat st;
    int dir = stat(in, &st) == 0 && S_ISDIR(st.st_mode);

    if ((dir ? vmrun_tload_pvm_dir(in, &t, err, sizeof(err))
             : vmrun_tload(in, &t, err, sizeof(err))) != 0) {
        fprintf(stderr, "vmrun trace view: %s\n", err);
        return 1;
    }
    if ((fp = fopen(out, "w")) == NULL) {
        fprintf(stderr, "vmrun trace view: cannot write %s\n", out);
        vmrun_tfree(&t);
        return 1;
    }
    rc = tv_write(fp, &t);
    if (fclose(fp) != 0 || rc != 0) {
        fprintf(stderr, "vmrun trace view: cannot write %s\n", out);
        vmrun_tfree(&t);
        return 1;
    }
    printf("%s: %d lanes on %d hosts, %d spans, %d messages, %.3f s\n", out, t.nlanes, t.nhosts,
           t.nspans, t.nflows, t.t_end);
    vmrun_tfree(&t);
    return 0;
}
