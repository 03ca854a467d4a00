#!/usr/bin/env bash
# make install into a staging root, as PVM's Debian packages install:
# the programs, the shared libraries with their -l development links, the
# archives, the headers, pkg-config files for libpvm3 and libgpvm3, and a
# man page for every installed program and every LiquidVM call libpvm3
# exports.  A PVM program built with pkg-config against the staged files
# links the shared library and runs on a local VM.  libliquid.so.0 and
# pkg-config liquid: a program of its own is the master of a stencil job
# (spawning itself as the workers) and gets vmrun stencil's bits.
. "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$VMCTL")/.." && pwd)
SRC=$(pwd)
command -v pkg-config >/dev/null || skip_all "pkg-config is missing"
command -v cc >/dev/null || skip_all "no C compiler"
R=$T/root P=/usr/local
SAN= SANFLAGS=
if nm -D "$B/lib/libpvm3.so.3" 2>/dev/null | grep -q __asan; then
    SAN=1 SANFLAGS="-fsanitize=address,undefined"
fi

check "make install stages into DESTDIR" \
    make -s -C "$SRC" O="$B" SAN="$SAN" install DESTDIR="$R" PREFIX="$P"

missing=""
for f in bin/vmd bin/vmctl bin/vmrun lib/libpvm3.so.3 lib/libgpvm3.so.3 lib/libpvm3.a \
         lib/libgpvm3.a include/pvm3.h include/lvm_load.h include/lvm_err.h \
         lib/pkgconfig/libpvm3.pc lib/pkgconfig/libgpvm3.pc share/liquidvm/vmd.conf \
         share/man/man5/vmd.conf.5 include/fpvm3.h lib/libfpvm3.so.3 lib/libfpvm3.a \
         lib/pkgconfig/libfpvm3.pc share/man/man3/libfpvm3.3 lib/libliquid.so.0 \
         lib/pkgconfig/liquid.pc lib/liquid/liquid_io.so; do
    [ -e "$R$P/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && ok "every file is installed" || notok "not installed:$missing"

links=""
for l in libpvm3 libgpvm3 libfpvm3; do
    [ "$(readlink "$R$P/lib/$l.so")" = "$l.so.3" ] || links="$links $l.so"
done
[ "$(readlink "$R$P/lib/libliquid.so")" = "libliquid.so.0" ] || links="$links libliquid.so"
[ -z "$links" ] && ok "the development links name the .so.3 files" || notok "wrong links:$links"

# A man page for every installed program and every lvm_ call exported.
nopage=""
for b in "$R$P"/bin/*; do
    [ -f "$R$P/share/man/man1/$(basename "$b").1" ] || nopage="$nopage $(basename "$b")(1)"
done
for s in $(nm -D --defined-only "$R$P/lib/libpvm3.so.3" | awk '$3 ~ /^lvm_/ { print $3 }'); do
    [ -f "$R$P/share/man/man3/$s.3" ] || nopage="$nopage $s(3)"
    grep -q "$s" "$R$P"/include/lvm_*.h || nopage="$nopage $s(no header)"
done
[ -z "$nopage" ] && ok "every program and lvm_ call has a man page and a header" ||
    notok "without a man page or header:$nopage"

export PKG_CONFIG_PATH=$R$P/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$R
flags=$(pkg-config --cflags --libs libgpvm3)
case " $flags " in
*" -lgpvm3 "*"-lpvm3 "*) ok "pkg-config libgpvm3 gives -lgpvm3 -lpvm3 ($flags)" ;;
*) notok "pkg-config libgpvm3 gives: $flags" ;;
esac
flags=$(pkg-config --cflags --libs liquid)
case " $flags " in
*" -lliquid "*) ok "pkg-config liquid gives -lliquid ($flags)" ;;
*) notok "pkg-config liquid gives: $flags" ;;
esac
# libliquid exports the runtime's names only, not the kernels', the
# decompositions' or the configuration's it carries.
if nm -D --defined-only "$R$P/lib/libliquid.so.0" | awk '{ print $3 }' |
       grep -Ev '^(liq_|liquid_)' | grep -q .; then
    notok "libliquid.so.0 exports names other than liq_ and liquid_"
else
    ok "libliquid.so.0 exports liq_ and liquid_ names only"
fi

# The staged headers and libraries alone: -nostdinc would also drop libc's,
# so the check is that the program sees the staged pvm3.h (not /usr/include's).
check "a PVM program builds with pkg-config libpvm3" \
    cc $SANFLAGS -o "$T/hostload" "$SRC/tests/integ/pvm_hostload.c" $(pkg-config --cflags --libs libpvm3)
if readelf -d "$T/hostload" 2>/dev/null | grep -q 'NEEDED.*\[libpvm3\.so\.3\]'; then
    ok "-lpvm3 links the shared library"
else
    notok "-lpvm3 did not link libpvm3.so.3"
fi
check "a group program builds with pkg-config libgpvm3" \
    cc $SANFLAGS -o "$T/grp" -x c - $(pkg-config --cflags --libs libgpvm3) <<'PROG'
#include <pvm3.h>
int main(void) { return pvm_joingroup("g") < 0 && pvm_lvgroup("g") < 0 ? 0 : 0; }
PROG
# The Fortran binding: gfortran with pkg-config libfpvm3 and the staged
# fpvm3.h (/usr/include is not on gfortran's INCLUDE path).
if command -v gfortran >/dev/null; then
    printf '      program f\n      include %s\n      integer t\n      call pvmfmytid(t)\n      end\n' \
        "'fpvm3.h'" >"$T/f.f"
    check "a Fortran program builds with pkg-config libfpvm3" \
        gfortran $SANFLAGS -o "$T/fprog" "$T/f.f" $(pkg-config --cflags --libs libfpvm3)
    if readelf -d "$T/fprog" 2>/dev/null | grep -q 'NEEDED.*\[libfpvm3\.so\.3\]'; then
        ok "-lfpvm3 links the shared library"
    else
        notok "-lfpvm3 did not link libfpvm3.so.3"
    fi
else
    echo "# SKIP the Fortran binding's install: no gfortran"
fi
if ! "$VMCTL" start --local 1 >"$T/out" 2>&1; then
    notok "vmctl start"; sed 's/^/#   /' "$T/out"
else
    if LD_LIBRARY_PATH=$R$P/lib ldd "$T/hostload" | grep -q "$R$P/lib/libpvm3.so.3"; then
        ok "the program loads the staged libpvm3.so.3"
    else
        notok "the program does not load the staged library"
    fi
    check "it runs on the VM (lvm_hostload)" \
        env LD_LIBRARY_PATH="$R$P/lib" ASAN_OPTIONS=detect_leaks=0 "$T/hostload"
    # The master's entry point as liq_master.h declares it (liquid.h, the
    # public header, is to come).  The daemon spawns the program itself as
    # its workers, so the staged library is found through its run path.
    if cc $SANFLAGS -o "$T/mystencil" -x c - $(pkg-config --cflags --libs liquid) \
           -Wl,-rpath,"$R$P/lib" >"$T/cc.out" 2>&1 <<'PROG'
struct liq_program {
    const char *name, *exe;
    const char *const *worker_argv;
    const void *user;
};
int liq_stencil_main(const struct liq_program *prog, int argc, char **argv);
int main(int argc, char **argv)
{
    static const struct liq_program prog = { "mystencil", 0, 0, 0 };
    return liq_stencil_main(&prog, argc, argv);
}
PROG
    then
        ok "a program builds with pkg-config liquid"
        check "it is a job's master and its own workers, bit-identical to the reference" \
            bash -c '"$0" --grid 24 --iters 6 --quiet --verify >"$1" 2>&1 &&
                     grep -q "bit-identical" "$1" && grep -q "job: jacobi 24x24x24" "$1"' \
            "$T/mystencil" "$T/mystencil.out"
        check "its usage names it" bash -c '"$0" --help | grep -q "^usage: mystencil \[--grid"' \
            "$T/mystencil"
    else
        notok "a program builds with pkg-config liquid"; sed 's/^/#   /' "$T/cc.out"
    fi
    # examples/heat3d.c, copied away from the source tree, built from the
    # installed liquid.h and pkg-config liquid alone, as the README says
    # (its own sin and exp need the -lm that liquid.pc gives): its own
    # stencil, spawned as its own workers.
    cp "$SRC/examples/heat3d.c" "$T/heat3d.c"
    check "liquid.h is installed" test -f "$R$P/include/liquid.h"
    check "a copy of examples/heat3d.c builds with pkg-config liquid" \
        cc $SANFLAGS -Wall -Wextra -Werror -o "$T/heat3d" "$T/heat3d.c" \
        $(pkg-config --cflags --libs liquid) -Wl,-rpath,"$R$P/lib"
    check "... from the installed liquid.h, not the source tree's" bash -c '
        cc -M $(pkg-config --cflags liquid) "$0" | tr " " "\n" | grep "liquid\.h" >"$0.dep" &&
        [ "$(cat "$0.dep")" = "$1/include/liquid.h" ]' "$T/heat3d.c" "$R$P"
    check "... and links the staged libliquid.so.0" bash -c \
        'ldd "$0" | grep -q "$1/lib/libliquid.so.0"' "$T/heat3d" "$R$P"
    check "it runs its job on the VM, bit-identical to its one-process reference" bash -c '
        env ASAN_OPTIONS=detect_leaks=0 "$0" --grid 16 --iters 20 --quiet --verify \
            --probe-seconds 0.01 >"$0.out" 2>&1 &&
        grep -q "bit-identical to the single-process reference" "$0.out" &&
        grep -q "^heat3d: 20 iterations" "$0.out" || { cat "$0.out"; exit 1; }' "$T/heat3d"
    # Its files go through the HDF5 and PNG module, found beside the staged
    # libliquid.so.0 (lib/liquid/liquid_io.so), which alone names HDF5.
    check "... and writes f.h5 and s.png through the staged lib/liquid/liquid_io.so" bash -c '
        env ASAN_OPTIONS=detect_leaks=0 "$0" --grid 16 --iters 4 --quiet --probe-seconds 0.01 \
            --output "$0.h5" --png "$0.png" >"$0.out2" 2>&1 &&
        h5dump -H "$0.h5" | grep -q "DATASET \"u\"" && test -s "$0.png" &&
        ldd "$1/lib/liquid/liquid_io.so" | grep -q hdf5 &&
        ! ldd "$1/lib/libliquid.so.0" | grep -q "hdf5\|png" || { cat "$0.out2"; exit 1; }' \
        "$T/heat3d" "$R$P"
fi
exit 0
