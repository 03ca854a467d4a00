#!/usr/bin/env bash
# Shared memory between tasks of one host (issue 31): two tasks of one host
# exchange messages through rings in shared memory under the default route
# and PvmRouteDirect, with messages already on their way through the
# daemons and the link as the ring comes up; order, bytes, contexts,
# pvm_recv/pvm_trecv/pvm_probe/pvm_nrecv checked by the programs
# (tests/integ/pvm_shm.c).  PvmDontRoute and LIQUIDVM_SHM_RING=0 keep the
# rings off.  A task killed while it writes a message larger than the ring
# leaves its earlier messages, no part of that one, and then its exit
# notice, in that order.
. "$(dirname "$0")/lib.sh"
P=$(dirname "$VMCTL")/../tests/integ/pvm_shm
[ -x "$P" ] || skip_all "pvm_shm is not built"
write_conf

check "start a local VM of 1 host" "$VMCTL" start --local 1 -c "$T/test.conf"

# pair NAME SERVER-ROUTE CLIENT-ROUTE N [ENV...]
pair() {
    local n=$1 sr=$2 cr=$3 count=$4
    shift 4
    rm -f "$T/$n.srv"
    env "$@" timeout 120 "$P" echo "$sr" >"$T/$n.srv" 2>&1 &
    local spid=$!
    wait_for 10 test -s "$T/$n.srv" || return 1
    env "$@" timeout 120 "$P" client "$(head -1 "$T/$n.srv")" "$count" "$cr" >"$T/$n.cli" 2>&1
    local rc=$?
    wait "$spid" || rc=1
    cat "$T/$n.cli" "$T/$n.srv"
    return $rc
}
rings_of() { sed -n 's/^rings //p' "$1" | tail -1; }

check "default route: 200 messages of 0 B to 3 MB each way, two contexts, in order" \
    pair allow allow allow 200
check "... through rings: the client maps both of the pair's" test "$(rings_of "$T/allow.cli")" = 2
check "... and so does the server" test "$(rings_of "$T/allow.srv")" = 2
# Messages of up to 3 MB: each ring grew from 512 KB to hold two of them.
check "... grown for the 3 MB messages: the client's two rings map more than 8 MB" \
    test "$(sed -n 's/^ring_kb //p' "$T/allow.cli")" -gt 8192

# Messages of at most 70 KB keep the 512 KB rings; told that they come in
# bursts of 12 MB (pvm__link_burst), the client's ring grows to hold one.
check "messages of at most 70 KB: in order" pair small allow small 120
check "... the rings did not grow: the client's two map less than 2 MB" \
    test "$(sed -n 's/^ring_kb //p' "$T/small.cli")" -lt 2048
check "the same told of bursts of 12 MB: in order" pair burst allow burst 120
check "... the client's ring grew to hold a burst: its two rings map more than 12 MB" \
    test "$(sed -n 's/^ring_kb //p' "$T/burst.cli")" -gt 12288

check "PvmRouteDirect: 200 messages each way, in order" pair direct allow direct 200
check "... through rings" test "$(rings_of "$T/direct.cli")" = 2

check "both ask (PvmRouteDirect on both): in order" pair both direct direct 120
check "... one ring each way" test "$(rings_of "$T/both.cli")" = 2

check "PvmDontRoute on the server: in order through the daemons" pair dont dont allow 60
check "... no ring" test "$(rings_of "$T/dont.cli")" = 0

check "LIQUIDVM_SHM_RING=0: in order over the Unix-socket link" \
    pair off allow direct 60 LIQUIDVM_SHM_RING=0
check "... no ring" test "$(rings_of "$T/off.cli")" = 0

# Messages larger than the room left in a ring go by reference: the reader
# copies the body out of the writer's memory (process_vm_readv) while the
# writer copies chunks into the reader's (process_vm_writev).  strace
# counts those calls; LIQUIDVM_SHM_REF=0 keeps every message in the ring.
vm_calls() { cat "$1".* | grep -c 'process_vm_\(readv\|writev\)('; }
# LeakSanitizer cannot run under ptrace: off for these two pairs.
NOLEAK="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
if command -v strace >/dev/null; then
    check "references: the pair's 1 MB and 3 MB messages, in order, copied once" \
        pair ref allow allow 40 "$NOLEAK" strace -ff -qq -e trace=process_vm_readv,process_vm_writev -o "$T/ref.strace"
    check "... by process_vm_readv and process_vm_writev" test "$(vm_calls "$T/ref.strace")" -gt 12
    check "LIQUIDVM_SHM_REF=0: in order, every message in the ring" \
        pair noref allow allow 40 LIQUIDVM_SHM_REF=0 "$NOLEAK" strace -ff -qq -e trace=process_vm_readv,process_vm_writev -o "$T/noref.strace"
    check "... no process_vm_readv" test "$(vm_calls "$T/noref.strace")" = 0
else
    echo "# SKIP references: strace is not installed (apt-get install strace)"
fi

check "a ring smaller than most messages (4 KB, not to grow): 120 messages stream through it" \
    pair tiny allow allow 120 LIQUIDVM_SHM_RING=4096 LIQUIDVM_SHM_RING_MAX=4096
check "... through rings" test "$(rings_of "$T/tiny.cli")" = 2
check "... of 4 KB" test "$(sed -n 's/^ring_kb //p' "$T/tiny.cli")" -le 16

# A task killed while it holds the ring, in the middle of a message.  The
# holder runs without timeout(1): the kill must reach the holder itself,
# not a parent that would leave it running (then its send completes once
# the watcher reads, and the watcher waits in vain for its exit notice).
killed() {
    mkdir -p "$T/kill"
    # Rings not to grow past 1 MB: the 8 MB message must wait for its reader.
    LIQUIDVM_SHM_RING_MAX=1048576 "$P" holder >"$T/holder" 2>&1 &
    local hpid=$!
    stop_holder() { kill -9 "$hpid" 2>/dev/null; wait "$hpid" 2>/dev/null; }
    wait_for 10 test -s "$T/holder" || { stop_holder; return 1; }
    timeout 60 "$P" watcher "$(head -1 "$T/holder")" "$T/kill" >"$T/watcher" 2>&1 &
    local wpid=$!
    # The holder blocks in its 8 MB send: the watcher reads nothing yet.
    wait_for 20 grep -q '^big$' "$T/holder" || { stop_holder; cat "$T/holder" "$T/watcher"; return 1; }
    sleep 0.5
    grep -q '^sent big' "$T/holder" && { stop_holder; echo "the 8 MB send did not block"; return 1; }
    stop_holder
    touch "$T/kill/read"
    local rc=0
    wait "$wpid" || rc=1
    cat "$T/holder" "$T/watcher"
    return $rc
}
check "holder killed mid-message: its 50 earlier messages in order, none of the 8 MB one, the exit notice last" \
    killed
check "... the pair talked through rings" \
    bash -c '[ "$(sed -n "s/^rings //p" "$0")" = 2 ] && [ "$(sed -n "s/^rings //p" "$1")" = 2 ]' \
    "$T/holder" "$T/watcher"

check "halt" "$VMCTL" halt
check "no vmd process is left" wait_for 5 vmd_count_is 0
