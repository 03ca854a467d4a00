#!/usr/bin/env bash
# Bad input to a program's own stencil (issue 25, "Bad input"), on a local
# VM of 3 daemons, with tests/integ/liquid_bad.c (liquid.h only): an update
# that fails at iteration K, one that reads beyond its declared reach (and
# --check-reach finding it), a reduction that turns NaN, description errors
# (no update, a periodic face without its pair), an unknown field or
# option, life2d on a 3D grid.  Each ends with a message naming what went
# wrong and a non-zero exit (1: the job failed, 2: bad options or
# description), within a timeout: no hang.
. "$(dirname "$0")/lib.sh"
BAD=$(dirname "$VMCTL")/../tests/integ/liquid_bad
[ -x "$BAD" ] || skip_all "$BAD is not built"
[ -x "$EXAMPLES/life2d" ] || skip_all "the examples are not built"
export T

write_conf 3.0
check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"

H=(--hosts host0,host1,host2 --probe-seconds 0.01 --quiet --grid 24)

# fails RC "what" PROGRAM ARGS...: the program exits RC within 60 s and
# says something matching the extended regular expression what.
fails() {
    local want=$1 what=$2; shift 2
    timeout 60 "$@" >"$T/bad.out" 2>&1
    local rc=$?
    [ $rc = "$want" ] && grep -Eq -- "$what" "$T/bad.out" ||
        { echo "exit $rc (124: timed out), wanted $want and /$what/"; cat "$T/bad.out"; return 1; }
}
# ... and no job ran: the error came before any worker was spawned.
nojob() { ! grep -q "^job:" "$T/bad.out"; }

check "the control (no fault) runs bit-identical" \
    fails 0 "bit-identical to the single-process reference" "$BAD" "${H[@]}" --iters 20 --verify

# An update that returns an error: the worker's message names the program,
# the code and the iterations of the pass that failed.
iters_hold() {
    python3 -c 'import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"liquid_bad: the update returned 7 \(iterations (\d+)\.\.(\d+)\)", t)
o = re.search(r"liquid_bad: the update returned 7 \(iteration (\d+)\)", t)
k = int(sys.argv[2])
sys.exit(0 if (m and int(m.group(1)) <= k <= int(m.group(2))) or (o and int(o.group(1)) == k) else 1)' "$T/bad.out" "$1"
}
check "an update returning 7 at iteration 5 ends the job: exit 1" \
    fails 1 "worker t[0-9a-f]+ on host host[0-2] failed: liquid_bad: the update returned 7" \
    "$BAD" "${H[@]}" --iters 20 --mode 1 --fail-at 5
check "... the message names iterations that hold 5" iters_hold 5
check "at iteration 37 of 60, with balancing epochs and --verify: exit 1" \
    fails 1 "the update returned 7" "$BAD" "${H[@]}" --iters 60 --mode 1 --fail-at 37 --verify
check "... the message names iterations that hold 37" iters_hold 37
check "... and the bits are not claimed" bash -c '! grep -q "bit-identical" "$T/bad.out"'
check "at iteration 1 with --halo 1: exit 1" \
    fails 1 "the update returned 7" "$BAD" "${H[@]}" --iters 10 --mode 1 --fail-at 1 --halo 1
check "... the message names iteration 1" iters_hold 1

# An update reading b at (1,1,0) with a declared 7-point star.
check "--check-reach finds the read of b at offset (1,1,0): exit 1" \
    fails 1 "--check-reach: the update reads b at offset \(1,1,0\), beyond its declared reach \(radius 1,1,1, star\)" \
    "$BAD" "${H[@]}" --iters 5 --mode 2 --check-reach
check "... before any job ran" nojob
check "without --check-reach the same job runs (exit 0)" \
    fails 0 "^checksum [0-9a-f]{16}" "$BAD" "${H[@]}" --iters 5 --mode 2
check "--check-reach passes the control and says so" \
    fails 0 "--check-reach: the update reads nothing beyond its reach" \
    "$BAD" --hosts host0,host1,host2 --probe-seconds 0.01 --grid 24 --iters 5 --check-reach

check "a reduction that returns NaN at iteration 10: exit 1, naming it not a number" \
    fails 1 "liquid_bad: reduction bad is not a number at iteration 10" \
    "$BAD" "${H[@]}" --iters 30 --mode 3 --fail-at 10
check "a description without an update: exit 2" \
    fails 2 "liquid_bad: no update \(liquid_update\)" "$BAD" "${H[@]}" --iters 5 --mode 4
check "a periodic face on x's low side only: exit 2" \
    fails 2 "liquid_bad: periodic boundary on one face of x only: periodic faces come in pairs" \
    "$BAD" "${H[@]}" --iters 5 --mode 5
check "--png --field c: exit 2 naming the fields a and b" \
    fails 2 "--field c: no such field \(liquid_bad has: a b\)" \
    "$BAD" "${H[@]}" --iters 5 --png "$T/x.png" --field c
check "... before any job ran, and no picture" bash -c '! grep -q "^job:" "$T/bad.out" && ! [ -e "$T/x.png" ]'
check "an unknown option: exit 2" \
    fails 2 "unknown option '--bogus'" "$BAD" "${H[@]}" --iters 5 --bogus 1
check "a program's own option with a bad value: exit 2" \
    fails 2 "--mode: expected an integer, got 'x'" "$BAD" "${H[@]}" --iters 5 --mode x
check "life2d on a 3D grid: exit 2" \
    fails 2 "life2d: the grid is 2D" "$EXAMPLES/life2d" "${H[@]}" --iters 5
check "... before any job ran" nojob

check "no task is left" wait_for 10 bash -c '[ "$("$0" ps -a --json | grep -c "\"tid\"")" = 0 ]' "$VMCTL"
check "halt" "$VMCTL" halt
