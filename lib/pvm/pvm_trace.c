/*
 * pvm_trace.c - a PVM task's trace (issue 27, Paradise's tracing of seed
 * 003, for programs that know nothing of it): what turns it on, the
 * events recorded in memory, and the file written at pvm_exit or at the
 * process's exit, in the Chrome Trace Event JSON of the stencil traces
 * (liq_master_trace.c): a process per host, a thread per task.
 *
 * A task traces when LIQUIDVM_TRACE names a directory, when its own trace
 * mask has an event set (pvm_settmask, or PVMTMASK from its parent), or
 * when PvmSelfTraceTid names a tracer; pvm_spawn passes LIQUIDVM_TRACE on
 * (pvm_spawn.c).  Without LIQUIDVM_TRACE the files go to
 * $LIQUIDVM_HOME/trace.  One file per task, DIR/<program>-t<tid>.json,
 * written whole under another name and then renamed, so that a reader
 * never sees half of one.
 *
 * Recording costs a clock read and a few stores per traced call (sends,
 * receives, collectives, spawns); formatting waits for the end.  The time
 * between two traced calls is the task's compute span.  The trace starts
 * when the task enrolls (through pvm__ctx.trace_start, set at load) or,
 * after pvm_settmask, at the next traced call.  Clocks are
 * CLOCK_REALTIME, one per host.  A task on another host than the first
 * traced task (LIQUIDVM_TRACE_ROOT) measures that host's clock against
 * its own when its trace starts, with pvm_hostsync's request (the
 * shortest of a few round trips), and writes its times on that clock; the
 * metadata has the offset (0 when it is within its own error) and the
 * residual (half that round trip; -1 if the measure failed).
 *
 * The tasks of one run write the same run name (LIQUIDVM_TRACE_RUN, which
 * the first traced task makes from its tid and start time when neither
 * vmctl's spawn -@ nor the shell gave one, and every spawn passes on), so
 * that a reader of a directory tells runs apart: tids repeat between runs.
 *
 * A message is paired with its receipt by an id both ends compute alike:
 * sender, receiver, tag, context and its number among the messages of
 * that sender to that receiver with that tag and context.  Messages of
 * one pair keep their order, and a receive takes the oldest that matches,
 * so the k-th sent is the k-th received (unless a pvm_recvf match function
 * picks out of order, or a message handler takes it: the trace then
 * counts an unpaired end).
 */
#include "pvm_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "wire_tid.h"

/* Events kept at most (LIQUIDVM_TRACE_EVENTS may say otherwise); later ones
 * are counted as dropped.  48 bytes each: 48 MB at most. */
#define PVM__TRACE_MAX (1 << 20)
/* Clock pings against the first traced task's host, the best one kept. */
#define PVM__TRACE_PINGS 5

/* A message counter: one per (direction, peer, tag, context). */
struct pvm__tseq {
    int used, dir, peer, tag, ctx;
    int n;
};

struct pvm__trace {
    struct pvm__tev *ev;
    int n, cap, max;
    long dropped;
    int64_t t_start, last;      /* last: the end of the last traced call */
    struct pvm__tseq *seq;      /* open addressing, capseq a power of two */
    unsigned nseq, capseq;
    int parent, root_host;
    int64_t offset, residual;   /* the root host's clock minus ours; -1: not measured */
    pid_t pid;                  /* a process forked later has a copy: it writes nothing */
    int nspawn;
    char **spawn_file;          /* by spawn call number; NULL for untraced calls */
    const char *why;
    char run[PVM__TRACE_RUN_MAX];
    char dir[4096];
    char hostname[256];
    char prog[256];
};

int64_t
pvm__trace_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- the file ---- */

