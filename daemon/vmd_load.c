/*
 * vmd_load.c - the daemon as its host's load sensor (issue 8, Sense; seed
 * 002's per-platform agent reporting dynamic host information to a
 * central decision maker).
 *
 * Every load_interval a timer on the loop samples the host: online CPUs
 * and busy time from /proc/stat, the load average, memory from
 * /proc/meminfo, the CPU time of the VM's own processes (this daemon, its
 * tasks and their descendants, from /proc/PID/stat) and the CPU quota of
 * the daemon's cgroup (v1 cpu controller or v2 cpu.max, the tightest
 * limit on the way up to the hierarchy's root) with its throttling.  The
 * CPU time used outside the VM is the host's busy time minus the VM's.
 * The sample goes to every peer as WIRE_T_LOAD, so every daemon holds the
 * latest sample of every host and answers vmctl conf and a task's
 * WIRE_T_REQ_LOAD from its own table, as it answers conf.
 *
 * A quota is a setting, not a rate: between samples, every quota_interval
 * a second timer reads the quotas of the cgroups the sample found (a file
 * or two each), and a change goes to the peers at once with the capacity
 * it makes, the rates staying those of the last sample.  The owner who
 * takes a workstation back by lowering the VM's quota is seen within
 * quota_interval, not within load_interval: in the liquid scenario a
 * plan missed a cut when the sample came after the epoch's end.
 *
 * Reading /proc is a handful of small reads of kernel-generated files,
 * done on the loop thread: they do not block on I/O.  Anything missing or
 * malformed leaves its fields unknown (-1), and is never fatal.
 */
#define LOG_TAG "load"
#include "log.h"
#include "vmd.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOAD_TEXT_MAX (256 * 1024)  /* the largest /proc or cgroup file read */
#define LOAD_PROCS_MAX (1 << 20)    /* processes scanned in one sample */
#define LOAD_CHAIN_MAX 256          /* parent links followed to find a VM process */
#define LOAD_CG_DEPTH 16            /* cgroup levels whose quotas the watch reads */

struct vmd_load_sampler {
    struct vmd *vmd;
    uv_timer_t timer;
    uv_timer_t qtimer;              /* the quota watch; on when quota_interval < load_interval */
    int qtimer_on;
    int open_handles;               /* freed when the last one is closed */
    /* The cgroups from the daemon's up to the hierarchy's root, as the
     * last sample found them: what the quota watch reads. */
    char cg_dirs[LOAD_CG_DEPTH][1024];
    int cg_ndirs;
    int cg_v2;
    char *text;                     /* LOAD_TEXT_MAX bytes of scratch */
    long clk_tck;
    /* The previous sample, for the differences. */
    int have_cpu;
    struct vmd_cpu_times cpu;
    int have_procs;
    struct vmd_proc_times *procs;   /* the VM's processes, sorted by pid */
    size_t nprocs;
    int have_cg;
    char cg_stat_path[1024];        /* the cpu.stat of the limiting cgroup */
    struct vmd_cg_stat cg;
    int cg_logged;
    /* The latest sample of this host. */
    struct wire_load self;
    uint64_t self_at;
    int have_self;
    uint64_t kernel;                /* this kernel's boot_id, hashed; 0 unknown */
};

/* ---- parsers: pure functions on one file's text ---- */

/* Up to max unsigned decimal numbers from p; stops at a newline or
 * anything else.  Returns how many were read. */
static int
read_u64s(const char *p, uint64_t *v, int max)
{
    int n = 0;
    while (n < max) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!isdigit((unsigned char)*p))
            break;
        char *end;
        errno = 0;
        unsigned long long x = strtoull(p, &end, 10);
        if (errno == ERANGE)
            break;
        v[n++] = x;
        p = end;
    }
    return n;
}

int
vmd_load_parse_stat(const char *text, struct vmd_cpu_times *out)
{
    int have = 0;
    memset(out, 0, sizeof(*out));
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (strncmp(l, "cpu", 3) != 0)
            continue;
        if (isdigit((unsigned char)l[3])) {
            out->ncpus++;
            continue;
        }
        if (l[3] != ' ' || have)
            continue;
        /* user nice system idle iowait irq softirq steal (guest time is
         * already inside user and nice). */
        uint64_t v[8] = { 0 };
        int n = read_u64s(l + 3, v, 8);
        if (n < 4)
            return -EINVAL;
        out->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
        out->total = out->busy + v[3] + v[4];
        have = 1;
    }
    return have && out->ncpus > 0 ? 0 : -EINVAL;
}

