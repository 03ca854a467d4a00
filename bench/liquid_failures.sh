#!/usr/bin/env bash
# bench/liquid_failures.sh - a stencil job survives failures injected at
# random times (issue 26, "Acceptance": the bench).  On a local VM of 3
# daemons (host_timeout 2 s), for two job sizes: first the same job with
# and without checkpoints (--checkpoint-every auto), in turn, --rounds
# times each, for the checkpoints' overhead (goal <= 3 %); then --trials
# jobs with --checkpoint-every auto and --verify, each hit once at a
# random point of its iterations (uniform over 10-70 % of the run time
# without failure) by one of four kinds, in turn, on host1 or host2 at
# random:
#   worker-kill   kill -9 of the host's worker
#   daemon-kill   kill -9 of the host's daemon (the host leaves the VM)
#   worker-stop   SIGSTOP of the worker alone: found by --worker-timeout
#                 (auto: 5 s here), continued once declared lost
#   host-stop     SIGSTOP of the daemon and its worker: the host is silent
#                 past host_timeout; both continued after the job
# Every trial must exit 0 with the field bit-identical to the
# single-process reference (the bench exits 1 otherwise).
#
# The overhead table gives the wall times' medians and their difference
# (which the machine's other load moves by more than 3 %), and the share
# measured inside each run with checkpoints: the slowest worker's seconds
# making, sending and keeping copies over the run's time.  The failures'
# table, per size and kind: trials, bit-identical ones, those whose report
# has the failure (a job that ended before the injection is kind "none"),
# the detection time (from the injection to the master's notice),
# recovery_s (from the notice to the job sent again) and resumed_s (from
# the notice to a survivor's first block done after it; the JSON report's
# figures), the iterations rolled back and their time (at the run's time
# per iteration without failure), the run's extra wall time less the
# detection ("lost s", as noisy as the wall times), and how many trials
# kept within the goal: running again within 2 s of the notice, after
# which the rolled-back iterations are done again.
#
#   bench/liquid_failures.sh [--build DIR] [--sizes "48:1200:100 128:700:1"]
#                            [--trials N] [--rounds R] [--disk]
#
# --disk adds a third run to each round: checkpoints also written to disk
# at each one (--checkpoint DIR --checkpoint-interval 0), and a table of
# what that costs over the checkpoints in memory alone.
#
# A size is GRID:ITERS:HEAVY (vmrun stencil's --grid, --iters, --heavy).
# Defaults: 12 trials per size (24 in all), 5 rounds; --trials 0 measures
# the overhead alone.  Everything runs in
# its own LIQUIDVM_HOME, a fresh VM per trial, halted afterwards.
set -u
build=build sizes="48:1200:100 128:700:1" trials=12 rounds=5 disk=
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --disk) disk=disk; shift ;;
    --help) sed -n 2,45p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/liquid_failures.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
cd "$(dirname "$0")/.." || exit 2
VMCTL=$(pwd)/$build/bin/vmctl VMRUN=$(pwd)/$build/bin/vmrun
for b in "$VMCTL" "$VMRUN"; do
    [ -x "$b" ] || { echo "bench/liquid_failures.sh: $b is missing; run make" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "bench/liquid_failures.sh: needs python3" >&2; exit 2; }
T=$(mktemp -d /tmp/lvm-bench.XXXXXX)
export LIQUIDVM_HOME=$T/home
STOPPED= JOB=
finish_all() {
    [ -z "$STOPPED" ] || kill -CONT $STOPPED 2>/dev/null
    [ -z "$JOB" ] || kill "$JOB" 2>/dev/null
    "$VMCTL" halt >/dev/null 2>&1
    vm_kill
    rm -rf "$T"
}
trap finish_all EXIT
cat >"$T/vm.conf" <<'CONF'
heartbeat = 0.2;
host_timeout = 2.0;
start_timeout = 10.0;
CONF

vm_pids() {
    ps -eo pid=,stat=,args= | awk -v h="--home $LIQUIDVM_HOME" \
        '$2 !~ /^Z/ && index($0, h) && $3 ~ /vmd$/ { print $1 }'
}
vm_kill() {
    local p
    p=$(vm_pids)
    [ -z "$p" ] || kill -9 $p 2>/dev/null
}
workers_left() {
    ps -eo pid=,stat=,args= | awk -v v="$VMRUN" '$2 !~ /^Z/ && $3 == v && $4 == "worker"' | wc -l
}
# vm_up: a fresh local VM of 3 hosts, no worker of an earlier job left.
vm_up() {
    local i
    "$VMCTL" halt >/dev/null 2>&1
    for i in $(seq 100); do [ -z "$(vm_pids)" ] && [ "$(workers_left)" = 0 ] && break; sleep 0.1; done
    vm_kill
    "$VMCTL" start --local 3 -c "$T/vm.conf" >"$T/start.out" 2>&1 ||
        { cat "$T/start.out" >&2; exit 1; }
}
daemon_pid() {
    ps -eo pid=,args= | awk -v h="--home $LIQUIDVM_HOME" -v n="$1" '$2 ~ /vmd$/ && index($0, h) {
        for (i = 3; i < NF; i++) if ($i == "--name" && $(i + 1) == n) print $1 }'
}
worker_pid() {
    "$VMCTL" ps -a | awk -v h="$1" '$1 == h && $3 != "-" { print $4; exit }'
}

