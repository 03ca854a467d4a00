#!/usr/bin/env bash
# The Fortran binding (issue 29): our fpvm3.h against PVM 3.4.6's; PVM's
# own Fortran examples (Debian's pvm-examples: master1/slave1, spmd, hitc/
# hitc_slave, gexample, frsg) built with gfortran against our fpvm3.h and
# libfpvm3/libpvm3 only, run on two namespace hosts beside the same sources
# built against and run on real PVM 3.4.6 (as test_pvm_examples_vs_pvm.sh
# does for the C examples, with its lock and its plain-build-only rule);
# and tests/integ/fortran_api.f90, every pvmf routine against the C API's
# results, on a local VM of 2 hosts (in both builds).
# The examples print in arrival order, with tids in decimal, so their
# outputs are compared as sorted lines with every tid replaced by "T".
. "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$VMCTL")/.." && pwd)
SRC=$(pwd)
R=$SRC/bench/realpvm.sh
EXS=/usr/share/doc/pvm-examples/examples.tar.gz
GEXS=/usr/share/doc/pvm-examples/gexamples.tar.gz
export PVM_ROOT=${PVM_ROOT:-/usr/lib/pvm3} PVM_ALLOW_ROOT=1

command -v gfortran >/dev/null || skip_all "gfortran is not installed (apt-get install gfortran)"
[ -f "$B/lib/libfpvm3.so.3" ] || skip_all "libfpvm3 is not built"
SAN= SANFLAGS=
if nm -D "$B/lib/libpvm3.so.3" 2>/dev/null | grep -q __asan; then
    SAN=1
    printf 'const char *__asan_default_options(void);\n%s\n' \
        'const char *__asan_default_options(void) { return "detect_leaks=0"; }' >"$T/noleak.c"
    cc -c -o "$T/noleak.o" "$T/noleak.c"
    SANFLAGS="-fsanitize=address,undefined $T/noleak.o"
fi
# F77 sources pass scalars and arrays to the same routine: gfortran >= 10
# needs -fallow-argument-mismatch for that, as for any PVM Fortran program.
FFLAGS="-w -fallow-argument-mismatch $SANFLAGS"
OURS="-I$SRC/lib/pvm -L$B/lib -lfpvm3 -lgpvm3 -lpvm3 -Wl,-rpath,$B/lib"

# ---- fpvm3.h: every name of PVM's header, with its value.
params() { # FILE: "NAME VALUE" per parameter, names in capitals
    sed -n 's/^ *parameter *( *\([A-Za-z0-9_]*\) *= *\(-\{0,1\}[0-9]*\) *).*/\1 \2/p' "$1" |
        tr '[:lower:]' '[:upper:]' | sort
}
params "$SRC/lib/pvm/fpvm3.h" >"$T/ours.par"
check "our fpvm3.h declares PVM's constants" test "$(wc -l <"$T/ours.par")" -ge 100
if [ -f /usr/include/fpvm3.h ]; then
    params /usr/include/fpvm3.h >"$T/real.par"
    check "every parameter of PVM 3.4.6's fpvm3.h, with the same value" \
        bash -c '! comm -23 "$0" "$1" | grep .' "$T/real.par" "$T/ours.par"
fi
check "our fpvm3.h compiles in fixed and free form" bash -c '
    printf "      program p\n      include %s\n      print *, PvmNoTask\n      end\n" "'"'fpvm3.h'"'" >"$0/p.f" &&
    printf "program q\ninclude %s\nprint *, REAL8\nend program\n" "'"'fpvm3.h'"'" >"$0/q.f90" &&
    gfortran -cpp -MD -I"$1/lib/pvm" -c -o "$0/p.o" "$0/p.f" &&
    gfortran -I"$1/lib/pvm" -c -o "$0/q.o" "$0/q.f90" &&
    grep -q "$1/lib/pvm/fpvm3.h" "$0/p.d" && ! grep -q /usr/include/fpvm3.h "$0/p.d"' "$T" "$SRC"

# ---- libfpvm3 itself.
check "libfpvm3.so.3 exports pvmf names only" bash -c \
    '! nm -D --defined-only "$0" | awk "{print \$3}" | grep -Ev "^(pvmf[a-z]+_|pvm(max|min|sum|product)_)$"' \
    "$B/lib/libfpvm3.so.3"
