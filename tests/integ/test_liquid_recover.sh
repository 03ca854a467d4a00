#!/usr/bin/env bash
# A stencil job survives a lost worker or host (issue 26): on a local VM of
# 3 daemons, with --checkpoint-every 2, kill -9 a worker at a random point
# of the job (vmrun stencil, then the heat3d example), kill -9 a non-master
# daemon, and kill two workers one after the other: each job exits 0, its
# field bit-identical to the single-process reference (--verify), and the
# JSON report records the failures, the recovery, the iterations rolled
# back and the checkpoints' bytes and time.  Two workers killed at once
# lose quanta whose every copy was on them: a clear error naming them.
# Without --checkpoint-every a lost worker still ends the job with an error.
# Under the sanitizers only cases 1, 3, 4 and the spacing run (time).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed to read the JSON report"

JOB=
cleanup_extra() { [ -z "$JOB" ] || kill "$JOB" 2>/dev/null; }
write_conf 1.5
# Under the sanitizers (make check's time) cases 1, 3, 4 and 7's spacing:
# the recovery from a worker's and a daemon's loss, twice in a row.
SAN=0
sanitized "$VMRUN" && SAN=1

# A fresh VM of 3 hosts for each case (a case may kill a daemon).
vm_up() {
    "$VMCTL" halt >/dev/null 2>&1
    local pids
    pids=$(vmd_pids)
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null
    wait_for 10 vmd_count_is 0 && "$VMCTL" start --local 3 -c "$T/test.conf" >"$T/start.out" 2>&1
}

# The pid of this job's worker on host $1 (ps -a names its host; PTID - is the master).
worker_pid() {
    "$VMCTL" ps -a | awk -v h="$1" '$1 == h && $3 != "-" { print $4; exit }'
}

# The job is past its benchmarks (their failures are not recovered from),
# then a random 0.3 .. 1.5 s more.
into_job() {
    wait_for 30 grep -q "ring benchmark" "$T/job.err" || return 1
    sleep "$(python3 -c 'import random; print(round(random.uniform(0.3, 1.5), 2))')"
}

# start PROG ARGS...: the job in the background, its pid in JOB
# (ITERS iterations, 2400 by default, 1200 under the sanitizers: 1200 ran
# in 1.7 s in the plain build once the ring's
# lambda stopped timing link handshakes and --halo auto took 5, not 10, so
# a loss drawn late could come after the job's end).
start() {
    "$@" --grid 48 --iters "${ITERS:-$((SAN ? 1200 : 2400))}" --heavy 100 --probe-seconds 0.05 --verify --json "$T/job.json" \
        >"$T/job.out" 2>"$T/job.err" &
    JOB=$!
}

# finish: the job's exit status in RC.
finish() {
    wait "$JOB"
    RC=$?
    JOB=
    [ $RC = 0 ] || sed 's/^/#   /' "$T/job.err" | tail -15
}

# r EXPR: a Python condition on the JSON report (R), C its checkpoints, F its failures.
r() {
    python3 - "$1" "$T/job.json" <<'EOF'
import json, sys
R = json.load(open(sys.argv[2]))
C, F = R["checkpoints"], R["failures"]
if eval(sys.argv[1]):
    sys.exit(0)
print("#   failures:", json.dumps(F))
print("#   checkpoints:", json.dumps({k: v for k, v in C.items() if not isinstance(v, (list, dict))}))
sys.exit(1)
EOF
}

# recovered N WHAT: exit 0, bit-identical, N failures in the report, each
# rolled back and timed, the checkpoints counted, the summary's lines.
recovered() {
    check "$2: the job exits 0 (exit $RC)" [ $RC = 0 ]
    check "$2: the final field is bit-identical to the single-process reference" \
        grep -q "bit-identical to the single-process reference" "$T/job.out"
    check "$2: the report records $1 failure(s), each rolled back and timed" r "(
len(F) == $1 and all(f['back_to'] % C['every_iterations'] == 0 and f['back_to'] <= f['reached']
    and f['iterations_rolled_back'] == f['reached'] - f['back_to'] and 0 < f['recovery_s'] < 10
    and f['tid'] > 0 and f['host'] in ('host1', 'host2') for f in F))"
    check "$2: the report counts the checkpoints, their bytes and time" r '(
