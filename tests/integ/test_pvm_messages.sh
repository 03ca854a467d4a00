#!/usr/bin/env bash
# PVM programs started from the shell enroll with the VM of LIQUIDVM_HOME
# and exchange messages: on one host, and across hosts over the daemons'
# TLS links; order and contents are checked by the program (issue 3, first
# slice: enrollment, pvm_send/pvm_recv/pvm_nrecv).
. "$(dirname "$0")/lib.sh"
P=$(dirname "$VMCTL")/../tests/integ/pvm_pingpong
[ -x "$P" ] || skip_all "pvm_pingpong is not built"
write_conf

check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"

pingpong() { # server-host client-host rounds size
    rm -f "$T/srv"
    LIQUIDVM_HOST=$1 "$P" server >"$T/srv" 2>&1 &
    local spid=$!
    wait_for 5 test -s "$T/srv" || return 1
    LIQUIDVM_HOST=$2 "$P" client "$(head -1 "$T/srv")" "$3" "$4" || return 1
    wait "$spid"
}
check "a program enrolls and gets a tid on host1 (t8xxxx)" \
    bash -c 'LIQUIDVM_HOST=host1 "$0" server >"$1" & sleep 0.5; grep -q "^t8" "$1"; r=$?; kill %1; exit $r' "$P" "$T/enr"
check "500 messages on one host arrive in order, intact" pingpong host1 host1 500 100
check "500 messages from host2 to host0 over TLS arrive in order" pingpong host0 host2 500 100
check "8 MB messages cross hosts intact" pingpong host2 host1 4 1000000
check "a program with no VM gets PvmSysErr, not a hang" bash -c \
    'LIQUIDVM_HOME=/nonexistent timeout 10 "$0" server; [ $? = 1 ]' "$P"
check "halt" "$VMCTL" halt

# A message above the VM's max_message is refused by pvm_send, not truncated,
# and the task keeps its link.
write_conf 2.0 'limits = { max_message = 1048576; };'
check "a VM with max_message 1 MiB (the least)" "$VMCTL" start --local 2 -c "$T/test.conf"
rm -f "$T/srv"
LIQUIDVM_HOST=host1 "$P" server >"$T/srv" 2>&1 &
wait_for 5 test -s "$T/srv"
check "pvm_send of a 1.1 MB message fails with PvmOverflow" bash -c \
    'LIQUIDVM_HOST=host0 timeout 10 "$0" client "$(head -1 "$1")" 1 140000 2>&1 |
     grep -q "pvm_send(): Value too large"' "$P" "$T/srv"
check "the same server still answers small messages" \
    bash -c 'LIQUIDVM_HOST=host0 timeout 10 "$0" client "$(head -1 "$1")" 5 100' "$P" "$T/srv"
check "halt" "$VMCTL" halt
check "no vmd process is left" wait_for 5 vmd_count_is 0