nm -D --defined-only "$B/lib/libfpvm3.so.3" | awk '$3 ~ /^pvmf/ { print $3 }' | sort >"$T/our.syms"
if [ -f /usr/lib/x86_64-linux-gnu/libfpvm3.a ]; then
    nm -g --defined-only /usr/lib/x86_64-linux-gnu/libfpvm3.a 2>/dev/null |
        awk '$2 == "T" && $3 ~ /^pvmf/ { print $3 }' | sort -u >"$T/real.syms"
    check "every pvmf routine of PVM 3.4.6's libfpvm3 ($(wc -l <"$T/real.syms")) is in ours ($(wc -l <"$T/our.syms"))" \
        bash -c '! comm -23 "$0" "$1" | grep .' "$T/real.syms" "$T/our.syms"
fi

# ---- fortran_api: every routine against the C API, on a local VM.
FA=$T/fa
mkdir -p "$FA"
check "fortran_api.f90 builds against our fpvm3.h and libfpvm3" \
    gfortran $FFLAGS -J "$FA" -o "$FA/fortran_api" "$SRC/tests/integ/fortran_api.f90" $OURS
check "it links our libfpvm3.so.3 and libpvm3.so.3, no other PVM" bash -c '
    readelf -d "$0" | grep -q "NEEDED.*\[libfpvm3\.so\.3\]" &&
    ldd "$0" | grep -q "libfpvm3.so.3 => $1/lib/libfpvm3.so.3" &&
    ldd "$0" | grep -q "libpvm3.so.3 => $1/lib/libpvm3.so.3" &&
    ! ldd "$0" | grep -q "/usr/lib/.*pvm"' "$FA/fortran_api" "$B"
write_conf 2.0 "spawn_path = [ \"$FA\", \"$B/tests/integ\" ];"
if check "start a local VM of 2 hosts" "$VMCTL" start --local 2 -c "$T/test.conf"; then
    (cd "$FA" && ASAN_OPTIONS=detect_leaks=0 timeout 120 ./fortran_api >"$T/fa.out" 2>"$T/fa.err")
    rc=$?
    while IFS= read -r line; do
        case $line in
        "ok "*) ok "fortran_api: ${line#ok * - }" ;;
        "not ok "*) notok "fortran_api: ${line#not ok * - }" ;;
        esac
    done <"$T/fa.out"
    check "fortran_api ran to the end (exit $rc)" bash -c \
        '[ "$1" = 0 ] && grep -q "^# done" "$0" || { tail -5 "$0"; cat "$2"; false; }' \
        "$T/fa.out" "$rc" "$T/fa.err"
    check "no sanitizer report" bash -c '! grep -E "ERROR: AddressSanitizer|runtime error" "$0"' "$T/fa.err"
    "$VMCTL" halt >/dev/null 2>&1
fi

# ---- PVM's Fortran examples, ours against real PVM 3.4.6.
[ -n "$SAN" ] && { echo "# SKIP the examples against real PVM: sanitizer build (they run in the plain build)"; exit 0; }
[ -f "$EXS" ] && [ -f "$GEXS" ] || skip_all "pvm-examples is not installed"
[ -f /usr/include/fpvm3.h ] && [ -f /usr/lib/x86_64-linux-gnu/libfpvm3.a ] && [ -x "$PVM_ROOT/lib/pvmd" ] ||
    skip_all "real PVM 3.4.6 (pvm, pvm-dev) is not installed"