# job SIZE CKPT JSON [--verify]: one job in the background (pid in JOB).
job() {
    local g i h
    IFS=: read -r g i h <<<"$1"
    local ck=()
    [ "$2" = on ] && ck=(--checkpoint-every auto)
    [ "$2" = disk ] && rm -rf "$T/ckdir" && mkdir -p "$T/ckdir" &&
        ck=(--checkpoint-every auto --checkpoint "$T/ckdir" --checkpoint-interval 0)
    : >"$T/job.err"
    "$VMRUN" stencil --grid "$g" --iters "$i" --heavy "$h" --probe-seconds 0.05 \
        "${ck[@]}" --json "$3" "${@:4}" >"$T/job.out" 2>"$T/job.err" &
    JOB=$!
}
wait_job() {
    wait "$JOB"
    local rc=$?
    JOB=
    return $rc
}

kinds=(worker-kill daemon-kill worker-stop host-stop)
echo "size kind host delay_s inject_unix rc verified" >"$T/trials.txt"
nsize=0
for size in $sizes; do
    nsize=$((nsize + 1))
    # 1. Overhead: with and without checkpoints, in turn, on one VM.
    vm_up
    for r in $(seq 1 "$rounds"); do
        order="off on $disk"
        [ $((r % 2)) = 0 ] && order="$disk on off"
        for ck in $order; do
            echo "   ... $size: checkpoints $ck (round $r of $rounds)" >&2
            job "$size" "$ck" "$T/base.$nsize.$ck.$r.json"
            wait_job || { echo "a run without failure failed:" >&2; cat "$T/job.err" >&2; exit 1; }
        done
    done
    run_s=$(python3 -c 'import json, statistics, sys
print(statistics.median(json.load(open(f))["run_s"] for f in sys.argv[1:]))' \
        "$T"/base.$nsize.on.*.json)
    # 2. Trials.
    for t in $(seq 1 "$trials"); do
        kind=${kinds[$(( (t - 1) % ${#kinds[@]} ))]}
        host=host$(( RANDOM % 2 + 1 ))
        delay=$(python3 -c 'import random, sys; print(round(random.uniform(0.1, 0.7) * float(sys.argv[1]), 2))' "$run_s")
        vm_up
        job "$size" on "$T/trial.$nsize.$t.json" --verify
        # The iterations start a moment after the ring benchmark; then the delay.
        for i in $(seq 300); do grep -q "ring benchmark" "$T/job.err" && break; sleep 0.1; done
        sleep "$delay"
        wpid=$(worker_pid "$host") dpid=$(daemon_pid "$host")
        inject=$(date +%s.%N)
        if [ -z "$wpid" ] || [ -z "$dpid" ]; then
            kind=none # the job ended first, or failed: the table says so
        fi
        case $kind in
        worker-kill) kill -9 $wpid ;;
        daemon-kill) kill -9 $dpid ;;
        worker-stop) STOPPED=$wpid; kill -STOP $wpid ;;
        host-stop) STOPPED="$dpid $wpid"; kill -STOP $STOPPED ;;
        esac
        if [ "$kind" = worker-stop ]; then
            for i in $(seq 600); do grep -q "sent nothing for" "$T/job.err" && break; sleep 0.05; done
            kill -CONT $STOPPED 2>/dev/null
            STOPPED=
        fi
        wait_job
        rc=$?
        [ -z "$STOPPED" ] || { kill -CONT $STOPPED 2>/dev/null; STOPPED=; }
        v=0
        grep -q "bit-identical to the single-process reference" "$T/job.out" && v=1
        echo "$size $kind $host $delay $inject $rc $v" >>"$T/trials.txt"
        echo "   ... $size: trial $t of $trials, $kind on $host at +${delay} s: exit $rc, $( [ $v = 1 ] && echo bit-identical || echo NOT bit-identical)" >&2
        [ $rc = 0 ] || sed 's/^/       /' "$T/job.err" | tail -5 >&2
    done
done
"$VMCTL" halt >/dev/null 2>&1

python3 - "$T" $sizes <<'EOF'
import json, statistics, sys, os
T, sizes = sys.argv[1], sys.argv[2:]
rows = [l.split() for l in open(T + "/trials.txt")][1:]
med = statistics.median
ok_all = True
print("checkpoint overhead (--checkpoint-every auto), medians of the rounds:")
print("%-14s %10s %10s %9s %11s %15s %11s %12s" % ("size", "run s off", "run s on", "wall +%",
      "in-run %", "every (iters)", "checkpoints", "MB to buddy"))
disk_rows = []
base = {}
for n, s in enumerate(sizes, 1):
    def runs(ck):
        fs = sorted(f for f in os.listdir(T) if f.startswith("base.%d.%s." % (n, ck)))
        return [json.load(open(os.path.join(T, f))) for f in fs]
    off, on = runs("off"), runs("on")
    roff, ron = med(r["run_s"] for r in off), med(r["run_s"] for r in on)
    base[s] = (ron, ron / on[0]["job"]["iters"])
    C = on[0]["checkpoints"]
    # In the run itself: the slowest worker's seconds making, sending and
    # keeping copies over the run's time (the wall figures wander with
    # the machine's other load).
    inrun = med(r["checkpoints"]["max_worker_seconds"] / r["run_s"] for r in on)
    last = med(r["checkpoints"]["last_every_iterations"] for r in on)
    print("%-14s %10.2f %10.2f %8.1f%% %10.1f%% %15s %11.0f %12.1f" % (s, roff, ron,
          100 * (ron - roff) / roff, 100 * inrun, "%d -> %d" % (C["every_iterations"], last),
          med(r["checkpoints"]["count"] for r in on),
          med(r["checkpoints"]["bytes_sent"] for r in on) / 1e6))
    dk = runs("disk")
    if dk:
        rdk = med(r["run_s"] for r in dk)
        D = [r["disk_checkpoints"] for r in dk]
        disk_rows.append("%-14s %10.2f %10.2f %8.1f%% %7.0f %9.1f %11.3f %11.3f" % (
            s, ron, rdk, 100 * (rdk - ron) / ron, med(d["writes"] for d in D),
            med(d["bytes"] for d in D) / 1e6, med(d["seconds"] for d in D),
            med(d["max_seconds"] for d in D)))
if disk_rows:
    print()
    print("disk checkpoints at every checkpoint (--checkpoint DIR --checkpoint-interval 0), "
          "medians of the rounds:")
    print("%-14s %10s %10s %9s %7s %9s %11s %11s" % ("size", "run s mem", "run s disk",
          "wall +%", "writes", "MB/file", "write s", "max write s"))
    for l in disk_rows:
        print(l)
if not rows:
    sys.exit(0)
print()
print("failures injected at random times (goal: running again <= 2 s after the notice, then the "
      "rolled-back iterations):")
print("%-14s %-12s %6s %9s %4s %9s %12s %12s %9s %9s %9s %7s" % ("size", "kind", "trials",
      "identical", "hit", "detect s", "recovery_s", "resumed_s", "rolled it", "rolled s",
      "lost s", "in goal"))
for s in sizes:
    ron, per = base[s]
    for kind in ("worker-kill", "daemon-kill", "worker-stop", "host-stop", "none"):
        det, rec, res, rb, rbs, lost, good, ident, n = [], [], [], [], [], [], 0, 0, 0
        for r in rows:
            if r[0] != s or r[1] != kind:
                continue
            n += 1
            idx = [x for x in rows if x[0] == s].index(r) + 1
            f = os.path.join(T, "trial.%d.%d.json" % (sizes.index(s) + 1, idx))
            ident += r[6] == "1" and r[5] == "0"
            if r[5] != "0" or r[6] != "1":
                ok_all = False
            if not os.path.exists(f):
                continue
            R = json.load(open(f))
            F = R["failures"]
            if not F:
                continue
            notice = R["run_started_unix"] + F[0]["t_s"]
            d = max(0.0, notice - float(r[4]))
            det.append(d)
            rec.append(max(x["recovery_s"] for x in F))
            back = F[-1]["resumed_s"] + F[-1]["t_s"] - F[0]["t_s"]
            res.append(back)
            it = sum(x["iterations_rolled_back"] for x in F)
            rb.append(it)
            rbs.append(it * per)
            lost.append(R["run_s"] - ron - d)
            good += F[-1]["resumed_s"] >= 0 and back <= 2.0
        if n == 0:
            continue
        fmt = lambda v: "%.2f" % med(v) if v else "-"
        mx = lambda v: "%.2f" % max(v) if v else "-"
        print("%-14s %-12s %6d %9s %4d %9s %12s %12s %9s %9s %9s %7s" % (s, kind, n,
              "%d/%d" % (ident, n), len(det), fmt(det), fmt(rec) + " / " + mx(rec),
              fmt(res) + " / " + mx(res), "%.0f" % med(rb) if rb else "-", fmt(rbs), fmt(lost),
              "%d/%d" % (good, len(res))))
print("(medians, and median / max; size = grid:iters:heavy; 3 local hosts on one machine, "
      "%d CPUs, shared; host_timeout 2 s, --worker-timeout auto)" % os.cpu_count())
sys.exit(0 if ok_all else 1)
EOF
