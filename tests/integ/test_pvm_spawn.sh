#!/usr/bin/env bash
# pvm_spawn and friends on a 3-host VM, with PVM programs: Debian's
# pvm-examples built from source against our pvm3.h, and the same examples'
# binaries as Debian built them against real PVM 3.4.6, run on our
# libpvm3.so.3 unchanged (issue 3).
. "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$VMCTL")/.." && pwd)
SP=$B/tests/integ/pvm_spawner
[ -x "$SP" ] || skip_all "pvm_spawner is not built"

# The examples, from source, against our header and library.
EX=$T/ex
mkdir -p "$EX/src"
TARBALL=/usr/share/doc/pvm-examples/examples.tar.gz
have_src=0
# A sanitizer build's libpvm3 needs its programs built with the same runtime.
SANFLAGS= SANCFLAGS=
if nm -D "$B/lib/libpvm3.so.3" 2>/dev/null | grep -q __asan; then
    # The examples are not ours to fix: their own leaks are not reported.
    printf 'const char *__asan_default_options(void);\n%s\n' \
        'const char *__asan_default_options(void) { return "detect_leaks=0"; }' >"$T/noleak.c"
    SANCFLAGS="-fsanitize=address,undefined"
    SANFLAGS="$SANCFLAGS $T/noleak.c"
    # stdbuf preloads its library ahead of ASan's runtime.
    export ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"
fi
if [ -f "$TARBALL" ] && command -v cc >/dev/null; then
    tar -xzf "$TARBALL" -C "$EX/src" && have_src=1
    # Linked as the examples' Makefile.aimk links them (taskf.c where it says).
    cc -w $SANCFLAGS -I"$(pwd)/lib/pvm" -c -o "$EX/taskf.o" "$EX/src/examples/taskf.c"
    for p in hello hello_other spmd slave1 master1 timing timing_slave inherita inheritb \
             inherit1 inherit2 inherit3 mbox task0 task1 task_end rme lmbi gmbi mhf_server mhf_tickle; do
        extra=
        case $p in task0|task1|task_end|rme|lmbi|gmbi) extra=$EX/taskf.o ;; esac
        cc -w $SANFLAGS -I"$(pwd)/lib/pvm" -o "$EX/$p" "$EX/src/examples/$p.c" $extra -L"$B/lib" \
            -lpvm3 -Wl,-rpath,"$B/lib" 2>"$T/cc.$p" || rm -f "$EX/$p"
    done
fi
write_conf 2.0 "spawn_path = [ \"$EX\", \"$B/tests/integ\" ];"
# LVMTEST_SHADOW is in the daemons' environment too: an exported one must win.
check "start a local VM of 3 hosts" env LVMTEST_SHADOW=daemon "$VMCTL" start --local 3 -c "$T/test.conf"
check "a variable the spawner exports (PVM_EXPORT) is the task's, not the daemon's of that name" \
    env LVMTEST_SHADOW=spawner PVM_EXPORT=LVMTEST_SHADOW bash -c '"$0" spawn -o /usr/bin/env >"$1" 2>&1 &&
        grep -q "LVMTEST_SHADOW=spawner$" "$1" && ! grep -q "LVMTEST_SHADOW=daemon" "$1"' \
    "$VMCTL" "$T/env.out"

if [ $have_src = 1 ] && [ -x "$EX/hello" ]; then
    check "hello (pvm-examples, built on our pvm3.h) spawns hello_other and gets its greeting" \
        bash -c 'cd "$0" && timeout 20 ./hello | grep -q "^from t[0-9a-f]*: hello, world from"' "$EX"
else
    echo "# SKIP hello: pvm-examples sources are not installed (apt-get install pvm-examples)"
fi
if [ -x "$EX/spmd" ]; then
    check "spmd x4 over 3 hosts: siblings, a token ring, output caught by the parent" \
        bash -c 'timeout 30 "$0" -n 4 spmd >"$1"; rc=$?; grep -q "token ring done" "$1" &&
                 grep -q "Pass a token through the   4 tid ring" "$1" && [ $rc = 0 ] ||
                 { echo "status $rc"; cat "$1"; false; }' "$SP" "$T/spmd.out"
    check "the 4 spmd tasks were spread over all 3 hosts" bash -c \
        's=$(grep "^spawned" "$0"); echo "$s" | grep -q " t4" && echo "$s" | grep -q " t8" && echo "$s" | grep -q " tc"' "$T/spmd.out"