C["on"] and C["every_epochs"] == 2 and C["every_iterations"] == 20 and C["count"] >= 1
and C["bytes"] > 0 and C["seconds"] > 0 and R["verified"] is True)'
    check "$2: the summary has a recovery and a checkpoints line" bash -c \
        'grep -q "^recovery: .* rolled back to iteration" "$0" && grep -q "^checkpoints: " "$0"' \
        "$T/job.out"
}

# 1. kill -9 host1's worker during vmrun stencil (traced).
check "start a local VM of 3 hosts" vm_up
# (The period's iterations were an int product: 10^10 under UBSan.)
check "a checkpoint period past the job's end (100000 epochs of 100000) is its end" \
    "$VMRUN" stencil --quiet --probe-seconds 0.01 --grid 16 --iters 20 --epoch 100000 \
    --checkpoint-every 100000 --verify
start "$VMRUN" stencil --checkpoint-every 2 --trace "$T/rec.trace.json"
into_job
pid=$(worker_pid host1)
check "host1 runs a worker of the job (pid $pid)" [ -n "$pid" ]
kill -9 $pid
finish
recovered 1 "vmrun stencil, host1's worker killed"
check "... the failure is that worker's exit" r \
    'F[0]["what"].startswith("worker t") and "exited during the job" in F[0]["what"]'
check "... the report names the lost worker by its tid, as lost (not tid 0)" r \
    '([(w["tid"], w.get("gone")) for w in R["workers"] if w["host"] == "host1"] == [(F[0]["tid"], "lost")] and
      F[0]["tid"] in [t for h in R["hosts"] if h["name"] == "host1" for t in h["tids"]])'
lost_tid=$(python3 -c 'import json,sys; print("%x" % json.load(open(sys.argv[1]))["failures"][0]["tid"])' \
    "$T/job.json" 2>/dev/null)
check "... and so does the summary (t$lost_tid)" grep -q "^  t$lost_tid  *host1 .*(lost)$" "$T/job.out"
# The trace shows the loss and the recovery, and each survivor's work
# before the loss as well as after the recovery.
check "... its trace has the loss, the recovery, and the survivors' work before and after" \
    python3 - "$T/rec.trace.json" "$T/job.json" <<'EOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