static const char *
call_name(int call)
{
    static const char *const names[] = {
        [PVM__TC_NONE] = "?", [PVM__TC_SEND] = "pvm_send", [PVM__TC_PSEND] = "pvm_psend",
        [PVM__TC_MCAST] = "pvm_mcast", [PVM__TC_RECV] = "pvm_recv", [PVM__TC_NRECV] = "pvm_nrecv",
        [PVM__TC_TRECV] = "pvm_trecv", [PVM__TC_PRECV] = "pvm_precv",
        [PVM__TC_SPAWN] = "pvm_spawn", [PVM__TC_EXIT] = "pvm_exit", [PVM__TC_BCAST] = "pvm_bcast",
        [PVM__TC_BARRIER] = "pvm_barrier", [PVM__TC_REDUCE] = "pvm_reduce",
        [PVM__TC_GATHER] = "pvm_gather", [PVM__TC_SCATTER] = "pvm_scatter",
    };

    return call >= 0 && call < (int)(sizeof(names) / sizeof(names[0])) ? names[call] : "?";
}

static const char *
route_name(int route)
{
    return route == PvmRouteDirect ? "direct" : route == PvmDontRoute ? "dontroute" : "allow";
}

/*
 * The events are formatted by hand into a buffer of our own: fprintf's
 * cost per conversion made the end of a long trace take longer than its
 * recording (about 800 ns an event against 150).
 */
struct tj {
    FILE *fp;
    const struct pvm__tinfo *ti;
    int first;
    char *p;
    char buf[8192];
};

static void
tj_flush(struct tj *j)
{
    if (j->p > j->buf)
        fwrite(j->buf, 1, (size_t)(j->p - j->buf), j->fp);
    j->p = j->buf;
}

/* Room for n more bytes (n well below the buffer's size). */
static void
tj_room(struct tj *j, size_t n)
{
    if ((size_t)(j->buf + sizeof(j->buf) - j->p) < n)
        tj_flush(j);
}

/* A constant piece of the format: no quoting needed. */
static void
tj_s(struct tj *j, const char *s)
{
    size_t n = strlen(s);

    tj_room(j, n);
    memcpy(j->p, s, n);
    j->p += n;
}

