#!/usr/bin/env bash
# Liveness: a killed daemon is dropped at once (its link closes); a frozen
# one (SIGSTOP: connection open, silent) is dropped after host_timeout; the
# rest of the VM keeps working (issue 2 acceptance).
. "$(dirname "$0")/lib.sh"
write_conf 1.5

check "start a local VM of 4 hosts" "$VMCTL" start --local 4 -c "$T/test.conf"
p2=$(vmd_pid_of host2)
check "host2's daemon found" test -n "$p2"
kill -9 "$p2"
check "kill -9 host2: the master drops it within host_timeout (1.5 s)" wait_for 2 hosts_are 3
check "the other daemons learn it too" wait_for 2 bash -c \
    '[ "$("$0" --host host1 conf --json | grep -o "\"name\":" | wc -l)" = 3 ]' "$VMCTL"

p3=$(vmd_pid_of host3)
kill -STOP "$p3"
start=$(date +%s.%N)
check "SIGSTOP host3: dropped once silent past host_timeout" wait_for 6 hosts_are 2
end=$(date +%s.%N)
echo "# host3 dropped $(echo "$end - $start" | bc) s after it froze (host_timeout 1.5 s, heartbeat 0.2 s)"
kill -CONT "$p3" 2>/dev/null
check "the dropped host3 leaves on its own once it runs again" \
    wait_for 5 bash -c '! kill -0 '"$p3"' 2>/dev/null || ps -o stat= -p '"$p3"' | grep -q Z'
check "the VM still works: add host4" "$VMCTL" add host4
check "conf lists host0, host1, host4" bash -c \
    '"$0" conf --json | grep -q host4 && [ "$("$0" conf --json | grep -o "\"name\":" | wc -l)" = 3 ]' "$VMCTL"
check "host1 and host4 linked: host4 answers status with 3 hosts" bash -c \
    '"$0" --host host4 status --json | grep -q "\"hosts\":3"' "$VMCTL"
check "halt through a non-master (relayed) stops the rest" "$VMCTL" --host host1 halt
check "no vmd process is left" wait_for 5 vmd_count_is 0
