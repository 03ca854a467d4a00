#!/usr/bin/env bash
# An update of radius 2 (tests/integ/liquid_wide.c: 13 points, Dirichlet
# faces from a function, Neumann y-low and z-high, periodic x) on a local
# VM of 3 hosts: bit-identical to the one-process reference with deep
# halos, two workers a host, balancing a heavy octant and an until-free
# reduction every 5 iterations, quanta one plane thick, every axis periodic
# with deep halos; --check-reach passes it, and finds the read 3 points
# along x that --lie 1 adds; a 2D grid under its z reach of 2 and
# red-black on a box are refused before the job.
. "$(dirname "$0")/lib.sh"
W=$(dirname "$VMCTL")/../tests/integ/liquid_wide
[ -x "$W" ] || skip_all "$W is not built"
write_conf
check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"

H=(--hosts host0,host1,host2 --quiet --probe-seconds 0.01)
same() { "$W" "${H[@]}" "$@" --verify >"$T/w.out" 2>&1; local rc=$?
         grep -q "bit-identical to the single-process reference" "$T/w.out" && [ $rc = 0 ] ||
         { cat "$T/w.out"; return 1; }; }
check "radius 2, halo auto: bit-identical" same --iters 30
check "... --halo 3 (6 points deep), 2 workers a host" same --iters 30 --halo 3 --tasks-per-host 2
check "... --heavy 4 with balancing every 5 iterations" same --iters 40 --heavy 4 --epoch 5
check "... a 2-point grid along z still runs (halos across several quanta)" \
    same --iters 12 --grid 24x20x6 --halo 2
check "... quanta one plane thick (the speed probe's box was taken for 2D and crashed)" \
    same --iters 10 --grid 8x8x8 --quanta 64
check "... every axis periodic (the reference updated wrapped copies past its ghosts)" \
    same --iters 20 --periodic 1
check "... every axis periodic, halo 6, scattered quanta (the probe wrapped its small box)" \
    same --iters 20 --periodic 1 --halo 6 --decomp scatter
check "... walls varying along periodic x, deep halos, scattered quanta (walls were taken unwrapped)" \
    same --iters 30 --xwall 1 --halo 4 --decomp scatter
check "liquid_result holds the field after --verify (it did only with liquid_keep), not without" \
    bash -c '"$0" "${@:1}" --iters 4 --show 1 --verify | grep -q "^liquid_result: kept$" &&
             "$0" "${@:1}" --iters 4 --show 1 | grep -q "^liquid_result: none$"' "$W" "${H[@]}"
check "a 2D grid under a z reach of 2: exit 2, saying so (a worker crashed)" bash -c '
    "$0" "${@:2}" --grid 16x16x1 --iters 4 >"$1" 2>&1; [ $? = 2 ] &&
    grep -q "the grid is 2D (NZ 1) but the update reaches 2 planes in z" "$1"' "$W" "$T/2d.out" "${H[@]}"
check "red-black on a box: exit 2, naming the rule" bash -c '
    "$0" "${@:2}" --rbbox 1 --iters 4 >"$1" 2>&1; [ $? = 2 ] &&
    grep -q "a red-black update reads only the other colour, a star of radius 1" "$1"' \
    "$W" "$T/rb.out" "${H[@]}"
Q=(--hosts host0,host1,host2 --probe-seconds 0.01)
check "--check-reach passes it" bash -c '"$0" "$@" --iters 4 --check-reach 2>&1 |
    grep -q "reads nothing beyond its reach"' "$W" "${Q[@]}"
check "--check-reach finds --lie 1's read of u at (3,0,0): exit 1" bash -c '
    out=$0
    "$@" --iters 4 --check-reach --lie 1 >"$out" 2>&1; rc=$?
    grep -q "reads u at offset (3,0,0), beyond its declared reach (radius 2,2,2, star)" "$out" &&
        [ $rc = 1 ] || { cat "$out"; exit 1; }' "$T/lie.out" "$W" "${Q[@]}"
check "halt" "$VMCTL" halt
