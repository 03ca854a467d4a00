#!/usr/bin/env bash
# Real PVM 3.4.6 on N hosts of one machine: each host is a network
# namespace on a bridge, with its own address, hostname (a UTS namespace)
# and PVM_TMP directory, so N pvmds of one uid run side by side, and the
# master starts the others through PVM_RSH as it would with rsh.  For the
# benchmarks and compatibility tests that compare LiquidVM with PVM.
# Needs root, ip netns and unshare.
#
#   bench/realpvm.sh up N            make hosts ${P}1..${P}N; prints their names
#   bench/realpvm.sh start [EPDIR]   take the lock, start pvmd on ${P}1, add the
#                                    others; EPDIR (':'-separated) is the spawn path
#   bench/realpvm.sh exec HOST CMD…  run CMD as on HOST (its namespace, hostname,
#                                    PVM_ROOT, PVM_TMP): a task or the pvm console
#   bench/realpvm.sh hosts           the host names, one a line
#   bench/realpvm.sh ip HOST         the address of HOST
#   bench/realpvm.sh halt            halt PVM, kill what is left of it, drop the lock
#   bench/realpvm.sh down            halt if needed and remove the hosts
#   bench/realpvm.sh session N EPDIR CMD…
#                                    up, start, CMD, halt, down (cleanup on any
#                                    exit); CMD sees REALPVM (this script) and
#                                    REALPVM_HOSTS (the names, space-separated)
#
# P is $REALPVM_PREFIX (default "rpvm", at most 8 characters): callers that
# may run at the same time use different prefixes.  State lives in
# /tmp/lvm-realpvm.$P.  Real PVM allows one pvmd per uid per /tmp, and other
# users of this machine run it too, so `start` holds /tmp/lvm-realpvm.lock
# (flock) until `halt`.  Exit status: 0 ok, 1 failure, 2 bad usage; 77 from
# `up` when namespaces are not available (callers skip).
set -u
P=${REALPVM_PREFIX:-rpvm}
S=/tmp/lvm-realpvm.$P
LOCK=/tmp/lvm-realpvm.lock
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
export PVM_ROOT=${PVM_ROOT:-/usr/lib/pvm3} PVM_ALLOW_ROOT=1

