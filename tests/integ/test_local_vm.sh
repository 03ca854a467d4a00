#!/usr/bin/env bash
# A local VM of 4 daemons: start, conf, delete, status through a non-master,
# the console, halt (issue 2 acceptance).
. "$(dirname "$0")/lib.sh"
write_conf

check "vmctl start --local 4 -c test.conf succeeds" "$VMCTL" start --local 4 -c "$T/test.conf"
check "vmctl conf --json lists 4 hosts" hosts_are 4
check "4 daemons run" test "$(vmd_count)" = 4
check "conf --json has the documented fields" \
    bash -c '"$0" conf --json | grep -q "{\"name\":\"host1\",\"tid\":524288,\"arch\":\"LINUX64\",\"speed\":1000,\"address\":\"127.0.0.1:[0-9]*\",\"state\":\"up\"[,}]"' "$VMCTL"
check "a second start is refused with status 1" bash -c '"$0" start --local 2; [ $? = 1 ]' "$VMCTL"
check "vmctl delete host3 succeeds" "$VMCTL" delete host3
check "vmctl conf --json then lists 3 hosts" hosts_are 3
check "the deleted daemon exits" wait_for 5 vmd_count_is 3
check "deleting the master is refused" bash -c '"$0" delete host0; [ $? = 1 ]' "$VMCTL"
check "deleting an unknown host is refused" bash -c '"$0" delete nosuch; [ $? = 1 ]' "$VMCTL"
check "adding an existing host is refused" bash -c '"$0" add host1; [ $? = 1 ]' "$VMCTL"
check "a non-master daemon answers status" bash -c '"$0" --host host2 status --json | grep -q "\"master\":\"host0\""' "$VMCTL"
check "an add through a non-master is relayed to the master" "$VMCTL" --host host2 add host5
check "every daemon then lists 4 hosts" bash -c 'for h in host0 host1 host2 host5; do
    n=$("$0" --host $h conf --json | grep -o "\"name\":" | wc -l); [ "$n" = 4 ] || exit 1; done' "$VMCTL"
check "the console runs conf and help from a script" \
    bash -c 'printf "conf\nhelp\nquit\n" | "$0" | grep -q "host5"' "$VMCTL"
check "bad usage exits 2" bash -c '"$0" frobnicate; [ $? = 2 ]' "$VMCTL"
p5=$(vmd_pid_of host5)
kill -TERM "$p5"
check "SIGTERM to a non-master daemon: it leaves and the master drops it" wait_for 5 hosts_are 3
check "add --json reports each host" bash -c '"$0" add --json host6 | grep -q "{\"ok\":true,\"added\":\[{\"name\":\"host6\",\"tid\":[0-9]*,\"status\":\"ok\"}\]"' "$VMCTL"
check "delete --json of an unknown host says why, status 1" bash -c '"$0" delete --json nosuch | grep -q "\"status\":\"WIRE_ENOHOST\""; [ ${PIPESTATUS[0]} = 1 ]' "$VMCTL"
check "vmctl halt --json succeeds" bash -c '"$0" halt --json | grep -q "\"halted\":true"' "$VMCTL"
check "no vmd process is left" wait_for 5 vmd_count_is 0
check "status after halt exits 1" bash -c '"$0" status; [ $? = 1 ]' "$VMCTL"