fi
if [ -x "$EX/master1" ] && [ -x "$EX/slave1" ]; then
    check "master1 spawns 9 slave1 (pvm_config, pvm_mcast) and every result is as expected" \
        bash -c 'cd "$0" && timeout 30 ./master1 >"$1" && grep -q "SUCCESSFUL" "$1" &&
                 [ "$(grep -c "I got" "$1")" = 9 ] &&
                 sed -n "s/I got \([0-9.]*\) from.*expecting \([0-9.]*\))/\1 \2/p" "$1" |
                 awk "\$1 != \$2 { bad = 1 } END { exit bad }"' "$EX" "$T/m1.out"
fi
if [ -x "$EX/timing" ] && [ -x "$EX/timing_slave" ]; then
    check "timing (round trips and bandwidth with timing_slave, pvm_setopt) completes" \
        bash -c 'cd "$0" && timeout 60 ./timing | grep -q "^done"' "$EX"
fi
if [ -x "$EX/inherita" ] && [ -x "$EX/inherit1" ] && [ -x "$EX/inherit3" ]; then
    for kid in inherit1 inherit3; do
        check "inherita $kid: the child inherits the new context, the parent gets it back" \
            bash -c 'cd "$0" && timeout 30 ./inherita "$1" >"$2" &&
                     grep -q "END - sent from $1 t[0-9a-f]* on machine <[^>]*> with context [1-9]" "$2" &&
                     grep -q "with original context 0" "$2"' "$EX" "$kid" "$T/$kid.out"
    done
fi
if [ -x "$EX/task0" ] && [ -x "$EX/task1" ] && [ -x "$EX/task_end" ]; then
    rm -f "$T/task0.out"
    (cd "$EX" && timeout 30 ./task0 svc d >"$T/task0.out" 2>&1 &)
    # task0's stdout is a file (buffered): task1 is retried until the service is up.
    check "task1 finds task0 through pvm_recvinfo and is served in the service's context" \
        wait_for 10 bash -c 'cd "$0" && timeout 20 ./task1 svc 0 d | grep -q "welcome to my server - you are service request number 1"' "$EX"
    check "task_end stops task0 after 2 requests" \
        bash -c 'cd "$0" && timeout 20 ./task_end svc 0 >/dev/null' "$EX"
    check "task0 reports both requests and leaves" \
        wait_for 10 grep -q "handled 2 service requests" "$T/task0.out"
    check "rme then finds no service" \
        bash -c 'cd "$0" && timeout 20 ./rme svc 0 | grep -q "no service running for <svc>"' "$EX"
fi
if [ -x "$EX/mbox" ]; then
    check "mbox: a message put in the mailbox comes back intact" \
        bash -c 'cd "$0" && timeout 30 ./mbox >"$1" 2>&1; grep -q "Retrieved Message is a Match" "$1" &&
                 ! grep -q "Mismatch\|libpvm \[" "$1"' "$EX" "$T/mbox.out"
fi
if [ -x "$EX/lmbi" ] && [ -x "$EX/gmbi" ]; then
    check "lmbi puts 2 persistent entries in the mailbox and leaves" \
        bash -c 'cd "$0" && timeout 20 ./lmbi 2 p e | grep -c "just inserted entry <t[0-9a-f]*lmbi[01]> at index 0" | grep -qx 2' "$EX"
    check "gmbi lists both, owned by t0 now that lmbi is gone, flags PvmMboxPersistent" \
        bash -c 'cd "$0" && timeout 20 ./gmbi >"$1"; grep -q "2 mbox entries returned" "$1" &&
                 [ "$(grep -c "owner_tid <t0>	flags <1> = <PvmMboxPersistent >" "$1")" = 2 ]' "$EX" "$T/gmbi.out"
    check "gmbi with a pattern that matches nothing lists nothing" \
        bash -c 'cd "$0" && timeout 20 ./gmbi nosuch | grep -q "0 mbox entries returned"' "$EX"
