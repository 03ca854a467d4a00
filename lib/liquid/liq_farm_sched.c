/*
 * liq_farm_sched.c - a farm master's schedule, whatever its items are
 * (issue 28, seed 002 section 3): chunks by Fractiling (liq_fractile.c)
 * handed out on the workers' requests, weighted by measured rates; an idle
 * worker helps with the largest unfinished chunk (rule (ii)); a lost
 * worker's or host's unfinished items go back to the pool (the first
 * result of an item wins: execution at least once, results exactly once);
 * a host whose owner needs it stops taking chunks (seed 002's reclaim, by
 * its daemon's capacity).  It was vmrun farm's master (vmrun_farm.c)
 * before liquid_farm() shared it; what an item is stays with the caller
 * (pack_item, on_msg).
 */
#include "liq_farm.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lvm_err.h"
#include "pvm3.h"

void
liq_farm_opts_defaults(struct liq_farm_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->hosts = "";
    o->tasks_per_host = 1;
    liq_fractile_defaults(&o->fo);
    o->reclaim = 1;
    /* The stencil's thresholds (vmrun_opts.c), for one meaning of "the
     * owner needs it" across vmrun and libliquid. */
    o->reclaim_below = 0.125;
    o->reclaim_after = 3;
    o->rejoin_above = 0.25;
    o->rejoin_after = 1;
    o->reclaim_limit = 5;
}

static void
event(struct liq_farm_master *m, int host, const char *what)
{
    if (m->nev == m->evcap) {
        size_t cap = m->evcap ? 2 * m->evcap : 16;
        struct liq_farm_event *e = realloc(m->ev, cap * sizeof(*e));

        if (e == NULL)
            return;
        m->ev = e;
        m->evcap = cap;
    }
    m->ev[m->nev].t = liq_farm_now() - m->t0;
    m->ev[m->nev].host = host;
    m->ev[m->nev].what = what;
    m->nev++;
    if (m->progress)
        fprintf(stderr, "\r\033[K");
    if (!m->o->quiet)
        fprintf(stderr, "%s: %.1f s: host %s %s\n", m->name, liq_farm_now() - m->t0,
                m->vm.host[host].name, what);
}

static uint64_t
item_at(const struct liq_farm_master *m, uint64_t p)
{
    return m->order != NULL ? m->order[p] : p;
}

static double
worker_rate(const struct liq_farm_worker *w)
{
    double s = 0;
    int n = w->ndur < LIQ_FARM_RATE_WINDOW ? w->ndur : LIQ_FARM_RATE_WINDOW;

    for (int i = 0; i < n; i++)
        s += w->dur[i];
    return n > 0 && s > 0 ? n / s : 0;
}

/*
 * Every taking worker's weight: its measured rate (items per second over
 * its last LIQ_FARM_RATE_WINDOW items) once every taking worker has one,
 * until then its host's CPU share at the start, so weights of one kind are
 * never compared with the other's.
 */
static void
reweigh(struct liq_farm_master *m)
{
    int all = 1;

    for (int w = 0; w < m->vm.nworkers; w++)
        if (m->w[w].alive && !m->h[m->vm.whost[w]].benched && m->w[w].ndur == 0)
            all = 0;
    for (int w = 0; w < m->vm.nworkers; w++) {
        if (!m->w[w].alive || m->h[m->vm.whost[w]].benched)
            continue;
        liq_fractile_weight(&m->f, w, all ? worker_rate(&m->w[w]) : m->w[w].share0);
    }
}

/*
 * The pool is empty and w asks: rule (ii) of Fractiling, the idle worker
 * helps with the largest unfinished subtile, here the open chunk with the
 * most items not started (a worker runs its chunk in order, so those are
 * its back: after the `got` reported and the one running).  The back half
 * goes to the pool and its worker is told to drop it; an item it started
 * meanwhile runs twice, and its first result counts.  1 if something was
 * taken.
 */
