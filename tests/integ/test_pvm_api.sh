#!/usr/bin/env bash
# Contexts, pvm_mcast, pvm_psend/pvm_precv, message handlers, pvm_probe and
# pvm_recvf between PVM programs on a 3-host VM: a worker on every host,
# started from the shell, and one checking program per feature (issue 3).
. "$(dirname "$0")/lib.sh"
P=$(dirname "$VMCTL")/../tests/integ/pvm_api
[ -x "$P" ] || skip_all "pvm_api is not built"
write_conf

check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"

WPIDS=()
for h in 0 1 2; do
    LIQUIDVM_HOST=host$h "$P" worker >"$T/w$h" 2>"$T/w$h.err" &
    WPIDS+=($!)
done
workers_up() { for h in 0 1 2; do grep -q '^t' "$T/w$h" || return 1; done; }
check "a worker enrolls on each host" wait_for 10 workers_up
W="$(head -1 "$T/w0") $(head -1 "$T/w1") $(head -1 "$T/w2")"

# Each check runs on a host of its own choosing; TIDs of all three workers.
api() { local h=$1; shift; LIQUIDVM_HOST=$h timeout 60 "$P" "$@"; }
check "a message in a new context is not received in the base context, and is in its own" \
    api host1 ctx $W
check "pvm_mcast: one copy for each worker named twice, none for the sender" \
    api host2 mcast $W
check "pvm_psend/pvm_precv of 0 to 100000 doubles across hosts; alen in bytes" \
    api host0 pp $W
check "handlers answer while their task waits in pvm_recv; ours count answers in a context" \
    api host1 mhf $W
check "pvm_probe's bufid is pvm_recv's; a pvm_recvf function picks by content" \
    api host2 recvf $W
check "the workers stop when told" api host0 stop $W
wait_all() { for p in "${WPIDS[@]}"; do wait "$p" || return 1; done; }
check "every worker exited 0" wait_all
check "halt" "$VMCTL" halt
check "no vmd process is left" wait_for 5 vmd_count_is 0
