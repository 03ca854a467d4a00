#!/usr/bin/env bash
# Sense (issue 8): every daemon samples its host and vmctl conf --json shows
# each host's CPUs, load, external and VM CPU use, quota, capacity and
# memory; a PVM task gets the same table with lvm_hostload(); a CPU burner
# outside the VM shows as external load and one inside as VM load; a cgroup
# CPU quota on one daemon shows as its quota and caps its capacity, and a
# change of it shows within quota_interval, not at the next sample.
. "$(dirname "$0")/lib.sh"
P=$(dirname "$VMCTL")/../tests/integ/pvm_hostload
[ -x "$P" ] || skip_all "pvm_hostload is not built"
command -v python3 >/dev/null || skip_all "python3 is needed to read vmctl's JSON"
write_conf 3.0 "load_interval = 0.5;"
NCPU=$(nproc)

# f HOST KEY: the field of that host in vmctl conf --json ("None" if null).
f() {
    "$VMCTL" conf --json | python3 -c '
import json, sys
h = [x for x in json.load(sys.stdin)["hosts"] if x["name"] == sys.argv[1]]
print(h[0].get(sys.argv[2]) if h else "nohost")' "$1" "$2"
}
# t EXPR: a Python condition on the JSON's hosts by name (H["host1"]["cpus"]).
t() {
    "$VMCTL" conf --json | python3 -c '
import json, sys
H = {x["name"]: x for x in json.load(sys.stdin)["hosts"]}
sys.exit(0 if eval(sys.argv[1]) else 1)' "$1"
}
BURN=
cleanup_extra() {
    [ -z "$BURN" ] || kill "$BURN" 2>/dev/null
    [ -z "${BURNS:-}" ] || kill $BURNS 2>/dev/null
    if [ -n "${CG:-}" ] && [ -d "$CG" ]; then
        for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do
            echo "$p" >/sys/fs/cgroup/cpu/cgroup.procs 2>/dev/null
        done
        rmdir "$CG" 2>/dev/null
    fi
}

check "start a local VM of 2 hosts" "$VMCTL" start --local 2 -c "$T/test.conf"
check "both hosts report a complete sample" wait_for 10 t \
    'all(H[h]["cpus"] is not None and H[h]["ext_busy"] is not None for h in ("host0", "host1"))'
check "cpus = nproc ($NCPU) on both hosts" t \
    "all(H[h]['cpus'] == $NCPU for h in ('host0', 'host1'))"
check "memory: 0 < available <= total on both hosts" t \
    'all(0 < H[h]["mem_avail"] <= H[h]["mem_total"] for h in ("host0", "host1"))'
check "load1 >= 0, 0 <= ext, vm <= cpus, capacity = cpus - ext (no quota)" t '
all(H[h]["load1"] >= 0 and 0 <= H[h]["ext_busy"] <= H[h]["cpus"]
    and 0 <= H[h]["vm_busy"] <= H[h]["cpus"] and H[h]["quota"] == 0
    and abs(H[h]["capacity"] - max(0, H[h]["cpus"] - H[h]["ext_busy"])) < 0.002
    and 0 < H[h]["load_interval"] < 5 for h in ("host0", "host1"))'
check "the text table shows the load of both hosts" bash -c \
    '"$0" conf | grep -A3 "^ *LOAD  *CPUS" | grep -q "host1  *'"$NCPU"' "' "$VMCTL"

check "a task gets every host's load with lvm_hostload()" bash -c \
    'LIQUIDVM_HOST=host1 "$0" >"$1" && [ "$(grep -c "^host host[01] .*cpus='"$NCPU"' " "$1")" = 2 ]' \
    "$P" "$T/hl"
sed 's/^/#   /' "$T/hl"

# A task keeping one CPU busy is the VM's load, not external load.
LIQUIDVM_HOST=host1 "$P" burn 30 >"$T/burn" 2>&1 &
BURN=$!
check "a busy task on host1 shows as host1's VM load (>= 0.3 CPU)" wait_for 10 t \
    'H["host1"]["vm_busy"] >= 0.3'
echo "# host1 with a busy task: vm_busy $(f host1 vm_busy), ext_busy $(f host1 ext_busy)"
kill "$BURN"; wait "$BURN" 2>/dev/null; BURN=

# Daemons that share a kernel (here: one machine) do not count each
# other's tasks as their owners' load: with a busy task per CPU on host1,
# host0's external load plus host1's VM load stays within the CPUs (each
# busy CPU counted once).  Were host1's tasks external to host0, the sum
# would be twice host1's load, past the bound once that is over half.
NB=$NCPU; [ "$NB" -le 8 ] || NB=8
BURNS=
for i in $(seq "$NB"); do
    LIQUIDVM_HOST=host1 "$P" burn 30 >/dev/null 2>&1 &
    BURNS="$BURNS $!"
done
# The check means something only once host1's tasks hold more than half the
# CPUs; where other work on this machine keeps them below that, it cannot be
# made here, and says so instead of failing.
busy="H['host1']['vm_busy'] >= ($NCPU + 0.3) / 2 + 0.1"
if wait_for 15 t "$busy"; then
    check "$NB busy tasks on host1 are not host0's external load (ext0 + vm1 <= cpus)" wait_for 10 t \
        "$busy and H['host0']['ext_busy'] + H['host1']['vm_busy'] <= $NCPU + 0.3"
else
    echo "# SKIP $NB busy tasks on host1 are not host0's external load: other work on this" \
         "machine left them $(f host1 vm_busy) CPUs, and the check needs $(python3 -c "print(($NCPU + 0.3) / 2 + 0.1)")"
