/*
 * kern_cache.c - the cache size tiles are sized for, read from sysfs.
 *
 * The only file of kernels/ that reads the system (seed 000 s6 item 4:
 * automatic cache discovery is "necessary" on heterogeneous clusters).  The
 * configuration's cache_bytes overrides it per host; kern_cache_bytes()
 * applies that rule so every caller falls back the same way.
 *
 * Which level: the thesis sized its tiles for the 256 KB L2 of its nodes.
 * We take cpu0's level-2 data or unified cache, the largest cache private to
 * a core on current CPUs (L3 is shared between cores, and in a virtual
 * machine with other tenants), else its level-1 data cache.
 *
 * The last level (kern_llc_detect) is read for another question: whether a
 * worker's boxes stay cached between sweeps, which decides whether
 * Jacobi's temporal blocking pays.  Its share per CPU is what one worker
 * can count on.
 */
#include "kern_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KERN_SYSFS_CACHE "/sys/devices/system/cpu/cpu0/cache"
#define KERN_CACHE_INDEXES 16

/* Read the first line of dir/index<n>/<name> into buf; 0 or -EINVAL. */
static int read_attr(const char *dir, int n, const char *name, char *buf, size_t len)
{
    char path[512];
    FILE *f;
    int ok;

    if (snprintf(path, sizeof(path), "%s/index%d/%s", dir, n, name) >= (int)sizeof(path))
        return -EINVAL;
    f = fopen(path, "re");
    if (f == NULL)
        return -EINVAL;
    ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (!ok)
        return -EINVAL;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* "32K", "1024K", "2M", "65536": bytes, or 0 if unreadable. */
static size_t parse_size(const char *s)
{
    unsigned long long v = 0;
    const char *p = s;

    if (*p < '0' || *p > '9')
        return 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (SIZE_MAX - 9) / 10)
            return 0;
        v = v * 10 + (unsigned long long)(*p - '0');
    }
    switch (*p) {
    case 'K':
    case 'k':
        v = v > SIZE_MAX >> 10 ? 0 : v << 10;
        p++;
        break;
    case 'M':
    case 'm':
        v = v > SIZE_MAX >> 20 ? 0 : v << 20;
        p++;
        break;
    case 'G':
    case 'g':
        v = v > SIZE_MAX >> 30 ? 0 : v << 30;
        p++;
        break;
    default:
        break;
    }
    if (*p != '\0' && *p != 'B' && *p != 'i')
        return 0;
    return (size_t)v;
}

/* Index n of dir, if it is a data or unified cache: its level (the size
 * in *size, 0 if unreadable); else -1. */
static int data_cache(const char *dir, int n, size_t *size)
{
    char level[32], type[32], sz[64], *end;
    long lv;

    if (read_attr(dir, n, "level", level, sizeof(level)) != 0
        || read_attr(dir, n, "type", type, sizeof(type)) != 0
        || read_attr(dir, n, "size", sz, sizeof(sz)) != 0)
        return -1;
    if (strcmp(type, "Data") != 0 && strcmp(type, "Unified") != 0)
        return -1;
    lv = strtol(level, &end, 10);
    if (end == level || *end != '\0' || lv < 1 || lv > 9)
        return -1;
    *size = parse_size(sz);
    return (int)lv;
}

int kern_cache_detect_at(const char *dir, size_t *bytes)
{
    size_t l1 = 0, l2 = 0;

    if (dir == NULL || bytes == NULL)
        return -EINVAL;
    for (int n = 0; n < KERN_CACHE_INDEXES; n++) {
        size_t sz;
        int lv = data_cache(dir, n, &sz);

        if (lv == 1 && sz > l1)
            l1 = sz;
        else if (lv == 2 && sz > l2)
            l2 = sz;
    }
    if (l2 == 0 && l1 == 0)
        return -EINVAL;
    *bytes = l2 != 0 ? l2 : l1;
    return 0;
}

/* CPUs in a list such as "0-3,8,10-11"; 0 if it does not parse. */
static int count_cpus(const char *s)
{
    int n = 0;

    while (*s != '\0') {
        char *end;
        long a = strtol(s, &end, 10), b;

        if (end == s || a < 0)
            return 0;
        b = a;
        s = end;
        if (*s == '-') {
            b = strtol(s + 1, &end, 10);
            if (end == s + 1 || b < a || b - a > 65536)
                return 0;
            s = end;
        }
        n += (int)(b - a + 1);
        if (n > 65536)
            return 0;
        if (*s == ',')
            s++;
        else if (*s != '\0')
            return 0;
    }
    return n;
}

int kern_llc_detect_at(const char *dir, size_t *bytes)
{
    size_t best = 0;
    int top = 0, sharing = 1;

    if (dir == NULL || bytes == NULL)
        return -EINVAL;
    for (int n = 0; n < KERN_CACHE_INDEXES; n++) {
        char list[4096];
        size_t sz;
        int lv = data_cache(dir, n, &sz);

        if (lv < 0 || sz == 0 || lv < top || (lv == top && sz <= best))
            continue;
        top = lv;
        best = sz;
        sharing = 1;
        if (read_attr(dir, n, "shared_cpu_list", list, sizeof(list)) == 0 &&
            (sharing = count_cpus(list)) < 1)
            sharing = 1;
    }
    if (best == 0)
        return -EINVAL;
    *bytes = best / (size_t)sharing;
    return 0;
}

int kern_llc_detect(size_t *bytes)
{
    return kern_llc_detect_at(KERN_SYSFS_CACHE, bytes);
}

/* A configured size as a size_t (SIZE_MAX if it does not fit). */
static size_t configured_size(uint64_t configured)
{
    return (uint64_t)(size_t)configured == configured ? (size_t)configured : SIZE_MAX;
}

size_t kern_llc_bytes(uint64_t configured)
{
    size_t b;

    if (configured != 0)
        return configured_size(configured);
    return kern_llc_detect(&b) == 0 ? b : 0;
}

int kern_cache_detect(size_t *bytes)
{
    return kern_cache_detect_at(KERN_SYSFS_CACHE, bytes);
}

size_t kern_cache_bytes(uint64_t configured)
{
    size_t b;

    if (configured != 0)
        return configured_size(configured);
    if (kern_cache_detect(&b) == 0)
        return b;
    return KERN_CACHE_DEFAULT;
}

size_t kern_cache_elems(size_t bytes)
{
    size_t e = bytes / sizeof(double), p = KERN_TK;

    while (p * 2 <= e && p * 2 <= KERN_CACHE_MAX_ELEMS)
        p *= 2;
    return p;
}
