#!/usr/bin/env bash
# vmrun stencil on a local VM of 4 daemons (issue 7 acceptance): the final
# field is bit-identical to the single-process reference for every
# decomposition method, host counts 1-4, tasks per host, quanta per host and
# both kernels; the JSON report and job files; bad options and job files exit
# 2; a worker or a host that dies ends the job with an error naming the host.
. "$(dirname "$0")/lib.sh"

# A configured cache size reaches the workers (and differs from sysfs's);
# llc_bytes, no longer used, still loads.  vmrun stencil's kernels are
# liquid.h updates (lib/liquid/liq_ukern.c) whose blocks of sweeps run as a
# wavefront; --verify holds them to the built-in kernels in one process.
write_conf 1.0 'cache_bytes = 65536; llc_bytes = 65536;'
check "start a local VM of 4 hosts" "$VMCTL" start --local 4 -c "$T/test.conf"

# verify ARGS...: the job runs and --verify finds every bit equal.
verify() {
    "$VMRUN" stencil --quiet --probe-seconds 0.01 --verify "$@" >"$T/job.out" 2>&1 &&
        grep -q "bit-identical to the single-process reference" "$T/job.out" ||
        { cat "$T/job.out"; return 1; }
}

# exit2 "what" ARGS...: vmrun exits 2 and says something matching what.
exit2() {
    local what=$1; shift
    "$VMRUN" "$@" >"$T/bad.out" 2>&1
    local rc=$?
    [ $rc = 2 ] && grep -q -- "$what" "$T/bad.out" || { echo "exit $rc"; cat "$T/bad.out"; return 1; }
}

# Every method and kernel; host count, tasks per host and Q vary between runs.
hostlists=(host0 host0,host1 host0,host1,host2 host0,host1,host2,host3)
quanta=(3 5 8 2)
i=0
for kernel in jacobi rbgs; do
    for method in row point hilbert interleaved scatter block brbd fbrd phd orb; do
        h=${hostlists[$((i % 4))]}
        q=${quanta[$((i / 4 % 4))]}
        t=$((i % 3 == 2 ? 2 : 1))
        # row and interleaved cut slabs: keep the workers no more than the slabs.
        case $method in row | interleaved) t=1 q=8 ;; esac
        check "$kernel by $method on ${h//,/ } (Q=$q, T=$t) is bit-identical" \
            verify --grid 23x19x21 --iters 3 --kernel $kernel --decomp $method \
            --hosts "$h" --quanta $q --tasks-per-host $t
        i=$((i + 1))
    done
done
check "the advisor's choice on 4 hosts, 2 tasks each, is bit-identical" \
    verify --grid 40 --iters 5 --tasks-per-host 2
check "one worker with one quantum is bit-identical" \
    verify --grid 17x1x9 --iters 4 --hosts host2 --quanta 1 --kernel rbgs

# Deep halos: one exchange per H iterations, each quantum's box reaching H
# (rbgs 2H) points into its neighbours, edges and corners included, from
# workers on other hosts; blocks cut short by the job's end and by epochs;
# quanta moved between blocks.
for kernel in jacobi rbgs; do
    for h in 2 3 5; do
        check "$kernel with --halo $h on 4 hosts, 2 tasks each, is bit-identical" \
            verify --grid 31x26x22 --iters 11 --kernel $kernel --halo $h --tasks-per-host 2 \
            --quanta 4 --balance off
    done
    # Seed 000's non-uniform case moves quanta in its first epoch: moves
    # between blocks of a deep halo.
    h=3 d=3
    [ $kernel = rbgs ] && h=2 d=4
    check "$kernel with --halo $h, balancing and a heavy octant (P = 8) is bit-identical" \
        verify --grid 96 --iters 60 --epoch 10 --tasks-per-host 2 --quanta 16 --heavy 20 \
        --kernel $kernel --halo $h --json "$T/halo.json"
    check "... quanta moved, and the report gives the halo ($h iterations, depth $d)" \
        python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
