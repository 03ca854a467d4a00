#!/usr/bin/env bash
# bench/liquid_pairs.sh - two builds (or two sets of vmrun options) in issue
# 8's scenario, in interleaved pairs: A, B, A, B, ...  On this 2-CPU
# machine one build's runs differ by as much as 10-20 % (other work, the
# day's drift), so a single run of each says nothing; interleaving puts
# both under the same drift, and the summary says in how many pairs B was
# better, beside the means.
#
#   bench/liquid_pairs.sh [--pairs N] [--a DIR] [--b DIR] [--a-args "ARGS"]
#                         [--b-args "ARGS"] [--json] [--help] [-- LIQUID-ARGS...]
#
#   --pairs N      pairs to run (default 4; about 3.5 min a pair)
#   --a DIR        the build of A, relative to the tree's top (default build)
#   --b DIR        the build of B (default build)
#   --a-args A     more `vmrun stencil` options for A's runs (bench/liquid.sh
#   --b-args A     --vmrun-args), e.g. --b-args "--min-gain 0.1"
#   --json         one JSON object on stdout: every run's figures and the means
#   -- ARGS        passed to every bench/liquid.sh run (default --no-checks)
#
# Each run is a whole bench/liquid.sh (its fixed and balanced runs, its
# single-core rate and its bound); per run it takes the balanced time, its
# ratio to the ideal, the speed-up over the fixed run, the quanta moved,
# the time the moves took, and the epochs until BE was back above the goal
# after each change of quota (and whether that met the issue's goal).  A run
# that fails ends the comparison (exit 1).
# Exit status: 0 done, 1 a run failed, 2 bad usage, 77 namespaces or
# cgroups are missing (as bench/liquid.sh).
set -u
cd "$(dirname "$0")/.." || exit 2
usage() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&"${1:-2}"; }
pairs=4 a=build b=build a_args="" b_args="" json=0
while [ $# -gt 0 ]; do
    case "$1" in
    --pairs) [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "liquid_pairs: --pairs needs a positive integer" >&2; exit 2; }
        pairs=$2; shift 2 ;;
    --a|--b|--a-args|--b-args)
        [ $# -ge 2 ] || { echo "liquid_pairs: $1 needs a value" >&2; exit 2; }
        case "$1" in --a) a=$2 ;; --b) b=$2 ;; --a-args) a_args=$2 ;; --b-args) b_args=$2 ;; esac
        shift 2 ;;
    --json) json=1; shift ;;
    --help|-h) usage 1; exit 0 ;;
    --) shift; break ;;
    *) echo "liquid_pairs: unknown option '$1'" >&2; usage; exit 2 ;;
    esac
done
[ $# -gt 0 ] || set -- --no-checks
for d in "$a" "$b"; do
    [ -x "$d/bin/vmrun" ] || { echo "liquid_pairs: $d/bin/vmrun is not built" >&2; exit 2; }
done
T=$(mktemp -d /tmp/lvm-pairs.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT

for ((i = 1; i <= pairs; i++)); do
    for s in a b; do
        if [ $s = a ]; then dir=$a args=$a_args; else dir=$b args=$b_args; fi
        echo "liquid_pairs: pair $i/$pairs, $s ($dir${args:+, $args})" >&2
        bench/liquid.sh --json --build "$dir" ${args:+--vmrun-args "$args"} "$@" \
            >"$T/$i.$s.json" 2>"$T/$i.$s.err"
        rc=$?
        if [ $rc = 77 ]; then cat "$T/$i.$s.err" >&2; exit 77; fi
        [ $rc = 0 ] || { tail -5 "$T/$i.$s.err" >&2; echo "liquid_pairs: run $s of pair $i failed" >&2; exit 1; }
    done
done

python3 - "$T" "$pairs" "$json" "$a" "$a_args" "$b" "$b_args" <<'PY'
import json, statistics, sys
t, n, js = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
label = {"a": (sys.argv[4], sys.argv[5]), "b": (sys.argv[6], sys.argv[7])}

def fig(r):
    on = r["runs"]["on"]
    return {"time_s": on["time_s"], "time_over_ideal": on["time_over_ideal"],
            "speedup": r["speedup"], "quanta_moved": on["quanta_moved"],
            "move_s": sum(e.get("move_s", 0) for e in on.get("epochs", [])),
            "recovery": [c["epochs_to_be_above"] for c in on["changes"]],
            "be_goal_met": next(g["met"] for g in r["goals"] if g["goal"].startswith("BE "))}

runs = {s: [fig(json.load(open(f"{t}/{i}.{s}.json"))) for i in range(1, n + 1)] for s in "ab"}
keys = [("time_s", "balanced time, s", -1), ("time_over_ideal", "time / ideal", -1),
        ("speedup", "faster than fixed", 1), ("quanta_moved", "quanta moved", -1),
        ("move_s", "moves, s", -1)]
summary = {}
for k, _, better in keys:
    av, bv = [x[k] for x in runs["a"]], [x[k] for x in runs["b"]]
    summary[k] = {"a_mean": statistics.mean(av), "b_mean": statistics.mean(bv),
                  "b_better": sum((y - x) * better > 0 for x, y in zip(av, bv)), "pairs": n}
summary["be_goal_met"] = {s: sum(x["be_goal_met"] for x in runs[s]) for s in "ab"}
summary["be_goal_met"]["runs"] = n
if js:
    json.dump({"a": {"build": label["a"][0], "vmrun_args": label["a"][1], "runs": runs["a"]},
               "b": {"build": label["b"][0], "vmrun_args": label["b"][1], "runs": runs["b"]},
               "summary": summary}, sys.stdout)
    print()
    sys.exit(0)
for s in "ab":
    print(f"{s}: {label[s][0]}" + (f", vmrun {label[s][1]}" if label[s][1] else ""))
print(f"{'pair':>4}  {'A time':>8} {'B time':>8}  {'A /ideal':>8} {'B /ideal':>8}  "
      f"{'A vs fixed':>10} {'B vs fixed':>10}  {'A moved':>7} {'B moved':>7}  "
      f"{'A BE back':>9} {'B BE back':>9}")
rec = lambda x: ",".join("-" if v is None else str(v) for v in x["recovery"])
for i, (x, y) in enumerate(zip(runs["a"], runs["b"]), 1):
    print(f"{i:>4}  {x['time_s']:8.2f} {y['time_s']:8.2f}  {x['time_over_ideal']:8.2f} "
          f"{y['time_over_ideal']:8.2f}  {x['speedup']:10.2f} {y['speedup']:10.2f}  "
          f"{x['quanta_moved']:7d} {y['quanta_moved']:7d}  {rec(x):>9} {rec(y):>9}")
for k, name, _ in keys:
    m = summary[k]
    print(f"{name:18} mean A {m['a_mean']:8.3f}  B {m['b_mean']:8.3f}  B better in {m['b_better']} of {n}")
m = summary["be_goal_met"]
print(f"BE back above the goal within its epochs after every change: A in {m['a']} of {n} runs, "
      f"B in {m['b']} of {n}")
PY