F = json.load(open(sys.argv[2]))["failures"]
lost = [e for e in ev if e["cat"] == "failure" and e["name"] == "lost"]
rec = [e for e in ev if e["cat"] == "failure" and e["name"] == "recovery"]
assert len(lost) == 1 and len(rec) == 1, (len(lost), len(rec))
assert lost[0]["args"]["worker"] == F[0]["tid"] and lost[0]["args"]["host"] == F[0]["host"]
assert rec[0]["args"]["back_to"] == F[0]["back_to"] and rec[0]["args"]["generation"] == 1
t_lost, t_back = lost[0]["ts"], rec[0]["ts"] + rec[0]["dur"]
workers = {e["tid"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"
           and e["args"]["name"].startswith("worker")}
survivors = workers - {F[0]["tid"]}
assert len(survivors) == 2, survivors
for w in survivors:
    c = [e["ts"] for e in ev if e["tid"] == w and e["name"] == "compute"]
    before, after = sum(t < t_lost for t in c), sum(t > t_back for t in c)
    print("# worker %d: %d compute spans before the loss, %d after the recovery"
          % (w, before, after))
    assert before > 0 and after > 0
EOF
check "... vmrun analyze counts the loss and the recovery" bash -c '
    "$0" analyze "$1" >"$2" && grep -q "1 worker lost, 1 recovery in" "$2"' "$VMRUN" \
    "$T/rec.trace.json" "$T/rec.analysis"
check "... and vmrun trace view draws the recovery" bash -c '
    "$0" trace view "$1" --svg "$2" >/dev/null && grep -q "#67001f" "$2"' "$VMRUN" \
    "$T/rec.trace.json" "$T/rec.svg"

# 2. The same with a program of its own (liquid.h): heat3d.
if [ "$SAN" = 1 ]; then
    echo "# (2) heat3d: in the plain build"
elif [ -x "$EXAMPLES/heat3d" ]; then
    check "a fresh VM of 3 hosts" vm_up
    start "$EXAMPLES/heat3d" --checkpoint-every 2
    into_job
    pid=$(worker_pid host2)
    check "host2 runs a heat3d worker (pid $pid)" [ -n "$pid" ]
    kill -9 $pid
    finish
    recovered 1 "heat3d, host2's worker killed"
else
    echo "# $EXAMPLES/heat3d is not built: its case is left out"
fi

# 3. kill -9 host2's daemon: its host leaves the VM, with its worker; then
# host2 is added again (a workstation rebooted) and rejoins the job, as a
# host its owner had taken rejoins once idle (reclaim, --rejoin-after 1 s).
# On this one machine the job's own workers are host2's owner's load (its
# share fell to 0 in a CI run), so --reclaim-below 0 --rejoin-above 0:
# no host leaves for its load, and host2 is taken back whatever its share.
# --min-gain 0: with 2 of 24 quanta heavy, host2's worker may cut the
# slowest host's time by less than the default 0.2 (9 % in one run) and
# would rightly get none.
# Twice the iterations, for the rejoin (1.2-1.9 s after the loss, later
# under the sanitizers' load) to come before the job's end (at 1200
# iterations the sanitizers' job once ended first).
check "--rejoin-above at --reclaim-below is refused (exit 2); both 0 are not" bash -c '
"$0" stencil --grid 24 --iters 10 --reclaim-below 0.2 --rejoin-above 0.2 2>"$1"
[ $? = 2 ] && grep -q "must be above --reclaim-below" "$1" &&
! "$0" stencil --grid 24 --iters 10 --reclaim-below 0 --rejoin-above 0 2>&1 | grep -q "must be above"' \
    "$VMRUN" "$T/usage.err"
check "a fresh VM of 3 hosts" vm_up
ITERS=$((SAN ? 2400 : 4800)) start "$VMRUN" stencil --checkpoint-every 2 \
    --reclaim-below 0 --rejoin-above 0 --min-gain 0
into_job
vpid=$(vmd_pid_of host2)
check "host2's daemon runs (pid $vpid)" [ -n "$vpid" ]
kill -9 $vpid
check "... the job rolls back" wait_for 20 grep -q "rolling back" "$T/job.err"
check "... vmctl add host2 again" "$VMCTL" add host2
finish
recovered 1 "host2's daemon killed"
check "... the failure is host2's leaving, or its worker's exit" r \
    '"host2" in F[0]["what"] or F[0]["host"] == "host2"'
check "... host2, back in the VM, rejoined the job after the loss and held quanta again" r '(
[e for e in R["balance"]["events"] if e["host"] == "host2" and e["what"] == "rejoin" and e["t_s"] > F[0]["t_s"]]
and any(x["host_quanta"][2] > 0 for x in R["balance"]["epochs"] if x["t_s"] > F[0]["t_s"] + 1))'
check "... and said so" grep -q "host host2 is in the virtual machine again" "$T/job.err"
grep -q "host host2 is in the virtual machine again" "$T/job.err" ||
    tr '\r' '\n' <"$T/job.err" | grep -v "^iteration" | tail -12 | sed 's/^/#   /'
check "no worker of the job is left behind" bash -c '! pgrep -f "$0 worker" >/dev/null' "$VMRUN"

# 4. Two failures one after the other: host1's worker, then once a newer
# checkpoint is complete, host2's; host0's worker finishes alone.
# Twice the iterations in the plain build: the second loss must come before
# the job's end (a worker that has finished is no failure), whatever the
# first cost (under the sanitizers 1200 run 15-20 s with --verify, the
# second loss 3-5 s in).
check "a fresh VM of 3 hosts" vm_up
ITERS=$((SAN ? 1200 : 4800)) start "$VMRUN" stencil --checkpoint-every 2
into_job
kill -9 "$(worker_pid host1)"
wait_for 20 grep -q "rolling back" "$T/job.err"
sleep 1
pid=$(worker_pid host2)
check "after the first recovery host2 still runs a worker (pid $pid)" [ -n "$pid" ]
kill -9 $pid
finish
recovered 2 "two workers killed one after the other"
check "... the second rolled back to a later checkpoint than the first" r \
    'F[1]["back_to"] >= F[0]["back_to"] and F[1]["t_s"] > F[0]["t_s"]'

