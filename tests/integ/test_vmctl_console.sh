#!/usr/bin/env bash
# The console verbs of PVM 3.4's console that vmctl added (issue 29):
# alias, unalias, echo, export, unexport, setenv, getopt, setopt, id, jobs,
# names, put, trace and help VERB.  Each is driven through the interactive
# console on a pseudo-terminal (python3's pty), with libedit's history
# (the up arrow recalls the last line; $LIQUIDVM_HOME/vmctl_history), and
# each one's --json form and bad usage (exit 2) in one-shot mode.
. "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$VMCTL")/.." && pwd)
command -v python3 >/dev/null || skip_all "python3 is needed to drive a pseudo-terminal"
write_conf 2.0 "spawn_path = [ \"$B/tests/integ\", \"/bin\", \"/usr/bin\" ];"
check "start a local VM of 2 hosts" "$VMCTL" start --local 2 -c "$T/test.conf"

# The pty driver: each argument is a line to type ("\e[A" is the up arrow)
# or "@wait REGEX" (read until REGEX shows, up to 20 s); after every typed
# line it reads until the next prompt.  The transcript goes to stdout.
cat >"$T/drive_console.py" <<'PY'
import os, pty, re, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1]])
out = b""
def read_until(pattern, limit, start=None):
    global out
    start = len(out) if start is None else start
    end = time.time() + limit
    while time.time() < end:
        if pattern is not None and re.search(pattern, out[start:]):
            return True
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                d = os.read(fd, 4096)
            except OSError:
                return False
            if not d:
                return False
            out += d
    return False
read_until(rb"vmctl> ", 10)
for step in sys.argv[2:]:
    if step.startswith("@wait "):
        read_until(step[6:].encode(), 20, 0)    # it may have come already
        continue
    os.write(fd, step.encode().replace(b"\\e", b"\x1b") + b"\r")
    # The next prompt on a line of its own (the up arrow redraws one in place).
    read_until(rb"\nvmctl> ", 20)
os.write(fd, b"quit\r")
read_until(None, 20)            # to the end of the output: vmctl has left
_, status = os.waitpid(pid, 0)
# A line that came while the prompt was up cleared it first ("\r\e[K").
text = out.decode(errors="replace").replace("\r", "")
sys.stdout.write(re.sub(r"vmctl> \x1b\[K", "", text))
sys.stdout.write("[driver] exit status %d\n" % os.waitstatus_to_exitcode(status))
PY
TR=$T/transcript
python3 "$T/drive_console.py" "$VMCTL" \
    "help" "help put" "help nosuchverb" \
    "alias j jobs" "alias" "echo mark-alias" "unalias j" "alias" "echo mark-unalias" \
    'echo hello "two words"   x' \
    "setenv LVMTEST_V abc def" "setenv LVMTEST_V" \
    "export LVMTEST_V" "export" \
    "spawn -o /usr/bin/env" "@wait \[1\] finished" \
    "unexport LVMTEST_V" "export" "echo mark-unexport" \
    "id" "id" \
    "spawn -o /bin/sleep 3" "jobs" "jobs -l" "@wait \[2\] finished" "jobs" "echo mark-jobs-done" \
    'put lvmkey "console value"' "put lvmkey2 'in quotes' persistent" "names lvm*" \
    "getopt PvmShowTids" "setopt PvmShowTids 0" "getopt PvmShowTids" \
    "spawn -o /bin/echo plainline" "@wait \[3\] finished" \
    "trace" "echo mark-trace-default" "trace - *" "trace + send recv" "trace" \
    "echo mark-trace-set" "trace bogus" "trace buf" "trace - *" "spawn -@ pvm_tracer none 1 1" \
    "trace xpvm" "spawn -o -@ pvm_tracer none 2 8" "@wait \[4\] finished" \
    "setopt PvmShowTids 1" "spawn -o pvm_output child" "@wait \[5\] finished" \
    "echo history-check" '\e[A' "ps --json" >"$TR" 2>&1

# Each verb in the transcript.
intr() { check "$1" grep -qE -- "$2" "$TR"; }
intr "console: help lists the new verbs" "^  names +List message mailbox names"
intr "console: help put gives its syntax" "^Syntax:  put \[--json\] NAME VALUE"
intr "console: help of no verb says so" "help: nosuchverb is no command"
check "console: alias defines and lists, unalias removes" bash -c \
    '[ "$(grep -c "^j	jobs$" "$0")" = 1 ] && sed -n "/mark-unalias\$/,\$p" "$0" | grep -q "^mark-unalias"' "$TR"
