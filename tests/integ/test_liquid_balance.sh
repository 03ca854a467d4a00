#!/usr/bin/env bash
# Balancing and reclaim for a program's own stencil (issue 25: "the
# balancing and reclaim tests that exist for the built-in kernels pass for
# a user kernel too").  On a local VM of 3 daemons, heat3d (and laplace2d,
# which stops at a tolerance) with a heavy octant: the balancer moves
# quanta, BE in the last epoch is better than in the first, and the field
# keeps its bits (test_vmrun.sh's checks).  Then test_vmrun_reclaim.sh's
# scenario with heat3d: each daemon in its own cgroup with a CPU quota,
# host2's cut to 10 %: its worker leaves, comes back when the quota is
# restored, and the final field is still bit-identical.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed to read the JSON report"
[ -x "$EXAMPLES/heat3d" ] && [ -x "$EXAMPLES/laplace2d" ] || skip_all "the examples are not built"
export T

write_conf 3.0 "load_interval = 0.25;"
check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"

# verify NAME ARGS...: the example runs on the 3 hosts and --verify finds every bit equal.
verify() {
    local e=$1; shift
    "$EXAMPLES/$e" --hosts host0,host1,host2 --quiet --verify "$@" >"$T/job.out" 2>&1 &&
        grep -q "bit-identical to the single-process reference" "$T/job.out" ||
        { cat "$T/job.out"; return 1; }
}
# e FILE EXPR: a Python condition on a report's epochs (E) and balance (B).
e() {
    python3 -c 'import json, sys
R = json.load(open(sys.argv[1])); B = R["balance"]; E = B["epochs"]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}
show() {
    python3 -c 'import json, sys
R = json.load(open(sys.argv[1])); E = R["balance"]["epochs"]
print("#", sys.argv[2] + ":", R["balance"]["quanta_moved"], "quanta moved, per epoch",
      [x["moved"] for x in E], "BE", [round(x["be"], 2) for x in E], R["iterations_done"], "iterations")' "$1" "$2"
}

# heat3d, the lower octant 20 times heavier (the update runs 20 times on
# its quanta): the first epoch is out of balance, the balancer's first
# plan fixes it.  min-gain 0.05: under load (a full make check on the 2
# CPUs, 2026-11-28) the default 0.2 of modelled gain was missed by every
# plan of nine epochs once, BE 0.5-0.6 throughout.
# It is the first job on the fresh VM: the daemons' first CPU figures come
# 0.1 s after they start and the balancer waits for them, so its first plan
# already has every host's share (before, it planned with whole CPUs, then
# moved quanta back when the figures came; once, under a full make check,
# nothing moved in 9 epochs).
check "heat3d 64^3, heavy 20, balancing: bit-identical" \
    verify heat3d --grid 64 --iters 100 --epoch 10 --heavy 20 --quanta 8 --probe-seconds 0.05 \
    --min-gain 0.05 --json "$T/h.json"
show "$T/h.json" "heat3d heavy 20"
check "... the first plan knows every host's CPU share" e "$T/h.json" \
    'len(E[0]["host_share"]) == 3 and all(s is not None and 0 <= s <= 1 for s in E[0]["host_share"])'
# (Under load the first plan's measured gain may fall short of min-gain;
# the second's then moves them: seen once at load average 5.)
check "... quanta moved by the first or second plan" e "$T/h.json" \
    'B["quanta_moved"] > 0 and (E[0]["moved"] > 0 or E[1]["moved"] > 0)'
# (BE is measured time: the margin is left to the machine; balancing off,
# the heavy octant keeps it where the first epoch had it.)
check "... BE at the end (the last 3 epochs) is better than in the first epoch" e "$T/h.json" \
    'len(E) >= 5 and sum(x["be"] for x in E[-3:]) / 3 > E[0]["be"]'
check "... every epoch accounts for every quantum" e "$T/h.json" \
    'all(sum(x["host_quanta"]) == R["quanta"]["count"] for x in E)'
