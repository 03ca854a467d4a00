#!/usr/bin/env bash
# Dynamic groups on a 3-host VM (issue 4): Debian's pvm-examples that use
# groups (gexample, bwtest, ptest and every C program of gexamples.tar.gz),
# built unchanged against our pvm3.h with -lgpvm3 -lpvm3 as their Makefiles
# link them, and compared with the same sources built against and run on
# real PVM 3.4.6 where their output is deterministic; Debian's prebuilt
# binaries on our libraries; every reduction, gather and scatter against a
# sequential result; a barrier whose member dies; vmctl groups.
. "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$VMCTL")/.." && pwd)
SP=$B/tests/integ/pvm_spawner
PG=$B/tests/integ/pvm_groups
[ -x "$SP" ] && [ -x "$PG" ] || skip_all "pvm_spawner or pvm_groups is not built"
EXS=/usr/share/doc/pvm-examples/examples.tar.gz
GEXS=/usr/share/doc/pvm-examples/gexamples.tar.gz
[ -f "$EXS" ] && [ -f "$GEXS" ] && command -v cc >/dev/null ||
    skip_all "pvm-examples sources are not installed (apt-get install pvm-examples)"

SANFLAGS=
if nm -D "$B/lib/libpvm3.so.3" 2>/dev/null | grep -q __asan; then
    printf 'const char *__asan_default_options(void);\n%s\n' \
        'const char *__asan_default_options(void) { return "detect_leaks=0"; }' >"$T/noleak.c"
    SANFLAGS="-fsanitize=address,undefined $T/noleak.c"
fi
EX=$T/ex
mkdir -p "$EX/src" "$T/real"
tar -xzf "$EXS" -C "$EX/src" && tar -xzf "$GEXS" -C "$EX/src"
PROGS="ge gexamp gs joinleave thb tjf tjl tnb trsg tst gexample bwtest ptest"
src_of() { case $1 in gexample|bwtest|ptest) echo "$EX/src/examples/$1.c" ;; *) echo "$EX/src/gexamples/$1.c" ;; esac; }
built=0
for p in $PROGS; do
    # -w: these are K&R-era sources; the programs themselves are unchanged.
    if cc -w $SANFLAGS -I"$(pwd)/lib/pvm" -o "$EX/$p" "$(src_of $p)" -L"$B/lib" -lgpvm3 -lpvm3 \
        -Wl,-rpath,"$B/lib" 2>"$T/cc.$p"; then
        built=$((built + 1))
    else
        sed 's/^/#   /' "$T/cc.$p" | head -5
    fi
done
check "all 13 group examples compile unchanged with -lgpvm3 -lpvm3" [ $built = 13 ]
check "the static libgpvm3.a links them too" \
    cc -w $SANFLAGS -I"$(pwd)/lib/pvm" -o "$T/tst.static" "$EX/src/gexamples/tst.c" -L"$B/lib" \
    -Wl,-Bstatic -lgpvm3 -lpvm3 -Wl,-Bdynamic $(pkg-config --libs libuv openssl libconfig 2>/dev/null) -lm
export PATH="$EX:$PATH"

write_conf 2.0 "spawn_path = [ \"$EX\", \"$B/tests/integ\" ];"
check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"

# A program from $EX, its stdout and stderr kept for the comparison.
run() { local name=$1; shift; (cd "$EX" && timeout 60 "$@" >"$T/$name.out" 2>"$T/$name.err"); }

