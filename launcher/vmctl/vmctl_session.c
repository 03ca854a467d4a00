/*
 * vmctl_session.c - what lasts for one console session, as in PVM's
 * console: the console's own task (enrolled on first use and kept, so `id`
 * names one tid and the tasks' output finds the console), its aliases,
 * its jobs (the tasks `spawn -o` started in the interactive console, whose
 * output lines and exits arrive on that task's connection), and the
 * console's PVM options (getopt/setopt).  No seed idea; it sits above
 * vmctl_client.c and below the verbs and the console, which call it.
 */
#include "vmctl.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* PVM 3.4.6's options of the console task, in pvm3.h's order, with the
 * values its console shows (getopt). */
const struct vmctl_option vmctl_options[VMCTL_NOPTS] = {
    { "PvmRoute", 1 },           { "PvmDebugMask", 0 },        { "PvmAutoErr", 1 },
    { "PvmOutputTid", -1 },      { "PvmOutputCode", 0 },       { "PvmTraceTid", -1 },
    { "PvmTraceCode", 0 },       { "PvmTraceBuffer", 0 },      { "PvmTraceOptions", 1 },
    { "PvmFragSize", 4080 },     { "PvmResvTids", 1 },         { "PvmSelfOutputTid", -1 },
    { "PvmSelfOutputCode", 0 },  { "PvmSelfTraceTid", -1 },    { "PvmSelfTraceCode", 0 },
    { "PvmSelfTraceBuffer", 0 }, { "PvmSelfTraceOptions", 0 }, { "PvmShowTids", 1 },
    { "PvmOutputContext", 0 },   { "PvmTraceContext", 0 },     { "PvmSelfOutputContext", 0 },
    { "PvmSelfTraceContext", 0 }, { "PvmNoReset", 1 },
};

static void session_notice(void *arg, const struct wire_hdr *h, const unsigned char *body);

struct vmctl_session *
vmctl_session_new(int interactive)
{
    struct vmctl_session *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->fd = -1;
    s->interactive = interactive;
    s->next_job = 1;
    for (int i = 0; i < VMCTL_NOPTS; i++)
        s->opts[i] = vmctl_options[i].value;
    vmctl_tmask_default(s->tmask);
    vmctl_request_on_notice(session_notice, s);
    return s;
}

void
vmctl_session_free(struct vmctl_session *s)
{
    if (s == NULL)
        return;
    vmctl_request_on_notice(NULL, NULL);
    if (s->fd >= 0)
        close(s->fd);
    for (int i = 0; i < s->njobs; i++) {
        free(s->jobs[i].tids);
        free(s->jobs[i].alive);
        vmctl_outsrc_free(&s->jobs[i].out);
    }
    free(s->jobs);
    free(s->aliases);
    free(s);
}

int
vmctl_task_open(struct vmctl *v, int *fd, uint32_t *tid, int *shared)
{
    struct vmctl_session *s = v->sess;

    *shared = 0;
    if (s == NULL)
        return vmctl_enroll(v, fd, tid);
    if (s->fd < 0) {
        int rc = vmctl_enroll(v, &s->fd, &s->tid);
        if (rc != 0)
            return rc;
    }
    *fd = s->fd;
    *tid = s->tid;
    *shared = 1;
    return 0;
}

void
vmctl_task_close(int fd, int shared)
{
    if (!shared && fd >= 0)
        close(fd);
}

/* The job and index of tid, or NULL. */
static struct vmctl_job *
job_of(struct vmctl_session *s, uint32_t tid, int *k)
{
    for (int i = 0; i < s->njobs; i++)
        for (int j = 0; j < s->jobs[i].n; j++)
            if (s->jobs[i].tids[j] == tid) {
                *k = j;
                return &s->jobs[i];
            }
    return NULL;
}

/* A job by its number: the output code of its tasks and their children. */
static struct vmctl_job *
job_by_id(struct vmctl_session *s, int id)
{
    for (int i = 0; i < s->njobs; i++)
        if (s->jobs[i].id == id)
            return &s->jobs[i];
    return NULL;
}

