/*
 * pvm_fortran_str.c - Fortran strings for libfpvm3 (pvm_fortran.h): a
 * blank-padded string of a hidden length in, a NUL-terminated C string
 * out, and back.  The lowest layer of the binding: it calls nothing of
 * libpvm3 but its error codes.
 */
#include "pvm_fortran.h"

#include <stdlib.h>
#include <string.h>

#include "pvm3.h"

int
pvm__fstr_in(const char *s, size_t len, char **out)
{
    char *c;

    while (len > 0 && s[len - 1] == ' ')
        len--;
    c = malloc(len + 1);
    if (c == NULL)
        return PvmNoMem;
    if (len > 0)
        memcpy(c, s, len);
    c[len] = '\0';
    *out = c;
    return 0;
}

int
pvm__fstr_out(char *f, size_t len, const char *c)
{
    size_t n = c ? strlen(c) : 0;
    int rc = 0;

    if (n > len) {
        n = len;
        rc = PvmBadParam;
    }
    if (n > 0)
        memcpy(f, c, n);
    if (len > n)
        memset(f + n, ' ', len - n);
    return rc;
}

int
pvm__fstr_argv(const char *s, size_t len, char ***argv, int *argc)
{
    size_t i, words = 0;
    char **v, *p;
    int n = 0;

    while (len > 0 && s[len - 1] == ' ')
        len--;
    for (i = 0; i < len; i++)
        if (s[i] != ' ' && (i == 0 || s[i - 1] == ' '))
            words++;
    /* The pointers, then the characters, each word NUL-terminated. */
    v = malloc((words + 1) * sizeof *v + len + 1);
    if (v == NULL)
        return PvmNoMem;
    p = (char *)(v + words + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    for (i = 0; i < len; i++) {
        if (p[i] == ' ')
            p[i] = '\0';
        else if (i == 0 || p[i - 1] == '\0')
            v[n++] = p + i;
    }
    v[n] = NULL;
    *argv = v;
    *argc = n;
    return 0;
}