die() { echo "realpvm: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -u/p' "$SELF" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

hosts() { [ -f "$S/hosts" ] || die "no hosts: run '$0 up N' first"; awk '{print $1}' "$S/hosts"; }
host_ip() { awk -v h="$1" '$1 == h { print $2 }' "$S/hosts"; }
master() { hosts | head -1; }

# The subnet of this prefix, so that prefixes do not collide.
subnet() { echo "10.233.$(( $(printf '%s' "$P" | cksum | cut -d' ' -f1) % 250 + 1 ))"; }

cmd_up() {
    local n=${1:-}
    [[ $n =~ ^[1-9][0-9]?$ ]] || { echo "realpvm: up: N must be 1..99" >&2; exit 2; }
    [ ${#P} -le 8 ] || { echo "realpvm: REALPVM_PREFIX is longer than 8 characters" >&2; exit 2; }
    [ "$(id -u)" = 0 ] || { echo "realpvm: needs root for ip netns" >&2; exit 77; }
    command -v ip >/dev/null && command -v unshare >/dev/null ||
        { echo "realpvm: needs ip (iproute2) and unshare" >&2; exit 77; }
    [ ! -e "$S/hosts" ] || die "hosts of prefix $P exist already ('$0 down' first)"
    mkdir -p "$S" || die "cannot create $S"
    ip netns add "${P}probe" 2>/dev/null || { rmdir "$S"; echo "realpvm: ip netns add is not permitted" >&2; exit 77; }
    ip netns del "${P}probe"
    local net br=${P}br i h
    net=$(subnet)
    ip link add "$br" type bridge && ip addr add "$net.1/24" dev "$br" && ip link set "$br" up ||
        { rmdir "$S"; echo "realpvm: cannot create bridge $br" >&2; exit 77; }
    : >"$S/hosts"
    for ((i = 1; i <= n; i++)); do
        h=$P$i
        ip netns add "$h" || { cmd_down; die "cannot add namespace $h"; }
        ip link add "${P}a$i" type veth peer name "${P}b$i" &&
            ip link set "${P}b$i" netns "$h" &&
            ip link set "${P}a$i" master "$br" up &&
            ip -n "$h" addr add "$net.$((10 + i))/24" dev "${P}b$i" &&
            ip -n "$h" link set "${P}b$i" up &&
            ip -n "$h" link set lo up || { cmd_down; die "cannot wire $h"; }
        echo "$h $net.$((10 + i))" >>"$S/hosts"
        mkdir -p "$S/tmp.$h"
    done
    # ip netns exec bind-mounts /etc/netns/NS/hosts over /etc/hosts: every
    # host resolves every other by name, and its own name to its address.
    for h in $(hosts); do
        mkdir -p "/etc/netns/$h"
        { echo "127.0.0.1 localhost"; cat "$S/hosts" | awk '{ print $2, $1 }'; } >"/etc/netns/$h/hosts"
    done
    hosts
}

# exec HOST CMD...: inside HOST's network namespace, with its hostname in a
# fresh UTS namespace and its own PVM_TMP (the pvmd's address file and log).
cmd_exec() {
    local h=${1:-}
    [ $# -ge 2 ] || usage
    shift
    [ -n "$(host_ip "$h")" ] || die "exec: no host $h"
    exec ip netns exec "$h" unshare -u /bin/sh -c \
        'hostname "$0" && export PVM_TMP="$1" && shift && exec "$@"' "$h" "$S/tmp.$h" "$@"
}

# How the master pvmd reaches a host instead of rsh: pvmd runs
# "$PVM_RSH host [-l user] -n command"; the command is a shell line.
cmd_rsh() {
    local h=${1:-}
    shift
    [ "${1:-}" = -l ] && shift 2
    [ "${1:-}" = -n ] && shift
    cmd_exec "$h" /bin/sh -c "$*"
}

console() { "$SELF" exec "$(master)" "$PVM_ROOT/lib/pvm" "$@"; }
nhosts_up() { echo conf | console 2>/dev/null | grep -c "^ *${P}[0-9]* "; }

cmd_start() {
    local ep=${1:-} h n i
    n=$(hosts | wc -l)
    [ ! -e "$S/locked" ] || die "start: PVM of prefix $P is running ('$0 halt' first)"
    # The lock is held by a small process until halt removes $S/locked.
    (
        flock -w 900 9 || exit 1
        touch "$S/locked"
        while [ -e "$S/locked" ]; do sleep 0.2; done
    ) 9>>"$LOCK" &
    echo $! >"$S/lockholder"
    echo "realpvm: waiting for $LOCK" >&2
    for ((i = 0; i < 9000; i++)); do
        [ -e "$S/locked" ] && break
        kill -0 "$(cat "$S/lockholder")" 2>/dev/null || die "start: could not take $LOCK"
        sleep 0.1
    done
    [ -e "$S/locked" ] || die "start: timed out waiting for $LOCK"
    printf '#!/bin/sh\nREALPVM_PREFIX=%s exec %s rsh "$@"\n' "$P" "$SELF" >"$S/rsh"
    chmod +x "$S/rsh"
    {
        [ -z "$ep" ] || echo "* ep=$ep"
        hosts
    } >"$S/hostfile"
    # The console starts the master pvmd, which adds the hostfile's hosts.
    PVM_RSH=$S/rsh PVM_EXPORT= console "$S/hostfile" </dev/null >"$S/start.log" 2>&1 &
    sleep 0.5
    for ((i = 0; i < 200; i++)); do
        [ "$(nhosts_up)" = "$n" ] && { echo "realpvm: PVM 3.4.6 up on $n hosts" >&2; return 0; }
        sleep 0.1
    done
    cat "$S/start.log" >&2
    echo conf | console >&2
    cmd_halt
    die "start: PVM did not reach $n hosts"
}

cmd_halt() {
    local h
    [ -f "$S/hosts" ] || return 0
    # In a subshell: the console dies of the halt, and its shell would say so.
    (echo halt | timeout 10 "$SELF" exec "$(master)" "$PVM_ROOT/lib/pvm") >/dev/null 2>&1
    # pvmds and tasks left in our namespaces are ours.
    sleep 0.2
    for h in $(hosts); do
        pids=$(ip netns pids "$h" 2>/dev/null)
        [ -z "$pids" ] || kill -9 $pids 2>/dev/null
        rm -rf "${S:?}/tmp.$h" && mkdir -p "$S/tmp.$h"
    done
    rm -f "$S/locked"
    return 0
}

cmd_down() {
    local h i
    [ -d "$S" ] || return 0
    cmd_halt
    if [ -f "$S/hosts" ]; then
        for h in $(hosts); do
            ip netns del "$h" 2>/dev/null
            rm -rf "/etc/netns/$h"
        done
    fi
    for ((i = 1; i <= 99; i++)); do ip link del "${P}a$i" 2>/dev/null || break; done
    ip link del "${P}br" 2>/dev/null
    rm -rf "$S"
    return 0
}

cmd_session() {
    local n=${1:-} ep=${2:-} rc
    [ $# -ge 3 ] || usage
    shift 2
    trap 'cmd_down' EXIT
    trap 'exit 130' INT TERM
    cmd_up "$n" >/dev/null || return $?
    cmd_start "$ep" || return 1
    REALPVM=$SELF REALPVM_HOSTS="$(hosts | tr '\n' ' ')" REALPVM_PREFIX=$P "$@"
    rc=$?
    return $rc
}

op=${1:-}
[ $# -gt 0 ] && shift
case $op in
up) cmd_up "$@" ;;
start) [ -f "$S/hosts" ] || die "no hosts: run '$0 up N' first"; cmd_start "$@" ;;
exec) [ -f "$S/hosts" ] || die "no hosts: run '$0 up N' first"; cmd_exec "$@" ;;
rsh) cmd_rsh "$@" ;;
hosts) hosts ;;
ip) [ -n "$(host_ip "${1:-}")" ] || die "no host ${1:-}"; host_ip "$1" ;;
halt) cmd_halt ;;
down) cmd_down ;;
session) cmd_session "$@" ;;
*) usage ;;
esac
