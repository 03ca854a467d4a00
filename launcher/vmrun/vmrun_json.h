/*
 * vmrun_json.h - a small JSON reader for the files vmrun reads back (a
 * stencil job's trace, issue 27): the whole text becomes a tree of values.
 *
 * Who may include it: launcher/vmrun/ and tests.  Pure and reentrant; the
 * tree owns every string and array in it, freed by vmrun_json_free.
 * Errors: vmrun_json_parse returns 0, -EINVAL with "line N: what" in err,
 * or -ENOMEM.
 */
#ifndef LIQUIDVM_VMRUN_JSON_H
#define LIQUIDVM_VMRUN_JSON_H

#include <stddef.h>

enum vmrun_json_type { VJ_NULL, VJ_BOOL, VJ_NUM, VJ_STR, VJ_ARR, VJ_OBJ };

struct vmrun_json {
    enum vmrun_json_type type;
    double num;                 /* VJ_NUM, VJ_BOOL (0 or 1) */
    char *str;                  /* VJ_STR */
    int n;                      /* VJ_ARR, VJ_OBJ: members */
    struct vmrun_json *v;       /* the members' values */
    char **k;                   /* VJ_OBJ: their keys */
};

int vmrun_json_parse(const char *text, size_t len, struct vmrun_json *out, char *err,
                     size_t errlen);
void vmrun_json_free(struct vmrun_json *j);
/* A member of an object by key, or NULL (also for a j that is no object). */
const struct vmrun_json *vmrun_json_get(const struct vmrun_json *j, const char *key);
/* A member's number (dflt when absent or not a number) or string (NULL). */
double vmrun_json_num(const struct vmrun_json *j, const char *key, double dflt);
const char *vmrun_json_str(const struct vmrun_json *j, const char *key);
/* A member's number as an int, rounded toward zero and held to INT_MIN..
 * INT_MAX (dflt when absent, not a number or NaN): a file's 1e300 must not
 * reach a conversion whose overflow is undefined. */
int vmrun_json_int(const struct vmrun_json *j, const char *key, int dflt);
int vmrun_json_clamp(double v, int dflt);

#endif
