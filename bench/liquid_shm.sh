#!/usr/bin/env bash
# bench/liquid_shm.sh - a stencil job whose workers share one host, with
# their messages through shared-memory rings (issue 31) and without (the
# Unix-socket links of before), in interleaved pairs (the order flips
# every pair) on one local daemon: without is LIQUIDVM_SHM_RING=0, passed
# to the workers with PVM_EXPORT.  Prints per grid the medians of the JSON
# reports' time per iteration, their ratio (goal: rings at least 1.1x
# faster) and the workers' communication share.
#
#   bench/liquid_shm.sh [--build DIR] [--grids "64 128"] [--tasks T]
#                       [--pairs P] [--iters N] [--kernel jacobi|rbgs]
#
# Everything runs in its own LIQUIDVM_HOME, halted afterwards.
set -u
build=build grids="64 128" tasks=2 pairs=5 iters=300 kernel=jacobi
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --grids) grids=$2; shift 2 ;;
    --tasks) tasks=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --kernel) kernel=$2; shift 2 ;;
    --help) sed -n 2,13p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/liquid_shm.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
cd "$(dirname "$0")/.." || exit 2
VMCTL=$(pwd)/$build/bin/vmctl VMRUN=$(pwd)/$build/bin/vmrun
for b in "$VMCTL" "$VMRUN"; do
    [ -x "$b" ] || { echo "bench/liquid_shm.sh: $b is missing; run make" >&2; exit 2; }
done
T=$(mktemp -d /tmp/lvm-bench.XXXXXX)
export LIQUIDVM_HOME=$T/home
trap '"$VMCTL" halt >/dev/null 2>&1; rm -rf "$T"' EXIT
"$VMCTL" start --local 1 >"$T/start.out" 2>&1 || { cat "$T/start.out" >&2; exit 1; }

# one on|off GRID: a run; prints time per iteration and communication share.
one() {
    local ring=()
    [ "$1" = off ] && ring=(env LIQUIDVM_SHM_RING=0 PVM_EXPORT=LIQUIDVM_SHM_RING)
    "${ring[@]}" "$VMRUN" stencil --kernel "$kernel" --quiet --grid "$2" --iters "$iters" \
        --hosts host0 --tasks-per-host "$tasks" --decomp hilbert --json "$T/r.json" \
        >"$T/run.out" 2>&1 || { echo "ring $1 failed:" >&2; cat "$T/run.out" >&2; exit 1; }
    python3 -c 'import json,sys; R = json.load(open(sys.argv[1]))
print(R["time_per_iter_s"], R["comm_share"])' "$T/r.json"
}

printf '%-6s %6s %14s %14s %8s %10s %10s\n' grid iters "rings ms/it" "no rings ms/it" \
    speedup "comm rings" "comm none"
for g in $grids; do
    on="" off=""
    for ((p = 1; p <= pairs; p++)); do
        echo "# grid $g, pair $p of $pairs" >&2
        if ((p % 2)); then on+="$(one on "$g");"; off+="$(one off "$g");"
        else off+="$(one off "$g");"; on+="$(one on "$g");"; fi
    done
    python3 -c '
import statistics, sys
def med(s, i): return statistics.median(float(x.split()[i]) for x in s.split(";") if x.strip())
on, off = sys.argv[2], sys.argv[3]
print("%-6s %6s %14.3f %14.3f %8.2f %9.0f%% %9.0f%%" % (sys.argv[1] + "^3", sys.argv[4],
      1e3 * med(on, 0), 1e3 * med(off, 0), med(off, 0) / med(on, 0), 100 * med(on, 1),
      100 * med(off, 1)))' "$g" "$on" "$off" "$iters"
done
echo "# $(date -u +%F), $tasks workers on one daemon ($(nproc) CPUs), load average $(cut -d' ' -f1-3 /proc/loadavg)"
