#!/usr/bin/env bash
# Paradise for PVM programs (issue 27) on a local VM of 3 daemons: PVM's
# master1/slave1 (pvm-examples, built on our pvm3.h) traced unchanged with
# LIQUIDVM_TRACE=DIR write one whole trace per task; the traces validate
# (every event has the fields its phase needs, flows pair up, bytes sent
# equal bytes received per pair); `vmrun trace view DIR` draws them and
# `vmrun analyze DIR` reads them merged (matrix, grain, waits) and writes
# hints; a second run with LIQUIDVM_HINTS shows in its traces the settings
# that came from them (route, placement of the slaves); an option the
# program sets itself wins.  pvm_tracer turns tracing on through PVM's own
# interface (pvm_settmask, PvmTaskTrace) and forgets pvm_exit; vmctl spawn
# -@ traces master1's job from the shell.  Bad input:
# a malformed hints file, a directory for one, an unwritable trace
# directory, a broken trace.
. "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$VMCTL")/.." && pwd)
TRACER=$B/tests/integ/pvm_tracer
TARBALL=/usr/share/doc/pvm-examples/examples.tar.gz
[ -x "$TRACER" ] || skip_all "pvm_tracer is not built"
[ -f "$TARBALL" ] || skip_all "pvm-examples is not installed"
command -v python3 >/dev/null || skip_all "needs python3"

EX=$T/ex
mkdir -p "$EX/src"
tar -xzf "$TARBALL" -C "$EX/src" || skip_all "cannot extract $TARBALL"
SAN=
if nm -D "$B/lib/libpvm3.so.3" 2>/dev/null | grep -q __asan; then
    printf 'const char *__asan_default_options(void);\n%s\n' \
        'const char *__asan_default_options(void) { return "detect_leaks=0"; }' >"$T/noleak.c"
    SAN="-fsanitize=address,undefined $T/noleak.c"
fi
for p in master1 slave1; do
    cc -w $SAN -I"$(pwd)/lib/pvm" -o "$EX/$p" "$EX/src/examples/$p.c" -L"$B/lib" -lpvm3 \
        -Wl,-rpath,"$B/lib" || skip_all "cannot build $p against our pvm3.h"
done

write_conf 2.0 "spawn_path = [ \"$EX\", \"$B/tests/integ\" ];"
check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"

# validate DIR N: N whole task traces in DIR, each event with the fields
# its phase needs, every flow start with its finish, bytes sent = bytes
# received per pair.  Prints what it saw.
validate() {
    python3 - "$1" "$2" <<'PY'
import json, sys, glob, time
from collections import defaultdict
# A child writes its trace as it exits, which may be after its parent's
# end; each file appears whole (written aside, then renamed).
for _ in range(200):
    files = sorted(glob.glob(sys.argv[1] + "/*.json"))
    if len(files) >= int(sys.argv[2]):
        break
    time.sleep(0.05)
assert len(files) == int(sys.argv[2]), ("files", files)
need = {"X": ("name", "cat", "pid", "tid", "ts", "dur"), "s": ("name", "cat", "pid", "tid", "ts", "id"),
        "f": ("name", "cat", "pid", "tid", "ts", "id", "bp"), "i": ("name", "pid", "tid", "ts", "s"),
        "M": ("name", "pid", "tid", "args")}
starts, ends = {}, {}
sent, got = defaultdict(int), defaultdict(int)
tids = set()
res = {}
for f in files:
    t = json.load(open(f))          # whole JSON, or this fails
    o = t["otherData"]
    assert o["format"] == "liquidvm-pvm-trace 1" and o["dropped"] == 0, o
    tids.add(o["tid"])
    res[o["tid"]] = o["clock"]["residual_us"]
    for e in t["traceEvents"]:
        missing = [k for k in need.get(e.get("ph"), ("?",)) if k not in e]
        assert not missing, ("event lacks", missing, e, f)
        assert e["tid"] == o["tid"] and e["pid"] == o["host"]["index"], (e, f)
        if e["ph"] == "X":
            assert e["dur"] >= 0, e
        if e["ph"] == "s":
            assert e["id"] not in starts, ("flow id repeats", e)
            starts[e["id"]] = e
        if e["ph"] == "f":
            assert e["id"] not in ends, ("flow id repeats", e)
            ends[e["id"]] = e
        if e["ph"] == "X" and e["cat"] == "send":
            sent[(e["tid"], e["args"]["peer"])] += e["args"]["bytes"]
        if e["ph"] == "X" and e["cat"] == "wait":
            got[(e["args"]["peer"], e["tid"])] += e["args"]["bytes"]
assert starts and set(starts) == set(ends), ("flows do not pair up",
                                             set(starts) ^ set(ends))
for i, s in starts.items():
    f = ends[i]
    assert s["args"]["bytes"] == f["args"]["bytes"] and s["args"]["tag"] == f["args"]["tag"], (s, f)
    assert s["args"]["to"] == f["tid"] and f["args"]["from"] == s["tid"], (s, f)
    # A message is received after it was sent: on one host's clock, or
    # within the clocks' residuals (measured against the first task's host).
    if s["pid"] == f["pid"]:
        assert f["ts"] >= s["ts"], (s, f)
    elif res[s["tid"]] >= 0 and res[f["tid"]] >= 0:
        assert f["ts"] >= s["ts"] - res[s["tid"]] - res[f["tid"]] - 1, (s, f, res)
assert sent == got, (dict(sent), dict(got))
print("# %d tasks, %d messages, %d bytes" % (len(files), len(starts), sum(sent.values())))
PY
}
export -f validate