static void
tj_i(struct tj *j, long long v)
{
    char tmp[24];
    int k = 0;
    unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;

    do
        tmp[k++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        tmp[k++] = '-';
    tj_room(j, (size_t)k);
    while (k > 0)
        *j->p++ = tmp[--k];
}

static void
tj_x(struct tj *j, unsigned v)
{
    static const char hex[] = "0123456789abcdef";
    char tmp[8];
    int k = 0;

    do
        tmp[k++] = hex[v & 15];
    while ((v >>= 4) != 0);
    tj_room(j, (size_t)k);
    while (k > 0)
        *j->p++ = tmp[--k];
}

static void
tj_head(struct tj *j, const char *ph, const char *name, const char *cat, int64_t ts)
{
    tj_s(j, j->first ? "\n{\"ph\":\"" : ",\n{\"ph\":\"");
    tj_s(j, ph);
    tj_s(j, "\",\"name\":\"");
    tj_s(j, name);
    tj_s(j, "\",\"cat\":\"");
    tj_s(j, cat);
    tj_s(j, "\",\"pid\":");
    tj_i(j, j->ti->host);
    tj_s(j, ",\"tid\":");
    tj_i(j, j->ti->tid);
    tj_s(j, ",\"ts\":");
    tj_i(j, ts + j->ti->clock_offset);
    j->first = 0;
}

/* The flow id of a message: both ends write the same. */
static void
tj_flow_id(struct tj *j, int src, int dst, const struct pvm__tev *e)
{
    tj_s(j, ",\"id\":\"t");
    tj_x(j, (unsigned)src);
    tj_s(j, "-t");
    tj_x(j, (unsigned)dst);
    tj_s(j, ":");
    tj_i(j, e->tag);
    tj_s(j, ":");
    tj_i(j, e->ctx);
    tj_s(j, ":");
    tj_i(j, e->seq);
    tj_s(j, "\"");
}

/* ,"args":{"peer":..,"tag":..,"ctx":..,"bytes":..,"seq":..}} */
static void
tj_msg_args(struct tj *j, const struct pvm__tev *e)
{
    tj_s(j, ",\"args\":{\"peer\":");
    tj_i(j, e->peer);
    tj_s(j, ",\"tag\":");
    tj_i(j, e->tag);
    tj_s(j, ",\"ctx\":");
    tj_i(j, e->ctx);
    tj_s(j, ",\"bytes\":");
    tj_i(j, (long long)e->bytes);
    tj_s(j, ",\"seq\":");
    tj_i(j, e->seq);
    tj_s(j, "}}");
}

/* ,"args":{"to"|"from":..,"tag":..,"bytes":..}} */
static void
tj_flow_args(struct tj *j, const char *dir, const struct pvm__tev *e)
{
    tj_s(j, ",\"args\":{\"");
    tj_s(j, dir);
    tj_s(j, "\":");
    tj_i(j, e->peer);
    tj_s(j, ",\"tag\":");
    tj_i(j, e->tag);
    tj_s(j, ",\"bytes\":");
    tj_i(j, (long long)e->bytes);
    tj_s(j, "}}");
}

static void
tj_event(struct tj *j, const struct pvm__tev *e)
{
    const struct pvm__tinfo *ti = j->ti;
    long long dur = (long long)(e->t1 - e->t0);

    switch (e->kind) {
    case PVM__TEV_COMPUTE:
        tj_head(j, "X", "compute", "compute", e->t0);
        tj_s(j, ",\"dur\":");
        tj_i(j, dur);
        tj_s(j, "}");
        break;
    case PVM__TEV_SEND:
        tj_head(j, "X", call_name(e->call), "send", e->t0);
        tj_s(j, ",\"dur\":");
        tj_i(j, dur);
        tj_msg_args(j, e);
        tj_head(j, "s", "msg", "msg", e->t0);
        tj_flow_id(j, ti->tid, e->peer, e);
        tj_flow_args(j, "to", e);
        break;
    case PVM__TEV_RECV:
        tj_head(j, "X", call_name(e->call), "wait", e->t0);
        tj_s(j, ",\"dur\":");
        tj_i(j, dur);
        tj_msg_args(j, e);
        tj_head(j, "f", "msg", "msg", e->t1);
        tj_s(j, ",\"bp\":\"e\"");
        tj_flow_id(j, e->peer, ti->tid, e);
        tj_flow_args(j, "from", e);
        break;
    case PVM__TEV_SPAWN:
        tj_head(j, "X", "pvm_spawn", "spawn", e->t0);
        tj_s(j, ",\"dur\":");
        tj_i(j, dur);
        tj_s(j, ",\"args\":{\"call\":");
        tj_i(j, e->tag);
        tj_s(j, ",\"file\":");
        tj_flush(j);
        wire_json_str(j->fp, e->tag >= 0 && e->tag < ti->nspawn && ti->spawn_file[e->tag] ?
                                 ti->spawn_file[e->tag] : "?");
        tj_s(j, ",\"ntask\":");
        tj_i(j, (long long)e->bytes);
        tj_s(j, ",\"started\":");
        tj_i(j, e->seq);
        tj_s(j, ",\"children\":\"");
        tj_s(j, ti->path);
        tj_s(j, "/");
        tj_i(j, e->tag);
        tj_s(j, "\"}}");
        break;
    case PVM__TEV_CHILD:
        tj_head(j, "i", "spawned", "spawn", e->t0);
        tj_s(j, ",\"s\":\"t\",\"args\":{\"child\":");
        tj_i(j, e->peer);
        tj_s(j, ",\"call\":");
        tj_i(j, e->tag);
        tj_s(j, ",\"instance\":");
        tj_i(j, e->seq);
        tj_s(j, ",\"path\":\"");
        tj_s(j, ti->path);
        tj_s(j, "/");
        tj_i(j, e->tag);
        tj_s(j, "\"}}");
        break;
    case PVM__TEV_COLL:
        tj_head(j, "X", call_name(e->call), "wait", e->t0);
        tj_s(j, ",\"dur\":");
        tj_i(j, dur);
        tj_s(j, ",\"args\":{\"collective\":1}}");
        break;
    case PVM__TEV_EXIT:
        tj_head(j, "i", call_name(e->call), "exit", e->t0);
        tj_s(j, ",\"s\":\"t\"}");
        break;
    default:
        break;
    }
}

int
pvm__trace_json(FILE *fp, const struct pvm__tinfo *ti, const struct pvm__tev *ev, int n)
{
    struct tj *j = malloc(sizeof(*j));
    char name[400];

    if (j == NULL)
        return -ENOMEM;
    j->fp = fp;
    j->ti = ti;
    j->first = 1;
    j->p = j->buf;
    tj_s(j, "{\"traceEvents\":[");
    tj_head(j, "M", "process_name", "__metadata", ti->t_start);
    tj_s(j, ",\"args\":{\"name\":");
    tj_flush(j);
    wire_json_str(fp, ti->hostname);
    tj_s(j, "}}");
    tj_head(j, "M", "process_sort_index", "__metadata", ti->t_start);
    tj_s(j, ",\"args\":{\"sort_index\":");
    tj_i(j, ti->host);
    tj_s(j, "}}");
    snprintf(name, sizeof(name), "%s t%x (%s)", ti->program, (unsigned)ti->tid, ti->path);
    tj_head(j, "M", "thread_name", "__metadata", ti->t_start);
    tj_s(j, ",\"args\":{\"name\":");
    tj_flush(j);
    wire_json_str(fp, name);
    tj_s(j, "}}");
    for (int i = 0; i < n; i++)
        tj_event(j, &ev[i]);
    tj_flush(j);
    free(j);
    fprintf(fp, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"format\":\"liquidvm-pvm-trace 1\","
                "\"program\":");
    wire_json_str(fp, ti->program);
    fprintf(fp, ",\"tid\":%d,\"parent\":%d,\"path\":", ti->tid, ti->parent);
    wire_json_str(fp, ti->path);
    fprintf(fp, ",\"host\":{\"index\":%d,\"name\":", ti->host);
    wire_json_str(fp, ti->hostname);
    fprintf(fp, "},\"traced_because\":");
    wire_json_str(fp, ti->why);
    fprintf(fp, ",\"run\":");
    wire_json_str(fp, ti->run != NULL ? ti->run : "");
    /* Times are on the first traced task's host's clock: ours plus the
     * offset measured against that host's daemon, within the residual
     * (-1: not measured; 0 on that host itself). */
    fprintf(fp, ",\"clock\":{\"source\":\"CLOCK_REALTIME\",\"root_host\":%d,"
                "\"offset_us\":%lld,\"residual_us\":%lld},\"t_start_us\":%lld,"
                "\"t_end_us\":%lld,\"events\":%d,"
                "\"dropped\":%ld,\"tracer\":{\"tid\":%d,\"code\":%d,\"context\":%d},"
                "\"settings\":{\"route\":\"%s\",\"fragsize\":%d},\"spawns\":[",
            ti->root_host, (long long)ti->clock_offset,
            ti->root_host == ti->host ? 0LL : (long long)ti->clock_residual,
            (long long)(ti->t_start + ti->clock_offset), (long long)(ti->t_end + ti->clock_offset),
            n, ti->dropped, ti->tracer_tid, ti->tracer_code, ti->tracer_ctx,
            route_name(ti->route), ti->fragsize);
    for (int i = 0, k = 0; i < ti->nspawn; i++) {
        if (ti->spawn_file[i] == NULL)
            continue;
        fprintf(fp, "%s{\"call\":%d,\"path\":\"%s/%d\",\"file\":", k++ ? "," : "", i, ti->path, i);
        wire_json_str(fp, ti->spawn_file[i]);
        fprintf(fp, "}");
    }
    fprintf(fp, "],\"hints\":");
    if (ti->hints_file == NULL) {
        fprintf(fp, "null");
    } else {
        fprintf(fp, "{\"file\":");
        wire_json_str(fp, ti->hints_file);
        fprintf(fp, ",\"applied\":[");
        for (int i = 0; i < ti->napplied; i++) {
            fprintf(fp, "%s", i ? "," : "");
            wire_json_str(fp, ti->applied[i]);
        }
        fprintf(fp, "]}");
    }
    fprintf(fp, "}}\n");
    return ferror(fp) ? -EIO : 0;
}

/* ---- recording ---- */

static void
trace_add(struct pvm__trace *tr, const struct pvm__tev *e)
{
    if (tr->n == tr->cap) {
        int c = tr->cap == 0 ? 1024 : tr->cap > tr->max / 2 ? tr->max : 2 * tr->cap;
        struct pvm__tev *v;

        if (c > tr->max)
            c = tr->max;
        if (c <= tr->n || (v = realloc(tr->ev, (size_t)c * sizeof(*v))) == NULL) {
            tr->dropped++;
            return;
        }
        tr->ev = v;
        tr->cap = c;
    }
    tr->ev[tr->n++] = *e;
}

static unsigned
seq_hash(int dir, int peer, int tag, int ctx)
{
    uint64_t h = (uint32_t)peer * 0x9e3779b97f4a7c15ull;

    h ^= ((uint64_t)(uint32_t)tag << 1 | (unsigned)dir) * 0xc2b2ae3d27d4eb4full;
    h ^= (uint64_t)(uint32_t)ctx * 0x165667b19e3779f9ull;
    return (unsigned)(h ^ h >> 29);
}

/* The next number of a message in its (direction, peer, tag, context); -1
 * when out of memory (the event then pairs with nothing). */
static int
trace_seq(struct pvm__trace *tr, int dir, int peer, int tag, int ctx)
{
    struct pvm__tseq *s;

    if (2 * (tr->nseq + 1) > tr->capseq) {
        unsigned c = tr->capseq ? 2 * tr->capseq : 64;
        struct pvm__tseq *v = calloc(c, sizeof(*v));

        if (v == NULL)
            return -1;
        for (unsigned i = 0; i < tr->capseq; i++) {
            struct pvm__tseq *o = &tr->seq[i];
            unsigned k = seq_hash(o->dir, o->peer, o->tag, o->ctx) & (c - 1);

            if (!o->used)
                continue;
            while (v[k].used)
                k = (k + 1) & (c - 1);
            v[k] = *o;
        }
        free(tr->seq);
        tr->seq = v;
        tr->capseq = c;
    }
    for (unsigned k = seq_hash(dir, peer, tag, ctx) & (tr->capseq - 1);;
         k = (k + 1) & (tr->capseq - 1)) {
        s = &tr->seq[k];
        if (!s->used) {
            *s = (struct pvm__tseq){ 1, dir, peer, tag, ctx, 0 };
            tr->nseq++;
            break;
        }
        if (s->dir == dir && s->peer == peer && s->tag == tag && s->ctx == ctx)
            break;
    }
    return s->n++;
}

int64_t
pvm__trace_begin(void)
{
    struct pvm__trace *tr = pvm__ctx.tr;
    int64_t now = pvm__trace_now();

    if (tr != NULL && now > tr->last) {
        struct pvm__tev e = { .t0 = tr->last, .t1 = now, .kind = PVM__TEV_COMPUTE };

        trace_add(tr, &e);
    }
    return now;
}

void
pvm__trace_msg(int kind, int call, int64_t t0, int peer, int tag, int ctx, size_t bytes)
{
    struct pvm__trace *tr = pvm__ctx.tr;
    struct pvm__tev e = { .t0 = t0, .kind = kind, .call = call, .peer = peer, .tag = tag,
                          .ctx = ctx, .bytes = bytes };

    if (tr == NULL)
        return;
    e.seq = trace_seq(tr, kind == PVM__TEV_RECV, peer, tag, ctx);
    e.t1 = tr->last = pvm__trace_now();
    trace_add(tr, &e);
}

void
pvm__trace_coll(int call, int64_t t0)
{
    struct pvm__trace *tr = pvm__ctx.tr;
    struct pvm__tev e = { .t0 = t0, .kind = PVM__TEV_COLL, .call = call };

    if (tr == NULL || t0 == 0)
        return;
    e.t1 = tr->last = pvm__trace_now();
    trace_add(tr, &e);
}

void
pvm__trace_spawn(int64_t t0, int callno, const char *file, int ntask, const int *tids,
                 int started)
{
    struct pvm__trace *tr = pvm__ctx.tr;
    struct pvm__tev e = { .t0 = t0, .kind = PVM__TEV_SPAWN, .call = PVM__TC_SPAWN,
                          .tag = callno, .seq = started, .bytes = (uint64_t)ntask };

    if (tr == NULL)
        return;
    if (callno >= tr->nspawn) {
        char **v = realloc(tr->spawn_file, (size_t)(callno + 1) * sizeof(*v));

        if (v != NULL) {
            for (int i = tr->nspawn; i <= callno; i++)
                v[i] = NULL;
            tr->spawn_file = v;
            tr->nspawn = callno + 1;
        }
    }
    if (callno < tr->nspawn && tr->spawn_file[callno] == NULL)
        tr->spawn_file[callno] = strdup(file);
    e.t1 = tr->last = pvm__trace_now();
    trace_add(tr, &e);
    for (int i = 0; tids != NULL && i < ntask; i++) {
        struct pvm__tev c = { .t0 = e.t1, .t1 = e.t1, .kind = PVM__TEV_CHILD,
                              .call = PVM__TC_SPAWN, .peer = tids[i], .tag = callno, .seq = i };

        if (tids[i] > 0)
            trace_add(tr, &c);
    }
}

/* ---- starting and writing ---- */

/* mkdir -p: 0 or -errno. */
static int
make_dir(const char *dir)
{
    char p[4096];
    size_t n = strlen(dir);

    if (n == 0 || n >= sizeof(p))
        return -ENAMETOOLONG;
    memcpy(p, dir, n + 1);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            return -errno;
        *s = '/';
    }
    if (mkdir(p, 0777) != 0 && errno != EEXIST)
        return -errno;
    struct stat st;

    if (stat(p, &st) != 0)
        return -errno;
    if (!S_ISDIR(st.st_mode))
        return -ENOTDIR;        /* a file of that name (/dev/null) */
    if (access(p, W_OK | X_OK) != 0)
        return -errno;
    return 0;
}

