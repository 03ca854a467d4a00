#!/usr/bin/env bash
# A grandchild's output is caught even when its host's link to the catcher
# is slow (PVM's pvm_catchout semantics): the master (the catcher's host)
# and two hosts in network namespaces, A and B, B's traffic to the master
# throttled (htb, 16 kbit/s).  The catcher spawns a child on A, which
# spawns a grandchild on B and leaves at once; the child's EOF, from A,
# comes long before anything of the grandchild's, from B.  A's daemon
# announces the grandchild (an EXPECT frame) ahead of the child's EOF, so
# pvm_exit, vmctl spawn -o and a console job wait for the grandchild's
# lines instead of ending without them.  Needs root, ip netns and tc.
. "$(dirname "$0")/lib.sh"
command -v tc >/dev/null || skip_all "needs tc (iproute2)"
B=$(cd "$(dirname "$VMCTL")/.." && pwd)
P=$B/tests/integ/pvm_output
[ -x "$P" ] || skip_all "pvm_output is not built"

netns_hosts lvo 2
HA=${hosts[0]} HB=${hosts[1]}

write_conf 6.0 "hoststart = \"ip netns exec %h %v\";
spawn_path = [ \"$B/tests/integ\" ];"
check "start the master on the bridge address" \
    "$VMCTL" start --name lvomaster$tag --listen "$net.1" -c "$T/test.conf"
check "add the two namespaced hosts" "$VMCTL" add "$HA" "$HB"
linked() { [ "$(grep -c "link up" "$LIQUIDVM_HOME/logs/$HA.log")" -ge 2 ]; }
check "A is linked to the master and to B" wait_for 10 linked

# B's packets to the master: 16 kbit/s (2 KB/s) after a small burst, so
# the grandchild's frames wait behind B's own traffic; the rest is free.
dev=lvo${tag}b2
if ! ip netns exec "$HB" tc qdisc add dev "$dev" root handle 1: htb default 10 2>/dev/null ||
    ! ip netns exec "$HB" tc class add dev "$dev" parent 1: classid 1:10 htb rate 1gbit 2>/dev/null ||
    ! ip netns exec "$HB" tc class add dev "$dev" parent 1: classid 1:20 htb rate 16kbit \
        ceil 16kbit burst 1600 cburst 1600 2>/dev/null ||
    ! ip netns exec "$HB" tc filter add dev "$dev" protocol ip parent 1: prio 1 u32 \
        match ip dst "$net.1/32" flowid 1:20 2>/dev/null; then
    skip_all "this kernel has no htb or u32 filter for the slow link"
fi
# A burst of 4 KB from B to the master (UDP to its discard port), just
# before each run: B's queue then holds the grandchild's frames about 2 s
# behind the child's EOF.
slow() {
    ip netns exec "$HB" python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(4):
    s.sendto(b"x" * 1000, (sys.argv[1], 9))' "$net.1"
}

slow
t0=$(date +%s.%N)
check "pvm_exit under pvm_catchout waits for the grandchild's lines from the slow host" bash -c '
    "$0" catchat "$1" "$2" >"$3" 2>&1 && grep -q "^\[t[0-9a-f]*\] grand line$" "$3" &&
        [ "$(grep -c "\] EOF$" "$3")" = 2 ] && tail -1 "$3" | grep -q "^parent after exit$" ||
        { sed "s/^/#   /" "$3"; exit 1; }' "$P" "$HA" "$HB" "$T/catch.out"
echo "# the catcher's run (B's link slowed): $(python3 -c "import time; print(round(time.time() - $t0, 2))") s"
wait
slow
check "vmctl spawn -o waits for them too" bash -c '
    "$0" spawn -o -h "$1" pvm_output child "$2" >"$3" 2>&1 &&
        grep -q "^\[t[0-9a-f]*\] grand line$" "$3" || { sed "s/^/#   /" "$3"; exit 1; }' \
    "$VMCTL" "$HA" "$HB" "$T/spawn.out"
wait
# The link at full speed again, so that B confirms the halt in time.
ip netns exec "$HB" tc qdisc del dev "$dev" root 2>/dev/null
check "halt" "$VMCTL" halt
