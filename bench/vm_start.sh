#!/usr/bin/env bash
# How long `vmctl start --local N` takes to a ready VM (every daemon linked
# and listed by the master), and `vmctl halt` to no daemon; beside the time
# real PVM 3.4.6 takes to start its master pvmd (`pvm` console, then `quit`
# leaves it running), measured in the same run.  PVM cannot run several
# pvmds on one host, so only its single-host start is comparable.
#
#   bench/vm_start.sh [RUNS] [N] [--json]
set -u
runs=${1:-10}
n=${2:-4}
json=0
for a in "$@"; do [ "$a" = --json ] && json=1; done
cd "$(dirname "$0")/.."
VMCTL=${VMCTL:-build/bin/vmctl}
export LIQUIDVM_HOME=$(mktemp -d /tmp/lvm-bench.XXXXXX)/home
trap 'rm -rf "$(dirname "$LIQUIDVM_HOME")"' EXIT
"$VMCTL" ca init >/dev/null

ms() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

starts=() halts=() one=()
for ((i = 0; i < runs; i++)); do
    printf '\rrun %d/%d' $((i + 1)) "$runs" >&2
    t0=$(ms); "$VMCTL" start --local "$n" >"$LIQUIDVM_HOME/../start.out" 2>&1 || { echo "start failed:" >&2; cat "$LIQUIDVM_HOME/../start.out" >&2; "$VMCTL" halt >/dev/null 2>&1; exit 1; }
    t1=$(ms)
    [ "$("$VMCTL" conf --json | grep -o '"state":"up"' | wc -l)" = "$n" ] || { echo "not $n hosts" >&2; exit 1; }
    t2=$(ms); "$VMCTL" halt >/dev/null; t3=$(ms)
    starts+=($(( (t1 - t0) / 1000 ))); halts+=($(( (t3 - t2) / 1000 )))
    t0=$(ms); "$VMCTL" start --local 1 >/dev/null 2>&1; t1=$(ms); "$VMCTL" halt >/dev/null
    one+=($(( (t1 - t0) / 1000 )))
done
echo >&2

pvm_us=""
if [ -x /usr/lib/pvm3/lib/pvmd ] || command -v pvm >/dev/null; then
    export PVM_ROOT=/usr/lib/pvm3 PVM_ALLOW_ROOT=1
    pv=()
    for ((i = 0; i < runs; i++)); do
        printf '\rPVM run %d/%d' $((i + 1)) "$runs" >&2
        t0=$(ms); echo quit | pvm >/dev/null 2>&1; t1=$(ms)
        (echo halt | pvm >/dev/null 2>&1) 2>/dev/null
        sleep 0.2
        pv+=($(( (t1 - t0) / 1000 )))
    done
    echo >&2
    pvm_us=$(printf '%s\n' "${pv[@]}" | median)
fi
s=$(printf '%s\n' "${starts[@]}" | median)
h=$(printf '%s\n' "${halts[@]}" | median)
o=$(printf '%s\n' "${one[@]}" | median)
if [ $json = 1 ]; then
    pj=null
    [ -n "$pvm_us" ] && pj=$(printf '%.1f' "$(echo "$pvm_us/1000" | bc -l)")
    printf '{"runs":%d,"hosts":%d,"start_ms":%.1f,"halt_ms":%.1f,"start1_ms":%.1f,"pvm_start1_ms":%s}\n' \
        "$runs" "$n" "$(echo "$s/1000" | bc -l)" "$(echo "$h/1000" | bc -l)" "$(echo "$o/1000" | bc -l)" "$pj"
else
    printf 'median of %d runs\n' "$runs"
    printf '  LiquidVM  vmctl start --local %d to ready: %8.1f ms\n' "$n" "$(echo "$s/1000" | bc -l)"
    printf '  LiquidVM  vmctl halt to no daemon:         %8.1f ms\n' "$(echo "$h/1000" | bc -l)"
    printf '  LiquidVM  vmctl start --local 1:          %8.1f ms\n' "$(echo "$o/1000" | bc -l)"
    [ -n "$pvm_us" ] && printf '  PVM 3.4.6 pvm console starting pvmd:      %8.1f ms\n' "$(echo "$pvm_us/1000" | bc -l)"
fi