run tst tst
check "tst joins two groups (instance 0 in each) and leaves them" bash -c '
    [ "$(cat "$0/tst.out")" = "joined prognosis 0, negative 0
left prognosis 0, negative 0" ] || { cat "$0/tst.out" "$0/tst.err"; false; }' "$T"
check "joinleave: 250 joins and leaves, instance 0 each time" bash -c \
    'run() { cd "$1" && timeout 60 joinleave 250 >"$2/joinleave.out" 2>"$2/joinleave.err"; };
     run "$0" "$1" && [ "$(cat "$1/joinleave.out")" = "Joined 100 times
Joined 200 times" ]' "$EX" "$T"
check "tjl: 32 groups joined, instances and tids agree, all left" bash -c \
    'cd "$0" && timeout 60 tjl 2>"$1/tjl.err" && [ "$(grep -c "^joined group" "$1/tjl.err")" = 32 ] &&
     ! grep -q "not myself\|libpvm" "$1/tjl.err"' "$EX" "$T"
# tjf writes a 33rd instance into its 32-entry array, which overwrites its
# own stack: what follows is its own.
if [ -n "$SANFLAGS" ]; then
    echo "# SKIP tjf: it overflows its own stack array, which a sanitizer build reports"
else
check "tjf: 33 groups joined (PVM 3.4 has no limit)" bash -c \
    'cd "$0"; timeout 60 tjf 2>"$1/tjf.err"; [ "$(grep -c "^joined group" "$1/tjf.err")" -ge 32 ] ||
     { cat "$1/tjf.err"; false; }' "$EX" "$T"
fi
check "ge 4: spawned members sync on a barrier, broadcast, and leave" bash -c \
    'cd "$0" && timeout 60 ge 4 >"$1/ge.out" 2>"$1/ge.err" && [ "$(cat "$1/ge.out")" = done ] &&
     grep -q "group ge size 4 gid 0: sync" "$1/ge.err" || { cat "$1/ge.err"; false; }' "$EX" "$T"
check "gexamp 4: barrier, broadcast of gids and tids, every check passes at instance 0" bash -c \
    'cd "$0" && timeout 60 gexamp 4 2>"$1/gexamp.err" && grep -q "^gexamp 0: sync" "$1/gexamp.err" &&
     ! grep -q "match up\|libpvm" "$1/gexamp.err" || { cat "$1/gexamp.err"; false; }' "$EX" "$T"
check "gs 4: waits for the group to fill, barrier, leave" bash -c \
    'cd "$0" && timeout 60 gs 4 2>"$1/gs.err" && ! grep -q libpvm "$1/gs.err"' "$EX" "$T"
check "thb 3: 32 groups, 3 tnb children join the last and pass its barrier" bash -c \
    'cd "$0" && timeout 60 thb 3 >"$1/thb.out" 2>"$1/thb.err" &&
     [ "$(cat "$1/thb.out")" = "spawning ... barrier on group0 
 leaving all the groups 
done." ] || { cat "$1/thb.out" "$1/thb.err"; false; }' "$EX" "$T"
check "trsg with 4 tasks, 5 values: scatter, gather, reduce with PvmSum and a user function" bash -c \
    'cd "$0" && printf "4\n5\n" | timeout 60 trsg >"$1/trsg.out" 2>"$1/trsg.err";
     grep -q "Test OK: Sum of Squares of first 20 integers is 2870" "$1/trsg.out" &&
     grep -q "Test Ok: Received (5.000000, 2.000000)" "$1/trsg.out" || { cat "$1/trsg.out" "$1/trsg.err"; false; }' "$EX" "$T"
check "gexample 100x100 on 10 tasks: 1-norm 5050 and 100! by pvm_reduce, frozen group, barrier" bash -c \
    'cd "$0" && printf "100\n10\n" | timeout 60 gexample >"$1/gexample.out" 2>"$1/gexample.err" &&
     grep -q "The 1-Norm is 5050" "$1/gexample.out" && grep -q "product of column 1 is 9.33262e+157" "$1/gexample.out" &&
     ! grep -q "failed\|error" "$1/gexample.out" || { cat "$1/gexample.out" "$1/gexample.err"; false; }' "$EX" "$T"
check "ptest 4 (spawned): frozen group, psend/precv and recv validated over 8 iterations" bash -c \
    'timeout 60 "$0" -n 4 ptest 4 >"$1/ptest.out" 2>&1 &&
     [ "$(grep -c "Data validated from all tasks" "$1/ptest.out")" = 8 ] && grep -q "all exited" "$1/ptest.out" ||
     { cat "$1/ptest.out"; false; }' "$SP" "$T"
# bwtest pairs instances 0 and 1 of its group; the first waits with pvm_gettid.
(cd "$EX" && LIQUIDVM_HOST=host1 timeout 60 bwtest >"$T/bw0.out" 2>"$T/bw0.err" &)
check "while bwtest waits for its partner, vmctl groups shows its group with one member" \
    wait_for 10 bash -c '"$0" groups | grep -q "^bwtest *1 "' "$VMCTL"
check "vmctl groups --json lists the member's tid and instance" bash -c \
    '"$0" groups --json | grep -q "\"name\":\"bwtest\".*\"inst\":0"' "$VMCTL"
check "vmctl ps shows the task's group membership" bash -c '"$0" ps -a | grep -q "bwtest:0"' "$VMCTL"
check "bwtest: the pair validates 100000 doubles both ways and times 7 sizes" bash -c \
    'cd "$0" && LIQUIDVM_HOST=host2 timeout 60 bwtest >"$1/bw1.out" 2>&1; sleep 0.5;
     cat "$1/bw0.out" "$1/bw1.out" >"$1/bw.out";
     [ "$(grep -c "100000 doubles received correctly" "$1/bw.out")" = 2 ] &&
     [ "$(grep -c "^Roundtrip T" "$1/bw.out")" = 7 ] || { cat "$1/bw.out"; false; }' "$EX" "$T"

check "every reduction (PvmMax/Min/Sum/Product, a user function) of every type, gather and scatter, 6 tasks on 3 hosts, match a sequential fold" \
    bash -c 'timeout 60 "$0" reduce 6 >"$1/red.out" 2>&1; grep -q "^ok 18 checks" "$1/red.out" || { cat "$1/red.out"; false; }' "$PG" "$T"
check "a barrier whose member dies ends with an error for every survivor, not a hang" \
    bash -c 'timeout 30 "$0" death 4 >"$1/death.out" 2>&1 && grep -q "dead member: -[0-9]" "$1/death.out" &&
             grep -q "^survivors: 2 of 2 returned, 2 failed" "$1/death.out" || { cat "$1/death.out"; false; }' "$PG" "$T"
# The data collectives with a member that dies while the others are in
# them: member 1 (on another host than the root, the coordinator of its
# host for pvm_reduce) or member 4 (not a coordinator: its coordinator
# fails and tells the root).  A hang is caught by the timeout.
cdeath() {
    local op=$1 v=$2 out=$T/$1.$2.out
    timeout 30 "$PG" "$op" 6 "$v" >"$out" 2>&1
    grep -q "^survivors: 4 of 4 returned" "$out" || { cat "$out"; return 1; }
    case $op in
    reduce-death | gather-death) grep -q "root: -31$" "$out" ;;          # PvmNoTask
    scatter-death) grep -q "root: -31$" "$out" && grep -q "4 of 4 returned, 4 failed" "$out" ;;
    bcast-death) grep -q "root: 0$" "$out" && grep -q "^received: 4$" "$out" ;;
    esac || { cat "$out"; return 1; }
}
for v in 1 4; do
    check "pvm_reduce whose member $v dies during it ends with PvmNoTask at the root, every survivor returns" \
        cdeath reduce-death $v
    check "pvm_gather whose member $v dies during it ends with PvmNoTask at the root, every survivor returns" \
        cdeath gather-death $v
    check "pvm_scatter whose root (member $v) dies ends with PvmNoTask for every member" \
        cdeath scatter-death $v
