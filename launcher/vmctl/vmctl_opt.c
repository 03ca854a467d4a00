/*
 * vmctl_opt.c - the console verbs about the console's own task, as in
 * PVM 3.4's console: getopt and setopt (its PVM options), id (its tid)
 * and jobs (what its `spawn -o` started); trace is vmctl_trace.c's.  No
 * seed idea; the state lives in the session (vmctl_session.c).
 *
 * The options are PVM's, with its console's defaults.  vmctl is not
 * linked with libpvm3, so most only record a value for the session;
 * PvmShowTids decides whether a job's output lines carry "[job:tid]".
 * Outside the console getopt shows the defaults and setopt changes nothing
 * (exit 1), since the options belong to one session's task.
 */
#include "vmctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int
option_index(const char *name)
{
    for (int i = 0; i < VMCTL_NOPTS; i++)
        if (strcmp(vmctl_options[i].name, name) == 0)
            return i;
    return -1;
}

static int
option_value(const struct vmctl *v, int i)
{
    return v->sess ? v->sess->opts[i] : vmctl_options[i].value;
}

int
vmctl_cmd_getopt(struct vmctl *v, int argc, char **argv)
{
    int rc = vmctl_verb_options(v, &argc, argv, 0), one = -1;
    if (rc >= 0)
        return rc;
    if (argc > 2)
        return vmctl_usage_error("getopt", "unexpected argument %s", argv[2]);
    if (argc == 2 && (one = option_index(argv[1])) < 0) {
        return vmctl_usage_error("getopt", "PVM option \"%s\" unknown", argv[1]);
    }
    if (v->json)
        printf("{\"options\":{");
    for (int i = 0, first = 1; i < VMCTL_NOPTS; i++) {
        if (one >= 0 && i != one)
            continue;
        if (v->json)
            printf("%s\"%s\":%d", first ? "" : ",", vmctl_options[i].name, option_value(v, i));
        else
            printf("%s Currently Set to %d\n", vmctl_options[i].name, option_value(v, i));
        first = 0;
    }
    if (v->json)
        printf("}}\n");
    return VMCTL_EXIT_OK;
}

int
vmctl_cmd_setopt(struct vmctl *v, int argc, char **argv)
{
    int rc = vmctl_verb_options(v, &argc, argv, 0), i;
    char *end;
    if (rc >= 0)
        return rc;
    if (argc != 3)
        return vmctl_usage_error("setopt", "expected an OPTION and a VALUE");
    if ((i = option_index(argv[1])) < 0) {
        return vmctl_usage_error("setopt", "PVM option \"%s\" unknown", argv[1]);
    }
    long value = strtol(argv[2], &end, 0);
    if (argv[2][0] == '\0' || *end || value < -0x7fffffffL || value > 0x7fffffffL) {
        return vmctl_usage_error("setopt", "%s is not a number", argv[2]);
    }
    int old = option_value(v, i);
    if (v->json)
        printf("{\"option\":\"%s\",\"old\":%d,\"new\":%ld,\"set\":%s}\n", vmctl_options[i].name,
               old, value, v->sess ? "true" : "false");
    else
        printf("%s Changed from %d to %ld\n", vmctl_options[i].name, old, value);
    if (v->sess == NULL) {
        fprintf(stderr, "vmctl: setopt: the console task's options last for a console "
                        "session; nothing was changed\n");
        return VMCTL_EXIT_FAIL;
    }
    v->sess->opts[i] = (int)value;
    return VMCTL_EXIT_OK;
}

int
vmctl_cmd_id(struct vmctl *v, int argc, char **argv)
{
    int rc = vmctl_verb_options(v, &argc, argv, 0), fd, shared;
    uint32_t tid;
    if (rc >= 0)
        return rc;
    if (argc != 1)
        return vmctl_usage_error("id", "unexpected argument %s", argv[1]);
    /* One-shot, this is a task that leaves as vmctl exits. */
    if ((rc = vmctl_task_open(v, &fd, &tid, &shared)) != 0)
        return vmctl_fail(v, rc, "id");
    vmctl_task_close(fd, shared);
    if (v->json)
        printf("{\"tid\":%u,\"session\":%s}\n", tid, shared ? "true" : "false");
    else
        printf("t%x\n", tid);
    return VMCTL_EXIT_OK;
}

int
vmctl_cmd_jobs(struct vmctl *v, int argc, char **argv)
{
    int rc = vmctl_verb_options(v, &argc, argv, 0), lng = 0;
    if (rc >= 0)
        return rc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-l") != 0)
            return vmctl_usage_error("jobs", "unknown option %s", argv[i]);
        lng = 1;
    }
    struct vmctl_session *s = v->sess;
    /* Output and exits that arrived since the last line. */
    if (s)
        vmctl_session_poll(s, 0);
    if (v->json)
        printf("{\"jobs\":[");
    else if (lng)
        printf("%8s %8s %s\n", "HOST", "TID", "COMMAND");
    for (int i = 0, shown = 0; s && i < s->njobs; i++) {
        const struct vmctl_job *j = &s->jobs[i];
        if (j->finished)
            continue;
        if (v->json) {
            printf("%s{\"job\":%d,\"command\":", shown++ ? "," : "", j->id);
            wire_json_str(stdout, j->command);
            printf(",\"running\":[");
        } else {
            printf("%2d:", j->id);
        }
        for (int k = 0, first = 1; k < j->n; k++) {
            if (!j->alive[k])
                continue;
            if (v->json)
                printf("%s%u", first ? "" : ",", j->tids[k]);
            else if (lng)
                printf("\n%8x %8x %s", j->tids[k] & ~WIRE_TID_LOCAL_MASK, j->tids[k], j->command);
            else
                printf(" t%x", j->tids[k]);
            first = 0;
        }
        printf(v->json ? "]}" : "\n");
    }
    if (v->json)
        printf("]}\n");
    return VMCTL_EXIT_OK;
}