intr "console: echo joins its words, quotes keep blanks" "^hello two words x$"
intr "console: setenv sets and shows a variable" "^abc def$"
intr "console: export adds to PVM_EXPORT" "^PVM_EXPORT=.*LVMTEST_V"
intr "console: a spawned task gets the exported variable, as job 1" "^\[1:t[0-9a-f]+\] LVMTEST_V=abc def$"
intr "console: job 1 finishes" "^\[1\] finished"
check "console: unexport takes it out" bash -c \
    'sed -n "/^vmctl> unexport/,/mark-unexport/p" "$0" | grep "^PVM_EXPORT=" | grep -vq LVMTEST_V' "$TR"
check "console: id names the console's one task" bash -c \
    '[ "$(grep -A1 "^vmctl> id$" "$0" | grep -E "^t[0-9a-f]+$" | sort -u | wc -l)" = 1 ]' "$TR"
intr "console: spawn -o starts job 2 and the prompt returns" "^\[2\]$"
intr "console: jobs lists job 2's task" "^ 2: t[0-9a-f]+$"
intr "console: jobs -l lists host, tid and command" "^ +[0-9a-f]+ +[0-9a-f]+ /bin/sleep$"
check "console: a finished job is no longer listed" bash -c \
    'sed -n "/\[2\] finished/,/mark-jobs-done/p" "$0" | grep -vq "^ 2:"' "$TR"
check "console: put and names list the entries, owned by the console's task" bash -c \
    'id=$(grep -A1 "^vmctl> id$" "$0" | grep -E "^t[0-9a-f]+$" | head -1)
     grep -q "^<lvmkey>:" "$0" && grep -q "^<lvmkey2>:" "$0" &&
     grep -q "index=0 owner=$id flags=0x0" "$0" && grep -q "index=0 owner=$id flags=0x1" "$0"' "$TR"
intr "console: getopt shows an option" "^PvmShowTids Currently Set to 1$"
intr "console: setopt changes it for the session" "^PvmShowTids Changed from 1 to 0$"
intr "console: with PvmShowTids 0 a job's lines are bare" "^plainline$"
intr "console: a job's task's child's output shows as the job's (its output code)" \
    "^\[5:t[0-9a-f]+\] grand line$"
check "console: each task's output ends with EOF, as PVM's console prints it" bash -c \
    '[ "$(grep -cE "^\[5:t[0-9a-f]+\] EOF$" "$0")" = 2 ] && grep -qE "^\[1:t[0-9a-f]+\] EOF$" "$0"' "$TR"
check "console: a job is finished after its tasks' and their children's last lines" bash -c \
    'grep -q "^\[5\] finished$" "$0" || exit 1
     sed -n "/^\[5\] finished/,\$p" "$0" | grep -qE "^\[5:" && exit 1
     grep -qE "^\[5:t[0-9a-f]+\] child last \(no newline\)$" "$0"' "$TR"
# trace: PVM's console's mask (104 events; XPVM's 24 by default), which
# spawn -@ gives its tasks as PVMTMASK, with LIQUIDVM_TRACE for their files.
check "console: trace lists the 104 events, XPVM's 24 marked" bash -c \
    'sed -n "/^vmctl> trace\$/,/mark-trace-default/{p;/mark-trace-default/q}" "$0" >"$0.1" &&
     [ "$(grep -v "^vmctl>" "$0.1" | grep -oE "[a-z_]+" | wc -l)" = 104 ] &&
     [ "$(grep -o "\* [a-z_]*" "$0.1" | wc -l)" = 24 ] && grep -q "\* mhf_invoke" "$0.1"' "$TR"
check "console: trace - * then + send recv marks those two alone" bash -c \
    'sed -n "/^vmctl> trace\$/,/mark-trace-set/p" "$0" | sed -n "/mark-trace-default/,\$p" >"$0.2" &&
     [ "$(grep -o "\* [a-z_]*" "$0.2" | tr "\n" " ")" = "* recv * send " ]' "$TR"