# meta DIR PROGRAM EXPR: a python expression over o (PROGRAM's otherData,
# the first file of it) and every (every file's otherData) holds.
meta() {
    python3 - "$@" <<'PY'
import json, sys, glob
every = [json.load(open(f))["otherData"] for f in sorted(glob.glob(sys.argv[1] + "/*.json"))]
o = [x for x in every if x["program"] == sys.argv[2]][0]
ok = eval("(" + sys.argv[3] + ")")
if not ok:
    print(json.dumps(every, indent=1))
sys.exit(0 if ok else 1)
PY
}

# ---- master1 and 9 slave1, traced without a change ----
TR=$EX/tr1
check "master1 traced with LIQUIDVM_TRACE (a relative name) runs as ever (9 results)" \
    bash -c 'cd "$0" && LIQUIDVM_TRACE=tr1 timeout 60 ./master1 >"$1" &&
             [ "$(grep -c "I got" "$1")" = 9 ]' "$EX" "$T/m1.out"
check "one whole trace per task (master1 + 9 slave1), flows pair up, bytes sent = received per pair" \
    validate "$TR" 10
check "the slaves ran on the 3 hosts; each trace names its host, parent, task path, clock and run" \
    meta "$TR" master1 'len({x["host"]["index"] for x in every}) == 3 and
        o["run"] == "t%x-%d" % (o["tid"], o["t_start_us"]) and all(x["run"] == o["run"] for x in every) and
        all(x["parent"] == o["tid"] and x["path"] == "0/0" for x in every if x["program"] == "slave1") and
        o["path"] == "0" and o["hints"] is None and o["settings"]["route"] == "allow" and
        o["spawns"] == [{"call": 0, "path": "0/0", "file": "slave1"}] and
        o["clock"]["residual_us"] == 0 and o["clock"]["offset_us"] == 0 and
        all(0 <= x["clock"]["residual_us"] < 1e6 and x["clock"]["root_host"] == o["host"]["index"]
            for x in every)'
check "vmrun trace view DIR draws the merged traces" \
    bash -c '"$0" trace view "$1" --svg "$2" >"$3" && grep -q "10 lanes on 3 hosts" "$3" &&
             grep -q ", 27 messages" "$3" && grep -q "<svg" "$2"' "$VMRUN" "$TR" "$T/v.svg" "$T/view.out"
