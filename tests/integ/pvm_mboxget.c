/*
 * pvm_mboxget - a PVM program for the integration tests, written only
 * against pvm3.h: prints the string in mailbox entry NAME (index 0), as
 * `vmctl put` stores it, read with pvm_recvinfo and pvm_upkstr.
 *
 *   pvm_mboxget NAME    prints the value; exit 1 if there is none
 */
#include <pvm3.h>
#include <stdio.h>

int
main(int argc, char **argv)
{
    char value[4096];
    if (argc != 2 || pvm_mytid() < 0)
        return 2;
    int buf = pvm_recvinfo(argv[1], 0, PvmMboxDefault);
    int rc = buf > 0 && pvm_upkstr(value) == 0;
    if (rc)
        printf("%s\n", value);
    pvm_exit();
    return rc ? 0 : 1;
}