/* LIQUIDVM_TRACE, else $LIQUIDVM_HOME/trace, into out. */
static int
trace_dir_of(char *out, size_t cap)
{
    const char *env = getenv("LIQUIDVM_TRACE");
    char home[4096];
    int rc;

    if (env != NULL && env[0] != '\0') {
        /* Children start elsewhere: a relative name is made absolute here. */
        if (env[0] != '/' && getcwd(home, sizeof(home)) != NULL) {
            if ((size_t)snprintf(out, cap, "%s/%s", home, env) >= cap)
                return -ENAMETOOLONG;
        } else if ((size_t)snprintf(out, cap, "%s", env) >= cap) {
            return -ENAMETOOLONG;
        }
        return 0;
    }
    if ((rc = wire_home(home, sizeof(home))) != 0)
        return rc;
    if ((size_t)snprintf(out, cap, "%s/trace", home) >= cap)
        return -ENAMETOOLONG;
    return 0;
}

static void
prog_of(char *out, size_t cap)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    const char *slash;

    if (n <= 0) {
        snprintf(out, cap, "task");
        return;
    }
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    /* A name too long is cut: it only names the file. */
    if ((size_t)snprintf(out, cap, "%s", slash ? slash + 1 : exe) >= cap)
        out[cap - 1] = '\0';
}