check "vmrun analyze DIR --json: 10 tasks, master1 sends each slave 1 message, nothing unpaired" \
    bash -c '"$0" analyze "$1" --json >"$2" && python3 - "$2" <<'"'PY'"'
import json, sys
a = json.load(open(sys.argv[1]))
m = [t["tid"] for t in a["task"] if t["path"] == "0"][0]
out = [p for p in a["pairs"] if p["from"] == m]
assert a["kind"] == "pvm" and a["tasks"] == 10 and a["unpaired"] == 0 and a["messages"] == 27, a
assert len(out) == 9 and all(p["messages"] == 1 for p in out), out
assert all(t["compute_spans"] > 0 and t["life"] > 0 and t["wait"] >= 0 for t in a["task"])
assert len(a["hosts_idle"]) == 3 and all(0 <= h["wait"] <= h["life"] for h in a["hosts_idle"])
PY' "$VMRUN" "$TR" "$T/a.json"
check "vmrun analyze DIR prints the matrix, grain, waits and the rules" \
    bash -c '"$0" analyze "$1" >"$2" && grep -q "^communication matrix" "$2" &&
             grep -q "grain us" "$2" && grep -q "wait %" "$2" && grep -q "^hosts (idle" "$2" &&
             grep -q "route-direct  no: no pair exchanged 100 messages" "$2"' "$VMRUN" "$TR" "$T/a.out"
check "LIQUIDVM_TRACE naming a file: the program runs untraced, saying it is no directory" bash -c '
    LIQUIDVM_TRACE=/dev/null timeout 30 "$0" >/dev/null 2>"$1" &&
    grep -q "trace directory /dev/null: Not a directory; this task is not traced" "$1"' \
    "$(dirname "$VMCTL")/../tests/integ/pvm_hostload" "$T/tf.err"
