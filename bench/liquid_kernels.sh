#!/usr/bin/env bash
# bench/liquid_kernels.sh - vmrun stencil's kernels as liquid.h updates
# (lib/liquid/liq_ukern.c, the runtime's boxes, trapezoids and wavefront)
# against the built-in path they replaced (issue 25, "vmrun stencil on the
# same API": goal, new at least 0.95 of old).  Old: --old VMRUN, a vmrun
# built before the switch (kernels/, cache tiles, sweeps per pass); its
# workers are that binary too.  New: this build's vmrun stencil.  Both give
# the same bits (each --verify against kernels/).  On one local VM, per
# grid and kernel, old and new run in turn (old first in odd rounds, new
# first in even ones); prints the medians of the JSON reports'
# updates_per_s, their ratio, and each side's spread (max/min).
#
#   bench/liquid_kernels.sh --old VMRUN [--build DIR] [--grids "96 160"]
#                           [--hosts N] [--rounds R] [--seconds S]
#
# --seconds (default 3) sets each grid's iterations from the run time
# (run_s) of a first run of 20 iterations of the old Jacobi.  --decomp
# hilbert for both.  Everything runs in its own LIQUIDVM_HOME, halted
# afterwards.
set -u
build=build grids="96 160" hosts=3 rounds=3 seconds=3 OLD=""
while [ $# -gt 0 ]; do
    case $1 in
    --old) OLD=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --grids) grids=$2; shift 2 ;;
    --hosts) hosts=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --help) sed -n 2,19p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/liquid_kernels.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
cd "$(dirname "$0")/.." || exit 2
[ -n "$OLD" ] || { echo "bench/liquid_kernels.sh: --old VMRUN is needed (a vmrun built before the switch)" >&2; exit 2; }
OLD=$(realpath "$OLD")
VMCTL=$(pwd)/$build/bin/vmctl VMRUN=$(pwd)/$build/bin/vmrun
for b in "$VMCTL" "$VMRUN" "$OLD"; do
    [ -x "$b" ] || { echo "bench/liquid_kernels.sh: $b is missing; run make" >&2; exit 2; }
done
T=$(mktemp -d /tmp/lvm-bench.XXXXXX)
export LIQUIDVM_HOME=$T/home
trap '"$VMCTL" halt >/dev/null 2>&1; rm -rf "$T"' EXIT
"$VMCTL" start --local "$hosts" >"$T/start.out" 2>&1 || { cat "$T/start.out" >&2; exit 1; }
H=$(seq -s, 0 $((hosts - 1)) | sed 's/\([0-9]*\)/host\1/g')

# one SIDE KERNEL GRID ITERS: a run; prints its updates/s.
one() {
    local cmd
    if [ "$1" = old ]; then cmd=("$OLD" stencil --kernel "$2")
    else cmd=("$VMRUN" stencil --kernel "$2"); fi
    "${cmd[@]}" --quiet --grid "$3" --iters "$4" --hosts "$H" --decomp hilbert \
        --json "$T/r.json" >"$T/run.out" 2>&1 || { echo "$1 $2 failed:" >&2; cat "$T/run.out" >&2; exit 1; }
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["updates_per_s"])' "$T/r.json"
}
stats() { python3 -c '
import statistics, sys
o = [float(x) for x in sys.argv[1].split()]; n = [float(x) for x in sys.argv[2].split()]
mo, mn = statistics.median(o), statistics.median(n)
print("%9.0f M %9.0f M %7.2f %7.2f %7.2f" % (mo / 1e6, mn / 1e6, mn / mo, max(o) / min(o), max(n) / min(n)))' "$1" "$2"; }

printf '%-6s %-7s %6s %11s %11s %7s %7s %7s\n' grid kernel iters "old M/s" "new M/s" \
    "new/old" "spread o" "spread n"
for g in $grids; do
    one old jacobi "$g" 20 >/dev/null
    iters=$(python3 -c 'import json,sys; R = json.load(open(sys.argv[1]))
print(max(20, int(20 * float(sys.argv[2]) / max(0.01, R["run_s"]))))' "$T/r.json" "$seconds")
    for k in jacobi rbgs; do
        o="" n=""
        for ((r = 1; r <= rounds; r++)); do
            echo "# grid $g, $k, round $r of $rounds" >&2
            if ((r % 2)); then o+=" $(one old $k "$g" "$iters")"; n+=" $(one new $k "$g" "$iters")"
            else n+=" $(one new $k "$g" "$iters")"; o+=" $(one old $k "$g" "$iters")"; fi
        done
        printf '%-6s %-7s %6d %s\n' "$g^3" "$k" "$iters" "$(stats "$o" "$n")"
    done
done
echo "# $(date -u +%F), $hosts hosts on one machine ($(nproc) CPUs), load average $(cut -d' ' -f1-3 /proc/loadavg)"
