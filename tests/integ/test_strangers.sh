#!/usr/bin/env bash
# Bounded strangers (issue 30): 2,000 idle TCP connections on the master's
# daemon port (tests/integ/flood_tcp.py, which reopens what is closed) while
# vmctl conf, a spawn and a small stencil job still work, the master's
# resident memory grows by less than RSS_GROWTH_KB, and the refusals are logged at
# most once a second; then a daemon under a low descriptor limit
# (ulimit -n 128) flooded with 300 keeps serving its local clients; and a
# flood from a member's own address does not keep members from linking.
. "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$VMCTL")/.." && pwd)
FLOOD="python3 $(cd "$(dirname "$0")" && pwd)/flood_tcp.py"
# The bound: 32 MiB of growth (measured: under 1 MiB with the caps; the
# plain build's master stays near 7 MiB in all).  Without them, each of
# 2,000 strangers held 64 KiB and a TLS session: over 128 MiB.
RSS_GROWTH_KB=${RSS_GROWTH_KB:-32768}
command -v python3 >/dev/null || skip_all "python3 is missing"
# Under AddressSanitizer (make check's second tier) freed memory waits in a
# quarantine of 256 MiB, which 100,000 refused connections fill: that is
# the sanitizer's, not a stranger's.  Keep it small so the bound measures us.
if sanitized "$VMD"; then
    export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4
fi
[ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 2100 ] ||
    skip_all "the hard descriptor limit ($(ulimit -Hn)) is below 2,100"