int
vmd_load_parse_loadavg(const char *text, double *load1)
{
    char *end;
    if (!isdigit((unsigned char)text[0]))
        return -EINVAL;
    double v = strtod(text, &end);
    if (end == text || !(v >= 0.0 && v < 1e7) || (*end != ' ' && *end != '\n' && *end))
        return -EINVAL;
    *load1 = v;
    return 0;
}

/* The value of a "Key:   123 kB" line of /proc/meminfo, in bytes. */
static int
meminfo_value(const char *text, const char *key, uint64_t *bytes)
{
    size_t klen = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (strncmp(l, key, klen) != 0 || l[klen] != ':')
            continue;
        uint64_t v;
        const char *p = l + klen + 1;
        if (read_u64s(p, &v, 1) != 1)
            return -EINVAL;
        while (*p == ' ' || *p == '\t')
            p++;
        while (isdigit((unsigned char)*p))
            p++;
        if (strncmp(p, " kB", 3) == 0) {
            if (v > UINT64_MAX / 1024)
                return -EINVAL;
            v *= 1024;
        } else if (*p != '\n' && *p != '\0') {
            return -EINVAL;
        }
        *bytes = v;
        return 0;
    }
    return -ENOENT;
}

int
vmd_load_parse_meminfo(const char *text, uint64_t *total, uint64_t *avail)
{
    uint64_t t, a, fr, bu, ca;
    if (meminfo_value(text, "MemTotal", &t) != 0 || t == 0)
        return -EINVAL;
    int rc = meminfo_value(text, "MemAvailable", &a);
    if (rc == -ENOENT) {
        /* Kernels before 3.14: free memory plus the page cache. */
        if (meminfo_value(text, "MemFree", &fr) || meminfo_value(text, "Buffers", &bu) ||
            meminfo_value(text, "Cached", &ca))
            return -EINVAL;
        a = fr + bu + ca;
    } else if (rc != 0) {
        return -EINVAL;
    }
    *total = t;
    *avail = a < t ? a : t;
    return 0;
}

int
vmd_load_parse_procstat(const char *text, struct vmd_proc_times *out)
{
    char *end;
    long long v[19];
    if (!isdigit((unsigned char)text[0]))
        return -EINVAL;
    errno = 0;
    long pid = strtol(text, &end, 10);
    if (errno || pid <= 0 || strncmp(end, " (", 2) != 0)
        return -EINVAL;
    /* The command name may itself hold ") ", so its end is the last ')'. */
    const char *p = strrchr(end, ')');
    if (p == NULL || p[1] != ' ' || p[2] == '\0' || p[3] != ' ')
        return -EINVAL;
    p += 4;     /* past ") S " */
    for (int i = 0; i < 19; i++) {
        while (*p == ' ')
            p++;
        if (!(isdigit((unsigned char)*p) || (*p == '-' && isdigit((unsigned char)p[1]))))
            return -EINVAL;
        errno = 0;
        v[i] = strtoll(p, &end, 10);
        if (errno)
            return -EINVAL;
        p = end;
    }
    /* v: ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
     *    utime stime cutime cstime priority nice threads itreal starttime */
    if (v[0] < 0 || v[10] < 0 || v[11] < 0 || v[12] < 0 || v[13] < 0 || v[18] < 0)
        return -EINVAL;
    out->pid = pid;
    out->ppid = (long)v[0];
    out->cpu = (uint64_t)v[10] + (uint64_t)v[11] + (uint64_t)v[12] + (uint64_t)v[13];
    out->start = (uint64_t)v[18];
    return 0;
}

static int
copy_field(char *dst, size_t cap, const char *src, size_t n)
{
    if (n >= cap)
        return -EINVAL;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return 0;
}

/* Is tok (n bytes) one of the comma-separated words of list (len bytes)? */
static int
has_word(const char *list, size_t len, const char *tok)
{
    size_t tn = strlen(tok);
    const char *end = list + len;
    while (list < end) {
        const char *c = memchr(list, ',', (size_t)(end - list));
        size_t n = c ? (size_t)(c - list) : (size_t)(end - list);
        if (n == tn && memcmp(list, tok, n) == 0)
            return 1;
        list += n + 1;
    }
    return 0;
}

