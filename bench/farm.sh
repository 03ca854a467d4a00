#!/usr/bin/env bash
# bench/farm.sh - vmrun farm's schedules against GNU parallel (issue 28), in
# one run, on hosts of unequal capacity: three network namespaces, each
# daemon in its own cgroup with a CPU quota (80 %, 40 %, 20 % of a CPU),
# and a load change partway (CHANGE_AT seconds into each run, host 1's quota
# drops to 20 %: its owner starts working).  The job is a sweep of a shell
# command of irregular cost: item i burns 1 + (37 i mod 13) units of CPU
# (build/bench/farm_burn, which prints the CPU seconds it used).
#
# Each of: vmrun farm --schedule fractiling | static | self, and GNU
# parallel with one job slot per host.  GNU parallel reaches the hosts
# through --ssh with a wrapper that enters the host's namespace and its
# daemon's cgroup (`ip netns exec` + cgroup.procs) instead of ssh, so its
# jobs get the same quotas as the farm's workers.
#
# Then the Mandelbrot image (issue 28's "From C": examples/mandelbrot,
# liquid_farm, the iteration count per pixel, so the cost per tile is very
# irregular) with --schedule fractiling | static | self under the same
# quotas and change.  Its work is the CPU time of the serial computation
# of the same image that --check-serial does in the master (outside the
# quotas, after the farm is done), and its makespan the farm's own
# (makespan_s of its report), so the check is not counted.
#
# Prints each makespan and the ideal: the work (the sum of the items' CPU
# seconds in that run: vmrun farm's cpu_s; for GNU parallel, which does not
# measure it, the farm runs' mean) over the capacity the quotas allowed,
# with the change taken into account, and the machine's idle share during
# each run (/proc/stat): with the quotas adding up to 1.4 of the machine's
# CPUs, a run during which the machine had no idle CPU could not get them.  Needs root, ip netns, a cgroup v1 cpu
# controller; GNU parallel is optional (its row is skipped without it).
#
#   bench/farm.sh [ITEMS]        (default 200; after `make`)
#   MANDEL="--size 1024x768 --maxiter 12000" (the default) sizes the image;
#   MANDEL=off skips it; BAND=N rows per GNU parallel job for it (default 4).
set -u
case ${1:-} in
-h | --help) sed -n 2,34p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
'' | *[!0-9]* | 0) [ $# = 0 ] || { echo "bench/farm.sh: ITEMS must be a positive whole number (see --help)" >&2; exit 2; } ;;
esac
cd "$(dirname "$0")/.." || exit 2
. tests/integ/netns.sh
B=$(pwd)/build
ITEMS=${1:-200}
CHANGE_AT=${CHANGE_AT:-4}
Q1=80 Q2=40 Q3=20 Q1_AFTER=20
[ "$(id -u)" = 0 ] || { echo "bench/farm.sh: needs root (ip netns, cgroups)"; exit 2; }
CG=/sys/fs/cgroup/cpu
[ -w "$CG/cgroup.procs" ] || { echo "bench/farm.sh: no cgroup v1 cpu controller at $CG"; exit 2; }
[ -x "$B/bench/farm_burn" ] && [ -x "$B/bin/vmrun" ] || { echo "bench/farm.sh: run make first"; exit 2; }

tag=$(( $$ % 10000 ))
br=lvfb$tag
net=10.233.$(( $$ % 200 + 1 ))
W=$(mktemp -d /tmp/lvm-farmbench.XXXXXX)
export LIQUIDVM_HOME=$W/home
hosts=(lvfb$tag-1 lvfb$tag-2 lvfb$tag-3)
cleanup() {
    "$B/bin/vmctl" halt >/dev/null 2>&1
    sleep 0.5
    for h in "${hosts[@]}"; do
        if [ -d "$CG/$h" ]; then
            for p in $(cat "$CG/$h/cgroup.procs" 2>/dev/null); do echo "$p" >"$CG/cgroup.procs"; done
            rmdir "$CG/$h" 2>/dev/null
        fi
        ip netns del "$h" 2>/dev/null
    done
    ip link del "$br" 2>/dev/null
    [ -n "${KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT

ip link add "$br" type bridge && ip addr add "$net.1/24" dev "$br" && ip link set "$br" up || exit 1
for i in 1 2 3; do
    h=${hosts[$((i - 1))]}
    netns_veth "$h" "$br" "$net.1$i/24" "lvfb${tag}a$i" "lvfb${tag}b$i"
done
cat >"$W/vm.conf" <<EOF
heartbeat = 0.5;
host_timeout = 5.0;
load_interval = 0.5;
hoststart = "ip netns exec %h %v";
EOF
"$B/bin/vmctl" start --name lvfbmaster$tag --listen "$net.1" -c "$W/vm.conf" >/dev/null &&
    "$B/bin/vmctl" add "${hosts[@]}" >/dev/null || { echo "bench/farm.sh: cannot start the VM"; exit 1; }
for h in "${hosts[@]}"; do
    pid=$(ps -eo pid=,args= | awk -v h="$h" '$2 ~ /vmd$/ && index($0, "--name " h " ") { print $1 }')
    mkdir "$CG/$h" && echo 20000 >"$CG/$h/cpu.cfs_period_us" && echo "$pid" >"$CG/$h/cgroup.procs" ||
        { echo "bench/farm.sh: cannot put $h's daemon in a cgroup"; exit 1; }
done
quota() { echo $(($2 * 200)) >"$CG/${hosts[$(($1 - 1))]}/cpu.cfs_quota_us"; }

# GNU parallel's "ssh": into the host's namespace and its daemon's cgroup.
cat >"$W/nsssh" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do case "\$1" in -l|-o|-p|-S) shift 2 ;; -*) shift ;; *) break ;; esac; done
host=\$1; shift
[ "\$1" = -- ] && shift
echo \$\$ >"$CG/\$host/cgroup.procs"
exec ip netns exec "\$host" sh -c "\$*"
EOF
chmod +x "$W/nsssh"

