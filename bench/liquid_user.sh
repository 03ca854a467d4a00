#!/usr/bin/env bash
# bench/liquid_user.sh - a program's own stencil against the built-in
# kernel (issue 25, "Speed and memory"): examples/heat3d, the heat equation
# written the plain way liquid.h shows, and `vmrun stencil --kernel jacobi`
# on the same local VM, grid, iterations, hosts and decomposition, run in
# turn (heat3d first in odd rounds, jacobi first in even ones) so both see
# the same machine.  Prints per grid the medians over the rounds of each
# one's updates/s (the JSON report's updates_per_s) and their ratio (goal
# >= 0.8), each side's spread (max/min), the probe's updates/s per host
# (each kernel alone on a box of its own, no messages), and each worker's
# peak resident memory (rss_bytes, VmHWM) against the most bytes of fields,
# levels and halos its regions held at once (held_peak_bytes; a worker
# that gave quanta away held more before than at the end): the largest
# ratio over the workers that held quanta (goal <= 1.2), and the resident
# memory of a worker that never held any (its fixed cost), where one exists.
#
#   bench/liquid_user.sh [--build DIR] [--grids "96 128"] [--hosts N]
#                        [--rounds R] [--seconds S] [--decomp METHOD] [--heavy K]
#
# --seconds (default 4) sets each grid's iterations from a short first run
# of jacobi, so that a run lasts about that long; --decomp (default
# hilbert) keeps both on one placement method (auto: the advisor's choice,
# which may differ between the two); --heavy K (default 1) makes the
# grid's lower octant K times as costly, so that the balancer moves quanta
# (the memory a move needs).  Everything runs in its own LIQUIDVM_HOME,
# halted afterwards.
set -u
build=build grids="96 128" hosts=3 rounds=3 seconds=4 decomp=hilbert heavy=1
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --grids) grids=$2; shift 2 ;;
    --hosts) hosts=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --decomp) decomp=$2; shift 2 ;;
    --heavy) heavy=$2; shift 2 ;;
    --help) sed -n 2,26p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/liquid_user.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
cd "$(dirname "$0")/.." || exit 2
VMCTL=$(pwd)/$build/bin/vmctl VMRUN=$(pwd)/$build/bin/vmrun HEAT=$(pwd)/$build/examples/heat3d
for b in "$VMCTL" "$VMRUN" "$HEAT"; do
    [ -x "$b" ] || { echo "bench/liquid_user.sh: $b is missing; run make" >&2; exit 2; }
done
T=$(mktemp -d /tmp/lvm-bench.XXXXXX)
export LIQUIDVM_HOME=$T/home
trap '"$VMCTL" halt >/dev/null 2>&1; rm -rf "$T"' EXIT
"$VMCTL" start --local "$hosts" >"$T/start.out" 2>&1 || { cat "$T/start.out" >&2; exit 1; }
H=$(seq -s, 0 $((hosts - 1)) | sed 's/\([0-9]*\)/host\1/g')

# one NAME GRID ITERS OUT: a run of heat3d or jacobi, its report in OUT.
one() {
    local cmd
    case $1 in
    heat3d) cmd=("$HEAT") ;;
    jacobi) cmd=("$VMRUN" stencil --kernel jacobi) ;;
    esac
    "${cmd[@]}" --quiet --grid "$2" --iters "$3" --hosts "$H" --decomp "$decomp" \
        --heavy "$heavy" --json "$4" >"$T/run.out" 2>&1 || { echo "$1 failed:" >&2; cat "$T/run.out" >&2; exit 1; }
}

printf '%-6s %6s %12s %12s %7s %13s %17s %17s %11s %11s %8s\n' grid iters "heat3d M/s" \
    "jacobi M/s" ratio "spread h / j" "probe M/s heat3d" "probe M/s jacobi" "rss/held h" \
    "rss/held j" "idle MB"
for g in $grids; do
    echo "   ... ${g}^3: sizing the runs" >&2
    one jacobi "$g" 20 "$T/size.json"
    iters=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2]) ** 3
print(max(20, int(float(sys.argv[3]) * r["updates_per_s"] / n) // 10 * 10))' "$T/size.json" "$g" "$seconds")
    for r in $(seq 1 "$rounds"); do
        order="heat3d jacobi"
        [ $((r % 2)) = 0 ] && order="jacobi heat3d"
        for k in $order; do
            echo "   ... ${g}^3, $iters iterations: $k (round $r of $rounds)" >&2
            one "$k" "$g" "$iters" "$T/$k.$g.$r.json"
        done
    done
    python3 - "$T" "$g" "$iters" "$rounds" <<'EOF'
import json, statistics, sys
T, g, iters, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def load(k):
    return [json.load(open("%s/%s.%s.%d.json" % (T, k, g, r))) for r in range(1, rounds + 1)]
H, J = load("heat3d"), load("jacobi")
def ups(R): return [r["updates_per_s"] for r in R]
def spread(v): return max(v) / min(v)
def probe(R): return statistics.median(statistics.median(h["updates_per_s"] for h in r["hosts"]) for r in R)
def mem(R):
    ratios = [max(w["rss_bytes"] / w["held_peak_bytes"] for w in r["workers"]
                  if w["held_peak_bytes"] > 0) for r in R]
    idle = [w["rss_bytes"] for r in R for w in r["workers"] if w["held_peak_bytes"] == 0]
    return statistics.median(ratios), (statistics.median(idle) / 1e6 if idle else None)
h, j = statistics.median(ups(H)), statistics.median(ups(J))
mh, ih = mem(H)
mj, ij = mem(J)
print("%-6s %6s %12.1f %12.1f %7.2f %6.2f / %4.2f %17.1f %17.1f %11.2f %11.2f %8s" % (
    g + "^3", iters, h / 1e6, j / 1e6, h / j, spread(ups(H)), spread(ups(J)), probe(H) / 1e6,
    probe(J) / 1e6, mh, mj, "-" if ih is None else "%.1f" % ih))
# Per worker, the last round: what the ratio is made of.
for name, R in (("heat3d", H), ("jacobi", J)):
    print("       %s: quanta moved per round %s; round %d: workers (quanta, rss MB, held MB at most / at the end): %s" % (
        name, [r["balance"]["quanta_moved"] for r in R], rounds, ", ".join(
        "%d %.1f %.1f/%.1f" % (w["quanta"], w["rss_bytes"] / 1e6, w["held_peak_bytes"] / 1e6,
                               w["held_bytes"] / 1e6)
        for w in R[-1]["workers"])))
EOF
done
echo "(medians of $rounds rounds, interleaved; $hosts hosts on one machine ($(nproc) CPUs), --decomp $decomp, --heavy $heavy)"
