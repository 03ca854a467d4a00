/*
 * liq_trace.c - the array a trace is recorded into (liq.h, "traces";
 * issue 27, Paradise's tracing of seed 003): the workers' and the
 * master's alike.  Recording itself is liq_trace_rec, inline, so that the
 * block loop pays a few stores per event and no call.
 */
#include "liq.h"

#include <errno.h>
#include <stdlib.h>

int
liq_trace_init(struct liq_trace *t, int cap)
{
    t->n = 0;
    t->dropped = 0;
    t->cap = 0;
    t->ev = NULL;
    if (cap <= 0)
        return 0;
    if ((t->ev = malloc((size_t)cap * sizeof(*t->ev))) == NULL)
        return -ENOMEM;
    t->cap = cap;
    return 0;
}

void
liq_trace_free(struct liq_trace *t)
{
    free(t->ev);
    t->ev = NULL;
    t->n = t->cap = t->dropped = 0;
}