done
check "pvm_bcast after member 1 died: every live member receives it" cdeath bcast-death 1
check "no group is left once every task left" wait_for 10 bash -c '[ -z "$("$0" groups)" ] || { "$0" groups; false; }' "$VMCTL"

# Debian's binaries, built against PVM 3.4.6's libgpvm3 and libpvm3.
if [ -n "$SANFLAGS" ]; then
    echo "# SKIP prebuilt binaries: this libpvm3 is a sanitizer build (run in the plain build)"
elif [ -x /usr/bin/tst ] && [ -x /usr/bin/ge ]; then
    write_conf 2.0 'spawn_path = [ "/usr/bin" ];'
    check "halt, then a VM of 3 hosts whose spawn_path is /usr/bin" bash -c \
        '"$0" halt && "$0" start --local 3 -c "$1"' "$VMCTL" "$T/test.conf"
    deb() { (cd /tmp && PVM_EXPORT=LD_LIBRARY_PATH LD_LIBRARY_PATH="$B/lib" timeout 60 "$@"); }
    check "Debian's tst resolves libgpvm3.so.3 and libpvm3.so.3 to ours" bash -c \
        'LD_LIBRARY_PATH="$0/lib" ldd /usr/bin/tst | grep -q "libgpvm3.so.3 => $0/lib/libgpvm3.so.3"' "$B"
    check "Debian's tst" bash -c '[ "$(cd /tmp && LD_LIBRARY_PATH="$0/lib" timeout 30 /usr/bin/tst)" = "joined prognosis 0, negative 0
