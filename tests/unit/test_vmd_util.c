/*
 * test_vmd_util.c - daemon/vmd_util.c: shell quoting for the hoststart
 * command line, vmd_strlcpy and the intrusive list.
 *
 * Quoting is checked the only way that matters: the quoted word is handed
 * to /bin/sh as the argument of printf %s, and what the shell prints must be
 * the input, byte for byte.  Fixed expected strings pin the exact form, and
 * every capacity short of the needed one must fail without writing past it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmd.h"

/* Run sh -c cmd and return what it printed (malloc'ed). */
static char *
sh_run(const char *cmd, int *status)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t len = 0, cap = 256;
    char *out = malloc(cap);
    assert_non_null(out);
    for (;;) {
        if (len + 1 == cap) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        ssize_t n = read(fds[0], out + len, cap - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    out[len] = '\0';
    close(fds[0]);
    assert_int_equal(waitpid(pid, status, 0), pid);
    return out;
}

/* Run sh -c "printf %s <word>". */
static char *
sh_printf(const char *word, int *status)
{
    size_t cmdlen = strlen(word) + 16;
    char *cmd = malloc(cmdlen);
    assert_non_null(cmd);
    snprintf(cmd, cmdlen, "printf %%s %s", word);
    char *out = sh_run(cmd, status);
    free(cmd);
    return out;
}

static void
assert_shell_round_trip(const char *s)
{
    size_t cap = 4 * strlen(s) + 3;
    char *q = malloc(cap);
    int status;

    assert_non_null(q);
    assert_int_equal(vmd_shell_quote(s, q, cap), 0);
    char *out = sh_printf(q, &status);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    if (strcmp(out, s) != 0)
        fail_msg("quoted %s as %s; the shell printed %s", s, q, out);
    free(out);
    free(q);
}

static const char *const hostile[] = {
    "plain",
    "node-3.example.org",
    "with spaces  and\ttabs",
    "it's",
    "'",
    "''",
    "'leading and trailing'",
    "\\'",
    "$(echo injected)",
    "`echo injected`",
    "${HOME}",
    "$HOME",
    "a;echo injected",
    "a && echo injected",
    "a | cat",
    "> /tmp/should-not-exist-lvm",
    "\"double\" quotes",
    "back\\slash\\",
    "*",
    "~",
    "-n",
    "%s%d%%",
    "line\nbreak",
    "'; echo injected; echo '",
    "'\"'\"'$(x)`y`\\",
};

static void
test_vmd_shell_quote_survives_the_shell(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
        assert_shell_round_trip(hostile[i]);
    /* Every byte from 1 to 255 in one word. */
    char all[256];
    for (int c = 1; c < 256; c++)
        all[c - 1] = (char)c;
    all[255] = '\0';
    assert_shell_round_trip(all);
}

static void
test_vmd_shell_quote_quotes_the_empty_string(void **state)
{
    char q[8];
    int status;

    (void)state;
    assert_int_equal(vmd_shell_quote("", q, sizeof(q)), 0);
    assert_string_equal(q, "''");
    /* An empty word is still one argument: "[][x]", not "[x]". */
    char cmd[32];
    snprintf(cmd, sizeof(cmd), "printf '[%%s]' %s x", q);
    char *out = sh_run(cmd, &status);
    assert_string_equal(out, "[][x]");
    free(out);
}

static void
test_vmd_shell_quote_exact_forms(void **state)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        { "a", "'a'" },
        { "a b", "'a b'" },
        { "it's", "'it'\\''s'" },
        { "'", "''\\'''" },
        { "$(x)", "'$(x)'" },
        { "`x`", "'`x`'" },
    };
    char q[64];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(vmd_shell_quote(cases[i].in, q, sizeof(q)), 0);
        assert_string_equal(q, cases[i].out);
    }
}

/*
 * For each input, the exact capacity needed (quoted length + NUL) works and
 * every smaller one returns -ENAMETOOLONG, writing nothing past cap: the
 * buffer is an exactly sized malloc (the sanitizer build sees overruns) and
 * a canary follows it in the plain build.
 */
static void
test_vmd_shell_quote_refuses_too_small_buffer(void **state)
{
    static const char *const inputs[] = { "", "a", "abc", "'", "it's", "''''", "a'b'c" };

    (void)state;
    for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
        char big[64];
        assert_int_equal(vmd_shell_quote(inputs[i], big, sizeof(big)), 0);
        size_t need = strlen(big) + 1;
        for (size_t cap = 0; cap <= need; cap++) {
            char *buf = malloc(cap + 8);
            assert_non_null(buf);
            memset(buf, '#', cap + 8);
            int rc = vmd_shell_quote(inputs[i], buf, cap);
            if (cap < need) {
                assert_int_equal(rc, -ENAMETOOLONG);
            } else {
                assert_int_equal(rc, 0);
                assert_string_equal(buf, big);
            }
            for (size_t j = cap; j < cap + 8; j++)
                assert_int_equal(buf[j], '#');
            free(buf);
        }
    }
}

