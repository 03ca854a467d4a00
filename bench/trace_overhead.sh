#!/usr/bin/env bash
# The cost of --trace (issue 27: at most 3 %): the same vmrun stencil job,
# tracing off and on in turn (interleaved, so that the machine's drift
# touches both alike), on a local VM of 3 hosts; the iterations' time
# (the report's time_per_iter_s, setup and the trace's gathering not
# included) and the whole run's, median per setting.
#
#   bench/trace_overhead.sh [PAIRS] [vmrun stencil options...]
set -u
pairs=${1:-5}
shift $(( $# > 0 ? 1 : 0 ))
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--grid 128 --iters 100 --halo 2)
cd "$(dirname "$0")/.."
VMCTL=${VMCTL:-build/bin/vmctl}
VMRUN=${VMRUN:-build/bin/vmrun}
D=$(mktemp -d /tmp/lvm-bench.XXXXXX)
export LIQUIDVM_HOME=$D/home
trap '"$VMCTL" halt >/dev/null 2>&1; rm -rf "$D"' EXIT
"$VMCTL" start --local 3 >/dev/null || exit 1
for ((i = 0; i < pairs; i++)); do
    for mode in off on; do
        t=()
        [ $mode = on ] && t=(--trace "$D/t.json")
        "$VMRUN" stencil --quiet --probe-seconds 0.05 "${args[@]}" "${t[@]}" \
            --json "$D/$mode.$i.json" >/dev/null || exit 1
    done
done
python3 - "$D" "$pairs" "${args[*]}" <<'PY'
import json, statistics, sys
d, n, args = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r = {m: [json.load(open("%s/%s.%d.json" % (d, m, i))) for i in range(n)] for m in ("off", "on")}
it = {m: statistics.median(x["time_per_iter_s"] for x in r[m]) for m in r}
run = {m: statistics.median(x["run_s"] for x in r[m]) for m in r}
print("vmrun stencil %s, %d runs each, tracing off and on interleaved" % (args, n))
print("  %-5s %16s %10s" % ("trace", "ms/iteration", "run s"))
for m in ("off", "on"):
    print("  %-5s %16.3f %10.3f" % (m, 1e3 * it[m], run[m]))
print("  overhead: %+.1f%% per iteration, %+.1f%% of the run" %
      (100 * (it["on"] / it["off"] - 1), 100 * (run["on"] / run["off"] - 1)))
PY
