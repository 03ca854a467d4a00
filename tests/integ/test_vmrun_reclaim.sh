#!/usr/bin/env bash
# Reclaim (issue 8): on a local VM of 3 daemons, each in its own cgroup
# with a CPU quota, a stencil job runs; host2's quota is cut to 10 % (its
# owner starts working) and stays there past --reclaim-after: host2's
# worker exits and host2 holds no quanta.  Its quota restored past
# --rejoin-after, a worker runs on host2 again and holds quanta.  The
# final field is bit-identical to the single-process reference, and the
# JSON report and the SVG plot record the evacuation and the rejoin.  Then
# a job with checkpoints loses a worker right after another left by
# reclaim, and recovers from the copies the leaver handed over.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed to read the JSON report"
[ "$(id -u)" = 0 ] || skip_all "cgroup CPU quotas need root"
# 129 s under the sanitizers, whose slowness the quotas' timing does not
# allow for; reclaim runs under them in test_liquid_balance and the farm's.
sanitized "$VMRUN" &&
    skip_all "sanitizer build (reclaim by quota runs in the plain build; test_liquid_balance covers it under ASan)"
CGROOT=/sys/fs/cgroup/cpu
[ -w "$CGROOT/cgroup.procs" ] && [ -f "$CGROOT/cpu.cfs_quota_us" ] ||
    skip_all "no writable cgroup v1 cpu controller at $CGROOT"

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
    echo "$us" >"$CGROOT/lvm-reclaim-$$-$1/cpu.cfs_quota_us"
}

write_conf 3.0 "load_interval = 0.25;"
check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"
ok_cg=1
for h in host0 host1 host2; do
    cg=$CGROOT/lvm-reclaim-$$-$h
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
    return [x for x in T if x["host"] == h and x["ptid"] != 0 and x["command"] == "vmrun"]
sys.exit(0 if eval(sys.argv[1]) else 1)
EOF
}
check "the hosts' daemons report their quotas" wait_for 10 bash -c \
    '"$0" conf --json | python3 -c "import json,sys; H={h[\"name\"]: h for h in json.load(sys.stdin)[\"hosts\"]}; sys.exit(0 if abs(H[\"host2\"][\"quota\"] - 0.4) < 0.01 else 1)"' "$VMCTL"

# The heavy region makes the job's iterations cost more without making the
# reference (which --verify runs at full speed outside the quotas) longer.
"$VMRUN" stencil --grid 64 --kernel rbgs --iters 6000 --heavy 40 --epoch 20 --quanta 8 \
    --probe-seconds 0.05 --reclaim-after 1 --rejoin-after 1 --verify \
    --json "$T/job.json" --svg "$T/job.svg" >"$T/job.out" 2>"$T/job.err" &
JOB=$!
check "the job runs a worker on every host" wait_for 20 t \
    'all(len(workers(h)) == 1 for h in ("host0", "host1", "host2"))'
sleep 1
quota host2 10
check "host2's quota cut to 10 %: its worker exits" wait_for 30 t \
    'len(workers("host2")) == 0 and len(workers("host0")) == 1'
check "... and the job goes on (vmrun still running)" kill -0 "$JOB"
quota host2 60
check "host2's quota restored to 60 %: a worker runs on host2 again" wait_for 30 t \
    'len(workers("host2")) == 1'
# Let quanta flow back for a few epochs, then let the job finish at full speed.
sleep 2
quota host0 -1; quota host1 -1; quota host2 -1
wait "$JOB"
rc=$?
JOB=
check "the job exits 0 (exit $rc)" [ $rc = 0 ]
check "the final field is bit-identical to the single-process reference" \
    grep -q "bit-identical to the single-process reference" "$T/job.out"
[ $rc = 0 ] || sed 's/^/#   /' "$T/job.err" | tail -20

# r EXPR: a Python condition on the JSON report (R) with B = R["balance"].
r() {
    python3 - "$1" "$T/job.json" <<'EOF'
import json, sys
R = json.load(open(sys.argv[2]))
B = R["balance"]
names = [h["name"] for h in R["hosts"]]
h2 = names.index("host2")
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
# Its quanta leave by a forced plan as soon as its share is below
# reclaim_below (benched), its worker only when that has lasted
# reclaim_after (1 s, several epochs): the evacuation has nothing to move.
check "host2's quanta left by a forced plan epochs before its worker did" r '(
(F := [f for f in E if f["forced"] and f["epoch"] < evac[0]["epoch"]][:1]) and
F[0]["moved"] > 0 and F[0]["host_quanta"][h2] == 0 and
[f for f in E if f["epoch"] == evac[0]["epoch"]][0]["moved"] == 0)'
check "every epoch has BE (wall clock and CPU), time, publish, decide and move times" r '
all(0 < e["be"] <= 1 and 0 < e["be_cpu"] <= 1 and e["t_s"] > 0 and e["publish_s"] >= 0 and e["decide_s"] >= 0
    and e["move_s"] >= 0 and sum(e["host_quanta"]) == R["quanta"]["count"] for e in E)'