static int
steal(struct liq_farm_master *m, int w)
{
    struct liq_farm_chunk *best = NULL;
    uint64_t most = 1;

    if (m->o->fo.mode == LIQ_FRACTILE_STATIC)
        return 0;
    for (size_t i = 0; i < m->nchunk; i++) {
        struct liq_farm_chunk *c = &m->chunk[i];
        uint64_t size = c->hi - c->lo, unstarted = c->got + 1 < size ? size - c->got - 1 : 0;

        if (c->open && c->w != w && m->w[c->w].alive && unstarted > most) {
            best = c;
            most = unstarted;
        }
    }
    if (best == NULL)
        return 0;
    uint64_t k = (most + 1) / 2, keep = best->hi - best->lo - k;
    int msg[2] = { (int)(best - m->chunk), (int)keep };

    if (liq_fractile_giveback(&m->f, best->hi - k, best->hi) != 0)
        return 0;
    best->hi -= k;
    m->steals++;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(msg, 2, 1);
    pvm_send(m->vm.tids[best->w], LIQ_FARM_TAG_SHRINK);
    return 1;
}

static int
serve(struct liq_farm_master *m, int w)
{
    struct liq_fractile_chunk c;
    int id, count;

    m->w[w].pending = 0;
    if (!m->w[w].alive)
        return 0;
    if (m->h[m->vm.whost[w]].benched ||
        (!liq_fractile_next(&m->f, w, &c) && !(steal(m, w) && liq_fractile_next(&m->f, w, &c)))) {
        m->w[w].pending = 1;
        return 0;
    }
    if (m->nchunk == m->chunkcap) {
        size_t cap = m->chunkcap ? 2 * m->chunkcap : 64;
        struct liq_farm_chunk *ch = realloc(m->chunk, cap * sizeof(*ch));

        if (ch == NULL) {
            snprintf(m->why, sizeof(m->why), "out of memory");
            return -1;
        }
        m->chunk = ch;
        m->chunkcap = cap;
    }
    id = (int)m->nchunk++;
    m->chunk[id] = (struct liq_farm_chunk){ w, c.lo, c.hi, 0, c.batch, liq_farm_now() - m->t0, 1 };
    count = (int)(c.hi - c.lo);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&id, 1, 1);
    pvm_pkint(&count, 1, 1);
    for (uint64_t p = c.lo; p < c.hi; p++)
        m->pack(m, item_at(m, p), m->arg);
    pvm_send(m->vm.tids[w], LIQ_FARM_TAG_CHUNK);
    return 0;
}

static int
serve_pending(struct liq_farm_master *m)
{
    for (int w = 0; w < m->vm.nworkers; w++)
        if (m->w[w].pending && serve(m, w) != 0)
            return -1;
    return 0;
}

/* Worker w's open chunks go back to the pool: the items without a result. */
static void
give_back(struct liq_farm_master *m, int w)
{
    for (size_t i = 0; i < m->nchunk; i++) {
        struct liq_farm_chunk *c = &m->chunk[i];

        if (c->w != w || !c->open)
            continue;
        c->open = 0;
        for (uint64_t p = c->lo; p < c->hi;) {
            uint64_t q = p;

            while (q < c->hi && !m->done[item_at(m, q)])
                q++;
            if (q > p) {
                liq_fractile_giveback(&m->f, p, q);
                m->reruns += q - p;
            }
            p = q + 1;
        }
    }
}

static void
lose_worker(struct liq_farm_master *m, int w)
{
    if (!m->w[w].alive)
        return;
    m->w[w].alive = 0;
    m->w[w].pending = 0;
    m->vm.tids[w] = 0;
    m->nlive--;
    liq_fractile_weight(&m->f, w, 0);
    give_back(m, w);
}