fi
if [ -x "$EX/mhf_server" ] && [ -x "$EX/mhf_tickle" ] && command -v stdbuf >/dev/null; then
    # mhf_tickle is interactive: its menu is typed through a fifo, each
    # step once the server has shown the previous one.
    (cd "$EX" && exec timeout 60 stdbuf -oL ./mhf_server >"$T/srv.out" 2>&1) &
    srv=$!
    check "mhf_server registers in the mailbox" wait_for 10 grep -q "startup" "$T/srv.out"
    mkfifo "$T/tickle.in"
    # A tickle that died must fail the checks below, not kill this script.
    trap '' PIPE
    (cd "$EX" && LIQUIDVM_HOST=host1 exec timeout 60 stdbuf -oL ./mhf_tickle <"$T/tickle.in" >"$T/tickle.out" 2>&1) &
    tick=$!
    exec 7>"$T/tickle.in"
    printf '1\n11\n0\n1\n' >&7
    check "mhf_tickle (host1) has string_catcher1 loaded for tag 11, context 0: it gets id 9" \
        wait_for 10 grep -q "loaded SC1" "$T/srv.out"
    printf '4\n11\n0\n1\nhi there\n' >&7
    check "a message to it is caught by the handler, not by pvm_recv" \
        wait_for 10 grep -q "HIT:  ping target 1 - SC1   strings match <hi there>" "$T/srv.out"
    printf '2\n9\n4\n11\n0\n1\nagain\n' >&7
    check "after pvm_delmhf(9) nothing catches it" wait_for 10 grep -q "NO HIT" "$T/srv.out"
    printf '9\n' >&7
    exec 7>&-
    check "SEAT: mhf_server and mhf_tickle leave" \
        wait_for 20 bash -c '! kill -0 $0 2>/dev/null && ! kill -0 $1 2>/dev/null' "$srv" "$tick"
fi
check "PvmTaskHost places every task on the named host" \
    bash -c 'timeout 30 "$0" -n 2 -h host2 pvm_pingpong >"$1"; grep -q "^spawned 2: tc[0-9a-f]* tc[0-9a-f]*$" "$1"' "$SP" "$T/host.out"
check "a missing executable: 0 started, PvmNoFile (-7) in every slot" \
    bash -c 'timeout 20 "$0" -n 2 nosuchprogram | grep -q "^spawned 0: err7 err7$"' "$SP"
check "an unknown host: PvmNoHost (-6)" \
    bash -c 'timeout 20 "$0" -n 1 -h nohost pvm_pingpong | grep -q "^spawned 0: err6$"' "$SP"
check "pvm_kill ends spawned tasks that never enroll, and their exit is notified" \
    bash -c 'timeout 20 "$0" -x -n 3 /bin/sleep 60 | grep -q "all exited"' "$SP"
check "no sleep process of the killed tasks is left" bash -c '! pgrep -f "^/bin/sleep 60$"'

# Binary compatibility: Debian's binaries, linked against real libpvm3.so.3.
if [ -n "$SANFLAGS" ]; then
    echo "# SKIP binary compatibility: this libpvm3 is a sanitizer build (run in the plain build)"
elif [ -x /usr/bin/hello.pvm ] && [ -x /usr/bin/hello_other ]; then
    write_conf 2.0 'spawn_path = [ "/usr/bin" ];'
    check "halt, then a VM whose spawn_path is /usr/bin" bash -c \
        '"$0" halt && "$0" start --local 2 -c "$1"' "$VMCTL" "$T/test.conf"
    check "Debian's hello.pvm (built against PVM 3.4.6) runs unchanged on our libpvm3.so.3" \
        bash -c 'cd /tmp && PVM_EXPORT=LD_LIBRARY_PATH LD_LIBRARY_PATH="$0/lib" timeout 20 /usr/bin/hello.pvm |
                 grep -q "^from t[0-9a-f]*: hello, world from"' "$B"
else
    echo "# SKIP binary compatibility: pvm-examples binaries are not installed"
fi
check "halt" "$VMCTL" halt
check "no vmd process is left" wait_for 5 vmd_count_is 0
