#!/usr/bin/env bash
# vmrun stencil's Jacobi and red-black kernels, written against liquid.h
# (lib/liquid/liq_ukern.c: the right-hand side a constant field, never
# sent), on a local VM of 3 hosts: vmrun stencil runs them, and its
# --verify holds their field to the built-in kernels' (kernels/, one
# process); bench/liquid_kernels, a program of its own on the same
# description, gives the same bits (--output, compared with h5dump -b) and
# holds them to its own one-process run.  Plainly, with deep halos and two
# workers a host, and with a heavy octant whose quanta move; --input
# cannot fill a constant field.
. "$(dirname "$0")/lib.sh"
K=$(dirname "$VMCTL")/../bench/liquid_kernels
[ -x "$K" ] || skip_all "$K is not built"
command -v h5dump >/dev/null || skip_all "h5dump is not installed (hdf5-tools)"
JOB=
cleanup_extra() { [ -z "$JOB" ] || kill -9 "$JOB" 2>/dev/null; }
write_conf
check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"

H=(--hosts host0,host1,host2 --quiet)
# same NAME KERNEL ARGS...: vmrun stencil's field (verified against the
# built-in kernels) and the program's, bit for bit
same() {
    local name=$1 kernel=$2 rb=0; shift 2
    [ "$kernel" = rbgs ] && rb=1
    "$VMRUN" stencil --kernel "$kernel" "${H[@]}" "$@" --verify --output "$T/$name-old.h5" \
        --json "$T/$name-old.json" >"$T/$name.out" 2>&1 &&
        grep -q "bit-identical to the single-process reference" "$T/$name.out" &&
        "$K" --redblack $rb "${H[@]}" "$@" --verify --output "$T/$name-new.h5" \
            --json "$T/$name.json" >>"$T/$name.out" 2>&1 &&
        h5dump -d /u -b LE -o "$T/$name-old.bin" "$T/$name-old.h5" >/dev/null &&
        h5dump -d /u -b LE -o "$T/$name-new.bin" "$T/$name-new.h5" >/dev/null &&
        [ -s "$T/$name-old.bin" ] &&
        cmp "$T/$name-old.bin" "$T/$name-new.bin" || { cat "$T/$name.out"; return 1; }
}
G=(--grid 36x28x20 --probe-seconds 0.01)
check "Jacobi through liquid.h: the built-in kernel's bits" same j1 jacobi --iters 25 "${G[@]}"
check "red-black through liquid.h: the built-in kernel's bits" same r1 rbgs --iters 25 "${G[@]}"
check "Jacobi, --halo 3 and two workers a host: the same bits" same j2 jacobi --iters 30 --halo 3 \
    --tasks-per-host 2 "${G[@]}"
check "red-black 48^3, --heavy 20 balanced every 10 iterations: the same bits" same r2 rbgs \
    --grid 48 --iters 60 --heavy 20 --epoch 10 --quanta 8 --probe-seconds 0.05
check "... and quanta moved" python3 -c '
import json, sys
sys.exit(not json.load(open(sys.argv[1]))["balance"]["quanta_moved"] > 0)' "$T/r2.json"
# vmrun stencil's workers run the description: vmrun spawns itself as
# `vmrun worker kernel=K seed=S` (with no arguments, the built-in kernels).
"$VMRUN" stencil --kernel rbgs --seed 7 "${H[@]}" --grid 64 --iters 100000 \
    --probe-seconds 0.01 >"$T/long.out" 2>&1 &
JOB=$!
worker_args() {
    local p
    for p in $("$VMCTL" ps -a | awk '$3 != "-" && NR > 1 { print $4 }'); do
        tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null
        echo
    done | grep -q "vmrun worker kernel=rbgs seed=7"
}
check "vmrun stencil's workers are spawned as 'vmrun worker kernel=rbgs seed=7'" wait_for 30 worker_args
kill "$JOB" 2>/dev/null
wait "$JOB" 2>/dev/null
JOB=
"$VMRUN" worker kernel=sor seed=1 >"$T/w.out" 2>&1
rc=$?
check "vmrun worker with an unknown kernel exits 2 naming it (exit $rc)" \
    bash -c '[ $0 = 2 ] && grep -q "kernel=sor" "$1"' $rc "$T/w.out"
"$VMRUN" worker kernel=jacobi >"$T/w.out" 2>&1
rc=$?
check "vmrun worker without a seed exits 2 (exit $rc)" [ $rc = 2 ]
check "the output holds the constant field too (rhs)" bash -c 'h5dump -H "$0" | grep -q "DATASET \"rhs\""' \
    "$T/j1-new.h5"
"$K" "${H[@]}" "${G[@]}" --iters 2 --input "$T/j1-new.h5:rhs" >"$T/in.out" 2>&1
rc=$?
check "--input into the constant field: exit 2 naming it (exit $rc)" \
    bash -c '[ $0 = 2 ] && grep -q "field rhs is constant" "$1"' $rc "$T/in.out"
check "halt" "$VMCTL" halt
