#!/usr/bin/env bash
# The console's task verbs (issue 3): vmctl spawn, ps -a, pstat, kill, sig,
# reset, mstat, each also with --json.
. "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$VMCTL")/.." && pwd)
write_conf 2.0 "spawn_path = [ \"$B/tests/integ\", \"/bin\" ];"
check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"

check "spawn -o shows a task's output and returns when it exits" \
    bash -c '"$0" spawn -o pvm_pingpong | grep -q "^\[t[0-9a-f]*\] usage: pvm_pingpong"' "$VMCTL"
check "spawn -o --json is one JSON object holding the task's lines, escaped, after they end" \
    bash -c '"$0" --json spawn -o /bin/sh -c "echo out1; printf \"a\\tb\\377\\n\"; sleep 1; echo out2" >"$1" &&
        python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
t = d[\"tasks\"][0][\"tid\"]
assert d[\"ok\"] and d[\"output\"] == [{\"tid\": t, \"line\": l} for l in (\"out1\", \"a\\tb\\ufffd\", \"out2\")], d
" "$1"' "$VMCTL" "$T/spawn_o.json"
check "spawn -3 sleep starts 3 tasks over the hosts" \
    bash -c '"$0" spawn -3 sleep 60 | head -1 | grep -q "^3 successful"' "$VMCTL"
check "ps -a --json lists the 3 sleeps on 3 hosts, by name and dtid" bash -c \
    '"$0" ps -a --json >"$1" && [ "$(grep -o "\"command\":\"sleep\"" "$1" | wc -l)" = 3 ] &&
     [ "$(grep -oE "\"host\":\"host[0-2]\",\"dtid\":[0-9]+" "$1" | sort -u | wc -l)" = 3 ]' \
    "$VMCTL" "$T/ps.json"
tid=$(grep -o '"tid":[0-9]*' "$T/ps.json" | head -1 | cut -d: -f2)
htid=t$(printf '%x' "${tid:-0}")
# PVM's ps -l: HOST (a name) TID PTID PID FLAG 0x COMMAND, tids in bare hex.
check "ps -a has PVM's header and names each task's host, its tid in hex" bash -c \
    '"$0" ps -a >"$2" && head -1 "$2" | grep -q "^ *HOST  *TID  *PTID  *PID  *FLAG 0x COMMAND" &&
     grep -qE "^ +host[0-2] +${1#t} +[0-9a-f]+ +[0-9]+ +0 sleep$" "$2" &&
     [ "$(awk "NR > 1 && \$1 ~ /^host[0-2]\$/" "$2" | wc -l)" = 3 ]' "$VMCTL" "$htid" "$T/ps.txt"
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
# PVM's console prints "0 successful" and "No such file"; scripts may parse
# them, so they stay on stdout, and stderr says what and where.
check "spawn of a missing program: PVM's lines on stdout, program and host on stderr" bash -c \
    '"$0" spawn -h host1 nosuchprog >"$1.out" 2>"$1.err"; [ $? = 1 ] &&
     [ "$(cat "$1.out")" = "$(printf "0 successful\nNo such file")" ] &&
     grep -qx "vmctl: spawn: nosuchprog: not found along spawn_path on host1" "$1.err"' \
    "$VMCTL" "$T/nofile"
check "spawn -2 of a missing program names both hosts it was placed on" bash -c \
    '"$0" spawn -2 nosuchprog 2>&1 >/dev/null |
     grep -qE "^vmctl: spawn: nosuchprog: not found along spawn_path on host[0-2], host[0-2]$"' \
    "$VMCTL"
check "spawn -h of an unknown host names the host" bash -c \
    '"$0" spawn -h host7 hello >"$1.out" 2>"$1.err"; [ $? = 1 ] &&
     [ "$(cat "$1.out")" = "$(printf "0 successful\nNo such host")" ] &&
     grep -q "^vmctl: spawn: host7: no such host in the virtual machine" "$1.err"' \
    "$VMCTL" "$T/nohost"
check "spawn --json of a missing program gives the host and the reason per task" bash -c \
    '"$0" spawn --json -h host2 nosuchprog | grep -q \
     "{\"error\":\"ENOENT\",\"message\":\"nosuchprog: not found along spawn_path on host2\",\"host\":\"host2\",\"dtid\":786432}"' \
    "$VMCTL"

# Every verb's --help answers 0 with its usage; every error starts "vmctl: VERB: ".
for verb in kill sig pstat ps mstat reset spawn groups version; do
    check "$verb --help exits 0 with its usage" bash -c \
        '"$0" "$1" --help | grep -q "^usage: vmctl $1 "' "$VMCTL" "$verb"
done
check "sig 9 --help is help too" bash -c '"$0" sig 9 --help | grep -q "^usage: vmctl sig"' "$VMCTL"
# With --json, stdout is one object {"ok":false,"error":...,"code":"EINVAL"}.
bad() { check "bad usage exits 2 and says 'vmctl: $1: ', with --json one JSON object: $*" bash -c \
    'err=$1; shift; "$0" "$@" >/dev/null 2>"$err"; [ $? = 2 ] && head -1 "$err" | grep -q "^vmctl: $1: " &&
     { "$0" --json "$@" 2>/dev/null; [ $? = 2 ]; } >"$err.json" && python3 -c "
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
d = json.loads(lines[0])
assert d[\"ok\"] is False and d[\"code\"] == \"EINVAL\" and d[\"error\"], d
" "$err.json"' "$VMCTL" "$T/bad.err" "$@"; }
bad kill bogus
bad kill
bad sig 999
bad sig 999 t40001
bad sig
bad sig 9
bad pstat
bad pstat zz
bad ps -z
bad ps extra
bad mstat
bad reset --all
bad spawn
bad spawn -z prog
bad spawn -n 0 prog
bad groups extra
bad version extra
bad conf --bogus
bad add --bogus h1
bad add bad/name
bad delete
bad start --bogus
bad start --local 99
bad jobs -x
bad put onlyname
bad unalias
check "an unknown verb, a missing option value: exit 2, said as such, JSON too" bash -c \
    '"$0" bogusverb 2>&1 | grep -q "unknown command .bogusverb." &&
     "$0" --home 2>&1 | grep -q "^vmctl: --home needs a value" &&
     "$0" --json --host | grep -q "^{\"ok\":false,\"error\":\"--host needs a value" &&
     "$0" --json bogusverb 2>/dev/null | grep -q "\"code\":\"EINVAL\""' "$VMCTL"
check "--json alias, setenv, unalias outside the console: one JSON object, exit 1" bash -c \
    'for c in "alias foo ps" "setenv A b c" "unalias foo" "export X"; do
         out=$("$0" --json $c 2>/dev/null); [ $? = 1 ] || exit 1
         [ "$(printf "%s\n" "$out" | wc -l)" = 1 ] || exit 1
         printf "%s" "$out" | grep -q "^{\"ok\":false,.*\"code\":\"ENOTSUP\"}$" || exit 1
     done' "$VMCTL"
check "kill of a task that is gone says 'vmctl: kill: tTID: ...', status 1" bash -c \
    'out=$("$0" kill t40fff 2>&1 >/dev/null); [ $? = 1 ] && [ "$out" = "vmctl: kill: t40fff: no such task" ]' \
    "$VMCTL"
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
