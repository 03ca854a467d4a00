/*
 * pvm_request.c - a request to the local daemon and its reply, the path
 * of every pvm_* call the daemon answers (spawn, config, contexts,
 * groups, mailboxes, the addresses of direct links...).
 *
 * The request is one frame with a fresh id; the reply carries the same id
 * and a status.  Frames that arrive meanwhile are handled as always
 * (pvm_daemon.c) except that handlers wait until the request is over, so
 * that a handler making a request of its own cannot take this one's
 * reply.  A reply with another id (a request abandoned on an error) is
 * dropped.
 */
#include "pvm_int.h"

#include <errno.h>
#include <stdlib.h>

int
pvm__request(int type, const struct wire_wbuf *req, unsigned char **body, size_t *len)
{
    /* Notifications the daemon sends later come in the asker's context. */
    struct wire_hdr h = { .type = (uint8_t)type, .id = ++pvm__ctx.next_req,
                          .ctx = type == WIRE_T_TASK_ENROLL ? 0 : pvm__context() };
    int rc;

    *body = NULL;
    *len = 0;
    if (req && req->err)
        return req->err;
    if ((rc = pvm__daemon_write(&h, req ? req->data : NULL, req ? req->len : 0)) != 0)
        return rc == -ENOMEM ? rc : WIRE_ENOVM;
    for (;;) {
        struct wire_hdr r;
        unsigned char *b = NULL;
        rc = pvm__pump(-1, &r, &b);
        if (rc < 0)
            return rc;
        if (rc == 2) {
            if (r.id != h.id) {
                free(b);
                continue;
            }
            *body = b;
            *len = r.len;
            return r.tag;
        }
    }
}
