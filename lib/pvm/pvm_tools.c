/*
 * pvm_tools.c - the helpers PVM 3.4.6's libpvm3 exports for its console
 * and tools, declared in pvm3.h: pvmgetrsh, pvmgettmp, pvmtmpnam.
 *
 *   pvmgetrsh   PVM_RSH from the environment, else "ssh" (LiquidVM's
 *               default hoststart, where PVM's is rsh); LiquidVM itself
 *               starts hosts with vmd.conf's hoststart, not with this.
 *   pvmgettmp   PVM_TMP, else "/tmp", as in PVM.
 *   pvmtmpnam   a new file name in pvmgettmp()'s directory, made of the
 *               process id and a counter, in buf (PVM's PVMTMPNAMLEN, 128
 *               bytes, at most), or in the library's own buffer when buf
 *               is NULL.  PVM declares it only under NOTMPNAM; it is
 *               always defined here.
 */
#define NOTMPNAM 1              /* pvm3.h's prototype of pvmtmpnam */
#include "pvm_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

char *
pvmgetrsh(void)
{
    char *p = getenv("PVM_RSH");
    return p && *p ? p : "ssh";
}

char *
pvmgettmp(void)
{
    char *p = getenv("PVM_TMP");
    return p && *p ? p : "/tmp";
}

char *
pvmtmpnam(char *buf)
{
    char *out = buf ? buf : pvm__ctx.tmpnam_buf;
    snprintf(out, buf ? 128 : sizeof(pvm__ctx.tmpnam_buf), "%s/pvmtmp%06d.%u", pvmgettmp(),
             (int)getpid(), pvm__ctx.tmpnam_count++ % 10000);
    return out;
}