left prognosis 0, negative 0" ]' "$B"
    check "Debian's joinleave 200" bash -c '[ "$(cd /tmp && LD_LIBRARY_PATH="$0/lib" timeout 30 /usr/bin/joinleave 200 2>/dev/null | tail -1)" = "Joined 200 times" ]' "$B"
    # Their real output and exit status: a crash, a timeout or a missing
    # binary fails (a grep for what must not appear would pass on those).
    check "Debian's tjl: exits 0, joined group0..group31, each found again, all left" bash -c \
        'cd /tmp && LD_LIBRARY_PATH="$0/lib" timeout 30 /usr/bin/tjl >"$1/deb.tjl.out" 2>"$1/deb.tjl.err";
         rc=$?; [ $rc = 0 ] && [ "$(grep -c "^joined group" "$1/deb.tjl.err")" = 32 ] &&
         grep -qx "joined group31" "$1/deb.tjl.err" && ! grep -q "not myself\|libpvm" "$1/deb.tjl.err" ||
         { echo "# exit status $rc"; tail -5 "$1/deb.tjl.err"; false; }' "$B" "$T"
    # Debian's tjf stores the 33rd join's instance in gid[32], one past its
    # array, which in that binary's stack is the start of the group name:
    # the join of group32 succeeds, then it prints "joined " with the name
    # wiped, and goes on.
    check "Debian's tjf: exits 0, 33 joins (group32's printed with its name overwritten)" bash -c \
        'cd /tmp && LD_LIBRARY_PATH="$0/lib" timeout 30 /usr/bin/tjf >"$1/deb.tjf.out" 2>"$1/deb.tjf.err";
         rc=$?; [ $rc = 0 ] && [ "$(grep -c "^joined group" "$1/deb.tjf.err")" = 32 ] &&
         grep -qx "joined group31" "$1/deb.tjf.err" &&
         [ "$(grep "^joined" "$1/deb.tjf.err" | tail -1)" = "joined " ] &&
         ! grep -q "not myself\|libpvm" "$1/deb.tjf.err" ||
         { echo "# exit status $rc"; tail -5 "$1/deb.tjf.err"; false; }' "$B" "$T"
    check "Debian's ge 4 (spawns itself)" bash -c 'deb() { cd /tmp && PVM_EXPORT=LD_LIBRARY_PATH LD_LIBRARY_PATH="$0/lib" timeout 60 "$@"; };
        [ "$(deb ge 4 2>/dev/null)" = done ]' "$B"
    check "Debian's thb 3 with tnb" bash -c 'cd /tmp && PVM_EXPORT=LD_LIBRARY_PATH LD_LIBRARY_PATH="$0/lib" timeout 60 /usr/bin/thb 3 2>/dev/null | grep -q "^done.$"' "$B"
    check "Debian's trsg" bash -c 'cd /tmp && printf "4\n5\n" | PVM_EXPORT=LD_LIBRARY_PATH LD_LIBRARY_PATH="$0/lib" timeout 60 /usr/bin/trsg | grep -q "Test OK: Sum of Squares of first 20 integers is 2870"' "$B"
    check "Debian's gexample 100 x 10" bash -c 'cd /tmp && printf "100\n10\n" | PVM_EXPORT=LD_LIBRARY_PATH LD_LIBRARY_PATH="$0/lib" timeout 60 /usr/bin/gexample | grep -q "The 1-Norm is 5050"' "$B"
