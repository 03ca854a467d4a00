#!/usr/bin/env bash
# The cost of tracing a PVM program (issue 27: at most 3 %): ping-pong
# between two tasks of one host (tests/integ/pvm_tracer), untraced and
# with LIQUIDVM_TRACE, interleaved so that the machine's drift touches both
# alike; for each grain (microseconds of spinning before each send, 0: bare
# ping-pong), the median round trip (the loop only) and the median whole
# run (start, spawn, the loop, and writing the traces at the end).
#
#   bench/pvm_trace_overhead.sh [PAIRS] [ROUNDS] [GRAINS...]
set -u
pairs=${1:-5}
rounds=${2:-20000}
shift $(( $# > 2 ? 2 : $# ))
grains=("$@")
[ ${#grains[@]} -gt 0 ] || grains=(0 20 100)
cd "$(dirname "$0")/.."
VMCTL=${VMCTL:-build/bin/vmctl}
P=${P:-build/tests/integ/pvm_tracer}
D=$(mktemp -d /tmp/lvm-bench.XXXXXX)
export LIQUIDVM_HOME=$D/home
trap '"$VMCTL" halt >/dev/null 2>&1; rm -rf "$D"' EXIT
printf 'spawn_path = [ "%s" ];\n' "$(cd "$(dirname "$P")" && pwd)" >"$D/vm.conf"
"$VMCTL" start --local 1 -c "$D/vm.conf" >/dev/null || exit 1
for g in "${grains[@]}"; do
    for ((i = 0; i < pairs; i++)); do
        for mode in off on; do
            rm -rf "$D/tr"
            s=$(date +%s%N)
            if [ $mode = on ]; then
                r=$(LIQUIDVM_TRACE=$D/tr "$P" none "$rounds" 8 "$g") || exit 1
            else
                r=$("$P" none "$rounds" 8 "$g") || exit 1
            fi
            e=$(date +%s%N)
            echo "$g $mode $(echo "$r" | sed -n 's/^rtt_us //p') $(( (e - s) / 1000 ))"
        done
    done
done >"$D/raw"
python3 - "$D/raw" "$rounds" <<'PY'
import statistics, sys
from collections import defaultdict
rtt, run = defaultdict(list), defaultdict(list)
for line in open(sys.argv[1]):
    g, m, r, w = line.split()
    rtt[(g, m)].append(float(r))
    run[(g, m)].append(float(w) / 1e6)
print("pvm_tracer ping-pong, %s round trips of 8 bytes, two tasks of one host" % sys.argv[2])
print("  %-9s %12s %12s %9s %10s %10s %9s" % ("grain us", "rtt us off", "rtt us on", "rtt +%",
                                              "run s off", "run s on", "run +%"))
for g in sorted({k[0] for k in rtt}, key=float):
    a, b = statistics.median(rtt[(g, "off")]), statistics.median(rtt[(g, "on")])
    c, d = statistics.median(run[(g, "off")]), statistics.median(run[(g, "on")])
    print("  %-9s %12.2f %12.2f %+8.1f%% %10.3f %10.3f %+8.1f%%" % (g, a, b, 100 * (b / a - 1),
                                                                  c, d, 100 * (d / c - 1)))
PY
