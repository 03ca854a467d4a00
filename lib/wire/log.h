/*
 * log.h - levelled, printf-checked logging for the daemon, the launcher and
 * libpvm3's debug output (STYLE.md 5.7).  decomp/ and kernels/ never log.
 *
 * Each .c that logs defines LOG_TAG ("peer", "tls", ...) before including
 * this header.  The macros test the level before evaluating their arguments.
 * One line per event: "2026-11-22 09:41:07.123 host0 info peer: text".
 * The process-wide sink (stderr, or a file once daemonised) is set once at
 * start-up by log_init()/log_open_file(); it is the one piece of process
 * state outside the loop context, as in OpenBSD's log.c.
 */
#ifndef LIQUIDVM_LOG_H
#define LIQUIDVM_LOG_H

#ifndef LOG_TAG
#define LOG_TAG "main"
#endif

enum log_level { LOG_LVL_ERR = 0, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

extern int log__level;

/* ident: the host name shown on every line; level: enum log_level. */
void log_init(const char *ident, int level);
void log_set_level(int level);
/* Send lines to path (appended, created 0600).  Returns 0 or -errno. */
int log_open_file(const char *path);
void log__emit(int level, const char *tag, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define log__at(lvl, code, ...)                                               \
    do {                                                                      \
        if (log__level >= (lvl))                                              \
            log__emit((lvl), LOG_TAG, (code), __VA_ARGS__);                   \
    } while (0)

#define log_err(...) log__at(LOG_LVL_ERR, 0, __VA_ARGS__)
#define log_warn(...) log__at(LOG_LVL_WARN, 0, __VA_ARGS__)
#define log_info(...) log__at(LOG_LVL_INFO, 0, __VA_ARGS__)
#define log_debug(...) log__at(LOG_LVL_DEBUG, 0, __VA_ARGS__)
/* A warning that ends with ": " and the text of a negative code. */
#define log_code(code, ...) log__at(LOG_LVL_WARN, (code), __VA_ARGS__)

#endif