fi
echo "# with $NB busy tasks on host1: host1 vm_busy $(f host1 vm_busy), host0 ext_busy $(f host0 ext_busy)"
kill $BURNS 2>/dev/null; wait $BURNS 2>/dev/null; BURNS=
check "host1's VM load falls once the task is gone" wait_for 10 t 'H["host1"]["vm_busy"] < 0.2'

# A burner outside the VM is external load on host1, and not the VM's.
before=$(f host1 ext_busy)
sh -c 'while :; do :; done' &
BURN=$!
check "a CPU burner outside the VM: host1's external load > 0.5, its VM load < 0.2" \
    wait_for 10 t 'H["host1"]["ext_busy"] > 0.5 and H["host1"]["vm_busy"] < 0.2'
sleep 1.2
during=$(f host1 ext_busy)
echo "# host1 external load: $before before the burner, $during with it"
kill "$BURN"; wait "$BURN" 2>/dev/null; BURN=
# Other users of this machine come and go; the fall is checked only when
# the burner's rise showed above their noise.
if python3 -c "import sys; sys.exit(0 if $during >= $before + 0.3 else 1)"; then
    check "host1's external load falls once the burner is killed" wait_for 15 t \
        "H['host1']['ext_busy'] < $during - 0.25"
else
    echo "# other processes masked the burner's rise ($before -> $during of $NCPU CPUs); not checking the fall"
fi

# cg_v1 WHAT: can this test make cgroups of the v1 cpu controller?  If not,
# it says why WHAT is skipped.
cg_v1() {
    if [ "$(id -u)" != 0 ]; then
        echo "# SKIP $1: needs root"
    elif [ ! -w /sys/fs/cgroup/cpu/cgroup.procs ] || [ ! -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
        echo "# SKIP $1: no writable cgroup v1 cpu controller at /sys/fs/cgroup/cpu"
    else
        return 0
    fi
    return 1
}

# A CPU quota on host1's daemon (cgroup v1 cpu controller).
if cg_v1 "cgroup quota"; then
    CG=/sys/fs/cgroup/cpu/lvm-test-$$
    p1=$(vmd_pid_of host1)
    if mkdir "$CG" && echo 100000 >"$CG/cpu.cfs_period_us" && echo 30000 >"$CG/cpu.cfs_quota_us" &&
        echo "$p1" >"$CG/cgroup.procs"; then
        check "host1's daemon in a cgroup with a 30 % quota: quota 0.3 CPU, capacity <= 0.3" \
            wait_for 10 t 'abs(H["host1"]["quota"] - 0.3) < 0.001 and H["host1"]["capacity"] <= 0.3'
        check "host0 has no quota" t 'H["host0"]["quota"] == 0'
        # A burner in the same cgroup runs into the quota: throttling shows.
        # The quota drops to 5 % for it, which a burner reaches even when
        # the machine's other users leave it little.
        echo 5000 >"$CG/cpu.cfs_quota_us"
        sh -c 'while :; do :; done' &
        BURN=$!
        echo "$BURN" >"$CG/cgroup.procs"
        check "a burner inside host1's cgroup: host1 shows throttling (> 0.2 of periods)" \
            wait_for 10 t 'H["host1"]["throttled"] > 0.2'
        kill "$BURN"; wait "$BURN" 2>/dev/null; BURN=
        echo -1 >"$CG/cpu.cfs_quota_us"
        check "the quota lifted: host1's quota shows none again" wait_for 10 t \
            'H["host1"]["quota"] == 0'
        echo "$p1" >/sys/fs/cgroup/cpu/cgroup.procs
        rmdir "$CG" && CG=
    else
        notok "could not set up the cgroup $CG"
    fi
fi

check "halt" "$VMCTL" halt
check "no vmd process is left" wait_for 5 vmd_count_is 0

# A quota change is seen between samples (quota_interval): a VM whose
# daemons sample every 60 s, started inside a cgroup with a 30 % quota.
# (Its capacity stays unknown here: the CPU time outside the VM needs two
# samples; with both known it follows the quota, as check 12 shows.)
if cg_v1 "quota watch"; then
    CG=/sys/fs/cgroup/cpu/lvm-test-$$
    write_conf 3.0 "load_interval = 60.0;"
    if mkdir "$CG" && echo 100000 >"$CG/cpu.cfs_period_us" && echo 30000 >"$CG/cpu.cfs_quota_us"; then
        check "start a VM of 1 host inside a cgroup with a 30 % quota, sampling every 60 s" \
            sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" start --local 1 -c "$3"' \
            sh "$CG" "$VMCTL" "$T/test.conf"
        check "its first sample shows the quota (0.3 CPU)" wait_for 5 t \
            'abs(H["host0"]["quota"] - 0.3) < 0.001'
        echo 10000 >"$CG/cpu.cfs_quota_us"
        check "the quota cut to 10 %: shown within 5 s, long before the next sample" \
            wait_for 5 t 'abs(H["host0"]["quota"] - 0.1) < 0.001'
        echo -1 >"$CG/cpu.cfs_quota_us"
        check "the quota lifted: shown within 5 s as no quota" wait_for 5 t 'H["host0"]["quota"] == 0'
        check "halt" "$VMCTL" halt
        check "no vmd process is left" wait_for 5 vmd_count_is 0
        for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do
            echo "$p" >/sys/fs/cgroup/cpu/cgroup.procs 2>/dev/null
        done
        rmdir "$CG" && CG=
    else
        notok "could not set up the cgroup $CG"
    fi
fi
