#!/usr/bin/env bash
# bench/ring.sh - the ring benchmark alone (vmrun bench: seed 001's ring of
# 8 B .. 1 MB messages, fitted to lambda and tau) on a fresh local VM of
# HOSTS daemons, in its own LIQUIDVM_HOME, halted afterwards.  Prints vmrun
# bench's lines, or with --json FILE writes its report there; for
# bench/ab.sh, which runs it in two trees:
#
#   bench/ab.sh --rounds 5 --keys lambda_s,tau_s_per_byte,median_s,r2 \
#       OLD_TREE NEW_TREE -- bench/ring.sh --json {json}
#
#   bench/ring.sh [--hosts N] [--build DIR] [--json FILE]
#
# Exit status: 0 measured, 1 the VM or the benchmark failed, 2 bad usage.
set -u
build=build hosts=3 json=
while [ $# -gt 0 ]; do
    case $1 in
    --hosts) hosts=${2:-}; shift ;;
    --build) build=${2:-}; shift ;;
    --json) json=${2:-}; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/ring.sh: unknown option $1 (--help)" >&2; exit 2 ;;
    esac
    shift
done
case $hosts in ''|*[!0-9]*|0|1) echo "bench/ring.sh: --hosts wants 2 or more" >&2; exit 2 ;; esac
[ -x "$build/bin/vmrun" ] || { echo "bench/ring.sh: no $build/bin/vmrun (make first)" >&2; exit 1; }
export LIQUIDVM_HOME
LIQUIDVM_HOME=$(mktemp -d /tmp/lvm-ring.XXXXXX) || exit 1
trap '"$build/bin/vmctl" halt >/dev/null 2>&1; rm -rf "$LIQUIDVM_HOME"' EXIT
"$build/bin/vmctl" start --local "$hosts" >"$LIQUIDVM_HOME/start.out" 2>&1 ||
    { cat "$LIQUIDVM_HOME/start.out" >&2; exit 1; }
if [ -n "$json" ]; then
    "$build/bin/vmrun" bench --quiet --json "$json" >/dev/null
else
    "$build/bin/vmrun" bench 2>&1 | grep -A1 "^ring of"
fi