h = r["halo"]
print("# moved per epoch", [x["moved"] for x in r["balance"]["epochs"]], "halo", h)
sys.exit(0 if r["balance"]["quanta_moved"] > 0 and h["iterations"] == int(sys.argv[2]) and
         h["depth"] == int(sys.argv[3]) and not h["auto"] and h["work"] > 1 else 1)' \
        "$T/halo.json" $h $d
done

check "jacobi with --halo 2 and two workers a host is bit-identical" \
    verify --grid 96 --iters 24 --kernel jacobi --halo 2 --tasks-per-host 2 \
    --quanta 4 --balance off --json "$T/pass.json"
# A link's ghosts beyond 1 MiB go as several messages of at most 1 MiB
# (patches cut into slabs of planes or runs of rows): faces of 160 x 160
# points, 8 (jacobi) or 16 (rbgs) deep, between three hosts.
for kernel in jacobi rbgs; do
    check "$kernel ghosts cut into messages of at most 1 MiB are bit-identical" \
        verify --grid 160 --iters 16 --kernel $kernel --halo 8 --hosts host0,host1,host2 \
        --quanta 2 --balance off --trace "$T/cut.$kernel.json"
    check "... a link's ghosts of one exchange went as several messages, none over 1 MiB" \
        python3 -c 'import json, sys, collections