static void
say(struct vmctl_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
say(struct vmctl_session *s, const char *fmt, ...)
{
    va_list ap;
    if (s->printed++ == 0 && s->before_print)
        s->before_print();
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

/* A job is finished when none of its tasks' output is open, as PVM's
 * console has it: "[N] finished" then.  The job stays known, so lines
 * that trail still show as its own. */
static void
job_check(struct vmctl_session *s, struct vmctl_job *j)
{
    if (j->started && !j->finished && j->out.open == 0) {
        j->finished = 1;
        say(s, "[%d] finished\n", j->id);
    }
}

/* A job's output ("[job:tid] line", and "[job:tid] EOF" when its tasks
 * are shown, as PVM's console prints them), a task's exit, or a host's
 * loss, which ends its tasks' output. */
static void
session_notice(void *arg, const struct wire_hdr *h, const unsigned char *body)
{
    struct vmctl_session *s = arg;
    struct vmctl_job *j;
    int k;

    if (h->type != WIRE_T_MSG)
        return;
    if (h->ctx == WIRE_CTX_OUTPUT &&
        ((j = job_of(s, h->src, &k)) != NULL || (j = job_by_id(s, h->tag)) != NULL)) {
        int eof = vmctl_outsrc_frame(&j->out, s->fd, h, body);
        int tids = s->opts[VMCTL_OPT_SHOWTIDS];
        if (vmctl_output_line(h) && tids)
            say(s, "[%d:t%x] %.*s\n", j->id, h->src, (int)h->len, body ? (const char *)body : "");
        else if (vmctl_output_line(h))
            say(s, "%.*s\n", (int)h->len, body ? (const char *)body : "");
        else if (eof && tids)
            say(s, "[%d:t%x] EOF\n", j->id, h->src);
        job_check(s, j);
        return;
    }
    /* Notices come from a daemon only (a host tid), never as output. */
    if (h->ctx == WIRE_CTX_OUTPUT || (h->src & WIRE_TID_LOCAL_MASK) != 0 || h->len < 4 ||
        body == NULL)
        return;
    if (h->tag == VMCTL_HOSTDEL_TAG) {
        for (int i = 0; i < s->njobs; i++) {
            vmctl_outsrc_host_lost(&s->jobs[i].out, wire_be32_get(body));
            job_check(s, &s->jobs[i]);
        }
        return;
    }
    if (h->tag != VMCTL_NOTIFY_TAG)
        return;
    if ((j = job_of(s, wire_be32_get(body), &k)) == NULL || !j->alive[k])
        return;
    j->alive[k] = 0;
    j->running--;
}

int
vmctl_session_poll(struct vmctl_session *s, int timeout_ms)
{
    int n = 0;

    s->printed = 0;
    while (s->fd >= 0) {
        struct pollfd p = { .fd = s->fd, .events = POLLIN };
        int rc = poll(&p, 1, n == 0 ? timeout_ms : 0);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            break;
        struct wire_hdr h;
        unsigned char *b;
        if (wire_read_frame(s->fd, 1u << 26, 1000, &h, &b) != 1) {
            /* The daemon went away (halt): the session's task ends with
             * it, and so does the output its jobs still waited for; a new
             * connection asks about its hosts anew. */
            close(s->fd);
            s->fd = -1;
            memset(s->hostwatch, 0, sizeof(s->hostwatch));
            for (int i = 0; i < s->njobs; i++) {
                struct vmctl_outsrc *o = &s->jobs[i].out;
                for (int k = 0; k < o->n; k++)
                    o->closed[k] = 1;
                o->open = 0;
                job_check(s, &s->jobs[i]);
            }
            break;
        }
        session_notice(s, &h, b);
        free(b);
        n++;
    }
    fflush(stdout);
    return n;
}

int
vmctl_session_job_new(struct vmctl_session *s, const char *command)
{
    struct vmctl_job *jobs = realloc(s->jobs, (size_t)(s->njobs + 1) * sizeof(*jobs));
    if (jobs == NULL)
        return 0;
    s->jobs = jobs;
    struct vmctl_job *j = &jobs[s->njobs++];
    memset(j, 0, sizeof(*j));
    snprintf(j->command, sizeof(j->command), "%s", command);
    j->out.watched = s->hostwatch;
    j->id = s->next_job++;
    return j->id;
}

void
vmctl_session_job_start(struct vmctl_session *s, int id, const int32_t *tids, uint32_t n)
{
    struct vmctl_job *j = job_by_id(s, id);
    uint32_t ok = 0;

    if (j == NULL)
        return;
    for (uint32_t i = 0; i < n; i++)
        ok += tids[i] > 0;
    j->tids = calloc(ok ? ok : 1, sizeof(uint32_t));
    j->alive = calloc(ok ? ok : 1, 1);
    if (ok == 0 || j->tids == NULL || j->alive == NULL) {
        /* No task (or no memory): the job goes; its number is not reused,
         * since tasks it may have started still carry it. */
        free(j->tids);
        free(j->alive);
        vmctl_outsrc_free(&j->out);
        int i = (int)(j - s->jobs);
        memmove(j, j + 1, (size_t)(s->njobs - i - 1) * sizeof(*j));
        s->njobs--;
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        if (tids[i] > 0) {
            j->tids[j->n] = (uint32_t)tids[i];
            j->alive[j->n++] = 1;
            vmctl_outsrc_add(&j->out, s->fd, (uint32_t)tids[i]);
        }
    j->running = j->n;
    j->started = 1;
    job_check(s, j);
    if (s->fd < 0)
        return;
    /* PvmTaskExit for each task (for jobs), answered on the session's
     * connection; the output's EOFs end the job. */
    struct wire_wbuf req;
    unsigned char *body;
    size_t len;
    int status;
    wire_wbuf_init(&req);
    wire_put_u32(&req, 1);
    wire_put_i32(&req, VMCTL_NOTIFY_TAG);
    wire_put_u32(&req, (uint32_t)j->n);
    for (int i = 0; i < j->n; i++)
        wire_put_u32(&req, j->tids[i]);
    if (vmctl_request(s->fd, WIRE_T_TASK_NOTIFY, &req, 60000, &body, &len, &status) == 0)
        free(body);
    wire_wbuf_free(&req);
}

const struct vmctl_alias *
vmctl_alias_find(const struct vmctl_session *s, const char *name)
{
    for (int i = 0; s && i < s->naliases; i++)
        if (strcmp(s->aliases[i].name, name) == 0)
            return &s->aliases[i];
    return NULL;
}

int
vmctl_alias_set(struct vmctl_session *s, const char *name, const char *text)
{
    struct vmctl_alias *a = NULL;

    for (int i = 0; i < s->naliases; i++)
        if (strcmp(s->aliases[i].name, name) == 0)
            a = &s->aliases[i];
    if (strlen(name) >= sizeof(a->name) || strlen(text) >= sizeof(a->text))
        return -ENAMETOOLONG;
    if (a == NULL) {
        struct vmctl_alias *n = realloc(s->aliases, (size_t)(s->naliases + 1) * sizeof(*n));
        if (n == NULL)
            return -ENOMEM;
        s->aliases = n;
        a = &n[s->naliases++];
        strcpy(a->name, name);
    }
    strcpy(a->text, text);
    return 0;
}

int
vmctl_alias_del(struct vmctl_session *s, const char *name)
{
    const struct vmctl_alias *a = vmctl_alias_find(s, name);
    if (a == NULL)
        return -ENOENT;
    int i = (int)(a - s->aliases);
    memmove(&s->aliases[i], &s->aliases[i + 1],
            (size_t)(s->naliases - i - 1) * sizeof(s->aliases[0]));
    s->naliases--;
    return 0;
}