if [ "$SAN" = 1 ]; then
    echo "# (5, 5b) all or two workers lost at once: in the plain build"
else
# 5. Every worker killed at once: no copy of any quantum survives.
check "a fresh VM of 3 hosts" vm_up
start "$VMRUN" stencil --checkpoint-every 2 --balance off
into_job
kill -9 "$(worker_pid host0)" "$(worker_pid host1)" "$(worker_pid host2)"
finish
check "all lost at once: the job fails (exit $RC)" [ $RC = 1 ]
check "... naming the quanta lost" grep -Eq "quant(um|a) lost \([0-9]" "$T/job.err"

# 5b. host1's and host2's workers killed together: host1's quanta had
# their other copy on host2, unless a checkpoint completed between the two
# deaths' notices (host2 then held them and had copied them on).  Either
# way the job never ends with other bits: an error naming the quanta lost,
# or the reference's bits.
check "a fresh VM of 3 hosts" vm_up
start "$VMRUN" stencil --checkpoint-every 2 --balance off
into_job
kill -9 "$(worker_pid host1)" "$(worker_pid host2)"
finish
check "two lost together: an error naming the quanta lost, or the same bits (exit $RC)" \
    bash -c '{ [ "$0" = 1 ] && grep -Eq "quant(um|a) lost \([0-9]" "$1"; } ||
             { [ "$0" = 0 ] && grep -q "bit-identical to the single-process reference" "$2"; }' \
    "$RC" "$T/job.err" "$T/job.out"
fi

# 7. auto spaces checkpoints out by their measured cost: allowed 0.01 % of
# the run, the plans raise the model's first spacing to a multiple of it;
# a worker killed after that still rolls back to a checkpoint, same bits.
check "a fresh VM of 3 hosts" vm_up
"$VMRUN" stencil --checkpoint-every auto --checkpoint-share 0.0001 --grid 48 --iters 600 \
    --heavy 100 --probe-seconds 0.05 --verify --json "$T/job.json" >"$T/job.out" 2>"$T/job.err"
RC=$?
check "--checkpoint-share 0.0001: the job exits 0, bit-identical (exit $RC)" bash -c \
    '[ "$0" = 0 ] && grep -q "bit-identical to the single-process reference" "$1"' \
    "$RC" "$T/job.out"
check "... the spacing it ended with is a larger multiple of the first" r '(
C["auto"] and C["count"] >= 1 and C["last_every_iterations"] > C["every_iterations"] and
C["last_every_iterations"] % C["every_iterations"] == 0)'
check "... the summary says they were spaced out by their cost" \
    grep -q "^checkpoints: .*spaced out by their cost" "$T/job.out"
# The recovery itself is the cases above: under the sanitizers (minutes
# of make check) the spacing alone.
if [ "$SAN" = 1 ]; then
    echo "# (7) a worker killed once the spacing grew: in the plain build"
else
# Twice the iterations, as in case 4: the loss comes 1.3-2.5 s in, before
# the job's end.
check "a fresh VM of 3 hosts" vm_up
ITERS=4800 start "$VMRUN" stencil --checkpoint-every auto --checkpoint-share 0.0001
into_job
sleep 1
pid=$(worker_pid host1)
check "host1 runs a worker of the job (pid $pid)" [ -n "$pid" ]
kill -9 $pid
finish
check "... host1's worker killed: exit 0, bit-identical (exit $RC)" bash -c \
    '[ "$0" = 0 ] && grep -q "bit-identical to the single-process reference" "$1"' \
    "$RC" "$T/job.out"
check "... rolled back to a checkpoint (or the start) of the first spacing" r '(
len(F) == 1 and F[0]["back_to"] % C["every_iterations"] == 0 and
F[0]["back_to"] <= F[0]["reached"])'
fi

if [ "$SAN" = 1 ]; then
    echo "# (6) no checkpoints: in the plain build"
else
# 6. Without --checkpoint-every a lost worker ends the job, as before.
check "a fresh VM of 3 hosts" vm_up
start "$VMRUN" stencil
into_job
kill -9 "$(worker_pid host1)"
finish
check "no checkpoints: the job fails (exit $RC)" [ $RC = 1 ]
check "... saying which worker exited" grep -q "exited during the job" "$T/job.err"
fi

echo "1..$_n"
[ "$_failed" = 0 ]