static void trace_write(void);

static void
trace_atexit(void)
{
    if (pvm__ctx.tr_state > 0)
        trace_write();
}

static void
trace_free(struct pvm__trace *tr)
{
    for (int i = 0; i < tr->nspawn; i++)
        free(tr->spawn_file[i]);
    free(tr->spawn_file);
    free(tr->seq);
    free(tr->ev);
    free(tr);
}

/* The trace ends: the EXIT event and the file.  Reports failures on
 * stderr; never fails the program. */
static void
trace_write(void)
{
    struct pvm__trace *tr = pvm__ctx.tr;
    struct pvm__hints *h = pvm__ctx.hints;
    char path[4400], tmp[4500];
    struct pvm__tinfo ti;
    FILE *fp;
    int rc;

    if (tr == NULL || pvm__ctx.tr_state <= 0)
        return;
    pvm__ctx.tr_state = -1;
    if (tr->pid != getpid())
        return;
    struct pvm__tev e = { .t0 = pvm__trace_now(), .kind = PVM__TEV_EXIT, .call = PVM__TC_EXIT };
    e.t1 = e.t0;
    if (e.t0 > tr->last) {
        struct pvm__tev c = { .t0 = tr->last, .t1 = e.t0, .kind = PVM__TEV_COMPUTE };

        trace_add(tr, &c);
    }
    trace_add(tr, &e);
    memset(&ti, 0, sizeof(ti));
    ti.tid = pvm__ctx.mytid;
    ti.parent = tr->parent;
    ti.host = WIRE_TID_HOST(pvm__ctx.mytid);
    ti.program = tr->prog;
    ti.hostname = tr->hostname;
    ti.path = pvm__task_path();
    ti.why = tr->why;
    ti.run = tr->run;
    ti.root_host = tr->root_host;
    ti.clock_offset = tr->offset;
    ti.clock_residual = tr->residual;
    ti.dropped = tr->dropped;
    ti.t_start = tr->t_start;
    ti.t_end = e.t0;
    ti.tracer_tid = pvm__ctx.opt[PvmSelfTraceTid];
    ti.tracer_code = pvm__ctx.opt[PvmSelfTraceCode];
    ti.tracer_ctx = pvm__ctx.opt[PvmSelfTraceContext];
    ti.nspawn = tr->nspawn;
    ti.spawn_file = tr->spawn_file;
    ti.route = pvm__ctx.opt[PvmRoute];
    ti.fragsize = pvm__ctx.opt[PvmFragSize];
    if (h != NULL) {
        ti.hints_file = h->file;
        ti.napplied = h->napplied;
        ti.applied = h->applied;
    }
    snprintf(path, sizeof(path), "%s/%s-t%x.json", tr->dir, tr->prog, (unsigned)ti.tid);
    snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
    if ((fp = fopen(tmp, "w")) == NULL) {
        fprintf(stderr, "libpvm [t%x]: cannot write the trace %s: %s\n", (unsigned)ti.tid, tmp,
                strerror(errno));
        return;
    }
    /* Formatting dominates the end's cost: few large writes. */
    setvbuf(fp, NULL, _IOFBF, 1 << 20);
    rc = pvm__trace_json(fp, &ti, tr->ev, tr->n);
    if (fclose(fp) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc != 0) {
        fprintf(stderr, "libpvm [t%x]: cannot write the trace %s: %s\n", (unsigned)ti.tid, path,
                strerror(-rc));
        unlink(tmp);
    }
}

