/*
 * liq_plot.c - `vmrun stencil --svg FILE`: the run's balancing as a plot.
 * Top: the balance efficiency measured in each epoch, with the 85 % line.
 * Bottom: each host's share of the quanta after each epoch's plan, stacked.
 * Evacuations and rejoins are marked where they happened.  Plain SVG 1.1,
 * no script, readable in any browser.
 */
#include "liq_master.h"

#include <stdio.h>

#define W 760.0
#define H 520.0
#define L 60.0                  /* left margin */
#define R 130.0                 /* right margin: the legend */
#define TOP_Y 40.0
#define TOP_H 170.0
#define BOT_Y 260.0
#define BOT_H 200.0

static const char *const colour[] = { "#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                      "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                      "#9c755f", "#bab0ac" };
#define NCOLOUR (sizeof(colour) / sizeof(colour[0]))

static double
x_of(int e, int nep)
{
    return L + (nep > 1 ? (W - L - R) * e / (nep - 1) : (W - L - R) / 2);
}

static void
xml_text(FILE *fp, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", fp);
        else if (*s == '>')
            fputs("&gt;", fp);
        else if (*s == '&')
            fputs("&amp;", fp);
        else
            fputc(*s, fp);
    }
}

/* The epochs plotted are those this run took, ep[0..nep) (a resumed job's
 * start after the checkpoint's). */
static void
axes(FILE *fp, double y, double h, const char *title, int nep, const struct liq_epoch *ep)
{
    fprintf(fp, "<text x=\"%g\" y=\"%g\" font-size=\"13\">%s</text>\n", L, y - 8, title);
    fprintf(fp, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"#444\"/>\n",
            L, y, W - L - R, h);
    for (int t = 0; t <= 4; t++)
        fprintf(fp, "<text x=\"%g\" y=\"%g\" font-size=\"10\" text-anchor=\"end\">%d%%</text>\n",
                L - 4, y + h - h * t / 4 + 3, 25 * t);
    int step = nep > 20 ? (nep + 9) / 10 : 1;

    for (int e = 0; e < nep; e += step)
        fprintf(fp, "<text x=\"%g\" y=\"%g\" font-size=\"10\" text-anchor=\"middle\">%d</text>\n",
                x_of(e, nep), y + h + 13, ep[e].epoch);
}

/* Each epoch's BE as a line: by the wall clock, or (cpu) of the CPU times. */
static void
be_line(FILE *fp, const struct liq_epoch *ep, int nep, int cpu, const char *stroke, double width)
{
    fprintf(fp, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%g\" points=\"", stroke,
            width);
    for (int e = 0; e < nep; e++)
        fprintf(fp, "%.1f,%.1f ", x_of(e, nep),
                TOP_Y + TOP_H * (1 - (cpu ? ep[e].be_cpu : ep[e].be)));
    fprintf(fp, "\"/>\n");
}