two_a_host() {
    # min-gain 0.05: six epochs are few, and on a loaded machine (seen once
    # under ASan) no plan of them may model the default 0.2 of gain.
    verify heat3d --grid 48 --iters 60 --epoch 10 --heavy 20 --tasks-per-host 2 --quanta 6 \
        --halo 2 --min-gain 0.05 --probe-seconds 0.02 --json "$T/h2.json" &&
        e "$T/h2.json" 'B["quanta_moved"] > 0'
}
check "heat3d with 2 workers a host and --halo 2, heavy 20: bit-identical, quanta moved" two_a_host
check "heat3d uniform (heavy 1): bit-identical" \
    verify heat3d --grid 48 --iters 60 --epoch 10 --quanta 8 --probe-seconds 0.02 --json "$T/u.json"
show "$T/u.json" "heat3d uniform"

# laplace2d stops at its tolerance while quanta move: the until rule's
# verdict and the balancer's plans share the epoch boundaries.  On a 2D
# grid the heavy region is the lower quadrant.
check "laplace2d 160x160, heavy 20, balancing, stopping at --tol 1e-4: bit-identical" \
    verify laplace2d --grid 160x160x1 --iters 100000 --tol 1e-4 --epoch 50 --heavy 20 --quanta 8 \
    --probe-seconds 0.05 --json "$T/l.json"
show "$T/l.json" "laplace2d heavy 20"
check "... it stopped before --iters, quanta moved, BE at the end better than in the first epoch" \
    e "$T/l.json" '(R["program"]["stopped"] and R["iterations_done"] < 100000 and
    B["quanta_moved"] > 0 and E[0]["moved"] > 0 and
    len(E) >= 5 and sum(x["be"] for x in E[-3:]) / 3 > E[0]["be"])'

# Reclaim, as test_vmrun_reclaim.sh does it for vmrun.
if [ "$(id -u)" != 0 ]; then
    echo "# SKIP reclaim with heat3d: cgroup CPU quotas need root"
    check "halt" "$VMCTL" halt
    exit 0
fi
CGROOT=/sys/fs/cgroup/cpu
if ! [ -w "$CGROOT/cgroup.procs" ] || ! [ -f "$CGROOT/cpu.cfs_quota_us" ]; then
    echo "# SKIP reclaim with heat3d: no writable cgroup v1 cpu controller at $CGROOT"
    check "halt" "$VMCTL" halt
    exit 0
fi
CGS=
JOB=
cleanup_extra() {
    [ -z "$JOB" ] || kill "$JOB" 2>/dev/null
    for cg in $CGS; do
        [ -d "$cg" ] || continue
        for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do
            echo "$p" >"$CGROOT/cgroup.procs" 2>/dev/null
        done
        rmdir "$cg" 2>/dev/null
    done
}
# quota HOST PERCENT (-1: no limit), in 20 ms periods so throttling is smooth.
quota() {
    local us=-1
    [ "$2" = -1 ] || us=$(($2 * 200))
    echo "$us" >"$CGROOT/lvm-lbal-$$-$1/cpu.cfs_quota_us"
}
ok_cg=1
for h in host0 host1 host2; do
    cg=$CGROOT/lvm-lbal-$$-$h
    mkdir "$cg" && CGS="$CGS $cg" && echo 20000 >"$cg/cpu.cfs_period_us" &&
        echo "$(vmd_pid_of $h)" >"$cg/cgroup.procs" || ok_cg=0
done
[ $ok_cg = 1 ] && quota host0 30 && quota host1 30 && quota host2 40
check "each daemon in its own cgroup: quotas 30 %, 30 %, 40 %" [ $ok_cg = 1 ]

