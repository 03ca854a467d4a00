#!/usr/bin/env bash
# A barrier and a 1 MB broadcast among 16 tasks on 4 hosts: LiquidVM and
# real PVM 3.4.6 in the same run, printed side by side with the ratio
# LiquidVM / PVM (issue 4; goal: at most 0.5 for both).  The same program,
# bench/groups/gbench.c, is built against our pvm3.h/libgpvm3/libpvm3 and
# against PVM's.
#
# The 4 hosts are network namespaces on a bridge made by bench/realpvm.sh
# (`session`, which also takes the shared real-PVM lock): real PVM runs one
# pvmd in each, and LiquidVM one vmd in each (TLS between them), started
# as bench/pvm_timing.sh does.  Both VMs are up at once and the runs
# alternate (LiquidVM, PVM, LiquidVM, ...), so that the load others put on
# this machine falls on both alike; each figure is the median of the runs.
# The first task runs on the first host and spawns the others with the
# default placement; gbench prints where its members ran, and the table
# shows it for both.  Without namespaces (not root) LiquidVM runs on
# `vmctl start --local 4` and PVM is left out.
#
#   bench/groups.sh [TASKS] [BARRIERS] [BCASTS] [RUNS]
#
# Progress goes to stderr, the table to stdout.
set -u
n=${1:-16}
nbar=${2:-200}
nbc=${3:-20}
runs=${4:-5}
for v in "$n" "$nbar" "$nbc" "$runs"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/groups.sh [TASKS] [BARRIERS] [BCASTS] [RUNS]" >&2; exit 2; }
done
cd "$(dirname "$0")/.." || exit 2
B=$(pwd)/build
VMCTL=${VMCTL:-$B/bin/vmctl}
R=$(pwd)/bench/realpvm.sh
SELF=$(pwd)/bench/groups.sh
say() { echo "groups: $*" >&2; }

# ---- inside the realpvm session: both VMs on the namespace hosts, runs alternating
if [ "${GROUPS_INNER:-}" = 1 ]; then
    W=$GROUPS_W
    read -r -a H <<<"$REALPVM_HOSTS"
    [ ${#H[@]} = 4 ] || { say "expected 4 hosts, got: $REALPVM_HOSTS"; exit 1; }
    printf 'spawn_path = [ "%s" ];\nhoststart = "REALPVM_PREFIX=%s %s exec %%h %%v";\n' \
        "$W/lvm" "$REALPVM_PREFIX" "$R" >"$W/ns.conf"
    say "starting LiquidVM in namespaces ${H[*]}"
    "$R" exec "${H[0]}" "$VMCTL" start --name "${H[0]}" --listen "$("$R" ip "${H[0]}")" \
        -c "$W/ns.conf" >"$W/start.out" 2>&1 &&
        "$R" exec "${H[0]}" "$VMCTL" add "${H[@]:1}" >>"$W/start.out" 2>&1 ||
        { cat "$W/start.out" >&2; "$VMCTL" halt >/dev/null 2>&1; say "LiquidVM did not start"; exit 1; }
    rc=0
    for ((i = 0; i < runs; i++)); do
        say "run $((i + 1)) of $runs: LiquidVM"
        (cd "$W/lvm" && LIQUIDVM_HOST=${H[0]} timeout 300 "$R" exec "${H[0]}" ./gbench "$n" "$nbar" "$nbc") \
            >"$W/l.$i" 2>"$W/l.$i.err" || { cat "$W/l.$i.err" >&2; say "LiquidVM run failed"; rc=1; break; }
        say "run $((i + 1)) of $runs: PVM 3.4.6"
        (cd "$W/pvm" && timeout 300 "$R" exec "${H[0]}" ./gbench "$n" "$nbar" "$nbc") \
            >"$W/p.$i" 2>"$W/p.$i.err" || { cat "$W/p.$i.err" >&2; say "PVM run failed"; rc=1; break; }
    done
    "$VMCTL" halt >/dev/null 2>&1
    exit $rc
fi

W=$(mktemp -d /tmp/lvm-gbench.XXXXXX)
export LIQUIDVM_HOME=$W/home
trap '"$VMCTL" halt >/dev/null 2>&1; rm -rf "$W"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$W/lvm" "$W/pvm"
[ -x "$VMCTL" ] || { say "$VMCTL is not built (make)"; exit 1; }
cc -O2 -I lib/pvm -o "$W/lvm/gbench" bench/groups/gbench.c -L"$B/lib" -lgpvm3 -lpvm3 \
    -Wl,-rpath,"$B/lib" || exit 1
havepvm=0
if [ -f /usr/include/pvm3.h ] && [ -x "${PVM_ROOT:-/usr/lib/pvm3}/lib/pvmd" ]; then
    cc -O2 -o "$W/pvm/gbench" bench/groups/gbench.c -lgpvm3 -lpvm3 || exit 1
    havepvm=1
fi

mode=netns
if [ $havepvm = 1 ]; then
    say "4 namespace hosts; real PVM waits for the shared lock /tmp/lvm-realpvm.lock"
    REALPVM_PREFIX=lvg$(($$ % 10000)) GROUPS_INNER=1 GROUPS_W=$W \
        "$R" session 4 "/usr/lib/pvm3/lib:$W/pvm" bash "$SELF" "$n" "$nbar" "$nbc" "$runs"
    case $? in
    0) ;;
    77) mode=loopback ;;
    *) say "the namespace run failed"; exit 1 ;;
    esac