int
vmd_load_parse_cgroup(const char *text, char *v1, size_t v1cap, char *v2, size_t v2cap)
{
    v1[0] = v2[0] = '\0';
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        const char *c1 = memchr(l, ':', len);
        const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - l)) : NULL;
        if (c2 == NULL || c1 == l)
            continue;
        const char *path = c2 + 1;
        size_t plen = len - (size_t)(path - l);
        if (plen == 0 || path[0] != '/')
            continue;
        if (c1 - l == 1 && l[0] == '0' && c2 == c1 + 1) {
            if (v2[0] == '\0' && copy_field(v2, v2cap, path, plen) != 0)
                return -EINVAL;
        } else if (has_word(c1 + 1, (size_t)(c2 - c1 - 1), "cpu")) {
            if (v1[0] == '\0' && copy_field(v1, v1cap, path, plen) != 0)
                return -EINVAL;
        }
    }
    return v1[0] || v2[0] ? 0 : -EINVAL;
}

/* Copy a mountinfo path field, undoing its octal escapes (\040 for a space). */
static int
copy_mount_path(char *dst, size_t cap, const char *src, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = src[i];
        if (ch == '\\' && i + 3 < n && src[i + 1] >= '0' && src[i + 1] <= '3' &&
            src[i + 2] >= '0' && src[i + 2] <= '7' && src[i + 3] >= '0' && src[i + 3] <= '7') {
            ch = (char)((src[i + 1] - '0') * 64 + (src[i + 2] - '0') * 8 + (src[i + 3] - '0'));
            i += 3;
        }
        if (o + 1 >= cap || ch == '\0')
            return -EINVAL;
        dst[o++] = ch;
    }
    dst[o] = '\0';
    return 0;
}

int
vmd_load_parse_mountinfo(const char *text, struct vmd_cg_mounts *out)
{
    memset(out, 0, sizeof(*out));
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        /* id parent maj:min root mountpoint options [optional...] - fstype source super */
        const char *f[64];
        size_t fl[64];
        int nf = 0;
        for (size_t i = 0; i < len && nf < 64;) {
            while (i < len && l[i] == ' ')
                i++;
            if (i == len)
                break;
            size_t s = i;
            while (i < len && l[i] != ' ')
                i++;
            f[nf] = l + s;
            fl[nf++] = i - s;
        }
        int dash = -1;
        for (int i = 6; i < nf; i++)
            if (fl[i] == 1 && f[i][0] == '-') {
                dash = i;
                break;
            }
        if (dash < 0 || dash + 1 >= nf)
            continue;
        const char *fstype = f[dash + 1];
        size_t ftl = fl[dash + 1];
        const char *super = dash + 3 < nf ? f[dash + 3] : "";
        size_t sl = dash + 3 < nf ? fl[dash + 3] : 0;
        if (ftl == 6 && memcmp(fstype, "cgroup", 6) == 0 && has_word(super, sl, "cpu") &&
            out->v1_dir[0] == '\0') {
            if (copy_mount_path(out->v1_root, sizeof(out->v1_root), f[3], fl[3]) ||
                copy_mount_path(out->v1_dir, sizeof(out->v1_dir), f[4], fl[4]))
                return -EINVAL;
        } else if (ftl == 7 && memcmp(fstype, "cgroup2", 7) == 0 && out->v2_dir[0] == '\0') {
            if (copy_mount_path(out->v2_root, sizeof(out->v2_root), f[3], fl[3]) ||
                copy_mount_path(out->v2_dir, sizeof(out->v2_dir), f[4], fl[4]))
                return -EINVAL;
        }
    }
    return out->v1_dir[0] || out->v2_dir[0] ? 0 : -EINVAL;
}

/* One integer alone on the text's first line. */
static int
parse_one_ll(const char *text, long long *v)
{
    char *end;
    if (!(isdigit((unsigned char)text[0]) || (text[0] == '-' && isdigit((unsigned char)text[1]))))
        return -EINVAL;
    errno = 0;
    *v = strtoll(text, &end, 10);
    if (errno || (*end != '\n' && *end != '\0'))
        return -EINVAL;
    return 0;
}