command -v perl >/dev/null || skip_all "needs perl"
EX=$T/ex
mkdir -p "$EX/src" "$EX/real" "$EX/ours"
tar -xzf "$EXS" -C "$EX/src" && tar -xzf "$GEXS" -C "$EX/src" || skip_all "cannot extract the examples"
# The sources include '../include/fpvm3.h', PVM's tree; here the header
# comes from -I only (ours or /usr/include), the programs are unchanged.
for f in "$EX"/src/examples/*.f "$EX"/src/gexamples/*.f; do
    sed -i "s|'../include/fpvm3.h'|'fpvm3.h'|" "$f"
done
# name:source, named as PVM's Makefile.aimk names them.
FPROGS="fmaster1:examples/master1 fslave1:examples/slave1 fspmd:examples/spmd
        hitc:examples/hitc hitc_slave:examples/hitc_slave fgexample:examples/gexample
        frsg:gexamples/frsg"
build() { # DIR FLAGS...
    local dir=$1 p; shift
    for p in $FPROGS; do
        gfortran $FFLAGS -o "$dir/${p%%:*}" "$EX/src/${p#*:}.f" "$@" || return 1
    done
}
check "the Fortran examples build against real PVM 3.4.6 (fpvm3.h, -lfpvm3 -lgpvm3 -lpvm3)" \
    build "$EX/real" -I/usr/include -lfpvm3 -lgpvm3 -lpvm3
check "the Fortran examples build against our fpvm3.h and libfpvm3 only" build "$EX/ours" $OURS
check "ours link our libraries and no PVM library of the system" bash -c '
    for p in "$0"/*; do
        readelf -d "$p" | grep -q "RUNPATH.*$1/lib" || { echo "$p: runpath"; exit 1; }
        ldd "$p" | grep -q "libfpvm3.so.3 => $1/lib/" || { echo "$p: libfpvm3"; exit 1; }
        ! ldd "$p" | grep -q "/usr/lib/.*pvm" || { echo "$p: system PVM"; exit 1; }
    done' "$EX/ours" "$B"

export REALPVM_PREFIX=lvf$(( $$ % 10000 ))
cleanup_extra() { "$R" down; }
"$R" up 2 >"$T/up.out" 2>&1
case $? in
0) ;;
77) echo "# SKIP the examples on two hosts: $(cat "$T/up.out")"; exit 0 ;;
*) notok "two namespace hosts"; cat "$T/up.out"; exit 1 ;;
esac
H1=${REALPVM_PREFIX}1 H2=${REALPVM_PREFIX}2
on() { local h=$1; shift; LIQUIDVM_HOST=$h "$R" exec "$h" "$@"; }

# scenarios OUT VM: every example from $H1, its output in OUT/<name>.out.
scenarios() {
    local out=$1 vm=$2
    mkdir -p "$out"
    on "$H1" timeout 60 ./fmaster1 >"$out/master1.out" 2>&1
    check "$vm: fmaster1 got every slave's result" \
        test "$(grep -c "I got" "$out/master1.out")" = 6
    on "$H1" timeout 60 ./fspmd >"$out/spmd.out" 2>&1
    check "$vm: fspmd passed its token" grep -q "token ring done" "$out/spmd.out"
    on "$H1" timeout 60 ./hitc >"$out/hitc.out" 2>&1
    check "$vm: hitc finished" grep -q "Program Finished" "$out/hitc.out"
    on "$H1" timeout 60 ./fgexample >"$out/gexample.out" 2>&1
    check "$vm: fgexample printed the 1-norm" grep -q "1-Norm" "$out/gexample.out"
    printf '4\n5\n' | on "$H1" timeout 60 ./frsg >"$out/frsg.out" 2>&1
    check "$vm: frsg's reduce, scatter and gather" grep -q "Test OK" "$out/frsg.out"
}

# $PVM_ROOT/lib holds pvmgs, PVM's group server, which the group examples start.
check "real PVM 3.4.6 starts on $H1 and adds $H2" "$R" start "$EX/real:$PVM_ROOT/lib"
cd "$EX/real" && scenarios "$T/real" "real PVM"
cd "$SRC" || exit 1
check "real PVM halts" "$R" halt

write_conf 2.0 "spawn_path = [ \"$EX/ours\" ];
hoststart = \"REALPVM_PREFIX=$REALPVM_PREFIX $R exec %h %v\";"
check "LiquidVM starts on $H1 and adds $H2" bash -c \
    '"$0" exec "$1" "$2" start --name "$1" --listen "$("$0" ip "$1")" -c "$3" &&
     "$0" exec "$1" "$2" add "$4"' "$R" "$H1" "$VMCTL" "$T/test.conf" "$H2"
cd "$EX/ours" && scenarios "$T/ours" LiquidVM
cd "$SRC" || exit 1
check "LiquidVM halts" "$VMCTL" halt

# Tids (t40001, or decimal 262145 and up) become T; lines sorted.  A
# reduction's product depends on the order the partial results arrive in
# (fgexample's 100!), on real PVM as here: E-format reals keep 12 digits.
norm() {
    perl -pe 's/\bt[0-9a-f]{5,}\b/T/g; s/\b(\d{6,})\b/$1 >= 262144 ? "T" : $1/ge;
              s/(\d\.\d{12})\d*E/$1E/g; s/[ \t]+$//' "$1" |
        grep -v '^$' | sort
}
for s in master1 spmd hitc gexample frsg; do
    norm "$T/real/$s.out" >"$T/real/$s.norm"
    norm "$T/ours/$s.out" >"$T/ours/$s.norm"
    if diff -u "$T/real/$s.norm" "$T/ours/$s.norm" >"$T/$s.diff"; then
        ok "$s.f: the same output as under real PVM 3.4.6 ($(wc -l <"$T/ours/$s.norm") lines)"
    else
        notok "$s.f: output differs from real PVM 3.4.6 (- real, + LiquidVM)"
        sed 's/^/#   /' "$T/$s.diff" | head -40
    fi
done
