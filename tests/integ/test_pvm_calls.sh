#!/usr/bin/env bash
# The PVM 3.4 calls pvm3.h declared and libpvm3 lacked: a program calling
# every function pvm3.h declares links against libpvm3.so.3 (the list is
# generated from the header), and on a 2-host VM: pvm_export/pvm_unexport
# through pvm_spawn, PvmNoReset and pvm_getnoresets, the trace masks a
# child inherits, pvm_hostsync on every host (PvmNoHost, and PvmHostFail
# when the host dies during the request), vmctl reset sparing PvmNoReset
# tasks, pvm_start_pvmd (PvmDupHost while
# a VM runs; starting one, with a hostfile, blocking), and PvmNotImpl from
# pvm_tickle and pvm_reg_*.  And where libpvm3 answered otherwise than PVM
# 3.4.6: pvm_notify's PvmNotifyCancel and PvmHostAdd counts (while hosts
# join and leave), pvm_mstat, pvm_pstat, pvm_kill, pvm_trecv, pvm_archcode,
# pvm_spawn's working directory, PvmNoSpawnParent and PvmHostCompl, the
# PVM 3.3 database and the mailbox's locks.
. "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$VMCTL")/.." && pwd)
SRC=$(pwd)
P=$B/tests/integ/pvm_calls
[ -x "$P" ] || skip_all "pvm_calls is not built"
write_conf

# --- Link test: one call of every function pvm3.h declares (bound at
# start, -z now), built as the library was (a sanitizer build's programs
# need the sanitizer's runtime first).
SANFLAGS=
nm -D "$B/lib/libpvm3.so.3" 2>/dev/null | grep -q __asan && SANFLAGS=-fsanitize=address,undefined
names() {
    cc -E -P -I"$SRC/lib/pvm" -DNOTMPNAM "$SRC/lib/pvm/pvm3.h" 2>/dev/null |
        tr '\n' ' ' | tr ';' '\n' |
        sed -n 's/.*[^A-Za-z0-9_]\(pvm[A-Za-z0-9_]*\|Pvm[A-Za-z0-9_]*\) *(.*/\1/p' |
        grep -v '^$' | sort -u
}
link_all() {
    local n
    n=$(names | wc -l)
    [ "$n" -gt 100 ] || { echo "only $n names found in pvm3.h"; return 1; }
    {
        echo '#include <pvm3.h>'
        echo 'typedef void (*fn_t)(void);'
        echo 'fn_t every[] = {'
        names | sed 's/.*/    (fn_t)\&&,/'
        echo '};'
        echo 'int main(void) { return every[0] == 0; }'
    } >"$T/every.c"
    cc -w $SANFLAGS -I"$SRC/lib/pvm" -DNOTMPNAM -o "$T/every" "$T/every.c" -L"$B/lib" -l:libpvm3.so.3 \
        -Wl,-rpath,"$B/lib" -Wl,--no-as-needed -Wl,-z,now 2>"$T/link.err" ||
        { grep -o "undefined reference to \`[a-zA-Z_0-9]*'" "$T/link.err" | sort -u; return 1; }
    echo "$n functions"
    "$T/every"
}
check "a program calling every function pvm3.h declares links against libpvm3.so.3" link_all

check "start a local VM of 2 hosts" "$VMCTL" start --local 2 -c "$T/test.conf"
api() { LIQUIDVM_HOST=${H:-host0} timeout 60 "$P" "$@"; }
check "pvm_export/pvm_unexport edit PVM_EXPORT; pvm_spawn passes what it names" api export
check "PvmNoReset: pvm_getnoresets lists the task and a child until it leaves" api noreset
# vmctl reset spares the tasks that set PvmNoReset, as PVM's console does.
api noreset-idle >"$T/nr.out" 2>&1 &
NRPID=$!
H=host1 api idle >"$T/idle.out" 2>&1 &
IDPID=$!
both_up() { grep -q '^t' "$T/nr.out" && grep -q '^t' "$T/idle.out"; }
spares() {
    wait_for 10 both_up || { cat "$T/nr.out" "$T/idle.out"; return 1; }
    "$VMCTL" reset | tee /dev/stderr | grep -q '^1 task killed' || return 1
    wait_for 10 bash -c "! kill -0 $IDPID 2>/dev/null" || { echo "the plain task lives"; return 1; }
    kill -0 "$NRPID" || { echo "the PvmNoReset task was killed"; return 1; }
    kill "$NRPID"
}
check "vmctl reset kills a plain task and spares a PvmNoReset one" spares
wait $NRPID $IDPID 2>/dev/null
check "pvm_settmask(PvmTaskChild): a spawned child's own mask is it (PVMTMASK)" api tmask
check "pvm_hostsync: every host's clock, delta within a second on one kernel" api hostsync
H=host1 check "pvm_hostsync from host1 too" api hostsync
check "pvm_tickle, pvm_reg_hoster/rm/tasker/tracer: PvmNotImpl, pvm_errno set" api unsupported
check "pvm_notify PvmNotifyCancel: TaskExit (a task here, one on host1) and HostDelete told at once" \
    api notify