int
liq_farm_result(struct liq_farm_master *m, int w, int id, uint64_t idx, double seconds,
                int attempts)
{
    if (w < 0 || w >= m->vm.nworkers || idx >= m->n || id < 0 || (size_t)id >= m->nchunk)
        return -1;
    struct liq_farm_chunk *c = &m->chunk[id];
    struct liq_farm_worker *fw = &m->w[w];
    int h = m->vm.whost[w];

    if (c->w == w && ++c->got >= c->hi - c->lo)
        c->open = 0;
    fw->dur[fw->ndur++ % LIQ_FARM_RATE_WINDOW] = seconds / (attempts > 0 ? attempts : 1);
    m->h[h].busy += seconds;
    reweigh(m);
    if (m->done[idx]) {
        m->dups++;
        return 0;
    }
    m->done[idx] = 1;
    m->ndone++;
    m->h[h].items++;
    return 1;
}

static int
live_takers(const struct liq_farm_master *m)
{
    int n = 0;

    for (int h = 0; h < m->vm.nhosts; h++)
        n += !m->h[h].lost && !m->h[h].benched;
    return n;
}

/* Reclaim (seed 002's coarse layer): a host whose CPU share per worker
 * stays low stops taking chunks; past the limit its chunks go back. */
static int
reclaim_tick(struct liq_farm_master *m, double now)
{
    const struct liq_farm_opts *o = m->o;
    double *cap = calloc((size_t)m->vm.nhosts, sizeof(double));

    if (cap == NULL)
        return 0;
    if (liq_farm_vm_capacity(&m->vm, cap) != 0) {
        free(cap);
        return 0; /* nothing known: nothing changes */
    }
    for (int h = 0; h < m->vm.nhosts; h++) {
        struct liq_farm_hstate *hs = &m->h[h];
        const struct liq_farm_host *ho = &m->vm.host[h];
        int live = 0;

        for (int w = ho->first; w < ho->first + ho->count; w++)
            live += m->w[w].alive;
        if (hs->lost || live == 0 || cap[h] < 0)
            continue;
        double share = cap[h] / live > 1 ? 1 : cap[h] / live;

        if (!hs->benched) {
            if (share >= o->reclaim_below) {
                hs->below_since = -1;
            } else {
                if (hs->below_since < 0)
                    hs->below_since = now;
                /* Somebody keeps computing: the last host is never benched. */
                if (now - hs->below_since >= o->reclaim_after && live_takers(m) > 1) {
                    hs->benched = 1;
                    hs->benched_at = now;
                    hs->above_since = -1;
                    hs->dropped = 0;
                    for (int w = ho->first; w < ho->first + ho->count; w++)
                        liq_fractile_weight(&m->f, w, 0);
                    event(m, h, "is reclaimed by its owner: it takes no more chunks");
                }
            }
        } else {
            if (share < o->rejoin_above) {
                hs->above_since = -1;
            } else {
                if (hs->above_since < 0)
                    hs->above_since = now;
                if (now - hs->above_since >= o->rejoin_after) {
                    hs->benched = 0;
                    hs->below_since = -1;
                    event(m, h, "is free again: it takes chunks");
                    reweigh(m);
                }
            }
            if (hs->benched && !hs->dropped && now - hs->benched_at >= o->reclaim_limit) {
                int had = 0;

                for (int w = ho->first; w < ho->first + ho->count; w++) {
                    for (size_t i = 0; i < m->nchunk; i++)
                        had |= m->chunk[i].w == w && m->chunk[i].open;
                    if (!m->w[w].alive)
                        continue;
                    give_back(m, w);
                    pvm_initsend(PvmDataDefault);
                    pvm_send(m->vm.tids[w], LIQ_FARM_TAG_DROP);
                }
                hs->dropped = 1;
                if (had)
                    event(m, h, "still runs a chunk past --reclaim-limit: its items go back");
            }
        }
    }
    free(cap);
    return serve_pending(m);
}

void
liq_farm_progress(const struct liq_farm_master *m, int final)
{
    double t = liq_farm_now() - m->t0, rate = t > 0 ? m->ndone / t : 0;
    double eta = rate > 0 ? (double)(m->n - m->ndone) / rate : 0;

    fprintf(stderr, "\r\033[K%s: %llu/%llu %s, %.1f/s, ETA %.0f s", m->name,
            (unsigned long long)m->ndone, (unsigned long long)m->n, m->unit, rate, eta);
    if (final)
        fputc('\n', stderr);
}