t = json.load(open(sys.argv[1]))
s = [e for e in t["traceEvents"] if e.get("name") == "send ghosts"]
n = collections.Counter((e["pid"], e["tid"], e["args"]["peer"], e["args"]["tag"]) for e in s)
s = [e["args"] for e in s]
print("# messages per link and exchange", sorted(set(n.values())), "largest", max(a["bytes"] for a in s))
sys.exit(0 if max(n.values()) > 1 and max(a["bytes"] for a in s) <= 1 << 20 else 1)' "$T/cut.$kernel.json"
done
# vmrun analyze takes a link's wait in one exchange (a run of one tag on a
# worker's lane) as the sum of its messages' waits, which come in any order
# of the links (a worker puts in what has come after each of its sends):
# the median over links and exchanges, recomputed here from the trace, and
# from a copy whose waits of each exchange take turns between its links.
# ghost_wait_check TRACE DIR
ghost_wait_check() {
    python3 - "$1" "$2/turns.json" <<'EOF' || return 1
import json, sys
d = json.load(open(sys.argv[1]))
t, runs, ex = d["traceEvents"], {}, {}
for i, e in enumerate(t):
    if e.get("name") == "wait ghosts":
        lane = (e["pid"], e["tid"])
        if ex.get(lane, (None,))[0] != e["args"]["tag"]:
            ex[lane] = (e["args"]["tag"], len(runs))
            runs[len(runs)] = []
        runs[ex[lane][1]].append(i)
for idx in runs.values():
    by = {}
    for i in idx:
        by.setdefault(t[i]["args"]["peer"], []).append(t[i])
    turns = [q[k] for k in range(max(map(len, by.values()))) for q in by.values() if k < len(q)]
    for i, e in zip(idx, [dict(x) for x in turns]):
        t[i] = e
json.dump(d, open(sys.argv[2], "w"))
EOF
    for f in "$1" "$2/turns.json"; do
        "$VMRUN" analyze --json "$f" >"$2/an.json" || return 1
        python3 - "$f" "$2/an.json" <<'EOF' || return 1
import json, statistics, sys
t = json.load(open(sys.argv[1]))["traceEvents"]
waits = [e for e in t if e.get("name") == "wait ghosts"]
ex, sums, turns = {}, [], 0
for e in waits:
    lane, a = (e["pid"], e["tid"]), e["args"]
    tag, links = ex.get(lane, (None, None))
    if tag != a["tag"]:
        links = {}
        ex[lane] = (a["tag"], links)
    if a["peer"] not in links:
        links[a["peer"]] = len(sums)
        sums.append(0.0)
    elif list(links)[-1] != a["peer"]:
        turns += 1      # this link's message came after another link's
    sums[links[a["peer"]]] += e["dur"] * 1e-6
got = json.load(open(sys.argv[2]))["communication"]["ghost_wait_s"]
want = sorted(sums)[len(sums) // 2]
print("# %s: ghost wait" % sys.argv[1].split("/")[-1], got, "per link and exchange", want,
      "per message", statistics.median_low(e["dur"] * 1e-6 for e in waits), "turns", turns)
sys.exit(0 if len(sums) < len(waits) and abs(got - want) <= 1e-6 + 1e-3 * want else 1)
EOF
    done
}
mkdir -p "$T/gw"
check "vmrun analyze's ghost wait is a link's per exchange, its messages' waits summed in any order" \
    ghost_wait_check "$T/cut.jacobi.json" "$T/gw"
# Temporally blocked (a block's sweeps on its shrinking trapezoid), a
# region that needs another worker's points runs its core before its
# ghosts come and the rest after them: odd and even blocks (epoch 5, halo
# 3: 3 + 2), a short last epoch (17 iterations), several cuts, a column of
# quanta.
for m in row point hilbert block; do
    check "jacobi by $m temporally blocked, regions started before their ghosts come, is bit-identical" \
        verify --grid 64x48x40 --iters 17 --epoch 5 --halo 3 --quanta 8 \
        --decomp $m --kernel jacobi --json "$T/tsplit.$m.json"
done
check "jacobi on a column of quanta, temporally blocked and started before the ghosts come, is bit-identical" \
    verify --grid 16x16x256 --iters 17 --epoch 5 --halo 3 --quanta 4 --decomp row \
    --kernel jacobi --json "$T/tsplit.z.json"
check "... and every worker computed while its ghosts were on the way" \
    python3 -c 'import json, sys
w = [x for x in json.load(open(sys.argv[1]))["workers"] if x["compute_cpu_s"] > 0]
print("# overlapped", [round(x["overlap_cpu_s"] / x["compute_cpu_s"], 2) for x in w])
sys.exit(0 if len(w) >= 2 and all(x["overlap_cpu_s"] > 0 for x in w) else 1)' "$T/tsplit.z.json"

# Balancing (issue 8): a heavy octant makes the balancer move quanta between
# epochs; whatever it moves, the field keeps its bits.  How many quanta move
# depends on measured times, so it is shown, not asserted.
for kernel in rbgs jacobi; do
    check "$kernel with balancing and a heavy octant is bit-identical" \
        verify --grid 64x60x56 --iters 30 --epoch 3 --heavy 40 --min-gain 0 --kernel $kernel \
        --json "$T/bal.json"
    echo "# $kernel: $(python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["balance"]; print(b["quanta_moved"], "quanta moved in", len(b["epochs"]), "epochs")' "$T/bal.json")"
done
# Seed 000's non-uniform case (P = 8 workers, 8 quanta each): the balancer
# reaches its final placement with the first epoch's plan; a uniform problem
# is already balanced.  The balancer's model takes quanta's CPU times and the
# hosts' sensed CPU shares, so a worker preempted on this shared machine
# does not look slow.  Its figures are measured times: how many quanta move
# is shown, not asserted.  On a time-sliced machine a worker's CPU time per
# point itself wanders, for seconds at a time: in the sanitizer build with two
# busy loops beside it, the uniform job's hosts modelled at 0.64-0.72 of the
# slowest for 3 epochs in a row, so a later plan that moves a few quanta is
# the model acting on what it measured (CI moved 12 of 64 once, in one epoch;
# a full run 10 of 64 in the heavy job's 8th).  What is asserted is that it
# acts only on a gain worth the dampener (a plan applied without quanta
# having to leave models more than --min-gain faster), and that the model
# finds the placement balanced in most epochs: the median epoch's modelled
# gain is under --min-gain (idle, 0.02-0.09; with two busy loops, 0.05-0.11).
# A model that misreads its measurements moves quanta in most runs of the
# uniform job, as this one once did (7 of 18 runs, before shares were no
# longer less each worker's message CPU).
# e EXPR: a Python condition on the report's epochs (E), their modelled
# gains (G) and --min-gain (M).
e() {
    python3 -c 'import json, statistics, sys
b = json.load(open(sys.argv[2]))["balance"]
E, M = b["epochs"], b["min_gain"]
G = [(x["predicted_s"] - x["replaced_s"]) / x["predicted_s"] if x["predicted_s"] > 0 else 0 for x in E]
sys.exit(0 if eval(sys.argv[1]) else 1)' "$1" "$T/nu.json"
}
# The dampener, honoured: every plan applied, unless forced, modelled a gain above min_gain.
honoured='all(x["forced"] or not x["applied"] or g > M for x, g in zip(E, G))'
# Reclaim off: these jobs show the balancer; with 8 workers on this one
# machine a host's sensed share is near --reclaim-below, and once under
# load its quanta were forced off (a uniform job moved 56 of 64 quanta).
nonuniform() {
    "$VMRUN" stencil --quiet --probe-seconds 0.05 --grid 96 --iters 100 --epoch 10 \
        --tasks-per-host 2 --quanta 16 --kernel jacobi --reclaim off --json "$T/nu.json" "$@" \
        >"$T/nu.out" 2>&1 ||
        { cat "$T/nu.out"; return 1; }
}
check "non-uniform (heavy 20, P = 8, Q = 8): the job runs" nonuniform --heavy 20
echo "# heavy: moved per epoch $(e 'print([x["moved"] for x in E]) or True'), modelled gain $(e 'print([round(g, 2) for g in G]) or True'), BE $(e 'print([round(x["be"], 2) for x in E]) or True')"
check "... the first epoch's plan moves quanta; later ones find them balanced (median gain under min_gain)" \
    e 'E[0]["moved"] > 0 and statistics.median(G[1:]) < M'
check "... every plan applied modelled a gain above min_gain" e "$honoured"
check "... workers that gave quanta away held more before (held_peak_bytes > held_bytes)" \
    python3 -c 'import json, sys
W = json.load(open(sys.argv[1]))["workers"]
print("# quanta, held MB, held at most MB:", [(w["quanta"], round(w["held_bytes"] / 1e6, 2),
      round(w["held_peak_bytes"] / 1e6, 2)) for w in W])
sys.exit(0 if all(w["held_peak_bytes"] >= w["held_bytes"] for w in W) and
         any(w["held_peak_bytes"] > w["held_bytes"] for w in W) else 1)' "$T/nu.json"
# The uniform job runs at --halo 1.  At the automatic halo (5) the model's
# median epoch gain read 0.00-0.02 idle (0.13-0.20 while each octant was
# cut into 4 boxes and split in x, docs/decisions.md), but 0.19-0.21 in 2
# runs of 3 beside two busy loops; at --halo 1, 0.02-0.06 idle and
# 0.05-0.11 beside them.
check "uniform (P = 8, Q = 8, halo 1): the job runs" nonuniform --heavy 1 --halo 1
echo "# uniform: moved per epoch $(e 'print([x["moved"] for x in E]) or True'), modelled gain $(e 'print([round(g, 2) for g in G]) or True'), BE $(e 'print([round(x["be"], 2) for x in E]) or True')"
check "... 9 epochs; the model finds it balanced (their median gain under min_gain)" \
    e 'len(E) == 9 and statistics.median(G) < M'
check "... every plan applied modelled a gain above min_gain" e "$honoured"
# The waits are wall time outside the kernels, so within comm_s.
check "... each worker's ghost and plan waits lie within its time outside the kernels" \
    python3 -c 'import json, sys
W = json.load(open(sys.argv[1]))["workers"]
print("# waits", [(round(w["ghost_wait_s"], 3), round(w["plan_wait_s"], 3), round(w["comm_s"], 3)) for w in W])
sys.exit(0 if len(W) == 8 and all(w["ghost_wait_s"] >= 0 and w["plan_wait_s"] >= 0 and
         w["ghost_wait_s"] + w["plan_wait_s"] <= w["comm_s"] * 1.01 + 1e-3 for w in W) and
         any(w["ghost_wait_s"] > 0 for w in W) else 1)' "$T/nu.json"
check "... each epoch gives each host's model and wall time, positive where it holds quanta" \
    e 'all(len(x["host_model_s"]) == len(x["host_wall_s"]) == len(x["host_quanta"]) == 4 and
           all((m > 0) == (q > 0) and (t > 0) == (q > 0) and m < 10 and t < 10
               for m, t, q in zip(x["host_model_s"], x["host_wall_s"], x["host_quanta"]))
           for x in E)'

