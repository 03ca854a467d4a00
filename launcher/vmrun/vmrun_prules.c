/*
 * vmrun_prules.c - Paradise's rules for PVM programs (issue 27, seed 003:
 * "apply rules, write a hints file"): from the messages between tasks,
 * their waits and the sizes of their messages, the settings the next run
 * takes from the hints (lib/pvm/pvm_hints.c):
 *
 *   route-direct  two tasks that exchange many messages ask for a direct
 *                 link (PvmRouteDirect), which skips both daemons; every
 *                 task when every task has such a partner.
 *   placement     such a pair on two hosts that spends much of its life
 *                 waiting is put on one host: a child next to its parent,
 *                 siblings next to the parent that spawned them.
 *   fragsize      PvmFragSize to hold 90 % of the messages whole.
 *
 * Pure (vmrun_prules.h); tests/unit/test_vmrun_prules.c.
 */
#include "vmrun_prules.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define VMRUN_FRAG_MIN 4096
#define VMRUN_FRAG_MAX 1048576

void
vmrun_prules_defaults(struct vmrun_pthresholds *th)
{
    th->pair_msgs = 100;
    th->wait_share = 0.25;
}

static void rule(struct vmrun_padvice *out, const char *name, int fired, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
rule(struct vmrun_padvice *out, const char *name, int fired, const char *fmt, ...)
{
    va_list ap;

    if (out->nrules >= (int)(sizeof(out->rule) / sizeof(out->rule[0])))
        return;
    snprintf(out->rule[out->nrules].name, sizeof(out->rule[0].name), "%s", name);
    out->rule[out->nrules].fired = fired;
    va_start(ap, fmt);
    vsnprintf(out->rule[out->nrules].why, sizeof(out->rule[0].why), fmt, ap);
    va_end(ap);
    out->nrules++;
}

/* A hint, unless one for (path, key) is there already. */
static struct vmrun_phint *
hint(struct vmrun_padvice *out, const char *rulename, const char *path, const char *key,
     const char *value)
{
    struct vmrun_phint *h;

    for (int i = 0; i < out->nhints; i++)
        if (strcmp(out->hint[i].path, path) == 0 && strcmp(out->hint[i].key, key) == 0)
            return NULL;
    if (out->nhints >= VMRUN_PHINT_MAX)
        return NULL;
    h = &out->hint[out->nhints++];
    memset(h, 0, sizeof(*h));
    snprintf(h->rule, sizeof(h->rule), "%s", rulename);
    snprintf(h->path, sizeof(h->path), "%s", path);
    snprintf(h->key, sizeof(h->key), "%s", key);
    snprintf(h->value, sizeof(h->value), "%s", value);
    return h;
}

/* Messages both ways between tasks a < b, with the other direction's. */
static double
pair_total(const struct vmrun_pprog *p, int a, int b, double *bytes)
{
    double m = 0;

    *bytes = 0;
    for (int i = 0; i < p->npair; i++)
        if ((p->pair[i].a == a && p->pair[i].b == b) || (p->pair[i].a == b && p->pair[i].b == a)) {
            m += p->pair[i].msgs;
            *bytes += p->pair[i].bytes;
        }
    return m;
}

/* Each unordered pair once: 1 for the first of its directions in pair[]. */
static int
pair_first(const struct vmrun_pprog *p, int i)
{
    for (int j = 0; j < i; j++)
        if ((p->pair[j].a == p->pair[i].a && p->pair[j].b == p->pair[i].b) ||
            (p->pair[j].a == p->pair[i].b && p->pair[j].b == p->pair[i].a))
            return 0;
    return 1;
}

static void
rule_route(const struct vmrun_pprog *p, const struct vmrun_pthresholds *th,
           struct vmrun_padvice *out)
{
    int chatty = 0, partnered = 0, start = out->nhints;
    double best = 0;
    char why[320];

    for (int i = 0; i < p->npair; i++) {
        const struct vmrun_ptask *a = &p->task[p->pair[i].a], *b = &p->task[p->pair[i].b];
        double bytes, m = pair_total(p, p->pair[i].a, p->pair[i].b, &bytes);
        struct vmrun_phint *h;

        if (!pair_first(p, i))
            continue;
        if (m > best)
            best = m;
        if (m < th->pair_msgs)
            continue;
        chatty++;
        snprintf(why, sizeof(why), "t%x (%s) and t%x (%s) exchanged %.0f messages (%.0f bytes); "
                 "from %.0f a direct link skips the daemons", (unsigned)a->tid, a->path,
                 (unsigned)b->tid, b->path, m, bytes, th->pair_msgs);
        if ((h = hint(out, "route-direct", a->path, "route", "direct")) != NULL)
            snprintf(h->why, sizeof(h->why), "%s", why);
        if ((h = hint(out, "route-direct", b->path, "route", "direct")) != NULL)
            snprintf(h->why, sizeof(h->why), "%s", why);
    }
    /* Every task has a chatty partner: one setting for the program. */
    for (int t = 0; chatty > 0 && t < p->ntask; t++) {
        int has = 0;

        for (int i = 0; i < p->npair && !has; i++) {
            double bytes;

            if (p->pair[i].a == t || p->pair[i].b == t)
                has = pair_total(p, p->pair[i].a, p->pair[i].b, &bytes) >= th->pair_msgs;
        }
        partnered += has;
    }
    if (chatty > 0 && partnered == p->ntask) {
        struct vmrun_phint *h;

        snprintf(why, sizeof(why), "%s; every one of the %d tasks has such a partner",
                 out->hint[start].why, p->ntask);
        out->nhints = start;
        if ((h = hint(out, "route-direct", "", "route", "direct")) != NULL)
            snprintf(h->why, sizeof(h->why), "%s", why);
    }
    if (chatty > 0)
        rule(out, "route-direct", 1, "%d pairs of tasks exchanged at least %.0f messages", chatty,
             th->pair_msgs);
    else
        rule(out, "route-direct", 0, "no pair exchanged %.0f messages (the most: %.0f)",
             th->pair_msgs, best);
}

static int
task_of(const struct vmrun_pprog *p, int tid)
{
    for (int i = 0; i < p->ntask; i++)
        if (p->task[i].tid == tid)
            return i;
    return -1;
}

static void
rule_place(const struct vmrun_pprog *p, const struct vmrun_pthresholds *th,
           struct vmrun_padvice *out)
{
    int fired = 0, apart = 0;

    for (int i = 0; i < p->npair; i++) {
        int ia = p->pair[i].a, ib = p->pair[i].b;
        const struct vmrun_ptask *a = &p->task[ia], *b = &p->task[ib], *child = NULL;
        double bytes, m = pair_total(p, ia, ib, &bytes);
        double life = a->life + b->life, share = life > 0 ? (a->wait + b->wait) / life : 0;
        struct vmrun_phint *h;
        const char *how = NULL;

        if (!pair_first(p, i) || m < th->pair_msgs || strcmp(a->host, b->host) == 0)
            continue;
        apart++;
        if (share < th->wait_share)
            continue;
        if (b->parent == a->tid)
            child = b, how = "its parent";
        else if (a->parent == b->tid)
            child = a, how = "its parent";
        else if (a->parent == b->parent && a->parent != 0 && strcmp(a->path, b->path) == 0 &&
                 task_of(p, a->parent) >= 0)
            child = b, how = "a sibling";
        if (child == NULL)
            continue;
        if ((h = hint(out, "placement", child->path, "host", "@parent")) != NULL) {
            snprintf(h->why, sizeof(h->why), "t%x (%s) on %s exchanged %.0f messages with %s "
                     "t%x on %s and the pair waited %.0f %% of its life",
                     (unsigned)child->tid, child->path, child->host, m, how,
                     (unsigned)(child == a ? b->tid : a->tid), child == a ? b->host : a->host,
                     100 * share);
            fired++;
        }
    }
    if (fired)
        rule(out, "placement", 1, "%d spawn calls put tasks that talk a lot on other hosts than "
             "their partners", fired);
    else
        rule(out, "placement", 0, "%d chatty pairs on two hosts; none both a parent and child "
             "or siblings and waiting %.0f %% of its life", apart, 100 * th->wait_share);
}

static void
rule_frag(const struct vmrun_pprog *p, struct vmrun_padvice *out)
{
    int cur = p->fragsize > 0 ? p->fragsize : 4080, v = VMRUN_FRAG_MIN;
    char val[16];
    struct vmrun_phint *h;

    if (p->msgs == 0 || p->msg_p90 <= cur) {
        rule(out, "fragsize", 0, "90 %% of the messages are at most %.0f bytes: PvmFragSize %d "
             "holds them whole", p->msg_p90, cur);
        return;
    }
    while (v < p->msg_p90 && v < VMRUN_FRAG_MAX)
        v *= 2;
    snprintf(val, sizeof(val), "%d", v);
    if ((h = hint(out, "fragsize", "", "fragsize", val)) != NULL)
        snprintf(h->why, sizeof(h->why), "90 %% of the %.0f messages are at most %.0f bytes, "
                 "more than PvmFragSize %d", p->msgs, p->msg_p90, cur);
    rule(out, "fragsize", 1, "90 %% of the messages are at most %.0f bytes: fragments of %d",
         p->msg_p90, v);
}

void
vmrun_prules_apply(const struct vmrun_pprog *p, const struct vmrun_pthresholds *th,
                   struct vmrun_padvice *out)
{
    memset(out, 0, sizeof(*out));
    rule_route(p, th, out);
    rule_place(p, th, out);
    rule_frag(p, out);
}

int
vmrun_prules_write(FILE *fp, const char *from, const struct vmrun_padvice *adv)
{
    int ntasks = 0;

    fprintf(fp, "# Hints by vmrun analyze from the PVM traces %s (its rules: vmrun(1)).\n"
                "# libpvm3 reads them when a task enrolls: the file LIQUIDVM_HINTS names, or\n"
                "# <program>.hints beside the program.  Options the program sets itself\n"
                "# (pvm_setopt) win; a host named in pvm_spawn wins over a placement.\n"
                "pvm = {\n",
            from);
    for (int i = 0; i < adv->nhints; i++) {
        const struct vmrun_phint *h = &adv->hint[i];

        if (h->path[0] != '\0') {
            ntasks++;
            continue;
        }
        fprintf(fp, "    # %s: %s\n    %s = %s%s%s;\n", h->rule, h->why, h->key,
                strcmp(h->key, "fragsize") ? "\"" : "", h->value,
                strcmp(h->key, "fragsize") ? "\"" : "");
    }
    if (ntasks > 0) {
        int first = 1;

        fprintf(fp, "    tasks = (\n");
        /* One group per path, with every hint for it. */
        for (int i = 0; i < adv->nhints; i++) {
            const struct vmrun_phint *h = &adv->hint[i];
            int seen = 0;

            if (h->path[0] == '\0')
                continue;
            for (int j = 0; j < i; j++)
                seen |= strcmp(adv->hint[j].path, h->path) == 0;
            if (seen)
                continue;
            fprintf(fp, "%s", first ? "" : ",\n");
            first = 0;
            for (int j = i; j < adv->nhints; j++)
                if (strcmp(adv->hint[j].path, h->path) == 0)
                    fprintf(fp, "        # %s: %s\n", adv->hint[j].rule, adv->hint[j].why);
            fprintf(fp, "        { path = \"%s\";", h->path);
            for (int j = i; j < adv->nhints; j++)
                if (strcmp(adv->hint[j].path, h->path) == 0)
                    fprintf(fp, " %s = \"%s\";", adv->hint[j].key, adv->hint[j].value);
            fprintf(fp, " }");
        }
        fprintf(fp, "\n    );\n");
    }
    fprintf(fp, "};\n");
    return ferror(fp) ? -1 : 0;
}