int
pvm__trace_decide(void)
{
    const char *env = getenv("LIQUIDVM_TRACE"), *why = NULL, *s;
    struct pvm__trace *tr;
    int rc;

    if (pvm__ctx.mytid < 0)
        return 0;               /* decided once the task has a tid */
    if (env != NULL && env[0] != '\0')
        why = "LIQUIDVM_TRACE";
    else if (pvm__tmask_on(0))
        why = "trace mask";
    else if (pvm__ctx.opt[PvmSelfTraceTid] > 0)
        why = "PvmSelfTraceTid";
    if (why == NULL) {
        pvm__ctx.tr_state = -1;
        return 0;
    }
    if (pvm__ctx.tr != NULL) {
        /* A trace of an earlier enrollment, written already. */
        trace_free(pvm__ctx.tr);
        pvm__ctx.tr = NULL;
    }
    if ((tr = calloc(1, sizeof(*tr))) == NULL) {
        pvm__ctx.tr_state = -1;
        return 0;
    }
    tr->why = why;
    tr->max = PVM__TRACE_MAX;
    if ((s = getenv("LIQUIDVM_TRACE_EVENTS")) != NULL && atoi(s) > 0)
        tr->max = atoi(s);
    if ((rc = trace_dir_of(tr->dir, sizeof(tr->dir))) != 0 || (rc = make_dir(tr->dir)) != 0) {
        fprintf(stderr, "libpvm [t%x]: trace directory %s: %s; this task is not traced\n",
                (unsigned)pvm__ctx.mytid, tr->dir[0] ? tr->dir : "?",
                rc == WIRE_ENOVM ? "no LIQUIDVM_HOME" : strerror(-rc));
        free(tr);
        pvm__ctx.tr_state = -1;
        return 0;
    }
    prog_of(tr->prog, sizeof(tr->prog));
    s = getenv("LIQUIDVM_PARENT");
    tr->parent = s ? (int)strtoul(s, NULL, 0) : 0;
    s = getenv("LIQUIDVM_TRACE_ROOT");
    tr->root_host = s ? atoi(s) : WIRE_TID_HOST(pvm__ctx.mytid);
    if (pvm__host_name((int)((uint32_t)pvm__ctx.mytid & WIRE_HOST_TID(WIRE_TID_HOST_MASK)),
                       tr->hostname, sizeof(tr->hostname)) != 0)
        snprintf(tr->hostname, sizeof(tr->hostname), "host %d", WIRE_TID_HOST(pvm__ctx.mytid));
    /* On another host than the first traced task: its clock against ours,
     * through the daemons (pvm_hostsync's request), a few times. */
    tr->residual = -1;
    if (tr->root_host == WIRE_TID_HOST(pvm__ctx.mytid))
        tr->residual = 0;
    else if (pvm__clock_offset((int)WIRE_HOST_TID(tr->root_host), PVM__TRACE_PINGS, &tr->offset,
                               &tr->residual) != 0)
        tr->offset = 0, tr->residual = -1;
    /* An offset within its own error bound is no evidence of one: moving
     * the times by it would only add the round trip's asymmetry (hosts of
     * one machine share a clock). */
    if (tr->residual > 0 && tr->offset <= tr->residual && tr->offset >= -tr->residual)
        tr->offset = 0;
    tr->t_start = tr->last = pvm__trace_now();
    if (!pvm__trace_run_ok(s = getenv("LIQUIDVM_TRACE_RUN")))
        snprintf(tr->run, sizeof(tr->run), "t%x-%lld", (unsigned)pvm__ctx.mytid,
                 (long long)tr->t_start);
    else
        snprintf(tr->run, sizeof(tr->run), "%s", s);
    tr->pid = getpid();
    pvm__ctx.tr = tr;
    pvm__ctx.trace_exit = trace_write;
    pvm__ctx.tr_state = 1;
    if (!pvm__ctx.tr_atexit) {
        pvm__ctx.tr_atexit = 1;
        atexit(trace_atexit);
    }
    return 1;
}