check "the summary names the evacuation and the rejoin" bash -c \
    'grep -q "host host2 was evacuated" "$0" && grep -q "host host2 got a worker again" "$0"' "$T/job.out"
check "the SVG plot is well-formed, has both BE lines and marks both events" bash -c \
    'python3 -c "import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); sys.exit(len(d.getElementsByTagName(\"polyline\")) != 2)" "$0" &&
     grep -q "host2 leaves" "$0" && grep -q "host2 rejoins" "$0"' "$T/job.svg"
python3 - "$T/job.json" <<'EOF'
import json, sys
R = json.load(open(sys.argv[1]))
for e in R["balance"]["events"]:
    print("# %s %s after epoch %d (%.1f s)" % (e["host"], e["what"], e["epoch"], e["t_s"]))
E = R["balance"]["epochs"]
h2 = [h["name"] for h in R["hosts"]].index("host2")
print("# BE per epoch:", " ".join("%.2f" % e["be"] for e in E[:80]))
print("# host2's quanta per epoch:", " ".join(str(e["host_quanta"][h2]) for e in E[:80]))
EOF

# Reclaim with checkpoints, then a loss before the next checkpoint (issue
# 26): host2's worker, host1's buddy, leaves by reclaim and hands the copies
# it held to the workers that stay; host1's worker is killed at once.  The
# job rolls back to the last checkpoint and ends bit-identical: without the
# hand-over, host1's quanta would have had their only other copy on the
# worker that left (the job would end naming them lost).
quota host0 30; quota host1 30; quota host2 40
"$VMRUN" stencil --grid 32 --kernel rbgs --iters 4000 --heavy 40 --epoch 20 --quanta 8 \
    --probe-seconds 0.05 --reclaim-after 1 --rejoin-after 600 --checkpoint-every 10 --verify \
    --json "$T/job2.json" >"$T/job2.out" 2>"$T/job2.err" &
JOB=$!
check "a job with checkpoints runs a worker on every host" wait_for 20 t \
    'all(len(workers(h)) == 1 for h in ("host0", "host1", "host2"))'
sleep 1
quota host2 10
check "host2's quota cut to 10 %: its worker leaves" wait_for 30 t \
    'len(workers("host2")) == 0 and len(workers("host1")) == 1'
pid=$("$VMCTL" ps -a | awk '$1 == "host1" && $3 != "-" { print $4; exit }')
check "... host1's worker (pid $pid) is killed at once" kill -9 "$pid"
quota host0 -1; quota host1 -1; quota host2 -1
wait "$JOB"
rc=$?
JOB=
check "the job exits 0 (exit $rc)" [ $rc = 0 ]
[ $rc = 0 ] || sed 's/^/#   /' "$T/job2.err" | tail -20
check "... bit-identical to the single-process reference" \
    grep -q "bit-identical to the single-process reference" "$T/job2.out"
check "... its report records host2's evacuation, then host1's loss rolled back to a checkpoint" \
    python3 - "$T/job2.json" <<'EOF'
import json, sys
R = json.load(open(sys.argv[1]))
ev = [e for e in R["balance"]["events"] if e["host"] == "host2" and e["what"] == "evacuate"]
F, C = R["failures"], R["checkpoints"]
print("# evacuated after epoch %s; lost %s at %s, back to %s; checkpoints every %s"
      % (ev[0]["epoch"] if ev else "-", F[0]["host"] if F else "-",
         F[0]["reached"] if F else "-", F[0]["back_to"] if F else "-",
         C["every_iterations"]))
sys.exit(0 if ev and len(F) == 1 and F[0]["host"] == "host1" and F[0]["back_to"] > 0
         and F[0]["back_to"] % C["every_iterations"] == 0 else 1)
EOF

check "no task is left" wait_for 10 bash -c '[ "$("$0" ps -a --json | grep -c "\"tid\"")" = 0 ]' "$VMCTL"
check "halt" "$VMCTL" halt
