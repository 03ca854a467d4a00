#!/usr/bin/env bash
# Three hosts in network namespaces, each with its own veth and IP address
# on a bridge, join one VM with `vmctl add` through the hoststart template
# "ip netns exec %h %v" (issue 2 acceptance).  Needs root and ip netns.
. "$(dirname "$0")/lib.sh"
netns_hosts lvns 3

write_conf 2.0 'hoststart = "ip netns exec %h %v";'
check "start the master on the bridge address" \
    "$VMCTL" start --name lvmaster$tag --listen "$net.1" -c "$T/test.conf"
check "vmctl add of three namespaced hosts succeeds" "$VMCTL" add "${hosts[@]}"
check "conf lists 4 hosts" hosts_are 4
for i in 1 2 3; do
    check "${hosts[$((i-1))]} has its own address $net.1$i" \
        bash -c '"$0" conf --json | grep -q "\"name\":\"$1\"[^}]*\"address\":\"$2:"' \
        "$VMCTL" "${hosts[$((i-1))]}" "$net.1$i"
done
# listen.address "auto" (the default): a joining daemon listens on the
# interface toward the master only, never on every address.
check "each namespaced daemon listens on its own address only" bash -c '
    for i in 1 2 3; do
        l=$(ip netns exec "$0-$i" ss -ltnH | awk "{ print \$4 }") || exit 1
        echo "$l" | grep -q "^$1.1$i:" || { echo "$0-$i: $l"; exit 1; }
        ! echo "$l" | grep -qE "^(0\.0\.0\.0|\*):" || { echo "$0-$i: $l"; exit 1; }
    done' "lvns$tag" "$net"
check "each namespaced daemon runs inside its namespace" bash -c '
    for i in 1 2 3; do
        pids=$(ip netns pids "$0-$i") || exit 1
        [ -n "$pids" ] || exit 1
    done' "lvns$tag"
check "the namespaced daemons are linked to each other (host 1 sees 4 hosts)" \
    bash -c '"$0" --host "$1" conf --json | grep -q "$2"' "$VMCTL" "${hosts[0]}" "${hosts[2]}"
three_links() { [ "$(grep -c "link up" "$LIQUIDVM_HOME/logs/${hosts[0]}.log")" -ge 3 ]; }
check "host 1 has links to the master and both other hosts" wait_for 5 three_links

# A stencil job on the three namespaced hosts (issue 7): workers spawned in
# the namespaces, ghost faces over the veths, the field bit-identical.  The
# quanta follow the probed speeds, and on a busy machine a probe can find a
# host too slow for any: every host runs a worker, at least two hold quanta.
check "vmrun stencil runs on the 3 namespaced hosts, bit-identical to the reference" bash -c '
    "$0" stencil --hosts "$1,$2,$3" --grid 30x26x22 --iters 4 --kernel rbgs --verify --quiet \
        --probe-seconds 0.1 --json "$4" >"$5" 2>&1 && grep -q bit-identical "$5" || { cat "$5"; exit 1; }
    busy=0
    for h in "$1" "$2" "$3"; do
        grep -q "\"host\":\"$h\",\"quanta\":" "$4" || { echo "no worker on $h"; exit 1; }
        grep -q "\"host\":\"$h\",\"quanta\":[1-9]" "$4" && busy=$((busy + 1))
    done
    [ $busy -ge 2 ] || { echo "only $busy host(s) held quanta"; exit 1; }' \
    "$VMRUN" "${hosts[@]}" "$T/ns.json" "$T/ns.out"

# Pull a namespace's cable: its daemon goes silent without closing anything.
# Hosts 1 and 2 cut from each other, each still linked to the master: a
# spawn host 1's daemon places goes where it has a link (its round robin
# starts at the host after it, host 2, whose part would fail).
ip -n "${hosts[0]}" route add blackhole "$net.12/32"
ip -n "${hosts[1]}" route add blackhole "$net.11/32"
cut_seen() { grep -q "peer ${hosts[1]} .*silent for" "$LIQUIDVM_HOME/logs/${hosts[0]}.log"; }
check "hosts 1 and 2 cut from each other: host 1 drops its link to host 2 after host_timeout" \
    wait_for 10 cut_seen
