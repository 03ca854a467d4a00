#!/usr/bin/env bash
# A stencil job survives a lost workstation (issue 26 acceptance): three
# hosts in network namespaces (veths on a bridge, as test_netns_hosts.sh),
# a job of a few seconds with --checkpoint-every 2 and --verify, and at a
# random point of it: (a) kill -9 a worker; (b) kill -9 a non-master
# daemon; (c) SIGSTOP a daemon and its worker past host_timeout, SIGCONT
# them later (the host leaves; vmctl add brings it back as a new host);
# (d) SIGSTOP a worker alone, past --worker-timeout, SIGCONT it later;
# (e) take a host's veth link down.  Every job exits 0 with the
# field bit-identical to the single-process reference and the loss in its
# report; no worker of a lost host is left once it comes back.  Then the
# master daemon dies (f: kill -9; g: SIGSTOP) during a job: the other
# daemons leave the VM within a bounded time with a log line, and no task
# of the job is left.  Needs root and ip netns.
. "$(dirname "$0")/lib.sh"

# The option first (no VM needed): a timeout under 3 s is refused.
check "--worker-timeout 1 is refused (exit 2, naming the option)" bash -c '
    "$0" stencil --worker-timeout 1 --checkpoint-every 1 >/dev/null 2>"$1"; [ $? = 2 ] &&
    grep -q -- "--worker-timeout: expected auto or seconds 3" "$1"' "$VMRUN" "$T/opt.err"

[ "$(id -u)" = 0 ] || skip_all "needs root for ip netns"
# About a minute and a half of failures in real time: the sanitizer build
# has the same recovery code under test in test_liquid_recover.
sanitized "$VMRUN" &&
    skip_all "sanitizer build (these failures run in the plain build; test_liquid_recover runs in both)"
command -v ip >/dev/null || skip_all "needs ip (iproute2)"
command -v python3 >/dev/null || skip_all "python3 is needed to read the JSON report"

JOB=
STOPPED=
cleanup_extra() {
    [ -z "$STOPPED" ] || kill -CONT $STOPPED 2>/dev/null
    [ -z "$JOB" ] || kill "$JOB" 2>/dev/null
}
netns_hosts lvnf 3
H1=${hosts[0]} H2=${hosts[1]} H3=${hosts[2]}
MASTER=lvfm$tag

# host_timeout 2 s: a stopped or cut-off host leaves the VM within ~2 s.
write_conf 2.0 'hoststart = "ip netns exec %h %v";'

# Workers of this test's jobs that are alive (zombies excluded).
workers_left() {
    ps -eo pid=,stat=,args= | awk -v v="$VMRUN" '$2 !~ /^Z/ && $3 == v && $4 == "worker"' | wc -l
}
no_workers() { [ "$(workers_left)" = 0 ]; }

# A fresh VM: the master on the bridge, the three namespaced hosts added.
vm_up() {
    "$VMCTL" halt >/dev/null 2>&1
    local pids
    pids=$(vmd_pids)
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null
    for i in 1 2 3; do ip link set "lvnf${tag}a$i" up; done
    wait_for 15 vmd_count_is 0 && wait_for 10 no_workers &&
        "$VMCTL" start --name "$MASTER" --listen "$net.1" -c "$T/test.conf" >"$T/start.out" 2>&1 &&
        "$VMCTL" add "${hosts[@]}" >>"$T/start.out" 2>&1 && hosts_are 4
}

# The pid of this job's worker on host $1.
worker_pid() {
    "$VMCTL" ps -a | awk -v h="$1" '$1 == h && $3 != "-" { print $4; exit }'
}

# start ARGS...: the job on the three namespaced hosts, in the background.
# 2400 iterations with a heavy octant run for a few seconds on a shared
# machine (1200 took 1.7 s once the ring's lambda stopped timing link
# handshakes and the halo went from 10 to 5: a kill drawn late could come
# after the end); the master (vmrun) runs on the bridge's host, outside them.
start() {
    : >"$T/job.err"
    "$VMRUN" stencil --hosts "$H1,$H2,$H3" --grid 48 --iters 2400 --heavy 100 \
        --probe-seconds 0.05 --checkpoint-every 2 --verify --json "$T/job.json" "$@" \
        >"$T/job.out" 2>"$T/job.err" &
    JOB=$!
}