int
vmd_load_parse_cfs(const char *quota, const char *period, double *cpus)
{
    long long q, p;
    if (parse_one_ll(quota, &q) || parse_one_ll(period, &p) || p <= 0)
        return -EINVAL;
    if (q == -1) {
        *cpus = 0.0;
        return 0;
    }
    if (q <= 0)
        return -EINVAL;
    *cpus = (double)q / (double)p;
    return 0;
}

int
vmd_load_parse_cpumax(const char *text, double *cpus)
{
    uint64_t p;
    const char *sp = strchr(text, ' ');
    if (sp == NULL || read_u64s(sp + 1, &p, 1) != 1 || p == 0)
        return -EINVAL;
    if (strncmp(text, "max ", 4) == 0) {
        *cpus = 0.0;
        return 0;
    }
    uint64_t q;
    if (!isdigit((unsigned char)text[0]) || read_u64s(text, &q, 1) != 1 || q == 0)
        return -EINVAL;
    *cpus = (double)q / (double)p;
    return 0;
}

int
vmd_load_parse_cgstat(const char *text, struct vmd_cg_stat *out)
{
    int have = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        uint64_t *dst = NULL;
        size_t kl = 0;
        if (strncmp(l, "nr_periods ", 11) == 0) {
            dst = &out->nr_periods;
            kl = 11;
        } else if (strncmp(l, "nr_throttled ", 13) == 0) {
            dst = &out->nr_throttled;
            kl = 13;
        }
        if (dst == NULL)
            continue;
        if (read_u64s(l + kl, dst, 1) != 1)
            return -EINVAL;
        have |= dst == &out->nr_periods ? 1 : 2;
    }
    return have == 3 ? 0 : -EINVAL;
}

double
vmd_load_capacity(int cpus, double ext_busy, double quota)
{
    if (cpus <= 0 || ext_busy < 0.0)
        return -1.0;
    double c = (double)cpus - ext_busy;
    if (quota > 0.0 && quota < c)
        c = quota;
    return c > 0.0 ? c : 0.0;
}

/* ---- reading the host ---- */

/* The whole of a small file, NUL-terminated, into buf; its length or -errno. */
static ssize_t
read_text(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            return -e;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    return (ssize_t)n;
}

static int
cmp_pid(const void *a, const void *b)
{
    const struct vmd_proc_times *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static struct vmd_proc_times *
find_pid(struct vmd_proc_times *v, size_t n, long pid)
{
    struct vmd_proc_times key = { .pid = pid };
    return n ? bsearch(&key, v, n, sizeof(*v), cmp_pid) : NULL;
}

/* Is pid this daemon or one of its tasks? */
static int
is_vm_root(struct vmd *vmd, long pid)
{
    if (pid == (long)getpid())
        return 1;
    for (struct vmd_list *l = vmd->tasks.next; l != &vmd->tasks; l = l->next) {
        struct vmd_task *t = vmd_container_of(l, struct vmd_task, link);
        if (t->pid == pid && pid > 0)
            return 1;
    }
    return 0;
}

/*
 * The CPU ticks the VM's processes used since the last scan, into *ticks
 * (-1 for the first scan).  A process counts with its own time and the
 * time of the children it reaped (cutime, cstime), so work of short-lived
 * descendants is not lost; a VM process that vanished was reaped into its
 * parent's cutime, so its time seen so far is taken off once.
 */
static int
scan_vm(struct vmd_load_sampler *s, double *ticks)
{
    DIR *d = opendir("/proc");
    if (d == NULL)
        return -errno;
    struct vmd_proc_times *all = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    char path[64];
    int rc = 0;
    while ((de = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)de->d_name[0]) || strlen(de->d_name) > 20)
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
        if (read_text(path, s->text, 4096) <= 0)
            continue;   /* it exited meanwhile */
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 256;
            struct vmd_proc_times *na;
            if (nc > LOAD_PROCS_MAX || (na = realloc(all, nc * sizeof(*na))) == NULL) {
                rc = -ENOMEM;
                break;
            }
            all = na;
            cap = nc;
        }
        if (vmd_load_parse_procstat(s->text, &all[n]) == 0)
            n++;
    }
    closedir(d);
    if (rc != 0) {
        free(all);
        return rc;
    }
    qsort(all, n, sizeof(*all), cmp_pid);

    /* Keep the VM's processes: those whose chain of parents reaches a root. */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        long pid = all[i].pid;
        int in = 0;
        for (int k = 0; k < LOAD_CHAIN_MAX && pid > 1 && !in; k++) {
            struct vmd_proc_times *p;
            if (is_vm_root(s->vmd, pid))
                in = 1;
            else if ((p = find_pid(all, n, pid)) == NULL)
                break;
            else
                pid = p->ppid;
        }
        if (in)
            all[m++] = all[i];
    }

    double d_ticks = 0.0;
    for (size_t i = 0; s->have_procs && i < m; i++) {
        struct vmd_proc_times *p = find_pid(s->procs, s->nprocs, all[i].pid);
        if (p && p->start == all[i].start)
            d_ticks += all[i].cpu >= p->cpu ? (double)(all[i].cpu - p->cpu) : 0.0;
        else if (find_pid(all, m, all[i].ppid))
            d_ticks += (double)all[i].cpu;  /* born into the VM since the last scan */
    }
    for (size_t i = 0; s->have_procs && i < s->nprocs; i++) {
        struct vmd_proc_times *p = find_pid(all, m, s->procs[i].pid);
        if ((p == NULL || p->start != s->procs[i].start) && find_pid(all, m, s->procs[i].ppid))
            d_ticks -= (double)s->procs[i].cpu;
    }
    *ticks = s->have_procs ? (d_ticks > 0.0 ? d_ticks : 0.0) : -1.0;
    free(s->procs);
    s->procs = all;
    s->nprocs = m;
    s->have_procs = 1;
    return 0;
}

