/*
 * log.c - the sink behind log.h: a timestamp, the host, the level, the tag.
 * Lines are written with one write(2) each so that several daemons sharing
 * a terminal or file do not interleave inside a line.
 */
#include "log.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int log__level = LOG_LVL_INFO;
static int log_fd = STDERR_FILENO;
static char log_ident[64] = "-";

static const char *const level_names[] = { "error", "warn", "info", "debug" };

void
log_init(const char *ident, int level)
{
    snprintf(log_ident, sizeof(log_ident), "%s", ident ? ident : "-");
    log_set_level(level);
}

void
log_set_level(int level)
{
    if (level < LOG_LVL_ERR)
        level = LOG_LVL_ERR;
    if (level > LOG_LVL_DEBUG)
        level = LOG_LVL_DEBUG;
    log__level = level;
}

int
log_open_file(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    if (log_fd != STDERR_FILENO)
        close(log_fd);
    log_fd = fd;
    return 0;
}

void
log__emit(int level, const char *tag, int code, const char *fmt, ...)
{
    char line[2048];
    struct timeval tv;
    struct tm tm;
    size_t n;
    int saved = errno;

    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    n = strftime(line, sizeof(line), "%Y-%m-%d %H:%M:%S", &tm);
    n += (size_t)snprintf(line + n, sizeof(line) - n, ".%03d %s %s %s: ", (int)(tv.tv_usec / 1000),
                          log_ident, level_names[level], tag);
    if (n < sizeof(line)) {
        va_list ap;
        va_start(ap, fmt);
        int m = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
        va_end(ap);
        /* What came from a task or a peer may hold control characters: no
         * byte of it may end the line or forge another. */
        for (size_t i = n; m > 0 && i < sizeof(line) && line[i] != '\0'; i++)
            if ((unsigned char)line[i] < 0x20 ? line[i] != '\t' : line[i] == 0x7f)
                line[i] = '?';
        if (m > 0)
            n += (size_t)m;
    }
    if (code != 0 && n < sizeof(line))
        n += (size_t)snprintf(line + n, sizeof(line) - n, ": %s", wire_strerror(code));
    /* A line too long for the buffer is cut, and says so. */
    if (n >= sizeof(line) - 1) {
        n = sizeof(line) - 1;
        memcpy(line + n - 3, "...", 3);
    }
    line[n++] = '\n';
    ssize_t w = write(log_fd, line, n);
    (void)w;
    errno = saved;
}