# The job is past its benchmarks (their failures are not recovered from)
# and a random 0.3 .. 2.0 s into its iterations.
into_job() {
    wait_for 30 grep -q "ring benchmark" "$T/job.err" || return 1
    sleep "$(python3 -c 'import random; print(round(random.uniform(0.3, 2.0), 2))')"
}

# finish: the job's exit status in RC (at most 90 s: a hang is a failure).
finish() {
    local i
    for i in $(seq 900); do kill -0 "$JOB" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$JOB" 2>/dev/null; then
        kill "$JOB"
        echo "# the job was still running after 90 s"
    fi
    wait "$JOB"
    RC=$?
    JOB=
    [ $RC = 0 ] || sed 's/^/#   /' "$T/job.err" | tail -15
}

# r EXPR: a Python condition on the JSON report (R), F its failures.
r() {
    python3 - "$1" "$T/job.json" <<'EOF'
import json, sys
R = json.load(open(sys.argv[2]))
C, F = R["checkpoints"], R["failures"]
sys.exit(0 if eval(sys.argv[1]) else 1)
EOF
}

# recovered WHAT HOST: exit 0, bit-identical, at least one failure of HOST
# in the report, rolled back to a checkpoint.
recovered() {
    check "$1: the job exits 0 (exit $RC)" [ $RC = 0 ]
    check "$1: the final field is bit-identical to the single-process reference" \
        grep -q "bit-identical to the single-process reference" "$T/job.out"
    check "$1: the report records the loss of $2's worker, rolled back to a checkpoint, running again" r "(
len(F) >= 1 and F[0]['host'] == '$2' and F[0]['back_to'] % C['every_iterations'] == 0
and F[0]['back_to'] <= F[0]['reached'] and F[-1]['resumed_s'] > 0
and R['verified'] is True)"
}

# (a) kill -9 a worker.
check "start the master and add 3 namespaced hosts" vm_up
start
into_job
pid=$(worker_pid "$H1")
check "(a) $H1 runs a worker of the job (pid $pid)" [ -n "$pid" ]
kill -9 $pid
finish
recovered "(a) $H1's worker killed" "$H1"
check "(a) ... the failure is that worker's exit" r '"exited during the job" in F[0]["what"]'

# (b) kill -9 a non-master daemon: its host leaves the VM with its worker.
check "a fresh VM of 4 hosts" vm_up
start
into_job
vpid=$(vmd_pid_of "$H2")
check "(b) $H2's daemon runs (pid $vpid)" [ -n "$vpid" ]
kill -9 $vpid
finish
recovered "(b) $H2's daemon killed" "$H2"
check "(b) ... the VM went on without $H2 (3 hosts)" hosts_are 3
check "(b) no worker of the job is left behind" wait_for 10 no_workers

# (c) SIGSTOP a daemon and its worker: the host is silent past host_timeout
# and leaves the VM.  The worker is continued first, while the job goes on
# without it: a late worker of the generation given up, whose messages the
# master and the others must drop (the fence).  Then its daemon, which
# finds itself out of the VM, leaves and ends the worker if it is left.
check "a fresh VM of 4 hosts" vm_up
start
into_job
vpid=$(vmd_pid_of "$H3")
pid=$(worker_pid "$H3")
check "(c) $H3 runs a daemon ($vpid) and a worker ($pid)" [ -n "$vpid" -a -n "$pid" ]
STOPPED="$vpid $pid"
kill -STOP $STOPPED
check "(c) the stopped host leaves the VM" wait_for 20 hosts_are 3
kill -CONT $pid
sleep 1.5
kill -0 $pid 2>/dev/null && echo "# (c) the late worker still runs 1.5 s after SIGCONT" ||
    echo "# (c) the late worker quit within 1.5 s of SIGCONT"
kill -CONT $vpid
STOPPED=
finish
recovered "(c) $H3's daemon and worker stopped" "$H3"
check "(c) continued, $H3's daemon leaves (lost the master)" wait_for 15 bash -c \
    '! kill -0 "$0" 2>/dev/null && grep -q "leaving the VM" "$1"' "$vpid" \
    "$LIQUIDVM_HOME/logs/$H3.log"
check "(c) ... and its worker is gone" wait_for 10 no_workers
check "(c) vmctl add $H3 brings it back as a new host" bash -c \
    '"$0" add "$1" >"$2" 2>&1' "$VMCTL" "$H3" "$T/readd.out"
