#!/usr/bin/env bash
# Paradise for stencil jobs (issue 27) on a local VM of 3 daemons: a traced
# job's trace validates (every event has the fields its phase needs, flows
# pair up, bytes sent equal bytes received per pair and the report's
# ghost_bytes), `vmrun trace view` draws it, `vmrun analyze` prints its
# characteristics and writes hints, and a second run with --hints shows in
# its report the settings that came from them -- but not those given
# explicitly; a user's program (heat3d) is traced the same way, and
# `vmrun analyze DIR` reads both traces of the test's directory.
. "$(dirname "$0")/lib.sh"
HEAT3D=${HEAT3D:-$(pwd)/build/examples/heat3d}

write_conf 1.0
check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"

# validate TRACE REPORT: the Trace Event fields per phase, flows in pairs,
# bytes per pair against the receivers' ghost_bytes.
validate() {
    python3 - "$1" "$2" <<'PY'
import json, sys
from collections import defaultdict
t = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
need = {"X": ("name", "pid", "tid", "ts", "dur"), "s": ("name", "pid", "tid", "ts", "id"),
        "f": ("name", "pid", "tid", "ts", "id", "bp"), "i": ("name", "pid", "tid", "ts", "s"),
        "M": ("name", "pid", "tid", "args")}
ev = t["traceEvents"]
for e in ev:
    missing = [k for k in need.get(e.get("ph"), ("?",)) if k not in e]
    assert not missing, ("event lacks", missing, e)
starts = {e["id"]: e for e in ev if e["ph"] == "s"}
ends = {e["id"]: e for e in ev if e["ph"] == "f"}
assert starts and set(starts) == set(ends), "flows do not pair up"
assert len(starts) == len([e for e in ev if e["ph"] == "s"]), "flow ids repeat"
sent, got = defaultdict(int), defaultdict(int)
for i, s in starts.items():
    f = ends[i]
    assert s["args"]["bytes"] == f["args"]["bytes"] and s["args"]["tag"] == f["args"]["tag"]
    assert f["ts"] >= s["ts"] - 2 * t["otherData"]["clock"]["residual_us"] - 1, (s, f)
    sent[(s["tid"], f["tid"])] += s["args"]["bytes"]
# Every send and receipt recorded, as X events, matches the flows per pair.
for e in ev:
    if e["ph"] == "X" and e["name"].startswith("wait") and "bytes" in e.get("args", {}):
        got[(e["args"]["peer"], e["tid"])] += e["args"]["bytes"]
assert sent == got, (dict(sent), dict(got))
# Ghosts received per worker, as the job's report has them.
ghost = defaultdict(int)
for s in starts.values():
    if s["args"]["tag"] != 0x4c531:  # moves are not ghosts
        ghost[ends[s["id"]]["tid"]] += s["args"]["bytes"]
for w in r["workers"]:
    assert ghost[w["tid"]] == w["ghost_bytes"], (w["tid"], ghost[w["tid"]], w["ghost_bytes"])
o = t["otherData"]
assert o["dropped"] == 0 and o["unpaired_sends"] == 0 and o["unpaired_receipts"] == 0
# The halo, and auto's depth before its latency term (the latency-hidden rule's).
h = r["halo"]
assert o["job"]["halo"] == h["iterations"] and o["job"]["halo_slack"] == h["slack_iterations"]
assert 1 <= h["slack_iterations"] <= h["iterations"] if h["auto"] else \
    h["slack_iterations"] == h["iterations"], h
assert 0 <= o["clock"]["residual_us"] < 1e6 and len(o["clock"]["hosts"]) == 3
pids = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
comp = [e for e in ev if e["ph"] == "X" and e["name"] == "compute"]
assert len(pids) == 3 and comp and all(e["args"]["quanta"] > 0 for e in comp)
print("# %d events, %d messages, %d compute spans, clocks within %.1f us" %
      (len(ev), len(starts), len(comp), o["clock"]["residual_us"]))
PY
}

check "a traced stencil job (heavy octant, balancing) runs and is bit-identical" \
    "$VMRUN" stencil --quiet --probe-seconds 0.02 --grid 64 --iters 40 --heavy 4 --verify \
    --trace "$T/a.json" --json "$T/a.report.json"
check "... its trace validates: fields per phase, flows paired, bytes per pair, ghost_bytes" \
    validate "$T/a.json" "$T/a.report.json"
check "... the report names the trace and no hints" python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["trace"] == sys.argv[2] and r["hints"] == {"file": None, "settings": []} else 1)' \
    "$T/a.report.json" "$T/a.json"
