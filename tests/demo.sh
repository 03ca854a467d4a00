#!/usr/bin/env bash
# The demo behind `make demo`: a local virtual machine of 4 daemons on
# loopback, in its own LIQUIDVM_HOME (build/demo-home), shown and halted.
set -eu
build=${1:-build}
VMCTL=$build/bin/vmctl
export LIQUIDVM_HOME=${LIQUIDVM_HOME:-$(pwd)/$build/demo-home}
"$VMCTL" status >/dev/null 2>&1 && "$VMCTL" halt >/dev/null
echo "== vmctl start --local 4   (LIQUIDVM_HOME=$LIQUIDVM_HOME)"
"$VMCTL" start --local 4
echo "== vmctl conf"
"$VMCTL" conf
echo "== vmctl status"
"$VMCTL" status
echo "== vmrun stencil --grid 128 --iters 60 --kernel rbgs --verify"
"$build/bin/vmrun" stencil --grid 128 --iters 60 --kernel rbgs --verify
echo "== vmctl halt"
"$VMCTL" halt
