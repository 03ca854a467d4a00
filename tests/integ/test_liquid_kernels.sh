#!/usr/bin/env bash
# vmrun stencil's Jacobi and red-black kernels written against liquid.h
# (lib/liquid/liq_ukern.c, run by bench/liquid_kernels: the right-hand side
# a constant field, never sent) on a local VM of 3 hosts: their final field
# has the bits of the built-in kernels' (vmrun stencil --output, compared
# with h5dump -b), plainly, with deep halos and two workers a host, and
# with a heavy octant whose quanta move; --input cannot fill a constant
# field.
. "$(dirname "$0")/lib.sh"
K=$(dirname "$VMCTL")/../bench/liquid_kernels
[ -x "$K" ] || skip_all "$K is not built"
command -v h5dump >/dev/null || skip_all "h5dump is not installed (hdf5-tools)"
write_conf
check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"

H=(--hosts host0,host1,host2 --quiet)
# same NAME KERNEL ARGS...: the built-in's field and the liquid.h one's, bit for bit
same() {
    local name=$1 kernel=$2 rb=0; shift 2
    [ "$kernel" = rbgs ] && rb=1
    "$VMRUN" stencil --kernel "$kernel" "${H[@]}" "$@" --output "$T/$name-old.h5" >"$T/$name.out" 2>&1 &&
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
check "the output holds the constant field too (rhs)" bash -c 'h5dump -H "$0" | grep -q "DATASET \"rhs\""' \
    "$T/j1-new.h5"
"$K" "${H[@]}" "${G[@]}" --iters 2 --input "$T/j1-new.h5:rhs" >"$T/in.out" 2>&1
rc=$?
check "--input into the constant field: exit 2 naming it (exit $rc)" \
    bash -c '[ $0 = 2 ] && grep -q "field rhs is constant" "$1"' $rc "$T/in.out"
check "halt" "$VMCTL" halt
