#!/usr/bin/env bash
# Side by side: the same pvm-examples programs, built once against real PVM
# 3.4.6 (/usr/include/pvm3.h, -lpvm3) and once against our pvm3.h and
# libpvm3, run through the same scripted scenarios on real PVM and on
# LiquidVM, both on the same two network-namespace hosts (bench/realpvm.sh:
# each host has its own address and hostname).  The outputs, with task ids,
# timings and PVM's internal handler-table dump normalised
# (pvm_normalise.pl), must be identical (issue 3: "behave as under real PVM
# 3.4.6").  Scenarios: hello + hello_other, timing + timing_slave, lmbi +
# gmbi, mhf_server + mhf_tickle (its menu driven through stdin).
# Needs root and ip netns; runs in the plain build only (once is enough, and
# real PVM's lock is shared with other users of the machine).
. "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$VMCTL")/.." && pwd)
SRC=$(pwd)
R=$SRC/bench/realpvm.sh
NORM=$SRC/tests/integ/pvm_normalise.pl
TARBALL=/usr/share/doc/pvm-examples/examples.tar.gz
export PVM_ROOT=${PVM_ROOT:-/usr/lib/pvm3} PVM_ALLOW_ROOT=1

nm -D "$B/lib/libpvm3.so.3" 2>/dev/null | grep -q __asan &&
    skip_all "sanitizer build (the comparison runs in the plain build)"
[ -f "$TARBALL" ] || skip_all "pvm-examples is not installed"
[ -f /usr/include/pvm3.h ] && [ -x "$PVM_ROOT/lib/pvmd" ] || skip_all "real PVM 3.4.6 (pvm, pvm-dev) is not installed"
command -v perl >/dev/null || skip_all "needs perl"
command -v stdbuf >/dev/null || skip_all "needs stdbuf (coreutils)"

# Build every program twice.
EX=$T/ex
mkdir -p "$EX/src" "$EX/real" "$EX/ours"
tar -xzf "$TARBALL" -C "$EX/src" || skip_all "cannot extract $TARBALL"
S=$EX/src/examples
PROGS="hello hello_other timing timing_slave lmbi gmbi mhf_server mhf_tickle"
# build DIR CFLAGS...: linked as Makefile.aimk links them (taskf.o for lmbi, gmbi).
build() {
    local dir=$1 p extra; shift
    cc -w "$@" -c -o "$dir/taskf.o" "$S/taskf.c" || return 1
    for p in $PROGS; do
        extra=
        case $p in lmbi|gmbi) extra=$dir/taskf.o ;; esac
        cc -w "$@" -o "$dir/$p" "$S/$p.c" $extra -lpvm3 || return 1
    done
}
check "the examples build against real PVM 3.4.6 (/usr/include/pvm3.h, -lpvm3)" build "$EX/real"
check "the examples build against our pvm3.h and libpvm3" \
    build "$EX/ours" -I"$SRC/lib/pvm" -L"$B/lib" -Wl,-rpath,"$B/lib"

export REALPVM_PREFIX=lvc$(( $$ % 10000 ))
cleanup_extra() { "$R" down; }
"$R" up 2 >"$T/up.out" 2>&1
case $? in
0) ;;
77) skip_all "$(cat "$T/up.out")" ;;
*) notok "two namespace hosts"; cat "$T/up.out"; exit 1 ;;
esac
H1=${REALPVM_PREFIX}1 H2=${REALPVM_PREFIX}2

# on HOST CMD...: run CMD on HOST of the VM being tested.
on() {
    local h=$1; shift
    LIQUIDVM_HOST=$h "$R" exec "$h" "$@"
}

# feed LINE...: type lines into mhf_tickle's menu.
feed() { printf '%s\n' "$@" >&7; }
# seen FILE N PATTERN: wait until PATTERN occurs N times in FILE.
seen() { wait_for 20 bash -c '[ "$(grep -c -- "$2" "$0")" -ge "$1" ]' "$1" "$2" "$3"; }