/*
 * Enrollment (pvm_task.c) starts the trace through this hook, so that a
 * task's trace begins with its tid even if it never sends; pvm_task.c
 * cannot name this file, which calls pvm_host.c, which enrolls.
 */
static void __attribute__((constructor))
trace_hook(void)
{
    pvm__ctx.trace_start = pvm__trace_decide;
}

int
pvm__trace_dir(char *out, size_t cap)
{
    if (pvm__ctx.tr != NULL)
        return (size_t)snprintf(out, cap, "%s", pvm__ctx.tr->dir) >= cap ? -ENAMETOOLONG : 0;
    return trace_dir_of(out, cap);
}

int
pvm__trace_run_ok(const char *s)
{
    size_t n = 0;

    if (s == NULL)
        return 0;
    for (; s[n] != '\0'; n++)
        if (n + 1 >= PVM__TRACE_RUN_MAX || !(isalnum((unsigned char)s[n]) || strchr("-_.:@", s[n])))
            return 0;
    return n > 0;
}

const char *
pvm__trace_run(void)
{
    const char *s = getenv("LIQUIDVM_TRACE_RUN");

    if (pvm__trace_run_ok(s))
        return s;
    return pvm__ctx.tr != NULL && pvm__ctx.tr_state > 0 ? pvm__ctx.tr->run : NULL;
}

const struct pvm__tev *
pvm__trace_events(long *dropped)
{
    *dropped = pvm__ctx.tr != NULL ? pvm__ctx.tr->dropped : 0;
    return pvm__ctx.tr != NULL ? pvm__ctx.tr->ev : NULL;
}

int
pvm__trace_nevents(void)
{
    return pvm__ctx.tr != NULL ? pvm__ctx.tr->n : 0;
}
