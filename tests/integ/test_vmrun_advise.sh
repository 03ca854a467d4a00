#!/usr/bin/env bash
# vmrun advise, the offline advisor (seed 001 chapter 7, issue 7): the
# thesis's Fig. 42 ranking, the JSON contract, methods that cannot place a
# job, and a clear message with exit 2 for every bad option.  No VM needed.
. "$(dirname "$0")/lib.sh"

net=(--lambda 2.5ms --tau 1.5us)
fig42=(--grid 64x64 --periodic --speeds 10,10,10,10 "${net[@]}")

# expect_status WANT what command...: the exit status is WANT; output kept in
# $T/adv.out and $T/adv.err (check writes $T/out, so not there).
expect_status() {
    local want=$1 what=$2; shift 2
    "$@" >"$T/adv.out" 2>"$T/adv.err"
    local rc=$?
    if [ "$rc" = "$want" ]; then
        ok "$what"
    else
        notok "$what (exit $rc, want $want)"
        sed 's/^/#   /' "$T/adv.out" "$T/adv.err" | tail -20
    fi
}

# The ranking of the table on stdout as "method rating" lines, best first.
ranking() { awk '$1 ~ /^[0-9]+$/ { print $2, $3 }' "$T/adv.out"; }

# Fig. 42: thermal.c on a 64x64 torus, 4 hosts at 10 Mflops, 10 flops a
# point; the thesis ranks Row 1.00 above Block (1.39 in the thesis; our
# model charges block 4 lambda and 16 frames against row's 2 and 8: 1.44).
expect_status 0 "Fig. 42 (thermal.c, Mflops) ranks" \
    "$VMRUN" advise "${fig42[@]}" --flops 10 --methods row,block --name thermal.c
check "it names the application and the grid" \
    grep -q "Application: thermal.c   Grid: 64 x 64 (periodic)   Processors: 4" "$T/adv.out"
check "row is first at 1.00" test "$(ranking | head -1)" = "row 1.00"
check "block is second at 1.44" test "$(ranking | sed -n 2p)" = "block 1.44"
check "and nothing else is ranked" test "$(ranking | wc -l)" = 2

# The same hosts with speeds in updates/s (the default unit): 10 updates/s
# make compute dominate, yet row still leads and block still costs more.
expect_status 0 "Fig. 42 with speeds in updates/s ranks every method" \
    "$VMRUN" advise "${fig42[@]}" --json
cp "$T/adv.out" "$T/fig42.json"
check "the JSON parses" python3 -m json.tool "$T/fig42.json"
check "the JSON ranking is the issue's: best first, rating ascending, first 1.00" \
    python3 - "$T/fig42.json" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
assert text.startswith('{"ranking":['), text[:40]
doc = json.loads(text)
r = doc["ranking"]
assert len(r) == 10, r
for e in r:
    assert list(e) == ["method", "rating", "predicted_s"], e
ratings = [e["rating"] for e in r]
assert ratings == sorted(ratings), ratings
assert ratings[0] == 1.0, ratings
times = [e["predicted_s"] for e in r]
assert times == sorted(times), times
assert r[0]["method"] == "row", r[0]
block = [e for e in r if e["method"] == "block"][0]
assert block["rating"] > 1.0, block
# 1024 points a host at 10 updates/s: 102.4 s of compute per iteration.
assert abs(r[0]["predicted_s"] - (102.4 + 0.005 + 0.00684)) < 1e-9, r[0]
PY

# Communication only (no speeds): the digest's Fig. 42 parts, 11.84 ms
# for row, 17.536 ms for block.
expect_status 0 "--procs 4 ranks communication only" \
    "$VMRUN" advise --grid 64x64 --periodic --procs 4 "${net[@]}" --methods block,row --json
check "row 11.84 ms at 1.00, block 17.536 ms" python3 - "$T/adv.out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["ranking"]
assert [e["method"] for e in r] == ["row", "block"], r
assert r[0]["rating"] == 1.0 and abs(r[0]["predicted_s"] - 0.01184) < 1e-12, r[0]
assert abs(r[1]["predicted_s"] - 0.017536) < 1e-12, r[1]
assert all(d["compute_s"] == 0 for d in doc["detail"]), doc["detail"]
assert doc["compute"] is False
PY

# A 3D job on quanta, switched network: valid JSON, 7-point stencil.
expect_status 0 "a 3D grid in quanta on a switched network ranks" \
    "$VMRUN" advise --grid 128 --cell 32 --stencil 7 --speeds 2e8,1e8,1e8,5e7 \
    --lambda 50us --tau 8ns --network switched --json
check "its JSON parses and says 7-point, 4x4x4 quanta" python3 - "$T/adv.out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["stencil"] == 7 and doc["grid"] == [4, 4, 4] and doc["cell"] == "32x32x32", doc
assert doc["network"]["kind"] == "switched"
assert doc["ranking"][0]["rating"] == 1.0
PY

# Methods that cannot serve the job are listed as such.
expect_status 0 "5 hosts on 4 rows: the rest still rank" \
    "$VMRUN" advise --grid 4x4 --procs 5 "${net[@]}"
check "the table lists row as n/a with its reason" \
    grep -q "row             n/a   (5 owners but only 4 slabs along y)" "$T/adv.out"
check "and interleaved too" grep -q "interleaved     n/a" "$T/adv.out"
expect_status 0 "the same job as JSON" "$VMRUN" advise --grid 4x4 --procs 5 "${net[@]}" --json
check "JSON lists the methods that cannot place it, with a reason, and ranks none of them" \
    python3 - "$T/adv.out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