static void
test_vmd_strlcpy_copies_what_fits_and_refuses_the_rest(void **state)
{
    char buf[16];

    (void)state;
    memset(buf, '#', sizeof(buf));
    assert_int_equal(vmd_strlcpy(buf, "hello", 8), 0);
    assert_string_equal(buf, "hello");
    assert_int_equal(buf[6], '#');

    /* cap - 1 characters fit exactly. */
    memset(buf, '#', sizeof(buf));
    assert_int_equal(vmd_strlcpy(buf, "1234567", 8), 0);
    assert_string_equal(buf, "1234567");
    assert_int_equal(buf[8], '#');

    /* cap characters do not: truncated, terminated, reported. */
    memset(buf, '#', sizeof(buf));
    assert_int_equal(vmd_strlcpy(buf, "12345678", 8), -ENAMETOOLONG);
    assert_string_equal(buf, "1234567");
    assert_int_equal(buf[8], '#');

    assert_int_equal(vmd_strlcpy(buf, "", 1), 0);
    assert_string_equal(buf, "");
    memset(buf, '#', sizeof(buf));
    assert_int_equal(vmd_strlcpy(buf, "x", 1), -ENAMETOOLONG);
    assert_string_equal(buf, "");
    assert_int_equal(buf[1], '#');

    /* No room at all: nothing is written. */
    memset(buf, '#', sizeof(buf));
    assert_int_equal(vmd_strlcpy(buf, "x", 0), -ENAMETOOLONG);
    assert_int_equal(buf[0], '#');
}

/* ---- list ---- */

struct item {
    int v;
    struct vmd_list link;
};

static void
assert_list(struct vmd_list *head, const int *want, size_t n)
{
    size_t i = 0;
    /* Forwards ... */
    for (struct vmd_list *l = head->next; l != head; l = l->next, i++) {
        assert_true(i < n);
        assert_int_equal(vmd_container_of(l, struct item, link)->v, want[i]);
        assert_ptr_equal(l->next->prev, l);
    }
    assert_int_equal(i, n);
    /* ... and backwards. */
    for (struct vmd_list *l = head->prev; l != head; l = l->prev) {
        assert_true(i > 0);
        assert_int_equal(vmd_container_of(l, struct item, link)->v, want[--i]);
    }
    assert_int_equal(i, 0);
    assert_int_equal(vmd_list_empty(head), n == 0);
}

static void
test_vmd_list_inserts_at_the_tail_and_removes_anywhere(void **state)
{
    struct vmd_list head;
    struct item it[5];

    (void)state;
    vmd_list_init(&head);
    assert_true(vmd_list_empty(&head));
    assert_list(&head, NULL, 0);
    for (int i = 0; i < 5; i++) {
        it[i].v = i;
        vmd_list_insert(&head, &it[i].link);
    }
    assert_list(&head, (const int[]){ 0, 1, 2, 3, 4 }, 5);

    vmd_list_remove(&it[2].link);       /* middle */
    assert_list(&head, (const int[]){ 0, 1, 3, 4 }, 4);
    /* A removed node points at itself, so removing it again is harmless. */
    assert_ptr_equal(it[2].link.next, &it[2].link);
    assert_ptr_equal(it[2].link.prev, &it[2].link);
    vmd_list_remove(&it[2].link);
    assert_list(&head, (const int[]){ 0, 1, 3, 4 }, 4);

    vmd_list_remove(&it[0].link);       /* head */
    vmd_list_remove(&it[4].link);       /* tail */
    assert_list(&head, (const int[]){ 1, 3 }, 2);
    vmd_list_insert(&head, &it[2].link);
    assert_list(&head, (const int[]){ 1, 3, 2 }, 3);

    /* Remove while walking, the way the daemon closes every peer. */
    struct vmd_list *l, *next;
    int seen = 0;
    for (l = head.next; l != &head; l = next) {
        next = l->next;
        vmd_list_remove(l);
        seen++;
    }
    assert_int_equal(seen, 3);
    assert_true(vmd_list_empty(&head));
    assert_list(&head, NULL, 0);
}

/* A stranger's repeated events: one line a second, counting the rest. */
static void
test_vmd_ratelimit_lets_one_a_second_and_counts_the_rest(void **state)
{
    struct vmd_ratelimit rl = { 0 };
    unsigned quiet = 99;
    (void)state;
    assert_int_equal(vmd_ratelimit_ok(&rl, 5000, &quiet), 1);
    assert_int_equal(quiet, 0);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(vmd_ratelimit_ok(&rl, 5000 + (uint64_t)i, &quiet), 0);
    assert_int_equal(vmd_ratelimit_ok(&rl, 6000, &quiet), 1);
    assert_int_equal(quiet, 1000);
    assert_int_equal(vmd_ratelimit_ok(&rl, 6001, &quiet), 0);
    /* A loop clock that starts at 0 still lets the first one through. */
    struct vmd_ratelimit z = { 0 };
    assert_int_equal(vmd_ratelimit_ok(&z, 0, &quiet), 1);
    assert_int_equal(vmd_ratelimit_ok(&z, 10, &quiet), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vmd_shell_quote_survives_the_shell),
        cmocka_unit_test(test_vmd_shell_quote_quotes_the_empty_string),
        cmocka_unit_test(test_vmd_shell_quote_exact_forms),
        cmocka_unit_test(test_vmd_shell_quote_refuses_too_small_buffer),
        cmocka_unit_test(test_vmd_strlcpy_copies_what_fits_and_refuses_the_rest),
        cmocka_unit_test(test_vmd_list_inserts_at_the_tail_and_removes_anywhere),
        cmocka_unit_test(test_vmd_ratelimit_lets_one_a_second_and_counts_the_rest),
    };
    return cmocka_run_group_tests_name("vmd_util", tests, NULL, NULL);
}