check "pvm_mstat/pvm_pstat keep pvm_config's, pvm_tasks' arrays; pvm_kill of a gone task: 0; pvm_trecv of a past time polls; pvm_archcode(SUN4): PvmNotFound" \
    api corners
check "pvm_spawn: where's :DIR is the working directory; PvmNoSpawnParent; PvmHostCompl as PVM's" \
    api spawnflags
check "pvm_insert/lookup/delete: a taken index is PvmDupEntry; another's locked entry PvmDenied (put, waiting read-and-delete)" \
    api database
# PvmHostAdd's counts (replaced by a later call, ended by 0 or a cancel) and
# PvmHostDelete, while host2 and host3 join and host2 leaves.
api hostwatch >"$T/hw.out" 2>&1 &
HWPID=$!
hostwatch() {
    wait_for 10 grep -q '^ready' "$T/hw.out" || { cat "$T/hw.out"; return 1; }
    "$VMCTL" add host2 && wait_for 10 hosts_are 3 || return 1
    "$VMCTL" add host3 && wait_for 10 hosts_are 4 || return 1
    wait_for 10 grep -q '^added' "$T/hw.out" || { cat "$T/hw.out"; return 1; }
    "$VMCTL" delete host2 || return 1
    wait "$HWPID" || { cat "$T/hw.out"; return 1; }
    cat "$T/hw.out"
}
check "pvm_notify PvmHostAdd counts 1, 0 (after -1), 2 (after -1), cancelled; PvmHostDelete" hostwatch
"$VMCTL" delete host3 >/dev/null 2>&1
check "host2 and host3 gone again" wait_for 10 hosts_are 2

# PvmHostFail: host1's daemon stops answering, then dies, during the request.
hostfail() {
    local pid out dtid
    pid=$(vmd_pid_of host1)
    [ -n "$pid" ] || { echo "no host1 daemon"; return 1; }
    dtid=$(printf '0x%x' $((2 << 18)))
    kill -STOP "$pid"
    api hostsync-one "$dtid" >"$T/hf.out" 2>&1 &
    local job=$!
    sleep 0.5
    kill -KILL "$pid"
    kill -CONT "$pid" 2>/dev/null
    wait "$job"
    out=$(cat "$T/hf.out")
    echo "pvm_hostsync: $out"
    [ "$out" = "-22" ]
}
check "pvm_hostsync of a host that dies during the request: PvmHostFail" hostfail
check "then host1 leaves the VM" wait_for 10 hosts_are 1
noh() { [ "$(api hostsync-one 0x80000)" = "-6" ]; }
check "pvm_hostsync of a host no longer in the VM: PvmNoHost" noh

# pvm_start_pvmd.
dup() { [ "$(api start 1)" = "-28" ]; }
check "pvm_start_pvmd while a VM runs: PvmDupHost" dup
check "halt" "$VMCTL" halt
check "no vmd process is left" wait_for 5 vmd_count_is 0
printf '# hosts\n* ep=$HOME\nhost1 sp=1000\n&host2\n\n' >"$T/hostfile"
started() {
    local out
    out=$(LIQUIDVM_HOST= timeout 60 "$P" start 1 -d5 -nhost0 --listen 127.0.0.1 \
        -c "$T/test.conf" "$T/hostfile")
    echo "pvm_start_pvmd: $out"
    [ "$out" = "0" ]
}
# --local's hoststart (the daemon beside vmctl, on loopback), for host1.
printf 'hoststart = "%%v --listen 127.0.0.1";\n' >>"$T/test.conf"
check "pvm_start_pvmd(-nhost0 --listen ... -c conf hostfile, block): 0" started
check "the VM runs, with the hostfile's host1 added (blocking) and &host2 not" hosts_are 2
check "pvm_start_pvmd again: PvmDupHost" dup
check "halt" "$VMCTL" halt
check "no vmd process is left" wait_for 5 vmd_count_is 0
echo "1..$_n"
[ "$_failed" -eq 0 ]