un = {e["method"]: e["reason"] for e in doc["unavailable"]}
assert "row" in un and "interleaved" in un and "slabs" in un["row"], un
assert not set(un) & {e["method"] for e in doc["ranking"]}, doc
PY
expect_status 1 "no method can place it: exit 1" \
    "$VMRUN" advise --grid 4x4 --procs 5 "${net[@]}" --methods row,interleaved
check "with a message" grep -q "no method can place this grid on 5 hosts" "$T/adv.err"
expect_status 1 "more hosts than points: exit 1" "$VMRUN" advise --grid 2x2 --procs 5 "${net[@]}"
check "with a message" grep -q "no method can place 4 cells on 5 hosts" "$T/adv.err"

# Every bad option: exit 2 and a message that names it.
bad() {
    local name=$1; shift
    "$VMRUN" advise "$@" >"$T/adv.out" 2>"$T/adv.err"
    local rc=$?
    if [ $rc = 2 ] && grep -q -- "$name" "$T/adv.err" && [ ! -s "$T/adv.out" ]; then
        ok "exit 2 naming $name: $*"
    else
        notok "exit 2 naming $name: $* (exit $rc)"
        sed 's/^/#   /' "$T/adv.err" "$T/adv.out" | head -5
    fi
}
g=(--grid 64x64)
s=(--speeds 10,10)
bad --lambda "${g[@]}" "${s[@]}" --tau 1us --lambda
bad --lambda "${g[@]}" "${s[@]}" --tau 1us
bad --tau "${g[@]}" "${s[@]}" --lambda 1ms
bad --lambda "${g[@]}" "${s[@]}" "${net[@]}" --lambda fast
bad --lambda "${g[@]}" "${s[@]}" "${net[@]}" --lambda -1ms
bad --lambda "${g[@]}" "${s[@]}" "${net[@]}" --lambda nan
bad --lambda "${g[@]}" "${s[@]}" "${net[@]}" --lambda 1e300
bad --tau "${g[@]}" "${s[@]}" "${net[@]}" --tau inf
bad --tau "${g[@]}" "${s[@]}" "${net[@]}" --tau 2s
bad --tau "${g[@]}" "${s[@]}" "${net[@]}" --tau 1.5xs
bad --speeds "${g[@]}" "${net[@]}" --speeds 10,abc
bad --speeds "${g[@]}" "${net[@]}" --speeds 10,-1
bad --speeds "${g[@]}" "${net[@]}" --speeds 10,0
bad --speeds "${g[@]}" "${net[@]}" --speeds 10,,10
bad --speeds "${g[@]}" "${net[@]}" --speeds nan
bad --speeds "${g[@]}" "${net[@]}" --speeds inf,1
bad --speeds "${g[@]}" "${net[@]}" --speeds 1e400
bad --speeds "${g[@]}" "${net[@]}" --speeds 1e300
bad --speeds "${g[@]}" "${net[@]}" --speeds
bad --speeds "${g[@]}" "${net[@]}"
bad --procs "${g[@]}" "${net[@]}" --procs 0
bad --procs "${g[@]}" "${net[@]}" --procs 99999999999999999999
bad --procs "${g[@]}" "${net[@]}" "${s[@]}" --procs 3
bad --grid "${s[@]}" "${net[@]}"
bad --grid "${s[@]}" "${net[@]}" --grid 0
bad --grid "${s[@]}" "${net[@]}" --grid 64x0
bad --grid "${s[@]}" "${net[@]}" --grid 4000000
bad --grid "${s[@]}" "${net[@]}" --grid 1024
bad --grid "${s[@]}" "${net[@]}" --grid 2x2x2x2
bad --grid "${s[@]}" "${net[@]}" --grid -4
bad --grid "${s[@]}" "${net[@]}" --grid 64x
bad --stencil "${g[@]}" "${s[@]}" "${net[@]}" --stencil 7
bad --stencil --grid 64 "${s[@]}" "${net[@]}" --stencil 5
bad --stencil "${g[@]}" "${s[@]}" "${net[@]}" --stencil 9
bad --network "${g[@]}" "${s[@]}" "${net[@]}" --network ring
bad --methods "${g[@]}" "${s[@]}" "${net[@]}" --methods row,foo
bad --methods "${g[@]}" "${s[@]}" "${net[@]}" --methods ""
bad --cell "${g[@]}" "${s[@]}" "${net[@]}" --cell 3
bad --cell "${g[@]}" "${s[@]}" "${net[@]}" --cell 2x2x2
bad --flops "${g[@]}" "${s[@]}" "${net[@]}" --flops -1
bad --work "${g[@]}" --procs 2 "${net[@]}" --work 5
bad --work "${g[@]}" "${s[@]}" "${net[@]}" --work 5 --flops 5
bad --bytes "${g[@]}" "${s[@]}" "${net[@]}" --bytes 0
bad --mtu "${g[@]}" "${s[@]}" "${net[@]}" --mtu 0.5
bad --frame "${g[@]}" "${s[@]}" "${net[@]}" --frame 1e99
bad --seed "${g[@]}" "${s[@]}" "${net[@]}" --seed -1
bad --group-tol "${g[@]}" "${s[@]}" "${net[@]}" --group-tol 1
bad --frobnicate "${g[@]}" "${s[@]}" "${net[@]}" --frobnicate
bad stray "${g[@]}" "${s[@]}" "${net[@]}" stray

expect_status 0 "--help exits 0" "$VMRUN" advise --help
check "and shows the synopsis" \
    grep -q "^usage: vmrun advise --grid G --speeds S1,S2,... --lambda T --tau T" "$T/adv.out"
expect_status 0 "vmrun --help exits 0" "$VMRUN" --help
check "and lists advise" grep -q "^  advise " "$T/adv.out"
[ "$_failed" = 0 ]
