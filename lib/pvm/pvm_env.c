/*
 * pvm_env.c - pvm_export and pvm_unexport: editing the colon-separated
 * list of environment variable names in PVM_EXPORT, whose variables
 * pvm_spawn passes to the tasks it starts (pvm_spawn.c, put_exports).
 *
 * As in PVM 3.4.6: exporting a name already listed, or unexporting one
 * that is not, is no error; empty fields of a list edited by other means
 * are kept as they are, except that unexport drops the colon before (or,
 * for the first name, after) the name it removes.  An empty name is
 * ignored.  Neither call needs a virtual machine.
 *
 * pvm__list_add and pvm__list_del are pure (tests/unit/test_pvm_env.c).
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The field of list that is exactly name, or NULL. */
static const char *
find(const char *list, const char *name, size_t nlen)
{
    const char *p = list;
    while (*p) {
        const char *q = strchr(p, ':');
        size_t flen = q ? (size_t)(q - p) : strlen(p);
        if (flen == nlen && strncmp(p, name, nlen) == 0)
            return p;
        if (q == NULL)
            break;
        p = q + 1;
    }
    return NULL;
}

/*
 * list (NULL: unset) with name appended, into a new string in *out; *out
 * is NULL when name is listed already.  0, -EINVAL for a name with ':'
 * or '=', or -ENOMEM.
 */
int
pvm__list_add(const char *list, const char *name, char **out)
{
    size_t nlen = strlen(name);
    *out = NULL;
    if (strchr(name, ':') || strchr(name, '='))
        return -EINVAL;
    if (list && find(list, name, nlen))
        return 0;
    size_t llen = list ? strlen(list) : 0;
    char *s = pvm__malloc(llen + nlen + 2);
    if (s == NULL)
        return -ENOMEM;
    if (llen > 0) {
        memcpy(s, list, llen);
        s[llen++] = ':';
    }
    memcpy(s + llen, name, nlen + 1);
    *out = s;
    return 0;
}

/*
 * list with every field that is name removed, into a new string in *out;
 * *out is NULL when name is not listed.  0 or -ENOMEM.
 */
int
pvm__list_del(const char *list, const char *name, char **out)
{
    size_t nlen = strlen(name);
    const char *p;
    *out = NULL;
    if (list == NULL || nlen == 0 || find(list, name, nlen) == NULL)
        return 0;
    char *s = pvm__malloc(strlen(list) + 1);
    if (s == NULL)
        return -ENOMEM;
    strcpy(s, list);
    while ((p = find(s, name, nlen)) != NULL) {
        char *f = s + (p - s);
        char *end = f + nlen;
        if (*end == ':')
            end++;              /* the colon after it goes with it */
        else if (f > s)
            f--;                /* the last one: the colon before it */
        memmove(f, end, strlen(end) + 1);
    }
    *out = s;
    return 0;
}

static int
set_list(char *s)
{
    int rc = setenv("PVM_EXPORT", s, 1) == 0 ? 0 : -ENOMEM;
    free(s);
    return rc;
}

int
pvm_export(char *name)
{
    char *s;
    int rc;
    if (name == NULL)
        return pvm__err(-EINVAL, "pvm_export");
    if (name[0] == '\0')
        return PvmOk;
    if ((rc = pvm__list_add(getenv("PVM_EXPORT"), name, &s)) != 0)
        return pvm__err(rc, "pvm_export");
    if (s != NULL && (rc = set_list(s)) != 0)
        return pvm__err(rc, "pvm_export");
    return PvmOk;
}

int
pvm_unexport(char *name)
{
    char *s;
    int rc;
    if (name == NULL)
        return pvm__err(-EINVAL, "pvm_unexport");
    if ((rc = pvm__list_del(getenv("PVM_EXPORT"), name, &s)) != 0)
        return pvm__err(rc, "pvm_unexport");
    if (s != NULL && (rc = set_list(s)) != 0)
        return pvm__err(rc, "pvm_unexport");
    return PvmOk;
}