void
liq_farm_report(const struct liq_farm_master *m, FILE *fp, double makespan)
{
    static const char *sched[] = { "fractiling", "static", "self" };

    fprintf(fp,
            "\"schedule\":\"%s\",\"fraction\":%g,\"min_chunk\":%llu,\"tasks_per_host\":%d,"
            "\"makespan_s\":%.3f,\"reruns\":%llu,\"duplicates\":%llu,\"steals\":%llu,\"hosts\":[",
            sched[m->o->fo.mode], m->o->fo.fraction, (unsigned long long)m->o->fo.min_chunk,
            m->o->tasks_per_host, makespan, (unsigned long long)m->reruns,
            (unsigned long long)m->dups, (unsigned long long)m->steals);
    for (int h = 0; h < m->vm.nhosts; h++)
        fprintf(fp, "%s{\"name\":\"%s\",\"workers\":%d,\"items\":%llu,\"busy_s\":%.3f,"
                    "\"lost\":%s,\"reclaimed\":%s}",
                h ? "," : "", m->vm.host[h].name, m->vm.host[h].count,
                (unsigned long long)m->h[h].items, m->h[h].busy,
                m->h[h].lost ? "true" : "false", m->h[h].benched ? "true" : "false");
    fputs("],\"events\":[", fp);
    for (size_t i = 0; i < m->nev; i++)
        fprintf(fp, "%s{\"t_s\":%.3f,\"host\":\"%s\",\"what\":\"%s\"}", i ? "," : "",
                m->ev[i].t, m->vm.host[m->ev[i].host].name, m->ev[i].what);
    fputs("],\"chunks\":[", fp);
    for (size_t i = 0; i < m->nchunk; i++) {
        const struct liq_farm_chunk *c = &m->chunk[i];

        fprintf(fp, "%s{\"t_s\":%.3f,\"worker\":%d,\"host\":\"%s\",\"size\":%llu,\"batch\":%llu}",
                i ? "," : "", c->t, c->w, m->vm.host[m->vm.whost[c->w]].name,
                (unsigned long long)(c->hi - c->lo), (unsigned long long)c->batch);
    }
    fputs("]", fp);
}

void
liq_farm_summary_hosts(const struct liq_farm_master *m, FILE *fp)
{
    for (int h = 0; h < m->vm.nhosts; h++)
        fprintf(fp, "  %-16s %8llu %s  busy %8.2f s%s%s\n", m->vm.host[h].name,
                (unsigned long long)m->h[h].items, m->unit, m->h[h].busy,
                m->h[h].lost ? "  (lost)" : "", m->h[h].benched ? "  (reclaimed)" : "");
}

