#!/usr/bin/env bash
# Spawned tasks' output as PVM 3.4 delivers it (pvm_catchout, PvmOutputTid
# and PvmOutputCode), on a local VM of 3 daemons and, in the plain build,
# on real PVM 3.4.6 with the same checks: pvm_output (tests/integ) spawns
# children that each spawn a grandchild.
#   - pvm_catchout: every task's lines between "[tTID] BEGIN" and
#     "[tTID] EOF", the grandchildren's too (the option is inherited), a
#     last line without its newline printed whole, and pvm_exit returns
#     only after every EOF; with PvmShowTids 0 the lines are bare;
#   - a line printed after its catcher left goes to a daemon's log;
#   - PvmOutputTid/Code: messages (int tid, int count, bytes) that say
#     spawned (-2) and begin (-1), each with the task's parent's tid, the
#     bytes, and EOF (0), for every task.
. "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$VMCTL")/.." && pwd)
SRC=$(pwd)
P=$B/tests/integ/pvm_output
[ -x "$P" ] || skip_all "pvm_output is not built"
command -v python3 >/dev/null || skip_all "needs python3"

# checks KIND N FILE: the checks of one run's output (KIND catch, bare or
# code; N children); prints what is wrong.
checks() {
    python3 - "$@" <<'PY'
import re, sys
kind, n, lines = sys.argv[1], int(sys.argv[2]), open(sys.argv[3]).read().split("\n")
lines = [l for l in lines if l]
child = ["child line 1", "child last (no newline)"]
def fail(why):
    print("#", why); [print("#   " + l) for l in lines]; sys.exit(1)
if kind == "code":
    seq = {}
    for l in lines:
        m = re.match(r"out (t[0-9a-f]+) (-?\d+) (.*)$", l)
        if m:
            seq.setdefault(m[1], []).append((int(m[2]), m[3].replace("\\n", "\n")))
    if len(seq) != 2 * n or lines[-1] != "parent done":
        fail("%d tasks' output, last line %r" % (len(seq), lines[-1]))
    kids, me, parent = 0, lines[0].split()[-1], {}
    for tid, s in seq.items():
        counts, data = [c for c, _ in s], "".join(d for c, d in s if c > 0)
        if counts[:2] != [-2, -1] or counts[-1] != 0 or any(c <= 0 for c in counts[2:-1]):
            fail("%s: counts %s" % (tid, counts))
        if s[0][1] != s[1][1] or not s[0][1].startswith("ptid t"):
            fail("%s: the parent tid after -2 and -1: %r, %r" % (tid, s[0][1], s[1][1]))
        parent[tid] = s[0][1][5:]
        if any(c != len(d) for c, d in s if c > 0):
            fail("%s: a count is not its bytes' length" % tid)
        if data == "child line 1\nchild last (no newline)":
            kids += 1
        elif data != "grand line\n":
            fail("%s: %r" % (tid, data))
    if kids != n:
        fail("%d children" % kids)
    # Each child's parent is the catcher; each grandchild's, a child.
    kid_tids = [t for t, p in parent.items() if p == me]
    if len(kid_tids) != n or sorted(p for p in parent.values() if p != me) != sorted(kid_tids):
        fail("parents %s (the catcher is %s)" % (parent, me))
    sys.exit(0)
if lines[-1] != "parent after exit" or "parent spawned %d" % n not in lines:
    fail("the parent's lines")
if kind == "bare":
    body = [l for l in lines if not l.startswith("parent")]
    if sorted(body) != sorted(child * n + ["grand line"] * n):
        fail("bare lines")
    sys.exit(0)
seq = {}
for l in lines:
    m = re.match(r"\[(t[0-9a-f]+)\] (.*)$", l)
    if m:
        seq.setdefault(m[1], []).append(m[2])
if len(seq) != 2 * n:
    fail("%d tasks caught" % len(seq))
got = sorted(tuple(s) for s in seq.values())
want = sorted([tuple(["BEGIN"] + child + ["EOF"])] * n + [("BEGIN", "grand line", "EOF")] * n)
if got != want:
    fail("per task: %s" % got)
PY
}