# t EXPR: a Python condition on vmctl's task list (T: tasks; a task's host is its name).
t() {
    python3 - "$1" "$("$VMCTL" ps -a --json)" <<'EOF'
import json, sys
T = json.loads(sys.argv[2])["tasks"]
def workers(h):
    return [x for x in T if x["host"] == h and x["ptid"] != 0 and x["command"] == "heat3d"]
sys.exit(0 if eval(sys.argv[1]) else 1)
EOF
}
check "the hosts' daemons report their quotas" wait_for 10 bash -c \
    '"$0" conf --json | python3 -c "import json,sys; H={h[\"name\"]: h for h in json.load(sys.stdin)[\"hosts\"]}; sys.exit(0 if abs(H[\"host2\"][\"quota\"] - 0.4) < 0.01 else 1)"' "$VMCTL"

# The heavy octant makes the job's iterations cost more without making the
# reference (run by the master at full speed, outside the quotas) longer.
"$EXAMPLES/heat3d" --grid 48 --iters 4000 --heavy 40 --epoch 20 --quanta 8 \
    --probe-seconds 0.05 --reclaim-after 1 --rejoin-after 1 --verify \
    --json "$T/job.json" >"$T/job.out" 2>"$T/job.err" &
JOB=$!
check "the job runs a heat3d worker on every host" wait_for 20 t \
    'all(len(workers(h)) == 1 for h in ("host0", "host1", "host2"))'
sleep 1
quota host2 10
check "host2's quota cut to 10 %: its worker exits" wait_for 30 t \
    'len(workers("host2")) == 0 and len(workers("host0")) == 1'
check "... and the job goes on (heat3d still running)" kill -0 "$JOB"
quota host2 60
check "host2's quota restored to 60 %: a worker runs on host2 again" wait_for 30 t \
    'len(workers("host2")) == 1'
sleep 2
quota host0 -1; quota host1 -1; quota host2 -1
wait "$JOB"
rc=$?
JOB=
check "the job exits 0 (exit $rc)" [ $rc = 0 ]
check "the final field is bit-identical to the single-process reference" \
    grep -q "bit-identical to the single-process reference" "$T/job.out"
[ $rc = 0 ] || sed 's/^/#   /' "$T/job.err" | tail -20

r() {
    python3 - "$1" "$T/job.json" <<'EOF'
import json, sys
R = json.load(open(sys.argv[2]))
B = R["balance"]
h2 = [h["name"] for h in R["hosts"]].index("host2")
ev = B["events"]
evac = [e for e in ev if e["host"] == "host2" and e["what"] == "evacuate"]
back = [e for e in ev if e["host"] == "host2" and e["what"] == "rejoin"]
E = B["epochs"]
sys.exit(0 if eval(sys.argv[1]) else 1)
EOF
}
check "the report records host2's evacuation, then its rejoin" r \
    'len(evac) >= 1 and len(back) >= 1 and evac[0]["epoch"] < back[0]["epoch"]'
check "between them host2 holds no quanta; after the rejoin it holds some again" r '(
all(e["host_quanta"][h2] == 0 for e in E if evac[0]["epoch"] <= e["epoch"] < back[0]["epoch"])
and any(e["host_quanta"][h2] > 0 for e in E if e["epoch"] >= back[0]["epoch"]))'
check "the summary names the evacuation and the rejoin" bash -c \
    'grep -q "host host2 was evacuated" "$0" && grep -q "host host2 got a worker again" "$0"' "$T/job.out"
python3 - "$T/job.json" <<'EOF'
import json, sys
R = json.load(open(sys.argv[1]))
for e in R["balance"]["events"]:
    print("# %s %s after epoch %d (%.1f s)" % (e["host"], e["what"], e["epoch"], e["t_s"]))
E = R["balance"]["epochs"]
h2 = [h["name"] for h in R["hosts"]].index("host2")
print("# host2's quanta per epoch:", " ".join(str(e["host_quanta"][h2]) for e in E[:80]))
EOF

check "no task is left" wait_for 10 bash -c '[ "$("$0" ps -a --json | grep -c "\"tid\"")" = 0 ]' "$VMCTL"
check "halt" "$VMCTL" halt