int
liq_farm_start(struct liq_farm_master *m, const char *name, const char *unit,
               const struct liq_farm_opts *o, uint64_t n, const uint64_t *order, char **wargv,
               liq_farm_pack_fn pack, void *arg)
{
    double *cap = NULL, *wt = NULL;
    int rc = -1;

    memset(m, 0, sizeof(*m));
    m->name = name;
    m->unit = unit;
    m->o = o;
    m->n = n;
    m->order = order;
    m->pack = pack;
    m->arg = arg;
    m->progress = !o->quiet && isatty(2);
    m->t0 = liq_farm_now();
    if ((m->done = calloc((size_t)n, 1)) == NULL) {
        snprintf(m->why, sizeof(m->why), "out of memory for %llu %s", (unsigned long long)n,
                 unit);
        return -1;
    }
    if (liq_farm_vm_start(&m->vm, o->hosts, o->tasks_per_host, wargv) != 0) {
        snprintf(m->why, sizeof(m->why), "%s", m->vm.why);
        return -1;
    }
    m->w = calloc((size_t)m->vm.nworkers, sizeof(*m->w));
    m->h = calloc((size_t)m->vm.nhosts, sizeof(*m->h));
    cap = calloc((size_t)m->vm.nhosts, sizeof(double));
    wt = calloc((size_t)m->vm.nworkers, sizeof(double));
    if (m->w == NULL || m->h == NULL || cap == NULL || wt == NULL) {
        snprintf(m->why, sizeof(m->why), "out of memory");
        goto out;
    }
    m->t0 = liq_farm_now();
    /* Until rates are measured, each worker weighs its host's share of CPU. */
    liq_farm_vm_capacity(&m->vm, cap);
    for (int w = 0; w < m->vm.nworkers; w++) {
        int h = m->vm.whost[w];
        double s = cap[h] > 0 ? cap[h] / m->vm.host[h].count : 1;

        m->w[w].alive = 1;
        m->w[w].share0 = wt[w] = s > 1 ? 1 : s < 0.01 ? 0.01 : s;
        m->h[h].below_since = m->h[h].above_since = -1;
    }
    m->nlive = m->vm.nworkers;
    if (liq_fractile_init(&m->f, n, m->vm.nworkers, wt, &o->fo) != 0) {
        snprintf(m->why, sizeof(m->why), "cannot set up the schedule");
        goto out;
    }
    rc = 0;
out:
    free(cap);
    free(wt);
    return rc;
}

int
liq_farm_send_job(struct liq_farm_master *m)
{
    int rc = pvm_mcast(m->vm.tids, m->vm.nworkers, LIQ_FARM_TAG_JOB);

    if (rc < 0) {
        snprintf(m->why, sizeof(m->why), "cannot send the job: %s", lvm_errtext(rc));
        return -1;
    }
    m->jobbuf = pvm_setsbuf(0);
    return 0;
}

/*
 * A host joined the VM: its workers start, get the JOB and are weighed by
 * its CPU share until they have rates, as the first ones were.  A host
 * whose workers cannot start is told as an event; the farm goes on.
 */
static int
host_added(struct liq_farm_master *m, int dtid)
{
    int first = m->vm.nworkers, h = liq_farm_vm_add(&m->vm, dtid), n, old;
    struct liq_farm_worker *w;
    struct liq_farm_hstate *hs;
    double *cap;

    if (h == -2)
        return 0;
    if (h < 0) {
        if (m->progress)
            fprintf(stderr, "\r\033[K");
        fprintf(stderr, "%s: %.1f s: a host joined the virtual machine, but %s\n", m->name,
                liq_farm_now() - m->t0, m->vm.why);
        return 0;
    }
    n = m->vm.nworkers - first;
    w = realloc(m->w, (size_t)m->vm.nworkers * sizeof(*w));
    if (w != NULL)
        m->w = w;
    hs = realloc(m->h, (size_t)m->vm.nhosts * sizeof(*hs));
    if (hs != NULL)
        m->h = hs;
    cap = calloc((size_t)m->vm.nhosts, sizeof(double));
    if (w == NULL || hs == NULL || cap == NULL) {
        free(cap);
        snprintf(m->why, sizeof(m->why), "out of memory");
        return -1;
    }
    memset(&m->h[h], 0, sizeof(m->h[h]));
    m->h[h].below_since = m->h[h].above_since = -1;
    liq_farm_vm_capacity(&m->vm, cap);
    for (int k = first; k < m->vm.nworkers; k++) {
        double s = cap[h] > 0 ? cap[h] / n : 1;

        memset(&m->w[k], 0, sizeof(m->w[k]));
        m->w[k].alive = 1;
        m->w[k].share0 = s > 1 ? 1 : s < 0.01 ? 0.01 : s;
        if (liq_fractile_add(&m->f, m->w[k].share0) != k) {
            free(cap);
            snprintf(m->why, sizeof(m->why), "out of memory");
            return -1;
        }
    }
    free(cap);
    m->nlive += n;
    reweigh(m);
    event(m, h, "joined the virtual machine: its workers take chunks");
    old = pvm_setsbuf(m->jobbuf);
    n = pvm_mcast(m->vm.tids + first, n, LIQ_FARM_TAG_JOB);
    pvm_setsbuf(old);
    if (n < 0) {
        snprintf(m->why, sizeof(m->why), "cannot send the job to %s: %s", m->vm.host[h].name,
                 lvm_errtext(n));
        return -1;
    }
    return 0;
}

