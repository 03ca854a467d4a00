#!/usr/bin/env bash
# The console's task verbs (issue 3): vmctl spawn, ps -a, pstat, kill, sig,
# reset, mstat, each also with --json.
. "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$VMCTL")/.." && pwd)
write_conf 2.0 "spawn_path = [ \"$B/tests/integ\", \"/bin\" ];"
check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"

check "spawn -o shows a task's output and returns when it exits" \
    bash -c '"$0" spawn -o pvm_pingpong | grep -q "^\[t[0-9a-f]*\] usage: pvm_pingpong"' "$VMCTL"
check "spawn -3 sleep starts 3 tasks over the hosts" \
    bash -c '"$0" spawn -3 sleep 60 | head -1 | grep -q "^3 successful"' "$VMCTL"
check "ps -a --json lists the 3 sleeps on 3 hosts" bash -c \
    '"$0" ps -a --json >"$1" && [ "$(grep -o "\"command\":\"sleep\"" "$1" | wc -l)" = 3 ] &&
     [ "$(grep -o "\"host\":[0-9]*" "$1" | sort -u | wc -l)" = 3 ]' "$VMCTL" "$T/ps.json"
tid=$(grep -o '"tid":[0-9]*' "$T/ps.json" | head -1 | cut -d: -f2)
htid=t$(printf '%x' "${tid:-0}")
check "pstat says the task runs" bash -c '"$0" pstat "$1" | grep -q running' "$VMCTL" "$htid"
check "sig 18 (SIGCONT) reaches it" "$VMCTL" sig 18 "$htid"
check "kill ends it" "$VMCTL" kill "$htid"
check "pstat then says it is gone, exit 1" bash -c '"$0" pstat "$1"; [ $? = 1 ]' "$VMCTL" "$htid"
check "kill of an unknown task fails with status 1" bash -c '"$0" kill t40fff; [ $? = 1 ]' "$VMCTL"
check "a bad task id is bad usage (2)" bash -c '"$0" kill banana; [ $? = 2 ]' "$VMCTL"
check "reset --help and reset with a stray word kill nothing" bash -c \
    '"$0" reset --help >/dev/null && { "$0" reset --all; [ $? = 2 ]; } &&
     [ "$("$0" ps -a | wc -l)" = 3 ]' "$VMCTL"
check "reset kills the 2 remaining tasks" bash -c '"$0" reset | grep -q "^2 tasks killed"' "$VMCTL"
check "ps -a is then empty" bash -c '[ "$("$0" ps -a | wc -l)" = 1 ]' "$VMCTL"
check "no sleep of ours is left" wait_for 5 bash -c '! pgrep -f "^/bin/sleep 60$"'
check "mstat host1 is ok, nohost is not (exit 1)" bash -c \
    '"$0" mstat host1 | grep -q "host1: ok" && ! "$0" mstat nohost' "$VMCTL"
check "mstat and version take --json after the command; mstat --help is help" bash -c \
    '"$0" mstat host1 --json | grep -q "\"status\":\"ok\"" &&
     "$0" version --json | grep -q "\"version\"" && "$0" mstat --help | grep -q usage' "$VMCTL"
check "spawn of a missing program fails with status 1" \
    bash -c '"$0" spawn nosuchprog; [ $? = 1 ]' "$VMCTL"
# spawn -o waits for the output's end (PVM's EOF), or for its host to go:
# a task whose daemon is killed sends no EOF.
"$VMCTL" spawn -o -h host2 sh -c 'echo up; exec sleep 61' >"$T/lost.out" 2>&1 &
LOST=$!
check "spawn -o shows the output of a task on host2" wait_for 10 grep -q "\] up$" "$T/lost.out"
kill -9 "$(vmd_pid_of host2)" 2>/dev/null
check "... and returns once host2 is lost, with the task's EOF never sent" wait_for 20 \
    bash -c '! kill -0 "$0" 2>/dev/null' "$LOST"
pkill -f "^sleep 61$" 2>/dev/null
check "halt" "$VMCTL" halt
check "no vmd process is left" wait_for 5 vmd_count_is 0