check "vmrun trace view writes an SVG timeline" "$VMRUN" trace view "$T/a.json" --svg "$T/a.svg"
check "... with a lane per task and the messages" python3 -c 'import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
rects, lines = root.findall(ns + "rect"), root.findall(ns + "line")
sys.exit(0 if len(rects) > 10 and len(lines) > 10 else 1)' "$T/a.svg"
check "vmrun analyze prints the characteristics and writes hints" \
    sh -c '"$0" analyze "$1" --hints "$2" >"$3" && grep -q "^grain: " "$3" &&
           grep -q "^communication: .* shape neighbour" "$3" && grep -q "^load: " "$3" &&
           grep -q "^idle per host: host0" "$3" && grep -q "^rules:" "$3" && test -s "$2"' \
    "$VMRUN" "$T/a.json" "$T/a.hints" "$T/a.analysis"
sed 's/^/#   /' "$T/a.analysis" | grep -E "grain|shape|load:|FIRED|= " | head -12

# The analyser's hints with settings of our own, so that the second run's
# surely change, and a key given explicitly that the hints must not override.
grep -vE '^(halo|min_gain|quanta) ' "$T/a.hints" >"$T/b.hints"
cat >>"$T/b.hints" <<'HINTS'

# test: settings a second run must take or leave
halo = 3;
min_gain = 0.35;
quanta = 6;
HINTS
check "vmrun analyze --json is JSON with rules and hints" python3 -c 'import json, subprocess, sys
r = json.loads(subprocess.check_output([sys.argv[1], "analyze", sys.argv[2], "--json"]))
sys.exit(0 if r["rules"] and "grain" in r and "communication" in r and "load" in r else 1)' \
    "$VMRUN" "$T/a.json"
check "a second run with --hints (and --quanta 4 given) is bit-identical" \
    "$VMRUN" stencil --quiet --probe-seconds 0.02 --grid 64 --iters 40 --heavy 4 --verify \
    --hints "$T/b.hints" --quanta 4 --json "$T/b.report.json"
check "... its report lists the settings from hints, which changed, and not --quanta" \
    python3 -c 'import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
s = b["hints"]["settings"]
print("# from hints:", s, "halo", a["halo"]["iterations"], "->", b["halo"]["iterations"],
      "min_gain", a["balance"]["min_gain"], "->", b["balance"]["min_gain"])
ok = (b["hints"]["file"] == sys.argv[3] and "halo" in s and "min-gain" in s and "quanta" not in s
      and b["halo"]["iterations"] == 3 and not b["halo"]["auto"] and b["balance"]["min_gain"] == 0.35
      and b["job"]["quanta_per_host"] == 4)
sys.exit(0 if ok else 1)' "$T/a.report.json" "$T/b.report.json" "$T/b.hints"

check "a hints file with a key the command does not take exits 2" \
    sh -c 'echo "kernel = \"rbgs\"; bogus = 1;" >"$1"; "$0" stencil --quiet --hints "$1" >"$2" 2>&1;
           test $? = 2 && grep -q "bogus: not an option" "$2"' "$VMRUN" "$T/bad.hints" "$T/bad.out"

# A user's own program is traced through the same master.
check "a traced heat3d runs and is bit-identical" \
    "$HEAT3D" --quiet --probe-seconds 0.02 --grid 40 --iters 30 --verify \
    --trace "$T/h.json" --json "$T/h.report.json"
check "... its trace validates" validate "$T/h.json" "$T/h.report.json"
check "... and vmrun analyze reads it" sh -c '"$0" analyze "$1" | grep -q "^grain: "' \
    "$VMRUN" "$T/h.json"

# A directory: its traces one after the other, the reports beside them skipped.
check "vmrun analyze DIR --json analyses each trace in it and skips the reports" \
    sh -c '"$0" analyze "$1" --json --hints "$1/dir.hints" >"$2" 2>"$3" &&
           python3 -c "import json, sys
r = json.load(open(sys.argv[1]))
names = sorted(x[\"trace\"].rsplit(\"/\", 1)[1] for x in r)
sys.exit(0 if names == [\"a.json\", \"h.json\"] else 1)" "$2" &&
           grep -q "a.report.json: no traceEvents array; skipped" "$3" && test -s "$1/dir.hints"' \
    "$VMRUN" "$T" "$T/dir.out" "$T/dir.err"

check "halt" "$VMCTL" halt