int
liq_farm_loop(struct liq_farm_master *m, liq_farm_msg_fn on_msg, void *arg)
{
    double next_tick = liq_farm_now() + LIQ_FARM_TICK_S;

    while (m->ndone < m->n && m->nlive > 0) {
        struct timeval tv = { 0, 100000 };
        int b = pvm_trecv(-1, -1, &tv), bytes, tag, src, w, h, who;
        double now;

        if (b < 0) {
            snprintf(m->why, sizeof(m->why), "receive: %s", lvm_errtext(b));
            return -1;
        }
        if (b > 0) {
            pvm_bufinfo(b, &bytes, &tag, &src);
            switch (tag) {
            case LIQ_FARM_TAG_ASK:
                if ((w = liq_farm_vm_worker(&m->vm, src)) >= 0 && serve(m, w) != 0)
                    return -1;
                break;
            case LIQ_FARM_TAG_EXITED:
                pvm_upkint(&who, 1, 1);
                if ((w = liq_farm_vm_worker(&m->vm, who)) < 0)
                    break;
                event(m, m->vm.whost[w], "lost a worker: its items go to the others");
                lose_worker(m, w);
                if (serve_pending(m) != 0)
                    return -1;
                break;
            case LIQ_FARM_TAG_HOSTADD: {
                int cnt = 0, dt;

                /* PvmHostAdd's notice: a count, then the daemons' tids. */
                if (pvm_upkint(&cnt, 1, 1) < 0)
                    break;
                for (int i = 0; i < cnt && pvm_upkint(&dt, 1, 1) >= 0; i++)
                    if (host_added(m, dt) != 0)
                        return -1;
                break;
            }
            case LIQ_FARM_TAG_HOSTGONE:
                pvm_upkint(&who, 1, 1);
                if ((h = liq_farm_vm_host(&m->vm, who)) < 0 || m->h[h].lost)
                    break;
                m->h[h].lost = 1;
                /* The daemon's tid is free again: a host added later may get it. */
                m->vm.host[h].dtid = 0;
                event(m, h, "left the virtual machine: its items go to the others");
                for (w = m->vm.host[h].first; w < m->vm.host[h].first + m->vm.host[h].count; w++)
                    lose_worker(m, w);
                if (serve_pending(m) != 0)
                    return -1;
                break;
            default:
                if (on_msg(m, liq_farm_vm_worker(&m->vm, src), tag, src, arg) != 0)
                    return -1;
                break;
            }
        }
        now = liq_farm_now();
        if (now >= next_tick) {
            next_tick = now + LIQ_FARM_TICK_S;
            if (m->o->reclaim && reclaim_tick(m, now) != 0)
                return -1;
            if (m->progress)
                liq_farm_progress(m, 0);
        }
    }
    if (m->ndone < m->n) {
        snprintf(m->why, sizeof(m->why), "every worker was lost; %llu %s not run",
                 (unsigned long long)(m->n - m->ndone), m->unit);
        return -1;
    }
    return 0;
}

void
liq_farm_end(struct liq_farm_master *m, int failed)
{
    liq_farm_vm_stop(&m->vm, failed);
    liq_farm_vm_free(&m->vm);
    if (m->jobbuf > 0)
        pvm_freebuf(m->jobbuf);
    m->jobbuf = 0;
    liq_fractile_free(&m->f);
    free(m->done);
    free(m->chunk);
    free(m->w);
    free(m->h);
    free(m->ev);
    m->done = NULL;
    m->chunk = NULL;
    m->w = NULL;
    m->h = NULL;
    m->ev = NULL;
}