else
    mode=loopback
fi
if [ $mode = loopback ]; then
    say "no namespaces or no PVM 3.4.6: LiquidVM alone, vmctl start --local 4"
    printf 'spawn_path = [ "%s" ];\n' "$W/lvm" >"$W/vm.conf"
    "$VMCTL" start --local 4 -c "$W/vm.conf" >/dev/null || { say "vmctl start failed"; exit 1; }
    for ((i = 0; i < runs; i++)); do
        (cd "$W/lvm" && timeout 300 ./gbench "$n" "$nbar" "$nbc") >"$W/l.$i" ||
            { say "LiquidVM run failed"; exit 1; }
    done
    "$VMCTL" halt >/dev/null
fi

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
field() { sed -n "s/^$1 //p" "$2"; }
# col PREFIX FIELD: the field of every run of one VM, one a line.
col() { for ((i = 0; i < runs; i++)); do [ -s "$W/$1.$i" ] && field "$2" "$W/$1.$i"; done; }
L_B=$(col l barrier_us | median) L_C=$(col l bcast_us | median)
printf '%d tasks; median of %d runs, each the mean of %d barriers and of %d broadcasts of 1 MB\n' \
    "$n" "$runs" "$nbar" "$nbc"
printf '%-28s %16s %16s %8s\n' "" "LiquidVM" "PVM 3.4.6" "ratio"
if [ $mode = netns ]; then
    P_B=$(col p barrier_us | median) P_C=$(col p bcast_us | median)
    printf '%-28s %16s %16s\n' "hosts (network namespaces)" "$(field hosts "$W/l.0")" "$(field hosts "$W/p.0")"
    printf '%-28s %16s %16s\n' "tasks per host" "$(field per_host "$W/l.0")" "$(field per_host "$W/p.0")"
    for row in "barrier|$L_B|$P_B" "1 MB broadcast, all acked|$L_C|$P_C"; do
        IFS='|' read -r what l p <<<"$row"
        r=$(echo "$l/$p" | bc -l)
        printf '%-28s %13.1f us %13.1f us %8.2f %s\n' "$what" "$l" "$p" "$r" \
            "$(echo "$r <= 0.5" | bc -l | sed 's/^1$/(goal 0.5 met)/; s/^0$/(goal: 0.5)/')"
    done
    echo "every run (us): LiquidVM barrier $(col l barrier_us | tr '\n' ' ')/ bcast $(col l bcast_us | tr '\n' ' ')"
    echo "                PVM      barrier $(col p barrier_us | tr '\n' ' ')/ bcast $(col p bcast_us | tr '\n' ' ')"
else
    printf '%-28s %16s %16s\n' "hosts" "4 (loopback)" "n/a"
    printf '%-28s %13.1f us %16s\n' "barrier" "$L_B" "n/a"
    printf '%-28s %13.1f us %16s\n' "1 MB broadcast, all acked" "$L_C" "n/a"
fi
echo "LiquidVM's links between daemons are TLS 1.3; PVM's are plain UDP.  The machine is shared: figures are noisy."