intr "console: trace names an unknown event" 'trace: no such event "bogus"'
intr "console: trace buf says there is nothing to set" "trace: buf: a LiquidVM task keeps its events"
intr "console: spawn -@ with a clear mask starts nothing" "spawn: -@: the trace mask has no event set"
# Without a folder, each run gets a new one: \$LIQUIDVM_HOME/trace/PROGRAM-YYYYmmdd-HHMMSS.
check "console: spawn -o -@ traces the job into a new folder of \$LIQUIDVM_HOME/trace, with XPVM's mask" bash -c \
    'mask=$("$1" trace --json | python3 -c "import json, sys; print(json.load(sys.stdin)[\"mask\"])") &&
     d=$(sed -n "s/^traced into //p" "$0") &&
     [[ "$d" =~ ^$2/trace/pvm_tracer-[0-9]{8}-[0-9]{6}(-[0-9]+)?$ ]] && grep -q "^self mask $mask$" "$0" &&
     grep -q "^child mask $mask$" "$0" &&
     for i in $(seq 100); do [ "$(ls "$d"/pvm_tracer-t*.json 2>/dev/null | wc -l)" = 2 ] && break
     sleep 0.05; done && [ "$(ls "$d"/pvm_tracer-t*.json | wc -l)" = 2 ] &&
     grep -l "\"traced_because\":\"LIQUIDVM_TRACE\"" "$d"/*.json | wc -l | grep -qx 2 &&
     [ "$(grep -ho "\"run\":\"vmctl[0-9]*-[0-9]*\"" "$d"/*.json | sort -u | wc -l)" = 1 ]' \
    "$TR" "$VMCTL" "$LIQUIDVM_HOME"
check "console: the up arrow recalls the last line" bash -c \
    '[ "$(grep -c "^history-check$" "$0")" = 2 ]' "$TR"
check "console: history is kept in LIQUIDVM_HOME/vmctl_history" \
    grep -q 'echo\\040history-check' "$LIQUIDVM_HOME/vmctl_history"
intr "console: --json works on a console line" '^\{"tasks":\['
check "console: the owner's entry went with the console; the persistent one stays" bash -c \
    '"$0" names --json | grep -q "\"lvmkey2\"" && ! "$0" names --json | grep -q "\"lvmkey\""' "$VMCTL"
check "a program reads the value put with pvm_recvinfo and pvm_upkstr" bash -c \
    '[ "$("$1/tests/integ/pvm_mboxget" lvmkey2)" = "in quotes" ]' "$VMCTL" "$B"

# Pipes keep working as before: no editing, aliases still expand.
check "piped console: quit --help is help, and the console goes on" bash -c \
    '[ "$(printf "quit --help\necho after\n" | "$0" | tail -1)" = "after" ]' "$VMCTL"
check "piped console: alias, echo" bash -c \
    '[ "$(printf "alias e echo\ne piped line\n" | "$0")" = "piped line" ]' "$VMCTL"
check "piped console: spawn -o still waits for the output" bash -c \
    'printf "spawn -o /bin/echo waited\n" | "$0" | grep -q "^\[t[0-9a-f]*\] waited$"' "$VMCTL"
# A script's exit status is the worst of its commands' (2 bad usage, 1
# failure), not the last one's; on a terminal it stays 0.
intr "console: on a terminal the exit status is 0, though help nosuchverb was bad usage" \
    "^\[driver\] exit status 0$"
piped() { check "piped console: exit $1 for: ${2//$'\n'/; }" bash -c \
    'printf "%s\n" "$2" | "$0" >/dev/null 2>&1; [ $? = "$1" ]' "$VMCTL" "$@"; }
piped 0 $'echo a\necho b'
piped 1 $'kill t40fff\necho after'
piped 2 $'bogus\necho after'
piped 2 $'kill t40fff\nbogus\necho after'
piped 2 $'sig 999 t40001\nkill t40fff'
check "piped console: an unknown command points to help, not vmctl --help" bash -c \
    'printf "bogus\n" | "$0" 2>&1 >/dev/null | grep -qx "vmctl: unknown command .bogus. (help lists them)"' \
    "$VMCTL"
check "the shell's unknown command points to vmctl --help" bash -c \
    '"$0" bogus 2>&1 | grep -q "(vmctl --help lists them)"' "$VMCTL"

# One-shot --json forms.
js() { local what=$1 want=$2; shift 2; check "json: $what" bash -c \
    'out=$("${@:2}"); rc=$?; echo "$out"; echo "$out" | grep -qE -- "$1" && [ $rc = 0 ]' _ "$want" "$@"; }
js "echo" '^\{"text":"a b"\}$' "$VMCTL" echo --json a b
js "alias (none outside a console)" '^\{"aliases":\[\]\}$' "$VMCTL" alias --json
js "export lists PVM_EXPORT" '^\{"PVM_EXPORT":"AA:BB","names":\["AA","BB"\]\}$' \
    env PVM_EXPORT=AA:BB "$VMCTL" export --json
js "setenv NAME" '^\{"name":"LVMX","value":"v w"\}$' env "LVMX=v w" "$VMCTL" setenv --json LVMX
js "setenv lists the environment" '"LVMX":"1"' env LVMX=1 "$VMCTL" setenv --json
js "getopt" '^\{"options":\{"PvmRoute":1\}\}$' "$VMCTL" getopt --json PvmRoute
js "getopt lists PVM's 23 options" '"PvmNoReset":1\}\}$' "$VMCTL" getopt --json
js "id" '^\{"tid":[0-9]+,"session":false\}$' "$VMCTL" id --json
js "jobs (none outside a console)" '^\{"jobs":\[\]\}$' "$VMCTL" jobs --json
js "put (persistent outside a console)" '^\{"ok":true,"name":"onek","index":0,"flags":1\}$' \
    "$VMCTL" put --json onek "one value"
js "names PATTERN" '^\{"names":\[\{"name":"onek","entries":\[\{"index":0,"owner":0,"flags":1\}\]\}\]\}$' \
    "$VMCTL" names --json 'one?'
check "json: trace gives XPVM's mask and its 24 events outside a console" bash -c \
    '"$0" trace --json | python3 -c "import json, sys
t = json.load(sys.stdin)
sys.exit(0 if len(t[\"mask\"]) == 35 and len(t[\"events\"]) == 24 and \"send\" in t[\"events\"] else 1)"' \
    "$VMCTL"
# pvmtev.h's TEV_MASK_SET: event k is bit k % 4 of character k / 4.
check "trace's mask is PVM's Pvmtmask: addhosts (0) and user_defined (108) alone" bash -c \
    'printf "trace - *\ntrace + addhosts user_defined\ntrace --json\n" | "$0" | grep -qx \
        "{\"mask\":\"A@@@@@@@@@@@@@@@@@@@@@@@@@@A@@@@@@@\",\"events\":\[\"addhosts\",\"user_defined\"\]}"' \
    "$VMCTL"
check "spawn -@ with a relative LIQUIDVM_HOME traces into a new folder of its absolute trace directory" bash -c \
    'cd "$(dirname "$1")" && LIQUIDVM_HOME=$(basename "$1") "$0" spawn --json -@ pvm_tracer none 1 1 |
     python3 -c "import json, re, sys
sys.exit(0 if re.fullmatch(re.escape(sys.argv[1]) + r\"/trace/pvm_tracer-\d{8}-\d{6}(-\d+)?\", json.load(sys.stdin)[\"trace_dir\"]) else 1)" \
        "$1"' "$VMCTL" "$LIQUIDVM_HOME"
# Two runs in the same second: two folders, the second with -2 (or a later second's).
check "two spawn -@ in a row trace into two folders, each run named apart" bash -c \
    'a=$("$0" spawn -@ pvm_tracer none 1 1 | sed -n "s/^traced into //p") &&
     b=$("$0" spawn -@ pvm_tracer none 1 1 | sed -n "s/^traced into //p") &&
     [ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] && [ -d "$a" ] && [ -d "$b" ] &&
     for i in $(seq 100); do ls "$a"/*.json "$b"/*.json >/dev/null 2>&1 && break; sleep 0.05; done &&
     ra=$(grep -ho "\"run\":\"[^\"]*\"" "$a"/*.json) && rb=$(grep -ho "\"run\":\"[^\"]*\"" "$b"/*.json) &&
     [ "$ra" != "$rb" ]' "$VMCTL"
check "trace + send outside a console changes nothing, exit 1" bash -c \
    '"$0" trace + send 2>/dev/null; [ $? = 1 ]' "$VMCTL"
check "json: setopt outside a console changes nothing, exit 1" bash -c \
    'out=$("$0" setopt --json PvmRoute 3); [ $? = 1 ] && echo "$out" | grep -q "\"set\":false"' "$VMCTL"
check "export outside a console prints what would apply, exit 1" bash -c \
    'out=$(PVM_EXPORT=AA "$0" export BB 2>/dev/null); [ $? = 1 ] && [ "$out" = "PVM_EXPORT=AA:BB" ]' "$VMCTL"
check "spawn passes the variables PVM_EXPORT names" bash -c \
    'LVMY=yes PVM_EXPORT=LVMY "$0" spawn -o /usr/bin/env | grep -q "^\[t[0-9a-f]*\] LVMY=yes$"' "$VMCTL"
check "vmctl help VERB" bash -c '"$0" help jobs | grep -q "^Syntax:  jobs \[-l\]"' "$VMCTL"

# --help answers 0, bad usage 2.
for verb in alias unalias echo export unexport setenv getopt setopt id jobs names put trace; do
    check "$verb --help exits 0" bash -c '"$0" "$1" --help | grep -q "^Syntax:  $1"' "$VMCTL" "$verb"
done
bad() { check "bad usage exits 2: $*" bash -c '"$0" "$@" 2>/dev/null; [ $? = 2 ]' "$VMCTL" "$@"; }
bad put onlyname
bad put k v nosuchflag
bad setopt PvmBogus 1
bad setopt PvmRoute notanumber
bad getopt PvmBogus
bad jobs -x
bad unalias
bad unexport
bad export a:b
bad setenv a=b
bad names a b
bad id extra
bad help nosuchverb
bad trace bogus
bad trace -
check "halt" "$VMCTL" halt