int
liq_plot_svg(const char *path, const struct liq_vm *vm, const struct liq_opts *o,
             const struct liq_stats *st)
{
    FILE *fp = fopen(path, "w");
    int first = liq_epoch_first(o, st), nep = st->nep - first, nh = vm->nhosts;
    const struct liq_epoch *ep = st->ep + first;
    const int *hq = st->hquanta + (size_t)first * nh;

    if (fp == NULL)
        return -1;
    fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
                "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            W, H);
    fprintf(fp, "<text x=\"%g\" y=\"20\" font-size=\"14\">", L);
    /* The program's name is text, not markup. */
    for (const char *c = vm->prog->name; *c; c++)
        fputs(*c == '<' ? "&lt;" : *c == '>' ? "&gt;" : *c == '&' ? "&amp;" : (char[2]){ *c, 0 },
              fp);
    fprintf(fp, " %s %dx%dx%d, %d iterations, %d hosts, epoch %d, balance %s</text>\n",
            liq_kernel_name(o), st->g.n[0], st->g.n[1], st->g.n[2],
            o->iters, nh, o->epoch, o->balance ? "on" : "off");
    if (nep == 0) {
        fprintf(fp, "<text x=\"%g\" y=\"%g\" font-size=\"13\">no epoch ended: nothing to plot "
                    "(balancing off, or fewer than %d iterations)</text>\n",
                L, TOP_Y + 40, o->epoch + 1);
    } else {
        axes(fp, TOP_Y, TOP_H, "balance efficiency per epoch", nep, ep);
        fprintf(fp, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#999\" "
                    "stroke-dasharray=\"4 3\"/>\n",
                L, TOP_Y + TOP_H * 0.15, W - R, TOP_Y + TOP_H * 0.15);
        /* BE of the kernels' CPU times at the workers' shares, and by the
         * wall clock (seed 000's) on top. */
        be_line(fp, ep, nep, 1, "#3a6fc4", 1.5);
        be_line(fp, ep, nep, 0, "#222", 2);
        fprintf(fp, "<text x=\"%g\" y=\"%g\" font-size=\"11\">wall clock</text>\n"
                    "<text x=\"%g\" y=\"%g\" font-size=\"11\" fill=\"#3a6fc4\">CPU at the "
                    "shares</text>\n",
                W - R + 12, TOP_Y + 10, W - R + 12, TOP_Y + 26);
        axes(fp, BOT_Y, BOT_H,
             "each host's share of the quanta by the epoch's plan (held from the next epoch's end)",
             nep, ep);
        /* Stacked bands, host 0 at the bottom. */
        for (int h = 0; h < nh; h++) {
            fprintf(fp, "<polygon fill=\"%s\" fill-opacity=\"0.85\" points=\"",
                    colour[(size_t)h % NCOLOUR]);
            for (int e = 0; e < nep; e++) {
                int below = 0;

                for (int k = 0; k < h; k++)
                    below += hq[e * nh + k];
                fprintf(fp, "%.1f,%.1f ", x_of(e, nep),
                        BOT_Y + BOT_H * (1 - (double)(below + hq[e * nh + h]) / st->g.nquanta));
            }
            for (int e = nep - 1; e >= 0; e--) {
                int below = 0;

                for (int k = 0; k < h; k++)
                    below += hq[e * nh + k];
                fprintf(fp, "%.1f,%.1f ", x_of(e, nep),
                        BOT_Y + BOT_H * (1 - (double)below / st->g.nquanta));
            }
            fprintf(fp, "\"/>\n");
            fprintf(fp, "<rect x=\"%g\" y=\"%g\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                        "<text x=\"%g\" y=\"%g\" font-size=\"11\">",
                    W - R + 12, BOT_Y + 16.0 * h, colour[(size_t)h % NCOLOUR], W - R + 28,
                    BOT_Y + 16.0 * h + 10);
            xml_text(fp, vm->host[h].name);
            fprintf(fp, "</text>\n");
        }
        for (int i = 0; i < st->nev; i++) {
            double x = x_of(st->ev[i].epoch - 1 - first, nep);

            fprintf(fp, "<line x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\" stroke=\"%s\" "
                        "stroke-width=\"1.5\"/>\n<text x=\"%.1f\" y=\"%g\" font-size=\"10\">",
                    x, TOP_Y, x, BOT_Y + BOT_H, st->ev[i].rejoin ? "#2a2" : "#c22", x + 3,
                    TOP_Y + 12 + 12.0 * (i % 4));
            xml_text(fp, vm->host[st->ev[i].host].name);
            fprintf(fp, " %s</text>\n", st->ev[i].rejoin ? "rejoins" : "leaves");
        }
        fprintf(fp, "<text x=\"%g\" y=\"%g\" font-size=\"11\" text-anchor=\"middle\">epoch</text>\n",
                L + (W - L - R) / 2, BOT_Y + BOT_H + 30);
    }
    fprintf(fp, "</svg>\n");
    return fclose(fp) != 0 ? -1 : 0;
}