# run NAME COMMAND...: the quotas set, the change at CHANGE_AT, the makespan.
run() {
    local name=$1; shift
    quota 1 $Q1; quota 2 $Q2; quota 3 $Q3
    sleep 2 # the daemons' samples settle (load_interval 0.5)
    local t0 t1 s0 s1
    s0=$(head -1 /proc/stat)
    t0=$(date +%s.%N)
    ( sleep "$CHANGE_AT"; quota 1 $Q1_AFTER ) &
    local changer=$!
    "$@" >"$W/$name.out" 2>"$W/$name.err"
    local rc=$?
    t1=$(date +%s.%N)
    s1=$(head -1 /proc/stat)
    wait $changer 2>/dev/null
    # the machine's idle share over the run (/proc/stat: idle + iowait of all CPUs)
    local idle
    idle=$(python3 -c 'import sys
a, b = ([int(x) for x in l.split()[1:]] for l in sys.argv[1:3])
d = [y - x for x, y in zip(a, b)]
print("%.2f" % ((d[3] + d[4]) / max(1, sum(d[:8]))))' "$s0" "$s1")
    echo "$name $rc $(echo "$t1 - $t0" | bc) $idle" >>"$W/times"
}

hl=$(IFS=,; echo "${hosts[*]}")
burn="$B/bench/farm_burn"
cmd='$(( ({} * 37) % 13 + 1 ))'
for s in fractiling static self; do
    run "$s" "$B/bin/vmrun" farm --range 1:"$ITEMS" --hosts "$hl" --schedule "$s" --reclaim off \
        --quiet --output "$W/$s.jsonl" --json "$W/$s.json" -- sh -c "$burn $cmd"
done
if command -v parallel >/dev/null; then
    run parallel parallel --will-cite --ssh "$W/nsssh" -S "1/${hosts[0]},1/${hosts[1]},1/${hosts[2]}" \
        "$burn"' $(( ({} * 37) % 13 + 1 ))' ::: $(seq 1 "$ITEMS")
else
    echo "# GNU parallel is not installed: its row is skipped"
fi
MANDEL=${MANDEL:-"--size 1024x768 --maxiter 12000"}
BAND=${BAND:-4}
if [ "$MANDEL" != off ] && [ -x "$B/examples/mandelbrot" ]; then
    for s in fractiling static self; do
        # shellcheck disable=SC2086
        run "mandel-$s" "$B/examples/mandelbrot" $MANDEL --check-serial --hosts "$hl" \
            --schedule "$s" --reclaim off --quiet --png "$W/mandel-$s.png" --json "$W/mandel-$s.json"
    done
    # GNU parallel: the same image in bands of BAND rows (bench/mandel_rows,
    # the same pixel function), one job slot per host, the bands' counts
    # kept in order and compared with a serial run of the whole image,
    # whose CPU time (outside the quotas, afterwards) is the work.
    mw=$(sed -n 's/.*--size \([0-9]*\)x\([0-9]*\).*/\1/p' <<<"$MANDEL")
    mh=$(sed -n 's/.*--size \([0-9]*\)x\([0-9]*\).*/\2/p' <<<"$MANDEL")
    mi=$(sed -n 's/.*--maxiter \([0-9]*\).*/\1/p' <<<"$MANDEL")
    if command -v parallel >/dev/null && [ -n "$mw" ] && [ -n "$mh" ] && [ -n "$mi" ]; then
        for ((j = 0; j < mh; j += BAND)); do echo "$j $((j + BAND < mh ? j + BAND : mh))"; done >"$W/bands"
        run mandel-parallel parallel --will-cite -k --colsep ' ' --ssh "$W/nsssh" \
            -S "1/${hosts[0]},1/${hosts[1]},1/${hosts[2]}" \
            "$B/bench/mandel_rows $mw $mh $mi {1} {2}" :::: "$W/bands"
        TIMEFORMAT=%U+%S
        { time "$B/bench/mandel_rows" "$mw" "$mh" "$mi" 0 "$mh" >"$W/mandel-serial.bin"; } \
            2>"$W/mandel-parallel.work"
        cmp -s "$W/mandel-serial.bin" "$W/mandel-parallel.out" &&
            echo "# GNU parallel's Mandelbrot bands equal the serial image bit for bit" ||
            echo "# GNU parallel's Mandelbrot bands DIFFER from the serial image"
    fi
fi

python3 - "$W" "$CHANGE_AT" "$Q1" "$Q2" "$Q3" "$Q1_AFTER" <<'EOF'
import json, sys, os, re
w, change = sys.argv[1], float(sys.argv[2])
q = [float(x) / 100 for x in sys.argv[3:6]]
before, after = sum(q), float(sys.argv[6]) / 100 + q[1] + q[2]
def ideal(work):
    return work / before if work <= before * change else change + (work - before * change) / after
rows, burn, idle = [], [], {}
for line in open(os.path.join(w, "times")):
    name, rc, t, idle_ = line.split()
    idle[name] = float(idle_)
    out = os.path.join(w, name + (".jsonl" if name != "parallel" else ".out"))
    if name == "mandel-parallel":
        # parallel's own makespan; the work is the serial bands' CPU time.
        work = sum(float(x) for x in open(os.path.join(w, name + ".work")).read().split("+"))
        n = sum(1 for l in open(os.path.join(w, "bands")))
        rows.append((name, int(rc), n, float(t), work, ideal(work)))
        continue
    if name.startswith("mandel-"):
        # The farm's own makespan; the work is the serial check's CPU time.
        try:
            R = json.load(open(os.path.join(w, name + ".json")))
            t, n = R["makespan_s"], R["tiles"]
            work = float(re.search(r"serial: ([0-9.]+) s CPU", open(out[:-6] + ".out").read()).group(1))
        except (OSError, ValueError, AttributeError):
            rows.append((name, int(rc), 0, float(t), float("nan"), float("nan")))
            continue
    elif name == "parallel":
        # No CPU time per job from parallel: the items' work is the mean
        # of the farm runs' (the same items).
        n = sum(1 for l in open(out) if l.strip())
        rows.append((name, int(rc), n, float(t), None, None))
        continue
    else:
        # Each item's CPU time (cpu_s: the sh and farm_burn, user and
        # system) as vmrun farm measures it.
        L = [json.loads(l) for l in open(out)]
        work = sum(x["cpu_s"] for x in L if x["exit"] == 0)
        burn.append(sum(float(x["stdout"]) for x in L if x["exit"] == 0))
        n = len(L)
    rows.append((name, int(rc), n, float(t), work, ideal(work)))
farmwork = [r[4] for r in rows if r[0] in ("fractiling", "static", "self")]
rows = [(r[0], r[1], r[2], r[3], sum(farmwork) / len(farmwork), ideal(sum(farmwork) / len(farmwork)))
        if r[4] is None and farmwork else r for r in rows]
if burn:
    print("# the sweep's work: items' CPU time %.2f s a run (farm_burn's own %.2f s; the rest"
          " is sh and exec)" % (sum(farmwork) / len(farmwork), sum(burn) / len(burn)))
print("capacity %.2f CPUs, %.2f after %.0f s (quotas %s; host 1 to %s %%)" %
      (before, after, change, "/".join(sys.argv[3:6]), sys.argv[6]))
print("%-17s %4s %6s %10s %9s %9s %7s %13s" % ("schedule", "exit", "items", "makespan", "work", "ideal",
                                             "x ideal", "machine idle"))
for name, rc, n, t, work, id_ in rows:
    print("%-17s %4d %6d %9.2fs %8.2fs %8.2fs %7.2f %12.0f%%" % (name, rc, n, t, work, id_, t / id_,
                                                               100 * idle[name]))
print("# machine idle: the share of the machine's CPU time idle during the run; near 0 %,"
      " other work took what the quotas allowed and the ideal was out of reach")
for name in ("fractiling", "static", "self", "mandel-fractiling", "mandel-static", "mandel-self"):
    try:
        R = json.load(open(os.path.join(w, name + ".json")))
        print("# %s: %d chunks; items per host %s" % (name, len(R["chunks"]),
              [h["items"] for h in R["hosts"]]))
    except OSError:
        pass
EOF
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