# scenarios NAME RUN...: the three runs through RUN (a command prefix),
# each checked.
scenarios() {
    local name=$1; shift
    check "$name: pvm_catchout: 3 children and their grandchildren, BEGIN to EOF, caught before pvm_exit returns" \
        bash -c '"$@" catch 3 >"$T/c.out" 2>&1 && "$0" catch 3 "$T/c.out"' checks "$@" "$P"
    check "$name: pvm_catchout with PvmShowTids 0: the bare lines" \
        bash -c '"$@" catch 2 bare >"$T/b.out" 2>&1 && "$0" bare 2 "$T/b.out"' checks "$@" "$P"
    check "$name: PvmOutputTid and PvmOutputCode: spawned, begin, the bytes and EOF of every task" \
        bash -c '"$@" code 2 >"$T/o.out" 2>&1 && "$0" code 2 "$T/o.out"' checks "$@" "$P"
}
export -f checks
export T

# ---- LiquidVM
write_conf 2.0 "spawn_path = [ \"$B/tests/integ\" ];"
check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"
run_lvm() { timeout 60 "$@"; }
export -f run_lvm
scenarios LiquidVM run_lvm
check "vmctl spawn -o shows a task's lines and its child's (PvmOutputTid inherited)" \
    bash -c '"$0" spawn -o pvm_output child >"$1" && grep -q "^\[t[0-9a-f]*\] child line 1$" "$1" &&
             grep -q "^\[t[0-9a-f]*\] grand line$" "$1" &&
             grep -q "^\[t[0-9a-f]*\] child last (no newline)$" "$1"' "$VMCTL" "$T/spawn.out"
# A line whose catcher has left goes to the log of the catcher's host (real
# PVM 3.4.6 drops it).
timeout 20 "$P" leave >"$T/leave.out" 2>&1
late_logged() {
    for _ in $(seq 50); do
        grep -q "t[0-9a-f]*: late line (its catcher t[0-9a-f]* has left)" \
            "$LIQUIDVM_HOME"/logs/*.log && return 0
        sleep 0.2
    done
    return 1
}
export -f late_logged
check "a child's line after its catcher left without pvm_exit is in a daemon's log" \
    bash -c 'grep -q "^parent spawned 1$" "$0" && "$1"' "$T/leave.out" late_logged
check "halt" "$VMCTL" halt

# ---- real PVM 3.4.6, the same checks (plain build: once is enough)
R=$SRC/bench/realpvm.sh
export PVM_ROOT=${PVM_ROOT:-/usr/lib/pvm3} PVM_ALLOW_ROOT=1
if nm -D "$B/lib/libpvm3.so.3" 2>/dev/null | grep -q __asan; then
    echo "# SKIP real PVM: sanitizer build (the comparison runs in the plain build)"
elif ! [ -f /usr/include/pvm3.h ] || ! [ -x "$PVM_ROOT/lib/pvmd" ]; then
    echo "# SKIP real PVM: PVM 3.4.6 (pvm, pvm-dev) is not installed"
else
    mkdir -p "$T/real"
    if ! cc -w -o "$T/real/pvm_output" "$SRC/tests/integ/pvm_output.c" -lpvm3; then
        notok "pvm_output builds against real PVM 3.4.6"
    else
        export REALPVM_PREFIX=lvo$(( $$ % 10000 ))
        cleanup_extra() { "$R" down; }
        "$R" up 1 >"$T/up.out" 2>&1
        case $? in
        0)
            H=${REALPVM_PREFIX}1
            check "real PVM 3.4.6 starts" "$R" start "$T/real"
            run_real() { "$R" exec "$H" timeout 60 "$@"; }
            export -f run_real
            export R H
            P=$T/real/pvm_output scenarios "real PVM 3.4.6" run_real
            check "real PVM halts" "$R" halt
            ;;
        77) echo "# SKIP real PVM: $(cat "$T/up.out")" ;;
        *) notok "a namespace host for real PVM"; cat "$T/up.out" ;;
        esac
    fi
fi