check "vmrun analyze: a folder with a copy of a task's trace is refused, naming it" bash -c '
    mkdir -p "$2/dup" && cp "$1"/*.json "$2/dup/" && f=$(ls "$2/dup" | head -1) &&
    cp "$2/dup/$f" "$2/dup/copy-$f" && ! "$0" analyze "$2/dup" >/dev/null 2>"$2/dup.err" &&
    grep -q "trace is in another file of this folder too" "$2/dup.err"' "$VMRUN" "$TR" "$T"
check "vmrun analyze: a --wait-share above 1 or an empty --min-msgs is bad usage (exit 2)" \
    bash -c '{ "$0" analyze "$1" --wait-share 2; [ $? = 2 ]; } && { "$0" analyze "$1" --min-msgs ""; [ $? = 2 ]; }' \
    "$VMRUN" "$TR"
# master1 and its slaves exchange few messages: thresholds low enough for
# the rules to fire on them.
H=$T/master1.hints
check "vmrun analyze --hints (low thresholds): route direct and the slaves beside their parent" \
    bash -c '"$0" analyze "$1" --hints "$2" --min-msgs 1 --wait-share 0 >"$3" &&
             grep -q "^    route = \"direct\";" "$2" &&
             grep -q "{ path = \"0/0\"; host = \"@parent\"; }" "$2"' "$VMRUN" "$TR" "$H" "$T/h.out"
check "each hint in the file follows a comment naming its rule and evidence" \
    bash -c 'grep -B1 "^    route = " "$0" | grep -q "^    # route-direct: t[0-9a-f]* (0.*) and t[0-9a-f]* (0/0) exchanged" &&
             grep -B1 "host = \"@parent\"" "$0" | grep -q "# placement: t[0-9a-f]* (0/0) on host[12] exchanged"' "$H"

# ---- the next run reads the hints ----
TR2=$T/tr2
check "master1 with LIQUIDVM_HINTS runs as ever" \
    bash -c 'cd "$0" && LIQUIDVM_HINTS="$1" LIQUIDVM_TRACE="$2" timeout 60 ./master1 >"$3" &&
             [ "$(grep -c "I got" "$3")" = 9 ]' "$EX" "$H" "$TR2" "$T/m2.out"
check "its traces validate" validate "$TR2" 10
check "vmrun analyze names the settings the run took from hints" \
    bash -c '"$0" analyze "$1" | grep -q "^settings from hints in this run: route=direct; spawn 0/0 on host host0$"' \
    "$VMRUN" "$TR2"
check "the settings came from the hints: route direct in every task, the slaves on master1's host" \
    meta "$TR2" master1 'o["hints"]["applied"] == ["route=direct", "spawn 0/0 on host host0"] and
        all(x["settings"]["route"] == "direct" and x["hints"]["applied"] == ["route=direct"]
            and x["host"]["index"] == o["host"]["index"] for x in every if x["program"] == "slave1")'
# Tids repeat between runs: two runs' traces in one folder are refused, not read as one.
check "vmrun analyze and trace view refuse a folder with two runs' traces, naming both, exit 1" \
    bash -c 'mkdir -p "$1" && cp "$2"/*.json "$1"/ && cp "$3"/master1-*.json "$1"/x-master1.json &&
        for v in analyze "trace view"; do
            "$0" $v "$1" $([ "$v" = analyze ] || echo --svg "$1.svg") >/dev/null 2>"$4"; rc=$?
            [ $rc = 1 ] && grep -q "$1 holds the traces of 2 runs (master1 started .*, master1 started .*): give each run a folder of its own" "$4" ||
                { echo "$v: exit $rc"; cat "$4"; exit 1; }
        done' "$VMRUN" "$T/mixed" "$TR" "$TR2" "$T/mixed.err"
check "... a shell's LIQUIDVM_TRACE_RUN names the run, and spawned tasks keep it" \
    bash -c 'cd "$0" && LIQUIDVM_TRACE_RUN=exp-7 LIQUIDVM_TRACE="$1" timeout 60 ./master1 >/dev/null &&
        [ "$(grep -ho "\"run\":\"[^\"]*\"" "$1"/*.json | sort -u)" = "\"run\":\"exp-7\"" ] &&
        [ "$(ls "$1"/*.json | wc -l)" = 10 ]' "$EX" "$T/tr_named"

# ---- the program's own option wins; hints beside the program ----
cat >"$T/route.hints" <<'EOF'
pvm = { route = "direct"; fragsize = 16384; };
EOF
TR3=$T/tr3
check "an option the program sets itself (PvmRoute) wins over the hints; fragsize comes from them" \
    bash -c 'LIQUIDVM_HINTS="$1" LIQUIDVM_TRACE="$2" timeout 30 "$0" dontroute 5 100 >"$3" &&
             grep -q "^route 1 fragsize 16384$" "$3"' "$TRACER" "$T/route.hints" "$TR3" "$T/r.out"
check "its trace says which settings came from the hints and which were kept" \
    meta "$TR3" pvm_tracer 'o["hints"]["applied"] == ["route: the program'"'"'s own setting kept",
        "fragsize=16384"] and o["settings"] == {"route": "dontroute", "fragsize": 16384}'
# A copy of the program elsewhere, with hints beside it (linked to our
# libpvm3 by an absolute run path, as a user's program would be).
mkdir -p "$T/bin"
cc -w $SAN -I"$(pwd)/lib/pvm" -o "$T/bin/pvm_tracer" tests/integ/pvm_tracer.c -L"$B/lib" -lpvm3 \
    -Wl,-rpath,"$B/lib" || notok "build pvm_tracer in $T/bin"
cp "$T/route.hints" "$T/bin/pvm_tracer.hints"
check "<program>.hints beside the program is read when LIQUIDVM_HINTS is not set" \
    bash -c 'LIQUIDVM_TRACE="$2" timeout 30 "$0" none 5 100 >"$1" &&
             grep -q "^route 3 fragsize 16384$" "$1"' "$T/bin/pvm_tracer" "$T/beside.out" "$T/tr7"
check "... and the child it spawns (from elsewhere) reads the same file: both traces whole" \
    validate "$T/tr7" 2
check "... as both traces say" meta "$T/tr7" pvm_tracer 'len(every) == 2 and all(x["hints"]["file"] == "'"$T/bin/pvm_tracer.hints"'"
        and x["settings"]["route"] == "direct" for x in every)'

cat >"$T/gone.hints" <<'EOF'
pvm = { tasks = ( { path = "0/0"; host = "gone"; } ); };
EOF
TR5=$T/tr5
check "a placement on a host the VM lacks: the daemons place the child, the trace says so" \
    bash -c 'LIQUIDVM_HINTS="$1" LIQUIDVM_TRACE="$2" timeout 30 "$0" none 5 10 >"$2.out" &&
             grep -q "^rtt_us" "$2.out" &&
             validate "$2" 2 && grep -q "\"applied\":\[\"spawn 0/0 on host gone\",\"spawn 0/0 on host gone started nothing; placed as asked\"\]" "$2"/*.json' \
    "$TRACER" "$T/gone.hints" "$TR5"

# ---- PVM's own trace interface ----
rm -rf "$LIQUIDVM_HOME/trace"
check "pvm_settmask turns tracing on for the task and, through the child mask, its child" \
    bash -c 'timeout 30 "$0" mask 50 1000 >"$1" && grep -q "^self mask A@@@@" "$1" &&
             grep -q "^child mask A@@@@" "$1"' "$TRACER" "$T/mask.out"
check "their traces (in \$LIQUIDVM_HOME/trace) validate: 2 tasks" validate "$LIQUIDVM_HOME/trace" 2
check "both say the trace mask turned tracing on; 101 messages" \
    bash -c 'grep -l "\"traced_because\":\"trace mask\"" "$0"/*.json | wc -l | grep -qx 2 &&
             cat "$0"/*.json | grep -c "\"ph\":\"s\"" | grep -qx 101' "$LIQUIDVM_HOME/trace"
rm -rf "$LIQUIDVM_HOME/trace"
check "spawn flag PvmTaskTrace traces the child alone" \
    bash -c 'timeout 30 "$0" flag 20 10 >/dev/null &&
             for i in $(seq 200); do ls "$1"/*.json >/dev/null 2>&1 && break; sleep 0.05; done &&
             python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$1"/*.json &&
             ls "$1" | grep -c . | grep -qx 1 && grep -q "\"path\":\"0/0\"" "$1"/*.json' \
    "$TRACER" "$LIQUIDVM_HOME/trace"
rm -rf "$LIQUIDVM_HOME/trace"
check "PvmSelfTraceTid traces the task, and through PvmTraceTid its child" \
    bash -c 'timeout 30 "$0" tracer 10 10 >/dev/null' "$TRACER"
check "their traces validate, name the tracer and code, and why each traced" \
    bash -c 'validate "$0" 2 && python3 - "$0" <<'"'PY'"'
import json, sys, glob
o = sorted((json.load(open(f))["otherData"] for f in glob.glob(sys.argv[1] + "/*.json")),
           key=lambda x: x["path"])
assert o[0]["traced_because"] == "PvmSelfTraceTid" and o[0]["tracer"]["tid"] == o[0]["tid"], o
assert o[0]["tracer"]["code"] == 77 and o[1]["path"] == "0/0", o
assert o[1]["traced_because"] == "LIQUIDVM_TRACE", o
PY' "$LIQUIDVM_HOME/trace"
TR4=$T/tr4
check "a program that returns from main without pvm_exit leaves whole traces" \
    bash -c 'LIQUIDVM_TRACE="$1" timeout 30 "$0" noexit 10 10 >/dev/null' "$TRACER" "$TR4"
check "they validate" validate "$TR4" 2

# ---- the console's spawn -@ (PVM's own way to trace a job from it) ----
check "vmctl spawn -@DIR master1 (a relative name): traced into the absolute DIR" \
    bash -c 'cd "$0" && "$1" spawn -@tr7 master1 >"$2" && grep -q "^traced into $0/tr7$" "$2"' \
    "$EX" "$VMCTL" "$T/sp7.out"
check "... master1's trace and its 9 slaves' validate" validate "$EX/tr7" 10
check "vmctl spawn --json -@DIR says where the traces go" \
    bash -c '"$0" spawn --json -@"$1" master1 | python3 -c "import json, sys
r = json.load(sys.stdin); sys.exit(0 if r[\"ok\"] and r[\"trace_dir\"] == sys.argv[1] else 1)" "$1" &&
             validate "$1" 10' "$VMCTL" "$T/tr8"

TR6=$T/tr6
check "group collectives (pvm_groups reduce 3) traced: whole files, their time as waits" \
    bash -c 'LIQUIDVM_TRACE="$1" timeout 60 "$0" reduce 3 >"$1.out" && grep -q "^ok" "$1.out" &&
             for i in $(seq 200); do [ "$(ls "$1" | grep -c "json$")" = 3 ] && break; sleep 0.05; done &&
             python3 - "$1" <<'"'PY'"'
import json, sys, glob
files = glob.glob(sys.argv[1] + "/*.json")
assert len(files) == 3, files
for f in files:
    ev = json.load(open(f))["traceEvents"]
    names = {e["name"] for e in ev if e["ph"] == "X" and e["cat"] == "wait"}
    assert {"pvm_reduce", "pvm_gather", "pvm_scatter"} <= names, (f, names)
PY' "$B/tests/integ/pvm_groups" "$TR6"

# ---- bad input ----
printf 'pvm = {\n  route = "sideways";\n  fragsize = 7;\n  colour = 1;\n};\n' >"$T/bad.hints"
check "a malformed hints file: every error as file:line, no hints used, the program runs" \
    bash -c 'LIQUIDVM_HINTS="$1" timeout 30 "$0" none 3 10 >"$2" 2>"$3" &&
             grep -q "^route 2 fragsize 4080$" "$2" &&
             grep -q "bad.hints:2: route must be" "$3" && grep -q "bad.hints:3: fragsize must be" "$3" &&
             grep -q "bad.hints:4: unknown setting pvm.colour" "$3" && grep -q "no hints used" "$3"' \
    "$TRACER" "$T/bad.hints" "$T/bad.out" "$T/bad.err"
printf 'pvm = { route = "direct"\n' >"$T/syntax.hints"
check "a hints file with a syntax error is named with its line" \
    bash -c 'LIQUIDVM_HINTS="$1" timeout 30 "$0" none 3 10 2>&1 >/dev/null | grep -q "syntax.hints:[12]: "' \
    "$TRACER" "$T/syntax.hints"
check "a directory given as the hints file is refused with a reason" \
    bash -c 'LIQUIDVM_HINTS="$1" timeout 30 "$0" none 3 10 2>&1 >/dev/null | grep -q "not a regular file; no hints used"' \
    "$TRACER" "$T"
touch "$T/afile"
check "an unwritable trace directory: a clear message, the program runs untraced" \
    bash -c 'LIQUIDVM_TRACE="$1/sub" timeout 30 "$0" none 3 10 >"$2" 2>&1 &&
             grep -q "trace directory $1/sub: Not a directory; this task is not traced" "$2" &&
             grep -q "^rtt_us" "$2"' "$TRACER" "$T/afile" "$T/unw.out"
mkdir -p "$T/broken"
cp "$TR4"/*.json "$T/broken/"
f=$(ls "$T/broken"/*.json | head -1)
sed -i '2s/"ts":/"tz":/' "$f"
check "vmrun analyze on a trace whose event lacks ts says which file and event" \
    bash -c '! "$0" analyze "$1" 2>"$2" && grep -q "$3: event 0 lacks a field its phase needs" "$2"' \
    "$VMRUN" "$T/broken" "$T/broken.err" "$f"

echo "1..$_n"
[ "$_failed" = 0 ]
