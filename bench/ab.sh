#!/usr/bin/env bash
# bench/ab.sh - one benchmark of two source trees, interleaved, so that both
# see the same machine: for a change that must not slow anything down.
#
#   bench/ab.sh [--rounds N] [--keys k1,k2] A_TREE B_TREE -- COMMAND [ARGS...]
#
# Each round runs COMMAND once in each tree (A B, then B A the next round,
# so neither always goes first), from the tree's top directory, with its
# own build there.  COMMAND writes one JSON document to the file named by
# the argument {json} (or to stdout if no argument is {json}).  Afterwards,
# for every number in the documents whose key is one of --keys (default
# median_us,time_per_iter_s,updates_per_s), prints A's median over the
# rounds, B's, B/A, and each side's spread (max/min over its rounds) -- the
# noise a ratio must beat to mean anything.  With --json, one JSON object.
# Exit status: 0, 1 when a run failed, 2 on a usage error.
set -u
rounds=3 keys=median_us,time_per_iter_s,updates_per_s json=0
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) rounds=${2:-}; shift 2 ;;
    --keys) keys=${2:-}; shift 2 ;;
    --json) json=1; shift ;;
    --help|-h) sed -n 2,15p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) if [ -z "${A:-}" ]; then A=$1; elif [ -z "${B:-}" ]; then B=$1;
       else echo "bench/ab.sh: unexpected $1 (COMMAND goes after --)" >&2; exit 2; fi; shift ;;
    esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench/ab.sh: --rounds needs a positive number" >&2; exit 2; }
[ -n "${A:-}" ] && [ -n "${B:-}" ] && [ $# -gt 0 ] ||
    { echo "usage: bench/ab.sh [--rounds N] [--keys k,...] A_TREE B_TREE -- COMMAND [ARGS...]" >&2; exit 2; }
for d in "$A" "$B"; do [ -d "$d" ] || { echo "bench/ab.sh: $d is not a directory" >&2; exit 2; }; done
A=$(cd "$A" && pwd) B=$(cd "$B" && pwd)
W=$(mktemp -d /tmp/lvm-ab.XXXXXX)
trap 'rm -rf "$W"' EXIT

run() { # run SIDE TREE ROUND
    local out=$W/$1.$3.json args=() a to_file=0
    for a in "$@"; do :; done
    for a in "${CMD[@]}"; do
        if [ "$a" = "{json}" ]; then args+=("$out"); to_file=1; else args+=("$a"); fi
    done
    echo "   ... round $3/$rounds: $1 ($2)" >&2
    if [ $to_file = 1 ]; then
        (cd "$2" && "${args[@]}") >"$W/$1.$3.log" 2>&1
    else
        (cd "$2" && "${args[@]}") >"$out" 2>"$W/$1.$3.log"
    fi || { echo "bench/ab.sh: $1 failed in round $3:" >&2; tail -20 "$W/$1.$3.log" >&2; exit 1; }
}
CMD=("$@")
for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 1 ]; then run A "$A" "$r"; run B "$B" "$r"; else run B "$B" "$r"; run A "$A" "$r"; fi
done
python3 - "$W" "$rounds" "$keys" "$json" "$A" "$B" <<'PY'
import json, statistics, sys
w, rounds, keys, as_json, A, B = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(","), sys.argv[4] == "1", sys.argv[5], sys.argv[6]
NAMES = ("part", "impl", "route", "method", "kernel", "where", "bytes", "label", "name")

def leaves(doc, path=(), label=()):
    if isinstance(doc, dict):
        here = tuple("%s=%s" % (k, doc[k]) for k in NAMES if k in doc and not isinstance(doc[k], (dict, list)))
        for k, v in doc.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and k in keys:
                yield path + (k,), " ".join(label + here + (k,))
            elif isinstance(v, (dict, list)):
                yield from ((p, l) for p, l in leaves(v, path + (k,), label + here))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from leaves(v, path + (i,), label)

def get(doc, path):
    for p in path:
        doc = doc[p]
    return doc

docs = {s: [json.load(open("%s/%s.%d.json" % (w, s, r))) for r in range(1, rounds + 1)] for s in "AB"}
rows = []
for path, label in leaves(docs["A"][0]):
    try:
        a = [float(get(d, path)) for d in docs["A"]]
        b = [float(get(d, path)) for d in docs["B"]]
    except (KeyError, IndexError, TypeError, ValueError):
        continue
    ma, mb = statistics.median(a), statistics.median(b)
    spread = lambda v: max(v) / min(v) if min(v) > 0 else float("nan")
    rows.append({"what": label, "a": ma, "b": mb, "ratio": mb / ma if ma else float("nan"),
                 "a_spread": spread(a), "b_spread": spread(b)})
if as_json:
    print(json.dumps({"a": A, "b": B, "rounds": rounds, "rows": rows}))
else:
    print("A = %s\nB = %s\n%d rounds each, interleaved; medians; spread = max/min of a side's rounds" % (A, B, rounds))
    print("%-70s %12s %12s %7s %8s %8s" % ("measure", "A", "B", "B/A", "A sprd", "B sprd"))
    for r in rows:
        print("%-70s %12.4g %12.4g %7.3f %8.2f %8.2f" % (r["what"][:70], r["a"], r["b"], r["ratio"], r["a_spread"], r["b_spread"]))
PY
