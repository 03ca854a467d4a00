/*
 * test_pvm_real.h - run a piece of code against PVM 3.4.6's own libpvm3
 * (Debian's libpvm3 package), for the tests that compare our bytes and
 * texts with PVM's.
 *
 * The code runs in a child process that dlopen()s PVM's library, so that
 * its globals, its attempts to reach a pvmd and its exit() on error never
 * touch the test process.  Packing, buffers and error texts work in PVM
 * without a daemon: each call tries to enroll, fails, and goes on.  The
 * child sets PVM_ALLOW_ROOT (PVM exits when run as root otherwise) and
 * points PVM_TMP at a directory with no pvmd address file, so that it
 * never joins a real virtual machine that happens to be running.  A test
 * that finds no PVM library skips and says why.
 *
 * The test binaries do not export their own pvm_* symbols (no -rdynamic),
 * so PVM's library binds its internal calls to itself.
 */
#ifndef TEST_PVM_REAL_H
#define TEST_PVM_REAL_H

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define REAL_PVM_UNUSED __attribute__((unused))

/* PVM's libpvm3.so.3, or NULL.  LVM_REAL_LIBPVM3 overrides the search. */
static REAL_PVM_UNUSED const char *
real_pvm_lib(void)
{
    static const char *const paths[] = {
        "/usr/lib/x86_64-linux-gnu/libpvm3.so.3",
        "/usr/lib/aarch64-linux-gnu/libpvm3.so.3",
        "/usr/lib64/libpvm3.so.3",
        "/usr/lib/libpvm3.so.3",
    };
    const char *env = getenv("LVM_REAL_LIBPVM3");
    size_t i;

    if (env != NULL && access(env, R_OK) == 0)
        return env;
    for (i = 0; i < sizeof paths / sizeof paths[0]; i++)
        if (access(paths[i], R_OK) == 0)
            return paths[i];
    return NULL;
}

/* A symbol of PVM's library, or exit the child: a missing one is a failure. */
static REAL_PVM_UNUSED void *
real_pvm_sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);

    if (p == NULL) {
        dprintf(2, "real libpvm3 has no %s\n", name);
        _exit(4);
    }
    return p;
}

static REAL_PVM_UNUSED void
real_pvm_write(int fd, const void *p, size_t n)
{
    const char *c = p;

    while (n > 0) {
        ssize_t w = write(fd, c, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(5);
        c += w;
        n -= (size_t)w;
    }
}

/*
 * PVM packs XDR through libtirpc, which it pulls in when it is dlopen()ed.
 * AddressSanitizer intercepts the xdr_* functions and looks the real ones
 * up once, at start-up, before libtirpc is loaded, so under ASan PVM's
 * packing jumps to NULL.  The byte comparisons therefore run in the plain
 * build; the sanitizer build checks our side alone.
 */
#if defined(__SANITIZE_ADDRESS__)
#define REAL_PVM_XDR_BROKEN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REAL_PVM_XDR_BROKEN 1
#endif
#endif

/* Why PVM's packing (XDR or not) cannot be compared here, or NULL if it can. */
static REAL_PVM_UNUSED const char *
real_pvm_pack_unusable(int xdr)
{
    if (real_pvm_lib() == NULL)
        return "PVM's libpvm3 is missing; apt-get install libpvm3 to compare with it";
#ifdef REAL_PVM_XDR_BROKEN
    if (xdr)
        return "PVM's XDR (libtirpc, loaded by dlopen) cannot run under AddressSanitizer; "
               "the plain build compares with PVM";
#else
    (void)xdr;
#endif
    return NULL;
}

typedef void (*real_pvm_fn)(void *lib, int out, void *arg);

/*
 * Run fn(lib, out, arg) in a child with PVM's library loaded; what fn
 * writes to out comes back in buf (at most cap bytes, the rest dropped).
 * With stderr_too, the child's stderr goes to out as well; otherwise to
 * /dev/null (PVM complains there about the missing pvmd on every call),
 * unless LVM_REAL_PVM_STDERR is set.
 * Returns the number of bytes, or -1 if the child failed.
 */
static REAL_PVM_UNUSED ssize_t
real_pvm_run(real_pvm_fn fn, void *arg, int stderr_too, void *buf, size_t cap)
{
    const char *path = real_pvm_lib();
    char *b = buf;
    size_t got = 0;
    int fds[2], status;
    pid_t pid;

    if (path == NULL || pipe(fds) < 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        void *lib;
        int null = open("/dev/null", O_WRONLY);

        close(fds[0]);
        /* LVM_REAL_PVM_STDERR=1 shows the child's complaints, for debugging. */
        if (getenv("LVM_REAL_PVM_STDERR") == NULL)
            dup2(stderr_too ? fds[1] : null, 2);
        setenv("PVM_ALLOW_ROOT", "1", 1);
        setenv("PVM_TMP", "/nonexistent-liquidvm-test", 1);
        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL)
            _exit(3);
        fn(lib, fds[1], arg);
        _exit(0);
    }
    close(fds[1]);
    for (;;) {
        char tmp[4096];
        ssize_t r = read(fds[0], tmp, sizeof tmp);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (got < cap) {
            size_t n = (size_t)r < cap - got ? (size_t)r : cap - got;

            memcpy(b + got, tmp, n);
            got += n;
        }
    }
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return (ssize_t)got;
}

#endif
