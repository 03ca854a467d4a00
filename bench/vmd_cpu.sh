#!/usr/bin/env bash
# bench/vmd_cpu.sh - what the daemons spend routing messages: PVM's timing
# protocol (bench/pvm_timing) between two tasks on a local VM of two
# daemons, by the default route (task -> daemon -> daemon -> task), and the
# CPU seconds both daemons used meanwhile (utime + stime from /proc), per
# round trip.  CPU time, unlike wall time, hardly moves when other work
# shares the machine, so it compares two builds of the daemon on a busy
# machine (bench/ab.sh).
#
#   bench/vmd_cpu.sh [--build DIR] [-r REPS]
#
# Prints one JSON object: reps, round trips, the daemons' CPU microseconds
# per round trip (vmd_cpu_us_per_rt) and the timing protocol's medians.
# Exit status: 0, 1 when a run failed, 2 on a usage error.
set -u
build=build reps=300
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=${2:-}; shift 2 ;;
    -r) reps=${2:-}; shift 2 ;;
    --help|-h) sed -n 2,14p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/vmd_cpu.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "bench/vmd_cpu.sh: -r needs a positive number" >&2; exit 2; }
VMCTL=$(pwd)/$build/bin/vmctl PT=$(pwd)/$build/bench/pvm_timing
for b in "$VMCTL" "$PT"; do [ -x "$b" ] || { echo "bench/vmd_cpu.sh: $b is not built (make)" >&2; exit 1; }; done
T=$(mktemp -d /tmp/lvm-vmdcpu.XXXXXX)
export LIQUIDVM_HOME=$T/home
trap '"$VMCTL" halt >/dev/null 2>&1; rm -rf "$T"' EXIT
printf 'spawn_path = [ "%s" ];\n' "$(dirname "$PT")" >"$T/vm.conf"
"$VMCTL" start --local 2 -c "$T/vm.conf" >"$T/start.out" 2>&1 || { cat "$T/start.out" >&2; exit 1; }
pids=$(ps -eo pid=,args= | awk -v h="--home $LIQUIDVM_HOME" 'index($0, h) && $2 ~ /vmd$/ { print $1 }')
ticks() { local t=0 p; for p in $pids; do t=$((t + $(awk '{ print $14 + $15 }' /proc/$p/stat))); done; echo $t; }
before=$(ticks)
echo "   ... $reps round trips of each size by the default route" >&2
LIQUIDVM_HOST=host0 "$PT" -H host1 -r "$reps" --json >"$T/pt.json" || exit 1
after=$(ticks)
python3 - "$T/pt.json" "$reps" "$before" "$after" "$(getconf CLK_TCK)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
reps, before, after, hz = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
res = r["results"] if "results" in r else r["runs"][0]["results"]
rts = reps * len(res)
print(json.dumps({"benchmark": "vmd_cpu", "reps": reps, "round_trips": rts,
                  "vmd_cpu_us_per_rt": (after - before) / hz / rts * 1e6,
                  "results": [{"bytes": x["bytes"], "median_us": x["median_us"]} for x in res]}))
PY