check "(c) ... the VM has 4 hosts again, $H3 up" bash -c \
    '[ "$("$0" conf | awk -v h="$1" '"'"'$1 == h { print $NF; exit }'"'"')" = up ]' "$VMCTL" "$H3"
check "(c) ... 4 hosts" hosts_are 4
check "(c) ... and a job on the three hosts runs bit-identical" bash -c '
    "$0" stencil --hosts "$1" --grid 24 --iters 60 --probe-seconds 0.05 --verify >"$2" 2>&1 &&
    grep -q "bit-identical to the single-process reference" "$2"' \
    "$VMRUN" "$H1,$H2,$H3" "$T/readd.job"

# (d) SIGSTOP a worker alone: its daemon answers for the host, the worker
# says nothing; past --worker-timeout (auto: 5 s here) it is lost, killed
# (SIGKILL ends a stopped process) and the job goes on.
check "a fresh VM of 4 hosts" vm_up
start
into_job
pid=$(worker_pid "$H2")
check "(d) $H2 runs a worker (pid $pid)" [ -n "$pid" ]
STOPPED=$pid
kill -STOP $pid
check "(d) the stopped worker is declared lost" wait_for 30 grep -q "sent nothing for" "$T/job.err"
kill -CONT $pid 2>/dev/null
STOPPED=
finish
recovered "(d) $H2's worker stopped" "$H2"
check "(d) ... the failure is the worker's silence" r '"sent nothing for" in F[0]["what"]'
check "(d) ... $H2 stayed in the VM (4 hosts)" hosts_are 4
check "(d) the stopped worker was killed" wait_for 10 bash -c '! kill -0 "$0" 2>/dev/null' "$pid"

# (e) Take a host's veth link down: the partitioned host leaves the VM;
# on its side, its daemon loses the master, leaves and ends its worker.
check "a fresh VM of 4 hosts" vm_up
start
into_job
pid=$(worker_pid "$H1")
check "(e) $H1 runs a worker (pid $pid)" [ -n "$pid" ]
ip link set "lvnf${tag}a1" down
finish
recovered "(e) $H1's link down" "$H1"
check "(e) ... the VM went on without $H1 (3 hosts)" hosts_are 3
check "(e) the cut-off host's daemon left on its own and ended its worker" wait_for 15 bash -c \
    '! kill -0 "$0" 2>/dev/null && grep -q "leaving the VM" "$1"' "$pid" \
    "$LIQUIDVM_HOME/logs/$H1.log"
ip link set "lvnf${tag}a1" up

# (f) kill -9 the master daemon during a job: no daemon takes over; each
# other daemon loses the master, says so and leaves, ending its tasks, and
# the job master (vmrun) ends with an error rather than hanging.
check "a fresh VM of 4 hosts" vm_up
start
into_job
mpid=$(vmd_pid_of "$MASTER")
check "(f) the master daemon runs (pid $mpid)" [ -n "$mpid" ]
kill -9 $mpid
finish
check "(f) the job ends with an error (exit $RC)" [ $RC = 1 ]
check "(f) every daemon has left within 15 s" wait_for 15 vmd_count_is 0
check "(f) ... each saying it lost the master" bash -c '
    for h in "$@"; do grep -q "lost the master .*; leaving the VM" "$0/logs/$h.log" || exit 1; done' \
    "$LIQUIDVM_HOME" "${hosts[@]}"
check "(f) no worker of the job is left" wait_for 10 no_workers

# (g) SIGSTOP the master daemon: the others hear nothing past host_timeout
# and leave the same way; the master, continued, finds every host gone.
check "a fresh VM of 4 hosts" vm_up
start
into_job
mpid=$(vmd_pid_of "$MASTER")
STOPPED=$mpid
kill -STOP $mpid
check "(g) with the master stopped, every other daemon leaves within 15 s" wait_for 15 \
    vmd_count_is 1
check "(g) ... each saying it lost the master" bash -c '
    for h in "$@"; do grep -q "lost the master .*; leaving the VM" "$0/logs/$h.log" || exit 1; done' \
    "$LIQUIDVM_HOME" "${hosts[@]}"
kill -CONT $mpid
STOPPED=
finish
check "(g) the job ends with an error (exit $RC)" [ $RC = 1 ]
check "(g) no worker of the job is left" wait_for 10 no_workers

echo "1..$_n"
[ "$_failed" = 0 ]