else
    echo "# SKIP prebuilt binaries: pvm-examples binaries are not installed"
fi
check "halt" "$VMCTL" halt

# The same sources on real PVM 3.4.6 (one host: PVM runs one pvmd per user
# and machine), compared where the output does not depend on timing.
if [ -n "$SANFLAGS" ]; then
    echo "# SKIP real PVM comparison: done in the plain build"
elif [ -x /usr/bin/pvmd ] && [ -f /usr/include/pvm3.h ]; then
    R=$T/real
    for p in $PROGS; do cc -w -o "$R/$p" "$(src_of $p)" -lgpvm3 -lpvm3 2>/dev/null; done
    printf '#include <pvm3.h>\nint main(void){pvm_setopt(PvmAutoErr,0);if(pvm_mytid()<0)return 1;pvm_halt();return 0;}\n' >"$T/halt.c"
    cc -o "$R/halt" "$T/halt.c" -lpvm3
    echo "* ep=/usr/lib/pvm3/lib:$R" >"$T/hostfile"
    cat >"$T/real.sh" <<'EOF'
export PVM_ROOT=/usr/lib/pvm3 PVM_ALLOW_ROOT=1 PVM_TMP=/tmp
R=$1; T=$2
echo quit | timeout 10 pvm "$T/hostfile" >/dev/null 2>&1
cd "$R"
timeout 30 ./tst >"$T/r.tst.out" 2>&1
timeout 60 ./joinleave 250 >"$T/r.joinleave.out" 2>/dev/null
timeout 60 ./thb 3 >"$T/r.thb.out" 2>/dev/null
printf "4\n5\n" | timeout 60 ./trsg >"$T/r.trsg.out" 2>/dev/null
printf "100\n10\n" | timeout 60 ./gexample >"$T/r.gexample.out" 2>/dev/null
timeout 60 ./tjl 2>"$T/r.tjl.err" >/dev/null
timeout 10 ./halt >/dev/null 2>&1
sleep 0.5
true
EOF
    check "the same programs on real PVM 3.4.6 (under flock /tmp/lvm-realpvm.lock)" \
        flock -w 120 /tmp/lvm-realpvm.lock timeout 300 bash "$T/real.sh" "$R" "$T"
    for p in tst joinleave thb; do
        check "$p prints what it prints on PVM 3.4.6" diff "$T/r.$p.out" "$T/$p.out"
    done
    check "trsg's results are PVM 3.4.6's" diff <(grep Test "$T/r.trsg.out") <(grep Test "$T/trsg.out")
    check "gexample prints what it prints on PVM 3.4.6 (10 processors, 1-norm, product)" \
        diff <(grep -v "^ *$" "$T/r.gexample.out") <(grep -v "^ *$" "$T/gexample.out")
    check "tjl's messages are PVM 3.4.6's" diff "$T/r.tjl.err" "$T/tjl.err"
else
    echo "# SKIP real PVM comparison: PVM 3.4.6 (pvm, pvm-dev) is not installed"
fi
check "no vmd process is left" wait_for 5 vmd_count_is 0
