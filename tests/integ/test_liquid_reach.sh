#!/usr/bin/env bash
# An update of radius 2 (tests/integ/liquid_wide.c: 13 points, Dirichlet
# faces from a function, Neumann y-low and z-high, periodic x) on a local
# VM of 3 hosts: bit-identical to the one-process reference with deep
# halos, two workers a host, balancing a heavy octant and an until-free
# reduction every 5 iterations; --check-reach passes it, and finds the
# read 3 points along x that --lie 1 adds.
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
Q=(--hosts host0,host1,host2 --probe-seconds 0.01)
check "--check-reach passes it" bash -c '"$0" "$@" --iters 4 --check-reach 2>&1 |
    grep -q "reads nothing beyond its reach"' "$W" "${Q[@]}"
check "--check-reach finds --lie 1's read of u at (3,0,0): exit 1" bash -c '
    out=$0
    "$@" --iters 4 --check-reach --lie 1 >"$out" 2>&1; rc=$?
    grep -q "reads u at offset (3,0,0), beyond its declared reach (radius 2,2,2, star)" "$out" &&
        [ $rc = 1 ] || { cat "$out"; exit 1; }' "$T/lie.out" "$W" "${Q[@]}"
check "halt" "$VMCTL" halt