# scenarios OUT: run every scenario with the programs of the current
# directory, writing OUT/<scenario>.out; each step is checked as it goes.
scenarios() {
    local out=$1 vm=$2 pid
    mkdir -p "$out"

    { echo "== hello from $H1"; on "$H1" ./hello
      echo "== hello from $H1 again"; on "$H1" ./hello
      echo "== hello from $H2"; on "$H2" ./hello; } >"$out/hello.out" 2>&1
    check "$vm: hello x3 ran" test "$(grep -c "hello, world from" "$out/hello.out")" = 3

    on "$H1" timeout 120 ./timing >"$out/timing.out" 2>&1
    check "$vm: timing ran to the end" grep -q "^done" "$out/timing.out"

    {
        echo "== lmbi 2 p e on $H1"; on "$H1" timeout 20 ./lmbi 2 p e
        echo "== lmbi 2 mo e on $H2"; on "$H2" timeout 20 ./lmbi 2 mo e
    } >"$out/lmbi.out" 2>&1
    # Not through on(), so that $! is the program (the script execs it).
    LIQUIDVM_HOST=$H2 "$R" exec "$H2" timeout 60 stdbuf -oL ./lmbi 1 d w >"$out/lmbi_w.out" 2>&1 &
    pid=$!
    check "$vm: lmbi 1 d w waits" seen "$out/lmbi_w.out" 1 "waiting for exit request"
    {
        echo "== gmbi on $H1"; on "$H1" timeout 20 ./gmbi
        echo "== gmbi lmbi1 on $H2"; on "$H2" timeout 20 ./gmbi lmbi1
        echo "== gmbi nosuch on $H1"; on "$H1" timeout 20 ./gmbi nosuch
    } >"$out/gmbi.out" 2>&1
    # It dies without pvm_exit: its entry (not persistent) goes with it.
    kill "$pid"; wait "$pid" 2>/dev/null
    sleep 1
    { echo "== gmbi after the waiting lmbi died"; on "$H1" timeout 20 ./gmbi; } >>"$out/gmbi.out" 2>&1
    check "$vm: gmbi listed the entries" grep -q "mbox entries returned" "$out/gmbi.out"

    on "$H1" timeout 120 stdbuf -oL ./mhf_server >"$out/mhf_server.out" 2>&1 &
    local srv=$!
    check "$vm: mhf_server registered" seen "$out/mhf_server.out" 1 "startup"
    rm -f "$T/tickle.in"; mkfifo "$T/tickle.in"
    on "$H2" timeout 120 stdbuf -oL ./mhf_tickle <"$T/tickle.in" >"$out/mhf_tickle.out" 2>&1 &
    local tick=$!
    exec 7>"$T/tickle.in"
    local f=$out/mhf_server.out
    feed 0;                         seen "$f" 1 "PMH: Are you talking"
    feed 1 11 0 1;                  seen "$f" 1 "loaded SC1"
    feed 4 11 0 1 "hello there";    seen "$f" 1 "strings match <hello there>"
    feed 1 12 0 6;                  seen "$f" 1 "loaded IC1"
    feed 4 12 0 6 42;               seen "$f" 1 "magic_numbers match 42"
    feed 2 9;                       seen "$f" 1 "pvm_delmhf( mhid = 9 )"
    feed 4 11 0 1 "again";          seen "$f" 1 "NO HIT"
    feed 2 9 0;                     seen "$f" 2 "PMH: Are you talking"
    feed 3;                         seen "$f" 1 "just registered server"
    feed "";                        seen "$out/mhf_tickle.out" 1 "just retrieved mailbox"
    feed 1 11 0 1;                  seen "$f" 2 "loaded SC1"
    feed 4 11 0 1 "after rejoin";   seen "$f" 1 "strings match <after rejoin>"
    feed 9
    exec 7>&-
    check "$vm: mhf_tickle leaves after SEAT" wait_for 20 bash -c "! kill -0 $tick 2>/dev/null"
    check "$vm: mhf_server leaves after SEAT" wait_for 20 bash -c "! kill -0 $srv 2>/dev/null"
    check "$vm: the handlers caught every message sent to them" bash -c \
        '[ "$(grep -c "^mhf_server: HIT:  ping target" "$0")" = 3 ]' "$f"
}

# ---- real PVM 3.4.6
check "real PVM 3.4.6 starts on $H1 and adds $H2" "$R" start "$EX/real"
cd "$EX/real" && scenarios "$T/real" "real PVM"
cd "$SRC" || exit 1
check "real PVM halts" "$R" halt

# ---- LiquidVM on the same two hosts
write_conf 2.0 "spawn_path = [ \"$EX/ours\" ];
hoststart = \"REALPVM_PREFIX=$REALPVM_PREFIX $R exec %h %v\";"
check "LiquidVM starts on $H1 and adds $H2" bash -c \
    '"$0" exec "$1" "$2" start --name "$1" --listen "$("$0" ip "$1")" -c "$3" &&
     "$0" exec "$1" "$2" add "$4"' "$R" "$H1" "$VMCTL" "$T/test.conf" "$H2"
cd "$EX/ours" && scenarios "$T/ours" LiquidVM
cd "$SRC" || exit 1
check "LiquidVM halts" "$VMCTL" halt

# ---- compare
for s in hello timing lmbi lmbi_w gmbi mhf_server mhf_tickle; do
    perl "$NORM" "$T/real/$s.out" >"$T/real/$s.norm"
    perl "$NORM" "$T/ours/$s.out" >"$T/ours/$s.norm"
    if diff -u "$T/real/$s.norm" "$T/ours/$s.norm" >"$T/$s.diff"; then
        ok "$s: the same output as under real PVM 3.4.6 ($(wc -l <"$T/ours/$s.norm") lines)"
    else
        notok "$s: output differs from real PVM 3.4.6 (- real, + LiquidVM)"
        sed 's/^/#   /' "$T/$s.diff" | head -60
    fi
done
