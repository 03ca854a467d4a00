#!/usr/bin/env bash
# Stale files (issue 30): after vmctl halt, and after any daemon's death
# (kill -9 included: the next start, or the master's halt, removes what a
# dead daemon left), no socket file stays in run/.
. "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$VMCTL")/.." && pwd)
write_conf 1.0 "spawn_path = [ \"$B/bin\" ];"
R=$LIQUIDVM_HOME/run
socks() { (cd "$R" 2>/dev/null && ls -- *.sock 2>/dev/null | sort | tr '\n' ' '); }
no_socks() { [ -z "$(socks)" ]; }
socks_are() { [ "$(socks)" = "$1" ]; }

check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"
check "a stencil job (tasks with direct links) runs" \
    timeout 120 "$VMRUN" stencil --grid 32 --iters 10
check "halt" "$VMCTL" halt
check "no socket file is left in run/ after halt" wait_for 5 no_socks

check "start 3 hosts again" "$VMCTL" start --local 3 -c "$T/test.conf"
# Stopped first, so that none sees the master go and halts cleanly in the
# moment before its own SIGKILL.
pids=$(vmd_pids)
kill -STOP $pids
kill -9 $pids
wait_for 5 vmd_count_is 0
check "kill -9 of every daemon leaves their 3 sockets (the case to clean)" \
    socks_are "host0.sock host1.sock host2.sock "
check "status after kill -9: not running" bash -c '"$0" status; [ $? = 1 ]' "$VMCTL"
check "a new VM of 2 hosts starts" "$VMCTL" start --local 2 -c "$T/test.conf"
check "the start removed the dead host2's socket" socks_are "host0.sock host1.sock "
check "halt" "$VMCTL" halt
check "no socket file is left in run/" wait_for 5 no_socks

check "start 3 hosts again" "$VMCTL" start --local 3 -c "$T/test.conf"
kill -9 "$(vmd_pid_of host2)"
check "the master drops host2, killed with -9" wait_for 10 hosts_are 2
check "halt" "$VMCTL" halt
check "the master's halt removed host2's socket too" wait_for 5 no_socks

[ "$_failed" = 0 ]