# Two slabs (row on two hosts) share one 24x24 plane: whatever the halo,
# each worker receives that plane's doubles once per iteration.
ghost_bytes() {
    "$VMRUN" stencil --quiet --probe-seconds 0.01 --grid 24 --iters 12 --balance off \
        --decomp row --hosts host0,host1 --halo "$1" --json - | python3 -c 'import json, sys
W = json.load(sys.stdin)["workers"]
print("# ghost_bytes", [w["ghost_bytes"] for w in W])
sys.exit(0 if len(W) == 2 and all(w["ghost_bytes"] == 24 * 24 * 8 * 12 for w in W) else 1)'
}
check "ghost_bytes: two slabs, halo 1, each worker receives 24*24*8 bytes an iteration" ghost_bytes 1
check "ghost_bytes: two slabs, halo 3, the same bytes in a quarter of the messages" ghost_bytes 3

check "--balance off keeps the placement: no epochs" bash -c '
    "$0" stencil --quiet --probe-seconds 0.01 --grid 24 --iters 12 --epoch 2 --balance off --json - |
        grep -q "\"epochs\":\[\]"' "$VMRUN"
check "--balance maybe exits 2" exit2 "--balance" stencil --balance maybe

check "--json FILE writes the report" \
    "$VMRUN" stencil --quiet --probe-seconds 0.01 --grid 24 --iters 2 --json "$T/report.json"
