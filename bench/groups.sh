#!/usr/bin/env bash
# A barrier and a 1 MB broadcast among 16 tasks: LiquidVM on 4 hosts
# (`vmctl start --local 4`, TLS between the daemons) and real PVM 3.4.6 in
# the same run, printed side by side.  The same program, bench/groups/gbench.c,
# is built against our pvm3.h/libgpvm3/libpvm3 and against PVM's.
#
# PVM runs ONE host here: it allows one pvmd per user and machine, and its
# multi-host setup (network namespaces, rsh) is not done by this script, so
# its 16 tasks share one pvmd and never cross a network; LiquidVM's cross
# three TLS links.  The comparison therefore favours PVM.
#
#   bench/groups.sh [TASKS] [BARRIERS] [BCASTS] [RUNS]
set -u
n=${1:-16}
nbar=${2:-200}
nbc=${3:-20}
runs=${4:-3}
cd "$(dirname "$0")/.."
B=$(pwd)/build
VMCTL=${VMCTL:-$B/bin/vmctl}
W=$(mktemp -d /tmp/lvm-gbench.XXXXXX)
export LIQUIDVM_HOME=$W/home
trap '"$VMCTL" halt >/dev/null 2>&1; rm -rf "$W"' EXIT
mkdir -p "$W/lvm" "$W/pvm"
cc -O2 -I lib -o "$W/lvm/gbench" bench/groups/gbench.c -L"$B/lib" -lgpvm3 -lpvm3 \
    -Wl,-rpath,"$B/lib" || exit 1
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
field() { sed -n "s/^$1 //p" "$2"; }

printf 'spawn_path = [ "%s" ];\n' "$W/lvm" >"$W/vm.conf"
"$VMCTL" start --local 4 -c "$W/vm.conf" >/dev/null || { echo "vmctl start failed" >&2; exit 1; }
lb=() lc=()
for ((i = 0; i < runs; i++)); do
    (cd "$W/lvm" && timeout 300 ./gbench "$n" "$nbar" "$nbc") >"$W/l.$i" || { echo "LiquidVM run failed" >&2; exit 1; }
    lb+=("$(field barrier_us "$W/l.$i")"); lc+=("$(field bcast_us "$W/l.$i")")
done
"$VMCTL" halt >/dev/null

pb=() pc=()
if [ -f /usr/include/pvm3.h ] && command -v pvm >/dev/null; then
    cc -O2 -o "$W/pvm/gbench" bench/groups/gbench.c -lgpvm3 -lpvm3 || exit 1
    printf '#include <pvm3.h>\nint main(void){pvm_setopt(PvmAutoErr,0);if(pvm_mytid()<0)return 1;pvm_halt();return 0;}\n' >"$W/halt.c"
    cc -o "$W/pvm/halt" "$W/halt.c" -lpvm3
    echo "* ep=/usr/lib/pvm3/lib:$W/pvm" >"$W/hostfile"
    # One real PVM per uid and /tmp: others may use it too, so take the lock.
    flock -w 300 /tmp/lvm-realpvm.lock bash -c '
        export PVM_ROOT=/usr/lib/pvm3 PVM_ALLOW_ROOT=1
        echo quit | timeout 10 pvm "$0/hostfile" >/dev/null 2>&1
        for ((i = 0; i < $4; i++)); do
            (cd "$0/pvm" && timeout 300 ./gbench "$1" "$2" "$3") >"$0/p.$i" || echo "PVM run $i failed" >&2
        done
        timeout 10 "$0/pvm/halt" >/dev/null 2>&1; sleep 0.5; true' "$W" "$n" "$nbar" "$nbc" "$runs"
    for ((i = 0; i < runs; i++)); do
        [ -s "$W/p.$i" ] || continue
        pb+=("$(field barrier_us "$W/p.$i")"); pc+=("$(field bcast_us "$W/p.$i")")
    done
fi

L_B=$(printf '%s\n' "${lb[@]}" | median); L_C=$(printf '%s\n' "${lc[@]}" | median)
printf '%d tasks; median of %d runs (%d barriers, %d broadcasts of 1 MB each)\n' "$n" "$runs" "$nbar" "$nbc"
printf '%-28s %14s %14s %8s\n' "" "LiquidVM" "PVM 3.4.6" "ratio"
printf '%-28s %14s %14s\n' "hosts" "4 (TLS links)" "1 (see note)"
if [ ${#pb[@]} -gt 0 ]; then
    P_B=$(printf '%s\n' "${pb[@]}" | median); P_C=$(printf '%s\n' "${pc[@]}" | median)
    printf '%-28s %11.1f us %11.1f us %8.2f\n' "barrier" "$L_B" "$P_B" "$(echo "$L_B/$P_B" | bc -l)"
    printf '%-28s %11.1f us %11.1f us %8.2f\n' "1 MB broadcast, all acked" "$L_C" "$P_C" "$(echo "$L_C/$P_C" | bc -l)"
else
    printf '%-28s %11.1f us %14s\n' "barrier" "$L_B" "n/a"
    printf '%-28s %11.1f us %14s\n' "1 MB broadcast, all acked" "$L_C" "n/a"
fi
echo "note: PVM ran its $n tasks on ONE host (one pvmd per user and machine; no"
echo "      multi-host PVM set up here); LiquidVM ran them on 4 daemons over TLS."