write_conf 3.0 "spawn_path = [ \"$B/tests/integ\", \"$B/bin\" ];"
flood=
cleanup_extra() { [ -z "$flood" ] || kill "$flood" 2>/dev/null; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
flood_open() { sed -n 's/^open=\([0-9]*\).*/\1/p' "$T/flood.st" 2>/dev/null; }
flood_opened_at_least() { [ "$(sed -n 's/.*opened=\([0-9]*\).*/\1/p' "$T/flood.st" 2>/dev/null)" -ge "$1" ] 2>/dev/null; }
# end_flood: the flood stops, the VM halts, no daemon is left.
end_flood() {
    kill "$flood" 2>/dev/null
    wait "$flood" 2>/dev/null
    flood=
    check "halt" "$VMCTL" halt
    check "no vmd process is left" wait_for 10 vmd_count_is 0
}

# start_vm N: a local VM of N hosts; sets port and pid to the master's.
start_vm() {
    "$VMCTL" start --local "$1" -c "$T/test.conf" >"$T/start.out" 2>&1 || return 1
    port=$(sed -n 's/.* at [0-9.]*:\([0-9]*\) (pid \([0-9]*\)).*/\1/p' "$T/start.out")
    pid=$(sed -n 's/.* at [0-9.]*:\([0-9]*\) (pid \([0-9]*\)).*/\2/p' "$T/start.out")
    [ -n "$port" ] && [ -n "$pid" ]
}

check "start a local VM of 2 hosts" start_vm 2
base=$(rss_kb "$pid")
$FLOOD 127.0.0.1 "$port" 2000 "$T/flood.st" &
flood=$!
check "the flood opened 2,000 connections" wait_for 60 flood_opened_at_least 2000
sleep 2
peak=0
sample() { local r; r=$(rss_kb "$pid"); [ "${r:-0}" -gt "$peak" ] && peak=$r; return 0; }
sample
check "vmctl conf answers during the flood" timeout 20 "$VMCTL" conf
sample
check "a spawn runs during the flood" bash -c \
    'timeout 30 "$0" spawn -o pvm_pingpong | grep -q "usage: pvm_pingpong"' "$VMCTL"
sample
check "a stencil job runs during the flood" \
    timeout 120 "$VMRUN" stencil --grid 32 --iters 10
sample
echo "# master RSS: ${base} KiB before, ${peak} KiB at most during the flood; flood: $(cat "$T/flood.st")"
check "the master's RSS grew by less than $RSS_GROWTH_KB KiB" test $((peak - base)) -lt "$RSS_GROWTH_KB"
check "refusals are logged at most about once a second" bash -c \
    'n=$(grep -c "refused:\|did not finish the TLS handshake" "$0"); echo "# $n lines"; [ "$n" -lt 200 ]' \
    "$LIQUIDVM_HOME/logs/host0.log"
check "both hosts are still in the VM" hosts_are 2
end_flood

# A flood from a member's own address (a user on that machine) must not
# lock the member daemons out of each other: host1's link to host2, cut
# while 100 silent connections from 127.0.0.1 sit on host2's port, is made
# again (the oldest stranger of an address makes way for a new one).
link_count() { grep -c "peer host1 .*link up" "$LIQUIDVM_HOME/logs/host2.log"; }
if command -v ss >/dev/null && [ "$(id -u)" = 0 ]; then
    check "start a local VM of 3 hosts (links from one address)" start_vm 3
    port2=$("$VMCTL" conf --json | sed -n 's/.*"name":"host2"[^}]*"address":"127.0.0.1:\([0-9]*\)".*/\1/p')
    wait_for 10 bash -c '[ "$(grep -c "peer host1 .*link up" "$0")" -ge 1 ]' "$LIQUIDVM_HOME/logs/host2.log"
    ups=$(link_count)
    $FLOOD 127.0.0.1 "$port2" 100 "$T/flood.st" &
    flood=$!
    check "the flood holds 100 connections on host2's port" wait_for 30 flood_opened_at_least 100
    sleep 1
    # host1's own connection to host2's port (host1 dials host2): cut it.
    h1=$(vmd_pid_of host1)
    sport=$(ss -tnp state established "( dport = :$port2 )" | grep "pid=$h1," |
            sed -n 's/.*127.0.0.1:\([0-9]*\) *127.0.0.1:'"$port2"'.*/\1/p' | head -1)
    check "host1's link to host2 is found (port $sport) and cut" bash -c \
        '[ -n "$1" ] && ss -K src 127.0.0.1 sport = :"$1" dst 127.0.0.1 dport = :"$0" >/dev/null' \
        "$port2" "$sport"
    check "host1 links to host2 again during the flood" \
        wait_for 10 bash -c '[ "$(grep -c "peer host1 .*link up" "$0")" -gt "$1" ]' \
        "$LIQUIDVM_HOME/logs/host2.log" "$ups"
    check "... all 3 hosts still in the VM" hosts_are 3
    end_flood
else
    echo "# SKIP a member's link cut during a flood from its address: needs root and ss"
fi

# A low descriptor limit: the daemon gets ulimit -n 128 from vmctl start.
check "start a local VM of 1 host under ulimit -n 128" bash -c \
    'ulimit -n 128 && "$0" start --local 1 -c "$1" >"$2" 2>&1' "$VMCTL" "$T/test.conf" "$T/start.out"
port=$(sed -n 's/.* at [0-9.]*:\([0-9]*\) (pid \([0-9]*\)).*/\1/p' "$T/start.out")
$FLOOD 127.0.0.1 "$port" 300 "$T/flood.st" &
flood=$!
check "the flood opened 300 connections" wait_for 60 flood_opened_at_least 300
sleep 2
check "vmctl conf answers under the low limit" timeout 20 "$VMCTL" conf
check "vmctl ps answers under the low limit" timeout 20 "$VMCTL" ps -a
check "a spawn runs under the low limit" bash -c \
    'timeout 30 "$0" spawn -o pvm_pingpong | grep -q "usage: pvm_pingpong"' "$VMCTL"
check "a stencil job runs under the low limit" \
    timeout 120 "$VMRUN" stencil --grid 32 --iters 10
kill "$flood" 2>/dev/null
wait "$flood" 2>/dev/null
flood=
check "halt" "$VMCTL" halt
[ "$_failed" = 0 ]