/* Join a cgroup mount and the cgroup's path as /proc/self/cgroup names it. */
static int
cg_dir(const char *mnt, const char *root, const char *path, char *out, size_t cap)
{
    size_t rl = strlen(root);
    if (strcmp(root, "/") != 0) {
        /* The mount shows a subtree (a container): the path must lie in it. */
        if (strncmp(path, root, rl) != 0 || (path[rl] != '/' && path[rl] != '\0'))
            return -ENOENT;
        path += rl;
    }
    if (strcmp(path, "/") == 0)
        path = "";
    int n = snprintf(out, cap, "%s%s", mnt, path);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* The tighter of two quotas in CPUs, 0 meaning none. */
static double
cg_tighter(double quota, double q)
{
    return q > 0.0 && (quota == 0.0 || q < quota) ? q : quota;
}

/* The CPU quota of one cgroup directory in CPUs (0: none) into *q;
 * 0, or -1 when it has no readable limit. */
static int
cg_quota(struct vmd_load_sampler *s, const char *dir, int v2mode, double *q)
{
    char file[1100];

    if (v2mode) {
        snprintf(file, sizeof(file), "%s/cpu.max", dir);
        return read_text(file, s->text, 4096) > 0 && vmd_load_parse_cpumax(s->text, q) == 0
                   ? 0 : -1;
    }
    char period[64];

    snprintf(file, sizeof(file), "%s/cpu.cfs_period_us", dir);
    if (read_text(file, period, sizeof(period)) <= 0)
        return -1;
    snprintf(file, sizeof(file), "%s/cpu.cfs_quota_us", dir);
    return read_text(file, s->text, 4096) > 0 && vmd_load_parse_cfs(s->text, period, q) == 0
               ? 0 : -1;
}

/*
 * The tightest CPU quota from the daemon's cgroup up to its hierarchy's
 * root (a parent's limit binds its children too), into l->quota, and the
 * throttling of the cgroup that sets it.
 */
static void
sample_cgroup(struct vmd_load_sampler *s, struct wire_load *l)
{
    char v1[512], v2[512], dir[1024], file[1100], best[1024] = "";
    struct vmd_cg_mounts mi;
    double quota = 0.0;
    int v2mode = 0, read_any = 0, nlimits = 0;

    /* The watch reads only what this sample finds: nothing, if it fails. */
    s->cg_ndirs = 0;
    if (read_text("/proc/self/cgroup", s->text, LOAD_TEXT_MAX) < 0 ||
        vmd_load_parse_cgroup(s->text, v1, sizeof(v1), v2, sizeof(v2)) != 0 ||
        read_text("/proc/self/mountinfo", s->text, LOAD_TEXT_MAX) < 0 ||
        vmd_load_parse_mountinfo(s->text, &mi) != 0)
        return;
    if (v1[0] && mi.v1_dir[0]) {
        if (cg_dir(mi.v1_dir, mi.v1_root, v1, dir, sizeof(dir)) != 0)
            return;
    } else if (v2[0] && mi.v2_dir[0]) {
        if (cg_dir(mi.v2_dir, mi.v2_root, v2, dir, sizeof(dir)) != 0)
            return;
        v2mode = 1;
    } else {
        return;
    }
    const char *top = v2mode ? mi.v2_dir : mi.v1_dir;
    size_t toplen = strlen(top);
    s->cg_v2 = v2mode;
    for (;;) {
        double q;
        int ok = cg_quota(s, dir, v2mode, &q) == 0;
        if (ok) {
            read_any = 1;
            if (nlimits++ < LOAD_CG_DEPTH)
                vmd_strlcpy(s->cg_dirs[s->cg_ndirs++], dir, sizeof(s->cg_dirs[0]));
            if (cg_tighter(quota, q) != quota) {
                quota = q;
                vmd_strlcpy(best, dir, sizeof(best));
            }
        }
        /* Up one level, never above the hierarchy's mount point. */
        char *slash = strrchr(dir, '/');
        if (strlen(dir) <= toplen || slash == NULL || (size_t)(slash - dir) < toplen)
            break;
        *slash = '\0';
    }
    /* Deeper than the watch keeps, it would miss a limit above: the quota
     * is then read with the samples only. */
    if (nlimits > LOAD_CG_DEPTH)
        s->cg_ndirs = 0;
    if (!read_any) {
        /* The v2 root has no cpu.max, and a v2 tree without the cpu
         * controller has none anywhere: no limit we can see. */
        if (!v2mode)
            return;
    }
    l->quota = quota;
    if (!s->cg_logged) {
        log_info("cgroup %s: %s", dir[0] ? dir : top,
                 quota > 0.0 ? "has a CPU quota" : "no CPU quota");
        s->cg_logged = 1;
    }
    if (quota == 0.0) {
        l->throttled = 0.0;
        s->have_cg = 0;
        return;
    }
    struct vmd_cg_stat st;
    snprintf(file, sizeof(file), "%s/cpu.stat", best);
    if (read_text(file, s->text, 4096) < 0 || vmd_load_parse_cgstat(s->text, &st) != 0) {
        s->have_cg = 0;
        return;
    }
    if (s->have_cg && strcmp(s->cg_stat_path, file) == 0 && st.nr_periods >= s->cg.nr_periods &&
        st.nr_throttled >= s->cg.nr_throttled) {
        uint64_t dp = st.nr_periods - s->cg.nr_periods;
        uint64_t dt = st.nr_throttled - s->cg.nr_throttled;
        l->throttled = dp ? (double)(dt <= dp ? dt : dp) / (double)dp : 0.0;
    }
    vmd_strlcpy(s->cg_stat_path, file, sizeof(s->cg_stat_path));
    s->cg = st;
    s->have_cg = 1;
}

/* FNV-1a of the kernel's boot_id: the same on every daemon of one
 * machine, different after a reboot and between machines. */
uint64_t
vmd_load_kernel_id(const char *boot_id)
{
    uint64_t h = 14695981039346656037ULL;

    for (const char *p = boot_id; *p && *p != '\n'; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return h == 0 ? 1 : h;
}

/*
 * CPUs busy with the VM's processes of the other daemons on this kernel,
 * from their latest samples (fresh ones only: within three intervals).
 * Without it, daemons sharing a machine would count each other's workers
 * as their owners' load.
 */
static double
colocated_vm_busy(const struct vmd_load_sampler *s)
{
    const struct vmd *vmd = s->vmd;
    uint64_t now = uv_now(vmd->loop), fresh = (uint64_t)(3000.0 * vmd->conf.load_interval) + 1;
    double sum = 0.0;

    if (s->kernel == 0)
        return 0.0;
    for (int i = 1; i <= VMD_MAX_HOSTS; i++) {
        const struct vmd_host *h = vmd->hosts[i];

        if (h == NULL || i == vmd->index || !h->has_load || h->load.kernel != s->kernel ||
            h->load.vm_busy < 0.0 || now - h->load_at > fresh)
            continue;
        sum += h->load.vm_busy;
    }
    return sum;
}

static void
sample(struct vmd_load_sampler *s, struct wire_load *l)
{
    struct vmd_cpu_times cpu;
    double vm_ticks = -1.0;
    int have_cpu;

    wire_load_unknown(l);
    have_cpu = read_text("/proc/stat", s->text, LOAD_TEXT_MAX) > 0 &&
               vmd_load_parse_stat(s->text, &cpu) == 0;
    if (have_cpu)
        l->cpus = cpu.ncpus > WIRE_LOAD_MAX_CPUS ? WIRE_LOAD_MAX_CPUS : cpu.ncpus;
    if (read_text("/proc/loadavg", s->text, 4096) > 0)
        vmd_load_parse_loadavg(s->text, &l->load1);
    if (read_text("/proc/meminfo", s->text, LOAD_TEXT_MAX) > 0 &&
        vmd_load_parse_meminfo(s->text, &l->mem_total, &l->mem_avail) != 0)
        l->mem_total = l->mem_avail = 0;
    if (scan_vm(s, &vm_ticks) != 0) {
        free(s->procs);
        s->procs = NULL;
        s->nprocs = 0;
        s->have_procs = 0;
        vm_ticks = -1.0;
    }
    if (have_cpu && s->have_cpu && cpu.total > s->cpu.total && cpu.busy >= s->cpu.busy) {
        /* Ticks of one CPU's wall time over the interval, from the kernel's
         * own clock, so a late timer does not skew the shares. */
        double wall = (double)(cpu.total - s->cpu.total) / (double)l->cpus;
        double busy = (double)(cpu.busy - s->cpu.busy) / wall;
        l->interval = s->clk_tck > 0 ? wall / (double)s->clk_tck : 0.0;
        if (vm_ticks >= 0.0) {
            double vm = vm_ticks / wall, cpus = (double)l->cpus;
            l->vm_busy = vm < cpus ? vm : cpus;
            double ext = busy - l->vm_busy - colocated_vm_busy(s);
            l->ext_busy = ext < 0.0 ? 0.0 : ext > cpus ? cpus : ext;
        }
    }
    s->have_cpu = have_cpu;
    if (have_cpu)
        s->cpu = cpu;
    sample_cgroup(s, l);
    l->kernel = s->kernel;
    l->capacity = vmd_load_capacity(l->cpus, l->ext_busy, l->quota);
}

static void
broadcast(struct vmd *vmd, const struct wire_load *l)
{
    struct wire_wbuf b;
    struct vmd_list *lk, *next;
    struct wire_hdr h = { .type = WIRE_T_LOAD, .src = VMD_HOST_TID(vmd->index) };

    wire_wbuf_init(&b);
    wire_load_put(&b, l);
    for (lk = vmd->peers.next; b.err == 0 && lk != &vmd->peers; lk = next) {
        next = lk->next;
        struct vmd_peer *p = vmd_container_of(lk, struct vmd_peer, link);
        if (p->state == VMD_PEER_UP)
            vmd_peer_send(p, &h, b.data, b.len);
    }
    wire_wbuf_free(&b);
}

static void
load_on_timer(uv_timer_t *t)
{
    struct vmd_load_sampler *s = t->data;
    sample(s, &s->self);
    s->self_at = uv_now(s->vmd->loop);
    s->have_self = 1;
    if (s->vmd->index > 0)
        broadcast(s->vmd, &s->self);
}

/* Between samples: the quotas again, and a change to the peers at once. */
static void
quota_on_timer(uv_timer_t *t)
{
    struct vmd_load_sampler *s = t->data;
    double quota = 0.0, q;
    int read_any = 0;

    if (!s->have_self || s->cg_ndirs == 0)
        return; /* the last sample read no quota file, or too deep a chain */
    for (int i = 0; i < s->cg_ndirs; i++)
        if (cg_quota(s, s->cg_dirs[i], s->cg_v2, &q) == 0) {
            read_any = 1;
            quota = cg_tighter(quota, q);
        }
    if (!read_any || quota == s->self.quota)
        return;
    log_info("CPU quota %.3g -> %.3g CPUs", s->self.quota, quota);
    s->self.quota = quota;
    s->self.capacity = vmd_load_capacity(s->self.cpus, s->self.ext_busy, quota);
    if (s->vmd->index > 0)
        broadcast(s->vmd, &s->self);
}

static void
load_on_close(uv_handle_t *h)
{
    struct vmd_load_sampler *s = h->data;
    if (--s->open_handles > 0)
        return;
    free(s->procs);
    free(s->text);
    free(s);
}

int
vmd_load_start(struct vmd *vmd)
{
    struct vmd_load_sampler *s = calloc(1, sizeof(*s));
    if (s == NULL || (s->text = malloc(LOAD_TEXT_MAX)) == NULL) {
        free(s);
        return -ENOMEM;
    }
    s->vmd = vmd;
    s->clk_tck = sysconf(_SC_CLK_TCK);
    if (read_text("/proc/sys/kernel/random/boot_id", s->text, 4096) > 0)
        s->kernel = vmd_load_kernel_id(s->text);
    uv_timer_init(vmd->loop, &s->timer);
    s->timer.data = s;
    uint64_t ms = (uint64_t)(vmd->conf.load_interval * 1000.0);
    if (ms == 0)
        ms = 1;
    s->open_handles = 1;
    /* A first sample now, as the base of the first differences, which
     * come a tenth of a second later: a job started with the VM plans
     * with its hosts' shares, not with whole CPUs. */
    load_on_timer(&s->timer);
    uv_timer_start(&s->timer, load_on_timer, ms < 100 ? ms : 100, ms);
    uint64_t qms = (uint64_t)(vmd->conf.quota_interval * 1000.0);
    if (qms == 0)
        qms = 1;
    if (qms < ms) {
        uv_timer_init(vmd->loop, &s->qtimer);
        s->qtimer.data = s;
        s->qtimer_on = 1;
        s->open_handles++;
        uv_timer_start(&s->qtimer, quota_on_timer, qms, qms);
    }
    vmd->sampler = s;
    return 0;
}

void
vmd_load_stop(struct vmd *vmd)
{
    struct vmd_load_sampler *s = vmd->sampler;
    if (s == NULL)
        return;
    vmd->sampler = NULL;
    if (s->qtimer_on)
        uv_close((uv_handle_t *)&s->qtimer, load_on_close);
    uv_close((uv_handle_t *)&s->timer, load_on_close);
}

int
vmd_load_on_peer(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                 const unsigned char *body)
{
    struct vmd_peer *p = from->peer;
    struct wire_rbuf r;
    struct wire_load l;
    int rc;

    wire_rbuf_init(&r, body, h->len);
    if ((rc = wire_load_get(&r, &l)) != 0) {
        log_warn("peer %s: malformed load sample", p->name);
        return rc;
    }
    /* Samples of a link not yet bound to a host in our table are dropped;
     * the next one, a load_interval later, finds it bound. */
    if (p->host == NULL)
        return 0;
    p->host->load = l;
    p->host->load_at = uv_now(vmd->loop);
    p->host->has_load = 1;
    return 0;
}

void
vmd_load_pack_all(struct vmd *vmd, struct wire_wbuf *b)
{
    uint64_t now = uv_now(vmd->loop);
    struct vmd_load_sampler *s = vmd->sampler;

    wire_put_u32(b, (uint32_t)vmd_host_count(vmd, 0));
    for (int i = 1; i <= VMD_MAX_HOSTS; i++) {
        const struct vmd_host *h = vmd->hosts[i];
        struct wire_load unknown;
        const struct wire_load *l = &unknown;
        uint64_t age = UINT64_MAX;      /* no sample yet */
        if (h == NULL)
            continue;
        wire_load_unknown(&unknown);
        if (i == vmd->index && s && s->have_self) {
            l = &s->self;
            age = now - s->self_at;
        } else if (i != vmd->index && h->has_load) {
            l = &h->load;
            age = now - h->load_at;
        }
        wire_put_u32(b, VMD_HOST_TID(h->index));
        wire_put_str(b, h->name);
        wire_put_u64(b, age);
        wire_load_put(b, l);
    }
}

int
vmd_load_request(struct vmd *vmd, const struct vmd_from *from, const struct wire_hdr *h,
                 const unsigned char *body)
{
    struct wire_wbuf b;
    (void)body;
    if (h->len != 0)
        return WIRE_EFRAME;
    wire_wbuf_init(&b);
    vmd_load_pack_all(vmd, &b);
    if (b.err)
        vmd_answer(vmd, from, h, b.err, NULL);
    else
        vmd_answer(vmd, from, h, 0, &b);
    wire_wbuf_free(&b);
    return 0;
}

static void
load_halt(struct vmd *vmd)
{
    vmd_load_stop(vmd);
}

const struct vmd_hooks vmd_load_hooks = {
    .module = "load",
    .halt = load_halt,
};
