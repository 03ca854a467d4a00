#!/usr/bin/env bash
# Identity from the kernel (issue 30, items 1 and 2): a local client that
# names another process's pid in its enroll cannot get that process
# signalled by vmctl kill or halt (not even as a process group, 2^32 - pgid),
# and a client cannot take the tid of a task the daemon spawned.
# The hostile client is tests/integ/forge_enroll.py, which writes raw frames.
. "$(dirname "$0")/lib.sh"
FORGE="python3 $(cd "$(dirname "$0")" && pwd)/forge_enroll.py"
write_conf 2.0 "spawn_path = [ \"/bin\", \"/usr/bin\" ];"
command -v python3 >/dev/null || skip_all "python3 is missing"

check "start a local VM of 1 host" "$VMCTL" start --local 1 -c "$T/test.conf"
sock=$(ls "$LIQUIDVM_HOME"/run/*.sock | head -1)

# A bystander in a session and process group of its own, as `setsid sleep`;
# a fresh one for each check, so one check's failure does not hide the next.
forgers=()
bys=()
new_bystander() {
    setsid sleep 300 </dev/null >/dev/null 2>&1 &
    sleep 0.2
    by=$(pgrep -n -f '^sleep 300$')
    bys+=("$by")
}
cleanup_extra() { kill "${bys[@]}" "${forgers[@]}" 2>/dev/null; }
alive() { kill -0 "$by" 2>/dev/null; }

# forge ARGS...: start a forger in the background; its answer lands in $T/forge.out.
forge() {
    rm -f "$T/forge.out"    # not the last forger's answer, read before this one starts
    $FORGE "$sock" "$@" >"$T/forge.out" 2>&1 &
    forgers+=($!)
    wait_for 5 grep -q . "$T/forge.out"
}
forged_tid() { sed -n 's/^tid 0x\([0-9a-f]*\)$/t\1/p' "$T/forge.out"; }
got_tid() { [ -n "$(forged_tid)" ] || { echo "forger said: $(cat "$T/forge.out")"; false; }; }

new_bystander
forge --pid "$by"
tid=$(forged_tid)
check "a forged enroll naming the bystander's pid gets a tid" test -n "$tid"
check "ps shows the forger's own pid, not the bystander's" bash -c \
    '"$0" ps -a --json | grep -q "\"pid\":$1[,}]" && ! "$0" ps -a --json | grep -q "\"pid\":$2[,}]"' \
    "$VMCTL" "${forgers[-1]}" "$by"
"$VMCTL" kill "$tid" >/dev/null 2>&1
sleep 0.3
check "vmctl kill of that tid leaves the bystander alive" alive

new_bystander
forge --pid $((4294967296 - by))
tid=$(forged_tid)
check "a forged enroll naming 2^32 - the bystander's pgid gets a tid" test -n "$tid"
"$VMCTL" kill "$tid" >/dev/null 2>&1
sleep 0.3
check "vmctl kill of it does not signal the bystander's process group" alive

# A spawned task that never enrolls (sleep is not a PVM program) keeps its
# tid open for its claim: no other client may take it.
"$VMCTL" spawn sleep 120 >"$T/spawn.out" 2>&1
stid=$(sed -n 2p "$T/spawn.out")
check "spawn sleep 120 gives a tid" bash -c '[[ "$0" == t* ]]' "$stid"
forge --pid "$by" --claim "0x${stid#t}" --exit
check "a forged claim of the spawned tid is refused" \
    bash -c 'grep -q "^status -4017" "$0" || grep -q "^closed" "$0"' "$T/forge.out"
forge --pid "$by" --claim "0x${stid#t}" --token 0123456789abcdef --exit
check "a forged claim with a guessed token is refused" \
    bash -c 'grep -q "^status -4017" "$0" || grep -q "^closed" "$0"' "$T/forge.out"
check "the spawned task is still listed as not enrolled" bash -c \
    '"$0" ps -a --json | grep -q "\"tid\":$(( 0x${1#t} ))[,}]"' "$VMCTL" "$stid"

new_bystander
forge --pid "$by"
check "another forged enroll naming the bystander" got_tid
check "halt" "$VMCTL" halt
check "no vmd process is left" wait_for 5 vmd_count_is 0
sleep 0.3
check "vmctl halt leaves the bystander alive" alive
check "halt killed the spawned sleep" wait_for 5 bash -c '! pgrep -f "^/bin/sleep 120$"'
[ "$_failed" = 0 ]