check "... the VM still has 4 hosts (the master reaches both)" hosts_are 4
check "a spawn of 2 from host 1, placed by its daemon, starts both (on hosts it has links to)" \
    bash -c '"$0" --host "$1" spawn -2 /bin/sleep 3 >"$3" 2>&1 && grep -q "^2 successful" "$3" &&
        ! "$0" ps -a | grep -q "^ *$2 "' "$VMCTL" "${hosts[0]}" "${hosts[1]}" "$T/cut.out"
# A spawn on host 2 named from host 1 waits for the link, as a message does.
"$VMCTL" --host "${hosts[0]}" spawn -h "${hosts[1]}" /bin/sleep 3 >"$T/named.out" 2>&1 &
named=$!
sleep 0.5
check "... one naming host 2 from host 1 waits while the link is down" kill -0 $named
ip -n "${hosts[0]}" route del blackhole "$net.12/32"
ip -n "${hosts[1]}" route del blackhole "$net.11/32"
relinked() { [ "$(grep -c "peer ${hosts[1]} .*link up" "$LIQUIDVM_HOME/logs/${hosts[0]}.log")" -ge 2 ]; }
check "... the cut healed, host 1 links to host 2 again" wait_for 10 relinked
check "... and the spawn naming host 2 started its task there" bash -c \
    'wait $0 2>/dev/null; for i in $(seq 100); do kill -0 $0 2>/dev/null || break; sleep 0.1; done
     grep -q "^1 successful" "$1" || { cat "$1"; exit 1; }' $named "$T/named.out"

ip link set "lvns${tag}a2" down
check "a host whose link goes down is dropped within host_timeout (2 s)" wait_for 5 hosts_are 3
check "the rest still works: delete ${hosts[2]}" "$VMCTL" delete "${hosts[2]}"
check "conf lists 2 hosts" hosts_are 2
check "halt" "$VMCTL" halt
ip link set "lvns${tag}a2" up
check "no vmd process is left (the cut-off host leaves on its own)" wait_for 12 vmd_count_is 0

# A master started with no address: by default it listens on the interface
# its default route leaves from, and on every address only when told.
h=${hosts[0]}
ip -n "$h" route add default via "$net.1"
write_conf 2.0
check "a master with no listen address listens on its default route's interface only" bash -c '
    ip netns exec "$0" "$1" start --name lvauto$2 -c "$3" >/dev/null &&
    for i in $(seq 50); do l=$(ip netns exec "$0" ss -ltnH | awk "{ print \$4 }"); [ -n "$l" ] && break; sleep 0.1; done
    echo "$l" | grep -q "^$4:" && ! echo "$l" | grep -qE "^(0\.0\.0\.0|\*):" || { echo "$l"; exit 1; }' \
    "$h" "$VMCTL" "$tag" "$T/test.conf" "$net.11"
ip netns exec "$h" "$VMCTL" halt >/dev/null 2>&1
wait_for 10 vmd_count_is 0
write_conf 2.0 'listen = { address = "0.0.0.0"; };'
check "listen.address \"0.0.0.0\" listens on every address" bash -c '
    ip netns exec "$0" "$1" start --name lvall$2 -c "$3" >/dev/null &&
    for i in $(seq 50); do l=$(ip netns exec "$0" ss -ltnH | awk "{ print \$4 }"); [ -n "$l" ] && break; sleep 0.1; done
    echo "$l" | grep -qE "^(0\.0\.0\.0|\*):" || { echo "$l"; exit 1; }' \
    "$h" "$VMCTL" "$tag" "$T/test.conf"
ip netns exec "$h" "$VMCTL" halt >/dev/null 2>&1
check "no vmd process is left" wait_for 10 vmd_count_is 0