check "the report is JSON with the documented keys" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("job", "hosts", "ring", "quanta", "ranking", "method", "placement", "workers",
          "time_s", "updates_per_s", "be", "phases", "checksum"):
    assert k in r, k
assert len(r["hosts"]) == 4 and r["ranking"][0]["rating"] == 1.0
assert len(r["placement"]) == r["quanta"]["count"] == 32
assert r["ring"]["lambda_s"] > 0 and r["ring"]["tau_s_per_byte"] > 0
' "$T/report.json"
check "the checksum does not depend on the cut" bash -c '
    a=$("$0" stencil --quiet --probe-seconds 0.01 --grid 24 --iters 2 --decomp row --json - | grep -o "\"checksum\":\"[0-9a-f]*\"")
    b=$("$0" stencil --quiet --probe-seconds 0.01 --grid 24 --iters 2 --decomp scatter --hosts host1 --json - | grep -o "\"checksum\":\"[0-9a-f]*\"")
    [ -n "$a" ] && [ "$a" = "$b" ]' "$VMRUN"
check "vmrun bench --json measures every host and fits lambda and tau" bash -c '
    "$0" bench --quiet --probe-seconds 0.01 --json | python3 -c "
import json, sys
r = json.load(sys.stdin)
assert [h[\"name\"] for h in r[\"hosts\"]] == [\"host0\", \"host1\", \"host2\", \"host3\"]
assert all(h[\"updates_per_s\"] > 0 for h in r[\"hosts\"])
assert all(h[\"cache_bytes\"] == 65536 for h in r[\"hosts\"]), r[\"hosts\"]
assert r[\"ring\"][\"members\"] == 4 and len(r[\"ring\"][\"sizes\"]) == 5
"' "$VMRUN"

# Job files: the same keys as the options; options override them.
cat >"$T/job.conf" <<'JOB'
# a scripted experiment
grid = [20, 18, 16];
iters = 3;
kernel = "rbgs";
quanta = 4;
hosts = ["host1", "host3"];
verify = true;
quiet = true;
probe_seconds = 0.01;
JOB
check "a job file runs and verifies" bash -c '"$0" stencil --job "$1" | grep -q "bit-identical"' \
    "$VMRUN" "$T/job.conf"
check "an option overrides the job file" bash -c '
    "$0" stencil --job "$1" --grid 12 --json - | grep -q "\"grid\":\[12,12,12\]"' \
    "$VMRUN" "$T/job.conf"

check "--grid 0 exits 2" exit2 "--grid" stencil --grid 0
check "--grid 8x8 exits 2" exit2 "--grid" stencil --grid 8x8
check "--grid 8xx8x8 exits 2" exit2 "--grid" stencil --grid 8xx8x8
check "--iters -1 exits 2" exit2 "--iters" stencil --iters -1
check "--kernel sor exits 2" exit2 "--kernel" stencil --kernel sor
check "--decomp nope exits 2" exit2 "--decomp" stencil --decomp nope
check "--quanta 0 exits 2" exit2 "--quanta" stencil --quanta 0
check "--halo 0 exits 2" exit2 "--halo" stencil --halo 0
check "--halo 17 exits 2" exit2 "--halo" stencil --halo 17
check "--halo deep exits 2" exit2 "--halo" stencil --halo deep
check "--tasks-per-host x exits 2" exit2 "--tasks-per-host" stencil --tasks-per-host x
check "--iters without a value exits 2" exit2 "needs a value" stencil --iters
check "an unknown option exits 2" exit2 "unknown option" stencil --colour red
check "a stray argument exits 2" exit2 "unexpected argument" stencil 64
check "a host not in the VM exits 2" exit2 "nosuch is not in the virtual machine" \
    stencil --hosts host0,nosuch
check "a grid too small for its quanta exits 2" exit2 "cannot be cut" stencil --grid 2 --quanta 8
check "a method that cannot place the job exits 2" exit2 "row cannot place 8 quanta" \
    stencil --grid 8 --quanta 2 --tasks-per-host 2 --decomp row --probe-seconds 0.01
check "more workers than quanta exits 2" exit2 "more workers (8) than quanta (4)" \
    stencil --grid 8 --quanta 1 --tasks-per-host 2
printf 'grid = 16;\niters = "many";\ncolour = 3;\nkernel = "sor";\n' >"$T/bad.conf"
check "a bad job file reports every error with its line and exits 2" bash -c '
    "$0" stencil --job "$1" >"$2" 2>&1; rc=$?
    [ $rc = 2 ] && grep -q "bad.conf:2: --iters" "$2" && grep -q "bad.conf:3: unknown option" "$2" &&
        grep -q "bad.conf:4: --kernel" "$2"' "$VMRUN" "$T/bad.conf" "$T/bad.out"
printf 'grid = 16;\niters = ;\n' >"$T/syntax.conf"
check "a job file with a syntax error exits 2" exit2 "syntax.conf:2" stencil --job "$T/syntax.conf"
check "a missing job file exits 2" exit2 "cannot open" stencil --job "$T/none.conf"
check "--worker-timeout without checkpoints would do nothing: exit 2, saying so" \
    exit2 "--worker-timeout applies to checkpoints" stencil --grid 16 --worker-timeout 10
printf 'grid = 16;\ncheckpoint_share = 0.1;\n' >"$T/ckshare.conf"
check "... and checkpoint_share in a job file likewise" \
    exit2 "--checkpoint-share applies to checkpoints" stencil --job "$T/ckshare.conf"
printf 'grid = 16;\ntasks_per_host = 1;\ntasks-per-host = 2;\n' >"$T/dup.conf"
check "a job file setting one key under both spellings exits 2, naming the line" \
    exit2 "dup.conf:3: tasks-per-host: set twice" stencil --job "$T/dup.conf"
check "a grid whose fields exceed the hosts' memory exits 2 before the job, saying so" \
    exit2 "grid's fields need at least 2097152.0 GiB; the job's .* GiB of memory together" \
    stencil --grid 65536
python3 -c 'print("grid = 16;\nhosts = \"" + "a" * 5000 + "\";")' >"$T/long.conf"
check "a job file's value of 5000 characters: exit 2, saying how long one may be" \
    exit2 "long.conf:2: hosts: .* of at most 1023 characters" stencil --job "$T/long.conf"
check "a --hints name of 3000 characters: exit 2, saying so (not an unknown option)" \
    exit2 "--hints: a file name of at most 1023" stencil --hints "$(printf "%03000d" 0)"
check "vmrun without a VM exits 1" bash -c '
    LIQUIDVM_HOME=$1/nohome "$0" stencil --grid 8 >/dev/null 2>&1; [ $? = 1 ]' "$VMRUN" "$T"
check "vmrun stencil --help exits 0" "$VMRUN" stencil --help
check "vmrun bench --help exits 0" "$VMRUN" bench --help
check "every vmrun command takes --help, exit 0 with a usage (the workers' too)" bash -c '
    for c in stencil bench advise farm trace analyze version worker farm-worker; do
        "$0" $c --help 2>&1 | grep -q "^usage: vmrun $c" || { echo "$c"; exit 1; }
    done' "$VMRUN"
check "vmrun version --json is JSON; a stray word is bad usage" bash -c '
    "$0" version --json | python3 -c "import json,sys; assert json.load(sys.stdin)[\"version\"]" &&
    { "$0" version x 2>/dev/null; [ $? = 2 ]; }' "$VMRUN"
check "a worker run by hand says who spawns it, exit non-zero" bash -c '
    ! "$0" farm-worker 2>"$1" && grep -q "vmrun farm spawns it" "$1" &&
    ! LIQUIDVM_HOME=$2/nohome "$0" worker 2>"$1" && grep -q "master spawns its workers" "$1"' \
    "$VMRUN" "$T/w.err" "$T"
check "an unknown command exits 2" exit2 "unknown command" frobnicate

# A worker killed during a job: the job ends with an error naming its host.
worker_pid_on() { # a host's tid (host N is (N+1) << 18) -> the pid of a vmrun worker there
    "$VMCTL" ps -a --json | python3 -c '
import json, sys
for t in json.load(sys.stdin)["tasks"]:
    if t["ptid"] != 0 and t["dtid"] == int(sys.argv[1]) and t["command"] == "vmrun":
        print(t["pid"]); break' "$1"
}
job_running() { [ -n "$(worker_pid_on "$1")" ] && grep -q "iteration" "$T/long.err"; }
"$VMRUN" stencil --grid 48 --iters 1000000 --probe-seconds 0.01 >"$T/long.out" 2>"$T/long.err" &
job=$!
if wait_for 30 job_running $((3 << 18)); then
    kill -9 "$(worker_pid_on $((3 << 18)))"
    check "the job ends after its worker on host2 is killed" wait_for 30 bash -c "! kill -0 $job"
    wait $job
    rc=$?
    check "the job exits 1 naming host2" bash -c "[ $rc = 1 ] && grep -q 'on host host2 exited' '$T/long.err' || { cat '$T/long.err'; false; }"
else
    notok "the long job started its workers"; cat "$T/long.err"; kill $job
fi

# A host that dies during a job: the same, naming the host.
"$VMRUN" stencil --grid 48 --iters 1000000 --probe-seconds 0.01 >"$T/long.out" 2>"$T/long.err" &
job=$!
if wait_for 30 job_running $((4 << 18)); then
    kill -9 "$(vmd_pid_of host3)"
    check "the job ends after host3's daemon is killed" wait_for 30 bash -c "! kill -0 $job"
    wait $job
    rc=$?
    check "the job exits 1 naming host3" bash -c "[ $rc = 1 ] && grep -q 'host3' '$T/long.err'"
else
    notok "the second long job started its workers"; cat "$T/long.err"; kill $job
fi
vmrun_tasks_gone() { ! "$VMCTL" ps -a | grep -q vmrun; }
check "the VM is left with no vmrun task" wait_for 10 vmrun_tasks_gone
check "halt" "$VMCTL" halt

# A VM of 4 hosts again (the last lost two), with sysfs's cache size.
write_conf 1.0
check "start a local VM of 4 hosts again" \
    "$VMCTL" start --local 4 -c "$T/test.conf"
check "jacobi with --halo 2 and two workers a host, the cache sysfs's, is bit-identical" \
    verify --grid 96 --iters 24 --kernel jacobi --halo 2 --tasks-per-host 2 \
    --quanta 4 --balance off --json "$T/pass.json"
# 120 iterations: at 60 the first plan's gain over the rest of the job came
# within the moves' cost at the ring's lambda and tau in 1 run of about 25.
check "jacobi with a heavy octant moving quanta between blocks is bit-identical" \
    verify --grid 96 --iters 120 --epoch 10 --tasks-per-host 2 --quanta 16 --heavy 20 \
    --kernel jacobi --halo 3 --json "$T/pass.json"
check "... quanta moved" python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print("# moved", r["balance"]["quanta_moved"])
sys.exit(0 if r["balance"]["quanta_moved"] > 0 else 1)' "$T/pass.json"
# Halo 3 on that VM: the same for every method,
# odd and even blocks, a short last epoch.
for m in row point interleaved hilbert block; do
    check "jacobi by $m, regions started before their ghosts come, is bit-identical" \
        verify --grid 64x48x40 --iters 17 --epoch 5 --halo 3 --quanta 8 \
        --decomp $m --kernel jacobi --json "$T/split.$m.json"
done
check "... and by row some workers computed while their ghosts were on the way" python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
o = [round(x["overlap_cpu_s"] / x["compute_cpu_s"], 2) for x in r["workers"] if x["compute_cpu_s"] > 0]
print("# share of the kernels overlapped, per worker:", o)
sys.exit(0 if any(x > 0 for x in o) and all(0 <= x <= 1 for x in o) else 1)' "$T/split.row.json"
# overlapped JSON GRID TEST: the quanta grid is GRID and each working
# worker's overlapped kernel CPU passes TEST (a Python condition on x).
overlapped() {
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
o = [w["overlap_cpu_s"] for w in r["workers"] if w["compute_cpu_s"] > 0]
sys.exit(0 if r["quanta"]["grid"] == json.loads(sys.argv[2]) and o and
         all(eval(sys.argv[3]) for x in o) else 1)' "$@"
}
# Quanta in one column (1x1x16): every face that waits is in z.
check "jacobi on a column of quanta, regions started before their ghosts come, is bit-identical" \
    verify --grid 16x16x256 --iters 17 --epoch 5 --halo 3 --quanta 4 --decomp row \
    --kernel jacobi --json "$T/split.z.json"
check "... and every worker computed while its ghosts were on the way" \
    overlapped "$T/split.z.json" "[1, 1, 16]" "x > 0"
# Quanta in one row (16x1x1): every face that waits is in x, and such a
# region does not split (its skirt would be rows of a few points).
check "jacobi on a row of quanta, each region swept whole once its ghosts came, is bit-identical" \
    verify --grid 256x16x16 --iters 17 --epoch 5 --halo 3 --quanta 4 --decomp row \
    --kernel jacobi --json "$T/split.x.json"
check "... and no worker computed while its ghosts were on the way" \
    overlapped "$T/split.x.json" "[16, 1, 1]" "x == 0"
check "halt" "$VMCTL" halt
